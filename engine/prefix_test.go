package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// prefixTrace is a histogram that returns values (prefixWarp's warps)
// beside warps prefixWarp must leave to the other paths, in PTX: full
// warps of one addend on one page (256, 64 and 1024 bins, addends that
// wrap and sums of 0 modulo 2^32), runs moving to another page, warps on
// one word, masked warps, an addend per lane, a lane out of the region (a
// fault), a `_` destination, an exch (a batch that is not all adds), a
// .init between instructions, and at the end warps from page to page
// (each run a warp: the accumulator turns off). With exch, some warps
// exchange: the batches that hold one are not all adds.
func prefixTrace(seed uint64, exch bool) string {
	r := rand.New(rand.NewPCG(seed, 50))
	var b strings.Builder
	const base, size = 0x200000, 0x4000 // 4 pages
	fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
	page := func(k int) uint64 { return base + uint64(k)*4096 }
	bins := func(pg uint64, n int) string {
		return list(32, func(int) string { return fmt.Sprintf("0x%x", pg+uint64(r.IntN(n))*4) })
	}
	for i := range 300 {
		pg := page(i / 100) // three phases of one page each
		switch i % 10 {
		case 0, 1, 2, 3:
			fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=%d\n", bins(pg, 256), 1+r.IntN(3))
		case 4:
			fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=%d\n", bins(pg, 64), 0x80000000|r.Uint32())
		case 5:
			fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=%d\n", bins(pg, 1024), r.Uint32())
		case 6:
			switch r.IntN(7) {
			case 0:
				fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=0x%x b=5\n", pg+4*uint64(r.IntN(256)))
			case 1:
				fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=7 mask=0x%x\n", bins(pg, 64), r.Uint32()|1)
			case 2:
				fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=%s\n", bins(pg, 64), list(32, func(int) string { return fmt.Sprint(r.IntN(100)) }))
			case 3:
				fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=1\n", list(32, func(l int) string {
					if l == 31 {
						return fmt.Sprintf("0x%x", base+size) // past the region: a fault
					}
					return fmt.Sprintf("0x%x", pg+uint64(r.IntN(64))*4)
				}))
			case 4:
				fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=%s b=3\n", bins(pg, 64))
			case 5:
				if exch {
					fmt.Fprintf(&b, "atom.global.exch.b32 d, [a], b; | a=%s b=9\n", bins(pg, 64))
				}
			case 6:
				fmt.Fprintf(&b, ".init global 0x%x u32 %d\n", pg+4*uint64(r.IntN(64)), r.Uint32())
			}
		case 7:
			// Another page for a warp, then back.
			fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=2\n", bins(page((i/100+1)%4), 256))
		default:
			fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=1\n", bins(pg, 128))
		}
	}
	for i := range 60 { // from page to page, warp after warp
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=%d\n", bins(page(i%4), 1024), i)
	}
	return b.String()
}

