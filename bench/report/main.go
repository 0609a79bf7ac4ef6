// Command report turns the raw output of `make bench` into the figures of
// docs/PERFORMANCE.md: it takes the median of each benchmark's runs,
// computes every target of the performance issue as a ratio within the run,
// and rewrites the part of the page between the markers
//
//	<!-- bench:begin -->
//	<!-- bench:end -->
//
// with a table of target, figure now, the old figure (the same harness run
// on the code before the redesign, bench/old.txt) and whether it is met.
// The prose around the markers is left as it is.
//
//	go run ./bench/report                       # bench/latest.txt, bench/old.txt -> docs/PERFORMANCE.md
//	go run ./bench/report -doc '' bench/x.txt   # print the figures only
//
// The input is the standard Go benchmark format: "Benchmark… N value unit
// …" lines, and "key: value" configuration lines that apply to the lines
// after them. bench/run.sh writes "run: main", "run: pgo-off" and "run:
// pgo-on" before each test binary's output, so the same benchmark measured
// by the binary built with and without the profile are told apart; the
// go test "pkg:" line names the package. It also reads TestPeakMemoryFlat's
// "peak RSS:" log line and its PASS or FAIL.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gpureplay/replay/bench"
)

const (
	beginMarker = "<!-- bench:begin"
	endMarker   = "<!-- bench:end -->"
)

func main() {
	newPath := flag.String("new", "bench/latest.txt", "raw output of this run")
	oldPath := flag.String("old", "bench/old.txt", "raw output of the old code (\"\" for none)")
	doc := flag.String("doc", "docs/PERFORMANCE.md", "page whose figures to rewrite (\"\": print only)")
	force := flag.Bool("force", false, "rewrite the page even from traces of another size than bench.LaneOps")
	flag.Parse()
	if flag.NArg() == 1 {
		*newPath = flag.Arg(0)
	} else if flag.NArg() > 1 {
		fatal(errors.New("report takes at most one input file"))
	}
	cur, err := parseFile(*newPath)
	if err != nil {
		fatal(err)
	}
	old := &Data{}
	if *oldPath != "" {
		if old, err = parseFile(*oldPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			fatal(err)
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "report: %v: no old figures\n", err)
			old = &Data{}
		}
	}
	section := Render(cur, old, *newPath, *oldPath)
	if lo, ok := cur.laneOps(); *doc != "" && !*force && (!ok || lo != bench.LaneOps) {
		fmt.Fprintf(os.Stderr, "report: %s is of traces of %s lane-ops, not the standard %d: not rewriting %s (-force does)\n",
			*newPath, cur.Config["laneops"], bench.LaneOps, *doc)
		*doc = ""
	}
	if *doc == "" {
		fmt.Print(section)
		return
	}
	page, err := os.ReadFile(*doc)
	if err != nil {
		fatal(err)
	}
	out, err := Splice(page, section)
	if err != nil {
		fatal(fmt.Errorf("%s: %w", *doc, err))
	}
	if err := os.WriteFile(*doc, out, 0o644); err != nil {
		fatal(err)
	}
	fmt.Print(TargetsOnly(cur, old))
	fmt.Fprintf(os.Stderr, "report: rewrote the figures of %s\n", *doc)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "report:", err)
	os.Exit(1)
}

// Data is one raw file: every run of every benchmark, by run label, package
// and name, and the configuration lines.
type Data struct {
	Vals   map[Key][]float64
	Config map[string]string // the first value of each key
	// TestPeakMemoryFlat: peak RSS in MiB at 2e7 and 1e8 lane-ops.
	PeakShort, PeakLong float64
	PeakSeen            bool
	PeakPassed          *bool
}

// Key names one measured quantity: a benchmark (without the -GOMAXPROCS
// suffix) and a unit, in a package, under a run label.
type Key struct{ Run, Pkg, Name, Unit string }

var (
	procsSuffix = regexp.MustCompile(`-\d+$`)
	peakLine    = regexp.MustCompile(`peak RSS: ([\d.]+) MiB at 2e7 lane-ops, ([\d.]+) MiB at 1e8`)
	peakResult  = regexp.MustCompile(`^\s*--- (PASS|FAIL): TestPeakMemoryFlat\b`)
	configLine  = regexp.MustCompile(`^([a-z][a-zA-Z0-9_-]*): *(.*)$`)
)

func parseFile(path string) (*Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}

