package reference

import (
	"math"
	"sort"
)

// Floating-point atomics on bit patterns. The method is this file's own:
//
//   - A value is decoded exactly into a float64 (every f16, bf16 and f32
//     value is a float64 value).
//   - f16 and bf16 sums are formed exactly in float64 (argued at
//     exactSum) and rounded once to the format by binary search over its
//     encodings, which for one sign are ordered like their values
//     (roundTo), ties to even and overflow to infinity handled explicitly.
//   - f32 sums are Go float32 additions and f64 sums Go float64 additions:
//     the Go specification rounds each to its type, which on every
//     platform Go supports is IEEE 754 binary32/binary64 arithmetic,
//     rounding to nearest even. NaNs and flushing are decided around the
//     addition, never left to the host.
//
// The rounding is IEEE 754-2019 §4.3.1 roundTiesToEven for every float add
// of the four documents: PTX ISA, atom: "The floating-point operation .add
// operation rounds to nearest even"; SASS .RN (".F32.FTZ.RN", ".F16x2.RN",
// ".F64.RN"); Intel's documents name no other mode.

// format is a binary floating-point format.
type format uint8

const (
	f16  format = iota + 1 // IEEE 754 binary16
	bf16                   // bfloat16: the upper half of a binary32
	f32                    // IEEE 754 binary32
	f64                    // IEEE 754 binary64
)

func (f format) String() string {
	return [...]string{"?", "f16", "bf16", "f32", "f64"}[f]
}

// bytes is the width of one value.
func (f format) bytes() int { return [...]int{0, 2, 2, 4, 8}[f] }

// fracBits is the width of the stored fraction, expBits of the exponent.
func (f format) fracBits() uint { return [...]uint{0, 10, 7, 23, 52}[f] }
func (f format) expBits() uint  { return [...]uint{0, 5, 8, 8, 11}[f] }

func (f format) sign() uint64     { return 1 << (8*uint(f.bytes()) - 1) }
func (f format) infinity() uint64 { return (1<<f.expBits() - 1) << f.fracBits() }
func (f format) quietBit() uint64 { return 1 << (f.fracBits() - 1) }

// isNaN: exponent all ones and a fraction that is not zero, i.e. a
// magnitude above infinity's encoding.
func (f format) isNaN(x uint64) bool { return x&^f.sign() > f.infinity() }

// isSignaling: a NaN whose quiet bit (the fraction's top bit, IEEE 754
// §6.2.1) is clear.
func (f format) isSignaling(x uint64) bool { return f.isNaN(x) && x&f.quietBit() == 0 }

// isSubnormal: exponent zero and a fraction that is not zero.
func (f format) isSubnormal(x uint64) bool {
	mag := x &^ f.sign()
	return mag != 0 && mag < 1<<f.fracBits()
}

// flush is x, or for a subnormal x the zero of its sign.
func (f format) flush(x uint64) uint64 {
	if f.isSubnormal(x) {
		return x & f.sign()
	}
	return x
}

// defaultNaN is the NaN of an invalid operation (∞ − ∞) under IEEE 754's
// rules, which fix no bits for it, nor does any Intel document or, for
// f64, any NVIDIA one (docs/status/sass.md, "F64 add"): the project writes
// the positive quiet NaN with no payload.
func (f format) defaultNaN() uint64 { return f.infinity() | f.quietBit() }

// canonicalNaN is NVIDIA's one NaN: all bits but the sign set. CUDA C++
// Programming Guide, Floating-Point Standard: "The result of a
// single-precision floating-point operation involving one or more input
// NaNs is the quiet NaN of bit pattern 0x7fffffff"; for f16 and bf16
// 0x7fff (CUDART_NAN_FP16 and CUDART_NAN_BF16, cuda_fp16.h and
// cuda_bf16.h; the PTX ISA's half-precision min/max return a "canonical
// NaN").
func (f format) canonicalNaN() uint64 { return f.sign() - 1 }

// value is the exact value of a number (not a NaN) of the format.
func (f format) value(x uint64) float64 {
	switch f {
	case f64:
		return math.Float64frombits(x)
	case f32:
		return float64(math.Float32frombits(uint32(x)))
	}
	mag := x &^ f.sign()
	exp := int(mag >> f.fracBits())
	frac := mag & (1<<f.fracBits() - 1)
	bias := 1<<(f.expBits()-1) - 1
	var v float64
	switch {
	case mag == f.infinity():
		v = math.Inf(1)
	case exp == 0: // subnormal or zero: frac × 2^(1−bias−fracBits)
		v = math.Ldexp(float64(frac), 1-bias-int(f.fracBits()))
	default: // (2^fracBits + frac) × 2^(exp−bias−fracBits)
		v = math.Ldexp(float64(frac|1<<f.fracBits()), exp-bias-int(f.fracBits()))
	}
	if x&f.sign() != 0 {
		v = -v
	}
	return v
}

