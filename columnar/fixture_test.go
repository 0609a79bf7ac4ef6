package columnar

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// Statics used by the fixtures: one per dialect, with every kind of space.
var (
	sPTX = &trace.Static{Text: "atom.global.add.u32 %r1, [%rd1], 1", Dialect: trace.DialectPTX,
		Op: trace.OpAdd, Type: trace.TypeU32, Space: trace.Global}
	sSASS = &trace.Static{Text: "ATOM.E.CAS.128 P0, R4, [R2], R8, R12", Dialect: trace.DialectSASS,
		Op: trace.OpCAS, Type: trace.TypeB128, Space: trace.Global}
	sVISA = &trace.Static{Text: "dword_atomic_inc (8) T0 V10 V11 V0 V0 V12", Dialect: trace.DialectVISA,
		Op: trace.OpInc, Type: trace.TypeU32, Space: trace.Shared}
	sLSC = &trace.Static{Text: "lsc_atomic_fadd.ugm.bti(0x4) (M1, 16) V20:d32 flat[V21]:a32 V22 V0",
		Dialect: trace.DialectLSC, Op: trace.OpAdd, Type: trace.TypeF32,
		Space: trace.Space{Kind: trace.SpaceSurface, Surface: 4}}
	statics = []*trace.Static{sPTX, sSASS, sVISA, sLSC}
)

// fixture is a run's worth of sink input: n rows of each table, with
// values above 2^63, 128-bit results, every fault and every space.
type fixture struct {
	results []engine.Result
	insts   []engine.InstStat
	words   []engine.Word
	addrs   []engine.AddressStat
}

func newFixture(n int) fixture {
	var f fixture
	for i := range n {
		r := engine.Result{
			Seq:   uint64(i / 4),
			Lane:  uint32(i % 4),
			Elem:  uint32(i % 2),
			Addr:  1<<63 + uint64(i)*4,
			Value: math.MaxUint64 - uint64(i),
			Fault: engine.Fault(i % 5),
		}
		if i%3 == 0 {
			r.ValueHi = 0xdeadbeef_00000000 | uint64(i)
		}
		f.results = append(f.results, r)
		f.insts = append(f.insts, engine.InstStat{
			Seq:         uint64(i),
			Static:      statics[i%len(statics)],
			Group:       int64(i%3) - 1,
			Warp:        int64(i) * 7,
			Lanes:       uint32(32 - i%32),
			Addresses:   uint32(i % 17),
			MaxConflict: uint32(i%5 + 1),
			Faults:      uint32(i % 4),
			CASFailed:   uint32(i % 3),
			Sectors:     uint32(i % 7),
		})
		sp := []trace.Space{trace.Global, trace.Shared, sLSC.Space}[i*3/n]
		g := int64(-1)
		if sp == trace.Shared {
			g = int64(i % 2)
		}
		f.words = append(f.words, engine.Word{Space: sp, Group: g, Addr: uint64(i) * 4, Value: math.MaxUint32 - uint32(i)})
		f.addrs = append(f.addrs, engine.AddressStat{Space: sp, Group: g, Addr: 1<<63 + uint64(i)*8,
			Accesses: math.MaxUint64 - uint64(i), Warps: uint64(i % 9), Groups: uint64(i % 4),
			Exact: i%7 != 0, OrderSensitive: i%2 == 1})
	}
	return f
}

