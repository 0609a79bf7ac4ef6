package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/gpureplay/replay/shard"
)

// BenchmarkAddressCount is the addresses table's counting alone, per
// access, on the uniform trace's pattern: batches of 4096 warps of 32
// lanes at random words, one owner, every warp its own, 8 warps a group,
// nine or ten accesses an address (its warps sketch turns into registers
// on the eighth), each address created at one of them. On 1 Mi words
// (1024 pages: 48 MiB of entries, far past the caches) as in gen
// uniform's 9.6 M lane-ops, 73 batches a round; on 64 Ki (64 pages: 3 MiB,
// in the caches) in 5 batches. The two differ by what moving entries
// between memory and the caches costs an access; the in-cache case is
// the counting's own work (sorting, finding, the sketches). hist256 is a
// 256-bin histogram's: every access on one of 256 words of one page, their
// sketches in registers after the first batches.
func BenchmarkAddressCount(b *testing.B) {
	for _, c := range []struct {
		name                 string
		pages, words, rounds int
	}{{"1Mi", 1024, 1024 * shard.PageWords, 73}, {"64Ki", 64, 64 * shard.PageWords, 5}, {"hist256", 1, 256, 8}} {
		b.Run(c.name, func(b *testing.B) { benchAddressCount(b, c.pages, c.words, c.rounds) })
	}
}

func benchAddressCount(b *testing.B, pages, words, round int) {
	const (
		insts = 4096
		lanes = 32
	)
	r := rand.New(rand.NewPCG(1, 2))
	bt := &batch{insts: make([]binst, insts)}
	items := make([]statItem, 0, insts*lanes)
	var warp int64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		t := newAddrTracker(1, false, 1)
		t.grow(pages)
		for range round {
			items = items[:0]
			for i := range insts {
				bt.insts[i].Group, bt.insts[i].Warp = warp/8, warp
				warp++
				for range lanes {
					w := uint32(r.IntN(words))
					items = append(items, newStatItem(w, uint32(i), 1, 0))
				}
			}
			t.lists[0] = append(t.lists[0], items...)
			b.StartTimer()
			t.count(0, bt)
			b.StopTimer()
		}
		b.StartTimer()
		t.finish() // counts the window
		b.StopTimer()
		t.release()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(round*insts*lanes), "ns/access")
}
