package reference

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRoundToEveryEncoding checks the binary search against every finite
// f16 and bf16 encoding: each value rounds to itself, the midpoint of two
// neighbours to the even one, a hair off the midpoint to the nearer, and
// the overflow threshold (largest + half its ulp) to infinity.
func TestRoundToEveryEncoding(t *testing.T) {
	for _, f := range []format{f16, bf16} {
		top := f.infinity() - 1
		for x := uint64(0); x <= top; x++ {
			for _, s := range []uint64{0, f.sign()} {
				if got := f.roundTo(f.value(x | s)); got != x|s {
					t.Fatalf("%s: %#x rounds to %#x", f, x|s, got)
				}
			}
			if x == top {
				continue
			}
			lo, hi := f.value(x), f.value(x+1)
			mid := (lo + hi) / 2
			even := x
			if x&1 != 0 {
				even = x + 1
			}
			if got := f.roundTo(mid); got != even {
				t.Fatalf("%s: the midpoint of %#x and %#x rounds to %#x, want %#x", f, x, x+1, got, even)
			}
			if got := f.roundTo(math.Nextafter(mid, 0)); got != x {
				t.Fatalf("%s: just below the midpoint of %#x and %#x rounds to %#x", f, x, x+1, got)
			}
			if got := f.roundTo(math.Nextafter(mid, math.Inf(1))); got != x+1 {
				t.Fatalf("%s: just above the midpoint of %#x and %#x rounds to %#x", f, x, x+1, got)
			}
		}
		largest := f.value(top)
		limit := largest + (largest-f.value(top-1))/2
		if got := f.roundTo(limit); got != f.infinity() {
			t.Errorf("%s: %g rounds to %#x, want infinity", f, limit, got)
		}
		if got := f.roundTo(-math.Nextafter(limit, 0)); got != f.sign()|top {
			t.Errorf("%s: just under -%g rounds to %#x, want the largest finite", f, limit, got)
		}
	}
}

// TestSumsByHand: adds worked out by hand (a tie goes to the even
// significand; IEEE 754 §4.3.1).
func TestSumsByHand(t *testing.T) {
	tests := []struct {
		name    string
		f       format
		a, b    uint64
		want    uint64
		wantNaN bool
	}{
		{"f16 1+1", f16, 0x3c00, 0x3c00, 0x4000, false},
		{"f16 1+2^-11 ties to 1", f16, 0x3c00, 0x1000, 0x3c00, false},
		{"f16 (1+2^-10)+2^-11 ties up to even", f16, 0x3c01, 0x1000, 0x3c02, false},
		{"f16 65504+8 stays", f16, 0x7bff, 0x4800, 0x7bff, false},
		{"f16 65504+16 overflows", f16, 0x7bff, 0x4c00, 0x7c00, false},
		{"f16 subnormals add", f16, 0x0001, 0x0001, 0x0002, false},
		{"f16 largest subnormal + step is the smallest normal", f16, 0x03ff, 0x0001, 0x0400, false},
		{"f16 1-1 is +0", f16, 0x3c00, 0xbc00, 0x0000, false},
		{"f16 -0 + -0 is -0", f16, 0x8000, 0x8000, 0x8000, false},
		{"f16 inf-inf", f16, 0x7c00, 0xfc00, 0, true},
		{"bf16 1+2^-8 ties to 1", bf16, 0x3f80, 0x3b80, 0x3f80, false},
		{"bf16 (1+2^-7)+2^-8 ties up to even", bf16, 0x3f81, 0x3b80, 0x3f82, false},
		{"bf16 1+2^-9 is 1", bf16, 0x3f80, 0x3b00, 0x3f80, false},
		{"bf16 2^-9+1 is 1", bf16, 0x3b00, 0x3f80, 0x3f80, false},
		{"bf16 largest + half ulp overflows", bf16, 0x7f7f, 0x7b00, 0x7f80, false},
		{"bf16 subnormals add", bf16, 0x0001, 0x0041, 0x0042, false},
		{"f32 1+2^-24 ties to 1", f32, 0x3f800000, 0x33800000, 0x3f800000, false},
		{"f32 (1+2^-23)+2^-24 ties up", f32, 0x3f800001, 0x33800000, 0x3f800002, false},
		{"f64 1+2^-53 ties to 1", f64, 0x3ff0000000000000, 0x3ca0000000000000, 0x3ff0000000000000, false},
	}
	for _, tc := range tests {
		got, ok := tc.f.sum(tc.a, tc.b)
		if ok == tc.wantNaN || ok && got != tc.want {
			t.Errorf("%s: %#x ok=%v, want %#x", tc.name, got, ok, tc.want)
		}
	}
}

