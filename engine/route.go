package engine

import (
	"slices"
	"unsafe"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// Routing a warp's lanes one record each (expand.go's general case), with
// the warp's distinct addresses and largest conflict counted on the way.

// routeWarpLanes routes a warp's lanes one record each, counting
// conflicts unless the addresses are distinct by construction.
func (b *batch) routeWarpLanes(ii int, bi *xinst, routes []route, cur *shard.Cursor, addrs []uint64, sp warpSpan, vals bool, r int) (distinct, maxc uint32, ok bool) {
	p := bi.plan
	// A vals segment's sources: straight from a per-lane list when the
	// first source is one (scattered updates), else lane by lane.
	var srcList []uint64
	if vals && p.b[0].In >= 0 {
		if j := p.b[0].In; bi.vec(j).Kind == trace.VecList && p.st.Inputs[j].Elems <= 1 {
			srcList = bi.list(j)
		}
	}
	// Lanes on distinct addresses by construction (!sp.mayRepeat()) need no
	// conflict count.
	count := sp.lo == sp.hi || sp.mayRepeat()
	if b.order == OrderLane && sp.lo>>shard.PageShift == sp.hi>>shard.PageShift {
		return b.routePageLanes(ii, bi, routes, cur, addrs, sp, vals, srcList, count, r)
	}
	if b.order == OrderLane && (srcList != nil || !vals) && len(routes) == 1 {
		return b.routeScatter(ii, bi, &routes[0], cur, addrs, srcList, count, r)
	}
	if distinct, maxc, ok = b.routeLanes(ii, bi, routes, cur, addrs, vals, srcList, count, r); !ok || count {
		return distinct, maxc, ok
	}
	n := uint32(len(addrs))
	return n, 1, true
}

// wordRun reports whether the addresses (of the active lanes, in lane
// order) are a run: consecutive lanes, word-sized or larger accesses, one
// page, a constant nonzero step of whole words; and returns the step in
// words.
func wordRun(addrs []uint64, size uint64, active uint32) (int32, bool) {
	if len(addrs) < 2 || size < 4 || active&(active+active&-active) != 0 {
		return 0, false
	}
	d := int64(addrs[1] - addrs[0])
	if d == 0 || d%4 != 0 || d > 1<<12 || d < -1<<12 || addrs[0]>>shard.PageShift != addrs[len(addrs)-1]>>shard.PageShift {
		return 0, false
	}
	for i := 2; i < len(addrs); i++ {
		if int64(addrs[i]-addrs[i-1]) != d {
			return 0, false
		}
	}
	return int32(d / 4), true
}

// laneOrder lists bi's active lanes, lowest first, and, unless the batch
// applies lanes in lane order, the order they apply in (indexes into the
// list; nil for lane order: order.go), in the storage given.
func (b *batch) laneOrder(bi *xinst, lanes, perm *[trace.MaxLanes]uint8) (ls, pm []uint8) {
	ls = activeLanes(bi.active, lanes)
	if b.order != OrderLane {
		pm = lanePerm(b.order, b.seed, bi.Seq, len(ls), perm)
	}
	return ls, pm
}

// routeLanes routes one record per lane of a warp that does not fault,
// addrs being its active lanes' addresses in lane order, and, with count,
// counts its distinct addresses and largest conflict on the range's
// conflict set as it goes. It reports false when the memory is full.
func (b *batch) routeLanes(ii int, bi *xinst, routes []route, cur *shard.Cursor, addrs []uint64, vals bool, srcList []uint64, count bool, r int) (distinct, maxc uint32, ok bool) {
	p := bi.plan
	cs := &b.cset[r]
	cs.next()
	var en shard.Entry
	owners := len(routes)
	var lanesBuf, permBuf [trace.MaxLanes]uint8
	ls, pm := b.laneOrder(bi, &lanesBuf, &permBuf)
	for i := range addrs {
		k := i
		if pm != nil {
			k = int(pm[i])
		}
		a, lane, slot := addrs[k], int(ls[k]), bi.slot+uint32(k)
		if en = cur.Cached(bi.mem, a); en == 0 {
			if en = cur.Resolve(bi.mem, a); en == 0 {
				return 0, 0, false
			}
		}
		o := 0
		if owners > 1 {
			o = int(b.owner[en.Shard()])
		}
		aux := slot | uint32(a&3)<<slotBits
		if srcList != nil {
			aux = uint32(srcList[lane&(trace.MaxLanes-1)] >> p.srcShift)
		} else if vals {
			v, _ := bi.Value(p.b[0], lane)
			aux = uint32(v >> p.srcShift)
		}
		routes[o].add(uint32(ii), rec{word: en.WordRef(a), slot: aux}, vals)
		if count {
			if c, fresh := cs.add(a); fresh {
				distinct++
			} else {
				maxc = max(maxc, c)
			}
		}
	}
	return distinct, conflictDepth(distinct, maxc), true
}

// routeScatter is routeLanes for scattered updates to one owner (a lean
// replay on one or two workers, or any replay on one): every lane's
// record, in lane order, into one segment written in place, made in the
// loop that resolves the words (Cursor.WordAdds), which stops at a page
// not made yet; Resolve makes it, and the loop goes on from there. With
// srcList, a (word, addend) record a lane (a vals segment): the k-th
// address takes the k-th addend, a full warp's the source's per-lane list
// itself, a partial warp's its active lanes' gathered first. Without, a
// (word, slot) record a lane, for a lane that gets a result: the loop
// takes k as the k-th address's addend, and the slots are made from it
// after, with the address's byte in its word.
func (b *batch) routeScatter(ii int, bi *xinst, rt *route, cur *shard.Cursor, addrs, srcList []uint64, count bool, r int) (distinct, maxc uint32, ok bool) {
	addends, shift := srcList, bi.plan.srcShift
	switch {
	case srcList == nil:
		addends, shift = b.addends[r][:len(addrs)], 0
		for k := range addends {
			addends[k] = uint64(k)
		}
	case len(addrs) < trace.MaxLanes || len(srcList) < trace.MaxLanes:
		var lanesBuf [trace.MaxLanes]uint8
		ls := activeLanes(bi.active, &lanesBuf)
		addends = b.addends[r][:len(addrs)]
		for k := range addends {
			addends[k] = srcList[ls[k]&(trace.MaxLanes-1)]
		}
	}
	mem := bi.mem
	rt.open(uint32(ii), srcList != nil)
	r0 := len(rt.recs)
	if cap(rt.recs)-r0 < len(addrs) {
		rt.recs = slices.Grow(rt.recs, len(addrs))
	}
	rt.recs = rt.recs[:r0+len(addrs)] // the length alone (see push)
	out := rt.recs[r0:]
	adds := wordAdds(out)
	for n := cur.WordAdds(mem, addrs, addends, shift, adds); n < len(addrs); {
		en := cur.Resolve(mem, addrs[n])
		if en == 0 {
			rt.recs = rt.recs[:r0]
			return 0, 0, false
		}
		out[n] = rec{word: en.WordRef(addrs[n]), slot: uint32(addends[n] >> shift)}
		n++
		n += cur.WordAdds(mem, addrs[n:], addends[n:], shift, adds[n:])
	}
	if srcList == nil {
		for k := range out {
			out[k].slot = bi.slot + out[k].slot | uint32(addrs[k]&3)<<slotBits
		}
	}
	if !count || b.hasParts || b.filter[r].distinct(out) { // (a split file's row has its own: batch.parts)
		return uint32(len(addrs)), 1, true
	}
	distinct, maxc = b.cset[r].count(addrs)
	return distinct, maxc, true
}

// wordAdds is records of (word, addend) as what they are, shard.WordAdds
// (TestRecIsWordAdd): for shard.Memory.AddWords and Cursor.WordAdds,
// without a copy.
func wordAdds(recs []rec) []shard.WordAdd {
	if len(recs) == 0 {
		return nil
	}
	return unsafe.Slice((*shard.WordAdd)(unsafe.Pointer(&recs[0])), len(recs))
}

// distinctFilter tells, for most warps of scattered words, that no two
// lanes hit one word, at less than conflictSet's cost: a table of 8192
// slots indexed by a hash of the word, a slot holding the generation of
// the last warp that hashed there. A slot already holding the current
// warp's generation (a repeated word, or two that collide: about one warp
// in seventeen of 32 random words) leaves the warp to conflictSet's exact
// count. A warp costs a load and a store per lane and nothing to clear;
// the table is cleared when the generations wrap, once every 65535 warps.
type distinctFilter struct {
	gen  uint16
	seen [1 << distinctBits]uint16
}

// distinctBits is log2 of distinctFilter's slots: 16 KiB of them, in L1.
const distinctBits = 13

// distinct reports whether the records' words are sure to be distinct.
func (f *distinctFilter) distinct(recs []rec) bool {
	if f.gen++; f.gen == 0 {
		clear(f.seen[:])
		f.gen = 1
	}
	g := f.gen
	for _, r := range recs {
		h := r.word * 0x9e3779b1 >> (32 - distinctBits)
		if f.seen[h] == g {
			return false
		}
		f.seen[h] = g
	}
	return true
}

// routePageLanes is routeLanes for a warp whose lanes, in lane order, all
// hit one page (a histogram's bins, a scatter within 4 KiB): the page is
// resolved once and every record goes to its owner's route in one
// segment, in one loop per kind of source.
func (b *batch) routePageLanes(ii int, bi *xinst, routes []route, cur *shard.Cursor, addrs []uint64, sp warpSpan, vals bool, srcList []uint64, count bool, r int) (distinct, maxc uint32, ok bool) {
	en := cur.Resolve(bi.mem, addrs[0])
	if en == 0 {
		return 0, 0, false
	}
	n := uint32(len(addrs))
	o := 0
	if len(routes) > 1 {
		o = int(b.owner[en.Shard()])
	}
	page := en.WordRef(addrs[0]) &^ (shard.PageWords - 1)
	if b.oneLoop && !b.countsLanes && count && len(addrs) == trace.MaxLanes && (bi.bUni || len(srcList) >= trace.MaxLanes) {
		if acc := b.pageAcc(r); acc.on {
			distinct, maxc = b.sumPage(acc, ii, bi, routes, o, page, addrs, sp, srcList, r)
			return distinct, conflictDepth(distinct, maxc), true
		}
	}
	rt := &routes[o]
	rt.open(uint32(ii), vals)
	r0 := len(rt.recs)
	if cap(rt.recs)-r0 < len(addrs) {
		rt.recs = slices.Grow(rt.recs, len(addrs))
	}
	rt.recs = rt.recs[:r0+len(addrs)] // the length alone (see push)
	out := rt.recs[r0:]
	p := bi.plan
	switch {
	case srcList != nil && count && len(out) == trace.MaxLanes && len(srcList) >= trace.MaxLanes:
		// A full warp of scattered updates, a value per lane, within one
		// page (a weighted histogram's): lane k is the k-th address, and
		// the records and the conflict count go in one loop.
		ps := b.pageSet(r)
		ps.next()
		distinct, maxc = pageRecs((*[trace.MaxLanes]rec)(out), (*[trace.MaxLanes]uint64)(addrs), (*[trace.MaxLanes]uint64)(srcList), page, p.srcShift, &ps.counts, ps.gen)
		return distinct, conflictDepth(distinct, maxc), true
	case srcList != nil:
		var lanesBuf [trace.MaxLanes]uint8
		ls := activeLanes(bi.active, &lanesBuf)
		for k, a := range addrs {
			out[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: uint32(srcList[ls[k]&(trace.MaxLanes-1)] >> p.srcShift)}
		}
	case vals:
		var lanesBuf [trace.MaxLanes]uint8
		ls := activeLanes(bi.active, &lanesBuf)
		for k, a := range addrs {
			v, _ := bi.Value(p.b[0], int(ls[k]))
			out[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: uint32(v >> p.srcShift)}
		}
	case count && len(out) == trace.MaxLanes && b.avx512:
		// The same where the CPU has AVX-512 (a replay that returns
		// results: the records carry slots): the records in a loop with
		// no dependence from lane to lane, the count in
		// warpConflictsAVX512, not a counter's load and store a lane.
		slotRecs((*[trace.MaxLanes]rec)(out), (*[trace.MaxLanes]uint64)(addrs), page, bi.slot)
		distinct, maxc = warpConflictsAVX512((*[trace.MaxLanes]uint64)(addrs))
		return distinct, conflictDepth(distinct, maxc), true
	case count && len(out) == trace.MaxLanes:
		// A full warp within one page whose lanes take their sources
		// from their slots or the instruction (a histogram's increments):
		// the records and the conflict count in one loop, as above.
		ps := b.pageSet(r)
		ps.next()
		distinct, maxc = pageRecsSlots((*[trace.MaxLanes]rec)(out), (*[trace.MaxLanes]uint64)(addrs), page, bi.slot, &ps.counts, ps.gen)
		return distinct, conflictDepth(distinct, maxc), true
	default:
		for k, a := range addrs {
			out[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: bi.slot + uint32(k) | uint32(a&3)<<slotBits}
		}
	}
	if !count {
		return n, 1, true
	}
	distinct, maxc = b.pageSet(r).count(addrs)
	return distinct, maxc, true
}

// pageSet returns range r's pageConflicts, made on first use.
func (b *batch) pageSet(r int) *pageConflicts {
	ps := b.pset[r]
	if ps == nil {
		ps = new(pageConflicts)
		b.pset[r] = ps
	}
	return ps
}

// pageRecs writes a full warp's (word, addend) records, its addresses all
// in the page whose first word reference is page, and counts them as one
// warp's accesses on counts (pageConflicts.count, fused: the records'
// loop and the count's in one). It returns the distinct addresses and the
// largest count of one (0 when none repeats). Not inlined, for its
// registers (see listAddresses).
//
//go:noinline
func pageRecs(out *[trace.MaxLanes]rec, addrs, src *[trace.MaxLanes]uint64, page uint32, shift uint8, counts *[shard.PageBytes]uint16, gen uint16) (distinct, maxc uint32) {
	o, sv, c := out[:], src[:], counts[:] // see laneSlices
	for k, a := range addrs[:] {
		o[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: uint32(sv[k] >> shift)}
		distinct, maxc = countLane(c, a, gen, distinct, maxc)
	}
	return distinct, maxc
}

// pageRecsSlots is pageRecs for records that carry their lane's slot
// (from slot on) and byte within the word, not a source.
//
//go:noinline
func pageRecsSlots(out *[trace.MaxLanes]rec, addrs *[trace.MaxLanes]uint64, page, slot uint32, counts *[shard.PageBytes]uint16, gen uint16) (distinct, maxc uint32) {
	o, c := out[:], counts[:] // see laneSlices
	for k, a := range addrs[:] {
		o[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: slot + uint32(k) | uint32(a&3)<<slotBits}
		distinct, maxc = countLane(c, a, gen, distinct, maxc)
	}
	return distinct, maxc
}

// slotRecs is pageRecsSlots' records without its count.
func slotRecs(out *[trace.MaxLanes]rec, addrs *[trace.MaxLanes]uint64, page, slot uint32) {
	o := out[:] // see laneSlices
	for k, a := range addrs[:] {
		o[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: slot + uint32(k) | uint32(a&3)<<slotBits}
	}
}

// laneSlices: the per-lane loops of a warp (pageRecs, pageRecsSlots,
// sumLanes, sumLanesList, listBits, listSpan, listAddresses) take their
// arrays as slices,
// made once before the loop, of the arrays' constant lengths. Indexed
// through the array pointers, each pointer was checked for nil on every
// lane, a load each (BenchmarkExpand/histogram).

// countLane is pageConflicts.count's step for one access at a, in the
// generation gen: distinct and maxc as they stand after it. counts is a
// pageConflicts' counts, PageBytes long.
//
// It has no branch the data decides (the compiler makes the two
// assignments conditional moves): a histogram's warps, 32 lanes over a
// few hundred words, repeat an address in about two lanes of 32 at
// random, each a mispredicted branch when it was one
// (BenchmarkExpand/histogram). A new address
// raises maxc to at least 1, which conflictDepth does for every warp
// with a lane anyway.
func countLane(counts []uint16, a uint64, gen uint16, distinct, maxc uint32) (uint32, uint32) {
	c := &counts[a&(shard.PageBytes-1)]
	old := *c
	n, fresh := old+1, uint32(0)
	if old&^(1<<pageCountBits-1) != gen {
		n, fresh = gen|1, 1
	}
	*c = n
	return distinct + fresh, max(maxc, uint32(n&(1<<pageCountBits-1)))
}
