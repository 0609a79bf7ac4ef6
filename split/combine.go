package split

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/internal/offheap"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// The combiner (Options.Combine): a split for replays that write no
// per-lane table folds, within its slice, the consecutive accesses to a
// word by one operation that composes (engine.FoldOp) into one, and
// writes each partition the folds of its words as fold records
// (trace.Fold), in place of the lanes. It keeps the folds of one
// operation at a time, a memory instance a .group and space, and writes
// them all (flush) before any record that could disagree with them: an
// instruction of another operation or that does not fold, a directive
// but .cluster, and the slice's end.
//
// A memory instance whose space has regions (FoldOp.Bounds) spanning at
// most maxWindowBytes keeps its folds in a window: dense arrays over
// the regions' span, of its words, their written bits, the lane-ops of
// each 128-byte line and a bit a page that has any, so that a lane's fold
// is an indexed update of its word and of its line's count, in one loop.
// Any other (no region: every address; or regions too far apart) keeps
// them in a simulated memory of its own (shard.Memory, the engine's:
// pages of 1024 words found through a directory, whose scattered 32-bit
// additions keep many misses under way at once), the paged memory, as does
// a window's memory instance that meets an address outside it (spill;
// every access of a folded instruction lies in its regions, so none
// should).
//
// A word holds its fold, 0 where none is (after a flush too); a fold
// that is not an addition tells its first operand by the word's written
// bit (Touched), an addition's sum of 0 is marked there too. An 8-byte
// fold takes two words, its low half first, its low word marked. The
// flush writes the memory instances in the order they were made, the
// words of each ascending, whichever holds them.

// maxFoldPages is the most pages the combiner's paged memory holds before
// it flushes and starts a new one (256 MiB of folds, whatever the spread
// of the addresses).
const maxFoldPages = 1 << 16

// maxWindowBytes is the largest span of regions a window covers, and
// maxDenseBytes the most words the windows of a combiner cover together:
// memory that only the pages a trace touches take.
const (
	maxWindowBytes = 64 << 20
	maxDenseBytes  = 256 << 20
)

// foldQueue is how many 32-bit additions the combiner queues before it
// performs them (shard.Memory.AddWords).
const foldQueue = 4096

// The states of a memory instance in a period between flushes: no fold,
// its folds in its window, or in the paged memory.
const (
	memIdle uint8 = iota
	memDense
	memPaged
)

type foldMem struct {
	op     engine.FoldOp
	static *trace.Static // the form the fold records name
	group  int64         // its instruction's .group
	state  uint8         // memIdle, memDense or memPaged
	win    *window       // its window, kept from one period to the next
}

// window is the folds of a memory instance over [lo, lo+4·len(words)),
// a whole number of pages.
type window struct {
	lo uint64
	// d: its words, a bit a word written (see above), the lane-ops of
	// each line since the last flush, and a bit a page with any (a line
	// with lane-ops, or a word written).
	d shard.Dense
	// q, for a large window (queued), are its additions not yet made
	// (settle): made in AddDense's loop, many misses in cache at once.
	q      []shard.WordAdd
	queued bool
	blk    *offheap.Block
}

func newWindow(lo, end uint64) *window {
	n := int((end - lo) / 4)
	w := &window{lo: lo, d: shard.Dense{Pages: make([]uint64, (n/shard.PageWords+63)/64)}}
	// The words in huge pages where granted (a window's words are
	// updated at random, a miss in the TLB a lane in 4 KiB pages); their
	// bits and their lines' counts (n/4 bytes) in the Go heap, so that a
	// window of whole huge pages of words takes no huge page more (one
	// the kernel clears: 2 MiB for 256 KiB of them in a 4 MiB window).
	if n*4 >= offheap.HugeMin {
		w.blk = offheap.NewBlock(n * 4)
		b := w.blk.Bytes()[:n*4]
		for i := 0; i < len(b); i += 4096 {
			b[i] = 0 // written before add reads them (offheap, 7)
		}
		w.d.Words = unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n)
	} else {
		w.d.Words = make([]uint32, n)
	}
	w.d.Touched = make([]uint64, n/64)
	w.d.Lines = make([]uint32, n/lineWords)
	w.queued = n >= queueWords
	return w
}

// settle makes the additions queued in w.
func (w *window) settle() {
	if len(w.q) > 0 {
		shard.AddDense(&w.d, w.q)
		w.q = w.q[:0]
	}
}

// queueWords is the smallest window whose additions are queued (settle):
// a smaller one stays in cache.
const queueWords = 1 << 18

// release returns w's memory; nothing may use w after.
func (w *window) release() {
	if w != nil && w.blk != nil {
		w.blk.Release()
		w.blk = nil
	}
}

// covers reports whether w holds [lo, end).
func (w *window) covers(lo, end uint64) bool {
	return w != nil && lo >= w.lo && end-w.lo <= uint64(len(w.d.Words))*4
}

