package reference

import (
	"github.com/gpureplay/replay/trace"
)

// Fault names, as the results table writes them (docs/OUTPUT.md, results).
const (
	faultMisaligned   = "misaligned"
	faultOutOfRange   = "out_of_range"
	faultInvalidSpace = "invalid_space"
	faultOutOfBounds  = "out_of_bounds"
)

// What a lane gets back.
type giveBack uint8

const (
	giveOld     giveBack = iota // the prior memory value (every atomic but PREDEC; loads)
	giveNew                     // the value written (vISA PREDEC)
	giveNothing                 // stores
)

// formula is an access's effect: the new memory value from the old one and
// the instruction's first and second sources, b and c, in the order the
// instruction text writes them (PTX b, c; SASS Rb, Rc; vISA Src0, Src1;
// LSC Src1Data, Src2Data). Each dialect's file writes its formulas in its
// document's own operand names on top of that.
type formula func(old, b, c wide) wide

// rule is what one instruction text does to each of its lane-elements,
// worked out once from the trace.Static by the dialect's file.
type rule struct {
	st    *trace.Static
	elems int // lane-elements per lane
	width int // bytes each lane-element accesses: 1, 2, 4, 8 or 16
	// addr is the effective address of a lane's element.
	addr func(in *trace.Inst, lane, e int) uint64
	// outsideSurface, when set, says an element lies outside the LSC
	// block2d surface, which reads zero and drops the write.
	outsideSurface func(in *trace.Inst, lane, e int) bool
	// vector, when not 0, is the alignment a PTX vector needs as a whole.
	vector uint64
	// windows: SASS, where the generic address space has shared and
	// local windows an ATOM may not touch.
	windows bool
	// outside is the fault of an access outside every declared region:
	// out_of_range (PTX, SASS) or out_of_bounds (vISA, LSC).
	outside string
	// source reads a lane's sources for element e.
	source func(in *trace.Inst, lane, e int) (b, c wide)
	apply  formula
	// casNewIsB: a compare-and-swap whose formula writes b and compares
	// with c (vISA CMPXCHG); every other writes c and compares with b.
	casNewIsB bool
	give      giveBack
	// shiftBack shifts the value given back left (LSC d16u32h).
	shiftBack uint
	// status, when not 0, makes the instruction lsc_load_status, which
	// reads no memory and gives 1 or 0 after checking status data of
	// width bytes per address.
	status int
	// plain: a non-atomic LSC load or store, which the addresses table
	// does not count.
	plain bool
	// op and family name the operation for the addresses table's order
	// analysis: op tells operations apart, family groups those that
	// commute with each other ("" for none).
	op, family string
}

// access performs one lane-element and returns its results row, and for a
// compare-and-swap whether it failed: found a value other than its compare
// operand and left memory as it was.
func (m *machine) access(r *rule, in *trace.Inst, lane, e int) (row Result, casFailed bool) {
	st := in.Static
	addr := r.addr(in, lane, e)
	row = Result{Seq: in.Seq, Lane: uint32(lane), Elem: uint32(e), Addr: addr}
	if r.status != 0 {
		if m.statusBit(r, in, lane) {
			row.Value = 1
		}
		return row, false
	}
	if f := m.fault(r, in, lane, e, addr); f != "" {
		row.Fault = f // nothing is read, written or given back
		return row, false
	}
	at := place{st.Space, groupOf(st.Space, in.Group), addr}
	var b, c wide
	if r.source != nil {
		b, c = r.source(in, lane, e)
	}
	old := m.mem.read(at, r.width)
	updated := r.apply(old, b, c)
	if st.Op == trace.OpCAS {
		// The formula with another new value, one that cannot be old:
		// a CAS that matched writes it, one that failed keeps old. So
		// the outcome comes from the formula itself, not from a
		// comparison of the reference's own.
		other := wide{^old.lo, ^old.hi}
		if r.casNewIsB {
			casFailed = r.apply(old, other, c) == old
		} else {
			casFailed = r.apply(old, b, other) == old
		}
	}
	m.mem.write(at, r.width, updated)
	if !r.plain {
		m.addrs.count(at, in, r, b, c)
	}
	if !st.HasDst {
		return row, casFailed // the destination is _, RZ, V0, null or %null
	}
	switch r.give {
	case giveOld:
		row.Value, row.ValueHi = old.lo, old.hi
	case giveNew:
		row.Value, row.ValueHi = updated.lo, updated.hi
	}
	row.Value <<= r.shiftBack
	return row, casFailed
}

