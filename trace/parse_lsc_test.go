package trace

import (
	"reflect"
	"strings"
	"testing"
)

// lscWant is the part of a Static an LSC text fixes.
type lscWant struct {
	op          Op
	typ         Type
	space       Space
	exec, elems int
	scale, imm  int64
	bits        int
	uniform     bool
	pitch       int64
	hasDst      bool
	inputs      []Input
	b, c        []Src
}

func TestParseLSCExamples(t *testing.T) {
	addr := func(name string, bits int) Input {
		typ := map[int]Type{16: TypeU16, 32: TypeU32, 64: TypeU64}[bits]
		return Input{Name: name, Role: RoleAddr, Bits: bits, Type: typ, Elems: 1}
	}
	tests := []struct {
		text string
		want lscWant
	}{
		// The seed's Examples, in order.
		{"lsc_load.ugm.uc.uc  (M1,32) V13:d32    flat[V12+0x100]:a64",
			lscWant{op: OpLoad, typ: TypeU32, space: Global, exec: 32, elems: 1, scale: 1, imm: 0x100, bits: 64, hasDst: true,
				inputs: []Input{addr("V12", 64)}}},
		{"lsc_load.slm   (M1,32) V13:d32x4  flat[V12]:a16",
			lscWant{op: OpLoad, typ: TypeU32, space: Shared, exec: 32, elems: 4, scale: 1, bits: 16, hasDst: true,
				inputs: []Input{addr("V12", 16)}}},
		{"lsc_load.ugm  (M1,32) null:d32  flat[V12]:a64",
			lscWant{op: OpLoad, typ: TypeU32, space: Global, exec: 32, elems: 1, scale: 1, bits: 64,
				inputs: []Input{addr("V12", 64)}}},
		{"lsc_load.ugm  (M1,32) V0:d32    flat[V12]:a64 // V0 is the null register in vISA",
			lscWant{op: OpLoad, typ: TypeU32, space: Global, exec: 32, elems: 1, scale: 1, bits: 64,
				inputs: []Input{addr("V12", 64)}}},
		{"lsc_load.ugm          (M1_NM,1)  V13:d32x16t  bti(0x4)[V12]:a32",
			lscWant{op: OpLoad, typ: TypeU32, space: Space{Kind: SpaceSurface, Surface: 4}, exec: 1, elems: 16, scale: 1, bits: 32, hasDst: true,
				inputs: []Input{addr("V12", 32)}}},
		{"lsc_load_strided.ugm  (M1_NM,16) V13:d32      bti(0x4)[V12]:a32",
			lscWant{op: OpLoad, typ: TypeU32, space: Space{Kind: SpaceSurface, Surface: 4}, exec: 16, elems: 1, scale: 1, bits: 32,
				uniform: true, pitch: 4, hasDst: true, inputs: []Input{addr("V12", 32)}}},
		{"lsc_load_strided.ugm   (M1,32) V13:d32  flat[V12]:a32",
			lscWant{op: OpLoad, typ: TypeU32, space: Global, exec: 32, elems: 1, scale: 1, bits: 32, uniform: true, pitch: 4, hasDst: true,
				inputs: []Input{addr("V12", 32)}}},
		{"lsc_load_strided.ugm   (M1,32) V13:d32  flat[V12,0x100]:a32",
			lscWant{op: OpLoad, typ: TypeU32, space: Global, exec: 32, elems: 1, scale: 1, bits: 32, uniform: true, pitch: 0x100, hasDst: true,
				inputs: []Input{addr("V12", 32)}}},
		{"lsc_load_strided.slm   (M1,32) V13:d32  flat[V12,0x0]:a32",
			lscWant{op: OpLoad, typ: TypeU32, space: Shared, exec: 32, elems: 1, scale: 1, bits: 32, uniform: true, pitch: 0, hasDst: true,
				inputs: []Input{addr("V12", 32)}}},
		{"lsc_store.ugm     (M1,32) flat[V12]:a64  V13:d32",
			lscWant{op: OpStore, typ: TypeU32, space: Global, exec: 32, elems: 1, scale: 1, bits: 64,
				inputs: []Input{addr("V12", 64), {Name: "V13", Role: RoleSrcB, Bits: 32, Type: TypeU32, Elems: 1}},
				b:      []Src{{In: 1}}}},
		{"lsc_store.slm     (M1,32) flat[V12]:a32  V13:d32x4",
			lscWant{op: OpStore, typ: TypeU32, space: Shared, exec: 32, elems: 4, scale: 1, bits: 32,
				inputs: []Input{addr("V12", 32), {Name: "V13", Role: RoleSrcB, Bits: 32, Type: TypeU32, Elems: 4}},
				b:      []Src{{In: 1}, {In: 1, Elem: 1}, {In: 1, Elem: 2}, {In: 1, Elem: 3}}}},
		{"lsc_apndctr_atomic_add.ugm  (M1,32) VDATA:d32 bti(0xA0) V10:d32",
			lscWant{op: OpAdd, typ: TypeU32, space: Space{Kind: SpaceCounter, Surface: 0xa0}, exec: 32, elems: 1, scale: 1, bits: 32, hasDst: true,
				inputs: []Input{{Name: "V10", Role: RoleSrcB, Bits: 32, Type: TypeU32, Elems: 1}}, b: []Src{{In: 0}}}},
		// TASM.md's line.
		{"lsc_atomic_icas.ugm (M1,32) V13:d32 flat[V12]:a64 V14 V15",
			lscWant{op: OpCAS, typ: TypeU32, space: Global, exec: 32, elems: 1, scale: 1, bits: 64, hasDst: true,
				inputs: []Input{addr("V12", 64), {Name: "V14", Role: RoleSrcB, Bits: 32, Type: TypeU32, Elems: 1},
					{Name: "V15", Role: RoleSrcC, Bits: 32, Type: TypeU32, Elems: 1}},
				b: []Src{{In: 1}}, c: []Src{{In: 2}}}},
		// More forms: scale, negative offset, iinc with null sources,
		// transposed store, quad, floats, signed, d64, ss/bss.
		{"lsc_atomic_iinc.ugm (M1,16) %null:d32 flat[4*V12-0x10]:a32 V0 V0",
			lscWant{op: OpInc, typ: TypeU32, space: Global, exec: 16, elems: 1, scale: 4, imm: -0x10, bits: 32,
				inputs: []Input{addr("V12", 32)}}},
		{"lsc_store.ugm (M1_NM,1) flat[V12]:a64 V13:d16x8t",
			lscWant{op: OpStore, typ: TypeU16, space: Global, exec: 1, elems: 8, scale: 1, bits: 64,
				inputs: []Input{addr("V12", 64), {Name: "V13", Role: RoleSrcB, Bits: 16, Type: TypeU16, Elems: 8, Transposed: true}},
				b:      []Src{{In: 1}, {In: 1, Elem: 1}, {In: 1, Elem: 2}, {In: 1, Elem: 3}, {In: 1, Elem: 4}, {In: 1, Elem: 5}, {In: 1, Elem: 6}, {In: 1, Elem: 7}}}},
		{"lsc_load_quad.ugm (M1,16) V13:d32.xzw flat[V12]:a64",
			lscWant{op: OpLoad, typ: TypeU32, space: Global, exec: 16, elems: 3, scale: 1, bits: 64, hasDst: true,
				inputs: []Input{addr("V12", 64)}}},
		{"lsc_atomic_fadd.ugm.uc.uc (M1,32) V13:d32 flat[V12]:a64 V14",
			lscWant{op: OpAdd, typ: TypeF32, space: Global, exec: 32, elems: 1, scale: 1, bits: 64, hasDst: true,
				inputs: []Input{addr("V12", 64), {Name: "V14", Role: RoleSrcB, Bits: 32, Type: TypeF32, Elems: 1}}, b: []Src{{In: 1}}}},
		{"lsc_atomic_smin.ugm (M1,8) V13:d64 ss(0x2)[V12]:a32 V14",
			lscWant{op: OpMin, typ: TypeS64, space: Space{Kind: SpaceSurface, Surface: 2}, exec: 8, elems: 1, scale: 1, bits: 32, hasDst: true,
				inputs: []Input{addr("V12", 32), {Name: "V14", Role: RoleSrcB, Bits: 64, Type: TypeS64, Elems: 1}}, b: []Src{{In: 1}}}},
		{"lsc_load.ugm (M1,32) V13:d8u32 bss(0x7)[V12]:a32",
			lscWant{op: OpLoad, typ: TypeU8, space: Space{Kind: SpaceSurface, Surface: 7}, exec: 32, elems: 1, scale: 1, bits: 32, hasDst: true,
				inputs: []Input{addr("V12", 32)}}},
		{"lsc_atomic_icas.slm (M1,16) V13:d16u32 flat[V12]:a32 V14 V15",
			lscWant{op: OpCAS, typ: TypeU16, space: Shared, exec: 16, elems: 1, scale: 1, bits: 32, hasDst: true,
				inputs: []Input{addr("V12", 32), {Name: "V14", Role: RoleSrcB, Bits: 32, Type: TypeU16, Elems: 1},
					{Name: "V15", Role: RoleSrcC, Bits: 32, Type: TypeU16, Elems: 1}},
				b: []Src{{In: 1}}, c: []Src{{In: 2}}}},
		{"lsc_load.ugm (32) V13:d32 flat[V12]:a64",
			lscWant{op: OpLoad, typ: TypeU32, space: Global, exec: 32, elems: 1, scale: 1, bits: 64, hasDst: true,
				inputs: []Input{addr("V12", 64)}}},
	}
	for _, tc := range tests {
		text, _, _ := strings.Cut(tc.text, "//")
		st, err := ParseStatic(text)
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		w := tc.want
		got := lscWant{op: st.Op, typ: st.Type, space: st.Space, exec: st.ExecSize, elems: st.Elems, scale: st.AddrScale,
			imm: st.AddrImm, bits: st.AddrBits, uniform: st.AddrUniform, pitch: st.LanePitch, hasDst: st.HasDst,
			inputs: st.Inputs, b: st.B, c: st.C}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.text, got, w)
		}
		if st.Dialect != DialectLSC {
			t.Errorf("%s: dialect %v", tc.text, st.Dialect)
		}
	}
}

