package fp

import "math"

// MinMaxRule is how a float min or max treats NaNs and signed zeros. The
// rules differ by vendor, and neither is IEEE 754-2008 minNum/maxNum exactly.
type MinMaxRule uint8

const (
	// MinMaxPTX is the PTX ISA's min/max without .NaN (section 9.7.4.7/8,
	// "Half Precision Floating Point Instructions: min/max", and 9.7.3.11/12
	// for f32/f64, https://docs.nvidia.com/cuda/parallel-thread-execution/
	// #half-precision-floating-point-instructions-min): a NaN with a number
	// gives the number; two NaNs give NaN, which is the canonical NaN
	// (0x7fff for f16 and bf16, CUDART_NAN_FP16/CUDART_NAN_BF16 "canonical
	// NaN" in cuda_fp16.h/cuda_bf16.h; 0x7fffffff for f32, CUDA C++
	// Programming Guide, Floating-Point Standard); "If values of both inputs
	// are 0.0, then +0.0 > -0.0". Signaling NaNs are not special: "while
	// SNaN encodings are supported, they are not signaling and are handled
	// as quiet" (same Programming Guide section). SASS ATOM.MIN/MAX.F16x2.RN
	// is what ptxas emits for atom.min/max.noftz.f16x2, so it follows this
	// rule too.
	MinMaxPTX MinMaxRule = iota + 1
	// MinMaxIntel is Intel's float min/max atomics (vISA DWORD_ATOMIC
	// FMIN/FMAX, LSC lsc_atomic_fmin/fmax). Intel's hardware specification,
	// as quoted by the piglit tests written against it
	// (tests/spec/intel_shader_atomic_float_minmax/execution/
	// ssbo-atomicMin-float-NaN.shader_test and ssbo-atomicMax-float-NaN):
	//
	//	fmin(sNaN, x) = sNaN    fmin(x, sNaN) = sNaN    fmin(qNaN, sNaN) = sNaN
	//	fmin(qNaN, x) = x       fmin(x, qNaN) = x
	//	fmin(sNaN, sNaN), fmin(qNaN, qNaN): a NaN, "does not explicitly state
	//	which"
	//
	// and the same for fmax. A returned sNaN keeps its bits (the tests check
	// the memory word equals the sNaN operand exactly). This is IEEE
	// 754-2008 minNum for quiet NaNs but not for signaling ones (2008 would
	// return a quiet NaN). Where the specification is silent we choose: two
	// NaNs of the same kind give the first operand (old memory, unchanged);
	// -0 orders below +0 as in IEEE 754-2019 minimum/minimumNumber (no
	// public Intel document states the signed-zero order; minNum allows
	// either).
	MinMaxIntel
)

// pick is the min (or, with wantMax, the max) of a and b under r. isNaN,
// isSNaN and less are per format; canon is the format's PTX canonical NaN.
func pick(a, b uint64, r MinMaxRule, isNaN, isSNaN func(uint64) bool,
	less func(a, b uint64) bool, canon uint64, wantMax bool) uint64 {
	an, bn := isNaN(a), isNaN(b)
	if r == MinMaxIntel {
		switch {
		case isSNaN(a):
			return a
		case isSNaN(b):
			return b
		}
	}
	switch {
	case an && bn:
		if r == MinMaxPTX {
			return canon
		}
		return a
	case an:
		return b
	case bn:
		return a
	}
	if wantMax {
		if less(a, b) {
			return b
		}
		return a
	}
	if less(b, a) {
		return b
	}
	return a
}

// lessSigned orders two non-NaN values given as float64 with -0 < +0.
func lessSigned(x, y float64) bool {
	if x == 0 && y == 0 {
		return math.Signbit(x) && !math.Signbit(y)
	}
	return x < y
}

func isSNaN16(x uint64) bool   { return f16.isNaN(x) && x&f16.quiet() == 0 }
func isSNaNBF16(x uint64) bool { return bf16.isNaN(x) && x&bf16.quiet() == 0 }
func isSNaN32(x uint64) bool   { return IsNaN32(uint32(x)) && x&0x00400000 == 0 }
func isSNaN64(x uint64) bool   { return IsNaN64(x) && x&(1<<51) == 0 }
func isNaN16(x uint64) bool    { return f16.isNaN(x) }
func isNaNBF16(x uint64) bool  { return bf16.isNaN(x) }
func isNaN32(x uint64) bool    { return IsNaN32(uint32(x)) }

func less16(a, b uint64) bool   { return lessSigned(f16.toF64(a), f16.toF64(b)) }
func lessBF16(a, b uint64) bool { return lessSigned(bf16.toF64(a), bf16.toF64(b)) }
func less32(a, b uint64) bool   { return lessSigned(F32ToF64(uint32(a)), F32ToF64(uint32(b))) }
func less64(a, b uint64) bool {
	return lessSigned(math.Float64frombits(a), math.Float64frombits(b))
}

