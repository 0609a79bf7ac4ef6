package columnar

//go:generate go run gen_pack.go

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// The Parquet value encodings the writer uses, each appending one data
// page's values to dst, as the format specifies them
// (https://parquet.apache.org/docs/file-format/data-pages/encodings/).
// They replace arrow-go's encoders, which pack one value at a time through
// a bit writer: DELTA_BINARY_PACKED here packs a miniblock of 32 values
// in one loop over a 64-bit accumulator, the RLE/bit-packed hybrid finds
// runs by comparing indices, and PLAIN integers are the batch's own
// little-endian buffers (every target of `make cross` is little-endian,
// as arrow-go's own buffers assume). Their output is checked by reading it
// back with arrow-go and with DuckDB (pqencode_test.go, duckdb_test.go).

// DELTA_BINARY_PACKED's layout: blocks of 128 deltas, each in 4 miniblocks
// of 32, as parquet-mr, arrow-go and DuckDB write them.
const (
	deltaBlock     = 128
	deltaMiniBlock = 32
	deltaMinis     = deltaBlock / deltaMiniBlock
)

// appendDelta appends vals DELTA_BINARY_PACKED to dst: the header (block
// size, miniblocks per block, value count, first value), then per block
// of 128 deltas the smallest delta, the 4 miniblocks' bit widths and the
// miniblocks, each value less the smallest delta, bit-packed. Deltas are
// taken at the column's own width, wrapping as two's complement (an INT32
// column's deltas and widths stay within 32 bits, as the format requires).
// The last miniblock is padded with zeros to 32 values; the widths of the
// last block's unused miniblocks are 0 and they have no bytes.
//
// It also returns the smallest and largest of vals, the page's statistics,
// found in the loop that takes the deltas rather than in a pass of their
// own: in the order of T with bit flip inverted, so that flip = 0 compares
// signed values and flip = T's sign bit compares an unsigned column read
// as T (UINT_32 as int32, UINT_64 as int64). vlo and vhi are vals[0] when
// vals has one value, 0 when it has none.
func appendDelta[T int32 | int64](dst []byte, vals []T, flip T) (out []byte, vlo, vhi T) {
	return appendDeltaHalves(dst, nil, vals, flip)
}

// appendDeltaAffine is appendDelta's bytes for the n (one or more) values
// first, first+step, first+2·step …, wrapping at T's width.
func appendDeltaAffine[T int32 | int64](dst []byte, first, step T, n int) []byte {
	dst = binary.AppendUvarint(dst, deltaBlock)
	dst = binary.AppendUvarint(dst, deltaMinis)
	dst = binary.AppendUvarint(dst, uint64(n))
	dst = binary.AppendVarint(dst, int64(first))
	return appendStepBlocks(dst, int64(step), n)
}

// appendStepBlocks appends the blocks of n values' deltas when they are
// all step: per block a smallest delta of step and four miniblocks 0 bits
// wide.
func appendStepBlocks(dst []byte, step int64, n int) []byte {
	var buf [binary.MaxVarintLen64 + deltaMinis]byte
	blk := binary.AppendVarint(buf[:0], step)
	blk = append(blk, 0, 0, 0, 0)
	for from := 1; from < n; from += deltaBlock {
		dst = append(dst, blk...)
	}
	return dst
}

