package columnar

import "golang.org/x/sys/cpu"

// blockDeltas32AVX512 and blockDeltas64AVX512 are blockDeltas of a whole
// block (deltaBlock values) in assembly (deltas_amd64.s), 16 or 8 values an
// instruction. Needs AVX-512 F.
//
//go:noescape
func blockDeltas32AVX512(d *[deltaBlock]int64, his *[deltaMinis]int64, blk *[deltaBlock]int32, prev, flip, vlo, vhi int32) (lo, hi int64, vlo2, vhi2 int32)

//go:noescape
func blockDeltas64AVX512(d *[deltaBlock]int64, his *[deltaMinis]int64, blk *[deltaBlock]int64, prev, flip, vlo, vhi int64) (lo, hi, vlo2, vhi2 int64)

// hasDeltasAVX512 reports whether the CPU runs them (x/sys/cpu also
// checks that the operating system saves the AVX-512 registers).
func hasDeltasAVX512() bool { return cpu.X86.HasAVX512F }

// blockDeltasSIMD is blockDeltas for a whole block, in assembly where the
// CPU can; it reports whether it ran.
func blockDeltasSIMD[T int32 | int64](d *[deltaBlock]int64, his *[deltaMinis]int64, blk []T, prev, flip, vlo, vhi T) (lo, hi int64, _, _ T, ok bool) {
	if len(blk) != deltaBlock || !hasDeltasAVX512() {
		return 0, 0, 0, 0, false
	}
	switch b := any(blk).(type) {
	case []int32:
		var l, h int32
		lo, hi, l, h = blockDeltas32AVX512(d, his, (*[deltaBlock]int32)(b), int32(prev), int32(flip), int32(vlo), int32(vhi))
		return lo, hi, T(l), T(h), true
	case []int64:
		var l, h int64
		lo, hi, l, h = blockDeltas64AVX512(d, his, (*[deltaBlock]int64)(b), int64(prev), int64(flip), int64(vlo), int64(vhi))
		return lo, hi, T(l), T(h), true
	}
	return 0, 0, 0, 0, false
}
