package split

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// The combiner (Options.Combine): a split for replays that write no
// per-lane table folds, within its slice, the consecutive accesses to a
// word by one operation that composes (engine.FoldOp) into one, and
// writes each partition the folds of its words as fold records
// (trace.Fold), in place of the lanes. It keeps the folds of one
// operation at a time in a simulated memory of its own (shard.Memory, the
// engine's: pages of 1024 words found through a directory, whose
// scattered 32-bit additions keep many misses under way at once), a
// memory instance a .group and space, and writes them all (flush) before
// any record that could disagree with them: an instruction of another
// operation or that does not fold, a directive but .cluster, and the
// slice's end. A word of the memory holds its fold, 0 where none is
// (after a flush too); a fold that is not an addition tells its first
// operand by the word's bit in Touched. An 8-byte fold takes two words,
// its low half first.

// maxFoldPages is the most pages the combiner's memory holds before it
// flushes and starts a new one (256 MiB of folds, whatever the spread of
// the addresses).
const maxFoldPages = 1 << 16

// foldQueue is how many 32-bit additions the combiner queues before it
// performs them (shard.Memory.AddWords).
const foldQueue = 4096

type foldMem struct {
	op     engine.FoldOp
	static *trace.Static // the form the fold records name
	group  int64         // its instruction's .group
}

