package fp

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestConvertF16(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want uint16
	}{
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"max finite", 65504, 0x7bff},
		{"just below overflow tie", 65519.99, 0x7bff},
		{"overflow tie rounds to even = inf", 65520, 0x7c00},
		{"huge", 1e10, 0x7c00},
		{"-huge", -1e10, 0xfc00},
		{"smallest normal", 0x1p-14, 0x0400},
		{"largest subnormal", 0x3ffp-24, 0x03ff},
		{"smallest subnormal", 0x1p-24, 0x0001},
		{"half smallest subnormal ties to zero", 0x1p-25, 0x0000},
		{"-half smallest subnormal ties to -0", -0x1p-25, 0x8000},
		{"0.75 smallest subnormal rounds up", 0x3p-26, 0x0001},
		{"1.5 smallest subnormal ties to even 2", 0x3p-25, 0x0002},
		{"2.5 smallest subnormal ties to even 2", 0x5p-25, 0x0002},
		{"subnormal rounds up to smallest normal", 0x7ffp-25, 0x0400},
		{"2049 ties to 2048", 2049, 0x6800},
		{"2051 ties to 2052", 2051, 0x6802},
		{"2050.5 rounds down", 2050.5, 0x6801},
		{"2051.5 rounds up", 2051.5, 0x6802},
		{"1+2^-11 ties to 1", 1 + 0x1p-11, 0x3c00},
		{"1+3*2^-11 ties to 1+2^-9", 1 + 0x3p-11, 0x3c02},
		{"-0", math.Copysign(0, -1), 0x8000},
		{"+inf", math.Inf(1), 0x7c00},
	}
	for _, tc := range tests {
		if got := F64ToF16(tc.in); got != tc.want {
			t.Errorf("%s: F64ToF16(%v) = %#04x, want %#04x", tc.name, tc.in, got, tc.want)
		}
	}
	// Every finite f16 survives the round trip, and F16ToF64 is monotone.
	prev := math.Inf(-1)
	for x := uint32(0xfbff); x >= 0x8001; x-- { // negatives, most negative first
		v := F16ToF64(uint16(x))
		if F64ToF16(v) != uint16(x) || !(v > prev) {
			t.Fatalf("round trip or order broken at %#04x (%v)", x, v)
		}
		prev = v
	}
	for x := uint32(0); x <= 0x7bff; x++ {
		v := F16ToF64(uint16(x))
		if F64ToF16(v) != uint16(x) || (x > 0 && !(v > prev)) {
			t.Fatalf("round trip or order broken at %#04x (%v)", x, v)
		}
		prev = v
	}
}

func TestConvertBF16(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want uint16
	}{
		{"one", 1, 0x3f80},
		{"256", 256, 0x4380},
		{"257 ties to 256", 257, 0x4380},
		{"259 ties to 260", 259, 0x4382},
		{"1+2^-8 ties to 1", 1 + 0x1p-8, 0x3f80},
		{"1+3*2^-8 ties to 1+2^-6", 1 + 0x3p-8, 0x3f82},
		{"max finite", 0xffp120, 0x7f7f},
		{"overflow tie to even = inf", 0x1ffp119, 0x7f80},
		{"smallest subnormal", 0x1p-133, 0x0001},
		{"smallest normal", 0x1p-126, 0x0080},
		{"f32 max rounds to inf", math.MaxFloat32, 0x7f80},
	}
	for _, tc := range tests {
		if got := F64ToBF16(tc.in); got != tc.want {
			t.Errorf("%s: F64ToBF16(%v) = %#04x, want %#04x", tc.name, tc.in, got, tc.want)
		}
	}
	// bf16 is the top half of f32: decoding must agree with float32.
	for x := uint32(0); x < 1<<16; x++ {
		want := float64(math.Float32frombits(x << 16))
		got := BF16ToF64(uint16(x))
		if math.IsNaN(want) {
			if !math.IsNaN(got) {
				t.Fatalf("BF16ToF64(%#04x) = %v, want NaN", x, got)
			}
			continue
		}
		if got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("BF16ToF64(%#04x) = %v, want %v", x, got, want)
		}
	}
}

