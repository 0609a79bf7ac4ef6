//go:build linux

package main

import (
	"os"
	"syscall"
	"testing"
)

const (
	maxRSSMeasured = true
	maxRSSSkip     = ""
)

// maxRSSMiB is the peak resident set of the exited process ps, in MiB.
func maxRSSMiB(t *testing.T, ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage on this platform")
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}
