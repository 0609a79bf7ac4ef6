package trace

import "golang.org/x/sys/cpu"

// fixedAVX512 is readFixed's loop for lists of eight lanes or more, in
// assembly (fixed_amd64.s): vs[i] = lo + (the w little-endian bytes of q at
// i*w) << sh. len(q) >= len(vs)*w, 1 <= w <= 8, sh < 64.
//
//go:noescape
func fixedAVX512(vs []uint64, q []byte, w int, lo, sh uint64)

// hasFixedSIMD reports whether the CPU runs fixedAVX512: AVX-512 with its
// byte permutation (F, BW and VBMI: Intel Ice Lake and later, AMD Zen 4 and
// later). x/sys/cpu checks that the operating system saves the AVX-512
// registers too. A reader asks once (BinaryReader.simd).
func hasFixedSIMD() bool {
	return cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI
}

// fixedSIMD decodes a fixed-width list as readFixed does, eight lanes an
// instruction, on a CPU hasFixedSIMD approves, and reports whether it did:
// not for a list under eight lanes. Go's loop costs about four
// instructions a lane; a warp's 32 lanes take about 20 here
// (BenchmarkReadFixed).
func fixedSIMD(vs []uint64, q []byte, w int, lo uint64, sh uint8) bool {
	if len(vs) < 8 {
		return false
	}
	fixedAVX512(vs, q, w, lo, uint64(sh))
	return true
}
