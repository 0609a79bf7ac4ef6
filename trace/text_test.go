package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readAll(t *testing.T, src string) (*Header, []*Inst, error) {
	t.Helper()
	tr, err := NewTextReader(strings.NewReader(src), "t.tasm")
	if err != nil {
		return nil, nil, err
	}
	var ins []*Inst
	for {
		in, err := tr.Next()
		if err == io.EOF {
			return tr.Header(), ins, nil
		}
		if err != nil {
			return nil, nil, err
		}
		ins = append(ins, in)
	}
}

// Every PTX example of PTX ISA, atom: Examples, with what it must parse to.
func TestParsePTXSeedExamples(t *testing.T) {
	tests := []struct {
		text       string
		op         Op
		typ        Type
		space      Space
		elems      int
		inputs     string // input names in order
		sem, scope string
	}{
		{"atom.global.add.s32  d,[a],1;", OpAdd, TypeS32, Global, 1, "a", "", ""},
		{"atom.shared::cta.max.u32  d,[x+4],0;", OpMax, TypeU32, Shared, 1, "x", "", ""},
		{"@p  atom.global.cas.b32  d,[p],my_val,my_new_val;", OpCAS, TypeB32, Global, 1, "p my_val my_new_val", "", ""},
		{"atom.global.sys.add.u32 d, [a], 1;", OpAdd, TypeU32, Global, 1, "a", "", "sys"},
		{"atom.global.acquire.sys.inc.u32 ans, [gbl], %r0;", OpInc, TypeU32, Global, 1, "gbl %r0", "acquire", "sys"},
		{"atom.add.noftz.f16x2 d, [a], b;", OpAdd, TypeF16x2, Global, 1, "a b", "", ""},
		{"atom.add.noftz.f16   hd, [ha], hb;", OpAdd, TypeF16, Global, 1, "ha hb", "", ""},
		{"atom.global.cas.b16  hd, [ha], hb, hc;", OpCAS, TypeB16, Global, 1, "ha hb hc", "", ""},
		{"atom.add.noftz.bf16   hd, [a], hb;", OpAdd, TypeBF16, Global, 1, "a hb", "", ""},
		{"atom.add.noftz.bf16x2 bd, [b], bb;", OpAdd, TypeBF16x2, Global, 1, "b bb", "", ""},
		{"atom.add.shared::cluster.noftz.f16   hd, [ha], hb;", OpAdd, TypeF16, Shared, 1, "ha hb", "", ""},
		{"atom.shared.b128.cas d, a, b, c; // 128-bit atom", OpCAS, TypeB128, Shared, 1, "a b c", "", ""},
		{"atom.global.b128.exch d, a, b;   // 128-bit atom", OpExch, TypeB128, Global, 1, "a b", "", ""},
		{"atom.global.cluster.relaxed.add.u32 d, [a], 1;", OpAdd, TypeU32, Global, 1, "a", "relaxed", "cluster"},
		{"atom.global.add.L2::cache_hint.s32  d, [a], 1, cache-policy;", OpAdd, TypeS32, Global, 1, "a", "", ""},
		{"atom.global.v2.f16.add.noftz  {%hd0, %hd1}, [gbl], {%h0, %h1};", OpAdd, TypeF16, Global, 2, "gbl %h0 %h1", "", ""},
		{"atom.global.v4.f32.add  {%f0, %f1, %f2, %f3}, [gbl], {%f0, %f1, %f2, %f3};", OpAdd, TypeF32, Global, 4, "gbl %f0 %f1 %f2 %f3", "", ""},
		{"atom.global.v2.f16x2.min.noftz  {%bd0, %bd1}, [g], {%b0, %b1};", OpMin, TypeF16x2, Global, 2, "g %b0 %b1", "", ""},
		{"atom.global.v2.bf16x2.max.noftz  {%bd0, %bd1}, [g], {%b0, %b1};", OpMax, TypeBF16x2, Global, 2, "g %b0 %b1", "", ""},
		{"atom.global.v8.f16.max.noftz  {%hd0, %hd1, %hd2, %hd3, %hd4, %hd5, %hd6, %hd7}, [gbl], {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7};", OpMax, TypeF16, Global, 8, "gbl %h0 %h1 %h2 %h3 %h4 %h5 %h6 %h7", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			st, err := ParseStatic(stripComment(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, in := range st.Inputs {
				names = append(names, in.Name)
			}
			if st.Dialect != DialectPTX || st.Op != tc.op || st.Type != tc.typ || st.Space != tc.space ||
				st.Elems != tc.elems || strings.Join(names, " ") != tc.inputs || st.Sem != tc.sem || st.Scope != tc.scope {
				t.Errorf("got %s %s %s %s elems=%d inputs=%q sem=%q scope=%q", st.Dialect, st.Op, st.Type, st.Space,
					st.Elems, strings.Join(names, " "), st.Sem, st.Scope)
			}
			if st.ExecSize != 32 {
				t.Errorf("exec size %d, want 32", st.ExecSize)
			}
		})
	}
}

func TestParsePTXOperands(t *testing.T) {
	st, err := ParseStatic("@!p atom.global.cas.b64 _, [%rd4+-8], 0x7fffffffffffffff, %rd5")
	if err != nil {
		t.Fatal(err)
	}
	if st.HasDst || st.Pred < 0 || !st.PredNeg || st.Inputs[st.Pred].Name != "p" {
		t.Errorf("dst/pred: HasDst=%v Pred=%d PredNeg=%v", st.HasDst, st.Pred, st.PredNeg)
	}
	if st.Inputs[st.Addr].Name != "%rd4" || st.AddrImm != -8 {
		t.Errorf("address %s%+d", st.Inputs[st.Addr].Name, st.AddrImm)
	}
	if st.B[0].In != -1 || st.B[0].Imm != 0x7fffffffffffffff || st.Inputs[st.C[0].In].Name != "%rd5" || st.Inputs[st.C[0].In].Bits != 64 {
		t.Errorf("sources %+v %+v", st.B, st.C)
	}
	st, err = ParseStatic("atom.global.exch.b32 d, [0x1000], -1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Addr != -1 || st.AddrImm != 0x1000 || st.B[0].Imm != 0xffffffff {
		t.Errorf("absolute address %d %#x, b %#x", st.Addr, st.AddrImm, st.B[0].Imm)
	}
}

func TestBindings(t *testing.T) {
	src := `
.region global 0x1000 0x100
.init global 0x1000 u32 5 0xffffffff
.init shared 0x10 u8 1 2 3
.group 2
.init shared 0x0 b128 0x0102030405060708090a0b0c0d0e0f10
atom.global.add.u32 d, [a], b; | a=0x1000:4 b=[` + strings.Repeat("7,", 31) + `-1]
atom.global.add.u32 d, [a], b; | mask=0x5   # a and b persist
.warp 1
atom.global.max.s32 d, [a], b; | a=0x1000 b=-2
.warp 0
atom.global.add.u32 d, [a], b;
atom.global.add.f32 d, [a], b; | b=1.5
atom.global.add.f64 d, [a], b; | b=0d3ff8000000000000
atom.global.add.f32 d, [a], b; | b=1e-50
`
	h, ins, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Regions) != 1 || h.Regions[0] != (Region{Global, 0x1000, 0x100}) {
		t.Errorf("regions %+v", h.Regions)
	}
	if len(h.Inits) != 3 || !bytes.Equal(h.Inits[0].Data, []byte{5, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}) ||
		h.Inits[1].Group != 0 || h.Inits[2].Group != 2 || h.Inits[2].Data[0] != 0x10 || h.Inits[2].Data[15] != 0x01 {
		t.Errorf("inits %+v", h.Inits)
	}
	if len(ins) != 7 {
		t.Fatalf("%d instructions", len(ins))
	}
	a, b := ins[0].Vals[0], ins[0].Vals[1]
	if a.Kind != VecStride || a.Lo(3) != 0x100c || b.Kind != VecList || b.Lo(0) != 7 || b.Lo(31) != 0xffffffff {
		t.Errorf("inst 0 values %+v %+v", a, b)
	}
	if ins[1].Mask != 5 || ins[1].Active() != 5 || ins[1].Vals[0].Lo(2) != 0x1008 || ins[1].Group != 2 {
		t.Errorf("inst 1 mask %#x active %#x group %d", ins[1].Mask, ins[1].Active(), ins[1].Group)
	}
	if ins[2].Warp != 1 || ins[2].Vals[1].Lo(0) != 0xfffffffe {
		t.Errorf("inst 2 warp %d b %#x", ins[2].Warp, ins[2].Vals[1].Lo(0))
	}
	// Warp 0's bindings survived warp 1's.
	if ins[3].Vals[0].Kind != VecStride || ins[3].Mask != ^uint32(0) {
		t.Errorf("inst 3 did not keep warp 0's bindings: %+v mask %#x", ins[3].Vals[0], ins[3].Mask)
	}
	if got := ins[4].Vals[1].Lo(0); got != 0x3fc00000 {
		t.Errorf("f32 1.5 = %#x", got)
	}
	if got := ins[5].Vals[1].Lo(0); got != 0x3ff8000000000000 {
		t.Errorf("f64 0d3ff8… = %#x", got)
	}
	if got := ins[6].Vals[1].Lo(0); got != 0 {
		t.Errorf("f32 1e-50 = %#x, want +0 (rounds to zero)", got)
	}
}

