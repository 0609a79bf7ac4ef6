package shard

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

const (
	// PageShift is log2 of the page size. A page holds every naturally
	// aligned access (<= 16 bytes) whole, so no access spans two pages,
	// hence two shards.
	PageShift = 12
	// PageBytes is the size of a page in bytes: 4 KiB.
	PageBytes = 1 << PageShift
	// PageWords is the number of 32-bit words in a page: 1024.
	PageWords = PageBytes / 4

	// DirBits is log2 of the pages one directory maps: a directory covers
	// 4 MiB of one memory instance, a dense array of page entries indexed
	// directly by the address.
	DirBits = 10
	// DirPages is the number of pages a directory maps.
	DirPages = 1 << DirBits

	// MaxPages bounds the pages of one Memory (16 GiB): a page reference
	// fits 22 bits, so a word reference (ref<<10 | word, see WordRef) fits
	// 32.
	MaxPages = 1 << 22
	// MaxBytes is the most simulated memory a Memory holds.
	MaxBytes = MaxPages * PageBytes

	// ChunkPages is how many pages are allocated together, in one [Chunk]
	// (256 KiB): consecutive references.
	ChunkPages = 64
	// ChunkWords is the words of a chunk: its pages' words, end to end.
	ChunkWords = ChunkPages * PageWords

	// DefaultShards is the shard count when [WithShards] is not given.
	DefaultShards = 64
	// MaxShards is the largest shard count [WithShards] accepts.
	MaxShards = 1 << 16
)

// Page is 4 KiB of one memory instance: 1024 little-endian 32-bit words,
// a bitmap of words written (bit i of Touched[i/64] is word i), and where
// it lives. Words and Touched lie in the page's [Chunk]; they never move.
//
// A word is written when it is non-zero or its bit in Touched is set
// ([Page.Written]): a new page is all zeros, so a non-zero word has been
// written, and a writer must set the bit where it leaves a word zero (it
// may set it anywhere it writes). The scattered additions
// ([Memory.AddWords]) set it only for a zero sum, which spares them a
// second miss in cache an addition.
type Page struct {
	Words   *[PageWords]uint32
	Touched *[PageWords / 64]uint64
	Mem     uint32 // the memory instance
	Shard   uint32 // the shard, fixed when the page was created
	Num     uint64 // the page number: the address of its first byte >> PageShift
}

// Touch marks word i written.
func (p *Page) Touch(i uint32) { p.Touched[i>>6] |= 1 << (i & 63) }

// Written sets dst to the page's written words, a bitmap like Touched:
// Touched and every non-zero word. It reads the whole page, as the memory
// table does anyway to write the words' values. next, when not nil, is
// the page the caller reads next: on amd64 its words are asked for
// (PREFETCHT0) meanwhile, so that a walk over pages that are not in cache
// waits for memory once a page rather than at every line.
func (p *Page) Written(dst *[PageWords / 64]uint64, next *Page) {
	nw := p.Words
	if next != nil {
		nw = next.Words
	}
	written(p.Words, p.Touched, dst, nw)
}

// writtenGeneric is Written in Go: the reference the assembly is tested
// against, and the loop on other architectures.
func writtenGeneric(words *[PageWords]uint32, touched, dst *[PageWords / 64]uint64) {
	for i := range dst {
		var m uint64
		for j, w := range (*[64]uint32)(words[i*64:]) {
			m |= uint64((w|-w)>>31) << j // bit 31 of w|-w: w != 0
		}
		dst[i] = touched[i] | m
	}
}

// Chunk holds the pages of ChunkPages consecutive references: their words
// end to end, then their written-word bitmaps end to end, so that a word
// reference ([Entry.WordRef]) names its word in the chunk by its low 16
// bits ([Memory.Chunk]) and the apply loops of the engine index a word and
// its bit directly, with no page in between.
type Chunk struct {
	// pages come first: the only pointers (into the arrays below), so the
	// garbage collector scans 2 KiB of a chunk, not 264.
	pages   [ChunkPages]Page
	Words   [ChunkWords]uint32
	Touched [ChunkWords / 64]uint64
}

// Mark marks word w of the chunk (w < ChunkWords) written. It stores only
// when the bit is clear: marking a word written before (a histogram's
// bins, a hot counter, words a replay updates again and again) is a load,
// with no store for the next mark of the same bitmap word to wait on.
func (c *Chunk) Mark(w uint32) {
	i, m := w/64%(ChunkWords/64), uint64(1)<<(w%64)
	if t := c.Touched[i]; t&m == 0 {
		c.Touched[i] = t | m
	}
}

