package workload

import (
	"math"
	"math/rand/v2"
)

// zipf draws 0..n-1, k-1 with probability proportional to k^-s, by
// rejection-inversion (W. Hörmann, G. Derflinger, "Rejection-inversion to
// generate variates from monotone discrete distributions", 1996), as Apache
// Commons RNG's RejectionInversionZipfSampler does for any s > 0 (math/rand's
// Zipf wants s > 1). O(1) memory and expected time, so n may be 2^32. s = 0
// is uniform.
//
// Every floating-point step is a correctly rounded operation or one of the
// portable functions below, and each product is converted explicitly before
// it is added, which forbids fused multiply-add: the draws are the same on
// every platform.
type zipf struct {
	n, s    float64
	nInt    uint64
	hx1, hn float64 // hIntegral(1.5) - 1, hIntegral(n + 0.5)
	sq      float64 // the squeeze: accept at once when k - x <= sq
}

func newZipf(n uint64, s float64) zipf {
	z := zipf{n: float64(n), s: s, nInt: n}
	if s == 0 {
		return z
	}
	z.hx1 = z.hIntegral(1.5) - 1
	z.hn = z.hIntegral(z.n + 0.5)
	z.sq = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

func (z *zipf) draw(r *rand.Rand) uint64 {
	if z.s == 0 {
		return r.Uint64N(z.nInt)
	}
	for {
		u := z.hn + float64(r.Float64()*(z.hx1-z.hn))
		x := z.hIntegralInverse(u)
		kf := math.Floor(x + 0.5)
		if kf < 1 {
			kf = 1
		} else if kf > z.n {
			kf = z.n
		}
		if kf-x <= z.sq || u >= z.hIntegral(kf+0.5)-z.h(kf) {
			return uint64(kf) - 1
		}
	}
}

// h(x) = x^-s.
func (z *zipf) h(x float64) float64 { return pexp(float64(-z.s * plog(x))) }

// hIntegral(x) = (x^(1-s) - 1) / (1-s), log x when s = 1: a primitive of h.
func (z *zipf) hIntegral(x float64) float64 {
	lx := plog(x)
	return float64(helper2(float64((1-z.s)*lx)) * lx)
}

func (z *zipf) hIntegralInverse(x float64) float64 {
	t := float64(x * (1 - z.s))
	if t < -1 {
		t = -1 // limits rounding errors
	}
	return pexp(float64(helper1(t) * x))
}

// helper1(x) = log1p(x)/x, helper2(x) = expm1(x)/x, both 1 at 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return plog1p(x) / x
	}
	return 1 - float64(x*(0.5-float64(x*(1.0/3-float64(0.25*x)))))
}

func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return pexpm1(x) / x
	}
	return 1 + float64(float64(x*0.5)*(1+float64(float64(x*(1.0/3))*(1+float64(0.25*x)))))
}

// Portable logarithm and exponential: range reduction by Frexp/Ldexp (exact)
// and short series, to within a few ulps of math.Log and math.Exp.

const (
	ln2Hi = 6.93147180369123816490e-01 // fdlibm's split of ln 2: ln2Hi*k is exact for |k| < 2^20
	ln2Lo = 1.90821492927058770002e-10
)

// atanhSeries is 2 atanh(t) for |t| <= 0.25: log((1+t)/(1-t)).
func atanhSeries(t float64) float64 {
	t2 := float64(t * t)
	sum, term := 0.0, t
	for k := range 16 {
		sum += term / float64(2*k+1)
		term = float64(term * t2)
	}
	return float64(2 * sum)
}

// plog is the natural logarithm.
func plog(x float64) float64 {
	switch {
	case x == 0:
		return math.Inf(-1)
	case x < 0 || math.IsNaN(x):
		return math.NaN()
	case math.IsInf(x, 1):
		return x
	}
	m, e := math.Frexp(x) // x = m 2^e, m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	// m in [sqrt(1/2), sqrt(2)): t = (m-1)/(m+1) in [-0.172, 0.172].
	k := float64(e)
	return float64(k*ln2Hi) + (float64(k*ln2Lo) + atanhSeries((m-1)/(m+1)))
}

// plog1p is log(1+x), accurate for small x.
func plog1p(x float64) float64 {
	if x == -1 {
		return math.Inf(-1)
	}
	if math.Abs(x) < 0.4 {
		return atanhSeries(x / (2 + x)) // (1+t)/(1-t) = 1+x
	}
	return plog(1 + x)
}

// expm1Series is e^r - 1 for |r| <= 0.35.
func expm1Series(r float64) float64 {
	p := 1.0
	for i := 18; i >= 2; i-- {
		p = 1 + float64(float64(r/float64(i))*p)
	}
	return float64(r * p)
}

// pexp is e^x.
func pexp(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > 709.8:
		return math.Inf(1)
	case x < -745.2:
		return 0
	}
	k := math.Round(x / math.Ln2)
	r := (x - float64(k*ln2Hi)) - float64(k*ln2Lo)
	return math.Ldexp(1+expm1Series(r), int(k))
}

// pexpm1 is e^x - 1, accurate for small x.
func pexpm1(x float64) float64 {
	if math.Abs(x) <= 0.35 {
		return expm1Series(x)
	}
	return pexp(x) - 1
}
