package columnar

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// TestMemoryPage writes the memory table a page at a time
// (engine.CapMemoryPages) and reads it back: every set bit of every page a
// row (space, group, base + 4·word, the word's value), in order, across batch
// boundaries that fall inside pages, with a page's first and last words,
// an empty bitmap word between set ones, and a new space or group from
// one page to the next.
func TestMemoryPage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type page struct {
		sp      trace.Space
		group   int64
		base    uint64
		written [shard.PageWords / 64]uint64
		words   [shard.PageWords]uint32
	}
	var pages []*page
	add := func(sp trace.Space, g int64, base uint64, fill func(p *page)) {
		p := &page{sp: sp, group: g, base: base}
		for i := range p.words {
			p.words[i] = rng.Uint32()
		}
		fill(p)
		pages = append(pages, p)
	}
	full := func(p *page) {
		for i := range p.written {
			p.written[i] = ^uint64(0)
		}
	}
	ends := func(p *page) { p.written[0], p.written[len(p.written)-1] = 1, 1<<63 }
	sparse := func(p *page) {
		for i := range p.written {
			if i%3 == 1 {
				p.written[i] = rng.Uint64() & rng.Uint64() & rng.Uint64()
			}
		}
		p.written[5] |= 1 << 17
	}
	add(trace.Global, -1, 0, full)
	add(trace.Global, -1, 1<<40, ends)
	add(trace.Global, -1, 1<<63, sparse)
	add(trace.Shared, 0, 4096, sparse)
	add(trace.Shared, 7, 4096, full)
	add(trace.Space{Kind: trace.SpaceSurface, Surface: 4}, -1, 8192, ends)
	var want [][]any
	for _, p := range pages {
		for i := range p.words {
			if p.written[i/64]&(1<<(i%64)) != 0 {
				want = append(want, []any{p.sp.String(), p.group, p.base + uint64(i)*4, p.words[i]})
			}
		}
	}
	for _, tc := range []struct {
		name   string
		format Format
		batch  int
	}{
		{"parquet/batch-1000", FormatParquet, 1000},
		{"arrow/batch-7", FormatArrow, 7},
		{"parquet/default-batch", FormatParquet, DefaultBatchRows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := New(dir, WithFormat(tc.format), WithBatchRows(tc.batch), WithTables("memory"))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pages {
				wp := engine.WordPage{Space: p.sp, Group: p.group, Base: p.base, Written: &p.written, Words: &p.words}
				if err := w.MemoryPage(&wp); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			name := "memory.parquet"
			if tc.format == FormatArrow {
				name = "memory.arrow"
			}
			rb := readTable(t, filepath.Join(dir, name))
			if got := fieldsString(rb.schema); got != wantFields["memory"] {
				t.Errorf("schema %s, want %s", got, wantFields["memory"])
			}
			checkRows(t, name, rb.rows, want)
		})
	}
}

// TestMemoryPageSameBytes: the memory table written a page at a time,
// whose space and group columns stay constant (batch.putConst) while
// pages share them, is byte for byte the table written a row at a time
// (Writer.Memory, every row stored), in Parquet and Arrow: with one space
// and group throughout, with a new group or space part-way through a
// batch, with batches under 8 rows, and with batches over a page.
func TestMemoryPageSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type page struct {
		wp      engine.WordPage
		written [shard.PageWords / 64]uint64
		words   [shard.PageWords]uint32
	}
	mk := func(sp trace.Space, g int64, base uint64, density uint) *page {
		p := &page{}
		for i := range p.words {
			p.words[i] = rng.Uint32() >> (rng.Uint32N(32))
		}
		for i := range p.written {
			p.written[i] = rng.Uint64()
			for range density {
				p.written[i] &= rng.Uint64()
			}
		}
		p.written[3] |= 1
		p.wp = engine.WordPage{Space: sp, Group: g, Base: base, Written: &p.written, Words: &p.words}
		return p
	}
	oneSpace := func() []*page {
		var ps []*page
		for i := range 80 {
			ps = append(ps, mk(trace.Global, -1, uint64(i)<<12, 0))
		}
		return ps
	}
	mixed := func() []*page {
		var ps []*page
		for i := range 30 {
			ps = append(ps, mk(trace.Global, -1, uint64(i)<<12, 2))
		}
		for g := range int64(20) {
			ps = append(ps, mk(trace.Shared, g, 0, 3))
		}
		ps = append(ps, mk(trace.Space{Kind: trace.SpaceSurface, Surface: 2}, -1, 4096, 1))
		return ps
	}
	for _, tc := range []struct {
		name  string
		pages []*page
		batch int
	}{
		{"one-space", oneSpace(), DefaultBatchRows},
		{"one-space/batches-over-a-page", oneSpace(), 3 * maxPageRows / 2},
		{"mixed", mixed(), 5000},
		{"mixed/batches-of-5", mixed()[:3], 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ws []engine.Word
			for _, p := range tc.pages {
				for i := range p.words {
					if p.written[i/64]&(1<<(i%64)) != 0 {
						ws = append(ws, engine.Word{Space: p.wp.Space, Group: p.wp.Group, Addr: p.wp.Base + uint64(i)*4, Value: p.words[i]})
					}
				}
			}
			write := func(byPage bool) (pq, ipc []byte) {
				fs := writeFiles(t, []Option{WithFormat(FormatParquet | FormatArrow), WithBatchRows(tc.batch), WithTables("memory")}, func(w *Writer) {
					if byPage {
						for _, p := range tc.pages {
							if err := w.MemoryPage(&p.wp); err != nil {
								t.Fatal(err)
							}
						}
					} else if err := w.Memory(ws); err != nil {
						t.Fatal(err)
					}
				}, "memory.parquet", "memory.arrow")
				return fs[0], fs[1]
			}
			pq1, ipc1 := write(true)
			pq2, ipc2 := write(false)
			if !bytes.Equal(pq1, pq2) {
				t.Errorf("memory.parquet: %d bytes by page, %d by row, not the same bytes", len(pq1), len(pq2))
			}
			if !bytes.Equal(ipc1, ipc2) {
				t.Errorf("memory.arrow: %d bytes by page, %d by row, not the same bytes", len(ipc1), len(ipc2))
			}
		})
	}
}

// TestMemoryPageThenWords: rows by page (space and group constant,
// batch.putConst) and then by Word in one batch read back as given.
func TestMemoryPageThenWords(t *testing.T) {
	var written [shard.PageWords / 64]uint64
	var words [shard.PageWords]uint32
	written[0], words[1], words[5] = 0b100010, 11, 55
	dir := t.TempDir()
	w, err := New(dir, WithTables("memory"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.MemoryPage(&engine.WordPage{Space: trace.Global, Group: -1, Base: 0x1000, Written: &written, Words: &words}); err != nil {
		t.Fatal(err)
	}
	if err := w.Memory([]engine.Word{{Space: trace.Shared, Group: 3, Addr: 0x40, Value: 7}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, "memory", readTable(t, filepath.Join(dir, "memory.parquet")).rows, [][]any{
		{"global", int64(-1), uint64(0x1004), uint32(11)},
		{"global", int64(-1), uint64(0x1014), uint32(55)},
		{"shared", int64(3), uint64(0x40), uint32(7)},
	})
}