// Set stores v at word w of the chunk (w < ChunkWords), marking the word
// written only when v is 0: a word is written when it is non-zero or
// marked (Page.Written), so a store of a non-zero value touches no line
// of the bitmap (a scattered update's second line at random a lane).
func (c *Chunk) Set(w, v uint32) {
	c.Words[w] = v
	if v == 0 {
		c.Touched[w/64] |= 1 << (w % 64)
	}
}

func newChunk() *Chunk {
	c := new(Chunk)
	for i := range c.pages {
		c.pages[i].Words = (*[PageWords]uint32)(c.Words[i*PageWords:])
		c.pages[i].Touched = (*[PageWords / 64]uint64)(c.Touched[i*PageWords/64:])
	}
	return c
}

// Entry is a resolved page: its reference (low 32 bits) and its shard (high
// 32). The zero Entry is no page.
type Entry uint64

// Ref is the page's reference, for [Memory.Page]: 1 ≤ Ref < MaxPages.
func (e Entry) Ref() uint32 { return uint32(e) }

// Shard is the page's shard.
func (e Entry) Shard() int { return int(e >> 32) }

// WordRef names the word of addr in the page of e: Ref<<10 | word index.
func (e Entry) WordRef(addr uint64) uint32 {
	return uint32(e)<<(PageShift-2) | uint32(addr>>2)&(PageWords-1)
}

type options struct{ shards int }

// Option configures [New].
type Option func(*options) error

// WithShards sets the number of shards, 1..[MaxShards]. The default is
// [DefaultShards] (64). Which shard a page falls in depends on this count;
// what memory holds does not.
func WithShards(n int) Option {
	return func(o *options) error {
		if n < 1 || n > MaxShards {
			return fmt.Errorf("shard: WithShards(%d): want 1..%d", n, MaxShards)
		}
		o.shards = n
		return nil
	}
}

// dir maps DirPages consecutive pages of one memory instance to their
// entries. Entries are written once, under Memory.mu, and read without a
// lock.
type dir struct {
	mem     uint32
	num     uint64 // addr >> (PageShift+DirBits)
	entries [DirPages]atomic.Uint64
}

// dirTable finds a directory by (mem, num): open addressing, linear
// probing, power-of-two size. A table is never changed once published:
// adding a directory publishes a new one (they are few: one per 4 MiB).
type dirTable struct {
	slots []*dir
	n     int
}

func dirHash(mem uint32, num uint64) uint64 {
	return (num ^ uint64(mem)<<40) * 0x9e3779b97f4a7c15
}

func (t *dirTable) find(mem uint32, num uint64) *dir {
	if len(t.slots) == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := dirHash(mem, num) >> 32 & mask; ; i = (i + 1) & mask {
		d := t.slots[i]
		if d == nil || d.num == num && d.mem == mem {
			return d
		}
	}
}

// with returns a new table holding t's directories and d.
func (t *dirTable) with(d *dir) *dirTable {
	size := max(16, len(t.slots))
	for size < 2*(t.n+1) {
		size *= 2
	}
	nt := &dirTable{slots: make([]*dir, size), n: t.n + 1}
	mask := uint64(size - 1)
	for _, x := range append(slices.Clip(t.slots), d) {
		if x == nil {
			continue
		}
		i := dirHash(x.mem, x.num) >> 32 & mask
		for nt.slots[i] != nil {
			i = (i + 1) & mask
		}
		nt.slots[i] = x
	}
	return nt
}

// Memory is the simulated memory: pages of every memory instance, each in
// one shard. Looking a page up takes no lock ([Cursor]); creating one takes
// the memory's mutex, once per page.
type Memory struct {
	nshards uint64
	mu      sync.Mutex // serialises creating pages and directories
	npages  atomic.Uint32
	dirs    atomic.Pointer[dirTable]
	// chunks holds the pages by reference: page ref is
	// chunks[ref/ChunkPages].pages[ref%ChunkPages]. Page 0 is never handed
	// out, so that the zero Entry means no page. Chunks never move.
	chunks chunkTable
	// The chunks made but not yet faulted in, from head on, and whether a
	// goroutine is faulting them in (populateAhead); guarded by mu.
	unpopulated []*Chunk
	head        int
	populating  bool
}

