package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// BenchmarkExpand times the expand stage alone, on one goroutine, in the
// steady state (every page created): a batch of 4096 full warps of
// `atom.global.add.u32 d, [a], b` (or of `1`), as a lean replay (no
// per-lane rows) routes them to one owner: a batch that commutes, whose
// histogram warps are summed in a page (pageAcc).
//
//	uniform    every lane adds its own value to a random word of 2^20
//	           (gen uniform -words 1Mi)
//	histogram  every lane adds 1 to a random one of 256 words (gen histogram)
//	hotcounter every lane adds 1 to the same word (gen hotcounter)
//	spinlock   the active lanes of a random mask CAS 0 to 1 on one of 4
//	           locks each (gen spinlock's acquire: a few addresses)
//
// The figure is per lane. It is the stage's own cost, without the reading
// goroutine beside it or the caches it shares with the applying one, so it
// ranks changes to expand's loops more steadily than a whole replay does.
func BenchmarkExpand(b *testing.B) {
	const warps = 4096
	for _, shape := range []struct {
		name   string
		words  int  // 0: one counter, a broadcast address
		addend bool // a value per lane, else 1
		lock   bool // a CAS of 0 to 1 under random masks
	}{{"uniform", 1 << 20, true, false}, {"histogram", 256, false, false}, {"hotcounter", 0, false, false}, {"spinlock", 4, false, true}} {
		b.Run(shape.name, func(b *testing.B) {
			text := "atom.global.add.u32 d, [a], 1"
			if shape.addend {
				text = "atom.global.add.u32 d, [a], b"
			}
			if shape.lock {
				text = "atom.global.cas.b32 d, [a], 0, 1"
			}
			st, err := trace.ParseStatic(text)
			if err != nil {
				b.Fatal(err)
			}
			e, err := testReplayer(&trace.Header{}, WithWorkers(2))
			if err != nil {
				b.Fatal(err)
			}
			p, err := newPlan(st, &trace.Header{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(3, 4))
			lists := make([]uint64, 0, warps*2*trace.MaxLanes)
			bt := &batch{noResults: true, avx512: hasConflictsAVX512()} // as a replay's
			bt.reset(1, 1, e.mem.Shards())
			for i := range warps {
				in := &trace.Inst{Seq: uint64(i), Static: st, Warp: int64(i), Mask: ^uint32(0)}
				if shape.lock {
					in.Mask = r.Uint32() | 1
				}
				if shape.words == 0 {
					in.Vals = []trace.Vector{{Kind: trace.VecBroadcast, Base: 0x10000000}}
				} else {
					at := len(lists)
					for range trace.MaxLanes {
						lists = append(lists, 0x10000000+uint64(r.IntN(shape.words))*4)
					}
					in.Vals = []trace.Vector{{Kind: trace.VecList, List: lists[at : at+trace.MaxLanes]}}
					if shape.addend {
						for range trace.MaxLanes {
							lists = append(lists, uint64(r.Uint32()))
						}
						in.Vals = append(in.Vals, trace.Vector{Kind: trace.VecList, List: lists[at+trace.MaxLanes : at+2*trace.MaxLanes]})
					}
				}
				bt.add(in, p, 0, false)
			}
			bt.finishAdd([]*plan{p})
			bt.oneLoop = bt.commutes() // as expandBatch sets it: nothing returns
			expand := func() {
				bt.out[0][0].reset()
				bt.expand(0, 0, len(bt.insts), e.mem, false, nil)
				if err := bt.rangeErr[0]; err != nil {
					b.Fatal(err)
				}
			}
			expand() // create every page first: measure the steady state
			if got := bt.stats[warps-1].Lanes; got != trace.MaxLanes && !shape.lock {
				b.Fatalf("the last warp's statistics count %d lanes, want %d", got, trace.MaxLanes)
			}
			b.SetBytes(4)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += warps * trace.MaxLanes {
				expand()
			}
		})
	}
}
