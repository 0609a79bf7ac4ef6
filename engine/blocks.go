package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// The block path: the replay of a partition's split files (split.Source)
// a block of instructions at a time (trace.CapBlock). A split file's
// instruction carries only the lanes of its partition (a scattered warp's
// few) and, for one partition, the statistics of its row; the batch
// pipeline would give each a batch slot, its vectors copied, expanded and
// routed, a cost per instruction that every partition pays for nearly
// every instruction of the trace. Here each instruction's lane-elements
// are applied as they are read, in trace order and, within an
// instruction, in lane order then element order (OrderLane), with the
// same plans, fault checks and word operations as the batch path's
// general one (expandLanes, applySeg), a run of 32-bit one-source
// accesses queued and applied in the batch path's loops of records
// (valsQueue): the same memory, instruction rows, ops and faults, for
// work proportional to the lanes the partition owns and the instructions
// it holds a lane of.
//
// It runs when the source declares trace.CapBlock and the replay needs
// nothing per lane beyond memory and the instruction rows: no results
// (CapResults) or addresses table (CapAddresses), no WithExplore, no
// WithInterleave, the lane order (OrderLane). Any of those takes the batch
// path, the instructions read one at a time (Next): the same file, the
// same tables.

// blockPath reports whether a replay of src into sink takes the block path.
func (e *replayer) blockPath(src trace.Source, sink Sink) bool {
	o := &e.opts
	return src.Caps()&trace.CapBlock != 0 && sink.Caps()&(CapResults|CapAddresses) == 0 &&
		!o.explore && o.interleave == 0 && o.order == OrderLane
}

// blockRows is how many instruction rows the block path hands the sink at
// once.
const blockRows = 4096