// TestPrefixSumsEqualReference: the warps of a histogram that returns
// values, prefix-summed per word (prefixWarp, applyPrefix) rather than
// routed a record a lane, give each lane and leave the memory and
// statistics the reference's (prefixTrace's mix of warps it takes and
// leaves), under one to four workers, several shard and batch counts and
// batches cut by their lists, to a sink that takes the results as columns
// (columnar.Writer's), also under WithExplore, and to one that takes
// them as rows, with and without the addresses table (which counts the
// run's lanes from their result rows: addrTracker.collectPrefix); the
// path is taken wherever the results table is written (in a batch of adds
// alone: with exchanges, only where batches are cut smaller than the
// trace).
func TestPrefixSumsEqualReference(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		exch := seed > 2
		src := prefixTrace(seed, exch)
		wants := [2]outcome{referenceUnder(t, src, false), referenceUnder(t, src, true)}
		for _, set := range []struct {
			cut  bool // batches smaller than the trace
			opts []Option
		}{
			{false, []Option{WithWorkers(1)}},
			{true, []Option{WithWorkers(1), WithBatchInsts(16)}},
			{false, []Option{WithWorkers(2)}},
			{true, []Option{WithWorkers(2), WithBatchInsts(7), WithShards(5)}},
			{true, []Option{WithWorkers(2), withBatchListBytes(4096)}},
			{true, []Option{WithWorkers(3), WithBatchInsts(64), WithShards(1)}},
			{true, []Option{WithWorkers(4), WithBatchInsts(100), WithShards(3), withGoLoops()}},
		} {
			opts := set.opts
			for _, cfg := range []sinkConfig{
				{name: "results", results: true, pages: true},
				{name: "results-rows", results: true},
				{name: "results+explore", results: true, explore: true, pages: true},
				{name: "default", results: true, addresses: true, pages: true},
				{name: "default+explore", results: true, addresses: true, explore: true, pages: true},
				{name: "default-rows", results: true, addresses: true},
			} {
				what := fmt.Sprintf("seed %d, %d options, %s", seed, len(opts), cfg.name)
				c := &configSink{cfg: &cfg}
				var sink Sink = c
				if cfg.pages {
					p := &pagedSink{configSink{cfg: &cfg}}
					c, sink = &p.configSink, p
				}
				e := runEngine(t, src, sink, append(opts[:len(opts):len(opts)], WithExplore(cfg.explore))...)
				if taken, want := e.prefixWarps > 0, !exch || set.cut; taken != want {
					t.Errorf("%s: %d warps prefix-summed", what, e.prefixWarps)
				}
				got := collect(&c.Collector)
				w := wants[0]
				if cfg.explore {
					w = wants[1]
				}
				if !cfg.addresses {
					w.Addrs = []AddressStat{}
				}
				approxAddrs(t, got.Addrs, w.Addrs)
				if !reflect.DeepEqual(got, w) {
					describeDiff(t, got, w)
					t.Fatalf("%s: differs from the reference for trace:\n%s", what, src)
				}
			}
		}
	}
}

// TestPrefixSumsSIMD16EqualReference: prefixWarp's SIMD16 warps (vISA's
// and LSC's 16 lanes, all active, values returned, on 64 words) beside
// masked warps and warps on one word, which it leaves, give each lane and leave the memory
// and statistics the reference's, under one and two workers, columns and
// rows, Go's loops or the assembly.
func TestPrefixSumsSIMD16EqualReference(t *testing.T) {
	const base, size = 0x80000, 0x800
	for _, d := range simd16AddForms {
		t.Run(d.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(16, uint64(len(d.name))))
			var b strings.Builder
			fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
			bin := func(int) uint64 { return base + uint64(r.IntN(64))*4 }
			for i := range 300 {
				switch i % 40 {
				case 38: // lanes masked off
					b.WriteString(d.inst(hexList(16, bin), 1, fmt.Sprintf(" mask=0x%x", r.Uint32()&0x7fff|1)))
				case 39: // every lane on one word
					w := bin(0)
					b.WriteString(d.inst(hexList(16, func(int) uint64 { return w }), 7, ""))
				default:
					b.WriteString(d.inst(hexList(16, bin), 1+r.IntN(5), ""))
				}
			}
			src := b.String()
			want := referenceUnder(t, src, false)
			want.Addrs = []AddressStat{}
			for _, opts := range [][]Option{
				{WithWorkers(1)},
				{WithWorkers(2), WithBatchInsts(50)},
				{WithWorkers(2), WithBatchInsts(13), WithShards(3), withGoLoops()},
			} {
				for _, cfg := range []sinkConfig{
					{name: "results", results: true, pages: true},
					{name: "results-rows", results: true},
				} {
					what := fmt.Sprintf("%d options, %s", len(opts), cfg.name)
					c := &configSink{cfg: &cfg}
					var sink Sink = c
					if cfg.pages {
						p := &pagedSink{configSink{cfg: &cfg}}
						c, sink = &p.configSink, p
					}
					e := runEngine(t, src, sink, opts...)
					if e.prefixWarps < 200 {
						t.Errorf("%s: %d warps prefix-summed, want most of the 285 full ones", what, e.prefixWarps)
					}
					if got := collect(&c.Collector); !reflect.DeepEqual(got, want) {
						describeDiff(t, got, want)
						t.Fatalf("%s: differs from the reference for trace:\n%s", what, src)
					}
				}
			}
		})
	}
}