type add16Case struct {
	name    string
	a, b, w uint16
}

func TestAddF16(t *testing.T) {
	tests := []add16Case{
		{"1+1", 0x3c00, 0x3c00, 0x4000},
		{"2048+1 = 2048 (1 is half an ulp, tie to even)", 0x6800, 0x3c00, 0x6800},
		{"2050+1 = 2052 (tie to even)", 0x6801, 0x3c00, 0x6802},
		{"65504+8 rounds down", 0x7bff, 0x4800, 0x7bff},
		{"65504+16 overflows (tie to even is 65536)", 0x7bff, 0x4c00, 0x7c00},
		{"max+max = inf", 0x7bff, 0x7bff, 0x7c00},
		{"-max + -max = -inf", 0xfbff, 0xfbff, 0xfc00},
		{"subnormal+subnormal kept", 0x0001, 0x0001, 0x0002},
		{"largest subnormal + smallest = smallest normal", 0x03ff, 0x0001, 0x0400},
		{"normal - normal = subnormal, exact", 0x0401, 0x8400, 0x0001},
		{"-0 + +0 = +0", 0x8000, 0x0000, 0x0000},
		{"+0 + -0 = +0", 0x0000, 0x8000, 0x0000},
		{"-0 + -0 = -0", 0x8000, 0x8000, 0x8000},
		{"x + -x = +0", 0x4248, 0xc248, 0x0000},
		{"inf + -inf = default NaN", 0x7c00, 0xfc00, DefaultNaN16},
		{"inf + 1 = inf", 0x7c00, 0x3c00, 0x7c00},
		{"qNaN payload propagates", 0x7e01, 0x3c00, 0x7e01},
		{"sNaN is quieted", 0x7c01, 0x3c00, 0x7e01},
		{"first NaN wins", 0xfe05, 0x7e07, 0xfe05},
		{"NaN second operand", 0x3c00, 0xfc03, 0xfe03},
	}
	for _, tc := range tests {
		if got := AddF16(tc.a, tc.b); got != tc.w {
			t.Errorf("%s: AddF16(%#04x, %#04x) = %#04x, want %#04x", tc.name, tc.a, tc.b, got, tc.w)
		}
	}
	subs := []add16Case{
		{"1-1 = +0", 0x3c00, 0x3c00, 0x0000},
		{"-0 - +0 = -0", 0x8000, 0x0000, 0x8000},
		{"+0 - +0 = +0", 0x0000, 0x0000, 0x0000},
		{"2048 - -1 = 2048", 0x6800, 0xbc00, 0x6800},
		{"NaN b keeps its sign", 0x3c00, 0x7e02, 0x7e02},
	}
	for _, tc := range subs {
		if got := SubF16(tc.a, tc.b); got != tc.w {
			t.Errorf("%s: SubF16(%#04x, %#04x) = %#04x, want %#04x", tc.name, tc.a, tc.b, got, tc.w)
		}
	}
}

func TestAddBF16(t *testing.T) {
	tests := []add16Case{
		{"1+1", 0x3f80, 0x3f80, 0x4000},
		{"256+1 = 256 (tie to even)", 0x4380, 0x3f80, 0x4380},
		{"258+1 = 260 (tie to even)", 0x4381, 0x3f80, 0x4382},
		{"max+max = inf", 0x7f7f, 0x7f7f, 0x7f80},
		{"subnormals kept", 0x0001, 0x0002, 0x0003},
		{"-0 + -0 = -0", 0x8000, 0x8000, 0x8000},
		{"-0 + +0 = +0", 0x8000, 0x0000, 0x0000},
		{"inf - inf", 0x7f80, 0xff80, DefaultNaNBF16},
		{"sNaN quieted", 0x7f81, 0x3f80, 0x7fc1},
		{"1 + 2^-8 ties to 1", 0x3f80, 0x3b80, 0x3f80},
		{"1 + 3*2^-8 ties up to 1+2^-6", 0x3f80, 0x3c40, 0x3f82},
	}
	for _, tc := range tests {
		if got := AddBF16(tc.a, tc.b); got != tc.w {
			t.Errorf("%s: AddBF16(%#04x, %#04x) = %#04x, want %#04x", tc.name, tc.a, tc.b, got, tc.w)
		}
	}
	if got := SubBF16(0x4380, 0xbf80); got != 0x4380 {
		t.Errorf("SubBF16(256, -1) = %#04x, want 256", got)
	}
}