// runBlocks is run for the block path: it replays src's blocks and
// directives in order, hands the rows and then the memory to sink, and
// neither commits nor aborts it.
func (e *replayer) runBlocks(ctx context.Context, src trace.Source, sink Sink) (Summary, error) {
	if e.ran {
		return Summary{}, errors.New("engine: run called twice")
	}
	e.ran = true
	start := time.Now()
	var sum Summary
	// b holds one instruction at a time (batch.alone) for the plans'
	// formulas, and a directive's inits; its partition fields are the
	// batch path's.
	b := &batch{partitioned: e.opts.parts > 1, pt: &e.pt, part: e.opts.part}
	// The instruction in hand, on the heap once: the plans' element hooks
	// take it through func values, to which a local's address would
	// escape, an allocation an instruction.
	b.cur = make([]xinst, 1)
	q := &valsQueue{}
	cur := e.mem.Cursor()
	rows := make([]InstStat, 0, blockRows)
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		err := sink.Instructions(rows)
		rows = rows[:0]
		return err
	}
	// The static of the last row alone and its plan's (planOf's, a call
	// a row otherwise).
	var rowStatic, rowSt *trace.Static
	for {
		if err := ctx.Err(); err != nil {
			return Summary{}, fmt.Errorf("replay stopped: %w", err)
		}
		blk, dir, err := src.NextBlock()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Summary{}, err
		}
		if dir != nil {
			if dir.Dir == nil {
				return Summary{}, fmt.Errorf("instruction %d: a record outside a block of a source that declares trace.CapBlock", dir.Seq)
			}
			if f := dir.Dir.Fold; f != nil {
				if err := e.applyFold(&cur, q, f, dir.Seq); err != nil {
					return Summary{}, err
				}
				sum.FoldedWords += uint64(len(f.Addrs))
				if used := uint64(e.mem.Pages()) * shard.PageBytes; used > e.opts.maxMemory {
					return Summary{}, fmt.Errorf("by the folds after instruction %[2]d the replay holds %[1]d MiB of simulated memory and address statistics, over the %[3]d MiB limit (WithMaxMemory)",
						used>>20, dir.Seq, e.opts.maxMemory>>20)
				}
				continue
			}
			// A .region applies to the plans made from now on; a .init
			// writes at once, after the instructions before it.
			e.directive(b, dir.Dir)
			if len(b.inits) > 0 {
				q.flush(e.mem)
				b.partKeys = e.partKeys
				err := e.applyInits(b)
				clear(b.inits)
				b.inits, b.initBytes = b.inits[:0], 0
				if err != nil {
					return Summary{}, err
				}
			}
			continue
		}
		for i := range blk.Insts {
			in := &blk.Insts[i]
			if pi := in.Part; in.Mask == 0 && pi != nil {
				// No lane of this partition (a row alone: a combined
				// split's folded instruction, or one whose lanes are all
				// elsewhere): no access, no fault, no lane; its row when
				// it is this partition's (blockInst's case of mask 0, a
				// row at a time without its copies).
				if !pi.Row {
					continue
				}
				if in.Static != rowStatic {
					p, err := e.planOf(in)
					if err != nil {
						return Summary{}, err
					}
					rowStatic, rowSt = in.Static, p.st
				}
				// Each field stored in the row where it lies: a row built
				// apart and copied was read back 16 bytes at a time from
				// the field stores of 4 and 8 that made it, a store
				// forwarding missed each (a third of the block path's
				// time in a partition of rows alone).
				rows = rows[:len(rows)+1] // (flushed at blockRows: room)
				r := &rows[len(rows)-1]
				r.Seq, r.Static, r.Group, r.Warp = in.Seq, rowSt, in.Group, in.Warp
				r.Lanes, r.Addresses, r.MaxConflict, r.Sectors = pi.Lanes, pi.Addresses, pi.MaxConflict, pi.Sectors
				r.Faults, r.CASFailed = 0, 0
				if len(rows) == blockRows {
					if err := flush(); err != nil {
						return Summary{}, err
					}
				}
				continue
			}
			row, keep, err := e.blockInst(b, &cur, q, in, &sum)
			if err != nil {
				return Summary{}, err
			}
			if keep {
				rows = append(rows, row)
				if len(rows) == blockRows {
					if err := flush(); err != nil {
						return Summary{}, err
					}
				}
			}
		}
		sum.Instructions += uint64(len(blk.Insts))
		sum.BlockInsts += uint64(len(blk.Insts))
		e.mem.Populate()
		if used := uint64(e.mem.Pages()) * shard.PageBytes; used > e.opts.maxMemory {
			return Summary{}, fmt.Errorf("by instruction %[2]d the replay holds %[1]d MiB of simulated memory and address statistics, over the %[3]d MiB limit (WithMaxMemory)",
				used>>20, blk.Insts[len(blk.Insts)-1].Seq, e.opts.maxMemory>>20)
		}
		if e.opts.progress != nil {
			s := sum
			s.Elapsed = time.Since(start)
			e.opts.progress(s)
		}
	}
	q.flush(e.mem)
	if err := flush(); err != nil {
		return Summary{}, err
	}
	words, err := e.emitMemory(sink)
	if err != nil {
		return Summary{}, err
	}
	sum.Words = words
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// blockInst applies instruction in of a block: each of its active lanes
// in lane order, each lane's elements in order, those of this partition
// only; and returns its instructions row and whether the partition writes
// one (batch.rows: the row's partition always, another only for its own
// faults or failed compare-and-swaps).
func (e *replayer) blockInst(b *batch, cur *shard.Cursor, q *valsQueue, in *trace.Inst, sum *Summary) (InstStat, bool, error) {
	pi := in.Part
	if pi == nil {
		return InstStat{}, false, &InstError{Seq: in.Seq, Text: in.Static.Text, Err: errors.New("an instruction of a split source without its split fields")}
	}
	p, err := e.planOf(in)
	if err != nil {
		return InstStat{}, false, err
	}
	st := p.st
	mem := e.memOf(st.Space, in.Group)
	var faults, failed uint32
	switch {
	case in.Mask == 0:
		// No lane of this partition (a row alone: a combined split's
		// folded instruction, or one whose lanes are all elsewhere): no
		// access, nothing to flush before it.
	case st.Elems == 1 && p.size <= 8 && p.elemAddr == nil && p.elemFault == nil:
		faults, failed, err = e.blockScalar(cur, q, in, p, mem)
	default:
		q.flush(e.mem) // it applies at once
		faults, failed, err = e.blockElems(b, cur, in, p, mem)
	}
	if err != nil {
		return InstStat{}, false, err
	}
	lanes := uint32(bits.OnesCount32(in.Active()))
	sum.Lanes += uint64(lanes)
	sum.Faults += uint64(faults)
	sum.LaneOps += uint64(lanes) * uint64(st.Elems)
	row := InstStat{Seq: in.Seq, Static: st, Group: in.Group, Warp: in.Warp, Lanes: pi.Lanes, Faults: faults, CASFailed: failed}
	switch {
	case pi.Row:
		row.Addresses, row.MaxConflict, row.Sectors = pi.Addresses, pi.MaxConflict, pi.Sectors
	case faults == 0 && failed == 0:
		return InstStat{}, false, nil
	}
	return row, true, nil
}

