package columnar

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// TestDeltaSpecExamples: the two examples of DELTA_BINARY_PACKED in the
// Parquet format's encodings page, byte for byte.
func TestDeltaSpecExamples(t *testing.T) {
	tests := []struct {
		vals []int64
		want []byte
	}{
		// 1..5: deltas 1, the smallest 1, every miniblock 0 bits wide.
		{[]int64{1, 2, 3, 4, 5}, []byte{0x80, 0x01, 4, 5, 2, 2, 0, 0, 0, 0}},
		// 7 5 3 1 2 3 4 5: deltas -2 -2 -2 1 1 1 1, less the smallest
		// (-2) 0 0 0 3 3 3 3, 2 bits wide: 32 values in 8 bytes.
		{[]int64{7, 5, 3, 1, 2, 3, 4, 5}, []byte{0x80, 0x01, 4, 8, 14, 3, 2, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0, 0, 0}},
		// One value: the header only.
		{[]int64{-3}, []byte{0x80, 0x01, 4, 1, 5}},
	}
	for _, tc := range tests {
		if got, _, _ := appendDelta(nil, tc.vals, 0); !bytes.Equal(got, tc.want) {
			t.Errorf("%v: % x, want % x", tc.vals, got, tc.want)
		}
	}
	// INT32: the delta from MaxInt32 to MinInt32 wraps to 1.
	if got, want := first(appendDelta(nil, []int32{math.MaxInt32, math.MinInt32}, 0)), []byte{0x80, 0x01, 4, 2, 0xfe, 0xff, 0xff, 0xff, 0x0f, 2, 0, 0, 0, 0}; !bytes.Equal(got, want) {
		t.Errorf("int32 wrap: % x, want % x", got, want)
	}
}

func first[T any](b []byte, _, _ T) []byte { return b }

// TestDeltaConstant: a column of one value (appendDelta's shortcut) is
// encoded as the format has it: the header, then a block of zero-width
// miniblocks (a zero smallest delta, four zero widths) per 128 deltas;
// and its smallest and largest values are that value, unsigned too.
func TestDeltaConstant(t *testing.T) {
	for _, n := range []int{2, 128, 129, 300} {
		for _, v := range []int64{-1, 0, math.MaxInt64, math.MinInt64} {
			want := []byte{0x80, 0x01, 4}
			want = binary.AppendUvarint(want, uint64(n))
			want = binary.AppendVarint(want, v)
			for range (n - 1 + 127) / 128 {
				want = append(want, 0, 0, 0, 0, 0)
			}
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = v
			}
			got, lo, hi := appendDelta(nil, vals, int64(unsignedTop[uint64]()))
			if !bytes.Equal(got, want) || lo != v || hi != v {
				t.Errorf("%d × %d: % x, min %d max %d; want % x, %d %d", n, v, got, lo, hi, want, v, v)
			}
			// One value different, last: the general path's bytes.
			vals[n-1]++
			if got := first(appendDelta(nil, vals, 0)); bytes.Equal(got, want) {
				t.Errorf("%d × %d with the last changed: the constant column's bytes", n, v)
			}
		}
	}
}

