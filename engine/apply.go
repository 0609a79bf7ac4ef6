package engine

import (
	"github.com/gpureplay/replay/shard"
)

// The apply stage: each owner performs the records routed to it, range by
// range, and the results go back to their rows.

// apply performs every record owner o received, range by range, each
// range's records in the order expand made them, which is trace order.
// With a tracker, the records are also counted for the addresses table, by
// the same owner, in the same order.
func (b *batch) apply(o int, mem *shard.Memory, t *addrTracker) {
	for r := range b.out {
		b.applyRoute(o, &b.out[r][o], mem, t)
	}
	if t != nil && t.async == nil {
		t.count(o, b)
	}
}

// applyRoute performs a route's segments in order, then collects them
// for owner o's addresses table, if there is one.
func (b *batch) applyRoute(o int, rt *route, mem *shard.Memory, t *addrTracker) {
	if b.oneLoop && allVals(rt.segs) {
		// Additions that commute, each record its word and addend: one
		// loop over them all, whatever instruction they came from.
		add32Vals(mem, rt.recs)
	} else if b.retAdds && !b.noResults && b.slotSegs(rt.segs) {
		// 32-bit adds of an addend a lane, each returning the word's old
		// value (a scattered atomicAdd with the results table): one loop
		// over them all, whatever instruction they came from, asking for
		// the words ahead itself (add32Slots').
		mem.AddSlots(wordAdds(rt.recs), slotMask, b.opB, b.vals)
	} else {
		// One xinst, its record copied in per segment and its plan set
		// (as expand's): built whole per segment, it went through a
		// temporary on the stack whose 8-byte stores the copy's 16-byte
		// loads could not forward from.
		x := xinst{vecs: b.vecs, arena: b.arena}
		asked := 0 // the records whose words were asked for: rt.recs[:asked]
		if mem.Pages() <= cachedPages {
			// A memory this small stays in the caches (a spinlock's
			// locks, a queue's counter): nothing to ask for.
			asked = len(rt.recs)
		}
		// A CAS instruction's failed lanes, added to its statistics row
		// once its segments are done (an atomic add on a row the expanding
		// core wrote, once an instruction rather than once a segment).
		failPos, failed := uint32(0), uint32(0)
		xAt := ^uint32(0) // the instruction x holds
		for k, s := range rt.segs {
			hi := uint32(len(rt.recs))
			if k+1 < len(rt.segs) {
				hi = rt.segs[k+1].lo
			}
			if want := min(int(hi)+applyAhead, len(rt.recs)); asked < want {
				mem.PrefetchWords(wordAdds(rt.recs[asked:want]))
				asked = want
			}
			if s.pre {
				b.applyPrefix(o, mem, s.inst, s, rt.recs[s.lo:hi])
				continue
			}
			in := &b.insts[s.inst]
			var f uint32
			if p := b.plans[in.pi]; s.counts && isLock32(p, in) {
				// A spinlock's acquire or release: read from the record
				// in place, not copied into x.
				f = applyLocks32(mem, p, in, rt.recs[s.lo:hi])
			} else {
				if s.inst != xAt {
					// (An instruction's records on several words, a
					// segment each, share the copy: applySeg writes none
					// of x.)
					x.binst = *in
					x.plan = p
					xAt = s.inst
				}
				f = b.applySeg(mem, &x, s, rt.recs[s.lo:hi])
			}
			if f > 0 {
				if failed > 0 && failPos != in.pos {
					b.addCASFailed(failPos, failed)
					failed = 0
				}
				failPos, failed = in.pos, failed+f
			}
		}
		b.addCASFailed(failPos, failed)
	}
	if t != nil {
		t.collect(o, b, rt)
	}
}

// slotSegs reports whether every segment of a route is add32Slots' in a
// batch of retAdds: a record a lane, an addend a lane (not one value,
// not a run, not a prefix run), so that the route's records are (word,
// slot) pairs to apply in order as they stand.
func (b *batch) slotSegs(segs []seg) bool {
	for _, s := range segs {
		if s.pre || s.counts || s.vals || s.n > 0 || b.insts[s.inst].bUni {
			return false
		}
	}
	return true
}

