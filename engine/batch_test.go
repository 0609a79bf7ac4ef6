package engine

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// batchSizes is a Sink that keeps each batch's instruction count: the
// engine hands a batch's statistics to Instructions once.
type batchSizes struct {
	NopSink
	sizes []int
}

func (*batchSizes) Caps() SinkCaps { return 0 }

func (s *batchSizes) Instructions(st []InstStat) error {
	s.sizes = append(s.sizes, len(st))
	return nil
}

// listAdds is a trace of n 32-bit adds whose addresses and sources are
// both per-lane lists when lists is set (64 list values an instruction),
// and a strided address with a constant source otherwise.
func listAdds(n int, lists bool) string {
	var b strings.Builder
	b.WriteString(".region global 0x10000 0x10000\n")
	for i := range n {
		if !lists {
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b | a=0x%x:4 b=%d\n", 0x10000+128*(i%64), i)
			continue
		}
		as, vs := make([]string, 32), make([]string, 32)
		for l := range as {
			as[l] = fmt.Sprintf("0x%x", 0x10000+4*((i*37+l*101)%0x4000))
			vs[l] = fmt.Sprint(i + l)
		}
		fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b | a=[%s] b=[%s]\n", strings.Join(as, ","), strings.Join(vs, ","))
	}
	return b.String()
}

// TestBatchEndsAtListBudget checks where batches end: at the instruction
// count (WithBatchInsts) or, first, once their per-lane lists fill the
// list budget (defaultBatchListBytes: 512 KiB, 1024 instructions of two
// 32-lane lists), read from text (lists copied into the batch) or from
// the binary form (lists decoded into it); and that the cut changes
// nothing in the replay.
func TestBatchEndsAtListBudget(t *testing.T) {
	withLists, without := listAdds(2500, true), listAdds(5000, false)
	cases := []struct {
		name string
		src  string
		opts []Option
		want []int
	}{
		{"lists, default budget", withLists, nil, []int{1024, 1024, 452}},
		{"lists, 10 instructions' worth", listAdds(45, true), []Option{withBatchListBytes(10 * 64 * 8)}, []int{10, 10, 10, 10, 5}},
		{"lists, fewer instructions than the budget", withLists, []Option{WithBatchInsts(1000)}, []int{1000, 1000, 500}},
		{"no lists", without, []Option{withBatchListBytes(8)}, []int{4096, 904}},
	}
	for _, c := range cases {
		for _, binary := range []bool{false, true} {
			src := textSource(t, c.src)
			if binary {
				br, err := trace.NewBinaryReader(bytes.NewReader(binaryOf(t, c.src)))
				if err != nil {
					t.Fatal(err)
				}
				src = br
			}
			var s batchSizes
			if _, err := Replay(t.Context(), src, &s, append(c.opts, WithWorkers(2))...); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.sizes, c.want) {
				t.Errorf("%s (binary %v): batches of %v instructions, want %v", c.name, binary, s.sizes, c.want)
			}
		}
	}
	equalToReference(t, listAdds(200, true), []Option{WithWorkers(1), withBatchListBytes(7 * 64 * 8)}, []Option{WithWorkers(2), WithShards(5), withBatchListBytes(1)})
}

// TestRecIsWordAdd checks what add32Vals relies on to hand its records to
// shard.Memory.AddWords unconverted: a record is a shard.WordAdd, the
// word reference then the addend (in slot), 8 bytes.
func TestRecIsWordAdd(t *testing.T) {
	var r rec
	var a shard.WordAdd
	if unsafe.Sizeof(r) != unsafe.Sizeof(a) || unsafe.Offsetof(r.word) != unsafe.Offsetof(a.Word) ||
		unsafe.Offsetof(r.slot) != unsafe.Offsetof(a.Add) || unsafe.Alignof(r) < unsafe.Alignof(a) {
		t.Fatalf("rec (size %d, word at %d, slot at %d) is not shard.WordAdd (size %d, Word at %d, Add at %d)",
			unsafe.Sizeof(r), unsafe.Offsetof(r.word), unsafe.Offsetof(r.slot),
			unsafe.Sizeof(a), unsafe.Offsetof(a.Word), unsafe.Offsetof(a.Add))
	}
}

