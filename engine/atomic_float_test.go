package engine

import (
	"strings"
	"testing"
)

// Expected values are hand-computed from the seeds' formulas (new = old op b;
// CAS new = (old == b) ? c : old) and the rules in atomic_float.go. Where a
// value comes from a public test suite it says so:
//
//   - piglit tests/spec/intel_shader_atomic_float_minmax/execution/
//     ssbo-atomicMin-float-NaN.shader_test, ssbo-atomicMax-float-NaN,
//     ssbo-atomicCompSwap-float-NaN and
//     ssbo-atomicCompSwap-float-negative-zero.shader_test (Igalia/piglit),
//     written against Intel's hardware specification of the float
//     min/max/compare-exchange atomics: the NaN memory words and the
//     expected sNaN/qNaN outcomes below are theirs.
//   - triton-lang/triton test/TritonNvidiaGPU/bf16-atomics.mlir shows a bf16
//     atomic add lowering to atom.global...add.noftz.bf16 (kFAddBF16), and
//     Triton's tritongpu_to_llvm_hopper_ptx80.mlir an f32 one to
//     atom.global...add.f32 (kFAddF32FTZ: global memory flushes).
type floatCase struct {
	name       string
	k          kind
	width      int // element bits: 16, 32 or 64
	old, b, c  uint64
	want       uint64
	wantReason string
}

const (
	h1    = 0x3c00 // f16 1.0
	h2048 = 0x6800 // f16 2048
	b1    = 0x3f80 // bf16 1.0
	b256  = 0x4380 // bf16 256
	s1    = 0x3f800000
	s2    = 0x40000000
	d1    = 0x3ff0000000000000
	d2    = 0x4000000000000000
	d3    = 0x4008000000000000
)

