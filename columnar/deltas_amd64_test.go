package columnar

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBlockDeltasAVX512 computes whole blocks' deltas with the assembly and
// with blockDeltas' Go loop, and wants the same deltas, miniblock maxima,
// smallest and largest delta, and value range: blocks of small and of full
// range values (deltas that wrap), constant and stepping ones, signed and
// unsigned orders (flip), for int32 and int64.
func TestBlockDeltasAVX512(t *testing.T) {
	if !hasDeltasAVX512() {
		t.Skip("this CPU has no AVX-512: blocks are encoded by Go's loop only (every other test)")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 2000 {
		checkBlock(t, trial, rng, int32(0), int32(math.MinInt32), func(k int) int32 {
			switch trial % 4 {
			case 0:
				return int32(rng.Uint32())
			case 1:
				return int32(rng.IntN(40) - 5)
			case 2:
				return int32(1000 + 3*k)
			}
			return int32(uint32(k) * 0x9e3779b9)
		})
		checkBlock(t, trial, rng, int64(0), int64(math.MinInt64), func(k int) int64 {
			switch trial % 4 {
			case 0:
				return int64(rng.Uint64())
			case 1:
				return int64(rng.IntN(1<<20) - 7)
			case 2:
				return int64(1<<40 + 5*k)
			}
			return int64(uint64(k) * 0x9e3779b97f4a7c15)
		})
	}
}

func checkBlock[T int32 | int64](t *testing.T, trial int, rng *rand.Rand, zero, sign T, value func(k int) T) {
	t.Helper()
	blk := make([]T, deltaBlock)
	for k := range blk {
		blk[k] = value(k)
	}
	flip := zero
	if trial%3 == 0 {
		flip = sign
	}
	prev, vlo, vhi := value(-1), blk[7]^flip, blk[7]^flip
	if trial%5 == 0 { // a range from earlier blocks that this one widens or not
		vlo, vhi = sign, ^sign
	}
	var wantD, gotD [deltaBlock]int64
	var wantH, gotH [deltaMinis]int64
	wlo, whi, wvlo, wvhi := blockDeltasGo(&wantD, &wantH, blk, prev, flip, vlo, vhi)
	glo, ghi, gvlo, gvhi, ok := blockDeltasSIMD(&gotD, &gotH, blk, prev, flip, vlo, vhi)
	if !ok {
		t.Fatal("the assembly did not run")
	}
	if gotD != wantD || gotH != wantH || glo != wlo || ghi != whi || gvlo != wvlo || gvhi != wvhi {
		t.Fatalf("trial %d (%T): assembly lo %d hi %d range [%d, %d] his %v; Go lo %d hi %d range [%d, %d] his %v; deltas equal %v",
			trial, zero, glo, ghi, gvlo, gvhi, gotH, wlo, whi, wvlo, wvhi, wantH, gotD == wantD)
	}
}

// BenchmarkBlockDeltas: a block of 128 int32 values of a small range (an
// instructions table's addresses column), Go's loop against the assembly.
func BenchmarkBlockDeltas(b *testing.B) {
	blk := make([]int32, deltaBlock)
	for k := range blk {
		blk[k] = int32(24 + k*7%9)
	}
	var d [deltaBlock]int64
	var his [deltaMinis]int64
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			blockDeltasGo(&d, &his, blk, 0, 0, 0, 0)
		}
	})
	b.Run("simd", func(b *testing.B) {
		if !hasDeltasAVX512() {
			b.Skip("no AVX-512")
		}
		for b.Loop() {
			blockDeltasSIMD(&d, &his, blk, 0, 0, 0, 0)
		}
	})
}
