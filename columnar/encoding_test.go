package columnar

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// chunkEncodings returns, per column name, the data encodings of the
// column chunks of row group rg (the dictionary page's PLAIN and the
// levels' RLE aside).
func chunkEncodings(t *testing.T, rdr *file.Reader, rg int) map[string]string {
	t.Helper()
	md := rdr.MetaData().RowGroup(rg)
	out := map[string]string{}
	for i := range md.NumColumns() {
		cc, err := md.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		var encs []string
		for _, e := range cc.Encodings() {
			if e == parquet.Encodings.Plain && cc.HasDictionaryPage() || e == parquet.Encodings.RLE {
				continue
			}
			encs = append(encs, e.String())
		}
		out[rdr.MetaData().Schema.Column(i).Name()] = strings.Join(encs, ",")
	}
	return out
}

// TestParquetEncodings: every column chunk has the encoding schema.go
// gives it, statistics, and zstd; the Arrow schema stored in the file is
// the plain one (utf8, no dictionaries), so Arrow-based readers (pyarrow,
// pandas, polars) read plain strings.
func TestParquetEncodings(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, WithBatchRows(16))
	if err != nil {
		t.Fatal(err)
	}
	newFixture(40).feed(t, w, 9)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	want := map[encoding]string{encPlain: "PLAIN", encDelta: "DELTA_BINARY_PACKED", encDict: "RLE_DICTIONARY"}
	for id, spec := range specs {
		if tableID(id) == tOrders || tableID(id) == tRaces {
			continue // not written by default: cmd/replay's -explore-orders test reads it
		}
		rdr, err := file.OpenParquetFile(filepath.Join(dir, spec.name+".parquet"), false)
		if err != nil {
			t.Fatal(err)
		}
		for rg := range rdr.NumRowGroups() {
			got := chunkEncodings(t, rdr, rg)
			for i, f := range spec.schema.Fields() {
				if got[f.Name] != want[spec.encs[i]] {
					t.Errorf("%s row group %d: column %s encoded %s, want %s", spec.name, rg, f.Name, got[f.Name], want[spec.encs[i]])
				}
				cc, _ := rdr.MetaData().RowGroup(rg).ColumnChunk(i)
				if cc.Compression().String() != "ZSTD" {
					t.Errorf("%s: column %s compressed with %s", spec.name, f.Name, cc.Compression())
				}
				if ok, err := cc.StatsSet(); !ok || err != nil {
					t.Errorf("%s: column %s has no statistics (%v)", spec.name, f.Name, err)
				}
			}
		}
		kv := rdr.MetaData().KeyValueMetadata()
		stored := kv.FindValue("ARROW:schema")
		if stored == nil {
			t.Fatalf("%s: no ARROW:schema", spec.name)
		}
		raw, err := base64.StdEncoding.DecodeString(*stored)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := flight.DeserializeSchema(raw, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		if !sc.Equal(spec.schema) {
			t.Errorf("%s: stored Arrow schema %s, want %s", spec.name, sc, spec.schema)
		}
		rdr.Close()
	}
}

