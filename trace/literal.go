package trace

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/gpureplay/replay/internal/fp"
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
		return uint64(fp.F64ToF16(f))
	case TypeBF16:
		return uint64(fp.F64ToBF16(f))
	case TypeF16x2:
		h := uint64(fp.F64ToF16(f))
		return h | h<<16
	case TypeBF16x2:
		h := uint64(fp.F64ToBF16(f))
		return h | h<<16
	}
	return 0
}
