package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestHotCounterReplayNeverCollects: the lean replay of the hotcounter
// bench trace (9.6 M lane-ops, a heap of 4-8 MB) runs without a single
// collection under the heap floor (startHeap); at the runtime's 4 MB
// minimum goal it collected once, 280 of its 1,550 page faults.
func TestHotCounterReplayNeverCollects(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector the heap holds the offheap regions and the race runtime's memory: when it collects is another matter")
	}
	dir := t.TempDir()
	tr := filepath.Join(dir, "hot.zst")
	if out, err := self("gen", "hotcounter", "-lane-ops", "9600000", "-q", "-o", tr).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	rep := self("-q", "-tables", "memory,instructions,ops", "-o", filepath.Join(dir, "out"), tr)
	rep.Env = append(withoutEnv(rep.Env, "GOGC", "GOMEMLIMIT", "GODEBUG"), "GODEBUG=gctrace=1")
	var stderr bytes.Buffer
	rep.Stderr = &stderr
	if err := rep.Run(); err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr.String())
	}
	if gcs := collections(stderr.String()); len(gcs) > 0 {
		t.Errorf("the replay collected %d times, want none under a %d MiB heap floor:\n%s",
			len(gcs), heapFloor>>20, strings.Join(gcs, "\n"))
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "instructions.parquet")); err != nil {
		t.Errorf("no instructions table: %v", err)
	}
}

// withoutEnv returns env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// TestHeapFloorLifts: the heap floor holds collections back only until
// the first one. After it the process collects as GOGC=100 with no memory
// limit, so that a replay whose live heap outgrows the floor does not
// collect against the limit over and over. A GOGC in the environment
// keeps the floor off.
func TestHeapFloorLifts(t *testing.T) {
	t.Cleanup(func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
	t.Setenv("GOGC", "50")
	if startHeap(nil) {
		t.Fatal("startHeap set the floor with GOGC=50 in the environment")
	}
	if pct := debug.SetGCPercent(100); pct != 100 {
		t.Errorf("with GOGC=50 in the environment startHeap set GOGC=%d", pct)
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	if !startHeap(nil) {
		t.Fatal("startHeap set no floor")
	}
	if limit := debug.SetMemoryLimit(-1); limit != heapFloor {
		t.Fatalf("memory limit %d, want the floor %d", limit, heapFloor)
	}
	// Allocate past the floor, keeping it live: the limit starts a
	// collection, whose sentinel's cleanup lifts the floor.
	var live [][]byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		if debug.SetMemoryLimit(-1) == math.MaxInt64 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the floor still holds after %d MiB allocated", len(live))
		}
		if len(live) < 2*heapFloor>>20 {
			live = append(live, make([]byte, 1<<20))
		} else {
			runtime.Gosched()
		}
	}
	if pct := debug.SetGCPercent(100); pct != 100 {
		t.Errorf("after the first collection GOGC=%d, want 100", pct)
	}
	runtime.KeepAlive(live)
}

// TestAdvisedStartCollectsOnce: a command that reads much (a file of
// adviseFrom bytes here, which is no trace: the replay fails at once)
// starts with one collection, AdviseHeap's own, and none after it
// under the heap floor. Without the floor the advice's 64 MiB
// allocation started a collection of its own before it; with the free
// pages it leaves counted against the floor's memory limit, the limit
// started another at once.
func TestAdvisedStartCollectsOnce(t *testing.T) {
	large := filepath.Join(t.TempDir(), "large.zst")
	sparseFile(t, large, adviseFrom)
	rep := self("-q", "-tables", "memory", "-o", filepath.Join(t.TempDir(), "out"), large)
	rep.Env = append(withoutEnv(rep.Env, "GOGC", "GOMEMLIMIT", "GODEBUG"), "GODEBUG=gctrace=1")
	var stderr bytes.Buffer
	rep.Stderr = &stderr
	if err := rep.Run(); err == nil {
		t.Fatalf("a file of zeros replayed without an error:\n%s", stderr.String())
	}
	if !collectedOnceForced(stderr.String()) {
		t.Errorf("the start collected other than once, the advice's forced collection:\n%s", stderr.String())
	}
}

// TestSplitTaskCollectsOnce: a split task of 8 partitions (the whole of
// a uniform trace of 9.6 M lane-ops, its heap 23-25 MB) collects once,
// the advice's forced collection, under its heap floor (splitHeapFloor):
// under heapFloor it collected again 50 ms in, for 6 MB.
func TestSplitTaskCollectsOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector the heap holds the offheap regions and the race runtime's memory: when it collects is another matter")
	}
	dir := t.TempDir()
	tr := filepath.Join(dir, "uniform.zst")
	if out, err := self("gen", "uniform", "-lane-ops", "9600000", "-q", "-o", tr).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	sp := self("split", tr, "-partitions", "8", "-slice", "0/1", "-tables", "memory,instructions,ops", "-q", "-o", filepath.Join(dir, "split"))
	sp.Env = append(withoutEnv(sp.Env, "GOGC", "GOMEMLIMIT", "GODEBUG"), "GODEBUG=gctrace=1")
	var stderr bytes.Buffer
	sp.Stderr = &stderr
	if err := sp.Run(); err != nil {
		t.Fatalf("split: %v\n%s", err, stderr.String())
	}
	if !collectedOnceForced(stderr.String()) {
		t.Errorf("the split task collected other than once, the advice's forced collection:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "split", "part=7", "slice=0.zst")); err != nil {
		t.Errorf("no slice file of partition 7: %v", err)
	}
}

// collectedOnceForced reports whether the gctrace output stderr
// (GODEBUG=gctrace=1) shows one collection, the advice's forced one. The
// runtime prints a collection's line in pieces, after the goroutine that
// forced it has gone on: what the command writes meanwhile can land
// inside the line, and a command that exits at once can cut it off
// before its end ("... 2 P (forced)"). A line still starts where a
// collection's does; a line cut short says nothing of being forced.
func collectedOnceForced(stderr string) bool {
	n := 0
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "gc ") {
			n++
		}
	}
	whole := strings.Contains(stderr, " P")
	return n == 1 && (!whole || strings.Count(stderr, "(forced)") == 1)
}