// TestDeltaMinMax: the smallest and largest values appendDelta returns
// with a page, for each column type it encodes, are minMax's over the
// column's own type, in its own order: an unsigned column's values are
// read as signed ones of their width and compared with the top bit
// flipped, so that a value with the top bit set is the largest, not the
// smallest. Pages of 1, 2, 129 (a block and one) and 1000 values of wide,
// narrow and extreme values.
func TestDeltaMinMax(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pick64 := func(k int) uint64 {
		switch r.IntN(6) {
		case 0:
			return []uint64{0, 1, 1 << 63, 1<<63 - 1, math.MaxUint64}[r.IntN(5)]
		case 1:
			return uint64(r.IntN(100)) // small
		case 2:
			return -uint64(r.IntN(100)) // small negative, or near the top when unsigned
		}
		return r.Uint64()
	}
	if got := unsignedTop[uint32](); got != 1<<31 {
		t.Errorf("unsignedTop[uint32] = %#x, want 1<<31", got)
	}
	if got := unsignedTop[uint64](); got != 1<<63 {
		t.Errorf("unsignedTop[uint64] = %#x, want 1<<63", got)
	}
	if got := unsignedTop[int64](); got != 0 {
		t.Errorf("unsignedTop[int64] = %#x, want 0", got)
	}
	for _, n := range []int{1, 2, 129, 1000} {
		for trial := range 20 {
			u64 := make([]uint64, n)
			for k := range u64 {
				u64[k] = pick64(k)
			}
			i64 := unsafe.Slice((*int64)(unsafe.Pointer(&u64[0])), n)
			u32 := make([]uint32, n)
			for k := range u32 {
				u32[k] = uint32(u64[k] >> (32 * (k & 1)))
			}
			i32 := unsafe.Slice((*int32)(unsafe.Pointer(&u32[0])), n)
			check := func(name string, gotLo, gotHi, wantLo, wantHi any) {
				if gotLo != wantLo || gotHi != wantHi {
					t.Errorf("%d values, trial %d, %s: min %v max %v, want %v %v", n, trial, name, gotLo, gotHi, wantLo, wantHi)
				}
			}
			_, l, h := appendDelta(nil, i64, 0)
			lo, hi := minMax(i64)
			check("int64", l, h, lo, hi)
			_, l, h = appendDelta(nil, i64, int64(unsignedTop[uint64]()))
			ulo, uhi := minMax(u64)
			check("uint64", uint64(l), uint64(h), ulo, uhi)
			_, l32, h32 := appendDelta(nil, i32, int32(unsignedTop[uint32]()))
			u32lo, u32hi := minMax(u32)
			check("uint32", uint32(l32), uint32(h32), u32lo, u32hi)
		}
	}
}

