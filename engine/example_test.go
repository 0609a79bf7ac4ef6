package engine_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

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
	sum, err := engine.Replay(context.Background(), src, &c)
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
// is cancelled (here, after a minute).
func ExampleReplay_discard() {
	gen, err := workload.New(workload.Spec{Name: "histogram", Dialect: trace.DialectSASS, Seed: 1, LaneOps: 10000, Bins: 16})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := engine.Replay(ctx, gen, engine.Discard(), engine.WithWorkers(2))
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
	if _, err := engine.Replay(context.Background(), src, &s); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d instructions, %d with contention, %d words\n", s.instructions, s.conflicted, s.words)
	// Output:
	// 3 instructions, 2 with contention, 32 words
}

// Which value a word ends with, when 32 lanes exchange their own values
// into it at once: in lane order lane 31's (131), in each random order
// that of the lane it applies last. ExploreOrders opens the trace once per
// order and names each word whose final value differs, with its value
// under each order.
func ExampleExploreOrders() {
	const tasm = `.region global 0x1000 0x100
atom.global.exch.b32 d, [a], v; | a=0x1000 v=100:1
atom.global.add.u32 d, [a], 1; | a=0x1004
`
	open := func() (trace.SourceCloser, error) {
		src, err := trace.NewTextReader(strings.NewReader(tasm), "exch.tasm")
		return nopCloser{src}, err
	}
	rows, err := engine.ExploreOrders(context.Background(), open, engine.WithOrders(2, 1))
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Printf("%s 0x%x under %s: %d\n", r.Space, r.Addr, r.Order, r.Value)
	}
	// Output:
	// global 0x1000 under lane: 131
	// global 0x1000 under random:1: 116
	// global 0x1000 under random:2: 111
}

// nopCloser is a trace.Source with a Close that does nothing: a text
// reader over a string has nothing to close.
type nopCloser struct{ trace.Source }

func (nopCloser) Close() error { return nil }

// Two CTAs add to one global word with .cta scope, which includes only
// the threads of the executing CTA: the PTX scope rule makes them race.
// With .cluster scope and clusters of two CTAs (WithClusterSize), groups 2
// and 3 share a cluster and do not race; groups 3 and 4 do not.
func ExampleRaces() {
	const tasm = `.region global 0x1000 0x100
.group 0
atom.cta.global.add.u32 d, [a], 1; | a=0x1000 mask=0x1
.group 1
atom.cta.global.add.u32 d, [a], 1; | a=0x1000 mask=0x1
.group 2
atom.cluster.global.add.u32 d, [a], 1; | a=0x1004 mask=0x1
.group 3
atom.cluster.global.add.u32 d, [a], 1; | a=0x1004 mask=0x1
atom.cluster.global.add.u32 d, [a], 1; | a=0x1008 mask=0x1
.group 4
atom.cluster.global.add.u32 d, [a], 1; | a=0x1008 mask=0x1
`
	src, err := trace.NewTextReader(strings.NewReader(tasm), "scopes.tasm")
	if err != nil {
		log.Fatal(err)
	}
	rows, err := engine.Races(context.Background(), src, engine.WithClusterSize(2))
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Printf("%s at 0x%x: group %d (%s) and group %d (%s)\n", r.Rule, r.Addr, r.A.Group, r.A.Scope, r.B.Group, r.B.Scope)
	}
	// Output:
	// scope at 0x1000: group 0 (cta) and group 1 (cta)
	// scope at 0x1008: group 3 (cluster) and group 4 (cluster)
}

// A program checks its options before it opens a trace or creates an
// output, as the command does with its flags: ValidateOptions builds no
// memory.
func ExampleValidateOptions() {
	fmt.Println(engine.ValidateOptions(engine.WithWorkers(4), engine.WithShards(128)))
	fmt.Println(engine.ValidateOptions(engine.WithShards(0)))
	fmt.Println(engine.ValidateOptions(engine.WithOrder(engine.OrderLane, 0), engine.WithInterleave(8)))
	// Output:
	// <nil>
	// shards: 0 is outside 1..65536
	// interleave 8: only with the random order
}