// Adding bf16 1.0 to 0 a thousand times stops at 256: 256+1 is a tie
// between 256 and 258 and rounds to the even 256.
func TestBF16AccumulateStalls(t *testing.T) {
	acc := uint16(0)
	for range 1000 {
		acc = AddBF16(acc, 0x3f80)
	}
	if acc != 0x4380 {
		t.Fatalf("sum = %#04x (%v), want 0x4380 (256)", acc, BF16ToF64(acc))
	}
	// f16 stalls at 2048 for the same reason.
	acc = 0
	for range 3000 {
		acc = AddF16(acc, 0x3c00)
	}
	if acc != 0x6800 {
		t.Fatalf("f16 sum = %#04x (%v), want 0x6800 (2048)", acc, F16ToF64(acc))
	}
}

func TestAddF32(t *testing.T) {
	tests := []struct {
		name string
		a, b uint32
		w    uint32 // subnormals kept (PTX .shared, LSC)
		wftz uint32 // subnormals flushed (PTX .global, SASS .FTZ)
	}{
		{"1 + 2^-24 ties to 1", 0x3f800000, 0x33800000, 0x3f800000, 0x3f800000},
		{"1 + 3*2^-24 ties to 1+2^-22", 0x3f800000, 0x34400000, 0x3f800002, 0x3f800002},
		{"1 + (2^-24 + 2^-47) rounds up", 0x3f800000, 0x33800001, 0x3f800001, 0x3f800001},
		{"max + max = inf", 0x7f7fffff, 0x7f7fffff, 0x7f800000, 0x7f800000},
		{"-max + -max = -inf", 0xff7fffff, 0xff7fffff, 0xff800000, 0xff800000},
		{"min normal + -subnormal input", 0x00800000, 0x80400000, 0x00400000, 0x00800000},
		{"1.5 minnorm - minnorm: subnormal result", 0x00c00000, 0x80800000, 0x00400000, 0x00000000},
		{"-1.5 minnorm + minnorm: -subnormal result", 0x80c00000, 0x00800000, 0x80400000, 0x80000000},
		{"subnormal + subnormal", 0x00000001, 0x00000001, 0x00000002, 0x00000000},
		{"-subnormal + -subnormal", 0x80000001, 0x80000001, 0x80000002, 0x80000000},
		{"-subnormal + +0", 0x80000001, 0x00000000, 0x80000001, 0x00000000},
		{"-0 + +0 = +0", 0x80000000, 0x00000000, 0x00000000, 0x00000000},
		{"-0 + -0 = -0", 0x80000000, 0x80000000, 0x80000000, 0x80000000},
		{"inf + -inf = NaN", 0x7f800000, 0xff800000, DefaultNaN32, DefaultNaN32},
		{"sNaN quieted, payload kept", 0x7f800001, 0x3f800000, 0x7fc00001, 0x7fc00001},
		{"NaN in b", 0x3f800000, 0xffc00005, 0xffc00005, 0xffc00005},
	}
	for _, tc := range tests {
		if got := AddF32(tc.a, tc.b, false); got != tc.w {
			t.Errorf("%s: AddF32(%#08x, %#08x, false) = %#08x, want %#08x", tc.name, tc.a, tc.b, got, tc.w)
		}
		if got := AddF32(tc.a, tc.b, true); got != tc.wftz {
			t.Errorf("%s: AddF32(%#08x, %#08x, true) = %#08x, want %#08x", tc.name, tc.a, tc.b, got, tc.wftz)
		}
	}
	if got := SubF32(0x80000000, 0x00000000, false); got != 0x80000000 {
		t.Errorf("SubF32(-0, +0) = %#08x, want -0", got)
	}
	if got := SubF32(0x3f800000, 0x3f800000, true); got != 0 {
		t.Errorf("SubF32(1, 1) = %#08x, want +0", got)
	}
}

