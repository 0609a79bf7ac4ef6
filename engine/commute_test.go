package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// randomAdds writes a trace of 32-bit atomic adds over a 1 MiB region (256
// pages): per-lane lists of scattered words, whole
// warps on one word, coalesced and strided warps, with immediate,
// per-lane and strided addends, some lanes misaligned or past the region
// (which fault and go expand's general way), some instructions with a
// destination (dst), others `_`.
func randomAdds(r *rand.Rand, n int, dst string) string {
	var b strings.Builder
	const base, size = 0x100000, 0x100000
	fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
	word := func() uint64 { return base + uint64(r.IntN(size/4))*4 }
	for range n {
		var addr string
		switch r.IntN(9) {
		case 0:
			addr = fmt.Sprintf("0x%x", word()) // one word for the warp
		case 1:
			addr = fmt.Sprintf("0x%x:4", word()&^0x7f) // coalesced
		case 2:
			addr = fmt.Sprintf("0x%x:%d", word()&^0xfff, 4*(1+r.IntN(8)))
		case 3:
			// A lane a page, over 32 pages of the region.
			addr = fmt.Sprintf("0x%x:%d", base+uint64(r.IntN(size/2/4))*4, 4096+4*r.IntN(3))
		default:
			as := make([]string, 32)
			for i := range as {
				a := word()
				switch r.IntN(200) {
				case 0:
					a++ // misaligned
				case 1:
					a = base + size // past the region
				}
				as[i] = fmt.Sprintf("0x%x", a)
			}
			addr = "[" + strings.Join(as, ",") + "]"
		}
		var val string
		switch r.IntN(3) {
		case 0:
			val = fmt.Sprint(r.Uint32())
		case 1:
			val = fmt.Sprintf("%d:%d", r.Uint32(), r.IntN(5)-2)
		default:
			vs := make([]string, 32)
			for i := range vs {
				vs[i] = fmt.Sprint(r.Uint32())
			}
			val = "[" + strings.Join(vs, ",") + "]"
		}
		d := dst
		if d == "" {
			d = "_"
		}
		mask := ""
		if r.IntN(4) == 0 {
			mask = fmt.Sprintf(" mask=0x%x", r.Uint32())
		}
		fmt.Fprintf(&b, "atom.global.add.u32 %s, [a], b; | a=%s b=%s%s\n", d, addr, val, mask)
		// A run of the same warp, as a hot counter's: the same vectors
		// again, from other warps, now and then with other lanes active.
		if r.IntN(4) == 0 {
			for range 1 + r.IntN(6) {
				if r.IntN(2) == 0 {
					fmt.Fprintf(&b, ".warp %d\n", r.IntN(64))
				}
				m := mask
				if r.IntN(5) == 0 {
					m = fmt.Sprintf(" mask=0x%x", r.Uint32())
				}
				fmt.Fprintf(&b, "atom.global.add.u32 %s, [a], b; | a=%s b=%s%s\n", d, addr, val, m)
			}
		}
	}
	return b.String()
}

// TestCommutingBatchesEqualReference: traces of additions only, each
// route added in one loop, leave the reference's memory and, without a
// destination, its every result and statistic, under 1 to 4 workers and
// several batch sizes; with a destination, a sink that reads no results
// (statsOnly) gets the reference's memory and statistics. Each replay
// must have applied its batches that way, unless lanes read results
// ("d+"), when none may be. Each runs twice, without the addresses table
// and with it (and -explore), which must then equal the reference's too,
// and apply its batches the same way.
func TestCommutingBatchesEqualReference(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		// "d+": a destination, and a sink that reads results: the values
		// lanes get back depend on the order, so nothing commutes.
		for _, dst := range []string{"_", "d", "d+"} {
			src := randomAdds(rand.New(rand.NewPCG(seed, 11)), 300, strings.TrimSuffix(dst, "+"))
			want := referenceOutcome(t, src)
			for _, opts := range [][]Option{
				{WithWorkers(1), WithBatchInsts(16)},
				{WithWorkers(2), WithBatchInsts(7), WithShards(5)},
				{WithWorkers(3), WithBatchInsts(64)},
				{WithWorkers(2), withBatchListBytes(2048)},
				// One batch, before any page exists.
				{WithWorkers(2), WithBatchInsts(300)},
				// Two expanding ranges, two owners.
				{WithWorkers(4), WithBatchInsts(32), WithShards(3)},
			} {
				for _, addrs := range []bool{false, true} {
					sink, c := sinkFor(dst == "d", addrs)
					o := opts
					if addrs {
						o = append(opts[:len(opts):len(opts)], WithExplore(true))
					}
					e := runEngine(t, src, sink, o...)
					if (e.oneLoops == 0) != (dst == "d+") {
						t.Errorf("seed %d dst %s addresses %v: %d batches applied in one loop per route",
							seed, dst, addrs, e.oneLoops)
					}
					sameAsReference(t, c, want, dst == "d", addrs,
						fmt.Sprintf("seed %d dst %s addresses %v, %d options", seed, dst, addrs, len(opts)))
				}
			}
		}
	}
}