// Parse reads the benchmark format.
func Parse(r io.Reader) (*Data, error) {
	d := &Data{Vals: map[Key][]float64{}, Config: map[string]string{}}
	run, pkg := "main", ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := peakLine.FindStringSubmatch(line); m != nil {
			d.PeakShort, _ = strconv.ParseFloat(m[1], 64)
			d.PeakLong, _ = strconv.ParseFloat(m[2], 64)
			d.PeakSeen = true
			continue
		}
		if m := peakResult.FindStringSubmatch(line); m != nil {
			ok := m[1] == "PASS"
			d.PeakPassed = &ok
			continue
		}
		if strings.HasPrefix(line, "Benchmark") {
			fs := strings.Fields(line)
			if len(fs) < 4 || len(fs)%2 != 0 {
				continue // a benchmark's name printed alone, or a log line
			}
			if _, err := strconv.ParseUint(fs[1], 10, 64); err != nil {
				continue
			}
			name := procsSuffix.ReplaceAllString(fs[0], "")
			for i := 2; i+1 < len(fs); i += 2 {
				v, err := strconv.ParseFloat(fs[i], 64)
				if err != nil {
					continue
				}
				k := Key{run, pkg, name, fs[i+1]}
				d.Vals[k] = append(d.Vals[k], v)
			}
			continue
		}
		if m := configLine.FindStringSubmatch(line); m != nil {
			switch m[1] {
			case "run":
				run = m[2]
			case "pkg":
				pkg = m[2][strings.LastIndexByte(m[2], '/')+1:]
			}
			if _, seen := d.Config[m[1]]; !seen {
				d.Config[m[1]] = m[2]
			}
		}
	}
	return d, sc.Err()
}

// Median of a benchmark's runs; ok is false when it has none.
func (d *Data) Median(run, pkg, name, unit string) (float64, bool) {
	return median(d.Vals[Key{run, pkg, name, unit}])
}

