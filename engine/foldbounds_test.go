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
