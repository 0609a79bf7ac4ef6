package columnar

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
)

// Rows per data page: PLAIN integers and booleans dataPage bytes of the
// batch's buffer (8 Ki rows of 8 bytes), the other encodings up to
// maxPageRows (a DELTA_BINARY_PACKED page of 64 Ki random 64-bit values
// is at most 513 KiB), PLAIN strings until a page holds dataPage bytes.
const maxPageRows = 64 << 10

// colChunk is one column chunk of the row group being written: its data
// pages, encoded and compressed, and for a dictionary-encoded string
// column its dictionary page. Its buffers are reused from row group to
// row group.
type colChunk struct {
	col    *pqColumn
	out    []byte // the compressed data pages, back to back
	pages  []pageDesc
	enc    []byte   // one page's encoded values
	half   []byte   // the later half of a DELTA page's blocks (appendDeltaHalves)
	rows32 []uint32 // a DELTA page's rows, made from iota runs (encodeIotaRuns)
	zbuf   []byte   // one page compressed
	idx    []int32  // a keyed column's indices for one page
	runs   []seqRun // a column held as runs: one page's (encodeRuns)
	// iota is the last full DELTA page encodeIotaRuns compressed, kept
	// from row group to row group: a row group of full warps is one such
	// page, the row group's before it again.
	iota  iotaPage
	rank  []int32 // a string column's dictionary: each value's rank in byte order
	order []int32 // and its values by rank (the inverse of rank)
	dict  []byte  // the dictionary page's values (PLAIN), when dictN > 0
	dictN int     // the dictionary's values; 0 when the chunk is PLAIN
	stats pqStats // the chunk's
	// stored is how many more pages to store uncompressed (addPage); it
	// carries over from row group to row group (parquetWriter.stored).
	stored int
	// again: the last page was compressed and worth it (addPage), so a
	// page of the same bytes after it compresses to its bytes again
	// (repeatPage).
	again bool
	// repeated counts the pages repeatPage added (the tests read it).
	repeated int
}

// iotaPage is a compressed DELTA page of iota runs (encodeIotaRuns): its
// runs, its bytes as compressed, and its description; ok once set.
type iotaPage struct {
	runs []seqRun
	z    []byte
	desc pageDesc
	ok   bool
}

// pageDesc is one data page of a colChunk.
type pageDesc struct {
	end   int   // its bytes are out[previous page's end:end]
	raw   int32 // its size before compression
	rows  int32
	enc   pqEncoding
	stats pqStats
}

func (ch *colChunk) reset() {
	ch.out, ch.pages = ch.out[:0], ch.pages[:0]
	ch.dict, ch.dictN = ch.dict[:0], 0
	ch.stats = pqStats{}
	ch.again = false
}

// addPage compresses ch.enc (or raw, when the values are the batch's own
// bytes) as the next data page, or stores it in a zstd frame of raw
// blocks while the column's pages do not compress, or when it is at most
// storedBelow bytes (zstdframe.go).
func (p *parquetWriter) addPage(ch *colChunk, raw []byte, rows int, enc pqEncoding, st pqStats) {
	ch.again = false
	switch {
	case len(raw) <= p.storedBelow:
		ch.out = appendStoredFrame(ch.out, raw)
	case ch.stored > 0:
		ch.stored--
		ch.out = appendStoredFrame(ch.out, raw)
	case len(raw) >= sampledPageBytes && !p.sampleWorth(ch, raw):
		// Its sample does not compress: the page is stored, as a page
		// that zstd did not shrink is (zstdframe.go).
		ch.stored = storedPages
		ch.out = appendStoredFrame(ch.out, raw)
	default:
		z := p.pages.EncodeAll(raw, ch.zbuf[:0])
		if ch.again = worthCompressing(raw, z); !ch.again {
			ch.stored = storedPages
		}
		ch.out = append(ch.out, z...)
		ch.zbuf = z[:0]
	}
	ch.pages = append(ch.pages, pageDesc{end: len(ch.out), raw: int32(len(raw)), rows: int32(rows), enc: enc, stats: st})
}

// sampleWorth reports whether zstd shrinks the middle sampleBytes of raw
// by a sixteenth (worthCompressing).
func (p *parquetWriter) sampleWorth(ch *colChunk, raw []byte) bool {
	mid := (len(raw) - sampleBytes) / 2
	sample := raw[mid : mid+sampleBytes]
	z := p.pages.EncodeAll(sample, ch.zbuf[:0])
	ch.zbuf = z[:0]
	return worthCompressing(sample, z)
}