// roundTo rounds x (any float64 but a NaN) to the 16-bit format f, to
// nearest with ties to even (IEEE 754 §4.3.1): encodings 0 .. infinity-1
// of one sign hold the finite values in increasing order, so the two
// neighbours of |x| are found by binary search among them.
func (f format) roundTo(x float64) uint64 {
	var sign uint64
	if math.Signbit(x) {
		sign, x = f.sign(), -x
	}
	top := f.infinity() - 1 // the largest finite encoding
	largest := f.value(top)
	// §4.3.1: "an infinitely precise result with magnitude at least
	// b^emax(b − ½b^(1−p)) shall round to ∞", i.e. at least the largest
	// finite value plus half its ulp.
	if x >= largest+(largest-f.value(top-1))/2 {
		return sign | f.infinity()
	}
	// below is the largest encoding whose value is at most x.
	below := uint64(sort.Search(int(top)+1, func(i int) bool { return f.value(uint64(i)) > x })) - 1
	if f.value(below) == x || below == top {
		return sign | below
	}
	// The midpoint of two neighbours needs one bit more than they do:
	// exact in float64, so the comparisons are exact.
	mid := (f.value(below) + f.value(below+1)) / 2
	switch {
	case x < mid:
		return sign | below
	case x > mid:
		return sign | (below + 1)
	case below&1 == 0: // a tie: the one whose significand ends in 0
		return sign | below
	}
	return sign | (below + 1)
}

// exactSum is a+b for two numbers (not NaNs) of the 16-bit format f,
// rounded once. ok is false for ∞ + (−∞), which has no value.
//
// The float64 sum is exact where it is used:
//   - f16: every value is an integer multiple of 2^-24 below 2^16, so a
//     sum is a multiple of 2^-24 below 2^17: at most 41 significant bits,
//     and float64 holds 53.
//   - bf16: let |a| ≥ |b|, and 2^e ≤ |a| < 2^(e+1). If |b|·2^10 < |a|,
//     then |b| < 2^(e−9), a quarter of a's ulp 2^(e−7), while a's
//     neighbours are at least half an ulp away: the rounded sum is a
//     itself, returned as is. Otherwise |b| ≥ 2^(e−10), so both are
//     multiples of 2^max(e−17, −133) (8 significant bits; −133 is the
//     subnormal step) and the sum, below 2^(e+2), has at most 19
//     significant bits: exact.
//
// Infinities take float64's rules: ∞ + x = ∞ for finite x.
func (f format) exactSum(a, b uint64) (uint64, bool) {
	x, y := f.value(a), f.value(b)
	if math.IsInf(x, 0) && math.IsInf(y, 0) && x != y {
		return 0, false
	}
	if f == bf16 {
		if math.Abs(y)*1024 < math.Abs(x) {
			return a, true
		}
		if math.Abs(x)*1024 < math.Abs(y) {
			return b, true
		}
	}
	return f.roundTo(x + y), true
}

// sum is a+b for two numbers (not NaNs) of f, rounded to nearest even;
// ok is false when it has no value (∞ − ∞).
func (f format) sum(a, b uint64) (uint64, bool) {
	switch f {
	case f64:
		s := math.Float64frombits(a) + math.Float64frombits(b)
		return math.Float64bits(s), !math.IsNaN(s)
	case f32:
		s := float32(math.Float32frombits(uint32(a)) + math.Float32frombits(uint32(b)))
		return uint64(math.Float32bits(s)), !math.IsNaN(float64(s))
	}
	return f.exactSum(a, b)
}

// nvidiaAdd is NVIDIA's float add: rounded to nearest even; with ftz,
// subnormal inputs are read and subnormal results written as zero of their
// sign (PTX ISA, atom: "atom.add.f32 on global memory flushes subnormal
// inputs and results to sign-preserving zero"); any NaN result is the
// canonical NaN.
func nvidiaAdd(f format, ftz bool, a, b uint64) uint64 {
	if f.isNaN(a) || f.isNaN(b) {
		return f.canonicalNaN()
	}
	if ftz {
		a, b = f.flush(a), f.flush(b)
	}
	s, ok := f.sum(a, b)
	if !ok {
		return f.canonicalNaN()
	}
	if ftz {
		s = f.flush(s)
	}
	return s
}

// ieeeAdd is IEEE 754's add with its NaN rules (§6.2.3: an operation that
// propagates a NaN delivers one of its input NaNs, quieted): the first
// NaN of (old, operand) quieted, or the default NaN for ∞ − ∞. Subnormals
// are kept. Intel's float atomics and every f64 add (no NVIDIA document
// names an f64 NaN pattern: docs/status/sass.md, F64 add).
func ieeeAdd(f format, a, b uint64) uint64 {
	switch {
	case f.isNaN(a):
		return a | f.quietBit()
	case f.isNaN(b):
		return b | f.quietBit()
	}
	s, ok := f.sum(a, b)
	if !ok {
		return f.defaultNaN()
	}
	return s
}