// blockSrc is where a source of a scalar instruction of a block comes
// from: an immediate (imm), a compact list (the k-th lane of the mask's
// value), or a vector read at the lane (trace.Static.ValueIndex).
type blockSrc struct {
	v       *trace.Vector
	src     trace.Src
	compact bool
}

func newBlockSrc(in *trace.Inst, srcs []trace.Src) blockSrc {
	if srcs == nil {
		return blockSrc{src: trace.Src{In: -1}}
	}
	s := blockSrc{src: srcs[0]}
	if s.src.In >= 0 {
		s.v = &in.Vals[s.src.In]
		s.compact = trace.BlockCompact(in, s.src.In)
	}
	return s
}

// at is the source's value at lane, the k-th lane of the mask.
func (s *blockSrc) at(st *trace.Static, lane, k int) (lo, hi uint64) {
	switch {
	case s.v == nil:
		return s.src.Imm, s.src.Hi
	case s.compact:
		return s.v.List[k], 0
	}
	i := st.ValueIndex(s.src, lane)
	return s.v.Lo(i), s.v.Hi(i)
}

// blockScalar is blockInst's path for an instruction of one element a lane
// of at most 8 bytes, without element hooks: the Static's address formula
// (plan.addr) and fault checks (plan.checkElem) on the instruction's
// values as the block holds them, compact lists read by the lane's rank in
// the mask. Its lanes are this partition's (the split sent it only those).
func (e *replayer) blockScalar(cur *shard.Cursor, q *valsQueue, in *trace.Inst, p *plan, mem uint32) (faults, failed uint32, err error) {
	st := p.st
	active := in.Active()
	mask := in.Mask & st.ExecMask()
	var av *trace.Vector
	compactA := false
	if st.Addr >= 0 {
		av = &in.Vals[st.Addr]
		compactA = trace.BlockCompact(in, st.Addr)
	}
	bs, cs := newBlockSrc(in, p.b), newBlockSrc(in, p.c)
	scale, imm, pitch, amask := uint64(st.AddrScale), uint64(st.AddrImm)+uint64(st.ElemOff(0)), uint64(st.LanePitch), st.AddrMask()
	fl := p.flags()
	cas := isCAS(p.kind)
	queued := p.size == 4 && p.c == nil && vals32(p.kind)
	if !queued {
		q.flush(e.mem) // it applies at once
	}
	k := -1
	for m := mask; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		k++
		if active&(1<<lane) == 0 {
			continue
		}
		var base uint64
		switch {
		case av == nil:
		case st.AddrUniform:
			base = av.Lo(0)
		case compactA:
			base = av.List[k]
		default:
			base = av.Lo(lane)
		}
		addr := (scale*base + imm + uint64(lane)*pitch) & amask
		f := FaultNone
		if p.vecAlign != 0 && addr%p.vecAlign != 0 {
			f = FaultMisaligned
		} else {
			f = p.check(addr)
		}
		switch {
		case p.status:
			continue // no access, and no fault counted (statusRow)
		case f != FaultNone:
			faults++
			if e.opts.strict {
				return 0, 0, strictFault(in, lane, f, addr)
			}
			continue
		}
		bv, bh := bs.at(st, lane, k)
		cv, ch := cs.at(st, lane, k)
		bv, cv = bv>>p.srcShift, cv>>p.srcShift
		en := cur.Resolve(mem, addr)
		if en == 0 {
			return 0, 0, errMemoryFull
		}
		word := en.WordRef(addr)
		if queued {
			q.push(e.mem, p.kind, rec{word: word, slot: uint32(bv)})
			continue
		}
		pg := e.mem.Page(word >> (shard.PageShift - 2))
		ret, retHi := applyWord(pg, word&(shard.PageWords-1), uint32(addr&3), p.kind, p.size, fl, bv, cv, bh, ch)
		if cas && !casMatched(p.kind, p.size, casOld(p, ret), retHi, bv, bh) {
			failed++
		}
	}
	return faults, failed, nil
}

