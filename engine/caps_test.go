package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// strictSink declares caps and fails the test when it is called for a
// part it did not declare; it counts what it gets.
type strictSink struct {
	t                      *testing.T
	caps                   SinkCaps
	what                   string
	ref                    bool // the reference's replay: it gives rows to Results whatever the sink declares
	insts, results, addrs  int
	words, pages, pageRows int
	committed              bool
}

func (s *strictSink) Caps() SinkCaps { return s.caps }

func (s *strictSink) undeclared(method string, part SinkCaps) {
	if s.caps&part == 0 {
		s.t.Errorf("%s: %s called on a sink that declared %v", s.what, method, s.caps)
	}
}

func (s *strictSink) Instructions(st []InstStat) error { s.insts += len(st); return nil }
func (s *strictSink) Results(rs []Result) error {
	s.undeclared("Results", CapResults)
	if s.caps&CapResultColumns != 0 && !s.ref {
		s.t.Errorf("%s: Results called on a sink that declared %v", s.what, s.caps)
	}
	s.results += len(rs)
	return nil
}
func (s *strictSink) ResultColumns(c *ResultColumns) error {
	if c.IotaLanes() {
		s.undeclared("ResultColumns without lanes", CapIotaLanes)
	}
	s.undeclared("ResultColumns", CapResults)
	s.undeclared("ResultColumns", CapResultColumns)
	s.results += c.Len()
	return nil
}
func (s *strictSink) Addresses(rows []AddressStat) error {
	s.undeclared("Addresses", CapAddresses)
	s.addrs += len(rows)
	return nil
}
func (s *strictSink) Memory(ws []Word) error { s.words += len(ws); return nil }
func (s *strictSink) MemoryPage(p *WordPage) error {
	s.undeclared("MemoryPage", CapMemoryPages)
	s.pages++
	s.pageRows += p.Rows()
	return nil
}
func (s *strictSink) Commit() error { s.committed = true; return nil }
func (s *strictSink) Abort() error  { return nil }

// allSinkCaps is every combination of the sink's flags.
var allSinkCaps = []SinkCaps{0, CapResults, CapAddresses, CapMemoryPages, CapResults | CapAddresses,
	CapResults | CapMemoryPages, CapAddresses | CapMemoryPages, CapResults | CapAddresses | CapMemoryPages,
	CapResultColumns, CapResults | CapResultColumns, CapResults | CapResultColumns | CapAddresses | CapMemoryPages,
	CapResults | CapResultColumns | CapIotaLanes, CapResults | CapResultColumns | CapIotaLanes | CapAddresses | CapMemoryPages}

// TestSinkGetsOnlyWhatItDeclares: the engine and the reference call no
// Sink method for a part the sink did not declare, under every
// combination of flags, worker counts, -explore, interleaving (whose
// reference sorts rows through a wrapper, seqOrderSink) and either
// source; and a sink gets every part it did declare: a result per
// lane-op, the addresses table, the memory table by pages or by words.
func TestSinkGetsOnlyWhatItDeclares(t *testing.T) {
	src := randomPTX(rand.New(rand.NewPCG(3, 9)), 150)
	bin := binaryOfChunks(t, src, 40)
	sources := map[string]func() trace.Source{
		"text": func() trace.Source { return textSource(t, src) },
		"binary": func() trace.Source {
			br, err := trace.NewBinaryReader(bytes.NewReader(bin))
			if err != nil {
				t.Fatal(err)
			}
			return br
		},
	}
	optSets := map[string][]Option{
		"1 worker":            {WithWorkers(1)},
		"2 workers, explore":  {WithWorkers(2), WithBatchInsts(16), WithExplore(true)},
		"random, interleaved": {WithWorkers(2), WithBatchInsts(24), WithOrder(OrderRandom, 5), WithInterleave(4)},
	}
	for _, caps := range allSinkCaps {
		for sname, open := range sources {
			for oname, opts := range optSets {
				for _, ref := range []bool{false, true} {
					what := fmt.Sprintf("%v, %s, %s, reference %v", caps, sname, oname, ref)
					s := &strictSink{t: t, caps: caps, what: what, ref: ref}
					replay := Replay
					if ref {
						replay = replayReference
					}
					sum, err := replay(t.Context(), open(), s, opts...)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					switch {
					case !s.committed || uint64(s.insts) != sum.Instructions || sum.Instructions == 0:
						t.Errorf("%s: %d instruction rows of %d, committed %v", what, s.insts, sum.Instructions, s.committed)
					case caps&CapResults != 0 && uint64(s.results) != sum.LaneOps:
						t.Errorf("%s: %d results of %d lane-ops", what, s.results, sum.LaneOps)
					case caps&CapAddresses != 0 && s.addrs == 0:
						t.Errorf("%s: no addresses table", what)
					case uint64(s.words+s.pageRows) != sum.Words || sum.Words == 0:
						t.Errorf("%s: %d words and %d page rows of %d", what, s.words, s.pageRows, sum.Words)
					case caps&CapMemoryPages != 0 && !ref && (s.pages == 0 || s.words != 0):
						t.Errorf("%s: %d pages and %d words: want the memory by pages", what, s.pages, s.words)
					}
				}
			}
		}
	}
}

