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
				want := resultRowFiles(t, opts, rs, chunk, names...)
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

// iotaColumns is columnsOf(rows) with Lane left out (IotaLanes) when
// the rows' lanes are 0, 1, 2 … in each seq's run, as the engine leaves
// it out; with Lane when a call cuts a warp.
func iotaColumns(rows []engine.Result) *engine.ResultColumns {
	c := columnsOf(rows)
	i := 0
	for _, n := range c.Runs {
		for j := range n {
			if c.Lane[i] != j {
				return c
			}
			i++
		}
	}
	c.Lane = nil
	return c
}

// TestResultColumnsIotaLanes: the results table written from columns
// whose lanes are left out (engine.ResultColumns.IotaLanes, every
// instruction's lanes 0 to n-1: the lane column held as runs,
// colBuf.iota, and encoded from them, encodeIotaRuns) is the one written
// from Results, byte for byte, in both formats: full warps page after page
// (pages repeated from the runs), warps of fewer lanes among them, runs cut
// by the calls and the batches, calls with their lanes given among calls
// without, Results among ResultColumns, and faults.
func TestResultColumnsIotaLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 50))
	warps := func(n int, lanes func(w int) int) []engine.Result {
		var rs []engine.Result
		for w := 0; len(rs) < n; w++ {
			for l := range lanes(w) {
				rs = append(rs, engine.Result{Seq: uint64(w), Lane: uint32(l), Addr: rng.Uint64N(1<<10) * 4, Value: rng.Uint64N(1 << 20)})
			}
		}
		return rs
	}
	full := warps(50000, func(int) int { return 32 })
	mixed := warps(50000, func(w int) int {
		switch {
		case w%97 == 5:
			return 16
		case w%89 == 3:
			return 1 + w%31
		}
		return 32
	})
	faults := append([]engine.Result(nil), full...)
	faults[20000].Fault, faults[41000].Fault = engine.FaultOutOfRange, engine.FaultMisaligned
	type put struct {
		name string
		fn   func(w *Writer, rs []engine.Result, call int) error
	}
	iotaOnly := put{"lanes left out", func(w *Writer, rs []engine.Result, _ int) error { return w.ResultColumns(iotaColumns(rs)) }}
	someGiven := put{"every third call's lanes given", func(w *Writer, rs []engine.Result, call int) error {
		if call%3 == 2 {
			return w.ResultColumns(columnsOf(rs))
		}
		return w.ResultColumns(iotaColumns(rs))
	}}
	someRows := put{"every fourth call by Results", func(w *Writer, rs []engine.Result, call int) error {
		if call%4 == 3 {
			return w.Results(rs)
		}
		return w.ResultColumns(iotaColumns(rs))
	}}
	cases := map[string][]engine.Result{"full warps": full, "fewer lanes among them": mixed, "faults": faults}
	for name, rs := range cases {
		for _, batch := range []int{1000, 40000, 1 << 16} {
			for _, chunk := range []int{4096, 999, 50000, 1 << 16} {
				for _, p := range []put{iotaOnly, someGiven, someRows} {
					what := fmt.Sprintf("%s, batch %d, calls of %d, %s", name, batch, chunk, p.name)
					opts := []Option{WithTables("results"), WithFormat(FormatBoth), WithBatchRows(batch)}
					names := []string{"results.parquet", "results.arrow"}
					want := resultRowFiles(t, opts, rs, chunk, names...)
					got := writeFiles(t, opts, func(w *Writer) {
						for call, at := 0, 0; at < len(rs); call, at = call+1, at+chunk {
							if err := p.fn(w, rs[at:min(at+chunk, len(rs))], call); err != nil {
								t.Fatal(err)
							}
						}
					}, names...)
					for i := range names {
						if !bytes.Equal(got[i], want[i]) {
							t.Errorf("%s: %s differs from the one from Results (%d bytes against %d)", what, names[i], len(got[i]), len(want[i]))
						}
					}
				}
			}
		}
	}
}

