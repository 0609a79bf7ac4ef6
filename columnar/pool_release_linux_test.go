//go:build linux && !race

package columnar

import (
	"errors"
	"testing"
)

// TestWriterReleasesSlabs: a writer's slabs (mapped outside the Go heap)
// are unmapped when it ends, committed, aborted or failed, and its
// allocator then gives Go memory and keeps nothing freed.
func TestWriterReleasesSlabs(t *testing.T) {
	for _, end := range []string{"commit", "abort", "fail"} {
		w, err := New(t.TempDir(), WithTables("memory"))
		if err != nil {
			t.Fatal(err)
		}
		b := w.pool.Allocate(slabMin)
		b[0] = 1
		at := addrOf(b)
		if flags := vmFlags(t, at); flags == "" {
			t.Fatalf("%s: a slab buffer at %#x is not mapped", end, at)
		}
		switch end {
		case "commit":
			err = w.Commit()
		case "abort":
			err = w.Abort()
		case "fail":
			if ferr := w.fail(errors.New("the disk is full")); ferr == nil {
				t.Fatal("fail returned nil")
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", end, err)
		}
		if flags := vmFlags(t, at); flags != "" {
			t.Errorf("%s: the writer's slab at %#x is still mapped (%s)", end, at, flags)
		}
		w.pool.Free(b)
		if c := w.pool.Allocate(slabMin); vmFlags(t, addrOf(c)) == "" || addrOf(c) == at {
			t.Errorf("%s: Allocate after the writer ended gave %#x, want fresh Go memory", end, addrOf(c))
		}
	}
}
