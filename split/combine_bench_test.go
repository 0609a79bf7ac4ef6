package split

import (
	"math/rand/v2"
	"testing"

	"github.com/gpureplay/replay/engine"
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
