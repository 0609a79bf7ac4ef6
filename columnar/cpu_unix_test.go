//go:build unix

package columnar

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) this process has used,
// all goroutines together: the pipeline's and the garbage collector's
// included.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
