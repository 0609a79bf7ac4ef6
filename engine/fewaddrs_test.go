package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// randomFewAddresses writes a random PTX trace of warps on a few addresses
// of one page, every lane applying one value (a spinlock's CAS acquire and
// exch release, counters, flags): expandWarp's record per distinct address
// (warpGroups) and applyUniform's closed forms, a CAS's at its fixed point
// after two lanes. Its lists hit 2 to 12 addresses (past maxWarpGroups,
// the general path), sometimes on a second page, at full and partial
// masks; the destination is `_` or a register, which only tables without
// results leave unread; the locks are set to 0 and 1 between warps, so
// that a warp's first CAS on a word succeeds or fails.
func randomFewAddresses(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x2000\n")
	type form struct {
		op, typ string
		bits    int
	}
	forms := []form{
		{"cas", "b32", 32}, {"cas", "b32", 32}, {"cas", "b64", 64}, {"exch", "b32", 32}, {"exch", "b64", 64},
		{"min", "u32", 32}, {"max", "s32", 32}, {"and", "b32", 32}, {"or", "b64", 64}, {"xor", "b32", 32},
		{"inc", "u32", 32}, {"dec", "u32", 32}, {"add", "u64", 64}, {"add", "f32", 32}, {"cas", "b16", 16},
	}
	for range n {
		randContext(r, &b)
		if r.IntN(4) == 0 {
			fmt.Fprintf(&b, ".init global 0x%x u32 %d\n", 0x1000+4*r.IntN(16), r.IntN(2))
		}
		f := forms[r.IntN(len(forms))]
		size := uint64(max(f.bits/8, 2))
		words := make([]uint64, 2+r.IntN(11))
		for i := range words {
			words[i] = 0x1000 + uint64(r.IntN(16))*size
			if r.IntN(12) == 0 {
				words[i] += 0x1000 // a second page
			}
		}
		lanes := make([]string, 32)
		for l := range lanes {
			lanes[l] = fmt.Sprintf("0x%x", words[r.IntN(len(words))])
		}
		dst := "d"
		if r.IntN(2) == 0 {
			dst = "_"
		}
		binds := fmt.Sprintf(" b=%d", r.IntN(2))
		srcs := "b"
		if f.op == "cas" {
			srcs += ", c"
			binds += fmt.Sprintf(" c=%d", r.IntN(2))
		}
		if r.IntN(3) == 0 {
			binds += fmt.Sprintf(" mask=0x%x", r.Uint32()|1)
		}
		fmt.Fprintf(&b, "atom.global.%s.%s %s, [a], %s; | a=[%s]%s\n", f.op, f.typ, dst, srcs, strings.Join(lanes, ","), binds)
	}
	return b.String()
}

// TestFewAddressWarpsEqualReference: warps of one value on a few
// addresses (randomFewAddresses) replay as the reference does, under every
// sink configuration, option set and trace form: the memory, every
// statistic (CAS failures, distinct addresses, largest conflict, sectors)
// and the addresses table's counts.
func TestFewAddressWarpsEqualReference(t *testing.T) { equalOnRandom(t, randomFewAddresses, 11) }

// randomRetries writes a random PTX trace of warps that retry an
// instruction on the same list of a few addresses (a spinlock's CAS
// acquire until it gets the lock): each of a few warps of two groups keeps
// its list and form, and takes a new one now and then; a retry may run
// under another mask, its lock values change, and the regions between
// (randContext) change its plan. The warps that meet their last grouping
// take it again (fewWarps), the others group their addresses anew.
func randomRetries(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x2000\n")
	type form struct{ space, op, typ string }
	forms := []form{
		{"global", "cas", "b32"}, {"global", "cas", "b32"}, {"global", "exch", "b32"}, {"global", "cas", "b64"},
		{"global", "min", "u32"}, {"shared", "cas", "b32"}, {"global", "add", "u32"},
	}
	type warp struct {
		f     form
		lanes string
		mask  string
	}
	fresh := func() warp {
		f := forms[r.IntN(len(forms))]
		words := lockWords(r, f.space, f.typ)
		lanes := make([]string, 32)
		for l := range lanes {
			lanes[l] = fmt.Sprintf("0x%x", words[r.IntN(len(words))])
		}
		return warp{f: f, lanes: strings.Join(lanes, ",")}
	}
	var warps [2][4]warp
	for g := range warps {
		for w := range warps[g] {
			warps[g][w] = fresh()
		}
	}
	for range n {
		randContext(r, &b)
		g, w := r.IntN(2), r.IntN(4)
		fmt.Fprintf(&b, ".group %d\n.warp %d\n", g, w)
		wp := &warps[g][w]
		switch r.IntN(8) {
		case 0:
			*wp = fresh()
		case 1:
			wp.mask = fmt.Sprintf(" mask=0x%x", r.Uint32()|1)
		case 2:
			wp.mask = ""
		case 3:
			fmt.Fprintf(&b, ".init global 0x%x u32 %d\n", 0x1000+4*r.IntN(8), r.IntN(2))
		}
		binds := fmt.Sprintf(" b=%d", r.IntN(2))
		srcs := "b"
		if wp.f.op == "cas" {
			srcs += ", c"
			binds += fmt.Sprintf(" c=%d", r.IntN(2))
		}
		fmt.Fprintf(&b, "atom.%s.%s.%s _, [a], %s; | a=[%s]%s%s\n", wp.f.space, wp.f.op, wp.f.typ, srcs, wp.lanes, binds, wp.mask)
	}
	return b.String()
}