// appendDeltaHalves is appendDelta; given a spare buffer, and vals of at
// least splitDeltaValues values in its general case, it takes the later
// half of the blocks on a goroutine of its own, into *spare (kept for the
// next page), and appends them: a block's bytes depend only on its values
// and the one before them, so the bytes are appendDelta's to the bit
// (TestDeltaHalves). The memory table, encoded after the replay where
// nothing else runs, has one heavy column (the words' values) that kept
// one core busy and the other waiting.
func appendDeltaHalves[T int32 | int64](dst []byte, spare *[]byte, vals []T, flip T) (out []byte, vlo, vhi T) {
	dst = binary.AppendUvarint(dst, deltaBlock)
	dst = binary.AppendUvarint(dst, deltaMinis)
	dst = binary.AppendUvarint(dst, uint64(len(vals)))
	if len(vals) == 0 {
		return binary.AppendVarint(dst, 0), 0, 0
	}
	dst = binary.AppendVarint(dst, int64(vals[0])) // zig-zag, as the format's
	if allEqual(vals) {
		// One value throughout (the memory table's group, -1 but in
		// shared memory): every block's smallest delta is 0, its
		// miniblocks 0 bits wide, as the loop below would write them, for
		// a compare a value instead of its work.
		return appendStepBlocks(dst, 0, len(vals)), vals[0], vals[0]
	}
	if step, lo, hi, ok := arithmetic(vals, flip); ok {
		// One delta throughout (seq; a warp counter): every block's
		// smallest delta is it, its miniblocks 0 bits wide, as the loop
		// below would write them, from one pass that checks the deltas
		// and finds the range, where the loop takes two and stores each
		// delta.
		return appendStepBlocks(dst, int64(step), len(vals)), lo, hi
	}
	if spare != nil && len(vals) >= splitDeltaValues {
		return appendDeltaSplit(dst, spare, vals, flip)
	}
	return appendDeltaBlocks(dst, vals, flip)
}

// splitDeltaValues is the fewest values appendDeltaHalves splits between
// two goroutines: half of them is well over the cost of starting a
// goroutine (BenchmarkAppendDelta).
const splitDeltaValues = 16 << 10

// appendDeltaSplit is appendDeltaBlocks with the later half of the blocks
// on a goroutine of its own, into *spare, then appended. A panic there is
// raised again here, on the caller's goroutine.
func appendDeltaSplit[T int32 | int64](dst []byte, spare *[]byte, vals []T, flip T) (out []byte, vlo, vhi T) {
	blocks := (len(vals) - 1 + deltaBlock - 1) / deltaBlock
	mid := 1 + blocks/2*deltaBlock
	var hlo, hhi T
	var failed any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { failed = recover() }()
		*spare, hlo, hhi = deltaBlockRange((*spare)[:0], vals, mid, len(vals), flip)
	}()
	dst, vlo, vhi = deltaBlockRange(dst, vals, 1, mid, flip)
	<-done
	if failed != nil {
		panic(failed)
	}
	return append(dst, *spare...), min(vlo^flip, hlo^flip) ^ flip, max(vhi^flip, hhi^flip) ^ flip
}

// appendDeltaBlocks is appendDelta's general case: the blocks of vals's
// deltas (vals has two values or more), after the header.
func appendDeltaBlocks[T int32 | int64](dst []byte, vals []T, flip T) (out []byte, vlo, vhi T) {
	return deltaBlockRange(dst, vals, 1, len(vals), flip)
}

// deltaBlockRange appends the blocks of the deltas of vals[from:to], each
// from the value before it (from is 1 plus a multiple of deltaBlock, where
// appendDelta's blocks start), and returns the smallest and largest of
// vals[from-1:to].
func deltaBlockRange[T int32 | int64](dst []byte, vals []T, from, to int, flip T) (out []byte, vlo, vhi T) {
	var d [deltaBlock]int64
	var his [deltaMinis]int64
	prev := vals[from-1]
	vlo, vhi = prev^flip, prev^flip // flipped until the return
	for ; from < to; from += deltaBlock {
		blk := vals[from:min(from+deltaBlock, to)]
		var lo, hi int64
		lo, hi, vlo, vhi = blockDeltas(&d, &his, blk, prev, flip, vlo, vhi)
		prev = blk[len(blk)-1]
		dst = binary.AppendVarint(dst, lo)
		widths := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		if lo == hi {
			// One delta throughout (a constant column, addresses a word
			// apart): every miniblock of width 0, no bytes.
			continue
		}
		for m := 0; m < deltaMinis && m*deltaMiniBlock < len(blk); m++ {
			seg := d[m*deltaMiniBlock : min(m*deltaMiniBlock+deltaMiniBlock, len(blk))]
			// The widest of seg's deltas less lo is as wide as all of
			// them or'd together: its largest.
			w := uint(bits.Len64(uint64(his[m] - lo)))
			dst[widths+m] = byte(w)
			dst = pack32(dst, seg, lo, w)
		}
	}
	return dst, vlo ^ flip, vhi ^ flip
}

