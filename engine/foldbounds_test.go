package engine_test

import (
	"io"
	"strings"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// foldSource is a trace.Source of a combined split's fold records alone,
// for the block path.
type foldSource struct {
	hdr   *trace.Header
	folds []*trace.Fold
	at    int
	in    trace.Inst
	dir   trace.Directive
}

func (s *foldSource) Header() *trace.Header      { return s.hdr }
func (s *foldSource) Next() (*trace.Inst, error) { return nil, io.ErrUnexpectedEOF }
func (s *foldSource) Caps() trace.SourceCaps     { return trace.CapBlock }
func (s *foldSource) NextInto(a []uint64) (*trace.Inst, []uint64, error) {
	return nil, a, io.ErrUnexpectedEOF
}
func (s *foldSource) Repeats(int) (int, int64, int64) { return 0, 0, 0 }
func (s *foldSource) NextBlock() (*trace.Block, *trace.Inst, error) {
	if s.at == len(s.folds) {
		return nil, nil, io.EOF
	}
	s.dir = trace.Directive{Fold: s.folds[s.at]}
	s.in = trace.Inst{Dir: &s.dir}
	s.at++
	return nil, &s.in, nil
}

// TestFoldBoundsEachWord: a fold record's words ascend, and the block path
// checks them against the regions a word at a time unless its first and
// last lie in one region (plan.allIn): a fold whose first and last words
// are in two regions, with a word in the gap between, is refused at that
// word; one within a region applies every word.
func TestFoldBoundsEachWord(t *testing.T) {
	st, err := trace.ParseStatic("atom.global.add.u32 %r1, [%rd1], %r2")
	if err != nil {
		t.Fatal(err)
	}
	hdr := &trace.Header{Regions: []trace.Region{{Space: trace.Global, Base: 0x1000, Size: 0x1000}, {Space: trace.Global, Base: 0x3000, Size: 0x1000}}}
	for _, tc := range []struct {
		name  string
		addrs []uint64
		want  string // "" applies
	}{
		{"within one region", []uint64{0x1000, 0x1800, 0x1ffc}, ""},
		{"within the other", []uint64{0x3000, 0x3004, 0x3ffc}, ""},
		{"a word in the gap", []uint64{0x1ffc, 0x2400, 0x3000}, "0x2400"},
		{"past the last region", []uint64{0x3ff8, 0x3ffc, 0x4000}, "0x4000"},
		{"misaligned", []uint64{0x1000, 0x1002, 0x1008}, "0x1002"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := make([]uint64, len(tc.addrs))
			for i := range vals {
				vals[i] = uint64(i + 5)
			}
			src := &foldSource{hdr: hdr, folds: []*trace.Fold{{Static: st, Group: -1, Addrs: tc.addrs, Vals: vals}}}
			var sink leanSink
			_, err := engine.Replay(t.Context(), src, &sink)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one at %s", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[uint64]uint32{}
			for _, w := range sink.Words {
				got[w.Addr] = w.Value
			}
			for i, a := range tc.addrs {
				if got[a] != uint32(vals[i]) {
					t.Errorf("word 0x%x = %d, want %d", a, got[a], vals[i])
				}
			}
		})
	}
}

// TestFoldAdd32: a fold record of a 32-bit add (applyFold's foldAdd32,
// each word's sum stored at once, a page's chunk looked up once) adds its
// values to words of several pages, far apart (other chunks), and of two
// memories (groups of the shared space); a second fold adds to the first's
// sums; a sum that wraps to 0 leaves the word written (a memory row of
// 0); and the records queued before it (a fold of max.u32, foldVals32)
// apply first: max(0, 10) then + 5 is 15, not max(5, 10).
func TestFoldAdd32(t *testing.T) {
	add, err := trace.ParseStatic("atom.global.add.u32 %r1, [%rd1], %r2")
	if err != nil {
		t.Fatal(err)
	}
	addShared, err := trace.ParseStatic("atom.shared.add.u32 %r1, [%r3], %r2")
	if err != nil {
		t.Fatal(err)
	}
	maxU, err := trace.ParseStatic("atom.global.max.u32 %r1, [%rd1], %r2")
	if err != nil {
		t.Fatal(err)
	}
	hdr := &trace.Header{}
	addrs := []uint64{0x1000, 0x1004, 0x1ffc, 0x2000, 0x2080, 0x40_0000, 0x40_0004, 1 << 32, 1<<32 + 0xffc}
	vals := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 0xffff_fff0}
	again := []uint64{10, 0, 0xffff_fffd, 1, 1, 1, 1, 1, 0x10}
	src := &foldSource{hdr: hdr, folds: []*trace.Fold{
		{Static: maxU, Group: -1, Addrs: []uint64{0x8000, 0x8004}, Vals: []uint64{10, 20}},
		{Static: add, Group: -1, Addrs: append([]uint64{0x8000}, addrs...), Vals: append([]uint64{5}, vals...)},
		{Static: add, Group: -1, Addrs: addrs, Vals: again},
		{Static: addShared, Group: 2, Addrs: []uint64{0x10, 0x14}, Vals: []uint64{7, 9}},
		{Static: addShared, Group: 3, Addrs: []uint64{0x10}, Vals: []uint64{11}},
	}}
	var sink leanSink
	if _, err := engine.Replay(t.Context(), src, &sink); err != nil {
		t.Fatal(err)
	}
	type key struct {
		space trace.Space
		group int64
		addr  uint64
	}
	got := map[key]uint32{}
	for _, w := range sink.Words {
		got[key{w.Space, w.Group, w.Addr}] = w.Value
	}
	want := map[key]uint32{{trace.Global, -1, 0x8000}: 15, {trace.Global, -1, 0x8004}: 20,
		{trace.Shared, 2, 0x10}: 7, {trace.Shared, 2, 0x14}: 9, {trace.Shared, 3, 0x10}: 11}
	for i, a := range addrs {
		want[key{trace.Global, -1, a}] = uint32(vals[i] + again[i])
	}
	if want[key{trace.Global, -1, 0x1ffc}] != 0 || want[key{trace.Global, -1, 1<<32 + 0xffc}] != 0 {
		t.Fatal("the test's sums do not wrap to 0 where it means them to")
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("word %v: %d (present %v), want %d", k, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d words in the memory table, want %d: %v", len(got), len(want), got)
	}
}
