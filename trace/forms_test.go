package trace

import (
	"errors"
	"strings"
	"testing"
)

// The tables' sizes. A change here changes what the parsers accept: it
// needs its hand-worked cases in engine/testdata/forms (TestFormsExpectations
// fails by name for a row without one) and a line in docs/status.
func TestFormsCounts(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		want int
	}{
		{DialectPTX, 65},  // 33 scalar, 32 vector
		{DialectSASS, 34}, // the Atomic Operations table, SAFEADD refused, + ADD .F16x2.FTZ.RN
		{DialectVISA, 34}, // 17 DWORD_ATOMIC_OP rows, 32-bit and .16
		{DialectLSC, 142}, // 8 load/store sub-ops x 7 sizes, 2 block2d x 4, 19 atomics x 4, 2 append counters
		{DialectInvalid, 0},
	} {
		if got := len(Forms(tc.d)); got != tc.want {
			t.Errorf("%s: %d forms, want %d", tc.d, got, tc.want)
		}
	}
}

// Forms hands out copies: changing one changes no table.
func TestFormsAreCopies(t *testing.T) {
	fs := Forms(DialectPTX)
	fs[0].Op, fs[0].Type = OpSub, TypeF64
	if again := Forms(DialectPTX); again[0].Op == OpSub || again[0].Type == TypeF64 {
		t.Errorf("Forms(ptx)[0] changed to %v", again[0])
	}
}

// Every row names its document section, and no two rows of a dialect share
// a key (the parser would read only the first).
func TestFormsRows(t *testing.T) {
	for _, d := range []Dialect{DialectPTX, DialectSASS, DialectVISA, DialectLSC} {
		seen := map[string]bool{}
		for _, f := range formTable(d) {
			if f.Doc == "" {
				t.Errorf("%s: no document section", f)
			}
			if seen[f.String()] {
				t.Errorf("%s: two rows", f)
			}
			seen[f.String()] = true
			if f.refused == "" && (f.Op == OpInvalid || f.Type == TypeInvalid) {
				t.Errorf("%s: op %s type %s", f, f.Op, f.Type)
			}
		}
	}
	for _, f := range Forms(DialectSASS) {
		if f.Name == "SAFEADD" {
			t.Errorf("Forms lists the refused %s", f)
		}
	}
}

// The LSC sub-operations the parser knows (lscSubOps, their operand shapes)
// are exactly those of the table.
func TestFormsLSCSubOps(t *testing.T) {
	names := map[string]bool{}
	for _, f := range Forms(DialectLSC) {
		names[f.Name] = true
		if _, ok := lscSubOps[f.Name]; !ok {
			t.Errorf("%s: lscSubOps has no lsc_%s", f, f.Name)
		}
	}
	for name := range lscSubOps {
		if !names[name] {
			t.Errorf("lsc_%s: no row of the LSC table", name)
		}
	}
}

// FormOf finds a parsed Static's row, and names a hand-made one no row has.
func TestFormOf(t *testing.T) {
	st, err := ParseStatic("atom.global.add.noftz.v4.bf16x2 {a,b,c,d}, [x], {e,f,g,h}")
	if err != nil {
		t.Fatal(err)
	}
	f, err := FormOf(st)
	if err != nil || f.String() != "ptx atom.add.noftz.v4.bf16x2" || f.Vec != 4 || f.Flags != FlagNoFTZ {
		t.Errorf("FormOf = %v %+v, %v", f, f, err)
	}
	st.Type = TypeU32
	if _, err := FormOf(st); err == nil || !strings.Contains(err.Error(), "ptx atom.add.v4.u32 .noftz is not a legal form") {
		t.Errorf("FormOf(add.v4.u32) = %v", err)
	}
	lsc := &Static{Dialect: DialectLSC, Op: OpAdd, Type: TypeU32}
	if _, err := FormOf(lsc); err == nil || !strings.Contains(err.Error(), "without its LSC fields") {
		t.Errorf("FormOf(LSC without LSC) = %v", err)
	}
}

// The parsers' legality errors come from the tables and say what the
// document gives instead.
func TestFormsParseErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		col  int
		msg  string
	}{
		{"atom.global.v8.f32.add {a,b,c,d,e,f,g,h}, [x], {a,b,c,d,e,f,g,h}", 1, "atom.v8.f32 does not take .add: the seed's vector forms of .f32 are .add.v2 .add.v4"},
		{"atom.global.v2.u32.add {a,b}, [x], {a,b}", 1, "atom.v2 does not take .u32"},
		{"atom.global.v2.f16.add {a,b}, [x], {a,b}", 1, "atom.add.v2.f16 requires .noftz"},
		{"atom.global.add.noftz.u32 d, [a], b", 1, ".noftz applies only to f16, bf16, f16x2 and bf16x2"},
		{"atom.global.min.f16 d, [a], b", 1, "atom.min does not take .f16 (the seed gives .min .u32 .s32 .u64 .s64; .min.f16 only as a vector"},
		{"atom.global.cas.u32 d, [a], b, c", 1, "atom.cas does not take .u32 (the seed gives .cas .b32 .b64 .b16 .b128)"},
		{"DWORD_ATOMIC.FOO (1) T255 V1 V2 V0 V4", 14, "unknown vISA DWORD_ATOMIC operation .FOO (ADD SUB INC DEC MIN MAX XCHG CMPXCHG AND OR XOR IMIN IMAX PREDEC FMAX FMIN FCMPWR)"},
		{"lsc_apndctr_atomic_add.ugm (M1,1) V1:d16 bti(0xA0) V3:d16", 38, "lsc_apndctr_atomic_add does not take :d16: its data is d32"},
		{"lsc_atomic_fadd.ugm (M1,1) V1:d8 flat[V2]:a64 V3", 31, "lsc_atomic_fadd does not take :d8: its data is d16, d16u32, d32 or d64"},
		{"lsc_store_block2d.ugm (M1_NM,1) flat[A,B,C,D,E,F] V:d16u32h.1x4x4nn", 53, "its data is d8, d16, d32 or d64"},
	} {
		_, err := ParseStatic(tc.text)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Col != tc.col || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%s:\n got %v\nwant col %d: %s", tc.text, err, tc.col, tc.msg)
		}
	}
}