// strictSource declares caps over a binary reader and fails the test
// when called for a fast path it did not declare.
type strictSource struct {
	*trace.BinaryReader
	t    *testing.T
	caps trace.SourceCaps
}

func (s *strictSource) Caps() trace.SourceCaps { return s.caps }

func (s *strictSource) NextInto(arena []uint64) (*trace.Inst, []uint64, error) {
	if s.caps&trace.CapArena == 0 {
		s.t.Errorf("NextInto called on a source that declared %v", s.caps)
	}
	return s.BinaryReader.NextInto(arena)
}

func (s *strictSource) Repeats(max int) (int, int64, int64) {
	if s.caps&trace.CapRepeat == 0 {
		s.t.Errorf("Repeats called on a source that declared %v", s.caps)
	}
	return s.BinaryReader.Repeats(max)
}

// hotCounter is a trace of n warps adding 1 to one word, one after the
// other (each record repeats the one before from the third on), with an
// instruction with a list every 100 warps.
func hotCounter(n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x1000\n")
	list := strings.TrimSuffix(strings.Repeat("1,2,", 16), ",")
	for w := range n {
		fmt.Fprintf(&b, ".warp %d\natom.global.add.u32 _, [a], 1; | a=0x1000\n", w)
		if w%100 == 99 {
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=0x1100:4 b=[%s]\n", list)
		}
	}
	return b.String()
}

// TestEngineTakesDeclaredFastPaths: the engine takes a source's fast
// paths exactly when it declares them, and counts the instructions that
// took them in the Summary (ArenaInsts, RepeatInsts); what it replays is
// the same whichever it takes.
func TestEngineTakesDeclaredFastPaths(t *testing.T) {
	src := hotCounter(1000)
	bin := binaryOfChunks(t, src, 300)
	var want *Collector
	for _, caps := range []trace.SourceCaps{0, trace.CapArena, trace.CapRepeat, trace.CapArena | trace.CapRepeat} {
		br, err := trace.NewBinaryReader(bytes.NewReader(bin))
		if err != nil {
			t.Fatal(err)
		}
		var c Collector
		sum, err := Replay(t.Context(), &strictSource{br, t, caps}, &c, WithWorkers(2), WithBatchInsts(256))
		if err != nil {
			t.Fatal(err)
		}
		// 1010 instructions: the 10 with a list, warps 0 and 1 of the
		// counter and the first of each chunk or batch are read, the
		// others repeat the one before.
		if sum.Instructions != 1010 {
			t.Fatalf("%v: %d instructions, want 1010", caps, sum.Instructions)
		}
		arena, rep := caps&trace.CapArena != 0, caps&trace.CapRepeat != 0
		if (sum.ArenaInsts > 0) != arena || (sum.RepeatInsts > 0) != rep {
			t.Errorf("%v: %d instructions through the arena, %d as repeats", caps, sum.ArenaInsts, sum.RepeatInsts)
		}
		if arena && sum.ArenaInsts+sum.RepeatInsts != sum.Instructions {
			t.Errorf("%v: %d through the arena and %d as repeats of %d", caps, sum.ArenaInsts, sum.RepeatInsts, sum.Instructions)
		}
		if rep && sum.RepeatInsts < 900 {
			t.Errorf("%v: only %d of the counter's 1000 warps as repeats", caps, sum.RepeatInsts)
		}
		if v, _ := c.Word("global", -1, 0x1000); v != 1000*32 {
			t.Errorf("%v: the counter is %d, want %d", caps, v, 1000*32)
		}
		if want == nil {
			want = &c
		} else if !reflect.DeepEqual(collect(&c), collect(want)) {
			t.Errorf("%v: another replay than with %v", caps, trace.SourceCaps(0))
		}
	}
	// Text declares no fast path.
	sum, err := Replay(t.Context(), textSource(t, src), Discard())
	if err != nil {
		t.Fatal(err)
	}
	if sum.ArenaInsts != 0 || sum.RepeatInsts != 0 {
		t.Errorf("text: %d through the arena, %d as repeats", sum.ArenaInsts, sum.RepeatInsts)
	}
}

