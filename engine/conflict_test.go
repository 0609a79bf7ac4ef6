package engine

import (
	"math/rand/v2"
	"testing"
)

// TestConflictSet: over many instructions of up to 64 addresses drawn from
// a small range (so that many repeat), the set's distinct counts and
// largest counts equal a map's, across the generation counter's wrap,
// where stale slots of the instruction 2^32 before must not count.
func TestConflictSet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var cs conflictSet
	cs.gen = ^uint32(0) - 50 // wraps after 50 instructions
	for inst := 0; inst < 200; inst++ {
		cs.next()
		n := 1 + r.IntN(64)
		span := 1 + r.IntN(80)
		want := map[uint64]uint32{}
		var distinct, maxc uint32
		for range n {
			a := uint64(r.IntN(span)) * 4
			c, fresh := cs.add(a)
			want[a]++
			if c != want[a] || fresh != (want[a] == 1) {
				t.Fatalf("instruction %d: add(%#x) = %d, %v; want %d, %v", inst, a, c, fresh, want[a], want[a] == 1)
			}
			if fresh {
				distinct++
			}
			maxc = max(maxc, c)
		}
		var mx uint32
		for _, c := range want {
			mx = max(mx, c)
		}
		if distinct != uint32(len(want)) || maxc != mx {
			t.Fatalf("instruction %d: %d distinct, max %d; want %d, %d", inst, distinct, maxc, len(want), mx)
		}
		// The same addresses in the next instruction start from 1.
		if inst%7 == 0 {
			cs.next()
			for a := range want {
				if c, fresh := cs.add(a); c != 1 || !fresh {
					t.Fatalf("instruction %d: %#x counted %d (fresh %v) after next", inst, a, c, fresh)
				}
			}
		}
	}
	if cs.gen > 1000 {
		t.Errorf("gen = %d: the counter did not wrap", cs.gen)
	}
	// A slot as an instruction of the last cycle would have left it, with
	// the stamp of the first instruction after the wrap: the wrap must
	// clear it, or address 0 counts from 40.
	cs.gen = ^uint32(0)
	cs.slots[0] = conflictSlot{key: 0, stamp: 1, count: 40}
	cs.next()
	if c, fresh := cs.add(0); c != 1 || !fresh {
		t.Errorf("after the wrap, address 0 counted %d (fresh %v): a stale slot was live", c, fresh)
	}
}

// TestPageConflicts: warps of up to 32 accesses within one page (byte
// addresses, so sub-word accesses are distinct addresses), drawn from a
// small span so that many repeat, count as conflictsSmall counts them,
// over 3000 warps: across the generations' wrap every 1024 warps, where a
// stale counter of the warp 1024 before must not count.
func TestPageConflicts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var ps pageConflicts
	page := uint64(0x7f3000)
	for w := 0; w < 3000; w++ {
		n := 1 + r.IntN(32)
		span := 1 + r.IntN(64)
		step := uint64(1) << r.IntN(4) // 1, 2, 4 or 8 bytes apart
		base := uint64(r.IntN(4096/int(step)-span)) * step
		addrs := make([]uint64, n)
		for i := range addrs {
			addrs[i] = page + base + uint64(r.IntN(span))*step
		}
		if w%1024 == 1023 {
			// The next warp is the first of a new cycle: the same
			// addresses, which the wrap must have cleared.
			ps.count(addrs)
		}
		wd, wm := conflictsSmall(addrs)
		gd, gm := ps.count(addrs)
		if gd != wd || gm != wm {
			t.Fatalf("warp %d: %d distinct, max %d; want %d, %d (%x)", w, gd, gm, wd, wm, addrs)
		}
	}
}

// TestPageConflictsWrap: counters stamped by the first generation of a
// cycle must not count for the first warp of the next cycle, which has the
// same stamp: the wrap clears them.
func TestPageConflictsWrap(t *testing.T) {
	var ps pageConflicts
	a := []uint64{0x1000, 0x1000, 0x1004}
	if d, m := ps.count(a); d != 2 || m != 2 {
		t.Fatalf("first warp: %d distinct, max %d; want 2, 2", d, m)
	}
	// The next warp takes the last generation of the cycle.
	ps.gen = ^uint16(0)&^(1<<pageCountBits-1) - 1<<pageCountBits
	ps.count([]uint64{0x1008})
	if d, m := ps.count(a); d != 2 || m != 2 {
		t.Errorf("first warp of the next cycle: %d distinct, max %d; want 2, 2", d, m)
	}
}

// recsOf is records of words (their slots zero), for the distinctFilter.
func recsOf(words []uint32) []rec {
	recs := make([]rec, len(words))
	for i, w := range words {
		recs[i].word = w
	}
	return recs
}

// TestDistinctFilter: the filter says distinct only for words that are
// distinct, says it for most sets of 32 random words, and forgets each
// warp's words by the next warp, including one it stopped early and the
// warps on either side of the generations wrapping.
func TestDistinctFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var f distinctFilter
	sure := 0
	for warp := range 5000 {
		n := 1 + r.IntN(32)
		span := uint32(1 << (2 + r.IntN(20))) // from 4 words, where most warps repeat one, to 4 M
		words := make([]uint32, n)
		seen := map[uint32]bool{}
		for i := range words {
			words[i] = r.Uint32N(span)
			seen[words[i]] = true
		}
		got := f.distinct(recsOf(words))
		if got && len(seen) != n {
			t.Fatalf("warp %d: %d words with %d distinct reported distinct", warp, n, len(seen))
		}
		if got {
			sure++
		}
		if warp%1000 == 0 {
			f.gen = ^uint16(0) - 1 // the next two warps wrap the generations
		}
		// The same words, one each, as the next warps: distinct.
		for _, w := range words[:min(n, 3)] {
			if !f.distinct(recsOf([]uint32{w})) {
				t.Fatalf("warp %d: a warp of one word is reported repeated (generation %d)", warp, f.gen)
			}
		}
	}
	var random int
	for range 1000 {
		words := make([]uint32, 32)
		for i := range words {
			words[i] = r.Uint32N(1 << 20)
		}
		if f.distinct(recsOf(words)) {
			random++
		}
	}
	// A wrap forgets the first cycle: generation 1 comes round again.
	var g distinctFilter
	first := []uint32{1, 2, 3}
	g.distinct(recsOf(first))
	g.gen = ^uint16(0)
	if !g.distinct(recsOf(first)) {
		t.Error("after the generations wrapped, a warp's words were taken for those of the warp of generation 1")
	}
	if random < 900 {
		t.Errorf("only %d of 1000 warps of 32 random words found distinct, want about 940", random)
	}
	if sure == 0 {
		t.Error("no warp was found distinct")
	}
}
