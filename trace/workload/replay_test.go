package workload

import (
	"math"
	"slices"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// replay runs the generated trace through the engine.
func replay(t *testing.T, s Spec) (*engine.Collector, engine.Summary) {
	t.Helper()
	var c engine.Collector
	sum, err := engine.Replay(t.Context(), newGen(t, s), &c, engine.WithWorkers(2), engine.WithBatchInsts(512))
	if err != nil {
		t.Fatalf("replay %s %s: %v", s.Name, s.Dialect, err)
	}
	if sum.Faults != 0 {
		t.Errorf("%s %s: %d faults", s.Name, s.Dialect, sum.Faults)
	}
	if want := newGen(t, s).Spec().LaneOps; sum.LaneOps < want {
		t.Errorf("%s %s: replayed %d lane-ops, want at least %d", s.Name, s.Dialect, sum.LaneOps, want)
	}
	return &c, sum
}

// words maps the final global memory by address.
func words(c *engine.Collector) map[uint64]uint32 {
	m := map[uint64]uint32{}
	for _, w := range c.Words {
		if w.Space == trace.Global {
			m[w.Addr] = w.Value
		}
	}
	return m
}

// TestReplay replays every workload in every dialect and checks what the
// memory must hold.
func TestReplay(t *testing.T) {
	const laneOps = 10_000
	for _, name := range Names() {
		for _, d := range dialects {
			t.Run(name+"/"+d.String(), func(t *testing.T) {
				s := small(name, d)
				s.LaneOps = laneOps
				c, sum := replay(t, s)
				mem := words(c)
				switch name {
				case "hotcounter":
					if got := mem[Base]; uint64(got) != sum.LaneOps {
						t.Errorf("counter %d, want the %d lane-ops", got, sum.LaneOps)
					}
				case "histogram":
					var total uint64
					for a, v := range mem {
						if a < Base || a >= Base+4*uint64(s.Bins) {
							t.Errorf("a word at %#x, outside the bins", a)
						}
						total += uint64(v)
					}
					if total != sum.LaneOps {
						t.Errorf("bins sum to %d, want the %d lane-ops", total, sum.LaneOps)
					}
				case "uniform":
					var total, added uint64
					for _, v := range mem {
						total += uint64(v)
					}
					each(t, newGen(t, s), func(in *trace.Inst) {
						for l := range in.Static.ExecSize {
							lo, _ := in.Value(in.Static.B[0], l)
							added += lo
						}
					})
					if total != added {
						t.Errorf("memory sums to %d, the added values to %d", total, added)
					}
				case "freduce":
					checkFReduce(t, s, mem)
				case "appendqueue":
					checkAppend(t, s, c, sum)
				case "spinlock":
					checkSpinlock(t, s, c)
				case "bfs":
					checkBFS(t, s, mem)
				}
			})
		}
	}
}

// checkFReduce: each accumulator is the f32 sum of its values in trace
// order, lane order, rounded at each step.
func checkFReduce(t *testing.T, s Spec, mem map[uint64]uint32) {
	acc := map[uint64]float32{}
	each(t, newGen(t, s), func(in *trace.Inst) {
		for l := range in.Static.ExecSize {
			a := in.Vals[in.Static.Addr].Lo(l)
			lo, _ := in.Value(in.Static.B[0], l)
			acc[a] += math.Float32frombits(uint32(lo))
		}
	})
	if len(acc) != 4 {
		t.Errorf("%d accumulators, want 4", len(acc))
	}
	for a, want := range acc {
		if got := math.Float32frombits(mem[a]); got != want {
			t.Errorf("accumulator %#x = %v, want %v", a, got, want)
		}
	}
}

// checkAppend: the tail ends at the lane-op count, and the slots the lanes
// got back are 0, 1, 2, … each once.
func checkAppend(t *testing.T, s Spec, c *engine.Collector, sum engine.Summary) {
	tail, ok := c.Word("global", -1, Base)
	if s.Dialect == trace.DialectLSC {
		tail, ok = c.Word("apndctr(0xa0)", -1, 0)
	}
	if !ok || uint64(tail) != sum.LaneOps {
		t.Errorf("tail %d (found %v), want the %d lane-ops", tail, ok, sum.LaneOps)
	}
	slots := make([]uint64, 0, len(c.Res))
	for _, r := range c.Res {
		slots = append(slots, r.Value)
	}
	slices.Sort(slots)
	for i, v := range slots {
		if v != uint64(i) {
			t.Fatalf("slot %d handed out as %d", i, v)
		}
	}
}

// checkSpinlock: the lanes whose CAS returned 0 (took the lock) are
// exactly the lanes the same warp releases next, every release finds its
// lock held (returns 1), and a lock is free once its holder releases it.
func checkSpinlock(t *testing.T, s Spec, c *engine.Collector) {
	type warpKey struct{ g, w int64 }
	won := map[uint64]uint32{} // seq -> lanes that got 0
	relOld := map[uint64]bool{}
	for _, r := range c.Res {
		if r.Value == 0 {
			won[r.Seq] |= 1 << r.Lane
		} else if r.Value == 1 {
			relOld[r.Seq] = true
		}
	}
	pending := map[warpKey]uint32{} // lanes won, awaiting release
	var seq uint64
	cas, rel := 0, 0
	each(t, newGen(t, s), func(in *trace.Inst) {
		k := warpKey{in.Group, in.Warp}
		switch in.Static.Op {
		case trace.OpCAS:
			cas++
			if pending[k] != 0 {
				t.Fatalf("seq %d: warp %v tries again before releasing %#x", seq, k, pending[k])
			}
			pending[k] = won[seq]
		default:
			rel++
			if in.Mask != pending[k] {
				t.Fatalf("seq %d: warp %v releases %#x, the replay gave it %#x", seq, k, in.Mask, pending[k])
			}
			if won[seq] != 0 {
				t.Fatalf("seq %d: a release found its lock free", seq)
			}
			pending[k] = 0
		}
		seq++
	})
	if cas < 2*rel {
		t.Errorf("%d CAS for %d releases: expected contention to make retries", cas, rel)
	}
}

// checkBFS: the replay's distances are the generator's.
func checkBFS(t *testing.T, s Spec, mem map[uint64]uint32) {
	g := newGen(t, s)
	each(t, g, func(*trace.Inst) {})
	dist := g.step.(*bfs).dist
	reached := 0
	for v, d := range dist {
		if got, ok := mem[Base+4*uint64(v)]; ok && got != d {
			t.Fatalf("dist[%d] = %d, the generator has %d", v, got, d)
		}
		if d != inf {
			reached++
		}
	}
	if reached < len(dist)/4 {
		t.Errorf("only %d of %d vertices reached", reached, len(dist))
	}
}
