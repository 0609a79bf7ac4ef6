package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpureplay/replay/bench"
)

// Figure is one computed figure: its value and the numbers behind it.
type Figure struct {
	Value  float64
	Detail string
	OK     bool // measured
}

func na(why string) Figure { return Figure{Detail: why} }

func measured(v float64, detail string) Figure { return Figure{Value: v, Detail: detail, OK: true} }

// Target is one target of the issues' "Done when", judged end to end.
type Target struct {
	Text    string
	Compute func(d *Data) Figure
	Format  func(v float64) string
	Met     func(v float64) bool // nil: reported, no threshold
}

// e2e is bench/e2e's figure of NAME (TRACE/WHAT): the best run's wall
// time, in ns.
func (d *Data) e2e(name string) (float64, bool) {
	return d.Median("e2e", "", "BenchmarkE2E/"+name, "ns/op")
}

func (d *Data) e2eUnit(name, unit string) (float64, bool) {
	return d.Median("e2e", "", "BenchmarkE2E/"+name, unit)
}

// why is the reason bench/e2e gave for not measuring TRACE/WHAT (or the
// trace at all), or "not measured".
func (d *Data) why(tr string, whats ...string) string {
	for _, w := range append(whats, "gen") {
		if s, ok := d.Skips[tr+"/"+w]; ok {
			return "n/a: " + w + ": " + s
		}
	}
	return "n/a"
}

// limit is a trace's limit: `zstd -d` of its file, timed as a process,
// plus the dense loop over its decoded operations.
func (d *Data) limit(tr string) (zstd, dense float64, ok bool) {
	z, ok1 := d.e2e(tr + "/zstd")
	n, ok2 := d.e2e(tr + "/dense")
	return z, n, ok1 && ok2
}

// overLimit is a replay of a trace (lean, default) over its limit.
func (d *Data) overLimit(tr, what string) Figure {
	z, n, ok := d.limit(tr)
	r, ok2 := d.e2e(tr + "/" + what)
	if !ok || !ok2 {
		return na(d.why(tr, what, "zstd", "dense"))
	}
	return measured(r/(z+n), fmt.Sprintf("%s vs %s", dur(r), dur(z+n)))
}

// traces is every FAMILY-DIALECT of the families given, in order.
func traces(families ...string) []string {
	var out []string
	for _, f := range families {
		for _, dl := range bench.Dialects {
			out = append(out, f+"-"+dl)
		}
	}
	return out
}

// worst is the highest of a figure over traces, with how many of them
// meet the bound and which have none.
func worst(trs []string, bound float64, f func(d *Data, tr string) Figure) func(d *Data) Figure {
	return func(d *Data) Figure {
		var w Figure
		wtr := ""
		met, n := 0, 0
		var missing []string
		for _, tr := range trs {
			x := f(d, tr)
			if !x.OK {
				// Listed when bench/e2e said why (gen has no such
				// trace, a command failed), not when it was not asked
				// to measure it.
				if x.Detail != "n/a" {
					missing = append(missing, tr)
				}
				continue
			}
			n++
			if x.Value <= bound {
				met++
			}
			if !w.OK || x.Value > w.Value {
				w, wtr = x, tr
			}
		}
		if !w.OK {
			return na("n/a: none measured")
		}
		s := fmt.Sprintf("worst %s (%s); %d of %d within", wtr, w.Detail, met, n)
		if len(missing) > 0 {
			s += "; n/a: " + strings.Join(missing, ", ")
		}
		return measured(w.Value, s)
	}
}

func leanOver(d *Data, tr string) Figure    { return d.overLimit(tr, "lean") }
func defaultOver(d *Data, tr string) Figure { return d.overLimit(tr, "default") }

// addressesOver is what the addresses table adds to the lean replay.
func addressesOver(d *Data, tr string) Figure {
	a, ok1 := d.e2e(tr + "/addresses")
	l, ok2 := d.e2e(tr + "/lean")
	if !ok1 || !ok2 {
		return na(d.why(tr, "addresses", "lean"))
	}
	return measured(a/l-1, fmt.Sprintf("%s vs %s", dur(a), dur(l)))
}

// textTrace is the trace whose text form was timed.
func (d *Data) textTrace() string {
	for k := range d.Traces {
		if tr, ok := strings.CutSuffix(k, "/text"); ok {
			return tr
		}
	}
	return "uniform-ptx"
}