// fault is the fault of a lane-element at addr, "" for none. The checks
// run in this order: the block2d surface, alignment, the SASS windows,
// the declared regions.
func (m *machine) fault(r *rule, in *trace.Inst, lane, e int, addr uint64) string {
	if r.outsideSurface != nil && r.outsideSurface(in, lane, e) {
		return faultOutOfBounds
	}
	// Natural alignment. PTX: "Addresses as Operands" (the seed's
	// Description points there for alignment); SASS: "Memory addresses
	// must be naturally aligned, on a byte address that is a multiple of
	// the access size. Misaligned addresses cause a misaligned address
	// error."; vISA .16: "Each access is a word and must be word-aligned".
	// The project applies the rule to every dialect and width
	// (docs/status/visa.md, Decisions: Misaligned offsets).
	if addr%uint64(r.width) != 0 {
		return faultMisaligned
	}
	if r.vector != 0 && r.addr(in, lane, 0)%r.vector != 0 {
		return faultMisaligned
	}
	if r.windows && m.inWindow(addr, r.width) {
		return faultInvalidSpace
	}
	if !m.allocated(in.Static.Space, addr, uint64(r.width)) {
		return r.outside
	}
	return ""
}

// inWindow reports whether any byte of [addr, addr+n) lies in a shared or
// local window. CUDA Binary Utilities, ATOM: "The generic thread address
// space accesses global memory, unless it falls in the Local or Shared
// address window. An ATOM instruction must address global memory,
// otherwise it generates an invalid address space error."
func (m *machine) inWindow(addr uint64, n int) bool {
	for _, w := range m.windows {
		for i := uint64(0); i < uint64(n); i++ {
			if a := addr + i; a >= w.Base && a-w.Base < w.Size {
				return true
			}
		}
	}
	return false
}

// allocated reports whether all n bytes at addr are allocated memory of
// the space: inside one declared region, or anywhere at all (short of
// running past the top of the address space) while the space declares
// none (docs/TASM.md, Directives: "As long as no region is declared for a
// space, every address of it is allocated").
func (m *machine) allocated(space trace.Space, addr, n uint64) bool {
	regions := m.regions[space]
	if len(regions) == 0 {
		return addr+(n-1) >= addr
	}
	for _, r := range regions {
		if addr >= r.Base && n <= r.Size && addr-r.Base <= r.Size-n {
			return true
		}
	}
	return false
}

// linearAddr is a lane's address by the formula every form but block2d
// uses, as trace.Static states it: (AddrScale*base + AddrImm + lane*
// LanePitch + offset) wrapped to AddrBits, base being the address input in
// the lane (in lane 0 when AddrUniform), or 0 for an absolute address.
func linearAddr(st *trace.Static, in *trace.Inst, lane int, offset int64) uint64 {
	var base uint64
	if st.Addr >= 0 {
		from := lane
		if st.AddrUniform {
			from = 0
		}
		base = in.Vals[st.Addr].Lo(from)
	}
	a := uint64(st.AddrScale)*base + uint64(st.AddrImm) + uint64(int64(lane)*st.LanePitch) + uint64(offset)
	if st.AddrBits > 0 && st.AddrBits < 64 {
		a &= 1<<uint(st.AddrBits) - 1
	}
	return a
}

// elementsAt is the address function of elements laid out at the given
// byte offsets from the lane's address.
func elementsAt(st *trace.Static, offsets []int64) func(in *trace.Inst, lane, e int) uint64 {
	return func(in *trace.Inst, lane, e int) uint64 {
		return linearAddr(st, in, lane, offsets[e])
	}
}

// packed is offsets 0, size, 2*size, …: elements side by side.
func packed(n, size int) []int64 {
	offs := make([]int64, n)
	for e := range offs {
		offs[e] = int64(e * size)
	}
	return offs
}

// textSources reads element e's sources from the Static's B and C (zero
// for a source the instruction has not), each shifted right by shift and
// cut to width bytes.
func textSources(st *trace.Static, shift uint, width int) func(in *trace.Inst, lane, e int) (b, c wide) {
	get := func(in *trace.Inst, srcs []trace.Src, lane, e int) wide {
		if e >= len(srcs) {
			return wide{}
		}
		lo, hi := in.Value(srcs[e], lane)
		return cut(wide{lo >> shift, hi}, width)
	}
	return func(in *trace.Inst, lane, e int) (wide, wide) {
		return get(in, st.B, lane, e), get(in, st.C, lane, e)
	}
}

// cut keeps the low width bytes of v.
func cut(v wide, width int) wide {
	if width >= 16 {
		return v
	}
	return wide{v.lo & mask(width), 0}
}
