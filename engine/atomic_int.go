package engine

// Integer and bit-size atomics: the operations every dialect shares. The
// formulas are the seeds' own:
//
//	PTX (ptx-atom.md, Semantics):
//	    inc(r, s)  = (r >= s) ? 0 : r+1;
//	    dec(r, s)  = (r==0 || r > s) ? s : r-1;
//	    exch(r, s) = s;
//	    cas(r,s,t) = (r == s) ? t : r;
//	SASS (sass-ATOM.txt, Atomic Operations table):
//	    .INC  M = (M >= Rb)? 0 : (M + 1);
//	    .DEC  M = (M == 0 || M > Rb)? Rb : M - 1;
//	    .CAS  if (M == Rb) M = Rc;
//	vISA (visa-DWORD_ATOMIC.md, DWORD_ATOMIC_OP): INC new = old+1, DEC
//	    new = old-1 (plain, no bound), PREDEC new = old-1 returning new,
//	    CMPXCHG new = (old==src1) ? src0 : old.
//
// Comparisons are unsigned unless the kind says signed; arithmetic wraps.

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
		return uint32(min(int32(old), int32(b)))
	case kMaxU:
		return max(old, b)
	case kMaxS:
		return uint32(max(int32(old), int32(b)))
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
	}
	return old
}

// op64 is the new memory value of a 64-bit atomic.
func op64(k kind, old, b, c uint64) uint64 {
	if k >= kFloatBase {
		return fop64(k, old, b, c)
	}
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
		return uint64(min(int64(old), int64(b)))
	case kMaxU:
		return max(old, b)
	case kMaxS:
		return uint64(max(int64(old), int64(b)))
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
	}
	return old
}

// op16 is the new memory value of a 16-bit atomic (PTX cas.b16, vISA .16).
func op16(k kind, old, b, c uint16) uint16 {
	if k >= kFloatBase {
		return fop16(k, old, b, c)
	}
	switch k {
	case kMinS:
		return uint16(min(int16(old), int16(b)))
	case kMaxS:
		return uint16(max(int16(old), int16(b)))
	}
	return uint16(op32(k, uint32(old), uint32(b), uint32(c)))
}