// MinF16 is the binary16 minimum of a and b under r.
func MinF16(a, b uint16, r MinMaxRule) uint16 {
	return uint16(pick(uint64(a), uint64(b), r, isNaN16, isSNaN16, less16, uint64(CanonicalNaN16), false))
}

// MaxF16 is the binary16 maximum of a and b under r.
func MaxF16(a, b uint16, r MinMaxRule) uint16 {
	return uint16(pick(uint64(a), uint64(b), r, isNaN16, isSNaN16, less16, uint64(CanonicalNaN16), true))
}

// MinBF16 is the bfloat16 minimum of a and b under r.
func MinBF16(a, b uint16, r MinMaxRule) uint16 {
	return uint16(pick(uint64(a), uint64(b), r, isNaNBF16, isSNaNBF16, lessBF16, uint64(CanonicalNaNBF16), false))
}

// MaxBF16 is the bfloat16 maximum of a and b under r.
func MaxBF16(a, b uint16, r MinMaxRule) uint16 {
	return uint16(pick(uint64(a), uint64(b), r, isNaNBF16, isSNaNBF16, lessBF16, uint64(CanonicalNaNBF16), true))
}

// MinF32 is the binary32 minimum of a and b under r.
func MinF32(a, b uint32, r MinMaxRule) uint32 {
	return uint32(pick(uint64(a), uint64(b), r, isNaN32, isSNaN32, less32, uint64(CanonicalNaN32), false))
}

// MaxF32 is the binary32 maximum of a and b under r.
func MaxF32(a, b uint32, r MinMaxRule) uint32 {
	return uint32(pick(uint64(a), uint64(b), r, isNaN32, isSNaN32, less32, uint64(CanonicalNaN32), true))
}

// MinF64 is the binary64 minimum of a and b under r. Only LSC (d64) has an
// f64 min atomic; under MinMaxPTX two NaNs give 0x7fffffffffffffff by
// analogy, no document lists it.
func MinF64(a, b uint64, r MinMaxRule) uint64 {
	return pick(a, b, r, IsNaN64, isSNaN64, less64, CanonicalNaN64, false)
}

// MaxF64 is the binary64 maximum of a and b under r.
func MaxF64(a, b uint64, r MinMaxRule) uint64 {
	return pick(a, b, r, IsNaN64, isSNaN64, less64, CanonicalNaN64, true)
}

// MinF16x2 is MinF16 on each half of a and b.
func MinF16x2(a, b uint32, r MinMaxRule) uint32 {
	return pack(MinF16(uint16(a), uint16(b), r), MinF16(uint16(a>>16), uint16(b>>16), r))
}

// MaxF16x2 is MaxF16 on each half of a and b.
func MaxF16x2(a, b uint32, r MinMaxRule) uint32 {
	return pack(MaxF16(uint16(a), uint16(b), r), MaxF16(uint16(a>>16), uint16(b>>16), r))
}

// MinBF16x2 is MinBF16 on each half of a and b.
func MinBF16x2(a, b uint32, r MinMaxRule) uint32 {
	return pack(MinBF16(uint16(a), uint16(b), r), MinBF16(uint16(a>>16), uint16(b>>16), r))
}

// MaxBF16x2 is MaxBF16 on each half of a and b.
func MaxBF16x2(a, b uint32, r MinMaxRule) uint32 {
	return pack(MaxBF16(uint16(a), uint16(b), r), MaxBF16(uint16(a>>16), uint16(b>>16), r))
}

// EqF16 is IEEE 754 equality of two binary16 values: -0 == +0, NaN equals
// nothing. Intel's float compare-and-swap compares this way: piglit
// ssbo-atomicCompSwap-float-negative-zero swaps -0 for a +0 comparand, and
// ssbo-atomicCompSwap-float-NaN never swaps, even when memory and comparand
// are the same NaN bits (0x7fffffff).
func EqF16(a, b uint16) bool { return eq(uint64(a), uint64(b), 0x8000, isNaN16) }

// EqBF16 is IEEE 754 equality of two bfloat16 values.
func EqBF16(a, b uint16) bool { return eq(uint64(a), uint64(b), 0x8000, isNaNBF16) }

// EqF32 is IEEE 754 equality of two binary32 values.
func EqF32(a, b uint32) bool { return eq(uint64(a), uint64(b), 0x80000000, isNaN32) }

// EqF64 is IEEE 754 equality of two binary64 values.
func EqF64(a, b uint64) bool { return eq(a, b, 1<<63, IsNaN64) }

// eq: finite non-zero values are equal exactly when their bits are.
func eq(a, b, sign uint64, isNaN func(uint64) bool) bool {
	if isNaN(a) || isNaN(b) {
		return false
	}
	if a&^sign == 0 && b&^sign == 0 {
		return true
	}
	return a == b
}
