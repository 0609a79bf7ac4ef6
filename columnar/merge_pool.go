package columnar

import (
	"unsafe"

	"github.com/gpureplay/replay/internal/offheap"
)

// A merge decodes every partition's row groups into storage of its
// wordPool, which the storage of the row groups merged goes back to; the
// storage the pool has first is new memory, a fault every 4 KiB page of
// it, which cost the merge of a split pipeline more than decoding its
// rows into it. So a merge's pool carves what it has not got from slabs
// of wordSlab bytes mapped on transparent huge pages outside the Go heap
// (offheap.Block), as the Writer's allocator does its batches' columns
// (poolAllocator): their first writes fault once per 2 MiB. The merge
// releases them (release) once its readers are closed.
const (
	wordSlab    = 4 << 20 // bytes
	wordSlabMin = 16 << 10
)

// alloc returns n words of new storage: a merge pool's carved from its
// slabs (zeroed, as an offheap.Block is), a nil pool's (or, n too small
// or too large to carve, any pool's) from the Go heap. The caller gives
// it to the pool (put) once done with it, as storage from get.
func (p *wordPool) alloc(n int64) []uint64 {
	b := n * 8
	if p == nil || b < wordSlabMin || b > wordSlab {
		return make([]uint64, n)
	}
	c := (n + 7) &^ 7 // whole cache lines, so that every piece starts on one
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return make([]uint64, n)
	}
	if int64(len(p.slab)) < c {
		k := offheap.NewBlock(wordSlab)
		p.slabs = append(p.slabs, k)
		p.slab = offheap.SliceOf[uint64](k)[:wordSlab/8]
	}
	w := p.slab[:n:c]
	p.slab = p.slab[c:]
	return w
}

// release unmaps the pool's slabs; nothing may touch storage from them
// after (a merge's readers are closed), and the pool then gives Go memory
// only and keeps nothing.
func (p *wordPool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released = true
	p.free, p.slab = nil, nil
	for _, k := range p.slabs {
		_ = k.Release()
	}
	p.slabs = nil
}

// poolSlice returns an empty slice with room for n values of T, which
// must hold no pointers, from pool's slabs (alloc): the merge's own
// buffers of rows for the writer, new memory as its readers' storage is.
// It lives until the merge releases the pool; a nil pool's is the Go
// heap's.
func poolSlice[T any](p *wordPool, n int) []T {
	var zero T
	w := p.alloc((int64(n)*int64(unsafe.Sizeof(zero)) + 7) / 8)
	if len(w) == 0 {
		return make([]T, 0, n)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(w))), n)[:0]
}