func asmOverFloor(d *Data) Figure {
	tr := d.textTrace()
	a, ok1 := d.e2e(tr + "/text-asm")
	f, ok2 := d.e2e(tr + "/text-floor")
	if !ok1 || !ok2 {
		return na(d.why(tr, "text-asm", "text-floor", "text"))
	}
	return measured(a/f, fmt.Sprintf("%s vs %s (%s)", dur(a), dur(f), textSize(d, tr)))
}

func textSize(d *Data, tr string) string {
	b, err := strconv.ParseFloat(d.Traces[tr+"/text"]["file-B"], 64)
	if err != nil {
		return tr
	}
	return tr + ", " + size(b) + " of `.tasm`"
}

// textReplay is the lean replay of the text beyond the lean replay of its
// binary form, in text floors: at most 3 is the target's "3× the floor
// plus the binary replay".
func textReplay(d *Data) Figure {
	tr := d.textTrace()
	t, ok1 := d.e2e(tr + "/text-lean")
	l, ok2 := d.e2e(tr + "/lean")
	f, ok3 := d.e2e(tr + "/text-floor")
	if !ok1 || !ok2 || !ok3 {
		return na(d.why(tr, "text-lean", "lean", "text-floor", "text"))
	}
	return measured((t-l)/f, fmt.Sprintf("%s vs %s binary + %s floor", dur(t), dur(l), dur(f)))
}

// startup is a command's wall time beyond a Go hello world's.
func startup(what string) func(d *Data) Figure {
	return func(d *Data) Figure {
		s, ok1 := d.e2e("startup/" + what)
		h, ok2 := d.e2e("startup/hello")
		if !ok1 || !ok2 {
			return na(d.why("startup", what, "hello"))
		}
		return measured(s-h, fmt.Sprintf("%s vs %s", dur(s), dur(h)))
	}
}

// ceiling is the machine's two-goroutine speed-up, best of its passes
// each, and its cross-core round trip: the best, the median and the worst
// pass.
func (d *Data) ceiling() (float64, bool) {
	g1, ok1 := d.Min("e2e", "", "BenchmarkE2E/machine/scaling/goroutines=1", "ns/op")
	g2, ok2 := d.Min("e2e", "", "BenchmarkE2E/machine/scaling/goroutines=2", "ns/op")
	return g1 / g2, ok1 && ok2
}

func (d *Data) handoff() (best, med, worst float64, ok bool) {
	const name = "BenchmarkE2E/machine/handoff"
	best, ok = d.Min("e2e", "", name, "ns/op")
	med, _ = d.Median("e2e", "", name, "ns/op")
	worst, _ = d.Max("e2e", "", name, "ns/op")
	return best, med, worst, ok
}

// machine is the line beside every figure: the machine's ceiling and
// cross-core round trip, and its load during the run.
func (d *Data) machine() string {
	var parts []string
	if c, ok := d.ceiling(); ok {
		parts = append(parts, fmt.Sprintf("two-goroutine ceiling **%.2f×**", c))
	} else {
		parts = append(parts, "two-goroutine ceiling n/a")
	}
	if b, m, w, ok := d.handoff(); ok {
		parts = append(parts, fmt.Sprintf("cross-core handoff **%.0f ns** (median of the passes; best %.0f, worst %.0f)", m, b, w))
	} else {
		parts = append(parts, "cross-core handoff n/a")
	}
	if s, e := d.Config["loadavg-start"], d.Config["loadavg-end"]; s != "" {
		parts = append(parts, fmt.Sprintf("load average %s at the start, %s at the end", s, e))
	}
	line := "Machine: " + strings.Join(parts, "; ") + "."
	if c, ok := d.ceiling(); ok && c < busyCeiling {
		line += fmt.Sprintf(" **The machine was busy during this run**: two goroutines gained %.2f× over one, where a quiet 2-core machine gives 1.8× or more;"+
			" other work shared the cores, and every figure of this run is noisier than its best of %s suggests.", c, d.Config["runs"])
	}
	return line
}

// busyCeiling: below this two-goroutine ceiling, other work shared the two
// cores during the run.
const busyCeiling = 1.5