func TestTextErrors(t *testing.T) {
	tests := []struct {
		src  string
		want string // line:col: message substring
	}{
		{"atom.global.add.s33 d, [a], 1; | a=0", "t.tasm:1:17: unknown PTX atom qualifier .s33"},
		{"\n\n  atom.global.global.add.u32 d, [a], 1; | a=0", "t.tasm:3:15: qualifier .global given twice"},
		{"atom.global.shared.add.u32 d, [a], 1; | a=0", "t.tasm:1:13: two state-space qualifiers"},
		{"atom.global.u32 d, [a], 1; | a=0", "t.tasm:1:1: atom needs an operation"},
		{"atom.global.inc.s32 d, [a], 1; | a=0", "t.tasm:1:1: atom.inc does not take .s32"},
		{"atom.global.add.f16 d, [a], 1; | a=0", "requires .noftz"},
		{"atom.shared.v2.f32.add {a,b}, [a], {c,d}; | a=0", "only with .global"},
		{"atom.global.add.u32 d, [a]; | a=0", "t.tasm:1:21: atom.add takes 3 operands, got 2"},
		{"atom.global.cas.b32 d, [a], 1; | a=0", "atom.cas takes 4 operands, got 3"},
		{"atom.global.add.u32 d, [a], 1 | a=0x1:", "t.tasm:1:35: a=0x1:: stride \"\" is not an integer"},
		{"atom.global.add.u32 d, [a], 1 | a", "t.tasm:1:33: a binding is NAME=VALUE"},
		{"atom.global.add.u32 d, [a], b | a=0 b=4294967296", "t.tasm:1:39: b=4294967296: 4294967296 does not fit 32 bits"},
		{"atom.global.add.u32 d, [a], b | a=0 b=-2147483649", "does not fit 32 bits"},
		{"atom.global.add.u32 d, [a], b | a=0", "t.tasm:1:29: atom.global.add.u32 d, [a], b reads b, which is bound nowhere in group 0 warp 0"},
		{"@p atom.global.add.u32 d, [pa], 1 | pa=0", "t.tasm:1:2: @p atom.global.add.u32 d, [pa], 1 reads p, which is bound nowhere"},
		{"atom.global.add.u32 d, [a], 1 | a=0 mask=0x1ffffffff", "mask= takes a 32-bit lane mask"},
		{"ATOM.ADD.U128 R0, [R1], R2", "t.tasm:1:10: ATOM.ADD.U128 is illegal"},
		// The seed's example atom.global.v4.b16x2.min.noftz names a type its
		// own syntax lacks (".packed_type = { .f16x2, .bf16x2 }").
		{"atom.global.v4.b16x2.min.noftz {a,b,c,d}, [g], {e,f,h,i} | g=0", "unknown PTX atom qualifier .b16x2"},
		{"frobnicate d, [a], 1", "unknown opcode \"frobnicate\""},
		{".region global 0x0 0", "t.tasm:1:20: bad region size"},
		{".region heap 0 4", "unknown space \"heap\""},
		{".init global 0 u32 1 x", "t.tasm:1:22: \"x\" is not an integer"},
		{"atom.global.add.u32 d, [a], 1 | a=0\n.window shared 0 4", "t.tasm:2:1: .window must come before the first instruction"},
		{"atom.global.add.u32 d, [a], 1 | a=0\n.init global 0 u32 1 0x100000000", "t.tasm:2:22: 0x100000000 does not fit 32 bits"},
		{"atom.global.add.u32 d, [a], 1 | a=0\n  .region global 0 0", "t.tasm:2:20: bad region size \"0\""},
		{".bogus 1", "unknown directive .bogus"},
		{"atom.global.add.u32 d, [a, 1 | a=0", "unclosed"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) { wantSyntaxError(t, tc.src, tc.want) })
	}
}