// repeatPage adds, as the next data page of ch, the last one again: its
// bytes as compressed, its size, rows, encoding and statistics. The
// caller has found that the page's values are the last page's, and the
// last page was compressed (ch.again, so that addPage would compress this
// one too, to the same bytes: zstd's output is a function of its input).
func (ch *colChunk) repeatPage() {
	k := len(ch.pages) - 1
	from := 0
	if k > 0 {
		from = ch.pages[k-1].end
	}
	last := ch.pages[k]
	ch.out = append(ch.out, ch.out[from:last.end]...)
	last.end = len(ch.out)
	ch.pages = append(ch.pages, last)
	ch.repeated++
}

// encodeColumn encodes column i of b as chunks[i]: data pages of the
// column's encoding, with statistics (minimum, maximum and a null count
// of 0) per page and for the chunk.
func (p *parquetWriter) encodeColumn(chunks []colChunk, b *batch, i int) error {
	ch, c, n := &chunks[i], &b.cols[i], b.rows
	ch.reset()
	if n == 0 {
		return nil
	}
	delta := p.encs[i] == encDelta
	switch {
	case c.inRuns && c.iota && c.typ == arrow.UINT32 && delta:
		encodeIotaRuns(p, ch, c.runs, n)
		return nil
	case c.inRuns && c.iota:
		b.fillRuns(c) // no encoder of its own: the rows
	case c.inRuns:
		encodeRuns(p, ch, c.runs, n)
		return nil
	}
	if c.konst && c.typ != arrow.STRING {
		var ok bool
		switch c.typ {
		case arrow.UINT64:
			ok = encodeAffine(p, ch, c.kval, c.kstep, n, delta)
		case arrow.INT64:
			ok = encodeAffine(p, ch, int64(c.kval), int64(c.kstep), n, delta)
		case arrow.UINT32:
			ok = encodeAffine(p, ch, uint32(c.kval), uint32(c.kstep), n, delta)
		}
		if ok {
			return nil
		}
		b.fillRows(c, n) // it wraps: the general path reads rows
	} // encodeStrings takes a constant STRING column itself
	switch c.typ {
	case arrow.UINT64:
		encodeInts(p, ch, c.u64()[:n], delta)
	case arrow.INT64:
		encodeInts(p, ch, c.i64()[:n], delta)
	case arrow.UINT32:
		encodeInts(p, ch, c.u32()[:n], delta)
	case arrow.BOOL:
		encodeBools(p, ch, c.raw[:n])
	case arrow.STRING:
		p.encodeStrings(ch, b, c)
	default:
		return fmt.Errorf("column %s: unsupported type %s", ch.col.name, c.typ)
	}
	return nil
}

// encodeInts encodes an integer column, PLAIN (the pages are the
// values' own bytes) or DELTA_BINARY_PACKED at the physical type's width
// (T's). T's order is the column's sort order: unsigned for UINT_64 and
// UINT_32, signed for INT64.
func encodeInts[T uint64 | int64 | uint32](p *parquetWriter, ch *colChunk, vals []T, delta bool) {
	size := int(unsafe.Sizeof(vals[0]))
	per := dataPage / size
	if delta {
		per = maxPageRows
	}
	flip := unsignedTop[T]()
	lo, hi := vals[0], vals[0]
	for from := 0; from < len(vals); from += per {
		page := vals[from:min(from+per, len(vals))]
		ptr := unsafe.Pointer(&page[0])
		var plo, phi T
		switch {
		case !delta && ch.again && from >= per && len(page) == per && sameBytes(page, vals[from-per:from]):
			// The last page again (a full warp's lanes, page after
			// page): its bytes, its statistics, without a pass over it
			// or zstd.
			ch.repeatPage()
			continue
		case !delta:
			plo, phi = minMax(page)
		case size == 8:
			var l, h int64
			ch.enc, l, h = appendDeltaHalves(ch.enc[:0], &ch.half, unsafe.Slice((*int64)(ptr), len(page)), int64(flip))
			plo, phi = T(l), T(h)
		default:
			var l, h int32
			ch.enc, l, h = appendDeltaHalves(ch.enc[:0], &ch.half, unsafe.Slice((*int32)(ptr), len(page)), int32(flip))
			plo, phi = T(uint32(l)), T(uint32(h))
		}
		lo, hi = min(lo, plo), max(hi, phi)
		st := intStats(p, ch, plo, phi)
		if !delta {
			p.addPage(ch, unsafe.Slice((*byte)(ptr), len(page)*size), len(page), pqPlain, st)
			continue
		}
		p.addPage(ch, ch.enc, len(page), pqDelta, st)
	}
	ch.stats = intStats(p, ch, lo, hi)
}

