package engine

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// plan is what the engine needs to know of one Static, worked out once.
type plan struct {
	st     *trace.Static
	kind   kind
	size   uint8 // bytes per element access: 2, 4, 8 or 16
	retNew bool  // the lane gets the new value (vISA PREDEC), not the old
	// dropOOB: an access outside every region reads zero and drops its
	// write (vISA, LSC); otherwise it is an out_of_range fault (PTX, SASS).
	dropOOB bool
	// alignFault: a misaligned address faults (PTX, SASS).
	alignFault bool
	regions    []trace.Region // regions of the space; none means unbounded
}

// ptxKinds maps a PTX (op, type) to its semantics.
func ptxKind(op trace.Op, t trace.Type) (kind, bool) {
	signed := t.Signed()
	switch op {
	case trace.OpAdd:
		if t.Float() {
			return 0, false
		}
		return kAdd, true
	case trace.OpExch:
		return kExch, true
	case trace.OpCAS:
		return kCAS, true
	case trace.OpMin:
		if t.Float() {
			return 0, false
		}
		if signed {
			return kMinS, true
		}
		return kMinU, true
	case trace.OpMax:
		if t.Float() {
			return 0, false
		}
		if signed {
			return kMaxS, true
		}
		return kMaxU, true
	case trace.OpInc:
		return kIncBounded, true
	case trace.OpDec:
		return kDecBounded, true
	case trace.OpAnd:
		return kAnd, true
	case trace.OpOr:
		return kOr, true
	case trace.OpXor:
		return kXor, true
	}
	return 0, false
}

func newPlan(st *trace.Static, regions map[trace.Space][]trace.Region) (*plan, error) {
	p := &plan{st: st, regions: regions[st.Space]}
	switch st.Dialect {
	case trace.DialectPTX:
		k, ok := ptxKind(st.Op, st.Type)
		if !ok || st.Elems != 1 {
			return nil, fmt.Errorf("%s: %s.%s is not replayed yet", st.Text, st.Op, st.Type)
		}
		p.kind = k
		p.alignFault = true
	default:
		return nil, fmt.Errorf("%s: the %s dialect is not replayed yet", st.Text, st.Dialect)
	}
	p.size = uint8(st.Type.Size())
	switch p.size {
	case 2, 4, 8, 16:
	default:
		return nil, fmt.Errorf("%s: %d-byte accesses are not replayed", st.Text, p.size)
	}
	if p.size == 16 && p.kind != kCAS && p.kind != kExch {
		return nil, fmt.Errorf("%s: 128-bit %s is not an atomic any document defines", st.Text, st.Op)
	}
	return p, nil
}

// check returns the fault of an access of p.size bytes at addr, if any.
func (p *plan) check(addr uint64) Fault {
	size := uint64(p.size)
	if p.alignFault && addr&(size-1) != 0 {
		return FaultMisaligned
	}
	if len(p.regions) == 0 {
		if addr+size-1 < addr { // wraps past the top of the address space
			if p.dropOOB {
				return FaultOutOfBounds
			}
			return FaultOutOfRange
		}
		return FaultNone
	}
	for i := range p.regions {
		if p.regions[i].Contains(addr, size) {
			return FaultNone
		}
	}
	if p.dropOOB {
		return FaultOutOfBounds
	}
	return FaultOutOfRange
}