// wantSyntaxError reads src and requires a *SyntaxError containing want.
func wantSyntaxError(t *testing.T, src, want string) {
	t.Helper()
	_, _, err := readAll(t, src)
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("got %v (%T), want a SyntaxError", err, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("got  %q\nwant %q", err, want)
	}
}

// roundTripText prints h and ins with the TextWriter, reads the text back,
// requires every instruction to come back the same (text, context, mask,
// and every value of every input in its stored form), and returns the
// header read back.
func roundTripText(t *testing.T, h *Header, ins []*Inst) *Header {
	t.Helper()
	var buf bytes.Buffer
	tw, err := NewTextWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		if err := tw.Write(in); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	h2, ins2, err := readAll(t, buf.String())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if len(ins2) != len(ins) {
		t.Fatalf("%d instructions, want %d", len(ins2), len(ins))
	}
	for i := range ins {
		a, b := ins[i], ins2[i]
		if a.Static.Text != b.Static.Text || a.Group != b.Group || a.Warp != b.Warp || a.Mask != b.Mask || a.Active() != b.Active() {
			t.Errorf("instruction %d: %+v became %+v", i, a, b)
		}
		for v, inp := range a.Static.Inputs {
			va, vb := &a.Vals[v], &b.Vals[v]
			if va.Kind != vb.Kind {
				t.Fatalf("instruction %d input %s: kind %d became %d", i, inp.Name, va.Kind, vb.Kind)
			}
			for l := 0; l < inp.Count(a.Static.ExecSize); l++ {
				if va.Lo(l) != vb.Lo(l) || va.Hi(l) != vb.Hi(l) {
					t.Fatalf("instruction %d input %s value %d: %#x:%#x became %#x:%#x\n%s", i, inp.Name, l,
						va.Hi(l), va.Lo(l), vb.Hi(l), vb.Lo(l), buf.String())
				}
			}
		}
	}
	return h2
}