// valsQueue holds the block path's latest run of 32-bit accesses of one
// operation with one source and nothing returned (a scattered add, a BFS's
// min), as (word, source) records, and applies them in order, in the
// loops the batch path applies such records with (add32Vals: on amd64 an
// assembly loop that keeps many misses under way at once; applyVals32):
// a partition's words lie all over the simulated memory, and a record
// applied at once waits for its word's miss. Any other access, an .init
// and the memory table flush it first, so every access applies in trace
// order.
type valsQueue struct {
	k    kind
	recs []rec
}

// valsQueueLen is how many records the queue applies at once.
const valsQueueLen = 4096

// vals32 reports whether a 32-bit operation of kind k with one source has
// a loop of records (add32Vals, applyVals32).
func vals32(k kind) bool {
	switch k {
	case kAdd, kExch, kMinU, kMaxU, kMinS, kMaxS, kAnd, kOr, kXor, kFAddF32, kFAddF32FTZ:
		return true
	}
	return false
}

// push queues record x of an operation of kind k.
func (q *valsQueue) push(mem *shard.Memory, k kind, x rec) {
	if len(q.recs) > 0 && k != q.k || len(q.recs) == valsQueueLen {
		q.flush(mem)
	}
	q.k = k
	q.recs = append(q.recs, x)
}

// flush applies the queued records, in order.
func (q *valsQueue) flush(mem *shard.Memory) {
	if len(q.recs) == 0 {
		return
	}
	if q.k == kAdd {
		add32Vals(mem, q.recs)
	} else if !applyVals32(mem, q.recs, q.k) {
		for _, x := range q.recs { // (vals32 names only kinds with a loop)
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Words[w] = op32(q.k, c.Words[w], x.slot, 0)
			c.Touched[w/64] |= 1 << (w % 64)
		}
	}
	q.recs = q.recs[:0]
}

// strictFault is WithStrict's error at a faulting lane.
func strictFault(in *trace.Inst, lane int, f Fault, addr uint64) error {
	return &InstError{Seq: in.Seq, Line: in.Line, Text: in.Static.Text,
		Err: fmt.Errorf("lane %d: %s access at 0x%x (WithStrict stops at the first fault)", lane, f, addr)}
}

// blockElems is blockInst's general path (several elements a lane,
// 16-byte accesses, element hooks): the instruction as the batch path
// holds it (batch.alone, its compact lists spread over the warp), each
// element's address and faults by its plan, as expandLanes does.
func (e *replayer) blockElems(b *batch, cur *shard.Cursor, in *trace.Inst, p *plan, mem uint32) (faults, failed uint32, err error) {
	st := p.st
	in = b.spread(in)
	b.partKeys = e.partKeys
	bi := &b.cur[0]
	*bi = b.alone(in, p)
	bi.mem = mem
	// A lane's one element is this partition's by construction (the split
	// sent it here); a lane of several may have others elsewhere.
	check := b.partitioned && st.Elems > 1
	fl := p.flags()
	cas := isCAS(p.kind)
	for m := bi.active; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		for el := range st.Elems {
			addr := p.addr(bi, lane, el)
			if check && !b.local(mem, addr) {
				continue // another partition's element
			}
			f := p.checkElem(bi, lane, el, addr)
			switch {
			case p.status:
				continue // no access, and no fault counted (statusRow)
			case f != FaultNone:
				faults++
				if e.opts.strict {
					return 0, 0, strictFault(in, lane, f, addr)
				}
				continue
			}
			var bv, bh, cv, ch uint64
			if p.b != nil {
				bv, bh = bi.Value(p.b[el], lane)
			}
			if p.c != nil {
				cv, ch = bi.Value(p.c[el], lane)
			}
			bv, cv = bv>>p.srcShift, cv>>p.srcShift
			en := cur.Resolve(mem, addr)
			if en == 0 {
				return 0, 0, errMemoryFull
			}
			word := en.WordRef(addr)
			pg := e.mem.Page(word >> (shard.PageShift - 2))
			ret, retHi := applyWord(pg, word&(shard.PageWords-1), uint32(addr&3), p.kind, p.size, fl, bv, cv, bh, ch)
			if cas && !casMatched(p.kind, p.size, casOld(p, ret), retHi, bv, bh) {
				failed++
			}
		}
	}
	return faults, failed, nil
}

