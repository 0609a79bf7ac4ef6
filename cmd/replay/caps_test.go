package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// hotCounterTasm is a hot counter: n warps, one after the other, adding
// 1 to one word (from the third warp on, each record repeats the one
// before), with an instruction with a list every 100 warps.
func hotCounterTasm(n int) string {
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

// TestCommandTakesFastPaths: a replay through the command's own code
// (opening the file, its cancel and closing wrappers, -explore-orders'
// replays) takes the binary reader's fast paths: the hot counter's
// records as repeats, every other instruction decoded into the batch's
// arena, in the replay and in each order's. A text trace takes neither.
func TestCommandTakesFastPaths(t *testing.T) {
	t.Chdir(t.TempDir())
	const warps, insts = 3000, 3030
	if err := os.WriteFile("hot.tasm", []byte(hotCounterTasm(warps)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := replayCmd(t, "asm", "hot.tasm", "-o", "hot.zst"); code != 0 {
		t.Fatalf("asm: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		trace   string
		args    []string
		replays int  // the replay and -explore-orders' orders
		fast    bool // the binary reader's fast paths
	}{
		{"hot.zst", nil, 1, true},
		{"hot.zst", []string{"-workers", "1"}, 1, true},
		{"hot.zst", []string{"-explore-orders", "2"}, 4, true},
		{"hot.tasm", []string{"-explore-orders", "1"}, 3, false},
	} {
		name := tc.trace + " " + strings.Join(tc.args, " ")
		var finals []engine.Summary
		observe := func(s engine.Summary) {
			if s.Instructions == insts { // a replay's last batch
				finals = append(finals, s)
			}
		}
		tables := "memory,instructions"
		if slices.Contains(tc.args, "-explore-orders") {
			tables += ",orders" // -tables must name the table -explore-orders writes
		}
		args := append(append([]string{"-q", "-tables", tables, "-o", "out"}, tc.args...), tc.trace)
		if err := replayObserved(args, new(strings.Builder), new(strings.Builder), observe); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(finals) != tc.replays {
			t.Fatalf("%s: %d replays ended, want %d", name, len(finals), tc.replays)
		}
		for i, s := range finals {
			t.Logf("%s, replay %d: %d instructions, %d through the arena, %d as repeats", name, i, s.Instructions, s.ArenaInsts, s.RepeatInsts)
			switch {
			case !tc.fast && (s.ArenaInsts != 0 || s.RepeatInsts != 0):
				t.Errorf("%s, replay %d: text took a fast path: %d through the arena, %d as repeats", name, i, s.ArenaInsts, s.RepeatInsts)
			case tc.fast && (s.RepeatInsts < warps-100 || s.ArenaInsts+s.RepeatInsts != s.Instructions):
				t.Errorf("%s, replay %d: %d of %d instructions as repeats and %d through the arena: want the counter's warps as repeats, the rest through the arena",
					name, i, s.RepeatInsts, s.Instructions, s.ArenaInsts)
			}
		}
		if err := os.RemoveAll("out"); err != nil {
			t.Fatal(err)
		}
	}
}

// capsSource declares caps and counts the fast-path calls that reach it.
type capsSource struct {
	trace.NoCaps
	caps              trace.SourceCaps
	nexts, intos, rep int
}

func (s *capsSource) Header() *trace.Header      { return &trace.Header{} }
func (s *capsSource) Caps() trace.SourceCaps     { return s.caps }
func (s *capsSource) Next() (*trace.Inst, error) { s.nexts++; return &trace.Inst{}, nil }
func (s *capsSource) NextInto(a []uint64) (*trace.Inst, []uint64, error) {
	s.intos++
	return &trace.Inst{}, a, nil
}
func (s *capsSource) Repeats(int) (int, int64, int64) { s.rep++; return 1, 0, 1 }

// TestCommandWrappersForwardCaps lists the capabilities through every
// wrapper of the command, of sources (withCancel, closingSource, and the
// two as -explore-orders and -races stack them, over a source of each
// combination of flags, over the files openTrace opens) and of sinks
// (extrasThenCommit, over the writer of several table sets): each
// declares what it wraps declares, and the fast paths' calls reach the
// wrapped source.
func TestCommandWrappersForwardCaps(t *testing.T) {
	ctx := context.Background()
	wrappers := []struct {
		name string
		wrap func(trace.Source) trace.Source
	}{
		{"withCancel", func(s trace.Source) trace.Source { return withCancel(ctx, s) }},
		{"closingSource", func(s trace.Source) trace.Source { return &closingSource{Source: s, close: func() {}} }},
		{"closingSource(withCancel)", func(s trace.Source) trace.Source {
			return &closingSource{Source: withCancel(ctx, s), close: func() {}}
		}},
	}
	for _, caps := range []trace.SourceCaps{0, trace.CapArena, trace.CapRepeat, trace.CapArena | trace.CapRepeat} {
		for _, w := range wrappers {
			inner := &capsSource{caps: caps}
			src := w.wrap(inner)
			t.Logf("%s over %v: %v", w.name, caps, src.Caps())
			if src.Caps() != caps {
				t.Errorf("%s over a source of %v declares %v", w.name, caps, src.Caps())
			}
			src.Next()
			src.NextInto(nil)
			src.Repeats(8)
			if inner.nexts != 1 || inner.intos != 1 || inner.rep != 1 {
				t.Errorf("%s: Next, NextInto, Repeats reached the source %d, %d, %d times; want once each", w.name, inner.nexts, inner.intos, inner.rep)
			}
		}
	}

	// The files openTrace opens: a binary trace has both fast paths, through
	// every wrapper; text none.
	dir := t.TempDir()
	tasm, zst := filepath.Join(dir, "t.tasm"), filepath.Join(dir, "t.zst")
	if err := os.WriteFile(tasm, []byte(hotCounterTasm(3)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := replayCmd(t, "asm", tasm, "-o", zst); code != 0 {
		t.Fatalf("asm: exit %d: %s", code, errOut)
	}
	for file, want := range map[string]trace.SourceCaps{tasm: 0, zst: trace.CapArena | trace.CapRepeat} {
		_, src, closeSrc, _, err := openTrace([]string{file})
		if err != nil {
			t.Fatal(err)
		}
		if src.Caps() != want {
			t.Errorf("openTrace(%s) declares %v, want %v", filepath.Base(file), src.Caps(), want)
		}
		for _, w := range wrappers {
			if got := w.wrap(src).Caps(); got != want {
				t.Errorf("%s over %s declares %v, want %v", w.name, filepath.Base(file), got, want)
			}
		}
		closeSrc()
	}

	// Sinks: extrasThenCommit over the writer of each table set.
	for _, tables := range [][]string{nil, {"memory"}, {"results"}, {"addresses", "memory"}, {"memory", "orders", "races"}} {
		var opts []columnar.Option
		if tables != nil {
			opts = append(opts, columnar.WithTables(tables...))
		}
		wr, err := columnar.New(filepath.Join(dir, fmt.Sprint("out", len(tables), tables)), opts...)
		if err != nil {
			t.Fatal(err)
		}
		var sink engine.Sink = &extrasThenCommit{Writer: wr}
		t.Logf("extrasThenCommit over the writer of %v: %v", tables, sink.Caps())
		if sink.Caps() != wr.Caps() {
			t.Errorf("extrasThenCommit over the writer of %v declares %v, the writer %v", tables, sink.Caps(), wr.Caps())
		}
		if err := wr.Abort(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCancelSourceNextIntoStops: the fast path checks the context as Next
// does, so that Ctrl-C stops a binary replay too.
func TestCancelSourceNextIntoStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := withCancel(ctx, &capsSource{caps: trace.CapArena})
	for i := range 1024 {
		if _, _, err := src.NextInto(nil); err != nil {
			if i != 1023 || !strings.Contains(err.Error(), "interrupted") {
				t.Fatalf("record %d: %v, want interrupted at the 1024th", i, err)
			}
			return
		}
	}
	t.Error("NextInto went on after the context was cancelled")
}

// TestItem46_05_ZstThatIsNotBinary (issue 46, item 5): a file named .zst
// that does not start with the zstd magic is "not a binary trace", named,
// with the bytes it starts with and what to do, for replay, asm and
// disasm, and nothing is written; a file that does start with the magic
// is read as binary whatever its name.
func TestItem46_05_ZstThatIsNotBinary(t *testing.T) {
	t.Chdir(t.TempDir())
	text := hotCounterTasm(5)
	for name, data := range map[string]string{"text.tasm": text, "text.zst": text, "junk.zst": "\x05&r\x01 not a trace"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errOut := replayCmd(t, "asm", "text.tasm", "-o", "good.zst"); code != 0 {
		t.Fatalf("asm: exit %d: %s", code, errOut)
	}
	bin, err := os.ReadFile("good.zst")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("binary.tasm", bin, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, starts string }{{"text.zst", "2e 72 65 67"}, {"junk.zst", "05 26 72 01"}} {
		for _, args := range [][]string{{"-o", "out", tc.file}, {"asm", tc.file, "-o", "x.zst"}, {"disasm", tc.file}} {
			code, out, errOut := replayCmd(t, args...)
			want := "replay: " + tc.file + ": not a binary trace (it does not start with the zstd magic 28 b5 2f fd; it starts with " + tc.starts + "); " +
				"if it is .tasm text, name it so, else write it again with replay asm or replay gen\n"
			if code != 1 || errOut != want {
				t.Errorf("replay %s: exit %d, stderr %q; want 1 and %q", strings.Join(args, " "), code, errOut, want)
			}
			if out != "" {
				t.Errorf("replay %s printed %q", strings.Join(args, " "), out)
			}
		}
		for _, left := range []string{"out", "x.zst"} {
			if _, err := os.Stat(left); !os.IsNotExist(err) {
				t.Errorf("%s exists after a refused %s", left, tc.file)
			}
		}
	}
	// Binary named .tasm: the same tables and text as the .zst.
	for _, f := range []string{"good.zst", "binary.tasm"} {
		if code, _, errOut := replayCmd(t, "-q", "-o", f+".tables", f); code != 0 {
			t.Fatalf("replay %s: exit %d: %s", f, code, errOut)
		}
	}
	// The files record the trace's name (replay.options), so they differ
	// as bytes; replay diff compares what they hold.
	if code, out, errOut := replayCmd(t, "diff", "good.zst.tables", "binary.tasm.tables"); code != 0 {
		t.Errorf("replay diff good.zst.tables binary.tasm.tables: exit %d\n%s%s", code, out, errOut)
	}
	_, fromZst, _ := replayCmd(t, "disasm", "good.zst")
	code, fromTasm, errOut := replayCmd(t, "disasm", "binary.tasm")
	if code != 0 || fromTasm != fromZst || !strings.Contains(fromTasm, "atom.global.add.u32") {
		t.Errorf("disasm binary.tasm: exit %d (%s), %d bytes; disasm good.zst %d bytes", code, errOut, len(fromTasm), len(fromZst))
	}
}
