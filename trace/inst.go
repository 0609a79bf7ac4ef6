package trace

// Role says what an input operand is used for.
type Role uint8

const (
	RoleAddr Role = iota + 1 // address base register (Ra, a, Element_offset, Src0Addrs)
	RoleSrcB                 // first source (b, Rb, Src0, Src1Data)
	RoleSrcC                 // second source (c, Rc, Src1, Src2Data)
	RolePred                 // predicate, bound to a lane mask
)

// Input is one register or symbol an instruction reads. Its values are
// bound per lane in the text form and stored as a [Vector].
type Input struct {
	Name string
	Role Role
	// Bits is the width of the bound value: 32 or 64 for addresses and
	// integers, the type's width for data, 128 for b128, 32 for predicates.
	Bits int
	// Type encodes literals bound to this input (floats are rounded into it).
	Type Type
	// Elems is how many values each lane holds: 1 for a plain register;
	// more for an LSC data register of a vector access (d32x4 holds 4
	// values per lane). A list then holds ExecSize*Elems values, in the
	// register's order: element-major (SIMT: element v of lane n is at
	// v*ExecSize+n) unless Transposed (lane-major: n*Elems+v).
	Elems      int
	Transposed bool
}

// Count is the number of values a list binding of this input holds.
func (in *Input) Count(execSize int) int {
	if in.Elems > 1 {
		return execSize * in.Elems
	}
	return execSize
}

// Src is one source value of one element: an input's per-lane value or an
// immediate written in the instruction text.
type Src struct {
	In   int    // index into Static.Inputs, or -1 for an immediate
	Imm  uint64 // the immediate's bit pattern (low 64 bits)
	Hi   uint64 // high 64 bits of a 128-bit immediate
	Elem int    // which of the input's per-lane values (Input.Elems > 1)
}

// Static is one distinct instruction text, parsed. It holds everything the
// text fixes; per-lane values come with each [Inst].
type Static struct {
	Text     string // the instruction text as written (a trailing ';' kept), outer blanks and comment removed
	Dialect  Dialect
	Op       Op
	Type     Type
	Space    Space
	ExecSize int // lanes: 32 for PTX and SASS, from the text for vISA and LSC

	// Sem, Scope and Hints keep qualifiers that do not change a replay's
	// result (memory order, scope, cache hints), for the statistics.
	Sem, Scope string

	// LSC is what an Intel LSC instruction's text fixes beyond the fields
	// above (its sub-operation, data size, caching, block2d shape …), as
	// the parser read it; nil for the other dialects.
	LSC *LSC

	Inputs []Input // the registers and symbols the instruction reads

	// The effective address of lane n, element e is
	//   (AddrScale*base(n) + AddrImm + n*LanePitch + ElemOff(e)) mod 2^AddrBits
	// where base(n) is the address input's value in lane n (lane 0's for
	// every lane when AddrUniform), or 0 when Addr is -1 (absolute).
	Addr        int   // index into Inputs of the address base, or -1 (absolute)
	AddrImm     int64 // immediate offset added to the base
	AddrScale   int64 // LSC AddrScale; 1 elsewhere
	AddrBits    int   // width the address wraps at: 16, 32 or 64
	AddrUniform bool  // one base for all lanes (LSC strided)
	LanePitch   int64 // LSC strided: bytes between successive lanes
	Elems       int   // elements per lane: the vector width, 1 for scalar
	// ElemOffsets gives each element's byte offset from the lane's address
	// when they are not consecutive (LSC quad channel masks); nil means
	// element e is at e*Type.Size().
	ElemOffsets []int64
	B, C        []Src  // per element: the first and second source (C only for cas)
	Pred        int    // index into Inputs of the predicate, or -1
	PredNeg     bool   // @!p
	HasDst      bool   // false when the destination is _, RZ, V0, null, %null
	Dst         string // destination as written
	Flags       Flags
}

// Flags are per-instruction modifiers that change semantics.
type Flags uint16

const (
	FlagFTZ   Flags = 1 << iota // flush subnormals (SASS .FTZ)
	FlagNoFTZ                   // PTX .noftz
)

// Inst is one record of a trace: an executed instruction (a Static and the
// values its inputs held), or, when Dir is set, a directive met between
// instructions.
type Inst struct {
	Seq    uint64 // index in the trace, from 0; for a directive, the next instruction's
	Line   int    // line in the source text, 0 when read from a binary trace
	Static *Static
	// Dir is set, and Static nil, when the record is a .init or .region
	// after the first instruction. Group, Warp, Mask and Vals mean nothing
	// then: a .init of a per-group space names its group in Init.Group.
	Dir   *Directive
	Group int64
	Warp  int64
	// Mask is the active-lane mask (the reserved binding mask=); lanes at or
	// above Static.ExecSize are never active.
	Mask uint32
	Vals []Vector // one per Static.Inputs
	// Part is set on an instruction read from a split file (replay split,
	// docs/FORMAT.md "Split files"), nil otherwise: Mask then holds only
	// the lanes that have an element in the file's partition, and Part
	// what the instruction's statistics row needs beyond them.
	Part *PartInfo
	// RepeatMasks is set only by a Repeats (Source, CapRepeat) that
	// consumed records repeating this instruction but for their masks
	// (an append queue's warps): the i-th's Mask is RepeatMasks[i-1].
	// Nil otherwise: after Next, NextInto, or a Repeats of records that
	// have the instruction's own mask.
	RepeatMasks []uint32
	// VecID, when not 0, names the instruction's vectors: two instructions
	// of one Source with the same Static and the same nonzero VecID have the
	// same vectors (a binary reader's record decoded from its warp's entry,
	// and the record that made the entry: a spinlock's retried CAS). 0 says
	// nothing.
	VecID uint64
}

