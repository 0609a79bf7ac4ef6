//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// usage is an exited process's CPU time (user and system) and peak
// resident set in bytes, from the kernel's rusage (wait4).
func usage(ps *os.ProcessState) (time.Duration, int64) {
	cpu := ps.UserTime() + ps.SystemTime()
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return cpu, 0
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" {
		rss <<= 10 // KiB but on macOS, which gives bytes
	}
	return cpu, rss
}
