package engine

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// PTX atom (../shared/seeds/ptx-atom.md). Integer semantics are the seed's
// formulas (atomic_int.go); inc and dec are the bounded forms.

// planPTX fills p for a PTX atom.
func planPTX(p *plan) error {
	st := p.st
	k, ok := ptxKind(st.Op, st.Type, st.Space)
	if !ok {
		return fmt.Errorf("atom.%s.%s is not replayed yet", st.Op, st.Type)
	}
	p.kind = k
	if st.Type == trace.TypeF16x2 || st.Type == trace.TypeBF16x2 {
		p.size = 4
	}
	return nil
}

// ptxKind maps a PTX (op, type, space) to its semantics.
func ptxKind(op trace.Op, t trace.Type, space trace.Space) (kind, bool) {
	if t.Float() {
		return 0, false
	}
	signed := t.Signed()
	switch op {
	case trace.OpAdd:
		return kAdd, true
	case trace.OpExch:
		return kExch, true
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