// TestEngineWrappersForwardCaps lists the capabilities through every
// wrapper of a Sink or a Source in the engine: each declares what it
// wraps declares, and calls reach the wrapped one. The exception is
// interleaved, the reference's reordering source, which hands out copies
// in another order and so has no fast path whatever it wraps.
func TestEngineWrappersForwardCaps(t *testing.T) {
	for _, caps := range allSinkCaps {
		inner := &strictSink{t: t, caps: caps, what: "under seqOrderSink"}
		w := &seqOrderSink{Sink: inner}
		t.Logf("seqOrderSink over %v: %v", caps, w.Caps())
		if w.Caps() != caps {
			t.Errorf("seqOrderSink over a sink of %v declares %v", caps, w.Caps())
		}
		if caps&CapMemoryPages != 0 {
			var written [shard.PageWords / 64]uint64
			written[0] = 1
			if err := w.MemoryPage(&WordPage{Written: &written, Words: new([shard.PageWords]uint32)}); err != nil || inner.pageRows != 1 {
				t.Errorf("seqOrderSink's MemoryPage did not reach the sink (%v, %d rows)", err, inner.pageRows)
			}
		}
	}
	br, err := trace.NewBinaryReader(bytes.NewReader(binaryOf(t, hotCounter(3))))
	if err != nil {
		t.Fatal(err)
	}
	il := newInterleaved(br, 4, 1)
	t.Logf("interleaved over %v: %v", br.Caps(), il.Caps())
	if il.Caps() != 0 {
		t.Errorf("interleaved declares %v, want none", il.Caps())
	}
}

// TestEmbeddedSinksGetWhatTheyOverride: a sink that embeds NopSink and
// declares CapResults gets a result per lane-op; one that embeds Collector
// and overrides Results gets them too (Collector declares every part);
// Discard declares none.
func TestEmbeddedSinksGetWhatTheyOverride(t *testing.T) {
	src := randomPTX(rand.New(rand.NewPCG(2, 4)), 60)
	nop := &nopResults{}
	sum, err := Replay(t.Context(), textSource(t, src), nop, WithWorkers(2), WithBatchInsts(8))
	if err != nil {
		t.Fatal(err)
	}
	if sum.LaneOps == 0 || uint64(nop.n) != sum.LaneOps {
		t.Errorf("a NopSink with CapResults got %d results of %d lane-ops", nop.n, sum.LaneOps)
	}
	col := &collectorResults{}
	if _, err := Replay(t.Context(), textSource(t, src), col); err != nil {
		t.Fatal(err)
	}
	if uint64(col.n) != sum.LaneOps || len(col.Res) != 0 {
		t.Errorf("a Collector overriding Results got %d results of %d lane-ops (%d kept by Collector)", col.n, sum.LaneOps, len(col.Res))
	}
	if c := Discard().Caps(); c != 0 {
		t.Errorf("Discard declares %v", c)
	}
	if got := (CapResults | CapMemoryPages | CapIotaLanes).String(); got != "results|memory-pages|iota-lanes" {
		t.Errorf("SinkCaps.String: %q", got)
	}
}

type nopResults struct {
	NopSink
	n int
}

func (s *nopResults) Caps() SinkCaps            { return CapResults }
func (s *nopResults) Results(rs []Result) error { s.n += len(rs); return nil }

type collectorResults struct {
	Collector
	n int
}

func (s *collectorResults) Results(rs []Result) error { s.n += len(rs); return nil }