// TestRLEIndices: the RLE/bit-packed hybrid of dictionary indices, byte
// for byte: runs of 8 or more as RLE runs, the rest bit-packed in groups
// of 8 that stop where 8 equal indices begin.
func TestRLEIndices(t *testing.T) {
	tests := []struct {
		name string
		idx  []int32
		w    int
		want []byte
	}{
		{"one run", []int32{5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, 3, []byte{3, 10 << 1, 5}},
		{"short tail padded", []int32{1, 2, 3}, 2, []byte{2, 1<<1 | 1, 1 | 2<<2 | 3<<4, 0}},
		{"literal then run", []int32{0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1,
			[]byte{1, 1<<1 | 1, 0xaa, 9 << 1, 1}},
		{"wide values", []int32{300, 300, 300, 300, 300, 300, 300, 300}, 9, []byte{9, 8 << 1, 300 & 0xff, 300 >> 8}},
		{"wide packed", []int32{1, 256, 0, 0, 0, 0, 0, 0}, 9, []byte{9, 1<<1 | 1, 1, 0, 2, 0, 0, 0, 0, 0, 0}},
	}
	for _, tc := range tests {
		if got := appendRLEIndices(nil, tc.idx, tc.w); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: % x, want % x", tc.name, got, tc.want)
		}
	}
}

// pagesSpec is a table with a column of every type and encoding the
// Parquet writer has.
var pagesSpec = newTableSpec("pages",
	col("u64d", tU64, encDelta), col("u64p", tU64),
	col("i64d", tI64, encDelta), col("i64p", tI64),
	col("u32d", tU32, encDelta), col("u32p", tU32),
	col("b", tBool), col("s", tString),
)

// pagesBatch is a batch of pagesSpec: for each row, the integer columns
// from ints (the same value in every integer column, cut to its width),
// the boolean from its lowest bit, the string dict[strs[row]]. The
// batch's dictionary holds the strings in order of first use, as the
// Writer builds it.
func pagesBatch(ints []uint64, strs []int, dict []string) *batch {
	b := newBatch(&pagesSpec, memory.NewGoAllocator())
	n := len(ints)
	b.reserve(n, n)
	seen := map[int]int32{}
	for r, v := range ints {
		for _, c := range []int{0, 1} {
			b.cols[c].u64()[r] = v
		}
		for _, c := range []int{2, 3} {
			b.cols[c].i64()[r] = int64(v)
		}
		for _, c := range []int{4, 5} {
			b.cols[c].u32()[r] = uint32(v)
		}
		b.cols[6].raw[r] = byte(v & 1)
		k, ok := seen[strs[r]]
		if !ok {
			k = b.cols[7].add(dict[strs[r]])
			seen[strs[r]] = k
		}
		b.cols[7].idx()[r] = k
	}
	b.rows = n
	return b
}

// checkPages writes b with the Parquet writer (dictionary limit
// dictLimit, 0 for the default), reads it back with arrow-go, and checks
// every value, the chunk statistics and each page's.
func checkPages(t testing.TB, b *batch, dictLimit int) {
	t.Helper()
	var buf bytes.Buffer
	pages, err := newPageEncoder()
	if err != nil {
		t.Fatal(err)
	}
	pw, err := newParquetWriter(&buf, &pagesSpec, b.mem, pages, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dictLimit > 0 {
		pw.dictLimit = dictLimit
	}
	if err := pw.write(b); err != nil {
		t.Fatal(err)
	}
	if err := pw.close(); err != nil {
		t.Fatal(err)
	}
	n := b.rows
	want := make([][]any, n)
	for r := range n {
		c := b.cols
		s := c[7].dict[c[7].idx()[r]]
		want[r] = []any{c[0].u64()[r], c[1].u64()[r], c[2].i64()[r], c[3].i64()[r], c[4].u32()[r], c[5].u32()[r], c[6].raw[r] == 1, s}
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	checkRows(t, "pages", readParquetFile(t, "pages.parquet", rdr, memory.NewGoAllocator()).rows, want)
	if n == 0 {
		return
	}
	// Statistics: each page's and the chunk's span exactly its values.
	span := func(col, from, to int) (lo, hi []byte) {
		var los, his []byte
		for r := from; r < to; r++ {
			var v []byte
			switch c := &b.cols[col]; col {
			case 0, 1:
				v = binary.LittleEndian.AppendUint64(nil, c.u64()[r])
			case 2, 3:
				v = binary.LittleEndian.AppendUint64(nil, uint64(c.i64()[r]))
			case 4, 5:
				v = binary.LittleEndian.AppendUint32(nil, c.u32()[r])
			case 6:
				v = []byte{c.raw[r]}
			case 7:
				v = []byte(c.dict[c.idx()[r]])
			}
			less := func(x, y []byte) bool { return bytes.Compare(x, y) < 0 }
			switch col {
			case 0, 1, 4, 5: // unsigned: compare as big-endian
				less = func(x, y []byte) bool { return bytes.Compare(reverse(x), reverse(y)) < 0 }
			case 2, 3:
				less = func(x, y []byte) bool {
					return int64(binary.LittleEndian.Uint64(x)) < int64(binary.LittleEndian.Uint64(y))
				}
			}
			if los == nil || less(v, los) {
				los = v
			}
			if his == nil || less(his, v) {
				his = v
			}
		}
		return los, his
	}
	rg := rdr.RowGroup(0)
	for col := range b.cols {
		name := pagesSpec.schema.Field(col).Name
		cc, err := rdr.MetaData().RowGroup(0).ColumnChunk(col)
		if err != nil {
			t.Fatal(err)
		}
		st, err := cc.Statistics()
		if err != nil || st == nil {
			t.Fatalf("%s: no chunk statistics (%v)", name, err)
		}
		lo, hi := span(col, 0, n)
		if !bytes.Equal(st.EncodeMin(), lo) || !bytes.Equal(st.EncodeMax(), hi) || st.NullCount() != 0 {
			t.Errorf("%s: chunk statistics % x..% x nulls %d, want % x..% x", name, st.EncodeMin(), st.EncodeMax(), st.NullCount(), lo, hi)
		}
		pr, err := rg.GetColumnPageReader(col)
		if err != nil {
			t.Fatal(err)
		}
		from := 0
		for pr.Next() {
			dp, ok := pr.Page().(*file.DataPageV1)
			if !ok {
				continue // the dictionary page
			}
			to := from + int(dp.NumValues())
			ps := dp.Statistics()
			lo, hi := span(col, from, to)
			if !bytes.Equal(ps.Min, lo) || !bytes.Equal(ps.Max, hi) || !ps.HasNullCount || ps.NullCount != 0 {
				t.Errorf("%s: rows %d..%d: page statistics % x..% x, want % x..% x", name, from, to, ps.Min, ps.Max, lo, hi)
			}
			from = to
		}
		if err := pr.Err(); err != nil {
			t.Fatal(err)
		}
		if from != n {
			t.Errorf("%s: pages hold %d values, want %d", name, from, n)
		}
	}
}

func reverse(b []byte) []byte {
	r := make([]byte, len(b))
	for i := range b {
		r[len(b)-1-i] = b[i]
	}
	return r
}

// TestPagesReadBack: columns of every type and encoding, of lengths
// around the block, miniblock, group and page sizes, read back by
// arrow-go as written, with exact statistics per page and per chunk.
func TestPagesReadBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := []struct {
		name string
		int  func(r int) uint64
	}{
		{"increasing", func(r int) uint64 { return uint64(4*r) + 0x1000 }},
		{"constant", func(r int) uint64 { return 7 }},
		{"random", func(r int) uint64 { return rng.Uint64() }},
		{"extremes", func(r int) uint64 {
			return []uint64{0, math.MaxUint64, 1 << 63, 1<<63 - 1, math.MaxUint32, 1 << 31, 1<<31 - 1}[r%7]
		}},
		{"small", func(r int) uint64 { return rng.Uint64N(300) }},
		{"descending", func(r int) uint64 { return uint64(1<<40 - 3*r) }},
	}
	dicts := [][]string{{"only"}, {"", "b", "a"}, make([]string, 300)}
	for i := range dicts[2] {
		dicts[2][i] = fmt.Sprintf("s%03d", 299-i)
	}
	strGens := []struct {
		name string
		idx  func(r, k int) int
	}{
		{"runs", func(r, k int) int { return (r / 11) % k }},
		{"random", func(r, k int) int { return rng.IntN(k) }},
		{"cycle", func(r, k int) int { return r % k }},
	}
	for _, n := range []int{1, 2, 7, 8, 9, 33, 128, 129, 1000, 8193, 70000} {
		for gi, g := range gens {
			dict := dicts[gi%len(dicts)]
			sg := strGens[gi%len(strGens)]
			t.Run(fmt.Sprintf("%d/%s/%d-strings-%s", n, g.name, len(dict), sg.name), func(t *testing.T) {
				ints, strs := make([]uint64, n), make([]int, n)
				for r := range n {
					ints[r], strs[r] = g.int(r), sg.idx(r, len(dict))
				}
				checkPages(t, pagesBatch(ints, strs, dict), 0)
			})
		}
	}
	t.Run("plain strings", func(t *testing.T) {
		// A dictionary over the limit: PLAIN pages of about dataPage
		// bytes each.
		long := make([]string, 40)
		for i := range long {
			long[i] = fmt.Sprintf("%04d-%s", i, bytes.Repeat([]byte{'x'}, 3000))
		}
		n := 100
		ints, strs := make([]uint64, n), make([]int, n)
		for r := range n {
			ints[r], strs[r] = uint64(r), (r*7)%len(long)
		}
		checkPages(t, pagesBatch(ints, strs, long), 1<<10)
	})
}

// FuzzParquetPages: any column values round-trip through the writer's
// encodings and arrow-go's reader, with exact statistics.
func FuzzParquetPages(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(3))
	f.Add(bytes.Repeat([]byte{0xff, 0, 0x80, 0x7f}, 70), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		n := len(data) / 3
		if n == 0 {
			return
		}
		dict := make([]string, int(k)%40+1)
		for i := range dict {
			dict[i] = fmt.Sprint("v", i)
		}
		ints, strs := make([]uint64, n), make([]int, n)
		for r := range n {
			// A small range of patterns from 3 bytes: the value's
			// bytes spread over its width, so deltas are any size.
			b0, b1, b2 := uint64(data[3*r]), uint64(data[3*r+1]), uint64(data[3*r+2])
			ints[r] = b0<<56 | b1<<28 | b2 | b0
			strs[r] = int(data[3*r+1]) % len(dict)
		}
		checkPages(t, pagesBatch(ints, strs, dict), 0)
	})
}