// encodeAffine is encodeInts of n rows that are the progression v0,
// v0+step, v0+2·step … (a constant column, colBuf.konst), without a row
// to read: the pages encodeInts writes for those values (appendDeltaAffine,
// appendPlainAffine), each with its statistics, its first and last value
// in the column's order. It reports false, having written nothing, when
// the progression wraps in that order (the values are then not monotone).
func encodeAffine[T uint64 | int64 | uint32](p *parquetWriter, ch *colChunk, v0, step T, n int, delta bool) bool {
	size := int(unsafe.Sizeof(v0))
	flip := unsignedTop[T]()
	var ok bool
	if size == 8 {
		ok = monotone(int64(v0^flip), int64(step), n)
	} else {
		ok = monotone32(int32(v0^flip), int32(step), n)
	}
	if !ok {
		return false
	}
	per := dataPage / size
	if delta {
		per = maxPageRows
	}
	for from := 0; from < n; from += per {
		rows := min(per, n-from)
		first := v0 + T(from)*step
		last := first + T(rows-1)*step
		st := intStats(p, ch, min(first, last), max(first, last))
		switch {
		case !delta:
			ch.enc = appendPlainAffine(ch.enc[:0], first, step, rows)
			p.addPage(ch, ch.enc, rows, pqPlain, st)
			continue
		case size == 8:
			ch.enc = appendDeltaAffine(ch.enc[:0], int64(first), int64(step), rows)
		default:
			ch.enc = appendDeltaAffine(ch.enc[:0], int32(first), int32(step), rows)
		}
		p.addPage(ch, ch.enc, rows, pqDelta, st)
	}
	last := v0 + T(n-1)*step
	ch.stats = intStats(p, ch, min(v0, last), max(v0, last))
	return true
}

// monotone reports whether x0 + k·s stays within int64 for k up to n-1.
func monotone(x0, s int64, n int) bool {
	k := int64(n - 1)
	if s == 0 || k == 0 {
		return true
	}
	if s == math.MinInt64 || k > math.MaxInt64/max(s, -s) {
		return false
	}
	t := k * s
	return t > 0 && x0 <= math.MaxInt64-t || t < 0 && x0 >= math.MinInt64-t
}

// monotone32 reports whether x0 + k·s stays within int32 for k up to n-1.
// batch.keep compares a 32-bit column's rows zero-extended to 64 bits, so
// a progression that wraps at 32 bits leaves konst before it gets here:
// the check is the encoder's own guard, not one a replay reaches.
func monotone32(x0, s int32, n int) bool {
	last := int64(x0) + int64(n-1)*int64(s)
	return last >= math.MinInt32 && last <= math.MaxInt32
}

// appendPlainAffine appends n values first, first+step, … PLAIN (little
// endian, T's width).
func appendPlainAffine[T uint64 | int64 | uint32](dst []byte, first, step T, n int) []byte {
	dst = slices.Grow(dst, n*int(unsafe.Sizeof(first)))
	v := first
	for range n {
		if unsafe.Sizeof(v) == 8 {
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		} else {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		}
		v += step
	}
	return dst
}

// unsignedTop is the top bit of an unsigned T, 0 for a signed one: an
// unsigned column's values, read as the signed type of their width,
// compare in the column's order with that bit flipped (appendDelta).
func unsignedTop[T uint64 | int64 | uint32]() T {
	var x T
	if x--; x < 0 {
		return 0
	}
	return x ^ x>>1
}

// sameBytes reports whether a and b hold the same values (memequal on
// their bytes, rather than a loop a value).
func sameBytes[T uint64 | int64 | uint32](a, b []T) bool {
	size := int(unsafe.Sizeof(a[0]))
	return len(a) == len(b) && string(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), len(a)*size)) == string(unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b)*size))
}

