package reference

import (
	"fmt"
	"strings"

	"github.com/gpureplay/replay/trace"
)

// LSC_UNTYPED: Intel Graphics Compiler vISA specification, LSC_UNTYPED.
//
// The sub-operation (LscSubOp table) decides everything; each is replayed
// from the Semantics pseudo-code:
//
//   - LOAD, LOAD_STRIDED, LOAD_QUAD: DstData gets, for each enabled lane n
//     and vector element v, "src.elems[v]" at the lane's address: plain
//     loads, memory unchanged.
//   - STORE, STORE_UNCOMPRESSED, STORE_STRIDED, STORE_QUAD: "*addr =
//     DstData[v].elems[n]" (SIMT) or "DstData[n].elems[v]" (transposed):
//     plain stores, nothing given back. (The parser reads each element
//     from its register slot, SIMT or transposed.)
//   - LOAD_STATUS: no memory access; "dest.bit[n] = MsgChEn[n] & s", s
//     cleared by the first element not on a valid page.
//   - LOAD_BLOCK2D, STORE_BLOCK2D: block2d.go.
//   - atomics: one element per address ("Transpose is not permitted for
//     atomic operations"; the parser takes x1 only), "They operate on the
//     addresses in Src0Addrs and possibly with data in Src1Data and
//     Src2Data, and can read back the result to DstData": lsc.go's
//     lscAtomic.
//   - AppendCounterAtomicAdd/Sub: "old = (ctr_address).data_size[0];
//     (ctr_address).data_size[0] = old + src0Data[0].data_size[n];
//     dest[0].data_size[n] = old;" on the surface's one counter, space
//     apndctr(N) at address 0 (docs/TASM.md, Spaces).
//
// Properties of every form, as vISA's (DWORD_ATOMIC, Properties):
// "Out-of-bound Access: On read: zeros are returned. On write: data is
// dropped." (fault out_of_bounds).

// dataBytes is the bytes one datum of a DataSize takes in memory: d8,
// d8u32 one; d16, d16u32, d16u32h two; d32 four; d64 eight. (The u32
// forms widen the datum to a 32-bit register slot: d8u32 and d16u32
// zero-extend it, d16u32h puts it in the slot's upper half.)
func dataBytes(d trace.LSCDataSize) int {
	switch d {
	case trace.LSCD8, trace.LSCD8U32:
		return 1
	case trace.LSCD16, trace.LSCD16U32, trace.LSCD16U32H:
		return 2
	case trace.LSCD32:
		return 4
	case trace.LSCD64:
		return 8
	}
	return 0
}

// lscRule works out the rule of an LSC instruction.
func lscRule(st *trace.Static) (*rule, error) {
	l, err := trace.LSCOf(st)
	if err != nil {
		return nil, err
	}
	size := dataBytes(l.Data)
	if size == 0 {
		return nil, fmt.Errorf("the reference knows no LSC data size %s", l.Data)
	}
	r := &rule{st: st, elems: 1, width: size, outside: faultOutOfBounds, give: giveOld}
	if l.Data == trace.LSCD16U32H {
		// The datum sits in the upper 16 bits of its 32-bit register slot,
		// the lower half zero (docs/status/lsc.md, d16u32h).
		r.shiftBack = 16
	}
	switch l.SubOp {
	case "load", "load_strided", "load_quad", "store", "store_uncompressed", "store_strided", "store_quad":
		err = lscPlain(r, st, l, size)
	case "load_status":
		r.status, r.plain = max(l.VecSize, 1), true
		r.addr = elementsAt(st, []int64{0})
	case "load_block2d", "store_block2d":
		err = block2dRule(r, st, l, size)
	case "apndctr_atomic_add", "apndctr_atomic_sub":
		err = lscCounter(r, st, l)
	default:
		err = lscAtomic(r, st, l, size)
	}
	if err != nil {
		return nil, err
	}
	if r.elems != st.Elems {
		return nil, fmt.Errorf("lsc_%s: %d elements per lane by the document, %d in the trace", l.SubOp, r.elems, st.Elems)
	}
	return r, nil
}

// lscPlain sets up the gathering and strided loads and stores. Element v
// of a lane is "src.elems[v]": v data past the lane's address; with a
// quad, the m-th enabled channel of X, Y, Z, W ("for (m = v = 0; v < 4;
// v++) if (ChMask[v]) ... .elems[v] ... m++").
func lscPlain(r *rule, st *trace.Static, l *trace.LSC, size int) error {
	var offsets []int64
	if l.SubOp == "load_quad" || l.SubOp == "store_quad" {
		for ch := 0; ch < 4; ch++ {
			if l.ChMask&(1<<uint(ch)) != 0 {
				offsets = append(offsets, int64(ch*size))
			}
		}
	} else {
		offsets = packed(max(l.VecSize, 1), size)
	}
	r.elems, r.plain = len(offsets), true
	r.addr = elementsAt(st, offsets)
	r.source = textSources(st, r.shiftBack, size)
	if strings.HasPrefix(l.SubOp, "store") {
		r.apply, r.give, r.op = func(_, b, _ wide) wide { return b }, giveNothing, "store"
		return nil
	}
	r.apply, r.op = func(old, _, _ wide) wide { return old }, "load"
	return nil
}