// TestStringStatistics: a string column's statistics span its values,
// the empty string included (DuckDB prunes row groups by them).
func TestStringStatistics(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, WithTables("results"), WithBatchRows(4))
	if err != nil {
		t.Fatal(err)
	}
	rs := []engine.Result{
		{Seq: 0, Fault: engine.FaultOutOfRange}, {Seq: 1}, {Seq: 2, Fault: engine.FaultMisaligned}, {Seq: 3},
		{Seq: 4, Fault: engine.FaultOutOfBounds}, {Seq: 5, Fault: engine.FaultOutOfBounds},
	}
	if err := w.Results(rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	rdr, err := file.OpenParquetFile(filepath.Join(dir, "results.parquet"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	want := [][2]string{{"", "out_of_range"}, {"out_of_bounds", "out_of_bounds"}}
	for rg, mm := range want {
		cc, err := rdr.MetaData().RowGroup(rg).ColumnChunk(6)
		if err != nil {
			t.Fatal(err)
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasMinMax() {
			t.Fatalf("row group %d: fault statistics %v, %v", rg, st, err)
		}
		bs := st.(*metadata.ByteArrayStatistics)
		if got := [2]string{string(bs.Min()), string(bs.Max())}; got != mm {
			t.Errorf("row group %d: fault min/max %q, want %q", rg, got, mm)
		}
		if st.NumValues() != int64(min(4, len(rs)-4*rg)) {
			t.Errorf("row group %d: %d values", rg, st.NumValues())
		}
	}
	checkRows(t, "results", readParquet(t, filepath.Join(dir, "results.parquet")).rows, fixture{results: rs}.want()["results"])
}

// extremeFixture has the largest jumps between consecutive values that
// the DELTA_BINARY_PACKED columns can see (deltas that overflow 64 bits),
// and instruction texts too many and too long for one dictionary page,
// so that the instructions' text chunks are written PLAIN.
func extremeFixture(n int) fixture {
	f := newFixture(n)
	ext := []uint64{0, math.MaxUint64, 1 << 63, 1<<63 - 1, 0, 1, math.MaxUint64}
	for i := range f.results {
		f.results[i].Seq = ext[i%len(ext)]
		f.results[i].Addr = ext[(i+1)%len(ext)]
		f.results[i].Value = ext[(i+2)%len(ext)]
	}
	for i := range f.insts {
		s := &f.insts[i]
		s.Seq = ext[i%len(ext)]
		s.Warp = int64(ext[(i+3)%len(ext)])
		s.Addresses = uint32(ext[(i+1)%len(ext)])
		s.MaxConflict = uint32(ext[(i+2)%len(ext)])
		s.CASFailed = uint32(ext[(i+4)%len(ext)])
		st := *s.Static
		st.Text = fmt.Sprintf("%s // %d %s", st.Text, i, strings.Repeat("x", 1000))
		s.Static = &st
	}
	for i := range f.words {
		f.words[i].Addr = ext[i%len(ext)]
		f.words[i].Value = uint32(ext[(i+1)%len(ext)])
	}
	for i := range f.addrs {
		f.addrs[i].Addr = ext[i%len(ext)]
		f.addrs[i].Accesses = ext[(i+1)%len(ext)]
		f.addrs[i].Warps = ext[(i+2)%len(ext)]
		f.addrs[i].Groups = ext[(i+3)%len(ext)]
	}
	return f
}

func TestExtremes(t *testing.T) {
	const n, batch = 3000, 1500 // 1500 texts of 1 KB: past the 1 MiB dictionary page
	dir := t.TempDir()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	w, err := New(dir, WithBatchRows(batch), WithFormat(FormatBoth), WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	fx := extremeFixture(n)
	fx.feed(t, w, 700)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	want := fx.want()
	for _, name := range finalNames(TableNames(), FormatBoth) {
		table := name[:len(name)-len(filepath.Ext(name))]
		checkRows(t, name, readTable(t, filepath.Join(dir, name)).rows, want[table])
	}
	rdr, err := file.OpenParquetFile(filepath.Join(dir, "instructions.parquet"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if got := chunkEncodings(t, rdr, 0)["text"]; got != "PLAIN" {
		t.Errorf("text of %d distinct 1 KB strings encoded %s, want PLAIN", batch, got)
	}
}

// failingWriter fails its first write, optionally after a pause, and
// counts the calls.
type failingWriter struct {
	batchWriter
	pause time.Duration
	calls atomic.Int32
}

var errInjected = errors.New("injected write failure")

func (f *failingWriter) write(b *batch) error {
	f.calls.Add(1)
	time.Sleep(f.pause)
	return errInjected
}

// TestWriteFails: a batch that fails to be written on the table's
// goroutine fails the writer at a later call or at Commit, with that
// error, and leaves nothing behind (invariants 1 and 2).
func TestWriteFails(t *testing.T) {
	for _, at := range []string{"next call", "Commit"} {
		t.Run(at, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			w, err := New(dir, WithBatchRows(4), WithFormat(FormatBoth), WithAllocator(mem))
			if err != nil {
				t.Fatal(err)
			}
			o := w.tables[tResults].outs[1]
			fw := &failingWriter{batchWriter: o.w}
			o.w = fw
			fx := newFixture(40)
			if at == "Commit" {
				fw.pause = 50 * time.Millisecond
				if err := w.Results(fx.results[:5]); err != nil { // one batch handed over
					t.Fatalf("Results: %v", err)
				}
				err = w.Commit()
			} else {
				// One row at a time: every fourth call hands a batch over;
				// some call after the first write failed reports it.
				deadline := time.Now().Add(10 * time.Second)
				for i := 0; err == nil && time.Now().Before(deadline); i++ {
					if i > 100 {
						time.Sleep(time.Millisecond)
					}
					err = w.Results(fx.results[i%40 : i%40+1])
				}
			}
			if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "results.arrow") {
				t.Fatalf("err = %v, want the injected error naming results.arrow", err)
			}
			if fw.calls.Load() != 1 {
				t.Errorf("%d writes after the failure, want none", fw.calls.Load()-1)
			}
			mem.AssertSize(t, 0)
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("after the failure the directory holds %v", got)
			}
			if err := w.Results(fx.results); !errors.Is(err, ErrClosed) {
				t.Errorf("Results after failure: err = %v, want ErrClosed", err)
			}
			if err := w.Abort(); err != nil {
				t.Errorf("Abort after failure: %v", err)
			}
		})
	}
}

// TestAbortInFlight: Abort while batches wait to be written drops them,
// waits for the one being written, and leaves nothing behind.
func TestAbortInFlight(t *testing.T) {
	dir := t.TempDir()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	w, err := New(dir, WithBatchRows(2), WithTables("results", "instructions"), WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	o := w.tables[tResults].outs[0]
	slow := &slowWriter{batchWriter: o.w}
	o.w = slow
	fx := newFixture(8)
	if err := w.Results(fx.results); err != nil { // 4 batches: one written, one queued, two waiting for a free batch
		t.Fatal(err)
	}
	if err := w.Instructions(fx.insts); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("after Abort the directory holds %v", got)
	}
	if n := slow.calls.Load(); n >= 4 {
		t.Errorf("%d of 4 batches written after Abort", n)
	}
}

type slowWriter struct {
	batchWriter
	calls atomic.Int32
}

func (s *slowWriter) write(b *batch) error {
	s.calls.Add(1)
	time.Sleep(150 * time.Millisecond) // long beside Instructions and Abort, even under -race
	return s.batchWriter.write(b)
}

// TestStaticsMemo: instructions whose *trace.Static is new, reused, or
// another pointer with the same strings get the same rows as the strings
// say, across batches and past the memo's limit.
func TestStaticsMemo(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, WithBatchRows(1000), WithTables("instructions", "ops"))
	if err != nil {
		t.Fatal(err)
	}
	var in []engine.InstStat
	for i := range maxStatics + 100 {
		var s *trace.Static
		switch i % 3 {
		case 0:
			s = statics[i%len(statics)]
		case 1:
			c := *statics[i%len(statics)]
			s = &c
		default:
			s = &trace.Static{Text: fmt.Sprint("t", i%7), Dialect: trace.DialectVISA, Op: trace.OpInc, Type: trace.TypeU32, Space: trace.Space{Kind: trace.SpaceSurface, Surface: uint32(i % 5)}}
		}
		in = append(in, engine.InstStat{Seq: uint64(i), Static: s, Lanes: uint32(i % 33), MaxConflict: uint32(i % 4), Faults: uint32(i % 2)})
	}
	for i := 0; i < len(in); i += 1000 {
		if err := w.Instructions(in[i:min(i+1000, len(in))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	want := fixture{insts: in}.want()
	checkRows(t, "instructions", readParquet(t, filepath.Join(dir, "instructions.parquet")).rows, want["instructions"])
	checkRows(t, "ops", readParquet(t, filepath.Join(dir, "ops.parquet")).rows, want["ops"])
}

// TestParallelColumnsSameFile: a table whose batches have their columns
// encoded on two goroutines (encodeParallel, batches of parallelRows rows
// or more) is byte for byte the file the serial write makes, for a table
// with string, PLAIN and DELTA columns (results) and one with keyed
// strings (instructions); and the parallel path did run.
func TestParallelColumnsSameFile(t *testing.T) {
	rs := benchResults(1 << 16)
	st := benchInstructions(1 << 15)
	write := func(serial bool) (results, insts []byte) {
		fs := writeFiles(t, []Option{WithTables("results", "instructions")}, func(w *Writer) {
			for _, tb := range w.tables {
				if tb == nil {
					continue // not selected
				}
				for _, o := range tb.outs {
					if pw, ok := o.w.(*parquetWriter); ok {
						if len(pw.shared) < 2 {
							t.Fatalf("%s: no columns are shared between goroutines", o.final)
						}
						if serial {
							pw.shared = nil
						}
					}
				}
			}
			if err := w.Results(rs); err != nil {
				t.Fatal(err)
			}
			if err := w.Instructions(st); err != nil {
				t.Fatal(err)
			}
		}, "results.parquet", "instructions.parquet")
		return fs[0], fs[1]
	}
	r1, i1 := write(false)
	r2, i2 := write(true)
	if !bytes.Equal(r1, r2) {
		t.Errorf("results: the parallel write's file (%d bytes) differs from the serial one's (%d)", len(r1), len(r2))
	}
	if !bytes.Equal(i1, i2) {
		t.Errorf("instructions: the parallel write's file (%d bytes) differs from the serial one's (%d)", len(i1), len(i2))
	}
}

// TestOneInstruction: an instructions table of one instruction, a hot
// counter's (the keyed string columns one RLE run a page, without a row's
// index made; seq and warp one step throughout, DELTA's shortcut for
// them), reads back row for row, its string columns' statistics that
// instruction's strings, through batches of 1000 rows, one of them of 5
// (bit-packed, the general path), and one of a second instruction after.
func TestOneInstruction(t *testing.T) {
	f := newFixture(0)
	for i := range 3005 {
		s := sPTX
		if i >= 3000 {
			s = sSASS
		}
		f.insts = append(f.insts, engine.InstStat{Seq: uint64(i), Static: s, Group: int64(i / 8), Warp: int64(i),
			Lanes: 32, Addresses: 1, MaxConflict: 32})
	}
	dir := t.TempDir()
	w, err := New(dir, WithTables("instructions"), WithBatchRows(1000))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(f.insts); i += 999 {
		if err := w.Instructions(f.insts[i:min(i+999, len(f.insts))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "instructions.parquet")
	checkRows(t, "instructions", readParquet(t, path).rows, f.want()["instructions"])
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if n := rdr.NumRowGroups(); n != 4 {
		t.Fatalf("%d row groups, want 4", n)
	}
	for rg := range 4 {
		s := sPTX
		if rg == 3 {
			s = sSASS
		}
		for col, want := range map[int]string{1: s.Dialect.String(), 2: s.Op.String(), 11: s.Text} {
			cc, err := rdr.MetaData().RowGroup(rg).ColumnChunk(col)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cc.Statistics()
			if err != nil || st == nil || !st.HasMinMax() {
				t.Fatalf("row group %d, column %d: statistics %v, %v", rg, col, st, err)
			}
			bs := st.(*metadata.ByteArrayStatistics)
			if got := [2]string{string(bs.Min()), string(bs.Max())}; got != [2]string{want, want} {
				t.Errorf("row group %d, column %d: min/max %q, want %q twice", rg, col, got, want)
			}
		}
	}
}
