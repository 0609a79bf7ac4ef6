package columnar

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gpureplay/replay/engine"
)

// storedColumns makes table id of w store every row of every column, as
// it did before constant columns (colBuf.konst): the reference the
// constant columns' files are compared with.
func storedColumns(w *Writer, id tableID) {
	t := w.tables[id]
	sp := *t.spec
	sp.affine = false
	t.spec = &sp
	for i := range t.b.cols {
		t.b.cols[i].affine, t.b.cols[i].konst = false, false
	}
	if t.b.key != nil {
		t.b.key.affine, t.b.key.konst = false, false
	}
}

// TestAffineInstructions: the instructions table whose columns stay
// constant while their rows keep to a progression (putInstructions,
// batch.keep, encodeAffine) is byte for byte the table with every row
// stored, in Parquet and Arrow: a hot counter's rows (every column a
// progression, for batch after batch, pages of DELTA and of PLAIN
// columns), progressions that end part-way (a count that changes, warps
// that turn random, a second instruction), that step down, that wrap at
// their column's width (seq past 2^64, group past 2^63, a 32-bit count
// past 2^32), and batches of one and two rows.
func TestAffineInstructions(t *testing.T) {
	ss := benchStatics()
	hot := func(n int, seq0 uint64, g0, dg, w0, dw int64, lanes uint32) []engine.InstStat {
		st := make([]engine.InstStat, n)
		for i := range st {
			st[i] = engine.InstStat{Seq: seq0 + uint64(i), Static: ss[0], Group: g0 + int64(i)*dg, Warp: w0 + int64(i)*dw,
				Lanes: lanes, Addresses: 1, MaxConflict: lanes}
		}
		return st
	}
	rng := rand.New(rand.NewPCG(21, 22))
	cases := []struct {
		name  string
		rows  []engine.InstStat
		batch int
	}{
		{"hot", hot(70000, 0, 0, 0, 0, 1, 32), DefaultBatchRows},
		{"hot/batches-of-3000", hot(10000, 7, 3, 1, 100, -2, 32), 3000},
		{"hot/one-page-over", hot(maxPageRows+300, 0, 0, 0, 5, 0, 16), maxPageRows + 300},
		{"count-changes", func() []engine.InstStat {
			st := hot(5000, 0, 0, 0, 0, 1, 32)
			for i := 777; i < len(st); i++ {
				st[i].Lanes, st[i].Addresses = 17, uint32(i%5)
			}
			return st
		}(), DefaultBatchRows},
		{"warps-random", func() []engine.InstStat {
			st := hot(5000, 0, 1, 0, 0, 1, 32)
			for i := 2000; i < len(st); i++ {
				st[i].Warp = rng.Int64N(1 << 40)
			}
			return st
		}(), 4096},
		{"two-instructions", func() []engine.InstStat {
			st := hot(3000, 0, 0, 0, 0, 1, 32)
			for i := 1500; i < len(st); i += 2 {
				st[i].Static = ss[5]
			}
			return st
		}(), DefaultBatchRows},
		{"seq-wraps", hot(3000, math.MaxUint64-1000, 0, 0, 0, 1, 32), DefaultBatchRows},
		{"group-wraps", hot(3000, 0, math.MaxInt64-500, 1, 0, 1, 32), DefaultBatchRows},
		{"group-down", hot(3000, 0, 10, -3, 0, 1, 32), DefaultBatchRows},
		{"count-wraps", func() []engine.InstStat {
			st := hot(3000, 0, 0, 0, 0, 1, 32)
			for i := range st {
				st[i].Addresses = math.MaxUint32 - 1000 + uint32(i)
			}
			return st
		}(), DefaultBatchRows},
		{"batches-of-1", hot(5, 0, 0, 0, 0, 1, 32), 1},
		{"counts-all-set", func() []engine.InstStat {
			st := hot(3000, 0, 0, 0, 0, 1, 16)
			for i := range st {
				st[i].Faults, st[i].CASFailed, st[i].Sectors = 3, 5, 1
			}
			return st
		}(), DefaultBatchRows},
		{"batches-of-2", hot(7, 0, 0, 0, 0, 1, 32), 2},
		{"bench", benchInstructions(20000), 8192},
	}
	// The counts constant, then one of them leaving its value at a row
	// within a call of Instructions, at its first row, or in the batch's
	// first two rows (constCountRows' pass, then each column's).
	counts := []func(st *engine.InstStat) *uint32{
		func(st *engine.InstStat) *uint32 { return &st.Lanes },
		func(st *engine.InstStat) *uint32 { return &st.Addresses },
		func(st *engine.InstStat) *uint32 { return &st.MaxConflict },
		func(st *engine.InstStat) *uint32 { return &st.Faults },
		func(st *engine.InstStat) *uint32 { return &st.CASFailed },
		func(st *engine.InstStat) *uint32 { return &st.Sectors },
	}
	for f, field := range counts {
		for _, at := range []int{1, 1000, 2500} {
			st := hot(3500, 0, 0, 0, 0, 1, 16)
			for i := range st {
				st[i].Sectors = 1
			}
			for i := at; i < len(st); i += 1 + i%3 {
				*field(&st[i]) += uint32(1 + i%2)
			}
			cases = append(cases, struct {
				name  string
				rows  []engine.InstStat
				batch int
			}{fmt.Sprintf("count-%d-leaves-at-%d", f, at), st, DefaultBatchRows})
		}
	}
	// Random ones: each column a progression of a random first value and
	// step (extremes among them), left at a random row or not at all.
	for k := range 16 {
		n := 1 + rng.IntN(6000)
		st := hot(n, 0, 0, 0, 0, 0, 0)
		prog := func(set func(i int, v uint64)) {
			first, step := rng.Uint64(), uint64(rng.IntN(7))-3
			switch rng.IntN(4) {
			case 0:
				step = rng.Uint64()
			case 1:
				first = math.MaxUint64 - uint64(rng.IntN(3*n))
			}
			off := n
			if rng.IntN(2) == 0 {
				off = rng.IntN(n)
			}
			for i := range n {
				v := first + uint64(i)*step
				if i >= off {
					v = rng.Uint64()
				}
				set(i, v)
			}
		}
		prog(func(i int, v uint64) { st[i].Seq = v })
		prog(func(i int, v uint64) { st[i].Group = int64(v) })
		prog(func(i int, v uint64) { st[i].Warp = int64(v) })
		prog(func(i int, v uint64) { st[i].Lanes = uint32(v) })
		prog(func(i int, v uint64) { st[i].Addresses = uint32(v) })
		prog(func(i int, v uint64) { st[i].MaxConflict = uint32(v) })
		prog(func(i int, v uint64) { st[i].Faults = uint32(v) })
		prog(func(i int, v uint64) { st[i].CASFailed = uint32(v) })
		cases = append(cases, struct {
			name  string
			rows  []engine.InstStat
			batch int
		}{fmt.Sprintf("random-%d", k), st, 1 + rng.IntN(4000)})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			write := func(stored, cols bool) (pq, ipc, ops []byte) {
				opts := []Option{WithFormat(FormatParquet | FormatArrow), WithBatchRows(tc.batch), WithTables("instructions", "ops")}
				fs := writeFiles(t, opts, func(w *Writer) {
					if stored {
						storedColumns(w, tInstructions)
					}
					for from := 0; from < len(tc.rows); from += 1000 {
						rows := tc.rows[from:min(from+1000, len(tc.rows))]
						var err error
						if cols {
							err = w.instructionCols(instColsOf(rows))
						} else {
							err = w.Instructions(rows)
						}
						if err != nil {
							t.Fatal(err)
						}
					}
				}, "instructions.parquet", "instructions.arrow", "ops.parquet")
				return fs[0], fs[1], fs[2]
			}
			pq1, ipc1, ops1 := write(false, false)
			for _, v := range []struct {
				name         string
				stored, cols bool
			}{{"stored", true, false}, {"columns", false, true}, {"columns-stored", true, true}} {
				pq2, ipc2, ops2 := write(v.stored, v.cols)
				if !bytes.Equal(pq1, pq2) {
					t.Errorf("%s: instructions.parquet: %d bytes from rows with constant columns, %d, not the same bytes", v.name, len(pq1), len(pq2))
				}
				if !bytes.Equal(ipc1, ipc2) {
					t.Errorf("%s: instructions.arrow: %d bytes from rows with constant columns, %d, not the same bytes", v.name, len(ipc1), len(ipc2))
				}
				if !bytes.Equal(ops1, ops2) {
					t.Errorf("%s: ops.parquet differs", v.name)
				}
			}
		})
	}
}