// TestDisasmRoundTrip: text -> model -> text -> model gives the same model.
func TestDisasmRoundTrip(t *testing.T) {
	src := `.region global 0x1000 0x100
.region shared 0 0x40
.init global 0x1000 u32 5 0xffffffff
.group 3
.init shared 0x0 b128 0x0102030405060708090a0b0c0d0e0f10
.group 0
atom.global.add.u32 d, [a], b; | a=0x1000:-4 b=[` + strings.Repeat("7,", 31) + `-1]
@!p atom.global.cas.b64 _, [x+8], c, 5; | mask=0x5 p=3 x=0x1000 c=-1
.group 3
.warp 7
atom.shared.b128.exch d, a, b; | a=0x0 b=0xffffffffffffffff0000000000000001
atom.global.add.f32 d, [a], b; | a=0x1000 b=1.5
`
	h, ins, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	h2 := roundTripText(t, h, ins)
	if len(h2.Regions) != 2 || len(h2.Inits) != 2 || !bytes.Equal(h2.Inits[1].Data, h.Inits[1].Data) || h2.Inits[1].Group != 3 {
		t.Errorf("header changed: %+v", h2)
	}
}

func TestFloatEncoding(t *testing.T) {
	tests := []struct {
		typ  Type
		in   string
		want uint64
	}{
		{TypeF16, "1", 0x3c00},
		{TypeF16, "-2", 0xc000},
		{TypeF16, "65504", 0x7bff},
		{TypeF16, "65520", 0x7c00},                 // rounds up to infinity
		{TypeF16, "5.960464477539063e-08", 0x0001}, // smallest subnormal
		{TypeF16, "2.98023223876953125e-08", 0},    // half of it: ties to even, zero
		{TypeF16, "1.0009765625", 0x3c01},
		{TypeF16, "1.00048828125", 0x3c00}, // tie between 0x3c00 and 0x3c01: even
		{TypeF16, "inf", 0x7c00},
		{TypeF16, "-0.0", 0x8000},
		{TypeBF16, "1", 0x3f80},
		{TypeBF16, "256", 0x4380},
		{TypeBF16, "257", 0x4380}, // 257 is a tie between 256 and 258: even
		{TypeBF16, "259", 0x4382}, // a tie between 258 (0x4381) and 260 (0x4382): even
		{TypeF32, "0.1", 0x3dcccccd},
		{TypeF32, "1e-40", 0x000116c2}, // subnormal
		{TypeF64, "0.1", 0x3fb999999999999a},
		{TypeF16x2, "1", 0x3c003c00},
	}
	for _, tc := range tests {
		lo, _, err := parseImm(tc.in, tc.typ.Size()*8, tc.typ)
		if err != nil {
			t.Errorf("%s %s: %v", tc.typ, tc.in, err)
			continue
		}
		if lo != tc.want {
			t.Errorf("%s %s = %#x, want %#x", tc.typ, tc.in, lo, tc.want)
		}
	}
}

