package split

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// BenchmarkCombineScattered folds warps of 32 scattered adds over 4 MiB
// (a uniform trace's slice), without writing them: ns/op is a lane's. In
// a space with a region the folds go to a window (dense), else to the
// paged memory (paged).
func BenchmarkCombineScattered(b *testing.B) {
	st, err := trace.ParseStatic("atom.global.add.u32 d, [a], b")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		h    trace.Header
	}{
		{"dense", trace.Header{Regions: []trace.Region{{Space: st.Space, Base: 0x10000000, Size: 4 << 20}}}},
		{"paged", trace.Header{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rt, err := engine.NewRouter(&bc.h, 8)
			if err != nil {
				b.Fatal(err)
			}
			rt.SetFold(true)
			rin := &trace.Inst{Static: st, Mask: 1, Vals: []trace.Vector{{Kind: trace.VecBroadcast, Base: 0x10001000}, {Kind: trace.VecBroadcast, Base: 1}}}
			routed, err := rt.Route(rin)
			if err != nil || !routed.Fold.Valid() {
				b.Fatalf("%v %+v", err, routed)
			}
			op := routed.Fold
			r := rand.New(rand.NewPCG(1, 2))
			addrs := make([]uint64, 1<<16)
			vals := make([]uint64, len(addrs))
			for i := range addrs {
				addrs[i], vals[i] = 0x10000000+r.Uint64N(1<<20)*4, r.Uint64N(100)
			}
			c := newCombiner(8)
			in := &trace.Inst{Static: st}
			b.ResetTimer()
			for i := 0; i < b.N; i += 32 {
				k := i % len(addrs)
				if err := c.add(in, &op, addrs[k:k+32], vals[k:k+32]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFlushWindow flushes a window of 1 Mi words, every one of them
// written (a slice of uniform), into the fold records of 8 partitions, on
// one goroutine and on two (flushWindow): ns/op is a word's.
func BenchmarkFlushWindow(b *testing.B) {
	st, err := trace.ParseStatic("atom.global.add.u32 d, [a], b")
	if err != nil {
		b.Fatal(err)
	}
	const base, words = 0x10000000, 1 << 20
	h := &trace.Header{Regions: []trace.Region{{Space: st.Space, Base: base, Size: words * 4}}}
	rt, err := engine.NewRouter(h, 8)
	if err != nil {
		b.Fatal(err)
	}
	rt.SetFold(true)
	routed, err := rt.Route(&trace.Inst{Static: st, Mask: 1, Vals: []trace.Vector{{Kind: trace.VecBroadcast, Base: base}, {Kind: trace.VecBroadcast, Base: 1}}})
	if err != nil || !routed.Fold.Valid() {
		b.Fatalf("%v %+v", err, routed)
	}
	op := routed.Fold
	r := rand.New(rand.NewPCG(3, 4))
	addrs, vals := make([]uint64, words), make([]uint64, words)
	for i, k := range r.Perm(words) {
		addrs[i], vals[i] = base+uint64(k)*4, 1+r.Uint64N(1<<20)
	}
	pt, err := shard.NewPartitioner(8)
	if err != nil {
		b.Fatal(err)
	}
	for _, g := range []int{1, 2} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			c := newCombiner(8)
			in := &trace.Inst{Static: st}
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				o := Options{Parts: 8, Slice: 0, Slices: 1, Out: filepath.Join(b.TempDir(), fmt.Sprint(i))}
				outs, err := openOutputs(o)
				if err != nil {
					b.Fatal(err)
				}
				if err := outs.writers(&trace.Header{}, trace.SplitHeader{Parts: 8, Slices: 1, Combined: true}); err != nil {
					b.Fatal(err)
				}
				for k := 0; k < words; k += 32 {
					if err := c.add(in, &op, addrs[k:k+32], vals[k:k+32]); err != nil {
						b.Fatal(err)
					}
				}
				c.flushWorkers = g
				sum := &Summary{Records: make([]uint64, 8)}
				b.StartTimer()
				if err := c.flush(outs, &pt, sum); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if c.words != uint64(words)*uint64(i+1) {
					b.Fatalf("%d words folded, want %d", c.words, words*(i+1))
				}
				if err := outs.abort(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/words, "ns/word")
		})
	}
}
