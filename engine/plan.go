package engine

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// plan is what the engine needs to know of one Static, worked out once by
// the dialect's planner (ptx.go, sass.go, visa.go, lsc.go).
type plan struct {
	st   *trace.Static
	id   uint32 // index in the replay's plans (replayer.planList)
	kind kind
	size uint8 // bytes per element access: 1, 2, 4, 8 or 16
	// b and c are, per element, the sources that the kind's formula calls b
	// and c (for CAS kinds: b is the compare value, c the new value). The
	// dialect maps its operand roles onto them: vISA CMPXCHG compares with
	// src1 and writes src0, so its b is src1.
	b, c   []trace.Src
	retNew bool // the lane gets the new value (vISA PREDEC), not the old
	noRet  bool // nothing comes back (stores)
	// dropOOB: an access outside every region reads zero and drops its
	// write (vISA, LSC: "Out-of-bound Access: On read: zeros are returned.
	// On write: data is dropped."); otherwise it is an out_of_range fault
	// (PTX, SASS: "An address outside an allocated memory region causes an
	// address out-of-range error").
	dropOOB bool
	regions []trace.Region // regions of the space; none means unbounded
	// bitSpan: every region is 2^k bytes at a multiple of 2^k, or there is
	// none. Then the AND and the OR of a warp's addresses lie in a region
	// exactly when all its addresses do, and warpAddresses bounds a full
	// warp's by them (listBits), without a min and a max per lane.
	bitSpan bool
	// elemAddr, when set, computes an element's address instead of the
	// Static's linear formula (LSC block2d).
	elemAddr func(bi *xinst, lane, e int) uint64
	// elemFault, when set, may fault an element before any other check
	// (LSC block2d: an element outside the surface reads zero and drops
	// its write, FaultOutOfBounds).
	elemFault func(bi *xinst, lane, e int) Fault
	// srcShift shifts every source right before the kind sees it, and
	// retShl16 shifts the returned value left by 16 (LSC d16u32h: the
	// datum sits in the upper half of the register's 32-bit slot).
	srcShift uint8
	retShl16 bool
	// status: the instruction reads no memory; each lane gets 1 when its
	// access would be in bounds and 0 otherwise (LSC lsc_load_status), and
	// no fault is recorded.
	status bool
	// plain: a non-atomic load or store (LSC lsc_load*, lsc_store*); the
	// addresses table counts only atomics.
	plain bool
	// simple: no hook or vector alignment applies, so expand may
	// take its whole-warp fast path (set by newPlan).
	simple bool
	// pageSum: a simple 32-bit add, one element a lane, at an address
	// that is its per-lane list as it is (no scale, offset or pitch; the
	// list within pageMask, the address's bits: vISA's 32) in regions of
	// 2^k bytes: a histogram's warps may take sumWarp.
	pageSum  bool
	pageMask uint64
	// vecAlign, when set, is the alignment a lane's whole vector needs
	// (PTX .v2/.v4/.v8): element e of a lane at addr starts at
	// addr - e*size, which must be a multiple of vecAlign.
	vecAlign uint64
	// windows, when set, are checked before the regions: an access that
	// touches one faults invalid_space (SASS: an ATOM into the shared or
	// local window of the generic address space). The whole-warp paths
	// take a warp only when its span touches none (inRegion).
	windows []trace.Window
}