func FuzzTextReader(f *testing.F) {
	f.Add("atom.global.add.s32  d,[a],1; | a=0x1000:4\n")
	f.Add(".region global 0x1000 0x100\n.init global 0x1000 u32 5 6\n@p atom.global.cas.b32 d,[q],v,w | p=0xffff q=0x1010 v=0:1 w=1:1\n")
	f.Add("atom.global.v4.f32.add {%f0,%f1,%f2,%f3}, [g], {%f0,%f1,%f2,%f3} | g=0 %f0=1.5 %f1=[" + strings.Repeat("1,", 31) + "1] %f2=0 %f3=nan\n")
	f.Add(".group 3\n.warp 1\natom.shared.b128.cas d, a, b, c | a=0 b=0x1 c=0xffffffffffffffffffffffffffffffff\n")
	f.Add(".window shared 0x1000 0x100\nATOM.E.CAS.64 R0, [R2 + 8], R8, R10 | R2=0x10000 R8=0 R10=1:1\n@!P0 ATOM.ADD.F32.FTZ.RN R0, [R1 - 400], R9 | P0=0xf R1=0x4190:4 R9=1.5\n")
	f.Add(".region bti(0x4) 0 0x100\nDWORD_ATOMIC.CMPXCHG (M1, 16) T255 V10 V11 V12 V13 | V10=0x0:4 V11=1 V12=0\n(!P1) DWORD_ATOMIC.PREDEC.16 (8) T0 V10 V0 V0 V12 | P1=3 V10=[0,2,4,6,8,10,12,14]\n")
	f.Add("lsc_atomic_icas.ugm (M1,32) V13:d32 flat[V12]:a64 V14 V15 | V12=0x100:4 V14=0 V15=5\nlsc_apndctr_atomic_add.ugm  (M1,32) VDATA:d32 bti(0xA0) V10:d32 | V10=1\nlsc_load.slm (M1,32) V13:d32x4 flat[V12]:a16 | V12=0:16\n")
	f.Add("atom.global.add.u32 d, [a], 1 | a=0x10\n.init global 0x10 u32 0\n.group 2\n.init shared 0 u8 1 2\n.region global 0 0x20\natom.global.add.u32 d, [a], 1\n")
	f.Add(".region global 0 0x20\n.cluster 3\n.group 1\n.cluster 4\natom.global.cluster.add.u32 d, [a], 1 | a=0x10\n.group 2\n.cluster 3\n.window shared 0 4\n")
	f.Fuzz(func(t *testing.T, src string) {
		// The reader as the command makes it for a file and for standard
		// input, and cut into chunks of a few bytes parsed on two or three
		// goroutines.
		sameAsOld(t, src, textOptions{file: strings.NewReader(src)})
		n := len(src)
		sameAsOld(t, src, textOptions{chunk: 1 + n%23, workers: 2 + n%2, depth: 1 + n%3})
		sameAsOld(t, src, textOptions{chunk: 1 + n%13, workers: 2, depth: 1 + n%2, file: strings.NewReader(src)})
	})
}

