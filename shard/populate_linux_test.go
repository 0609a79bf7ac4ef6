package shard

import (
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestNewChunkIsResident checks that a new chunk's memory is faulted in
// when the chunk is made (populate), not page by page on first store:
// with the heap handed back to the system first, a chunk that were not
// populated would have only its first page (the page headers) resident.
func TestNewChunkIsResident(t *testing.T) {
	debug.FreeOSMemory()
	c := newChunk()
	pg := unix.Getpagesize()
	n := (int(unsafe.Sizeof(*c)) + pg - 1) / pg
	vec := make([]byte, n)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(c)), uintptr(n*pg), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	missing := 0
	for _, v := range vec {
		if v&1 == 0 {
			missing++
		}
	}
	if missing > 0 {
		if err := populate(c); err != nil {
			t.Skipf("this kernel does not populate (MADV_POPULATE_WRITE: %v): chunks fault in as used", err)
		}
		t.Errorf("%d of the new chunk's %d pages are not resident", missing, n)
	}
	runtime.KeepAlive(c)
}