// leanNoAddrs is a Collector that wants neither results nor addresses;
// leanAddrs one that wants addresses but no results. Both take the memory
// table as Words.
type (
	leanNoAddrs struct{ Collector }
	leanAddrs   struct{ Collector }
)

// sinkFor is a Collector that wants results unless lean, and the addresses
// table if addrs, and the Collector it fills.
func sinkFor(lean, addrs bool) (Sink, *Collector) {
	switch {
	case lean && addrs:
		s := new(leanAddrs)
		return s, &s.Collector
	case lean:
		s := new(leanNoAddrs)
		return s, &s.Collector
	case addrs:
		s := new(Collector)
		return s, s
	}
	s := new(noAddrs)
	return s, &s.Collector
}

func (*leanNoAddrs) Caps() SinkCaps { return 0 }
func (*leanAddrs) Caps() SinkCaps   { return CapAddresses }

// TestCommutingScatterEqualReference: a trace of scattered additions with
// a value per lane and no destination, whose routes hold (word, addend)
// pairs only, so that each route is added in one loop (add32Vals), leaves
// the reference's memory, results and statistics. A third of its warps
// are a histogram's: every lane on one of 64 words of one page, most
// warps hitting some word more than once. Its last warps bring 64
// of the words back to zero: written words still, in the memory table,
// though shard.Memory.AddWords marks only those.
func TestCommutingScatterEqualReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 13))
	var b strings.Builder
	const base, size = 0x100000, 0x100000 // 256 pages
	fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
	sums := map[uint64]uint32{}
	var order []uint64 // the words added to, first addition first
	warp := func(addrs []uint64, vals []uint32) {
		as, vs := make([]string, len(addrs)), make([]string, len(vals))
		for l, a := range addrs {
			if _, ok := sums[a]; !ok {
				order = append(order, a)
			}
			sums[a] += vals[l]
			as[l], vs[l] = fmt.Sprintf("0x%x", a), fmt.Sprint(vals[l])
		}
		fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=[%s] b=[%s]\n", strings.Join(as, ","), strings.Join(vs, ","))
	}
	for i := range 200 {
		addrs, vals := make([]uint64, 32), make([]uint32, 32)
		page := base + uint64(r.IntN(size/4096))*4096
		for l := range 32 {
			addrs[l] = base + uint64(r.IntN(size/4))*4
			if i%3 == 0 {
				addrs[l] = page + uint64(r.IntN(64))*4
			}
			vals[l] = r.Uint32()
		}
		warp(addrs, vals)
	}
	for w := range 2 { // minus the sums of 64 distinct words
		addrs, vals := order[32*w:32*w+32], make([]uint32, 32)
		for l, a := range addrs {
			vals[l] = -sums[a]
		}
		warp(addrs, vals)
	}
	src := b.String()
	want := referenceOutcome(t, src)
	if zeros := writtenZeros(want); zeros < 64 {
		t.Fatalf("the reference's memory holds %d words of zero, want at least 64", zeros)
	}
	for _, opts := range [][]Option{
		{WithWorkers(1), WithBatchInsts(16)},
		{WithWorkers(2), WithBatchInsts(64), WithShards(5)},
		{WithWorkers(2), withBatchListBytes(4096)},
	} {
		for _, addrs := range []bool{false, true} {
			sink, c := sinkFor(false, addrs)
			o := opts
			if addrs {
				o = append(opts[:len(opts):len(opts)], WithExplore(true))
			}
			e := runEngine(t, src, sink, o...)
			if e.oneLoops == 0 {
				t.Errorf("%d options, addresses %v: no batch was applied as routed in one loop", len(opts), addrs)
			}
			sameAsReference(t, c, want, false, addrs, fmt.Sprintf("%d options, addresses %v", len(opts), addrs))
		}
	}
}

