// Command e2e times the built replay command as a process, end to end, as
// people run it, beside the baselines of each figure, in one run: the
// part of `make bench` the targets of docs/PERFORMANCE.md are judged on
// (bench/doc.go says what each figure is and why the harness is this
// program rather than hyperfine).
//
//	e2e -replay bin/replay -hello bin/hello -textfloor bin/textfloor [flags]
//	e2e -time-to FILE -- COMMAND [ARGS...]
//
// It generates the traces with `replay gen` into -dir, then runs -runs
// passes; each pass measures the machine (its two-goroutine ceiling and a
// cross-core round trip) and then runs every command once, so that a burst
// of other load falls on a figure and its baseline alike. A figure is the
// best of its runs. The output is the Go benchmark format that
// bench/report reads:
//
//	BenchmarkE2E/<trace>/<what>  RUNS  BEST ns/op  MEDIAN median-ns  CPU cpu-ns  RSS maxrss-B
//
// with the CPU time (user + system) of the best run and the highest peak
// resident set of all, and configuration lines: "trace: NAME key=value…"
// for each trace, "import: NAME file-B=… lines=… atomics=…" for each
// generated .traceg (bench.WriteTraceg) whose import is timed, "skip: NAME/WHAT: why" for what could not be measured
// (a workload or dialect `replay gen` does not have, a command that
// failed), which the report shows as n/a.
//
// With -time-to FILE it runs COMMAND once, as a pass times a command (the
// system's dirty pages written back first, untimed), its standard output
// and error passed through, writes "WALL CPU" to FILE (seconds, to the
// microsecond: the process's wall time and its user and system CPU time)
// and exits with the command's status: bench/scale/run.sh times each task
// of a split pipeline so, where GNU time's elapsed time has hundredths of
// a second only (and drops the rest).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpureplay/replay/bench"
)

// leanTables are the lean tables of the targets.
const leanTables = "memory,instructions,ops"

type config struct {
	replay, hello, textfloor string
	dir                      string
	laneOps                  float64
	runs                     int
	families, dialects       []string
	defaultOn, addressesOn   *regexp.Regexp
	textTrace                string // the trace whose text form is timed
	longFactor               float64
	importMB                 float64 // the generated .traceg's size, MB; 0: no import figures
	scalingN                 int
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "dense" {
		denseMain(os.Args[2:])
		return
	}
	var c config
	var fams, dias, defOn, addrOn string
	flag.StringVar(&c.replay, "replay", "bin/replay", "the replay command to time")
	flag.StringVar(&c.hello, "hello", "bin/hello", "a Go hello world (bench/hello)")
	flag.StringVar(&c.textfloor, "textfloor", "bin/textfloor", "the text floor (bench/textfloor)")
	flag.StringVar(&c.dir, "dir", "", "where the traces and outputs go (default a temporary directory, removed)")
	flag.Float64Var(&c.laneOps, "lane-ops", bench.LaneOps, "lane-ops of every trace")
	flag.IntVar(&c.runs, "runs", 5, "runs of each command (passes); a figure is the best")
	flag.StringVar(&fams, "families", strings.Join(bench.Families, ","), "workload families")
	flag.StringVar(&dias, "dialects", strings.Join(bench.Dialects, ","), "dialects")
	flag.StringVar(&defOn, "default-on", `^(uniform|histogram)-|-ptx$`, "traces (a regexp of FAMILY-DIALECT) replayed with the default tables too")
	flag.StringVar(&addrOn, "addresses-on", "^uniform-", "traces replayed with the lean tables and addresses too")
	flag.StringVar(&c.textTrace, "text", "uniform-ptx", "the trace whose .tasm form is timed (asm, replay)")
	flag.Float64Var(&c.longFactor, "long", 5, "the peak-memory replay's longer trace, in multiples of -lane-ops")
	flag.Float64Var(&c.importMB, "import-mb", 40, "MB of the generated .traceg whose `replay import accelsim` is timed, and twice as many (0: none)")
	flag.IntVar(&c.scalingN, "scaling-n", 1<<24, "work items of the machine's scaling ceiling")
	machineOnly := flag.Bool("machine", false, "print only the machine's two-goroutine ceiling and cross-core round trip (as a pass does), then exit")
	timeTo := flag.String("time-to", "", "run the command after the flags once, as a pass times one, its output passed through; write its wall and CPU seconds to this file and exit with its status")
	flag.Parse()
	if *timeTo != "" {
		os.Exit(timeCommand(*timeTo, flag.Args()))
	}
	if *machineOnly {
		(&harness{c: &c, w: os.Stdout}).machine()
		return
	}
	c.families, c.dialects = split(fams), split(dias)
	var err error
	if c.defaultOn, err = regexp.Compile(defOn); err == nil {
		c.addressesOn, err = regexp.Compile(addrOn)
	}
	if err != nil {
		fatal(err)
	}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "replay-e2e.")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(d)
		c.dir = d
	}
	if err := run(&c, os.Stdout); err != nil {
		fatal(err)
	}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "e2e:", err)
	os.Exit(1)
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
}

