package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// outcome is a replay's whole output in comparable form.
type outcome struct {
	Res   []Result
	Stats []string
	Words []Word
	Addrs []AddressStat
}

func collect(c *Collector) outcome {
	o := outcome{Res: c.Res, Words: c.Words, Addrs: c.Addrs}
	if o.Res == nil {
		o.Res = []Result{}
	}
	if o.Words == nil {
		o.Words = []Word{}
	}
	if o.Addrs == nil {
		o.Addrs = []AddressStat{}
	}
	for _, s := range c.Stats {
		o.Stats = append(o.Stats, fmt.Sprintf("%d %q g%d w%d lanes=%d addrs=%d maxc=%d faults=%d casfailed=%d sectors=%d",
			s.Seq, s.Static.Text, s.Group, s.Warp, s.Lanes, s.Addresses, s.MaxConflict, s.Faults, s.CASFailed, s.Sectors))
	}
	return o
}

func textSource(t testing.TB, src string) trace.Source {
	t.Helper()
	tr, err := trace.NewTextReader(strings.NewReader(src), "gen.tasm")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// equalToReference replays src with the engine under each option set and
// with the reference interpreter, and reports the first difference. The
// engine reads the text and, every other option set, the binary form
// (whose reader decodes lists straight into the batches, ArenaSource).
func equalToReference(t *testing.T, src string, optSets ...[]Option) {
	t.Helper()
	var ref Collector
	if _, err := replayReference(t.Context(), textSource(t, src), &ref, WithExplore(true)); err != nil {
		t.Fatalf("reference: %v", err)
	}
	want := collect(&ref)
	var bin []byte
	for i, opts := range optSets {
		opts = append(opts[:len(opts):len(opts)], WithExplore(true))
		in := textSource(t, src)
		if i%2 == 1 {
			if bin == nil {
				bin = binaryOf(t, src)
			}
			br, err := trace.NewBinaryReader(bytes.NewReader(bin))
			if err != nil {
				t.Fatal(err)
			}
			in = br
		}
		var c Collector
		if _, err := Replay(t.Context(), in, &c, opts...); err != nil {
			t.Fatalf("engine: %v", err)
		}
		got := collect(&c)
		approxAddrs(t, got.Addrs, want.Addrs)
		if !reflect.DeepEqual(got, want) {
			describeDiff(t, got, want)
			t.Fatalf("engine differs from the reference for trace:\n%s", src)
		}
	}
}

// approxAddrs accepts, where the engine's addresses row says its counts
// are estimates, warps and groups within three standard errors of the
// sketches (sketch.go; TestSketchAccuracy checks the estimator itself) of
// the reference's exact counts, and then makes the row equal to the
// reference's so that the rest of the comparison is exact.
func approxAddrs(t *testing.T, got, want []AddressStat) {
	t.Helper()
	if len(got) != len(want) {
		return
	}
	near := func(a, b uint64, m int) bool {
		tol := 3 * 1.04 / math.Sqrt(float64(m))
		return float64(a) >= (1-tol)*float64(b) && float64(a) <= (1+tol)*float64(b)
	}
	for i := range got {
		g, w := &got[i], &want[i]
		if g.Exact || g.Addr != w.Addr || g.Accesses != w.Accesses {
			continue
		}
		if !near(g.Warps, w.Warps, warpRegs) || !near(g.Groups, w.Groups, groupRegs) {
			t.Errorf("address 0x%x: estimated %d warps, %d groups; exactly %d, %d", g.Addr, g.Warps, g.Groups, w.Warps, w.Groups)
			continue
		}
		*g = *w
	}
}

func describeDiff(t *testing.T, got, want outcome) {
	t.Helper()
	if len(got.Res) != len(want.Res) {
		t.Errorf("%d results, reference %d", len(got.Res), len(want.Res))
	}
	for i := 0; i < min(len(got.Res), len(want.Res)); i++ {
		if got.Res[i] != want.Res[i] {
			t.Errorf("result %d: %+v, reference %+v", i, got.Res[i], want.Res[i])
			break
		}
	}
	for i := 0; i < min(len(got.Stats), len(want.Stats)); i++ {
		if got.Stats[i] != want.Stats[i] {
			t.Errorf("stat %d: %s, reference %s", i, got.Stats[i], want.Stats[i])
			break
		}
	}
	for i := 0; i < min(len(got.Addrs), len(want.Addrs)); i++ {
		if got.Addrs[i] != want.Addrs[i] {
			t.Errorf("address row %d: %+v, reference %+v", i, got.Addrs[i], want.Addrs[i])
			break
		}
	}
	if len(got.Addrs) != len(want.Addrs) {
		t.Errorf("%d address rows, reference %d", len(got.Addrs), len(want.Addrs))
	}
	if len(got.Words) != len(want.Words) {
		t.Errorf("%d words, reference %d", len(got.Words), len(want.Words))
	}
	for i := 0; i < min(len(got.Words), len(want.Words)); i++ {
		if got.Words[i] != want.Words[i] {
			t.Errorf("word %d: %+v, reference %+v", i, got.Words[i], want.Words[i])
			break
		}
	}
}

var engineOptSets = [][]Option{
	{WithShards(1), WithWorkers(1)},
	{WithShards(3), WithWorkers(2), WithBatchInsts(5)},
	{WithShards(64), WithWorkers(2), WithBatchInsts(1)},
	{WithShards(7), WithWorkers(3), WithBatchInsts(64)},
	// Batches cut by their lists (defaultBatchListBytes), after an
	// instruction with a list or two.
	{WithShards(5), WithWorkers(2), withBatchListBytes(300)},
}

// randContext sometimes moves a random trace to another .group (of 3) or
// .warp (of 2), so bindings, shared memory and statistics see several, and
// sometimes sets memory up between two instructions: a .init (a host
// write, whole words, single bytes or a 64-bit value, global or the current
// group's shared memory) or a .region that grows what later instructions
// may touch.
func randContext(r *rand.Rand, b *strings.Builder) {
	if r.IntN(8) == 0 {
		fmt.Fprintf(b, ".group %d\n", r.IntN(3))
	}
	if r.IntN(8) == 0 {
		fmt.Fprintf(b, ".warp %d\n", r.IntN(2))
	}
	if r.IntN(10) == 0 {
		switch r.IntN(4) {
		case 0:
			fmt.Fprintf(b, ".init global 0x%x u32 %d %d\n", 0x1000+4*r.IntN(32), r.Uint32(), r.IntN(3))
		case 1:
			fmt.Fprintf(b, ".init shared 0x%x u32 %d\n", 4*r.IntN(16), r.IntN(5))
		case 2:
			fmt.Fprintf(b, ".init global 0x%x u8 %d\n", 0x1000+r.IntN(64), r.IntN(256))
		default:
			fmt.Fprintf(b, ".init global 0x%x u64 0x%x\n", 0x1000+8*r.IntN(16), r.Uint64())
		}
	}
	if r.IntN(30) == 0 {
		regions := []string{"global 0x1040 0x40", "global 0x1078 0x10", "global 0x1080 0x80", "shared 0x20 0x20", "shared 0x38 0x10", "bti(0x4) 0x40 0x40"}
		fmt.Fprintf(b, ".region %s\n", regions[r.IntN(len(regions))])
	}
}

// randomPTX writes a random PTX atom trace: few distinct addresses so lanes
// conflict, some misaligned or outside the regions, masks, predicates,
// several groups and warps, every value form.
func randomPTX(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x80\n.region shared 0x0 0x40\n")
	fmt.Fprintf(&b, ".init global 0x1000 u32 %d %d %d\n", r.Uint32(), r.Uint32(), r.Uint32())
	type form struct {
		op, typ string
		bits    int
	}
	forms := []form{
		{"add", "u32", 32}, {"add", "s32", 32}, {"add", "u64", 64}, {"exch", "b32", 32}, {"exch", "b64", 64},
		{"cas", "b32", 32}, {"cas", "b64", 64}, {"cas", "b16", 16}, {"min", "u32", 32}, {"min", "s32", 32},
		{"min", "u64", 64}, {"min", "s64", 64}, {"max", "u32", 32}, {"max", "s32", 32}, {"max", "s64", 64},
		{"inc", "u32", 32}, {"dec", "u32", 32}, {"and", "b32", 32}, {"or", "b64", 64}, {"xor", "b32", 32},
		{"cas", "b128", 128}, {"exch", "b128", 128},
		{"add", "f32", 32}, {"add", "f64", 64}, {"add.noftz", "f16", 16}, {"add.noftz", "bf16x2", 32},
	}
	val := func(bits int) string {
		switch r.IntN(4) {
		case 0:
			return fmt.Sprint(r.IntN(5))
		case 1:
			if bits == 128 {
				return fmt.Sprintf("0x%x%016x", r.Uint64(), r.Uint64())
			}
			return fmt.Sprintf("0x%x", r.Uint64()>>(64-min(bits, 64)))
		case 2:
			if bits == 128 {
				return "1"
			}
			return fmt.Sprintf("%d:%d", r.IntN(4), r.IntN(3)-1)
		}
		vs := make([]string, 32)
		for i := range vs {
			vs[i] = fmt.Sprint(r.IntN(3))
		}
		return "[" + strings.Join(vs, ",") + "]"
	}
	for i := 0; i < n; i++ {
		randContext(r, &b)
		f := forms[r.IntN(len(forms))]
		space := "global"
		base := uint64(0x1000)
		if r.IntN(3) == 0 {
			space, base = "shared", 0
		}
		size := uint64(max(f.bits/8, 2))
		// Mostly aligned addresses inside the region; sometimes misaligned
		// or past its end.
		addr := fmt.Sprintf("0x%x", base+uint64(r.IntN(8))*size)
		switch r.IntN(10) {
		case 0:
			addr = fmt.Sprintf("0x%x", base+uint64(r.IntN(8))*size+1)
		case 1:
			addr = fmt.Sprintf("0x%x", base+0x78)
		case 2:
			addr = fmt.Sprintf("0x%x:%d", base, size)
		case 3:
			addr = fmt.Sprintf("0x%x:%d", base, size*uint64(r.IntN(2)))
		}
		dst := "d"
		if r.IntN(6) == 0 {
			dst = "_"
		}
		pred, binds := "", ""
		if r.IntN(4) == 0 {
			pred = "@p "
			if r.IntN(2) == 0 {
				pred = "@!p "
			}
			binds += fmt.Sprintf(" p=0x%x", r.Uint32())
		}
		if r.IntN(4) == 0 {
			binds += fmt.Sprintf(" mask=0x%x", r.Uint32())
		}
		srcs := "b"
		binds += " b=" + val(f.bits)
		if f.op == "cas" {
			srcs += ", c"
			binds += " c=" + val(f.bits)
		}
		aop := "[a]"
		if f.bits == 128 {
			aop = "a"
		}
		fmt.Fprintf(&b, "%satom.%s.%s.%s %s, %s, %s; | a=%s%s\n", pred, space, f.op, f.typ, dst, aop, srcs, addr, binds)
	}
	return b.String()
}

// randomTrace writes a random trace of n instructions of one dialect.
type randomTrace func(r *rand.Rand, n int) string

// sinkConfig is one sink a replay runs under, as the engine sees it: which
// of the optional tables it asks for, whether WithExplore is on, and how
// it takes the memory table.
type sinkConfig struct {
	name string
	// tables is the -tables list of the command's configurations (the
	// columnar.Writer, which takes memory by pages); "" for a library sink.
	tables    string
	results   bool // CapResults: the results table is among the tables
	addresses bool // CapAddresses: the addresses table is among them
	explore   bool // WithExplore (the command's -explore)
	pages     bool // CapMemoryPages (and CapResultColumns, CapIotaLanes), as columnar.Writer declares
	orders    bool // ExploreOrders' own sink (memorySink): the memory alone
}

// sinkConfigs are the sinks the engine-versus-reference random tests run
// under: every configuration of the engine that the command's -tables and
// -explore select (the engine sees only whether the results and addresses
// tables are asked for, and -explore; TestSinkConfigsCoverCommand checks
// that every table set and -explore maps to one of these), the library's
// Collector, and the sink of ExploreOrders' replays (-explore-orders). The
// races pass (-races) reads the trace on its own and shares no part of a
// replay: races_ref_test.go checks it against a reference of its own.
var sinkConfigs = []sinkConfig{
	{name: "lean", tables: "memory,instructions,ops", pages: true},
	{name: "lean+explore", tables: "memory,instructions,ops", explore: true, pages: true},
	{name: "default", tables: "memory,results,instructions,ops,addresses", results: true, addresses: true, pages: true},
	{name: "default+explore", tables: "memory,results,instructions,ops,addresses", results: true, addresses: true, explore: true, pages: true},
	{name: "results", tables: "results", results: true, pages: true},
	{name: "results+explore", tables: "results", results: true, explore: true, pages: true},
	{name: "addresses", tables: "addresses", addresses: true, pages: true},
	{name: "addresses+explore", tables: "addresses", addresses: true, explore: true, pages: true},
	{name: "collector", results: true, addresses: true},
	{name: "collector+explore", results: true, addresses: true, explore: true},
	{name: "explore-orders", orders: true},
}

// commandTables are the tables -tables selects among that the engine
// fills (races and orders come from passes of their own).
var commandTables = []string{"memory", "results", "instructions", "ops", "addresses"}

// TestSinkConfigsCoverCommand: every set of tables the command can write
// (each single table, the lean and default sets, every other subset), with
// and without -explore, is one of sinkConfigs as the engine sees it: the
// results table asked for or not, the addresses table asked for or not,
// WithExplore, memory by pages (columnar.Writer's Caps declare results
// and addresses when its tables include them).
func TestSinkConfigsCoverCommand(t *testing.T) {
	type class struct{ results, addresses, explore bool }
	ran := map[class]string{}
	for _, c := range sinkConfigs {
		if c.tables == "" {
			continue
		}
		ts := strings.Split(c.tables, ",")
		if c.results != slices.Contains(ts, "results") || c.addresses != slices.Contains(ts, "addresses") || !c.pages {
			t.Errorf("config %s: results %v, addresses %v, pages %v do not follow from -tables %s", c.name, c.results, c.addresses, c.pages, c.tables)
		}
		ran[class{c.results, c.addresses, c.explore}] = c.name
	}
	for set := 1; set < 1<<len(commandTables); set++ {
		var ts []string
		for i, n := range commandTables {
			if set&(1<<i) != 0 {
				ts = append(ts, n)
			}
		}
		for _, explore := range []bool{false, true} {
			k := class{slices.Contains(ts, "results"), slices.Contains(ts, "addresses"), explore}
			if _, ok := ran[k]; !ok {
				t.Errorf("-tables %s (explore %v) runs under no sink configuration", strings.Join(ts, ","), explore)
			}
		}
	}
	for _, want := range []string{"lean", "default", "collector", "explore-orders"} {
		if !slices.ContainsFunc(sinkConfigs, func(c sinkConfig) bool { return c.name == want }) {
			t.Errorf("no %s configuration", want)
		}
	}
}

// configSink is a Collector that asks for the tables of its configuration.
type configSink struct {
	Collector
	cfg *sinkConfig
}

// Caps declares the tables of its configuration, and the memory table
// row by row (Collector's own Caps declares every part).
func (s *configSink) Caps() SinkCaps {
	var c SinkCaps
	if s.cfg.results {
		c |= CapResults
	}
	if s.cfg.addresses {
		c |= CapAddresses
	}
	return c
}

// pagedSink is a configSink that takes the memory table by pages and the
// results as columns, as columnar.Writer does.
type pagedSink struct{ configSink }

// Caps is its configuration's, with the memory table by pages and the
// results, if any, as columns, the lanes of full warps left out.
func (s *pagedSink) Caps() SinkCaps {
	c := s.configSink.Caps() | CapMemoryPages
	if c&CapResults != 0 {
		c |= CapResultColumns | CapIotaLanes
	}
	return c
}

func (s *pagedSink) MemoryPage(p *WordPage) error {
	for i, w := range p.Words {
		if p.Written[i/64]&(1<<(i%64)) != 0 {
			s.Words = append(s.Words, Word{Space: p.Space, Group: p.Group, Addr: p.Base + uint64(i)*4, Value: w})
		}
	}
	return nil
}

// referenceUnder is the reference's whole output for src, with or without WithExplore.
func referenceUnder(t *testing.T, src string, explore bool) outcome {
	t.Helper()
	var ref Collector
	if _, err := replayReference(t.Context(), textSource(t, src), &ref, WithExplore(explore)); err != nil {
		t.Fatalf("reference: %v", err)
	}
	return collect(&ref)
}

// equalUnderConfig replays src (its binary form when binary) with the
// engine under opts into a sink of configuration cfg and compares what the
// sink got with the reference's output want (for cfg.explore): the tables
// it asks for equal, and no rows of those it does not.
func equalUnderConfig(t *testing.T, src string, cfg *sinkConfig, opts []Option, binary bool, want outcome) {
	t.Helper()
	chunk := 0
	if binary {
		chunk = 2 // binaryOf's
	}
	equalUnderChunks(t, src, cfg, opts, chunk, want)
}

// equalUnderChunks is equalUnderConfig, the trace read in its binary form
// in chunks of chunk records when chunk is not 0.
func equalUnderChunks(t *testing.T, src string, cfg *sinkConfig, opts []Option, chunk int, want outcome) {
	t.Helper()
	in := textSource(t, src)
	if chunk > 0 {
		br, err := trace.NewBinaryReader(bytes.NewReader(binaryOfChunks(t, src, chunk)))
		if err != nil {
			t.Fatal(err)
		}
		in = br
	}
	opts = append(opts[:len(opts):len(opts)], WithExplore(cfg.explore))
	if cfg.orders {
		var ms memorySink
		if _, err := Replay(t.Context(), in, &ms, opts...); err != nil {
			t.Fatalf("engine: %v", err)
		}
		if ms.words == nil {
			ms.words = []Word{}
		}
		if !reflect.DeepEqual(ms.words, want.Words) {
			describeDiff(t, outcome{Res: want.Res, Stats: want.Stats, Words: ms.words, Addrs: want.Addrs}, want)
			t.Fatalf("the memory differs from the reference's for trace:\n%s", src)
		}
		return
	}
	c := &configSink{cfg: cfg}
	var sink Sink = c
	if cfg.pages {
		p := &pagedSink{configSink{cfg: cfg}}
		c, sink = &p.configSink, p
	}
	if _, err := Replay(t.Context(), in, sink, opts...); err != nil {
		t.Fatalf("engine: %v", err)
	}
	got := collect(&c.Collector)
	if !cfg.results {
		want.Res = []Result{}
	}
	if !cfg.addresses {
		want.Addrs = []AddressStat{}
	}
	approxAddrs(t, got.Addrs, want.Addrs)
	if !reflect.DeepEqual(got, want) {
		describeDiff(t, got, want)
		t.Fatalf("engine differs from the reference for trace:\n%s", src)
	}
}

// equalOnRandom replays 40 random traces of 60 instructions (seeds 1..40,
// PCG stream) with the reference and with the engine under every sink
// configuration (subtests CONFIG/seedN), and returns the traces. Each
// configuration replays every trace once, under one of engineOptSets and
// from the text or the binary form, taken in turn, so that over the seeds
// each meets every option set and both forms.
func equalOnRandom(t *testing.T, gen randomTrace, stream uint64) []string {
	var srcs []string
	var wants [2][]outcome // [explore][seed-1]
	for seed := uint64(1); seed <= 40; seed++ {
		src := gen(rand.New(rand.NewPCG(seed, stream)), 60)
		srcs = append(srcs, src)
		for i, explore := range []bool{false, true} {
			wants[i] = append(wants[i], referenceUnder(t, src, explore))
		}
	}
	for ci := range sinkConfigs {
		cfg := &sinkConfigs[ci]
		t.Run(cfg.name, func(t *testing.T) {
			for i, src := range srcs {
				k := (i + ci) % len(engineOptSets)
				want := wants[0][i]
				if cfg.explore {
					want = wants[1][i]
				}
				t.Run(fmt.Sprint("seed", i+1), func(t *testing.T) {
					equalUnderConfig(t, src, cfg, engineOptSets[k], (i+ci)%2 == 1, want)
				})
			}
		})
	}
	return srcs
}

// fuzzEqual is a fuzz target comparing the engine, under every sink
// configuration, and the reference on random traces of gen, seeded by the
// fuzzer.
func fuzzEqual(f *testing.F, gen randomTrace, stream uint64) {
	f.Add(uint64(1), uint8(20))
	f.Add(uint64(99), uint8(200))
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		src := gen(rand.New(rand.NewPCG(seed, stream)), int(n))
		wants := []outcome{referenceUnder(t, src, false), referenceUnder(t, src, true)}
		for ci := range sinkConfigs {
			cfg := &sinkConfigs[ci]
			want := wants[0]
			if cfg.explore {
				want = wants[1]
			}
			k := (int(seed%uint64(len(engineOptSets))) + ci) % len(engineOptSets)
			equalUnderConfig(t, src, cfg, engineOptSets[k], ci%2 == 1, want)
		}
	})
}

