package trace

import (
	"strings"
	"testing"
)

// TASM.md's vISA example and one line per row of the seed's DWORD_ATOMIC_OP
// table (vISA spec, DWORD_ATOMIC: Description), with what each parses to.
func TestParseVISA(t *testing.T) {
	tests := []struct {
		text    string
		op      Op
		typ     Type
		space   Space
		exec    int
		inputs  string // input names in order
		b, c    string // Src0 and Src1 as B and C, "" when V0
		hasDst  bool
		pred    string // "" or "P1" or "!P1"
		srcType Type   // the type literals bound to Src0/Src1 are encoded in
	}{
		// TASM.md's example.
		{"DWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12", OpAdd, TypeU32, Global, 16, "V10 V11", "V11", "", true, "", TypeU32},
		{"DWORD_ATOMIC.SUB (8) T0 V10 V11 V0 V12", OpSub, TypeU32, Shared, 8, "V10 V11", "V11", "", true, "", TypeU32},
		{"DWORD_ATOMIC.INC (16) T255 V10 V0 V0 V12", OpInc, TypeU32, Global, 16, "V10", "", "", true, "", 0},
		{"DWORD_ATOMIC.DEC (4) T255 V10 V0 V0 V0", OpDec, TypeU32, Global, 4, "V10", "", "", false, "", 0},
		{"DWORD_ATOMIC.MIN (2) T0 V10 V11 V0 V12", OpMin, TypeU32, Shared, 2, "V10 V11", "V11", "", true, "", TypeU32},
		{"DWORD_ATOMIC.MAX (1) T0 V10 V11 V0 V12", OpMax, TypeU32, Shared, 1, "V10 V11", "V11", "", true, "", TypeU32},
		{"DWORD_ATOMIC.XCHG (16) T255 V10 V11 V0 V12", OpExch, TypeU32, Global, 16, "V10 V11", "V11", "", true, "", TypeU32},
		{"DWORD_ATOMIC.CMPXCHG (16) T255 V10 V11 V13 V12", OpCAS, TypeU32, Global, 16, "V10 V11 V13", "V11", "V13", true, "", TypeU32},
		{"DWORD_ATOMIC.AND (16) T255 V10 V11 V0 V12", OpAnd, TypeU32, Global, 16, "V10 V11", "V11", "", true, "", TypeU32},
		{"DWORD_ATOMIC.OR (16) T255 V10 V11 V0 V12", OpOr, TypeU32, Global, 16, "V10 V11", "V11", "", true, "", TypeU32},
		{"DWORD_ATOMIC.XOR (16) T255 V10 V11 V0 V12", OpXor, TypeU32, Global, 16, "V10 V11", "V11", "", true, "", TypeU32},
		{"DWORD_ATOMIC.IMIN (16) T255 V10 V11 V0 V12", OpMin, TypeS32, Global, 16, "V10 V11", "V11", "", true, "", TypeS32},
		{"DWORD_ATOMIC.IMAX (16) T255 V10 V11 V0 V12", OpMax, TypeS32, Global, 16, "V10 V11", "V11", "", true, "", TypeS32},
		{"DWORD_ATOMIC.PREDEC (16) T255 V10 V0 V0 V12", OpPreDec, TypeU32, Global, 16, "V10", "", "", true, "", 0},
		{"DWORD_ATOMIC.FMAX (16) T255 V10 V11 V0 V12", OpMax, TypeF32, Global, 16, "V10 V11", "V11", "", true, "", TypeF32},
		{"DWORD_ATOMIC.FMIN (16) T0 V10 V11 V0 V12", OpMin, TypeF32, Shared, 16, "V10 V11", "V11", "", true, "", TypeF32},
		{"DWORD_ATOMIC.FCMPWR (16) T255 V10 V11 V13 V12", OpCAS, TypeF32, Global, 16, "V10 V11 V13", "V11", "V13", true, "", TypeF32},
		// .16: 16-bit counterparts; sources stay 32-bit dwords.
		{"DWORD_ATOMIC.ADD.16 (16) T255 V10 V11 V0 V12", OpAdd, TypeU16, Global, 16, "V10 V11", "V11", "", true, "", TypeU16},
		{"DWORD_ATOMIC.IMIN.16 (8) T0 V10 V11 V0 V12", OpMin, TypeS16, Shared, 8, "V10 V11", "V11", "", true, "", TypeS16},
		{"DWORD_ATOMIC.CMPXCHG.16 (8) T0 V10 V11 V13 V12", OpCAS, TypeU16, Shared, 8, "V10 V11 V13", "V11", "V13", true, "", TypeU16},
		{"DWORD_ATOMIC.FMAX.16 (8) T255 V10 V11 V0 V12", OpMax, TypeF16, Global, 8, "V10 V11", "V11", "", true, "", TypeF16},
		{"DWORD_ATOMIC.FCMPWR.16 (8) T255 V10 V11 V13 V12", OpCAS, TypeF16, Global, 8, "V10 V11 V13", "V11", "V13", true, "", TypeF16},
		{"DWORD_ATOMIC.PREDEC.16 (8) T255 V10 V0 V0 V12", OpPreDec, TypeU16, Global, 8, "V10", "", "", true, "", 0},
		// Predicates, execution masks, lower case, no blank before '('.
		{"(P1) DWORD_ATOMIC.ADD (M1, 16) T255 V10 V11 V0 V12", OpAdd, TypeU32, Global, 16, "V10 V11 P1", "V11", "", true, "P1", TypeU32},
		{"(!P2) DWORD_ATOMIC.INC (M5_NM, 8) T0 V10 V0 V0 V12", OpInc, TypeU32, Shared, 8, "V10 P2", "", "", true, "!P2", 0},
		{"DWORD_ATOMIC.xchg (M8_NM,1) T255 V10 V11 V0 V0", OpExch, TypeU32, Global, 1, "V10 V11", "V11", "", false, "", TypeU32},
		{"DWORD_ATOMIC.add(16) T255 V10 V11 V0 V12;", OpAdd, TypeU32, Global, 16, "V10 V11", "V11", "", true, "", TypeU32},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			st, err := ParseStatic(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, in := range st.Inputs {
				names = append(names, in.Name)
			}
			if st.Dialect != DialectVISA || st.Op != tc.op || st.Type != tc.typ || st.Space != tc.space ||
				st.ExecSize != tc.exec || strings.Join(names, " ") != tc.inputs || st.HasDst != tc.hasDst {
				t.Errorf("got %s %s %s %s exec=%d inputs=%q hasDst=%v", st.Dialect, st.Op, st.Type, st.Space,
					st.ExecSize, strings.Join(names, " "), st.HasDst)
			}
			addr := st.Inputs[st.Addr]
			if addr.Name != "V10" || addr.Role != RoleAddr || addr.Bits != 32 || st.AddrBits != 32 ||
				st.AddrScale != 1 || st.AddrImm != 0 || st.LanePitch != 0 || st.Elems != 1 {
				t.Errorf("address: %+v AddrBits=%d scale=%d imm=%d pitch=%d elems=%d", addr, st.AddrBits,
					st.AddrScale, st.AddrImm, st.LanePitch, st.Elems)
			}
			checkSrc := func(what string, srcs []Src, want string, role Role) {
				t.Helper()
				if want == "" {
					if len(srcs) != 0 {
						t.Errorf("%s: %+v, want none (V0)", what, srcs)
					}
					return
				}
				if len(srcs) != 1 || srcs[0].In < 0 {
					t.Fatalf("%s: %+v, want %s", what, srcs, want)
				}
				in := st.Inputs[srcs[0].In]
				if in.Name != want || in.Role != role || in.Bits != 32 || in.Type != tc.srcType {
					t.Errorf("%s: %+v, want %s role %d, 32 bits, type %s", what, in, want, role, tc.srcType)
				}
			}
			checkSrc("B (Src0)", st.B, tc.b, RoleSrcB)
			checkSrc("C (Src1)", st.C, tc.c, RoleSrcC)
			switch {
			case tc.pred == "" && st.Pred >= 0:
				t.Errorf("predicate %d, want none", st.Pred)
			case tc.pred != "":
				want := strings.TrimPrefix(tc.pred, "!")
				if st.Pred < 0 || st.Inputs[st.Pred].Name != want || st.Inputs[st.Pred].Role != RolePred ||
					st.Inputs[st.Pred].Bits != 32 || st.PredNeg != strings.HasPrefix(tc.pred, "!") {
					t.Errorf("predicate %d neg=%v, want %s", st.Pred, st.PredNeg, tc.pred)
				}
			}
			if wantDst := tc.text[strings.LastIndexByte(strings.TrimSuffix(tc.text, ";"), ' ')+1:]; st.Dst != strings.TrimSuffix(wantDst, ";") {
				t.Errorf("Dst %q, want %q", st.Dst, wantDst)
			}
		})
	}
}

