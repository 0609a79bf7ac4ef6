package offheap

import "unsafe"

// HugeMin is the least HeapSlice puts on huge pages: below it, a slice is
// an ordinary make, since a huge page would clear and hold more memory
// than the 4 KiB pages it saves faulting.
const HugeMin = 256 << 10

// HeapSlice returns a slice of length 0 and capacity at least n of zero
// T, in the Go heap (the collector frees it) but laid out as an arena's
// region: when its bytes are HugeMin or more, they start on a huge page
// and fill whole ones, advised into transparent huge pages before
// anything writes them, so that the first writes fault a page in per
// 2 MiB rather than per 4 KiB. T must hold no pointers: the memory is
// allocated as bytes, which the collector does not scan.
//
// It helps only where make gives memory the heap never used, which it
// does not clear; memory used before is cleared by make a 4 KiB page at
// a time, faulting as before (an Arena's regions never are).
func HeapSlice[T any](n int) []T {
	var zero T
	size := uintptr(n) * unsafe.Sizeof(zero)
	if size < HugeMin {
		return make([]T, 0, n)
	}
	c := (size + RegionBytes - 1) &^ (RegionBytes - 1)
	buf := make([]byte, c+RegionBytes)
	off := (RegionBytes - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%RegionBytes) % RegionBytes
	b := buf[off : off+c : off+c]
	adviseHuge(b)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), c/unsafe.Sizeof(zero))[:0]
}
