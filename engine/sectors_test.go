package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/shard"
)

// sectorsTrace has one instruction per path that writes an instruction's
// statistics (expand.go, commute.go), and sectorsWant each one's distinct
// 32-byte sectors, worked out by hand.
func sectorsTrace() (string, []uint32) {
	list := func(addrs ...uint64) string {
		s := make([]string, len(addrs))
		for i, a := range addrs {
			s[i] = fmt.Sprintf("0x%x", a)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	var scattered, shuffled, histogram, misaligned []uint64
	for l := uint64(0); l < 32; l++ {
		scattered = append(scattered, 0x5000+l/4*0x1000+l%4*8) // 8 pages, 4 lanes in one sector each
		shuffled = append(shuffled, 0x6000+(31-l)%8*32+l%2*4)  // 8 sectors, lanes out of order, repeats
		histogram = append(histogram, 0x8000+(l*7)%16*4)       // one page, 16 words in 2 sectors
		misaligned = append(misaligned, 0x7000+l*16)           // 16 sectors
	}
	misaligned[5] = 0x7001 // faults, and still counts (as addresses does)
	var b strings.Builder
	want := []uint32{}
	add := func(line string, sectors uint32) {
		b.WriteString(line + "\n")
		want = append(want, sectors)
	}
	add("atom.global.add.u32 _, [a], 1; | a=0x1000", 1)     // one word, nothing returned: routeSum
	add("atom.global.add.u32 d, [a], 1; | a=0x1000", 1)     // one word: routeRun
	add("atom.global.add.u32 d, [a], 1; | a=0x2000:4", 4)   // a run of 128 bytes
	add("atom.global.add.u32 d, [a], 1; | a=0x3000:64", 32) // a run, a sector a lane
	add("atom.global.add.u32 d, [a], 1; | a=0x40fc:-4", 4)  // downwards
	add("atom.global.add.u32 d, [a], 1; | a="+list(scattered...), 8)
	add("atom.global.add.u32 d, [a], 1; | a="+list(shuffled...), 8)
	add("atom.global.add.u32 _, [a], 1; | a="+list(histogram...), 2)
	add("atom.global.add.u32 d, [a], 1; | a="+list(misaligned...), 16)
	add("atom.global.add.u32 _, [a], 1; | a=0x1000", 1) // a hot counter's repeats
	add("atom.global.add.u32 _, [a], 1; | a=0x1000", 1)
	add("atom.global.add.u32 _, [a], 1; | a=0x1000", 1)
	add("atom.global.add.u32 d, [a], 1; | a=0x9000:4 mask=0x0", 0)
	add("atom.global.add.u64 d, [a], 1; | a=0xa010:8 mask=0xff", 3) // 0xa010..0xa048
	return b.String(), want
}

// TestSectorsEveryPath: every path of the engine counts an instruction's
// sectors as worked out by hand and as the reference does, with any shard,
// worker and batch count, with and without per-lane rows and -explore, and
// n partitions' counts add up to the whole replay's.
func TestSectorsEveryPath(t *testing.T) {
	src, want := sectorsTrace()
	sectors := func(c *Collector) []uint32 {
		st := slices.Clone(c.Stats)
		slices.SortFunc(st, func(a, b InstStat) int { return int(a.Seq) - int(b.Seq) })
		out := make([]uint32, len(st))
		for i, s := range st {
			out[i] = s.Sectors
		}
		return out
	}
	var ref Collector
	if _, err := replayReference(t.Context(), textSource(t, src), &ref); err != nil {
		t.Fatal(err)
	}
	if got := sectors(&ref); !slices.Equal(got, want) {
		t.Errorf("reference: sectors %v, want %v", got, want)
	}
	for i, opts := range engineOptSets {
		for _, explore := range []bool{false, true} {
			for _, noResults := range []bool{false, true} {
				var c statsOnly
				var sink Sink = &c.Collector
				if noResults {
					sink = &c
				}
				if _, err := Replay(t.Context(), textSource(t, src), sink, append(slices.Clone(opts), WithExplore(explore))...); err != nil {
					t.Fatal(err)
				}
				if got := sectors(&c.Collector); !slices.Equal(got, want) {
					t.Errorf("options %d, explore %v, no results %v: sectors %v, want %v", i, explore, noResults, got, want)
				}
			}
		}
	}
	// A trace of adds that return nothing, replayed without per-lane rows
	// and without the addresses table, takes the commuting paths: a hot
	// counter's repeats summed (sumRepeats, sumAgain), a histogram's warps
	// summed per page (sumWarp).
	var hot strings.Builder
	var hotWant []uint32
	for i := 0; i < 6; i++ {
		hot.WriteString("atom.global.add.u32 _, [a], 1; | a=0x1000\n")
		hotWant = append(hotWant, 1)
	}
	hist := strings.Split(src, "\n")[7] // the histogram warp
	for i := 0; i < 3; i++ {
		hot.WriteString(hist + "\n")
		hotWant = append(hotWant, 2)
	}
	for i, opts := range engineOptSets {
		var c statsNoAddresses
		if _, err := Replay(t.Context(), textSource(t, hot.String()), &c, opts...); err != nil {
			t.Fatal(err)
		}
		if got := sectors(&c.Collector); !slices.Equal(got, hotWant) {
			t.Errorf("adds, options %d: sectors %v, want %v", i, got, hotWant)
		}
	}
	for _, n := range []int{2, 3, 5} {
		sum := make([]uint32, len(want))
		for p := 0; p < n; p++ {
			var c statsOnly
			if _, err := Replay(t.Context(), textSource(t, src), &c, WithPartition(p, n), WithWorkers(2), WithShards(3)); err != nil {
				t.Fatal(err)
			}
			for i, s := range sectors(&c.Collector) {
				sum[i] += s
			}
		}
		if !slices.Equal(sum, want) {
			t.Errorf("%d partitions: sectors add up to %v, want %v", n, sum, want)
		}
	}
}

// statsNoAddresses wants neither per-lane rows nor the addresses table.
type statsNoAddresses struct{ statsOnly }

func (*statsNoAddresses) Caps() SinkCaps { return 0 }

// TestSectorCountForms: sectorCount's three forms (in order, a small set,
// sorted in a copy) agree with a map of sectors on lists that take each:
// sorted, shuffled warps, repeats, and more addresses than the set takes.
func TestSectorCountForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 47))
	for _, n := range []int{1, 2, 31, 32, 64, 65, 200, 300} {
		for _, span := range []uint64{32, 256, 4096, 1 << 22} {
			for rep := range 20 {
				addrs := make([]uint64, n)
				for i := range addrs {
					addrs[i] = 0x10000 + rng.Uint64N(span)
				}
				if rep%4 == 0 {
					slices.Sort(addrs)
				}
				want := map[uint64]bool{}
				for _, a := range addrs {
					want[a>>5] = true
				}
				in := slices.Clone(addrs)
				if got := sectorCount(addrs); got != uint32(len(want)) {
					t.Fatalf("n=%d span=%d: sectorCount %d, want %d", n, span, got, len(want))
				}
				if !slices.Equal(in, addrs) {
					t.Fatalf("n=%d span=%d: sectorCount changed its input", n, span)
				}
				if n <= sectorSetLen/2 {
					if got := sectorCountSmall(addrs); got != uint32(len(want)) {
						t.Fatalf("n=%d span=%d: sectorCountSmall %d, want %d", n, span, got, len(want))
					}
				}
				if got := sectorCountSorted(addrs); got != uint32(len(want)) {
					t.Fatalf("n=%d span=%d: sectorCountSorted %d, want %d", n, span, got, len(want))
				}
				if span <= shard.PageBytes {
					page := make([]uint64, n) // the same offsets in one page
					for i, a := range addrs {
						page[i] = 0x7000 + (a-0x10000)%shard.PageBytes
					}
					pw := map[uint64]bool{}
					for _, a := range page {
						pw[a>>5] = true
					}
					if got := pageSectors(page); got != uint32(len(pw)) {
						t.Fatalf("n=%d span=%d: pageSectors %d, want %d", n, span, got, len(pw))
					}
				}
			}
		}
	}
}