// TestVendorRulesByHand: NaN bits, flushing, min/max and equality.
func TestVendorRulesByHand(t *testing.T) {
	tests := []struct {
		name      string
		got, want uint64
	}{
		{"nvidia f32 NaN in", nvidiaAdd(f32, false, 0x7fa00000, 0x3f800000), 0x7fffffff},
		{"nvidia f32 inf-inf", nvidiaAdd(f32, true, 0x7f800000, 0xff800000), 0x7fffffff},
		{"nvidia f16 NaN in", nvidiaAdd(f16, false, 0x3c00, 0xfd01), 0x7fff},
		{"nvidia bf16 NaN in", nvidiaAdd(bf16, false, 0x7fc0, 0x3f80), 0x7fff},
		{"ftz input", nvidiaAdd(f32, true, 0x00000001, 0x3f800000), 0x3f800000},
		{"ftz result", nvidiaAdd(f32, true, 0x00800001, 0x80800000), 0x00000000},
		{"ftz keeps the sign", nvidiaAdd(f32, true, 0x80000001, 0x80000000), 0x80000000},
		{"no ftz keeps the subnormal", nvidiaAdd(f32, false, 0x00800001, 0x80800000), 0x00000001},
		{"f16 ftz result", nvidiaAdd(f16, true, 0x0401, 0x8400), 0x0000},
		{"ieee f32 first NaN quieted", ieeeAdd(f32, 0x7fa00000, 0xffc00001), 0x7fe00000},
		{"ieee f32 operand NaN", ieeeAdd(f32, 0x3f800000, 0xffa00001), 0xffe00001},
		{"ieee f32 inf-inf", ieeeAdd(f32, 0x7f800000, 0xff800000), 0x7fc00000},
		{"ieee f16 inf-inf", ieeeAdd(f16, 0x7c00, 0xfc00), 0x7e00},
		{"ieee f64 sNaN quieted", ieeeAdd(f64, 0x7ff4000000000000, 0x3ff0000000000000), 0x7ffc000000000000},
		{"ieee f16 subnormal kept", ieeeAdd(f16, 0x0001, 0x0000), 0x0001},
		{"sub -0 - +0", ieeeSub(f16, 0x8000, 0x0000), 0x8000},
		{"sub 1 - inf", ieeeSub(f16, 0x3c00, 0x7c00), 0xfc00},
		{"sub NaN keeps its sign", ieeeSub(f32, 0x3f800000, 0x7fc00000), 0x7fc00000},
		{"nvidia min NaN, 1", nvidiaMinMax(f16, false, 0x7e00, 0x3c00), 0x3c00},
		{"nvidia min 1, sNaN", nvidiaMinMax(f16, false, 0x3c00, 0x7d00), 0x3c00},
		{"nvidia max NaN, NaN", nvidiaMinMax(bf16, true, 0x7fc0, 0xffc1), 0x7fff},
		{"nvidia min +0, -0", nvidiaMinMax(f16, false, 0x0000, 0x8000), 0x8000},
		{"nvidia max -0, +0", nvidiaMinMax(f16, true, 0x8000, 0x0000), 0x0000},
		{"intel min sNaN, 1", intelMinMax(f32, false, 0x7fa00000, 0x3f800000), 0x7fa00000},
		{"intel min 1, sNaN", intelMinMax(f32, false, 0x3f800000, 0xff800001), 0xff800001},
		{"intel min qNaN, 1", intelMinMax(f32, false, 0x7fc00000, 0x3f800000), 0x3f800000},
		{"intel min qNaN, sNaN", intelMinMax(f32, false, 0x7fc00000, 0x7f800001), 0x7f800001},
		{"intel max qNaN, qNaN", intelMinMax(f32, true, 0x7fc00001, 0xffc00000), 0x7fc00001},
		{"intel max -0, +0", intelMinMax(f64, true, 1<<63, 0), 0},
		{"intel min -2, 1", intelMinMax(f16, false, 0xc000, 0x3c00), 0xc000},
		{"fcas -0 equals +0", compareSwapOp(f32)(0x80000000, 0, 0x40000000), 0x40000000},
		{"fcas NaN equals nothing", compareSwapOp(f32)(0x7fffffff, 0x7fffffff, 0x40000000), 0x7fffffff},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, tc.got, tc.want)
		}
	}
}

