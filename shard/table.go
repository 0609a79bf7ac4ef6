package shard

// slot is one entry of a shard's open-addressing table. It holds no
// pointer, so the table is one pointer-free object for the collector.
type slot struct {
	// gran1 is the granule number plus one, addr>>GranuleShift + 1, so an
	// empty (zero) slot never matches a key, even (0, 0).
	gran1 uint64
	mem   uint32 // memory instance
	ref   uint32 // block reference (see arena); 0 marks an empty slot
}

// table maps (mem, granule) to a block reference: power-of-two size,
// linear probing from the hash's low bits, no deletion.
type table struct {
	slots []slot
	mask  uint64
	n     int
}

const (
	// minTableSlots is the first real table size.
	minTableSlots = 16
	// A table grows when an insert would take it past maxLoadNum/maxLoadDen
	// full (62.5%): probes stay short under linear probing.
	maxLoadNum = 5
	maxLoadDen = 8
)

// emptySlots is the table of a shard that has never held a block: one
// empty slot, so find needs no special case. It is never written: full
// reports true for it, so the first insert grows first.
var emptySlots [1]slot

func (t *table) init(hint int) {
	if hint <= 0 {
		t.slots, t.mask = emptySlots[:], 0
		return
	}
	t.alloc(slotsFor(hint))
}

// slotsFor is the table size that holds n entries under the load limit.
func slotsFor(n int) int {
	size := minTableSlots
	for size*maxLoadNum < n*maxLoadDen+maxLoadDen {
		size *= 2
	}
	return size
}

func (t *table) alloc(size int) {
	t.slots = make([]slot, size)
	t.mask = uint64(size - 1)
}

// find returns the reference stored for (mem, g), or 0 and the position of
// the empty slot where probing stopped, where it may be put.
func (t *table) find(mem uint32, g, h uint64) (ref uint32, pos uint64) {
	slots, mask, g1 := t.slots, t.mask, g+1
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &slots[i]
		if sl.gran1 == g1 && sl.mem == mem {
			return sl.ref, i
		}
		if sl.ref == 0 {
			return 0, i
		}
	}
}

// full reports whether one more entry would pass the load limit.
func (t *table) full() bool {
	return (t.n+1)*maxLoadDen > len(t.slots)*maxLoadNum
}

// put stores a new entry at pos, an empty slot find returned.
func (t *table) put(pos uint64, mem uint32, g uint64, ref uint32) {
	t.slots[pos] = slot{gran1: g + 1, mem: mem, ref: ref}
	t.n++
}

// grow doubles the table (or makes the first real one) and reinserts every
// entry. Blocks do not move; only their references do.
func (t *table) grow() {
	old := t.slots
	size := 2 * len(old)
	if size < minTableSlots {
		size = minTableSlots
	}
	t.alloc(size)
	for i := range old {
		sl := old[i]
		if sl.ref == 0 {
			continue
		}
		j := hashGranule(sl.mem, sl.gran1-1) & t.mask
		for t.slots[j].ref != 0 {
			j = (j + 1) & t.mask
		}
		t.slots[j] = sl
	}
}

// Block references pack a chunk number and an offset: ref-1 =
// chunk<<chunkShift | offset. Chunks grow from minChunkBlocks to
// maxChunkBlocks (1<<chunkShift) blocks, so a small shard stays small and
// a large one is a few large pointer-free objects.
const (
	chunkShift     = 9
	maxChunkBlocks = 1 << chunkShift // 512 blocks, 132 KiB
	minChunkBlocks = 8
	// maxChunks keeps ref = chunk<<chunkShift | offset, plus one, in a
	// uint32: about 4e9 blocks (1 TiB) a shard.
	maxChunks = 1<<(32-chunkShift) - 1
)

// arena holds a shard's blocks in chunks that are never moved or freed.
type arena struct {
	chunks [][]Block
	used   int // blocks used in the last chunk
	next   int // size of the next chunk to allocate
}

func (a *arena) init(hint int) {
	a.next = minChunkBlocks
	for a.next < hint && a.next < maxChunkBlocks {
		a.next *= 2
	}
}

// alloc returns the reference of a new zeroed block.
func (a *arena) alloc() uint32 {
	if len(a.chunks) == 0 || a.used == len(a.chunks[len(a.chunks)-1]) {
		if len(a.chunks) == maxChunks {
			panic("shard: too many blocks in one shard")
		}
		a.chunks = append(a.chunks, make([]Block, a.next))
		a.used = 0
		a.next = min(2*a.next, maxChunkBlocks)
	}
	ref := uint32(len(a.chunks)-1)<<chunkShift | uint32(a.used)
	a.used++
	return ref + 1
}

// at returns the block a reference names.
func (a *arena) at(ref uint32) *Block {
	r := ref - 1
	return &a.chunks[r>>chunkShift][r&(maxChunkBlocks-1)]
}
