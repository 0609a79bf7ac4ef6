package offheap

import (
	"testing"
	"unsafe"
)

// TestHeapSlice: a slice of HugeMin bytes or more starts on a huge page
// and spans whole ones, zeroed; a smaller one is as make gives it, of the
// asked capacity; both have length 0.
func TestHeapSlice(t *testing.T) {
	type rec struct{ a, b uint64 }
	cases := []struct {
		n       int
		wantCap int
		huge    bool
	}{
		{n: 10, wantCap: 10},
		{n: HugeMin/16 - 1, wantCap: HugeMin/16 - 1},
		{n: HugeMin / 16, wantCap: RegionBytes / 16, huge: true},
		{n: RegionBytes/16 + 1, wantCap: 2 * RegionBytes / 16, huge: true},
	}
	for _, c := range cases {
		s := HeapSlice[rec](c.n)
		if len(s) != 0 || cap(s) != c.wantCap {
			t.Errorf("HeapSlice(%d): len %d cap %d, want 0 and %d", c.n, len(s), cap(s), c.wantCap)
		}
		s = s[:cap(s)]
		at := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		if c.huge && at%RegionBytes != 0 {
			t.Errorf("HeapSlice(%d) at %#x: not on a huge page", c.n, at)
		}
		for i := range s {
			if s[i] != (rec{}) {
				t.Fatalf("HeapSlice(%d): element %d is %v, want zero", c.n, i, s[i])
			}
			s[i] = rec{uint64(i), ^uint64(i)}
		}
		for i := range s {
			if s[i] != (rec{uint64(i), ^uint64(i)}) {
				t.Fatalf("HeapSlice(%d): element %d is %v after writing", c.n, i, s[i])
			}
		}
	}
	if s := HeapSlice[struct{}](1 << 30); cap(s) != 1<<30 {
		t.Errorf("HeapSlice of a zero-size type: cap %d", cap(s))
	}
}