var floatCases = []floatCase{
	// PTX atom.add.f32 on .shared: subnormals kept, NVIDIA canonical NaN.
	{"f32 1+1", kFAddF32, 32, s1, s1, 0, s2, "exact"},
	{"f32 subnormal kept", kFAddF32, 32, 0x00c00000, 0x80800000, 0, 0x00400000, "1.5*2^-126 - 2^-126 = 2^-127, subnormal, kept on .shared"},
	{"f32 1+2^-24 ties to 1", kFAddF32, 32, s1, 0x33800000, 0, s1, "half an ulp: tie to even"},
	{"f32 NaN input canonical", kFAddF32, 32, s1, 0x7fc00001, 0, 0x7fffffff, "CUDA guide: NaN results are 0x7fffffff"},
	{"f32 inf-inf canonical", kFAddF32, 32, 0x7f800000, 0xff800000, 0, 0x7fffffff, "generated NaN is canonical too"},
	{"f32 -0 + -0", kFAddF32, 32, 0x80000000, 0x80000000, 0, 0x80000000, "IEEE: -0"},
	// PTX atom.add.f32 on .global, SASS ATOM.ADD.F32.FTZ.RN.
	{"f32 ftz result", kFAddF32FTZ, 32, 0x00c00000, 0x80800000, 0, 0x00000000, "subnormal result flushed to +0"},
	{"f32 ftz -result", kFAddF32FTZ, 32, 0x80c00000, 0x00800000, 0, 0x80000000, "sign-preserving zero"},
	{"f32 ftz input", kFAddF32FTZ, 32, 0x00800000, 0x80400000, 0, 0x00800000, "subnormal input read as -0"},
	{"f32 ftz normal", kFAddF32FTZ, 32, s1, s2, 0, 0x40400000, "1+2 = 3"},
	{"f32 ftz NaN", kFAddF32FTZ, 32, 0xff800001, s1, 0, 0x7fffffff, "canonical NaN"},
	// f64: PTX atom.add.f64, SASS .F64.RN, LSC fadd/fsub d64.
	{"f64 1+2", kFAddF64, 64, d1, d2, 0, d3, "exact"},
	{"f64 1+2^-53 ties to 1", kFAddF64, 64, d1, 0x3ca0000000000000, 0, d1, "tie to even"},
	{"f64 NaN propagates", kFAddF64, 64, 0x7ff0000000000005, d1, 0, 0x7ff8000000000005, "IEEE default: first NaN, quieted"},
	{"f64 inf-inf", kFAddF64, 64, 0x7ff0000000000000, 0xfff0000000000000, 0, 0x7ff8000000000000, "default NaN, not the host's"},
	{"f64 3-1", kFSubF64, 64, d3, d1, 0, d2, "LSC fsub: old - src"},
	{"f64 -0 - +0", kFSubF64, 64, 1 << 63, 0, 0, 1 << 63, "IEEE: -0"},
	// PTX atom.add.noftz.f16 / bf16.
	{"f16 2048+1", kFAddF16, 16, h2048, h1, 0, h2048, "2049 ties to 2048"},
	{"f16 subnormal kept", kFAddF16, 16, 0x0001, 0x0001, 0, 0x0002, ".noftz keeps subnormals"},
	{"f16 overflow", kFAddF16, 16, 0x7bff, 0x4c00, 0, 0x7c00, "65504+16 = 65520 ties to 65536: inf"},
	{"f16 NaN canonical", kFAddF16, 16, 0x7e00, h1, 0, 0x7fff, "CUDART_NAN_FP16"},
	{"bf16 256+1", kFAddBF16, 16, b256, b1, 0, b256, "257 ties to 256"},
	{"bf16 1+1", kFAddBF16, 16, b1, b1, 0, 0x4000, "exact"},
	{"bf16 NaN canonical", kFAddBF16, 16, b1, 0xff81, 0, 0x7fff, "CUDART_NAN_BF16"},
	// Packed: element 0 in bits 0..15.
	{"f16x2 add", kFAddF16x2, 32, h2048<<16 | h1, h1<<16 | h1, 0, h2048<<16 | 0x4000, "hi 2048+1=2048, lo 1+1=2"},
	{"f16x2 NaN lane", kFAddF16x2, 32, 0x7c01<<16 | h1, h1<<16 | h1, 0, 0x7fff<<16 | 0x4000, "NaN lane canonical, other lane unaffected"},
	{"f16x2 subnormal kept", kFAddF16x2, 32, 0x0001, 0x0001, 0, 0x0002, ".noftz / SASS .F16x2.RN"},
	{"f16x2 ftz", kFAddF16x2FTZ, 32, 0x0001<<16 | 0x0401, 0x8001<<16 | 0x8400, 0, 0x0000_0000, "hi: +0 + -0 inputs flushed; lo: 2^-24 result flushed"},
	{"f16x2 ftz normal", kFAddF16x2FTZ, 32, h1<<16 | h1, h1<<16 | h1, 0, 0x4000<<16 | 0x4000, "1+1"},
	{"bf16x2 add", kFAddBF16x2, 32, b256<<16 | b1, b1<<16 | b1, 0, b256<<16 | 0x4000, "hi 256+1=256, lo 1+1=2"},
	{"bf16x2 NaN lane", kFAddBF16x2, 32, 0x7fc0<<16 | b1, b1<<16 | b1, 0, 0x7fff<<16 | 0x4000, "canonical per lane"},
	// PTX min/max (9.7.4.7/8): NaN with a number gives the number, two NaNs
	// the canonical NaN, +0.0 > -0.0.
	{"f16 min", kFMinF16PTX, 16, h2048, h1, 0, h1, ""},
	{"f16 min NaN", kFMinF16PTX, 16, 0x7e00, h1, 0, h1, "NaN, x -> x"},
	{"f16 min NaN NaN", kFMinF16PTX, 16, 0x7e00, 0xfc01, 0, 0x7fff, "canonical"},
	{"f16 min -0 +0", kFMinF16PTX, 16, 0x0000, 0x8000, 0, 0x8000, "-0 < +0"},
	{"f16 max", kFMaxF16PTX, 16, h2048, h1, 0, h2048, ""},
	{"f16 max -0 +0", kFMaxF16PTX, 16, 0x8000, 0x0000, 0, 0x0000, "+0 > -0"},
	{"f16 max sNaN is a NaN", kFMaxF16PTX, 16, h1, 0x7c01, 0, h1, "sNaN handled as quiet"},
	{"bf16 min", kFMinBF16PTX, 16, b256, 0xbf80, 0, 0xbf80, "-1 < 256"},
	{"bf16 min NaN NaN", kFMinBF16PTX, 16, 0x7fc0, 0x7fc1, 0, 0x7fff, "canonical"},
	{"bf16 max", kFMaxBF16PTX, 16, b256, 0xbf80, 0, b256, ""},
	{"bf16 max NaN", kFMaxBF16PTX, 16, 0xffc0, 0xff80, 0, 0xff80, "NaN, -inf -> -inf"},
	{"f16x2 min", kFMinF16x2PTX, 32, 0x0000<<16 | 0x7e00, 0x8000<<16 | h1, 0, 0x8000<<16 | h1, "hi -0, lo NaN->1"},
	{"f16x2 max", kFMaxF16x2PTX, 32, 0x8000<<16 | 0x7e00, 0x0000<<16 | 0x7e01, 0, 0x0000<<16 | 0x7fff, "hi +0, lo two NaNs canonical"},
	{"bf16x2 min", kFMinBF16x2PTX, 32, b256<<16 | b1, b1<<16 | b256, 0, b1<<16 | b1, "per lane"},
	{"bf16x2 max", kFMaxBF16x2PTX, 32, b256<<16 | 0x7fc0, b1<<16 | b1, 0, b256<<16 | b1, "per lane, NaN lane gives the number"},
	// LSC fadd/fsub d16, d32: IEEE NaNs, subnormals kept.
	{"lsc f16 add", kFAddF16Intel, 16, h2048, h1, 0, h2048, "tie to even"},
	{"lsc f16 add NaN", kFAddF16Intel, 16, 0x7c05, h1, 0, 0x7e05, "first NaN quieted, payload kept"},
	{"lsc f16 sub", kFSubF16Intel, 16, 0x4000, h1, 0, h1, "2-1"},
	{"lsc f16 sub -0", kFSubF16Intel, 16, 0x8000, 0x0000, 0, 0x8000, "-0 - +0 = -0"},
	{"lsc f32 add", kFAddF32Intel, 32, s1, s1, 0, s2, ""},
	{"lsc f32 add subnormal", kFAddF32Intel, 32, 0x00c00000, 0x80800000, 0, 0x00400000, "kept"},
	{"lsc f32 inf-inf", kFAddF32Intel, 32, 0x7f800000, 0xff800000, 0, 0x7fc00000, "IEEE default NaN"},
	{"lsc f32 sub", kFSubF32Intel, 32, s2, s1, 0, s1, "2-1"},
	{"lsc f32 sub NaN b", kFSubF32Intel, 32, s2, 0xffc00007, 0, 0xffc00007, "NaN operand bits, sign not flipped"},
	// Intel FMIN/FMAX: piglit (Intel hardware spec) NaN outcomes.
	{"intel f32 min qNaN mem", kFMinF32Intel, 32, 0x7fc0d4cc, 0x40800000, 0, 0x40800000, "piglit: fmin(qNaN, x) = x"},
	{"intel f32 min sNaN mem", kFMinF32Intel, 32, 0x7f832cca, 0x40c00000, 0, 0x7f832cca, "piglit: fmin(sNaN, x) = sNaN, bits kept"},
	{"intel f32 min sNaN src", kFMinF32Intel, 32, 0x40000000, 0xff85c371, 0, 0xff85c371, "piglit: fmin(x, sNaN) = sNaN"},
	{"intel f32 min qNaN src", kFMinF32Intel, 32, 0x3f000000, 0x7fc0d4cc, 0, 0x3f000000, "piglit: fmin(x, qNaN) = x"},
	{"intel f32 min qNaN sNaN", kFMinF32Intel, 32, 0xffc198f7, 0x7f832cca, 0, 0x7f832cca, "piglit: fmin(qNaN, sNaN) = sNaN"},
	{"intel f32 min -0 +0", kFMinF32Intel, 32, 0x00000000, 0x80000000, 0, 0x80000000, "chosen: -0 < +0"},
	{"intel f32 max", kFMaxF32Intel, 32, 0xbf000000, 0x00000000, 0, 0x00000000, "piglit ssbo-atomicMax-float-NaN word 0: max(-0.5, 0) = 0"},
	{"intel f32 max sNaN", kFMaxF32Intel, 32, 0x7f824cae, 0x40c00000, 0, 0x7f824cae, "piglit: fmax(sNaN, x) = sNaN"},
	{"intel f32 max qNaN", kFMaxF32Intel, 32, 0x7fc03484, 0x40800000, 0, 0x40800000, "piglit: fmax(qNaN, x) = x"},
	{"intel f16 min", kFMinF16Intel, 16, h2048, h1, 0, h1, "DWORD_ATOMIC FMIN.16"},
	{"intel f16 min sNaN", kFMinF16Intel, 16, h1, 0x7d00, 0, 0x7d00, "sNaN wins, as f32"},
	{"intel f16 max qNaN", kFMaxF16Intel, 16, 0x7e00, h1, 0, h1, "qNaN loses"},
	{"intel f64 min", kFMinF64Intel, 64, d3, d1, 0, d1, "LSC fmin d64"},
	{"intel f64 max qNaN", kFMaxF64Intel, 64, 0x7ff8000000000001, d1, 0, d1, "qNaN loses"},
	{"intel f64 max sNaN", kFMaxF64Intel, 64, d1, 0x7ff0000000000001, 0, 0x7ff0000000000001, "sNaN wins"},
	// Float compare-and-swap: IEEE equality (piglit CompSwap tests).
	{"fcas f32 equal", kFCASF32, 32, s1, s1, 0x42280000, 0x42280000, "swap"},
	{"fcas f32 -0 == +0", kFCASF32, 32, 0x80000000, 0x00000000, 0x42340000, 0x42340000, "piglit negative-zero: -0 in memory swaps for a +0 comparand"},
	{"fcas f32 same NaN bits", kFCASF32, 32, 0x7fffffff, 0x7fffffff, 0x42280000, 0x7fffffff, "piglit CompSwap-float-NaN: never swaps"},
	{"fcas f32 NaN comparand", kFCASF32, 32, 0x00000000, 0x7fd55555, 0x42280000, 0x00000000, "piglit: NaN comparand never equal"},
	{"fcas f32 unequal", kFCASF32, 32, s1, s2, 0x42280000, s1, "no swap"},
	{"fcas f16 -0 == +0", kFCASF16, 16, 0x8000, 0x0000, h1, h1, "IEEE equality"},
	{"fcas f16 NaN", kFCASF16, 16, 0x7e00, 0x7e00, h1, 0x7e00, "NaN != NaN"},
	{"fcas f64 equal", kFCASF64, 64, d2, d2, d3, d3, "swap"},
	{"fcas f64 +0 == -0", kFCASF64, 64, 0, 1 << 63, d1, d1, "IEEE equality"},
	{"fcas f64 NaN", kFCASF64, 64, 0x7ff8000000000000, 0x7ff8000000000000, d1, 0x7ff8000000000000, "NaN != NaN"},
}

