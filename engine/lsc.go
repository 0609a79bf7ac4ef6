package engine

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// Intel vISA LSC_UNTYPED (../shared/seeds/visa-LSC_UNTYPED.md).
//
//   - Loads (lsc_load, _strided, _quad) read each active lane's elements:
//     kLoad, one result row per lane and element, the value being the datum
//     as it sits in memory (d8u32/d16u32 zero-extend to 32 bits, which is
//     the memory value itself).
//   - Stores (lsc_store, _strided, _quad, _uncompressed) write Src1Data's
//     element e of lane n (trace.Src.Elem, in the register's SIMT or
//     transposed order) at the lane's address plus the element offset:
//     kExch with nothing returned.
//   - Atomics are one element per lane; their kinds are the shared integer
//     formulas (atomic_int.go) and the Intel float kinds (atomic_float.go).
//     lsc_atomic_iinc/idec are plain old+1/old-1 (kInc/kDec), not PTX's
//     bounded forms; lsc_atomic_store is an exchange that returns the old
//     value; lsc_atomic_icas/fcas compare with Src1Data and write Src2Data.
//   - lsc_apndctr_atomic_add/sub act on the surface's single append counter,
//     space apndctr(N) at address 0: lanes in ascending order each get the
//     running counter and add (subtract) their Src0Data, as in the seed's
//     AppendCounterAtomicAdd.
//   - Out of bounds (outside every declared region of the space): reads
//     return zero and writes are dropped (dropOOB), as for vISA.
//
// Not replayed (planLSC returns an error): lsc_load_status (it reports
// TRTT page validity, which a trace does not record), the d16u32h data
// size (its datum sits in the upper half of the register slot, and a plan
// has no hook to shift it), and the block2d operations (see
// docs/status/lsc.md).

// planLSC fills p for an Intel LSC instruction.
func planLSC(p *plan) error {
	st := p.st
	l, err := trace.LSCOf(st)
	if err != nil {
		return err
	}
	p.dropOOB = true
	switch {
	case l.Status():
		return fmt.Errorf("lsc_load_status is not replayed: it reports page validity (TRTT), which a trace does not record")
	case l.Block2D():
		return fmt.Errorf("lsc_%s is not replayed yet", l.SubOp)
	case l.Data == trace.LSCD16U32H:
		return fmt.Errorf("the d16u32h data size is not replayed yet")
	}
	p.size = uint8(l.Data.MemBytes())
	switch {
	case l.Load():
		p.kind = kLoad
		p.b, p.c = nil, nil
		return nil
	case l.Store():
		p.kind = kExch
		p.noRet = true
		return nil
	}
	k, ok := lscKind(st.Op, st.Type, l.Float)
	if !ok {
		return fmt.Errorf("lsc_%s on %s is not replayed", l.SubOp, l.Data)
	}
	p.kind = k
	if k == kLoad || k == kInc || k == kDec {
		p.b, p.c = nil, nil
	}
	return nil
}

// lscKind maps an LSC atomic's (op, type) to its semantics. st.Type holds
// the signedness (smin/smax) and, for float atomics, the float type.
func lscKind(op trace.Op, t trace.Type, float bool) (kind, bool) {
	if float {
		return lscFloatKind(op, t)
	}
	signed := t.Signed()
	switch op {
	case trace.OpInc:
		return kInc, true
	case trace.OpDec:
		return kDec, true
	case trace.OpLoad:
		return kLoad, true
	case trace.OpExch:
		return kExch, true
	case trace.OpAdd:
		return kAdd, true
	case trace.OpSub:
		return kSub, true
	case trace.OpCAS:
		return kCAS, true
	case trace.OpMin:
		if signed {
			return kMinS, true
		}
		return kMinU, true
	case trace.OpMax:
		if signed {
			return kMaxS, true
		}
		return kMaxU, true
	case trace.OpAnd:
		return kAnd, true
	case trace.OpOr:
		return kOr, true
	case trace.OpXor:
		return kXor, true
	}
	return 0, false
}

// lscFloatKinds lists the float kinds of LSC fadd, fsub, fmin, fmax and
// fcas per element type (atomic_float.go: IEEE NaN, subnormals kept, the
// Intel min/max rule).
var lscFloatKinds = map[trace.Op][3]kind{
	//              f16            f32            f64
	trace.OpAdd: {kFAddF16Intel, kFAddF32Intel, kFAddF64},
	trace.OpSub: {kFSubF16Intel, kFSubF32Intel, kFSubF64},
	trace.OpMin: {kFMinF16Intel, kFMinF32Intel, kFMinF64Intel},
	trace.OpMax: {kFMaxF16Intel, kFMaxF32Intel, kFMaxF64Intel},
	trace.OpCAS: {kFCASF16, kFCASF32, kFCASF64},
}

func lscFloatKind(op trace.Op, t trace.Type) (kind, bool) {
	ks, ok := lscFloatKinds[op]
	if !ok {
		return 0, false
	}
	switch t {
	case trace.TypeF16:
		return ks[0], true
	case trace.TypeF32:
		return ks[1], true
	case trace.TypeF64:
		return ks[2], true
	}
	return 0, false
}
