package columnar

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// TestTraceTablesEndFirst: the first memory rows end the trace's tables
// (endTrace). Their last batches are written and their files finished,
// footer and all, before Commit, under their temporary names; their
// batches' memory goes back to the allocator; the tables read back whole
// after Commit, the memory table too. A trace table's rows after the
// memory table's fail the writer, name the order, and leave no file.
func TestTraceTablesEndFirst(t *testing.T) {
	st := benchInstructions(3000) // two batches of 2048 rows: one full, one not
	ws := benchMemory(5000)
	t.Run("commit", func(t *testing.T) {
		dir := t.TempDir()
		w, err := New(dir, WithBatchRows(2048), WithTables("instructions", "ops", "memory"))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Instructions(st); err != nil {
			t.Fatal(err)
		}
		if w.traceEnded != nil {
			t.Fatal("the trace's tables ended before any memory row")
		}
		if err := w.Memory(ws[:1000]); err != nil {
			t.Fatal(err)
		}
		if err := w.waitTrace(); err != nil {
			t.Fatal(err)
		}
		for _, id := range traceTables[1:] { // instructions, ops
			tb := w.tables[id]
			if tb.b != nil {
				t.Errorf("%s: still holds a batch to fill", tb.spec.name)
			}
			if len(tb.free) != 0 {
				t.Errorf("%s: %d written batches not given back to the allocator", tb.spec.name, len(tb.free))
			}
			for _, o := range tb.outs {
				fi, err := os.Stat(o.tmp)
				if !o.done || err != nil || fi.Size() == 0 {
					t.Errorf("%s: not finished before Commit (done %v, %v)", filepath.Base(o.final), o.done, err)
				}
			}
		}
		if err := w.Memory(ws[1000:]); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		insts := readTable(t, filepath.Join(dir, "instructions.parquet"))
		if len(insts.rows) != len(st) || insts.batches != 2 {
			t.Errorf("instructions: %d rows in %d row groups, want %d in 2", len(insts.rows), insts.batches, len(st))
		}
		for i, r := range insts.rows {
			if r[0] != st[i].Seq {
				t.Fatalf("instructions row %d: seq %v, want %d", i, r[0], st[i].Seq)
			}
		}
		if ops := readTable(t, filepath.Join(dir, "ops.parquet")); len(ops.rows) == 0 {
			t.Error("ops: no rows")
		}
		mem := readTable(t, filepath.Join(dir, "memory.parquet"))
		if len(mem.rows) != len(ws) || mem.rows[len(ws)-1][2] != ws[len(ws)-1].Addr {
			t.Errorf("memory: %d rows, want %d, the last at %#x", len(mem.rows), len(ws), ws[len(ws)-1].Addr)
		}
	})
	t.Run("rows-after", func(t *testing.T) {
		dir := t.TempDir()
		w, err := New(dir, WithTables("instructions", "memory"))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Instructions(st[:10]); err != nil {
			t.Fatal(err)
		}
		if err := w.Memory([]engine.Word{{Space: trace.Global, Group: -1, Addr: 64, Value: 1}}); err != nil {
			t.Fatal(err)
		}
		err = w.Instructions(st[10:20])
		if err == nil || !strings.Contains(err.Error(), "instructions rows after the addresses or memory table") {
			t.Fatalf("Instructions after Memory: %v, want the order named", err)
		}
		if err := w.Commit(); err == nil {
			t.Fatal("Commit after the failure succeeded")
		}
		if names := dirNames(t, dir); len(names) != 0 {
			t.Errorf("the directory holds %v after the failure, want nothing", names)
		}
	})
}

// TestWriterAnyOrder checks that a writer that takes its tables' rows in
// any order (a merge's: Writer.anyOrder) writes, from the trace's rows
// and the memory and addresses rows interleaved, the files of the same
// rows given in the engine.Sink order, byte for byte, and ends the trace
// at Commit, not at the first memory rows.
func TestWriterAnyOrder(t *testing.T) {
	f := newFixture(3000)
	opts := []Option{WithBatchRows(512), WithTables("instructions", "ops", "memory", "addresses")}
	names := []string{"instructions.parquet", "ops.parquet", "memory.parquet", "addresses.parquet"}
	want := writeFiles(t, opts, func(w *Writer) {
		if err := w.Instructions(f.insts); err != nil {
			t.Fatal(err)
		}
		if err := w.Memory(f.words); err != nil {
			t.Fatal(err)
		}
		if err := w.Addresses(f.addrs); err != nil {
			t.Fatal(err)
		}
	}, names...)
	got := writeFiles(t, opts, func(w *Writer) {
		w.anyOrder = true
		const chunk = 700
		for i := 0; i < len(f.insts); i += chunk {
			j := min(i+chunk, len(f.insts))
			if err := w.Memory(f.words[i:j]); err != nil {
				t.Fatal(err)
			}
			if w.traceDone {
				t.Fatalf("memory rows %d to %d ended the trace", i, j)
			}
			if err := w.Instructions(f.insts[i:j]); err != nil {
				t.Fatal(err)
			}
			if err := w.Addresses(f.addrs[i:j]); err != nil {
				t.Fatal(err)
			}
		}
	}, names...)
	for i, name := range names {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("%s: %d bytes with the tables' rows interleaved, %d in the engine.Sink order: not the same", name, len(got[i]), len(want[i]))
		}
	}
}
