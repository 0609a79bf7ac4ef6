package engine

import (
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// A batch whose every access is a 32-bit integer add that returns nothing
// to anyone (no destination, or no results table) commutes: additions
// modulo 2^32 leave the same memory in any order. Such a batch (atomicAdd
// scattered over a large array: the uniform workload, histograms) is
// applied as routed, but each route's records in one loop (add32Vals),
// whatever instruction they came from, instead of one loop per
// instruction's segment (batch.oneLoop). A full warp whose lanes all fall
// in one page (a histogram's) is not even routed lane by lane: its adds
// are summed per word in its range's page accumulator (pageAcc), routed
// as one (word, sum) record per word when the range ends or leaves the
// page. Nothing else differs: the same words get the same sums, the bitmap
// of written words the same bits; results, statistics and faults are
// expand's, untouched.
//
// Such batches were once also sorted by page before they were added (a
// radix sort of each owner's records, then the adds page by page through
// an accumulator), when they hit each page often enough. Since batches end
// at 512 KiB of lists (defaultBatchListBytes), a batch hits the pages of a
// memory larger than the cache too rarely for the sort to pay: lean
// replays of `gen uniform` and `gen histogram` over larger memories were
// faster without it (BenchmarkReplay), and it was removed.

// commutes reports whether b is such a batch: add noted, as it took each
// instruction, whether any was not (batch.notAdd; a repeated warp is its
// instruction's plan again).
func (b *batch) commutes() bool {
	return len(b.insts) > 0 && !b.notAdd
}

// allVals reports whether every segment's records carry their addends
// (seg.vals): the route is a list of (word, addend) pairs as it stands.
func allVals(segs []seg) bool {
	for _, s := range segs {
		if !s.vals {
			return false
		}
	}
	return true
}

// pageAcc sums a commuting batch's warps that fall in one page, for one
// range, word by word, instead of routing a record per lane: a histogram's
// warps (32 lanes over a few hundred bins) become, per range, one record
// per bin hit, (word, sum of its addends), routed to the page's owner when
// the range ends or moves to another page (flushAcc). The adds commute, so
// the memory ends the same; a word whose addends sum to 0 modulo 2^32
// still gets its record, and is marked written as before.
//
// Each word's entry holds the sum of its addends modulo 2^32 in its low
// half; the high half gets 1 per add, and the low half's carries: it is
// nonzero exactly when the word was added to. It cannot wrap: a range
// holds at most 2^20 instructions of 32 lanes (WithBatchInsts), 2^25
// adds, and the high half at most twice as many.
type pageAcc struct {
	// on: this range sums its one-page warps. It turns off for the rest
	// of the range when a flush saved too little (warps that move from
	// page to page): their records cost less than the sums' scans.
	on     bool
	page   uint32 // the page's first word reference
	owner  int    // the page's owner
	inst   uint32 // the last instruction summed: the records' segment
	lanes  int    // adds summed since the page was taken; 0: none
	lo, hi uint32 // the words summed lie in [lo, hi] of the page
	warps  int    // warps summed since the engine last counted them (replayer.pageSums)
	sums   [shard.PageWords]uint64
}

// pageAcc returns range r's accumulator, made on first use, on.
func (b *batch) pageAcc(r int) *pageAcc {
	acc := b.acc[r]
	if acc == nil {
		acc = &pageAcc{on: true}
		b.acc[r] = acc
	}
	return acc
}

// startAcc readies range r's accumulator, if it has one, for a new range.
func (b *batch) startAcc(r int) {
	if acc := b.acc[r]; acc != nil {
		acc.on, acc.lanes = true, 0
	}
}

// sumPage adds a full warp's lanes, all on the page at page (owner o),
// to range r's accumulator acc, taking the page first (and flushing the
// one it held), and returns the warp's distinct addresses and largest
// count of one, as pageRecsSlots does.
func (b *batch) sumPage(acc *pageAcc, ii int, bi *xinst, routes []route, o int, page uint32, addrs []uint64, sp warpSpan, srcList []uint64, r int) (distinct, maxc uint32) {
	b.takePage(acc, ii, routes, o, page, sp, len(addrs))
	if len(addrs) != trace.MaxLanes {
		// A SIMD16 warp (sumWarp's), of one addend: Go's loop, or
		// AVX-512's where the CPU has it.
		if b.avx512 && len(addrs) == trace.MaxLanes/2 {
			distinct, maxc, _ = addLanes16AVX512(&acc.sums, (*[trace.MaxLanes / 2]uint64)(addrs), 1<<32|uint64(uint32(bi.bVal)))
			return distinct, maxc
		}
		ps := b.pageSet(r)
		ps.next()
		return sumLanesN(&acc.sums, addrs, uint32(bi.bVal), &ps.counts, ps.gen)
	}
	if b.avx512 {
		if bi.bUni {
			return addLanesAVX512(&acc.sums, (*[trace.MaxLanes]uint64)(addrs), 1<<32|uint64(uint32(bi.bVal)))
		}
		addLanesList(&acc.sums, (*[trace.MaxLanes]uint64)(addrs), (*[trace.MaxLanes]uint64)(srcList), bi.plan.srcShift)
		return warpConflictsAVX512((*[trace.MaxLanes]uint64)(addrs))
	}
	ps := b.pageSet(r)
	ps.next()
	if bi.bUni {
		return sumLanes(&acc.sums, (*[trace.MaxLanes]uint64)(addrs), uint32(bi.bVal), &ps.counts, ps.gen)
	}
	return sumLanesList(&acc.sums, (*[trace.MaxLanes]uint64)(addrs), (*[trace.MaxLanes]uint64)(srcList), bi.plan.srcShift, &ps.counts, ps.gen)
}

// takePage readies acc for a warp of n lanes of instruction ii on the page
// at page (owner o), its words within sp: it flushes the page acc held
// when it is another.
func (b *batch) takePage(acc *pageAcc, ii int, routes []route, o int, page uint32, sp warpSpan, n int) {
	lo, hi := uint32(sp.lo>>2)&(shard.PageWords-1), uint32(sp.hi>>2)&(shard.PageWords-1)
	if acc.lanes > 0 && acc.page != page {
		b.flushAcc(acc, routes)
	}
	if acc.lanes == 0 {
		acc.page, acc.owner, acc.lo, acc.hi = page, o, lo, hi
	}
	acc.inst, acc.lanes, acc.warps = uint32(ii), acc.lanes+n, acc.warps+1
	acc.lo, acc.hi = min(acc.lo, lo), max(acc.hi, hi)
}

// sumsPages reports whether b's full warps of one addend on one page are
// summed in page accumulators (sumPage) as routePageLanes takes them: a
// commuting batch whose lanes are not each counted, in lane order, the
// memory whole, and no per-lane rows.
func (b *batch) sumsPages() bool {
	return b.oneLoop && !b.countsLanes && b.order == OrderLane && b.noResults
}

// fullWarp is the address list of bi, of plan p, when it is a list with
// every lane active, of 32 lanes or of 16 (vISA's and LSC's SIMD16): the
// warps sumWarp and prefixWarp take; nil otherwise.
func (bi *xinst) fullWarp(p *plan) []uint64 {
	v := bi.vec(p.st.Addr)
	if v.Kind != trace.VecList || v.n < trace.MaxLanes/2 || uint64(bi.active) != 1<<v.n-1 {
		return nil
	}
	return bi.arena[v.list : v.list+v.n : v.list+v.n]
}

// pageWarpSectors is the sectors of a full warp's lanes all, which lie in
// one page: pageSectors' set of 128 bits built in AVX-512 registers for 32
// lanes where the CPU has them (pageSectorsAVX512: a quarter of the time
// of warpSectors' conflict count, BenchmarkPageSectors), AVX-512's
// conflict count for SIMD16's 16 (warpSectors), pageSectors' loop for the
// rest.
func (b *batch) pageWarpSectors(all []uint64) uint32 {
	if b.avx512 && len(all) == trace.MaxLanes {
		return pageSectorsAVX512((*[trace.MaxLanes]uint64)(all))
	}
	if b.avx512 && len(all) == trace.MaxLanes/2 {
		return warpSectors(all, true)
	}
	return pageSectors(all)
}

// warpPage is where sumWarp and prefixWarp take a full warp, its lanes
// all and their address bits or and and: when the lanes are aligned, in
// one page and in p's regions, not all on one word, and acc (the range's
// accumulator) is on, the owner and first word reference of their page,
// ok; ok false, having done nothing, for any other warp; ok and an error
// when the memory is full.
func (b *batch) warpPage(p *plan, bi *xinst, all []uint64, or, and uint64, acc *pageAcc, routes []route, cur *shard.Cursor) (o int, page uint32, ok bool, err error) {
	if or&3 != 0 || or == and || (or^and)>>shard.PageShift != 0 || or+3 < or || or&^p.pageMask != 0 || !p.inRegion(and, or) || !acc.on {
		return 0, 0, false, nil
	}
	en := cur.Resolve(bi.mem, all[0])
	if en == 0 {
		return 0, 0, true, errMemoryFull
	}
	if len(routes) > 1 {
		o = int(b.owner[en.Shard()])
	}
	return o, en.WordRef(all[0]) &^ (shard.PageWords - 1), true, nil
}

// sumWarp is expandWarp's path, taken at once, for the warps sumsPages
// sums: those of a pageSum plan, every lane of its list active (32 lanes,
// or 16: vISA's and LSC's SIMD16), one addend, whose addresses (the list
// as it is, within the plan's address bits) are aligned and lie in one
// page and in a region, not all on one word (routeSum's) — a histogram's. It makes the
// same checks as warpAddresses, expandWarp and routePageLanes, in that
// order, and the same call to sumPage, without their general cases
// (BenchmarkExpand/histogram). It reports false,
// having done nothing, for any other warp; true and an error when the
// memory is full.
func (b *batch) sumWarp(ii int, bi *xinst, routes []route, cur *shard.Cursor, r int) (bool, error) {
	p := bi.plan
	if !bi.bUni {
		return false, nil
	}
	all := bi.fullWarp(p)
	if all == nil {
		return false, nil
	}
	var or, and uint64
	switch {
	case len(all) == trace.MaxLanes/2 && b.avx512:
		or, and = warpBits16AVX512((*[trace.MaxLanes / 2]uint64)(all))
	case len(all) < trace.MaxLanes:
		or, and = listBitsN(all)
	case b.avx512:
		or, and = warpBitsAVX512((*[trace.MaxLanes]uint64)(all))
	default:
		or, and = listBits((*[trace.MaxLanes]uint64)(all))
	}
	acc := b.pageAcc(r)
	o, page, ok, err := b.warpPage(p, bi, all, or, and, acc, routes, cur)
	if !ok || err != nil {
		return ok, err
	}
	sp := warpSpan{or: or, lo: and, hi: or, shape: spanShape(len(all), true, true)}
	if b.avx512 && len(all) == trace.MaxLanes/2 {
		// A SIMD16 warp: its adds, count and sectors in one call.
		b.takePage(acc, ii, routes, o, page, sp, len(all))
		distinct, maxc, sectors := addLanes16AVX512(&acc.sums, (*[trace.MaxLanes / 2]uint64)(all), 1<<32|uint64(uint32(bi.bVal)))
		b.setStat(bi, distinct, conflictDepth(distinct, maxc), 0, sectors)
		return true, nil
	}
	distinct, maxc := b.sumPage(acc, ii, bi, routes, o, page, all, sp, nil, r)
	var sectors uint32
	if distinct > 0 { // one page: all of them this partition's, or none
		sectors = b.pageWarpSectors(all)
	}
	b.setStat(bi, distinct, conflictDepth(distinct, maxc), 0, sectors)
	return true, nil
}

// flushAcc routes acc's sums as (word, sum) records, one per word added
// to, in a segment of its last instruction's (in a commuting batch, any
// of its instructions applies them alike: add32Vals), and empties it. It
// turns acc off when the records were more than half the adds.
func (b *batch) flushAcc(acc *pageAcc, routes []route) {
	rt := &routes[acc.owner]
	rt.addSeg(acc.inst, 0, 0, true)
	acc.routeSums(rt)
}

// routeSums appends one (word, sum) record to rt for each word acc summed,
// in word order, and empties acc: no run, and off when the records were
// more than half its lanes (a record a lane costs less than the sums).
func (acc *pageAcc) routeSums(rt *route) {
	r0 := len(rt.recs)
	for w := acc.lo; w <= acc.hi; w++ {
		if x := acc.sums[w]; x>>32 != 0 {
			y := push(&rt.recs)
			y.word, y.slot = acc.page|w, uint32(x)
			acc.sums[w] = 0
		}
	}
	if 2*(len(rt.recs)-r0) > acc.lanes {
		acc.on = false
	}
	acc.lanes = 0
}

// sumLanes adds v once per lane of a full warp to the words of addrs (all
// in one page) in sums, and counts the lanes as pageRecsSlots does. Not
// inlined, for its registers (see listAddresses).
//
//go:noinline
func sumLanes(sums *[shard.PageWords]uint64, addrs *[trace.MaxLanes]uint64, v uint32, counts *[shard.PageBytes]uint16, gen uint16) (distinct, maxc uint32) {
	add := 1<<32 | uint64(v)
	s, c := sums[:], counts[:] // see laneSlices
	for _, a := range addrs[:] {
		s[a>>2&(shard.PageWords-1)] += add
		distinct, maxc = countLane(c, a, gen, distinct, maxc)
	}
	return distinct, maxc
}

// sumLanesN is sumLanes of any number of lanes: a SIMD16 warp's.
//
//go:noinline
func sumLanesN(sums *[shard.PageWords]uint64, addrs []uint64, v uint32, counts *[shard.PageBytes]uint16, gen uint16) (distinct, maxc uint32) {
	add := 1<<32 | uint64(v)
	s, c := sums[:], counts[:] // see laneSlices
	for _, a := range addrs {
		s[a>>2&(shard.PageWords-1)] += add
		distinct, maxc = countLane(c, a, gen, distinct, maxc)
	}
	return distinct, maxc
}

// addLanesList is sumLanesList without the count, which
// warpConflictsAVX512 makes where the CPU can (batch.avx512): a
// load and a store a lane rather than two of each, and 32 lanes counted in
// about 60 vector instructions rather than 300. With one addend for every
// lane, addLanesAVX512 does both in one call, cheaper than the two
// (BenchmarkSumLanes).
//
//go:noinline
func addLanesList(sums *[shard.PageWords]uint64, addrs, src *[trace.MaxLanes]uint64, shift uint8) {
	s, sv := sums[:], src[:] // see laneSlices
	for k, a := range addrs[:] {
		s[a>>2&(shard.PageWords-1)] += 1<<32 | uint64(uint32(sv[k]>>shift))
	}
}

// sumLanesList is sumLanes with lane k's addend src[k] >> shift.
//
//go:noinline
func sumLanesList(sums *[shard.PageWords]uint64, addrs, src *[trace.MaxLanes]uint64, shift uint8, counts *[shard.PageBytes]uint16, gen uint16) (distinct, maxc uint32) {
	s, sv, c := sums[:], src[:], counts[:] // see laneSlices
	for k, a := range addrs[:] {
		s[a>>2&(shard.PageWords-1)] += 1<<32 | uint64(uint32(sv[k]>>shift))
		distinct, maxc = countLane(c, a, gen, distinct, maxc)
	}
	return distinct, maxc
}