// applyAhead is how many records ahead of the segment it applies
// applyRoute asks for their words (shard.Memory.PrefetchWords): the loops
// of a segment (a warp's 32 lanes, at most a few hundred elements) are too
// short to keep more than a few of their misses under way by themselves,
// and a replay that returns results pushes the words out of the caches
// between batches.
const applyAhead = 64

// cachedPages is the most pages a memory may have for applyRoute to take
// its words as in the caches and ask for none ahead: 256 KiB, within a
// core's L2. Asking costs a few instructions a record, which on a
// spinlock's few locks bought nothing (3% of its lean replay).
const cachedPages = 64

// applySeg performs one instruction's records, with the loop its
// operation, width and sources call for, and returns how many of its
// lanes' compare-and-swaps failed.
func (b *batch) applySeg(mem *shard.Memory, bi *xinst, s seg, recs []rec) (casFailed uint32) {
	p := bi.plan
	noDst := !p.st.HasDst || p.noRet || b.noResults
	add32ok := p.add32()
	switch {
	case s.counts:
		return b.applyCounts(mem, bi, recs)
	case s.n > 0 && s.step == 1 && add32ok:
		// A coalesced atomicAdd: consecutive words (of one page), in one
		// tight loop, in the chunk's words.
		x := recs[0]
		c := mem.Chunk(x.word)
		slot0, w0, n := int(x.slot&slotMask), int(x.word%shard.ChunkWords), int(s.n)
		words := c.Words[w0 : w0+n : w0+n]
		touchRange(c.Touched[:], w0, n)
		var res []uint64 // what the lanes get back, unless nothing returns
		if !noDst {
			res = b.vals[slot0 : slot0+n : slot0+n]
		}
		if bi.bUni {
			addRunUniform(words, uint32(bi.bVal), res)
		} else {
			addRunSlots(words, b.opB[slot0:slot0+n:slot0+n], res)
		}
		return 0
	case s.n > 0 && s.step == 0:
		return b.applyUniform(mem, bi, recs[0], s.n, noDst)
	case s.n > 0:
		return b.applyRun(mem, bi, recs[0], s, noDst)
	case s.vals && add32ok:
		add32Vals(mem, recs)
		return 0
	case add32ok && bi.bUni:
		add32(mem, recs, uint32(bi.bVal), b.vals, noDst)
		return 0
	case add32ok:
		add32Slots(mem, recs, b.opB, b.vals, noDst)
		return 0
	case s.vals && p.size == 4 && applyVals32(mem, recs, p.kind):
		return 0
	}
	fl := p.flags()
	cas, failed := isCAS(p.kind), uint32(0)
	for _, x := range recs {
		slot := x.slot & slotMask
		bv, cv := b.src(&bi.binst, slot, s.vals, x.slot)
		var bh, ch uint64
		if p.size == 16 {
			bh, ch = b.opBhi[slot], b.opChi[slot]
		}
		pg := mem.Page(x.word >> (shard.PageShift - 2))
		byteOff := x.slot >> slotBits
		if s.vals {
			byteOff = 0
		}
		ret, retHi := applyWord(pg, x.word&(shard.PageWords-1), byteOff, p.kind, p.size, fl, bv, cv, bh, ch)
		if !noDst {
			b.vals[slot], b.valsHi[slot] = ret, retHi
		}
		if cas && !casMatched(p.kind, p.size, casOld(p, ret), retHi, bv, bh) {
			failed++
		}
	}
	return failed
}

// applyCounts performs a counts segment (seg.counts): each record's lanes
// on its word, as a warp on that word alone (applyUniform's closed forms;
// a 32-bit CAS's and exch's: applyLocks32). It returns the failed
// compare-and-swaps.
func (b *batch) applyCounts(mem *shard.Memory, bi *xinst, recs []rec) (casFailed uint32) {
	for _, x := range recs {
		casFailed += b.applyUniform(mem, bi, rec{word: x.word, slot: x.slot &^ slotMask}, x.slot&slotMask, true)
	}
	return casFailed
}

// isLock32 reports whether a counts segment of in, of plan p, is a 32-bit
// CAS or exch of one value a source (a spinlock's acquire or release),
// which applyLocks32 performs.
func isLock32(p *plan, in *binst) bool {
	return p.size == 4 && p.flags() == 0 && in.bUni && in.cUni && (p.kind == kCAS || p.kind == kExch)
}

