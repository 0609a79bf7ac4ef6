package main

import (
	"fmt"
	"strings"
)

// The in-process benchmarks (bench/replay_test.go, engine's BenchmarkApply
// and BenchmarkSketchAdd, columnar's BenchmarkAddresses and DuckDB
// comparison): no target is judged on them; they say where the time of
// the end-to-end figures goes.

func (d *Data) ns(name string) (float64, bool) { return d.Median("main", "bench", name, "ns/op") }

func (d *Data) replay(tr, variant string, workers int) (float64, bool) {
	return d.ns(fmt.Sprintf("BenchmarkReplay/%s/%s/workers=%d", tr, variant, workers))
}

// inLimit is the in-process limit of a bench trace: BenchmarkLimit's
// zstd-cli and dense.
func (d *Data) inLimit(tr string) (float64, bool) {
	z, ok1 := d.ns("BenchmarkLimit/" + tr + "/zstd-cli")
	n, ok2 := d.ns("BenchmarkLimit/" + tr + "/dense")
	return z + n, ok1 && ok2
}

type info struct {
	text    string
	compute func(d *Data) Figure
	format  func(float64) string
}

func inLeanOverLimit(tr string) func(d *Data) Figure {
	return func(d *Data) Figure {
		l, ok1 := d.inLimit(tr)
		r, ok2 := d.replay(tr, "lean", 2)
		if !ok1 || !ok2 {
			return na("n/a")
		}
		return measured(r/l, fmt.Sprintf("%s vs %s", dur(r), dur(l)))
	}
}

// processCost is the end-to-end lean replay of uniform-ptx (the same trace
// as uniform-1Mi) beyond the in-process one: start-up, reading the file,
// committing the tables.
func processCost(d *Data) Figure {
	e, ok1 := d.e2e("uniform-ptx/lean")
	r, ok2 := d.replay("uniform-1Mi", "lean", 2)
	if !ok1 || !ok2 {
		return na("n/a")
	}
	return measured(e-r, fmt.Sprintf("%s end to end vs %s in process", dur(e), dur(r)))
}

func inAllOverLean(d *Data) Figure {
	a, ok1 := d.replay("uniform-1Mi", "all", 2)
	l, ok2 := d.replay("uniform-1Mi", "lean", 2)
	if !ok1 || !ok2 {
		return na("n/a")
	}
	return measured(a/l, fmt.Sprintf("%s vs %s", dur(a), dur(l)))
}

func inWorkers(d *Data) Figure {
	one, ok1 := d.replay("uniform-1Mi", "lean-1core", 1)
	two, ok2 := d.replay("uniform-1Mi", "lean", 2)
	g1, ok3 := d.Median("main", "bench", "BenchmarkMachineScaling/words=1048576/goroutines=1", "ns/op")
	g2, ok4 := d.Median("main", "bench", "BenchmarkMachineScaling/words=1048576/goroutines=2", "ns/op")
	if !ok1 || !ok2 {
		return na("n/a")
	}
	s := fmt.Sprintf("%s on two cores vs %s on one (GOMAXPROCS 1)", dur(two), dur(one))
	if ok3 && ok4 {
		s += fmt.Sprintf("; `BenchmarkMachineScaling` %.2f×", g1/g2)
	}
	return measured(one/two, s)
}

// apply is the engine's apply stage over the dense loop on the same
// accesses (engine/apply_bench_test.go).
func apply(pattern string) func(d *Data) Figure {
	return func(d *Data) Figure {
		e, ok1 := d.Median("main", "engine", "BenchmarkApply/"+pattern+"/engine", "ns/op")
		n, ok2 := d.Median("main", "engine", "BenchmarkApply/"+pattern+"/dense", "ns/op")
		if !ok1 || !ok2 {
			return na("n/a")
		}
		return measured(n/e, fmt.Sprintf("%s vs %s per add", dur(e), dur(n)))
	}
}

// addressesFloor is the least any addresses table could add to the lean
// replay of uniform-1Mi: BenchmarkLimit's addr-floor (48-byte records) or
// addr-floor-16 over the lean replay.
func addressesFloor(name string) func(d *Data) Figure {
	return func(d *Data) Figure {
		f, ok1 := d.ns("BenchmarkLimit/uniform-1Mi/" + name)
		l, ok2 := d.replay("uniform-1Mi", "lean", 2)
		if !ok1 || !ok2 {
			return na("n/a")
		}
		return measured(f/l, fmt.Sprintf("%s vs %s", dur(f), dur(l)))
	}
}

// addressesWrite is columnar's BenchmarkAddresses (a row from memory to a
// committed file) times the replay's addresses, over the lean replay.
func addressesWrite(d *Data) Figure {
	perRow, ok1 := d.Median("main", "columnar", "BenchmarkAddresses", "ns/row")
	rows, ok2 := d.Median("main", "bench", "BenchmarkReplay/uniform-1Mi/addresses/workers=2", "words")
	l, ok3 := d.replay("uniform-1Mi", "lean", 2)
	if !ok1 || !ok2 || !ok3 {
		return na("n/a")
	}
	w := perRow * rows
	return measured(w/l, fmt.Sprintf("%s for %s rows vs %s", dur(w), count(rows), dur(l)))
}

// sketchesInCache is engine's BenchmarkSketchAdd for each lane-op, split
// over two cores, over the lean replay of uniform-1Mi.
func sketchesInCache(d *Data) Figure {
	per, ok1 := d.Median("main", "engine", "BenchmarkSketchAdd", "ns/access")
	n, ok2 := d.laneOps()
	l, ok3 := d.replay("uniform-1Mi", "lean", 2)
	if !ok1 || !ok2 || !ok3 {
		return na("n/a")
	}
	t := per * n / 2
	return measured(t/l, fmt.Sprintf("%s vs %s", dur(t), dur(l)))
}

