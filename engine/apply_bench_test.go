package engine

import (
	"github.com/gpureplay/replay/trace"
	"math/rand/v2"
	"testing"
)

// The apply stage against its two baselines, on the same accesses: 32-bit
// adds to 2^20 words (4 MiB), either coalesced (each warp's 32 lanes hit 32
// consecutive words at a random aligned place) or random (every lane a
// random word).
//
//	BenchmarkApply/coalesced/engine  the engine's apply over routed accesses
//	BenchmarkApply/coalesced/dense   a bare Go loop: mem[i] += v on a []uint32
//	BenchmarkApply/coalesced/map     a Go map keyed by address: m[a] += v
//
// docs/PERFORMANCE.md reports the ratios (engine/dense and map/engine).

const applyWords = 1 << 20

func applyAddrs(pattern string, n int) []uint64 {
	r := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, n)
	for i := 0; i < n; i += 32 {
		base := uint64(r.IntN(applyWords/32)) * 128
		for l := 0; l < 32 && i+l < n; l++ {
			if pattern == "coalesced" {
				addrs[i+l] = base + uint64(l)*4
			} else {
				addrs[i+l] = uint64(r.IntN(applyWords)) * 4
			}
		}
	}
	return addrs
}

func BenchmarkApply(b *testing.B) {
	const n = 1 << 16 // accesses per batch
	for _, pattern := range []string{"coalesced", "random"} {
		addrs := applyAddrs(pattern, n)
		b.Run(pattern+"/engine", func(b *testing.B) {
			// Build the batch the way a replay does: one instruction per
			// warp, expanded into runs, then time apply alone.
			st, err := trace.ParseStatic("atom.global.add.u32 d, [a], 1")
			if err != nil {
				b.Fatal(err)
			}
			e, err := testReplayer(&trace.Header{}, WithShards(64), WithWorkers(1))
			if err != nil {
				b.Fatal(err)
			}
			p, err := newPlan(st, &trace.Header{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			bt := &batch{}
			bt.reset(1, 1, e.mem.Shards())
			bt.noResults = false
			for i := 0; i < n; i += 32 {
				in := &trace.Inst{Seq: uint64(i / 32), Static: st, Mask: ^uint32(0), Vals: []trace.Vector{{Kind: trace.VecList, List: addrs[i : i+32]}}}
				if pattern == "coalesced" {
					in.Vals[0] = trace.Vector{Kind: trace.VecStride, Base: addrs[i], Stride: 4}
				}
				bt.add(in, p, 0, false)
			}
			bt.finishAdd([]*plan{p})
			bt.expand(0, 0, len(bt.insts), e.mem, false, nil)
			bt.apply(0, e.mem, nil) // create every page first: measure the steady state
			b.SetBytes(4)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				bt.apply(0, e.mem, nil)
			}
		})
		b.Run(pattern+"/dense", func(b *testing.B) {
			mem := make([]uint32, applyWords)
			idx := make([]uint32, n)
			for i, a := range addrs {
				idx[i] = uint32(a >> 2)
			}
			ret := make([]uint64, n)
			b.SetBytes(4)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				for j, w := range idx {
					old := mem[w]
					mem[w] = old + 1
					ret[j] = uint64(old)
				}
			}
		})
		b.Run(pattern+"/map", func(b *testing.B) {
			m := make(map[uint64]uint32)
			ret := make([]uint64, n)
			for _, a := range addrs {
				m[a] = 0
			}
			b.SetBytes(4)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				for j, a := range addrs {
					old := m[a]
					m[a] = old + 1
					ret[j] = uint64(old)
				}
			}
		})
	}
}
