package engine

import (
	"fmt"
	"unsafe"

	"github.com/gpureplay/replay/trace"
)

// Integer and bit-size atomics: the operations every dialect shares. The
// formulas are those of the public ISA documents:
//
//	PTX (PTX ISA, atom: Semantics):
//	    inc(r, s)  = (r >= s) ? 0 : r+1;
//	    dec(r, s)  = (r==0 || r > s) ? s : r-1;
//	    exch(r, s) = s;
//	    cas(r,s,t) = (r == s) ? t : r;
//	SASS (CUDA Binary Utilities, ATOM: Atomic Operations table):
//	    .INC  M = (M >= Rb)? 0 : (M + 1);
//	    .DEC  M = (M == 0 || M > Rb)? Rb : M - 1;
//	    .CAS  if (M == Rb) M = Rc;
//	vISA (vISA spec, DWORD_ATOMIC: DWORD_ATOMIC_OP): INC new = old+1, DEC
//	    new = old-1 (plain, no bound), PREDEC new = old-1 returning new,
//	    CMPXCHG new = (old==src1) ? src0 : old.
//
// Comparisons are unsigned unless the kind says signed; arithmetic wraps.

// intKind maps a canonical integer or bit-size operation to its kind:
// min and max take their signedness from the type; inc and dec are the
// bounded PTX/SASS forms when bounded is set, and plain +1/-1 (vISA, LSC)
// otherwise. PREDEC maps to kDec: the planner sets retNew.
func intKind(op trace.Op, t trace.Type, bounded bool) (kind, bool) {
	switch op {
	case trace.OpAdd:
		return kAdd, true
	case trace.OpSub:
		return kSub, true
	case trace.OpExch:
		return kExch, true
	case trace.OpCAS:
		return kCAS, true
	case trace.OpMin:
		if t.Signed() {
			return kMinS, true
		}
		return kMinU, true
	case trace.OpMax:
		if t.Signed() {
			return kMaxS, true
		}
		return kMaxU, true
	case trace.OpInc:
		if bounded {
			return kIncBounded, true
		}
		return kInc, true
	case trace.OpDec, trace.OpPreDec:
		if bounded {
			return kDecBounded, true
		}
		return kDec, true
	case trace.OpAnd:
		return kAnd, true
	case trace.OpOr:
		return kOr, true
	case trace.OpXor:
		return kXor, true
	case trace.OpLoad:
		return kLoad, true
	}
	return 0, false
}

// kind is one operation's semantics, independent of width.
type kind uint8

const (
	kAdd        kind = iota + 1
	kSub             // vISA SUB, LSC isub
	kExch            // PTX exch, SASS EXCH, vISA XCHG, LSC atomic_store
	kCAS             // new = (old == b) ? c : old
	kMinU            // unsigned min
	kMinS            // signed min
	kMaxU            // unsigned max
	kMaxS            // signed max
	kIncBounded      // PTX/SASS inc: (old >= b) ? 0 : old+1
	kDecBounded      // PTX/SASS dec: (old == 0 || old > b) ? b : old-1
	kInc             // vISA/LSC: old+1
	kDec             // vISA/LSC: old-1
	kAnd
	kOr
	kXor
	kLoad // atomic load: memory unchanged
)

// op32 is the new memory value of a 32-bit atomic.
func op32(k kind, old, b, c uint32) uint32 {
	if k >= kFloatBase {
		return fop32(k, old, b, c)
	}
	return opInt(k, old, b, c)
}

// op64 is the new memory value of a 64-bit atomic.
func op64(k kind, old, b, c uint64) uint64 {
	if k >= kFloatBase {
		return fop64(k, old, b, c)
	}
	return opInt(k, old, b, c)
}

// opInt is an integer kind's formula at any width. Signed comparisons
// compare with the sign bit flipped, which orders two's complement values
// as unsigned ones.
func opInt[T uint16 | uint32 | uint64](k kind, old, b, c T) T {
	sign := ^T(0) ^ ^T(0)>>1
	switch k {
	case kAdd:
		return old + b
	case kSub:
		return old - b
	case kExch:
		return b
	case kCAS:
		if old == b {
			return c
		}
		return old
	case kMinU:
		return min(old, b)
	case kMinS:
		if old^sign < b^sign {
			return old
		}
		return b
	case kMaxU:
		return max(old, b)
	case kMaxS:
		if old^sign > b^sign {
			return old
		}
		return b
	case kIncBounded:
		if old >= b {
			return 0
		}
		return old + 1
	case kDecBounded:
		if old == 0 || old > b {
			return b
		}
		return old - 1
	case kInc:
		return old + 1
	case kDec:
		return old - 1
	case kAnd:
		return old & b
	case kOr:
		return old | b
	case kXor:
		return old ^ b
	case kLoad:
		return old // an atomic load leaves memory as it is
	}
	panic(noFormula{k, int(unsafe.Sizeof(old)) * 8})
}

// noFormula is the panic of an op function asked for a kind its switch
// does not name. Plans ask each op function once, for their own kind and
// width (formulaErr), so a replay never meets it: a kind without a formula
// is an error when the instruction is planned.
type noFormula struct {
	k    kind
	bits int
}

func (e noFormula) Error() string {
	return fmt.Sprintf("no %d-bit formula for operation kind %d (engine/atomic_int.go, atomic_float.go)", e.bits, e.k)
}

// formulaErr reports whether kind k has a formula for size-byte accesses,
// by applying it once: each op function's switch is the one list of its
// formulas, so nothing else can drift from it.
func formulaErr(k kind, size uint8) (err error) {
	defer func() {
		if r := recover(); r != nil {
			nf, ok := r.(noFormula)
			if !ok {
				panic(r)
			}
			err = nf
		}
	}()
	switch size {
	case 1, 2:
		op16(k, 0, 0, 0)
	case 4:
		op32(k, 0, 0, 0)
	case 8:
		op64(k, 0, 0, 0)
	case 16:
		op128(k, 0, 0, 0, 0, 0, 0)
	default:
		return fmt.Errorf("no %d-byte accesses", size)
	}
	return nil
}

// op16 is the new memory value of a 16-bit atomic (PTX cas.b16, vISA .16,
// LSC d16; 8-bit LSC data goes through it zero-extended).
func op16(k kind, old, b, c uint16) uint16 {
	if k >= kFloatBase {
		return fop16(k, old, b, c)
	}
	return opInt(k, old, b, c)
}