func TestParseLSCDetails(t *testing.T) {
	st, err := ParseStatic("lsc_load_quad.ugm (M1,16) V13:d32.xzw flat[V12]:a64")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 8, 12}; !reflect.DeepEqual(st.ElemOffsets, want) {
		t.Errorf("quad .xzw offsets %v, want %v", st.ElemOffsets, want)
	}
	st, err = ParseStatic("(!P2) lsc_atomic_iadd.ugm (M5,16) V13:d32 flat[V12]:a64 V14")
	if err != nil {
		t.Fatal(err)
	}
	if st.Pred < 0 || st.Inputs[st.Pred].Name != "P2" || !st.PredNeg || st.Inputs[st.Pred].Role != RolePred {
		t.Errorf("predicate: %+v", st)
	}
	// The strided default pitch is the data size times the vector size.
	st, err = ParseStatic("lsc_store_strided.ugm (M1,8) flat[V12]:a32 V13:d64x2")
	if err != nil {
		t.Fatal(err)
	}
	if !st.AddrUniform || st.LanePitch != 16 || st.Elems != 2 {
		t.Errorf("strided d64x2: uniform %v pitch %d elems %d", st.AddrUniform, st.LanePitch, st.Elems)
	}
	// What LSCOf gives back.
	st, err = ParseStatic("lsc_load_block2d.ugm  (M1_NM,1)  VDATA:d8.2x16x32nn    flat[VSURF_BASE,VSURF_W,V_SURF_H,SURF_P,OFF_X,OFF_Y]")
	if err != nil {
		t.Fatal(err)
	}
	l, err := LSCOf(st)
	if err != nil {
		t.Fatal(err)
	}
	if l.Blocks != 2 || l.BlockWidth != 16 || l.BlockHeight != 32 || l.Transposed || l.VNNI || l.Data != LSCD8 || st.Elems != 2*16*32 {
		t.Errorf("block2d d8.2x16x32nn: %+v elems %d", l, st.Elems)
	}
	if st.Inputs[l.Block2DIn[0]].Bits != 64 || st.Inputs[l.Block2DIn[5]].Name != "OFF_Y" {
		t.Errorf("block2d inputs: %+v", st.Inputs)
	}
	for text, want := range map[string][3]int{
		"lsc_load_block2d.ugm  (M1_NM,1) VDATA:d16.1x32x16tn   flat[VSURF_BASE,VSURF_W,V_SURF_H,SURF_P,OFF_X,OFF_Y]": {1, 32, 16},
		"lsc_load_block2d.ugm  (M1_NM,1) VDATA:d16.1x16x32nt   flat[VSURF_BASE,VSURF_W,V_SURF_H,SURF_P,OFF_X,OFF_Y]": {1, 16, 32},
		"lsc_store_block2d.ugm (M1_NM,1)  flat[VSURF_BASE,VSURF_W,V_SURF_H,SURF_P,OFF_X,OFF_Y]  VDATA:d16.16x32nn":   {1, 16, 32},
	} {
		st, err := ParseStatic(text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		l, _ := LSCOf(st)
		if got := [3]int{l.Blocks, l.BlockWidth, l.BlockHeight}; got != want {
			t.Errorf("%s: shape %v, want %v", text, got, want)
		}
		if strings.Contains(text, "tn") != l.Transposed || strings.Contains(text, "nt ") != l.VNNI {
			t.Errorf("%s: transposed %v vnni %v", text, l.Transposed, l.VNNI)
		}
	}
	l, _ = LSCOf(mustParse(t, "lsc_load.ugm.st.ca (M1,32) V13:d32 flat[V12]:a64"))
	if l.L1 != "st" || l.L3 != "ca" || l.SFID != "ugm" {
		t.Errorf("caching: %+v", l)
	}
}