func newPlan(st *trace.Static, h *trace.Header, regions map[trace.Space][]trace.Region) (*plan, error) {
	// The form must be a row of the dialect's table of legal forms, the
	// one the parsers read (trace/forms.go): a Static built by hand
	// cannot reach a formula no document gives.
	if _, err := trace.FormOf(st); err != nil {
		return nil, err
	}
	p := &plan{st: st, regions: regions[st.Space], b: st.B, c: st.C}
	p.bitSpan = true
	for _, r := range p.regions {
		if r.Size == 0 || r.Size&(r.Size-1) != 0 || r.Base&(r.Size-1) != 0 {
			p.bitSpan = false
		}
	}
	var err error
	switch st.Dialect {
	case trace.DialectPTX:
		err = planPTX(p)
	case trace.DialectSASS:
		err = planSASS(p)
		if st.Space == trace.Global { // ATOMS addresses shared memory itself
			sassWindows(p, h.Windows)
		}
	case trace.DialectVISA:
		err = planVISA(p)
	case trace.DialectLSC:
		err = planLSC(p)
	default:
		err = fmt.Errorf("the %s dialect is not replayed yet", st.Dialect)
	}
	if err != nil {
		return nil, err
	}
	if h.AddressOnly {
		// An address-only trace (trace.Header.AddressOnly: imported from
		// a tracer that records addresses, not values) applies nothing:
		// each access reads its word as an atomic load does and writes
		// nothing back, so the statistics of where lanes went (the
		// instructions, ops and addresses tables) are the trace's, and no
		// value is made up.
		p.kind, p.noRet, p.retNew = kLoad, true, false
	}
	if p.size == 0 {
		p.size = uint8(st.Type.Size())
	}
	switch p.size {
	case 1, 2, 4, 8, 16:
	default:
		return nil, fmt.Errorf("%d-byte accesses are not replayed", p.size)
	}
	if p.size == 16 && p.kind != kCAS && p.kind != kExch {
		return nil, fmt.Errorf("128-bit %s is not an atomic any document defines", st.Op)
	}
	if !p.status {
		// Every kind a plan runs must have a formula at its width: never a
		// silent "memory unchanged" for an operation nobody wrote.
		if err := formulaErr(p.kind, p.size); err != nil {
			return nil, fmt.Errorf("%s: %w", st.Op, err)
		}
	}
	p.simple = p.elemAddr == nil && p.elemFault == nil && p.vecAlign == 0 && !p.status
	p.pageSum = p.simple && p.add32() && st.Elems == 1 && p.bitSpan && st.Addr >= 0 && !st.AddrUniform &&
		st.AddrScale == 1 && st.AddrImm == 0 && st.LanePitch == 0
	p.pageMask = st.AddrMask()
	if len(p.b) != st.Elems && p.kind != kLoad && p.kind != kInc && p.kind != kDec {
		return nil, fmt.Errorf("%d sources for %d elements", len(p.b), st.Elems)
	}
	return p, nil
}

// addr is the effective address of a lane's element, per the Static's formula.
func (p *plan) addr(bi *xinst, lane, e int) uint64 {
	if p.elemAddr != nil {
		return p.elemAddr(bi, lane, e)
	}
	st := p.st
	var base uint64
	if st.Addr >= 0 {
		l := lane
		if st.AddrUniform {
			l = 0
		}
		base = bi.lo(st.Addr, l)
	}
	a := uint64(st.AddrScale)*base + uint64(st.AddrImm) + uint64(lane)*uint64(st.LanePitch) + uint64(st.ElemOff(e))
	return a & st.AddrMask()
}

// checkElem is check for element e of a lane, with the element hook and
// the vector alignment.
func (p *plan) checkElem(bi *xinst, lane, e int, addr uint64) Fault {
	if p.elemFault != nil {
		if f := p.elemFault(bi, lane, e); f != FaultNone {
			return f
		}
	}
	if p.vecAlign != 0 && (addr-uint64(e)*uint64(p.size))%p.vecAlign != 0 {
		return FaultMisaligned
	}
	return p.check(addr)
}

// check returns the fault of an access of p.size bytes at addr, if any.
// Every dialect requires natural alignment (PTX "Addresses as Operands",
// SASS "Memory addresses must be naturally aligned", vISA "must be
// word-aligned" for 16-bit atomics); a misaligned lane faults and the
// replay goes on, so no access ever spans two pages.
func (p *plan) check(addr uint64) Fault {
	size := uint64(p.size)
	if addr&(size-1) != 0 {
		return FaultMisaligned
	}
	if len(p.windows) > 0 && inWindow(p.windows, addr, addr+size-1) {
		// check runs after the alignment test: addr+size-1 cannot wrap.
		return FaultInvalidSpace
	}
	if len(p.regions) == 0 {
		if addr+size-1 < addr { // wraps past the top of the address space
			return p.oob()
		}
		return FaultNone
	}
	for i := range p.regions {
		if p.regions[i].Contains(addr, size) {
			return FaultNone
		}
	}
	return p.oob()
}

// allIn reports whether check finds no fault but misalignment at any
// address from lo to hi: an access of p.size bytes at each lies in one
// region (or there are none and none wraps), and there is no window.
func (p *plan) allIn(lo, hi uint64) bool {
	size := uint64(p.size)
	if hi < lo || hi+size-1 < hi || len(p.windows) > 0 {
		return false
	}
	if len(p.regions) == 0 {
		return true
	}
	for i := range p.regions {
		if p.regions[i].Contains(lo, hi-lo+size) {
			return true
		}
	}
	return false
}

func (p *plan) oob() Fault {
	if p.dropOOB {
		return FaultOutOfBounds
	}
	return FaultOutOfRange
}