// ieeeSub is a−b: a + (−b) for numbers, NaNs as ieeeAdd (a NaN operand
// keeps its sign).
func ieeeSub(f format, a, b uint64) uint64 {
	if f.isNaN(a) || f.isNaN(b) {
		return ieeeAdd(f, a, b)
	}
	return ieeeAdd(f, a, b^f.sign())
}

// below orders two numbers (not NaNs), −0 before +0.
func (f format) below(a, b uint64) bool {
	x, y := f.value(a), f.value(b)
	if x == 0 && y == 0 {
		return a&f.sign() != 0 && b&f.sign() == 0
	}
	return x < y
}

// pick is min (max when greater) of two numbers (not NaNs), −0 < +0;
// equal values give a, memory's old value.
func (f format) pick(a, b uint64, greater bool) uint64 {
	if greater && f.below(a, b) || !greater && f.below(b, a) {
		return b
	}
	return a
}

// nvidiaMinMax is the PTX ISA's min and max without .NaN ("Half Precision
// Floating Point Instructions: min/max"): "If one of the inputs is NaN,
// the result is the other (non-NaN) input"; two NaNs give the canonical
// NaN; "+0.0 > -0.0". Signaling NaNs are not special (CUDA C++ Programming
// Guide, Floating-Point Standard: they "are handled as quiet").
func nvidiaMinMax(f format, greater bool, a, b uint64) uint64 {
	switch an, bn := f.isNaN(a), f.isNaN(b); {
	case an && bn:
		return f.canonicalNaN()
	case an:
		return b
	case bn:
		return a
	}
	return f.pick(a, b, greater)
}

// intelMinMax is Intel's float min and max atomics (vISA FMIN/FMAX, LSC
// fmin/fmax), as Intel's hardware specification is quoted by piglit's
// intel_shader_atomic_float_minmax NaN tests: a signaling NaN operand is
// the result, bits unchanged (memory's first); a quiet NaN with a number
// gives the number; two quiet NaNs leave memory as it was. −0 orders below
// +0 (docs/status decision, as IEEE 754-2019 minimum/maximum).
func intelMinMax(f format, greater bool, a, b uint64) uint64 {
	switch {
	case f.isSignaling(a):
		return a
	case f.isSignaling(b):
		return b
	case f.isNaN(a):
		if f.isNaN(b) {
			return a
		}
		return b
	case f.isNaN(b):
		return a
	}
	return f.pick(a, b, greater)
}

// equal is IEEE 754 equality (§5.11): a NaN equals nothing, not even its
// own bits, and −0 equals +0. Intel's float compare-and-swap (vISA FCMPWR,
// LSC fcas) compares so (piglit's ssbo-atomicCompSwap-float tests).
func (f format) equal(a, b uint64) bool {
	if f.isNaN(a) || f.isNaN(b) {
		return false
	}
	return a == b || (a|b)&^f.sign() == 0
}

// floatOp is a float formula on one element's bits.
type floatOp func(a, b, c uint64) uint64

// inFormat makes a formula of a float operation on values of format f.
func inFormat(f format, op floatOp) formula {
	m := mask(f.bytes())
	return func(old, b, c wide) wide {
		return wide{lo: op(old.lo&m, b.lo&m, c.lo&m) & m}
	}
}

// halves makes a formula of a 16-bit float operation on a packed f16x2 or
// bf16x2 word, each half on its own: PTX ISA, "Packed Data Types" (element
// 0 of a .f16x2 is its bits 0..15, element 1 bits 16..31), and for SASS
// .F16x2 the same register layout.
func halves(op floatOp) formula {
	return func(old, b, c wide) wide {
		lo := op(old.lo&0xffff, b.lo&0xffff, c.lo&0xffff) & 0xffff
		hi := op(old.lo>>16&0xffff, b.lo>>16&0xffff, c.lo>>16&0xffff) & 0xffff
		return wide{lo: lo | hi<<16}
	}
}

// The float operations, by rule.

func nvidiaAddOp(f format, ftz bool) floatOp {
	return func(a, b, _ uint64) uint64 { return nvidiaAdd(f, ftz, a, b) }
}

func ieeeAddOp(f format) floatOp { return func(a, b, _ uint64) uint64 { return ieeeAdd(f, a, b) } }
func ieeeSubOp(f format) floatOp { return func(a, b, _ uint64) uint64 { return ieeeSub(f, a, b) } }

func nvidiaMinMaxOp(f format, greater bool) floatOp {
	return func(a, b, _ uint64) uint64 { return nvidiaMinMax(f, greater, a, b) }
}

func intelMinMaxOp(f format, greater bool) floatOp {
	return func(a, b, _ uint64) uint64 { return intelMinMax(f, greater, a, b) }
}

// compareSwapOp writes c where memory equals b (IEEE equality).
func compareSwapOp(f format) floatOp {
	return func(old, b, c uint64) uint64 {
		if f.equal(old, b) {
			return c
		}
		return old
	}
}