func mustParse(t *testing.T, text string) *Static {
	t.Helper()
	st, err := ParseStatic(text)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestParseLSCErrors(t *testing.T) {
	tests := []struct {
		text string
		col  int
		msg  string
	}{
		{"lsc_load.ugm.uc.wb (M1,32) V13:d32 flat[V12]:a64", 14, "applies only to stores"},
		{"lsc_store.ugm.ca.ca (M1,32) flat[V12]:a64 V13:d32", 15, "applies only to loads"},
		{"lsc_load.ugm.wb.uc (M1,32) V13:d32 flat[V12]:a64", 14, "not a valid L1/L3"},
		{"lsc_load.slm.uc.uc (M1,32) V13:d32 flat[V12]:a32", 14, "must be .df for SLM"},
		{"lsc_load.ugm.xx (M1,32) V13:d32 flat[V12]:a64", 14, "unknown caching"},
		{"lsc_load.ugm (M1,32) V13:d32x16t flat[V12]:a64", 32, "transpose only supports SIMD1"},
		{"lsc_atomic_iadd.ugm (M1_NM,1) V13:d32t flat[V12]:a64 V14", 38, "not permitted for atomic"},
		{"lsc_load.ugm (M1,32) V13:d24 flat[V12]:a64", 26, "unknown data size"},
		{"lsc_load.ugm (M1,32) V13:d32x5 flat[V12]:a64", 29, "bad vector size"},
		{"lsc_load.ugm (M1,12) V13:d32 flat[V12]:a64", 18, "execution size"},
		{"lsc_load.ugm (M9,16) V13:d32 flat[V12]:a64", 15, "execution mask"},
		{"lsc_load.gpu (M1,16) V13:d32 flat[V12]:a64", 10, "unknown LSC SFID"},
		{"lsc_frobnicate.ugm (M1,16) V13:d32 flat[V12]:a64", 5, "unknown LSC operation lsc_frobnicate (load load_strided"},
		{"lsc_load.ugm (M1,16) V13:d32 flat[V12]:a48", 40, "unknown address size"},
		{"lsc_atomic_iadd.ugm (M1,16) V13:d32 flat[V12]:a64", 50, "needs 1 source"},
		{"lsc_atomic_iadd.ugm (M1,16) V13:d32 flat[V12]:a64 V0", 51, "needs Src1Data"},
		{"lsc_atomic_iinc.ugm (M1,16) V13:d32 flat[V12]:a64 V14", 51, "must be null"},
		{"lsc_atomic_icas.ugm (M1,16) V13:d32x2 flat[V12]:a64 V14 V15", 33, "one element per address"},
		{"lsc_atomic_iadd.ugm (M1,16) V13:d8u32 flat[V12]:a64 V14", 33, "does not take :d8u32"},
		{"lsc_apndctr_atomic_add.ugm (M1,16) V13:d32 flat V10", 44, "stateful surface"},
		{"lsc_load_quad.ugm (M1,16) V13:d32 flat[V12]:a64", 31, "needs channels"},
		{"lsc_load.ugm (M1,16) V13:d32.xy flat[V12]:a64", 26, "only for lsc_load_quad"},
		{"lsc_load_quad.ugm (M1,16) V13:d32.zx flat[V12]:a64", 36, "in that order"},
		{"lsc_load.ugm (M1,16) V13:d32 flat[V12,0x10]:a64", 39, "only lsc_*_strided take a pitch"},
		{"lsc_load.ugm (M1,16) V13:d32 bti(V3)[V12]:a32", 34, "must be an immediate"},
		{"lsc_load.slm (M1,16) V13:d32 bti(0x1)[V12]:a32", 30, "SLM takes flat"},
		{"lsc_load_block2d.ugm (M1,16) V:d8.1x4x4nn flat[A,B,C,D,E,F]", 1, "SIMD1"},
		{"lsc_load_block2d.ugm (M1_NM,1) V:d8.1x4x4xn flat[A,B,C,D,E,F]", 37, "bad block2d shape"},
		{"lsc_store.ugm (M1,16) flat[V12]:a64 null:d32", 37, "needs a data register"},
		{"lsc_load.ugm V13:d32 flat[V12]:a64", 14, "needs an execution size"},
		{"lsc_load.ugm (M1,16) V13:d32 flat[0x10*V12]:a64 extra", 49, "unexpected operand"},
		{"lsc_store_block2d.ugm (M1_NM,1) flat[A,B,C,D,E,F] V:d32.2x4x4nn", 57, "a single block"},
		{"lsc_load_block2d.ugm (M1_NM,1) V:d64.1x4x4nt flat[A,B,C,D,E,F]", 44, "not for d64"},
		{"lsc_load_block2d.ugm (M1_NM,1) V:d8u32.1x4x4nn flat[A,B,C,D,E,F]", 34, "d8, d16, d32 or d64"},
		{"lsc_load_block2d.ugm (M1_NM,1) V:d32.4x16x16nn flat[A,B,C,D,E,F]", 38, "32 registers"},
		{"lsc_load_block2d.ugm (M1_NM,1) V:d8.1x70000x1nn flat[A,B,C,D,E,F]", 37, "field ranges"},
	}
	for _, tc := range tests {
		_, err := ParseStatic(tc.text)
		se, ok := err.(*SyntaxError)
		if !ok {
			t.Errorf("%s: error %v, want a SyntaxError", tc.text, err)
			continue
		}
		if se.Col != tc.col || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%s:\n got col %d %q\nwant col %d containing %q", tc.text, se.Col, se.Msg, tc.col, tc.msg)
		}
	}
}

