package engine

import (
	"github.com/gpureplay/replay/shard"
	"golang.org/x/sys/cpu"
)

// The assembly takes a word's offset in its page as its address's bits 2
// to 11 (a mask of 1023): a page of other than 1024 words does not build.
const (
	_ uint = shard.PageWords - 1024
	_ uint = 1024 - shard.PageWords
)

// warpConflictsAVX512 counts a full warp's distinct addresses and the most
// lanes on one, its 32 addresses in one page, in assembly
// (conflicts_amd64.s).
//
//go:noescape
func warpConflictsAVX512(addrs *[32]uint64) (distinct, maxc uint32)

// addLanesAVX512 is sumLanes in one call: the adds unrolled, a load and a
// store a lane, then warpConflictsAVX512's count. add is the page
// accumulator's 1<<32 | addend.
//
//go:noescape
func addLanesAVX512(sums *[shard.PageWords]uint64, addrs *[32]uint64, add uint64) (distinct, maxc uint32)

// addLanes16AVX512 is sumLanesN of a SIMD16 warp (vISA's, LSC's) in one
// call, with pageSectors: the 16 adds unrolled, then a conflict count
// each of the addresses and of their sectors. add is the page
// accumulator's 1<<32 | addend.
//
//go:noescape
func addLanes16AVX512(sums *[shard.PageWords]uint64, addrs *[16]uint64, add uint64) (distinct, maxc, sectors uint32)

// distinct16AVX512 counts the distinct values among 16 that differ in
// their low 32 bits alone (a SIMD16 warp's sectors: warpSectors).
//
//go:noescape
func distinct16AVX512(w *[16]uint64) uint32

// sectors16AVX512 is the distinct sectors of a SIMD16 warp's 16
// addresses, ok when the sectors differ in their low 32 bits alone
// (warpSectors), read and shifted in registers.
//
//go:noescape
func sectors16AVX512(addrs *[16]uint64) (sectors uint32, ok bool)

// sectors32AVX512 is sectors16AVX512 of a full warp's 32 addresses.
//
//go:noescape
func sectors32AVX512(addrs *[32]uint64) (sectors uint32, ok bool)

// pageSectorsAVX512 is pageSectors of a full warp whose 32 addresses lie
// in one page: the 32-byte sectors they touch, counted in registers.
//
//go:noescape
func pageSectorsAVX512(addrs *[32]uint64) uint32

// warpBitsAVX512 is listBits: the OR and the AND of 32 addresses.
//
//go:noescape
func warpBitsAVX512(addrs *[32]uint64) (or, and uint64)

// warpBits16AVX512 is listBitsN of a SIMD16 warp's 16 addresses.
//
//go:noescape
func warpBits16AVX512(addrs *[16]uint64) (or, and uint64)

// warpAddrsAVX512 is warpAddrs in assembly (conflicts_amd64.s), eight
// lanes a register: the warp's addresses, and their least, greatest and
// OR.
//
//go:noescape
func warpAddrsAVX512(addrs, av *[32]uint64, scale, imm, pitch, mask uint64) (lo, hi, or uint64)

// hasAddrsAVX512 reports whether the CPU runs warpAddrsAVX512 (AVX-512 F,
// DQ for its 64-bit multiply, and VL for its reductions in 256 and 128
// bits).
func hasAddrsAVX512() bool {
	return cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL
}

// hasConflictsAVX512 reports whether the CPU runs warpConflictsAVX512
// (AVX-512 F, CD and VPOPCNTDQ: Intel Ice Lake and later, AMD Zen 4 and
// later; x/sys/cpu checks that the operating system saves the registers).
func hasConflictsAVX512() bool {
	return cpu.X86.HasAVX512F && cpu.X86.HasAVX512CD && cpu.X86.HasAVX512VPOPCNTDQ
}
