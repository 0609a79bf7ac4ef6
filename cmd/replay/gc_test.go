package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestShortReplayHeapSmall: the lean replay of the hotcounter bench trace
// (9.6 M lane-ops in a few KB) keeps its Go heap near the runtime's 4 MB
// minimum goal, and so collects at most twice. Its large buffers (a
// reader's frames, the batches' instructions, the writer's slabs) are
// mapped outside the Go heap; in it, with their huge-page padding, they
// were 22 MiB of heap, up to 26 MB at the third collection, a fifth of
// the replay's CPU.
func TestShortReplayHeapSmall(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "hot.zst")
	if out, err := self("gen", "hotcounter", "-lane-ops", "9600000", "-q", "-o", tr).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	rep := self("-q", "-tables", "memory,instructions,ops", "-o", filepath.Join(dir, "out"), tr)
	rep.Env = append(rep.Env, "GODEBUG=gctrace=1", "GOGC=100", "GOMEMLIMIT=off")
	var stderr bytes.Buffer
	rep.Stderr = &stderr
	if err := rep.Run(); err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr.String())
	}
	const maxMB = 8
	gcs := collections(stderr.String())
	peak := 0
	for _, line := range gcs {
		// "..., 4->4->3 MB, ...": the heap when the collection started.
		i := strings.Index(line, "->")
		j := strings.LastIndex(line[:max(i, 0)], " ")
		mb, err := strconv.Atoi(line[j+1 : max(i, j+1)])
		if i < 0 || err != nil {
			t.Fatalf("no heap size in the gctrace line %q", line)
		}
		peak = max(peak, mb)
	}
	if len(gcs) > 2 || peak > maxMB {
		t.Errorf("the replay collected %d times, the heap at most %d MB; want at most 2 and %d MB:\n%s",
			len(gcs), peak, maxMB, strings.Join(gcs, "\n"))
	}
	if fi, err := os.Stat(filepath.Join(dir, "out")); err != nil || !fi.IsDir() {
		t.Errorf("no tables written: %v", err)
	}
}

// collections returns the gctrace lines (GODEBUG=gctrace=1) in stderr of
// the collections the runtime started on its own: not the forced one of
// the heap advice at start-up (offheap.AdviseHeap's debug.FreeOSMemory,
// for a trace of adviseChunks chunks or more), the only collection a
// replay forces (but under -profile mem).
func collections(stderr string) []string {
	var gcs []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "gc ") && !strings.HasSuffix(line, "(forced)") {
			gcs = append(gcs, line)
		}
	}
	return gcs
}
