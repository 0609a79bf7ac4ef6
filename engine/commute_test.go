package engine

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/shard"
)

// randomAdds writes a trace of 32-bit atomic adds over a 1 MiB region (256
// pages, above sortMinPages): per-lane lists of scattered words, whole
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
	}
	return b.String()
}

// TestCommutingBatchesEqualReference: traces of additions only, applied
// page by page, leave the reference's memory and, without a destination,
// its every result and statistic, under 1 to 3 workers and several batch
// sizes; with a destination, a sink that reads no results (statsOnly)
// gets the reference's memory and statistics. Each replay must have
// applied some batches page by page. Each runs twice, without the
// addresses table and with it (and -explore), which must then equal the
// reference's too, and apply its batches the same way.
func TestCommutingBatchesEqualReference(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		// "d+": a destination, and a sink that reads results: the values
		// lanes get back depend on the order, so nothing commutes.
		for _, dst := range []string{"_", "d", "d+"} {
			src := randomAdds(rand.New(rand.NewPCG(seed, 11)), 300, strings.TrimSuffix(dst, "+"))
			want := referenceOutcome(t, src)
			for i, opts := range [][]Option{
				{WithWorkers(1), WithBatchInsts(16), withSortDensity(1)},
				{WithWorkers(2), WithBatchInsts(7), WithShards(5), withSortDensity(0)},
				{WithWorkers(3), WithBatchInsts(64), withSortDensity(2)},
				{WithWorkers(2), withBatchListBytes(2048), withSortDensity(1)},
				// One batch, before any page exists: applied in order.
				{WithWorkers(2), WithBatchInsts(300), withSortDensity(0)},
				// The default density: 1024 records a batch over 256
				// pages commute but are too few to sort; two expanding
				// ranges, two owners.
				{WithWorkers(4), WithBatchInsts(32), WithShards(3)},
			} {
				for _, addrs := range []bool{false, true} {
					sink, c := sinkFor(dst == "d", addrs)
					o := opts
					if addrs {
						o = append(opts[:len(opts):len(opts)], WithExplore(true))
					}
					e := runEngine(t, src, sink, o...)
					if i < 3 && e.modes[byPage] == 0 && dst != "d+" {
						t.Errorf("seed %d dst %s addresses %v: no batch was applied page by page", seed, dst, addrs)
					}
					if e.modes[byPage] != 0 && dst == "d+" {
						t.Errorf("seed %d addresses %v: %d batches with results applied page by page", seed, addrs, e.modes[byPage])
					}
					if i == 4 && (e.modes[byPage] != 0 || (e.modes[oneLoop] == 0) != (dst == "d+")) {
						t.Errorf("seed %d dst %s addresses %v: %d batches sorted and %d applied in one loop per route, at the default density",
							seed, dst, addrs, e.modes[byPage], e.modes[oneLoop])
					}
					got, want := collect(c), want
					if dst == "d" {
						got.Res, want.Res = nil, nil
					}
					if !addrs {
						want.Addrs = []AddressStat{}
					}
					approxAddrs(t, got.Addrs, want.Addrs)
					if !reflect.DeepEqual(got, want) {
						describeDiff(t, got, want)
						t.Fatalf("seed %d dst %s addresses %v, %d options: differs from the reference", seed, dst, addrs, len(opts))
					}
				}
			}
		}
	}
}

// leanNoAddrs is a Collector that wants neither results nor addresses;
// leanAddrs one that wants addresses but no results.
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

func (*leanNoAddrs) WantsResults() bool   { return false }
func (*leanNoAddrs) WantsAddresses() bool { return false }
func (*leanAddrs) WantsResults() bool     { return false }

// TestSortsByPage: a commuting batch is applied page by page when it
// averages sortMinDensity records or more per page, on sortMinPages pages
// or more; the batches of the uniform benchmark traces (4096 warps of 32
// lanes) sort over 1 Mi words and not over 64 Mi.
func TestSortsByPage(t *testing.T) {
	const batch = 4096 * 32
	for _, c := range []struct {
		n, pages int
		want     bool
	}{
		{batch, 1 << 10, true},  // uniform-1Mi: 128 a page
		{batch, 1 << 11, true},  // 64 a page
		{batch, 1 << 12, false}, // 32 a page
		{batch, 1 << 16, false}, // uniform-64Mi: 2 a page
		{batch, sortMinPages - 1, false},
		{sortMinDensity * sortMinPages, sortMinPages, true},
		{sortMinDensity*sortMinPages - 1, sortMinPages, false},
	} {
		if got := sortsByPage(c.n, c.pages, sortMinDensity); got != c.want {
			t.Errorf("%d records on %d pages: sorted %v, want %v", c.n, c.pages, got, c.want)
		}
	}
}

// TestSortByPage: records come out ordered by page, the same multiset,
// for key widths of one, two and three passes.
func TestSortByPage(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	var counts [1 << 11]uint32
	for _, keyBits := range []uint{1, 7, 11, 12, 17, 22} {
		recs := make([]rec, 5000)
		for i := range recs {
			recs[i] = rec{word: uint32(r.IntN(1<<keyBits))<<10 | uint32(r.IntN(1024)), slot: uint32(i)}
		}
		in := slices.Clone(recs)
		out := sortByPage(recs, make([]rec, len(recs)), keyBits, &counts)
		if !slices.IsSortedFunc(out, func(a, b rec) int { return int(a.word>>10) - int(b.word>>10) }) {
			t.Errorf("%d key bits: not sorted by page", keyBits)
		}
		byAll := func(a, b rec) int {
			if a.word != b.word {
				return int(a.word) - int(b.word)
			}
			return int(a.slot) - int(b.slot)
		}
		slices.SortFunc(in, byAll)
		got := slices.Clone(out)
		slices.SortFunc(got, byAll)
		if !slices.Equal(got, in) {
			t.Errorf("%d key bits: the records changed", keyBits)
		}
	}
}

