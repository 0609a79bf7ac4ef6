package reference

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// PTX atom: NVIDIA PTX ISA, "Parallel Synchronization and Communication
// Instructions: atom".
//
// PTX ISA, atom: Semantics:
//
//	atomic {
//	    d = *a;
//	    *a = (operation == cas) ? operation(*a, b, c) : operation(*a, b);
//	}
//
// so every lane gets the old value, and the new one is the operation of
// the old value and b (and c). An address outside every declared region
// faults out_of_range (docs/TASM.md, Regions).

// ptxRule works out the rule of a PTX atom.
func ptxRule(st *trace.Static) (*rule, error) {
	width := ptxWidth(st.Type)
	if width == 0 {
		return nil, fmt.Errorf("the reference knows no PTX type %s", st.Type)
	}
	r := &rule{st: st, elems: max(st.Elems, 1), width: width, outside: faultOutOfRange, give: giveOld}
	// PTX ISA, atom: Description: "atom instruction on packed type or
	// vector type, accesses adjacent scalar elements in memory ... the
	// atomicity is guaranteed separately for each of the individual scalar
	// elements". Element e of a lane is at a + e*width; the vector as a
	// whole must be aligned to its size (PTX ISA, "Addresses as Operands",
	// which the Description cites for alignment).
	r.addr = elementsAt(st, packed(r.elems, width))
	if r.elems > 1 {
		r.vector = uint64(r.elems * width)
	}
	r.source = textSources(st, 0, width)
	if err := ptxOperation(r, st); err != nil {
		return nil, err
	}
	return r, nil
}

// ptxWidth is the bytes of one element of a PTX type (.b128 is the
// 128-bit atom of the Syntax; .f16x2 and .bf16x2 pack two halves in 32
// bits).
func ptxWidth(t trace.Type) int {
	switch t {
	case trace.TypeB16, trace.TypeF16, trace.TypeBF16:
		return 2
	case trace.TypeB32, trace.TypeU32, trace.TypeS32, trace.TypeF32, trace.TypeF16x2, trace.TypeBF16x2:
		return 4
	case trace.TypeB64, trace.TypeU64, trace.TypeS64, trace.TypeF64:
		return 8
	case trace.TypeB128:
		return 16
	}
	return 0
}

// ptxOperation sets r's formula.
func ptxOperation(r *rule, st *trace.Static) error {
	if st.Type.Float() {
		return ptxFloat(r, st)
	}
	if st.Type == trace.TypeB128 {
		return ptx128(r, st)
	}
	var f integer
	op := st.Op.String()
	switch st.Op {
	case trace.OpAdd:
		f = addInt
	case trace.OpAnd:
		f = andInt
	case trace.OpOr:
		f = orInt
	case trace.OpXor:
		f = xorInt
	case trace.OpExch: // exch(r, s) = s
		f = exchInt
	case trace.OpCAS: // cas(r,s,t) = (r == s) ? t : r
		f = compareB
	case trace.OpInc: // inc(r, s) = (r >= s) ? 0 : r+1
		f, op = boundedInc, "inc.bounded"
	case trace.OpDec: // dec(r, s) = (r==0 || r > s) ? s : r-1
		f, op = boundedDec, "dec.bounded"
	case trace.OpMin, trace.OpMax:
		f, op = minMaxInt(st.Op == trace.OpMax, st.Type.Signed())
	default:
		return fmt.Errorf("the reference knows no PTX atom.%s.%s", st.Op, st.Type)
	}
	r.apply, r.op, r.family = onLow(f, r.width), op, intFamily(op)
	return nil
}

// minMaxInt is min or max, signed for the signed types (PTX .s32/.s64,
// SASS .S32/.S64, vISA IMIN/IMAX, LSC smin/smax) and unsigned otherwise.
func minMaxInt(greater, signed bool) (integer, string) {
	switch {
	case greater && signed:
		return maxSigned, "smax"
	case greater:
		return maxUnsigned, "umax"
	case signed:
		return minSigned, "smin"
	}
	return minUnsigned, "umin"
}

// ptx128 is the 128-bit atom of the Syntax: "atom.cas.b128 d, [a], b, c"
// and "atom.exch.b128 d, [a], b", the same formulas on all 128 bits.
func ptx128(r *rule, st *trace.Static) error {
	switch st.Op {
	case trace.OpExch:
		r.apply = func(_, b, _ wide) wide { return b }
	case trace.OpCAS:
		r.apply = func(old, b, c wide) wide {
			if old == b {
				return c
			}
			return old
		}
	default:
		return fmt.Errorf("128-bit %s: atom.b128 is only cas and exch", st.Op)
	}
	r.op = st.Op.String() + ".b128"
	return nil
}

// ptxFloat sets the formula of a float atom.
//
//   - add rounds to nearest even (PTX ISA, atom: "The floating-point
//     operation .add operation rounds to nearest even").
//   - .f32: "Current implementation of atom.add.f32 on global memory
//     flushes subnormal inputs and results to sign-preserving zero;
//     whereas atom.add.f32 on shared memory supports subnormal inputs and
//     results and doesn't flush them to zero." The vector .f32 forms are
//     global only. A generic address replays on global memory
//     (docs/status/ptx.md, Qualifiers).
//   - .f16, .bf16, .f16x2, .bf16x2 require .noftz, which "preserves
//     subnormal inputs and results".
//   - .f64: IEEE NaN rules (float.go, ieeeAdd).
//   - min and max (the vector forms): the PTX half-precision rule.
func ptxFloat(r *rule, st *trace.Static) error {
	f, packedPair := ptxFormat(st.Type)
	var op floatOp
	var how string
	switch {
	case st.Op == trace.OpAdd && f == f64:
		op, how = ieeeAddOp(f64), "ieee"
	case st.Op == trace.OpAdd && f == f32 && st.Space.Kind != trace.SpaceShared:
		op, how = nvidiaAddOp(f32, true), "nv.ftz"
	case st.Op == trace.OpAdd:
		op, how = nvidiaAddOp(f, false), "nv"
	case (st.Op == trace.OpMin || st.Op == trace.OpMax) && f.bytes() == 2:
		op, how = nvidiaMinMaxOp(f, st.Op == trace.OpMax), "nv"
	default:
		return fmt.Errorf("the reference knows no PTX atom.%s.%s", st.Op, st.Type)
	}
	r.apply, r.op = inFormat(f, op), floatName(st.Op.String(), how, st.Type.String())
	if packedPair {
		r.apply = halves(op)
	}
	return nil
}

// floatName names a float operation for the addresses table: the
// operation, the rule it follows (how) and the type, so that two accesses
// are "the same operation" only when they compute alike.
func floatName(op, how, typ string) string {
	return "f" + op + "." + how + "." + typ
}

// ptxFormat is the element format of a PTX float type, and whether the
// type packs two of them.
func ptxFormat(t trace.Type) (format, bool) {
	switch t {
	case trace.TypeF16:
		return f16, false
	case trace.TypeBF16:
		return bf16, false
	case trace.TypeF16x2:
		return f16, true
	case trace.TypeBF16x2:
		return bf16, true
	case trace.TypeF32:
		return f32, false
	}
	return f64, false
}