// applyLocks32 performs a counts segment of a 32-bit CAS or exch (isLock32)
// in a loop of its own, its records read in place and its page found once
// (routeGroups routes a warp's addresses of one page): applyUniform's
// closed forms, nothing returned. It returns the failed compare-and-swaps.
func applyLocks32(mem *shard.Memory, p *plan, in *binst, recs []rec) (casFailed uint32) {
	if len(recs) == 0 {
		return 0
	}
	pg := mem.Page(recs[0].word >> (shard.PageShift - 2))
	v, nw := uint32(in.bVal), uint32(in.cVal)
	if p.kind == kExch {
		for _, x := range recs {
			wi := x.word & (shard.PageWords - 1)
			pg.Words[wi] = v
			pg.Touch(wi)
		}
		return 0
	}
	for _, x := range recs {
		wi := x.word & (shard.PageWords - 1)
		n := x.slot & slotMask
		if w := &pg.Words[wi]; *w == v {
			*w = nw
			n = 0
			if nw != v {
				n = x.slot&slotMask - 1
			}
		}
		pg.Touch(wi)
		casFailed += n
	}
	return casFailed
}

// applyRun performs a run segment other than a coalesced 32-bit add
// (applySeg's): lane k on the word s.step*k words from x's, in lane order.
// It returns its failed compare-and-swaps.
func (b *batch) applyRun(mem *shard.Memory, bi *xinst, x rec, s seg, noDst bool) (casFailed uint32) {
	p := bi.plan
	slot0 := x.slot & slotMask
	pg := mem.Page(x.word >> (shard.PageShift - 2))
	fl := p.flags()
	wi := int(x.word & (shard.PageWords - 1))
	cas, failed := isCAS(p.kind), uint32(0)
	for k := uint32(0); k < s.n; k++ {
		slot := slot0 + k
		bv, cv := b.src(&bi.binst, slot, false, 0)
		ret, retHi := applyWord(pg, uint32(wi), 0, p.kind, p.size, fl, bv, cv, 0, 0)
		if !noDst {
			b.vals[slot], b.valsHi[slot] = ret, retHi
		}
		if cas && !casMatched(p.kind, p.size, casOld(p, ret), retHi, bv, 0) {
			failed++
		}
		wi += int(s.step)
	}
	return failed
}

// addRunUniform adds v to each of words (a coalesced atomicAdd of one
// value), and stores each old value in res unless res is nil.
func addRunUniform(words []uint32, v uint32, res []uint64) {
	if res == nil {
		for k := range words {
			words[k] += v
		}
		return
	}
	res = res[:len(words)]
	for k, old := range words {
		words[k] = old + v
		res[k] = uint64(old)
	}
}

// addRunSlots adds ops[k] to words[k] (a coalesced atomicAdd of per-lane
// values), and stores each old value in res unless res is nil.
func addRunSlots(words []uint32, ops, res []uint64) {
	ops = ops[:len(words)]
	if res == nil {
		for k := range words {
			words[k] += uint32(ops[k])
		}
		return
	}
	res = res[:len(words)]
	for k, old := range words {
		words[k] = old + uint32(ops[k])
		res[k] = uint64(old)
	}
}

// add32 is the commonest loop: 32-bit adds of one value (atomicAdd of a
// constant: histograms, counters). Like add32Vals and add32Slots, it finds
// each record's word in its chunk (shard.Memory.Chunk), with no page in
// between: one load to the chunk, then word and bit indexed directly. Its
// words are mostly written before (a histogram's bins), so it marks them
// with Chunk.Mark, which stores only a new bit (BenchmarkReplay/histogram).
// add32Slots, whose words are
// scattered, marks only a zero sum.
func add32(mem *shard.Memory, recs []rec, v uint32, vals []uint64, noDst bool) {
	if noDst {
		for _, x := range recs {
			c := mem.Chunk(x.word)
			w := x.word % shard.ChunkWords
			c.Words[w] += v
			c.Mark(w)
		}
		return
	}
	for _, x := range recs {
		c := mem.Chunk(x.word)
		w := x.word % shard.ChunkWords
		old := c.Words[w]
		c.Words[w] = old + v
		c.Mark(w)
		vals[x.slot&slotMask] = uint64(old)
	}
}