func TestEngineEqualsReferenceOnRandomPTX(t *testing.T) { equalOnRandom(t, randomPTX, 7) }

func TestEngineEqualsReferenceOnSimpleAtomics(t *testing.T) {
	src, err := readFile(simpleAtomicsFile)
	if err != nil {
		t.Fatal(err)
	}
	equalToReference(t, src, engineOptSets[:2]...)
}

func FuzzEngineEqualsReference(f *testing.F) { fuzzEqual(f, randomPTX, 7) }

// statsOnly is a Collector that reads no per-lane results (and takes the
// memory table as Words).
type statsOnly struct{ Collector }

func (*statsOnly) Caps() SinkCaps { return CapAddresses }

// TestNoResultsSameMemoryAndStats: a sink that wants no results gets none,
// and the memory and statistics are those of a full replay.
func TestNoResultsSameMemoryAndStats(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	src := randomPTX(r, 200)
	var full Collector
	if _, err := Replay(t.Context(), textSource(t, src), &full, WithWorkers(2), WithBatchInsts(16)); err != nil {
		t.Fatal(err)
	}
	var lean statsOnly
	sum, err := Replay(t.Context(), textSource(t, src), &lean, WithWorkers(2), WithBatchInsts(16))
	if err != nil {
		t.Fatal(err)
	}
	if len(lean.Res) != 0 {
		t.Errorf("%d result rows sent to a sink that wants none", len(lean.Res))
	}
	if sum.LaneOps != uint64(len(full.Res)) {
		t.Errorf("summary counts %d lane-ops, full replay has %d rows", sum.LaneOps, len(full.Res))
	}
	a, b := collect(&full), collect(&lean.Collector)
	if !reflect.DeepEqual(a.Words, b.Words) || !reflect.DeepEqual(a.Stats, b.Stats) {
		t.Errorf("memory or statistics differ without results")
	}
	// --strict still names the first fault: its instruction, lane and
	// address, those of the full replay's first faulted row.
	var first *Result
	for i := range full.Res {
		if full.Res[i].Fault != FaultNone {
			first = &full.Res[i]
			break
		}
	}
	if first == nil {
		t.Fatal("the random trace has no fault")
	}
	want := fmt.Sprintf("instruction %d (", first.Seq)
	wantLane := fmt.Sprintf("lane %d: %s access at 0x%x (WithStrict stops at the first fault)", first.Lane, first.Fault, first.Addr)
	for _, w := range []int{1, 2} {
		var strict statsOnly
		_, err = Replay(t.Context(), textSource(t, src), &strict, WithStrict(true), WithWorkers(w), WithBatchInsts(16))
		var ie *InstError
		if !errors.As(err, &ie) || ie.Seq != first.Seq || !strings.Contains(err.Error(), wantLane) {
			t.Errorf("strict without results, %d workers: %v; want %s…%s", w, err, want, wantLane)
		}
	}
}

