package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMain lets the test binary stand in for the replay command, so tests
// can run it as a separate process and measure that process alone: it
// starts as main does (startHeap), then runs.
func TestMain(m *testing.M) {
	if os.Getenv("REPLAY_TEST_AS_MAIN") == "1" {
		startHeap(os.Args[1:])
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// self returns a command that runs this test binary as replay.
func self(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "REPLAY_TEST_AS_MAIN=1")
	return cmd
}

// peakRSS replays a generated histogram trace of laneOps lane-ops, streamed
// through a pipe from `replay gen`, and returns the replay process's peak
// resident set in MiB.
func peakRSS(t *testing.T, laneOps string) float64 {
	t.Helper()
	gen := self("gen", "histogram", "-lane-ops", laneOps, "-q", "-o", "-")
	rep := self("-q", "-tables", "instructions,memory,ops", "-o", filepath.Join(t.TempDir(), "out"), "-")
	pipe, err := gen.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	rep.Stdin = pipe
	gen.Stderr, rep.Stderr = os.Stderr, os.Stderr
	if err := rep.Start(); err != nil {
		t.Fatal(err)
	}
	if err := gen.Run(); err != nil {
		t.Fatalf("gen: %v", err)
	}
	if err := rep.Wait(); err != nil {
		t.Fatalf("replay: %v", err)
	}
	return maxRSSMiB(t, rep.ProcessState)
}

// TestPeakMemoryFlat: a replay of 10^8 lane-ops streams in bounded memory.
// Its peak RSS stays under a fixed bound and within 128 MiB of a replay
// five times shorter (make bench measures the same end to end:
// docs/PERFORMANCE.md).
func TestPeakMemoryFlat(t *testing.T) {
	if !maxRSSMeasured {
		t.Skip(maxRSSSkip)
	}
	const boundMiB = 384
	short := peakRSS(t, "2e7")
	long := peakRSS(t, "1e8")
	t.Logf("peak RSS: %.0f MiB at 2e7 lane-ops, %.0f MiB at 1e8", short, long)
	if long > boundMiB || short > boundMiB {
		t.Errorf("peak RSS %.0f / %.0f MiB is over the %d MiB bound", short, long, boundMiB)
	}
	// The garbage collector's pacing moves a run's peak by tens of MiB
	// (the shorter run has measured 189 to 227 MiB). The 8*10^7 lane-ops
	// more may cost a little, never in proportion: 128 MiB more would be
	// 1.7 bytes a lane-op, where a growing replay would need 4x the
	// shorter run's peak.
	if long > short+128 {
		t.Errorf("peak RSS grew from %.0f MiB to %.0f MiB with a 5x longer trace", short, long)
	}
}