// TestDeltaArithmetic: a column that steps by one delta throughout
// (appendDelta's second shortcut: seq, a warp counter) is encoded in the
// bytes of the general loop (appendDeltaBlocks), with its smallest and
// largest values, at both widths, signed and unsigned: steps up and down,
// of one and of the width's extremes, wrapping past the top or not, in
// pages of 2 to 300 values; and a column that steps by one delta but its
// last is not taken for one.
func TestDeltaArithmetic(t *testing.T) {
	header := func(n int, v0 int64) []byte {
		h := []byte{0x80, 0x01, 4}
		h = binary.AppendUvarint(h, uint64(n))
		return binary.AppendVarint(h, v0)
	}
	check64 := func(start, step int64, n int, flip int64) {
		t.Helper()
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = start + int64(i)*step // wraps as the column's deltas do
		}
		got, lo, hi := appendDelta(nil, vals, flip)
		want, wlo, whi := appendDeltaBlocks(header(n, start), vals, flip)
		if !bytes.Equal(got, want) || lo != wlo || hi != whi {
			t.Errorf("int64 from %d by %d, %d values, flip %#x: % x, min %d max %d; want % x, %d %d", start, step, n, flip, got, lo, hi, want, wlo, whi)
		}
		if n > 2 {
			vals[n-1]++
			if got, want := first(appendDelta(nil, vals, flip)), first(appendDeltaBlocks(header(n, start), vals, flip)); !bytes.Equal(got, want) {
				t.Errorf("int64 from %d by %d, %d values, the last off by one: % x, want % x", start, step, n, got, want)
			}
		}
	}
	check32 := func(start, step int32, n int, flip int32) {
		t.Helper()
		vals := make([]int32, n)
		for i := range vals {
			vals[i] = start + int32(i)*step
		}
		got, lo, hi := appendDelta(nil, vals, flip)
		want, wlo, whi := appendDeltaBlocks(header(n, int64(start)), vals, flip)
		if !bytes.Equal(got, want) || lo != wlo || hi != whi {
			t.Errorf("int32 from %d by %d, %d values, flip %#x: % x, min %d max %d; want % x, %d %d", start, step, n, flip, got, lo, hi, want, wlo, whi)
		}
	}
	top64, top32 := int64(unsignedTop[uint64]()), int32(unsignedTop[uint32]())
	for _, n := range []int{2, 3, 128, 129, 257, 300} {
		for _, step := range []int64{1, -1, 7, -300, math.MaxInt64, math.MinInt64} {
			for _, start := range []int64{0, -5, math.MaxInt64 - 100, math.MinInt64 + 3} {
				check64(start, step, n, 0)
				check64(start, step, n, top64)
			}
		}
		for _, step := range []int32{1, -1, 9, math.MaxInt32, math.MinInt32} {
			for _, start := range []int32{0, -5, math.MaxInt32 - 50, math.MinInt32 + 2} {
				check32(start, step, n, 0)
				check32(start, step, n, top32)
			}
		}
	}
}

