//go:build linux && !race

package offheap

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on Linux (x86-64, and
// arm64 with 4 KiB pages).
const hugePage = 2 << 20

// mapRegion maps n bytes of private anonymous memory: zero, aligned to a
// huge page, resident only once written, and advised into transparent
// huge pages (MADV_HUGEPAGE: where the system's THP mode is "madvise", a
// common default, only advised memory gets them). A region of scattered
// slabs then costs a page fault and a TLB entry per 2 MiB rather than per
// 4 KiB. Where the advice is refused, the region works as mapped. It maps
// n plus a huge page and unmaps the ends around the aligned n, by pointer
// (unix.MmapPtr: syscall.Mmap's slices unmap only whole).
func mapRegion(n int) ([]byte, error) {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n+hugePage), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, err
	}
	head := (hugePage - uintptr(p)%hugePage) % hugePage
	if head > 0 {
		if err := unix.MunmapPtr(p, head); err != nil {
			unix.MunmapPtr(p, uintptr(n+hugePage))
			return nil, err
		}
	}
	r := unsafe.Add(p, head)
	if tail := uintptr(hugePage) - head; tail > 0 {
		if err := unix.MunmapPtr(unsafe.Add(r, n), tail); err != nil {
			unix.MunmapPtr(r, uintptr(n)+tail)
			return nil, err
		}
	}
	b := unsafe.Slice((*byte)(r), n)
	adviseHuge(b)
	return b, nil
}

func unmapRegion(b []byte) error {
	return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
}
