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

// settle writes every dirty page of the system back (sync(2)) before a
// timed run, untimed, so that a run's own fsyncs wait for its own files,
// not for the files of the jobs before it: on ext4 the first fsync of a
// run commits the file system's journal, with every file whose data is
// still on its way to the disk.
func settle() { syscall.Sync() }
