package trace

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// sassInputs prints a Static's inputs as "name/role/bits ...", for comparison.
func sassInputs(st *Static) string {
	var parts []string
	for _, in := range st.Inputs {
		role := map[Role]string{RoleAddr: "a", RoleSrcB: "b", RoleSrcC: "c", RolePred: "p"}[in.Role]
		parts = append(parts, fmt.Sprintf("%s/%s/%d", in.Name, role, in.Bits))
	}
	return strings.Join(parts, " ")
}

// sassSrc prints a source: the input's name, or #imm.
func sassSrc(st *Static, s []Src) string {
	if len(s) != 1 {
		return fmt.Sprintf("%d sources", len(s))
	}
	if s[0].In < 0 {
		return fmt.Sprintf("#%d", s[0].Imm)
	}
	return st.Inputs[s[0].In].Name
}

// Every example of the seed (CUDA Binary Utilities, ATOM) and docs/TASM.md,
// and one instruction of every form and (op, sz) pair of the seed, with
// what it must parse to.
func TestParseSASS(t *testing.T) {
	tests := []struct {
		text     string
		op       Op
		typ      Type
		inputs   string // name/role/bits, in order
		addr     string // address input name, or "" for none
		imm      int64
		addrBits int
		b, c     string // source names, #imm for RZ; c "" when not CAS
		dst      bool
		flags    Flags
	}{
		// The seed's examples.
		{"ATOM.ADD.F32.FTZ.RN R0, [R1 - 400], R9;", OpAdd, TypeF32, "R1/a/32 R9/b/32", "R1", -400, 32, "R9", "", true, FlagFTZ},
		{"ATOM.ADD.U64 R0, [R4 + 8], R2; # even-odd registers for 64-bit ops", OpAdd, TypeU64, "R4/a/32 R2/b/64", "R4", 8, 32, "R2", "", true, 0},
		{"ATOM.ADD.S32 R9, [0xfff00], R8; # absolute 20-bit address", OpAdd, TypeS32, "R8/b/32", "", 0xfff00, 32, "R8", "", true, 0},
		{"ATOM.MIN.S64 R0, [R4 + 8], R2; # signed min stored", OpMin, TypeS64, "R4/a/32 R2/b/64", "R4", 8, 32, "R2", "", true, 0},
		// TASM.md's examples.
		{"ATOM.E.CAS.64 R0, [R2 + 8], R8, R10", OpCAS, TypeU64, "R2/a/64 R8/b/64 R10/c/64", "R2", 8, 64, "R8", "R10", true, 0},
		// Every (op, sz) of the table.
		{"ATOM.ADD R0, [R2], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.ADD.U32 R0, [R2], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.ADD.32 R0, [R2], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.ADD.64 R0, [R2], R4", OpAdd, TypeU64, "R2/a/32 R4/b/64", "R2", 0, 32, "R4", "", true, 0},
		{"ATOM.ADD.F16x2.RN R0, [R2], R3", OpAdd, TypeF16x2, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.E.ADD.F64.RN R0, [R2], R4", OpAdd, TypeF64, "R2/a/64 R4/b/64", "R2", 0, 64, "R4", "", true, 0},
		{"ATOM.MIN.U32 R0, [R2], R3", OpMin, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.MIN.S32 R0, [R2], R3", OpMin, TypeS32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.MIN.U64 R0, [R2], R4", OpMin, TypeU64, "R2/a/32 R4/b/64", "R2", 0, 32, "R4", "", true, 0},
		{"ATOM.MIN.F16x2.RN R0, [R2], R3", OpMin, TypeF16x2, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.MAX.U32 R0, [R2], R3", OpMax, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.MAX.S32 R0, [R2], R3", OpMax, TypeS32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.MAX.U64 R0, [R2], R4", OpMax, TypeU64, "R2/a/32 R4/b/64", "R2", 0, 32, "R4", "", true, 0},
		{"ATOM.MAX.S64 R0, [R2], R4", OpMax, TypeS64, "R2/a/32 R4/b/64", "R2", 0, 32, "R4", "", true, 0},
		{"ATOM.MAX.F16x2.RN R0, [R2], R3", OpMax, TypeF16x2, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.INC.U32 R0, [R2], R3", OpInc, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.DEC R0, [R2], R3", OpDec, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.AND.U32 R0, [R2], R3", OpAnd, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.AND.S32 R0, [R2], R3", OpAnd, TypeS32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.AND.U64 R0, [R2], R4", OpAnd, TypeU64, "R2/a/32 R4/b/64", "R2", 0, 32, "R4", "", true, 0},
		{"ATOM.OR.S32 R0, [R2], R3", OpOr, TypeS32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.OR.64 R0, [R2], R4", OpOr, TypeU64, "R2/a/32 R4/b/64", "R2", 0, 32, "R4", "", true, 0},
		{"ATOM.XOR R0, [R2], R3", OpXor, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.XOR.U64 R0, [R2], R4", OpXor, TypeU64, "R2/a/32 R4/b/64", "R2", 0, 32, "R4", "", true, 0},
		{"ATOM.EXCH R0, [R2], R3", OpExch, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.EXCH.S32 R0, [R2], R3", OpExch, TypeS32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.EXCH.U64 R0, [R2], R4", OpExch, TypeU64, "R2/a/32 R4/b/64", "R2", 0, 32, "R4", "", true, 0},
		{"ATOM.CAS R0, [R1], R2, R3", OpCAS, TypeU32, "R1/a/32 R2/b/32 R3/c/32", "R1", 0, 32, "R2", "R3", true, 0},
		{"ATOM.CAS.S32 R0, [R1], R2, RZ", OpCAS, TypeS32, "R1/a/32 R2/b/32", "R1", 0, 32, "R2", "#0", true, 0},
		{"ATOM.CAS.U64 R0, [R1], R4, R6", OpCAS, TypeU64, "R1/a/32 R4/b/64 R6/c/64", "R1", 0, 32, "R4", "R6", true, 0},
		{"ATOM.E.CAS.64 RZ, [R2], R8, RZ", OpCAS, TypeU64, "R2/a/64 R8/b/64", "R2", 0, 64, "R8", "#0", false, 0},
		// Address forms: ImmS20 bounds, nvdisasm's +-, RZ, absolute.
		{"ATOM.ADD R0, [R2+0x7ffff], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", 0x7ffff, 32, "R3", "", true, 0},
		{"ATOM.ADD R0, [R2 - 0x80000], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", -0x80000, 32, "R3", "", true, 0},
		{"ATOM.ADD R0, [R2+-0x8], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", -8, 32, "R3", "", true, 0},
		{"ATOM.ADD R0, [ R2 ], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.ADD R0, [RZ - 4], R3", OpAdd, TypeU32, "R3/b/32", "", -4, 32, "R3", "", true, 0},
		{"ATOM.E.ADD R0, [RZ], R3", OpAdd, TypeU32, "R3/b/32", "", 0, 64, "R3", "", true, 0},
		{"ATOM.ADD R0, [0], R3", OpAdd, TypeU32, "R3/b/32", "", 0, 32, "R3", "", true, 0},
		{"ATOM.E.ADD R0, [0xfffff], R3", OpAdd, TypeU32, "R3/b/32", "", 0xfffff, 64, "R3", "", true, 0},
		{"ATOM.E.ADD R0, [R2 + 16], R5", OpAdd, TypeU32, "R2/a/64 R5/b/32", "R2", 16, 64, "R5", "", true, 0},
		// RZ as destination and as source.
		{"ATOM.ADD RZ, [R2], RZ", OpAdd, TypeU32, "R2/a/32", "R2", 0, 32, "#0", "", false, 0},
		// The same register as address and data: one input, as wide as its widest use.
		{"ATOM.EXCH.64 R0, [R2], R2", OpExch, TypeU64, "R2/a/64", "R2", 0, 32, "R2", "", true, 0},
		{"ATOM.E.EXCH R0, [R2], R2", OpExch, TypeU32, "R2/a/64", "R2", 0, 64, "R2", "", true, 0},
		// Sparse-predicate forms.
		{"ATOM.ADD P0, R0, [R2], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.E.CAS PT, R0, [R2], R4, R5", OpCAS, TypeU32, "R2/a/64 R4/b/32 R5/c/32", "R2", 0, 64, "R4", "R5", true, 0},
		// Guard predicates (PT reads nothing) and scheduling tokens.
		{"@P0 ATOM.ADD R0, [R2], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32 P0/p/32", "R2", 0, 32, "R3", "", true, 0},
		{"@!P6 ATOM.ADD R0, [R2], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32 P6/p/32", "R2", 0, 32, "R3", "", true, 0},
		{"@PT ATOM.ADD R0, [R2], R3", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.ADD R0, [R2], R3 &req_6 &rd0 &wr1 ?sched;", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
		{"ATOM.ADD R0, [R2], R3 {&req_6} {?sched}", OpAdd, TypeU32, "R2/a/32 R3/b/32", "R2", 0, 32, "R3", "", true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			text, _, _ := strings.Cut(tc.text, "#") // the reader strips comments
			st, err := ParseStatic(text)
			if err != nil {
				t.Fatal(err)
			}
			if st.Dialect != DialectSASS || st.Space != Global || st.ExecSize != 32 || st.Elems != 1 || st.AddrScale != 1 {
				t.Errorf("dialect %s space %s exec %d elems %d scale %d", st.Dialect, st.Space, st.ExecSize, st.Elems, st.AddrScale)
			}
			if st.Op != tc.op || st.Type != tc.typ {
				t.Errorf("op %s type %s, want %s %s", st.Op, st.Type, tc.op, tc.typ)
			}
			if got := sassInputs(st); got != tc.inputs {
				t.Errorf("inputs %q, want %q", got, tc.inputs)
			}
			addr := ""
			if st.Addr >= 0 {
				addr = st.Inputs[st.Addr].Name
			}
			if addr != tc.addr || st.AddrImm != tc.imm || st.AddrBits != tc.addrBits {
				t.Errorf("address %q%+d mod 2^%d, want %q%+d mod 2^%d", addr, st.AddrImm, st.AddrBits, tc.addr, tc.imm, tc.addrBits)
			}
			if got := sassSrc(st, st.B); got != tc.b {
				t.Errorf("b = %s, want %s", got, tc.b)
			}
			if tc.c == "" && st.C != nil {
				t.Errorf("c = %v, want none", st.C)
			}
			if tc.c != "" {
				if got := sassSrc(st, st.C); got != tc.c {
					t.Errorf("c = %s, want %s", got, tc.c)
				}
			}
			if st.HasDst != tc.dst || st.Flags != tc.flags {
				t.Errorf("HasDst %v flags %b, want %v %b", st.HasDst, st.Flags, tc.dst, tc.flags)
			}
			wantPred := (strings.HasPrefix(tc.text, "@P") || strings.HasPrefix(tc.text, "@!P")) && !strings.HasPrefix(tc.text, "@PT")
			if (st.Pred >= 0) != wantPred || st.PredNeg != strings.HasPrefix(tc.text, "@!") {
				t.Errorf("pred %d neg %v", st.Pred, st.PredNeg)
			}
		})
	}
}

// Errors name the column of what is wrong (1-based, as SyntaxError gives it).
func TestParseSASSErrors(t *testing.T) {
	tests := []struct {
		text string
		col  int
		want string
	}{
		// Register rules of ATOM.CAS.
		{"ATOM.CAS R0, [R1], R3, R4", 20, "ATOM.CAS.32: Rb must be R2n"},
		{"ATOM.CAS R0, [R1], RZ, R3", 20, "ATOM.CAS.32: Rb cannot be RZ"},
		{"ATOM.CAS R0, [R1], R2, R4", 24, "ATOM.CAS.32: Rc must be R3 (Rb+1) or RZ, got R4"},
		{"ATOM.CAS.64 R0, [R1], R6, R8", 23, "ATOM.CAS.64: Rb must be R4n"},
		{"ATOM.CAS.U64 R0, [R1], RZ, R6", 24, "ATOM.CAS.64: Rb cannot be RZ"},
		{"ATOM.CAS.64 R0, [R1], R4, R5", 27, "ATOM.CAS.64: Rc must be R6 (Rb+2) or RZ, got R5"},
		{"ATOM.CAS.64 R0, [R1], R252, R254", 29, "R254 cannot start a register pair"},
		// Register pairs of 64-bit operands.
		{"ATOM.ADD.U64 R1, [R2], R4", 14, "Rd of a 64-bit operand must be an even register"},
		{"ATOM.ADD.U64 R0, [R2], R5", 24, "Rb of a 64-bit operand must be an even register"},
		{"ATOM.E.ADD R0, [R3], R4", 17, "Ra of ATOM.E of a 64-bit operand must be an even register"},
		{"ATOM.E.ADD R0, [R2], R3", 22, "R3 overlaps the pair R2:R3"},
		{"ATOM.ADD.64 R0, [R3], R2", 23, "the pair R2:R3 overlaps R3"},
		// Immediates.
		{"ATOM.ADD R0, [R2 + 0x80000], R3", 20, "offset + 0x80000 is outside ImmS20"},
		{"ATOM.ADD R0, [R2 - 524289], R3", 20, "offset - 524289 is outside ImmS20"},
		{"ATOM.ADD R0, [R2 * 4], R3", 18, "expected + or - after R2"},
		{"ATOM.ADD R0, [R2 + x], R3", 20, "bad address offset"},
		{"ATOM.ADD R0, [0x100000], R3", 15, "absolute address 0x100000 is outside ImmU20"},
		{"ATOM.ADD R0, [-4], R3", 15, "an absolute address is ImmU20"},
		{"ATOM.ADD P0, R0, [R2 + 4], R3", 22, "sparse-predicate form takes [Ra]"},
		{"ATOM.ADD P0, R0, [0x40], R3", 19, "sparse-predicate form takes [Ra]"},
		{"ATOM.ADD R0, [R2], 5", 20, "ATOM takes no immediate source"},
		// (op, sz) pairs the table does not list, and .128.
		{"ATOM.ADD.128 R0, [R2], R4", 10, "ATOM.ADD.128 is illegal"},
		{"ATOM.E.CAS.U128 R0, [R2], R4, R8", 12, "ATOM.CAS.U128 is illegal"},
		{"ATOM.ADD.S64 R0, [R2], R4", 10, "ATOM.ADD does not take .S64"},
		{"ATOM.INC.S32 R0, [R2], R3", 10, "ATOM.INC does not take .S32: the seed's Atomic Operations table gives .INC .U32"},
		{"ATOM.DEC.64 R0, [R2], R4", 10, "ATOM.DEC does not take .64"},
		{"ATOM.AND.S64 R0, [R2], R4", 10, "ATOM.AND does not take .S64"},
		{"ATOM.EXCH.F32.FTZ.RN R0, [R2], R3", 11, "ATOM.EXCH does not take .F32.FTZ.RN"},
		{"ATOM.CAS.S64 R0, [R2], R4, R6", 10, "ATOM.CAS does not take .S64"},
		{"ATOM.MIN.F32.FTZ.RN R0, [R2], R3", 10, "ATOM.MIN does not take .F32.FTZ.RN"},
		{"ATOM.MAX.F64.RN R0, [R2], R4", 10, "ATOM.MAX does not take .F64.RN"},
		{"ATOM.MIN.F16x2.FTZ.RN R0, [R2], R3", 10, "no row of the table takes it"},
		{"ATOM.SAFEADD R0, [R2], R4", 13, "ATOM.SAFEADD does not take .U32 (the default .sz)"},
		{"ATOM.SAFEADD.U64 R0, [R2], R4", 6, "ATOM.SAFEADD: semantics not published"},
		{"ATOM.E.SAFEADD.64 R0, [R2], R4", 8, "ATOM.SAFEADD: semantics not published"},
		// Qualifiers, operands, predicates.
		{"ATOM R0, [R2], R3", 1, "ATOM needs an operation"},
		{"ATOM.E R0, [R2], R3", 1, "ATOM needs an operation"},
		{"ATOM.FADD R0, [R2], R3", 6, "unknown SASS ATOM operation .FADD (ADD MIN MAX INC DEC AND OR XOR EXCH CAS); did you mean .ADD?"},
		{"ATOM.add R0, [R2], R3", 6, "unknown SASS ATOM operation .add (ADD MIN MAX INC DEC AND OR XOR EXCH CAS); did you mean .ADD?"},
		{"ATOM.ADD.E R0, [R2], R3", 10, ".E comes before the operation"},
		{"ATOM.ADD.U16 R0, [R2], R3", 10, "unknown ATOM size .U16"},
		{"ATOM..ADD R0, [R2], R3", 6, "empty qualifier"},
		{"ATOM.ADD R0, [R2]", 10, "ATOM.ADD takes 3 operands (4 with a sparse predicate Ps), got 2"},
		{"ATOM.CAS R0, [R1], R2", 10, "ATOM.CAS takes 4 operands (5 with a sparse predicate Ps), got 3"},
		{"ATOM.ADD R0, [R2], R3, R4", 10, "starts with a sparse predicate Ps"},
		{"ATOM.ADD P7, R0, [R2], R3", 10, "starts with a sparse predicate Ps"},
		{"ATOM.ADD R255, [R2], R3", 10, "Rd must be a general register"},
		{"ATOM.ADD R01, [R2], R3", 10, "Rd must be a general register"},
		{"ATOM.ADD R0, R2, R3", 14, "the address must be [Ra + ImmS20]"},
		{"ATOM.ADD R0, [r2], R3", 15, "Ra must be a general register"},
		{"ATOM.ADD R0, [R2], R3 R4", 20, "Rb must be a general register"},
		{"ATOM.ADD R0, [R2], R3 &req_6 junk", 30, "unexpected \"junk\" after the operands"},
		{"@!PT ATOM.ADD R0, [R2], R3", 1, "@!PT is never true"},
		{"@P7 ATOM.ADD R0, [R2], R3", 1, "a SASS guard predicate is P0–P6 or PT, got \"@P7\""},
		{"@p ATOM.ADD R0, [R2], R3", 1, "a SASS guard predicate is P0–P6 or PT"},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			_, err := ParseStatic(tc.text)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %v (%T), want a SyntaxError", err, err)
			}
			if se.Col != tc.col || !strings.Contains(se.Msg, tc.want) {
				t.Errorf("got column %d %q\nwant column %d %q", se.Col, se.Msg, tc.col, tc.want)
			}
		})
	}
}

// A .tasm file of SASS lines: bindings on first registers of pairs, float
// literals in the data type, predicates as lane masks, comments, and a
// lossless disasm round trip.
func TestSASSTextRoundTrip(t *testing.T) {
	src := `.region global 0x1000 0x100
.window shared 0x20000 0x1000
ATOM.ADD.F32.FTZ.RN R0, [R1 - 400], R9;        | R1=0x4190:4 R9=1.5
ATOM.E.CAS.64 R0, [R2 + 8], R8, R10             | R2=0x10000 R8=0 R10=1:1
ATOM.MIN.S64 R0, [R4 + 8], R2;                  | R4=0xff8 R2=-2 # signed min stored
@!P0 ATOM.ADD.S32 R9, [0xfff00], R8; &wr1       | P0=0xffff R8=[` + strings.Repeat("-1,", 31) + `7] mask=0xff
ATOM.E.ADD.F64.RN RZ, [R2], R4                  | R2=0xffffffff00001000 R4=0.1
`
	h, ins, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Windows) != 1 || len(ins) != 5 {
		t.Fatalf("%d windows, %d instructions", len(h.Windows), len(ins))
	}
	// Bound values: the float literal encoded in the data type; the 64-bit
	// pair values whole; the predicate and mask.
	if v := ins[0].Vals[1].Lo(0); v != 0x3fc00000 {
		t.Errorf("R9=1.5 as f32 is %#x", v)
	}
	if v := ins[2].Vals[1].Lo(0); v != 0xfffffffffffffffe {
		t.Errorf("R2=-2 as a 64-bit pair is %#x", v)
	}
	if v := ins[4].Vals[0].Lo(0); v != 0xffffffff00001000 {
		t.Errorf(".E address is %#x", v)
	}
	if v := ins[4].Vals[1].Lo(0); v != 0x3fb999999999999a {
		t.Errorf("R4=0.1 as f64 is %#x", v)
	}
	if got := ins[3].Active(); got != 0 { // @!P0 with P0=0xffff and mask=0xff: no lane
		t.Errorf("active %#x, want 0", got)
	}
	roundTripText(t, h, ins)
}

// Bindings are checked against the operand widths: a 32-bit register holds
// 32 bits, a pair 64.
func TestSASSBindingWidths(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"ATOM.ADD R0, [R2], R3 | R2=0x100000000 R3=1", "t.tasm:1:28: R2=0x100000000: 0x100000000 does not fit 32 bits"},
		{"ATOM.ADD.64 R0, [R2], R4 | R2=0 R4=0x10000000000000000", "does not fit 64 bits"},
		{"@P0 ATOM.ADD R0, [R2], R3 | R2=0 R3=1", "reads P0, which is bound nowhere"},
	}
	for _, tc := range tests {
		_, _, err := readAll(t, tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.src, err, tc.want)
		}
	}
	if _, _, err := readAll(t, "ATOM.E.ADD.64 R0, [R2], R4 | R2=0xffffffffffffffff R4=-1"); err != nil {
		t.Errorf("64-bit pairs: %v", err)
	}
}

