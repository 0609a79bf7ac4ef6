package columnar

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

func finalNames(tables []string, f Format) []string {
	var names []string
	for _, t := range tables {
		if f&FormatArrow != 0 {
			names = append(names, t+".arrow")
		}
		if f&FormatParquet != 0 {
			names = append(names, t+".parquet")
		}
	}
	slices.Sort(names)
	return names
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		batch  int // 0: default
		rows   int
		chunk  int // rows per Sink call
		tables []string
	}{
		{"parquet/several-batches", FormatParquet, 7, 50, 9, nil},
		{"arrow/several-batches", FormatArrow, 7, 50, 9, nil},
		{"both/several-batches", FormatBoth, 16, 100, 100, nil},
		{"parquet/one-row-batches", FormatParquet, 1, 10, 3, nil},
		{"both/default-batch", FormatBoth, 0, 300, 64, nil},
		{"parquet/exact-multiple", FormatParquet, 10, 40, 10, nil},
		{"both/empty", FormatBoth, 0, 0, 1, nil},
		{"parquet/subset", FormatParquet, 8, 30, 5, []string{"results", "ops"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out", "nested") // New creates it
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			opts := []Option{WithFormat(tc.format), WithAllocator(mem)}
			batch := DefaultBatchRows
			if tc.batch > 0 {
				batch = tc.batch
				opts = append(opts, WithBatchRows(tc.batch))
			}
			tables := TableNames()
			if tc.tables != nil {
				tables = tc.tables
				opts = append(opts, WithTables(tc.tables...))
			}
			w, err := New(dir, opts...)
			if err != nil {
				t.Fatal(err)
			}
			fx := newFixture(tc.rows)
			fx.feed(t, w, tc.chunk)
			// While the writer is open it holds the directory's lock file.
			if got := slices.DeleteFunc(dirNames(t, dir), func(n string) bool { return n == lockName }); len(got) != len(finalNames(tables, tc.format)) || slices.ContainsFunc(got, func(n string) bool { return n[0] != '.' }) {
				t.Errorf("before Commit the directory holds %v, want only one temporary file per table file and the lock file", got)
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			mem.AssertSize(t, 0)
			if got, want := dirNames(t, dir), finalNames(tables, tc.format); !reflect.DeepEqual(got, want) {
				t.Fatalf("directory holds %v, want %v", got, want)
			}
			want := fx.want()
			for _, name := range finalNames(tables, tc.format) {
				table := name[:len(name)-len(filepath.Ext(name))]
				rb := readTable(t, filepath.Join(dir, name))
				if got := fieldsString(rb.schema); got != wantFields[table] {
					t.Errorf("%s: schema\n got  %s\n want %s", name, got, wantFields[table])
				}
				checkRows(t, name, rb.rows, want[table])
				if n := len(want[table]); n > 0 {
					if wantBatches := (n + batch - 1) / batch; rb.batches != wantBatches {
						t.Errorf("%s: %d batches, want %d (%d rows, %d per batch)", name, rb.batches, wantBatches, n, batch)
					}
				}
			}
		})
	}
}