// The loops of appendDelta, each a function of its own: in one function
// with the rest, the compiler kept their running values (the smallest
// delta, the previous value) on the stack, where each iteration waited
// on the last one's store.

// blockDeltas sets d[k] to the delta from the value before blk[k] (prev
// for blk[0]), wrapping at T's width, and his[m] to the largest delta of
// miniblock m (those blk has); it returns the smallest and the largest
// delta of all, and [vlo, vhi] widened to hold every value of blk,
// compared with bit flip inverted (appendDelta): the range in the
// deltas' loop rather than a pass of its own (BenchmarkAppendDelta).
//
// A whole block runs in assembly where the CPU has AVX-512
// (blockDeltasSIMD: BenchmarkBlockDeltas).
func blockDeltas[T int32 | int64](d *[deltaBlock]int64, his *[deltaMinis]int64, blk []T, prev, flip, vlo, vhi T) (lo, hi int64, _, _ T) {
	if lo, hi, vlo, vhi, ok := blockDeltasSIMD(d, his, blk, prev, flip, vlo, vhi); ok {
		return lo, hi, vlo, vhi
	}
	return blockDeltasGo(d, his, blk, prev, flip, vlo, vhi)
}

// blockDeltasGo is blockDeltas in Go.
//
//go:noinline
func blockDeltasGo[T int32 | int64](d *[deltaBlock]int64, his *[deltaMinis]int64, blk []T, prev, flip, vlo, vhi T) (lo, hi int64, _, _ T) {
	lo, hi = int64(1<<63-1), int64(-1<<63)
	for m := 0; m*deltaMiniBlock < len(blk); m++ {
		seg := blk[m*deltaMiniBlock : min(m*deltaMiniBlock+deltaMiniBlock, len(blk))]
		out := d[m*deltaMiniBlock:]
		h := int64(-1 << 63)
		for k, v := range seg {
			x := int64(v - prev)
			prev = v
			out[k] = x
			lo, h = min(lo, x), max(h, x)
			vlo, vhi = min(vlo, v^flip), max(vhi, v^flip)
		}
		his[m], hi = h, max(hi, h)
	}
	return lo, hi, vlo, vhi
}

// arithmetic reports whether vals (two or more) step by one delta
// throughout, wrapping at T's width, and returns it with the smallest and
// largest of vals, compared with bit flip inverted (appendDelta). It
// returns at the first delta that differs: at once, for most columns.
//
//go:noinline
func arithmetic[T int32 | int64](vals []T, flip T) (step, lo, hi T, ok bool) {
	step = vals[1] - vals[0]
	prev := vals[0]
	lo, hi = prev^flip, prev^flip
	for _, v := range vals[1:] {
		if v-prev != step {
			return 0, 0, 0, false
		}
		prev = v
		lo, hi = min(lo, v^flip), max(hi, v^flip)
	}
	return step, lo ^ flip, hi ^ flip, true
}

// allEqual reports whether every value of vals is vals[0] (vals is not
// empty). It returns at the first that is not: at once, for most columns.
func allEqual[T comparable](vals []T) bool {
	for _, v := range vals[1:] {
		if v != vals[0] {
			return false
		}
	}
	return true
}

// pack32 appends a miniblock: seg's deltas (at most 32) less lo, each
// below 1<<w, bit-packed from the least significant bit up, and zeros for
// the deltas past seg's: 4·w bytes. The packing is packers[w], one
// function a width, its shifts constants (pack_gen.go, gen_pack.go): a
// loop that kept the bit position from value to value took several
// nanoseconds a value on the results' random addresses, a branch a value
// mispredicted.
func pack32(dst []byte, seg []int64, lo int64, w uint) []byte {
	if w == 0 {
		return dst
	}
	var pad [deltaMiniBlock]int64
	s := &pad
	if len(seg) >= deltaMiniBlock {
		s = (*[deltaMiniBlock]int64)(seg)
	} else {
		// A short last miniblock: its missing deltas are lo, packed as 0.
		copy(pad[:], seg)
		for k := len(seg); k < deltaMiniBlock; k++ {
			pad[k] = lo
		}
	}
	n := len(dst)
	size := 4 * int(w)
	dst = slices.Grow(dst, size)[:n+size]
	packBits(dst[n:], s, lo, w)
	return dst
}