// TestRLERun: appendRLERun, the shortcut for a page of one index (a
// keyed column of one instruction), writes appendRLEIndices's bytes for
// that page, at every index width and byte count of a value.
func TestRLERun(t *testing.T) {
	for _, w := range []int{1, 2, 7, 8, 9, 16, 17, 24, 25, 32} {
		for _, n := range []int{8, 9, 100, 1 << 16} {
			v := int32(uint32(1)<<(w-1) | 1)
			if w == 1 {
				v = 1
			}
			idx := make([]int32, n)
			for i := range idx {
				idx[i] = v
			}
			if got, want := appendRLERun([]byte{0xaa}, v, n, w), appendRLEIndices([]byte{0xaa}, idx, w); !bytes.Equal(got, want) {
				t.Errorf("%d × %d at width %d: % x, want % x", n, v, w, got, want)
			}
		}
	}
}

// TestDeltaHalves: a page split between two goroutines
// (appendDeltaHalves) is appendDelta's bytes, with its smallest and
// largest values, at both widths, signed and unsigned: random values of
// every magnitude (the extremes included, so the halves' ranges must be
// merged in the column's order), sizes around the split threshold and
// block boundaries, the spare buffer reused from page to page, and a page
// whose later half alone holds the extremes.
func TestDeltaHalves(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	top64, top32 := int64(unsignedTop[uint64]()), int32(unsignedTop[uint32]())
	var spare []byte
	for _, n := range []int{splitDeltaValues - 1, splitDeltaValues, splitDeltaValues + 1, splitDeltaValues + 128, 3*splitDeltaValues + 77, 64 << 10} {
		for _, bitsWide := range []uint{3, 17, 64} {
			v64 := make([]int64, n)
			v32 := make([]int32, n)
			for i := range v64 {
				v64[i] = int64(rng.Uint64() >> (64 - bitsWide))
				v32[i] = int32(rng.Uint32() >> (32 - min(bitsWide, 32)))
			}
			// The extremes in the later half only.
			v64[n-3], v64[n-2] = math.MaxInt64, math.MinInt64
			v32[n-3], v32[n-2] = math.MaxInt32, math.MinInt32
			for _, flip := range []int64{0, top64} {
				want, wlo, whi := appendDelta(nil, v64, flip)
				got, lo, hi := appendDeltaHalves([]byte{0xaa}, &spare, v64, flip)
				if !bytes.Equal(got[1:], want) || got[0] != 0xaa || lo != wlo || hi != whi {
					t.Fatalf("int64, %d values of %d bits, flip %#x: %d bytes, min %d max %d; want %d bytes, %d %d", n, bitsWide, flip, len(got)-1, lo, hi, len(want), wlo, whi)
				}
			}
			for _, flip := range []int32{0, top32} {
				want, wlo, whi := appendDelta(nil, v32, flip)
				got, lo, hi := appendDeltaHalves(nil, &spare, v32, flip)
				if !bytes.Equal(got, want) || lo != wlo || hi != whi {
					t.Fatalf("int32, %d values of %d bits, flip %#x: %d bytes, min %d max %d; want %d bytes, %d %d", n, bitsWide, flip, len(got), lo, hi, len(want), wlo, whi)
				}
			}
		}
	}
	if cap(spare) == 0 {
		t.Fatal("no page was split: the spare buffer was never used")
	}
}