// A job is one command timed in every pass.
type job struct {
	name string   // <trace>/<what>
	argv []string // the command
	pipe []string // when set, a command whose standard output is argv's input
	out  string   // an output to remove after each run ("" for none)
	runs []sample
	fail string // why it failed, once it has: not run again
}

// sample is one run of a job.
type sample struct {
	wall, cpu time.Duration
	rss       int64 // peak resident set, bytes; 0 where not measured
}

type harness struct {
	c     *config
	w     io.Writer
	jobs  []*job
	null  *os.File
	start time.Time
}

func run(c *config, w io.Writer) error {
	for _, p := range []string{c.replay, c.hello, c.textfloor} {
		if _, err := os.Stat(p); err != nil {
			return err
		}
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	h := &harness{c: c, w: w, null: null, start: time.Now()}
	fmt.Fprintln(w, "run: e2e")
	fmt.Fprintf(w, "laneops: %.0f\n", c.laneOps)
	fmt.Fprintf(w, "runs: %d\n", c.runs)
	fmt.Fprintf(w, "cpus: %d\n", runtime.NumCPU())
	fmt.Fprintf(w, "loadavg-start: %s\n", loadavg())
	if fi, err := os.Stat(c.replay); err == nil {
		fmt.Fprintf(w, "binary-B: %d\n", fi.Size())
	}
	h.setup()
	for p := 1; p <= c.runs; p++ {
		say("pass %d of %d (%.0f s so far)", p, c.runs, time.Since(h.start).Seconds())
		h.machine()
		for _, j := range h.jobs {
			h.once(j)
		}
	}
	for _, j := range h.jobs {
		h.report(j)
	}
	h.peak()
	fmt.Fprintf(w, "loadavg-end: %s\n", loadavg())
	if b, ok := selfHWM(); ok {
		// The floor of every maxrss-B above: a child's peak resident set
		// is never below the harness's at the fork.
		fmt.Fprintf(w, "e2e-maxrss-B: %d\n", b)
	}
	fmt.Fprintf(w, "e2e-elapsed: %.0f s\n", time.Since(h.start).Seconds())
	return nil
}

// setup generates the traces, times their dense loops and lists the jobs.
func (h *harness) setup() {
	c := h.c
	n := strconv.FormatFloat(c.laneOps, 'f', 0, 64)
	out := filepath.Join(c.dir, "out")
	replay := func(args ...string) []string { return append([]string{c.replay, "-q"}, args...) }
	have := map[string]string{} // trace name -> file
	for _, f := range c.families {
		for _, d := range c.dialects {
			name := f + "-" + d
			file := filepath.Join(c.dir, name+".zst")
			args := []string{"gen", f, "-dialect", d, "-seed", "1", "-lane-ops", n, "-q", "-o", file}
			if f == "uniform" {
				args = append(args, "-words", "1Mi")
			}
			say("replay %s", strings.Join(args, " "))
			if msg, err := h.exec(c.replay, args...); err != nil {
				h.skip(name, "gen", msg)
				continue
			}
			have[name] = file
			h.dense(name, file)
			h.jobs = append(h.jobs,
				&job{name: name + "/zstd", argv: []string{"zstd", "-d", "-c", "-q", file}},
				&job{name: name + "/lean", argv: replay("-tables", leanTables, "-o", out, file), out: out})
			if c.defaultOn.MatchString(name) {
				h.jobs = append(h.jobs, &job{name: name + "/default", argv: replay("-o", out, file), out: out})
			}
			if c.addressesOn.MatchString(name) {
				h.jobs = append(h.jobs, &job{name: name + "/addresses", argv: replay("-tables", leanTables+",addresses", "-o", out, file), out: out})
			}
		}
	}
	// Two workers on two cores against one worker pinned to one core.
	if file, ok := have["uniform-ptx"]; ok {
		if ts, err := exec.LookPath("taskset"); err == nil {
			h.jobs = append(h.jobs, &job{name: "uniform-ptx/workers1-1core",
				argv: append([]string{ts, "-c", "0"}, replay("-workers", "1", "-tables", leanTables, "-o", out, file)...), out: out})
		} else {
			h.skip("uniform-ptx", "workers1-1core", "no taskset command")
		}
		h.jobs = append(h.jobs, &job{name: "uniform-ptx/workers2", argv: replay("-workers", "2", "-tables", leanTables, "-o", out, file), out: out})
	}
	// The text form: asm, a lean replay of it, and the floor loop.
	if file, ok := have[c.textTrace]; ok {
		tasm := strings.TrimSuffix(file, ".zst") + ".tasm"
		say("replay disasm %s", file)
		if msg, err := h.exec(c.replay, "disasm", file, "-o", tasm); err != nil {
			h.skip(c.textTrace, "text", msg)
		} else {
			if fi, err := os.Stat(tasm); err == nil {
				fmt.Fprintf(h.w, "text: %s file-B=%d\n", c.textTrace, fi.Size())
			}
			zst := filepath.Join(c.dir, "asm.zst")
			h.jobs = append(h.jobs,
				&job{name: c.textTrace + "/text-floor", argv: []string{c.textfloor, tasm}},
				&job{name: c.textTrace + "/text-asm", argv: []string{c.replay, "asm", tasm, "-o", zst}, out: zst},
				&job{name: c.textTrace + "/text-lean", argv: replay("-tables", leanTables, "-o", out, tasm), out: out})
		}
	}
	// Import: `replay import accelsim` of a generated .traceg, and of one
	// twice as long, whose peak resident set should be the same.
	for f := range int64(2) {
		if c.importMB <= 0 {
			break
		}
		name := fmt.Sprintf("traceg-%dx", f+1)
		file := filepath.Join(c.dir, name+".traceg")
		say("writing %s", file)
		cnt, size, err := writeTraceg(file, int64(c.importMB*1e6)*(f+1))
		if err != nil {
			h.skip("import", name, err.Error())
			continue
		}
		fmt.Fprintf(h.w, "import: %s file-B=%d lines=%d atomics=%d blocks=%d\n", name, size, cnt.Lines, cnt.Atomics, cnt.Blocks)
		zst := filepath.Join(c.dir, "import.zst")
		h.jobs = append(h.jobs, &job{name: "import/" + name, argv: []string{c.replay, "import", "accelsim", file, "-q", "-o", zst}, out: zst})
	}
	// Start-up: a hello world, replay help, a one-instruction replay.
	one := filepath.Join(c.dir, "one.zst")
	h.jobs = append(h.jobs,
		&job{name: "startup/hello", argv: []string{c.hello}},
		&job{name: "startup/help", argv: []string{c.replay, "help"}})
	if msg, err := h.exec(c.replay, "gen", "hotcounter", "-lane-ops", "1", "-q", "-o", one); err != nil {
		h.skip("startup", "one-inst", msg)
	} else {
		h.jobs = append(h.jobs, &job{name: "startup/one-inst", argv: replay("-o", out, one), out: out})
	}
}

// writeTraceg writes bench.WriteTraceg's kernel file of at least minBytes
// to path and returns its counts and size.
func writeTraceg(path string, minBytes int64) (bench.TracegCounts, int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return bench.TracegCounts{}, 0, err
	}
	cnt, err := bench.WriteTraceg(f, minBytes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return cnt, 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return cnt, 0, err
	}
	return cnt, fi.Size(), nil
}

