package bench

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
	"github.com/gpureplay/replay/trace/workload"
)

// TestOpsMatchReplay checks the limit's dense loop against the engine on
// every workload of `replay gen` in every dialect: over the operations
// DecodeOps gives, Apply leaves exactly the memory a replay leaves, so the
// loop does the trace's work (the CAS operands in each dialect's order, the
// float adds rounded as the engine rounds them, the .init memory).
func TestOpsMatchReplay(t *testing.T) {
	const n = 1 << 13
	for _, name := range workload.Names() {
		for _, d := range []trace.Dialect{trace.DialectPTX, trace.DialectSASS, trace.DialectVISA, trace.DialectLSC} {
			t.Run(fmt.Sprintf("%s-%s", name, d), func(t *testing.T) {
				data, laneOps, err := GenerateSpec(workload.Spec{Name: name, Dialect: d, Seed: 1, LaneOps: n})
				if err != nil {
					t.Fatal(err)
				}
				ops, err := DecodeOps(data)
				if err != nil {
					t.Fatal(err)
				}
				if uint64(ops.LaneOps()) != laneOps {
					t.Fatalf("%d lane-ops decoded, %d generated", ops.LaneOps(), laneOps)
				}
				mem := make([]uint32, ops.Words)
				ops.Reset(mem)
				ops.Apply(mem)
				src, err := trace.NewBinaryReader(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				var c engine.Collector
				sum, err := engine.Replay(src, &c, engine.WithWorkers(2))
				if err != nil {
					t.Fatal(err)
				}
				if sum.Faults != 0 {
					t.Fatalf("%d faults", sum.Faults)
				}
				seen := 0
				for _, w := range c.Words {
					i, ok := ops.Word(w.Space, w.Group, w.Addr)
					if !ok {
						if w.Value != 0 {
							t.Errorf("%s %#x = %#x in the replay, not among the dense words", w.Space, w.Addr, w.Value)
						}
						continue
					}
					seen++
					if mem[i] != w.Value {
						t.Fatalf("%s %#x: dense %#x, replay %#x (%s)", w.Space, w.Addr, mem[i], w.Value, ops.Mix())
					}
				}
				if seen == 0 {
					t.Fatal("no word of the replay's memory among the dense words")
				}
			})
		}
	}
}