// spread returns in with its compact lists (trace.BlockCompact) spread
// over all the input's lanes, zero outside its mask, in storage of b's
// (b.full, b.fullVals, b.fullLists); in itself when it has none.
func (b *batch) spread(in *trace.Inst) *trace.Inst {
	any := false
	for j := range in.Vals {
		any = any || trace.BlockCompact(in, j)
	}
	if !any {
		return in
	}
	st := in.Static
	b.full = *in
	b.fullVals = append(b.fullVals[:0], in.Vals...)
	b.full.Vals = b.fullVals
	b.fullLists = b.fullLists[:0]
	mask := in.Mask & st.ExecMask()
	for j := range in.Vals {
		if !trace.BlockCompact(in, j) {
			continue
		}
		n := len(b.fullLists)
		b.fullLists = append(b.fullLists, make([]uint64, st.ExecSize)...)
		k := 0
		for m := mask; m != 0; m &= m - 1 {
			b.fullLists[n+bits.TrailingZeros32(m)] = in.Vals[j].List[k]
			k++
		}
	}
	n := 0
	for j := range in.Vals {
		if trace.BlockCompact(in, j) {
			b.fullVals[j].List = b.fullLists[n : n+st.ExecSize : n+st.ExecSize]
			n += st.ExecSize
		}
	}
	return &b.full
}

// errFoldBatch is the batch path's error at a fold record: folded
// accesses have no lanes to give results, addresses or another order.
var errFoldBatch = errors.New("a fold record (a split that combined its accesses: replay split -tables without results or addresses) on the batch path: only a replay that writes no per-lane table (no results or addresses, no -explore, -interleave or -order) can replay it; split again with the -tables this replay writes")

// applyFold applies a combined split file's fold record (trace.Fold): at
// each of its words, its static's operation once with the fold of the
// operands, as blockScalar applies a lane's: a 32-bit add in place
// (foldAdd32), another 32-bit operation in the loops of records. The split folded only lanes that could not fault with
// the regions it knew of; a word that faults here was made out of bounds
// by a .region of an earlier slice, which the split could not see, and is
// an error rather than a fault that no lane would count.
func (e *replayer) applyFold(cur *shard.Cursor, q *valsQueue, f *trace.Fold, seq uint64) error {
	in := trace.Inst{Seq: seq, Static: f.Static, Group: f.Group}
	p, err := e.planOf(&in)
	if err != nil {
		return err
	}
	if !p.foldable() {
		return &InstError{Seq: seq, Text: f.Static.Text, Err: errors.New("a fold record of an operation that does not fold")}
	}
	mem := e.memOf(p.st.Space, f.Group)
	if p.size == 4 && p.kind == kAdd {
		return e.foldAdd32(cur, q, p, mem, f, seq)
	}
	if p.size == 4 && vals32(p.kind) {
		return e.foldVals32(cur, q, p, mem, f, seq)
	}
	q.flush(e.mem)
	fl := p.flags()
	for i, addr := range f.Addrs {
		if flt := p.check(addr); flt != FaultNone {
			return foldFault(f, seq, addr, flt)
		}
		en := cur.Resolve(mem, addr)
		if en == 0 {
			return errMemoryFull
		}
		word := en.WordRef(addr)
		pg := e.mem.Page(word >> (shard.PageShift - 2))
		applyWord(pg, word&(shard.PageWords-1), uint32(addr&3), p.kind, p.size, fl, f.Vals[i], 0, 0, 0)
	}
	return nil
}