// TestMaxMemory: a trace that touches more simulated memory than allowed
// stops with an error naming the limit, and the sink is aborted.
func TestMaxMemory(t *testing.T) {
	var b strings.Builder
	// 32 lanes, each in its own granule: 8 KiB a warp; 200 warps, 1.6 MiB.
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], 1 | a=0x%x:256\n", i*32*256)
	}
	var c Collector
	_, err := Replay(t.Context(), textSource(t, b.String()), &c, WithMaxMemory(1<<20), WithBatchInsts(16))
	if err == nil || !strings.Contains(err.Error(), "over the 1 MiB limit (WithMaxMemory)") {
		t.Fatalf("got %v, want the memory limit", err)
	}
	if !c.Aborted || c.Committed {
		t.Errorf("sink committed=%v aborted=%v, want aborted", c.Committed, c.Aborted)
	}
	var ok Collector
	if _, err := Replay(t.Context(), textSource(t, b.String()), &ok, WithMaxMemory(4<<20)); err != nil {
		t.Errorf("under the limit: %v", err)
	}
	if err := WithMaxMemory(1000)(&options{}); err == nil {
		t.Error("a limit under 1 MiB is accepted")
	}
}

// TestReplayCancelled: a cancelled context stops the replay with an
// error wrapping context.Canceled, and the sink is aborted.
func TestReplayCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var c Collector
	_, err := Replay(ctx, textSource(t, randomPTX(rand.New(rand.NewPCG(1, 1)), 50)), &c, WithBatchInsts(4))
	if !errors.Is(err, context.Canceled) || !c.Aborted || c.Committed {
		t.Errorf("err %v, aborted %v, committed %v: want context.Canceled and an aborted sink", err, c.Aborted, c.Committed)
	}
}

