package columnar

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// TestMemoryPage writes the memory table a page at a time
// (engine.PageSink) and reads it back: every set bit of every page a row
// (space, group, base + 4·word, the word's value), in order, across batch
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