// TestParseLSCTextBindings reads the TASM.md lines through the text reader:
// a vector data register binds ExecSize*Elems values.
func TestParseLSCTextBindings(t *testing.T) {
	src := "lsc_atomic_icas.ugm (M1,32) V13:d32 flat[V12]:a64 V14 V15 | V12=0x100:4 V14=0 V15=5\n" +
		"lsc_apndctr_atomic_add.ugm  (M1,32) VDATA:d32 bti(0xA0) V10:d32 | V10=1\n" +
		"lsc_store.ugm (M1,2) flat[V12]:a64 V13:d32x2 | V12=0x100:8 V13=[1,2,3,4]\n"
	tr, err := NewTextReader(strings.NewReader(src), "t.tasm")
	if err != nil {
		t.Fatal(err)
	}
	var insts []*Inst
	for {
		in, err := tr.Next()
		if err != nil {
			break
		}
		insts = append(insts, in)
	}
	if len(insts) != 3 {
		t.Fatalf("%d instructions, want 3", len(insts))
	}
	st := insts[2].Static
	// SIMT order: element 1 of lane 0 is list index 1*ExecSize+0 = 2.
	if lo, _ := insts[2].Value(st.B[1], 0); lo != 3 {
		t.Errorf("element 1 of lane 0 = %d, want 3", lo)
	}
	bad := "lsc_store.ugm (M1,2) flat[V12]:a64 V13:d32x2 | V12=0x100:8 V13=[1,2,3]\n"
	tr, err = NewTextReader(strings.NewReader(bad), "t.tasm")
	if err == nil {
		_, err = tr.Next()
	}
	if err == nil || !strings.Contains(err.Error(), "holds 4") {
		t.Errorf("short list: %v", err)
	}
}

