package offheap

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestArenaPieces: pieces are aligned, zeroed, disjoint and writable,
// across regions (a piece that does not fit starts the next region).
func TestArenaPieces(t *testing.T) {
	var a Arena
	defer a.Release()
	sizes := []int{1, 63, 64, 65, 2048, 4080, RegionBytes - 100, 4096, RegionBytes, 7}
	type piece struct {
		p unsafe.Pointer
		n int
	}
	var got []piece
	for k, n := range sizes {
		p := a.Alloc(n)
		if uintptr(p)%Align != 0 {
			t.Fatalf("piece %d (%d bytes) at %p: not %d-byte aligned", k, n, p, Align)
		}
		b := unsafe.Slice((*byte)(p), n)
		for i, c := range b {
			if c != 0 {
				t.Fatalf("piece %d (%d bytes): byte %d is %d, want 0", k, n, i, c)
			}
		}
		for i := range b {
			b[i] = byte(k + 1)
		}
		got = append(got, piece{p, n})
	}
	// Every piece still holds what was written to it: none overlaps another.
	for k, pc := range got {
		for i, c := range unsafe.Slice((*byte)(pc.p), pc.n) {
			if c != byte(k+1) {
				t.Fatalf("piece %d: byte %d is %d, want %d (overwritten by another piece)", k, i, c, k+1)
			}
		}
	}
	// Rounded to 64 bytes, the first six take 6464 bytes of region 1;
	// RegionBytes-100 (RegionBytes-64) does not fit and takes region 2,
	// 4096 region 3, RegionBytes region 4, and 7 region 5.
	if len(a.regions) != 5 {
		t.Errorf("%d regions, want 5", len(a.regions))
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if len(a.regions) != 0 || a.rest != nil {
		t.Errorf("after Release: %d regions, %d bytes left, want none", len(a.regions), len(a.rest))
	}
	if err := a.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
}

// TestArenaBadSize: a size outside [1, RegionBytes] is a caller's bug.
func TestArenaBadSize(t *testing.T) {
	for _, n := range []int{0, -1, RegionBytes + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Alloc(%d) did not panic", n)
				}
			}()
			var a Arena
			a.Alloc(n)
		}()
	}
}

// TestArenaOutsideHeap: on Unix, 32 regions written through the arena do not
// count in the Go heap, which is the point of the package.
func TestArenaOutsideHeap(t *testing.T) {
	r, err := mapRegion(RegionBytes)
	if err != nil {
		t.Skipf("no mmap here (%v): regions come from the Go heap", err)
	}
	if err := unmapRegion(r); err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var a Arena
	defer a.Release()
	before := heap()
	for range 32 {
		b := unsafe.Slice((*byte)(a.Alloc(RegionBytes)), RegionBytes)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
	}
	if grew := int64(heap()) - int64(before); grew > 1<<20 {
		t.Errorf("the Go heap grew by %d bytes for %d MiB of arena, want under 1 MiB", grew, 32*RegionBytes>>20)
	}
	if len(a.regions) != 32 {
		t.Errorf("%d regions, want 32", len(a.regions))
	}
}
