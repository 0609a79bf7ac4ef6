package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
	"io"
	"math/bits"
	"math/rand/v2"
)

// TestRouterCounts: the row a split gives an instruction counts what a
// whole replay counts over all its lanes, whatever path counts them: a
// full warp in one 4 GiB span (the AVX-512 path where the machine has it),
// a full warp whose addresses differ only above bit 31 (which a count of
// the low 32 bits would take for one address each), and a partial warp.
func TestRouterCounts(t *testing.T) {
	list := func(addr func(lane int) uint64) string {
		var vs []string
		for l := range 32 {
			vs = append(vs, fmt.Sprintf("%#x", addr(l)))
		}
		return "[" + strings.Join(vs, ",") + "]"
	}
	for _, tc := range []struct {
		name, bind                  string
		lanes, addrs, maxc, sectors uint32
	}{
		// Lanes 0-15 on 16 words of 0x1000 (two sectors), lanes 16-31 on
		// the same words again: 16 addresses, 2 lanes each.
		{"one span", "a=" + list(func(l int) uint64 { return 0x1000 + uint64(l%16)*4 }), 32, 16, 2, 2},
		// Lanes 16-31 4 GiB above lanes 0-15: 32 addresses, 4 sectors.
		{"across 4 GiB", "a=" + list(func(l int) uint64 { return 0x1000 + uint64(l/16)<<32 + uint64(l%16)*4 }), 32, 32, 1, 4},
		// Scattered, a sector each, lanes 0 and 31 both on 0x8000.
		{"scattered", "a=" + list(func(l int) uint64 { return uint64((l%31)*(l%31))*64 + 0x8000 }), 32, 31, 2, 31},
		// Half the lanes: 0x100, 0x104, … 0x13c: 16 addresses, 2 sectors.
		{"partial", "a=0x100:4 mask=0xffff", 16, 16, 1, 2},
	} {
		src := "atom.global.add.u32 d, [a], 1; | " + tc.bind + "\n"
		tr, err := trace.NewTextReader(strings.NewReader(src), tc.name+".tasm")
		if err != nil {
			t.Fatal(err)
		}
		in, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, n := range []int{1, 3, 8} {
			rt, err := engine.NewRouter(tr.Header(), n)
			if err != nil {
				t.Fatal(err)
			}
			r, err := rt.Route(in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Lanes != tc.lanes || r.Addresses != tc.addrs || r.MaxConflict != tc.maxc || r.Sectors != tc.sectors {
				t.Errorf("%s, %d partitions: lanes %d, addresses %d, max conflict %d, sectors %d; want %d, %d, %d, %d",
					tc.name, n, r.Lanes, r.Addresses, r.MaxConflict, r.Sectors, tc.lanes, tc.addrs, tc.maxc, tc.sectors)
			}
			var owned uint32
			for _, p := range r.Parts {
				owned |= r.Owners[p]
			}
			if owned != in.Active() {
				t.Errorf("%s, %d partitions: the partitions own lanes %#x, the active lanes are %#x", tc.name, n, owned, in.Active())
			}
		}
	}
}

// TestRouterCountsPartialWarps: the row of a warp of 9 to 31 active lanes
// (a BFS's frontier, which the AVX-512 count takes padded to a full warp
// where the machine has it) counts its distinct addresses, the most lanes
// on one and its distinct sectors as a map of its lanes does, for lanes
// on a few words (conflicts), scattered over a page or 4 GiB, across 4
// GiB (the high halves differ: no AVX-512), and not aligned (no padding).
func TestRouterCountsPartialWarps(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	rt, err := engine.NewRouter(&trace.Header{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	st, err := trace.ParseStatic("atom.global.add.u32 d, [a], b")
	if err != nil {
		t.Fatal(err)
	}
	for trial := range 4000 {
		var mask uint32
		for bits.OnesCount32(mask) < 9 || mask == ^uint32(0) {
			mask = rng.Uint32() | rng.Uint32()
		}
		base := uint64(rng.Uint32())<<8 | 0xfff00000
		list := make([]uint64, 32)
		for l := range list {
			switch trial % 4 {
			case 0: // a few words
				list[l] = base + rng.Uint64N(3)*4
			case 1: // scattered within 4 GiB
				list[l] = base + rng.Uint64N(1<<20)*4
			case 2: // across 4 GiB: equal low halves, other high ones
				list[l] = base + rng.Uint64N(2)<<32 + rng.Uint64N(4)*4
			default: // not aligned
				list[l] = base + rng.Uint64N(64)
			}
		}
		in := &trace.Inst{Static: st, Mask: mask, Vals: []trace.Vector{{Kind: trace.VecList, List: list}, {Kind: trace.VecBroadcast, Base: 1}}}
		r, err := rt.Route(in)
		if err != nil {
			t.Fatal(err)
		}
		lanes := map[uint64]uint32{}
		sectors := map[uint64]bool{}
		var maxc uint32
		for m := mask; m != 0; m &= m - 1 {
			a := list[bits.TrailingZeros32(m)]
			lanes[a]++
			maxc = max(maxc, lanes[a])
			sectors[a>>5] = true
		}
		if r.Addresses != uint32(len(lanes)) || r.MaxConflict != maxc || r.Sectors != uint32(len(sectors)) {
			t.Fatalf("trial %d, mask %#x: addresses %d, max conflict %d, sectors %d; want %d, %d, %d",
				trial, mask, r.Addresses, r.MaxConflict, r.Sectors, len(lanes), maxc, len(sectors))
		}
	}
}

// TestWarpSectors: a full warp's distinct 32-byte sectors, counted with
// AVX-512 (where the machine has it) or sorted, are the sectors a map
// counts, for warps in order, scattered, repeating, and with sectors that
// differ only above their low 32 bits (addresses 2^37 bytes apart), which
// the AVX-512 count, comparing those bits, must leave to the sort.
func TestWarpSectors(t *testing.T) {
	warp := func(addr func(lane int) uint64) []uint64 {
		a := make([]uint64, 32)
		for l := range a {
			a[l] = addr(l)
		}
		return a
	}
	for _, tc := range []struct {
		name  string
		addrs []uint64
		want  uint32
	}{
		{"coalesced", warp(func(l int) uint64 { return 0x1000 + uint64(l)*4 }), 4},
		{"reversed", warp(func(l int) uint64 { return 0x1000 + uint64(31-l)*4 }), 4},
		{"scattered", warp(func(l int) uint64 { return uint64(l*7919%32)*4096 + uint64(l%3)*32 }), 32},
		{"pairs", warp(func(l int) uint64 { return uint64(l/2) * 64 }), 16},
		{"one word", warp(func(int) uint64 { return 0x40 }), 1},
		{"2^37 apart", warp(func(l int) uint64 { return uint64(l%2)<<37 + uint64(l/2)*32 }), 32},
	} {
		seen := map[uint64]bool{}
		for _, a := range tc.addrs {
			seen[a>>5] = true
		}
		if uint32(len(seen)) != tc.want {
			t.Fatalf("%s: the case has %d sectors, not %d", tc.name, len(seen), tc.want)
		}
		for _, avx := range []bool{false, engine.HasConflictsAVX512()} {
			if got := engine.WarpSectors(slices.Clone(tc.addrs), avx); got != tc.want {
				t.Errorf("%s (AVX-512 %v): %d sectors, want %d", tc.name, avx, got, tc.want)
			}
		}
	}
}

// TestRouterParts: Route's partitions are, ascending and once each, those
// that PartitionOf gives the active lanes' addresses, and Owners holds
// each one's lanes exactly, for partition counts that fit a word's bits
// (64 and fewer) and that do not, and for a second instruction whose
// partitions differ from the first's (nothing of the first's left).
func TestRouterParts(t *testing.T) {
	var src strings.Builder
	for k, mul := range []uint64{0x1d3, 0x3f1} {
		var vs []string
		for l := range 32 {
			vs = append(vs, fmt.Sprintf("%#x", 0x10000+uint64(l)*uint64(l)*mul*4+uint64(k)*0x100000))
		}
		fmt.Fprintf(&src, "atom.global.add.u32 d, [a], 1; | a=[%s] mask=%#x\n", strings.Join(vs, ","), uint32(0xfff0fff7)>>k)
	}
	for _, n := range []int{3, 8, 64, 65, 200} {
		tr, err := trace.NewTextReader(strings.NewReader(src.String()), "parts.tasm")
		if err != nil {
			t.Fatal(err)
		}
		rt, err := engine.NewRouter(tr.Header(), n)
		if err != nil {
			t.Fatal(err)
		}
		for {
			in, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[int]uint32{}
			for m := in.Active(); m != 0; m &= m - 1 {
				l := bits.TrailingZeros32(m)
				p := engine.PartitionOf(in.Static.Space, in.Group, in.Vals[in.Static.Addr].Lo(l), n)
				want[p] |= 1 << l
			}
			var wantParts []int
			for p := range want {
				wantParts = append(wantParts, p)
			}
			slices.Sort(wantParts)
			r, err := rt.Route(in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Parts, wantParts) {
				t.Errorf("%d partitions, seq %d: parts %v, want %v", n, in.Seq, r.Parts, wantParts)
			}
			for p := range n {
				if r.Owners[p] != want[p] {
					t.Errorf("%d partitions, seq %d: partition %d owns lanes %#x, want %#x", n, in.Seq, p, r.Owners[p], want[p])
				}
			}
		}
	}
}

// TestRouterFoldBounds: an instruction folds (Routed.Fold) only when every
// active lane's access is in bounds of the regions and outside the SASS
// windows the router knows, aligned; the router tests the span of the
// lanes' addresses at once where it lies in one region and no window,
// and lane by lane otherwise (lanes in two regions, or on both sides of
// a window): both must give the per-lane answer. Folds gives the lanes'
// operands in lane order, from a list, a stride, an immediate, or a list
// under a partial mask.
func TestRouterFoldBounds(t *testing.T) {
	lanes := func(f func(l int) uint64, n int) string {
		var vs []string
		for l := range n {
			vs = append(vs, fmt.Sprintf("%#x", f(l)))
		}
		return "[" + strings.Join(vs, ",") + "]"
	}
	seq := func(n int, f func(l int) uint64) []uint64 {
		var out []uint64
		for l := range n {
			out = append(out, f(l))
		}
		return out
	}
	const ptx = ".region global 0x1000 0x1000\n.region global 0x3000 0x100\n"
	const sass = ".window shared 0x2000 0x100\n"
	for _, tc := range []struct {
		name, hdr, inst string
		vals            []uint64 // nil: does not fold
	}{
		{"in one region", ptx, "atom.global.add.u32 d, [a], v; | a=0x1000:4 v=0:1", seq(32, func(l int) uint64 { return uint64(l) })},
		{"at the region's end", ptx, "atom.global.add.u32 d, [a], v; | a=0x1f80:4 v=7", seq(32, func(int) uint64 { return 7 })},
		{"past the region's end", ptx, "atom.global.add.u32 d, [a], v; | a=0x1fc0:4 v=7", nil},
		{"in two regions", ptx, "atom.global.add.u32 d, [a], 3; | a=" + lanes(func(l int) uint64 { return 0x1000 + uint64(l%2)*0x2000 + uint64(l)*8 }, 32),
			seq(32, func(int) uint64 { return 3 })},
		{"between two regions", ptx, "atom.global.add.u32 d, [a], 3; | a=" + lanes(func(l int) uint64 { return 0x1000 + uint64(l)*0x100 }, 32), nil},
		{"misaligned", ptx, "atom.global.add.u32 d, [a], 3; | a=0x1002:4", nil},
		{"a list, a partial mask", ptx, "atom.global.min.u32 d, [a], v; | a=0x1000:8 v=" + lanes(func(l int) uint64 { return uint64(100 + l) }, 32) + " mask=0x80000101",
			[]uint64{100, 108, 131}},
		{"64 bits in one region", ptx, "atom.global.add.u64 d, [a], v; | a=0x1800:8 v=5:2", seq(32, func(l int) uint64 { return 5 + 2*uint64(l) })},
		{"below a window", sass, "ATOM.ADD R0, [R2], R3 | R2=0x1000:4 R3=0:1", seq(32, func(l int) uint64 { return uint64(l) })},
		{"into a window", sass, "ATOM.ADD R0, [R2], R3 | R2=0x1f80:8 R3=1", nil},
		{"around a window", sass, "ATOM.ADD R0, [R2], R3 | R2=" + lanes(func(l int) uint64 { return 0x1000 + uint64(l%2)*0x2000 + uint64(l)*4 }, 32) + " R3=1",
			seq(32, func(int) uint64 { return 1 })},
	} {
		tr, err := trace.NewTextReader(strings.NewReader(tc.hdr+tc.inst+"\n"), tc.name+".tasm")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		in, err := tr.Next()
		for err == nil && in.Dir != nil {
			in, err = tr.Next()
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rt, err := engine.NewRouter(tr.Header(), 3)
		if err != nil {
			t.Fatal(err)
		}
		rt.SetFold(true)
		r, err := rt.Route(in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Fold.Valid() != (tc.vals != nil) {
			t.Errorf("%s: folds %v, want %v", tc.name, r.Fold.Valid(), tc.vals != nil)
			continue
		}
		if tc.vals == nil {
			if len(r.Parts) == 0 {
				t.Errorf("%s: does not fold, and routed to no partition", tc.name)
			}
			continue
		}
		if len(r.Parts) != 0 {
			t.Errorf("%s: folds, and routed to partitions %v", tc.name, r.Parts)
		}
		addrs, vals := rt.Folds()
		if !slices.Equal(vals, tc.vals) || len(addrs) != len(vals) {
			t.Errorf("%s: operands %v (%d addresses), want %v", tc.name, vals, len(addrs), tc.vals)
		}
	}
}

// TestRouteIntoReusesRouted: RouteInto into one Routed, instruction after
// instruction (as a split routes), sets it as Route returns a new one
// each time: an instruction that does not fold after one that does has no
// FoldOp left of it, and one that folds after another of other bounds and
// width has its own.
func TestRouteIntoReusesRouted(t *testing.T) {
	const src = ".region global 0x1000 0x1000\n" +
		"atom.global.add.u32 d, [a], v; | a=0x1000:4 v=0:1\n" +
		"atom.global.add.u32 d, [a], v; | a=0x1fc0:4 v=7\n" +
		"atom.global.min.u64 d, [a], v; | a=0x1800:8 v=5:2\n" +
		"atom.global.add.u32 d, [a], 3; | a=0x1002:4\n" +
		".region global 0x8000 0x100\n" +
		"atom.global.max.u32 d, [a], v; | a=0x8000:4 v=1 mask=0x3\n" +
		"atom.global.cas.b32 d, [a], 1, 2; | a=0x1000:4\n"
	tr, err := trace.NewTextReader(strings.NewReader(src), "reuse.tasm")
	if err != nil {
		t.Fatal(err)
	}
	into, err := engine.NewRouter(tr.Header(), 3)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := engine.NewRouter(tr.Header(), 3)
	if err != nil {
		t.Fatal(err)
	}
	into.SetFold(true)
	fresh.SetFold(true)
	var r engine.Routed
	folds := 0
	for {
		in, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if in.Dir != nil {
			if reg := in.Dir.Region; reg != nil {
				into.Region(*reg)
				fresh.Region(*reg)
			}
			continue
		}
		if err := into.RouteInto(in, &r); err != nil {
			t.Fatal(err)
		}
		want, err := fresh.Route(in)
		if err != nil {
			t.Fatal(err)
		}
		if r.Fold != want.Fold || r.Lanes != want.Lanes || r.Addresses != want.Addresses || r.MaxConflict != want.MaxConflict ||
			r.Sectors != want.Sectors || !slices.Equal(r.Parts, want.Parts) || !slices.Equal(r.Owners, want.Owners) {
			t.Errorf("seq %d (%s): RouteInto gives %+v, Route %+v", in.Seq, in.Static.Text, r, want)
		}
		if r.Fold.Valid() {
			folds++
		}
	}
	if folds != 3 {
		t.Errorf("%d instructions fold, want 3", folds)
	}
}