// page is page i of w as a shard.Page (its words, their bits, its number).
func (w *window) page(i int) shard.Page {
	return shard.Page{Words: (*[shard.PageWords]uint32)(w.d.Words[i*shard.PageWords:]),
		Touched: (*[shard.PageWords / 64]uint64)(w.d.Touched[i*shard.PageWords/64:]),
		Num:     w.lo>>shard.PageShift + uint64(i)}
}

// combiner holds a slice's pending folds.
type combiner struct {
	op      engine.FoldOp // the operation pending, when pending
	mems    []foldMem     // by memory id
	memAt   map[memID]int
	lastID  memID
	lastMem int
	// active are the memory instances with folds since the last flush,
	// in the order they took their first.
	active     []int
	denseBytes uint64 // the windows' words
	sm         *shard.Memory
	cur        shard.Cursor
	adds       []shard.WordAdd // queued additions
	// dirty are the references of the pages written since the last
	// flush, each once (dirtyBit).
	dirty    []uint32
	dirtyBit []uint64
	// lineOps are the lane-ops folded into each 128-byte line of the
	// paged memory since the last flush, by line reference (a word
	// reference over 32: a page's 32 lines, its reference's): the flush
	// adds them, and a window's lines, to laneOps by the line's
	// partition, a line at a time rather than a lane at a time
	// (Summary.LaneOps, exact).
	lineOps []uint32
	laneOps []uint64 // per partition: the lane-ops of the folds flushed
	// Per partition, the words and folds a flush writes.
	addrs, vals [][]uint64
	lanes       uint64 // lane-ops folded
	words       uint64 // words written
	records     uint64 // fold records written
	// flushWorkers is how many goroutines may merge (take) or drain
	// (flushWindow) a large window, sharedWindows how many windows they
	// merged or drained.
	flushWorkers  int
	sharedWindows int
	// barriers counts the records routed that a part's pending folds
	// must be written before (an instruction that does not fold or of
	// another operation, a directive but .cluster, a full memory),
	// whether or not any were pending: with none, the part takes the
	// folds of the part before it (take).
	barriers int
}

type memID struct {
	space trace.Space
	group int64
}

func newCombiner(parts int) *combiner {
	return &combiner{memAt: map[memID]int{}, lastMem: -1, addrs: make([][]uint64, parts), vals: make([][]uint64, parts),
		laneOps: make([]uint64, parts)}
}

func (c *combiner) newMemory() error {
	sm, err := shard.New(shard.WithShards(1))
	if err != nil {
		return err
	}
	c.sm, c.cur = sm, sm.Cursor()
	c.dirtyBit = c.dirtyBit[:0]
	return nil
}

// release returns the windows' memory; nothing may use c after.
func (c *combiner) release() {
	for i := range c.mems {
		c.mems[i].win.release()
		c.mems[i].win = nil
	}
}

// pending reports whether folds are pending.
func (c *combiner) pending() bool { return len(c.active) > 0 }

// full reports whether the combiner's paged memory holds as many pages as
// it may: the caller flushes.
func (c *combiner) full() bool { return c.sm != nil && c.sm.Pages() >= maxFoldPages }

// errFoldMemory is the combiner's error when its memory is full.
var errFoldMemory = errors.New("split: the combiner's memory is full")

// add folds the accesses of instruction in (op, its lanes' addresses and
// operands); the caller flushed first when op is another operation.
func (c *combiner) add(in *trace.Inst, op *engine.FoldOp, addrs, vals []uint64) error {
	if !c.op.SameOp(*op) {
		c.op = *op // (only its operation and width are c's: SameOp)
	}
	mi := c.memOf(op, in.Static, in.Group)
	if len(addrs) == 0 {
		return nil // (no lane active: nothing pending)
	}
	c.lanes += uint64(len(addrs))
	m := &c.mems[mi]
	if m.state == memIdle {
		lo, end, ok := op.Bounds()
		c.activate(mi, lo, end, ok)
	}
	if m.state == memDense {
		k := m.win.add(op, addrs, vals)
		if k == len(addrs) {
			return nil
		}
		if err := c.spill(mi); err != nil { // (not met: see above)
			return err
		}
		addrs, vals = addrs[k:], vals[k:]
	}
	return c.addPaged(uint32(mi), op, addrs, vals)
}

