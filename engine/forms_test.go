package engine

import (
	"bufio"
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// The table of legal forms (trace.Forms), read by the parsers and by
// newPlan, is enumerated here twice:
//
//   - TestFormsPlan: every row parses from a text of that form back to the
//     same row, and plans (a kind with a formula at its width), so a row
//     without semantics fails by name;
//   - TestFormsExpectations: every row has at least one hand-worked case
//     in testdata/forms/<dialect>.tasm, replayed with the engine and
//     checked against the memory and returned values written there.

var formDialects = []trace.Dialect{trace.DialectPTX, trace.DialectSASS, trace.DialectVISA, trace.DialectLSC}

// formText is an instruction text of form f, for TestFormsPlan.
func formText(f trace.Form) string {
	switch f.Dialect {
	case trace.DialectPTX:
		return ptxFormText(f)
	case trace.DialectSASS:
		d, b, c := "R0", "R5", ""
		if f.Type.Size() == 8 {
			b = "R4"
		}
		if f.Op == trace.OpCAS {
			b, c = "R4", ", R5"
			if f.Type.Size() == 8 {
				c = ", R6"
			}
		}
		return fmt.Sprintf("ATOM.E.%s.%s %s, [R2], %s%s", f.Name, f.Size, d, b, c)
	case trace.DialectVISA:
		src0, src1 := "V2", "V0"
		switch f.Op {
		case trace.OpInc, trace.OpDec, trace.OpPreDec:
			src0 = "V0"
		case trace.OpCAS:
			src1 = "V3"
		}
		half := ""
		if f.Half {
			half = ".16"
		}
		return fmt.Sprintf("DWORD_ATOMIC.%s%s (1) T255 V1 %s %s V4", f.Name, half, src0, src1)
	case trace.DialectLSC:
		return lscFormText(f)
	}
	return ""
}

func ptxFormText(f trace.Form) string {
	q := "atom.global." + f.Name
	if f.Flags&trace.FlagNoFTZ != 0 {
		q += ".noftz"
	}
	if f.Vec == 0 {
		q += "." + f.Type.String()
		if f.Op == trace.OpCAS {
			return q + " d, [a], b, c"
		}
		return q + " d, [a], b"
	}
	q += fmt.Sprintf(".v%d.%s", f.Vec, f.Type)
	var d, b []string
	for i := 0; i < f.Vec; i++ {
		d = append(d, fmt.Sprintf("d%d", i))
		b = append(b, fmt.Sprintf("b%d", i))
	}
	return fmt.Sprintf("%s {%s}, [a], {%s}", q, strings.Join(d, ","), strings.Join(b, ","))
}

func lscFormText(f trace.Form) string {
	d := f.Data.String()
	op := "lsc_" + f.Name + ".ugm"
	switch f.Name {
	case "load", "load_strided", "load_status":
		return fmt.Sprintf("%s (M1,1) V1:%s flat[V2]:a64", op, d)
	case "load_quad":
		return fmt.Sprintf("%s (M1,1) V1:%s.xz flat[V2]:a64", op, d)
	case "store", "store_uncompressed", "store_strided":
		return fmt.Sprintf("%s (M1,1) flat[V2]:a64 V1:%s", op, d)
	case "store_quad":
		return fmt.Sprintf("%s (M1,1) flat[V2]:a64 V1:%s.yw", op, d)
	case "load_block2d":
		return fmt.Sprintf("%s (M1_NM,1) V1:%s.1x2x2nn flat[B,W,H,P,X,Y]", op, d)
	case "store_block2d":
		return fmt.Sprintf("%s (M1_NM,1) flat[B,W,H,P,X,Y] V1:%s.1x2x2nn", op, d)
	case "apndctr_atomic_add", "apndctr_atomic_sub":
		return fmt.Sprintf("%s (M1,1) V1:%s bti(0xA0) V3:%s", op, d, d)
	}
	srcs := " V3"
	switch f.Name {
	case "atomic_iinc", "atomic_idec", "atomic_load":
		srcs = ""
	case "atomic_icas", "atomic_fcas":
		srcs = " V3 V4"
	}
	return fmt.Sprintf("%s (M1,1) V1:%s flat[V2]:a64%s", op, d, srcs)
}

// Every row of every dialect's table parses back to itself and plans: its
// kind has a formula at its width (newPlan's formulaErr).
func TestFormsPlan(t *testing.T) {
	for _, d := range formDialects {
		fs := trace.Forms(d)
		if len(fs) == 0 {
			t.Errorf("%s: no forms", d)
		}
		for _, f := range fs {
			text := formText(f)
			st, err := trace.ParseStatic(text)
			if err != nil {
				t.Errorf("%s: %q does not parse: %v", f, text, err)
				continue
			}
			if got, err := trace.FormOf(st); err != nil || got != f {
				t.Errorf("%s: %q parses as %v (%v)", f, text, got, err)
			}
			if _, err := newPlan(st, &trace.Header{}, nil); err != nil {
				t.Errorf("%s: %q does not plan: %v", f, text, err)
			}
		}
	}
}

// A Static built by hand whose form no table has is a plan error naming
// the form, though each would otherwise map to a kind.
func TestFormsPlanRefusesUnlisted(t *testing.T) {
	for _, tc := range []struct {
		text string
		edit func(st *trace.Static)
		want string
	}{
		{"atom.global.inc.u32 d, [a], b", func(st *trace.Static) { st.Type = trace.TypeS32 }, "ptx atom.inc.s32"},
		{"atom.global.add.noftz.f16 d, [a], b", func(st *trace.Static) { st.Flags = 0 }, "ptx atom.add.f16"},
		{"atom.global.add.u32 d, [a], b", func(st *trace.Static) { st.Type = trace.TypeB32 }, "ptx atom.add.b32"},
		{"atom.global.add.noftz.v8.f16 {d0,d1,d2,d3,d4,d5,d6,d7}, [a], {b0,b1,b2,b3,b4,b5,b6,b7}",
			func(st *trace.Static) { st.Type = trace.TypeF16x2 }, "ptx atom.add.v8.f16x2"},
		{"ATOM.INC R0, [R2], R3", func(st *trace.Static) { st.Type = trace.TypeS32 }, "sass inc on s32"},
		{"ATOM.ADD.F32.FTZ.RN R0, [R2], R3", func(st *trace.Static) { st.Flags = 0 }, "sass add on f32"},
		{"DWORD_ATOMIC.ADD (1) T255 V1 V2 V0 V4", func(st *trace.Static) { st.Op = trace.OpLoad }, "visa load on u32"},
		{"DWORD_ATOMIC.FMAX (1) T255 V1 V2 V0 V4", func(st *trace.Static) { st.Op = trace.OpAdd }, "visa add on f32"},
		{"lsc_atomic_iadd.ugm (M1,1) V1:d32 flat[V2]:a64 V3", func(st *trace.Static) {
			l := *st.LSC
			l.Data = trace.LSCD8U32
			st.LSC = &l
		}, "lsc lsc_atomic_iadd :d8u32"},
		{"lsc_atomic_iadd.ugm (M1,1) V1:d32 flat[V2]:a64 V3", func(st *trace.Static) { st.Op = trace.OpSub }, "lsc lsc_atomic_iadd :d32 (op sub"},
	} {
		st, err := trace.ParseStatic(tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		tc.edit(st)
		_, err = newPlan(st, &trace.Header{}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "not a legal form") {
			t.Errorf("%s edited: newPlan = %v, want an error naming %q", tc.text, err, tc.want)
		}
	}
}

// formCase is one case of a testdata/forms file: a .tasm text of one
// instruction and the memory and returned values it must leave.
type formCase struct {
	title string
	line  int      // of the === line
	src   []string // .tasm lines
	inst  string   // the instruction's text, before |
	mems  []formMem
	rets  []string
}

// formMem is a `mem SPACE ADDR W0 W1 …` line: the 32-bit words at ADDR,
// ADDR+4, … after the replay.
type formMem struct {
	space string
	addr  uint64
	words []uint32
}

// readFormCases reads a testdata/forms file:
//
//	=== title
//	.init …                      (any .tasm directives)
//	INSTRUCTION | bindings       (exactly one instruction)
//	mem SPACE ADDR W0 W1 …       (32-bit words from ADDR on, after the replay)
//	ret V0 V1 …                  (the returned values, in row order: lane, then element)
//
// `#` lines outside and inside cases are comments.
func readFormCases(t *testing.T, path string) []*formCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer f.Close()
	var cases []*formCase
	var cur *formCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "==="):
			cur = &formCase{title: strings.TrimSpace(line[3:]), line: n}
			cases = append(cases, cur)
		case line == "" || strings.HasPrefix(line, "#"):
		case cur == nil:
			t.Fatalf("%s:%d: %q before the first === case", path, n, line)
		case strings.HasPrefix(line, "mem "):
			fs := strings.Fields(line)
			m := formMem{space: fs[1], addr: parseFormUint(t, path, n, fs[2])}
			for _, w := range fs[3:] {
				m.words = append(m.words, uint32(parseFormUint(t, path, n, w)))
			}
			cur.mems = append(cur.mems, m)
		case strings.HasPrefix(line, "ret"):
			cur.rets = append(cur.rets, strings.Fields(line)[1:]...)
		case strings.HasPrefix(line, "."):
			cur.src = append(cur.src, line)
		default:
			if cur.inst != "" {
				t.Fatalf("%s:%d: a second instruction in case %q", path, n, cur.title)
			}
			cur.inst, _, _ = strings.Cut(line, "|")
			cur.src = append(cur.src, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func parseFormUint(t *testing.T, path string, n int, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatalf("%s:%d: %v", path, n, err)
	}
	return v
}

// Every row of every dialect's table has a hand-worked case, and the
// engine's replay of each case leaves the memory and returns the values
// the case gives.
func TestFormsExpectations(t *testing.T) {
	for _, d := range formDialects {
		path := filepath.Join("testdata", "forms", d.String()+".tasm")
		covered := map[string]bool{}
		for _, fc := range readFormCases(t, path) {
			st, err := trace.ParseStatic(fc.inst)
			if err != nil {
				t.Errorf("%s:%d: %v", path, fc.line, err)
				continue
			}
			f, err := trace.FormOf(st)
			if err != nil {
				t.Errorf("%s:%d: %v", path, fc.line, err)
				continue
			}
			if f.Dialect != d {
				t.Errorf("%s:%d: a %s case in the %s file", path, fc.line, f.Dialect, d)
			}
			covered[f.String()] = true
			t.Run(f.String()+"/"+fc.title, func(t *testing.T) { checkFormCase(t, f, path, fc) })
		}
		for _, f := range trace.Forms(d) {
			if !covered[f.String()] {
				t.Errorf("%s: no expectation (add a case to %s)", f, path)
			}
		}
	}
}

// checkFormCase replays one case with the engine and compares its final
// memory and returned values with the case's.
func checkFormCase(t *testing.T, f trace.Form, path string, fc *formCase) {
	src := strings.Join(fc.src, "\n") + "\n"
	// The engine, and the reference interpreter with its own derivation
	// of the semantics: each must give the hand-worked values.
	for _, run := range []struct {
		name   string
		replay func(context.Context, trace.Source, Sink, ...Option) (Summary, error)
	}{{"engine", Replay}, {"reference", replayReference}} {
		where := fmt.Sprintf("%s, %s (%s:%d %q)", f, run.name, path, fc.line, fc.title)
		var c Collector
		if _, err := run.replay(t.Context(), textSource(t, src), &c, WithShards(3), WithWorkers(2)); err != nil {
			t.Fatalf("%s: replay: %v", where, err)
		}
		checkFormOutcome(t, where, fc, &c)
	}
}

// checkFormOutcome compares a replay's memory and returned values with a
// case's hand-worked ones.
func checkFormOutcome(t *testing.T, where string, fc *formCase, c *Collector) {
	if len(fc.mems) == 0 || len(fc.rets) == 0 {
		t.Errorf("%s: a case needs mem and ret lines", where)
	}
	want := map[string]uint32{}
	for _, m := range fc.mems {
		for i, w := range m.words {
			want[fmt.Sprintf("%s 0x%x", m.space, m.addr+uint64(4*i))] = w
		}
	}
	got := map[string]uint32{}
	for _, w := range c.Words {
		got[fmt.Sprintf("%s 0x%x", w.Space, w.Addr)] = w.Value
	}
	for k, w := range want {
		if g := got[k]; g != w {
			t.Errorf("%s: memory %s = 0x%08x, want 0x%08x", where, k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && g != 0 {
			t.Errorf("%s: memory %s = 0x%08x, want 0 (no mem line names it)", where, k, g)
		}
	}
	if len(c.Res) != len(fc.rets) {
		t.Errorf("%s: %d returned rows, want %d: %+v", where, len(c.Res), len(fc.rets), c.Res)
	}
	for i := 0; i < len(c.Res) && i < len(fc.rets); i++ {
		r := c.Res[i]
		w, ok := new(big.Int).SetString(fc.rets[i], 0)
		if !ok {
			t.Fatalf("%s: bad ret value %q", where, fc.rets[i])
		}
		g := new(big.Int).Lsh(new(big.Int).SetUint64(r.ValueHi), 64)
		g.Or(g, new(big.Int).SetUint64(r.Value))
		if g.Cmp(w) != 0 || r.Fault != FaultNone {
			t.Errorf("%s: lane %d element %d returned %#x (fault %q), want %#x", where, r.Lane, r.Elem, g, r.Fault, w)
		}
	}
}
