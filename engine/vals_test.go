package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomScatteredValues writes a random PTX trace of scattered 32-bit
// updates, a value per lane, nothing returned in the lean tables: the
// vals segments applyVals32 performs a loop an operation for (exch, the
// unsigned and signed min and max, and, or, xor, the f32 add with and
// without flushing), beside the add loops and CAS's general one. The
// lanes hit up to 48 words of two pages in any order, repeats included, at
// full and partial masks; the values reach the sign bit, and the floats
// subnormals, infinities and NaNs, and addends that differ in the sign
// bit alone.
func randomScatteredValues(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x2000\n.region shared 0x0 0x100\n")
	forms := []string{"exch.b32", "min.u32", "max.u32", "min.s32", "max.s32", "and.b32", "or.b32", "xor.b32", "add.f32", "add.u32", "cas.b32"}
	floats := []uint32{0x3fc00000, 0xbfc00000, 0x80000000, 0, 0x00000001, 0x807fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0x4b000000}
	for range n {
		randContext(r, &b)
		f := forms[r.IntN(len(forms))]
		space, base, words := "global", uint64(0x1000), 48
		if r.IntN(4) == 0 {
			space, base, words = "shared", 0, 64
		}
		addrs := make([]string, 32)
		vals := make([]string, 32)
		for l := range addrs {
			a := base + uint64(r.IntN(words))*4
			if space == "global" && r.IntN(8) == 0 {
				a += 0x1000 // the second page
			}
			addrs[l] = fmt.Sprintf("0x%x", a)
			switch {
			case f == "add.f32" && r.IntN(2) == 0:
				vals[l] = fmt.Sprintf("0x%x", floats[r.IntN(len(floats))])
			case r.IntN(3) == 0:
				vals[l] = fmt.Sprint(r.IntN(5))
			default:
				vals[l] = fmt.Sprintf("0x%x", r.Uint32())
			}
		}
		dst := "d"
		if r.IntN(2) == 0 {
			dst = "_"
		}
		srcs, binds := "b", " b=["+strings.Join(vals, ",")+"]"
		if f == "cas.b32" {
			srcs += ", c"
			binds += fmt.Sprintf(" c=%d", r.IntN(3))
		}
		if r.IntN(3) == 0 {
			binds += fmt.Sprintf(" mask=0x%x", r.Uint32()|1)
		}
		fmt.Fprintf(&b, "atom.%s.%s %s, [a], %s; | a=[%s]%s\n", space, f, dst, srcs, strings.Join(addrs, ","), binds)
	}
	return b.String()
}

// TestScatteredValuesEqualReference: scattered updates of a value a lane
// (applyVals32's loops, and the add and CAS loops beside them) replay as
// the reference does, under every sink configuration, option set and
// trace form.
func TestScatteredValuesEqualReference(t *testing.T) {
	equalOnRandom(t, randomScatteredValues, 13)
}

// TestScatteredLSCFAddEqualReference: LSC SIMD16 f32 adds (a vISA float
// reduction's, lsc_atomic_fadd: kFAddF32Intel, no flush) on a few words of
// one page, a value a lane, nothing returned (applyVals32's float loop),
// replay as the reference does under every sink configuration: with
// -explore, addends of one warp on a word that differ in the sign bit
// alone (1.5 and -1.5, 0 and -0) are order-sensitive, as they are to the
// reference.
func TestScatteredLSCFAddEqualReference(t *testing.T) {
	floats := []uint32{0x3fc00000, 0x80000000, 0, 0x00000001, 0x807fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x4b000000, 0xbfc00000, 0x3eb8e73c}
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 16))
		var b strings.Builder
		b.WriteString(".region global 0x10000000 0x2000\n")
		for range 60 {
			randContext(r, &b)
			base := 0x10000000 + uint64(4*r.IntN(2000))
			words := 1 + r.IntN(8)
			addrs := make([]string, 16)
			vals := make([]string, 16)
			for l := range addrs {
				addrs[l] = fmt.Sprintf("0x%x", base+uint64(r.IntN(words))*4)
				vals[l] = fmt.Sprintf("0x%x", floats[r.IntN(len(floats))])
			}
			mask := ""
			if r.IntN(3) == 0 {
				mask = fmt.Sprintf(" mask=0x%x", r.Uint32()&0xffff|1)
			}
			fmt.Fprintf(&b, "lsc_atomic_fadd.ugm (M1,16) V13:d32 flat[V12]:a64 V14 V0 | V12=[%s] V14=[%s]%s\n", strings.Join(addrs, ","), strings.Join(vals, ","), mask)
		}
		src := b.String()
		wants := [2]outcome{referenceUnder(t, src, false), referenceUnder(t, src, true)}
		for ci := range sinkConfigs {
			cfg := &sinkConfigs[ci]
			want := wants[0]
			if cfg.explore {
				want = wants[1]
			}
			k := (int(seed) + ci) % len(engineOptSets)
			t.Run(fmt.Sprintf("%s/seed%d", cfg.name, seed), func(t *testing.T) {
				equalUnderConfig(t, src, cfg, engineOptSets[k], (int(seed)+ci)%2 == 1, want)
			})
		}
	}
}
