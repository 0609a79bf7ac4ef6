package columnar

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// scanAll reads every column of a Parquet file with ScanParquet, as rows.
func scanAll(t testing.TB, path string) (names []string, rows [][]any, groups int) {
	t.Helper()
	p, err := openParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := p.schema()
	p.close()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	err = ScanParquet(path, names, func(cs []arrow.Array) error {
		groups++
		rec := array.NewRecordBatch(sc, cs, int64(cs[0].Len()))
		rows = appendRows(t, rows, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names, rows, groups
}

// TestScanParquet reads the fixture's tables back with the package's
// reader: the same types as arrow-go's reader gives (the stored Arrow
// schema's), the rows the fixture wrote, a row group at a time; and the
// golden files, written by arrow-go's page writer at e361db0, the same
// as arrow-go reads them, a dictionary page compressed among them.
func TestScanParquet(t *testing.T) {
	f := newFixture(2500)
	dir := t.TempDir()
	w, err := New(dir, WithBatchRows(1000))
	if err != nil {
		t.Fatal(err)
	}
	f.feed(t, w, 700)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	want := f.want()
	for _, table := range TableNames() {
		path := filepath.Join(dir, table+extParquet)
		names, got, groups := scanAll(t, path)
		rb := readParquet(t, path)
		if g := fieldsString(rb.schema); strings.Join(names, " ") == "" || g != wantFields[table] {
			t.Errorf("%s: arrow-go reads %s, want %s", table, g, wantFields[table])
		}
		p, err := openParquet(path)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := p.schema()
		p.close()
		if err != nil {
			t.Fatal(err)
		}
		if g := fieldsString(sc); g != wantFields[table] {
			t.Errorf("%s: ScanParquet reads %s, want %s", table, g, wantFields[table])
		}
		checkRows(t, table, got, want[table])
		if wantGroups := (len(want[table]) + 999) / 1000; groups != wantGroups {
			t.Errorf("%s: %d row groups, want %d", table, groups, wantGroups)
		}
		if n, err := ParquetRows(path); err != nil || n != int64(len(want[table])) {
			t.Errorf("%s: ParquetRows %d, %v; want %d", table, n, err, len(want[table]))
		}
	}
	golden, err := filepath.Glob(filepath.Join("testdata", "golden", "*", "*.parquet"))
	if err != nil || len(golden) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range golden {
		_, got, _ := scanAll(t, path)
		checkRows(t, path, got, readParquet(t, path).rows)
	}
}

// TestScanParquetErrors checks what the reader says of files it cannot
// read: which file, and what is wrong.
func TestScanParquetErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join("testdata", "golden", "fixture", "ops.parquet")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noop := func([]arrow.Array) error { return nil }
	for _, tc := range []struct {
		name, path string
		cols       []string
		want       string
	}{
		{"not parquet", write("text.parquet", []byte("atom.global.add.u32 d, [a], 1; | a=0x1000\n")), []string{"op"}, "not a Parquet file"},
		{"cut short", write("cut.parquet", b[:len(b)/2]), []string{"op"}, "not a Parquet file"},
		{"no such column", good, []string{"op", "latency"}, `no column "latency" (is it a replay's table?)`},
		{"footer too long", write("long.parquet", append(binary.LittleEndian.AppendUint32(slices.Clone(b[:len(b)-8]), 1<<30), "PAR1"...)), []string{"op"}, "footer of 1073741824 bytes"},
	} {
		err := ScanParquet(tc.path, tc.cols, noop)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: %v; want an error naming %s and saying %q", tc.name, err, tc.path, tc.want)
		}
	}
	// What a footer claims is checked before it is allocated.
	p, err := openParquet(good)
	if err != nil {
		t.Fatal(err)
	}
	p.limits.rows = 3
	err = p.scan([]string{"op"}, noop)
	p.close()
	if err == nil || !strings.Contains(err.Error(), "a row group of 4 rows: replay writes at most 3") {
		t.Errorf("a row group past the limit: %v", err)
	}
	// A chunk whose offset and size overflow when added is outside the
	// file, read alone or in a row group's span.
	for _, span := range []bool{false, true} {
		p, err := openParquet(good)
		if err != nil {
			t.Fatal(err)
		}
		k := p.column("op")
		c := &p.rgs[0].chunks[k]
		c.dataOffset, c.dictOffset, c.size = 1<<62, 0, 1<<62
		if span {
			all, _ := p.columns(nil)
			if err := p.readSpan(0, all); err != nil {
				t.Errorf("readSpan: %v", err)
			}
		}
		_, err = p.readColumn(0, k)
		p.close()
		if err == nil || !strings.Contains(err.Error(), "outside the file's") {
			t.Errorf("a chunk at 1<<62 of 1<<62 bytes (span %v): %v", span, err)
		}
	}
	fnErr := errors.New("the report's own error")
	if err := ScanParquet(good, []string{"op"}, func([]arrow.Array) error { return fnErr }); !errors.Is(err, fnErr) || !strings.Contains(err.Error(), good) {
		t.Errorf("fn's error came back as %v", err)
	}
}

// TestScanParquetCorrupt flips every byte of a small table file in turn,
// and cuts it at every length: the reader returns an error or rows,
// never panics.
func TestScanParquetCorrupt(t *testing.T) {
	for _, name := range []string{"fixture/ops.parquet", "distinct/orders.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", name))
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i := range b {
			c := slices.Clone(b)
			c[i] ^= 0xff
			if scanBytes(c) != nil {
				bad++
			}
			scanBytes(b[:i])
		}
		if bad < len(b)/4 {
			t.Errorf("%s: only %d of %d flipped bytes made an error", name, bad, len(b))
		}
	}
}