// BenchmarkSectorCount: a scattered warp's sectors, through the set,
// through a sort, and through warpSectors (the AVX-512 count where the
// CPU has it).
func BenchmarkSectorCount(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, 32)
	for i := range addrs {
		addrs[i] = rng.Uint64N(4 << 20)
	}
	b.Run("warp", func(b *testing.B) {
		for b.Loop() {
			warpSectors(addrs, hasConflictsAVX512())
		}
	})
	b.Run("set", func(b *testing.B) {
		for b.Loop() {
			sectorCountSmall(addrs)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			sectorCountSorted(addrs)
		}
	})
	for _, n := range []int{16, 32} { // a SIMD16 scatter's, a warp's
		b.Run(fmt.Sprintf("warp%d", n), func(b *testing.B) {
			for b.Loop() {
				warpSectors(addrs[:n], hasConflictsAVX512())
			}
		})
	}
}

// TestWarpSectorsPartialWarps: warpSectors counts the sectors of warps of
// 1 to 32 lanes as sectorCountSorted does, with and without the AVX-512
// count: warps within one page (pageSectors: a 16-lane histogram's),
// across pages (a 16-lane scatter's, whose other lanes the AVX-512 count
// fills with its first sector: to 16 lanes for 9 to 16, distinct16AVX512,
// to 32 for more), across sectors that differ above their
// low 32 bits (no AVX-512 count), and a page's first and last sectors.
func TestWarpSectorsPartialWarps(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 20000 {
		n := 1 + rng.IntN(32)
		page := rng.Uint64N(1<<30) << shard.PageShift
		span := []uint64{64, 1024, shard.PageBytes, 4 * shard.PageBytes, 64 << 20, 1 << 40}[trial%6]
		addrs := make([]uint64, n)
		for k := range addrs {
			addrs[k] = page + rng.Uint64N(span)
			if trial%9 == 0 {
				addrs[k] = page + []uint64{0, 31, shard.PageBytes - 32, shard.PageBytes - 1}[rng.IntN(4)]
			}
		}
		want := sectorCountSorted(addrs)
		for _, avx := range []bool{false, hasConflictsAVX512()} {
			if got := warpSectors(addrs, avx); got != want {
				t.Fatalf("trial %d (avx512 %v): warpSectors counts %d sectors of %d lanes, sectorCountSorted %d\naddrs %x", trial, avx, got, n, want, addrs)
			}
		}
	}
}