// sameAsOld reads src with the text reader, with options o, and with the
// reader it replaced (text_old_test.go), and requires the same header, the
// same records up to the first error or the 1000th record, and the same
// error.
func sameAsOld(t *testing.T, src string, o textOptions) {
	t.Helper()
	old, oerr := newOldTextReader(strings.NewReader(src), "f.tasm")
	tr, err := newTextReader(strings.NewReader(src), "f.tasm", o)
	sameErr(t, "NewTextReader", err, oerr)
	if err != nil || oerr != nil {
		return
	}
	defer tr.Close()
	statics := map[*Static]*Static{} // old's Static to the reader's
	for i := 0; i < 1000; i++ {
		oin, oerr := old.Next()
		in, err := tr.Next()
		sameErr(t, fmt.Sprintf("record %d", i), err, oerr)
		if err != nil || oerr != nil {
			break
		}
		if in.Dir != nil {
			checkRecord(t, i, in)
		} else {
			if len(in.Vals) != len(in.Static.Inputs) {
				t.Fatalf("%d values for %d inputs", len(in.Vals), len(in.Static.Inputs))
			}
			for k, v := range in.Vals {
				if n := in.Static.Inputs[k].Count(in.Static.ExecSize); v.Kind == VecList && len(v.List) != n {
					t.Fatalf("list of %d for %d values", len(v.List), n)
				}
			}
		}
		if (in.Static == nil) != (oin.Static == nil) {
			t.Fatalf("record %d: static %v, the old reader's %v", i, in.Static, oin.Static)
		}
		if oin.Static != nil {
			if s, ok := statics[oin.Static]; !ok {
				statics[oin.Static] = in.Static
			} else if s != in.Static {
				t.Fatalf("record %d: %q is another Static than before", i, in.Static.Text)
			}
			if !reflect.DeepEqual(in.Static, oin.Static) {
				t.Fatalf("record %d: static\n%+v\nthe old reader's\n%+v", i, in.Static, oin.Static)
			}
		}
		a, b := *in, *oin
		a.Static, b.Static = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("record %d:\n%+v\nthe old reader's\n%+v", i, a, b)
		}
	}
	if len(statics) > 0 {
		seen := map[*Static]bool{}
		for _, s := range statics {
			if seen[s] {
				t.Fatalf("two texts share the Static %q", s.Text)
			}
			seen[s] = true
		}
	}
	if !reflect.DeepEqual(tr.Header(), old.Header()) {
		t.Fatalf("header\n%+v\nthe old reader's\n%+v", tr.Header(), old.Header())
	}
}

func sameErr(t *testing.T, what string, err, old error) {
	t.Helper()
	if (err == nil) != (old == nil) || err != nil && err.Error() != old.Error() {
		t.Fatalf("%s: error %v, the old reader's %v", what, err, old)
	}
	var se, ose *SyntaxError
	if errors.As(err, &se) != errors.As(old, &ose) || se != nil && *se != *ose {
		t.Fatalf("%s: error %#v, the old reader's %#v", what, err, old)
	}
}

// manyNames binds more names than a context's last line keeps by number
// (64), reads them on later lines, and rebinds some.
func manyNames() string {
	var b strings.Builder
	b.WriteString("atom.global.add.u32 d, [a], 1 |")
	for i := range 80 {
		fmt.Fprintf(&b, " r%d=%d", i, i)
	}
	b.WriteString(" a=0\n")
	for _, i := range []int{0, 63, 64, 79, 70} {
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], r%d\n", i)
	}
	b.WriteString("atom.global.add.u32 d, [a], r70 | r70=700 r1=1\natom.global.add.u32 d, [a], r70\natom.global.add.u32 d, [a], r2\n")
	b.WriteString(".group 1\natom.global.add.u32 d, [a], r70\n")
	return b.String()
}