// bytesPerAddress is the addresses table's peak memory per distinct
// address, in process: the peak resident set of the replay with it less
// the lean one's, over the words the replay touched.
func bytesPerAddress(d *Data) Figure {
	name := "BenchmarkReplay/uniform-1Mi/%s/workers=2"
	pa, ok1 := d.Median("main", "bench", fmt.Sprintf(name, "addresses"), "peakRSS-B")
	pl, ok2 := d.Median("main", "bench", fmt.Sprintf(name, "lean"), "peakRSS-B")
	w, ok3 := d.Median("main", "bench", fmt.Sprintf(name, "addresses"), "words")
	if !ok1 || !ok2 || !ok3 || w == 0 {
		return na("n/a")
	}
	return measured((pa-pl)/w, fmt.Sprintf("peak %s vs %s over %s addresses", mib(pa), mib(pl), count(w)))
}

// resultsVsDuckDB is columnar's results Writer against DuckDB writing the
// same rows, CPU time a row where measured.
func resultsVsDuckDB(d *Data) Figure {
	for k := range d.Vals {
		if k.Run != "main" || k.Pkg != "columnar" || !strings.Contains(strings.ToLower(k.Name), "duckdb") {
			continue
		}
		for _, kind := range []string{"cpu-ns/row", "ns/row"} {
			o, ok1 := d.Median("main", "columnar", k.Name, kind)
			q, ok2 := d.Median("main", "columnar", k.Name, "duckdb-"+kind)
			if ok1 && ok2 && q > 0 {
				return measured(o/q, fmt.Sprintf("%.0f vs %.0f %s (`%s`)", o, q, kind, k.Name))
			}
		}
	}
	return na("n/a")
}

// resultsPerRow is the CPU time a row of the results table alone costs
// (columnar's BenchmarkResults, from New to a committed file): the figure
// a change of the table's encoding is judged by.
func resultsPerRow(d *Data) Figure {
	v, ok := d.Median("main", "columnar", "BenchmarkResults", "cpu-ns/row")
	if !ok {
		return na("n/a")
	}
	b, _ := d.Median("main", "columnar", "BenchmarkResults", "B/row")
	return measured(v, fmt.Sprintf("%.2f bytes a row in the file", b))
}

func pgoGain(tr string) func(d *Data) Figure {
	return func(d *Data) Figure {
		name := "BenchmarkReplay/" + tr + "/lean/workers=2"
		off, ok1 := d.Median("pgo-off", "bench", name, "ns/op")
		on, ok2 := d.Median("pgo-on", "bench", name, "ns/op")
		if !ok1 || !ok2 {
			return na("n/a")
		}
		return measured(off/on, fmt.Sprintf("%s with profiles/default.pgo vs %s without", dur(on), dur(off)))
	}
}

var inProcess = []info{
	{"lean replay of uniform-1Mi over its limit, in process (`BenchmarkReplay`, `BenchmarkLimit`)", inLeanOverLimit("uniform-1Mi"), times},
	{"lean replay of histogram over its limit, in process", inLeanOverLimit("histogram"), times},
	{"lean replay of hotcounter over its limit, in process", inLeanOverLimit("hotcounter"), times},
	{"what the process adds to the lean replay of uniform (start-up, file, commit)", processCost, plusDur},
	{"default tables over lean, uniform-1Mi, in process", inAllOverLean, times},
	{"two workers over one on one core, in process", inWorkers, times},
	{"apply stage over the dense loop, scattered lanes (`BenchmarkApply`)", apply("random"), percent},
	{"apply stage over the dense loop, coalesced warps", apply("coalesced"), percent},
	{"the least an `addresses` table adds: a bare loop into 48-byte records, two goroutines", addressesFloor("addr-floor"), plusPercent},
	{"the same into 16-byte records (a million fit the L3)", addressesFloor("addr-floor-16"), plusPercent},
	{"the `addresses` rows written alone (`BenchmarkAddresses`)", addressesWrite, plusPercent},
	{"the `addresses` sketches alone, in cache, two cores (`BenchmarkSketchAdd`)", sketchesInCache, plusPercent},
	{"the `addresses` table's peak memory per distinct address, uniform-1Mi", bytesPerAddress, func(v float64) string { return fmt.Sprintf("%.0f B", v) }},
	{"`results` table against DuckDB writing the same rows", resultsVsDuckDB, times},
	{"`results` table's CPU a row, written alone (`BenchmarkResults`)", resultsPerRow, func(v float64) string { return fmt.Sprintf("%.1f ns", v) }},
	{"PGO gain, lean uniform-1Mi (time without / with the profile)", pgoGain("uniform-1Mi"), times},
	{"PGO gain, lean histogram", pgoGain("histogram"), times},
}

func renderInProcess(d *Data) string {
	var b strings.Builder
	b.WriteString("\n### In process (information)\n\n")
	b.WriteString("Medians of the in-process benchmarks of the same run: where the end-to-end time goes. No target is judged on them.\n\n")
	b.WriteString("| figure | value |\n| --- | --- |\n")
	for _, r := range inProcess {
		f := r.compute(d)
		v := f.Detail
		if f.OK {
			v = r.format(f.Value) + ": " + f.Detail
		}
		fmt.Fprintf(&b, "| %s | %s |\n", r.text, v)
	}
	return b.String()
}
