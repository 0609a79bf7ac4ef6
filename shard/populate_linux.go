package shard

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// canPopulate is whether populate can fault a chunk in here.
const canPopulate = true

// populate faults in a new chunk's memory with one madvise
// (MADV_POPULATE_WRITE, Linux 5.14 and later), on the goroutine of
// Memory.populateAhead. Otherwise its pages fault one by one on their
// first store, which is the apply loop's: 64 faults a chunk, on the
// stage that bounds a replay of a large
// memory. Page references are handed out in order, so a chunk's pages all
// come into use (but the last chunk's): populating ahead costs no memory
// that the replay would not fault in anyway. The advice never changes a
// page's contents, so it may run while the apply loop stores to the
// chunk. An older kernel refuses it (EINVAL) and the pages fault as
// before; populateQueued ignores the error, which changes nothing but
// speed.
func populate(c *Chunk) error {
	// A chunk is a large object, alone in whole pages of the heap: it
	// starts on a system page, and the kernel rounds the length up to
	// one, inside the chunk's span.
	if uintptr(unsafe.Pointer(c))%uintptr(unix.Getpagesize()) != 0 {
		return unix.EINVAL
	}
	return unix.Madvise(unsafe.Slice((*byte)(unsafe.Pointer(c)), unsafe.Sizeof(*c)), unix.MADV_POPULATE_WRITE)
}
