package shard

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestChunksArePopulated checks that the chunks a memory makes are
// faulted in (populate) by its populating goroutine, not page by page on
// first store, and that the goroutine stops when it is done. With the
// heap handed back to the system first, a chunk that were not populated
// would have only its first page (the page headers) resident.
func TestChunksArePopulated(t *testing.T) {
	debug.FreeOSMemory()
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	const pages = 3*ChunkPages + 5 // into a fourth chunk
	for i := uint64(0); i < pages; i++ {
		addr := i << PageShift
		if e := m.create(m.dir(0, addr>>(PageShift+DirBits)), addr); e.Ref() != uint32(i+1) {
			t.Fatalf("page %d: reference %d, want %d", i, e.Ref(), i+1)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.mu.Lock()
		busy, queued := m.populating, len(m.unpopulated)-m.head
		m.mu.Unlock()
		if !busy && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, %d chunks are still waiting to be populated", queued)
		}
		time.Sleep(time.Millisecond)
	}
	pg := unix.Getpagesize()
	for i := range pages/ChunkPages + 1 {
		c := m.chunks[i].Load()
		if c == nil {
			t.Fatalf("chunk %d was not made", i)
		}
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
			t.Errorf("chunk %d: %d of its %d pages are not resident", i, missing, n)
		}
	}
	runtime.KeepAlive(m)
}