// Every error names its line and column (docs/TASM.md, Errors: a
// combination that the ISA document forbids is an error, and every error
// names its line and column).
func TestParseVISAErrors(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		// Seed, Src0: "For the INC and DEC atomic operation it must be V0".
		{"DWORD_ATOMIC.INC (16) T0 V1 V2 V0 V3 | V1=0", "t.tasm:1:29: DWORD_ATOMIC.INC: Src0 must be V0"},
		{"DWORD_ATOMIC.DEC (16) T0 V1 V2 V0 V3 | V1=0", "t.tasm:1:29: DWORD_ATOMIC.DEC: Src0 must be V0"},
		{"DWORD_ATOMIC.PREDEC (16) T0 V1 V2 V0 V3 | V1=0", "t.tasm:1:32: DWORD_ATOMIC.PREDEC: Src0 must be V0"},
		// Seed, Src1: "For all other operations it must be V0".
		{"DWORD_ATOMIC.ADD (16) T255 V1 V2 V3 V4 | V1=0", "t.tasm:1:34: DWORD_ATOMIC.ADD: Src1 must be V0"},
		{"DWORD_ATOMIC.FMAX (16) T255 V1 V2 V3 V4 | V1=0", "t.tasm:1:35: DWORD_ATOMIC.FMAX: Src1 must be V0"},
		{"DWORD_ATOMIC.ADD (16) T255 V1 V0 V0 V4 | V1=0", "t.tasm:1:31: DWORD_ATOMIC.ADD reads Src0; it cannot be V0"},
		{"DWORD_ATOMIC.CMPXCHG (16) T255 V1 V2 V0 V4 | V1=0", "t.tasm:1:38: DWORD_ATOMIC.CMPXCHG reads Src1; it cannot be V0"},
		// Seed, Surface: "Valid values are 0: T0, 5: T255".
		{"DWORD_ATOMIC.ADD (16) T3 V1 V2 V0 V4 | V1=0", "t.tasm:1:23: surface T3"},
		{"DWORD_ATOMIC.ADD (16) bti(0x4) V1 V2 V0 V4 | V1=0", "t.tasm:1:23: surface bti(0x4)"},
		// Seed, Exec_size: 1, 2, 4, 8 or 16 elements; M1..M8, M1_NM..M8_NM.
		{"DWORD_ATOMIC.ADD (3) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:19: execution size 3"},
		{"DWORD_ATOMIC.ADD (32) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:19: execution size 32"},
		{"DWORD_ATOMIC.ADD (M1, 3) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:23: execution size 3"},
		{"DWORD_ATOMIC.ADD (M9, 8) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:19: unknown execution mask \"M9\""},
		{"DWORD_ATOMIC.ADD (x) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:19: bad execution size \"x\""},
		{"DWORD_ATOMIC.ADD T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:18: expected the execution size"},
		{"DWORD_ATOMIC.ADD (16 T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:18: unclosed ( in the execution size"},
		// Opcode and qualifiers.
		{"DWORD_ATOMIC.FADD (16) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:14: unknown vISA DWORD_ATOMIC operation .FADD (ADD SUB INC DEC MIN MAX XCHG CMPXCHG AND OR XOR IMIN IMAX PREDEC FMAX FMIN FCMPWR); did you mean .ADD?"},
		{"DWORD_ATOMIC (16) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:1: DWORD_ATOMIC needs an operation"},
		{"DWORD_ATOMIC.ADD.32 (16) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:18: unknown DWORD_ATOMIC qualifier .32"},
		{"DWORD_ATOMIC.ADD.16.16 (16) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:21: qualifier .16 given twice"},
		{"DWORD_ATOMICS.ADD (16) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:1: unknown opcode \"DWORD_ATOMICS.ADD\""},
		// Operands.
		{"DWORD_ATOMIC.ADD (16) T0 V1 V2 V0 | V1=0", "t.tasm:1:23: DWORD_ATOMIC takes 5 operands"},
		{"DWORD_ATOMIC.ADD (16) T0 V1 V2 V0 V4 V5 | V1=0", "t.tasm:1:38: DWORD_ATOMIC takes 5 operands"},
		{"DWORD_ATOMIC.ADD (16) T0 V1 5 V0 V4 | V1=0", "t.tasm:1:29: \"5\": DWORD_ATOMIC operands are variables"},
		{"DWORD_ATOMIC.ADD (16) T0 V1 V2.0 V0 V4 | V1=0", "t.tasm:1:31: unexpected '.' in operand"},
		{"DWORD_ATOMIC.ADD (16) T0 V0 V2 V0 V4 | V1=0", "t.tasm:1:26: Element_offset cannot be the null variable V0"},
		// Predicates.
		{"(P1 x) DWORD_ATOMIC.ADD (16) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:5: expected ) after the predicate P1"},
		{"() DWORD_ATOMIC.ADD (16) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:2: a predicate is written (P1) or (!P1)"},
		{"@P1 DWORD_ATOMIC.ADD (16) T0 V1 V2 V0 V4 | V1=0", "t.tasm:1:1: vISA and LSC predicates are written (P1)"},
		// Bindings: the execution size comes from the text.
		{"DWORD_ATOMIC.ADD (4) T0 V1 V2 V0 V4 | V1=[0,4,8] V2=1", "t.tasm:1:42: V1=[0,4,8]: the list has 3 values; the execution size is 4 lanes"},
		{"DWORD_ATOMIC.ADD (4) T0 V1 V2 V0 V4 | V1=0x100000000 V2=1", "does not fit 32 bits"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) { wantSyntaxError(t, tc.src, tc.want) })
	}
}