// TestBlock2DLayout checks the register layouts of the seed's four
// LOAD_BLOCK2D cases against slots worked out by hand.
func TestBlock2DLayout(t *testing.T) {
	type el = Block2DElem
	tests := []struct {
		name  string
		l     LSC
		want  []Block2DElem
		image int
	}{
		{
			// nn d32 W=3 H=2: row pitch round_up_pow2(3) = 4, block 8,
			// padded to one 16-element register.
			name:  "nn d32 3x2",
			l:     LSC{Data: LSCD32, Blocks: 1, BlockWidth: 3, BlockHeight: 2},
			want:  []el{{0, 0, 0, 0}, {1, 0, 0, 1}, {2, 0, 0, 2}, {4, 0, 1, 0}, {5, 0, 1, 1}, {6, 0, 1, 2}},
			image: 16,
		},
		{
			// Two d8 blocks of 2x1: block b starts at b*64.
			name:  "nn d8 2 blocks",
			l:     LSC{Data: LSCD8, Blocks: 2, BlockWidth: 2, BlockHeight: 1},
			want:  []el{{0, 0, 0, 0}, {1, 0, 0, 1}, {64, 1, 0, 0}, {65, 1, 0, 1}},
			image: 128,
		},
		{
			// nt d16 W=2 H=3: dword (y/2)*2 + x packs rows y, y+1 of column
			// x; row 3 is padding. Block 2*4 = 8 slots, one 32-slot register.
			name:  "nt d16 2x3",
			l:     LSC{Data: LSCD16, Blocks: 1, BlockWidth: 2, BlockHeight: 3, VNNI: true},
			want:  []el{{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 0, 0, 1}, {3, 0, 1, 1}, {4, 0, 2, 0}, {6, 0, 2, 1}},
			image: 32,
		},
		{
			// tn d32 W=2 H=3: register row x is column x, pitch 4.
			name:  "tn d32 2x3",
			l:     LSC{Data: LSCD32, Blocks: 1, BlockWidth: 2, BlockHeight: 3, Transposed: true},
			want:  []el{{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 0, 2, 0}, {4, 0, 0, 1}, {5, 0, 1, 1}, {6, 0, 2, 1}},
			image: 16,
		},
		{
			// tt d8 W=4 H=2: register row 0 (pitch round_up_pow2(2) = 2,
			// 4 per dword) holds row y's columns 0..3 in dword y.
			name:  "tt d8 4x2",
			l:     LSC{Data: LSCD8, Blocks: 1, BlockWidth: 4, BlockHeight: 2, Transposed: true, VNNI: true},
			want:  []el{{0, 0, 0, 0}, {1, 0, 0, 1}, {2, 0, 0, 2}, {3, 0, 0, 3}, {4, 0, 1, 0}, {5, 0, 1, 1}, {6, 0, 1, 2}, {7, 0, 1, 3}},
			image: 64,
		},
		{
			// d32 VNNI packs one element per dword: nt is nn.
			name:  "nt d32 is nn",
			l:     LSC{Data: LSCD32, Blocks: 1, BlockWidth: 2, BlockHeight: 2, VNNI: true},
			want:  []el{{0, 0, 0, 0}, {1, 0, 0, 1}, {2, 0, 1, 0}, {3, 0, 1, 1}},
			image: 16,
		},
	}
	for _, tc := range tests {
		got, image := tc.l.Block2DLayout()
		if !reflect.DeepEqual(got, tc.want) || image != tc.image {
			t.Errorf("%s:\n got %v (image %d)\nwant %v (image %d)", tc.name, got, image, tc.want, tc.image)
		}
	}
}

