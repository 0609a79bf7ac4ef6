package columnar

import (
	"math/bits"
	"sync"

	"github.com/gpureplay/replay/internal/offheap"
)

// poolAllocator is the writer's default memory.Allocator: it keeps the
// buffers the Parquet and Arrow writers free for the next row group, which
// asks for the same sizes again, instead of handing each to the garbage
// collector and taking fresh, zeroed, not yet paged-in memory from the
// runtime. A replay writes hundreds of row groups a table; with
// memory.DefaultAllocator their buffers were tens of MB of allocation a
// replay, with the zeroing and page faults that go with it
// (BenchmarkReplay).
//
// Buffers come in power-of-two size classes from 64 bytes, 64-byte
// aligned as memory.GoAllocator aligns them. Allocate returns zeroed
// memory, as the Go allocator does; Reallocate, like the Go allocator's,
// does not zero what it adds within a buffer's capacity. At most maxHeld
// bytes wait in the free lists; beyond, freed buffers go to the garbage
// collector. It is safe for concurrent use: each table encodes on a
// goroutine of its own.
type poolAllocator struct {
	mu   sync.Mutex
	free [poolClasses][][]byte
	held int
	// slab is what is left of the last slab (newSlab) that buffers of
	// slabMin bytes and more are carved from; slabs are all of them,
	// released (unmapped) by release.
	slab     []byte
	slabs    []*offheap.Block
	released bool
}

const (
	poolMinShift = 6 // 64 bytes
	poolClasses  = 40 - poolMinShift
	poolAlign    = 64
	maxHeld      = 64 << 20
)

func newPoolAllocator() *poolAllocator { return &poolAllocator{} }

// poolClass is the class of buffers of at least size bytes, or -1 for a
// size too large to pool.
func poolClass(size int) int {
	if size <= 1<<poolMinShift {
		return 0
	}
	c := bits.Len(uint(size-1)) - poolMinShift
	if c >= poolClasses {
		return -1
	}
	return c
}

func (a *poolAllocator) Allocate(size int) []byte {
	if size < 0 {
		panic("columnar: negative allocation")
	}
	c := poolClass(size)
	if c < 0 {
		return alignedBytes(size, size)
	}
	a.mu.Lock()
	if n := len(a.free[c]); n > 0 {
		b := a.free[c][n-1]
		a.free[c][n-1] = nil
		a.free[c] = a.free[c][:n-1]
		a.held -= cap(b)
		a.mu.Unlock()
		b = b[:size]
		clear(b)
		return b
	}
	if cb := 1 << (c + poolMinShift); cb >= slabMin && cb <= slabBytes && !a.released {
		if len(a.slab) < cb {
			k := offheap.NewBlock(slabBytes)
			a.slabs = append(a.slabs, k)
			a.slab = k.Bytes()[:slabBytes]
		}
		b := a.slab[:size:cb]
		a.slab = a.slab[cb:]
		a.mu.Unlock()
		return b
	}
	a.mu.Unlock()
	return alignedBytes(size, 1<<(c+poolMinShift))
}

// Buffers of slabMin bytes and more (up to slabBytes), a table's batch
// columns and page buffers, are carved from slabs of slabBytes mapped on
// transparent huge pages outside the Go heap (offheap.Block), so that
// their first writes fault a page in per 2 MiB rather than per 4 KiB. A
// batch's columns are new memory for the first batches of every table,
// and a fault a 4 KiB page cost a hot counter's instructions table more
// than writing its rows; in the Go heap, a slab and its huge-page padding
// raised the collector's goal by 6 MiB. slabMin is 32 KiB so that a
// partition replay's batches of 16 Ki rows, whose uint32 columns are
// 64 KiB, are carved too (in the Go heap they were a few hundred faults a
// partition's replay). The writer that owns the allocator releases the
// slabs when it ends (release).
const (
	slabMin   = 32 << 10
	slabBytes = 4 << 20
)

// release unmaps the slabs, once no buffer of a is in use: a writer's
// pipelines have returned. After it, a gives Go memory only and keeps
// nothing freed. A nil a does nothing.
func (a *poolAllocator) release() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.released = true
	a.free, a.held, a.slab = [poolClasses][][]byte{}, 0, nil
	for _, k := range a.slabs {
		k.Release()
	}
	a.slabs = nil
}

// alignedBytes returns a zeroed buffer of length size and capacity c,
// 64-byte aligned.
func alignedBytes(size, c int) []byte {
	buf := make([]byte, c+poolAlign)
	off := 0
	if r := addrOf(buf) % poolAlign; r != 0 {
		off = poolAlign - int(r)
	}
	return buf[off : off+size : off+c]
}

func (a *poolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *poolAllocator) Free(b []byte) {
	c := cap(b)
	if c < 1<<poolMinShift || c&(c-1) != 0 {
		return // not one of ours: the collector takes it
	}
	k := poolClass(c)
	if k < 0 {
		return
	}
	a.mu.Lock()
	if a.held+c <= maxHeld && !a.released {
		a.free[k] = append(a.free[k], b[:0])
		a.held += c
	}
	a.mu.Unlock()
}
