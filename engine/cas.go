package engine

import (
	"sync/atomic"

	"github.com/gpureplay/replay/internal/fp"
)

// A compare-and-swap's outcome, for the instructions table's cas_failed
// (InstStat.CASFailed): a lane-element that ran failed when the old value
// it found was not its compare operand (b), so memory kept that value.
// The apply loops count the failures of a segment and add them to the
// instruction's row once, atomically: an instruction's segments may apply
// on several owners at once.

// isCAS reports whether k is a compare-and-swap, integer or float.
func isCAS(k kind) bool {
	return k == kCAS || k == kFCASF16 || k == kFCASF32 || k == kFCASF64
}

// casMatched reports whether a CAS of kind k and size bytes that found
// old (oldHi: the high half of a 128-bit one) swapped: the comparison of
// op16, op32, op64 and op128, at the access's width (an 8-bit access as
// op16 sees it, zero-extended; float kinds by IEEE equality).
func casMatched(k kind, size uint8, old, oldHi, b, bHi uint64) bool {
	switch size {
	case 16:
		return old == b && oldHi == bHi
	case 8:
		if k == kFCASF64 {
			return fp.EqF64(old, b)
		}
		return old == b
	case 4:
		if k == kFCASF32 {
			return fp.EqF32(uint32(old), uint32(b))
		}
		return uint32(old) == uint32(b)
	case 2:
		if k == kFCASF16 {
			return fp.EqF16(uint16(old), uint16(b))
		}
		return uint16(old) == uint16(b)
	}
	return uint16(uint8(old)) == uint16(b) // size 1
}

// casOld is the old value a CAS found, from what applyWord returned: the
// returned value, unless it came back shifted into the upper half (LSC
// d16u32h).
func casOld(p *plan, ret uint64) uint64 {
	if p.retShl16 {
		return ret >> 16
	}
	return ret
}

// addCASFailed adds n failed lane-elements to the statistics row at pos.
func (b *batch) addCASFailed(pos uint32, n uint32) {
	if n > 0 {
		atomic.AddUint32(&b.stats[pos].CASFailed, n)
	}
}