// TestResultColumnsIotaLanesHeld: the writer declares CapIotaLanes; lanes
// left out are held as runs, not stored, until rows with their lanes
// given come into the batch; the pages of full warps are repeated from
// the runs.
func TestResultColumnsIotaLanesHeld(t *testing.T) {
	var rs []engine.Result
	for i := range 3 * maxPageRows { // three DELTA pages of the lane column
		rs = append(rs, engine.Result{Seq: uint64(i / 32), Lane: uint32(i % 32), Addr: uint64(4 * (i % 256)), Value: uint64(i)})
	}
	w, err := New(t.TempDir(), WithTables("results"), WithBatchRows(1<<18))
	if err != nil {
		t.Fatal(err)
	}
	if c := w.Caps(); c&engine.CapIotaLanes == 0 {
		t.Errorf("the results' writer declares %v, without iota-lanes: the engine writes every lane", c)
	}
	if err := w.ResultColumns(iotaColumns(rs)); err != nil {
		t.Fatal(err)
	}
	c := &w.tables[tResults].b.cols[1]
	if !c.inRuns || !c.iota || len(c.runs) != len(rs)/32 || c.runs[5] != (seqRun{v: 0, rows: 32}) {
		t.Fatalf("lanes left out: held as runs %v (iota %v), %d runs, want %d of 32 rows from lane 0", c.inRuns, c.iota, len(c.runs), len(rs)/32)
	}
	if err := w.ResultColumns(columnsOf(rs[:40])); err != nil {
		t.Fatal(err)
	}
	if c.inRuns || c.u32()[len(rs)+33] != 1 || c.u32()[len(rs)-1] != 31 {
		t.Errorf("lanes given after lanes left out: held as runs %v; rows %d and %d are lanes %d and %d, want 31 and 1",
			c.inRuns, len(rs)-1, len(rs)+33, c.u32()[len(rs)-1], c.u32()[len(rs)+33])
	}
	// A new writer: pages of full warps, the second and third repeated.
	w2, err := New(t.TempDir(), WithTables("results"), WithBatchRows(1<<18))
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.ResultColumns(iotaColumns(rs)); err != nil {
		t.Fatal(err)
	}
	tb := w2.tables[tResults]
	p := tb.outs[0].w.(*parquetWriter)
	ch := p.newChunks()
	if err := p.encodeColumn(ch, tb.b, 1); err != nil {
		t.Fatal(err)
	}
	lo, hi := ch[1].stats.min, ch[1].stats.max
	if len(ch[1].pages) != 3 || ch[1].repeated != 2 || ch[1].pages[0].enc != pqDelta || !bytes.Equal(lo, []byte{0, 0, 0, 0}) || !bytes.Equal(hi, []byte{31, 0, 0, 0}) {
		t.Errorf("lane pages of full warps: %d pages, %d repeated, lanes %v to %v; want 3, 2 repeated, 0 to 31", len(ch[1].pages), ch[1].repeated, lo, hi)
	}
	w2.Abort()
	w.Abort()
}

// resultRowFiles is the files names that opts's writer makes of rs given
// as rows (Writer.Results), chunk of them a call: what the column forms
// must write.
func resultRowFiles(t *testing.T, opts []Option, rs []engine.Result, chunk int, names ...string) [][]byte {
	t.Helper()
	return writeFiles(t, opts, func(w *Writer) {
		for at := 0; at < len(rs); at += chunk {
			if err := w.Results(rs[at:min(at+chunk, len(rs))]); err != nil {
				t.Fatal(err)
			}
		}
	}, names...)
}

