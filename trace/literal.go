package trace

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// parseImm reads an immediate or bound value for an operand of the given
// width and type. Integers may be decimal (signed or unsigned) or hex; for
// float types a decimal literal is a value rounded to nearest even into the
// type and a hex literal (0x…, PTX 0f…/0d…) is the bit pattern itself. The
// result is the bit pattern, masked to bits (lo, and hi for 128-bit).
func parseImm(s string, bits int, typ Type) (lo, hi uint64, err error) {
	if s == "" {
		return 0, 0, fmt.Errorf("empty value")
	}
	ls := strings.ToLower(s)
	// PTX hex float literals: 0fXXXXXXXX (f32) and 0dXXXXXXXXXXXXXXXX (f64).
	if len(ls) > 2 && ls[0] == '0' && (ls[1] == 'f' || ls[1] == 'd') && isHex(ls[2:]) {
		want := 8
		if ls[1] == 'd' {
			want = 16
		}
		if len(ls)-2 != want {
			return 0, 0, fmt.Errorf("%s: a %s hex float literal has %d hex digits", s, ls[:2], want)
		}
		v, _ := strconv.ParseUint(ls[2:], 16, 64)
		if want*4 > bits {
			return 0, 0, fmt.Errorf("%s does not fit %d bits", s, bits)
		}
		return v, 0, nil
	}
	neg := strings.HasPrefix(ls, "-")
	body := strings.TrimPrefix(strings.TrimPrefix(ls, "-"), "+")
	if strings.HasPrefix(body, "0x") {
		n, ok := new(big.Int).SetString(body[2:], 16)
		if !ok || body[2:] == "" {
			return 0, 0, fmt.Errorf("%q is not a number", s)
		}
		if n.BitLen() > bits {
			return 0, 0, fmt.Errorf("%s does not fit %d bits", s, bits)
		}
		if neg {
			n.Neg(n)
			if n.BitLen() > bits {
				return 0, 0, fmt.Errorf("%s does not fit %d bits", s, bits)
			}
		}
		return splitBig(n, bits)
	}
	if typ.Float() && bits <= 64 {
		f, perr := strconv.ParseFloat(ls, 64)
		if perr != nil && !isRangeErr(perr) {
			return 0, 0, fmt.Errorf("%q is not a number", s)
		}
		if typ == TypeF32 {
			f32, _ := strconv.ParseFloat(ls, 32) // rounds the decimal once, to nearest even
			return uint64(math.Float32bits(float32(f32))), 0, nil
		}
		return floatBits(f, typ), 0, nil
	}
	n, ok := new(big.Int).SetString(body, 10)
	if !ok {
		return 0, 0, fmt.Errorf("%q is not an integer", s)
	}
	if neg {
		n.Neg(n)
	}
	// A decimal fits when it is a valid signed or unsigned value of the width.
	lim := new(big.Int).Lsh(big.NewInt(1), uint(bits))
	if n.Cmp(lim) >= 0 || n.Cmp(new(big.Int).Neg(new(big.Int).Rsh(lim, 1))) < 0 {
		return 0, 0, fmt.Errorf("%s does not fit %d bits", s, bits)
	}
	return splitBig(n, bits)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func splitBig(n *big.Int, bits int) (lo, hi uint64, err error) {
	m := new(big.Int).Lsh(big.NewInt(1), uint(bits))
	m.Sub(m, big.NewInt(1))
	v := new(big.Int).And(n, m) // two's complement for negatives
	lo = new(big.Int).And(v, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi = new(big.Int).Rsh(v, 64).Uint64()
	return lo, hi, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// floatBits encodes f into the type's bit pattern, rounding to nearest even.
// Packed types take the value in both halves.
func floatBits(f float64, typ Type) uint64 {
	switch typ {
	case TypeF64:
		return math.Float64bits(f)
	case TypeF32:
		return uint64(math.Float32bits(float32(f)))
	case TypeF16:
		return uint64(F16FromFloat64(f))
	case TypeBF16:
		return uint64(BF16FromFloat64(f))
	case TypeF16x2:
		h := uint64(F16FromFloat64(f))
		return h | h<<16
	case TypeBF16x2:
		h := uint64(BF16FromFloat64(f))
		return h | h<<16
	}
	return 0
}

// F16FromFloat64 rounds f to IEEE 754 binary16, nearest even.
func F16FromFloat64(f float64) uint16 {
	b := math.Float64bits(f)
	sign := uint16(b>>48) & 0x8000
	if math.IsNaN(f) {
		return sign | 0x7e00
	}
	a := math.Abs(f)
	if a >= 65520 { // rounds to infinity
		return sign | 0x7c00
	}
	if a < math.Ldexp(1, -25) { // below half the smallest subnormal (ties to even 0)
		if a == math.Ldexp(1, -25) {
			return sign
		}
		return sign
	}
	exp := math.Ilogb(a)
	if exp < -14 { // subnormal: units of 2^-24
		q := roundEven(a * (1 << 24))
		return sign | uint16(q)
	}
	m := roundEven(math.Ldexp(a, 10-exp)) // 1024..2048
	if m == 2048 {
		m = 1024
		exp++
	}
	if exp > 15 {
		return sign | 0x7c00
	}
	return sign | uint16(exp+15)<<10 | uint16(m-1024)
}

// BF16FromFloat64 rounds f to bfloat16 (the top half of a binary32), nearest even.
func BF16FromFloat64(f float64) uint16 {
	if math.IsNaN(f) {
		return uint16(math.Float64bits(f)>>48)&0x8000 | 0x7fc0
	}
	// f64 -> f32 may round once; do it exactly instead: bf16 has 8 bits of
	// precision and f32's exponent range, so round the f64 directly.
	sign := uint16(math.Float64bits(f)>>48) & 0x8000
	a := math.Abs(f)
	if a == 0 {
		return sign
	}
	exp := math.Ilogb(a)
	if exp < -126 { // subnormal: units of 2^-133
		q := roundEven(math.Ldexp(a, 133))
		return sign | uint16(q) // q == 128 gives the smallest normal, as the encoding wants
	}
	m := roundEven(math.Ldexp(a, 7-exp)) // 128..256
	if m == 256 {
		m = 128
		exp++
	}
	if exp > 127 {
		return sign | 0x7f80
	}
	return sign | uint16(exp+127)<<7 | uint16(m-128)
}

func roundEven(x float64) uint64 { return uint64(math.RoundToEven(x)) }