// foldVals32 is applyFold of a 32-bit operation with a loop of records
// (vals32): its words' records queued in one loop, in a local slice (no
// store through q a word), the queue applied each time it fills.
func (e *replayer) foldVals32(cur *shard.Cursor, q *valsQueue, p *plan, mem uint32, f *trace.Fold, seq uint64) error {
	if len(q.recs) > 0 && q.k != p.kind {
		q.flush(e.mem)
	}
	q.k = p.kind
	recs := q.recs
	vals := f.Vals[:len(f.Addrs)]
	// The words ascend: when the first and the last lie in one region,
	// so do all, and only their alignment is checked; and a word on the
	// page of the one before takes its entry.
	in := len(f.Addrs) > 0 && p.allIn(f.Addrs[0], f.Addrs[len(f.Addrs)-1])
	var en shard.Entry
	page := ^uint64(0)
	for i, addr := range f.Addrs {
		if !in || addr&3 != 0 {
			if flt := p.check(addr); flt != FaultNone {
				q.recs = recs
				return foldFault(f, seq, addr, flt)
			}
		}
		if addr>>shard.PageShift != page {
			if en = cur.Resolve(mem, addr); en == 0 {
				q.recs = recs
				return errMemoryFull
			}
			page = addr >> shard.PageShift
		}
		recs = append(recs, rec{word: en.WordRef(addr), slot: uint32(vals[i])})
		if len(recs) == valsQueueLen {
			q.recs = recs
			q.flush(e.mem)
			recs = q.recs
		}
	}
	q.recs = recs
	return nil
}

// foldAdd32 is applyFold of a 32-bit add: the queue applied first (its
// records come before the fold), then each word's sum stored at once, a
// page's chunk looked up once. A fold's words ascend, a partition's
// lines of a page one after another: the loads follow each other through
// memory, which the processor fetches ahead of them, so that the loop of
// records (add32Vals), which asks for each word's line ahead for words
// all over memory, would only add a record stored and read back a word.
func (e *replayer) foldAdd32(cur *shard.Cursor, q *valsQueue, p *plan, mem uint32, f *trace.Fold, seq uint64) error {
	q.flush(e.mem)
	vals := f.Vals[:len(f.Addrs)]
	// As foldVals32: when the first and the last word lie in one region,
	// so do all, and only their alignment is checked.
	in := len(f.Addrs) > 0 && p.allIn(f.Addrs[0], f.Addrs[len(f.Addrs)-1])
	var c *shard.Chunk
	var base uint32 // the page's first word in c
	page := ^uint64(0)
	for i, addr := range f.Addrs {
		if !in || addr&3 != 0 {
			if flt := p.check(addr); flt != FaultNone {
				return foldFault(f, seq, addr, flt)
			}
		}
		if addr>>shard.PageShift != page {
			en := cur.Resolve(mem, addr)
			if en == 0 {
				return errMemoryFull
			}
			page = addr >> shard.PageShift
			ref := en.WordRef(page << shard.PageShift)
			c, base = e.mem.Chunk(ref), ref%shard.ChunkWords
		}
		w := base + uint32(addr>>2)&(shard.PageWords-1)
		c.Set(w, c.Words[w]+uint32(vals[i]))
	}
	return nil
}

// foldFault is applyFold's error at a word that faults.
func foldFault(f *trace.Fold, seq, addr uint64, flt Fault) error {
	return &InstError{Seq: seq, Text: f.Static.Text, Err: fmt.Errorf("a folded access at 0x%x is %s under the regions declared before it, which the split task of its slice did not know (a .region in an earlier slice): split this trace again without combining (replay split -tables with the results table)", addr, flt)}
}