// TestZeroResultColumns: the results table whose elem and value_hi start
// each batch constant 0 and are stored only from the first rows that are
// not (Writer.Results, tableSpec.zeros) is byte for byte the table with
// every row stored, in Parquet and Arrow, and reads back with the rows
// written: batches all zero, a nonzero elem or value_hi in the middle of
// a batch, in the first row of one, in the last row of a call, in a
// batch's first call and in a later one, both columns at once, and
// batches of one row.
func TestZeroResultColumns(t *testing.T) {
	rows := func(n int, set func(i int, r *engine.Result)) []engine.Result {
		rs := make([]engine.Result, n)
		for i := range rs {
			rs[i] = engine.Result{Seq: uint64(i / 32), Lane: uint32(i % 32), Addr: 0x1000 + uint64(i*4)%4096, Value: uint64(i * 7)}
			if set != nil {
				set(i, &rs[i])
			}
		}
		return rs
	}
	at := func(ks ...int) func(i int, r *engine.Result) {
		return func(i int, r *engine.Result) {
			for j, k := range ks {
				if i == k {
					if j%2 == 0 {
						r.Elem = uint32(1 + i%3)
					} else {
						r.ValueHi = uint64(i) << 40
					}
				}
			}
		}
	}
	cases := []struct {
		name        string
		rs          []engine.Result
		batch, call int
	}{
		{"zeros", rows(5000, nil), 1000, 300},
		{"elem-mid-batch", rows(5000, at(1500)), 1000, 300},
		{"value_hi-mid-batch", rows(5000, at(-1, 2750)), 1000, 300},
		{"first-row-of-a-batch", rows(3000, at(2000, 2000)), 1000, 250},
		{"last-row-of-a-call", rows(3000, at(1249, 2249)), 1000, 250},
		{"first-call", rows(3000, at(10)), 1000, 1000},
		{"both-in-one-row", rows(3000, at(1777, 1777)), 1000, 333},
		{"vector", rows(4000, func(i int, r *engine.Result) { r.Elem = uint32(i % 4) }), 1000, 64},
		{"one-row-batches", rows(9, at(4, 7)), 1, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			write := func(stored bool) (pq, ipc []byte) {
				opts := []Option{WithFormat(FormatParquet | FormatArrow), WithBatchRows(tc.batch), WithTables("results")}
				fs := writeFiles(t, opts, func(w *Writer) {
					if stored {
						storedColumns(w, tResults)
					}
					for from := 0; from < len(tc.rs); from += tc.call {
						if err := w.Results(tc.rs[from:min(from+tc.call, len(tc.rs))]); err != nil {
							t.Fatal(err)
						}
					}
				}, "results.parquet", "results.arrow")
				return fs[0], fs[1]
			}
			pq1, ipc1 := write(false)
			pq2, ipc2 := write(true)
			if !bytes.Equal(pq1, pq2) {
				t.Errorf("results.parquet: %d bytes with zero columns, %d stored, not the same bytes", len(pq1), len(pq2))
			}
			if !bytes.Equal(ipc1, ipc2) {
				t.Errorf("results.arrow: %d bytes with zero columns, %d stored, not the same bytes", len(ipc1), len(ipc2))
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "results.parquet")
			if err := os.WriteFile(path, pq1, 0o644); err != nil {
				t.Fatal(err)
			}
			got := readParquet(t, path)
			if len(got.rows) != len(tc.rs) {
				t.Fatalf("%d rows read back, want %d", len(got.rows), len(tc.rs))
			}
			for i, r := range tc.rs {
				if e, h := got.rows[i][2], got.rows[i][5]; e != r.Elem || h != r.ValueHi {
					t.Fatalf("row %d: elem %v value_hi %v, want %d and %d", i, e, h, r.Elem, r.ValueHi)
				}
			}
		})
	}
}

