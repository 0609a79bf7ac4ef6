package columnar

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/gpureplay/replay/internal/duckdbq"
	"github.com/gpureplay/replay/internal/testenv"
)

// TestStoredFrame: appendStoredFrame's frames decode to their content, in
// klauspost's decoder (arrow-go's) and in the zstd command (libzstd,
// DuckDB's and pyarrow's), at every size where the header or the blocks
// change shape, with the content size declared; and frames appended back
// to back after other bytes stay apart.
func TestStoredFrame(t *testing.T) {
	sizes := []int{0, 1, 255, 256, 257, 256 + 1<<16 - 1, 256 + 1<<16, maxRawBlock - 1, maxRawBlock, maxRawBlock + 1, 3*maxRawBlock + 7, 600_000}
	rng := rand.New(rand.NewPCG(1, 2))
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var all, frames []byte
	for _, n := range sizes {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		f := appendStoredFrame([]byte("prefix"), src)
		if !bytes.Equal(f[:6], []byte("prefix")) {
			t.Fatalf("size %d: the bytes before the frame changed", n)
		}
		f = f[6:]
		if got := binary.LittleEndian.Uint32(f); got != zstdMagic {
			t.Fatalf("size %d: magic %#x", n, got)
		}
		blocks := max(1, (n+maxRawBlock-1)/maxRawBlock)
		fcs := 4 // the content size's bytes
		switch {
		case n < 256:
			fcs = 1
		case n < 256+1<<16:
			fcs = 2
		}
		if want := 4 + 1 + fcs + 3*blocks + n; len(f) != want {
			t.Errorf("size %d: frame of %d bytes, want %d (%d blocks)", n, len(f), want, blocks)
		}
		var h zstd.Header
		if err := h.Decode(f); err != nil {
			t.Fatalf("size %d: header: %v", n, err)
		}
		if !h.SingleSegment || !h.HasFCS || h.FrameContentSize != uint64(n) {
			t.Errorf("size %d: header single segment %v, content size %v %d", n, h.SingleSegment, h.HasFCS, h.FrameContentSize)
		}
		got, err := dec.DecodeAll(f, nil)
		if err != nil {
			t.Fatalf("size %d: %v", n, err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("size %d: decoded %d bytes that differ from the %d stored", n, len(got), n)
		}
		all = append(all, src...)
		frames = append(frames, f...)
	}
	// Concatenated frames decode to the concatenated contents.
	got, err := dec.DecodeAll(frames, nil)
	if err != nil || !bytes.Equal(got, all) {
		t.Fatalf("the frames back to back: %d bytes, %v; want the %d bytes", len(got), err, len(all))
	}
	testenv.LookPath(t, "zstd", "apt-get install zstd")
	path := filepath.Join(t.TempDir(), "frames.zst")
	if err := os.WriteFile(path, frames, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("zstd", "-d", "-c", "-q", path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zstd -d: %v: %s", err, stderr.Bytes())
	}
	if !bytes.Equal(out, all) {
		t.Fatalf("zstd -d gave %d bytes that differ from the %d stored", len(out), len(all))
	}
}

// TestIncompressiblePagesStored: addPage compresses a page, and when
// that saves less than a sixteenth stores the next storedPages pages as
// raw frames before it tries again; a column that compresses is never
// stored; every page decodes to its bytes. Then a whole memory table of
// random values reads back the same rows.
func TestIncompressiblePagesStored(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, WithTables("memory"))
	if err != nil {
		t.Fatal(err)
	}
	pw := w.tables[tMemory].outs[0].w.(*parquetWriter)
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, random := range []bool{true, false} {
		ch := &colChunk{}
		var pages [][]byte
		for k := range 40 {
			raw := make([]byte, 40_000)
			for i := range raw {
				if random {
					raw[i] = byte(rng.Uint32())
				} else {
					raw[i] = byte(i / 100)
				}
			}
			pages = append(pages, raw)
			pw.addPage(ch, raw, len(raw)/4, 0, pqStats{})
			want := 0
			if random {
				want = storedPages - k%(storedPages+1) // 15 after pages 0, 16, 32
			}
			if ch.stored != want {
				t.Fatalf("random %v, page %d: %d pages left to store, want %d", random, k, ch.stored, want)
			}
			if random && k%(storedPages+1) != 0 && !bytes.HasSuffix(ch.out, appendStoredFrame(nil, raw)) {
				t.Fatalf("page %d of random bytes was not stored raw", k)
			}
		}
		if !random && len(ch.out) > 40_000 {
			t.Errorf("40 compressible pages took %d bytes", len(ch.out))
		}
		from := 0
		for k, pg := range ch.pages {
			got, err := dec.DecodeAll(ch.out[from:pg.end], nil)
			if err != nil || !bytes.Equal(got, pages[k]) {
				t.Fatalf("random %v, page %d: decoded %d bytes (%v), want its %d", random, k, len(got), err, len(pages[k]))
			}
			from = pg.end
		}
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}

	ws := benchMemory(3 << 16)
	for i := range ws {
		ws[i].Value = rng.Uint32()
	}
	dir = t.TempDir()
	writeTable(t, dir, "memory", ws, 1<<16, (*Writer).Memory)
	path := filepath.Join(dir, "memory.parquet")
	checkRows(t, "memory", readParquet(t, path).rows, fixture{words: ws}.want()["memory"])

	// And DuckDB (libzstd) reads the stored pages: the values' sum and
	// XOR, and the XOR of each row's address with its value shifted up.
	duckdbq.Require(t)
	var sum, xor, dot uint64
	for _, w := range ws {
		sum += uint64(w.Value)
		xor ^= uint64(w.Value)
		dot ^= w.Addr ^ uint64(w.Value)<<32
	}
	r, err := duckdbq.Query(fmt.Sprintf("SELECT count(*), sum(value)::UBIGINT, bit_xor(value::UBIGINT), bit_xor(xor(addr, value::UBIGINT << 32)) FROM read_parquet(%s)",
		duckdbq.QuoteString(path)))
	if err != nil {
		t.Fatal(err)
	}
	got := strRows(r.Rows)
	want := [][]string{{fmt.Sprint(len(ws)), fmt.Sprint(sum), fmt.Sprint(xor), fmt.Sprint(dot)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DuckDB: count, sum, xor, xor of addr^value<<32 = %q, want %q", got, want)
	}
}

// TestPageEncoders: one page compressed at once per two cores, at least
// one and at most four.
func TestPageEncoders(t *testing.T) {
	for _, tc := range []struct{ procs, want int }{{1, 1}, {2, 1}, {3, 1}, {4, 2}, {7, 3}, {8, 4}, {64, 4}} {
		if got := pageEncoders(tc.procs); got != tc.want {
			t.Errorf("pageEncoders(%d) = %d, want %d", tc.procs, got, tc.want)
		}
	}
}

// TestSmallPagesStored: a short replay's pages, all at most
// storedPageBytes, are stored as raw zstd blocks, so that its tables never
// make the page encoder's state; with every page compressed
// (withStoredPageBytes(0)) the same tables hold compressed blocks, which
// shows that the check below sees them.
func TestSmallPagesStored(t *testing.T) {
	// blockTypes counts the block types of the first block of every zstd
	// frame in file: 0 raw, 1 RLE, 2 compressed.
	blockTypes := func(file string) [4]int {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var n [4]int
		magic := binary.LittleEndian.AppendUint32(nil, zstdMagic)
		for i := bytes.Index(b, magic); i >= 0; {
			fhd := b[i+4]
			hdr := 5 // magic and descriptor
			if fhd&0x20 == 0 {
				hdr++ // a window descriptor
			}
			hdr += [4]int{0, 1, 2, 4}[fhd&3]                                     // dictionary id
			hdr += [4]int{map[bool]int{true: 1}[fhd&0x20 != 0], 2, 4, 8}[fhd>>6] // content size
			n[b[i+hdr]>>1&3]++
			j := bytes.Index(b[i+4:], magic)
			if j < 0 {
				break
			}
			i += 4 + j
		}
		return n
	}
	f := newFixture(40)
	for _, stored := range []bool{true, false} {
		dir := t.TempDir()
		opts := []Option{WithTables("instructions")}
		if !stored {
			opts = append(opts, withStoredPageBytes(0))
		}
		w, err := New(dir, opts...)
		if err != nil {
			t.Fatal(err)
		}
		f.feed(t, w, 40)
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		n := blockTypes(filepath.Join(dir, "instructions.parquet"))
		if stored && (n[1] != 0 || n[2] != 0 || n[0] == 0) {
			t.Errorf("small pages: %d raw, %d RLE, %d compressed blocks; want only raw", n[0], n[1], n[2])
		}
		if !stored && n[1]+n[2] == 0 {
			t.Errorf("every page compressed: %d raw, %d RLE, %d compressed blocks; want some not raw", n[0], n[1], n[2])
		}
		rows, err := ParquetRows(filepath.Join(dir, "instructions.parquet"))
		if err != nil || rows != 40 {
			t.Errorf("stored=%v: %d rows (%v), want 40", stored, rows, err)
		}
	}
}

// TestSampledPages: a page of sampledPageBytes or more is first tried on
// its middle sampleBytes. Random bytes are stored raw without the whole
// page compressed (and the next storedPages pages with it); a page that
// compresses is compressed whole, to EncodeAll's bytes; a page whose
// middle is random is stored even where its ends would compress: the
// sample decides.
func TestSampledPages(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, WithTables("results"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	pw := w.tables[tResults].outs[0].w.(*parquetWriter)
	rng := rand.New(rand.NewPCG(7, 8))
	page := func(random func(i int) bool) []byte {
		raw := make([]byte, sampledPageBytes+4096)
		for i := range raw {
			raw[i] = byte(i / 64)
			if random(i) {
				raw[i] = byte(rng.Uint32())
			}
		}
		return raw
	}
	mid := (sampledPageBytes + 4096 - sampleBytes) / 2
	for _, c := range []struct {
		name   string
		random func(i int) bool
		stored bool
	}{
		{"random", func(int) bool { return true }, true},
		{"compressible", func(int) bool { return false }, false},
		// Random in its sample only: the rest, three quarters of it,
		// would have made the whole page worth compressing.
		{"random middle", func(i int) bool { return i >= mid && i < mid+sampleBytes }, true},
		// Random but for its sample.
		{"compressible middle", func(i int) bool { return i < mid || i >= mid+sampleBytes }, false},
	} {
		raw := page(c.random)
		ch := &colChunk{}
		pw.addPage(ch, raw, len(raw)/4, 0, pqStats{})
		if c.stored {
			if !bytes.Equal(ch.out, appendStoredFrame(nil, raw)) || ch.stored != storedPages || ch.again {
				t.Errorf("%s: not stored raw (%d bytes out of %d, %d pages left to store)", c.name, len(ch.out), len(raw), ch.stored)
			}
			continue
		}
		z := pw.pages.EncodeAll(raw, nil)
		if !bytes.Equal(ch.out, z) {
			t.Errorf("%s: %d bytes out, want EncodeAll's %d", c.name, len(ch.out), len(z))
		}
		if want := !worthCompressing(raw, z); (ch.stored == storedPages) != want || ch.again == want {
			t.Errorf("%s: %d pages left to store, again %v; the page compressed from %d to %d bytes", c.name, ch.stored, ch.again, len(raw), len(z))
		}
	}
}

// TestRepeatedPagesSameBytes: a PLAIN column whose page repeats the page
// before it (the lanes of full warps) has the earlier page's compressed
// bytes and statistics added again (repeatPage), without a pass or zstd,
// and the column chunk is byte for byte what compressing each page gives;
// a page that differs, and the page after it, go through addPage again.
func TestRepeatedPagesSameBytes(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, WithTables("results"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	pw := w.tables[tResults].outs[0].w.(*parquetWriter)
	per := dataPage / 4
	lanes := make([]uint32, 6*per+100) // 6 whole pages and a short one
	for i := range lanes {
		lanes[i] = uint32(i % 32)
	}
	lanes[3*per+5] = 7 // page 3 differs; page 4 is then not page 3 again
	var got colChunk
	encodeInts(pw, &got, lanes, false)

	var want colChunk
	for from := 0; from < len(lanes); from += per {
		pg := lanes[from:min(from+per, len(lanes))]
		raw := make([]byte, 0, 4*len(pg))
		for _, v := range pg {
			raw = binary.LittleEndian.AppendUint32(raw, v)
		}
		lo, hi := minMax(pg)
		pw.addPage(&want, raw, len(pg), pqPlain, intStats(pw, &want, lo, hi))
	}
	if !bytes.Equal(got.out, want.out) || !reflect.DeepEqual(got.pages, want.pages) {
		t.Fatalf("the column chunk differs from its pages compressed one by one: %d bytes in %d pages, want %d in %d", len(got.out), len(got.pages), len(want.out), len(want.pages))
	}
	// Pages 1 and 2 repeat page 0, page 5 repeats page 4; page 3 differs
	// and page 6 is short.
	if got.repeated != 3 {
		t.Errorf("%d pages repeated, want 3", got.repeated)
	}
}