// workers is two workers (on two cores) over one worker pinned to one core.
func workers(d *Data) Figure {
	one, ok1 := d.e2e("uniform-ptx/workers1-1core")
	two, ok2 := d.e2e("uniform-ptx/workers2")
	if !ok1 || !ok2 {
		return na(d.why("uniform-ptx", "workers1-1core", "workers2"))
	}
	s := fmt.Sprintf("%s vs %s", dur(two), dur(one))
	if c, ok := d.ceiling(); ok {
		s += fmt.Sprintf("; %.0f%% of the machine's %.2f× ceiling", 100*one/two/c, c)
	}
	if _, m, _, ok := d.handoff(); ok {
		s += fmt.Sprintf(", handoff %.0f ns", m)
	}
	return measured(one/two, s)
}

// peakLengths are the two trace lengths of the peak-memory replays.
func (d *Data) peakLengths() (short, long string, ok bool) {
	var ls []float64
	for k := range d.Vals {
		if k.Run == "e2e" && k.Unit == "maxrss-B" {
			if n, ok := strings.CutPrefix(k.Name, "BenchmarkE2E/peak/lane-ops="); ok {
				if v, err := strconv.ParseFloat(n, 64); err == nil {
					ls = append(ls, v)
				}
			}
		}
	}
	if len(ls) != 2 {
		return "", "", false
	}
	a, b := min(ls[0], ls[1]), max(ls[0], ls[1])
	return strconv.FormatFloat(a, 'f', 0, 64), strconv.FormatFloat(b, 'f', 0, 64), true
}

// peakGrowth is the default-tables replay's peak resident set at the
// longer trace over the shorter, in bytes.
func peakGrowth(d *Data) Figure {
	s, l, ok := d.peakLengths()
	if !ok {
		return na(d.why("peak", "lane-ops"))
	}
	ps, _ := d.e2eUnit("peak/lane-ops="+s, "maxrss-B")
	pl, _ := d.e2eUnit("peak/lane-ops="+l, "maxrss-B")
	ns, _ := strconv.ParseFloat(s, 64)
	nl, _ := strconv.ParseFloat(l, 64)
	return measured(pl-ps, fmt.Sprintf("%s at %s lane-ops, %s at %s", mib(ps), count(ns), mib(pl), count(nl)))
}

func plusMiB(v float64) string {
	if v < 0 {
		return "−" + mib(-v)
	}
	return "+" + mib(v)
}

func binarySize(d *Data) Figure {
	b, err := strconv.ParseFloat(d.Config["binary-B"], 64)
	if err != nil {
		return na("n/a")
	}
	return measured(b, "`bin/replay`")
}

// Targets are the targets of issues 47 and 50, judged end to end.
var Targets = []Target{
	{"lean replay¹ ≤ 3× its limit², every family in every dialect", worst(traces(bench.Families...), 3, leanOver), times, func(v float64) bool { return v <= 3 }},
	{"lean replay ≤ 2× its limit on histogram and hotcounter", worst(traces("histogram", "hotcounter"), 2, leanOver), times, func(v float64) bool { return v <= 2 }},
	{"default tables ≤ 6× the limit on uniform and histogram", worst(traces("uniform", "histogram"), 6, defaultOver), times, func(v float64) bool { return v <= 6 }},
	{"(information) default tables over the limit, the other families", worst(traces("hotcounter", "spinlock", "freduce", "bfs", "appendqueue"), 6, defaultOver), times, nil},
	{"`addresses` table adds ≤ 100% to the lean replay of uniform", worst(traces("uniform"), 1, addressesOver), plusPercent, func(v float64) bool { return v <= 1 }},
	{"`replay asm` ≤ 3× the text floor³", asmOverFloor, times, func(v float64) bool { return v <= 3 }},
	{"lean replay of the text ≤ 3× the floor + the lean replay of its binary form (in floors)", textReplay, times, func(v float64) bool { return v <= 3 }},
	{"`replay help` within 10 ms of a Go hello world", startup("help"), plusDur, func(v float64) bool { return v <= 10e6 }},
	{"a one-instruction replay, default tables, within 15 ms of a Go hello world", startup("one-inst"), plusDur, func(v float64) bool { return v <= 15e6 }},
	{"two workers ≥ 1.5× one worker pinned to one core⁴ (lean, uniform)", workers, times, func(v float64) bool { return v >= 1.5 }},
	{"peak memory flat: ≤ 128 MiB more at 5× the lane-ops⁵", peakGrowth, plusMiB, func(v float64) bool { return v <= 128<<20 }},
	{"(information) the binary's size (aim: under 30 MB)", binarySize, size, nil},
}