// sameAsReference fails t, saying what, unless what c collected is want:
// its results only where lanes read them (not lean), its addresses table
// (none at all without addrs) as approxAddrs compares it.
func sameAsReference(t *testing.T, c *Collector, want outcome, lean, addrs bool, what string) {
	t.Helper()
	got := collect(c)
	if lean {
		got.Res, want.Res = nil, nil
	}
	if !addrs {
		want.Addrs = []AddressStat{}
	}
	approxAddrs(t, got.Addrs, want.Addrs)
	if !reflect.DeepEqual(got, want) {
		describeDiff(t, got, want)
		t.Fatalf("%s: differs from the reference", what)
	}
}

// writtenZeros is how many words of o's memory table hold 0.
func writtenZeros(o outcome) int {
	n := 0
	for _, w := range o.Words {
		if w.Value == 0 {
			n++
		}
	}
	return n
}

// referenceOutcome is the reference's replay of src.
func referenceOutcome(t *testing.T, src string) outcome {
	t.Helper()
	var ref Collector
	if _, err := replayReference(t.Context(), textSource(t, src), &ref, WithExplore(true)); err != nil {
		t.Fatal(err)
	}
	return collect(&ref)
}

// runEngine replays src into sink with an engine of opts, and returns the
// engine, for its counters.
func runEngine(t *testing.T, src string, sink Sink, opts ...Option) *replayer {
	t.Helper()
	e, err := testReplayer(textSource(t, src).Header(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.run(context.Background(), textSource(t, src), sink); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestPageSumsEqualReference: a commuting trace whose warps each fall in
// one page, summed per word in a page accumulator (pageAcc) rather than
// routed lane by lane, leaves the reference's memory, results and
// statistics: warps of one addend (a histogram's increments) and of one
// per lane, words whose sums come back to 0 (written still, in the memory
// table), a warp on a word twice or more, partial warps (routed as
// records), and, at the end, warps that move from page to page (the
// accumulator flushed at each, then turned off), under 1 to 4 workers and
// several batch sizes, with and without the addresses table (which counts
// every lane: nothing is summed then).
func TestPageSumsEqualReference(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 21))
	var b strings.Builder
	const base, size = 0x200000, 0x10000 // 16 pages
	fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
	bins := func(page uint64, n int) string {
		return list(32, func(int) string { return fmt.Sprintf("0x%x", page+uint64(r.IntN(n))*4) })
	}
	page := func(k int) uint64 { return base + uint64(k)*4096 }
	for i := range 240 {
		pg := page(i / 80) // three phases of one page each
		switch i % 6 {
		case 0, 1, 2:
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=%d\n", bins(pg, 256), 1+r.IntN(3))
		case 3:
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=%s\n", bins(pg, 1024), list(32, func(int) string { return fmt.Sprint(r.Uint32()) }))
		case 4:
			// Two lanes per word, adding v and -v, and words added 0:
			// sums of 0 on words that were written.
			as := list(32, func(l int) string { return fmt.Sprintf("0x%x", pg+4096-4*uint64(1+l/2)) })
			v := r.Uint32()
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=%s\n", as, list(32, func(l int) string { return fmt.Sprint(v * uint32(1-2*(l%2))) }))
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=0\n", bins(pg+2048, 32))
		case 5:
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=7 mask=0x%x\n", bins(pg, 64), r.Uint32()|1)
		}
	}
	for i := range 60 { // from page to page, warp after warp
		fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=%d\n", bins(page(3+i%5), 1024), i)
	}
	src := b.String()
	want := referenceOutcome(t, src)
	if zeros := writtenZeros(want); zeros < 32 {
		t.Fatalf("the reference's memory holds %d written words of zero, want at least 32", zeros)
	}
	for _, opts := range [][]Option{
		{WithWorkers(1), WithBatchInsts(16)},
		{WithWorkers(1)},
		{WithWorkers(2), WithBatchInsts(64), WithShards(5)},
		{WithWorkers(2), withBatchListBytes(4096)},
		{WithWorkers(2), withGoLoops()},
		{WithWorkers(4), WithBatchInsts(100), WithShards(3)},
	} {
		for _, addrs := range []bool{false, true} {
			for _, lean := range []bool{false, true} { // lean: no per-lane rows, sumWarp's warps
				sink, c := sinkFor(lean, addrs)
				e := runEngine(t, src, sink, opts...)
				if summed := e.pageSums > 0; summed == addrs {
					t.Errorf("%d options, addresses %v: %d warps summed in a page", len(opts), addrs, e.pageSums)
				}
				sameAsReference(t, c, want, lean, addrs, fmt.Sprintf("%d options, addresses %v, lean %v", len(opts), addrs, lean))
			}
		}
	}
}

// TestSumWarpEqualReference: histogram warps that sumWarp must leave to
// the general path, beside ones it takes, leave the reference's memory
// and statistics in a lean replay: in a region of 2 KiB, half a page,
// warps with one lane past the region's end on the same page (a fault),
// with one lane misaligned (a fault), with every lane on one word
// (routeSum's), with lanes masked off, and with an addend per lane; under
// one to four workers, Go's loops or the assembly, several batch sizes.
func TestSumWarpEqualReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 33))
	var b strings.Builder
	const base, size = 0x40000, 0x800
	fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
	lanes := func(f func(l int) uint64) string {
		s := make([]string, 32)
		for l := range s {
			s[l] = fmt.Sprintf("0x%x", f(l))
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	bin := func(int) uint64 { return base + uint64(r.IntN(size/4))*4 }
	for i := range 300 {
		k := r.IntN(32)
		switch i % 7 {
		case 0, 1:
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=%d\n", lanes(bin), 1+r.IntN(5))
		case 2: // lane k past the region, on its page
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=3\n", lanes(func(l int) uint64 {
				if l == k {
					return base + size + uint64(r.IntN(64))*4
				}
				return bin(l)
			}))
		case 3: // lane k misaligned, the lanes' OR short of the region's end
			low := func(int) uint64 { return base + uint64(r.IntN(size/16))*4 }
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=2\n", lanes(func(l int) uint64 {
				if l == k {
					return low(l) + uint64(1+r.IntN(3))
				}
				return low(l)
			}))
		case 4: // every lane on one word
			w := bin(0)
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=7\n", lanes(func(int) uint64 { return w }))
		case 5:
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=1 mask=0x%x\n", lanes(bin), r.Uint32()|1)
		case 6:
			vs := make([]string, 32)
			for l := range vs {
				vs[l] = fmt.Sprint(r.Uint32())
			}
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=[%s]\n", lanes(bin), strings.Join(vs, ","))
		}
	}
	src := b.String()
	want := referenceOutcome(t, src)
	faults := 0
	for _, st := range want.Stats {
		if !strings.HasSuffix(st, "faults=0") {
			faults++
		}
	}
	if faults < 60 {
		t.Fatalf("the reference faults in %d instructions, want the 86 warps with a lane out of place", faults)
	}
	for _, opts := range [][]Option{
		{WithWorkers(1)},
		{WithWorkers(2)},
		{WithWorkers(2), withGoLoops()},
		{WithWorkers(2), WithBatchInsts(16), WithShards(3)},
		{WithWorkers(4), WithBatchInsts(50)},
	} {
		sink, c := sinkFor(true, false)
		e := runEngine(t, src, sink, opts...)
		if e.pageSums == 0 {
			t.Errorf("%d options: no warp summed in a page", len(opts))
		}
		sameAsReference(t, c, want, true, false, fmt.Sprintf("%d options", len(opts)))
	}
}