// combiner holds a slice's pending folds.
type combiner struct {
	op      engine.FoldOp // the operation pending, when pending
	mems    []foldMem     // by memory id
	memAt   map[memID]int
	lastID  memID
	lastMem int
	sm      *shard.Memory
	cur     shard.Cursor
	adds    []shard.WordAdd // queued additions
	// dirty are the references of the pages written since the last
	// flush, each once (dirtyBit).
	dirty    []uint32
	dirtyBit []uint64
	// lineOps are the lane-ops folded into each 128-byte line of the
	// memory since the last flush, by line reference (a word reference
	// over 32: a page's 32 lines, its reference's): the flush adds them
	// to laneOps by the line's partition, a line at a time rather than a
	// lane at a time (Summary.LaneOps, exact).
	lineOps []uint32
	laneOps []uint64 // per partition: the lane-ops of the folds flushed
	// Per partition, the words and folds a flush writes.
	addrs, vals [][]uint64
	lanes       uint64 // lane-ops folded
	words       uint64 // words written
	records     uint64 // fold records written
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

// pending reports whether folds are pending.
func (c *combiner) pending() bool { return len(c.dirty) > 0 || len(c.adds) > 0 }

// full reports whether the combiner's memory holds as many pages as it
// may: the caller flushes.
func (c *combiner) full() bool { return c.sm != nil && c.sm.Pages() >= maxFoldPages }

// errFoldMemory is the combiner's error when its memory is full.
var errFoldMemory = errors.New("split: the combiner's memory is full")

// add folds the accesses of instruction in (op, its lanes' addresses and
// operands); the caller flushed first when op is another operation.
func (c *combiner) add(in *trace.Inst, op engine.FoldOp, addrs, vals []uint64) error {
	c.op = op
	mi := c.memOf(op, in.Static, in.Group)
	c.lanes += uint64(len(addrs))
	if c.sm == nil { // the first fold
		if err := c.newMemory(); err != nil {
			return err
		}
	}
	mem := uint32(mi)
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
			// At once; a word not touched takes its first operand. Its
			// switch of operations is the engine's opInt's for these
			// kinds: FoldOp.Combine, a call a word, made a split of bfs
			// a tenth slower.
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
		ref := w >> (shard.PageShift - 2)
		c.growLines()
		c.countLine(w)
		pg := c.sm.Page(ref)
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
func (c *combiner) memOf(op engine.FoldOp, static *trace.Static, group int64) int {
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
	if m.static == nil || !m.op.SameOp(op) {
		m.static, m.group, m.op = static, group, op
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
// could disagree with them. o's lane-ops count in o.laneOps, as its
// flush would count them, and o's memory is left empty.
func (c *combiner) take(o *combiner, pt *shard.Partitioner) error {
	if len(o.adds) > 0 {
		o.sm.AddWords(o.adds)
		o.adds = o.adds[:0]
	}
	if len(o.dirty) == 0 {
		return nil
	}
	if c.sm == nil {
		if err := c.newMemory(); err != nil {
			return err
		}
	}
	c.op = o.op
	var written [shard.PageWords / 64]uint64
	for _, ref := range o.dirty {
		pg := o.sm.Page(ref)
		m := &o.mems[pg.Mem]
		mem := uint32(c.memOf(m.op, m.static, m.group))
		kind, wide := m.op.Kind(), m.op.Size() == 8
		err := o.drainPage(ref, nil, m, pt, &written, func(a, v uint64) error {
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

// fold32 folds the 32-bit operands of xs into their words by kind (not
// FoldAdd): a word not touched takes the operand and is marked.
func fold32(sm *shard.Memory, xs []shard.WordAdd, kind engine.FoldKind) {
	for _, x := range xs {
		ch, w := sm.Chunk(x.Word), x.Word%shard.ChunkWords
		bit := uint64(1) << (w % 64)
		old, v := ch.Words[w], x.Add
		if ch.Touched[w/64]&bit != 0 {
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
// records, a memory instance at a time, words ascending, and empties the
// memory.
func (c *combiner) flush(outs *outputs, pt *shard.Partitioner, sum *Summary) error {
	if len(c.adds) > 0 {
		c.sm.AddWords(c.adds)
		c.adds = c.adds[:0]
	}
	if len(c.dirty) == 0 {
		return nil
	}
	sm := c.sm
	slices.SortFunc(c.dirty, func(a, b uint32) int {
		pa, pb := sm.Page(a), sm.Page(b)
		return cmp.Or(cmp.Compare(pa.Mem, pb.Mem), cmp.Compare(pa.Num, pb.Num))
	})
	var written [shard.PageWords / 64]uint64
	for at := 0; at < len(c.dirty); {
		mi := sm.Page(c.dirty[at]).Mem
		m := &c.mems[mi]
		for ; at < len(c.dirty) && sm.Page(c.dirty[at]).Mem == mi; at++ {
			var next *shard.Page
			if at+1 < len(c.dirty) {
				next = sm.Page(c.dirty[at+1])
			}
			line, part := ^uint64(0), 0
			err := c.drainPage(c.dirty[at], next, m, pt, &written, func(a, v uint64) error {
				if a>>7 != line { // a line is one partition's
					line, part = a>>7, pt.Of(m.op.Key, a)
				}
				c.addrs[part] = append(c.addrs[part], a)
				c.vals[part] = append(c.vals[part], v)
				if len(c.addrs[part]) == foldRecordWords {
					return c.write(outs, part, m, sum)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		for p := range c.addrs {
			if err := c.write(outs, p, m, sum); err != nil {
				return err
			}
		}
	}
	c.dirty = c.dirty[:0]
	if c.full() {
		return c.newMemory()
	}
	return nil
}

// drainPage empties c's dirty page ref, of fold memory m: it counts its
// lines' lane-ops to their partitions (laneOps), then hands each word it
// wrote to f, in address order, as its address a and value v (both
// halves of a 64-bit one), clearing it. next, the page drained after it
// (nil: none), is asked for meanwhile; written is scratch.
func (c *combiner) drainPage(ref uint32, next *shard.Page, m *foldMem, pt *shard.Partitioner, written *[shard.PageWords / 64]uint64, f func(a, v uint64) error) error {
	pg := c.sm.Page(ref)
	wide := m.op.Size() == 8
	pg.Written(written, next)
	lines := c.lineOps[ref*(shard.PageWords/lineWords):][:shard.PageWords/lineWords]
	for l, n := range lines {
		if n != 0 {
			c.laneOps[pt.Of(m.op.Key, pg.Num<<shard.PageShift|uint64(l)*lineWords*4)] += uint64(n)
			lines[l] = 0
		}
	}
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
	c.dirtyBit[ref>>6] = 0
	return nil
}

// write writes the words of partition p's buffer (ascending) as a fold
// record of m, and empties the buffer.
func (c *combiner) write(outs *outputs, p int, m *foldMem, sum *Summary) error {
	a, v := c.addrs[p], c.vals[p]
	if len(a) == 0 {
		return nil
	}
	d := &trace.Directive{Fold: &trace.Fold{Static: m.static, Group: m.group, Addrs: a, Vals: v}}
	if err := outs.w[p].Write(&trace.Inst{Dir: d}); err != nil {
		return fmt.Errorf("%s: %w", outs.tmp[p], err)
	}
	sum.Records[p]++
	c.words += uint64(len(a))
	c.records++
	c.addrs[p], c.vals[p] = a[:0], v[:0]
	return nil
}

// foldRecordWords is the most words the combiner puts in a fold record.
const foldRecordWords = 4096