// Bindings of a vISA line: 16-bit and float sources keep the 32-bit dword,
// a float literal is encoded into the operation's type (HF with .16).
func TestVISABindings(t *testing.T) {
	src := `(!P1) DWORD_ATOMIC.CMPXCHG.16 (M1, 4) T0 V1 V2 V3 V4 | V1=0:2 V2=0x12345 V3=-1 P1=0x2 mask=0xd
DWORD_ATOMIC.FMAX (2) T255 V1 V5 V0 V6 | V5=1.5
DWORD_ATOMIC.FMAX.16 (2) T255 V1 V7 V0 V6 | V7=1.5
`
	_, ins, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	in := ins[0]
	if in.Mask != 0xd || in.Active() != 0xd&^0x2 {
		t.Errorf("mask %#x active %#x", in.Mask, in.Active())
	}
	if got := in.Vals[in.Static.Addr].Lo(3); got != 6 {
		t.Errorf("lane 3 offset %d, want 6", got)
	}
	if lo, _ := in.Value(in.Static.B[0], 0); lo != 0x12345 {
		t.Errorf("Src0 %#x, want the whole dword 0x12345", lo)
	}
	if lo, _ := in.Value(in.Static.C[0], 0); lo != 0xffffffff {
		t.Errorf("Src1 %#x, want 0xffffffff", lo)
	}
	if lo, _ := ins[1].Value(ins[1].Static.B[0], 1); lo != 0x3fc00000 {
		t.Errorf("F 1.5 = %#x, want 0x3fc00000", lo)
	}
	if lo, _ := ins[2].Value(ins[2].Static.B[0], 1); lo != 0x3e00 {
		t.Errorf("HF 1.5 = %#x, want 0x3e00", lo)
	}
}

// A vISA trace survives text -> model -> text -> model.
func TestVISADisasmRoundTrip(t *testing.T) {
	src := `.region shared 0 0x40
.group 1
(P1) DWORD_ATOMIC.CMPXCHG (M1_NM, 16) T0 V1 V2 V3 V4 | V1=0:4 V2=[` + strings.Repeat("3,", 15) + `7] V3=-2 P1=0xff00
DWORD_ATOMIC.INC.16 (1) T255 V1 V0 V0 V0 | V1=0x1002
`
	h, ins, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	roundTripText(t, h, ins)
}
