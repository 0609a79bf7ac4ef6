package engine

import (
	"math/bits"

	"github.com/gpureplay/replay/shard"
)

// A batch whose every access is a 32-bit integer add that returns nothing
// to anyone (no destination, or no results table) commutes: additions
// modulo 2^32 leave the same memory in any order. Such a batch (atomicAdd
// scattered over a large array: the uniform workload, histograms) is
// applied out of trace order, page by page: each owner gathers its
// records as (word, addend) pairs, radix-sorts them by page, and adds them
// in that order, so that a page's lines are fetched once per batch and
// stay in cache while its additions land, where trace order sends every
// addition to a random page of the whole memory. A batch that hits each
// page only a few times (a memory much larger than a batch) gains nothing
// from the sort, and is added as routed instead, each route's pairs in one
// loop (commuteMode). Nothing else differs: the same words get the same
// sums, the bitmap of written words the same bits; results, statistics
// and faults are expand's, untouched.

// commutes reports whether b is such a batch. The addresses table, if
// there is one, collects the batch's records before they are sorted
// (applyOwner).
func (b *batch) commutes() bool {
	for i := range b.insts {
		bi := &b.insts[i]
		p := bi.plan
		if p.kind != kAdd || p.size != 4 || p.retNew || p.retShl16 {
			return false
		}
		if bi.Static.HasDst && !p.noRet && !b.noResults {
			return false
		}
	}
	return len(b.insts) > 0
}

// commuteMode is how a batch is applied: a batch that commutes (every
// access an addition that returns nothing) page by
// page when it hits each page often enough (sortsByPage), else each
// route's records in one loop when they are (word, addend) pairs.
type commuteMode uint8

const (
	inOrder commuteMode = iota // each route's segments in order, each with its loop
	byPage                     // sorted by page (applyCommuting)
	oneLoop                    // too sparse to sort: a route of pairs in one add32Vals
	numCommuteModes
)

// sortMinPages is the memory below which the batch is applied as routed:
// 64 pages (256 KiB) stay in the core's cache anyway.
const sortMinPages = 64

// sortMinDensity is the records per page of memory, on average, below
// which a commuting batch is applied as routed, in trace order, instead:
// the sort pays when the batch hits each page often enough to gather its
// additions in the accumulator (add32ByPage), and its radix pass, one for
// up to 2048 pages, two beyond, costs more than it saves when the pages
// get a few records each. Lean replays of `gen uniform` (9.6 M adds, 2
// workers, alternating runs) put the crossover between 64 and 32 records
// a page: sorted against in order, 1 Mi words (128 a page) 169 against
// 174 ms, 2 Mi (64) 274 against 290, 4 Mi (32) 372 against 351, 8 Mi
// (16) 510 against 431, 64 Mi (2) 850 against 710 (docs/PERFORMANCE.md,
// the tenth round).
const sortMinDensity = 48

// sortsByPage reports whether a commuting batch of n records is applied
// page by page on a memory of pages pages, with density the records it
// must average per page (sortMinDensity unless a test lowers it).
func sortsByPage(n, pages, density int) bool {
	return pages >= sortMinPages && n >= density*pages
}

// sortBufs is one owner's buffers for applying commuting batches. Batches
// apply one after another, so the engine keeps one per owner for them all
// (Engine.sortBufs), not one per batch.
type sortBufs struct {
	pairs, sorted []rec
	radix         [1 << 11]uint32
}

