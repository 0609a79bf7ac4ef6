package examples_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/examples"
	"github.com/gpureplay/replay/internal/duckdbq"
	"github.com/gpureplay/replay/trace"
)

// TestContentionQueries runs examples/contention.sql against the demo's
// tables with DuckDB and checks what each query answers.
func TestContentionQueries(t *testing.T) {
	duckdbq.Require(t)
	dir := filepath.ToSlash(filepath.Join(t.TempDir(), "demo.tables"))
	src, err := trace.NewTextReader(bytes.NewReader(examples.SimpleAtomicIntrinsics()), "demo")
	if err != nil {
		t.Fatal(err)
	}
	sink, err := columnar.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Replay(t.Context(), src, sink); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile("contention.sql")
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, q := range strings.Split(string(text), ";") {
		var lines []string
		for _, l := range strings.Split(q, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "--") {
				lines = append(lines, l)
			}
		}
		if q := strings.TrimSpace(strings.Join(lines, "\n")); q != "" {
			queries = append(queries, strings.ReplaceAll(q, "'demo.tables/", "'"+dir+"/"))
		}
	}
	if len(queries) != 5 {
		t.Fatalf("%d queries in contention.sql, want 5", len(queries))
	}
	rs, err := duckdbq.QueryBatch(queries)
	if err != nil {
		t.Fatal(err)
	}
	first := func(i int) string { return fmt.Sprint(rs[i].Rows[0]) }
	// Every demo word takes all 16384 threads' accesses, from 512 warps
	// (an estimate past a few warps: within two standard errors, 352 to
	// 672; engine/sketch.go).
	hot := rs[0].Rows[0]
	if got := fmt.Sprint(hot[:4]); got != "[global -1 0x10000 16384]" || len(rs[0].Rows) != 5 {
		t.Errorf("hottest address: %v", hot)
	}
	if w := fmt.Sprint(hot[4]); len(w) != 3 || w < "352" || w > "672" {
		t.Errorf("hottest address: %s warps, about 512", w)
	}
	// Eleven kinds (atomicSub is add.u32 beside atomicAdd's add.s32), each
	// 512 warp instructions of 32 lanes all on one word.
	if len(rs[1].Rows) != 11 || first(1) != "[ptx add s32 512 16384 32 32]" || len(rs[2].Rows) != 0 {
		t.Errorf("%d op rows (want 11), first %s; %d fault rows (want 0)", len(rs[1].Rows), first(1), len(rs[2].Rows))
	}
	if got := fmt.Sprint(rs[3].Rows); got != "[[0 0x10000 0] [1 0x10000 10] [2 0x10000 20] [3 0x10000 30]]" {
		t.Errorf("first atomicAdd: %s", got)
	}
	if len(rs[4].Rows) != 11 {
		t.Errorf("%d memory rows, want 11", len(rs[4].Rows))
	}
}
