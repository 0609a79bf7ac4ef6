package reference

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// SASS ATOM: NVIDIA CUDA Binary Utilities, instruction set reference,
// ATOM (SPA 5.0).
//
// Description: "ATOM.op performs atomic operation .op with register Rb on
// global memory ... and returns the prior memory value to register Rd", in
// the pseudo-code
//
//	M = mem[Ra + ImmS20]; Rd = M; M = .op(M, Rb); mem[Ra + ImmS20] = M;
//
// with each .op's formula in the Atomic Operations table:
//
//	.ADD  .U32 .S32 .U64 .F32.FTZ.RN .F16x2.RN .F64.RN   M = M + Rb
//	.MIN  .U32 .S32 .U64 .S64 .F16x2.RN                  M = min(M, Rb)
//	.MAX  .U32 .S32 .U64 .S64 .F16x2.RN                  M = max(M, Rb)
//	.INC  .U32                                           M = (M >= Rb)? 0 : (M + 1)
//	.DEC  .U32                                           M = (M == 0 || M > Rb)? Rb : M - 1
//	.AND .OR .XOR  .U32 .S32 .U64                        M = M & Rb, M | Rb, M ^ Rb
//	.EXCH .U32 .S32 .U64                                 M = Rb
//	.CAS  .U32 .S32 .U64                                 if (M == Rb) M = Rc
//
// Faults: "Misaligned addresses cause a misaligned address error. An
// address outside an allocated memory region causes an address
// out-of-range error." and the shared/local windows (access.go,
// inWindow).

// sassRule works out the rule of a SASS ATOM.
func sassRule(st *trace.Static) (*rule, error) {
	width := 0
	switch st.Type {
	case trace.TypeU32, trace.TypeS32, trace.TypeF32, trace.TypeF16x2:
		width = 4
	case trace.TypeU64, trace.TypeS64, trace.TypeF64:
		width = 8
	default:
		return nil, fmt.Errorf("the reference knows no SASS ATOM .sz %s", st.Type)
	}
	// ATOMS addresses shared memory itself: no generic window applies.
	r := &rule{st: st, elems: 1, width: width, outside: faultOutOfRange, give: giveOld, windows: st.Space == trace.Global}
	r.addr = elementsAt(st, []int64{0})
	r.source = textSources(st, 0, width)
	if st.Type.Float() {
		return r, sassFloat(r, st)
	}
	var f integer
	op := st.Op.String()
	switch st.Op {
	case trace.OpAdd:
		f = addInt
	case trace.OpMin, trace.OpMax:
		f, op = minMaxInt(st.Op == trace.OpMax, st.Type.Signed())
	case trace.OpInc:
		f, op = boundedInc, "inc.bounded"
	case trace.OpDec:
		f, op = boundedDec, "dec.bounded"
	case trace.OpAnd:
		f = andInt
	case trace.OpOr:
		f = orInt
	case trace.OpXor:
		f = xorInt
	case trace.OpExch:
		f = exchInt
	case trace.OpCAS: // if (M == Rb) M = Rc
		f = compareB
	default:
		return nil, fmt.Errorf("the reference knows no SASS ATOM.%s", st.Op)
	}
	r.apply, r.op, r.family = onLow(f, width), op, intFamily(op)
	return r, nil
}

// sassFloat sets the formula of a float ATOM:
//
//   - .ADD.F32.FTZ.RN: f32, round to nearest even (.RN), subnormal inputs
//     and results flushed to zero (.FTZ), NVIDIA's canonical NaN;
//   - .ADD.F16x2.RN: each f16 half rounded to nearest, subnormals kept;
//     spelt .F16x2.FTZ.RN (the .sz list), the halves are flushed;
//   - .ADD.F64.RN: f64 with IEEE NaN rules;
//   - .MIN/.MAX.F16x2.RN: per half, NVIDIA's min/max (float.go; it is what
//     PTX's atom.min/max.noftz.f16x2 compile to).
func sassFloat(r *rule, st *trace.Static) error {
	ftz := st.Flags&trace.FlagFTZ != 0
	switch {
	case st.Op == trace.OpAdd && st.Type == trace.TypeF32:
		r.apply, r.op = inFormat(f32, nvidiaAddOp(f32, true)), floatName(st.Op.String(), "nv.ftz", st.Type.String())
	case st.Op == trace.OpAdd && st.Type == trace.TypeF64:
		r.apply, r.op = inFormat(f64, ieeeAddOp(f64)), floatName(st.Op.String(), "ieee", st.Type.String())
	case st.Op == trace.OpAdd && st.Type == trace.TypeF16x2:
		how := "nv"
		if ftz {
			how = "nv.ftz"
		}
		r.apply, r.op = halves(nvidiaAddOp(f16, ftz)), floatName(st.Op.String(), how, st.Type.String())
	case (st.Op == trace.OpMin || st.Op == trace.OpMax) && st.Type == trace.TypeF16x2:
		r.apply, r.op = halves(nvidiaMinMaxOp(f16, st.Op == trace.OpMax)), floatName(st.Op.String(), "nv", st.Type.String())
	default:
		return fmt.Errorf("the reference knows no SASS ATOM.%s on %s", st.Op, st.Type)
	}
	return nil
}
