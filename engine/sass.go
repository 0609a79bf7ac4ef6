package engine

import (
	"fmt"
	"slices"

	"github.com/gpureplay/replay/trace"
)

// SASS ATOM (NVIDIA CUDA Binary Utilities, ATOM; below, the seed). The parser
// (trace/parse_sass.go) and newPlan admit exactly the (op, sz) pairs of the
// SASS table of legal forms (trace/forms.go, the seed's Atomic Operations
// table); every row is "Rd = M; M = <formula>" and maps to a kind:
//
//	.ADD  .U32 .S32 .U64     M = M + Rb                               kAdd
//	.ADD  .F32.FTZ.RN        M = M + Rb, f32, flush to zero            kFAddF32FTZ
//	.ADD  .F16x2.RN          M = M + Rb, per f16 half                  kFAddF16x2
//	.ADD  .F64.RN            M = M + Rb, f64                           kFAddF64
//	.MIN  .U32 .U64          M = min(M, Rb), unsigned                  kMinU
//	.MIN  .S32 .S64          M = min(M, Rb), signed                    kMinS
//	.MIN  .F16x2.RN          M = min(M, Rb), per f16 half              kFMinF16x2PTX
//	.MAX  (as .MIN)                                                    kMaxU kMaxS kFMaxF16x2PTX
//	.INC  .U32               M = (M >= Rb)? 0 : (M + 1)                kIncBounded
//	.DEC  .U32               M = (M == 0 || M > Rb)? Rb : M - 1        kDecBounded
//	.AND .OR .XOR  .U32 .S32 .U64                                      kAnd kOr kXor
//	.EXCH .U32 .S32 .U64     M = Rb                                    kExch
//	.CAS  .U32 .S32 .U64     if (M == Rb) M = Rc                       kCAS, b = Rb, c = Rc
//	.SAFEADD .U64            rejected by the parser: the seed does not define it
//
// Every lane returns the prior value M to Rd. Faults: misaligned and
// out-of-range are plan.check's ("Memory addresses must be naturally
// aligned", "An address outside an allocated memory region causes an
// address out-of-range error"); invalid_space is sassWindows'.

// planSASS fills p for a SASS ATOM.
func planSASS(p *plan) error {
	st := p.st
	k, ok := sassKind(st.Op, st.Type)
	if !ok {
		return fmt.Errorf("ATOM.%s on %s is not in the Atomic Operations table of CUDA Binary Utilities, ATOM", st.Op, st.Type)
	}
	if k == kFAddF16x2 && st.Flags&trace.FlagFTZ != 0 {
		k = kFAddF16x2FTZ // .F16x2.FTZ.RN, from the .sz list
	}
	p.kind = k
	p.size = uint8(st.Type.Size()) // f16x2 is one 32-bit word
	return nil
}

// sassKind maps a SASS (op, type) to its semantics.
func sassKind(op trace.Op, t trace.Type) (kind, bool) {
	switch t {
	case trace.TypeF32:
		if op == trace.OpAdd {
			return kFAddF32FTZ, true // the only F32 form is .F32.FTZ.RN
		}
		return 0, false
	case trace.TypeF64:
		if op == trace.OpAdd {
			return kFAddF64, true
		}
		return 0, false
	case trace.TypeF16x2:
		switch op {
		case trace.OpAdd:
			return kFAddF16x2, true
		case trace.OpMin:
			return kFMinF16x2PTX, true
		case trace.OpMax:
			return kFMaxF16x2PTX, true
		}
		return 0, false
	case trace.TypeU32:
	case trace.TypeS32, trace.TypeU64:
		if op == trace.OpInc || op == trace.OpDec {
			return 0, false // .INC and .DEC take only .U32
		}
	case trace.TypeS64:
		if op != trace.OpMin && op != trace.OpMax {
			return 0, false // only .MIN and .MAX take .S64
		}
	default:
		return 0, false
	}
	return intKind(op, t, true)
}

// sassWindows makes p fault invalid_space on an access that touches a
// shared or local window of the generic address space: "The generic thread
// address space accesses global memory, unless it falls in the Local or
// Shared address window. An ATOM instruction must address global memory,
// otherwise it generates an invalid address space error." An access
// overlapping a window by any byte is in it. No windows, no check.
func sassWindows(p *plan, ws []trace.Window) {
	if len(ws) == 0 {
		return
	}
	p.windows = slices.Clone(ws)
}

// inWindow reports whether the bytes first..last touch one of ws.
func inWindow(ws []trace.Window, first, last uint64) bool {
	for _, w := range ws {
		if first <= w.Base+(w.Size-1) && w.Base <= last {
			return true
		}
	}
	return false
}