// TestOpsTotals: the ops totals (opAgg) that Instructions adds a run of
// one Static at a time (opAgg.addRun), with the instructions table
// written (putStatics) and without it (addOps), are the sums of every
// row, for rows whose Static changes every row, in runs, and across
// calls of uneven sizes.
func TestOpsTotals(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	ss := benchStatics()
	st := benchInstructions(20000)
	for i := range st {
		s := &st[i]
		if i >= 9000 { // runs of one Static, some across calls
			s.Static = ss[i/(1+i%7+300)%len(ss)]
		}
		s.Lanes = uint32(rng.IntN(33))
		s.Faults = uint32(rng.IntN(3))
		s.MaxConflict = uint32(rng.IntN(40))
		s.Sectors = uint32(rng.IntN(33))
	}
	want := make(map[opKey]opAgg)
	for i := range st {
		s := &st[i]
		k := opKey{s.Static.Dialect, s.Static.Op, s.Static.Type, s.Static.Space}
		a := want[k]
		a.instructions++
		a.lanes += uint64(s.Lanes)
		a.faults += uint64(s.Faults)
		a.conflictSum += uint64(s.MaxConflict)
		a.maxConflict = max(a.maxConflict, s.MaxConflict)
		a.sectors += uint64(s.Sectors)
		want[k] = a
	}
	for _, tc := range []struct {
		tables []string
		cols   bool
	}{{[]string{"instructions", "ops"}, false}, {[]string{"ops"}, false},
		{[]string{"instructions", "ops"}, true}, {[]string{"ops"}, true}} {
		tables, cols := tc.tables, tc.cols
		name := strings.Join(tables, ",")
		if cols {
			name += "/columns"
		}
		t.Run(name, func(t *testing.T) {
			w, err := New(t.TempDir(), WithTables(tables...), WithBatchRows(5000))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			for from := 0; from < len(st); {
				to := min(from+1+rng.IntN(3000), len(st))
				var err error
				if cols {
					err = w.instructionCols(instColsOf(st[from:to]))
				} else {
					err = w.Instructions(st[from:to])
				}
				if err != nil {
					t.Fatal(err)
				}
				from = to
			}
			if len(w.ops) != len(want) {
				t.Fatalf("%d ops rows, want %d", len(w.ops), len(want))
			}
			for k, a := range w.ops {
				if *a != want[k] {
					t.Errorf("%v: %+v, want %+v", k, *a, want[k])
				}
			}
		})
	}
}