// indexWidth is the bit width of the indices into a dictionary of n
// values: at least 1, as arrow-go and parquet-mr write it.
func indexWidth(n int) int {
	return max(1, bits.Len(uint(n-1)))
}

// appendRLEIndices appends dictionary indices as an RLE_DICTIONARY data
// page holds them: a byte of bit width w, then the RLE/bit-packed hybrid
// of the indices. A run of 8 or more equal indices is an RLE run (its
// length, then the value in ⌈w/8⌉ bytes); the others go in bit-packed runs
// of groups of 8, which end where a group of 8 equal indices begins. The
// last group is padded with zeros (the page's value count bounds it).
func appendRLEIndices(dst []byte, idx []int32, w int) []byte {
	dst = append(dst, byte(w))
	valBytes := (w + 7) / 8
	n := len(idx)
	for i := 0; i < n; {
		v := idx[i]
		j := i + 1
		for j < n && idx[j] == v {
			j++
		}
		if j-i >= 8 {
			dst = appendRun(dst, v, j-i, valBytes)
			i = j
			continue
		}
		k := i + 8
		for k < n && !(k+8 <= n && sameEight(idx[k:k+8])) {
			k += 8
		}
		dst = binary.AppendUvarint(dst, uint64((k-i)/8)<<1|1)
		dst = packIndices(dst, idx[i:min(k, n)], k-i, w)
		i = k
	}
	return dst
}

// appendRun appends an RLE run of n indices v, each in valBytes bytes.
func appendRun(dst []byte, v int32, n, valBytes int) []byte {
	dst = binary.AppendUvarint(dst, uint64(n)<<1)
	for b := range valBytes {
		dst = append(dst, byte(uint32(v)>>(8*b)))
	}
	return dst
}

// appendRLERun appends n (8 or more) indices v at bit width w as
// appendRLEIndices does: the width, then one RLE run.
func appendRLERun(dst []byte, v int32, n, w int) []byte {
	return appendRun(append(dst, byte(w)), v, n, (w+7)/8)
}

// sameEight reports whether the 8 indices of g are equal.
func sameEight(g []int32) bool {
	v := g[0]
	return g[1] == v && g[2] == v && g[3] == v && g[4] == v && g[5] == v && g[6] == v && g[7] == v
}

// packIndices appends idx bit-packed at w bits each, padded with zeros to
// count values (a multiple of 8): count·w/8 bytes. A group of 8 indices
// of up to 8 bits is put together in a 64-bit word and stored at once.
func packIndices(dst []byte, idx []int32, count, w int) []byte {
	n := len(dst)
	size := count * w / 8
	dst = slices.Grow(dst, size+8)
	out := dst[n : n+size+8]
	o := 0
	if w <= 8 {
		for g := 0; g < count; g += 8 {
			var acc uint64
			for k, x := range idx[g:min(g+8, len(idx))] {
				acc |= uint64(uint32(x)) << (k * w)
			}
			binary.LittleEndian.PutUint64(out[o:], acc) // w bytes of it count
			o += w
		}
		return dst[:n+size]
	}
	clear(out)
	var acc uint64
	nb := 0
	for _, x := range idx {
		acc |= uint64(uint32(x)) << nb
		nb += w
		for nb >= 8 {
			out[o] = byte(acc)
			o++
			acc >>= 8
			nb -= 8
		}
	}
	if nb > 0 {
		out[o] = byte(acc)
	}
	return dst[:n+size]
}

// appendPlainBools appends bools (bytes 0 or 1) PLAIN: one bit each, from
// the least significant bit of each byte.
func appendPlainBools(dst []byte, vals []byte) []byte {
	n := len(dst)
	size := (len(vals) + 7) / 8
	dst = slices.Grow(dst, size)
	out := dst[n : n+size]
	clear(out)
	for k, v := range vals {
		out[k/8] |= (v & 1) << (k % 8)
	}
	return dst[:n+size]
}

// appendPlainString appends s as a PLAIN BYTE_ARRAY value: its length as
// 4 bytes little-endian, then its bytes.
func appendPlainString(dst []byte, s string) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}