func cell(t Target, f Figure) string {
	if !f.OK {
		return f.Detail
	}
	return t.Format(f.Value) + ": " + f.Detail
}

func met(t Target, f Figure) string {
	switch {
	case !f.OK:
		return "n/a"
	case t.Met == nil:
		return "reported"
	case t.Met(f.Value):
		return "**met**"
	}
	return "not met"
}

// Summary is the machine's line and the targets table, for the terminal.
func Summary(d *Data) string {
	var b strings.Builder
	b.WriteString(d.machine() + "\n\n")
	b.WriteString("| target | end to end | met |\n| --- | --- | --- |\n")
	for _, t := range Targets {
		f := t.Compute(d)
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.Text, cell(t, f), met(t, f))
	}
	return b.String()
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
	if c := d.Config["runs"]; c != "" {
		parts = append(parts, "best of "+c)
	}
	if c := d.Config["cpu"]; c != "" {
		parts = append(parts, c)
	} else if c := d.Config["cpus"]; c != "" {
		parts = append(parts, c+" CPUs")
	}
	if c := d.Config["elapsed"]; c != "" {
		parts = append(parts, "`make bench` "+c)
	}
	return fmt.Sprintf("`%s` (%s)", path, strings.Join(parts, ", "))
}

// Render is the generated section of the page, markers included.
func Render(d *Data, path string) string {
	var b strings.Builder
	b.WriteString(beginMarker + " generated by `make bench` (go run ./bench/report): edits here are overwritten -->\n\n")
	fmt.Fprintf(&b, "From %s.\n\n", describe(d, path))
	b.WriteString(Summary(d))
	b.WriteString("\n¹ `-tables memory,instructions,ops`, as people run it: `replay -q -tables … -o DIR FILE.zst`, the best of the runs.\n" +
		"² `zstd -d` of the trace's file, timed as a process, plus the dense loop over its decoded operations (`bench.Ops.Apply`).\n" +
		"³ `bench/textfloor`: read the `.tasm` file, split it into lines, parse every integer after the `|`.\n" +
		"⁴ `taskset -c 0 replay -workers 1` against `replay -workers 2`.\n" +
		"⁵ the default tables on uniform streamed from `replay gen … -o -`, peak resident set from the kernel's rusage.\n\n")

	b.WriteString("### Per trace\n\n")
	b.WriteString("Best of the runs, end to end. `ops` is the operations' mix; `dense` the loop per lane-op; `cpu` the lean replay's user + system time.\n\n")
	b.WriteString("| trace | lane-ops | ops | file | zstd -d | dense | limit | lean | cpu | lean / limit | default | default / limit |\n")
	b.WriteString("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, tr := range traces(bench.Families...) {
		info := d.Traces[tr]
		row := []string{tr}
		if info == nil {
			row = append(row, d.why(tr, "dense"))
			for range 10 {
				row = append(row, "")
			}
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
			continue
		}
		lo, _ := strconv.ParseFloat(info["laneops"], 64)
		fb, _ := strconv.ParseFloat(info["file-B"], 64)
		row = append(row, count(lo), strings.ReplaceAll(info["mix"], "_", " "), size(fb))
		val := func(name string, f func(float64) string) string {
			if v, ok := d.e2e(tr + "/" + name); ok {
				return f(v)
			}
			return "n/a"
		}
		row = append(row, val("zstd", dur))
		if v, ok := d.e2eUnit(tr+"/dense", "ns/laneop"); ok {
			row = append(row, fmt.Sprintf("%.2f ns", v))
		} else {
			row = append(row, "n/a")
		}
		if z, n, ok := d.limit(tr); ok {
			row = append(row, dur(z+n))
		} else {
			row = append(row, "n/a")
		}
		row = append(row, val("lean", dur))
		if v, ok := d.e2eUnit(tr+"/lean", "cpu-ns"); ok {
			row = append(row, dur(v))
		} else {
			row = append(row, "n/a")
		}
		row = append(row, ratio(d.overLimit(tr, "lean")))
		if _, ok := d.e2e(tr + "/default"); ok {
			row = append(row, val("default", dur), ratio(d.overLimit(tr, "default")))
		} else {
			row = append(row, "—", "—")
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}

	b.WriteString("\n### The other end-to-end figures\n\n")
	b.WriteString("| command | best | median | cpu | peak RSS |\n| --- | ---: | ---: | ---: | ---: |\n")
	tt := d.textTrace()
	rows := [][2]string{
		{"startup/hello", "Go hello world (`bench/hello`)"},
		{"startup/help", "`replay help`"},
		{"startup/one-inst", "`replay` of one instruction, default tables"},
		{tt + "/text-floor", "text floor (`bench/textfloor`), " + tt},
		{tt + "/text-asm", "`replay asm`, " + tt},
		{tt + "/text-lean", "`replay -tables lean` of the `.tasm`, " + tt},
		{"uniform-ptx/workers1-1core", "`taskset -c 0 replay -workers 1`, lean, uniform-ptx"},
		{"uniform-ptx/workers2", "`replay -workers 2`, lean, uniform-ptx"},
	}
	for _, tr := range traces("uniform") {
		rows = append(rows, [2]string{tr + "/addresses", "lean + `addresses`, " + tr})
	}
	if s, l, ok := d.peakLengths(); ok {
		for _, n := range []string{s, l} {
			v, _ := strconv.ParseFloat(n, 64)
			rows = append(rows, [2]string{"peak/lane-ops=" + n, "default tables, uniform streamed, " + count(v) + " lane-ops"})
		}
	}
	for _, r := range rows {
		if _, ok := d.e2e(r[0]); !ok {
			continue
		}
		cells := []string{r[1]}
		for _, u := range []string{"ns/op", "median-ns", "cpu-ns"} {
			v, _ := d.e2eUnit(r[0], u)
			cells = append(cells, dur(v))
		}
		if v, ok := d.e2eUnit(r[0], "maxrss-B"); ok && v > 0 {
			cells = append(cells, mib(v))
		} else {
			cells = append(cells, "n/a")
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	if v, err := strconv.ParseFloat(d.Config["e2e-maxrss-B"], 64); err == nil {
		fmt.Fprintf(&b, "\nA peak RSS is never below the harness's own at the fork (%s): the kernel counts the parent's pages until the exec.\n", mib(v))
	}

	b.WriteString(renderImport(d))
	b.WriteString(renderInProcess(d))
	b.WriteString("\n" + endMarker + "\n")
	return b.String()
}

func ratio(f Figure) string {
	if !f.OK {
		return "n/a"
	}
	return times(f.Value)
}

// renderImport is the import table: `replay import accelsim` of the
// generated .traceg files (bench.WriteTraceg) in MB/s of their text, beside
// the text floor's MB/s of the .tasm, and each import's peak resident set,
// which should not grow with the file.
func renderImport(d *Data) string {
	var rows []string
	for _, name := range []string{"traceg-1x", "traceg-2x"} {
		info := d.Traces["import/"+name]
		best, ok := d.e2e("import/" + name)
		if info == nil || !ok {
			if why := d.why("import", name); why != "" && info == nil {
				rows = append(rows, "| `"+name+".traceg` | "+why+" | | | | |")
			}
			continue
		}
		fb, _ := strconv.ParseFloat(info["file-B"], 64)
		at, _ := strconv.ParseFloat(info["atomics"], 64)
		cpu, _ := d.e2eUnit("import/"+name, "cpu-ns")
		rss := "n/a"
		if v, ok := d.e2eUnit("import/"+name, "maxrss-B"); ok && v > 0 {
			rss = mib(v)
		}
		rows = append(rows, fmt.Sprintf("| `%s.traceg` | %s, %s atomics | %s | %s | **%.0f MB/s** | %s |",
			name, size(fb), count(at), dur(best), dur(cpu), fb/best*1e3, rss))
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Import\n\n")
	b.WriteString("`replay import accelsim FILE.traceg -q -o X.zst` of a generated kernel file (`bench.WriteTraceg`: tracer version 5, " +
		"atomics in every address compression among skipped opcodes), best of the runs, and of one twice as long: the peak RSS should not grow with it.\n\n")
	b.WriteString("| file | size | best | cpu | text read | peak RSS |\n| --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	tt := d.textTrace()
	if f, ok := d.e2e(tt + "/text-floor"); ok {
		if tb, err := strconv.ParseFloat(d.Traces[tt+"/text"]["file-B"], 64); err == nil {
			fmt.Fprintf(&b, "| text floor (`bench/textfloor`), %s `.tasm` | %s | %s | | **%.0f MB/s** | |\n", tt, size(tb), dur(f), tb/f*1e3)
		}
	}
	return b.String()
}