// instColsOf is rows st a column at a time (Writer.instructionCols).
func instColsOf(st []engine.InstStat) instCols {
	c := newInstCols(0)
	for i := range st {
		c.add(&st[i])
	}
	return *c
}

// TestConstCountRows: constCountRows finds the rows whose six counts
// (Lanes to Sectors) are their constant columns' values, up to the first
// row that differs in any one of them; none while a column is not
// constant, or in the batch's first two rows.
func TestConstCountRows(t *testing.T) {
	rows := make([]engine.InstStat, 100)
	for i := range rows {
		rows[i] = engine.InstStat{Seq: uint64(i), Lanes: 16, Addresses: 2, MaxConflict: 9, Faults: 1, CASFailed: 7, Sectors: 3}
	}
	b := &batch{cols: make([]colBuf, 14)}
	set := func(konst bool, step uint64) {
		for i, v := range []uint32{16, 2, 9, 1, 7, 3} {
			c := &b.cols[countCols[i]]
			c.konst, c.kval, c.kstep = konst, uint64(v), step
		}
	}
	const size = unsafe.Sizeof(engine.InstStat{})
	count := func(n int, st []engine.InstStat) int {
		return constCountRows(b, n, len(st), unsafe.Add(unsafe.Pointer(unsafe.SliceData(st)), unsafe.Offsetof(engine.InstStat{}.Lanes)), size)
	}
	set(true, 0)
	if got := count(2, rows); got != len(rows) {
		t.Errorf("every row constant: %d rows, want %d", got, len(rows))
	}
	if got := count(1, rows); got != 0 {
		t.Errorf("from the batch's row 1: %d rows, want 0 (putStat's keep sets the progression)", got)
	}
	for f := range 6 {
		st := slices.Clone(rows)
		p := (*[6]uint32)(unsafe.Add(unsafe.Pointer(&st[40]), unsafe.Offsetof(engine.InstStat{}.Lanes)))
		p[f]++
		if got := count(5, st); got != 40 {
			t.Errorf("count %d differs at row 40: %d rows, want 40", f, got)
		}
	}
	set(true, 1)
	if got := count(2, rows); got != 0 {
		t.Errorf("columns of step 1: %d rows, want 0", got)
	}
	set(false, 0)
	if got := count(2, rows); got != 0 {
		t.Errorf("stored columns: %d rows, want 0", got)
	}
}
