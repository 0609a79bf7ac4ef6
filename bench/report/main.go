// Command report turns the raw output of `make bench` into the figures of
// docs/PERFORMANCE.md: every target as a ratio within the run, measured end
// to end (bench/e2e: the built command timed as a process, best of its
// runs), with the machine's two-goroutine ceiling and cross-core round
// trip beside them, and the in-process benchmarks that explain where the
// time goes. It rewrites the part of the page between the markers
//
//	<!-- bench:begin -->
//	<!-- bench:end -->
//
// and leaves the prose around them as it is.
//
//	go run ./bench/report                       # bench/latest.txt -> docs/PERFORMANCE.md
//	go run ./bench/report -doc '' bench/x.txt   # print the figures only
//
// The input is the standard Go benchmark format: "Benchmark… N value unit
// …" lines, and "key: value" configuration lines that apply to the lines
// after them. "run: e2e" precedes bench/e2e's lines, "run: main",
// "run: pgo-off" and "run: pgo-on" each in-process test binary's; the go
// test "pkg:" line names the package. bench/e2e also writes "trace: NAME
// key=value…" for each trace and "skip: NAME/WHAT: why" for what it could
// not measure: a figure without its measurements is "n/a", with the why
// where there is one, never a failure of the report.
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
	section := Render(cur, *newPath)
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
	fmt.Print(Summary(cur))
	fmt.Fprintf(os.Stderr, "report: rewrote the figures of %s\n", *doc)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "report:", err)
	os.Exit(1)
}

// Data is one raw file: every value of every benchmark, by run label,
// package and name, and the configuration lines.
type Data struct {
	Vals   map[Key][]float64
	Config map[string]string // the first value of each key
	// Traces holds bench/e2e's "trace:" lines: each trace's key=value
	// fields (laneops, file-B, words, mix); "text: NAME" lines as
	// NAME/text and "import: NAME" lines (a generated .traceg: file-B,
	// lines, atomics, blocks) as import/NAME.
	Traces map[string]map[string]string
	// Skips holds bench/e2e's "skip:" lines: why NAME/WHAT has no figure.
	Skips map[string]string
}

// Key names one measured quantity: a benchmark (without the -GOMAXPROCS
// suffix) and a unit, in a package, under a run label.
type Key struct{ Run, Pkg, Name, Unit string }

var (
	procsSuffix = regexp.MustCompile(`-\d+$`)
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
	d := &Data{Vals: map[Key][]float64{}, Config: map[string]string{},
		Traces: map[string]map[string]string{}, Skips: map[string]string{}}
	run, pkg := "main", ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
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
		m := configLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch m[1] {
		case "run":
			run, pkg = m[2], ""
		case "pkg":
			pkg = m[2][strings.LastIndexByte(m[2], '/')+1:]
		case "trace", "text", "import":
			fs := strings.Fields(m[2])
			if len(fs) == 0 {
				continue
			}
			name := fs[0]
			switch m[1] {
			case "text":
				name += "/text"
			case "import":
				name = "import/" + name
			}
			kv := map[string]string{}
			for _, f := range fs[1:] {
				if k, v, ok := strings.Cut(f, "="); ok {
					kv[k] = v
				}
			}
			d.Traces[name] = kv
			continue
		case "skip":
			if what, why, ok := strings.Cut(m[2], ": "); ok {
				d.Skips[what] = why
			}
			continue
		}
		if _, seen := d.Config[m[1]]; !seen {
			d.Config[m[1]] = m[2]
		}
	}
	return d, sc.Err()
}

// Median of a benchmark's values; ok is false when it has none.
func (d *Data) Median(run, pkg, name, unit string) (float64, bool) {
	return median(d.Vals[Key{run, pkg, name, unit}])
}

// Min of a benchmark's values.
func (d *Data) Min(run, pkg, name, unit string) (float64, bool) {
	vs := d.Vals[Key{run, pkg, name, unit}]
	if len(vs) == 0 {
		return 0, false
	}
	m := vs[0]
	for _, v := range vs[1:] {
		m = min(m, v)
	}
	return m, true
}

// Max of a benchmark's values.
func (d *Data) Max(run, pkg, name, unit string) (float64, bool) {
	vs := d.Vals[Key{run, pkg, name, unit}]
	if len(vs) == 0 {
		return 0, false
	}
	m := vs[0]
	for _, v := range vs[1:] {
		m = max(m, v)
	}
	return m, true
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

func (d *Data) laneOps() (float64, bool) {
	v, err := strconv.ParseFloat(d.Config["laneops"], 64)
	return v, err == nil && v > 0
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

func plusPercent(v float64) string {
	if v < 0 {
		return percent(v)
	}
	return "+" + percent(v)
}

func plusDur(v float64) string {
	if v < 0 {
		return "−" + dur(-v)
	}
	return "+" + dur(v)
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