// populateAhead queues the new chunk c to be faulted in (populate) off
// the goroutine that made it, and starts a goroutine that does so when
// none is running. m.mu must be held.
//
// A chunk is made when the replay first touches one of its pages, on the
// goroutine that routes a batch's lanes. Faulting in its 256 KiB there
// held up that goroutine, and with it every worker waiting for the batch:
// the first batch of a replay over 256 MiB makes a thousand chunks, all
// faulted in on one core before any lane was applied. Now the goroutine
// started here and the router, once its batch is routed (Populate), fault
// them in together, on both cores. Left to the apply loop's stores
// instead, they cost more CPU and were no faster
// (BenchmarkReplay/uniform-64Mi). The goroutine stops when
// no chunk is left, so a Memory needs no closing.
func (m *Memory) populateAhead(c *Chunk) {
	if !canPopulate {
		return
	}
	m.unpopulated = append(m.unpopulated, c)
	if !m.populating {
		m.populating = true
		go m.populateQueued(true)
	}
}

// Populate faults in the chunks made and not yet faulted in, oldest
// first, beside the goroutine that populateAhead started; it returns when
// none is left to begin. Call it where the chunks are about to be used
// (a routed batch, before it is applied): a page that is still not
// resident then only costs a fault on its first store.
func (m *Memory) Populate() { m.populateQueued(false) }

// populateQueued is Populate; on populateAhead's goroutine (goroutine
// true) it also records, under the same lock as it finds the queue empty,
// that the goroutine is gone, so that the next chunk starts another.
func (m *Memory) populateQueued(goroutine bool) {
	for {
		m.mu.Lock()
		if m.head == len(m.unpopulated) {
			clear(m.unpopulated[:m.head])
			m.unpopulated, m.head = m.unpopulated[:0], 0
			if goroutine {
				m.populating = false
			}
			m.mu.Unlock()
			return
		}
		c := m.unpopulated[m.head]
		m.head++
		m.mu.Unlock()
		_ = populate(c) // faster, if the system can (populate_linux.go)
	}
}

// chunkTable holds a memory's chunks by number: a page reference / ChunkPages.
type chunkTable [MaxPages / ChunkPages]atomic.Pointer[Chunk]

// New returns an empty memory.
func New(opts ...Option) (*Memory, error) {
	o := options{shards: DefaultShards}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("shard: nil Option")
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	m := &Memory{nshards: uint64(o.shards)}
	m.dirs.Store(&dirTable{})
	c := newChunk()
	m.chunks[0].Store(c)
	m.mu.Lock()
	m.populateAhead(c)
	m.mu.Unlock()
	m.npages.Store(1) // page 0 is reserved
	return m, nil
}

// Shards returns the number of shards.
func (m *Memory) Shards() int { return int(m.nshards) }

// ShardIndex maps a hash to a shard with a multiply-shift (the high word of
// h*Shards()), as pebble's cache does: uniform for any shard count and no
// division.
func (m *Memory) ShardIndex(h uint64) int {
	hi, _ := bits.Mul64(h, m.nshards)
	return int(hi)
}

// Pages returns the number of pages created.
func (m *Memory) Pages() int { return int(m.npages.Load()) - 1 }

// Page returns the page of reference ref, from an [Entry].
func (m *Memory) Page(ref uint32) *Page {
	return &m.chunks[ref/ChunkPages].Load().pages[ref%ChunkPages]
}

// Chunk returns the chunk of the word a [Entry.WordRef] names; the word is
// Words[w%ChunkWords] of it, and its written bit bit w%64 of
// Touched[w%ChunkWords/64].
func (m *Memory) Chunk(w uint32) *Chunk {
	return m.chunks[w/ChunkWords].Load()
}

// Word returns the word a [Entry.WordRef] names.
func (m *Memory) Word(w uint32) *uint32 {
	return &m.Chunk(w).Words[w%ChunkWords]
}

// Cursor resolves addresses to pages for one goroutine, remembering the
// last directory it used, so that accesses within 4 MiB of each other take
// one indexed load. Cursors of one Memory may run in parallel. The zero
// Cursor is not usable: see [Memory.Cursor].
type Cursor struct {
	m *Memory
	// key is dirKey of d's (memory instance, number), or noDir.
	key uint64
	d   *dir
}

// Cursor returns a cursor over m.
func (m *Memory) Cursor() Cursor { return Cursor{m: m, key: noDir} }

// noDir is a cursor's key when it has no directory: no dirKey has it.
const noDir = ^uint64(0)