// activate readies memory instance mi, with no fold since the last
// flush, for its first: in its window when its regions' span [lo, end)
// (ok: FoldOp.Bounds) allows one, else in the paged memory.
func (c *combiner) activate(mi int, lo, end uint64, ok bool) {
	m := &c.mems[mi]
	c.active = append(c.active, mi)
	m.state = memPaged
	if !ok {
		return
	}
	lo &^= shard.PageBytes - 1
	if end = (end + shard.PageBytes - 1) &^ (shard.PageBytes - 1); end <= lo || end-lo > maxWindowBytes {
		return // (end 0: the regions reach the top of the address space)
	}
	if !m.win.covers(lo, end) {
		if m.win != nil {
			c.denseBytes -= uint64(len(m.win.d.Words)) * 4
			m.win.release()
			m.win = nil
		}
		if c.denseBytes+(end-lo) > maxDenseBytes {
			return
		}
		m.win = newWindow(lo, end)
		c.denseBytes += end - lo
	}
	m.state = memDense
}

// add folds the accesses of op at addrs with operands vals into w, in
// order, up to the first address outside it: it returns how many it
// folded.
func (w *window) add(op *engine.FoldOp, addrs, vals []uint64) int {
	words, touched, lines, dirty := w.d.Words, w.d.Touched, w.d.Lines, w.d.Pages
	n, lo := uint64(len(words)), w.lo
	vals = vals[:len(addrs)]
	kind := op.Kind()
	switch {
	case op.Size() == 8:
		for i, a := range addrs { // two words, the low half first
			x := (a - lo) >> 2
			if x >= n {
				return i
			}
			bit := uint64(1) << (x & 63)
			v := vals[i]
			if t := touched[x>>6]; t&bit != 0 {
				v = op.Combine(uint64(words[x])|uint64(words[x+1])<<32, v)
			} else {
				touched[x>>6] = t | bit
			}
			words[x], words[x+1] = uint32(v), uint32(v>>32)
			l := x / lineWords
			if lines[l]++; lines[l] == 1 {
				dirty[l>>11] |= 1 << (l >> 5 & 63)
			}
		}
	case kind == engine.FoldAdd && w.queued:
		// Their words and lines counted at once (settle).
		k := len(w.q)
		q := slices.Grow(w.q, len(addrs))[:k+len(addrs)]
		for i, a := range addrs {
			x := (a - lo) >> 2
			if x >= n {
				w.q = q[:k+i]
				return i
			}
			q[k+i] = shard.WordAdd{Word: uint32(x), Add: uint32(vals[i])}
		}
		w.q = q
		if len(q) >= foldQueue {
			w.settle()
		}
	case kind == engine.FoldAdd:
		for i, a := range addrs {
			x := (a - lo) >> 2
			if x >= n {
				return i
			}
			s := words[x] + uint32(vals[i])
			words[x] = s
			if s == 0 { // a sum of 0 is written too
				touched[x>>6] |= 1 << (x & 63)
			}
			l := x / lineWords
			if lines[l]++; lines[l] == 1 {
				dirty[l>>11] |= 1 << (l >> 5 & 63)
			}
		}
	case kind == engine.FoldMinU:
		// A BFS's relaxations: the loop of the default case, its
		// operation known (the switch of fold32Kind a lane took a
		// split task of bfs a sixth of its CPU in this loop).
		for i, a := range addrs {
			x := (a - lo) >> 2
			if x >= n {
				return i
			}
			bit := uint64(1) << (x & 63)
			v := uint32(vals[i])
			if t := touched[x>>6]; t&bit != 0 {
				v = min(v, words[x])
			} else {
				touched[x>>6] = t | bit
			}
			words[x] = v
			l := x / lineWords
			if lines[l]++; lines[l] == 1 {
				dirty[l>>11] |= 1 << (l >> 5 & 63)
			}
		}
	default:
		for i, a := range addrs {
			x := (a - lo) >> 2
			if x >= n {
				return i
			}
			bit := uint64(1) << (x & 63)
			v := uint32(vals[i])
			if t := touched[x>>6]; t&bit != 0 {
				v = fold32Kind(kind, words[x], v)
			} else {
				touched[x>>6] = t | bit
			}
			words[x] = v
			l := x / lineWords
			if lines[l]++; lines[l] == 1 {
				dirty[l>>11] |= 1 << (l >> 5 & 63)
			}
		}
	}
	return len(addrs)
}

// fold32Kind is old folded with v by kind (not FoldAdd): the engine's
// opInt for these kinds, without FoldOp.Combine's call a word (which made
// a split of bfs a tenth slower).
func fold32Kind(kind engine.FoldKind, old, v uint32) uint32 {
	switch kind {
	case engine.FoldAnd:
		v &= old
	case engine.FoldOr:
		v |= old
	case engine.FoldXor:
		v ^= old
	case engine.FoldMinU:
		v = min(v, old)
	case engine.FoldMaxU:
		v = max(v, old)
	case engine.FoldMinS:
		v = uint32(min(int32(v), int32(old)))
	case engine.FoldMaxS:
		v = uint32(max(int32(v), int32(old)))
	}
	return v
}

