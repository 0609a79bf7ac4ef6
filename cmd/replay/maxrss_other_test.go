//go:build !linux

package main

import (
	"os"
	"testing"
)

const (
	maxRSSMeasured = false
	maxRSSSkip     = "peak RSS is measured on Linux only (ru_maxrss in KiB there; other OSes count it otherwise or, like Windows, have none)"
)

func maxRSSMiB(t *testing.T, ps *os.ProcessState) float64 {
	t.Skip(maxRSSSkip)
	return 0
}
