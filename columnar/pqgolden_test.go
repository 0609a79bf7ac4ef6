package columnar

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

var updateGolden = flag.Bool("update", false, "rewrite the Parquet files under testdata/golden")

// goldenTables writes the golden runs into dirs under root: "fixture", the
// fixture's five tables in batches of 1000 rows (several row groups, every
// column type, statistics above 2^63, key-value metadata), and
// "distinct", 600 instructions of distinct texts (a dictionary page above
// storedDictBytes, compressed) and an orders table.
func goldenTables(t *testing.T, root string) {
	t.Helper()
	f := newFixture(2500)
	run := func(name string, put func(w *Writer), opts ...Option) {
		w, err := New(filepath.Join(root, name), append(opts, WithMetadata(map[string]string{MetaTrace: "golden.zst", MetaPartition: "0/1"}))...)
		if err != nil {
			t.Fatal(err)
		}
		put(w)
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	run("fixture", func(w *Writer) { f.feed(t, w, 700) }, WithBatchRows(1000))
	run("distinct", func(w *Writer) {
		var insts []engine.InstStat
		for i := range 600 {
			s := &trace.Static{Text: fmt.Sprintf("ATOM.E.ADD.U32 R0, [R2 + 0x%x], R4", 4*i), Dialect: trace.DialectSASS,
				Op: trace.OpAdd, Type: trace.TypeU32, Space: trace.Global}
			insts = append(insts, engine.InstStat{Seq: uint64(i), Static: s, Lanes: 32, Addresses: 32, MaxConflict: 1})
		}
		if err := w.Instructions(insts); err != nil {
			t.Fatal(err)
		}
		if err := w.Orders([]engine.OrderWitness{
			{Space: trace.Global, Group: -1, Addr: 0x1000, Order: "lane", Value: 7},
			{Space: trace.Global, Group: -1, Addr: 0x1000, Order: "random:1", Value: 9},
		}); err != nil {
			t.Fatal(err)
		}
	}, WithTables("instructions", "ops", "orders"))
}

// TestParquetGolden checks that the writer writes the Parquet files,
// byte for byte, that replay wrote at e361db0, whose page headers and
// footers arrow-go's page writer and metadata builders wrote: the
// golden files are that version's, but for the instructions and ops
// tables, rewritten when they gained cas_failed and sectors (TestScanParquet reads every
// golden file with arrow-go's reader too). go test -update rewrites them,
// from the writer under test.
func TestParquetGolden(t *testing.T) {
	root := t.TempDir()
	goldenTables(t, root)
	golden := filepath.Join("testdata", "golden")
	n := 0
	for _, run := range []string{"fixture", "distinct"} {
		names, err := filepath.Glob(filepath.Join(root, run, "*.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range names {
			n++
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			gp := filepath.Join(golden, run, filepath.Base(path))
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(gp), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(gp, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(gp)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				k := 0
				for k < min(len(got), len(want)) && got[k] == want[k] {
					k++
				}
				t.Errorf("%s/%s: %d bytes, the golden file %d; they differ from byte %d", run, filepath.Base(path), len(got), len(want), k)
			}
		}
	}
	if n != 8 {
		t.Errorf("%d Parquet files written, want 8 (5 tables, then instructions, ops and orders)", n)
	}
}