// TestTextReaderMatchesOld reads every .tasm file of the repository and
// lines the fuzzer would take long to find, whole and cut into chunks of
// many sizes, and requires what the reader it replaced reads.
func TestTextReaderMatchesOld(t *testing.T) {
	srcs := map[string]string{
		"reuse": ".group 1\natom.global.add.u32 d, [a], b | a=0x10:4 b=[" + strings.Repeat("1,", 31) + "2]\n" +
			strings.Repeat("atom.global.add.u32 d, [a], b\n.warp 1\natom.global.add.u32 d, [a], b | a=4 b=2\n.warp 0\n", 20),
		"rebind other type":        "atom.global.add.u32 d, [a], b | a=0 b=1\natom.global.add.f32 d, [a], b\natom.global.add.u16 d, [a], b | b=65536",
		"bound earlier, bad later": "atom.global.add.u64 d, [a], b | a=0 b=0x100000000\natom.global.add.u32 d, [a], b",
		"unbound":                  "atom.global.add.u32 d, [a], b | a=0 mask=3",
		"odd blanks":               "\v\n \u00a0\natom.global.add.u32 d, [a], 1; | a=0\n\vatom.global.add.u32 d, [a], 1; | a=1\n  .region global 0 4\n",
		"odd blanks first":         "atom.global.add.u32 d, [a], 1;\v | a=0\natom.global.add.u32 d, [a], 1; | a=1\n",
		"indented header":          "  .window shared 0 4\n .region global 0 16\natom.global.add.u32 d, [a], 1 | a=0\n",
		"window late":              "atom.global.add.u32 d, [a], 1 | a=0\n.window bogus\n",
		"crlf":                     ".region global 0 16\r\natom.global.add.u32 d, [a], 1 | a=0 # c\r\n// x\r\natom.global.add.u32 d, [a], 1\r\n",
		"lists":                    "atom.global.add.u32 d, [a], b | a=[" + strings.Repeat("0X1F,", 31) + "0x0] b=[" + strings.Repeat("0x00000000000000001,", 31) + "-1]\natom.global.add.u32 d, [a], b | b=[1, 2]\n",
		"mask twice":               "atom.global.add.u32 d, [a], 1 | mask=3 a=0 mask=0x10\n",
		"rebind part": "atom.global.add.u32 d, [a], b | a=1 b=2\natom.global.add.u32 d, [a], b | a=3\n.warp 1\natom.global.add.u32 d, [a], b | a=5 b=6\n.warp 0\n" +
			"atom.global.add.u32 d, [a], b\natom.global.add.u32 d, [a], b | b=[" + strings.Repeat("1,", 31) + "2] \natom.global.add.u32 d, [a], b | mask=1\natom.global.add.u32 d, [a], c | c=7\n" +
			"atom.global.add.u32 d, [a], b\natom.global.add.u32 d, [a], b | a=9 a=10\natom.global.add.u32 d, [a], b\natom.global.add.f32 d, [a], b\natom.global.add.u32 d, [a], z\n",
		"many names": manyNames(),
		"no newline": "atom.global.add.u32 d, [a], 1 | a=0",
		"empty":      "",
	}
	root := filepath.Join("..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".tasm") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			srcs[path] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) < 20 {
		t.Fatalf("found %d traces", len(srcs))
	}
	for name, src := range srcs {
		t.Run(name, func(t *testing.T) {
			sameAsOld(t, src, textOptions{})
			sameAsOld(t, src, textOptions{file: strings.NewReader(src)})
			for _, chunk := range []int{1, 7, 64, 4096} {
				sameAsOld(t, src, textOptions{chunk: chunk, workers: 3, depth: 2})
				sameAsOld(t, src, textOptions{chunk: chunk, workers: 2, depth: 1, file: strings.NewReader(src)})
			}
		})
	}
}
