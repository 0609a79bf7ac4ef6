package engine

import (
	"sync"
	"unsafe"

	"github.com/gpureplay/replay/internal/offheap"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// AddressStat is one row of the addresses table: an address that atomics
// touched, how often, from how many warps and groups, and whether another
// order of its accesses could leave a different final value.
type AddressStat struct {
	Space    trace.Space
	Group    int64 // the group for per-group spaces; -1 otherwise
	Addr     uint64
	Accesses uint64
	Warps    uint64 // distinct (group, warp) pairs
	Groups   uint64 // distinct groups
	// Exact is false when Warps or Groups is an estimate: past a few
	// distinct values a counter turns into a HyperLogLog (sketch.go).
	Exact bool
	// OrderSensitive is filled by WithExplore (false otherwise): true unless
	// the accesses provably commute.
	OrderSensitive bool
}

// AddressSink is an optional Sink method: a sink that has it gets the
// addresses table at the end, in one or more calls, sorted by (space,
// group, addr) across them. The engine tracks addresses only for such a
// sink.
type AddressSink interface {
	WantsAddresses() bool
	Addresses(rows []AddressStat) error
}

// addrEntry is one address's statistics, 48 bytes, in its page's slab:
// 48 rather than 56 bytes a distinct address (the table's budget is 64,
// index and slack included), and half of them, not three in four, cross
// a cache line.
type addrEntry struct {
	// accesses is the count's low 32 bits: the carries out of it, which
	// take 2^32 accesses to one address, are in its page's high.
	accesses uint32
	// link is next<<2 | sub: sub the address's byte in its word, next 1 +
	// the slab index of the same word's next entry (the next higher
	// address), or 0. A page has at most PageBytes entries, so next needs
	// 13 bits.
	link   uint16
	wn, gn uint8 // the sketches' states (sketch.go)
	warps  [warpBytes]byte
	groups [groupBytes]byte
}

// sub is the address's byte within its word.
func (e *addrEntry) sub() uint8 { return uint8(e.link & 3) }

// next is the slab index of the same word's next entry, or -1.
func (e *addrEntry) next() int { return int(e.link>>2) - 1 }

// exploreEntry is an address's order analysis (WithExplore), beside its
// addrEntry: the first access's function (its operands at the access's
// width, high halves of 128-bit ones in bh and ch), whether every later
// one was the same, and the commuting family of all of them.
type exploreEntry struct {
	b, c     uint64
	bh, ch   uint64
	kind     kind
	size     uint8 // the access's bytes: a 4- and a 16-byte exch are not the same operation
	family   uint8
	same     bool
	sensible bool // family holds
}

// pageStats is the addresses table's slab of one page: an index from each
// word to its first entry, and the entries (one per distinct address; a
// word accessed at sub-word addresses has a chain of them, in address
// order). Only the page's owner touches it while a batch applies. The
// index and the entries live in the owner's arena, outside the Go heap
// (slabOwner).
type pageStats struct {
	index []uint16 // per word: 1 + the slab index of its first entry, or 0; nil until the page's first access
	// aligned has bit w set when word w's first entry is the address of
	// the word itself (the common case): then index alone finds it,
	// without reading the entry.
	aligned [shard.PageWords / 64]uint64
	// The entries, slabChunk at a time: a chunk never moves, so the slab
	// grows without copying and wastes at most one chunk's tail.
	n       int
	entries []*[slabChunk]addrEntry
	explore []*[slabChunk]exploreEntry // with WithExplore only, parallel to entries
	// high holds, by slab index, the carries out of an entry's 32-bit
	// accesses (multiples of 2^32); nil until the first.
	high map[uint16]uint64
}

// addAccesses adds n accesses to entry e, slab index i.
func (ps *pageStats) addAccesses(e *addrEntry, i int, n uint32) {
	a := e.accesses + n
	if a < n {
		ps.carry(i)
	}
	e.accesses = a
}

// carry records that entry i's accesses wrapped past 2^32.
func (ps *pageStats) carry(i int) {
	if ps.high == nil {
		ps.high = make(map[uint16]uint64)
	}
	ps.high[uint16(i)] += 1 << 32
}

// accesses is entry e's (slab index i) full count.
func (ps *pageStats) accesses(e *addrEntry, i int) uint64 {
	n := uint64(e.accesses)
	if ps.high != nil {
		n += ps.high[uint16(i)]
	}
	return n
}

// slabChunk is how many entries a page's slab grows by: as many as fit in
// 4 KiB (85, 4080 bytes, which the arena rounds to 4096), so that almost
// none of it is waste.
const slabChunk = 4096 / int(unsafe.Sizeof(addrEntry{}))

// slabChunkBytes is the size of a slab chunk's entries.
const slabChunkBytes = uintptr(slabChunk) * unsafe.Sizeof(addrEntry{})

// entry is the slab's entry i. It reaches the entry by pointer arithmetic
// rather than by indexing the chunk: Go checks an indexed array pointer for
// nil by loading from it, which reads the chunk's first cache line, a second
// miss beside the entry's own (the slab's chunks are never nil: findIndex
// makes them before it hands out their indices).
func (ps *pageStats) entry(i int) *addrEntry {
	c := ps.entries[i/slabChunk]
	return (*addrEntry)(unsafe.Add(unsafe.Pointer(c), uintptr(i%slabChunk)*unsafe.Sizeof(addrEntry{})))
}

func (ps *pageStats) exploreAt(i int) *exploreEntry { return &ps.explore[i/slabChunk][i%slabChunk] }

// addrTracker is the addresses table under construction: one pageStats per
// page of the simulated memory, by page reference.
type addrTracker struct {
	explore bool
	pages   []pageStats
	// Per owner: the memory of its pages' slabs, and the items collected
	// in the batch being applied, with the counting sort's buffers.
	owners []slabOwner
	items  [][]statItem
	sorted [][]statItem
	hist   [][]uint32
	keys   [][]sketchKey // per owner: the batch's instructions' sketch keys, warp and group
}

// slabOwner is where one owner's pages keep their slabs: an arena outside
// the Go heap (internal/offheap). A million addresses' entries are 50 MiB
// that live to the end of the replay; in the heap they would raise the
// collector's goal by as much again, and what the replay frees while it
// writes its tables would not be reused until the heap reached it
// (measured: the addresses replay of uniform-1Mi peaked about 2× its
// entries above the lean one). held counts the bytes its slabs hold.
type slabOwner struct {
	arena offheap.Arena
	held  uint64
}

func newAddrTracker(owners int, explore bool) *addrTracker {
	return &addrTracker{explore: explore, owners: make([]slabOwner, owners), items: make([][]statItem, owners),
		sorted: make([][]statItem, owners), hist: make([][]uint32, owners),
		keys: make([][]sketchKey, owners)}
}

// grow makes room for pages below n. It must not run while owners apply.
func (t *addrTracker) grow(n int) {
	if n > len(t.pages) {
		t.pages = append(t.pages, make([]pageStats, n-len(t.pages))...)
	}
}

// Commuting families: accesses of one family, in any order, leave the same
// final value (wrapping integer addition and subtraction; one bitwise
// operation; one min or max).
const (
	famNone uint8 = iota
	famAdd
	famAnd
	famOr
	famXor
	famMinU
	famMinS
	famMaxU
	famMaxS
)

func familyOf(k kind) uint8 {
	switch k {
	case kAdd, kSub:
		return famAdd
	case kAnd:
		return famAnd
	case kOr:
		return famOr
	case kXor:
		return famXor
	case kMinU:
		return famMinU
	case kMinS:
		return famMinS
	case kMaxU:
		return famMaxU
	case kMaxS:
		return famMaxS
	}
	return famNone
}

// statItem is one access (or a uniform warp's n) for the addresses table,
// collected while a batch applies and counted after, page by page.
type statItem struct {
	word uint32 // page reference << 10 | word in the page
	inst uint32 // the instruction in the batch
	slot uint32 // the lane's slot; for a vals segment, its first source
	n    uint8  // lanes: 1, or a uniform warp's
	sub  uint8  // the byte within the word
	vals bool   // slot holds the source (seg.vals)
}

// collect appends the accesses of one applied route to owner o's items.
// It does no more than copy records: the counting, which touches each
// address's slab entry, happens in count, in page order.
func (t *addrTracker) collect(o int, b *batch, rt *route) {
	items := t.items[o]
	for k, s := range rt.segs {
		hi := uint32(len(rt.recs))
		if k+1 < len(rt.segs) {
			hi = rt.segs[k+1].lo
		}
		if b.plans[b.insts[s.inst].pi].plain {
			continue // LSC's plain loads and stores are not atomics
		}
		recs := rt.recs[s.lo:hi]
		switch {
		case s.n > 0 && s.step == 0:
			x := recs[0]
			items = append(items, statItem{word: x.word, inst: s.inst, slot: x.slot & slotMask, n: uint8(s.n), sub: uint8(x.slot >> slotBits)})
		case s.n > 0:
			x := recs[0]
			for l := uint32(0); l < s.n; l++ {
				items = append(items, statItem{word: x.word + uint32(int32(l)*s.step), inst: s.inst, slot: x.slot&slotMask + l, n: 1})
			}
		case s.vals:
			for _, x := range recs {
				items = append(items, statItem{word: x.word, inst: s.inst, slot: x.slot, n: 1, vals: true})
			}
		default:
			for _, x := range recs {
				items = append(items, statItem{word: x.word, inst: s.inst, slot: x.slot & slotMask, n: 1, sub: uint8(x.slot >> slotBits)})
			}
		}
	}
	t.items[o] = items
}

// count adds owner o's collected items to their addresses' entries and
// empties the list. The items are first put in page order (a counting
// sort by page reference, stable), so each page's index and slab stay in
// cache while its accesses are counted, instead of one cache miss into
// the whole table per access. Counts, sketches and the order analysis do
// not depend on the order in which accesses are counted. The batch b must
// still hold the items' instructions and sources.
func (t *addrTracker) count(o int, b *batch) {
	items := t.items[o]
	if len(items) == 0 {
		return
	}
	// Bucket by page reference, at most 1<<12 buckets.
	maxRef := uint32(len(t.pages))
	shift := uint(0)
	for maxRef>>shift > 1<<12 {
		shift++
	}
	hist := t.hist[o][:0]
	hist = append(hist, make([]uint32, maxRef>>shift+2)...)
	for i := range items {
		hist[items[i].word>>(shard.PageShift-2)>>shift+1]++
	}
	for i := 1; i < len(hist); i++ {
		hist[i] += hist[i-1]
	}
	sorted := t.sorted[o]
	if cap(sorted) < len(items) {
		sorted = make([]statItem, len(items), len(items)+len(items)/4)
	}
	sorted = sorted[:len(items)]
	for i := range items {
		bkt := items[i].word >> (shard.PageShift - 2) >> shift
		sorted[hist[bkt]] = items[i]
		hist[bkt]++
	}
	so := &t.owners[o]
	// The sketch keys of each instruction's (group, warp) and group, once
	// per batch: items in page order come from instructions in any order.
	keys := grow(t.keys[o], 2*len(b.insts))
	for i := range b.insts {
		bi := &b.insts[i]
		keys[2*i] = newSketchKey(mix64(uint64(bi.Group)*0x9e3779b97f4a7c15^uint64(bi.Warp)), warpRegs)
		keys[2*i+1] = newSketchKey(mix64(uint64(bi.Group)), groupRegs)
	}
	t.keys[o] = keys
	// In chunks, three in flight: the index words of chunk j+2 are asked
	// for, chunk j+1's entries are found (their index words arrived) and
	// asked for, and chunk j's entries (arrived) are updated. The misses
	// of a chunk overlap one another and the work on the two before it
	// (prefetch).
	var found [2]foundChunk
	var ptrs [countChunk]unsafe.Pointer
	chunks := (len(sorted) + countChunk - 1) / countChunk
	part := func(j int) []statItem { return sorted[j*countChunk : min((j+1)*countChunk, len(sorted))] }
	t.prefetchIndexes(part(0), &ptrs)
	if chunks > 1 {
		t.prefetchIndexes(part(1), &ptrs)
	}
	t.find(part(0), so, &found[0], &ptrs)
	for j := range chunks {
		if j+2 < chunks {
			t.prefetchIndexes(part(j+2), &ptrs)
		}
		if j+1 < chunks {
			t.find(part(j+1), so, &found[(j+1)&1], &ptrs)
		}
		t.update(part(j), &found[j&1], keys, b)
	}
	t.items[o], t.sorted[o], t.hist[o] = items[:0], sorted[:0], hist[:0]
}

// countChunk is how many items count handles at a step, and so how far
// ahead it asks for lines: BenchmarkAddressCount took 54 ns an access at 8,
// 59 at 4 and 12, 63 at 16, 88 at 32, 106 at 256 (the lines asked for too
// early are gone again when they are used), and 65 with the loop it
// replaced (a chunk of 256 entries loaded, then updated).
const countChunk = 8

// foundChunk is a chunk's items' entries, found: page, slab index and
// pointer. The pointer saves a second lookup through the slab's chunk list
// (entry), whose nil check loads the chunk's first line.
type foundChunk struct {
	pss [countChunk]*pageStats
	idx [countChunk]int32
	eps [countChunk]*addrEntry
}

// prefetchIndexes asks for the index words of part's items (their pages'
// headers for pages without an index yet).
func (t *addrTracker) prefetchIndexes(part []statItem, ptrs *[countChunk]unsafe.Pointer) {
	for k := range part {
		ps := &t.pages[part[k].word>>(shard.PageShift-2)]
		ptrs[k] = unsafe.Pointer(ps)
		if ps.index != nil {
			ptrs[k] = unsafe.Pointer(&ps.index[part[k].word&(shard.PageWords-1)])
		}
	}
	prefetch(ptrs[:len(part)], 0)
}

// find finds (or adds, in so's arena) the entries of part's items into f,
// and asks for their lines: an entry may straddle two.
func (t *addrTracker) find(part []statItem, so *slabOwner, f *foundChunk, ptrs *[countChunk]unsafe.Pointer) {
	for k := range part {
		it := &part[k]
		ps := &t.pages[it.word>>(shard.PageShift-2)]
		w := it.word & (shard.PageWords - 1)
		var i int
		if it.sub == 0 && ps.aligned[w>>6]&(1<<(w&63)) != 0 {
			i = int(ps.index[w]) - 1
		} else {
			i = ps.findIndex(w, it.sub, t.explore, so)
		}
		e := ps.entry(i)
		f.pss[k], f.idx[k], f.eps[k] = ps, int32(i), e
		ptrs[k] = unsafe.Pointer(e)
	}
	prefetch(ptrs[:len(part)], unsafe.Sizeof(addrEntry{})-1)
}

// update counts part's items into their entries, found in f.
func (t *addrTracker) update(part []statItem, f *foundChunk, keys []sketchKey, b *batch) {
	for k := range part {
		it := &part[k]
		wk, gk := keys[2*it.inst], keys[2*it.inst+1]
		e, ps, i := f.eps[k], f.pss[k], int(f.idx[k])
		first := t.explore && ps.accesses(e, i) == 0
		ps.addAccesses(e, i, uint32(it.n))
		// A warp the address has seen already is of a group it has
		// counted: only a new warp can bring a new group.
		if e.addWarp(wk) {
			e.addGroup(gk)
		}
		if t.explore {
			t.analyse(ps.exploreAt(i), b, &b.insts[it.inst], it, first)
		}
	}
}

// analyse updates an address's order analysis with an item's accesses.
// first says that these are the address's first accesses.
func (t *addrTracker) analyse(ex *exploreEntry, b *batch, bi *binst, it *statItem, first bool) {
	p := b.plans[bi.pi]
	fam := familyOf(p.kind)
	// Operands compare at the access's width: a 16-bit atomic uses only
	// the low half of its 32-bit source (vISA DWORD_ATOMIC, Description:
	// "only the lower 16bit part of each dword is used").
	width := ^uint64(0)
	if p.size < 8 {
		width = 1<<(8*uint(p.size)) - 1
	}
	for l := uint32(0); l < uint32(it.n); l++ {
		bv, cv := b.src(bi, it.slot+l, it.vals, it.slot)
		bv, cv = bv&width, cv&width
		var bh, ch uint64
		if p.size == 16 {
			bh, ch = b.opBhi[it.slot+l], b.opChi[it.slot+l]
		}
		if first && l == 0 {
			*ex = exploreEntry{kind: p.kind, size: p.size, b: bv, c: cv, bh: bh, ch: ch, same: true, family: fam, sensible: fam != famNone}
			continue
		}
		ex.same = ex.same && p.kind == ex.kind && p.size == ex.size && bv == ex.b && cv == ex.c && bh == ex.bh && ch == ex.ch
		// One family at one width: a 16-bit and a 32-bit add at one
		// address do not commute (the carry out of the low half).
		ex.sensible = ex.sensible && fam == ex.family && p.size == ex.size
	}
}

// findIndex returns the slab index of the entry of the address at byte
// sub of word w, adding it, in so's arena.
func (ps *pageStats) findIndex(w uint32, sub uint8, explore bool, so *slabOwner) int {
	// Fresh memory is written before it is read. A first read maps the
	// kernel's shared zero page, and the first write after it faults
	// again, to replace it, flushing the TLB of every core the process
	// runs on: measured, each new index and slab chunk took both faults,
	// with an inter-processor interrupt per chunk, about 7% of the CPU of
	// an addresses replay of uniform-1Mi. A new index holds no chain to
	// walk, and a new chunk's first entry is written through the arena's
	// pointer, which needs no nil check (a load): the arena's memory is
	// fresh and zero.
	prev := -1
	var head uint16 // ps.index[w]
	if ps.index == nil {
		ps.index = unsafe.Slice((*uint16)(so.arena.Alloc(2*shard.PageWords)), shard.PageWords)
		so.held += 2 * shard.PageWords
	} else {
		head = ps.index[w]
		for i := int(head) - 1; i >= 0; i = ps.entry(i).next() {
			e := ps.entry(i)
			if e.sub() == sub {
				return i
			}
			if e.sub() > sub {
				break
			}
			prev = i
		}
	}
	i := ps.n
	ps.n++
	var e *addrEntry
	if i%slabChunk == 0 {
		p := so.arena.Alloc(int(slabChunkBytes))
		ps.entries = append(ps.entries, (*[slabChunk]addrEntry)(p))
		so.held += uint64(slabChunkBytes) + 8
		// Not &c[0]: the compiler checks a converted pointer for nil by
		// a load from it, which is the read before the write.
		e = (*addrEntry)(p)
		if explore {
			x := (*[slabChunk]exploreEntry)(so.arena.Alloc(int(unsafe.Sizeof([slabChunk]exploreEntry{}))))
			x[0].same = true // written first too; analyse sets the entry whole at its first access
			ps.explore = append(ps.explore, x)
			so.held += uint64(unsafe.Sizeof(*x)) + 8
		}
	} else {
		e = ps.entry(i)
	}
	*e = addrEntry{link: uint16(sub)}
	if prev < 0 {
		e.link |= head << 2
		ps.index[w] = uint16(i + 1)
		if sub == 0 {
			ps.aligned[w>>6] |= 1 << (w & 63)
		} else {
			ps.aligned[w>>6] &^= 1 << (w & 63)
		}
	} else {
		p := ps.entry(prev)
		e.link |= p.link &^ 3
		p.link = p.link&3 | uint16(i+1)<<2
	}
	return i
}

// bytes is the memory the tracker holds, as the owners counted it: the
// slabs' chunks and indexes, and the pages' headers.
func (t *addrTracker) bytes() uint64 {
	n := uint64(len(t.pages)) * uint64(unsafe.Sizeof(pageStats{}))
	for i := range t.owners {
		n += t.owners[i].held
	}
	return n
}

// release returns the slabs' memory to the system and forgets the pages:
// nothing may use the tracker after. Run calls it once the table is
// emitted, or on an error, when no owner applies any more.
func (t *addrTracker) release() {
	t.pages = nil
	for i := range t.owners {
		_ = t.owners[i].arena.Release() // an unmap that fails leaves the memory to the process, not wrong results
		t.owners[i].held = 0
	}
}

// emit hands the table to sink in (space, group, addr) order, pages
// given in that order, in chunks of about emitChunk rows. The rows of a
// chunk's pages are built on their own goroutine, one per owner (the
// sketches' counts are most of the cost: a million addresses, two each),
// a wave of chunks at a time, and handed over in order.
func (t *addrTracker) emit(sink AddressSink, pages []shard.PageRef, keys []memKey) error {
	spans := t.emitSpans(pages)
	wave := max(len(t.owners), 1)
	bufs := make([][]AddressStat, wave)
	for k := range bufs {
		bufs[k] = make([]AddressStat, 0, emitChunk)
	}
	warps, groups := newSketchCounter(warpRegs), newSketchCounter(groupRegs)
	for s := 0; s < len(spans); s += wave {
		n := min(wave, len(spans)-s)
		var wg sync.WaitGroup
		for k := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bufs[k] = t.rows(bufs[k][:0], spans[s+k], keys, warps, groups)
			}()
		}
		wg.Wait()
		for _, rows := range bufs[:n] {
			if len(rows) == 0 {
				continue
			}
			if err := sink.Addresses(rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// emitChunk is the most rows one call of AddressSink.Addresses gets (a
// page alone may give more: at most PageBytes addresses). Each owner's
// goroutine fills a buffer of that many: 448 KiB (it was 1.75 MiB, 32 Ki
// rows, which added 2.6 MiB to the replay's peak for nothing measurable).
const emitChunk = 1 << 13

// emitSpans cuts pages (the tracked ones) into runs of at most emitChunk
// addresses, or one page.
func (t *addrTracker) emitSpans(pages []shard.PageRef) [][]shard.PageRef {
	var spans [][]shard.PageRef
	from, rows := 0, 0
	for i, pr := range pages {
		n := 0
		if int(pr.Ref) < len(t.pages) {
			n = t.pages[pr.Ref].n
		}
		if rows > 0 && rows+n > emitChunk {
			spans = append(spans, pages[from:i])
			from, rows = i, 0
		}
		rows += n
	}
	if from < len(pages) {
		spans = append(spans, pages[from:])
	}
	return spans
}

// prefetchSlab asks for the slab of page pr, if tracked, chunk by chunk in
// address order (the hardware's prefetcher follows): rows visits the
// entries in address order, which in the slab is the order of their first
// accesses, at random, and would take a miss to memory for each.
func (t *addrTracker) prefetchSlab(pr shard.PageRef) {
	if int(pr.Ref) >= len(t.pages) {
		return
	}
	ps := &t.pages[pr.Ref]
	for c, chunk := range ps.entries {
		n := min(ps.n-c*slabChunk, slabChunk)
		prefetchRange(unsafe.Pointer(chunk), uintptr(n)*unsafe.Sizeof(addrEntry{}))
	}
}

// rows appends the rows of pages' addresses to out. The counters are
// read-only: goroutines share them.
func (t *addrTracker) rows(out []AddressStat, pages []shard.PageRef, keys []memKey, warps, groups *sketchCounter) []AddressStat {
	// Each page's slab is asked for while the page before it is read.
	if len(pages) > 0 {
		t.prefetchSlab(pages[0])
	}
	for j, pr := range pages {
		if j+1 < len(pages) {
			t.prefetchSlab(pages[j+1])
		}
		if int(pr.Ref) >= len(t.pages) {
			continue
		}
		ps := &t.pages[pr.Ref]
		if ps.index == nil {
			continue
		}
		k := keys[pr.Mem]
		for w := range ps.index {
			for i := int(ps.index[w]) - 1; i >= 0; i = ps.entry(i).next() {
				e := ps.entry(i)
				accesses := ps.accesses(e, i)
				wc, we := warps.count(e.wn, e.warps[:])
				gc, ge := groups.count(e.gn, e.groups[:])
				// An estimate past what can be: no more warps than
				// accesses, no more groups than warps.
				wc = min(wc, accesses)
				gc = min(gc, wc)
				r := AddressStat{Space: k.space, Group: k.group, Addr: pr.Base + uint64(w)<<2 + uint64(e.sub()), Accesses: accesses,
					Warps: wc, Groups: gc, Exact: we && ge}
				if t.explore {
					ex := ps.exploreAt(i)
					r.OrderSensitive = !ex.same && !ex.sensible
				}
				out = append(out, r)
			}
		}
	}
	return out
}