// TestOps checks the ops aggregation against totals worked out by hand.
func TestOps(t *testing.T) {
	bti4 := trace.Space{Kind: trace.SpaceSurface, Surface: 4}
	bti16 := trace.Space{Kind: trace.SpaceSurface, Surface: 16}
	st := func(d trace.Dialect, op trace.Op, ty trace.Type, sp trace.Space) *trace.Static {
		return &trace.Static{Text: "x", Dialect: d, Op: op, Type: ty, Space: sp}
	}
	a := st(trace.DialectPTX, trace.OpAdd, trace.TypeU32, trace.Global)
	a2 := st(trace.DialectPTX, trace.OpAdd, trace.TypeU32, trace.Global) // same key, other Static
	b := st(trace.DialectPTX, trace.OpAdd, trace.TypeU32, trace.Shared)
	c := st(trace.DialectLSC, trace.OpInc, trace.TypeU32, bti4)
	d := st(trace.DialectLSC, trace.OpInc, trace.TypeU32, bti16)
	e := st(trace.DialectPTX, trace.OpCAS, trace.TypeB128, trace.Global)
	in := []engine.InstStat{
		{Seq: 0, Static: a, Lanes: 32, MaxConflict: 32, Faults: 0, Sectors: 1},
		{Seq: 1, Static: c, Lanes: 16, MaxConflict: 1, Faults: 16, Sectors: 2},
		{Seq: 2, Static: a2, Lanes: 5, MaxConflict: 2, Faults: 1, Sectors: 3},
		{Seq: 3, Static: b, Lanes: 1, MaxConflict: 1, Sectors: 1},
		{Seq: 4, Static: d, Lanes: 8, MaxConflict: 8, Faults: 3, Sectors: 1},
		{Seq: 5, Static: e, Lanes: 32, MaxConflict: 4, Sectors: 16},
		{Seq: 6, Static: a, Lanes: 7, MaxConflict: 7, Faults: 2, Sectors: 1},
	}
	want := [][]any{
		// dialect, op, type, space, instructions, lanes, faults, max_conflict, conflict_sum, sectors
		{"lsc", "inc", "u32", "bti(0x10)", uint64(1), uint64(8), uint64(3), uint32(8), uint64(8), uint64(1)},
		{"lsc", "inc", "u32", "bti(0x4)", uint64(1), uint64(16), uint64(16), uint32(1), uint64(1), uint64(2)},
		{"ptx", "add", "u32", "global", uint64(3), uint64(44), uint64(3), uint32(32), uint64(41), uint64(5)},
		{"ptx", "add", "u32", "shared", uint64(1), uint64(1), uint64(0), uint32(1), uint64(1), uint64(1)},
		{"ptx", "cas", "b128", "global", uint64(1), uint64(32), uint64(0), uint32(4), uint64(4), uint64(16)},
	}
	for _, tables := range [][]string{nil, {"ops"}} { // with and without the instructions table
		dir := t.TempDir()
		opts := []Option{WithBatchRows(2)}
		if tables != nil {
			opts = append(opts, WithTables(tables...))
		}
		w, err := New(dir, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range in {
			if err := w.Instructions(in[i : i+1]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		rb := readParquet(t, filepath.Join(dir, "ops.parquet"))
		checkRows(t, "ops", rb.rows, want)
		if rb.batches != 3 {
			t.Errorf("ops: %d row groups, want 3", rb.batches)
		}
	}
}

func TestAbort(t *testing.T) {
	for _, f := range []Format{FormatParquet, FormatArrow, FormatBoth} {
		t.Run(f.String(), func(t *testing.T) {
			dir := t.TempDir()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			w, err := New(dir, WithFormat(f), WithBatchRows(5), WithAllocator(mem))
			if err != nil {
				t.Fatal(err)
			}
			newFixture(23).feed(t, w, 4)
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			mem.AssertSize(t, 0)
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("after Abort the directory holds %v", got)
			}
			fx := newFixture(1)
			for name, call := range map[string]func() error{
				"Results":      func() error { return w.Results(fx.results) },
				"Instructions": func() error { return w.Instructions(fx.insts) },
				"Memory":       func() error { return w.Memory(fx.words) },
				"Commit":       w.Commit,
			} {
				if err := call(); !errors.Is(err, ErrClosed) {
					t.Errorf("%s after Abort: err = %v, want ErrClosed", name, err)
				}
			}
			if err := w.Abort(); err != nil {
				t.Errorf("second Abort: %v", err)
			}
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("the directory holds %v", got)
			}
		})
	}
}

// TestAbortRemovesDirsItMade (issue 46 item 2): a writer that does not
// commit removes the directories New made (the output directory and its
// missing parents), whether it aborts or fails; a directory that was there
// before stays, with its files, and so does one that holds a file the
// writer did not make. A writer that commits keeps them.
func TestAbortRemovesDirsItMade(t *testing.T) {
	fx := newFixture(9)
	for _, tc := range []struct {
		name  string
		end   func(w *Writer) error // Abort, or a failure
		stays []string              // relative to the root, besides "pre"
	}{
		{"abort", (*Writer).Abort, nil},
		{"failure", func(w *Writer) error {
			if err := w.Instructions([]engine.InstStat{{Seq: 3}}); err == nil {
				return errors.New("a nil Static did not fail the writer")
			}
			return nil
		}, nil},
		{"commit", (*Writer).Commit, []string{"pre/a", "pre/a/b", "pre/a/b/out", "pre/a/b/out/memory.parquet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "pre"), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "pre", "notes"), []byte("mine"), 0o666); err != nil {
				t.Fatal(err)
			}
			w, err := New(filepath.Join(root, "pre", "a", "b", "out"), WithTables("memory"))
			if err != nil {
				t.Fatal(err)
			}
			fx.feed(t, w, 2)
			if err := tc.end(w); err != nil {
				t.Fatal(err)
			}
			var got []string
			err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if r, _ := filepath.Rel(root, p); r != "." && r != "pre" && r != filepath.Join("pre", "notes") {
					got = append(got, filepath.ToSlash(r))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.stays) {
				t.Errorf("after %s the tree holds %v, want %v", tc.name, got, tc.stays)
			}
			if b, err := os.ReadFile(filepath.Join(root, "pre", "notes")); err != nil || string(b) != "mine" {
				t.Errorf("pre/notes: %q, %v", b, err)
			}
		})
	}
	// A directory New made that holds another's file stays.
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "theirs"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"theirs"}) {
		t.Errorf("out holds %v after Abort, want [theirs]", got)
	}
}

