package columnar

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/internal/duckdbq"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// The benchmarks here measure what a table costs a replay per row, and,
// in the same run, what DuckDB (one thread, the same codec) takes to write
// the same rows to Parquet. Every figure that matters is a ratio within one
// run (docs/PERFORMANCE.md):
//
//	go test ./columnar -run '^$' -bench . -count 6 | tee new.txt
//	benchstat new.txt
//
// Each reports ns/row (wall time), cpu-ns/row (the process's CPU time, all
// goroutines: the Writer encodes on goroutines of its own, so a row costs
// more CPU than wall time when a second core is free) and B/row (the
// file's size). BenchmarkResultsVsDuckDB needs node and tools/duckdb's npm
// package (npm ci --prefix tools/duckdb); without them it skips (and fails
// under CI=true).

const (
	benchRows     = 1 << 20 // results rows per op
	benchInsts    = 1 << 18 // instructions rows per op
	benchLanes    = 32      // rows per instruction in the results
	benchCallInst = 4096    // instructions per Sink call: the engine's default batch
)

// benchResults returns n results rows resembling a replay's of a
// scattered 32-bit atomic trace: seq increasing, 32 lanes per instruction,
// element 0, a random aligned word of 4 MiB per lane, a small random value,
// value_hi 0, and a fault on about one lane in a thousand.
func benchResults(n int) []engine.Result {
	rng := rand.New(rand.NewPCG(1, 2))
	rs := make([]engine.Result, n)
	for i := range rs {
		r := &rs[i]
		r.Seq = uint64(i / benchLanes)
		r.Lane = uint32(i % benchLanes)
		r.Addr = rng.Uint64N(1<<20) * 4
		r.Value = rng.Uint64N(1 << 12)
		if rng.IntN(1000) == 0 {
			r.Fault, r.Value = engine.FaultOutOfRange, 0
		}
	}
	return rs
}

// benchStatics is a kernel's worth of distinct instructions (a trace
// reader hands out one *trace.Static per distinct text).
func benchStatics() []*trace.Static {
	var ss []*trace.Static
	ops := []struct {
		op   trace.Op
		name string
	}{{trace.OpAdd, "add"}, {trace.OpCAS, "cas"}, {trace.OpExch, "exch"}, {trace.OpMax, "max"}}
	for i := range 24 {
		o := ops[i%len(ops)]
		sp, spName := trace.Global, "global"
		if i%3 == 2 {
			sp, spName = trace.Shared, "shared"
		}
		ss = append(ss, &trace.Static{
			Text:    fmt.Sprintf("atom.%s.%s.u32 %%r%d, [%%rd%d+%d], %%r%d", spName, o.name, 10+i, 2+i%5, 4*i, 30+i),
			Dialect: trace.DialectPTX, Op: o.op, Type: trace.TypeU32, Space: sp,
		})
	}
	return ss
}

// benchInstructions returns n instructions rows: the statics of a loop
// body in turn, 64 warps of 4 groups, 32 lanes, and a few conflicts.
func benchInstructions(n int) []engine.InstStat {
	rng := rand.New(rand.NewPCG(3, 4))
	ss := benchStatics()
	st := make([]engine.InstStat, n)
	for i := range st {
		s := &st[i]
		s.Seq = uint64(i)
		s.Static = ss[i%len(ss)]
		s.Group = int64(i / 64 % 4)
		s.Warp = int64(i % 64)
		s.Lanes = benchLanes
		s.MaxConflict = 1 + uint32(rng.IntN(3))
		s.Addresses = benchLanes - s.MaxConflict + 1
	}
	return st
}

