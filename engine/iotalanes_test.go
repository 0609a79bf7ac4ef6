package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// laneColsSink is a Collector that takes the results as columns
// (CapResultColumns), without the lanes of full warps when it declares
// CapIotaLanes (leave), and counts the batches whose lanes the engine
// left out (ResultColumns.IotaLanes) and those that gave them.
type laneColsSink struct {
	Collector
	leave       bool
	iota, given int
}

func (s *laneColsSink) Caps() SinkCaps {
	if s.leave {
		return s.Collector.Caps() | CapResultColumns | CapIotaLanes
	}
	return s.Collector.Caps() | CapResultColumns
}

func (s *laneColsSink) ResultColumns(c *ResultColumns) error {
	if c.IotaLanes() {
		s.iota++
	} else {
		s.given++
	}
	return s.Collector.ResultColumns(c)
}

// TestIotaLanesEqualReference: a batch whose every instruction ran lanes
// 0 to n-1 hands its results without a lane column (IotaLanes) to a sink
// that declares CapIotaLanes, warpRows writing no lane; a batch with any
// other mask among them, or for a sink that does not declare it, gives
// the column, the left-out lanes written (batch.iotaLanes); either way the
// rows are the reference's, in lane order, for any worker and batch
// count. Full warps of a histogram, warps of a prefix of lanes (16, 7,
// 1), warps of other masks and scattered warps that fault, in batches of
// one kind and of several, under several shard counts.
func TestIotaLanesEqualReference(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 5))
	const base, size = 0x40000, 0x400
	addrs := func(lanes int) string {
		s := make([]string, lanes)
		for l := range s {
			s[l] = fmt.Sprintf("0x%x", base+uint64(r.IntN(size/4))*4)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	var b strings.Builder
	fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
	// 40 full warps (iota batches whatever the batch size), then 40 of
	// prefix masks, then 40 with every fifth of another mask, then a few
	// that fault (out of the region: misaligned and out of range).
	for i := range 160 {
		mask := ""
		switch {
		case i >= 40 && i < 80:
			mask = fmt.Sprintf(" mask=0x%x", []uint32{0xffff, 0x7f, 1, 0x7fffffff}[i%4])
		case i >= 80 && i < 120 && i%5 == 0:
			mask = fmt.Sprintf(" mask=0x%x", r.Uint32()|2)
		case i >= 80 && i < 120 && i%5 == 1:
			mask = " mask=0xff"
		}
		a := addrs(32)
		if i >= 150 {
			a = fmt.Sprintf("0x%x:%d", base+size-8+uint64(i%2)*2, 4) // past the region, or misaligned
		}
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=%s b=%d%s\n", a, 1+r.IntN(9), mask)
	}
	src := b.String()
	var ref Collector
	if _, err := replayReference(t.Context(), textSource(t, src), &ref, WithExplore(true)); err != nil {
		t.Fatalf("reference: %v", err)
	}
	want := collect(&ref)
	for k, opts := range [][]Option{
		{WithWorkers(1)}, // one batch, of every kind
		{WithWorkers(2), WithBatchInsts(7)},
		{WithWorkers(2), WithBatchInsts(40), withGoLoops()},
		{WithWorkers(1), WithBatchInsts(3)},
		{WithWorkers(2), WithShards(3), WithBatchInsts(11)},
		{WithWorkers(2), WithShards(1), WithBatchInsts(20)},
	} {
		for _, leave := range []bool{true, false} {
			s := laneColsSink{leave: leave}
			if _, err := Replay(t.Context(), textSource(t, src), &s, append(opts, WithExplore(true))...); err != nil {
				t.Fatalf("engine: %v", err)
			}
			got := collect(&s.Collector)
			approxAddrs(t, got.Addrs, want.Addrs)
			if !reflect.DeepEqual(got, want) {
				describeDiff(t, got, want)
				t.Fatalf("options %d, CapIotaLanes %v: engine differs from the reference", k, leave)
			}
			switch {
			case !leave && s.iota != 0:
				t.Errorf("options %d: %d batches without lanes to a sink that did not declare CapIotaLanes", k, s.iota)
			case leave && (k > 0 && (s.iota == 0 || s.given == 0) || k == 0 && s.given != 1):
				t.Errorf("options %d: %d batches without lanes and %d with", k, s.iota, s.given)
			}
		}
	}
	// The same rows through Results (a sink without CapResultColumns).
	equalToReference(t, src, []Option{WithWorkers(2), WithBatchInsts(7)}, []Option{WithWorkers(1), WithBatchInsts(40)})
}

// TestWarpValuesWrittenEqualReference: warpRows clears a warp's values
// only when nothing returns; where something does, every lane's value is
// apply's, whatever path the warp takes (one word: applyUniform; a run of
// words; scattered lanes), in batches that reuse the slots of batches
// before them, whose values would show through a lane apply skipped.
func TestWarpValuesWrittenEqualReference(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 6))
	const base, size = 0x40000, 0x1000
	var b strings.Builder
	fmt.Fprintf(&b, ".region global 0x%x 0x%x\n", base, size)
	ops := []string{"add.u32", "exch.b32", "min.u32", "max.s32", "add.u64", "cas.b32", "inc.u32", "and.b32"}
	for i := range 300 {
		op := ops[r.IntN(len(ops))]
		width := uint64(4)
		if strings.HasSuffix(op, "64") {
			width = 8
		}
		var a string
		switch i % 3 {
		case 0: // one word
			a = fmt.Sprintf("0x%x", base+uint64(r.IntN(size/8))*8)
		case 1: // a run of words
			a = fmt.Sprintf("0x%x:%d", base+uint64(r.IntN(size/8-64))*8, width)
		default: // scattered
			s := make([]string, 32)
			for l := range s {
				s[l] = fmt.Sprintf("0x%x", base+uint64(r.IntN(size/8))*8)
			}
			a = "[" + strings.Join(s, ",") + "]"
		}
		dst := "d"
		if i%7 == 3 {
			dst = "_"
		}
		srcs := fmt.Sprintf("b; | a=%s b=%d", a, 1+r.IntN(1000))
		if strings.HasPrefix(op, "cas") {
			srcs = fmt.Sprintf("b, c; | a=%s b=%d c=%d", a, r.IntN(3), 1+r.IntN(9))
		}
		fmt.Fprintf(&b, "atom.global.%s %s, [a], %s\n", op, dst, srcs)
	}
	equalToReference(t, b.String(), []Option{WithWorkers(1), WithBatchInsts(2)}, []Option{WithWorkers(2), WithBatchInsts(5)},
		[]Option{WithWorkers(2), WithBatchInsts(3), withGoLoops()}, []Option{WithWorkers(1)})
}