// statusBit is lsc_load_status's dest.bit[n] for a lane that runs: 1
// unless one of its DataElemsPerAddr elements is not on a valid page
// ("s = IsTRTT_VALID_PAGE(addr.elems[v])"). A trace records no page
// tables: a valid page is taken to be allocated memory, inside a declared
// region of the space or anywhere while it declares none
// (docs/status/lsc.md, lsc_load_status). Alignment is no property of a
// page.
func (m *machine) statusBit(r *rule, in *trace.Inst, lane int) bool {
	st := in.Static
	for v := 0; v < r.status; v++ {
		if !m.allocated(st.Space, linearAddr(st, in, lane, int64(v*r.width)), uint64(r.width)) {
			return false
		}
	}
	return true
}

// lscCounter is lsc_apndctr_atomic_add/sub: 32-bit, at address 0 of the
// counter's space, the lane getting the counter's old value.
func lscCounter(r *rule, st *trace.Static, l *trace.LSC) error {
	if r.width != 4 {
		return fmt.Errorf("lsc_%s: the append counter is 32-bit, not %s", l.SubOp, l.Data)
	}
	r.addr = func(*trace.Inst, int, int) uint64 { return 0 }
	r.source = textSources(st, 0, 4)
	f, op := addInt, "add"
	if l.SubOp == "apndctr_atomic_sub" {
		f, op = subInt, "sub"
	}
	r.apply, r.op, r.family = onLow(f, 4), op, intFamily(op)
	return nil
}

// lscIntegerAtomics is the integer part of the LscSubOp table, each with
// its formula and its name for the addresses table. Where the document
// gives only a name:
//
//   - iinc, idec: "atomic integer increment/decrement", old+1 and old-1
//     without a bound, as DWORD_ATOMIC's INC and DEC (docs/status/lsc.md,
//     "iinc / idec");
//   - load: "atomic load", memory unchanged;
//   - store: "atomic store", an exchange that gives back the old value
//     (docs/status/lsc.md, "atomic_store");
//   - icas: "atomic int compare and swap" with 2 extra arguments:
//     Src1Data is compared, Src2Data written (docs/status/lsc.md,
//     "icas / fcas").
func lscIntegerAtomic(subOp string) (integer, string, bool) {
	switch subOp {
	case "atomic_iinc":
		return plusOne, "inc", true
	case "atomic_idec":
		return minusOne, "dec", true
	case "atomic_load":
		return loadInt, "load", true
	case "atomic_store":
		return exchInt, "exch", true
	case "atomic_iadd":
		return addInt, "add", true
	case "atomic_isub":
		return subInt, "sub", true
	case "atomic_smin":
		return minSigned, "smin", true
	case "atomic_smax":
		return maxSigned, "smax", true
	case "atomic_umin":
		return minUnsigned, "umin", true
	case "atomic_umax":
		return maxUnsigned, "umax", true
	case "atomic_icas":
		return compareB, "cas", true
	case "atomic_and":
		return andInt, "and", true
	case "atomic_or":
		return orInt, "or", true
	case "atomic_xor":
		return xorInt, "xor", true
	}
	return nil, "", false
}

// lscAtomic sets up an lsc_atomic_*: one element at the lane's address,
// the lane getting the old value.
func lscAtomic(r *rule, st *trace.Static, l *trace.LSC, size int) error {
	r.addr = elementsAt(st, []int64{0})
	r.source = textSources(st, r.shiftBack, size)
	if f, op, ok := lscIntegerAtomic(l.SubOp); ok {
		r.apply, r.op, r.family = onLow(f, size), op, intFamily(op)
		return nil
	}
	// The float atomics work on the datum as a float of its size: d16
	// (and d16u32) IEEE half, d32 single, d64 double (docs/status/lsc.md,
	// decision 4); NaNs and subnormals by IEEE 754, min and max by
	// Intel's rule, fcas by IEEE equality (float.go).
	f := map[int]format{2: f16, 4: f32, 8: f64}[size]
	if f == 0 {
		return fmt.Errorf("lsc_%s: no float of %d bytes", l.SubOp, size)
	}
	var op floatOp
	var name string
	switch l.SubOp {
	case "atomic_fadd":
		op, name = ieeeAddOp(f), floatName("add", "ieee", f.String())
	case "atomic_fsub":
		op, name = ieeeSubOp(f), floatName("sub", "ieee", f.String())
	case "atomic_fmin", "atomic_fmax":
		greater := l.SubOp == "atomic_fmax"
		op, name = intelMinMaxOp(f, greater), floatName(map[bool]string{false: "min", true: "max"}[greater], "intel", f.String())
	case "atomic_fcas":
		op, name = compareSwapOp(f), floatName("cas", "ieee", f.String())
	default:
		return fmt.Errorf("the reference knows no lsc_%s", l.SubOp)
	}
	r.apply, r.op = inFormat(f, op), name
	return nil
}