// writeTable writes rows as table (only) of a replay into dir, per rows
// a call of put (one engine batch's, or the memory table's 65536), and
// commits.
func writeTable[T any](tb testing.TB, dir, table string, rows []T, per int, put func(*Writer, []T) error) {
	w, err := New(dir, WithTables(table))
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < len(rows); i += per {
		if err := put(w, rows[i:min(i+per, len(rows))]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// writeResults writes rs as the results table, in calls of one engine
// batch each.
func writeResults(tb testing.TB, dir string, rs []engine.Result) {
	writeTable(tb, dir, "results", rs, benchCallInst*benchLanes, (*Writer).Results)
}

func fileSize(tb testing.TB, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}

// cpuTimer measures the process's CPU time between start and stop, next
// to the benchmark's wall time: the Writer encodes on a goroutine of its
// own, so ns/row (wall) is less than what a row costs (cpu-ns/row).
type cpuTimer struct {
	start time.Duration
	total time.Duration
	ok    bool
}

func (c *cpuTimer) resume() {
	c.start, c.ok = processCPU()
}

func (c *cpuTimer) pause() {
	if now, ok := processCPU(); ok && c.ok {
		c.total += now - c.start
	} else {
		c.ok = false
	}
}

// report reports ns/row, cpu-ns/row (where measured) and B/row (file's
// size) for b.N ops of rows rows each, and returns the cost per row: CPU
// if measured, else wall.
func (c *cpuTimer) report(b *testing.B, rows int, file string) float64 {
	perRow := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / float64(rows) }
	wall := perRow(b.Elapsed())
	b.ReportMetric(wall, "ns/row")
	b.ReportMetric(float64(fileSize(b, file))/float64(rows), "B/row")
	if !c.ok {
		return wall
	}
	b.ReportMetric(perRow(c.total), "cpu-ns/row")
	return perRow(c.total)
}

// BenchmarkResults is the results table alone: 2^20 rows per op, from
// New to a committed file.
func BenchmarkResults(b *testing.B) {
	rs := benchResults(benchRows)
	benchWrite(b, len(rs), "results.parquet", func(dir string) { writeResults(b, dir, rs) })
}

// BenchmarkResultColumns is BenchmarkResults' rows given as columns
// (engine.CapResultColumns), a call per engine batch, as the engine hands
// them over.
func BenchmarkResultColumns(b *testing.B) {
	rs := benchResults(benchRows)
	var cs []*engine.ResultColumns
	for i, per := 0, benchCallInst*benchLanes; i < len(rs); i += per {
		cs = append(cs, columnsOf(rs[i:min(i+per, len(rs))]))
	}
	put := func(w *Writer, c []*engine.ResultColumns) error { return w.ResultColumns(c[0]) }
	benchWrite(b, len(rs), "results.parquet", func(dir string) { writeTable(b, dir, "results", cs, 1, put) })
}

// BenchmarkResultColumnsIotaLanes is BenchmarkResultColumns with the
// lanes left out (engine.ResultColumns.IotaLanes), as the engine hands
// full warps over.
func BenchmarkResultColumnsIotaLanes(b *testing.B) {
	rs := benchResults(benchRows)
	var cs []*engine.ResultColumns
	for i, per := 0, benchCallInst*benchLanes; i < len(rs); i += per {
		c := columnsOf(rs[i:min(i+per, len(rs))])
		c.Lane = nil
		cs = append(cs, c)
	}
	put := func(w *Writer, c []*engine.ResultColumns) error { return w.ResultColumns(c[0]) }
	benchWrite(b, len(rs), "results.parquet", func(dir string) { writeTable(b, dir, "results", cs, 1, put) })
}

// benchWrite runs write, which writes one table into dir, b.N times, and
// reports its costs per row of rows (cpuTimer.report) for the table's
// file.
func benchWrite(b *testing.B, rows int, file string, write func(dir string)) {
	dir := b.TempDir()
	b.ReportAllocs()
	var cpu cpuTimer
	b.ResetTimer()
	cpu.resume()
	for range b.N {
		write(dir)
	}
	cpu.pause()
	b.StopTimer()
	cpu.report(b, rows, filepath.Join(dir, file))
}

// BenchmarkInstructions is the instructions table alone: 2^18 rows per op
// (the instructions of 2^23 lane-ops).
func BenchmarkInstructions(b *testing.B) {
	st := benchInstructions(benchInsts)
	benchWrite(b, len(st), "instructions.parquet", func(dir string) { writeTable(b, dir, "instructions", st, benchCallInst, (*Writer).Instructions) })
}

// benchOneStatic returns n instructions rows of a kernel of one atomic
// instruction, as the bench traces are: eight warps a group, 32 lanes,
// and either every lane on one word (hot: one address, 32 conflicts, one
// sector) or scattered (31 or 32 addresses and sectors, 1 or 2 conflicts).
func benchOneStatic(n int, hot bool) []engine.InstStat {
	rng := rand.New(rand.NewPCG(7, 8))
	s0 := benchStatics()[0]
	st := make([]engine.InstStat, n)
	for i := range st {
		s := &st[i]
		s.Seq, s.Static = uint64(i), s0
		s.Group, s.Warp = int64(i/8), int64(i%8)
		s.Lanes = benchLanes
		s.Addresses, s.MaxConflict, s.Sectors = 1, benchLanes, 1
		if !hot {
			s.MaxConflict = 1 + uint32(rng.IntN(2))
			s.Addresses = benchLanes - s.MaxConflict + 1
			s.Sectors = s.Addresses
		}
	}
	return st
}

// BenchmarkInstructionsOneStatic is the instructions table of a kernel
// of one instruction (benchOneStatic), 2^18 rows per op: the row costs
// of the hot counter's and the uniform trace's instructions.
func BenchmarkInstructionsOneStatic(b *testing.B) {
	for _, c := range []struct {
		name string
		hot  bool
	}{{"hotcounter", true}, {"uniform", false}} {
		b.Run(c.name, func(b *testing.B) {
			st := benchOneStatic(benchInsts, c.hot)
			benchWrite(b, len(st), "instructions.parquet", func(dir string) {
				writeTable(b, dir, "instructions", st, benchCallInst, (*Writer).Instructions)
			})
		})
	}
}

// benchMemory is the final memory of a scattered replay like the
// uniform workload's: 2^20 consecutive words of global memory, each the
// sum of about nine 8-bit addends.
func benchMemory(n int) []engine.Word {
	rng := rand.New(rand.NewPCG(5, 6))
	ws := make([]engine.Word, n)
	for i := range ws {
		var v uint32
		for range 6 + rng.IntN(7) {
			v += rng.Uint32N(256)
		}
		ws[i] = engine.Word{Space: trace.Global, Group: -1, Addr: 0x10000 + 4*uint64(i), Value: v}
	}
	return ws
}

// BenchmarkMemory is the memory table alone: 2^20 rows per op, handed
// over 65536 at a time as the engine does, from New to a committed file.
// The engine writes it after the replay, so its wall time is the
// replay's tail.
func BenchmarkMemory(b *testing.B) {
	ws := benchMemory(benchRows)
	benchWrite(b, len(ws), "memory.parquet", func(dir string) { writeTable(b, dir, "memory", ws, 1<<16, (*Writer).Memory) })
}

// benchAddresses is the addresses table of a scattered replay like the
// uniform workload's: 2^20 consecutive words of global memory, each hit by
// about nine warps of as many groups, its counts estimates once past what
// the sketches hold exactly (engine.AddressStat).
func benchAddresses(n int) []engine.AddressStat {
	rng := rand.New(rand.NewPCG(7, 8))
	rows := make([]engine.AddressStat, n)
	for i := range rows {
		acc := uint64(3 + rng.IntN(13))
		warps := acc - uint64(rng.IntN(2))
		groups := warps - uint64(rng.IntN(2))
		rows[i] = engine.AddressStat{Space: trace.Global, Group: -1, Addr: 0x10000 + 4*uint64(i),
			Accesses: acc, Warps: warps, Groups: groups, Exact: warps <= 7 && groups <= 3}
	}
	return rows
}

// BenchmarkAddresses is the addresses table alone: 2^20 rows per op,
// handed over 8192 at a time as the engine does (emitChunk), from New to
// a committed file. The engine writes it after the replay's last batch,
// so its wall time is the addresses replay's tail, and its CPU part of
// what the table adds (docs/PERFORMANCE.md).
func BenchmarkAddresses(b *testing.B) {
	rows := benchAddresses(benchRows)
	benchWrite(b, len(rows), "addresses.parquet", func(dir string) { writeTable(b, dir, "addresses", rows, 1<<13, (*Writer).Addresses) })
}

// BenchmarkMemoryPages is the memory table as the engine hands it over,
// a page at a time (Writer.MemoryPage): the words of benchMemory, 2^20
// rows in 1024 full pages, from New to a committed file.
func BenchmarkMemoryPages(b *testing.B) {
	ws := benchMemory(benchRows)
	type page struct {
		written [shard.PageWords / 64]uint64
		words   [shard.PageWords]uint32
	}
	pages := make([]page, len(ws)/shard.PageWords)
	wps := make([]engine.WordPage, len(pages))
	for i := range pages {
		p := &pages[i]
		for k := range p.written {
			p.written[k] = ^uint64(0)
		}
		for k := range p.words {
			p.words[k] = ws[i*shard.PageWords+k].Value
		}
		wps[i] = engine.WordPage{Space: trace.Global, Group: -1, Base: ws[i*shard.PageWords].Addr, Written: &p.written, Words: &p.words}
	}
	benchWrite(b, len(ws), "memory.parquet", func(dir string) {
		w, err := New(dir, WithTables("memory"))
		if err != nil {
			b.Fatal(err)
		}
		for i := range wps {
			if err := w.MemoryPage(&wps[i]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Commit(); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkAppendDelta is DELTA_BINARY_PACKED alone (appendDelta) on a
// page of maxPageRows addresses of a scattered replay's memory table:
// increasing, one to fourteen words apart.
func BenchmarkAppendDelta(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]int64, maxPageRows)
	a := int64(0)
	for i := range vals {
		a += 4 * int64(1+rng.IntN(14))
		vals[i] = a
	}
	dst := make([]byte, 0, 16*maxPageRows)
	b.ResetTimer()
	for range b.N {
		dst, _, _ = appendDelta(dst[:0], vals, int64(unsignedTop[uint64]()))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(vals)), "ns/value")
}

// BenchmarkResultsVsDuckDB writes the rows of BenchmarkResults through the
// Writer (timed as usual: ns/op, ns/row, cpu-ns/row) and then has DuckDB,
// on one thread, write the same rows from a table it holds in memory to
// Parquet with the same codec, zstd, timing only its COPY statements:
// duckdb-ns/row and duckdb-cpu-ns/row at its default level (3),
// duckdb-l1-cpu-ns/row at level 1 (ours). ratio is our cost per row (CPU
// time where measured: the Writer uses a second goroutine) over DuckDB's
// at its default level: at most 1 is the target. wall-ratio compares the
// wall times.
func BenchmarkResultsVsDuckDB(b *testing.B) {
	duckdbq.Require(b)
	rs := benchResults(benchRows)
	dir := b.TempDir()
	var cpu cpuTimer
	b.ResetTimer()
	cpu.resume()
	for range b.N {
		writeResults(b, dir, rs)
	}
	cpu.pause()
	b.StopTimer()
	src := filepath.Join(dir, "results.parquet")
	ours := cpu.report(b, len(rs), src)
	oursWall := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(rs))

	dst := filepath.Join(b.TempDir(), "duckdb.parquet")
	sqls := []string{
		"SET threads = 1",
		"CREATE TABLE results AS SELECT * FROM read_parquet(" + duckdbq.QuoteString(src) + ")",
		"SELECT count(*) FROM results",
	}
	const setup = 3
	copies := max(b.N, 3)
	for range copies {
		sqls = append(sqls,
			"COPY results TO "+duckdbq.QuoteString(dst)+" (FORMAT parquet, COMPRESSION zstd)",
			"COPY results TO "+duckdbq.QuoteString(dst+".l1")+" (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)")
	}
	out, err := duckdbq.QueryBatch(sqls)
	if err != nil {
		b.Fatal(err)
	}
	if got := fmt.Sprint(out[2].Rows); got != fmt.Sprintf("[[%d]]", len(rs)) {
		b.Fatalf("DuckDB loaded %s rows, want %d", got, len(rs))
	}
	var wall, cpuDef, cpuL1 time.Duration
	for i := setup; i < len(out); i += 2 {
		wall += out[i].Elapsed
		cpuDef += out[i].CPU
		cpuL1 += out[i+1].CPU
	}
	perRow := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(copies) / float64(len(rs)) }
	b.ReportMetric(perRow(wall), "duckdb-ns/row")
	b.ReportMetric(perRow(cpuDef), "duckdb-cpu-ns/row")
	b.ReportMetric(perRow(cpuL1), "duckdb-l1-cpu-ns/row")
	b.ReportMetric(ours/perRow(cpuDef), "ratio")
	b.ReportMetric(oursWall/perRow(wall), "wall-ratio")
	b.ReportMetric(float64(fileSize(b, dst))/float64(len(rs)), "duckdb-B/row")
	b.ReportMetric(float64(fileSize(b, dst+".l1"))/float64(len(rs)), "duckdb-l1-B/row")
}