// PartInfo is what a split file says of an instruction beyond the lanes
// it carries: how many lanes ran in the trace it was split from, and
// whether the file's partition writes the instruction's statistics row,
// with the row's addresses, largest conflict and sectors over all of its
// lanes (what depends on the addresses alone; faults and failed
// compare-and-swaps depend on memory, and each partition counts its own).
type PartInfo struct {
	Lanes       uint32 // lanes that ran (Active) in the trace split
	Row         bool   // this partition writes the instruction's row
	Addresses   uint32 // with Row: distinct addresses among all its lane-elements
	MaxConflict uint32 // with Row: the most lane-elements on one address
	Sectors     uint32 // with Row: distinct 32-byte sectors among them
}

// ExecMask is the mask of lanes that exist for the instruction's execution size.
func (s *Static) ExecMask() uint32 {
	if s.ExecSize >= 32 {
		return ^uint32(0)
	}
	return uint32(1)<<uint(s.ExecSize) - 1
}

// Active is the mask of lanes that run: active, within the execution size,
// and passing the predicate.
func (in *Inst) Active() uint32 { return in.ActiveOf(in.Mask) }

// ActiveOf is Active of the instruction under another mask: the lanes of
// mask within the execution size and passing the predicate.
func (in *Inst) ActiveOf(mask uint32) uint32 {
	s := in.Static
	m := mask & s.ExecMask()
	if s.Pred >= 0 {
		p := uint32(in.Vals[s.Pred].Lo(0))
		if s.PredNeg {
			p = ^p
		}
		m &= p
	}
	return m
}

// Value returns the low and high 64 bits of a source for one lane.
func (in *Inst) Value(src Src, lane int) (lo, hi uint64) {
	if src.In < 0 {
		return src.Imm, src.Hi
	}
	v := &in.Vals[src.In]
	i := in.Static.ValueIndex(src, lane)
	return v.Lo(i), v.Hi(i)
}

// ValueIndex is where a lane's value of an input source (src.In >= 0)
// lies in the input's vector: at the lane, or, for an input of several
// values a lane (Input.Elems), at its place in the register's order.
func (s *Static) ValueIndex(src Src, lane int) int {
	if inp := &s.Inputs[src.In]; inp.Elems > 1 {
		if inp.Transposed {
			return lane*inp.Elems + src.Elem
		}
		return src.Elem*s.ExecSize + lane
	}
	return lane
}

// ElemOff is the byte offset of element e from its lane's address.
func (s *Static) ElemOff(e int) int64 {
	if s.ElemOffsets != nil {
		return s.ElemOffsets[e]
	}
	return int64(e) * int64(s.Type.Size())
}

// AddrMask is the mask the address arithmetic wraps at.
func (s *Static) AddrMask() uint64 {
	if s.AddrBits >= 64 || s.AddrBits <= 0 {
		return ^uint64(0)
	}
	return uint64(1)<<uint(s.AddrBits) - 1
}

// VecKind is how a Vector stores its per-lane values.
type VecKind uint8

const (
	VecBroadcast VecKind = iota // every lane holds Base
	VecStride                   // lane i holds Base + i*Stride
	VecList                     // lane i holds List[i]
)

// Vector is the per-lane values of one input, in the compact form tracers
// produce. For 128-bit inputs the high halves are in BaseHi or ListHi.
type Vector struct {
	Kind   VecKind
	Base   uint64
	Stride uint64 // two's complement; lane i is Base + uint64(i)*Stride
	List   []uint64
	BaseHi uint64
	ListHi []uint64
}

// setScalar makes v a broadcast or strided vector (the decoder's, reused
// record to record) field by field: it stores its lists' nil only when
// they are set, since a whole-struct store writes both slice pointers,
// each with a write barrier while the collector marks.
func (v *Vector) setScalar(kind VecKind, base, stride uint64) {
	if v.List != nil || v.ListHi != nil {
		v.List, v.ListHi = nil, nil
	}
	v.Kind, v.Base, v.Stride, v.BaseHi = kind, base, stride, 0
}

// Lo returns lane i's value (the low 64 bits of a 128-bit value).
func (v *Vector) Lo(i int) uint64 {
	switch v.Kind {
	case VecStride:
		return v.Base + uint64(i)*v.Stride
	case VecList:
		return v.List[i]
	}
	return v.Base
}

// Hi returns the high 64 bits of lane i's 128-bit value, 0 otherwise.
func (v *Vector) Hi(i int) uint64 {
	if v.Kind == VecList && v.ListHi != nil {
		return v.ListHi[i]
	}
	return v.BaseHi
}