// add32Vals is add32 with a value per lane carried in the records, and
// nothing returned (scattered updates in a lean replay). Such a record is
// a shard.WordAdd, word and addend, in the same 8 bytes (TestRecIsWordAdd),
// so the records go to shard.Memory.AddWords as they are: on amd64 a loop
// in assembly that keeps many of the misses of scattered words under way
// at once (shard/add_amd64.s).
func add32Vals(mem *shard.Memory, recs []rec) {
	mem.AddWords(wordAdds(recs))
}

// applyVals32 performs a vals segment (a (word, source) record a lane,
// nothing returned, one second source if any) of a 32-bit operation other
// than add in a loop of its own, the operation chosen once (a BFS's min
// relaxations, a float reduction's adds, scattered flags): what applySeg's
// general loop does record by record, without reading the instruction's
// sources, the page and the width again each time. It reports false, having
// done nothing, for an operation it has no loop for (CAS, whose failures
// are counted, and the rarer ones). As add32Slots, it marks a word
// written only where it leaves 0 there: a word is written when it is
// non-zero or marked (shard.Page), and the mark was a second line at
// random a lane, in the bitmap beside the words (a BFS's relaxations).
func applyVals32(mem *shard.Memory, recs []rec, k kind) bool {
	switch k {
	case kExch:
		for _, x := range recs {
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Set(w, x.slot)
		}
	case kMinU:
		for _, x := range recs {
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Set(w, min(c.Words[w], x.slot))
		}
	case kMaxU:
		for _, x := range recs {
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Set(w, max(c.Words[w], x.slot))
		}
	case kMinS:
		for _, x := range recs {
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Set(w, uint32(min(int32(c.Words[w]), int32(x.slot))))
		}
	case kMaxS:
		for _, x := range recs {
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Set(w, uint32(max(int32(c.Words[w]), int32(x.slot))))
		}
	case kAnd:
		for _, x := range recs {
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Set(w, c.Words[w]&x.slot)
		}
	case kOr:
		for _, x := range recs {
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Set(w, c.Words[w]|x.slot)
		}
	case kXor:
		for _, x := range recs {
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Set(w, c.Words[w]^x.slot)
		}
	case kFAddF32, kFAddF32FTZ, kFAddF32Intel:
		for _, x := range recs {
			c, w := mem.Chunk(x.word), x.word%shard.ChunkWords
			c.Set(w, fop32(k, c.Words[w], x.slot, 0))
		}
	default:
		return false
	}
	return true
}

// add32Slots is add32 with a value per lane (scattered updates). A word
// is written when it is non-zero or marked (shard.Page), so, as
// shard.Memory.AddWords, it marks only a word whose sum is zero: marking
// every word was a second access at random per lane, to the bitmap beside
// the words, and when the batches of a replay that returns results had
// pushed the words and bitmaps out of the caches (a uniform-1Mi replay
// with the results table), both missed; the mark only on a zero sum, and
// the words asked for ahead (applyRoute), leave one miss, overlapped
// (BenchmarkReplay/uniform-1Mi/results). Returning values, it is
// shard.Memory.AddSlots, which on amd64 asks for the words ahead itself;
// a route of nothing else takes AddSlots once (applyRoute).
func add32Slots(mem *shard.Memory, recs []rec, opB, vals []uint64, noDst bool) {
	if noDst {
		for _, x := range recs {
			c := mem.Chunk(x.word)
			w := x.word % shard.ChunkWords
			c.Set(w, c.Words[w]+uint32(opB[x.slot&slotMask]))
		}
		return
	}
	mem.AddSlots(wordAdds(recs), slotMask, opB, vals)
}

// touchRange marks words w0..w0+n-1 written in touched, a bitmap of
// words (bit w%64 of touched[w/64]), 64 at a time.
func touchRange(touched []uint64, w0, n int) {
	for n > 0 {
		i, b := w0>>6, w0&63
		k := min(n, 64-b)
		touched[i] |= (^uint64(0) >> (64 - k)) << b
		w0, n = w0+k, n-k
	}
}

