package reference

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// vISA DWORD_ATOMIC: Intel Graphics Compiler vISA specification,
// DWORD_ATOMIC.
//
// Semantics: "dst[i] = surface[offset]; surface[offset] =
// op(surface[offset], src0, src1);" for every enabled channel, with op
// from the DWORD_ATOMIC_OP table (new is the value written, old the value
// in the surface; the lane gets "Return Value": the old value, or for
// PREDEC the new one). The parser gives Src0 as the first source (b) and
// Src1 as the second (c).
//
// Notes, 16bit Atomics: "lower 16 bits of each dword will be reinterpreted
// as its 16 bit counterpart. Each access is a word and must be
// word-aligned." Description, Op bit 5: "only the lower 16bit part of each
// dword is used. The writeback (if any) has the same unpacked layout": the
// lane gets the 16-bit old value, zero-extended (docs/status/visa.md,
// ".16 return value").
//
// Properties: "Out-of-bound Access: On read: zeros are returned. On write:
// data is dropped." (fault out_of_bounds).

// visaRule works out the rule of a DWORD_ATOMIC.
func visaRule(st *trace.Static) (*rule, error) {
	width := 4
	switch st.Type {
	case trace.TypeU16, trace.TypeS16, trace.TypeF16: // .16: UW, W, HF
		width = 2
	case trace.TypeU32, trace.TypeS32, trace.TypeF32: // UD, D, F
	default:
		return nil, fmt.Errorf("the reference knows no DWORD_ATOMIC on %s", st.Type)
	}
	r := &rule{st: st, elems: 1, width: width, outside: faultOutOfBounds, give: giveOld}
	r.addr = elementsAt(st, []int64{0})
	// src0, src1: the low width bytes of each source dword.
	r.source = textSources(st, 0, width)
	if st.Type.Float() {
		return r, visaFloat(r, st)
	}
	var f integer
	op := st.Op.String()
	switch st.Op {
	case trace.OpAdd: // ADD: new = old + src0
		f = addInt
	case trace.OpSub: // SUB: new = old - src0
		f = subInt
	case trace.OpInc: // INC: new = old+1
		f = plusOne
	case trace.OpDec: // DEC: new = old-1
		f = minusOne
	case trace.OpPreDec: // PREDEC: new = old - 1, Return Value: New value
		f, op, r.give = minusOne, "dec", giveNew
	case trace.OpMin, trace.OpMax: // MIN, MAX unsigned (UD); IMIN, IMAX signed (D)
		f, op = minMaxInt(st.Op == trace.OpMax, st.Type.Signed())
	case trace.OpExch: // XCHG: new = src0
		f = exchInt
	case trace.OpCAS: // CMPXCHG: new = (old==src1) ? src0 : old
		f, op, r.casNewIsB = cmpxchg, "cmpxchg", true
	case trace.OpAnd: // AND: new = old & src0
		f = andInt
	case trace.OpOr: // OR: new = old | src0
		f = orInt
	case trace.OpXor: // XOR: new = old ^ src0
		f = xorInt
	default:
		return nil, fmt.Errorf("the reference knows no DWORD_ATOMIC %s", st.Op)
	}
	r.apply, r.op, r.family = onLow(f, width), op, intFamily(op)
	return r, nil
}

// cmpxchg is DWORD_ATOMIC_OP's CMPXCHG, "new = (old==src1) ? src0 :
// old": it compares with the second source and writes the first.
func cmpxchg(old, src0, src1 uint64, _ int) uint64 {
	if old == src1 {
		return src0
	}
	return old
}

// visaFloat sets the formula of FMAX, FMIN and FCMPWR on F (f32) or, with
// .16, HF (f16):
//
//	FMAX:   new = max(old, src0)
//	FMIN:   new = min(old, src0)
//	FCMPWR: new = (src0 == old) ? src1 : old
//
// min and max by Intel's rule, FCMPWR's == by IEEE equality (float.go).
func visaFloat(r *rule, st *trace.Static) error {
	f := f32
	if r.width == 2 {
		f = f16
	}
	switch st.Op {
	case trace.OpMax, trace.OpMin:
		r.apply = inFormat(f, intelMinMaxOp(f, st.Op == trace.OpMax))
		r.op = floatName(st.Op.String(), "intel", st.Type.String())
	case trace.OpCAS: // src0 is the comparand, src1 the new value
		r.apply = inFormat(f, compareSwapOp(f))
		r.op = floatName(st.Op.String(), "ieee", st.Type.String())
	default:
		return fmt.Errorf("the reference knows no DWORD_ATOMIC float %s", st.Op)
	}
	return nil
}
