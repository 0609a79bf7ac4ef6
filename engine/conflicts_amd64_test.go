package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// TestWarpConflictsAVX512 counts random warps' distinct addresses and
// largest conflicts with the assembly and with countLane, the Go loop's
// step, and wants the same: warps on 1, 2, 3, 8, 17, 32, 256 and 1024
// words of a page, or at any byte of as many, including every lane on one
// address, every lane distinct, and repeats that straddle the warp's
// halves and quarters. addLanesAVX512 must add as sumLanes does and count
// the same; warpBitsAVX512 must give listBits' OR and AND.
func TestWarpConflictsAVX512(t *testing.T) {
	if !hasConflictsAVX512() {
		t.Skip("this CPU has no AVX-512 CD and VPOPCNTDQ: warps are counted by Go's loop only (every other test)")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var ps pageConflicts
	var sums [shard.PageWords]uint64
	for trial := range 20000 {
		words := []uint64{1, 2, 3, 8, 17, 32, 256, 1024}[trial%8]
		page := uint64(rng.Uint32()) << shard.PageShift
		var addrs [trace.MaxLanes]uint64
		for k := range addrs {
			addrs[k] = page | rng.Uint64N(words)*4
		}
		switch trial % 5 {
		case 1: // one lane's address copied to another, anywhere
			addrs[rng.IntN(32)] = addrs[rng.IntN(32)]
		case 2: // every lane distinct
			for k := range addrs {
				addrs[k] = page | uint64(k)*4
			}
			rng.Shuffle(32, func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
		case 3: // any byte of the page
			for k := range addrs {
				addrs[k] = page | rng.Uint64N(words*4)
			}
		}
		ps.next()
		var want, wantMax uint32
		for _, a := range addrs {
			want, wantMax = countLane(ps.counts[:], a, ps.gen, want, wantMax)
		}
		got, gotMax := warpConflictsAVX512(&addrs)
		if got != want || gotMax != wantMax {
			t.Fatalf("trial %d: %d distinct, at most %d on one; Go's loop counts %d and %d\naddrs %x", trial, got, gotMax, want, wantMax, addrs)
		}
		// addLanesAVX512: the same count, and the sums of sumLanes.
		v := rng.Uint32()
		if trial%7 == 0 {
			v = ^uint32(0) // the low halves carry
		}
		goSums, simdSums := sums, sums
		ps.next()
		want, wantMax = sumLanes(&goSums, &addrs, v, &ps.counts, ps.gen)
		got, gotMax = addLanesAVX512(&simdSums, &addrs, 1<<32|uint64(v))
		if got != want || gotMax != wantMax || simdSums != goSums {
			t.Fatalf("trial %d: addLanesAVX512 counts %d and %d, sumLanes %d and %d; sums equal: %v", trial, got, gotMax, want, wantMax, simdSums == goSums)
		}
		sums = goSums
		// warpBitsAVX512: listBits.
		addrs[rng.IntN(32)] ^= rng.Uint64() // bits of any lane, any page
		or, and := warpBitsAVX512(&addrs)
		if wantOr, wantAnd := listBits(&addrs); or != wantOr || and != wantAnd {
			t.Fatalf("trial %d: warpBitsAVX512 %#x %#x, listBits %#x %#x", trial, or, and, wantOr, wantAnd)
		}
	}
}

// BenchmarkSumLanes sums histogram warps (32 lanes on 256 words of a page,
// one addend) into a page accumulator and counts their conflicts: Go's
// loop (sumLanes, a count per lane) and the assembly (simd,
// addLanesAVX512). ns/op is a warp's.
func BenchmarkSumLanes(b *testing.B) {
	benchSumLanes(b, trace.MaxLanes,
		func(acc *pageAcc, w []uint64, ps *pageConflicts) (uint32, uint32) {
			return sumLanes(&acc.sums, (*[trace.MaxLanes]uint64)(w), 1, &ps.counts, ps.gen)
		},
		func(acc *pageAcc, w []uint64) (uint32, uint32) {
			return addLanesAVX512(&acc.sums, (*[trace.MaxLanes]uint64)(w), 1<<32|1)
		})
}

// TestSumLanes16AVX512: a SIMD16 warp (vISA's, LSC's) summed by
// sumLanes16AVX512 adds to the page's sums what sumLanesN adds, and
// counts its distinct addresses and largest conflict alike, on warps of
// 1 to 1024 words, every lane on one word, every lane distinct, and a
// lane's address copied to another of either half.
func TestSumLanes16AVX512(t *testing.T) {
	if !hasConflictsAVX512() {
		t.Skip("this CPU has no AVX-512 CD and VPOPCNTDQ: SIMD16 warps are counted by Go's loop only (every other test)")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var ps pageConflicts
	var goSums, simdSums [shard.PageWords]uint64
	for trial := range 20000 {
		words := []uint64{1, 2, 3, 8, 17, 32, 256, 1024}[trial%8]
		page := uint64(rng.Uint32()) << shard.PageShift
		var addrs [trace.MaxLanes / 2]uint64
		for k := range addrs {
			addrs[k] = page | rng.Uint64N(words)*4
		}
		switch trial % 4 {
		case 1:
			addrs[rng.IntN(16)] = addrs[rng.IntN(16)]
		case 2:
			for k := range addrs {
				addrs[k] = page | uint64(k)*4
			}
			rng.Shuffle(16, func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
		}
		v := rng.Uint32()
		if trial%7 == 0 {
			v = ^uint32(0) // the low halves carry
		}
		ps.next()
		want, wantMax := sumLanesN(&goSums, addrs[:], v, &ps.counts, ps.gen)
		got, gotMax := sumLanes16AVX512(&simdSums, &addrs, v)
		if got != want || gotMax != wantMax || simdSums != goSums {
			t.Fatalf("trial %d: sumLanes16AVX512 counts %d and %d, sumLanesN %d and %d; sums equal: %v\naddrs %x", trial, got, gotMax, want, wantMax, simdSums == goSums, addrs)
		}
	}
}

// BenchmarkSumLanes16 is BenchmarkSumLanes of SIMD16 warps (16 lanes on
// 256 words of a page): sumLanesN and sumLanes16AVX512.
func BenchmarkSumLanes16(b *testing.B) {
	benchSumLanes(b, trace.MaxLanes/2,
		func(acc *pageAcc, w []uint64, ps *pageConflicts) (uint32, uint32) {
			return sumLanesN(&acc.sums, w, 1, &ps.counts, ps.gen)
		},
		func(acc *pageAcc, w []uint64) (uint32, uint32) {
			return sumLanes16AVX512(&acc.sums, (*[trace.MaxLanes / 2]uint64)(w), 1)
		})
}

// benchSumLanes runs BenchmarkSumLanes and BenchmarkSumLanes16: 1024 warps
// of the given lanes on 256 words of a page, one addend, summed by Go's
// loop (goSum, a count per lane) and by the assembly (simd). ns/op is a
// warp's.
func benchSumLanes(b *testing.B, lanes int, goSum func(*pageAcc, []uint64, *pageConflicts) (uint32, uint32), simd func(*pageAcc, []uint64) (uint32, uint32)) {
	rng := rand.New(rand.NewPCG(5, 6))
	warps := make([][]uint64, 1024)
	for i := range warps {
		warps[i] = make([]uint64, lanes)
		for k := range warps[i] {
			warps[i][k] = 0x7000 + rng.Uint64N(256)*4
		}
	}
	var acc pageAcc
	var ps pageConflicts
	var sink uint32
	b.Run("go", func(b *testing.B) {
		i := 0
		for b.Loop() {
			ps.next()
			d, m := goSum(&acc, warps[i&1023], &ps)
			sink += d + m
			i++
		}
	})
	b.Run("simd", func(b *testing.B) {
		if !hasConflictsAVX512() {
			b.Skip("no AVX-512 CD and VPOPCNTDQ")
		}
		i := 0
		for b.Loop() {
			d, m := simd(&acc, warps[i&1023])
			sink += d + m
			i++
		}
	})
	if sink == 0 {
		b.Fatal("no warp counted")
	}
}

// TestWarpAddrsAVX512: warpAddrsAVX512 makes the addresses and span that
// warpAddrs makes, for scales of 0, 1, 4, 16 and any, immediates and
// pitches of any size (the sums wrapping), and masks of 64, 32 and any
// bits, and lists of addresses near 0, near the top and anywhere.
func TestWarpAddrsAVX512(t *testing.T) {
	if !hasAddrsAVX512() {
		t.Skip("this CPU has no AVX-512 DQ and VL: a warp's addresses are made by Go's loop only (every other test)")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 20000 {
		scale := []uint64{0, 1, 4, 16, rng.Uint64()}[trial%5]
		imm := []uint64{0, 8, rng.Uint64N(1 << 20), rng.Uint64()}[trial/5%4]
		pitch := []uint64{0, 4, rng.Uint64N(1 << 12), rng.Uint64()}[trial/20%4]
		mask := []uint64{^uint64(0), 1<<32 - 1, rng.Uint64()}[trial/80%3]
		var av [trace.MaxLanes]uint64
		for k := range av {
			switch trial % 3 {
			case 0:
				av[k] = rng.Uint64N(1 << 16)
			case 1:
				av[k] = ^uint64(0) - rng.Uint64N(1<<16)
			default:
				av[k] = rng.Uint64()
			}
		}
		var want, got [trace.MaxLanes]uint64
		sp := warpAddrs(&want, &av, scale, imm, pitch, mask)
		lo, hi, or := warpAddrsAVX512(&got, &av, scale, imm, pitch, mask)
		if got != want || lo != sp.lo || hi != sp.hi || or != sp.or {
			t.Fatalf("trial %d (scale %#x, imm %#x, pitch %#x, mask %#x): addresses %x, span %#x %#x %#x; want %x, %#x %#x %#x",
				trial, scale, imm, pitch, mask, got, lo, hi, or, want, sp.lo, sp.hi, sp.or)
		}
	}
}