func TestFloatKinds(t *testing.T) {
	seen := map[kind]bool{}
	for _, tc := range floatCases {
		seen[tc.k] = true
		var got uint64
		switch tc.width {
		case 16:
			got = uint64(fop16(tc.k, uint16(tc.old), uint16(tc.b), uint16(tc.c)))
		case 32:
			got = uint64(fop32(tc.k, uint32(tc.old), uint32(tc.b), uint32(tc.c)))
		case 64:
			got = fop64(tc.k, tc.old, tc.b, tc.c)
		default:
			t.Fatalf("%s: bad width %d", tc.name, tc.width)
		}
		if got != tc.want {
			t.Errorf("%s (kind %d): old=%#x b=%#x c=%#x: got %#x, want %#x (%s)",
				tc.name, tc.k, tc.old, tc.b, tc.c, got, tc.want, tc.wantReason)
		}
	}
	for k := kFloatBase; k < kFloatEnd; k++ {
		if !seen[k] {
			t.Errorf("float kind %d has no test case", k)
		}
	}
}

// TestFloatKindWrongWidth: a float kind asked at a width it has no formula
// for is an error, never the old value unchanged.
func TestFloatKindWrongWidth(t *testing.T) {
	for _, c := range []struct {
		k    kind
		size uint8
	}{{kFAddF32, 2}, {kFAddF64, 4}, {kFAddF16, 8}, {kFCASF32, 16}} {
		if err := formulaErr(c.k, c.size); err == nil || !strings.Contains(err.Error(), "formula") {
			t.Errorf("kind %d at %d bytes: %v, want no formula", c.k, c.size, err)
		}
	}
	for _, c := range []struct {
		k    kind
		size uint8
	}{{kFAddF32, 4}, {kFAddF64, 8}, {kFAddF16, 2}, {kFCASF64, 8}, {kFAddF16x2, 4}} {
		if err := formulaErr(c.k, c.size); err != nil {
			t.Errorf("kind %d at %d bytes: %v", c.k, c.size, err)
		}
	}
}

// The float kinds must not collide with the integer ones.
func TestFloatKindRange(t *testing.T) {
	if kLoad >= kFloatBase {
		t.Fatalf("integer kinds reach %d, float kinds start at %d", kLoad, kFloatBase)
	}
}