// TestSixteenBitSumsAgainstFloat32: the 16-bit sums against a second
// method: the float32 sum of the two values (rounded once to 24 bits),
// then rounded to the format. For p-bit formats with 24 >= 2p+2 (f16: 11,
// bf16: 8) that double rounding is innocuous (S. A. Figueroa, "When is
// double rounding innocuous?", 1995), so the two must agree.
func TestSixteenBitSumsAgainstFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range []format{f16, bf16} {
		for i := 0; i < 200000; i++ {
			a, b := uint64(r.Uint32()&0xffff), uint64(r.Uint32()&0xffff)
			if i%2 == 0 { // exponents close together
				b = b&0x83ff | a&0x7c00
			}
			if f.isNaN(a) || f.isNaN(b) {
				continue
			}
			got, ok := f.sum(a, b)
			s := float32(f.value(a)) + float32(f.value(b))
			if math.IsNaN(float64(s)) {
				if ok {
					t.Fatalf("%s %#x + %#x = %#x, want no value", f, a, b, got)
				}
				continue
			}
			if want := f.roundTo(float64(s)); got != want {
				t.Fatalf("%s %#x + %#x = %#x, float32 route %#x", f, a, b, got, want)
			}
		}
	}
}

// TestBlock2DImage: register images of LOAD_BLOCK2D's four modes, worked
// by hand from the pseudo-code, and STORE_BLOCK2D's index for the
// transposed image: Src1Data.elems[v*round_up_pow2(BlockHeight)+n] holds
// row n, column v.
func TestBlock2DImage(t *testing.T) {
	// d32 1x2x2 nn: rows of round_up_pow2(2) = 2, one register of 16.
	data, size := block2dImage(1, 2, 2, 4, false, false)
	want := []datum{{0, 0, 0, 0}, {1, 0, 0, 1}, {2, 0, 1, 0}, {3, 0, 1, 1}}
	if size != 16 || !equalData(data, want) {
		t.Errorf("nn: %v (%d slots)", data, size)
	}
	// d16 1x2x4 nt (VNNI): two rows per dword, x by x.
	data, size = block2dImage(1, 2, 4, 2, false, true)
	want = []datum{{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 0, 0, 1}, {3, 0, 1, 1},
		{4, 0, 2, 0}, {5, 0, 3, 0}, {6, 0, 2, 1}, {7, 0, 3, 1}}
	if size != 32 || !equalData(data, want) {
		t.Errorf("nt: %v (%d slots)", data, size)
	}
	// d8 1x1x3 nt: four rows per dword; the fourth row is padding.
	data, _ = block2dImage(1, 1, 3, 1, false, true)
	want = []datum{{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 0, 2, 0}}
	if !equalData(data, want) {
		t.Errorf("nt past the block: %v", data)
	}
	// d32 2x3x1 nn: the second block starts a register later.
	data, size = block2dImage(2, 3, 1, 4, false, false)
	if size != 32 || data[3] != (datum{16, 1, 0, 0}) {
		t.Errorf("two blocks: %v (%d slots)", data, size)
	}
	// tn: STORE_BLOCK2D's index.
	w, h := 3, 5
	data, _ = block2dImage(1, w, h, 4, true, false)
	for _, d := range data {
		if d.slot != d.x*8+d.y {
			t.Errorf("tn: row %d column %d in slot %d, want %d", d.y, d.x, d.slot, d.x*8+d.y)
		}
	}
	// tt on d16: two columns per dword.
	data, _ = block2dImage(1, 2, 2, 2, true, true)
	want = []datum{{0, 0, 0, 0}, {1, 0, 0, 1}, {2, 0, 1, 0}, {3, 0, 1, 1}}
	if !equalData(data, want) {
		t.Errorf("tt: %v", data)
	}
}

func equalData(a, b []datum) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
