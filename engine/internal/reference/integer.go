package reference

// Integer and bit-size formulas, on values of width bytes held in the low
// bits of a uint64. Arithmetic wraps at the width; comparisons are
// unsigned unless the name says signed. Each dialect's file says which
// document row each one is.

// mask is the bits of a width-byte value.
func mask(width int) uint64 {
	if width >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*uint(width)) - 1
}

// asSigned reads a width-byte value as two's complement.
func asSigned(x uint64, width int) int64 {
	if width >= 8 {
		return int64(x)
	}
	unused := 64 - 8*uint(width)
	return int64(x<<unused) >> unused
}

// integer is a formula on width-byte values: the new memory value from
// the old one and the sources b and c.
type integer func(old, b, c uint64, width int) uint64

func addInt(old, b, _ uint64, width int) uint64 { return (old + b) & mask(width) }
func subInt(old, b, _ uint64, width int) uint64 { return (old - b) & mask(width) }
func andInt(old, b, _ uint64, _ int) uint64     { return old & b }
func orInt(old, b, _ uint64, _ int) uint64      { return old | b }
func xorInt(old, b, _ uint64, _ int) uint64     { return old ^ b }
func exchInt(_, b, _ uint64, _ int) uint64      { return b }
func loadInt(old, _, _ uint64, _ int) uint64    { return old }

// plusOne and minusOne are Intel's INC and DEC ("new = old+1", "new =
// old-1"): no bound, wrapping.
func plusOne(old, _, _ uint64, width int) uint64  { return (old + 1) & mask(width) }
func minusOne(old, _, _ uint64, width int) uint64 { return (old - 1) & mask(width) }

func minUnsigned(old, b, _ uint64, _ int) uint64 { return min(old, b) }
func maxUnsigned(old, b, _ uint64, _ int) uint64 { return max(old, b) }

func minSigned(old, b, _ uint64, width int) uint64 {
	if asSigned(b, width) < asSigned(old, width) {
		return b
	}
	return old
}

func maxSigned(old, b, _ uint64, width int) uint64 {
	if asSigned(b, width) > asSigned(old, width) {
		return b
	}
	return old
}

// boundedInc and boundedDec are NVIDIA's: PTX ISA, atom: Semantics,
// "inc(r, s) = (r >= s) ? 0 : r+1; dec(r, s) = (r==0 || r > s) ? s : r-1";
// CUDA Binary Utilities, ATOM, Atomic Operations table, ".INC M = (M >=
// Rb)? 0 : (M + 1)", ".DEC M = (M == 0 || M > Rb)? Rb : M - 1".
func boundedInc(r, s, _ uint64, width int) uint64 {
	if r >= s {
		return 0
	}
	return (r + 1) & mask(width)
}

func boundedDec(r, s, _ uint64, width int) uint64 {
	if r == 0 || r > s {
		return s
	}
	return r - 1
}

// compareB is a compare-and-swap that compares with b and writes c: PTX
// "cas(r,s,t) = (r == s) ? t : r"; SASS ".CAS Rd = M; if (M == Rb) M = Rc";
// LSC lsc_atomic_icas with Src1Data the compare value and Src2Data the new
// one (docs/status/lsc.md, "icas / fcas").
func compareB(old, b, c uint64, _ int) uint64 {
	if old == b {
		return c
	}
	return old
}

// onLow makes a formula on the low 64 bits of wide values (every width up
// to 8 bytes).
func onLow(f integer, width int) formula {
	return func(old, b, c wide) wide {
		return wide{lo: f(old.lo, b.lo, c.lo, width) & mask(width)}
	}
}

// intFamily is the commuting family of an integer formula, for the
// addresses table's order analysis (docs/OUTPUT.md, addresses: "integer
// add and sub, one bitwise operation, one min, one max"); "" for the rest.
func intFamily(op string) string {
	switch op {
	case "add", "sub":
		return "add"
	case "and", "or", "xor", "umin", "smin", "umax", "smax":
		return op
	}
	return ""
}