// TestSharedScalarVectors checks that an instruction whose vectors are all
// scalar and equal to the last instruction's shares them in the batch (a
// hot counter's warps), that any difference (a value, a kind, a list, the
// number of inputs) gives an instruction vectors of its own, and that each
// instruction reads back its own values either way.
func TestSharedScalarVectors(t *testing.T) {
	add, err := trace.ParseStatic("atom.global.add.u32 d, [a], b")
	if err != nil {
		t.Fatal(err)
	}
	cas, err := trace.ParseStatic("atom.global.cas.b32 d, [a], b, c")
	if err != nil {
		t.Fatal(err)
	}
	bc := func(x uint64) trace.Vector { return trace.Vector{Kind: trace.VecBroadcast, Base: x} }
	stride := func(x, s uint64) trace.Vector { return trace.Vector{Kind: trace.VecStride, Base: x, Stride: s} }
	list := trace.Vector{Kind: trace.VecList, List: []uint64{0x100, 0x104}}
	insts := []struct {
		st     *trace.Static
		vals   []trace.Vector
		shares bool // the vectors of the instruction before
	}{
		{add, []trace.Vector{bc(0x100), bc(1)}, false},
		{add, []trace.Vector{bc(0x100), bc(1)}, true},
		{add, []trace.Vector{bc(0x100), bc(1)}, true},
		{add, []trace.Vector{bc(0x100), bc(2)}, false},
		{add, []trace.Vector{stride(0x100, 4), bc(2)}, false},
		{add, []trace.Vector{stride(0x100, 4), bc(2)}, true},
		{add, []trace.Vector{stride(0x100, 8), bc(2)}, false},
		{add, []trace.Vector{list, bc(2)}, false},
		{add, []trace.Vector{list, bc(2)}, false}, // lists are never shared
		{cas, []trace.Vector{list, bc(2), bc(3)}, false},
		{add, []trace.Vector{bc(2), bc(2)}, false},
		{cas, []trace.Vector{bc(2), bc(2), bc(3)}, false},
		{cas, []trace.Vector{bc(2), bc(2), bc(3)}, true},
	}
	b := &batch{}
	b.reset(1, 1, 1)
	for i, in := range insts {
		p, err := newPlan(in.st, &trace.Header{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.add(&trace.Inst{Seq: uint64(i), Static: in.st, Mask: 3, Vals: in.vals}, p, 0, false)
		got := b.insts[i].vals
		if i > 0 {
			if prev := b.insts[i-1].vals; (got == prev) != in.shares {
				t.Errorf("instruction %d: vectors at %d, the one before's at %d; want shared %v", i, got, prev, in.shares)
			}
		}
		x := xinst{binst: b.insts[i], vecs: b.vecs, arena: b.arena}
		for j, v := range in.vals {
			for lane := range 2 {
				if lo, want := x.lo(j, lane), v.Lo(lane); lo != want {
					t.Errorf("instruction %d, input %d, lane %d: reads %#x, want %#x", i, j, lane, lo, want)
				}
			}
		}
	}
	if n := len(b.vecs); n != 2+2+2+2+2+2+3+2+3 {
		t.Errorf("the batch holds %d vectors, want 20: one set per run of equal scalars", n)
	}
}

// TestWarpBounds: a full warp's address bounds, by listBits where the
// plan's regions allow (plan.bitSpan: each 2^k bytes at a multiple of
// 2^k), else by listSpan, decide expandWarp's questions as the exact
// lowest and highest addresses do: one address, one page, inside a region.
func TestWarpBounds(t *testing.T) {
	st, err := trace.ParseStatic("atom.global.add.u32 _, [a], 1")
	if err != nil {
		t.Fatal(err)
	}
	global := func(rs ...trace.Region) map[trace.Space][]trace.Region {
		return map[trace.Space][]trace.Region{trace.Global: rs}
	}
	for _, c := range []struct {
		regions map[trace.Space][]trace.Region
		bitSpan bool
	}{
		{nil, true},
		{global(trace.Region{Space: trace.Global, Base: 0x10000, Size: 0x1000}), true},
		{global(trace.Region{Space: trace.Global, Base: 0x10000, Size: 0x10000}, trace.Region{Space: trace.Global, Base: 0x40000, Size: 0x400}), true},
		{global(trace.Region{Space: trace.Global, Base: 0x10400, Size: 0x1000}), false}, // not at a multiple of its size
		{global(trace.Region{Space: trace.Global, Base: 0x10000, Size: 0x1800}), false}, // not a power of two
		{global(trace.Region{Space: trace.Global, Base: 0x10000, Size: 0x1000}, trace.Region{Space: trace.Global, Base: 0x20000, Size: 0x300}), false},
	} {
		p, err := newPlan(st, &trace.Header{}, c.regions)
		if err != nil {
			t.Fatal(err)
		}
		if p.bitSpan != c.bitSpan {
			t.Errorf("regions %v: bitSpan %v, want %v", c.regions, p.bitSpan, c.bitSpan)
		}
		r := rand.New(rand.NewPCG(uint64(len(c.regions)), 3))
		for range 2000 {
			var list [trace.MaxLanes]uint64
			base := uint64(0x10000)
			if r.IntN(2) == 0 {
				base = 0x40000
			}
			spread := uint64(1) << r.IntN(18)
			one := r.IntN(8) == 0
			for l := range list {
				list[l] = base + r.Uint64N(spread)&^3
				if one {
					list[l] = list[0]
				}
			}
			b := &batch{}
			b.reset(1, 1, 1)
			b.add(&trace.Inst{Static: st, Mask: ^uint32(0), Vals: []trace.Vector{{Kind: trace.VecList, List: list[:]}}}, p, 0, false)
			b.finishAdd([]*plan{p})
			x := xinst{binst: b.insts[0], plan: p, vecs: b.vecs, arena: b.arena}
			_, sp := warpAddresses(&x, nil, true, false)
			lo, hi := slices.Min(list[:]), slices.Max(list[:])
			if got, want := sp.lo == sp.hi, lo == hi; got != want {
				t.Fatalf("regions %v, %#x: one address %v, want %v", c.regions, list, got, want)
			}
			if got, want := sp.lo>>shard.PageShift == sp.hi>>shard.PageShift, lo>>shard.PageShift == hi>>shard.PageShift; got != want {
				t.Fatalf("regions %v, %#x: one page %v, want %v", c.regions, list, got, want)
			}
			if got, want := p.inRegion(sp.lo, sp.hi), p.inRegion(lo, hi); got != want {
				t.Fatalf("regions %v, %#x: in a region %v, want %v", c.regions, list, got, want)
			}
			if sp.lo > lo || sp.hi < hi {
				t.Fatalf("regions %v, %#x: bounds [%#x, %#x] do not hold [%#x, %#x]", c.regions, list, sp.lo, sp.hi, lo, hi)
			}
		}
	}
}

// TestRepeatedRecords: a binary trace whose records repeat the one before
// (hot counters on a global word and on each group's shared word, a CAS
// whose lanes get values back, with and without a mask), which the engine
// takes from the reader a run at a time (trace.CapRepeat, addRepeats),
// replays as the reference does, under batches that cut the runs short,
// directives between them, 1 to 3 workers, with and without per-lane rows
// and the addresses table; and with an interleaving window, which reads
// them one by one.
func TestRepeatedRecords(t *testing.T) {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x100\n.region shared 0x0 0x40\n")
	warp, group := 0, 0
	next := func(dg, dw int) {
		group, warp = group+dg, warp+dw
		fmt.Fprintf(&b, ".group %d\n.warp %d\n", group, warp)
	}
	for i := range 12 {
		for range 9 + 7*i {
			next(0, 1)
			b.WriteString("atom.global.add.u32 _, [a], b; | a=0x1000 b=3\n")
		}
		for range 5 + 3*i {
			next(1, 0)
			b.WriteString("atom.shared.add.u32 d, [a], b; | a=0x8 b=1 mask=0xff\n")
		}
		for range 4 + i {
			next(0, 2)
			b.WriteString("atom.global.cas.b32 d, [a], b, c; | a=0x1040:4 b=0 c=7\n")
		}
		if i%4 == 3 {
			b.WriteString(".init global 0x1080 u32 5\n")
		}
	}
	src := b.String()
	bin := binaryOfChunks(t, src, 100)
	plain := referenceOutcome(t, src)
	order := []Option{WithOrder(OrderRandom, 7), WithInterleave(3)}
	var ref Collector
	if _, err := replayReference(t.Context(), textSource(t, src), &ref, append(order, WithExplore(true))...); err != nil {
		t.Fatal(err)
	}
	interleavedWant := collect(&ref)
	for _, opts := range [][]Option{
		{WithWorkers(1), WithBatchInsts(16)},
		{WithWorkers(2), WithBatchInsts(37)},
		{WithWorkers(3)},
		append([]Option{WithWorkers(2), WithBatchInsts(40)}, order...),
	} {
		interleaved := len(opts) == 4
		want := plain
		if interleaved {
			want = interleavedWant
		}
		for _, lean := range []bool{false, true} {
			for _, addrs := range []bool{false, true} {
				br, err := trace.NewBinaryReader(bytes.NewReader(bin))
				if err != nil {
					t.Fatal(err)
				}
				e, err := testReplayer(br.Header(), append(opts[:len(opts):len(opts)], WithExplore(true))...)
				if err != nil {
					t.Fatal(err)
				}
				sink, c := sinkFor(lean, addrs)
				sum, err := e.run(context.Background(), br, sink)
				if err != nil {
					t.Fatal(err)
				}
				if took := sum.RepeatInsts > 0; took == interleaved {
					t.Errorf("%d options (interleaved %v): %d instructions taken as repeats", len(opts), interleaved, sum.RepeatInsts)
				}
				sameAsReference(t, c, want, lean, addrs, fmt.Sprintf("%d options, lean %v, addresses %v", len(opts), lean, addrs))
			}
		}
	}
}

// TestScatteredLanesGetResults: warps whose lanes scatter over pages and
// get a result each, 16- and 32-bit, at every byte a 16-bit access may
// start at, and again at words earlier lanes hit: the route that makes a
// lane's (word, slot) record in the loop that resolves its word
// (routeScatter, one owner) applies and returns what the reference does.
func TestScatteredLanesGetResults(t *testing.T) {
	var b strings.Builder
	b.WriteString(".region global 0x10000 0x40000\n")
	for i := range 40 {
		for _, in := range []struct {
			op   string
			size int
		}{{"atom.global.cas.b16 d, [a], b, c", 2}, {"atom.global.add.noftz.f16 d, [a], b", 2}, {"atom.global.exch.b32 d, [a], b", 4}, {"atom.global.add.u32 d, [a], b", 4}} {
			as, bs, cs := make([]string, 32), make([]string, 32), make([]string, 32)
			for l := range as {
				// Lanes 4096 bytes apart (a page each), a few of them
				// on a word an earlier lane hit.
				off := (i*7919 + l*4096 + (l%3)*in.size) % 0x3fff0
				if l%5 == 4 {
					off = (i*7919 + (l-4)*4096) % 0x3fff0
				}
				off &^= in.size - 1
				as[l] = fmt.Sprintf("0x%x", 0x10000+off)
				bs[l], cs[l] = fmt.Sprint((i*31+l)%7), fmt.Sprint((i+l)%5)
			}
			fmt.Fprintf(&b, "%s | a=[%s] b=[%s] c=[%s]\n", in.op, strings.Join(as, ","), strings.Join(bs, ","), strings.Join(cs, ","))
		}
	}
	equalToReference(t, b.String(), []Option{WithWorkers(1)}, []Option{WithWorkers(2), WithShards(1)}, []Option{WithWorkers(2), WithBatchInsts(7)})
}

// TestWarpSourcesFromLists forces fillSource's list path: a warp's
// per-lane sources copied from the arena a warp at a time (every lane,
// and lanes 0..n-1 of a partial mask) or lane by lane (any other mask),
// into the operand slots that a replay returning values applies from.
// The warps are scattered over words some lanes share, so each lane's
// returned value depends on which source went to which slot; a CAS has
// two list sources; an LSC d16u32h store takes its source's bits 31:16
// (srcShift); a vISA SIMD16 add has 16 lanes.
func TestWarpSourcesFromLists(t *testing.T) {
	var b strings.Builder
	b.WriteString(".region global 0x10000 0x10000\n")
	list := func(n int, f func(l int) int) string {
		vs := make([]string, n)
		for l := range vs {
			vs[l] = fmt.Sprint(f(l))
		}
		return strings.Join(vs, ",")
	}
	for i := range 24 {
		mask := []string{"", " mask=0xff", " mask=0x5a5a5a5a", " mask=0x80000001"}[i%4]
		addrs := list(32, func(l int) int { return 0x10000 + 4*((i*13+l*7)%48) })
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b | a=[%s] b=[%s]%s\n", addrs, list(32, func(l int) int { return i*100 + l + 1 }), mask)
		fmt.Fprintf(&b, "atom.global.cas.b32 d, [a], b, c | a=[%s] b=[%s] c=[%s]%s\n", addrs,
			list(32, func(l int) int { return (i + l) % 3 * 7 }), list(32, func(l int) int { return i*1000 + l }), mask)
		fmt.Fprintf(&b, "lsc_store.ugm (M1,16) flat[V12]:a64 V13:d16u32h | V12=[%s] V13=[%s]\n",
			list(16, func(l int) int { return 0x10100 + 2*((i+l*5)%24) }), list(16, func(l int) int { return (i*16 + l) << 16 }))
		fmt.Fprintf(&b, "DWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12 | V10=[%s] V11=[%s]\n",
			list(16, func(l int) int { return 0x10200 + 4*((i*3+l*5)%20) }), list(16, func(l int) int { return i + l*l }))
	}
	equalToReference(t, b.String(), []Option{WithWorkers(1)}, []Option{WithWorkers(2), WithShards(3)}, []Option{WithWorkers(2), WithBatchInsts(5)})
}

// TestWordWarpResultsEqualReference forces applyUniform's loop of 32-bit
// adds on one word (addLanesUniform, addLanesPrefix): warps whose lanes
// all hit one word, with one addend (a hot counter's) or one a lane,
// returning their old values or nothing, under full and partial masks,
// near 2^32 so that the sums wrap; a vISA SIMD16 warp alike, and a
// 64-bit add and a CAS between them on the same word, which take the
// general loop.
func TestWordWarpResultsEqualReference(t *testing.T) {
	var b strings.Builder
	b.WriteString(".region global 0x10000 0x1000\n")
	list := func(n int, f func(l int) int) string {
		vs := make([]string, n)
		for l := range vs {
			vs[l] = fmt.Sprint(f(l))
		}
		return strings.Join(vs, ",")
	}
	for i := range 30 {
		mask := []string{"", " mask=0xffff", " mask=0x5a5a5a5a", " mask=0x80000001", " mask=0x7fffffff"}[i%5]
		word := 0x10000 + 4*(i%3)
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b | a=0x%x b=%d%s\n", word, []int{1, 7, 0x7fffffff, 0xfffffffd}[i%4], mask)
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b | a=0x%x b=[%s]%s\n", word, list(32, func(l int) int { return (i*977 + l*0x1000_0001) % (1 << 32) }), mask)
		fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b | a=0x%x b=[%s]%s\n", word, list(32, func(l int) int { return i*3 + l }), mask)
		fmt.Fprintf(&b, "DWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12 | V10=0x%x V11=[%s]\n", word, list(16, func(l int) int { return i + l*l }))
		fmt.Fprintf(&b, "DWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12 | V10=0x%x V11=%d\n", word, i+1)
		if i%4 == 3 {
			fmt.Fprintf(&b, "atom.global.add.u64 d, [a], b | a=0x%x b=%d\n", 0x10010, i)
			fmt.Fprintf(&b, "atom.global.cas.b32 d, [a], b, c | a=0x%x b=%d c=[%s]\n", word, i, list(32, func(l int) int { return l }))
		}
	}
	equalToReference(t, b.String(), []Option{WithWorkers(1)}, []Option{WithWorkers(2), WithShards(3)}, []Option{WithWorkers(2), WithBatchInsts(5)})
}

// TestScatteredAddsGetResults forces applyRoute's one loop of 32-bit adds
// that return their old values (slotSegs, shard.Memory.AddSlots): batches
// of scattered add.u32 warps alone, an addend a lane, over words that
// several lanes and warps share, on pages of both owners, under full and
// partial masks, sums brought to 0 (the word marked written); and batches
// where a warp of one addend, a coalesced warp or a warp on one word
// among them makes the route take a loop a segment (add32Slots alone).
func TestScatteredAddsGetResults(t *testing.T) {
	for _, mixed := range []bool{false, true} {
		var b strings.Builder
		b.WriteString(".region global 0x10000 0x40000\n")
		for i := range 60 {
			as, bs := make([]string, 32), make([]string, 32)
			for l := range as {
				off := (i*7919 + l*4100) % 0x3fff0 &^ 3
				if l%4 == 3 {
					off = (i%5*4096 + (l%3)*4) // words other lanes and warps hit
				}
				as[l] = fmt.Sprintf("0x%x", 0x10000+off)
				bs[l] = fmt.Sprint((i*31 + l*l) % 9)
				if l == 7 {
					bs[l] = fmt.Sprint(uint32(1<<32 - 1 - i)) // wraps, to 0 at times
				}
			}
			mask := []string{"", " mask=0xfffffffe", " mask=0x0ff0f00f"}[i%3]
			fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b | a=[%s] b=[%s]%s\n", strings.Join(as, ","), strings.Join(bs, ","), mask)
			if mixed && i%7 == 3 {
				fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b | a=[%s] b=5\n", strings.Join(as, ","))
				fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b | a=0x%x:4 b=[%s]\n", 0x10000+i*64, strings.Join(bs, ","))
				fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b | a=0x%x b=[%s]\n", 0x10000+i*4, strings.Join(bs, ","))
			}
		}
		equalToReference(t, b.String(), []Option{WithWorkers(1)}, []Option{WithWorkers(2), WithShards(3)}, []Option{WithWorkers(3), WithBatchInsts(5)})
	}
}

// TestBatchFlagsPerPlan: a batch's flags (wide, elems, notAdd, retAdds),
// which add works out once a run of one plan's instructions (flagsOf),
// are those of every instruction it holds: plans in runs and in turn,
// across a reset, with and without per-lane rows.
func TestBatchFlagsPerPlan(t *testing.T) {
	texts := []string{
		"atom.global.add.u32 d, [a], b",                // adds, returns to d
		"atom.global.add.u32 _, [a], b",                // adds, returns nothing
		"atom.global.cas.b32 d, [a], b, c",             // not an add
		"atom.global.exch.b128 d, [a], b",              // 16 bytes
		"atom.global.v2.f32.add {d0,d1}, [a], {h0,h1}", // two elements
	}
	var plans []*plan
	for _, text := range texts {
		st, err := trace.ParseStatic(text)
		if err != nil {
			t.Fatal(err)
		}
		p, err := newPlan(st, &trace.Header{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.id = uint32(len(plans)) // as planOf numbers them
		plans = append(plans, p)
	}
	r := rand.New(rand.NewPCG(50, 11))
	b := &batch{}
	for round := range 200 {
		b.reset(1, 1, 1)
		b.noResults = round%2 == 0
		var wide, elems, notAdd bool
		retAdds := true
		var last *plan
		for range 1 + r.IntN(12) {
			p := plans[r.IntN(len(plans))]
			if r.IntN(3) == 0 && last != nil {
				p = last // the plan before again: a run
			}
			last = p
			vals := make([]trace.Vector, len(p.st.Inputs))
			for j := range vals {
				vals[j] = trace.Vector{Kind: trace.VecBroadcast, Base: 0x100 + uint64(j)}
			}
			b.add(&trace.Inst{Static: p.st, Mask: 1, Vals: vals}, p, 0, false)
			wide = wide || p.size == 16
			elems = elems || p.st.Elems > 1
			notAdd = notAdd || !p.add32() || p.st.HasDst && !p.noRet && !b.noResults
			retAdds = retAdds && p.add32() && p.st.HasDst && !p.noRet
		}
		if b.wide != wide || b.elems != elems || b.notAdd != notAdd || b.retAdds != retAdds {
			t.Fatalf("round %d: flags wide %v elems %v notAdd %v retAdds %v, want %v %v %v %v",
				round, b.wide, b.elems, b.notAdd, b.retAdds, wide, elems, notAdd, retAdds)
		}
	}
}