// TestAdd32ByPageEqualsInOrder: records sorted by page, some pages with
// many records (summed in the accumulator, words hit several times) and
// some with few (added directly), leave the same words and written-word
// bits as adding them one by one in order, over two batches; and the
// accumulator is left clear for the next page (the pages after a dense
// one come out right).
func TestAdd32ByPageEqualsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	newMem := func() (*shard.Memory, []uint32) {
		m, err := shard.New()
		if err != nil {
			t.Fatal(err)
		}
		cur := m.Cursor()
		var refs []uint32
		for pg := range 6 {
			en := cur.Resolve(0, uint64(pg)<<shard.PageShift)
			if en == 0 {
				t.Fatal("no page")
			}
			refs = append(refs, en.Ref())
		}
		return m, refs
	}
	byPage, refs := newMem()
	inOrder, _ := newMem()
	// Two batches, so that the second merges into written bits. Per page:
	// 0, 3, 700, 16, 15 and 2000 records; the 700 on 40 words, so that
	// words repeat.
	for range 2 {
		var recs []rec
		for pg, n := range []int{0, 3, 700, 16, 15, 2000} {
			for range n {
				w := uint32(r.IntN(shard.PageWords))
				if n == 700 {
					w = uint32(r.IntN(40)) * 25
				}
				recs = append(recs, rec{word: refs[pg]<<(shard.PageShift-2) | w, slot: r.Uint32()})
			}
		}
		add32ByPage(byPage, recs)
		add32Vals(inOrder, recs)
	}
	for pg, ref := range refs {
		got, want := byPage.Page(ref), inOrder.Page(ref)
		if *got.Words != *want.Words || *got.Touched != *want.Touched {
			t.Errorf("page %d: words or written bits differ from the in-order adds", pg)
		}
	}
	if pg := inOrder.Page(refs[2]); bits.OnesCount64(pg.Touched[0])+bits.OnesCount64(pg.Touched[1]) == 0 {
		t.Error("the dense page was not written") // (the test's own premise)
	}
}

// TestCommutingScatterEqualReference: a trace of scattered additions with
// a value per lane and no destination, whose routes hold (word, addend)
// pairs only, so that one expander's records are sorted by page where
// they lie (applyCommuting's first path), leaves the reference's memory,
// results and statistics.
func TestCommutingScatterEqualReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 13))
	var b strings.Builder
	const base, size = 0x100000, 0x100000 // 256 pages
	fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
	for range 200 {
		addrs, vals := make([]string, 32), make([]string, 32)
		for l := range 32 {
			addrs[l] = fmt.Sprintf("0x%x", base+uint64(r.IntN(size/4))*4)
			vals[l] = fmt.Sprint(r.Uint32())
		}
		fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=[%s] b=[%s]\n", strings.Join(addrs, ","), strings.Join(vals, ","))
	}
	src := b.String()
	want := referenceOutcome(t, src)
	for i, opts := range [][]Option{
		{WithWorkers(1), WithBatchInsts(16), withSortDensity(1)},
		{WithWorkers(2), WithBatchInsts(64), WithShards(5), withSortDensity(1)},
		// The default density: 2048 records a batch over 256 pages are
		// too few to sort, and go in trace order.
		{WithWorkers(2), WithBatchInsts(64)},
	} {
		for _, addrs := range []bool{false, true} {
			sink, c := sinkFor(false, addrs)
			o := opts
			if addrs {
				o = append(opts[:len(opts):len(opts)], WithExplore(true))
			}
			e := runEngine(t, src, sink, o...)
			if sorted := e.modes[byPage] > 0; sorted != (i < 2) {
				t.Errorf("%d options, addresses %v: %d batches applied page by page", len(opts), addrs, e.modes[byPage])
			}
			if i == 2 && e.modes[oneLoop] == 0 {
				t.Errorf("%d options, addresses %v: no batch was applied as routed in one loop", len(opts), addrs)
			}
			got, want := collect(c), want
			if !addrs {
				want.Addrs = []AddressStat{}
			}
			approxAddrs(t, got.Addrs, want.Addrs)
			if !reflect.DeepEqual(got, want) {
				describeDiff(t, got, want)
				t.Fatalf("%d options, addresses %v: differs from the reference", len(opts), addrs)
			}
		}
	}
}

// referenceOutcome is the reference's replay of src.
func referenceOutcome(t *testing.T, src string) outcome {
	t.Helper()
	var ref Collector
	if _, err := Reference(textSource(t, src), &ref, WithExplore(true)); err != nil {
		t.Fatal(err)
	}
	return collect(&ref)
}

// runEngine replays src into sink with an engine of opts, and returns the
// engine, for its counters.
func runEngine(t *testing.T, src string, sink Sink, opts ...Option) *Engine {
	t.Helper()
	e, err := New(textSource(t, src).Header(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background(), textSource(t, src), sink); err != nil {
		t.Fatal(err)
	}
	return e
}