// applyUniform performs a warp whose n lanes all hit one address, in lane
// order. Where nothing returns and the sources are one value, the n
// applications have a closed form: n additions of b are one addition of
// n*b (integer arithmetic wraps alike), and a bitwise operation, min, max
// or exchange of one value leaves after n applications what it leaves
// after one (xor: after n mod 2), a compare-and-swap after two what it
// leaves after n. It returns its failed compare-and-swaps.
func (b *batch) applyUniform(mem *shard.Memory, bi *xinst, x rec, n uint32, noDst bool) (casFailed uint32) {
	p := bi.plan
	slot0 := x.slot & slotMask
	pg := mem.Page(x.word >> (shard.PageShift - 2))
	wi := x.word & (shard.PageWords - 1)
	byteOff := x.slot >> slotBits
	fl := p.flags()
	if noDst && bi.bUni && bi.cUni && p.size == 4 && fl == 0 && p.kind == kCAS {
		// A 32-bit compare-and-swap (a spinlock's acquire), in closed
		// form on the word: the first lane swaps if it finds the
		// compare value, and each lane after it finds the new value if
		// the first swapped, the old one if not.
		w := &pg.Words[wi]
		cmp, nw := uint32(bi.bVal), uint32(bi.cVal)
		failed := n
		if *w == cmp {
			*w = nw
			failed = 0
			if nw != cmp {
				failed = n - 1
			}
		}
		pg.Touch(wi)
		return failed
	}
	if noDst && bi.bUni && bi.cUni && p.size <= 8 {
		times := n
		switch p.kind {
		case kAdd, kSub:
			bv := bi.bVal * uint64(n)
			applyWord(pg, wi, byteOff, p.kind, p.size, fl, bv, bi.cVal, 0, 0)
			return 0
		case kAnd, kOr, kMinU, kMinS, kMaxU, kMaxS, kExch:
			times = 1
		case kXor:
			times = n & 1
		}
		cas, failed := isCAS(p.kind), uint32(0)
		reps := times
		if cas {
			// A compare-and-swap of one compare and one new value leaves
			// what it found or the new value, on which it does nothing
			// more: the lanes after the second do what the second did.
			reps = min(times, 2)
		}
		for i := range reps {
			ret, _ := applyWord(pg, wi, byteOff, p.kind, p.size, fl, bi.bVal, bi.cVal, 0, 0)
			if cas && !casMatched(p.kind, p.size, casOld(p, ret), 0, bi.bVal, 0) {
				failed++
				if i == 1 {
					failed += times - reps
				}
			}
		}
		if times == 0 {
			// xor with itself an even number of times leaves the value,
			// but the word was written.
			pg.Touch(wi)
			if p.size == 8 {
				pg.Touch(wi + 1)
			}
		}
		return failed
	}
	if p.add32() {
		// 32-bit adds on one word (a hot counter's, with the results
		// table): lane k gets the word plus the addends of the lanes
		// before it, and the word ends with all of them added, in one
		// loop over the lanes rather than applyWord's a lane.
		var vals []uint64
		if !noDst {
			vals = b.vals[slot0 : slot0+n : slot0+n]
		}
		w := &pg.Words[wi]
		if bi.bUni {
			*w = addLanesUniform(*w, uint32(bi.bVal), vals, n)
		} else {
			*w = addLanesPrefix(*w, b.opB[slot0:slot0+n:slot0+n], vals)
		}
		pg.Touch(wi)
		return 0
	}
	cas, failed := isCAS(p.kind), uint32(0)
	for k := uint32(0); k < n; k++ {
		slot := slot0 + k
		bv, cv := b.src(&bi.binst, slot, false, 0)
		ret, retHi := applyWord(pg, wi, byteOff, p.kind, p.size, fl, bv, cv, 0, 0)
		if !noDst {
			b.vals[slot], b.valsHi[slot] = ret, retHi
		}
		if cas && !casMatched(p.kind, p.size, casOld(p, ret), retHi, bv, 0) {
			failed++
		}
	}
	return failed
}

// addLanesUniform performs n 32-bit adds of v on a word holding old, in
// lane order: lane k gets old + k·v in vals[k] (unless vals is nil:
// nothing returns), and it returns the word's new value, old + n·v.
func addLanesUniform(old, v uint32, vals []uint64, n uint32) uint32 {
	for k := range vals {
		vals[k] = uint64(old + uint32(k)*v)
	}
	return old + n*v
}

