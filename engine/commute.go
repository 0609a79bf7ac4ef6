package engine

// A batch whose every access is a 32-bit integer add that returns nothing
// to anyone (no destination, or no results table) commutes: additions
// modulo 2^32 leave the same memory in any order. Such a batch (atomicAdd
// scattered over a large array: the uniform workload, histograms) is
// applied as routed, but each route's records in one loop (add32Vals),
// whatever instruction they came from, instead of one loop per
// instruction's segment (batch.oneLoop). Nothing else differs: the same
// words get the same sums, the bitmap of written words the same bits;
// results, statistics and faults are expand's, untouched.
//
// Such batches were once also sorted by page before they were added (a
// radix sort of each owner's records, then the adds page by page through
// an accumulator), when they hit each page often enough. Since batches end
// at 512 KiB of lists (defaultBatchListBytes), a batch hits the pages of a
// memory larger than the cache too rarely for the sort to pay: lean
// replays of `gen uniform` over 64 Ki to 512 Ki words and of `gen
// histogram` over 64 Ki and 256 Ki bins were 3-16% faster without it
// (docs/PERFORMANCE.md, the fourteenth round), and it was removed.

// commutes reports whether b is such a batch.
func (b *batch) commutes() bool {
	for i := range b.insts {
		p := b.plans[b.insts[i].pi]
		if !p.add32() {
			return false
		}
		if p.st.HasDst && !p.noRet && !b.noResults {
			return false
		}
	}
	return len(b.insts) > 0
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