// feed hands the fixture to w in calls of at most chunk rows.
func (f fixture) feed(t testing.TB, w *Writer, chunk int) {
	t.Helper()
	for i := 0; i < len(f.results); i += chunk {
		j := min(i+chunk, len(f.results))
		if err := w.Results(f.results[i:j]); err != nil {
			t.Fatal(err)
		}
		if err := w.Instructions(f.insts[i:j]); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(f.words); i += chunk {
		if err := w.Memory(f.words[i:min(i+chunk, len(f.words))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Addresses(f.addrs); err != nil {
		t.Fatal(err)
	}
}

// want is the expected content of each table, computed from the inputs
// field by field (the ops totals by a separate, string-keyed oracle).
func (f fixture) want() map[string][][]any {
	m := map[string][][]any{"memory": {}, "results": {}, "instructions": {}, "ops": {}, "addresses": {}}
	for _, a := range f.addrs {
		m["addresses"] = append(m["addresses"], []any{a.Space.String(), a.Group, a.Addr, a.Accesses, a.Warps, a.Groups, a.OrderSensitive, a.Exact})
	}
	for _, r := range f.results {
		m["results"] = append(m["results"], []any{r.Seq, r.Lane, r.Elem, r.Addr, r.Value, r.ValueHi, r.Fault.String()})
	}
	type agg struct {
		n, lanes, faults, sum, sectors uint64
		max                            uint32
	}
	ops := map[string]*agg{}
	for _, s := range f.insts {
		st := s.Static
		m["instructions"] = append(m["instructions"], []any{s.Seq, st.Dialect.String(), st.Op.String(),
			st.Type.String(), st.Space.String(), s.Group, s.Warp, s.Lanes, s.Addresses, s.MaxConflict, s.Faults, st.Text, s.CASFailed, s.Sectors})
		k := strings.Join([]string{st.Dialect.String(), st.Op.String(), st.Type.String(), st.Space.String()}, "\x00")
		a := ops[k]
		if a == nil {
			a = &agg{}
			ops[k] = a
		}
		a.n++
		a.lanes += uint64(s.Lanes)
		a.faults += uint64(s.Faults)
		a.sum += uint64(s.MaxConflict)
		a.max = max(a.max, s.MaxConflict)
		a.sectors += uint64(s.Sectors)
	}
	keys := make([]string, 0, len(ops))
	for k := range ops {
		keys = append(keys, k)
	}
	slices.Sort(keys) // "\x00" sorts before every printable byte: same as field-by-field order
	for _, k := range keys {
		p, a := strings.Split(k, "\x00"), ops[k]
		m["ops"] = append(m["ops"], []any{p[0], p[1], p[2], p[3], a.n, a.lanes, a.faults, a.max, a.sum, a.sectors})
	}
	for _, w := range f.words {
		m["memory"] = append(m["memory"], []any{w.Space.String(), w.Group, w.Addr, w.Value})
	}
	return m
}

// wantFields is OUTPUT.md's schema for each table, written out by hand.
var wantFields = map[string]string{
	"memory":       "space:utf8 group:int64 addr:uint64 value:uint32",
	"results":      "seq:uint64 lane:uint32 elem:uint32 addr:uint64 value:uint64 value_hi:uint64 fault:utf8",
	"instructions": "seq:uint64 dialect:utf8 op:utf8 type:utf8 space:utf8 group:int64 warp:int64 lanes:uint32 addresses:uint32 max_conflict:uint32 faults:uint32 text:utf8 cas_failed:uint32 sectors:uint32",
	"ops":          "dialect:utf8 op:utf8 type:utf8 space:utf8 instructions:uint64 lanes:uint64 faults:uint64 max_conflict:uint32 conflict_sum:uint64 sectors:uint64",
	"addresses":    "space:utf8 group:int64 addr:uint64 accesses:uint64 warps:uint64 groups:uint64 order_sensitive:bool exact:bool",
}

func fieldsString(sc *arrow.Schema) string {
	var b []string
	for _, f := range sc.Fields() {
		s := f.Name + ":" + f.Type.String()
		if f.Nullable {
			s += "?"
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

// readBack is a table file as read by arrow-go.
type readBack struct {
	schema  *arrow.Schema
	rows    [][]any
	batches int // Parquet row groups or IPC record batches
}

func appendRows(t testing.TB, rows [][]any, rec arrow.RecordBatch) [][]any {
	t.Helper()
	for i := range int(rec.NumRows()) {
		row := make([]any, rec.NumCols())
		for j, c := range rec.Columns() {
			if c.IsNull(i) {
				t.Fatalf("column %s row %d is null", rec.ColumnName(j), i)
			}
			switch a := c.(type) {
			case *array.Uint64:
				row[j] = a.Value(i)
			case *array.Uint32:
				row[j] = a.Value(i)
			case *array.Int64:
				row[j] = a.Value(i)
			case *array.String:
				row[j] = a.Value(i)
			case *array.Boolean:
				row[j] = a.Value(i)
			default:
				t.Fatalf("column %s: unexpected array type %T", rec.ColumnName(j), c)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// readParquet reads a Parquet file and checks that each unsigned column
// carries an unsigned integer logical type (what makes DuckDB and pyarrow
// read UBIGINT/uint64 rather than a signed type).
func readParquet(t testing.TB, path string) readBack {
	t.Helper()
	// Not a CheckedAllocator, unlike readArrow: arrow-go's
	// DELTA_BINARY_PACKED decoder (v18.8.0) never returns its miniblock
	// widths buffer to the allocator (the Go allocator leaves it to the
	// garbage collector), which a CheckedAllocator reports as a leak of
	// the reader's, not the writer's.
	mem := memory.NewGoAllocator()
	rdr, err := file.OpenParquetFile(path, false, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	return readParquetFile(t, filepath.Base(path), rdr, mem)
}

// readParquetFile is readParquet of an open file, named name.
func readParquetFile(t testing.TB, name string, rdr *file.Reader, mem memory.Allocator) readBack {
	t.Helper()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	rb := readBack{schema: tbl.Schema(), batches: rdr.NumRowGroups()}
	for i, f := range tbl.Schema().Fields() {
		lt := rdr.MetaData().Schema.Column(i).LogicalType()
		var want schema.LogicalType
		switch f.Type.ID() {
		case arrow.UINT64:
			want = schema.NewIntLogicalType(64, false)
		case arrow.UINT32:
			want = schema.NewIntLogicalType(32, false)
		case arrow.INT64:
			want = schema.NewIntLogicalType(64, true)
		case arrow.STRING:
			want = schema.StringLogicalType{}
		}
		if want != nil && !lt.Equals(want) && !(f.Type.ID() == arrow.INT64 && lt.Equals(schema.NoLogicalType{})) {
			t.Errorf("%s: column %s has Parquet logical type %s, want %s", name, f.Name, lt, want)
		}
	}
	tr := array.NewTableReader(tbl, 1<<20)
	defer tr.Release()
	for tr.Next() {
		rb.rows = appendRows(t, rb.rows, tr.RecordBatch())
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	return rb
}

func readArrow(t testing.TB, path string) readBack {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rb := readBack{schema: r.Schema(), batches: r.NumRecords()}
	for i := range r.NumRecords() {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		rb.rows = appendRows(t, rb.rows, rec)
	}
	return rb
}

func readTable(t testing.TB, path string) readBack {
	t.Helper()
	if strings.HasSuffix(path, ".arrow") {
		return readArrow(t, path)
	}
	return readParquet(t, path)
}

// checkRows compares rows and reports the first difference.
func checkRows(t testing.TB, name string, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", name, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s: row %d = %v, want %v", name, i, fmtRow(got[i]), fmtRow(want[i]))
			return
		}
	}
}

func fmtRow(r []any) string {
	s := make([]string, len(r))
	for i, v := range r {
		s[i] = fmt.Sprintf("%T(%v)", v, v)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// writeFiles makes a writer of opts in a new directory, lets put give it
// its rows, commits, and returns the bytes of the files named.
func writeFiles(t testing.TB, opts []Option, put func(w *Writer), names ...string) [][]byte {
	t.Helper()
	dir := t.TempDir()
	w, err := New(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	put(w)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	files := make([][]byte, len(names))
	for i, name := range names {
		if files[i], err = os.ReadFile(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// dirNames lists dir, sorted; nil if dir does not exist.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
