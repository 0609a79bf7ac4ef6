package fp

import "math"

// format describes one IEEE 754 binary interchange format narrower than
// float64, so that the 16-bit formats share one encoder and decoder.
type format struct {
	mant uint   // stored fraction bits: 10 for f16, 7 for bf16
	exp  uint   // exponent bits: 5 for f16, 8 for bf16
	bias int    // exponent bias: 15, 127
	sign uint64 // sign bit
}

var (
	f16  = format{mant: 10, exp: 5, bias: 15, sign: 1 << 15}
	bf16 = format{mant: 7, exp: 8, bias: 127, sign: 1 << 15}
)

// Default (IEEE 754) NaNs: positive, quiet bit only. Canonical NaNs are the
// all-ones payloads NVIDIA writes (see CanonF32).
const (
	DefaultNaN16   uint16 = 0x7e00
	DefaultNaNBF16 uint16 = 0x7fc0
	DefaultNaN32   uint32 = 0x7fc00000
	DefaultNaN64   uint64 = 0x7ff8000000000000

	CanonicalNaN16   uint16 = 0x7fff
	CanonicalNaNBF16 uint16 = 0x7fff
	CanonicalNaN32   uint32 = 0x7fffffff
	CanonicalNaN64   uint64 = 0x7fffffffffffffff
)

func (f format) expMask() uint64  { return (1<<f.exp - 1) << f.mant }
func (f format) mantMask() uint64 { return 1<<f.mant - 1 }
func (f format) quiet() uint64    { return 1 << (f.mant - 1) }

func (f format) isNaN(x uint64) bool {
	return x&f.expMask() == f.expMask() && x&f.mantMask() != 0
}

func (f format) isSub(x uint64) bool {
	return x&f.expMask() == 0 && x&f.mantMask() != 0
}

// toF64 decodes x exactly.
func (f format) toF64(x uint64) float64 {
	neg := x&f.sign != 0
	e := int(x & f.expMask() >> f.mant)
	m := x & f.mantMask()
	var v float64
	switch {
	case e == 1<<f.exp-1 && m == 0:
		v = math.Inf(1)
	case e == 1<<f.exp-1:
		// Keep the payload: left-align it in float64's 52 fraction bits.
		b := uint64(0x7ff)<<52 | m<<(52-f.mant)
		if neg {
			b |= 1 << 63
		}
		return math.Float64frombits(b)
	case e == 0:
		v = math.Ldexp(float64(m), 1-f.bias-int(f.mant))
	default:
		v = math.Ldexp(float64(m|1<<f.mant), e-f.bias-int(f.mant))
	}
	if neg {
		v = -v
	}
	return v
}

// fromF64 rounds x to f, to nearest with ties to even; a magnitude that
// rounds past the largest finite value becomes infinity, and subnormal
// results are kept. A NaN keeps its sign and the top bits of its payload,
// and is made quiet.
func (f format) fromF64(x float64) uint64 {
	b := math.Float64bits(x)
	var s uint64
	if b>>63 != 0 {
		s = f.sign
	}
	a := math.Abs(x)
	switch {
	case math.IsNaN(x):
		return s | f.expMask() | f.quiet() | (b&(1<<52-1))>>(52-f.mant)
	case math.IsInf(x, 0):
		return s | f.expMask()
	case a == 0:
		return s
	}
	emin := 1 - f.bias
	emax := f.bias
	_, e := math.Frexp(a) // a = frac * 2^e, frac in [0.5, 1)
	e--                   // now a = 1.xxx * 2^e
	if e < emin {
		e = emin // subnormal: the quantum stops shrinking
	}
	// m is a in units of the target's last place at exponent e; dividing by a
	// power of two is exact, and m < 2^(mant+1) so RoundToEven is exact too.
	m := math.RoundToEven(math.Ldexp(a, int(f.mant)-e))
	r := uint64(m)
	if r == 1<<(f.mant+1) { // rounded up to the next binade
		r >>= 1
		e++
	}
	if r < 1<<f.mant { // subnormal (or zero after rounding)
		return s | r
	}
	if e > emax {
		return s | f.expMask()
	}
	return s | uint64(e+f.bias)<<f.mant | r&f.mantMask()
}

// F16ToF64 is the exact value of the binary16 x.
func F16ToF64(x uint16) float64 { return f16.toF64(uint64(x)) }

// F64ToF16 rounds x to binary16 (nearest, ties to even; overflow to
// infinity; subnormals kept).
func F64ToF16(x float64) uint16 { return uint16(f16.fromF64(x)) }

// BF16ToF64 is the exact value of the bfloat16 x.
func BF16ToF64(x uint16) float64 { return bf16.toF64(uint64(x)) }

// F64ToBF16 rounds x to bfloat16 (nearest, ties to even; overflow to
// infinity; subnormals kept).
func F64ToBF16(x float64) uint16 { return uint16(bf16.fromF64(x)) }

// F32ToF64 is the exact value of the binary32 x.
func F32ToF64(x uint32) float64 { return float64(math.Float32frombits(x)) }

// IsNaN16 reports whether the binary16 x is a NaN.
func IsNaN16(x uint16) bool { return f16.isNaN(uint64(x)) }

// IsNaNBF16 reports whether the bfloat16 x is a NaN.
func IsNaNBF16(x uint16) bool { return bf16.isNaN(uint64(x)) }

// IsNaN32 reports whether the binary32 x is a NaN.
func IsNaN32(x uint32) bool { return x&0x7f800000 == 0x7f800000 && x&0x007fffff != 0 }

// IsNaN64 reports whether the binary64 x is a NaN.
func IsNaN64(x uint64) bool {
	return x&0x7ff0000000000000 == 0x7ff0000000000000 && x&(1<<52-1) != 0
}

