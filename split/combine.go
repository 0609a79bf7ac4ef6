package split

import (
	"cmp"
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
// operation at a time in pages of 1024 words a memory instance, and
// writes them all (flush) before any record that could disagree with
// them: an instruction of another operation or that does not fold, a
// directive but .cluster, and the slice's end.

// foldPageWords is the 4-byte words of a fold page: 4 KiB of addresses.
const foldPageWords = 1024

// foldRegionPages is the pages of a fold region: 1 MiB of addresses.
const foldRegionPages = 256

// maxFoldPages is the most pages a combiner holds before it flushes
// (16 MiB of folds, whatever the addresses' spread).
const maxFoldPages = 4096

// foldPage is the pending folds of 4 KiB of one memory instance's
// addresses: a 4-byte word's fold at its index, an 8-byte word's in two
// (low half first); and which are set. A page is 4 KiB of values beside
// 128 bytes of bits, so that a slice's scattered folds miss the cache
// once a lane, on the value, the bits of every page staying cached.
type foldPage struct {
	mem  int    // index in combiner.mems
	page uint64 // address >> 12
	reg  *foldRegion
	set  [foldPageWords / 64]uint64
	vals [foldPageWords]uint32
}

// foldRegion is the pages of 1 MiB of a memory instance's addresses: a
// lane finds its page by an index, not a map's hash.
type foldRegion struct {
	pages [foldRegionPages]*foldPage
}

type foldMem struct {
	op      engine.FoldOp
	static  *trace.Static // the form the fold records name
	group   int64         // its instruction's .group
	regions map[uint64]*foldRegion
	lastKey uint64 // address >> 20 of last
	last    *foldRegion
}

// combiner holds a slice's pending folds.
type combiner struct {
	op      engine.FoldOp // the operation pending, when pending
	mems    []foldMem
	memAt   map[memID]int
	lastID  memID
	lastMem int
	pages   []*foldPage // pending, in the order they were made
	free    []*foldPage
	// Per partition, the words and folds a flush writes.
	addrs, vals [][]uint64
	lanes       uint64 // lane-ops folded
	words       uint64 // words written
	records     uint64 // fold records written
}

type memID struct {
	space trace.Space
	group int64
}

func newCombiner(parts int) *combiner {
	return &combiner{memAt: map[memID]int{}, lastMem: -1, addrs: make([][]uint64, parts), vals: make([][]uint64, parts)}
}

// pending reports whether folds are pending.
func (c *combiner) pending() bool { return len(c.pages) > 0 }

// full reports whether the combiner holds as many pages as it may: the
// caller flushes.
func (c *combiner) full() bool { return len(c.pages) >= maxFoldPages }

// add folds the accesses of instruction in (op, its lanes' addresses and
// operands); the caller flushed first when op is another operation.
func (c *combiner) add(in *trace.Inst, op engine.FoldOp, addrs, vals []uint64) {
	c.op = op
	id := memID{op.Space, op.Group}
	mi := c.lastMem
	if mi < 0 || id != c.lastID {
		var ok bool
		if mi, ok = c.memAt[id]; !ok {
			mi = len(c.mems)
			c.memAt[id] = mi
			c.mems = append(c.mems, foldMem{regions: map[uint64]*foldRegion{}})
		}
		c.lastID, c.lastMem = id, mi
	}
	m := &c.mems[mi]
	if m.static == nil || !m.op.SameOp(op) {
		m.static, m.group, m.op = in.Static, in.Group, op
	}
	c.lanes += uint64(len(addrs))
	c.fold(mi, addrs, vals)
}

// fold folds the lanes of memory instance mi at addrs, of operands vals,
// into its pages.
func (c *combiner) fold(mi int, addrs, vals []uint64) {
	m := &c.mems[mi]
	op := m.op
	kind, wide := op.Kind(), op.Size() == 8
	for i, a := range addrs {
		rg := m.last
		if rg == nil || a>>20 != m.lastKey {
			if rg = m.regions[a>>20]; rg == nil {
				rg = &foldRegion{}
				m.regions[a>>20] = rg
			}
			m.last, m.lastKey = rg, a>>20
		}
		pg := rg.pages[(a>>12)%foldRegionPages]
		if pg == nil {
			pg = c.newPage(mi, a>>12, rg)
		}
		w := (a & 4095) >> 2
		bit := uint64(1) << (w % 64)
		set := pg.set[w/64]&bit != 0
		pg.set[w/64] |= bit
		// A word not set holds 0 (newPage, flush): add, or and xor
		// need no test of the bit.
		v := uint32(vals[i])
		switch {
		case wide:
			v64 := vals[i]
			if set {
				v64 = op.Combine(uint64(pg.vals[w])|uint64(pg.vals[w+1])<<32, v64)
			}
			pg.vals[w], pg.vals[w+1] = uint32(v64), uint32(v64>>32)
		case kind == engine.FoldAdd:
			pg.vals[w] += v
		case kind == engine.FoldOr:
			pg.vals[w] |= v
		case kind == engine.FoldXor:
			pg.vals[w] ^= v
		case !set:
			pg.vals[w] = v
		default:
			pg.vals[w] = uint32(op.Combine(uint64(pg.vals[w]), vals[i]))
		}
	}
}

func (c *combiner) newPage(mi int, page uint64, rg *foldRegion) *foldPage {
	var pg *foldPage
	if n := len(c.free); n > 0 {
		pg, c.free = c.free[n-1], c.free[:n-1]
	} else {
		pg = &foldPage{}
	}
	pg.mem, pg.page, pg.reg = mi, page, rg
	rg.pages[page%foldRegionPages] = pg
	c.pages = append(c.pages, pg)
	return pg
}

// flush writes every pending fold to its partition's file as fold
// records, a memory instance at a time, words ascending.
func (c *combiner) flush(outs *outputs, pt *shard.Partitioner, sum *Summary) error {
	if len(c.pages) == 0 {
		return nil
	}
	slices.SortFunc(c.pages, func(a, b *foldPage) int { return cmp.Or(cmp.Compare(a.mem, b.mem), cmp.Compare(a.page, b.page)) })
	for at := 0; at < len(c.pages); {
		mi := c.pages[at].mem
		m := &c.mems[mi]
		wide := m.op.Size() == 8
		for ; at < len(c.pages) && c.pages[at].mem == mi; at++ {
			pg := c.pages[at]
			line, part := ^uint64(0), 0
			for j, s := range pg.set {
				for ; s != 0; s &= s - 1 {
					w := j*64 + bits.TrailingZeros64(s)
					a := pg.page<<12 | uint64(w)<<2
					if a>>7 != line { // a line is one partition's
						line, part = a>>7, pt.Of(m.op.Key, a)
					}
					v := uint64(pg.vals[w])
					pg.vals[w] = 0
					if wide {
						v |= uint64(pg.vals[w+1]) << 32
						pg.vals[w+1] = 0
					}
					c.addrs[part] = append(c.addrs[part], a)
					c.vals[part] = append(c.vals[part], v)
					if len(c.addrs[part]) == foldRecordWords {
						if err := c.write(outs, part, m, sum); err != nil {
							return err
						}
					}
				}
				pg.set[j] = 0
			}
			pg.reg.pages[pg.page%foldRegionPages] = nil
			c.free = append(c.free, pg)
		}
		for p := range c.addrs {
			if err := c.write(outs, p, m, sum); err != nil {
				return err
			}
		}
	}
	c.pages = c.pages[:0]
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