// applyCommuting performs owner o's records of a commuting batch (see
// commutes) page by page, with sb's buffers.
func (b *batch) applyCommuting(o int, mem *shard.Memory, sb *sortBufs) {
	pages := uint(mem.Pages() + 1)
	if rt := &b.out[0][o]; len(b.out) == 1 && allVals(rt.segs) {
		// One range whose records are (word, addend) pairs already: sort
		// them where they are. Nothing reads a commuting batch's routes
		// after apply (the addresses table collected them before), so
		// the sort may reuse them.
		sb.sorted = grow(sb.sorted, len(rt.recs))
		add32ByPage(mem, sortByPage(rt.recs, sb.sorted, uint(bits.Len(pages)), &sb.radix))
		return
	}
	pairs := sb.pairs[:0]
	for r := range b.out {
		rt := &b.out[r][o]
		for k, s := range rt.segs {
			hi := uint32(len(rt.recs))
			if k+1 < len(rt.segs) {
				hi = rt.segs[k+1].lo
			}
			pairs = b.addends(pairs, &b.insts[s.inst], s, rt.recs[s.lo:hi])
		}
	}
	sb.sorted = grow(sb.sorted, len(pairs))
	add32ByPage(mem, sortByPage(pairs, sb.sorted, uint(bits.Len(pages)), &sb.radix))
	sb.pairs = pairs[:0] // (sortByPage returns either buffer; both stay)
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

// addends appends a segment's additions as (word, addend) records, a run's
// as one per lane and a uniform warp's as one of their sum.
func (b *batch) addends(out []rec, bi *binst, s seg, recs []rec) []rec {
	switch {
	case s.n > 0 && s.step == 0:
		x := recs[0]
		slot0 := x.slot & slotMask
		var sum uint64
		if bi.bUni {
			sum = bi.bVal * uint64(s.n)
		} else {
			for k := range s.n {
				sum += b.opB[slot0+k]
			}
		}
		return append(out, rec{word: x.word, slot: uint32(sum)})
	case s.n > 0:
		x := recs[0]
		slot0 := x.slot & slotMask
		for k := range s.n {
			v := bi.bVal
			if !bi.bUni {
				v = b.opB[slot0+k]
			}
			out = append(out, rec{word: x.word + uint32(int32(k)*s.step), slot: uint32(v)})
		}
		return out
	case s.vals:
		return append(out, recs...)
	case bi.bUni:
		v := uint32(bi.bVal)
		for _, x := range recs {
			out = append(out, rec{word: x.word, slot: v})
		}
		return out
	}
	for _, x := range recs {
		out = append(out, rec{word: x.word, slot: uint32(b.opB[x.slot&slotMask])})
	}
	return out
}

// add32ByPage is add32Vals over records sorted by page. A page with many
// records in the batch sums them into an accumulator on the stack (4 KiB,
// in L1) with a bitmap of the words they hit, then adds the sums into the
// page in address order and merges the bitmap once: the page's lines are
// fetched in ascending order, which the hardware prefetcher follows, where
// records in arrival order fetch them at random and wait for each. A page
// with few records (a large memory, where a batch hits each page a few
// times) is added directly, as add32Vals does.
func add32ByPage(mem *shard.Memory, recs []rec) {
	var acc [shard.PageWords]uint32 // zero between pages: the merge clears what it reads
	for i := 0; i < len(recs); {
		ref := recs[i].word >> (shard.PageShift - 2)
		j := i + 1
		for j < len(recs) && recs[j].word>>(shard.PageShift-2) == ref {
			j++
		}
		if j-i < shard.PageWords/64 {
			add32Vals(mem, recs[i:j])
			i = j
			continue
		}
		var touched [shard.PageWords / 64]uint64
		for _, x := range recs[i:j] {
			wi := x.word & (shard.PageWords - 1)
			acc[wi] += x.slot
			touched[wi>>6] |= 1 << (wi & 63)
		}
		mergeAcc(mem.Page(ref), &acc, &touched)
		i = j
	}
}

// mergeAcc adds acc's sums at the words touched marks into pg, in address
// order, marks them written, and clears them from acc.
func mergeAcc(pg *shard.Page, acc *[shard.PageWords]uint32, touched *[shard.PageWords / 64]uint64) {
	for k, t := range touched {
		if t == 0 {
			continue
		}
		pg.Touched[k] |= t
		words := pg.Words[k*64 : k*64+64 : k*64+64]
		sums := acc[k*64 : k*64+64 : k*64+64]
		for m := t; m != 0; m &= m - 1 {
			w := bits.TrailingZeros64(m)
			words[w] += sums[w]
			sums[w] = 0
		}
	}
}

// sortByPage orders recs by page reference (the word reference's bits
// above the word index), keyBits bits of it, with an LSD radix sort of
// digits of at most 11 bits (2048 counters, in L1), using tmp (as long as
// recs) as the other buffer. It returns whichever buffer holds the result.
func sortByPage(recs, tmp []rec, keyBits uint, counts *[1 << 11]uint32) []rec {
	passes := (keyBits + 10) / 11
	digit := (keyBits + passes - 1) / passes
	mask := uint32(1)<<digit - 1
	src, dst := recs, tmp[:len(recs)]
	for p := range passes {
		shift := shard.PageShift - 2 + p*digit
		clear(counts[:mask+1])
		for _, x := range src {
			counts[x.word>>shift&mask]++
		}
		sum := uint32(0)
		for i := range counts[:mask+1] {
			c := counts[i]
			counts[i] = sum
			sum += c
		}
		for _, x := range src {
			d := x.word >> shift & mask
			dst[counts[d]] = x
			counts[d]++
		}
		src, dst = dst, src
	}
	return src
}
