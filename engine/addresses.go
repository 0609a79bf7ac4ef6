package engine

import (
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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
//
// A page is sparse or dense. Sparse, its entries are in the slab in the
// order of their first accesses, and the index finds them. Dense, the
// slab's first PageWords entries are the page's words in order (entry w
// is the address of word w itself, a zero entry, wn 0, while it has no
// access) and each heads its word's chain of sub-word entries, which
// follow at PageWords and up: an access to an aligned word finds its
// entry without the index, and a new address costs nothing to add. A page
// turns dense (toDense) once it holds denseEntries aligned addresses and
// no other, in the slab chunks it already has: the same memory.
type pageStats struct {
	index []uint16 // per word: 1 + the slab index of its first entry, or 0; nil until the page's first access; unused once dense
	dense bool
	// addrs is the number of distinct addresses (the table's rows): in
	// a sparse page, n.
	addrs int
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

// slabChunk is how many entries a page's slab grows by: 64 (3 KiB, a
// multiple of the arena's alignment, so none of it is waste), a divisor
// of PageWords, so that a dense page's words fill whole chunks.
const slabChunk = 64

// denseEntries is how many aligned addresses a page holds when it turns
// dense: those that fill its slab's last chunk but one, so that the dense
// layout (PageWords entries) takes the chunks the slab has already.
const denseEntries = shard.PageWords - slabChunk + 1

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
// page of the simulated memory, by page reference, each counted by one
// counter, the only one that touches its slab.
//
// It counts in one of two ways. Synchronously (one worker, or WithExplore,
// whose order analysis reads the batch's operands): each memory owner
// counts its own pages' accesses once it has applied a batch, in the
// compute stage (without WithExplore, a window of batches at a time, as
// the counters do). Asynchronously (more workers): one counter goroutine per
// worker owns the pages a hash of their reference gives it; the appliers
// hand each the accesses of its pages, and it gathers them into a window
// of many batches' and counts that while later batches are read,
// expanded and applied: it has two windows, and gathers the batches that
// come while it counts one into the other (poll), so that the compute
// stage waits for it only once both are full. Counting is most of an addresses
// replay's work (BenchmarkAddressCount); in the compute stage it waited
// for the slower owner at every batch, a core often idle.
// Either way an address is counted by one goroutine, and its counts do not
// depend on the order of its accesses: the table is the same.
type addrTracker struct {
	explore bool
	pages   pageTable
	npages  int // the pages grow has made room for: pages.len() rounds them up to a chunk
	// Per counter: the memory of its pages' slabs, and the counting
	// sort's buffers.
	owners []slabOwner
	sorted [][]statItem
	hist   [][]uint32
	keys   [][]sketchKey // per counter, synchronous: the batch's instructions' sketch keys, warp and group
	// lists[a*split+c] are the items applier a collected for counter c
	// in the batch being applied; split is 1 when each applier counts
	// its own (synchronous), else the number of counters.
	lists [][]statItem
	// extras[a], with WithExplore only, are each of applier a's items'
	// slot << 1 | vals, in step with its one list (split is 1): what the
	// order analysis reads of an access beside what counting does. A vals
	// item's slot is its lane's 32-bit value itself, so that an extra is
	// 33 bits wide: a uint32 dropped the value's top bit (the sign of an
	// f32 addend: 1.5 and -1.5 alike).
	extras  [][]uint64
	sortedX [][]uint64 // per counter, with WithExplore: extras in the sorted items' order
	split   int
	async   *asyncCount // nil when synchronous
	// hot holds, per counter, its share of the first hotPages pages
	// (asynchronous only): their words, not their pages, go to the
	// counters, each word's entries in its counter's pageStats.
	hot []*[hotPages]pageStats
	// toDense[c] are the pages that counter c's last count found ready
	// to turn dense; it turns them once the count is done (no found
	// entry may move while a run waits to be updated). denseAt is the
	// aligned addresses a page needs (denseEntries; 0: never, for tests).
	toDense [][]*pageStats
	denseAt int
	// window is how many items a counter gathers, over batches, before
	// it counts them (countWindow; 0: every batch, as WithExplore does,
	// whose order analysis reads the batch), and windowInsts the most
	// instructions (maxWindowInsts) a window takes. win[c] holds counter c's
	// gathered items, their inst an index into winKeys[c], the sketch
	// keys of the window's instructions (two an instruction, batch after
	// batch).
	window, windowInsts int
	win                 [][]statItem
	winKeys             [][]sketchKey
	// spare and spareKeys are counter c's second window's buffers
	// (asynchronous): countWindow counts win[c] while the counter
	// gathers the batches that follow into these (poll), which then
	// become win[c]. Synchronous, they stay nil.
	spare     [][]statItem
	spareKeys [][]sketchKey
	// handed[c] is how many items the compute stage has handed counter
	// c to count (plan, flushWindows) that it has not counted yet.
	handed []atomic.Int64
	// winItems and winInsts are, in the compute stage, the items and
	// instructions each counter's window holds (asynchronous: handed
	// over, perhaps not yet gathered), which decides when it counts.
	winItems, winInsts []int
	// fewPages[c] is, while counter c counts a window, whether it was
	// sorted by page alone (fewer than wordOrderPages pages a counter).
	fewPages []bool
	// itemBlocks[c] are the off-heap blocks that counter c's large item
	// buffers (its windows and its sort's buffer) live in (itemBuf),
	// released with the slabs; blockItems is the size from which a
	// buffer is one (itemBlockItems; less in tests).
	itemBlocks [][]*offheap.Block
	blockItems int
}

// countWindow is the most items a counter gathers before it counts them
// (addrTracker.window; plan sizes it by the pages): 2^19, 4 MiB of items
// and as many for their sort.
// Counting a batch at a time, a page's few dozen items of a batch each
// pulled its own line of the page's 48 KiB slab from memory, on a table
// past the caches; in a window each page of uniform-1Mi's gets about a
// thousand (two counters, 512 pages each), and its slab's lines are
// pulled about once a window.
const countWindow = 1 << 19

// windowPerPage and minWindow size a counter's window by its pages
// (plan): 1024 items a page, at least 2^16 items.
const (
	windowPerPage = 1024
	minWindow     = 1 << 16
)

// maxWindowInsts is the most instructions a window holds before it counts
// (their keys are 8 bytes each, per counter) unless one batch has more;
// with WithBatchInsts' at most 2^20, a counter's window, which may take
// the batches of two (poll), stays below the 2^22 instructions that
// statItem's inst holds.
const maxWindowInsts = countWindow / 8

// hotPages is how many of a replay's first pages (by reference: the order
// they were made in) have their words shared between the counters rather
// than the page going to one: a trace whose accesses fall on a few pages
// (a histogram's bins, reductions) would count on one core otherwise. Each
// counter gives such a page an index and a slab of its own (about 2 KiB,
// and up to a slab chunk's 4 KiB unused), on 64 pages at most: memory that
// does not grow with the addresses.
const hotPages = 64

// asyncCount is the counter goroutines and what goes between them and
// the compute stage.
//
// Two batches may be handed over and not yet gathered: the appliers fill
// one set of lists (the tracker's lists) while the counters gather the
// other's, so that the compute stage goes on with a batch while a
// counter, busy counting, has not yet taken the one before (poll does,
// every yieldItems items).
type asyncCount struct {
	jobs      []chan countJob   // per counter
	scattered []chan struct{}   // per counter: it has gathered a batch's lists, which the appliers may fill again
	listSets  [2][][]statItem   // by batch parity: the tracker's lists
	batchKeys [2][]sketchKey    // by batch parity: a batch's sketch keys
	jobLists  [2][][][]statItem // by batch parity, per counter: its lists of the batch, from every applier
	counted   []chan struct{}   // per counter: it has counted its window, as a job with reply asked
	state     []counterState    // per counter, its goroutine's alone
	parity    int
	inflight  int // batches handed over whose lists a counter may still read: 0 to 2
	closed    bool
	done      sync.WaitGroup
}

// counterState is what a counter goroutine keeps between jobs: the page
// table of the last job it took, and a job poll took while a window was
// counted that asks for a count too (or for its lists to go into a window
// with no room for them), which waits for that count to end.
type counterState struct {
	pages    pageTable
	npages   int
	held     countJob
	holding  bool
	counting bool // countWindow is counting a window: poll may take jobs
	closed   bool // poll found the jobs channel closed
	// again: a job poll took asked for the window it gathered into to
	// be counted, which countWindows does once the count under way ends.
	again bool
}

// countJob is one batch's accesses for one counter: its lists from every
// applier, the batch's sketch keys, and the page table as it was (its
// chunks never move, so the counter may read it while pages are added).
type countJob struct {
	lists [][]statItem
	keys  []sketchKey
	pages pageTable
	// npages is the tracker's npages when the job was sent: the counter
	// reads it there, never the tracker's, which grow writes meanwhile.
	npages int
	// first: count the window before gathering the lists (it has no
	// room for their instructions); count: after. reply: say so on
	// counted once done (flushWindows).
	first, count, reply bool
}

// pageTable is the tracker's pageStats by page reference, in chunks of
// pageChunk that never move once made: a counter goroutine holds a
// pageStats while the compute stage adds pages.
type pageTable []*[pageChunk]pageStats

const (
	pageChunkBits = 8
	pageChunk     = 1 << pageChunkBits
)

// at is page ref's statistics; ref must be below len.
func (pt pageTable) at(ref uint32) *pageStats {
	return &pt[ref>>pageChunkBits][ref&(pageChunk-1)]
}

// len is the number of pages the table has room for.
func (pt pageTable) len() int { return len(pt) << pageChunkBits }

// slabOwner is where one counter's pages keep their slabs: an arena
// outside the Go heap (internal/offheap). A million addresses' entries are
// 50 MiB that live to the end of the replay; in the heap they would raise
// the collector's goal by as much again, and what the replay frees while
// it writes its tables would not be reused until the heap reached it
// (the peakRSS-B of BenchmarkReplay/uniform-1Mi/addresses). held counts
// the bytes its slabs hold: the
// compute stage reads it for WithMaxMemory while a counter adds to it.
type slabOwner struct {
	arena offheap.Arena
	held  atomic.Uint64
	// scratch holds a page's entries while toDense puts them in word
	// order: made at the owner's first dense page.
	scratch *[shard.PageWords]addrEntry
}

// newAddrTracker is a tracker for appliers memory owners. Given counters
// above 1 (and without explore) it counts asynchronously, on that many
// counter goroutines, which finish stops; else each applier counts its
// own pages.
func newAddrTracker(appliers int, explore bool, counters int) *addrTracker {
	t := &addrTracker{explore: explore, split: 1, denseAt: denseEntries, blockItems: itemBlockItems}
	if counters <= 1 || explore {
		counters = appliers
	} else {
		t.split = counters
	}
	if !explore {
		t.window, t.windowInsts = countWindow, maxWindowInsts
	}
	t.win, t.winKeys = make([][]statItem, counters), make([][]sketchKey, counters)
	t.spare, t.spareKeys = make([][]statItem, counters), make([][]sketchKey, counters)
	t.handed = make([]atomic.Int64, counters)
	t.winItems, t.winInsts = make([]int, counters), make([]int, counters)
	t.fewPages = make([]bool, counters)
	t.itemBlocks = make([][]*offheap.Block, counters)
	t.owners = make([]slabOwner, counters)
	t.toDense = make([][]*pageStats, counters)
	t.sorted, t.hist, t.keys = make([][]statItem, counters), make([][]uint32, counters), make([][]sketchKey, counters)
	t.lists = make([][]statItem, appliers*t.split)
	if explore {
		t.extras, t.sortedX = make([][]uint64, appliers), make([][]uint64, counters)
	}
	if t.split > 1 {
		t.hot = make([]*[hotPages]pageStats, counters)
		for c := range t.hot {
			t.hot[c] = new([hotPages]pageStats)
		}
		a := &asyncCount{jobs: make([]chan countJob, counters), scattered: make([]chan struct{}, counters),
			counted: make([]chan struct{}, counters), state: make([]counterState, counters)}
		a.listSets = [2][][]statItem{t.lists, make([][]statItem, len(t.lists))}
		a.jobLists = [2][][][]statItem{make([][][]statItem, counters), make([][][]statItem, counters)}
		t.async = a
		for c := range counters {
			a.jobs[c], a.scattered[c], a.counted[c] = make(chan countJob, 2), make(chan struct{}, 2), make(chan struct{}, 1)
			a.done.Add(1)
			go t.counter(c)
		}
	}
	return t
}

// counterOf is the counter of word (page reference << 10 | word in the
// page): 0 when each applier counts its own, else a hash of its page's
// reference, so that pages made one after another spread, or of the word
// itself on the first hotPages pages.
func (t *addrTracker) counterOf(word uint32) int {
	h := word >> (shard.PageShift - 2)
	if h < hotPages {
		h = word
	}
	return int(uint64(h*0x9e3779b1) * uint64(t.split) >> 32)
}

// inCache reports whether word's page is a hot page (hotPages) of counter
// c while its windows are counted in page order alone (fewer than
// wordOrderPages pages a counter: a histogram's): the page's slab and the
// window's keys are in the cache, and asking for their lines is work for
// nothing (histogram-ptx lean + addresses, 0.28 -> 0.25 s CPU).
func (t *addrTracker) inCache(c int, word uint32) bool {
	return word>>(shard.PageShift-2) < hotPages && t.hot != nil && t.fewPages[c]
}

// stats is counter c's statistics of page ref, in the page table pages.
func (t *addrTracker) stats(pages pageTable, c int, ref uint32) *pageStats {
	if ref < hotPages && t.hot != nil {
		return &t.hot[c][ref]
	}
	return pages.at(ref)
}

// counter is counter c's goroutine: it gathers a batch's accesses to its
// pages into its window, gives their lists back, and counts the window
// when the job says so, and at the end.
func (t *addrTracker) counter(c int) {
	defer t.async.done.Done()
	st := &t.async.state[c]
	for {
		var j countJob
		switch {
		case st.holding:
			j, st.holding = st.held, false
		case st.closed:
			t.countWindows(c)
			return
		default:
			var ok bool
			if j, ok = <-t.async.jobs[c]; !ok {
				t.countWindows(c)
				return
			}
		}
		st.pages, st.npages = j.pages, j.npages
		if j.first {
			t.countWindows(c)
		}
		if j.lists != nil {
			t.gather(c, j.lists, j.keys)
			t.async.scattered[c] <- struct{}{}
		}
		if j.count {
			t.countWindows(c)
		}
		if j.reply {
			t.async.counted[c] <- struct{}{}
		}
	}
}

// countWindows counts counter c's window (countWindow), and counts it
// again while poll, meanwhile, took a job that asked for a count.
func (t *addrTracker) countWindows(c int) {
	st := &t.async.state[c]
	for {
		t.countWindow(c, st.pages, st.npages)
		if !st.again {
			return
		}
		st.again = false
	}
}

// poll takes counter c's next job, if one is there, while the counter
// counts a window (countSorted calls it every yieldItems items): it
// gathers the job's lists into the next window and gives them back, so
// that the compute stage goes on with the next batch rather than wait for
// the count. The first job that asks for a count it notes (again): the
// next window then takes the batches of one more, so that a counter
// whose count takes longer than the other's does not hold the compute
// stage, and the other, back at once. A second one, one that asks for a
// reply, or one whose lists must wait for a count (first: no room for
// their instructions) it holds for the counter's loop, and takes no
// other until then; the compute stage waits (await) once the counter
// holds one and has not taken the two batches after it.
func (t *addrTracker) poll(c int) {
	st := &t.async.state[c]
	for st.counting && !st.holding && !st.closed {
		var j countJob
		select {
		case jj, ok := <-t.async.jobs[c]:
			if !ok {
				st.closed = true
				return
			}
			j = jj
		default:
			return
		}
		st.pages, st.npages = j.pages, j.npages
		if j.first {
			st.held, st.holding = j, true
			return
		}
		if j.lists != nil {
			t.gather(c, j.lists, j.keys)
			t.async.scattered[c] <- struct{}{}
		}
		switch {
		case j.reply || j.count && st.again:
			st.held, st.holding = countJob{pages: j.pages, npages: j.npages, count: j.count, reply: j.reply}, true
		case j.count:
			st.again = true
		}
	}
}

// gather appends lists' items to counter c's window, their instructions'
// keys (keys, the batch's) to its keys, each item's inst made an index
// into them.
func (t *addrTracker) gather(c int, lists [][]statItem, keys []sketchKey) {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if n == 0 {
		return // no instruction's keys needed
	}
	base := uint32(len(t.winKeys[c]) / 2)
	t.winKeys[c] = append(t.winKeys[c], keys...)
	w := t.win[c]
	if len(w)+n > cap(w) {
		// Doubling, but to no more than a window and a quarter unless
		// a batch needs it: a window's buffer is the most it holds. From
		// blockItems on, the buffer is a block with room for two and a
		// half windows (itemBuf), which a window does not outgrow.
		grown := append(t.itemBuf(c, max(min(2*cap(w), t.window+t.window/4), len(w)+n)), w...)
		t.dropItems(c, w)
		w = grown
	}
	for _, l := range lists {
		k := len(w)
		w = w[:k+len(l)]
		out := w[k:]
		for i, it := range l {
			it.meta += base << 10
			out[i] = it
		}
	}
	t.win[c] = w
}

// countWindow counts counter c's window, with pages the page table (of
// npages pages), and empties it: the spare buffers become the window,
// which a counter goroutine fills meanwhile (poll), and the counted
// window's become the spare ones.
func (t *addrTracker) countWindow(c int, pages pageTable, npages int) {
	t.fewPages[c] = npages/len(t.win) < wordOrderPages
	win, keys := t.win[c], t.winKeys[c]
	if len(win) == 0 {
		t.win[c], t.winKeys[c] = win[:0], keys[:0]
		return
	}
	// The window counted, the next is gathered (poll) into the spare
	// buffers meanwhile.
	t.win[c], t.winKeys[c] = t.spare[c][:0], t.spareKeys[c][:0]
	t.spare[c], t.spareKeys[c] = nil, nil
	var st *counterState
	if t.async != nil {
		st = &t.async.state[c]
		st.counting = true
	}
	free := win // the buffer no longer needed once counted
	if !t.fewPages[c] {
		sorted := t.sortWindow(c, win, pages.len())
		free = sorted
		t.countSorted(c, sorted, nil, keys, pages, nil)
	} else {
		sorted, _ := t.sortItems(c, pages.len(), [][]statItem{win}, nil)
		t.countSorted(c, sorted, nil, keys, pages, nil)
	}
	if st != nil {
		st.counting = false
	}
	t.handed[c].Add(-int64(len(win)))
	// Synchronous, nothing was gathered meanwhile: the buffers go back
	// to the window, and no second one is ever made.
	if cap(t.win[c]) == 0 {
		t.win[c], t.winKeys[c] = free[:0], keys[:0]
	} else {
		t.spare[c], t.spareKeys[c] = free[:0], keys[:0]
	}
}

// plan decides, in the compute stage, when counter c counts its window
// around a batch of insts instructions that gives it items: first when
// the window has no room for the instructions, after when it is full.
func (t *addrTracker) plan(c, items, insts int) (first, after bool) {
	if items == 0 {
		return false, false // gather adds nothing
	}
	if t.winInsts[c] > 0 && t.winInsts[c]+insts > t.windowInsts {
		first = true
		t.hand(c)
	}
	t.winItems[c] += items
	t.winInsts[c] += insts
	// About windowPerPage items a page of the counter's, within
	// [minWindow, window]: a few hot pages are in the caches whatever
	// the order of their items, and do not need a large window's memory.
	limit := min(t.window, max(minWindow, t.npages/len(t.win)*windowPerPage))
	if t.winItems[c] >= limit {
		after = true
		t.hand(c)
	}
	return first, after
}

// hand notes that counter c's window is to be counted now: its items
// are handed, not counted yet, until countWindow has.
func (t *addrTracker) hand(c int) {
	t.handed[c].Add(int64(t.winItems[c]))
	t.winItems[c], t.winInsts[c] = 0, 0
}

// pending is how many items the counters hold uncounted in their
// windows, the one gathered and the one counted: statistics the memory
// limit does not see yet.
func (t *addrTracker) pending() int {
	n := 0
	for c, k := range t.winItems {
		n += k + int(t.handed[c].Load())
	}
	return n
}

// flushWindows counts every counter's window now, and waits until they
// have: the memory limit then sees all the statistics. It runs in the
// compute stage, between batches.
func (t *addrTracker) flushWindows() {
	if a := t.async; a != nil {
		if a.closed {
			return
		}
		for c, ch := range a.jobs {
			t.hand(c)
			ch <- countJob{pages: t.pages, npages: t.npages, count: true, reply: true}
		}
		for _, ch := range a.counted {
			<-ch
		}
		return
	}
	for c := range t.win {
		t.hand(c)
		t.countWindow(c, t.pages, t.npages)
	}
}

// await waits, when two batches are handed over, until every counter has
// gathered the first of them, whose lists the appliers fill next. It runs
// in the compute stage, before the appliers.
func (t *addrTracker) await() {
	a := t.async
	if a == nil || a.inflight < 2 {
		return
	}
	for _, ch := range a.scattered {
		<-ch
	}
	for i := range t.lists {
		t.lists[i] = t.lists[i][:0]
	}
	a.inflight--
}

// submit hands batch b's collected accesses to the counters, with its
// sketch keys. It runs in the compute stage, after the appliers.
func (t *addrTracker) submit(b *batch) {
	a := t.async
	p := a.parity
	keys := batchKeys(a.batchKeys[p], b)
	a.batchKeys[p] = keys
	for c, ch := range a.jobs {
		// The counters are done with the lists of this parity's batch
		// before (await).
		lists := a.jobLists[p][c][:0]
		for i := c; i < len(t.lists); i += t.split {
			lists = append(lists, t.lists[i])
		}
		a.jobLists[p][c] = lists
		items := 0
		for _, l := range lists {
			items += len(l)
		}
		first, after := t.plan(c, items, len(b.insts))
		ch <- countJob{lists: lists, keys: keys, pages: t.pages, npages: t.npages, first: first, count: after}
	}
	a.inflight++
	a.parity ^= 1
	t.lists = a.listSets[a.parity]
}

// finish waits for the counters to count everything handed to them, and
// stops them; synchronous, it counts the windows. It is safe to call more
// than once.
func (t *addrTracker) finish() {
	a := t.async
	if a == nil {
		for c := range t.win {
			t.countWindow(c, t.pages, t.npages)
		}
		return
	}
	if a.closed {
		return
	}
	a.closed = true
	for _, ch := range a.jobs {
		close(ch)
	}
	a.done.Wait()
}

// batchKeys returns, in keys' storage, the sketch keys of each of b's
// instructions: its (group, warp)'s and its group's.
func batchKeys(keys []sketchKey, b *batch) []sketchKey {
	keys = grow(keys, 2*len(b.insts))
	for i := range b.insts {
		bi := &b.insts[i]
		keys[2*i] = newSketchKey(mix64(uint64(bi.Group)*0x9e3779b97f4a7c15 ^ uint64(bi.Warp)))
		keys[2*i+1] = newSketchKey(mix64(uint64(bi.Group)))
	}
	return keys
}

// grow makes room for pages below n. It must not run while appliers
// collect.
func (t *addrTracker) grow(n int) {
	t.npages = max(t.npages, n)
	for t.pages.len() < n {
		t.pages = append(t.pages, new([pageChunk]pageStats))
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
// collected while a batch applies and counted after, page by page: 8
// bytes, as it is written, read, sorted and read again once per access.
// What only the order analysis reads (the lane's slot) is beside it, in
// the tracker's extras, with WithExplore alone.
type statItem struct {
	word uint32 // page reference << 10 | word in the page
	// meta is the instruction in the batch (below 1<<20, WithBatchInsts)
	// << 10 | the byte within the word << 8 | lanes (1, or a uniform
	// warp's, at most trace.MaxLanes).
	meta uint32
}

func newStatItem(word, inst, n uint32, sub uint8) statItem {
	return statItem{word: word, meta: inst<<10 | uint32(sub&3)<<8 | n&0xff}
}

func (it statItem) inst() uint32 { return it.meta >> 10 }
func (it statItem) sub() uint8   { return uint8(it.meta>>8) & 3 }
func (it statItem) n() uint32    { return it.meta & 0xff }

// collect appends the accesses of one applied route to applier a's
// lists, each to its page's counter's. It does no more than copy records:
// the counting, which touches each address's slab entry, happens in count
// or on the counter, in page order.
func (t *addrTracker) collect(a int, b *batch, rt *route) {
	lists := t.lists[a*t.split : (a+1)*t.split]
	put := func(it statItem, slot uint32, vals bool) { t.put(a, lists, it, slot, vals) }
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
		case s.pre:
			// A prefix-summed run (prefix.go): its records are sums a
			// word, its lanes the result rows of slots [the first
			// instruction's slot, preEnd), an instruction's after
			// another's, all aligned words of the records' page.
			t.collectPrefix(a, b, s, recs[0].word&^(shard.PageWords-1))
		case s.n > 0 && s.step == 0:
			x := recs[0]
			put(newStatItem(x.word, s.inst, s.n, uint8(x.slot>>slotBits)), x.slot&slotMask, false)
		case s.n > 0:
			x := recs[0]
			for l := uint32(0); l < s.n; l++ {
				put(newStatItem(x.word+uint32(int32(l)*s.step), s.inst, 1, 0), x.slot&slotMask+l, false)
			}
		case s.vals:
			for _, x := range recs {
				put(newStatItem(x.word, s.inst, 1, 0), x.slot, true)
			}
		case s.counts:
			// The lanes on each word (the instruction's one value), as
			// a run of them on one word.
			slot := b.insts[s.inst].slot
			for _, x := range recs {
				put(newStatItem(x.word, s.inst, x.slot&slotMask, uint8(x.slot>>slotBits)), slot, false)
			}
		default:
			for _, x := range recs {
				put(newStatItem(x.word, s.inst, 1, uint8(x.slot>>slotBits)), x.slot&slotMask, false)
			}
		}
	}
}

// put appends item it to its counter's list of lists (applier a's), and
// with WithExplore its slot (its first source, or with vals its lane's
// value itself) to a's extras.
func (t *addrTracker) put(a int, lists [][]statItem, it statItem, slot uint32, vals bool) {
	c := t.counterOf(it.word)
	lists[c] = append(lists[c], it)
	if t.explore {
		x := uint64(slot) << 1
		if vals {
			x |= 1
		}
		t.extras[a] = append(t.extras[a], x)
	}
}

// collectPrefix appends to applier a's lists the lanes of a prefix
// segment s (seg.pre) on the page whose first word reference is page: one
// item a lane, of the instruction whose slots hold it (the run's
// instructions follow one another, a warp's slots each), its word from
// its address in the result rows.
func (t *addrTracker) collectPrefix(a int, b *batch, s seg, page uint32) {
	lists := t.lists[a*t.split : (a+1)*t.split]
	n := uint32(len(b.insts))
	for ii := s.inst; ii < n && b.insts[ii].slot < s.preEnd; ii++ {
		lo, hi := b.insts[ii].slot, s.preEnd
		if ii+1 < n {
			hi = min(hi, b.insts[ii+1].slot)
		}
		addrs := b.resAddr[lo:hi:hi]
		meta := newStatItem(0, ii, 1, 0).meta
		if t.split == 1 && !t.explore {
			l := lists[0]
			k := len(l)
			l = slices.Grow(l, len(addrs))[:k+len(addrs)]
			out := l[k:]
			for j, x := range addrs {
				out[j] = statItem{word: page | uint32(x>>2)&(shard.PageWords-1), meta: meta}
			}
			lists[0] = l
			continue
		}
		for j, x := range addrs {
			t.put(a, lists, statItem{word: page | uint32(x>>2)&(shard.PageWords-1), meta: meta}, lo+uint32(j), false)
		}
	}
}

// count adds applier o's collected items to their addresses' entries and
// empties its list, when each applier counts its own pages (synchronous):
// it gathers them into o's window, and counts that when full (plan), or
// with WithExplore, at once. The batch b must still hold the items'
// instructions and sources.
func (t *addrTracker) count(o int, b *batch) {
	if len(t.lists[o]) == 0 {
		return
	}
	t.keys[o] = batchKeys(t.keys[o], b)
	if t.window > 0 {
		first, after := t.plan(o, len(t.lists[o]), len(b.insts))
		if first {
			t.countWindow(o, t.pages, t.npages)
		}
		t.gather(o, t.lists[o:o+1], t.keys[o])
		t.lists[o] = t.lists[o][:0]
		if after {
			t.countWindow(o, t.pages, t.npages)
		}
		return
	}
	var extras []uint64
	if t.explore {
		extras = t.extras[o]
	}
	sorted, sortedX := t.sortItems(o, t.pages.len(), t.lists[o:o+1], extras)
	t.lists[o] = t.lists[o][:0]
	if t.explore {
		t.extras[o] = t.extras[o][:0]
	}
	t.countSorted(o, sorted, sortedX, t.keys[o], t.pages, b)
}

// sortItems puts counter c's items, from lists, in page order (a counting
// sort by page reference, stable) in its sorted buffer, for pages below
// pages, and returns them: so that each page's index and slab stay in
// cache while its accesses are counted, instead of one cache miss into the
// whole table per access. Counts, sketches and the order analysis do not
// depend on the order in which accesses are counted. Given extras (with
// WithExplore, in step with lists' one list) it puts them in the same
// order, and returns them too. One list whose items all fall in one
// bucket it returns as it is, with its extras: a histogram's window, on
// one page, 0.31 -> 0.29 s CPU (histogram-ptx lean + addresses).
func (t *addrTracker) sortItems(c int, pages int, lists [][]statItem, extras []uint64) ([]statItem, []uint64) {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	// Bucket by page reference, at most 1<<12 buckets.
	shift := uint(0)
	for uint32(pages)>>shift > 1<<12 {
		shift++
	}
	hist := t.hist[c][:0]
	hist = append(hist, make([]uint32, uint32(pages)>>shift+2)...)
	for _, items := range lists {
		for i := range items {
			hist[items[i].word>>(shard.PageShift-2)>>shift+1]++
		}
	}
	if len(lists) == 1 && n > 0 && hist[lists[0][0].word>>(shard.PageShift-2)>>shift+1] == uint32(n) {
		// One bucket (a histogram's one page): the stable sort is the
		// order the items are in, and they are not copied.
		t.hist[c] = hist[:0]
		return lists[0], extras
	}
	for i := 1; i < len(hist); i++ {
		hist[i] += hist[i-1]
	}
	sorted := t.sorted[c]
	if cap(sorted) < n {
		t.dropItems(c, sorted)
		sorted = t.itemBuf(c, n+n/4)
	}
	sorted = sorted[:n]
	if extras != nil {
		sortedX := grow(t.sortedX[c], n)
		items := lists[0]
		for i := range items {
			bkt := items[i].word >> (shard.PageShift - 2) >> shift
			sorted[hist[bkt]], sortedX[hist[bkt]] = items[i], extras[i]
			hist[bkt]++
		}
		t.sorted[c], t.hist[c], t.sortedX[c] = sorted[:0], hist[:0], sortedX[:0]
		return sorted, sortedX
	}
	for _, items := range lists {
		for i := range items {
			bkt := items[i].word >> (shard.PageShift - 2) >> shift
			sorted[hist[bkt]] = items[i]
			hist[bkt]++
		}
	}
	t.sorted[c], t.hist[c] = sorted[:0], hist[:0]
	return sorted, nil
}

// wordOrderPages is how many pages a counter has, at least, for its
// windows to be sorted by word within a page too (sortWindow): 3 MiB of
// slabs and more, past what stays in the cache, where meeting a page's
// entries in slab order saves lines (uniform-1Mi lean + addresses, CPU
// 0.83 -> 0.74 s). A histogram's few pages are in cache, and there word
// order puts an address's accesses one after another, each waiting on
// the entry the one before wrote (0.31 -> 0.38 s).
const wordOrderPages = 64

// sortWindow puts counter c's window win in page order and, within a
// page, in word order (two counting sorts, by word in the page, then
// stably by page, through the sort's buffer and back), for pages below
// pages, and returns it: a page's entries are then met in slab order once
// the page is dense, each line's items one after another. The sorted
// items are in win's storage or the sort's buffer; the other is the sort's
// buffer after.
func (t *addrTracker) sortWindow(c int, win []statItem, pages int) []statItem {
	n := len(win)
	hist := t.hist[c][:0]
	hist = append(hist, make([]uint32, shard.PageWords+1)...)
	for i := range win {
		hist[win[i].word&(shard.PageWords-1)+1]++
	}
	for i := 1; i < len(hist); i++ {
		hist[i] += hist[i-1]
	}
	tmp := t.sorted[c]
	if cap(tmp) < n {
		t.dropItems(c, tmp)
		tmp = t.itemBuf(c, n+n/4)
	}
	tmp = tmp[:n]
	for i := range win {
		w := win[i].word & (shard.PageWords - 1)
		tmp[hist[w]] = win[i]
		hist[w]++
	}
	t.hist[c] = hist[:0]
	// Then stably by page: sortItems into its buffer, which is win's
	// (or tmp itself, one bucket's).
	t.sorted[c] = win[:0]
	sorted, _ := t.sortItems(c, pages, [][]statItem{tmp}, nil)
	if unsafe.SliceData(sorted) != unsafe.SliceData(tmp) {
		t.sorted[c] = tmp[:0]
	}
	return sorted
}

// countSorted adds counter c's sorted items to their addresses' entries,
// in pages, with keys the sketch keys of the items' instructions; b and
// extras (the items' slots), for the order analysis (WithExplore) alone,
// hold their sources.
//
// It goes a run at a time: consecutive items of one page, at most
// countRun, whose page is looked up once. Three runs are in flight: the
// index words of run j+2 are asked for, run j+1's entries are found (their
// index words arrived) and asked for, and run j's entries (arrived) are
// updated. The misses of a run overlap one another and the work on the
// two before it (prefetch).
func (t *addrTracker) countSorted(c int, sorted []statItem, extras []uint64, keys []sketchKey, pages pageTable, b *batch) {
	if len(sorted) == 0 {
		return
	}
	so := &t.owners[c]
	var found [2]foundRun
	var ptrs [countRun]unsafe.Pointer
	cut := func(lo int) int {
		if lo >= len(sorted) {
			return lo
		}
		ref := sorted[lo].word >> (shard.PageShift - 2)
		hi := lo + 1
		for end := min(lo+countRun, len(sorted)); hi < end && sorted[hi].word>>(shard.PageShift-2) == ref; hi++ {
		}
		return hi
	}
	lo0 := 0
	lo1 := cut(lo0)
	lo2 := cut(lo1)
	t.prefetchIndexes(pages, c, sorted[lo0:lo1], keys, &ptrs)
	t.prefetchIndexes(pages, c, sorted[lo1:lo2], keys, &ptrs)
	t.find(pages, c, sorted[lo0:lo1], sorted[lo0:], so, &found[0], &ptrs)
	since := 0
	for j := 0; lo0 < len(sorted); j++ {
		lo3 := cut(lo2)
		t.prefetchIndexes(pages, c, sorted[lo2:lo3], keys, &ptrs)
		t.find(pages, c, sorted[lo1:lo2], sorted[lo1:], so, &found[(j+1)&1], &ptrs)
		var ext []uint64
		if extras != nil {
			ext = extras[lo0:lo1]
		}
		t.update(sorted[lo0:lo1], ext, &found[j&1], keys, b)
		since += lo1 - lo0
		if t.async != nil && since >= yieldItems {
			t.poll(c)
			runtime.Gosched()
			since = 0
		}
		lo0, lo1, lo2 = lo1, lo2, lo3
	}
	for _, ps := range t.toDense[c] {
		ps.toDense(so)
	}
	t.toDense[c] = t.toDense[c][:0]
}

// yieldItems is how many items a counter goroutine counts before it takes
// the jobs handed to it meanwhile (poll) and lets another goroutine run.
// Two counters keep both cores busy; without yielding, the compute stage,
// the reader and the expanders waited for a counter to finish its batch,
// and the counters then waited for the next batch, the cores not both
// busy.
const yieldItems = 4096

// countRun is the most items of one page count handles at a step, and so
// how far ahead it asks for lines.
const countRun = 32

// foundRun is a run's items' entries, found: their page, slab indices and
// pointers. The pointer saves a second lookup through the slab's chunk
// list (entry), whose nil check loads the chunk's first line.
type foundRun struct {
	ps  *pageStats
	idx [countRun]int32
	eps [countRun]*addrEntry
}

// prefetchIndexes asks for the index words of counter c's items in part,
// all of one page (the page's header when it has no index yet).
func (t *addrTracker) prefetchIndexes(pages pageTable, c int, part []statItem, keys []sketchKey, ptrs *[countRun]unsafe.Pointer) {
	if len(part) == 0 || t.inCache(c, part[0].word) {
		return
	}
	// The items' sketch keys too: a window's are 8 bytes an instruction
	// (512 KiB for 2^16 of them), met at random once sorted by page, and
	// update waited on each (uniform-1Mi, lean + addresses: 18% of the
	// samples on the keys' load; prefetched, 0.65 -> 0.62 s CPU).
	for k := range part {
		ptrs[k] = unsafe.Pointer(&keys[2*part[k].inst()])
	}
	prefetch(ptrs[:len(part)], 0)
	ps := t.stats(pages, c, part[0].word>>(shard.PageShift-2))
	if ps.dense {
		return // find reaches the entries without the index
	}
	if ps.index == nil {
		ptrs[0] = unsafe.Pointer(ps)
		prefetch(ptrs[:1], 0)
		return
	}
	index := (*[shard.PageWords]uint16)(ps.index)
	fresh := 0 // items that may add an entry
	for k := range part {
		w := part[k].word & (shard.PageWords - 1)
		ptrs[k] = unsafe.Pointer(&index[w])
		if part[k].sub() != 0 || ps.aligned[w>>6]&(1<<(w&63)) == 0 {
			fresh++
		}
	}
	prefetch(ptrs[:len(part)], 0)
	// New entries go at the slab's end, lines written before they are
	// read: ask for them too, as far as the end's chunk goes (the runs
	// before this one, of the same page, may add entries first).
	if i := ps.n % slabChunk; fresh > 0 && i != 0 {
		n := min(fresh+4, slabChunk-i)
		prefetchRange(unsafe.Pointer(ps.entry(ps.n)), uintptr(n)*unsafe.Sizeof(addrEntry{}))
	}
}

// find finds (or adds, in so's arena) the entries of part's items, all of
// one page, into f, and asks for their lines: an entry may straddle two.
// rest is the sorted items from part on: at a page's first items, those of
// the page that follow decide whether it is made dense at once (newDense).
func (t *addrTracker) find(pages pageTable, c int, part, rest []statItem, so *slabOwner, f *foundRun, ptrs *[countRun]unsafe.Pointer) {
	if len(part) == 0 {
		return
	}
	ps := t.stats(pages, c, part[0].word>>(shard.PageShift-2))
	f.ps = ps
	if ps.index == nil && !ps.dense && t.denseAt > 0 && !t.explore {
		ps.newDense(rest, min(t.denseAt, newDenseWords), so)
	}
	for k := range part {
		it := &part[k]
		w := it.word & (shard.PageWords - 1)
		var i int
		switch sub := it.sub(); {
		case sub == 0 && ps.dense:
			i = int(w)
		case sub == 0 && !ps.dense && ps.aligned[w>>6]&(1<<(w&63)) != 0:
			i = int(ps.index[w]) - 1
		default:
			i = ps.findIndex(w, sub, t.explore, so)
			if ps.n == t.denseAt && !ps.dense && !t.explore {
				t.toDense[c] = append(t.toDense[c], ps)
			}
		}
		e := ps.entry(i)
		f.idx[k], f.eps[k] = int32(i), e
		ptrs[k] = unsafe.Pointer(e)
	}
	if !t.inCache(c, part[0].word) {
		prefetch(ptrs[:len(part)], unsafe.Sizeof(addrEntry{})-1)
	}
}

// update counts part's items into their entries, found in f; ext holds
// their extras with WithExplore.
func (t *addrTracker) update(part []statItem, ext []uint64, f *foundRun, keys []sketchKey, b *batch) {
	ps := f.ps
	for k := range part {
		it := &part[k]
		inst := it.inst()
		wk, gk := keys[2*inst], keys[2*inst+1]
		e, i := f.eps[k], int(f.idx[k])
		if e.wn == 0 { // every access adds a warp: the address's first
			ps.addrs++
		}
		first := t.explore && ps.accesses(e, i) == 0
		ps.addAccesses(e, i, it.n())
		// A warp the address has seen already is of a group it has
		// counted: only a new warp can bring a new group.
		if e.addWarp(wk) {
			e.addGroup(gk)
		}
		if t.explore {
			t.analyse(ps.exploreAt(i), b, &b.insts[inst], it.n(), uint32(ext[k]>>1), ext[k]&1 != 0, first)
		}
	}
}

// analyse updates an address's order analysis with an item's n accesses,
// at slot (its first source, when vals). first says that these are the
// address's first accesses.
func (t *addrTracker) analyse(ex *exploreEntry, b *batch, bi *binst, n, slot uint32, vals, first bool) {
	p := b.plans[bi.pi]
	fam := familyOf(p.kind)
	// Operands compare at the access's width: a 16-bit atomic uses only
	// the low half of its 32-bit source (vISA DWORD_ATOMIC, Description:
	// "only the lower 16bit part of each dword is used").
	width := ^uint64(0)
	if p.size < 8 {
		width = 1<<(8*uint(p.size)) - 1
	}
	for l := uint32(0); l < n; l++ {
		bv, cv := b.src(bi, slot+l, vals, slot)
		bv, cv = bv&width, cv&width
		var bh, ch uint64
		if p.size == 16 {
			bh, ch = b.opBhi[slot+l], b.opChi[slot+l]
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

// chain walks a word's chain of entries, in address order, from entry i
// (-1: none) for the entry of byte sub: found is its index, or -1 with
// prev the last entry before the place it goes (the prev given when that
// is the chain's head).
func (ps *pageStats) chain(i, prev int, sub uint8) (found, last int) {
	for ; i >= 0; i = ps.entry(i).next() {
		e := ps.entry(i)
		if e.sub() == sub {
			return i, prev
		}
		if e.sub() > sub {
			break
		}
		prev = i
	}
	return -1, prev
}

// findIndex returns the slab index of the entry of the address at byte
// sub of word w, adding it, in so's arena.
func (ps *pageStats) findIndex(w uint32, sub uint8, explore bool, so *slabOwner) int {
	// Fresh memory is written before it is read. A first read maps the
	// kernel's shared zero page, and the first write after it faults
	// again, to replace it, flushing the TLB of every core the process
	// runs on: measured, each new index and slab chunk took both faults,
	// with an inter-processor interrupt per chunk, a visible share of the
	// CPU of an addresses replay of uniform-1Mi. A new index holds no chain to
	// walk, and a new chunk's first entry is written through the arena's
	// pointer, which needs no nil check (a load): the arena's memory is
	// fresh and zero.
	prev := -1
	var head uint16 // ps.index[w]
	if ps.dense {
		// Entry w heads the word's chain (sub 0 is found without
		// findIndex); a sub-word entry goes after it, in address order.
		found, last := ps.chain(ps.entry(int(w)).next(), int(w), sub)
		if found >= 0 {
			return found
		}
		prev = last
	} else if ps.index == nil {
		ps.index = unsafe.Slice((*uint16)(so.arena.Alloc(2*shard.PageWords)), shard.PageWords)
		so.held.Add(2 * shard.PageWords)
	} else {
		head = ps.index[w]
		found, last := ps.chain(int(head)-1, -1, sub)
		if found >= 0 {
			return found
		}
		prev = last
	}
	i := ps.n
	ps.n++
	var e *addrEntry
	if i%slabChunk == 0 {
		p := so.arena.Alloc(int(slabChunkBytes))
		ps.entries = append(ps.entries, (*[slabChunk]addrEntry)(p))
		so.held.Add(uint64(slabChunkBytes) + 8)
		// Not &c[0]: the compiler checks a converted pointer for nil by
		// a load from it, which is the read before the write.
		e = (*addrEntry)(p)
		if explore {
			x := (*[slabChunk]exploreEntry)(so.arena.Alloc(int(unsafe.Sizeof([slabChunk]exploreEntry{}))))
			x[0].same = true // written first too; analyse sets the entry whole at its first access
			ps.explore = append(ps.explore, x)
			so.held.Add(uint64(unsafe.Sizeof(*x)) + 8)
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

// newDenseWords is how many distinct aligned words (and no other
// address) a page's first count must bring for the page to be made dense
// at once (newDense): half of them. Its 48 KiB are then at most 96 bytes
// an address, for a page that never gets more; a sparse page of as many
// takes 52. Uniform-1Mi's first window brings each page about 650 (1024
// items a page, at random), and its pages fill up later: at denseEntries,
// none was made dense at once.
const newDenseWords = shard.PageWords / 2

// newDense makes a page that has no entry yet dense at once when its
// first items, those at the start of items of its page, are of at least
// at distinct aligned words and no other address. Its entries are then
// found by word, without the index (which it never gets), and neither
// added one by one (findIndex) nor copied (toDense): uniform-1Mi lean +
// addresses, 0.66 -> 0.65 s CPU (min of 12, alternating). Items
// of the page past one of another page (two pages share a sort bucket
// past 4096 pages) are not looked at.
func (ps *pageStats) newDense(items []statItem, at int, so *slabOwner) {
	ref := items[0].word >> (shard.PageShift - 2)
	var seen [shard.PageWords / 64]uint64
	for k := range items {
		it := items[k]
		if it.word>>(shard.PageShift-2) != ref {
			break
		}
		if it.sub() != 0 {
			return
		}
		w := it.word & (shard.PageWords - 1)
		seen[w>>6] |= 1 << (w & 63)
	}
	n := 0
	for _, b := range seen {
		n += bits.OnesCount64(b)
	}
	if n < at {
		return
	}
	for len(ps.entries)*slabChunk < shard.PageWords {
		// Written before read, through the arena's pointer (no nil
		// check's load): one fault a memory page, not two (findIndex).
		// The arena's memory is zero already: a chunk's first and last
		// bytes are written, not the whole chunk (a chunk is less than a
		// memory page, so every page it spans holds one of them).
		p := so.arena.Alloc(int(slabChunkBytes))
		*(*byte)(p) = 0
		*(*byte)(unsafe.Add(p, slabChunkBytes-1)) = 0
		ps.entries = append(ps.entries, (*[slabChunk]addrEntry)(p))
		so.held.Add(uint64(slabChunkBytes) + 8)
	}
	ps.n = shard.PageWords
	ps.dense = true
}

// toDense turns the page dense, if every entry it holds is of an aligned
// word (no chain): its slab, in chunks enough for PageWords entries (at
// denseEntries, the ones it has), is rewritten in word order through so's
// scratch, and the carries of its counts move with their entries. It does
// nothing to a dense page or to one with sub-word addresses, which stays
// sparse.
func (ps *pageStats) toDense(so *slabOwner) {
	if ps.dense {
		return
	}
	for _, h := range ps.index {
		if h != 0 && ps.entry(int(h)-1).link != 0 {
			return
		}
	}
	for len(ps.entries)*slabChunk < shard.PageWords { // a page turned early (withDenseAt)
		ps.entries = append(ps.entries, (*[slabChunk]addrEntry)(so.arena.Alloc(int(slabChunkBytes))))
		so.held.Add(uint64(slabChunkBytes) + 8)
	}
	if so.scratch == nil {
		so.scratch = (*[shard.PageWords]addrEntry)(so.arena.Alloc(int(unsafe.Sizeof(*so.scratch))))
		so.held.Add(uint64(unsafe.Sizeof(*so.scratch)))
	}
	sc := so.scratch
	for i := range ps.n {
		sc[i] = *ps.entry(i)
	}
	for _, c := range ps.entries {
		clear(c[:])
	}
	var high map[uint16]uint64
	for w, h := range ps.index {
		if h == 0 {
			continue
		}
		*ps.entry(w) = sc[h-1]
		if c, ok := ps.high[h-1]; ok {
			if high == nil {
				high = make(map[uint16]uint64)
			}
			high[uint16(w)] = c
		}
	}
	ps.high = high
	ps.n = shard.PageWords
	ps.dense = true
}

// bytes is the memory the tracker holds, as the owners counted it: the
// slabs' chunks and indexes, and the pages' headers.
func (t *addrTracker) bytes() uint64 {
	n := uint64(t.pages.len()+len(t.hot)*hotPages) * uint64(unsafe.Sizeof(pageStats{}))
	for i := range t.owners {
		n += t.owners[i].held.Load()
	}
	return n
}

// release returns the slabs' memory to the system and forgets the pages:
// nothing may use the tracker after. run calls it once the table is
// emitted, or on an error, when no owner applies any more.
func (t *addrTracker) release() {
	t.finish()
	t.pages, t.hot = nil, nil
	for i := range t.owners {
		_ = t.owners[i].arena.Release() // an unmap that fails leaves the memory to the process, not wrong results
		t.owners[i].held.Store(0)
	}
	for c, blocks := range t.itemBlocks {
		for _, k := range blocks {
			_ = k.Release()
		}
		t.itemBlocks[c] = nil
	}
	for c := range t.win {
		t.win[c], t.spare[c], t.sorted[c] = nil, nil, nil // their blocks are unmapped
	}
}

// itemBlockItems is the size, in items, from which a counter's item
// buffers (its windows, its sort's buffer) live in off-heap blocks rather
// than the Go heap (itemBuf): 128 Ki items, 1 MiB.
const itemBlockItems = 1 << 17

// itemBuf returns an empty buffer of counter c's with room for n items.
// Below blockItems it is an ordinary make; from there it is an
// off-heap block (huge pages where the system grants them) with room for
// n, or for the most a window holds, whichever is more: two and a half
// windows, as a window that takes the batches of one more (poll) may
// reach. In the Go heap the windows of uniform-1Mi grew, by copying into
// fresh memory, to about 80 MB a replay, faulted in 4 KiB at a time (7 to
// 11 thousand faults, 10 us each on this project's VMs), and raised the
// collector's goal: lean + addresses, 412 -> 319 ms median, 714 -> 577 ms
// CPU. The buffer it replaces goes back with dropItems.
func (t *addrTracker) itemBuf(c, n int) []statItem {
	if n < t.blockItems {
		return make([]statItem, 0, n)
	}
	k := offheap.NewBlock(max(n, t.window*5/2) * int(unsafe.Sizeof(statItem{})))
	t.itemBlocks[c] = append(t.itemBlocks[c], k)
	return offheap.SliceOf[statItem](k)
}

// dropItems releases the block of counter c's that buffer old is, if it
// is one: nothing may use old after.
func (t *addrTracker) dropItems(c int, old []statItem) {
	if cap(old) < t.blockItems {
		return
	}
	blocks := t.itemBlocks[c]
	for i, k := range blocks {
		if unsafe.Pointer(unsafe.SliceData(k.Bytes())) == unsafe.Pointer(unsafe.SliceData(old[:1])) {
			_ = k.Release() // an unmap that fails leaves the memory to the process
			t.itemBlocks[c] = append(blocks[:i], blocks[i+1:]...)
			return
		}
	}
}

// emit hands the table to sink in (space, group, addr) order, pages
// given in that order, in chunks of about emitChunk rows. The rows of a
// chunk's pages are built on their own goroutine, one per owner (the
// sketches' counts are most of the cost: a million addresses, two each),
// a wave of chunks at a time, and handed over in order: a wave is built
// while the one before it is handed over, into a second set of buffers.
func (t *addrTracker) emit(sink Sink, pages []shard.PageRef, keys []memKey) error {
	t.finish()
	spans, most := t.emitSpans(pages)
	if len(spans) == 0 {
		return nil
	}
	wave := max(len(t.owners), 1)
	var bufs [2][][]AddressStat
	for p := range bufs {
		bufs[p] = make([][]AddressStat, min(wave, len(spans)))
		for k := range bufs[p] {
			// As large as the largest span needs: a small table (a short
			// trace) does not pay for emitChunk rows it never fills.
			bufs[p][k] = make([]AddressStat, 0, most)
		}
	}
	warps, groups := newSketchCounter(warpRegs), newSketchCounter(groupRegs)
	var built [2]sync.WaitGroup
	// build starts the wave of spans from s into buffers p, and returns
	// its number of spans.
	build := func(p, s int) int {
		n := min(wave, len(spans)-s)
		for k := range n {
			built[p].Go(func() {
				bufs[p][k] = t.rows(bufs[p][k][:0], spans[s+k], keys, warps, groups)
			})
		}
		return n
	}
	n := build(0, 0)
	for s, p := 0, 0; s < len(spans); s, p = s+wave, p^1 {
		built[p].Wait()
		next := 0
		if s+wave < len(spans) {
			next = build(p^1, s+wave)
		}
		for _, rows := range bufs[p][:n] {
			if len(rows) == 0 {
				continue
			}
			if err := sink.Addresses(rows); err != nil {
				built[p^1].Wait() // release must not unmap what a builder reads
				return err
			}
		}
		n = next
	}
	return nil
}

// emitChunk is the most rows one call of Sink.Addresses gets (a
// page alone may give more: at most PageBytes addresses). Each owner's
// goroutine fills a buffer of that many, one of two (the wave built and
// the wave handed over): 224 KiB each, the 448 KiB an owner had when it
// filled one buffer of twice as many rows, so the two do not raise the
// replay's peak.
const emitChunk = 1 << 12

// emitSpans cuts pages (the tracked ones) into runs of at most emitChunk
// addresses, or one page, and returns them with the most rows one of
// them holds.
func (t *addrTracker) emitSpans(pages []shard.PageRef) (spans [][]shard.PageRef, most int) {
	from, rows := 0, 0
	for i, pr := range pages {
		n := 0
		t.eachStats(pr.Ref, func(ps *pageStats) { n += ps.addrs })
		if rows > 0 && rows+n > emitChunk {
			spans = append(spans, pages[from:i])
			most = max(most, rows)
			from, rows = i, 0
		}
		rows += n
	}
	if from < len(pages) {
		spans = append(spans, pages[from:])
		most = max(most, rows)
	}
	return spans, most
}

// prefetchSlab asks for the slab of page pr, if tracked, chunk by chunk in
// address order (the hardware's prefetcher follows): rows visits the
// entries in address order, which in the slab is the order of their first
// accesses, at random, and would take a miss to memory for each.
func (t *addrTracker) prefetchSlab(pr shard.PageRef) {
	t.eachStats(pr.Ref, func(ps *pageStats) {
		for c, chunk := range ps.entries {
			n := min(ps.n-c*slabChunk, slabChunk)
			prefetchRange(unsafe.Pointer(chunk), uintptr(n)*unsafe.Sizeof(addrEntry{}))
		}
	})
}

// eachStats calls f with every statistics of page ref: its pageStats, or
// each counter's of a hot page; none for a page past the table. It runs
// after the counters finish.
func (t *addrTracker) eachStats(ref uint32, f func(*pageStats)) {
	switch {
	case ref < hotPages && t.hot != nil:
		for c := range t.hot {
			f(&t.hot[c][ref])
		}
	case int(ref) < t.pages.len():
		f(t.pages.at(ref))
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
		k := keys[pr.Mem]
		if pr.Ref < hotPages && t.hot != nil {
			// Each word's entries are in its counter's pageStats.
			for w := range uint32(shard.PageWords) {
				ps := &t.hot[t.counterOf(pr.Ref<<(shard.PageShift-2)|w)][pr.Ref]
				out = t.wordRows(out, ps, w, pr, k, warps, groups)
			}
			continue
		}
		if int(pr.Ref) >= t.pages.len() {
			continue
		}
		ps := t.pages.at(pr.Ref)
		words := uint32(len(ps.index))
		if ps.dense {
			words = shard.PageWords // made dense at once (newDense), it has no index
		}
		for w := range words {
			out = t.wordRows(out, ps, w, pr, k, warps, groups)
		}
	}
	return out
}

// wordRows appends the rows of word w of page pr (space and group k) in
// ps: its entries, in address order.
func (t *addrTracker) wordRows(out []AddressStat, ps *pageStats, w uint32, pr shard.PageRef, k memKey, warps, groups *sketchCounter) []AddressStat {
	var i int
	switch {
	case ps.dense:
		// Entry w heads the chain; it is an address only once accessed.
		i = int(w)
		if ps.entry(i).wn == 0 {
			i = ps.entry(i).next()
		}
	case ps.index == nil:
		return out
	default:
		i = int(ps.index[w]) - 1
	}
	for ; i >= 0; i = ps.entry(i).next() {
		e := ps.entry(i)
		accesses := ps.accesses(e, i)
		wc, we := warps.count(e.wn, e.warps[:])
		gc, ge := groups.count(e.gn, e.groups[:])
		// An estimate past what can be: no more warps than accesses, no
		// more groups than warps.
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
	return out
}
