//go:build !amd64

package engine

import "github.com/gpureplay/replay/shard"

// Go's loops only (conflicts_amd64.go).
func hasConflictsAVX512() bool { return false }

func hasAddrsAVX512() bool { return false }

func warpAddrsAVX512(addrs, av *[32]uint64, scale, imm, pitch, mask uint64) (lo, hi, or uint64) {
	panic("warpAddrsAVX512 without AVX-512")
}

func warpConflictsAVX512(addrs *[32]uint64) (distinct, maxc uint32) {
	panic("warpConflictsAVX512 without AVX-512")
}

func addLanesAVX512(sums *[shard.PageWords]uint64, addrs *[32]uint64, add uint64) (distinct, maxc uint32) {
	panic("addLanesAVX512 without AVX-512")
}

func addLanes16AVX512(sums *[shard.PageWords]uint64, addrs *[16]uint64, add uint64) (distinct, maxc, sectors uint32) {
	panic("addLanes16AVX512 without AVX-512")
}

func distinct16AVX512(w *[16]uint64) uint32 {
	panic("distinct16AVX512 without AVX-512")
}

func sectors16AVX512(addrs *[16]uint64) (sectors uint32, ok bool) {
	panic("sectors16AVX512 without AVX-512")
}

func warpBitsAVX512(addrs *[32]uint64) (or, and uint64) {
	panic("warpBitsAVX512 without AVX-512")
}

func warpBits16AVX512(addrs *[16]uint64) (or, and uint64) {
	panic("warpBits16AVX512 without AVX-512")
}

func sectors32AVX512(addrs *[32]uint64) (sectors uint32, ok bool) {
	panic("sectors32AVX512 without AVX-512")
}

func pageSectorsAVX512(addrs *[32]uint64) uint32 {
	panic("pageSectorsAVX512 without AVX-512")
}