// TestResultColumnsProgressions forces the results' addr and value kept
// as a progression (tableSpec.progs, putStatCol, encodeAffine): a hot
// counter's rows (one address, a count one a lane) give the bytes of
// the same rows stored, in both formats, whatever the calls' sizes
// against the batches', for progressions that end part-way through a
// batch or a call, that step down or wrap past 2^64, that hold for two
// rows only, and with Results calls between ResultColumns calls (which
// store the rows from then on). The rows read back.
func TestResultColumnsProgressions(t *testing.T) {
	hot := func(n int, addr, value0, step uint64, set func(i int, r *engine.Result)) []engine.Result {
		rs := make([]engine.Result, n)
		for i := range rs {
			rs[i] = engine.Result{Seq: uint64(i / 32), Lane: uint32(i % 32), Addr: addr, Value: value0 + uint64(i)*step}
			if set != nil {
				set(i, &rs[i])
			}
		}
		return rs
	}
	cases := map[string][]engine.Result{
		"hot counter":      hot(3000, 0x10000000, 0, 1, nil),
		"stepping down":    hot(3000, 0x40, 1<<40, ^uint64(6), nil),
		"wrapping":         hot(3000, 0x80, ^uint64(0)-1000, 3, nil),
		"address moves":    hot(3000, 0x100, 5, 1, func(i int, r *engine.Result) { r.Addr += uint64(4 * (i / 1700)) }),
		"value jumps":      hot(3000, 0x100, 5, 1, func(i int, r *engine.Result) { r.Value += uint64(i / 1234 * 9) }),
		"addresses a step": hot(3000, 0x100, 5, 2, func(i int, r *engine.Result) { r.Addr += uint64(4 * i) }),
		"two rows a step":  hot(3000, 0x100, 5, 1, func(i int, r *engine.Result) { r.Value, r.Addr = uint64(i%2*7), uint64(i/2*8) }),
	}
	for name, rs := range cases {
		for _, batch := range []int{2, 250, 4096} {
			for _, chunk := range []int{7, 37, 1000} {
				for _, mixed := range []bool{false, true} {
					what := fmt.Sprintf("%s, batch %d, calls of %d, mixed %v", name, batch, chunk, mixed)
					opts := []Option{WithTables("results"), WithFormat(FormatBoth), WithBatchRows(batch)}
					names := []string{"results.parquet", "results.arrow"}
					put := func(w *Writer) {
						for at, k := 0, 0; at < len(rs); at, k = at+chunk, k+1 {
							part := rs[at:min(at+chunk, len(rs))]
							var err error
							if mixed && k%3 == 2 {
								err = w.Results(part)
							} else {
								err = w.ResultColumns(columnsOf(part))
							}
							if err != nil {
								t.Fatal(err)
							}
						}
					}
					got := writeFiles(t, opts, put, names...)
					want := writeFiles(t, opts, func(w *Writer) { storedColumns(w, tResults); put(w) }, names...)
					for i := range names {
						if !bytes.Equal(got[i], want[i]) {
							t.Errorf("%s: %s with progressions differs from the one stored (%d bytes against %d)", what, names[i], len(got[i]), len(want[i]))
						}
					}
				}
			}
		}
		dir := t.TempDir()
		w, err := New(dir, WithTables("results"), WithBatchRows(1000))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.ResultColumns(columnsOf(rs[:999])); err != nil {
			t.Fatal(err)
		}
		if b := w.tables[tResults].b; name == "hot counter" && !(b.cols[3].konst && b.cols[4].konst) {
			t.Errorf("a hot counter's 999 rows: addr and value held as progressions %v and %v, want both", b.cols[3].konst, b.cols[4].konst)
		}
		if err := w.ResultColumns(columnsOf(rs[999:])); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		rb := readTable(t, dir+"/results.parquet")
		if len(rb.rows) != len(rs) {
			t.Fatalf("%s: read back %d rows, want %d", name, len(rb.rows), len(rs))
		}
		for i, r := range rs {
			if rb.rows[i][3] != r.Addr || rb.rows[i][4] != r.Value {
				t.Fatalf("%s: row %d read back as addr %v value %v, want %d and %d", name, i, rb.rows[i][3], rb.rows[i][4], r.Addr, r.Value)
			}
		}
	}
}

// TestIotaPageAcrossRowGroups: the lane pages of warps that run lanes 0
// to n-1, a row group of them one DELTA page, are the last row group's
// page again (colChunk.iota) when their runs are: the file is the one the
// rows themselves give, byte for byte, with row groups of 32-lane warps
// before and after row groups of 16-lane warps (lanes left out too, other
// runs, which must not be taken for the page before) and row groups cut
// mid-warp (lanes given).
func TestIotaPageAcrossRowGroups(t *testing.T) {
	var rs []engine.Result
	seq := uint64(0)
	warp := func(lanes int) {
		for l := range lanes {
			rs = append(rs, engine.Result{Seq: seq, Lane: uint32(l), Addr: uint64(4 * (len(rs) % 512)), Value: uint64(len(rs))})
		}
		seq++
	}
	for range 4 * maxPageRows / 32 {
		warp(32)
	}
	for range 2 * maxPageRows / 16 {
		warp(16)
	}
	for range 2 * maxPageRows / 32 {
		warp(32)
	}
	warp(7) // the next row groups start mid-warp
	for range 2 * maxPageRows / 32 {
		warp(32)
	}
	opts := []Option{WithTables("results"), WithBatchRows(maxPageRows)}
	cols := writeFiles(t, opts, func(w *Writer) {
		for at := 0; at < len(rs); at += maxPageRows / 2 {
			if err := w.ResultColumns(iotaColumns(rs[at:min(at+maxPageRows/2, len(rs))])); err != nil {
				t.Fatal(err)
			}
		}
	}, "results.parquet")
	rows := resultRowFiles(t, opts, rs, 1000, "results.parquet")
	if !bytes.Equal(cols[0], rows[0]) {
		t.Errorf("full warps' lanes from runs: %d bytes, from rows %d; want the same file", len(cols[0]), len(rows[0]))
	}
	pf, err := newPQFile("results.parquet", bytes.NewReader(cols[0]), int64(len(cols[0])))
	if err != nil {
		t.Fatal(err)
	}
	if want := (len(rs) + maxPageRows - 1) / maxPageRows; len(pf.rgs) != want {
		t.Errorf("%d row groups, want %d of up to %d rows", len(pf.rgs), want, maxPageRows)
	}
}