// TestRetriedWarpsEqualReference: warps that retry on the same few
// addresses (randomRetries) replay as the reference does, under every sink
// configuration, option set and trace form; and the lean replay takes
// most retries' groupings again (fewWarps).
func TestRetriedWarpsEqualReference(t *testing.T) {
	srcs := equalOnRandom(t, randomRetries, 12)
	hits := 0
	for _, src := range srcs {
		sink, _ := sinkFor(true, false)
		hits += runEngine(t, src, sink, WithWorkers(1)).fewHits
	}
	// Of 40 traces of 60 instructions, about half are retries of a
	// few-address CAS, exch or min under the same mask and plan.
	if hits < 300 {
		t.Errorf("%d warps took their last grouping again, want 300 or more", hits)
	}
}

// randomLockWarps writes a random PTX trace of a spinlock's warps: each of
// a few warps of two groups keeps a list of lock addresses and retries its
// CAS on the lanes still trying, a few times under one mask, then releases
// the locks of some of them with an exch (or an and, a min) on the same
// list under those lanes, and tries again on the rest; a warp whose lanes
// are all through takes a new list. Some lists have lanes, never active,
// whose addresses would fail expandWarp's checks (unaligned, outside the
// region, on another page), so that the warp's grouping covers its active
// lanes only; the regions and inits between (randContext) change plans and
// lock values, now and then.
func randomLockWarps(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x2000\n")
	type form struct{ space, typ, rel, relTyp string }
	forms := []form{
		{"global", "b32", "exch", "b32"}, {"global", "b32", "exch", "b32"}, {"global", "b64", "exch", "b64"},
		{"global", "b32", "and", "b32"}, {"shared", "b32", "exch", "b32"}, {"global", "b32", "min", "u32"},
	}
	type warp struct {
		f       form
		lanes   string
		pending uint32
		tries   int
	}
	fresh := func() warp {
		f := forms[r.IntN(len(forms))]
		words := lockWords(r, f.space, f.typ)
		pending := ^uint32(0)
		lanes := make([]string, 32)
		bad := r.IntN(4) == 0
		for l := range lanes {
			a := words[r.IntN(len(words))]
			if bad && r.IntN(6) == 0 {
				pending &^= 1 << l
				a += []uint64{2, 0x3000, 0x1000}[r.IntN(3)]
			}
			lanes[l] = fmt.Sprintf("0x%x", a)
		}
		return warp{f: f, lanes: strings.Join(lanes, ","), pending: pending}
	}
	var warps [2][4]warp
	for g := range warps {
		for w := range warps[g] {
			warps[g][w] = fresh()
		}
	}
	for range n {
		if r.IntN(4) == 0 {
			randContext(r, &b)
		}
		g, w := r.IntN(2), r.IntN(4)
		fmt.Fprintf(&b, ".group %d\n.warp %d\n", g, w)
		wp := &warps[g][w]
		if wp.tries < 2+r.IntN(3) {
			wp.tries++
			fmt.Fprintf(&b, "atom.%s.cas.%s _, [a], b, c; | a=[%s] b=0 c=%d mask=0x%x\n", wp.f.space, wp.f.typ, wp.lanes, r.IntN(2), wp.pending)
			continue
		}
		won := wp.pending & r.Uint32()
		if won == 0 {
			won = wp.pending & -wp.pending
		}
		fmt.Fprintf(&b, "atom.%s.%s.%s _, [a], b; | a=[%s] b=%d mask=0x%x\n", wp.f.space, wp.f.rel, wp.f.relTyp, wp.lanes, r.IntN(2), won)
		wp.pending &^= won
		wp.tries = 0
		if wp.pending == 0 {
			*wp = fresh()
		}
	}
	return b.String()
}

