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
