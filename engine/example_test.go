package engine_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
	"github.com/gpureplay/replay/trace/workload"
)

// Replay a text trace (a file, in either form, is opened with
// trace.Open) into a Collector, and look at the final memory and what
// each lane got back.
func ExampleReplay() {
	const tasm = `.region global 0x1000 0x100
atom.global.add.u32 d, [a], 1; | a=0x1000 mask=0xf
atom.global.exch.b32 d, [a], 7; | a=0x1004 mask=0x1
`
	src, err := trace.NewTextReader(strings.NewReader(tasm), "example.tasm")
	if err != nil {
		log.Fatal(err)
	}
	var c engine.Collector
	sum, err := engine.Replay(src, &c)
	if err != nil {
		log.Fatal(err)
	}
	v, _ := c.Word("global", -1, 0x1000)
	fmt.Println("instructions:", sum.Instructions, "lane-ops:", sum.LaneOps)
	fmt.Println("word 0x1000:", v)
	for _, r := range c.Res[:4] {
		fmt.Printf("lane %d got %d\n", r.Lane, r.Value)
	}
	// Output:
	// instructions: 2 lane-ops: 5
	// word 0x1000: 4
	// lane 0 got 0
	// lane 1 got 1
	// lane 2 got 2
	// lane 3 got 3
}

// Replay a generated workload (the generator is a trace.Source) with a
// sink that keeps nothing, for its summary alone, stopping if the context
// is cancelled.
func ExampleReplayContext() {
	gen, err := workload.New(workload.Spec{Name: "histogram", Dialect: trace.DialectSASS, Seed: 1, LaneOps: 10000, Bins: 16})
	if err != nil {
		log.Fatal(err)
	}
	sum, err := engine.ReplayContext(context.Background(), gen, engine.Discard(), engine.WithWorkers(2))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("lane-ops:", sum.LaneOps, "words:", sum.Words)
	// Output:
	// lane-ops: 10016 words: 16
}

// countingSink is a custom Sink: it counts what a replay hands it and
// keeps nothing else. It embeds NopSink for the methods it does not need,
// and declares that it wants none of the optional parts (Caps), so that
// the engine builds no per-lane rows and tracks no addresses.
type countingSink struct {
	engine.NopSink
	instructions, conflicted int
	words                    int
}

func (s *countingSink) Caps() engine.SinkCaps { return 0 }
func (s *countingSink) Instructions(st []engine.InstStat) error {
	for _, x := range st {
		s.instructions++
		if x.MaxConflict > 1 {
			s.conflicted++
		}
	}
	return nil
}
func (s *countingSink) Memory(ws []engine.Word) error { s.words += len(ws); return nil }

// A custom Sink: how many instructions had lanes contending for one
// address.
func Example_customSink() {
	const tasm = `.region global 0x1000 0x100
atom.global.add.u32 d, [a], 1; | a=0x1000
atom.global.add.u32 d, [a], 1; | a=0x1000:4
atom.global.add.u32 d, [a], 1; | a=[0x1000,0x1000,0x1004,0x1008,0x100c,0x1010,0x1014,0x1018,0x101c,0x1020,0x1024,0x1028,0x102c,0x1030,0x1034,0x1038,0x103c,0x1040,0x1044,0x1048,0x104c,0x1050,0x1054,0x1058,0x105c,0x1060,0x1064,0x1068,0x106c,0x1070,0x1074,0x1078]
`
	src, err := trace.NewTextReader(strings.NewReader(tasm), "contention.tasm")
	if err != nil {
		log.Fatal(err)
	}
	var s countingSink
	if _, err := engine.Replay(src, &s); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d instructions, %d with contention, %d words\n", s.instructions, s.conflicted, s.words)
	// Output:
	// 3 instructions, 2 with contention, 32 words
}