func median(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// spellFactor: a replay whose cross-core round trip (handoff-ns, measured
// before it: bench.HandoffNs) took more than this many times the run's
// fastest ran in one of the machine's slow spells, in which a replay on
// two cores takes up to twice as long and one on one core as long as
// ever. The spells measured 3-5 times the usual 90-130 ns.
const spellFactor = 2

// handoffFloor is the run's fastest cross-core round trip, over every
// replay that measured one.
func (d *Data) handoffFloor() (float64, bool) {
	best := math.Inf(1)
	for k, vs := range d.Vals {
		if k.Run == "main" && k.Unit == "handoff-ns" {
			for _, v := range vs {
				best = min(best, v)
			}
		}
	}
	return best, !math.IsInf(best, 1)
}

// spells splits the runs of a benchmark (run main, package bench) into the
// times of those outside the machine's slow spells and the count of those
// in one; ok is false when its runs have no handoff-ns to tell them by.
func (d *Data) spells(name string) (outside []float64, in int, ok bool) {
	ns := d.Vals[Key{"main", "bench", name, "ns/op"}]
	ho := d.Vals[Key{"main", "bench", name, "handoff-ns"}]
	floor, ok := d.handoffFloor()
	if !ok || len(ns) == 0 || len(ns) != len(ho) {
		return nil, 0, false
	}
	for i, v := range ns {
		if ho[i] > spellFactor*floor {
			in++
		} else {
			outside = append(outside, v)
		}
	}
	return outside, in, true
}

// spellReplays counts the run's replays that measured a cross-core round
// trip, and those of them in a slow spell, with the slowest round trip.
func (d *Data) spellReplays() (n, in int, floor, worst float64) {
	floor, ok := d.handoffFloor()
	if !ok {
		return 0, 0, 0, 0
	}
	for k, vs := range d.Vals {
		if k.Run != "main" || k.Unit != "handoff-ns" {
			continue
		}
		for _, v := range vs {
			n++
			if v > spellFactor*floor {
				in++
			}
			worst = max(worst, v)
		}
	}
	return n, in, floor, worst
}

// Runs is how many runs a benchmark has.
func (d *Data) Runs(run, pkg, name, unit string) int { return len(d.Vals[Key{run, pkg, name, unit}]) }

// The helpers below name the benchmarks of bench/replay_test.go.

func (d *Data) ns(name string) (float64, bool) { return d.Median("main", "bench", name, "ns/op") }

func (d *Data) limit(tr string) (zstd, dense float64, ok bool) {
	z, ok1 := d.ns("BenchmarkLimit/" + tr + "/zstd-cli")
	n, ok2 := d.ns("BenchmarkLimit/" + tr + "/dense")
	return z, n, ok1 && ok2
}

func (d *Data) replay(tr, variant string, workers int) (float64, bool) {
	return d.ns(fmt.Sprintf("BenchmarkReplay/%s/%s/workers=%d", tr, variant, workers))
}

func (d *Data) replayMetric(tr, variant string, workers int, unit string) (float64, bool) {
	return d.Median("main", "bench", fmt.Sprintf("BenchmarkReplay/%s/%s/workers=%d", tr, variant, workers), unit)
}

// Figure is one computed figure: its value and the numbers behind it.
type Figure struct {
	Value  float64
	Detail string
	OK     bool // measured
	Busy   bool // measured, but against a ceiling that says the machine was busy
}

func none(why string) Figure { return Figure{Detail: why} }

func measured(v float64, detail string) Figure { return Figure{Value: v, Detail: detail, OK: true} }

// Target is one line of the "Done when".
type Target struct {
	Text    string
	Compute func(d *Data) Figure
	Format  func(v float64) string
	Met     func(v float64) bool // nil: reported, no threshold
}

func leanOverLimit(tr string) func(d *Data) Figure {
	return func(d *Data) Figure {
		z, n, ok := d.limit(tr)
		r, ok2 := d.replay(tr, "lean", 2)
		if !ok || !ok2 {
			return none("not measured")
		}
		return measured(r/(z+n), fmt.Sprintf("%s vs %s (zstd -d %s + dense %s)", dur(r), dur(z+n), dur(z), dur(n)))
	}
}

func addressesTime(d *Data) Figure {
	a, ok1 := d.replay("uniform-1Mi", "addresses", 2)
	l, ok2 := d.replay("uniform-1Mi", "lean", 2)
	if !ok1 || !ok2 {
		return none("not measured")
	}
	return measured(a/l-1, fmt.Sprintf("%s vs %s", dur(a), dur(l)))
}

// addressesFloor is the least any addresses table could add to the lean
// replay of uniform-1Mi: BenchmarkLimit's addr-floor (each lane-op counted
// into a 48-byte record of its word, on two goroutines) over the lean
// replay; with name addr-floor-16, the same into 16-byte records.
func addressesFloor(name string) func(d *Data) Figure {
	return func(d *Data) Figure {
		f, ok1 := d.ns("BenchmarkLimit/uniform-1Mi/" + name)
		l, ok2 := d.replay("uniform-1Mi", "lean", 2)
		if !ok1 || !ok2 {
			return none("not measured")
		}
		return measured(f/l, fmt.Sprintf("%s vs %s", dur(f), dur(l)))
	}
}

// addressesWrite is what writing the addresses table's rows alone adds to
// the lean replay of uniform-1Mi: columnar's BenchmarkAddresses (wall time
// a row, from rows in memory to a committed file) times the replay's
// addresses, over the lean replay.
func addressesWrite(d *Data) Figure {
	perRow, ok1 := d.Median("main", "columnar", "BenchmarkAddresses", "ns/row")
	cpu, ok2 := d.Median("main", "columnar", "BenchmarkAddresses", "cpu-ns/row")
	rows, ok3 := d.replayMetric("uniform-1Mi", "addresses", 2, "words")
	l, ok4 := d.replay("uniform-1Mi", "lean", 2)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return none("not measured")
	}
	w := perRow * rows
	return measured(w/l, fmt.Sprintf("%s for %s rows vs %s (`BenchmarkAddresses`: %.1f ns/row, %.1f cpu-ns/row)", dur(w), count(rows), dur(l), perRow, cpu))
}

// sketchesInCache is the least the addresses table's sketches could add to
// the lean replay of uniform-1Mi: engine's BenchmarkSketchAdd (both
// sketches of an access updated, the entries in cache, uniform-1Mi's
// pattern) for each of the trace's lane-ops, split evenly over two cores,
// over the lean replay.
func sketchesInCache(d *Data) Figure {
	per, ok1 := d.Median("main", "engine", "BenchmarkSketchAdd", "ns/access")
	n, ok2 := d.laneOps()
	l, ok3 := d.replay("uniform-1Mi", "lean", 2)
	if !ok1 || !ok2 || !ok3 {
		return none("not measured")
	}
	t := per * n / 2
	return measured(t/l, fmt.Sprintf("%s vs %s (`BenchmarkSketchAdd`: %.1f ns an access, × %s accesses, over two cores)", dur(t), dur(l), per, count(n)))
}

// bytesPerAddress is the addresses table's peak memory per distinct
// address: peak RSS with it minus without, over the words touched.
func bytesPerAddress(tr string) func(d *Data) Figure {
	return func(d *Data) Figure {
		pa, ok1 := d.replayMetric(tr, "addresses", 2, "peakRSS-B")
		pl, ok2 := d.replayMetric(tr, "lean", 2, "peakRSS-B")
		w, ok3 := d.replayMetric(tr, "addresses", 2, "words")
		if !ok1 || !ok2 || !ok3 || w == 0 {
			return none("not measured")
		}
		return measured((pa-pl)/w, fmt.Sprintf("peak %s vs %s over %s addresses", mib(pa), mib(pl), count(w)))
	}
}

