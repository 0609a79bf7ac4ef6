package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/gpureplay/replay/shard"
)

// BenchmarkAddressCount is the addresses table's counting alone, per
// access, on the uniform trace's pattern: batches of 4096 warps of 32
// lanes at random words of 1 Mi (1024 pages), one owner, every warp its
// own, ten batches per round so that an address gets about ten accesses
// (its warps sketch turns into registers on the eighth).
func BenchmarkAddressCount(b *testing.B) {
	const (
		pages = 1024
		insts = 4096
		lanes = 32
		round = 10
	)
	r := rand.New(rand.NewPCG(1, 2))
	bt := &batch{insts: make([]binst, insts)}
	batches := make([][]statItem, round)
	for k := range batches {
		for i := range insts {
			for l := range lanes {
				w := uint32(r.IntN(pages * shard.PageWords))
				batches[k] = append(batches[k], statItem{word: w, inst: uint32(i), slot: uint32(i*lanes + l), n: 1})
			}
		}
	}
	var warp int64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		t := newAddrTracker(1, false)
		t.grow(pages)
		b.StartTimer()
		for _, items := range batches {
			for i := range bt.insts {
				bt.insts[i].Group, bt.insts[i].Warp = warp/8, warp
				warp++
			}
			t.items[0] = append(t.items[0], items...)
			t.count(0, bt)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(round*insts*lanes), "ns/access")
}