// TestPackBitsEveryWidth checks pack32's generated packers (pack_gen.go)
// against a loop that packs one bit at a time, as the format specifies a
// miniblock: at every width from 1 to 64, for whole miniblocks and short
// last ones (whose missing values pack as 0), with values from 0 to the
// width's largest and a lo that the values are taken from.
func TestPackBitsEveryWidth(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	want := func(seg []int64, lo int64, w uint) []byte {
		out := make([]byte, 4*w)
		for k := range deltaMiniBlock {
			var u uint64
			if k < len(seg) {
				u = uint64(seg[k] - lo)
			}
			for bit := range w {
				if u>>bit&1 != 0 {
					pos := uint(k)*w + bit
					out[pos/8] |= 1 << (pos % 8)
				}
			}
		}
		return out
	}
	for w := uint(1); w <= 64; w++ {
		for _, n := range []int{32, 31, 17, 1} {
			for trial := range 4 {
				lo := int64(rng.Uint64())
				seg := make([]int64, n)
				for k := range seg {
					u := rng.Uint64()
					switch trial {
					case 1:
						u = ^uint64(0) // the width's largest
					case 2:
						u = 0
					}
					if w < 64 {
						u &= 1<<w - 1
					}
					seg[k] = lo + int64(u)
				}
				prefix := []byte{0xa5, 0x5a}
				got := pack32(slices.Clone(prefix), seg, lo, w)
				if !bytes.Equal(got[:2], prefix) || !bytes.Equal(got[2:], want(seg, lo, w)) {
					t.Fatalf("width %d, %d values, trial %d:\n got %x\nwant %x", w, n, trial, got[2:], want(seg, lo, w))
				}
			}
		}
	}
	if got := pack32([]byte{1}, []int64{5, 5}, 5, 0); !bytes.Equal(got, []byte{1}) {
		t.Fatalf("width 0: got %x, want nothing appended", got[1:])
	}
}

