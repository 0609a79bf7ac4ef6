package engine

import (
	"strings"
	"testing"
)

// TestIntegerFormulas: every integer kind's formula at 16, 32 and 64 bits
// against results worked out by hand (old 5, b 3, c 9; and old -1, b 1
// for the signed comparisons), so that removing or changing any one
// formula fails here by name; a kind no switch names is an error, as is
// any kind but exch and cas at 128 bits.
func TestIntegerFormulas(t *testing.T) {
	type tc struct {
		k       kind
		name    string
		want    uint64 // old 5, b 3, c 9
		wantNeg uint64 // old -1 (all ones), b 1, c 9: as the low bits of the width
	}
	all := ^uint64(0)
	cases := []tc{
		{kAdd, "add", 8, 0},
		{kSub, "sub", 2, all - 1},
		{kExch, "exch", 3, 1},
		{kCAS, "cas", 5, all}, // old != b: unchanged
		{kMinU, "min.u", 3, 1},
		{kMinS, "min.s", 3, all},
		{kMaxU, "max.u", 5, all},
		{kMaxS, "max.s", 5, 1},
		{kIncBounded, "inc (bounded)", 0, 0}, // old >= b: 0
		{kDecBounded, "dec (bounded)", 3, 1}, // old > b: b
		{kInc, "inc", 6, 0},
		{kDec, "dec", 4, all - 1},
		{kAnd, "and", 1, 1},
		{kOr, "or", 7, all},
		{kXor, "xor", 6, all - 1},
		{kLoad, "load", 5, all},
	}
	for _, c := range cases {
		for _, bits := range []uint{16, 32, 64} {
			mask := all >> (64 - bits)
			var got, gotNeg uint64
			switch bits {
			case 16:
				got, gotNeg = uint64(op16(c.k, 5, 3, 9)), uint64(op16(c.k, uint16(mask), 1, 9))
			case 32:
				got, gotNeg = uint64(op32(c.k, 5, 3, 9)), uint64(op32(c.k, uint32(mask), 1, 9))
			case 64:
				got, gotNeg = op64(c.k, 5, 3, 9), op64(c.k, mask, 1, 9)
			}
			if got != c.want&mask || gotNeg != c.wantNeg&mask {
				t.Errorf("%s at %d bits: 5,3,9 -> %d and -1,1,9 -> %#x; want %d and %#x", c.name, bits, got, gotNeg, c.want&mask, c.wantNeg&mask)
			}
		}
	}
	// cas when old == b takes c.
	if got := op32(kCAS, 3, 3, 9); got != 9 {
		t.Errorf("cas 3,3,9 = %d, want 9", got)
	}
	// 128 bits: exch and cas only.
	if lo, hi := op128(kCAS, 1, 2, 1, 2, 7, 8); lo != 7 || hi != 8 {
		t.Errorf("cas.b128 equal: %d %d, want 7 8", lo, hi)
	}
	if err := formulaErr(kAdd, 16); err == nil || !strings.Contains(err.Error(), "128-bit formula") {
		t.Errorf("add at 128 bits: %v", err)
	}
	if err := formulaErr(kind(31), 4); err == nil {
		t.Error("a kind no switch names has a formula")
	}
	for _, c := range cases {
		for _, size := range []uint8{1, 2, 4, 8} {
			if err := formulaErr(c.k, size); err != nil {
				t.Errorf("%s at %d bytes: %v", c.name, size, err)
			}
		}
	}
}