// spill moves the folds of memory instance mi from its window to the
// paged memory, page by page, with its lines' lane-ops, and leaves it
// there for the rest of the period.
func (c *combiner) spill(mi int) error {
	m := &c.mems[mi]
	w := m.win
	w.settle()
	m.state = memPaged
	if c.sm == nil {
		if err := c.newMemory(); err != nil {
			return err
		}
	}
	for j, bitsOf := range w.d.Pages {
		for ; bitsOf != 0; bitsOf &= bitsOf - 1 {
			i := j*64 + bits.TrailingZeros64(bitsOf)
			src := w.page(i)
			en := c.cur.Resolve(uint32(mi), src.Num<<shard.PageShift)
			if en == 0 {
				return errFoldMemory
			}
			ref := en.Ref()
			c.growLines()
			c.markDirty(ref)
			pg := c.sm.Page(ref)
			*pg.Words = *src.Words
			for k, t := range src.Touched {
				pg.Touched[k] |= t
			}
			clear(src.Words[:])
			clear(src.Touched[:])
			ls := w.d.Lines[i*(shard.PageWords/lineWords):][:shard.PageWords/lineWords]
			for l, n := range ls {
				c.lineOps[ref*(shard.PageWords/lineWords)+uint32(l)] += n
			}
			clear(ls)
		}
		w.d.Pages[j] = 0
	}
	return nil
}

// addPaged folds the accesses of op at addrs (operands vals) into the
// paged memory, memory instance mem.
func (c *combiner) addPaged(mem uint32, op *engine.FoldOp, addrs, vals []uint64) error {
	if c.sm == nil { // the first fold
		if err := c.newMemory(); err != nil {
			return err
		}
	}
	if op.Size() == 4 {
		// The words' references, a lane's (its page made if absent).
		n := len(c.adds)
		c.adds = slices.Grow(c.adds, len(addrs))[:n+len(addrs)]
		out := c.adds[n:]
		k := c.cur.WordAdds(mem, addrs, vals, 0, out)
		for i := k; i < len(addrs); i++ {
			en := c.cur.Resolve(mem, addrs[i])
			if en == 0 {
				return errFoldMemory
			}
			out[i] = shard.WordAdd{Word: en.WordRef(addrs[i]), Add: uint32(vals[i])}
		}
		c.growLines()
		lines := c.lineOps
		for _, x := range out {
			l := x.Word / lineWords
			if lines[l] == 0 {
				c.markDirty(x.Word >> (shard.PageShift - 2))
			}
			lines[l]++
		}
		if kind := op.Kind(); kind != engine.FoldAdd {
			// At once; a word not touched takes its first operand.
			fold32(c.sm, out, kind)
			c.adds = c.adds[:n]
		} else if len(c.adds) >= foldQueue {
			// Queued, then added in the memory's loop of additions.
			c.sm.AddWords(c.adds)
			c.adds = c.adds[:0]
		}
		return nil
	}
	for i, a := range addrs { // 8 bytes: two words, the low half first
		en := c.cur.Resolve(mem, a)
		if en == 0 {
			return errFoldMemory
		}
		w := en.WordRef(a)
		c.growLines()
		c.countLine(w)
		pg := c.sm.Page(w >> (shard.PageShift - 2))
		j := w & (shard.PageWords - 1)
		set := pg.Touched[j>>6]&(1<<(j&63)) != 0
		pg.Touch(j)
		v := vals[i]
		if set {
			v = op.Combine(uint64(pg.Words[j])|uint64(pg.Words[j+1])<<32, v)
		}
		pg.Words[j], pg.Words[j+1] = uint32(v), uint32(v>>32)
	}
	return nil
}

// memOf is the memory instance of op's folds (its space and .group),
// made if new; static and group are what its fold records name.
func (c *combiner) memOf(op *engine.FoldOp, static *trace.Static, group int64) int {
	id := memID{op.Space, op.Group}
	mi := c.lastMem
	if mi < 0 || id != c.lastID {
		var ok bool
		if mi, ok = c.memAt[id]; !ok {
			mi = len(c.mems)
			c.memAt[id] = mi
			c.mems = append(c.mems, foldMem{})
		}
		c.lastID, c.lastMem = id, mi
	}
	m := &c.mems[mi]
	if m.static == nil || !m.op.SameOp(*op) {
		m.static, m.group, m.op = static, group, *op
	}
	return mi
}

// canTake reports whether c, a part's combiner at its end, can take the
// folds pending at the end of the part before it, o (take): c's part met
// no flush point, what either has pending is of one operation, and c's
// memory has room for o's pages.
func (c *combiner) canTake(o *combiner) bool {
	switch {
	case c.barriers > 0:
		return false
	case !o.pending():
		return true
	case c.pending() && !c.op.SameOp(o.op):
		return false
	}
	n := len(o.dirty)
	if c.sm != nil {
		n += c.sm.Pages()
	}
	return n < maxFoldPages
}

