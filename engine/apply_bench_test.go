package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/gpureplay/replay/shard"
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
			mem, err := shard.New(shard.WithShards(64))
			if err != nil {
				b.Fatal(err)
			}
			bt := &batch{}
			bt.reset(1, mem.Shards())
			bt.results = make([]Result, n)
			for i, a := range addrs {
				h := shard.Hash(0, a)
				s := mem.ShardIndex(h)
				bt.routed[0][s] = append(bt.routed[0][s], access{addr: a, h: h, b: 1, slot: uint32(i), n: 1, kind: kAdd, size: 4})
			}
			bt.apply(0, 1, mem) // create every block first: measure the steady state
			b.SetBytes(4)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				bt.apply(0, 1, mem)
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
