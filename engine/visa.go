package engine

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// vISA DWORD_ATOMIC (Intel Graphics Compiler vISA specification,
// DWORD_ATOMIC: Description; below, the seed). The table
// DWORD_ATOMIC_OP gives each operation's formula; the parser (trace/
// parse_visa.go) puts Src0 in Static.B and Src1 in Static.C, and planVISA
// maps them onto the kind's b and c:
//
//	ADD     new = old + src0          kAdd
//	SUB     new = old - src0          kSub
//	INC     new = old+1               kInc (plain, no bound)
//	DEC     new = old-1               kDec
//	MIN     new = min(old, src0)      kMinU
//	MAX     new = max(old, src0)      kMaxU
//	XCHG    new = src0                kExch
//	CMPXCHG new = (old==src1) ? src0 : old   kCAS, b = src1, c = src0
//	AND/OR/XOR                        kAnd, kOr, kXor
//	IMIN    min(old, src0), signed    kMinS
//	IMAX    max(old, src0), signed    kMaxS
//	PREDEC  new = old - 1, returns the new value   kDec, retNew
//	FMAX    new = max(old, src0)      kFMaxF32Intel, kFMaxF16Intel (.16, HF)
//	FMIN    new = min(old, src0)      kFMinF32Intel, kFMinF16Intel
//	FCMPWR  new = (src0 == old) ? src1 : old   kFCASF32, kFCASF16; b = src0, c = src1
//
// Every lane returns the old value except PREDEC ("Return Value: New
// value"). An access outside every declared region of its space reads zero
// and drops its write ("Out-of-bound Access: On read: zeros are returned.
// On write: data is dropped."). With .16 each access is a naturally aligned
// word ("Each access is a word and must be word-aligned") and only the low
// 16 bits of each source dword are used; the plan's size comes from the
// Static's 16-bit type.

// planVISA fills p for a vISA DWORD_ATOMIC.
func planVISA(p *plan) error {
	st := p.st
	p.dropOOB = true
	if st.Type.Float() {
		return planVISAFloat(p)
	}
	k, ok := intKind(st.Op, st.Type, false) // INC, DEC: plain +1, -1
	if !ok || st.Op == trace.OpLoad {
		return fmt.Errorf("DWORD_ATOMIC %s on %s is not an operation of DWORD_ATOMIC_OP", st.Op, st.Type)
	}
	p.kind = k
	switch st.Op {
	case trace.OpPreDec:
		p.retNew = true // "Return Value: New value"
	case trace.OpCAS:
		// CMPXCHG: new = (old==src1) ? src0 : old. kCAS compares with b
		// and writes c, so b is Src1 and c is Src0.
		p.b, p.c = st.C, st.B
	}
	return nil
}

// planVISAFloat fills p for FMAX, FMIN and FCMPWR on F, or HF with .16.
// The arithmetic is atomic_float.go's: min/max by Intel's rule
// (fp.MinMaxIntel), FCMPWR "new = (src0 == old) ? src1 : old" by IEEE
// equality, so b is Src0 (the comparand) and c is Src1 (the new value):
// the opposite of CMPXCHG's order.
func planVISAFloat(p *plan) error {
	st := p.st
	half := st.Type == trace.TypeF16
	if !half && st.Type != trace.TypeF32 {
		return fmt.Errorf("DWORD_ATOMIC %s on %s: the float operations take HF or F", st.Op, st.Type)
	}
	pick := func(h, f kind) kind {
		if half {
			return h
		}
		return f
	}
	switch st.Op {
	case trace.OpMax:
		p.kind = pick(kFMaxF16Intel, kFMaxF32Intel)
	case trace.OpMin:
		p.kind = pick(kFMinF16Intel, kFMinF32Intel)
	case trace.OpCAS:
		p.kind = pick(kFCASF16, kFCASF32)
		p.b, p.c = st.B, st.C
	default:
		return fmt.Errorf("DWORD_ATOMIC %s on %s is not an operation of DWORD_ATOMIC_OP", st.Op, st.Type)
	}
	return nil
}
