package engine

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// PTX atom (NVIDIA PTX ISA, atom). Integer semantics are the formulas of
// PTX ISA, atom: Semantics (atomic_int.go); inc and dec are the bounded forms.
// newPlan admits only the forms of the PTX table (trace/forms.go); a row
// that ptxKind does not map is refused here (TestFormsPlan names it).

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
	if st.Elems > 1 {
		// A vector atom accesses adjacent elements, each atomic on its own
		// (PTX ISA, atom: Description: "the atomicity is guaranteed separately for each of
		// the individual scalar elements"); the vector as a whole must be
		// aligned to its size (PTX ISA, "Addresses as Operands": vector
		// accesses are aligned to the vector's total size).
		p.vecAlign = uint64(st.Elems * st.Type.Size())
	}
	return nil
}

// ptxKind maps a PTX (op, type, space) to its semantics.
func ptxKind(op trace.Op, t trace.Type, space trace.Space) (kind, bool) {
	if t.Float() {
		return ptxFloatKind(op, t, space)
	}
	return intKind(op, t, true)
}

// ptxFloatKind maps PTX float atomics to their kinds: add rounds to
// nearest even; "atom.add.f32 on global memory flushes subnormal inputs and
// results to sign-preserving zero; whereas atom.add.f32 on shared memory
// supports subnormal inputs and results"; the f16 and bf16 forms require
// .noftz and keep subnormals; min and max exist only in the vector forms.
func ptxFloatKind(op trace.Op, t trace.Type, space trace.Space) (kind, bool) {
	switch op {
	case trace.OpAdd:
		switch t {
		case trace.TypeF32:
			if space.Kind == trace.SpaceShared {
				return kFAddF32, true
			}
			return kFAddF32FTZ, true
		case trace.TypeF64:
			return kFAddF64, true
		case trace.TypeF16:
			return kFAddF16, true
		case trace.TypeBF16:
			return kFAddBF16, true
		case trace.TypeF16x2:
			return kFAddF16x2, true
		case trace.TypeBF16x2:
			return kFAddBF16x2, true
		}
	case trace.OpMin:
		switch t {
		case trace.TypeF16:
			return kFMinF16PTX, true
		case trace.TypeBF16:
			return kFMinBF16PTX, true
		case trace.TypeF16x2:
			return kFMinF16x2PTX, true
		case trace.TypeBF16x2:
			return kFMinBF16x2PTX, true
		}
	case trace.OpMax:
		switch t {
		case trace.TypeF16:
			return kFMaxF16PTX, true
		case trace.TypeBF16:
			return kFMaxBF16PTX, true
		case trace.TypeF16x2:
			return kFMaxF16x2PTX, true
		case trace.TypeBF16x2:
			return kFMaxBF16x2PTX, true
		}
	}
	return 0, false
}