func TestAddF64(t *testing.T) {
	tests := []struct {
		name    string
		a, b, w uint64
	}{
		{"1 + 2^-53 ties to 1", 0x3ff0000000000000, 0x3ca0000000000000, 0x3ff0000000000000},
		{"-0 + -0", 1 << 63, 1 << 63, 1 << 63},
		{"-0 + +0", 1 << 63, 0, 0},
		{"inf - inf gives the default NaN on every host", 0x7ff0000000000000, 0xfff0000000000000, DefaultNaN64},
		{"sNaN quieted", 0x7ff0000000000001, 0, 0x7ff8000000000001},
		{"max + max = inf", 0x7fefffffffffffff, 0x7fefffffffffffff, 0x7ff0000000000000},
	}
	for _, tc := range tests {
		if got := AddF64(tc.a, tc.b); got != tc.w {
			t.Errorf("%s: AddF64 = %#016x, want %#016x", tc.name, got, tc.w)
		}
	}
	if got := SubF64(0x4000000000000000, 0x3ff0000000000000); got != 0x3ff0000000000000 {
		t.Errorf("SubF64(2, 1) = %#016x, want 1", got)
	}
}

func TestPacked(t *testing.T) {
	// lo: 1+1 = 2; hi: 2048+1 = 2048.
	if got := AddF16x2(0x68003c00, 0x3c003c00); got != 0x68004000 {
		t.Errorf("AddF16x2 = %#08x, want 0x68004000", got)
	}
	// lo: 256+1 = 256; hi: -0 + -0 = -0.
	if got := AddBF16x2(0x80004380, 0x80003f80); got != 0x80004380 {
		t.Errorf("AddBF16x2 = %#08x, want 0x80004380", got)
	}
	// lo: min(NaN, 1) = 1; hi: min(-0, +0) = -0.
	if got := MinF16x2(0x80007e00, 0x00003c00, MinMaxPTX); got != 0x80003c00 {
		t.Errorf("MinF16x2 = %#08x, want 0x80003c00", got)
	}
	if got := MaxBF16x2(0x7fc17fc1, 0x3f807fc2, MinMaxPTX); got != 0x3f807fff {
		t.Errorf("MaxBF16x2 = %#08x, want 0x3f807fff", got)
	}
}