// minMax returns the smallest and largest of vals (not empty).
func minMax[T cmp.Ordered](vals []T) (lo, hi T) {
	lo, hi = vals[0], vals[0]
	for _, v := range vals[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// intStats returns the statistics of values from lo to hi, PLAIN-encoded
// (little-endian, at T's width).
func intStats[T uint64 | int64 | uint32](p *parquetWriter, ch *colChunk, lo, hi T) pqStats {
	enc := func(v T) []byte {
		if unsafe.Sizeof(v) == 4 {
			return binary.LittleEndian.AppendUint32(nil, uint32(v))
		}
		return binary.LittleEndian.AppendUint64(nil, uint64(v))
	}
	return p.stats(ch, enc(lo), enc(hi))
}

// stats returns statistics with minimum lo, maximum hi and no nulls.
func (p *parquetWriter) stats(ch *colChunk, lo, hi []byte) pqStats {
	return newStats(lo, hi)
}

// encodeBools encodes a boolean column (bytes 0 or 1) PLAIN.
func encodeBools(p *parquetWriter, ch *colChunk, vals []byte) {
	var all byte = 0 // every value seen, as a bit set: 1 false, 2 true
	for from := 0; from < len(vals); from += maxPageRows {
		page := vals[from:min(from+maxPageRows, len(vals))]
		var seen byte
		for _, v := range page {
			seen |= 1 << (v & 1)
		}
		all |= seen
		ch.enc = appendPlainBools(ch.enc[:0], page)
		p.addPage(ch, ch.enc, len(page), pqPlain, p.boolStats(ch, seen))
	}
	ch.stats = p.boolStats(ch, all)
}

// boolStats returns the statistics of booleans: seen has bit 0 set if
// some value is false, bit 1 if some is true.
func (p *parquetWriter) boolStats(ch *colChunk, seen byte) pqStats {
	lo, hi := byte(1), byte(0)
	if seen&1 != 0 {
		lo = 0
	}
	if seen&2 != 0 {
		hi = 1
	}
	return p.stats(ch, []byte{lo}, []byte{hi})
}

// encodeStrings encodes a string column: RLE_DICTIONARY from the batch's
// dictionary, or PLAIN when the dictionary is larger than a dictionary
// page may be (a thousand distinct instruction texts of 1 KB). The
// statistics come from the dictionary values' ranks in byte order, so
// no row's string is compared.
func (p *parquetWriter) encodeStrings(ch *colChunk, b *batch, c *colBuf) {
	n := b.rows
	dict := c.dict
	ch.rank = slices.Grow(ch.rank[:0], len(dict))[:len(dict)]
	ch.order = slices.Grow(ch.order[:0], len(dict))[:len(dict)]
	order := ch.order
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(x, y int32) int { return cmp.Compare(dict[x], dict[y]) })
	for r, k := range order {
		ch.rank[k] = int32(r)
	}
	plain := c.dictBytes > p.dictLimit
	if !plain {
		for _, s := range dict {
			ch.dict = appendPlainString(ch.dict, s)
		}
		ch.dictN = len(dict)
	}
	w := indexWidth(len(dict))
	oneKey := c.keyed && !b.keysVary
	if !plain && (oneKey || c.konst) && n >= 8 && n <= maxPageRows {
		// One key throughout (keysVary false: a hot counter's rows, a
		// histogram's), or one value (a constant column: the memory
		// table's space): one page of one RLE run, appendRLEIndices's
		// bytes for it, without a row's index made or read.
		x := int32(c.kval)
		if oneKey {
			x = c.byKey[b.firstKey()]
		}
		ch.enc = appendRLERun(ch.enc[:0], x, n, w)
		v := []byte(dict[x])
		st := p.stats(ch, v, v)
		p.addPage(ch, ch.enc, n, pqRLEDict, st)
		ch.stats = st
		return
	}
	if c.konst {
		b.fillRows(c, n) // no shortcut: the general path reads rows
	}
	ch.idx = slices.Grow(ch.idx[:0], min(n, maxPageRows))
	loR, hiR := int32(len(dict)), int32(-1)
	for from := 0; from < n; {
		rows := min(n-from, maxPageRows)
		idx := b.indices(c, from, rows, ch.idx[:cap(ch.idx)])
		if plain {
			// Up to dataPage bytes of strings a page.
			size := 0
			for k, x := range idx {
				if size += 4 + len(dict[x]); size >= dataPage {
					idx = idx[:k+1]
					break
				}
			}
			rows = len(idx)
		}
		plo, phi := int32(0), int32(len(dict)-1)
		if rows < n {
			// A page of part of the batch: its own range. (Every
			// value of the dictionary is some row's: writer.go adds
			// a string when a row has it.)
			plo, phi = int32(len(dict)), int32(-1)
			for _, x := range idx {
				r := ch.rank[x]
				plo, phi = min(plo, r), max(phi, r)
			}
		}
		loR, hiR = min(loR, plo), max(hiR, phi)
		st := p.stats(ch, []byte(dict[order[plo]]), []byte(dict[order[phi]]))
		if plain {
			ch.enc = ch.enc[:0]
			for _, x := range idx {
				ch.enc = appendPlainString(ch.enc, dict[x])
			}
			p.addPage(ch, ch.enc, rows, pqPlain, st)
		} else {
			ch.enc = appendRLEIndices(ch.enc[:0], idx, w)
			p.addPage(ch, ch.enc, rows, pqRLEDict, st)
		}
		from += rows
	}
	ch.stats = p.stats(ch, []byte(dict[order[loR]]), []byte(dict[order[hiR]]))
}
