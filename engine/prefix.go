package engine

import (
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// Prefix sums: a histogram that returns values (its results table) without
// a record a lane.
//
// A run of 32-bit adds of one addend a warp, each warp's lanes within one
// page, that return the old value: what lane k of such a run gets back is
// its word's value before the run plus the sum of the addends of the lanes
// before it, in trace and lane order, on the same word (an exclusive
// prefix sum per word). expand keeps each word's running sum of the run in
// its range's prefixAcc and writes each lane that sum as it stands (its
// prefix), and routes, when the run ends, one (word, sum) record a word in
// a segment of its own (seg.pre), as the lean replay's page sums do
// (commute.go). apply adds each sum to its word, keeps the word's value
// before it, and adds that value to the prefix of every lane of the run
// (applyPrefix): each lane gets what the adds made one at a time in lane
// order give it, and the memory ends the same.
//
// A run is the warps of consecutive instructions of one range on one
// page: any other instruction (another path, another page) ends it first,
// so that no record of another path falls between a run's lanes and its
// sums. It is taken only in a batch of such adds alone (batch.retAdds), in
// lane order, not partitioned. The addresses table counts a run's lanes
// from their result rows, not from its records (addrTracker.collectPrefix).

// prefixAcc is one range's run of prefix-summed warps: a pageAcc (its sums
// laid out as the lean page sums', each word's addends modulo 2^32 in the
// low half and its lanes in the high), whose on turns off for the rest of
// the range when a run saved too little (warps that move from page to
// page: a record for most lanes anyway), whose inst is the run's first
// instruction (the segment's) and whose lanes are the run's (0: no run).
type prefixAcc struct {
	pageAcc
	slotHi uint32 // the slot after the run's last lane
}

// prefixAccOf returns range r's prefixAcc, made on first use, on.
func (b *batch) prefixAccOf(r int) *prefixAcc {
	acc := b.pre[r]
	if acc == nil {
		acc = &prefixAcc{pageAcc: pageAcc{on: true}}
		b.pre[r] = acc
	}
	return acc
}

// startPrefix readies range r's prefixAcc, if it has one, for a new
// range: on, no run (the words of one that a full memory cut short
// cleared).
func (b *batch) startPrefix(r int) {
	if acc := b.pre[r]; acc != nil {
		if acc.lanes > 0 {
			clear(acc.sums[:])
		}
		acc.on, acc.lanes = true, 0
	}
}

// prefixes reports whether b's full warps are prefix-summed (prefixWarp):
// every instruction a 32-bit add that returns its old value to a
// destination, rows written, lanes in lane order, not partitioned.
func (b *batch) prefixes() bool {
	return len(b.insts) > 0 && b.retAdds && !b.noResults && b.order == OrderLane && !b.partitioned
}

// prefixWarp is expand's path for a warp of a batch that prefixes: a
// pageSum plan's full warp (32 lanes, or SIMD16's 16), one addend, its
// addresses aligned, in one page and in a region, not all on one word. It
// writes the lanes' rows (address; value: the prefix) and statistics, and
// adds the warp to range r's run, ending the run the range held if that
// was on another page. It reports false, having done nothing, for any
// other warp; true and an error when the memory is full.
func (b *batch) prefixWarp(ii int, bi *xinst, routes []route, cur *shard.Cursor, r int) (bool, error) {
	p := bi.plan
	if !p.pageSum || !bi.bUni || p.noRet || !p.st.HasDst {
		return false, nil
	}
	all := bi.fullWarp(p)
	if all == nil {
		return false, nil
	}
	var or, and uint64
	if b.avx512 && len(all) == trace.MaxLanes/2 {
		or, and = warpBits16AVX512((*[trace.MaxLanes / 2]uint64)(all))
	} else {
		or, and = listBitsN(all)
	}
	acc := b.prefixAccOf(r)
	o, page, ok, err := b.warpPage(p, bi, all, or, and, &acc.pageAcc, routes, cur)
	if !ok || err != nil {
		return ok, err
	}
	if acc.lanes > 0 && acc.page != page {
		b.flushPrefix(acc, routes)
	}
	lo, hi := uint32(and>>2)&(shard.PageWords-1), uint32(or>>2)&(shard.PageWords-1)
	if acc.lanes == 0 {
		acc.page, acc.owner, acc.inst, acc.lo, acc.hi = page, o, uint32(ii), lo, hi
	}
	n := len(all)
	acc.lanes, acc.warps = acc.lanes+n, acc.warps+1
	acc.slotHi = bi.slot + uint32(n)
	acc.lo, acc.hi = min(acc.lo, lo), max(acc.hi, hi)
	s0 := int(bi.slot)
	if b.wide || b.elems {
		b.warpRows(bi, all)
	} // else warpRows' rows of a full warp are its addresses alone: prefixLanes'
	rows, vals := b.resAddr[s0:s0+n:s0+n], b.vals[s0:s0+n:s0+n]
	var distinct, maxc uint32
	if b.avx512 && n == trace.MaxLanes {
		// The lanes counted by AVX-512 (as a lean replay's list of
		// addends is: sumPage), not by a counter's load and store a lane
		// beside the sums'.
		prefixSums(&acc.sums, all, rows, vals, uint32(bi.bVal))
		distinct, maxc = warpConflictsAVX512((*[trace.MaxLanes]uint64)(all))
	} else {
		ps := b.pageSet(r)
		ps.next()
		distinct, maxc = prefixLanes(&acc.sums, all, rows, vals, uint32(bi.bVal), &ps.counts, ps.gen)
	}
	b.setStat(bi, distinct, conflictDepth(distinct, maxc), 0, b.pageWarpSectors(all))
	return true, nil
}

// prefixLanes gives each lane of a warp on one page (addrs) its address
// (rows, a slot a lane) and its word's running sum in sums as its value
// (vals), then adds v to the sum, and counts the lanes as pageRecsSlots
// does. Not inlined, for its registers (see listAddresses).
//
//go:noinline
func prefixLanes(sums *[shard.PageWords]uint64, addrs, rows, vals []uint64, v uint32, counts *[shard.PageBytes]uint16, gen uint16) (distinct, maxc uint32) {
	add := 1<<32 | uint64(v)
	s, c := sums[:], counts[:] // see laneSlices
	rows, vals = rows[:len(addrs)], vals[:len(addrs)]
	for k, a := range addrs {
		w := a >> 2 & (shard.PageWords - 1)
		x := s[w]
		rows[k] = a
		vals[k] = uint64(uint32(x))
		s[w] = x + add
		distinct, maxc = countLane(c, a, gen, distinct, maxc)
	}
	return distinct, maxc
}

// prefixSums is prefixLanes without the count: each lane's address (rows)
// and its word's running sum (vals), then v added to the sum. Not
// inlined, for its registers.
//
//go:noinline
func prefixSums(sums *[shard.PageWords]uint64, addrs, rows, vals []uint64, v uint32) {
	add := 1<<32 | uint64(v)
	s := sums[:] // see laneSlices
	rows, vals = rows[:len(addrs)], vals[:len(addrs)]
	for k, a := range addrs {
		w := a >> 2 & (shard.PageWords - 1)
		x := s[w]
		rows[k] = a
		vals[k] = uint64(uint32(x))
		s[w] = x + add
	}
}

// flushPrefix ends acc's run: one (word, sum) record a word summed, in a
// prefix segment (seg.pre) of the run's first instruction, to the page's
// owner, and empties acc. It turns acc off when the records were more
// than half the lanes.
func (b *batch) flushPrefix(acc *prefixAcc, routes []route) {
	rt := &routes[acc.owner]
	rt.addSeg(acc.inst, 0, 0, false)
	s := &rt.segs[len(rt.segs)-1]
	s.pre, s.preEnd = true, acc.slotHi
	acc.routeSums(rt)
}

// applyPrefix performs a prefix segment (seg.pre, of instruction first's
// run, its records recs) for owner o: each word gets its sum, and each
// lane of the run, whose value holds its prefix, that word's value before
// the sum added to it.
func (b *batch) applyPrefix(o int, mem *shard.Memory, first uint32, s seg, recs []rec) {
	if b.preBase[o] == nil {
		b.preBase[o] = new([shard.PageWords]uint32)
	}
	base := b.preBase[o]
	for _, x := range recs {
		c := mem.Chunk(x.word)
		w := x.word % shard.ChunkWords
		old := c.Words[w]
		c.Words[w] = old + x.slot
		c.Mark(w)
		base[x.word&(shard.PageWords-1)] = old
	}
	lo, hi := int(b.insts[first].slot), int(s.preEnd)
	fixPrefixes(b.vals[lo:hi:hi], b.resAddr[lo:hi:hi], base)
}

// fixPrefixes adds to each lane's prefix (vals) the value its word (by
// its address, addrs) held before its run: base, by word of the page.
func fixPrefixes(vals, addrs []uint64, base *[shard.PageWords]uint32) {
	addrs = addrs[:len(vals)]
	for k, a := range addrs {
		vals[k] = uint64(uint32(vals[k]) + base[a>>2&(shard.PageWords-1)])
	}
}
