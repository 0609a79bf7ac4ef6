package engine

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// Intel vISA LSC_UNTYPED (Intel Graphics Compiler vISA specification,
// LSC_UNTYPED; below, the seed).
//
//   - Loads (lsc_load, _strided, _quad) read each active lane's elements:
//     kLoad, one result row per lane and element, the value being the datum
//     as it sits in memory (d8u32/d16u32 zero-extend to 32 bits, which is
//     the memory value itself).
//   - Stores (lsc_store, _strided, _quad, _uncompressed) write Src1Data's
//     element e of lane n (trace.Src.Elem, in the register's SIMT or
//     transposed order) at the lane's address plus the element offset:
//     kExch with nothing returned.
//   - Atomics are one element per lane; their kinds are the shared integer
//     formulas (atomic_int.go) and the Intel float kinds (atomic_float.go).
//     lsc_atomic_iinc/idec are plain old+1/old-1 (kInc/kDec), not PTX's
//     bounded forms; lsc_atomic_store is an exchange that returns the old
//     value; lsc_atomic_icas/fcas compare with Src1Data and write Src2Data.
//   - lsc_apndctr_atomic_add/sub act on the surface's single append counter,
//     space apndctr(N) at address 0: lanes in ascending order each get the
//     running counter and add (subtract) their Src0Data, as in the seed's
//     AppendCounterAtomicAdd.
//   - Out of bounds (outside every declared region of the space): reads
//     return zero and writes are dropped (dropOOB), as for vISA.
//   - d16u32h: the 16-bit datum sits in the upper half of the register's
//     32-bit slot and the lower half is zero. A load returns datum<<16
//     (retShl16), a store writes bits 31:16 of the register (srcShift 16).
//     IGC visa/include/visa_igc_common_header.h, LSC_DATA_SIZE_16c32bH:
//     "h means load to (h)igh 16 / data stored in upper 16; zero-fills
//     bottom 16 (bfloat raw conversion to 32b float)". Atomics do not take
//     it (the parser refuses it, docs/status/lsc.md decision 4).
//   - lsc_load_status (LOAD_STATUS): no memory access; each lane that ran
//     gets dest.bit[n] as its one row: 1 when every one of its
//     DataElemsPerAddr elements is on a valid page, else 0. A trace
//     records no page tables, so "IsTRTT_VALID_PAGE" is modelled as "the
//     element's bytes lie inside a declared .region of the space, or the
//     space declares none". Alignment is no page property: a misaligned
//     address reports its page like any other.
//   - lsc_load_block2d and lsc_store_block2d: lsc_block2d.go.

// planLSC fills p for an Intel LSC instruction.
func planLSC(p *plan) error {
	st := p.st
	l := st.LSC
	if l == nil {
		return fmt.Errorf("an LSC instruction without its LSC fields (trace.Static.LSC): parse it with trace.ParseStatic")
	}
	p.dropOOB = true
	p.plain = l.Load() || l.Store() || l.Status() || l.Block2D()
	switch {
	case l.Status():
		return planLoadStatus(p, l)
	case l.Block2D():
		return planBlock2D(p, l)
	case l.Data == trace.LSCD16U32H:
		p.srcShift, p.retShl16 = 16, true
	}
	p.size = uint8(l.Data.MemBytes())
	switch {
	case l.Load():
		p.kind = kLoad
		p.b, p.c = nil, nil
		return nil
	case l.Store():
		p.kind = kExch
		p.noRet = true
		return nil
	}
	k, ok := lscKind(st.Op, st.Type, l.Float)
	if !ok {
		return fmt.Errorf("lsc_%s on %s is not replayed", l.SubOp, l.Data)
	}
	p.kind = k
	if k == kLoad || k == kInc || k == kDec {
		p.b, p.c = nil, nil
	}
	return nil
}

// lscKind maps an LSC atomic's (op, type) to its semantics. st.Type holds
// the signedness (smin/smax) and, for float atomics, the float type.
func lscKind(op trace.Op, t trace.Type, float bool) (kind, bool) {
	if float {
		return lscFloatKind(op, t)
	}
	return intKind(op, t, false) // iinc, idec: plain +1, -1
}

// lscFloatKinds lists the float kinds of LSC fadd, fsub, fmin, fmax and
// fcas per element type (atomic_float.go: IEEE NaN, subnormals kept, the
// Intel min/max rule).
var lscFloatKinds = map[trace.Op][3]kind{
	//              f16            f32            f64
	trace.OpAdd: {kFAddF16Intel, kFAddF32Intel, kFAddF64},
	trace.OpSub: {kFSubF16Intel, kFSubF32Intel, kFSubF64},
	trace.OpMin: {kFMinF16Intel, kFMinF32Intel, kFMinF64Intel},
	trace.OpMax: {kFMaxF16Intel, kFMaxF32Intel, kFMaxF64Intel},
	trace.OpCAS: {kFCASF16, kFCASF32, kFCASF64},
}

func lscFloatKind(op trace.Op, t trace.Type) (kind, bool) {
	ks, ok := lscFloatKinds[op]
	if !ok {
		return 0, false
	}
	switch t {
	case trace.TypeF16:
		return ks[0], true
	case trace.TypeF32:
		return ks[1], true
	case trace.TypeF64:
		return ks[2], true
	}
	return 0, false
}

// planLoadStatus fills p for lsc_load_status: p.status, one element per
// lane (the parser sets Static.Elems to 1), and an element hook that
// checks every one of the lane's l.VecSize data against the regions.
func planLoadStatus(p *plan, l *trace.LSC) error {
	st := p.st
	if st.Elems != 1 {
		return fmt.Errorf("lsc_load_status: %d elements per lane, want 1", st.Elems)
	}
	p.kind = kLoad
	p.b, p.c = nil, nil
	p.status = true
	// The plan's own check then only asks whether the first byte is in a
	// region, which elemFault has answered already; no alignment check.
	p.size = 1
	size := uint64(l.Data.MemBytes())
	vec := l.VecSize
	mask := st.AddrMask()
	p.elemFault = func(bi *xinst, lane, e int) Fault {
		a0 := p.addr(bi, lane, e)
		for v := 0; v < vec; v++ {
			if !validPage(p.regions, (a0+uint64(v)*size)&mask, size) {
				return FaultOutOfBounds
			}
		}
		return FaultNone
	}
	return nil
}

// validPage is lsc_load_status's IsTRTT_VALID_PAGE for size bytes at a:
// inside a declared region, or anywhere short of wrapping past the top of
// the address space when the space declares none.
func validPage(regions []trace.Region, a, size uint64) bool {
	if len(regions) == 0 {
		return a+size-1 >= a
	}
	for i := range regions {
		if regions[i].Contains(a, size) {
			return true
		}
	}
	return false
}