func TestCommitTwice(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Commit: err = %v, want ErrClosed", err)
	}
	if err := w.Abort(); !errors.Is(err, ErrClosed) {
		t.Errorf("Abort after Commit: err = %v, want ErrClosed", err)
	}
	if got, want := dirNames(t, dir), finalNames(TableNames(), FormatParquet); !reflect.DeepEqual(got, want) {
		t.Errorf("directory holds %v, want %v", got, want)
	}
}

// TestEarlierRun: Abort leaves an earlier run's files byte for byte;
// Commit replaces them.
func TestEarlierRun(t *testing.T) {
	dir := t.TempDir()
	run := func(n int, commit bool) {
		t.Helper()
		w, err := New(dir, WithFormat(FormatBoth), WithBatchRows(4))
		if err != nil {
			t.Fatal(err)
		}
		newFixture(n).feed(t, w, 3)
		if commit {
			err = w.Commit()
		} else {
			err = w.Abort()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	snapshot := func() map[string][]byte {
		m := map[string][]byte{}
		for _, n := range dirNames(t, dir) {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			m[n] = b
		}
		return m
	}
	run(10, true)
	first := snapshot()
	run(20, false)
	if got := snapshot(); !reflect.DeepEqual(got, first) {
		t.Errorf("Abort changed the earlier run's files")
	}
	run(30, true)
	after := snapshot()
	if len(after) != len(first) {
		t.Fatalf("directory holds %d files, want %d", len(after), len(first))
	}
	for name := range after {
		if bytes.Equal(after[name], first[name]) {
			t.Errorf("%s was not replaced", name)
		}
	}
	rb := readTable(t, filepath.Join(dir, "results.arrow"))
	checkRows(t, "results.arrow", rb.rows, newFixture(30).want()["results"])
}

// TestFailure: a failure at any point leaves neither a temporary nor a
// final file of the writer, and the writer stays failed.
func TestFailure(t *testing.T) {
	fx := newFixture(20)
	tests := []struct {
		name string
		// run does something that makes the writer fail and returns the
		// directory to check afterwards and the error.
		run func(t *testing.T, dir string, w *Writer) error
	}{
		{"unknown fault", func(t *testing.T, dir string, w *Writer) error {
			return w.Results([]engine.Result{{Seq: 1}, {Seq: 2, Fault: engine.FaultOutOfBounds + 1}})
		}},
		{"nil Static", func(t *testing.T, dir string, w *Writer) error {
			return w.Instructions([]engine.InstStat{{Seq: 3}})
		}},
		{"dir removed", func(t *testing.T, dir string, w *Writer) error {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			return w.Commit()
		}},
		{"dir replaced", func(t *testing.T, dir string, w *Writer) error {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			return w.Commit()
		}},
		{"directory in the way", func(t *testing.T, dir string, w *Writer) error {
			// A directory is in the way of instructions.parquet:
			// Commit refuses before it renames anything. (Renames
			// failing part-way: TestRenameFailsPartWay.)
			if err := os.MkdirAll(filepath.Join(dir, "instructions.parquet", "x"), 0o777); err != nil {
				t.Fatal(err)
			}
			return w.Commit()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			w, err := New(dir, WithBatchRows(6), WithAllocator(mem))
			if err != nil {
				t.Fatal(err)
			}
			fx.feed(t, w, 7)
			if err := tc.run(t, dir, w); err == nil {
				t.Fatal("no error")
			} else {
				t.Logf("error: %v", err)
			}
			mem.AssertSize(t, 0)
			for _, n := range dirNames(t, dir) {
				if n != "instructions.parquet" { // the obstacle of "directory in the way"
					t.Errorf("after the failure the directory holds %s", n)
				}
			}
			if err := w.Results(fx.results); !errors.Is(err, ErrClosed) {
				t.Errorf("Results after failure: err = %v, want ErrClosed", err)
			}
			if err := w.Commit(); !errors.Is(err, ErrClosed) {
				t.Errorf("Commit after failure: err = %v, want ErrClosed", err)
			}
			if err := w.Abort(); err != nil {
				t.Errorf("Abort after failure: %v", err)
			}
		})
	}
}

func TestNewFails(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := New(filepath.Join(notDir, "sub")); err == nil {
		t.Error("New under a regular file: no error")
	}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, []string{"file"}) {
		t.Errorf("directory holds %v", got)
	}
}

func TestOptions(t *testing.T) {
	for _, s := range []string{"parquet", "arrow", "both"} {
		f, err := ParseFormat(s)
		if err != nil || f.String() != s {
			t.Errorf("ParseFormat(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("csv"); err == nil {
		t.Error("ParseFormat(csv): no error")
	}
	bad := map[string]Option{
		"batch 0":         WithBatchRows(0),
		"batch -1":        WithBatchRows(-1),
		"batch too large": WithBatchRows(MaxBatchRows + 1),
		"format 0":        WithFormat(0),
		"format 4":        WithFormat(4),
		"unknown table":   WithTables("results", "bogus"),
		"no tables":       WithTables(),
		"nil allocator":   WithAllocator(nil),
	}
	for name, opt := range bad {
		dir := filepath.Join(t.TempDir(), "out")
		if w, err := New(dir, opt); err == nil {
			t.Errorf("%s: no error", name)
			w.Abort()
		} else if !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s: err = %v, want ErrInvalidOption", name, err)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s: New created the directory despite the error", name)
		}
	}
	for _, n := range []int{1, MaxBatchRows} {
		w, err := New(t.TempDir(), WithBatchRows(n))
		if err != nil {
			t.Errorf("WithBatchRows(%d): %v", n, err)
			continue
		}
		w.Abort()
	}
}

// TestMemoryBounded: the memory held does not grow with the number of
// rows once the first batches are written. How many batches a table's
// pipeline holds at a moment depends on how fast its goroutine writes
// them (at most maxBatches), so the baseline is the peak over the first
// 25 batches of each table, not at one moment: measured at the 6th, a
// loaded machine (CI's tests under -race, in parallel) once saw a third
// batch in flight only later, 1.6× the baseline, with nothing growing.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	const batch, chunk = 1000, 500
	w, err := New(t.TempDir(), WithFormat(FormatBoth), WithBatchRows(batch), WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	fx := newFixture(chunk)
	var warm, peak int
	for i := range 200 { // 100k rows per table, 100 batches
		if err := w.Results(fx.results); err != nil {
			t.Fatal(err)
		}
		if err := w.Instructions(fx.insts); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, mem.CurrentAlloc())
		if i == 49 { // 25k rows a table: 25 batches
			warm = peak
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	t.Logf("peak Arrow memory: %d bytes over the first 25k rows, %d over 100k", warm, peak)
	if peak > warm*3/2 {
		t.Errorf("Arrow memory grew from %d to %d bytes", warm, peak)
	}
}

// TestLargeWritesDirect: a write of directWrite bytes or more goes to the
// file at once, after the bytes buffered before it, rather than through
// the buffer; smaller writes stay buffered; the file holds every byte in
// order.
func TestLargeWritesDirect(t *testing.T) {
	dir := t.TempDir()
	o, err := openOutput(dir, &specs[tOps], FormatParquet, memory.DefaultAllocator, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.discard()
	w := bufWriter{o}
	size := func() int64 {
		fi, err := o.f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	onFile := size()
	start := onFile + int64(o.bw.Buffered()) // the format's own first bytes
	var want []byte
	put := func(n int, b byte) {
		p := bytes.Repeat([]byte{b}, n)
		if k, err := w.Write(p); k != n || err != nil {
			t.Fatalf("Write of %d bytes: %d, %v", n, k, err)
		}
		want = append(want, p...)
	}
	put(100, 1)
	if got := size(); got != onFile {
		t.Fatalf("a write of 100 bytes reached the file: %d bytes, want %d", got, onFile)
	}
	put(directWrite, 2)
	if got := size(); got < start+100+directWrite {
		t.Fatalf("a write of %d bytes did not reach the file at once: %d bytes, want %d", directWrite, got, start+100+directWrite)
	}
	put(200<<10, 3) // larger than the first buffer and within the large one
	put(10, 4)
	if err := o.bw.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(o.tmp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(got, want) || int64(len(got)) != start+int64(len(want)) {
		t.Fatalf("the file has %d bytes, not the %d written after its first %d", len(got), len(want), start)
	}
}