// scanBytes reads every column of the Parquet file b.
func scanBytes(b []byte) error {
	p, err := newPQFile("f.parquet", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	defer p.close()
	p.limits = readLimits{rows: 1 << 16, pageBytes: 1 << 20, stringBytes: 1 << 24}
	var cols []string
	for _, l := range p.leaves {
		cols = append(cols, l.name)
	}
	return p.scan(cols, func([]arrow.Array) error { return nil })
}

// FuzzParquetReader reads arbitrary bytes as a table file: an error or
// rows, never a panic or a runaway allocation.
func FuzzParquetReader(f *testing.F) {
	golden, _ := filepath.Glob(filepath.Join("testdata", "golden", "*", "*.parquet"))
	for _, p := range golden {
		if b, err := os.ReadFile(p); err == nil && len(b) < 5000 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		scanBytes(b)
	})
}

// TestUnpackDeltas: a miniblock's values, for every bit width and length
// (its last values within the miniblock's last 8 bytes too), are the
// running sum of the minimum delta and unpackBits' deltas, truncated to
// the column's width.
func TestUnpackDeltas(t *testing.T) {
	var mb [8 * 64]byte
	for i := range mb {
		mb[i] = byte(i*131 + i>>3*7 + 1)
	}
	for bw := range 65 {
		for _, n := range []int{1, 7, 8, 9, 31, 32, 64} {
			b := mb[:(n*bw+7)/8] // cut after the last value, as a page's last miniblock may be
			const first, minDelta = 0x1234_5678_9abc_def0, 0xffff_ffff_ffff_fffd
			want := make([]uint64, n)
			v := uint64(first)
			for j := range want {
				v += minDelta + unpackBits(b, uint64(j*bw), bw)
				want[j] = v
			}
			got64 := make([]uint64, n)
			if last := unpackDeltas(b, byte(bw), first, minDelta, got64); last != want[n-1] || !slices.Equal(got64, want) {
				t.Fatalf("bw %d, %d values: 64-bit %x (last %x), want %x", bw, n, got64, last, want)
			}
			got32 := make([]uint32, n)
			unpackDeltas(b, byte(bw), first, minDelta, got32)
			for j := range want {
				if got32[j] != uint32(want[j]) {
					t.Fatalf("bw %d, %d values: 32-bit value %d %x, want %x", bw, n, j, got32[j], uint32(want[j]))
				}
			}
			// Followed by another miniblock's bytes, which must not count.
			more := append(slices.Clone(b), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
			if last := unpackDeltas(more, byte(bw), first, minDelta, got64); last != want[n-1] || !slices.Equal(got64, want) {
				t.Fatalf("bw %d, %d values, 8 bytes after: 64-bit %x (last %x), want %x", bw, n, got64, last, want)
			}
		}
	}
}

// longPacked is n values below 9, bit-packed, but for a 9 at bad.
func longPacked(n, bad int) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i * 5 % 9)
	}
	idx[bad] = 9
	return idx
}