func TestMinMax(t *testing.T) {
	type c32 struct {
		name       string
		a, b       uint32
		r          MinMaxRule
		min, maxim uint32
	}
	const (
		one  = 0x3f800000
		two  = 0x40000000
		qnan = 0x7fc0d4cc // from piglit ssbo-atomicMin-float-NaN (memory word 4)
		nqn  = 0xffc198f7 // piglit, memory word 5
		snan = 0x7f832cca // piglit, memory word 6
		nsn  = 0xff85c371 // piglit, memory word 7
	)
	tests := []c32{
		{"ordered", one, two, MinMaxPTX, one, two},
		{"ordered intel", two, one, MinMaxIntel, one, two},
		{"-0 < +0 (PTX: +0.0 > -0.0)", 0x80000000, 0, MinMaxPTX, 0x80000000, 0},
		{"+0 vs -0 (PTX)", 0, 0x80000000, MinMaxPTX, 0x80000000, 0},
		{"-0 < +0 (Intel, chosen)", 0, 0x80000000, MinMaxIntel, 0x80000000, 0},
		{"PTX: NaN, number -> number", qnan, one, MinMaxPTX, one, one},
		{"PTX: number, NaN -> number", one, nqn, MinMaxPTX, one, one},
		{"PTX: sNaN is just a NaN", snan, two, MinMaxPTX, two, two},
		{"PTX: two NaNs -> canonical", qnan, snan, MinMaxPTX, CanonicalNaN32, CanonicalNaN32},
		{"Intel: qNaN, x -> x", qnan, one, MinMaxIntel, one, one},
		{"Intel: x, qNaN -> x", one, nqn, MinMaxIntel, one, one},
		{"Intel: sNaN, x -> sNaN bits", snan, one, MinMaxIntel, snan, snan},
		{"Intel: x, sNaN -> sNaN bits", one, nsn, MinMaxIntel, nsn, nsn},
		{"Intel: qNaN, sNaN -> sNaN", qnan, nsn, MinMaxIntel, nsn, nsn},
		{"Intel: sNaN, qNaN -> sNaN", snan, nqn, MinMaxIntel, snan, snan},
		{"Intel: qNaN, qNaN -> old (chosen)", nqn, qnan, MinMaxIntel, nqn, nqn},
		{"Intel: sNaN, sNaN -> old (chosen)", nsn, snan, MinMaxIntel, nsn, nsn},
		{"-inf", 0xff800000, one, MinMaxPTX, 0xff800000, one},
		{"subnormals compare", 0x00000001, 0x80000001, MinMaxIntel, 0x80000001, 0x00000001},
	}
	for _, tc := range tests {
		if got := MinF32(tc.a, tc.b, tc.r); got != tc.min {
			t.Errorf("%s: MinF32(%#08x, %#08x) = %#08x, want %#08x", tc.name, tc.a, tc.b, got, tc.min)
		}
		if got := MaxF32(tc.a, tc.b, tc.r); got != tc.maxim {
			t.Errorf("%s: MaxF32(%#08x, %#08x) = %#08x, want %#08x", tc.name, tc.a, tc.b, got, tc.maxim)
		}
	}
	type c16 struct {
		name       string
		bf         bool
		a, b       uint16
		r          MinMaxRule
		min, maxim uint16
	}
	tests16 := []c16{
		{"f16 ordered", false, 0xbc00, 0x3c00, MinMaxPTX, 0xbc00, 0x3c00},
		{"f16 -0/+0", false, 0x0000, 0x8000, MinMaxPTX, 0x8000, 0x0000},
		{"f16 NaN, 1", false, 0x7e00, 0x3c00, MinMaxPTX, 0x3c00, 0x3c00},
		{"f16 NaN, NaN -> 0x7fff", false, 0x7e00, 0xfd00, MinMaxPTX, 0x7fff, 0x7fff},
		{"f16 Intel sNaN wins", false, 0x3c00, 0x7d00, MinMaxIntel, 0x7d00, 0x7d00},
		{"f16 Intel qNaN loses", false, 0x7e00, 0x3c00, MinMaxIntel, 0x3c00, 0x3c00},
		{"f16 subnormal vs zero", false, 0x0001, 0x0000, MinMaxPTX, 0x0000, 0x0001},
		{"bf16 ordered", true, 0x4380, 0x3f80, MinMaxPTX, 0x3f80, 0x4380},
		{"bf16 -0/+0", true, 0x8000, 0x0000, MinMaxPTX, 0x8000, 0x0000},
		{"bf16 NaN, NaN -> 0x7fff", true, 0x7fc0, 0xff81, MinMaxPTX, 0x7fff, 0x7fff},
		{"bf16 NaN, -inf", true, 0x7fc0, 0xff80, MinMaxPTX, 0xff80, 0xff80},
	}
	for _, tc := range tests16 {
		mn, mx := MinF16, MaxF16
		if tc.bf {
			mn, mx = MinBF16, MaxBF16
		}
		if got := mn(tc.a, tc.b, tc.r); got != tc.min {
			t.Errorf("%s: min(%#04x, %#04x) = %#04x, want %#04x", tc.name, tc.a, tc.b, got, tc.min)
		}
		if got := mx(tc.a, tc.b, tc.r); got != tc.maxim {
			t.Errorf("%s: max(%#04x, %#04x) = %#04x, want %#04x", tc.name, tc.a, tc.b, got, tc.maxim)
		}
	}
	if got := MinF64(0x8000000000000000, 0, MinMaxIntel); got != 0x8000000000000000 {
		t.Errorf("MinF64(-0, +0) = %#016x", got)
	}
	if got := MaxF64(0x7ff0000000000001, 0x3ff0000000000000, MinMaxIntel); got != 0x7ff0000000000001 {
		t.Errorf("MaxF64(sNaN, 1) = %#016x, want the sNaN", got)
	}
	if got := MaxF64(0x7ff8000000000001, 0x3ff0000000000000, MinMaxIntel); got != 0x3ff0000000000000 {
		t.Errorf("MaxF64(qNaN, 1) = %#016x, want 1", got)
	}
}