// exec runs a command to its end, untimed; on failure it returns the
// first line of its standard error.
func (h *harness) exec(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = h.null, &stderr
	if err := cmd.Run(); err != nil {
		return firstLine(stderr.String(), err), err
	}
	return "", nil
}

func firstLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		s = err.Error()
	}
	return s
}

func (h *harness) skip(name, what, why string) {
	fmt.Fprintf(h.w, "skip: %s/%s: %s\n", name, what, why)
	say("skip %s/%s: %s", name, what, why)
}

// dense times the dense loop of a trace in a process of its own (e2e
// dense), so that the harness's own resident set stays small: a child's
// peak resident set, as the kernel reports it, is never below its
// parent's at the fork.
func (h *harness) dense(name, file string) {
	self, err := os.Executable()
	if err != nil {
		h.skip(name, "dense", err.Error())
		return
	}
	cmd := exec.Command(self, "dense", "-runs", strconv.Itoa(h.c.runs), "-name", name, file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		h.skip(name, "dense", firstLine(stderr.String(), err))
		return
	}
	h.w.Write(stdout.Bytes())
}

// denseMain is `e2e dense [-runs N] [-name NAME] FILE`: it decodes the
// trace's operations (bench.DecodeOps) and times the dense loop over them
// (bench.Ops.Apply), each run from the trace's initial memory after one
// run that pages the array in; it prints the trace's line and the loop's
// best and median.
func denseMain(args []string) {
	fs := flag.NewFlagSet("dense", flag.ExitOnError)
	runs := fs.Int("runs", 5, "timed runs")
	name := fs.String("name", "", "the trace's name in the output (default the file's)")
	fs.Parse(args)
	if fs.NArg() != 1 {
		fatal(errors.New("usage: e2e dense [-runs N] [-name NAME] FILE"))
	}
	file := fs.Arg(0)
	if *name == "" {
		*name = strings.TrimSuffix(filepath.Base(file), ".zst")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fatal(err)
	}
	ops, err := bench.DecodeOps(data)
	if err != nil {
		fatal(err)
	}
	mem := make([]uint32, ops.Words)
	all := make([]time.Duration, 0, *runs)
	for i := 0; i <= *runs; i++ {
		ops.Reset(mem)
		t := time.Now()
		ops.Apply(mem)
		d := time.Since(t)
		if i > 0 { // the first pages the array in and warms the caches
			all = append(all, d)
		}
	}
	slices.Sort(all)
	fmt.Printf("trace: %s laneops=%d file-B=%d words=%d mix=%s\n", *name, ops.LaneOps(), len(data), ops.Words, strings.ReplaceAll(ops.Mix(), " ", "_"))
	fmt.Printf("BenchmarkE2E/%s/dense %d %d ns/op %d median-ns %.3f ns/laneop\n",
		*name, len(all), all[0].Nanoseconds(), all[len(all)/2].Nanoseconds(), float64(all[0].Nanoseconds())/float64(max(ops.LaneOps(), 1)))
}

