package columnar

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpureplay/replay/engine"
)

// columnsOf is rows as the engine hands them to a sink with
// engine.CapResultColumns: a seq run a seq (and one of no rows before
// every fifth), Elem, ValueHi and Fault nil when every row's is 0.
func columnsOf(rows []engine.Result) *engine.ResultColumns {
	c := &engine.ResultColumns{}
	var elems, his, faults bool
	for i, r := range rows {
		if i == 0 || r.Seq != rows[i-1].Seq {
			c.Seqs, c.Runs = append(c.Seqs, r.Seq), append(c.Runs, 0)
			if r.Seq%5 == 0 {
				c.Seqs, c.Runs = append(c.Seqs, r.Seq), append(c.Runs, 0) // a run of no rows
			}
		}
		c.Runs[len(c.Runs)-1]++
		c.Lane = append(c.Lane, r.Lane)
		c.Addr = append(c.Addr, r.Addr)
		c.Value = append(c.Value, r.Value)
		elems = elems || r.Elem != 0
		his = his || r.ValueHi != 0
		faults = faults || r.Fault != engine.FaultNone
	}
	for _, r := range rows {
		if elems {
			c.Elem = append(c.Elem, r.Elem)
		}
		if his {
			c.ValueHi = append(c.ValueHi, r.ValueHi)
		}
		if faults {
			c.Fault = append(c.Fault, r.Fault)
		}
	}
	return c
}

// TestResultColumnsSameFiles: the results table written from columns
// (ResultColumns) is the one written from Results, byte for byte, in both
// formats, whatever the calls' sizes against the batches': rows with no
// fault (the fault column constant), faults appearing part-way through a
// batch, vector elements and 128-bit values appearing part-way, and
// columns given as all 0 in one call after rows that were not.
func TestResultColumnsSameFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 50))
	rows := make([]engine.Result, 1000)
	for i := range rows {
		rows[i] = engine.Result{Seq: uint64(i / 32), Lane: uint32(i % 32), Addr: rng.Uint64N(1 << 22), Value: rng.Uint64N(1 << 32)}
	}
	withFaults := append([]engine.Result(nil), rows...)
	withFaults[130].Fault, withFaults[700].Fault = engine.FaultMisaligned, engine.FaultOutOfBounds
	wide := append([]engine.Result(nil), rows...)
	for i := 300; i < 400; i++ {
		wide[i].Elem, wide[i].ValueHi = uint32(i%4), rng.Uint64()
	}
	cases := map[string][]engine.Result{"plain": rows, "faults": withFaults, "elements and 128-bit values": wide}
	for name, rs := range cases {
		for _, batch := range []int{64, 250, 4096} {
			for _, chunk := range []int{1, 37, 128, 1000} {
				what := fmt.Sprintf("%s, batch %d, calls of %d", name, batch, chunk)
				opts := []Option{WithTables("results"), WithFormat(FormatBoth), WithBatchRows(batch)}
				names := []string{"results.parquet", "results.arrow"}
				want := writeFiles(t, opts, func(w *Writer) {
					for at := 0; at < len(rs); at += chunk {
						if err := w.Results(rs[at:min(at+chunk, len(rs))]); err != nil {
							t.Fatal(err)
						}
					}
				}, names...)
				got := writeFiles(t, opts, func(w *Writer) {
					for at := 0; at < len(rs); at += chunk {
						if err := w.ResultColumns(columnsOf(rs[at:min(at+chunk, len(rs))])); err != nil {
							t.Fatal(err)
						}
					}
				}, names...)
				for i := range names {
					if !bytes.Equal(got[i], want[i]) {
						t.Errorf("%s: %s from columns differs from the one from Results (%d bytes against %d)", what, names[i], len(got[i]), len(want[i]))
					}
				}
			}
		}
	}
	// Read back: the columns' file holds the rows.
	dir := t.TempDir()
	w, err := New(dir, WithTables("results"), WithBatchRows(300))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.ResultColumns(columnsOf(withFaults)); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	rb := readTable(t, dir+"/results.parquet")
	if len(rb.rows) != len(withFaults) || rb.rows[130][6] != "misaligned" || rb.rows[700][6] != "out_of_bounds" || rb.rows[131][6] != "" ||
		rb.rows[999][3] != withFaults[999].Addr || rb.rows[999][4] != withFaults[999].Value {
		t.Errorf("read back %d rows: row 130 %v, 131 %v, 700 %v, 999 %v", len(rb.rows), rb.rows[130], rb.rows[131], rb.rows[700], rb.rows[999])
	}
}

// TestResultColumnsBadFault: a fault the table has no name for fails the
// writer, naming the row, as Results does.
func TestResultColumnsBadFault(t *testing.T) {
	w, err := New(t.TempDir(), WithTables("results"))
	if err != nil {
		t.Fatal(err)
	}
	c := columnsOf([]engine.Result{{Seq: 4, Lane: 2, Fault: engine.FaultMisaligned}})
	c.Fault[0] = 9
	if err := w.ResultColumns(c); err == nil || err.Error() != "columnar: results: seq 4 lane 2: unknown fault 9" {
		t.Errorf("got %v", err)
	}
}

// TestResultColumnsBadRuns: seq runs that do not add up to the rows fail
// the writer, saying so, rather than reading past them.
func TestResultColumnsBadRuns(t *testing.T) {
	w, err := New(t.TempDir(), WithTables("results"))
	if err != nil {
		t.Fatal(err)
	}
	c := columnsOf([]engine.Result{{Seq: 1}, {Seq: 1, Lane: 1}})
	c.Runs[len(c.Runs)-1]--
	if err := w.ResultColumns(c); err == nil || err.Error() != "columnar: results: 1 seq runs for 1 seq values, covering 1 rows of 2" {
		t.Errorf("got %v", err)
	}
}

// TestResultsMixedCalls: rows given as columns (the seq held as runs,
// colBuf.inRuns), then as Results (the runs filled into rows first), then
// as columns again, within one batch, write the files that Results alone
// writes, in both formats; and an unknown fault in columns names the
// row's seq from its runs.
func TestResultsMixedCalls(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	rows := make([]engine.Result, 900)
	for i := range rows {
		rows[i] = engine.Result{Seq: uint64(i/32) * 3, Lane: uint32(i % 32), Addr: rng.Uint64N(1 << 22), Value: rng.Uint64N(1 << 32)}
	}
	opts := []Option{WithTables("results"), WithFormat(FormatBoth), WithBatchRows(1000)}
	names := []string{"results.parquet", "results.arrow"}
	want := writeFiles(t, opts, func(w *Writer) {
		if err := w.Results(rows); err != nil {
			t.Fatal(err)
		}
	}, names...)
	got := writeFiles(t, opts, func(w *Writer) {
		for _, err := range []error{
			w.ResultColumns(columnsOf(rows[:300])),
			w.Results(rows[300:500]),
			w.ResultColumns(columnsOf(rows[500:])),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}, names...)
	for i := range names {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("%s from mixed calls differs from the one from Results (%d bytes against %d)", names[i], len(got[i]), len(want[i]))
		}
	}

	w, err := New(t.TempDir(), WithTables("results"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	bad := columnsOf(rows[:100])
	bad.Fault = make([]engine.Fault, 100)
	bad.Fault[70] = engine.FaultOutOfBounds + 1
	err = w.ResultColumns(bad)
	if want := "seq 6 lane 6: unknown fault"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ResultColumns with an unknown fault: %v, want an error naming %q", err, want)
	}
}