func TestEq(t *testing.T) {
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"f32 -0 == +0", EqF32(0x80000000, 0), true},
		{"f32 same NaN bits are not equal (piglit CompSwap-float-NaN)", EqF32(0x7fffffff, 0x7fffffff), false},
		{"f32 NaN vs 0", EqF32(0x7fc00000, 0), false},
		{"f32 1 == 1", EqF32(0x3f800000, 0x3f800000), true},
		{"f32 1 != 1+ulp", EqF32(0x3f800000, 0x3f800001), false},
		{"f32 subnormal != 0", EqF32(1, 0), false},
		{"f16 -0 == +0", EqF16(0x8000, 0), true},
		{"f16 NaN", EqF16(0x7e00, 0x7e00), false},
		{"bf16 -0 == +0", EqBF16(0x8000, 0), true},
		{"bf16 NaN", EqBF16(0x7fc0, 0x7fc0), false},
		{"f64 -0 == +0", EqF64(1<<63, 0), true},
		{"f64 NaN", EqF64(DefaultNaN64, DefaultNaN64), false},
		{"f64 inf == inf", EqF64(0x7ff0000000000000, 0x7ff0000000000000), true},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v", tc.name, tc.got)
		}
	}
}

func TestCanon(t *testing.T) {
	if CanonF32(0x7fc00000) != 0x7fffffff || CanonF32(0xff800001) != 0x7fffffff || CanonF32(0x3f800000) != 0x3f800000 {
		t.Error("CanonF32")
	}
	if CanonF16(0xfe00) != 0x7fff || CanonF16(0x7c00) != 0x7c00 {
		t.Error("CanonF16")
	}
	if CanonBF16(0x7f81) != 0x7fff || CanonBF16(0x7f80) != 0x7f80 {
		t.Error("CanonBF16")
	}
	if FlushF16(0x83ff) != 0x8000 || FlushF16(0x0400) != 0x0400 {
		t.Error("FlushF16")
	}
}

// oracle describes a format for the math/big reference: precision p
// (significand bits, hidden bit included), the smallest normal exponent emin
// (value 2^emin), and the overflow threshold 2^(emax+1).
type oracle struct {
	p      uint
	emin   int
	emax   int
	decode func(uint64) float64
}

// decodeBits decodes a binary format by hand with math.Ldexp, sharing no
// code with the package under test.
func decodeBits(x uint64, expW, mant uint, bias int) float64 {
	sign := 1.0
	if x>>(expW+mant)&1 != 0 {
		sign = -1
	}
	e := int(x >> mant & (1<<expW - 1))
	m := float64(x & (1<<mant - 1))
	switch {
	case e == 1<<expW-1 && m == 0:
		return sign * math.Inf(1)
	case e == 1<<expW-1:
		return math.NaN()
	case e == 0:
		return sign * math.Ldexp(m, 1-bias-int(mant))
	}
	return sign * math.Ldexp(m+math.Ldexp(1, int(mant)), e-bias-int(mant))
}

