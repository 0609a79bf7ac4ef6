//go:build linux

package offheap

import (
	"runtime"
	"runtime/debug"
	"unsafe"
)

// AdviseHeap grows the Go heap by n bytes once, at a process's start,
// and advises the grown range into transparent huge pages, so that the
// heap's next n bytes fault once per 2 MiB, not once per 4 KiB page. The
// runtime never advises its heap, and where the system's THP mode is
// "madvise" (a common default) the heap otherwise faults a 4 KiB page
// at a time: 12-22 us each on a loaded VM, thousands per process.
//
// It allocates one object of n bytes, which the runtime maps fresh and
// does not clear (nothing touches it: no memory becomes resident),
// advises its whole huge pages, drops it, collects and gives the free
// pages back to the system (debug.FreeOSMemory), so that neither the
// collector's heap goal nor the runtime's memory that a memory limit
// counts is as much as raised by them. The runtime then reuses those
// pages first (its page allocator is address-ordered), and giving them
// back (MADV_DONTNEED) keeps the advice. Only what the runtime maps
// later, past them, faults 4 KiB at a time, as before.
//
// Call it once, first thing in main: under the race detector, or where
// the heap already holds n bytes of freed pages below the new ones, it
// is harmless but gains nothing. It reports whether the advice was taken.
func AdviseHeap(n int) bool {
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := (p + RegionBytes - 1) &^ (RegionBytes - 1)
	end := (p + uintptr(n)) &^ (RegionBytes - 1)
	ok := false
	if beg < end {
		ok = adviseHugeErr(b[beg-p:end-p]) == nil
	}
	runtime.KeepAlive(b)
	debug.FreeOSMemory()
	return ok
}