// machine measures, once a pass, the machine's two-goroutine ceiling and
// its cross-core round trip.
func (h *harness) machine() {
	one := bench.MachineScaling(1, bench.ScalingWords, h.c.scalingN)
	two := bench.MachineScaling(2, bench.ScalingWords, h.c.scalingN)
	ho := bench.HandoffNs()
	fmt.Fprintf(h.w, "BenchmarkE2E/machine/scaling/goroutines=1 1 %d ns/op\n", one.Nanoseconds())
	fmt.Fprintf(h.w, "BenchmarkE2E/machine/scaling/goroutines=2 1 %d ns/op\n", two.Nanoseconds())
	fmt.Fprintf(h.w, "BenchmarkE2E/machine/handoff 1 %.1f ns/op\n", ho)
}

// once runs a job once and records it.
func (h *harness) once(j *job) {
	if j.fail != "" {
		return
	}
	s, msg, err := h.time(j)
	if j.out != "" {
		os.RemoveAll(j.out)
	}
	if err != nil {
		j.fail = msg
		name, what, _ := strings.Cut(j.name, "/")
		h.skip(name, what, msg)
		return
	}
	j.runs = append(j.runs, s)
}

// time runs a job's command, its standard output to /dev/null, and
// measures its wall time from start to exit, its CPU time and peak
// resident set (the kernel's rusage of the process). The earlier jobs'
// writes are on the disk first (settle).
func (h *harness) time(j *job) (sample, string, error) {
	settle()
	cmd := exec.Command(j.argv[0], j.argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = h.null, &stderr
	var feed *exec.Cmd
	if j.pipe != nil {
		feed = exec.Command(j.pipe[0], j.pipe[1:]...)
		feed.Stderr = &stderr
		r, err := feed.StdoutPipe()
		if err != nil {
			return sample{}, err.Error(), err
		}
		cmd.Stdin = r
		if err := feed.Start(); err != nil {
			return sample{}, err.Error(), err
		}
	}
	t := time.Now()
	err := cmd.Run()
	wall := time.Since(t)
	if feed != nil {
		if ferr := feed.Wait(); err == nil && ferr != nil {
			err = ferr
		}
	}
	if err != nil {
		return sample{}, firstLine(stderr.String(), err), err
	}
	cpu, rss := usage(cmd.ProcessState)
	return sample{wall: wall, cpu: cpu, rss: rss}, "", nil
}

// report prints a job's figure: the best run, the median, the best run's
// CPU time, the highest peak resident set.
func (h *harness) report(j *job) {
	if len(j.runs) == 0 {
		return
	}
	best := slices.MinFunc(j.runs, func(a, b sample) int { return int(a.wall - b.wall) })
	walls := make([]time.Duration, len(j.runs))
	var rss int64
	for i, s := range j.runs {
		walls[i] = s.wall
		rss = max(rss, s.rss)
	}
	slices.Sort(walls)
	fmt.Fprintf(h.w, "BenchmarkE2E/%s %d %d ns/op %d median-ns %d cpu-ns %d maxrss-B\n",
		j.name, len(j.runs), best.wall.Nanoseconds(), walls[len(walls)/2].Nanoseconds(), best.cpu.Nanoseconds(), rss)
}

// peak replays uniform over 1 Mi words with the default tables at two
// trace lengths, streamed from `replay gen` through a pipe as
// cmd/replay's TestPeakMemoryFlat does (the longer trace is never
// written), and reports each replay's peak resident set.
func (h *harness) peak() {
	c := h.c
	out := filepath.Join(c.dir, "out")
	for _, f := range []float64{1, c.longFactor} {
		n := strconv.FormatFloat(c.laneOps*f, 'f', 0, 64)
		name := "peak/lane-ops=" + n
		say("peak memory at %s lane-ops", n)
		j := &job{name: name,
			pipe: []string{c.replay, "gen", "uniform", "-words", "1Mi", "-seed", "1", "-lane-ops", n, "-q", "-o", "-"},
			argv: []string{c.replay, "-q", "-o", out, "-"}, out: out}
		h.once(j)
		h.report(j)
	}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// selfHWM is the harness's own peak resident set (VmHWM), in bytes.
func selfHWM() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// timeCommand is -time-to: it runs argv once, after settle, its output
// passed through, and writes "WALL CPU" in seconds to file. It returns the
// command's exit status (2 when it could not be run or timed).
func timeCommand(file string, argv []string) int {
	if len(argv) == 0 {
		say("-time-to %s: no command", file)
		return 2
	}
	settle()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	t := time.Now()
	err := cmd.Run()
	wall := time.Since(t)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		say("%s: %v", argv[0], err)
		return 2
	}
	cpu, _ := usage(cmd.ProcessState)
	if werr := os.WriteFile(file, fmt.Appendf(nil, "%.6f %.6f\n", wall.Seconds(), cpu.Seconds()), 0o644); werr != nil {
		say("-time-to: %v", werr)
		return 2
	}
	return cmd.ProcessState.ExitCode()
}