// want is the correctly rounded a+b as a float64 (±Inf on overflow), or
// ok=false when an input is not finite. The exact sum is computed in
// math/big with enough precision, then rounded to p bits, ties to even; an
// exact sum below 2^emin needs no rounding (it is a multiple of the smallest
// subnormal).
func (o oracle) want(a, b uint64) (v float64, ok bool) {
	x, y := o.decode(a), o.decode(b)
	if math.IsInf(x, 0) || math.IsNaN(x) || math.IsInf(y, 0) || math.IsNaN(y) {
		return 0, false
	}
	s := new(big.Float).SetPrec(600).SetMode(big.ToNearestEven)
	s.Add(big.NewFloat(x).SetPrec(600), big.NewFloat(y).SetPrec(600))
	if s.Sign() == 0 {
		if math.Signbit(x) && math.Signbit(y) {
			return math.Copysign(0, -1), true
		}
		return 0, true
	}
	if s.MantExp(nil) <= o.emin { // |s| < 2^emin: subnormal, exact
		f, acc := s.Float64()
		if acc != big.Exact {
			panic("subnormal sum not exact")
		}
		return f, true
	}
	r := new(big.Float).SetPrec(o.p).SetMode(big.ToNearestEven).Set(s)
	if r.MantExp(nil) > o.emax+1 { // |r| >= 2^(emax+1)
		return math.Inf(r.Sign()), true
	}
	f, _ := r.Float64()
	return f, true
}

func checkOracle(t *testing.T, name string, o oracle, n int, gen func(*rand.Rand) (uint64, uint64), add func(a, b uint64) uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, uint64(len(name))))
	bad := 0
	for range n {
		a, b := gen(rng)
		w, ok := o.want(a, b)
		if !ok {
			continue
		}
		gotBits := add(a, b)
		got := o.decode(gotBits)
		if got != w || math.Signbit(got) != math.Signbit(w) {
			t.Errorf("%s(%#x, %#x) = %#x (%g), want %g", name, a, b, gotBits, got, w)
			if bad++; bad > 10 {
				t.FailNow()
			}
		}
	}
}

func TestAddAgainstBigFloat(t *testing.T) {
	n := 400_000
	if testing.Short() {
		n = 20_000
	}
	of16 := oracle{p: 11, emin: -14, emax: 15,
		decode: func(x uint64) float64 { return decodeBits(x, 5, 10, 15) }}
	obf16 := oracle{p: 8, emin: -126, emax: 127,
		decode: func(x uint64) float64 { return decodeBits(x, 8, 7, 127) }}
	of32 := oracle{p: 24, emin: -126, emax: 127,
		decode: func(x uint64) float64 { return decodeBits(x, 8, 23, 127) }}

	// Uniform bit patterns, and pairs with nearby exponents (where carries,
	// cancellation and ties happen).
	uni := func(bits uint) func(*rand.Rand) (uint64, uint64) {
		return func(r *rand.Rand) (uint64, uint64) {
			m := uint64(1)<<bits - 1
			return r.Uint64() & m, r.Uint64() & m
		}
	}
	near := func(bits, mant uint) func(*rand.Rand) (uint64, uint64) {
		return func(r *rand.Rand) (uint64, uint64) {
			m := uint64(1)<<bits - 1
			a := r.Uint64() & m
			shift := uint64(r.IntN(int(mant)+3)) << mant // exponent offset
			b := (a&^(uint64(1)<<mant-1) - shift) | r.Uint64()&(uint64(1)<<mant-1)
			if r.IntN(2) == 0 {
				b ^= 1 << (bits - 1)
			}
			return a, b & m
		}
	}
	add16 := func(a, b uint64) uint64 { return uint64(AddF16(uint16(a), uint16(b))) }
	addbf := func(a, b uint64) uint64 { return uint64(AddBF16(uint16(a), uint16(b))) }
	add32 := func(a, b uint64) uint64 { return uint64(AddF32(uint32(a), uint32(b), false)) }
	checkOracle(t, "AddF16", of16, n, uni(16), add16)
	checkOracle(t, "AddF16near", of16, n, near(16, 10), add16)
	checkOracle(t, "AddBF16", obf16, n/2, uni(16), addbf)
	checkOracle(t, "AddBF16near", obf16, n/2, near(16, 7), addbf)
	checkOracle(t, "AddF32", of32, n/2, uni(32), add32)
	checkOracle(t, "AddF32near", of32, n/2, near(32, 23), add32)
}