// TestDeltaRuns: appendDeltaRuns, which encodes the results' seq from its
// runs (encodeRuns), writes appendDelta's bytes and range for the rows the
// runs hold: warps of 32 rows, one row a run with one step (arithmetic) or
// random steps, one run, runs of random lengths whose steps are small,
// negative or wrap, runs longer than a block, stretches of one-row runs
// of one step, adjacent runs of one value, and a count of rows that ends
// mid-block and mid-miniblock.
func TestDeltaRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	flip := int64(unsignedTop[uint64]())
	type gen func(i int) (rows int, step uint64)
	for _, c := range []struct {
		name string
		n    int // runs
		g    gen
	}{
		{"warps", 300, func(int) (int, uint64) { return 32, 1 }},
		{"one row a run, one step", 1000, func(int) (int, uint64) { return 1, 3 }},
		{"one row a run, random steps", 1000, func(int) (int, uint64) { return 1, rng.Uint64N(100) }},
		{"one run", 1, func(int) (int, uint64) { return 5000, 0 }},
		{"random lengths", 2000, func(int) (int, uint64) { return 1 + rng.IntN(70), 1 + rng.Uint64N(1<<20) }},
		{"negative and wrapping steps", 2000, func(int) (int, uint64) {
			return 1 + rng.IntN(5), []uint64{1, ^uint64(0), 1 << 63, ^uint64(0) - 1<<40, 7}[rng.IntN(5)]
		}},
		// Blocks within one run, and blocks of one-row runs of one
		// step: a block's deltas all one value, its miniblocks no bytes.
		{"long runs", 40, func(int) (int, uint64) { return 129 + rng.IntN(400), 1 }},
		{"stretches of one step", 3000, func(i int) (int, uint64) {
			if i%700 == 0 {
				return 300, 5
			}
			return 1, 2
		}},
		{"equal adjacent runs", 500, func(i int) (int, uint64) { return 1 + rng.IntN(40), uint64(i % 2) }},
		{"mixed", 3000, func(int) (int, uint64) {
			if rng.IntN(4) == 0 {
				return 1, 1
			}
			return 16 + rng.IntN(17), 1 + rng.Uint64N(3)
		}},
	} {
		var runs []seqRun
		var vals []int64
		v := rng.Uint64()
		if c.name == "warps" {
			v = 0
		}
		for i := range c.n {
			rows, step := c.g(i)
			if i > 0 {
				v += step
			}
			runs = append(runs, seqRun{v: v, rows: rows})
			for range rows {
				vals = append(vals, int64(v))
			}
		}
		want, wlo, whi := appendDelta([]byte{0xee}, vals, flip)
		got, glo, ghi := appendDeltaRuns([]byte{0xee}, runs, len(vals), flip)
		if !bytes.Equal(got, want) || glo != wlo || ghi != whi {
			t.Errorf("%s: %d bytes, range [%d, %d]; appendDelta's %d bytes, [%d, %d]", c.name, len(got), glo, ghi, len(want), wlo, whi)
		}
	}
}