// dirKey packs a directory's memory instance and number into one word for
// the cursor's one comparison: the number has 64-PageShift-DirBits = 42
// bits, so instances below 1<<22 fit above it. A cursor does not remember
// a directory of instance cursorMems or higher (dirKey reports false),
// whose keys could collide with a lower one's or be noDir; it still finds
// it, through the table.
func dirKey(mem uint32, addr uint64) (uint64, bool) {
	return uint64(mem)<<42 | addr>>(PageShift+DirBits), mem < cursorMems
}

// cursorMems bounds the instances a cursor remembers (see dirKey).
const cursorMems = 1<<22 - 1

// Cached is Resolve's common case, small enough to inline: the page of
// addr when it is in the cursor's directory and exists, else the zero
// Entry (then call Resolve). Hot loops write
//
//	if e = cur.Cached(mem, addr); e == 0 { e = cur.Resolve(mem, addr) }
func (c *Cursor) Cached(mem uint32, addr uint64) Entry {
	if uint64(mem)<<42|addr>>(PageShift+DirBits) != c.key || mem >= cursorMems {
		return 0 // (a higher instance would have collided with a lower one)
	}
	return Entry(c.d.entries[addr>>PageShift&(DirPages-1)].Load())
}

// WordAdds is Resolve for many addresses at once, without creating, writing
// additions: out[i] is addrs[i]'s [Entry.WordRef] in instance mem beside
// addends[i]>>shift, truncated to 32 bits, for the longest prefix of addrs
// whose pages exist, whose length it returns
// (then call Resolve for the next address, which creates its page). out
// and addends must be at least as long as addrs. It moves the cursor to
// the directory of the last address it resolved. A scattered update's
// records are made in this one loop.
//
// It is not inlined: inlined into its caller's larger body, its loop kept
// its index and address on the stack, a store and a load a lane.
//
//go:noinline
func (c *Cursor) WordAdds(mem uint32, addrs, addends []uint64, shift uint8, out []WordAdd) int {
	if mem >= cursorMems {
		return 0 // (as Cached: Resolve finds it)
	}
	base, key, d := uint64(mem)<<42, c.key, c.d
	out = out[:len(addrs)]
	addends = addends[:len(addrs)]
	i := 0
	for ; i < len(addrs); i++ {
		a := addrs[i]
		if k := base | a>>(PageShift+DirBits); k != key {
			nd := c.m.dirs.Load().find(mem, a>>(PageShift+DirBits))
			if nd == nil {
				break
			}
			key, d = k, nd
		}
		ref := uint32(d.entries[a>>PageShift&(DirPages-1)].Load())
		if ref == 0 {
			break // no page
		}
		out[i] = WordAdd{Word: ref<<(PageShift-2) | uint32(a>>2)&(PageWords-1), Add: uint32(addends[i] >> shift)}
	}
	c.key, c.d = key, d
	return i
}

// Resolve returns the page holding addr in memory instance mem, creating
// it zeroed if absent. It returns the zero Entry only when the memory has
// MaxPages pages already.
func (c *Cursor) Resolve(mem uint32, addr uint64) Entry {
	if e := c.Cached(mem, addr); e != 0 {
		return e
	}
	return c.resolve(mem, addr)
}

// resolve is Resolve's slow path: another directory, or a new page.
func (c *Cursor) resolve(mem uint32, addr uint64) Entry {
	key, ok := dirKey(mem, addr)
	d := c.d
	if key != c.key || !ok {
		d = c.m.dir(mem, addr>>(PageShift+DirBits))
		c.d, c.key = d, key
		if !ok {
			c.key = noDir
		}
	}
	if e := Entry(d.entries[addr>>PageShift&(DirPages-1)].Load()); e != 0 {
		return e
	}
	return c.m.create(d, addr)
}

// Lookup is Resolve without creating: the zero Entry when addr's page does
// not exist.
func (m *Memory) Lookup(mem uint32, addr uint64) Entry {
	d := m.dirs.Load().find(mem, addr>>(PageShift+DirBits))
	if d == nil {
		return 0
	}
	return Entry(d.entries[addr>>PageShift&(DirPages-1)].Load())
}

