//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptedReplay sends SIGINT (Ctrl-C) to a replay while it writes
// its tables: it exits 1, says in one line that it was interrupted, naming
// the trace (not a Go context's error), and leaves no output directory.
func TestInterruptedReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	tmp := t.TempDir()
	big := filepath.Join(tmp, "uniform.zst")
	if out, err := self("gen", "uniform", "-lane-ops", "2e7", "-o", big, "-q").CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "out")
	victim := self("-q", "-o", dir, big)
	var stderr bytes.Buffer
	victim.Stderr = &stderr
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()
	// Once the replay writes its results table, it is past its set-up.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if ms, _ := filepath.Glob(filepath.Join(dir, ".results.parquet.tmp-*")); len(ms) == 1 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the replay ended (%v) before it could be interrupted; stderr: %s", err, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			victim.Process.Kill()
			<-exited
			t.Fatal("the replay wrote no results table within 2 minutes")
		}
	}
	if err := victim.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-exited
	if code := victim.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := "replay: " + big + ": interrupted (no tables written)\n"
	if got := stderr.String(); got != want || strings.Contains(got, "context") {
		t.Errorf("stderr = %q, want %q", got, want)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the interrupted replay left %s (%v)", dir, err)
	}
}