// list is the text of a lane list of n values, lane l's f(l).
func list(n int, f func(l int) string) string {
	s := make([]string, n)
	for l := range s {
		s[l] = f(l)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// hexList is the text of a lane list of n values, lane l's f(l).
func hexList(n int, f func(l int) uint64) string {
	return list(n, func(l int) string { return fmt.Sprintf("0x%x", f(l)) })
}

// simd16AddForms are the SIMD16 integer adds of vISA and LSC: each inst
// is the instruction adding b at the lane list addrs (hexList), more
// appended to its data (a mask).
var simd16AddForms = []struct {
	name string
	inst func(addrs string, b int, more string) string
}{
	{"visa", func(addrs string, b int, more string) string {
		return fmt.Sprintf("DWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12 | V10=%s V11=%d%s\n", addrs, b, more)
	}},
	{"lsc", func(addrs string, b int, more string) string {
		n := strings.Count(addrs, ",") + 1
		return fmt.Sprintf("lsc_atomic_iadd.ugm (M1,%d) V13:d32 flat[V12]:a64 V14 V0 | V12=%s V14=%d%s\n", n, addrs, b, more)
	}},
}

// TestSIMD16PageSumsEqualReference: histogram warps of 16 lanes (vISA's
// DWORD_ATOMIC.ADD and LSC's lsc_atomic_iadd at SIMD16), every lane on one
// page and one addend, are summed in the page accumulator as 32-lane
// warps are (sumWarp), and leave the reference's memory and statistics in
// a lean replay: beside them, warps with lanes masked off, one lane past
// the region (a fault), every lane on one word, and 32-lane LSC warps,
// under one to four workers, Go's loops or the assembly, several batch
// sizes.
func TestSIMD16PageSumsEqualReference(t *testing.T) {
	const base, size = 0x80000, 0x800
	for _, d := range simd16AddForms {
		t.Run(d.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(16, uint64(len(d.name))))
			var b strings.Builder
			fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
			bin := func(int) uint64 { return base + uint64(r.IntN(size/4))*4 }
			for i := range 400 {
				k := r.IntN(16)
				switch i % 8 {
				case 0, 1, 2, 3:
					b.WriteString(d.inst(hexList(16, bin), 1+r.IntN(5), ""))
				case 4: // lanes masked off
					b.WriteString(d.inst(hexList(16, bin), 1, fmt.Sprintf(" mask=0x%x", r.Uint32()&0x7fff|1)))
				case 5: // lane k past the region's end, on its page
					b.WriteString(d.inst(hexList(16, func(l int) uint64 {
						if l == k {
							return base + size + uint64(r.IntN(64))*4
						}
						return bin(l)
					}), 3, ""))
				case 6: // every lane on one word
					w := bin(0)
					b.WriteString(d.inst(hexList(16, func(int) uint64 { return w }), 7, ""))
				case 7:
					if d.name == "lsc" {
						b.WriteString(d.inst(hexList(32, bin), 2, ""))
					} else { // on a quarter of the region: words hit more often
						b.WriteString(d.inst(hexList(16, func(int) uint64 { return base + uint64(r.IntN(size/16))*4 }), 2, ""))
					}
				}
			}
			src := b.String()
			want := referenceOutcome(t, src)
			for _, opts := range [][]Option{
				{WithWorkers(1)},
				{WithWorkers(2)},
				{WithWorkers(2), withGoLoops()},
				{WithWorkers(2), WithBatchInsts(16), WithShards(3)},
				{WithWorkers(4), WithBatchInsts(50)},
			} {
				sink, c := sinkFor(true, false)
				e := runEngine(t, src, sink, opts...)
				if e.pageSums < 150 {
					t.Errorf("%d options: %d warps summed in a page, want the 200 full SIMD16 warps' most", len(opts), e.pageSums)
				}
				sameAsReference(t, c, want, true, false, fmt.Sprintf("%d options", len(opts)))
			}
			// Two partitions, each summing its own warps: their memory is
			// the whole replay's, their statistics combine to its.
			wholeSink, whole := sinkFor(true, false)
			runEngine(t, src, wholeSink)
			var words []Word
			var parts [][]InstStat
			for i := range 2 {
				sink, c := sinkFor(true, false)
				runEngine(t, src, sink, WithPartition(i, 2), WithWorkers(1+i))
				words, parts = append(words, c.Words...), append(parts, c.Stats)
			}
			slices.SortFunc(words, wordKey)
			wantWords := slices.SortedFunc(slices.Values(whole.Words), wordKey)
			if !reflect.DeepEqual(words, wantWords) {
				t.Errorf("two partitions' memory differs from the whole replay's")
			}
			if got := combineStats(parts); !reflect.DeepEqual(got, whole.Stats) {
				t.Errorf("two partitions' statistics do not combine to the whole replay's")
			}
		})
	}
}

