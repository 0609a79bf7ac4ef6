package engine

// This file compares the engine with the reference on random traces of
// every float atomic of the four documents, with operands drawn from each
// format's corner cases (signed zeros, subnormals, the largest finite
// values, infinities, quiet and signaling NaNs with payloads, ties): the
// engine's other random traces rarely reach them.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// corners are bit patterns worth trying, per width.
func corners(bits int) []uint64 {
	switch bits {
	case 16:
		return []uint64{0, 0x8000, 1, 0x8001, 0x3ff, 0x83ff, 0x400, 0x8400, 0x3c00, 0xbc00, 0x3e00, 0x7bff, 0xfbff, 0x7c00,
			0xfc00, 0x7e00, 0x7d00, 0xfd01, 0x7fff, 0x0080, 0x8080, 0x007f, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0,
			0x7fa0, 0x7f7f, 0x3c01, 0x1400, 0x9400}
	case 32:
		return []uint64{0, 0x80000000, 1, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x80800000, 0x3f800000, 0xbf800000,
			0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00000, 0xffc00001, 0x7fffffff,
			0x33800000, 0x34000000, 0x3f800001, 0x4b800000, 0xcb800000}
	}
	return []uint64{0, 1 << 63, 1, 0x000fffffffffffff, 0x0010000000000000, 0x3ff0000000000000, 0xbff0000000000000,
		0x7fefffffffffffff, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff4000000000000,
		0xfff8000000000001, 0x3ca0000000000000, 0x3cb0000000000000}
}

// corner draws a value of bits bits: a corner, a corner's neighbour, two
// 16-bit corners packed (for f16x2 and bf16x2), or random bits.
func corner(r *rand.Rand, bits int) uint64 {
	if bits == 32 && r.IntN(4) == 0 {
		return corner(r, 16) | corner(r, 16)<<16
	}
	if r.IntN(3) == 0 {
		return r.Uint64() >> (64 - bits)
	}
	set := corners(bits)
	v := set[r.IntN(len(set))]
	if bits < 64 && r.IntN(3) == 0 {
		v = (v + uint64(r.IntN(3)) - 1) & (1<<bits - 1)
	}
	return v
}

func cornerList(r *rand.Rand, n, bits int) string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = fmt.Sprintf("0x%x", corner(r, bits))
	}
	return "[" + strings.Join(vs, ",") + "]"
}

// floatLine writes one random float atomic on a few shared addresses.
func floatLine(r *rand.Rand) string {
	a2, a4, a8 := fmt.Sprintf("0x%x:2", 0x1000+2*r.IntN(8)), fmt.Sprintf("0x%x:4", 0x1000+4*r.IntN(8)), fmt.Sprintf("0x%x:8", 0x1000+8*r.IntN(8))
	if r.IntN(2) == 0 { // every lane on one address
		a2, a4, a8 = "0x1010", "0x1010", "0x1010"
	}
	l := func(n, bits int) string { return cornerList(r, n, bits) }
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	switch r.IntN(11) {
	case 0:
		return fmt.Sprintf("atom.global.add.f32 d, [a], b; | a=%s b=%s", a4, l(32, 32))
	case 1:
		return fmt.Sprintf("atom.shared.add.f32 d, [a], b; | a=0x%x:4 b=%s", 4*r.IntN(4), l(32, 32))
	case 2:
		return fmt.Sprintf("atom.global.add.f64 d, [a], b; | a=%s b=%s", a8, l(32, 64))
	case 3:
		return fmt.Sprintf("atom.global.add.noftz.%s d, [a], b; | a=%s b=%s", pick("f16", "bf16"), a2, l(32, 16))
	case 4:
		return fmt.Sprintf("atom.global.add.noftz.%s d, [a], b; | a=%s b=%s", pick("f16x2", "bf16x2"), a4, l(32, 32))
	case 5:
		return fmt.Sprintf("atom.global.v4.%s.%s.noftz {d0,d1,d2,d3}, [a], {h0,h1,h2,h3} | a=0x%x:8 h0=%s h1=%s h2=%s h3=%s",
			pick("f16", "bf16"), pick("add", "min", "max"), 0x1000+8*r.IntN(4), l(32, 16), l(32, 16), l(32, 16), l(32, 16))
	case 6:
		return fmt.Sprintf("atom.global.v2.%s.%s.noftz {d0,d1}, [a], {h0,h1} | a=0x%x:8 h0=%s h1=%s",
			pick("f16x2", "bf16x2"), pick("add", "min", "max"), 0x1000+8*r.IntN(4), l(32, 32), l(32, 32))
	case 7:
		return fmt.Sprintf("ATOM.%s R0, [R2], R4; | R2=%s R4=%s",
			pick("ADD.F32.FTZ.RN", "ADD.F16x2.RN", "ADD.F16x2.FTZ.RN", "MIN.F16x2.RN", "MAX.F16x2.RN"), a4, l(32, 32))
	case 8:
		return fmt.Sprintf("ATOM.E.ADD.F64.RN R0, [R2], R4; | R2=%s R4=%s", a8, l(32, 64))
	case 9:
		return visaFloatLine(r, a2, a4)
	}
	return lscFloatLine(r, a2, a4, a8)
}