// TestHybridFill: fill reads what next reads, an RLE run at a time,
// whatever the pieces it is asked for; a value not below the limit, in a
// run or bit-packed, or values that end early, are an error.
func TestHybridFill(t *testing.T) {
	var idx []int32
	for i := range 2000 {
		switch {
		case i%300 < 100: // RLE runs of 8 or more
			idx = append(idx, int32(i/37%5))
		default: // bit-packed
			idx = append(idx, int32(i*7%13))
		}
	}
	const bw = 4
	enc := appendRLEIndices(nil, idx, bw)
	if enc[0] != bw {
		t.Fatalf("bit width %d", enc[0])
	}
	for _, piece := range []int{1, 3, 8, 9, 100, len(idx)} {
		h := hybridReader{b: enc[1:], bw: bw}
		got := make([]int32, len(idx))
		for k := 0; k < len(got); k += piece {
			if !h.fill(got[k:min(k+piece, len(got))], 13) {
				t.Fatalf("pieces of %d: fill failed at %d", piece, k)
			}
		}
		if !slices.Equal(got, idx) {
			t.Fatalf("pieces of %d: %v, want %v", piece, got, idx)
		}
	}
	for _, tc := range []struct {
		name  string
		idx   []int32
		n     int
		limit uint64
	}{
		{"RLE run past the limit", []int32{9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, 10, 9},
		{"RLE run past the limit, later", []int32{1, 1, 1, 1, 1, 1, 1, 1, 9, 9, 9, 9, 9, 9, 9, 9}, 16, 9},
		{"packed value past the limit", []int32{1, 2, 3, 9, 1, 2, 3, 4}, 8, 9},
		{"values end first", []int32{1, 1, 1, 1, 1, 1, 1, 1}, 9, 9},
		// Read 8 bytes at a time (packedRun), not one value at a time.
		{"packed value past the limit, in a long run", longPacked(64, 20), 64, 9},
		{"packed value past the limit, first of a long run", longPacked(64, 0), 64, 9},
	} {
		enc := appendRLEIndices(nil, tc.idx, bw)
		h := hybridReader{b: enc[1:], bw: bw}
		if h.fill(make([]int32, tc.n), tc.limit) {
			t.Errorf("%s: fill succeeded", tc.name)
		}
	}
}

// TestFillInt32: an RLE run's key fills every element of its slice, for
// short runs (a loop), long ones of 0 (clear) and of another key
// (doubling copies), of lengths at and off powers of two, and none past.
func TestFillInt32(t *testing.T) {
	for _, v := range []int32{0, 7, -1} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 64, 100, 1000, 4096, 4097} {
			buf := make([]int32, n+2)
			for i := range buf {
				buf[i] = 42
			}
			fillInt32(buf[1:n+1], v)
			if buf[0] != 42 || buf[n+1] != 42 {
				t.Fatalf("v %d, n %d: wrote outside the slice: %d %d", v, n, buf[0], buf[n+1])
			}
			for i, x := range buf[1 : n+1] {
				if x != v {
					t.Fatalf("v %d, n %d: element %d is %d", v, n, i, x)
				}
			}
		}
	}
}