// TestHistogramResultsEqualReference: full warps of 32-bit adds within one
// page that return what they found (a histogram with the results table):
// their records carry slots, and where the CPU has AVX-512 the warp's
// distinct addresses and largest conflict come from warpConflictsAVX512
// (routePageLanes' slotRecs), elsewhere, and with withGoLoops, from the
// per-lane counter (pageRecsSlots); every lane's returned value, the words
// and the instructions' counts as the reference has them.
func TestHistogramResultsEqualReference(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 21))
	var b strings.Builder
	const base, size = 0x40000, 0x400
	fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
	for i := range 200 {
		s := make([]string, 32)
		for l := range s {
			s[l] = fmt.Sprintf("0x%x", base+uint64(r.IntN(size/4>>(i%3)))*4) // 256, 128 or 64 bins
		}
		src := fmt.Sprint(1 + r.IntN(9))
		if i%4 == 3 {
			vs := make([]string, 32)
			for l := range vs {
				vs[l] = fmt.Sprint(r.IntN(1000))
			}
			src = "[" + strings.Join(vs, ",") + "]"
		}
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=[%s] b=%s\n", strings.Join(s, ","), src)
	}
	equalToReference(t, b.String(), []Option{WithWorkers(1)}, []Option{WithWorkers(2), withGoLoops()}, []Option{WithWorkers(2), WithBatchInsts(7)})
}