// resultsPerRow is what the results table adds to the lean replay of
// uniform-1Mi, per row (one per lane-op).
func resultsPerRow(d *Data) (float64, string, bool) {
	r, ok1 := d.replay("uniform-1Mi", "results", 2)
	l, ok2 := d.replay("uniform-1Mi", "lean", 2)
	lo, ok3 := d.laneOps()
	if !ok1 || !ok2 || !ok3 {
		return 0, "", false
	}
	return (r - l) / lo, fmt.Sprintf("+%s over %s rows", dur(r-l), count(lo)), true
}

func (d *Data) laneOps() (float64, bool) {
	v, err := strconv.ParseFloat(d.Config["laneops"], 64)
	return v, err == nil && v > 0
}

// duckDB reads the columnar package's comparison with DuckDB
// (columnar/bench_test.go, BenchmarkResultsVsDuckDB: the results table's
// Writer and DuckDB, one thread, zstd, writing the same rows to Parquet):
// the first benchmark of package columnar whose name contains "duckdb"
// (any case). Each side's cost per row is its CPU time where the benchmark
// measured it (cpu-ns/row, duckdb-cpu-ns/row: the Writer encodes on a
// goroutine of its own), else its wall time (ns/row, duckdb-ns/row).
func (d *Data) duckDB() (ours, duck float64, detail string, ok bool) {
	var names []string
	seen := map[string]bool{}
	for k := range d.Vals {
		if k.Run == "main" && k.Pkg == "columnar" && !seen[k.Name] && strings.Contains(strings.ToLower(k.Name), "duckdb") {
			seen[k.Name] = true
			names = append(names, k.Name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		for _, kind := range []string{"cpu-ns/row", "ns/row"} {
			o, ok1 := d.Median("main", "columnar", n, kind)
			k, ok2 := d.Median("main", "columnar", n, "duckdb-"+kind)
			if ok1 && ok2 && k > 0 {
				return o, k, fmt.Sprintf("`%s`, %s", n, kind), true
			}
		}
	}
	return 0, 0, "", false
}

func resultsVsDuckDB(d *Data) Figure {
	replay, detail, ok := resultsPerRow(d)
	ours, duck, which, ok2 := d.duckDB()
	inReplay := ""
	if ok {
		inReplay = fmt.Sprintf("in a replay the results table adds %.0f ns/row (%s)", replay, detail)
	}
	if !ok2 {
		if ok {
			return none(inReplay + "; no DuckDB benchmark in columnar/")
		}
		return none("not measured")
	}
	s := fmt.Sprintf("%.0f vs %.0f ns/row (%s)", ours, duck, which)
	if ok {
		s += "; " + inReplay
	}
	return measured(ours/duck, s)
}

// speedup is the lean replay of uniform-1Mi with two workers on two cores
// over one worker on one core (lean-1core: GOMAXPROCS 1), the same terms as
// the machine's ceiling (one busy goroutine against two).
//
// The old run (bench/old.txt) predates lean-1core: its one-core replays are
// in a later run of the same harness on the old code, "run: onecore", with
// two-worker replays of their own, so that the ratio is still within one
// run; a run of that name, where present, is used for both.
func speedup(d *Data) Figure {
	f, _ := speedupIn(d)
	return f
}

// speedupIn is speedup and the run it was measured in.
func speedupIn(d *Data) (Figure, string) {
	for _, run := range []string{"onecore", "main"} {
		one, ok1 := d.Median(run, "bench", "BenchmarkReplay/uniform-1Mi/lean-1core/workers=1", "ns/op")
		two, ok2 := d.Median(run, "bench", "BenchmarkReplay/uniform-1Mi/lean/workers=2", "ns/op")
		if ok1 && ok2 {
			return measured(one/two, fmt.Sprintf("%s on two cores vs %s on one", dur(two), dur(one))), run
		}
	}
	return none("not measured"), ""
}

// workersOnTwoCores is two workers over one with both cores available to
// each: one worker's replay already overlaps reading, computing and
// encoding on both cores, so this says what a second worker adds to that.
func workersOnTwoCores(d *Data) Figure {
	one, ok1 := d.replay("uniform-1Mi", "lean", 1)
	two, ok2 := d.replay("uniform-1Mi", "lean", 2)
	if !ok1 || !ok2 {
		return none("not measured")
	}
	return measured(one/two, fmt.Sprintf("%s vs %s", dur(two), dur(one)))
}

func (d *Data) ceiling() (float64, bool) { return d.ceilingIn("main") }

// ceilingIn is the machine's two-goroutine speed-up in one run.
func (d *Data) ceilingIn(run string) (float64, bool) {
	g1, ok1 := d.Median(run, "bench", "BenchmarkMachineScaling/words=1048576/goroutines=1", "ns/op")
	g2, ok2 := d.Median(run, "bench", "BenchmarkMachineScaling/words=1048576/goroutines=2", "ns/op")
	return g1 / g2, ok1 && ok2
}

// speedupOfCeiling is speedup over the ceiling measured in the same run.
func speedupOfCeiling(d *Data) Figure {
	s, run := speedupIn(d)
	c, ok := d.ceilingIn(run)
	if !s.OK || !ok {
		return none("not measured")
	}
	// Below 1.3x, other work shared the two cores: the ratio to such a
	// ceiling says nothing about the replay.
	return Figure{Value: s.Value / c, Detail: fmt.Sprintf("%.2f× of the machine's %.2f× (`BenchmarkMachineScaling`, 4 MiB each)", s.Value, c),
		OK: true, Busy: c < busyCeiling}
}

// speedupOutsideSpells is speedupOfCeiling with the two-worker replays
// that ran in one of the machine's slow spells left out: the one-core
// replays, which hand nothing from core to core, are taken whole, as is
// the ceiling, whose goroutines share nothing.
func speedupOutsideSpells(d *Data) Figure {
	one, ok1 := d.Median("main", "bench", "BenchmarkReplay/uniform-1Mi/lean-1core/workers=1", "ns/op")
	outside, in, ok2 := d.spells("BenchmarkReplay/uniform-1Mi/lean/workers=2")
	c, ok3 := d.ceiling()
	if !ok1 || !ok2 || !ok3 || len(outside) == 0 {
		return none("not measured")
	}
	two, _ := median(outside)
	return Figure{Value: one / two / c, Detail: fmt.Sprintf("%.2f× of the machine's %.2f× (%s on two cores vs %s on one; %d of %d two-worker replays in a spell left out)",
		one/two, c, dur(two), dur(one), in, in+len(outside)), OK: true, Busy: c < busyCeiling}
}

// apply is the engine's apply stage over the dense loop on the same
// accesses (engine/apply_bench_test.go); "scattered" is the benchmark's
// "random" pattern until it is renamed.
func apply(patterns ...string) func(d *Data) Figure {
	return func(d *Data) Figure {
		for _, p := range patterns {
			e, ok1 := d.Median("main", "engine", "BenchmarkApply/"+p+"/engine", "ns/op")
			n, ok2 := d.Median("main", "engine", "BenchmarkApply/"+p+"/dense", "ns/op")
			if ok1 && ok2 {
				return measured(n/e, fmt.Sprintf("%s vs %s per add (`%s`)", dur(e), dur(n), p))
			}
		}
		return none("not measured")
	}
}

func pgoGain(tr string) func(d *Data) Figure {
	return func(d *Data) Figure {
		name := "BenchmarkReplay/" + tr + "/lean/workers=2"
		off, ok1 := d.Median("pgo-off", "bench", name, "ns/op")
		on, ok2 := d.Median("pgo-on", "bench", name, "ns/op")
		if !ok1 || !ok2 {
			return none("not measured")
		}
		return measured(off/on, fmt.Sprintf("%s with profiles/default.pgo vs %s without", dur(on), dur(off)))
	}
}

func peakFlat(d *Data) Figure {
	if !d.PeakSeen {
		return none("not measured")
	}
	v := 0.0
	if d.PeakPassed != nil && *d.PeakPassed {
		v = 1
	}
	return Figure{Value: v, Detail: fmt.Sprintf("%.0f MiB at 2·10^7 lane-ops, %.0f MiB at 10^8 (`TestPeakMemoryFlat`)", d.PeakShort, d.PeakLong),
		OK: d.PeakPassed != nil}
}

func allTables(d *Data) Figure {
	t, ok := d.replay("uniform-1Mi", "all", 2)
	if !ok {
		return none("not measured")
	}
	z, n, ok2 := d.limit("uniform-1Mi")
	s := dur(t)
	if p, ok := d.replayMetric("uniform-1Mi", "all", 2, "peakRSS-B"); ok {
		s += ", peak " + mib(p)
	}
	if !ok2 {
		return measured(math.NaN(), s)
	}
	return measured(t/(z+n), s)
}

func times(v float64) string {
	switch {
	case math.IsNaN(v):
		return ""
	case v < 10:
		return fmt.Sprintf("%.2f×", v)
	case v < 100:
		return fmt.Sprintf("%.1f×", v)
	}
	return fmt.Sprintf("%.0f×", v)
}

func percent(v float64) string {
	if math.Abs(v) < 0.1 {
		return fmt.Sprintf("%.1f%%", 100*v)
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

func plusPercent(v float64) string { return "+" + percent(v) }

func bytesPer(v float64) string { return fmt.Sprintf("%.0f B", v) }

func passFail(v float64) string {
	if v == 1 {
		return "passes"
	}
	return "fails"
}

// Targets are the "Done when", in its order.
var Targets = []Target{
	{"lean replay¹ of uniform over 1 Mi words ≤ 3× its limit²", leanOverLimit("uniform-1Mi"), times, func(v float64) bool { return v <= 3 }},
	{"lean replay of uniform over 64 Mi words ≤ 3× its limit", leanOverLimit("uniform-64Mi"), times, func(v float64) bool { return v <= 3 }},
	{"lean replay of histogram (256 bins) ≤ 2× its limit", leanOverLimit("histogram"), times, func(v float64) bool { return v <= 2 }},
	{"lean replay of hotcounter ≤ 2× its limit", leanOverLimit("hotcounter"), times, func(v float64) bool { return v <= 2 }},
	{"`addresses` table adds ≤ 50% to the lean replay of uniform (1 Mi words)", addressesTime, plusPercent, func(v float64) bool { return v <= 0.5 }},
	{"(information) the least an `addresses` table can add: a bare loop counting each lane-op into a 48-byte record of its word, two goroutines", addressesFloor("addr-floor"), plusPercent, nil},
	{"(information) the same loop into 16-byte records, no room for the sketches: a million of them fit the 32 MiB L3, a million of 48 bytes do not", addressesFloor("addr-floor-16"), plusPercent, nil},
	{"(information) the `addresses` table's rows written alone, from rows in memory to a committed file", addressesWrite, plusPercent, nil},
	{"(information) the `addresses` table's sketches alone, their entries in cache, both cores", sketchesInCache, plusPercent, nil},
	{"`addresses` table ≤ 64 B of peak memory per distinct address (uniform, 1 Mi words)", bytesPerAddress("uniform-1Mi"), bytesPer, func(v float64) bool { return v <= 64 }},
	{"`results` table costs no more per row than DuckDB writing the same rows to Parquet", resultsVsDuckDB, times, func(v float64) bool { return v <= 1 }},
	{"two workers (two cores) ≥ 1.35× one (one core)³ (lean, uniform, 1 Mi words)", speedup, times, func(v float64) bool { return v >= 1.35 }},
	{"two workers ≥ 90% of the machine's two-goroutine ceiling", speedupOfCeiling, percent, func(v float64) bool { return v >= 0.9 }},
	{"(information) two workers ≥ 90% of the ceiling, outside the machine's slow spells⁴", speedupOutsideSpells, percent, nil},
	{"(information) two workers over one, each with both cores", workersOnTwoCores, times, nil},
	{"apply stage ≥ 25% of the dense loop, scattered lanes", apply("scattered", "random"), percent, func(v float64) bool { return v >= 0.25 }},
	{"apply stage ≥ 50% of the dense loop, coalesced warps", apply("coalesced"), percent, func(v float64) bool { return v >= 0.5 }},
	{"PGO gain, lean uniform (1 Mi words), 2 workers: time without / with the profile", pgoGain("uniform-1Mi"), times, nil},
	{"PGO gain, lean histogram, 2 workers", pgoGain("histogram"), times, nil},
	{"peak memory flat in trace length", peakFlat, passFail, func(v float64) bool { return v == 1 }},
	{"(information) all tables, uniform (1 Mi words), 2 workers: time over the limit", allTables, times, nil},
}

func cell(t Target, f Figure) string {
	if !f.OK {
		return f.Detail
	}
	v := t.Format(f.Value)
	if v == "" {
		return f.Detail
	}
	return v + ": " + f.Detail
}

func met(t Target, f Figure) string {
	switch {
	case !f.OK:
		return "—"
	case f.Busy:
		return "— (machine busy)"
	case t.Met == nil:
		return "reported"
	case t.Met(f.Value):
		return "**yes**"
	}
	return "no"
}

func describe(d *Data, path string) string {
	var parts []string
	if c := d.Config["commit"]; c != "" {
		parts = append(parts, "commit "+c)
	}
	if c := d.Config["date"]; c != "" {
		parts = append(parts, c)
	}
	if lo, ok := d.laneOps(); ok {
		parts = append(parts, count(lo)+" lane-ops a trace")
	}
	if n := d.Runs("main", "bench", "BenchmarkReplay/uniform-1Mi/lean/workers=2", "ns/op"); n > 0 {
		parts = append(parts, fmt.Sprintf("%d runs", n))
	}
	if c := d.Config["cpu"]; c != "" {
		parts = append(parts, c)
	}
	return fmt.Sprintf("`%s` (%s)", path, strings.Join(parts, ", "))
}

// TargetsOnly is the targets table alone, for the terminal.
func TargetsOnly(cur, old *Data) string {
	var b strings.Builder
	b.WriteString("| target | now | old | met |\n| --- | --- | --- | --- |\n")
	for _, t := range Targets {
		f, o := t.Compute(cur), t.Compute(old)
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", t.Text, cell(t, f), cell(t, o), met(t, f))
	}
	return b.String()
}

// Render is the generated section of the page, markers included.
func Render(cur, old *Data, curPath, oldPath string) string {
	var b strings.Builder
	b.WriteString(beginMarker + " generated by `make bench` (go run ./bench/report): edits here are overwritten -->\n\n")
	fmt.Fprintf(&b, "Now: %s. Old: %s.\n", describe(cur, curPath), describe(old, oldPath))
	b.WriteString("Each figure is the median of the runs; each ratio is of two medians of the same file.")
	for _, r := range []struct {
		name string
		d    *Data
	}{{"this run", cur}, {"the old run", old}} {
		// Two goroutines on a quiet 2-core machine gain 1.4-1.5x over one:
		// much less means other work shared the cores during the run.
		if c, ok := r.d.ceiling(); ok && c < busyCeiling {
			fmt.Fprintf(&b, " **The machine was busy during %s**: two goroutines of `BenchmarkMachineScaling` gained %.2f× over one "+
				"(1.4-1.5× when quiet), so its figures are noisy.", r.name, c)
		}
	}
	if n, in, floor, worst := cur.spellReplays(); in > 0 {
		fmt.Fprintf(&b, " **%d of this run's %d replays ran in one of the machine's slow spells⁴** (a cross-core round trip of up to %.0f ns, against %.0f ns at best): "+
			"a figure most of whose runs fell in a spell is the spell's.", in, n, worst, floor)
	}
	b.WriteString("\n\n")
	b.WriteString(TargetsOnly(cur, old))
	b.WriteString("\n¹ `-tables memory,instructions,ops`, 2 workers, Parquet, into a temporary directory.\n" +
		"² the limit of a trace: `zstd -d` of its file plus the bare dense loop over its decoded lanes.\n" +
		"³ one worker on one core: the lean replay with GOMAXPROCS 1 (`lean-1core`), as the ceiling's one goroutine has one core; " +
		"with both cores, one worker already overlaps reading, computing and encoding (the information row).\n" +
		"⁴ a slow spell: a replay before which a cache line's round trip between two cores (`handoff-ns`, `bench.HandoffNs`) took over " +
		fmt.Sprintf("%d×", spellFactor) + " the run's fastest; this VM has spells of tens of seconds in which it takes 3-5 times as long, " +
		"and a replay on two cores up to twice as long, one on one core as long as ever.\n\n")

	b.WriteString("### Per trace\n\n")
	b.WriteString("Medians now, and (in parentheses) old. Times per whole trace; `lean / limit` uses 2 workers.\n\n")
	b.WriteString("| trace | file | zstd -d | dense loop | reader | lean, 1 worker | lean, 2 workers | outside spells⁴ | + addresses | all tables | lean / limit | 2 workers / 1 |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, tr := range traceNames {
		row := []string{tr}
		row = append(row, both(cur, old, func(d *Data) string {
			if v, ok := d.Median("main", "bench", "BenchmarkLimit/"+tr+"/reader", "file-B"); ok {
				return size(v)
			}
			return ""
		}))
		for _, name := range []string{"BenchmarkLimit/" + tr + "/zstd-cli", "BenchmarkLimit/" + tr + "/dense", "BenchmarkLimit/" + tr + "/reader",
			"BenchmarkReplay/" + tr + "/lean/workers=1", "BenchmarkReplay/" + tr + "/lean/workers=2", "",
			"BenchmarkReplay/" + tr + "/addresses/workers=2", "BenchmarkReplay/" + tr + "/all/workers=2"} {
			if name == "" {
				// The lean replay on two workers without the runs of
				// the machine's slow spells: their median, and how
				// many they are of all.
				row = append(row, both(cur, old, func(d *Data) string {
					outside, in, ok := d.spells("BenchmarkReplay/" + tr + "/lean/workers=2")
					v, ok2 := median(outside)
					if !ok || !ok2 {
						return ""
					}
					return fmt.Sprintf("%s (%d of %d)", dur(v), len(outside), len(outside)+in)
				}))
				continue
			}
			row = append(row, both(cur, old, func(d *Data) string {
				if v, ok := d.ns(name); ok {
					return dur(v)
				}
				return ""
			}))
		}
		row = append(row, both(cur, old, func(d *Data) string {
			if f := leanOverLimit(tr)(d); f.OK {
				return times(f.Value)
			}
			return ""
		}))
		row = append(row, both(cur, old, func(d *Data) string {
			one, ok1 := d.replay(tr, "lean", 1)
			two, ok2 := d.replay(tr, "lean", 2)
			if !ok1 || !ok2 {
				return ""
			}
			return times(one / two)
		}))
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}

	b.WriteString("\n### Peak memory per replay\n\n")
	b.WriteString("The highest resident set during the replay above the one before it (`peakRSS-B`), 2 workers; " +
		"`per address` is (with addresses − lean) over the distinct addresses (the memory table's rows).\n\n")
	b.WriteString("| trace | distinct addresses | lean | + addresses | all tables | per address |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, tr := range traceNames {
		row := []string{tr, both(cur, old, func(d *Data) string {
			if w, ok := d.replayMetric(tr, "lean", 2, "words"); ok {
				return count(w)
			}
			return ""
		})}
		for _, v := range []string{"lean", "addresses", "all"} {
			row = append(row, both(cur, old, func(d *Data) string {
				if p, ok := d.replayMetric(tr, v, 2, "peakRSS-B"); ok {
					return mib(p)
				}
				return ""
			}))
		}
		row = append(row, both(cur, old, func(d *Data) string {
			// Per address only where there are many: a few hundred
			// addresses' share is lost in the noise of a peak.
			if f := bytesPerAddress(tr)(d); f.OK && strings.HasPrefix(tr, "uniform") {
				return bytesPer(f.Value)
			}
			return ""
		}))
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	b.WriteString("\n" + endMarker + "\n")
	return b.String()
}

// busyCeiling: two goroutines of BenchmarkMachineScaling gain 1.4-1.5x
// over one on the quiet 2-core machine; less than this, other work shared
// the cores during the run.
const busyCeiling = 1.3

var traceNames = []string{"uniform-1Mi", "uniform-64Mi", "histogram", "hotcounter"}

// both is "now (old)", "now" when old is missing, "—" when now is.
func both(cur, old *Data, f func(d *Data) string) string {
	n, o := f(cur), f(old)
	switch {
	case n == "" && o == "":
		return "—"
	case n == "":
		return "— (" + o + ")"
	case o == "":
		return n
	}
	return n + " (" + o + ")"
}

// Splice replaces the page's section between the markers with section.
func Splice(page []byte, section string) ([]byte, error) {
	i := bytes.Index(page, []byte(beginMarker))
	j := bytes.Index(page, []byte(endMarker))
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %q … %q section", beginMarker+" -->", endMarker)
	}
	j += len(endMarker)
	if j < len(page) && page[j] == '\n' {
		j++
	}
	out := append([]byte(nil), page[:i]...)
	out = append(out, section...)
	return append(out, page[j:]...), nil
}

func dur(ns float64) string {
	switch a := math.Abs(ns); {
	case a < 1e3:
		return sig(ns, "ns")
	case a < 1e6:
		return sig(ns/1e3, "µs")
	case a < 1e9:
		return sig(ns/1e6, "ms")
	}
	return sig(ns/1e9, "s")
}

// sig prints v with three significant digits.
func sig(v float64, unit string) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	case a >= 10:
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.2f %s", v, unit)
}

func mib(b float64) string {
	if math.Abs(b) >= 1<<30 {
		return sig(b/(1<<30), "GiB")
	}
	return sig(b/(1<<20), "MiB")
}

func size(b float64) string {
	switch {
	case b >= 1e6:
		return sig(b/1e6, "MB")
	case b >= 1e3:
		return sig(b/1e3, "kB")
	}
	return fmt.Sprintf("%.0f B", b)
}

func count(v float64) string {
	switch {
	case v >= 1e6:
		return sig(v/1e6, "M")
	case v >= 1e3:
		return sig(v/1e3, "K")
	}
	return fmt.Sprintf("%.0f", v)
}