// dir returns the directory of (mem, num), creating it if absent.
func (m *Memory) dir(mem uint32, num uint64) *dir {
	if d := m.dirs.Load().find(mem, num); d != nil {
		return d
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.dirs.Load()
	if d := t.find(mem, num); d != nil {
		return d
	}
	d := &dir{mem: mem, num: num}
	m.dirs.Store(t.with(d))
	return d
}

// create makes the page of addr in directory d, unless another goroutine
// just did.
func (m *Memory) create(d *dir, addr uint64) Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	slot := &d.entries[addr>>PageShift&(DirPages-1)]
	if e := Entry(slot.Load()); e != 0 {
		return e
	}
	ref := m.npages.Load()
	if ref >= MaxPages {
		return 0
	}
	c := &m.chunks[ref/ChunkPages]
	if c.Load() == nil {
		nc := newChunk()
		c.Store(nc)
		m.populateAhead(nc)
	}
	num := addr >> PageShift
	p := m.Page(ref)
	shard := uint32(m.ShardIndex(Hash(d.mem, addr)))
	p.Mem, p.Num, p.Shard = d.mem, num, shard
	m.npages.Store(ref + 1)
	e := Entry(ref) | Entry(shard)<<32
	slot.Store(uint64(e))
	return e
}

// PageRef names one page of a memory: its reference, memory instance and
// the address of its first byte.
type PageRef struct {
	Ref  uint32
	Mem  uint32
	Base uint64
	Page *Page
}

// All returns every page, sorted by (Mem, Base). It must not run while
// pages are being created; it is meant for the end of a replay.
//
// When a page's memory id, page number and reference fit 64 bits together
// (the reference takes refBits: one memory instance's addresses below
// 2^54), it radix-sorts those keys and reads the pages back by reference:
// 65536 pages in a fifth of the time a comparison function takes (the
// memory table of a large replay waits for it). Otherwise it sorts the
// PageRefs by comparison.
func (m *Memory) All() []PageRef {
	n := m.npages.Load()
	refs := make([]PageRef, 0, n-1)
	var memOr uint32
	var numOr uint64
	for ref := uint32(1); ref < n; ref++ {
		p := m.Page(ref)
		refs = append(refs, PageRef{Ref: ref, Mem: p.Mem, Base: p.Num << PageShift, Page: p})
		memOr, numOr = memOr|p.Mem, numOr|p.Num
	}
	numBits := bits.Len64(numOr)
	if width := bits.Len32(memOr) + numBits + refBits; width <= 64 {
		keys := make([]uint64, len(refs))
		for i, r := range refs {
			keys[i] = uint64(r.Mem)<<(numBits+refBits) | (r.Base>>PageShift)<<refBits | uint64(r.Ref)
		}
		keys = radixSort(keys, make([]uint64, len(keys)), width)
		for i, k := range keys {
			ref := uint32(k & (1<<refBits - 1))
			p := m.Page(ref)
			refs[i] = PageRef{Ref: ref, Mem: p.Mem, Base: p.Num << PageShift, Page: p}
		}
		return refs
	}
	slices.SortFunc(refs, func(a, b PageRef) int {
		if a.Mem != b.Mem {
			if a.Mem < b.Mem {
				return -1
			}
			return 1
		}
		if a.Base < b.Base {
			return -1
		}
		if a.Base > b.Base {
			return 1
		}
		return 0
	})
	return refs
}

// refBits is the width of a page reference: every reference is below
// MaxPages = 1<<refBits (the two constants below fail to compile
// otherwise).
const refBits = 22

const (
	_ uint = MaxPages - 1<<refBits
	_ uint = 1<<refBits - MaxPages
)

// radixSort sorts keys, whose bits above the lowest width are zero, by
// least significant digit first, 11 bits a pass, through tmp (as long as
// keys); it returns the sorted slice, keys or tmp.
func radixSort(keys, tmp []uint64, width int) []uint64 {
	const digit = 11
	var count [1 << digit]int
	for shift := 0; shift < width; shift += digit {
		clear(count[:])
		for _, k := range keys {
			count[k>>shift&(1<<digit-1)]++
		}
		sum := 0
		for d, c := range count {
			count[d], sum = sum, sum+c
		}
		for _, k := range keys {
			d := k >> shift & (1<<digit - 1)
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys
}

// xxhash64 primes.
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

// Hash is the xxhash64 of the page key of addr in memory instance mem: the
// 16 bytes uint64(mem), addr>>PageShift, little endian. It equals
// xxhash.Sum64 of those bytes, computed inline without a buffer. It runs
// once per page, when the page is created, to pick the page's shard.
func Hash(mem uint32, addr uint64) uint64 {
	// Seed 0 and length 16, then one 8-byte round per word; + and ^
	// associate left to right.
	h := (prime5 + 16) ^ xxRound(uint64(mem))
	h = bits.RotateLeft64(h, 27)*prime1 + prime4 ^ xxRound(addr>>PageShift)
	h = bits.RotateLeft64(h, 27)*prime1 + prime4
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

func xxRound(x uint64) uint64 {
	return bits.RotateLeft64(x*prime2, 31) * prime1
}