// TestItem50_LockWarpsEqualReference: a spinlock's warps (randomLockWarps)
// replay as the reference does, under every sink configuration, option
// set and trace form; and the lean replay takes the groups of most CASes
// and releases from its warp's entry for the plan (fewWarps), under
// whatever mask: of 40 traces of 60 instructions, each warp's first CAS
// and first release of a list group their lanes, as does a warp after a
// region changed its plan, or in another batch (after an init). With one
// entry a warp, met only under the same mask and plan, a CAS after a
// release, and nearly every release, grouped anew.
func TestItem50_LockWarpsEqualReference(t *testing.T) {
	srcs := equalOnRandom(t, randomLockWarps, 50)
	hits, insts := 0, 0
	for _, src := range srcs {
		sink, _ := sinkFor(true, false)
		hits += runEngine(t, src, sink, WithWorkers(1)).fewHits
		insts += strings.Count(src, "atom.")
	}
	// 55% with an entry a plan covering the lanes; 39% with one entry
	// met under the same mask and plan alone.
	if hits*100 < insts*48 {
		t.Errorf("%d of %d warps took their groups from their entry, want 48%% or more", hits, insts)
	}
}

// TestItem50_NamedVectorsEqualReference: a spinlock's warps read from a
// binary trace in chunks long enough for a warp's retries to meet its
// entry (trace.Inst.VecID) share the vectors of their warp's last
// instruction of that id in the batch (batch.addNamed), and meet their
// few-address entry by those vectors' place, without comparing their
// lists (fewWarps.find): the memory, results and statistics are the
// reference's under every sink and engine options.
func TestItem50_NamedVectorsEqualReference(t *testing.T) {
	var srcs []string
	for seed := uint64(1); seed <= 24; seed++ {
		srcs = append(srcs, randomLockWarps(rand.New(rand.NewPCG(seed, 51)), 200))
	}
	shares, named, insts := 0, 0, 0
	for i, src := range srcs {
		wants := [2]outcome{referenceUnder(t, src, false), referenceUnder(t, src, true)}
		for ci := range sinkConfigs {
			cfg := &sinkConfigs[ci]
			t.Run(fmt.Sprint(cfg.name, "/seed", i+1), func(t *testing.T) {
				want := wants[0]
				if cfg.explore {
					want = wants[1]
				}
				equalUnderChunks(t, src, cfg, engineOptSets[(i+ci)%len(engineOptSets)], 1024, want)
			})
		}
		br, err := trace.NewBinaryReader(bytes.NewReader(binaryOfChunks(t, src, 1024)))
		if err != nil {
			t.Fatal(err)
		}
		e, err := testReplayer(br.Header(), WithWorkers(1))
		if err != nil {
			t.Fatal(err)
		}
		sink, _ := sinkFor(true, false)
		if _, err := e.run(t.Context(), br, sink); err != nil {
			t.Fatal(err)
		}
		shares += e.namedShares
		named += e.fewNamed
		insts += strings.Count(src, "atom.")
	}
	// 20% retry their warp's last instruction of their static on the
	// same list in the same batch; 6% of them on lanes its entry covers.
	if shares*100 < insts*16 {
		t.Errorf("%d of %d instructions shared the vectors of one before by their VecID, want 16%% or more", shares, insts)
	}
	if named*100 < insts*5 {
		t.Errorf("%d of %d warps met their few-address entry by their vectors, want 5%% or more", named, insts)
	}
}

// lockWords draws 2 to 5 lock words of a random warp of the fewWarps tests:
// among the first 8 words of the type's size, at 0x1000 in global memory
// (the tests' region) or at 0 in shared memory.
func lockWords(r *rand.Rand, space, typ string) []uint64 {
	size, base := uint64(4), uint64(0x1000)
	if typ == "b64" {
		size = 8
	}
	if space == "shared" {
		base = 0
	}
	words := make([]uint64, 2+r.IntN(4))
	for i := range words {
		words[i] = base + uint64(r.IntN(8))*size
	}
	return words
}
