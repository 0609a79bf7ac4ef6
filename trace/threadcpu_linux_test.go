//go:build linux

package trace

import "syscall"

// threadCPU is the CPU time of the calling thread, in nanoseconds.
func threadCPU() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // RUSAGE_THREAD
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
