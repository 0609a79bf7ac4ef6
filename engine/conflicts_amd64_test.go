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

// TestPageSectorsAVX512 counts random one-page warps' sectors with the
// assembly and with pageSectors, Go's loop, and wants the same: warps on
// 1 to 1024 words, or at any byte, of one page, every lane on one sector,
// on the first or the last (sectors 63 and 64, the two words' edges),
// and every lane on a sector of its own.
func TestPageSectorsAVX512(t *testing.T) {
	if !hasConflictsAVX512() {
		t.Skip("this CPU has no AVX-512: a page's sectors are counted by Go's loop only (every other test)")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 20000 {
		page := rng.Uint64N(1<<40) << shard.PageShift
		var addrs [trace.MaxLanes]uint64
		words := []uint64{1, 2, 3, 8, 17, 32, 256, 1024}[trial%8]
		for k := range addrs {
			addrs[k] = page | rng.Uint64N(words)*4
		}
		switch trial % 7 {
		case 1: // any byte of the page
			for k := range addrs {
				addrs[k] = page | rng.Uint64N(shard.PageBytes)
			}
		case 2: // every lane on one sector: the first, the last, either edge
			s := []uint64{0, 63, 64, 127}[trial/7%4]
			for k := range addrs {
				addrs[k] = page | s*32 | rng.Uint64N(32)
			}
		case 3: // every lane a sector of its own, straddling the two words
			for k := range addrs {
				addrs[k] = page | uint64(48+k)*32
			}
			rng.Shuffle(32, func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
		}
		want := pageSectors(addrs[:])
		if got := pageSectorsAVX512(&addrs); got != want {
			t.Fatalf("trial %d: pageSectorsAVX512 counts %d sectors, pageSectors %d\naddrs %x", trial, got, want, addrs)
		}
		if trial%8 == 7 && want != sectorCount(addrs[:]) {
			t.Fatalf("trial %d: pageSectors %d, sectorCount %d", trial, want, sectorCount(addrs[:]))
		}
	}
}

// TestWarpSectorsAVX512 counts full warps' sectors with the assembly and
// with sectorCountSorted, and wants the same, or ok false exactly when
// the warp's sectors differ above their low 32 bits (addresses 2^37
// bytes apart and more): warps within 64 bytes, a page, four pages,
// 64 MiB and 2^36 bytes (ok), and 2^40 bytes (some not), sectors that
// differ above bit 31 alone (lanes 2^37 bytes apart: equal low bits, not
// ok), and a page's first and last sectors.
func TestWarpSectorsAVX512(t *testing.T) {
	if !hasConflictsAVX512() {
		t.Skip("this CPU has no AVX-512: warps' sectors are counted by Go's loops only (every other test)")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 20000 {
		page := rng.Uint64N(1<<30) << shard.PageShift
		span := []uint64{64, shard.PageBytes, 4 * shard.PageBytes, 64 << 20, 1 << 36, 1 << 40}[trial%6]
		var addrs [trace.MaxLanes]uint64
		for k := range addrs {
			addrs[k] = page + rng.Uint64N(span)
			switch trial % 9 {
			case 1:
				addrs[k] = page + []uint64{0, 31, shard.PageBytes - 32, shard.PageBytes - 1}[rng.IntN(4)]
			case 2:
				addrs[k] = page + uint64(rng.IntN(2))<<37 // one sector, or one 2^32 sectors on
			}
		}
		var x uint64
		for _, a := range addrs {
			x |= a>>5 ^ addrs[0]>>5
		}
		want, wantOK := sectorCountSorted(addrs[:]), x>>32 == 0
		got, ok := sectors32AVX512(&addrs)
		if ok != wantOK || ok && got != want {
			t.Fatalf("trial %d: sectors32AVX512 counts %d sectors, ok %v; sectorCountSorted %d, ok %v\naddrs %x", trial, got, ok, want, wantOK, addrs)
		}
		if got := warpSectors(addrs[:], true); got != want {
			t.Fatalf("trial %d: warpSectors counts %d sectors, sectorCountSorted %d", trial, got, want)
		}
	}
}

// BenchmarkPageSectors counts the sectors of histogram warps (32 lanes on
// 256 words of a page): Go's loop (pageSectors), the conflict count
// (warpSectors) and the assembly's set of bits (pageSectorsAVX512). ns/op
// is a warp's.
func BenchmarkPageSectors(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	warps := make([][trace.MaxLanes]uint64, 1024)
	for i := range warps {
		for k := range warps[i] {
			warps[i][k] = 0x7000 + rng.Uint64N(256)*4
		}
	}
	var sink uint32
	b.Run("go", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sink += pageSectors(warps[i&1023][:])
		}
	})
	if !hasConflictsAVX512() {
		b.Skip("no AVX-512 CD and VPOPCNTDQ")
	}
	b.Run("conflicts", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sink += warpSectors(warps[i&1023][:], true)
		}
	})
	b.Run("simd", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sink += pageSectorsAVX512(&warps[i&1023])
		}
	})
	if sink == 0 {
		b.Fatal("no sector counted")
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

// TestAddLanes16AVX512: a SIMD16 warp (vISA's, LSC's) summed by
// addLanes16AVX512 adds to the page's sums what sumLanesN adds, counts
// its distinct addresses and largest conflict alike, and its sectors as
// pageSectors does, on warps of 1 to 1024 words, every lane on one word,
// every lane distinct, and a lane's address copied to another of either
// half; warpBits16AVX512 must give listBitsN's OR and AND.
func TestAddLanes16AVX512(t *testing.T) {
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
		wantSectors := pageSectors(addrs[:])
		got, gotMax, gotSectors := addLanes16AVX512(&simdSums, &addrs, 1<<32|uint64(v))
		if got != want || gotMax != wantMax || gotSectors != wantSectors || simdSums != goSums {
			t.Fatalf("trial %d: addLanes16AVX512 counts %d, %d and %d sectors, sumLanesN and pageSectors %d, %d and %d; sums equal: %v\naddrs %x", trial, got, gotMax, gotSectors, want, wantMax, wantSectors, simdSums == goSums, addrs)
		}
		// warpBits16AVX512: listBitsN.
		addrs[rng.IntN(16)] ^= rng.Uint64() // bits of any lane, any page
		or, and := warpBits16AVX512(&addrs)
		if wantOr, wantAnd := listBitsN(addrs[:]); or != wantOr || and != wantAnd {
			t.Fatalf("trial %d: warpBits16AVX512 %#x %#x, listBitsN %#x %#x", trial, or, and, wantOr, wantAnd)
		}
	}
}

// BenchmarkSumLanes16 is BenchmarkSumLanes of SIMD16 warps (16 lanes on
// 256 words of a page): sumLanesN and addLanes16AVX512 (which also counts
// the sectors).
func BenchmarkSumLanes16(b *testing.B) {
	benchSumLanes(b, trace.MaxLanes/2,
		func(acc *pageAcc, w []uint64, ps *pageConflicts) (uint32, uint32) {
			return sumLanesN(&acc.sums, w, 1, &ps.counts, ps.gen)
		},
		func(acc *pageAcc, w []uint64) (uint32, uint32) {
			d, m, _ := addLanes16AVX512(&acc.sums, (*[trace.MaxLanes / 2]uint64)(w), 1<<32|1)
			return d, m
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