// TestParseLSCBlock2DStoreAndStatus checks what the parser fixes for a
// block2d store (Src1Data binds the whole register image; element e reads
// its slot) and for lsc_load_status (one element per lane).
func TestParseLSCBlock2DStoreAndStatus(t *testing.T) {
	st := mustParse(t, "lsc_store_block2d.ugm (M1_NM,1) flat[A,B,C,D,E,F] V:d32.1x3x2nn")
	in := st.Inputs[len(st.Inputs)-1]
	if in.Name != "V" || in.Elems != 16 || in.Transposed || in.Role != RoleSrcB {
		t.Errorf("store data input %+v, want V holding the 16-element image", in)
	}
	want := []int{0, 1, 2, 4, 5, 6}
	if st.Elems != 6 || len(st.B) != 6 {
		t.Fatalf("elems %d, sources %d, want 6", st.Elems, len(st.B))
	}
	for e, s := range st.B {
		if s.Elem != want[e] {
			t.Errorf("element %d reads slot %d, want %d", e, s.Elem, want[e])
		}
	}
	st = mustParse(t, "lsc_load_status.ugm (M1,16) V13:d32x4 flat[V12]:a64")
	l, err := LSCOf(st)
	if err != nil {
		t.Fatal(err)
	}
	if st.Elems != 1 || l.VecSize != 4 || !l.Status() {
		t.Errorf("load_status: elems %d vec %d status %v, want 1, 4, true", st.Elems, l.VecSize, l.Status())
	}
}