// TestSASSAtomicFamilies: ATOMG, ATOMS and RED take ATOM's .op and .sz,
// each with a trailing .STRONG.scope, as NVBit tracers print them.
func TestSASSAtomicFamilies(t *testing.T) {
	for _, tc := range []struct {
		text   string
		op     Op
		typ    Type
		space  Space
		scope  string
		dst    bool
		abits  int
		inputs string
	}{
		{"ATOMG.E.ADD.STRONG.GPU R0, [R2], R4", OpAdd, TypeU32, Global, "gpu", true, 64, "R2/a/64 R4/b/32"},
		{"ATOMG.E.CAS.64.STRONG.GPU R0, [R2], R4, R6", OpCAS, TypeU64, Global, "gpu", true, 64, "R2/a/64 R4/b/64 R6/c/64"},
		{"ATOM.E.EXCH.STRONG.SYS R0, [R2], R4", OpExch, TypeU32, Global, "sys", true, 64, "R2/a/64 R4/b/32"},
		{"RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R2], R4", OpAdd, TypeF32, Global, "gpu", false, 64, "R2/a/64 R4/b/32"},
		{"RED.E.MIN.S32.STRONG.CTA [R2+0x10], R4", OpMin, TypeS32, Global, "cta", false, 64, "R2/a/64 R4/b/32"},
		{"ATOMS.ADD R0, [R2], R4", OpAdd, TypeU32, Shared, "", true, 32, "R2/a/32 R4/b/32"},
		{"ATOMS.CAS.64 RZ, [R2], R4, R6", OpCAS, TypeU64, Shared, "", false, 32, "R2/a/32 R4/b/64 R6/c/64"},
	} {
		st, err := ParseStatic(tc.text)
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		if st.Op != tc.op || st.Type != tc.typ || st.Space != tc.space || st.Scope != tc.scope || st.HasDst != tc.dst || st.AddrBits != tc.abits || st.Dialect != DialectSASS {
			t.Errorf("%s: %s %s %s scope %q dst %v addr %d bits, want %s %s %s %q %v %d", tc.text, st.Op, st.Type, st.Space, st.Scope, st.HasDst, st.AddrBits, tc.op, tc.typ, tc.space, tc.scope, tc.dst, tc.abits)
		}
		if got := sassInputs(st); got != tc.inputs {
			t.Errorf("%s: inputs %s, want %s", tc.text, got, tc.inputs)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"RED.E.CAS [R2], R4, R5", "RED has no .CAS"},
		{"ATOMS.E.ADD R0, [R2], R4", "ATOMS takes no .E"},
		{"ATOMG.E.ADD.STRONG.SM R0, [R2], R4", "unknown scope .STRONG.SM"},
		{"ATOMG.E.ADD.STRONG R0, [R2], R4", ".STRONG takes one scope"},
		{"RED.E.ADD R0, [R2], R4", "starts with a sparse predicate Ps (P0–P6 or PT), got \"R0\""},
		{"ATOMS.CAST.SPIN R0, [R2], R4, R5", "unknown SASS ATOMS operation .CAST"},
	} {
		_, err := ParseStatic(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.text, err, tc.want)
		}
	}
}
