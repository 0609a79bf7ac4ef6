//go:build linux

package columnar

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestMergeDecodesOnHugePages: a merge's reader decodes a row group's
// columns (of wordSlabMin bytes and more) into storage on transparent
// huge pages (VmFlags "hg"), not new Go heap memory faulted in a 4 KiB
// page at a time; the storage a row group gives back is the next one's;
// and the values are the file's.
func TestMergeDecodesOnHugePages(t *testing.T) {
	const rows = 4096 // 32 KiB of seq a row group, 16 KiB of lanes
	f := newMergeFixture(t, 3*rows)
	dir := t.TempDir()
	w, err := New(dir, WithBatchRows(rows), WithTables("instructions"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Instructions(f.insts); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	pool := &wordPool{}
	tr, err := openTableCols(filepath.Join(dir, "instructions.parquet"), []string{"seq", "lanes"}, pool)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.release()
	defer tr.close()
	var first uintptr
	for rg := range 3 {
		rec, _, err := tr.next()
		if err != nil || rec == nil {
			t.Fatalf("row group %d: %v, %v", rg, rec, err)
		}
		seq, lanes := rec.Column(0).(*array.Uint64), rec.Column(1).(*array.Uint32)
		for _, a := range []arrow.Array{seq, lanes} {
			addr := addrOf(a.Data().Buffers()[1].Bytes())
			if flags := vmFlags(t, addr); !strings.Contains(" "+flags+" ", " hg ") {
				t.Errorf("row group %d: column %s at %#x: VmFlags %q, want hg (MADV_HUGEPAGE)", rg, a.DataType(), addr, flags)
			}
		}
		if addr := addrOf(seq.Data().Buffers()[1].Bytes()); rg == 0 {
			first = addr
		} else if addr != first && rg == 2 {
			// Row group 1 took new storage while row group 0's was in use;
			// row group 2 takes row group 0's, given back.
			t.Errorf("row group 2's seq at %#x, not row group 0's storage at %#x", addr, first)
		}
		for r := range rows {
			if want := f.insts[rg*rows+r]; seq.Value(r) != want.Seq || lanes.Value(r) != want.Lanes {
				t.Fatalf("row group %d, row %d: seq %d lanes %d, want %d %d", rg, r, seq.Value(r), lanes.Value(r), want.Seq, want.Lanes)
			}
		}
		if rg > 0 {
			tr.done() // the record before this one: its storage back to the pool
		}
	}
}

// TestMergeChunksOnHugePages: the chunks of instructions rows a merge
// hands the writer (instChunks) have their numeric columns on transparent
// huge pages, from the merge's pool, as its readers' storage: new memory
// each, a fault a 4 KiB page in the Go heap.
func TestMergeChunksOnHugePages(t *testing.T) {
	q := &writeQueue{jobs: make(chan writeJob, 1), ahead: 1, chunk: mergeChunk, stopped: new(atomic.Bool), pool: &wordPool{}}
	defer q.pool.release()
	c := newInstChunks(q)
	cols := c.cols
	cols.grow(mergeChunk)
	for name, b := range map[string]uintptr{"seq": sliceAddr(cols.seq), "warp": sliceAddr(cols.warp), "lanes": sliceAddr(cols.lanes), "sectors": sliceAddr(cols.sectors)} {
		if flags := vmFlags(t, b); !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("column %s at %#x: VmFlags %q, want hg (MADV_HUGEPAGE)", name, b, flags)
		}
	}
	if cap(cols.seq) != mergeChunk || cap(cols.static) != mergeChunk {
		t.Errorf("room for %d and %d rows, want %d", cap(cols.seq), cap(cols.static), mergeChunk)
	}
}

func sliceAddr[T any](s []T) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(s))) }