// pageCollector is a Collector that takes the memory table a page at a
// time (CapMemoryPages, which Collector declares), turning each page back
// into Words and counting the pages.
type pageCollector struct {
	Collector
	pages int
}

// wordCollector is a Collector that takes the memory table as Words.
type wordCollector struct{ Collector }

func (*wordCollector) Caps() SinkCaps { return CapResults | CapAddresses }

func (c *pageCollector) MemoryPage(p *WordPage) error {
	n := 0
	for i, w := range p.Words {
		if p.Written[i/64]&(1<<(i%64)) != 0 {
			c.Words = append(c.Words, Word{Space: p.Space, Group: p.Group, Addr: p.Base + uint64(i)*4, Value: w})
			n++
		}
	}
	if n == 0 || n != p.Rows() {
		return fmt.Errorf("page at %#x: %d rows, Rows says %d", p.Base, n, p.Rows())
	}
	c.pages++
	return nil
}

// TestPageSinkSameMemory: a sink that takes the memory table by pages
// gets the words, in the order, that Memory gives, on several workers.
func TestPageSinkSameMemory(t *testing.T) {
	src := randomPTX(rand.New(rand.NewPCG(11, 13)), 300)
	var words wordCollector
	sum, err := Replay(t.Context(), textSource(t, src), &words, WithWorkers(2), WithBatchInsts(16))
	if err != nil {
		t.Fatal(err)
	}
	var pages pageCollector
	psum, err := Replay(t.Context(), textSource(t, src), &pages, WithWorkers(2), WithBatchInsts(16))
	if err != nil {
		t.Fatal(err)
	}
	if len(words.Words) == 0 || pages.pages == 0 {
		t.Fatalf("the random trace wrote %d words in %d pages", len(words.Words), pages.pages)
	}
	if !reflect.DeepEqual(words.Words, pages.Words) {
		t.Errorf("the memory table by pages (%d rows) differs from the one by words (%d rows)", len(pages.Words), len(words.Words))
	}
	if sum.Words != psum.Words || psum.Words != uint64(len(pages.Words)) {
		t.Errorf("summaries count %d and %d words, the page sink got %d", sum.Words, psum.Words, len(pages.Words))
	}
}