// take folds into c the folds pending in o, c's part's predecessor's
// (canTake): its words, composed with c's of the same address, are
// written at the end of c's part, after its records, none of which
// could disagree with them. Its memory instances are c's in the order o
// took them; a window's words go to c's window of the same span, with
// their lines' lane-ops, and any other's one by one (o's lane-ops then
// count in o.laneOps, as its flush would count them). o is left empty.
func (c *combiner) take(o *combiner, pt *shard.Partitioner) error {
	if len(o.adds) > 0 {
		o.sm.AddWords(o.adds)
		o.adds = o.adds[:0]
	}
	if !o.pending() {
		return nil
	}
	c.op = o.op
	to := make(map[uint32]int, len(o.active)) // o's paged instances: c's
	for _, omi := range o.active {
		m := &o.mems[omi]
		mi := c.memOf(&m.op, m.static, m.group)
		cm := &c.mems[mi]
		if cm.state == memIdle {
			if m.state == memDense {
				c.activate(mi, m.win.lo, m.win.lo+uint64(len(m.win.d.Words))*4, true)
			} else {
				c.activate(mi, 0, 0, false)
			}
		}
		if m.state == memDense && cm.state == memDense && cm.win.lo == m.win.lo && len(cm.win.d.Words) == len(m.win.d.Words) {
			if cm.win.merge(m.win, m.op, c.flushWorkers) > 1 {
				c.sharedWindows++
			}
			m.state = memIdle
			continue
		}
		if m.state == memDense {
			if err := o.spill(omi); err != nil {
				return err
			}
		}
		if cm.state == memDense {
			if err := c.spill(mi); err != nil {
				return err
			}
		}
		to[uint32(omi)] = mi
		m.state = memIdle
	}
	o.active = o.active[:0]
	if len(o.dirty) == 0 {
		return nil
	}
	if c.sm == nil {
		if err := c.newMemory(); err != nil {
			return err
		}
	}
	var written [shard.PageWords / 64]uint64
	for _, ref := range o.dirty {
		pg := o.sm.Page(ref)
		m := &o.mems[pg.Mem]
		mem := uint32(to[pg.Mem])
		kind, wide := m.op.Kind(), m.op.Size() == 8
		o.countLines(o.lineOps[ref*(shard.PageWords/lineWords):][:shard.PageWords/lineWords], pg.Num, m, pt)
		o.dirtyBit[ref>>6] = 0
		err := drain(pg, nil, wide, &written, func(a, v uint64) error {
			en := c.cur.Resolve(mem, a)
			if en == 0 {
				return errFoldMemory
			}
			x := en.WordRef(a)
			c.growLines()
			c.markDirty(x >> (shard.PageShift - 2))
			cp := c.sm.Page(x >> (shard.PageShift - 2))
			i := x & (shard.PageWords - 1)
			set := cp.Touched[i>>6]&(1<<(i&63)) != 0
			switch {
			case wide:
				if set {
					v = m.op.Combine(uint64(cp.Words[i])|uint64(cp.Words[i+1])<<32, v)
				}
				cp.Touch(i)
				cp.Words[i], cp.Words[i+1] = uint32(v), uint32(v>>32)
			case kind == engine.FoldAdd:
				// As addWords: a word whose sum is 0 is touched.
				if cp.Words[i] += uint32(v); cp.Words[i] == 0 {
					cp.Touch(i)
				}
			default:
				fold32(c.sm, []shard.WordAdd{{Word: x, Add: uint32(v)}}, kind)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	o.dirty = o.dirty[:0]
	return nil
}

// merge folds the folds of o, a window of the same span as w's, into w
// (op's, as take does), with its lines' lane-ops, and empties o; a large
// window's (parallelFlushWords) with up to workers goroutines, each its
// share of the pages (mergePages), which share nothing. It returns the
// goroutines it took.
func (w *window) merge(o *window, op engine.FoldOp, workers int) (goroutines int) {
	w.settle()
	o.settle()
	g := min(max(workers, 1), len(o.d.Pages))
	if len(w.d.Words) < parallelFlushWords {
		g = 1
	}
	var wg sync.WaitGroup
	for k := range g - 1 {
		wg.Go(func() { w.mergePages(o, op, k, g) })
	}
	w.mergePages(o, op, g-1, g)
	wg.Wait()
	return g
}

// mergePages merges (merge) the pages of o of every g-th bitmap word of
// its pages from the k-th: 64 pages each.
func (w *window) mergePages(o *window, op engine.FoldOp, k, g int) {
	kind, wide := op.Kind(), op.Size() == 8
	var written [shard.PageWords / 64]uint64
	for j := k; j < len(o.d.Pages); j += g {
		pages := o.d.Pages[j]
		w.d.Pages[j] |= pages
		for ; pages != 0; pages &= pages - 1 {
			i := j*64 + bits.TrailingZeros64(pages)
			pg := o.page(i)
			pg.Written(&written, nil)
			base := i * shard.PageWords
			for k, s := range written {
				for ; s != 0; s &= s - 1 {
					x := base + k*64 + bits.TrailingZeros64(s)
					bit := uint64(1) << (x & 63)
					t := w.d.Touched[x>>6]
					switch {
					case wide:
						if x&1 != 0 {
							continue // the high half of the word before
						}
						v := uint64(o.d.Words[x]) | uint64(o.d.Words[x+1])<<32
						if t&bit != 0 {
							v = op.Combine(uint64(w.d.Words[x])|uint64(w.d.Words[x+1])<<32, v)
						}
						w.d.Touched[x>>6] = t | bit
						w.d.Words[x], w.d.Words[x+1] = uint32(v), uint32(v>>32)
					case kind == engine.FoldAdd:
						if w.d.Words[x] += o.d.Words[x]; w.d.Words[x] == 0 {
							w.d.Touched[x>>6] = t | bit
						}
					default:
						v := o.d.Words[x]
						if t&bit != 0 {
							v = fold32Kind(kind, w.d.Words[x], v)
						}
						w.d.Touched[x>>6] = t | bit
						w.d.Words[x] = v
					}
				}
			}
			clear(pg.Words[:])
			clear(pg.Touched[:])
			ol := o.d.Lines[i*(shard.PageWords/lineWords):][:shard.PageWords/lineWords]
			wl := w.d.Lines[i*(shard.PageWords/lineWords):][:shard.PageWords/lineWords]
			for l, n := range ol {
				wl[l] += n
			}
			clear(ol)
		}
		o.d.Pages[j] = 0
	}
}

// fold32 folds the 32-bit operands of xs into their words by kind (not
// FoldAdd): a word not touched takes the operand and is marked.
func fold32(sm *shard.Memory, xs []shard.WordAdd, kind engine.FoldKind) {
	for _, x := range xs {
		ch, w := sm.Chunk(x.Word), x.Word%shard.ChunkWords
		bit := uint64(1) << (w % 64)
		old, v := ch.Words[w], x.Add
		if ch.Touched[w/64]&bit != 0 {
			v = fold32Kind(kind, old, v)
		}
		ch.Words[w] = v
		ch.Touched[w/64] |= bit
	}
}

// lineWords is the words of a 128-byte line.
const lineWords = 32

// growLines makes lineOps hold the lines of every page of the memory
// (references 1 to Pages).
func (c *combiner) growLines() {
	if n := (c.sm.Pages() + 1) * (shard.PageWords / lineWords); n > len(c.lineOps) {
		c.lineOps = append(c.lineOps, make([]uint32, n-len(c.lineOps))...)
	}
}

// countLine counts a lane-op folded into the line of word reference w
// (lineOps holds it: growLines), and marks its page dirty at the line's
// first.
func (c *combiner) countLine(w uint32) {
	l := w / lineWords
	if c.lineOps[l] == 0 {
		c.markDirty(w >> (shard.PageShift - 2))
	}
	c.lineOps[l]++
}

// markDirty notes that page ref holds folds.
func (c *combiner) markDirty(ref uint32) {
	if int(ref>>6) >= len(c.dirtyBit) {
		c.dirtyBit = append(c.dirtyBit, make([]uint64, int(ref>>6)+1-len(c.dirtyBit))...)
	}
	if b := uint64(1) << (ref & 63); c.dirtyBit[ref>>6]&b == 0 {
		c.dirtyBit[ref>>6] |= b
		c.dirty = append(c.dirty, ref)
	}
}

// flush writes every pending fold to its partition's file as fold
// records, a memory instance at a time in the order they were made, words
// ascending, and empties the memory.
func (c *combiner) flush(outs *outputs, pt *shard.Partitioner, sum *Summary) error {
	if len(c.adds) > 0 {
		c.sm.AddWords(c.adds)
		c.adds = c.adds[:0]
	}
	if !c.pending() {
		return nil
	}
	sm := c.sm
	slices.SortFunc(c.dirty, func(a, b uint32) int {
		pa, pb := sm.Page(a), sm.Page(b)
		return cmp.Or(cmp.Compare(pa.Mem, pb.Mem), cmp.Compare(pa.Num, pb.Num))
	})
	slices.Sort(c.active)
	var written [shard.PageWords / 64]uint64
	at := 0
	for _, mi := range c.active {
		m := &c.mems[mi]
		wide := m.op.Size() == 8
		line, part := ^uint64(0), 0
		emit := func(a, v uint64) error {
			if a>>7 != line { // a line is one partition's
				line, part = a>>7, pt.Of(m.op.Key, a)
			}
			c.addrs[part] = append(c.addrs[part], a)
			c.vals[part] = append(c.vals[part], v)
			if len(c.addrs[part]) == foldRecordWords {
				return c.write(outs, part, m, sum, &c.words, &c.records)
			}
			return nil
		}
		if m.state == memDense {
			w := m.win
			w.settle()
			if g := min(c.flushWorkers, len(c.addrs)); g > 1 && outs.held == nil && len(w.d.Words) >= parallelFlushWords {
				if err := c.flushWindow(outs, pt, sum, m, w, g); err != nil {
					return err
				}
			}
			for i, next := nextBit(w.d.Pages, 0), 0; i >= 0; i = next {
				pg := w.page(i)
				var np *shard.Page
				if next = nextBit(w.d.Pages, i+1); next >= 0 {
					p := w.page(next)
					np = &p
				}
				c.countLines(w.d.Lines[i*(shard.PageWords/lineWords):][:shard.PageWords/lineWords], pg.Num, m, pt)
				if err := drain(&pg, np, wide, &written, emit); err != nil {
					return err
				}
			}
			clear(w.d.Pages)
		} else {
			for ; at < len(c.dirty) && sm.Page(c.dirty[at]).Mem == uint32(mi); at++ {
				ref := c.dirty[at]
				var next *shard.Page
				if at+1 < len(c.dirty) {
					next = sm.Page(c.dirty[at+1])
				}
				pg := sm.Page(ref)
				c.countLines(c.lineOps[ref*(shard.PageWords/lineWords):][:shard.PageWords/lineWords], pg.Num, m, pt)
				c.dirtyBit[ref>>6] = 0
				if err := drain(pg, next, wide, &written, emit); err != nil {
					return err
				}
			}
		}
		m.state = memIdle
		for p := range c.addrs {
			if err := c.write(outs, p, m, sum, &c.words, &c.records); err != nil {
				return err
			}
		}
	}
	if at != len(c.dirty) { // (every paged page is an active instance's)
		return fmt.Errorf("split: internal error: %d pages of folds of no memory instance pending", len(c.dirty)-at)
	}
	c.active = c.active[:0]
	c.dirty = c.dirty[:0]
	if c.full() {
		return c.newMemory()
	}
	return nil
}

// parallelFlushWords is the smallest window whose flush flushWindow
// shares among goroutines: one of 4 MiB takes a single core 10 ms or
// more, at the end of a split task, when nothing else runs.
const parallelFlushWords = 1 << 18

// flushWindow drains window w of memory instance m into its fold records
// as flush does, with g goroutines: goroutine k writes the records of the
// partitions p with p mod g = k, walking every page of w and taking the
// words of its partitions' lines, in address order, so that each file
// gets the records a flush on one goroutine writes, byte for byte. Each
// partition's file must be its own (not held: the held ones share a
// file). The goroutines only read w; w's pages are cleared once all are
// done (its lines, words and bits, the goroutines a share of the pages
// each), and so are its bits of pages.
func (c *combiner) flushWindow(outs *outputs, pt *shard.Partitioner, sum *Summary, m *foldMem, w *window, g int) error {
	wide := m.op.Size() == 8
	type tally struct {
		words, records uint64
		err            error
	}
	tallies := make([]tally, g)
	var wg sync.WaitGroup
	for k := range g {
		wg.Go(func() {
			t := &tallies[k]
			var written [shard.PageWords / 64]uint64
			var owner [shard.PageWords / lineWords]int32
			for i := nextBit(w.d.Pages, 0); i >= 0; i = nextBit(w.d.Pages, i+1) {
				pg := w.page(i)
				// The lines of k's partitions, their lane-ops counted.
				var mine uint32
				for l, n := range w.d.Lines[i*(shard.PageWords/lineWords):][:shard.PageWords/lineWords] {
					if n == 0 {
						continue
					}
					p := pt.Of(m.op.Key, pg.Num<<shard.PageShift|uint64(l)*lineWords*4)
					if p%g != k {
						continue
					}
					c.laneOps[p] += uint64(n)
					mine |= 1 << l
					owner[l] = int32(p)
				}
				if mine == 0 {
					continue
				}
				pg.Written(&written, nil)
				for j, s := range written { // lines 2j and 2j+1
					s &= -uint64(mine>>(2*j)&1)&0xffffffff | -uint64(mine>>(2*j+1)&1)<<32
					for h := range 2 { // line l, then the next: each partition's words ascend
						l := 2*j + h
						ls := uint32(s >> (32 * h))
						if ls == 0 {
							continue
						}
						p := owner[l]
						if !wide && ls == ^uint32(0) && len(c.addrs[p]) <= foldRecordWords-lineWords {
							// Every 32-bit word of the line written (every
							// line of a scattered trace's slice): its
							// addresses a word apart, its values as they
							// are, at once.
							a0 := pg.Num<<shard.PageShift | uint64(l*lineWords)<<2
							as, vs := c.addrs[p], c.vals[p]
							n := len(as)
							as, vs = slices.Grow(as, lineWords)[:n+lineWords], slices.Grow(vs, lineWords)[:n+lineWords]
							for i, v := range pg.Words[l*lineWords : (l+1)*lineWords] {
								as[n+i], vs[n+i] = a0+uint64(i)<<2, uint64(v)
							}
							c.addrs[p], c.vals[p] = as, vs
							if len(as) == foldRecordWords {
								if t.err = c.write(outs, int(p), m, sum, &t.words, &t.records); t.err != nil {
									return
								}
							}
							continue
						}
						for ; ls != 0; ls &= ls - 1 {
							x := uint32(l*lineWords + bits.TrailingZeros32(ls))
							if wide && x&1 != 0 {
								continue // the high half of the word before
							}
							v := uint64(pg.Words[x])
							if wide {
								v |= uint64(pg.Words[x+1]) << 32
							}
							c.addrs[p] = append(c.addrs[p], pg.Num<<shard.PageShift|uint64(x)<<2)
							c.vals[p] = append(c.vals[p], v)
							if len(c.addrs[p]) == foldRecordWords {
								if t.err = c.write(outs, int(p), m, sum, &t.words, &t.records); t.err != nil {
									return
								}
							}
						}
					}
				}
			}
			for p := k; p < len(c.addrs); p += g {
				if t.err = c.write(outs, p, m, sum, &t.words, &t.records); t.err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	var errs []error
	for _, t := range tallies {
		c.words += t.words
		c.records += t.records
		errs = append(errs, t.err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// Every page drained: its words, bits and lines cleared, each
	// goroutine a share of them.
	for k := range g {
		wg.Go(func() {
			for i, at := nextBit(w.d.Pages, 0), 0; i >= 0; i, at = nextBit(w.d.Pages, i+1), at+1 {
				if at%g == k {
					pg := w.page(i)
					clear(pg.Words[:])
					clear(pg.Touched[:])
					clear(w.d.Lines[i*(shard.PageWords/lineWords):][:shard.PageWords/lineWords])
				}
			}
		})
	}
	wg.Wait()
	clear(w.d.Pages)
	c.sharedWindows++
	return nil
}

// nextBit is the first bit set in bm at or after bit i, -1 if none.
func nextBit(bm []uint64, i int) int {
	for j := i / 64; j < len(bm); j++ {
		s := bm[j]
		if j == i/64 {
			s &^= 1<<(i%64) - 1
		}
		if s != 0 {
			return j*64 + bits.TrailingZeros64(s)
		}
	}
	return -1
}

// countLines adds the lane-ops of lines, the counts of page num's lines
// of memory instance m, to the partitions of the lines (laneOps), and
// clears them.
func (c *combiner) countLines(lines []uint32, num uint64, m *foldMem, pt *shard.Partitioner) {
	for l, n := range lines {
		if n != 0 {
			c.laneOps[pt.Of(m.op.Key, num<<shard.PageShift|uint64(l)*lineWords*4)] += uint64(n)
			lines[l] = 0
		}
	}
}

// drain empties page pg: it hands each word written to f, in address
// order, as its address a and value v (both halves of a 64-bit one:
// wide), clearing it. next, the page drained after it (nil: none), is
// asked for meanwhile; written is scratch.
func drain(pg, next *shard.Page, wide bool, written *[shard.PageWords / 64]uint64, f func(a, v uint64) error) error {
	pg.Written(written, next)
	for j, s := range written {
		for ; s != 0; s &= s - 1 {
			w := uint32(j*64 + bits.TrailingZeros64(s))
			if wide && w&1 != 0 {
				continue // the high half of the word before
			}
			v := uint64(pg.Words[w])
			pg.Words[w] = 0
			if wide {
				v |= uint64(pg.Words[w+1]) << 32
				pg.Words[w+1] = 0
			}
			if err := f(pg.Num<<shard.PageShift|uint64(w)<<2, v); err != nil {
				return err
			}
		}
	}
	clear(pg.Touched[:])
	return nil
}

// write writes the words of partition p's buffer (ascending) as a fold
// record of m, counted in words and records, and empties the buffer.
func (c *combiner) write(outs *outputs, p int, m *foldMem, sum *Summary, words, records *uint64) error {
	a, v := c.addrs[p], c.vals[p]
	if len(a) == 0 {
		return nil
	}
	d := &trace.Directive{Fold: &trace.Fold{Static: m.static, Group: m.group, Addrs: a, Vals: v}}
	if err := outs.w[p].Write(&trace.Inst{Dir: d}); err != nil {
		return fmt.Errorf("%s: %w", outs.tmp[p], err)
	}
	sum.Records[p]++
	*words += uint64(len(a))
	*records++
	c.addrs[p], c.vals[p] = a[:0], v[:0]
	return nil
}

// foldRecordWords is the most words the combiner puts in a fold record.
const foldRecordWords = 4096