// addLanesPrefix performs the 32-bit adds of ops (a lane's addend each,
// in lane order) on a word holding old: lane k gets old plus the addends
// of the lanes before it in vals[k] (unless vals is nil: nothing
// returns), and it returns the word's new value, old plus them all.
func addLanesPrefix(old uint32, ops, vals []uint64) uint32 {
	if vals == nil {
		for _, a := range ops {
			old += uint32(a)
		}
		return old
	}
	vals = vals[:len(ops)]
	for k, a := range ops {
		vals[k] = uint64(old)
		old += uint32(a)
	}
	return old
}

// Access flags for applyWord, from the plan.
const (
	accRetNew   = 1 << iota // the lane gets the new value (vISA PREDEC)
	accRetShl16             // the value returns in the upper half (LSC d16u32h)
)

// add32 reports whether the plan is a 32-bit integer add whose old value
// is what a lane gets back, if anything: the additions that commute
// (commute.go) and that the 32-bit add loops perform.
func (p *plan) add32() bool {
	return p.kind == kAdd && p.size == 4 && !p.retNew && !p.retShl16
}

func (p *plan) flags() uint8 {
	var fl uint8
	if p.retNew {
		fl |= accRetNew
	}
	if p.retShl16 {
		fl |= accRetShl16
	}
	return fl
}

// applyWord performs one access of size bytes at word wi of pg (byte
// byteOff within the word, for 8- and 16-bit accesses) and returns what the
// lane gets back.
func applyWord(pg *shard.Page, wi, byteOff uint32, k kind, size, flags uint8, b, c, bhi, chi uint64) (ret, retHi uint64) {
	switch size {
	case 4:
		p := &pg.Words[wi]
		old := *p
		nw := op32(k, old, uint32(b), uint32(c))
		*p = nw
		pg.Touch(wi)
		ret = uint64(old)
		if flags&accRetNew != 0 {
			ret = uint64(nw)
		}
	case 8:
		w := pg.Words[wi : wi+2 : wi+2]
		old := uint64(w[0]) | uint64(w[1])<<32
		nw := op64(k, old, b, c)
		w[0], w[1] = uint32(nw), uint32(nw>>32)
		pg.Touch(wi)
		pg.Touch(wi + 1)
		ret = old
		if flags&accRetNew != 0 {
			ret = nw
		}
	case 2:
		sh := (byteOff & 2) * 8
		p := &pg.Words[wi]
		old := uint16(*p >> sh)
		nw := op16(k, old, uint16(b), uint16(c))
		*p = *p&^(0xffff<<sh) | uint32(nw)<<sh
		pg.Touch(wi)
		ret = uint64(old)
		if flags&accRetNew != 0 {
			ret = uint64(nw)
		}
	case 1:
		sh := byteOff * 8
		p := &pg.Words[wi]
		old := uint8(*p >> sh)
		nw := uint8(op16(k, uint16(old), uint16(b), uint16(c)))
		*p = *p&^(0xff<<sh) | uint32(nw)<<sh
		pg.Touch(wi)
		ret = uint64(old)
	case 16:
		w := pg.Words[wi : wi+4 : wi+4]
		oldLo := uint64(w[0]) | uint64(w[1])<<32
		oldHi := uint64(w[2]) | uint64(w[3])<<32
		nlo, nhi := op128(k, oldLo, oldHi, b, bhi, c, chi)
		w[0], w[1], w[2], w[3] = uint32(nlo), uint32(nlo>>32), uint32(nhi), uint32(nhi>>32)
		pg.Touched[wi>>6] |= 0xf << (wi & 63)
		return oldLo, oldHi
	}
	if flags&accRetShl16 != 0 {
		ret <<= 16
	}
	return ret, 0
}

// op128 is the new value of a 128-bit atomic: only cas and exch exist
// (PTX atom.cas.b128, atom.exch.b128).
func op128(k kind, oldLo, oldHi, bLo, bHi, cLo, cHi uint64) (uint64, uint64) {
	switch k {
	case kExch:
		return bLo, bHi
	case kCAS:
		if oldLo == bLo && oldHi == bHi {
			return cLo, cHi
		}
		return oldLo, oldHi
	}
	panic(noFormula{k, 128})
}