// FlushF16 is x with a subnormal replaced by zero of its sign.
func FlushF16(x uint16) uint16 {
	if f16.isSub(uint64(x)) {
		return x & 0x8000
	}
	return x
}

// FlushF32 is x with a subnormal replaced by zero of its sign.
func FlushF32(x uint32) uint32 {
	if x&0x7f800000 == 0 {
		return x & 0x80000000
	}
	return x
}

// CanonF16 is x, or the canonical NaN 0x7fff if x is a NaN.
func CanonF16(x uint16) uint16 {
	if IsNaN16(x) {
		return CanonicalNaN16
	}
	return x
}

// CanonBF16 is x, or the canonical NaN 0x7fff if x is a NaN.
func CanonBF16(x uint16) uint16 {
	if IsNaNBF16(x) {
		return CanonicalNaNBF16
	}
	return x
}

// CanonF32 is x, or the canonical NaN 0x7fffffff if x is a NaN. NVIDIA: "The
// result of a single-precision floating-point operation involving one or
// more input NaNs is the quiet NaN of bit pattern 0x7fffffff" (CUDA C++
// Programming Guide, Compute Capabilities, Floating-Point Standard,
// https://docs.nvidia.com/cuda/cuda-c-programming-guide/#floating-point-standard).
func CanonF32(x uint32) uint32 {
	if IsNaN32(x) {
		return CanonicalNaN32
	}
	return x
}

// add is a+b in f (f16 or bf16), with NaNs per invariant 4.
func (f format) add(a, b uint64) uint64 {
	switch {
	case f.isNaN(a):
		return a | f.quiet()
	case f.isNaN(b):
		return b | f.quiet()
	}
	s := f.toF64(a) + f.toF64(b)
	if math.IsNaN(s) { // inf + -inf
		return f.expMask() | f.quiet()
	}
	return f.fromF64(s)
}

// AddF16 is a+b in binary16, rounded to nearest even, subnormals kept. The
// float64 sum of two binary16 values is exact (it needs at most 40
// significant bits), so the one rounding is the rounding to binary16.
func AddF16(a, b uint16) uint16 { return uint16(f16.add(uint64(a), uint64(b))) }

// SubF16 is a-b in binary16 (LSC fsub: new = old - src).
func SubF16(a, b uint16) uint16 {
	if IsNaN16(a) || IsNaN16(b) {
		return AddF16(a, b)
	}
	return AddF16(a, b^0x8000)
}

// AddBF16 is a+b in bfloat16, rounded to nearest even, subnormals kept. The
// sum is rounded first to float64 and then to bfloat16; by Figueroa's
// theorem (53 >= 2*8+2) the second rounding gives the correctly rounded
// bfloat16 sum.
func AddBF16(a, b uint16) uint16 { return uint16(bf16.add(uint64(a), uint64(b))) }

// SubBF16 is a-b in bfloat16.
func SubBF16(a, b uint16) uint16 {
	if IsNaNBF16(a) || IsNaNBF16(b) {
		return AddBF16(a, b)
	}
	return AddBF16(a, b^0x8000)
}

// AddF32 is a+b in binary32, rounded to nearest even. With ftz, subnormal
// inputs and results are flushed to zero of their sign (PTX atom.add.f32 on
// .global, SASS ATOM.ADD.F32.FTZ.RN). The float64 sum is rounded once more
// to binary32; by Figueroa's theorem (53 >= 2*24+2) that is the correctly
// rounded binary32 sum. Go's float64-to-float32 conversion rounds to nearest
// even, with subnormals and overflow to infinity.
func AddF32(a, b uint32, ftz bool) uint32 {
	switch {
	case IsNaN32(a):
		return a | 0x00400000
	case IsNaN32(b):
		return b | 0x00400000
	}
	if ftz {
		a, b = FlushF32(a), FlushF32(b)
	}
	s := F32ToF64(a) + F32ToF64(b)
	if math.IsNaN(s) {
		return DefaultNaN32
	}
	r := math.Float32bits(float32(s))
	if ftz {
		r = FlushF32(r)
	}
	return r
}

// SubF32 is a-b in binary32 (LSC fsub).
func SubF32(a, b uint32, ftz bool) uint32 {
	if IsNaN32(a) || IsNaN32(b) {
		return AddF32(a, b, ftz)
	}
	return AddF32(a, b^0x80000000, ftz)
}

// AddF64 is a+b in binary64.
func AddF64(a, b uint64) uint64 {
	switch {
	case IsNaN64(a):
		return a | 1<<51
	case IsNaN64(b):
		return b | 1<<51
	}
	s := math.Float64frombits(a) + math.Float64frombits(b)
	if math.IsNaN(s) {
		return DefaultNaN64
	}
	return math.Float64bits(s)
}

// SubF64 is a-b in binary64 (LSC fsub).
func SubF64(a, b uint64) uint64 {
	if IsNaN64(a) || IsNaN64(b) {
		return AddF64(a, b)
	}
	return AddF64(a, b^1<<63)
}

// AddF16x2 adds the two binary16 halves of a and b independently.
func AddF16x2(a, b uint32) uint32 {
	return pack(AddF16(uint16(a), uint16(b)), AddF16(uint16(a>>16), uint16(b>>16)))
}

// AddBF16x2 adds the two bfloat16 halves of a and b independently.
func AddBF16x2(a, b uint32) uint32 {
	return pack(AddBF16(uint16(a), uint16(b)), AddBF16(uint16(a>>16), uint16(b>>16)))
}

func pack(lo, hi uint16) uint32 { return uint32(lo) | uint32(hi)<<16 }