func visaFloatLine(r *rand.Rand, a2, a4 string) string {
	op := []string{"FMAX", "FMIN", "FCMPWR"}[r.IntN(3)]
	bits, addr := 32, a4
	if r.IntN(2) == 0 {
		op, bits, addr = op+".16", 16, a2
	}
	src1, binds := "V0", ""
	if strings.HasPrefix(op, "FCMPWR") {
		src1, binds = "V3", " V3="+cornerList(r, 16, bits)
	}
	return fmt.Sprintf("DWORD_ATOMIC.%s (16) T255 V1 V2 %s V4 | V1=%s V2=%s%s", op, src1, addr, cornerList(r, 16, bits), binds)
}

func lscFloatLine(r *rand.Rand, a2, a4, a8 string) string {
	op := []string{"fadd", "fsub", "fmin", "fmax", "fcas"}[r.IntN(5)]
	ds := []string{"d16", "d32", "d64", "d16u32"}[r.IntN(4)]
	bits := map[string]int{"d16": 16, "d32": 32, "d64": 64, "d16u32": 16}[ds]
	srcs, binds := " V14", " V14="+cornerList(r, 16, bits)
	if op == "fcas" {
		srcs, binds = srcs+" V15", binds+" V15="+cornerList(r, 16, bits)
	}
	addr := map[int]string{16: a2, 32: a4, 64: a8}[bits]
	return fmt.Sprintf("lsc_atomic_%s.ugm (M1,16) V13:%s flat[V12]:a64%s | V12=%s%s", op, ds, srcs, addr, binds)
}

// floatTrace is n random float atomics on memory seeded with corners.
func floatTrace(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x100\n.region shared 0x0 0x100\n")
	for i := 0; i < 32; i++ {
		fmt.Fprintf(&b, ".init global 0x%x u64 0x%x\n", 0x1000+8*i, corner(r, 64)&0xffffffff|corner(r, 32)<<32)
		fmt.Fprintf(&b, ".init shared 0x%x u64 0x%x\n", 8*i, corner(r, 32)|corner(r, 32)<<32)
	}
	for i := 0; i < n; i++ {
		b.WriteString(floatLine(r) + "\n")
	}
	return b.String()
}

// TestFloatAtomicsAgreeWithEngine replays 200 random float traces with
// the engine and the reference and requires the same results and memory.
func TestFloatAtomicsAgreeWithEngine(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		src := floatTrace(rand.New(rand.NewPCG(seed, 99)), 30)
		replay := func(run func(context.Context, trace.Source, Sink, ...Option) (Summary, error)) *Collector {
			in, err := trace.NewTextReader(strings.NewReader(src), "floats.tasm")
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			var c Collector
			if _, err := run(t.Context(), in, &c, WithWorkers(1)); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			return &c
		}
		ref, eng := replay(replayReference), replay(Replay)
		if !reflect.DeepEqual(ref.Res, eng.Res) || !reflect.DeepEqual(ref.Words, eng.Words) {
			t.Fatalf("seed %d: engine and reference differ on\n%s", seed, firstDifference(ref, eng))
		}
	}
}

// firstDifference names the first result or word that differs.
func firstDifference(ref, eng *Collector) string {
	for i := range min(len(ref.Res), len(eng.Res)) {
		if a, b := ref.Res[i], eng.Res[i]; a != b {
			text := ""
			for _, s := range ref.Stats {
				if s.Seq == a.Seq {
					text = s.Static.Text
				}
			}
			return fmt.Sprintf("%s\n  reference %+v\n  engine    %+v", text, a, b)
		}
	}
	for i := range min(len(ref.Words), len(eng.Words)) {
		if a, b := ref.Words[i], eng.Words[i]; a != b {
			return fmt.Sprintf("word: reference %+v, engine %+v", a, b)
		}
	}
	return fmt.Sprintf("%d/%d results, %d/%d words", len(ref.Res), len(eng.Res), len(ref.Words), len(eng.Words))
}
