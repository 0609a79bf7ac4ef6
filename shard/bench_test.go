package shard

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// The benchmarks work on benchBlocks granules (16 MiB of words): bigger
// than a typical L2, and the dense baseline's slice is the same size.
const (
	benchBlocks = 1 << 16
	benchWords  = benchBlocks * GranuleWords
	benchMem    = 3
	benchRandom = 1 << 20 // precomputed random word indices, cycled
)

var sink uint64

// randomWords returns benchRandom word indices in [0, benchWords), the
// same for every benchmark.
func randomWords() []uint32 {
	r := rand.New(rand.NewPCG(11, 12))
	idx := make([]uint32, benchRandom)
	for i := range idx {
		idx[i] = uint32(r.IntN(benchWords))
	}
	return idx
}

// filledMemory returns a memory holding all benchBlocks granules, so the
// timed loops measure hits.
func filledMemory(b *testing.B) *Memory {
	m, err := New(WithBlockHint(benchBlocks))
	if err != nil {
		b.Fatal(err)
	}
	for g := range uint64(benchBlocks) {
		addr := g << GranuleShift
		h := Hash(benchMem, addr)
		m.Shard(m.ShardIndex(h)).Block(benchMem, addr, h)
	}
	return m
}

func BenchmarkHash(b *testing.B) {
	b.ReportAllocs()
	var acc uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		acc += Hash(benchMem, uint64(i)<<GranuleShift)
	}
	sink = acc
}

// BenchmarkHashSum64 is Hash's baseline: xxhash.Sum64 over the same key in
// a stack buffer.
func BenchmarkHashSum64(b *testing.B) {
	b.ReportAllocs()
	var acc uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var key [16]byte
		binary.LittleEndian.PutUint64(key[:8], benchMem)
		binary.LittleEndian.PutUint64(key[8:], uint64(i))
		acc += xxhash.Sum64(key[:])
	}
	sink = acc
}

func BenchmarkBlock(b *testing.B) {
	b.Run("memo", func(b *testing.B) {
		m := filledMemory(b)
		const base = 0x4000
		h := Hash(benchMem, base)
		s := m.Shard(m.ShardIndex(h))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s.Block(benchMem, base+uint64(i&(GranuleWords-1))*4, h).Words[0]++
		}
	})
	b.Run("table", func(b *testing.B) {
		m := filledMemory(b)
		// Random granules, hash and shard precomputed: the table alone.
		type access struct {
			s    *Shard
			addr uint64
			h    uint64
		}
		acc := make([]access, benchRandom)
		for i, w := range randomWords() {
			addr := uint64(w) * 4
			h := Hash(benchMem, addr)
			acc[i] = access{m.Shard(m.ShardIndex(h)), addr, h}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			a := &acc[i&(benchRandom-1)]
			a.s.Block(benchMem, a.addr, a.h).Words[0]++
		}
	})
}

// BenchmarkBaseline is what BenchmarkApplyAdd is measured against.
func BenchmarkBaseline(b *testing.B) {
	b.Run("dense", func(b *testing.B) {
		mem := make([]uint32, benchWords)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			mem[i&(benchWords-1)] += uint32(i) | 1
		}
		sink = uint64(mem[0])
	})
	b.Run("dense-random", func(b *testing.B) {
		mem := make([]uint32, benchWords)
		idx := randomWords()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			mem[idx[i&(benchRandom-1)]] += uint32(i) | 1
		}
		sink = uint64(mem[0])
	})
	b.Run("map", func(b *testing.B) {
		// Keyed by byte address, random addresses, prefilled.
		mem := make(map[uint64]uint32, benchWords)
		for w := range uint64(benchWords) {
			mem[w*4] = 0
		}
		idx := randomWords()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			mem[uint64(idx[i&(benchRandom-1)])*4] += uint32(i) | 1
		}
		sink = uint64(mem[0])
	})
}

// BenchmarkApplyAdd is a 32-bit add through the whole path: Hash,
// ShardIndex, Shard.Block, Words[i] += v. The shard lock is left out: the
// engine takes it once per batch of a shard's work, not per access.
func BenchmarkApplyAdd(b *testing.B) {
	b.Run("seq", func(b *testing.B) {
		m := filledMemory(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			addr := uint64(i&(benchWords-1)) * 4
			h := Hash(benchMem, addr)
			m.Shard(m.ShardIndex(h)).Block(benchMem, addr, h).Words[(addr>>2)&(GranuleWords-1)] += uint32(i) | 1
		}
	})
	// seq-hasher is seq with the hash memoised by a Hasher, as a dispatcher
	// can do for coalesced lanes: a run in one granule hashes once.
	b.Run("seq-hasher", func(b *testing.B) {
		m := filledMemory(b)
		var k Hasher
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			addr := uint64(i&(benchWords-1)) * 4
			h := k.Hash(benchMem, addr)
			m.Shard(m.ShardIndex(h)).Block(benchMem, addr, h).Words[(addr>>2)&(GranuleWords-1)] += uint32(i) | 1
		}
	})
	// seq-locked is seq with the shard's lock taken around every access:
	// what the engine must not do.
	b.Run("seq-locked", func(b *testing.B) {
		m := filledMemory(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			addr := uint64(i&(benchWords-1)) * 4
			h := Hash(benchMem, addr)
			s := m.Shard(m.ShardIndex(h))
			s.Lock()
			s.Block(benchMem, addr, h).Words[(addr>>2)&(GranuleWords-1)] += uint32(i) | 1
			s.Unlock()
		}
	})
	b.Run("random", func(b *testing.B) {
		m := filledMemory(b)
		idx := randomWords()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			addr := uint64(idx[i&(benchRandom-1)]) * 4
			h := Hash(benchMem, addr)
			m.Shard(m.ShardIndex(h)).Block(benchMem, addr, h).Words[(addr>>2)&(GranuleWords-1)] += uint32(i) | 1
		}
	})
}
