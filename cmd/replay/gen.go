package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpureplay/replay/trace"
	"github.com/gpureplay/replay/trace/workload"
	"golang.org/x/term"
)

// genOptions are gen's flags, parsed, and the workload named (pos).
type genOptions struct {
	list                                       bool
	dialect                                    string
	seed                                       uint64
	laneOps, words, bins, vertices, edgeFactor sizeValue
	zipf                                       float64
	chunk                                      int
	out                                        string
	quiet                                      bool
	pos                                        []string
}

// cmdGen writes a synthetic trace (package workload), whole or not at all.
func cmdGen(args []string, stdout, stderr io.Writer) error {
	o, err := parseGenFlags(args)
	if err != nil {
		return err
	}
	if o.list {
		listWorkloads(stdout)
		return nil
	}
	binary, d, err := o.validate()
	if err != nil {
		return err
	}
	g, err := o.generator(d)
	if err != nil {
		return err
	}
	return o.run(g, d, binary, stdout, stderr)
}

// parseGenFlags defines gen's flags and parses args into options.
func parseGenFlags(args []string) (*genOptions, error) {
	o := &genOptions{laneOps: sizeValue(workload.DefaultLaneOps)}
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.BoolVar(&o.list, "list", false, "list the workloads")
	fs.StringVar(&o.dialect, "dialect", "ptx", "ptx, sass, visa or lsc")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed")
	fs.Var(&o.laneOps, "lane-ops", "lane-ops to generate")
	fs.Var(&o.words, "words", "address-space words")
	fs.Var(&o.bins, "bins", "histogram bins")
	fs.Var(&o.vertices, "vertices", "bfs vertices")
	fs.Var(&o.edgeFactor, "edge-factor", "bfs edges per vertex")
	fs.Float64Var(&o.zipf, "zipf", 0, "histogram key skew")
	fs.IntVar(&o.chunk, "chunk", trace.DefaultChunkInsts, "instructions per chunk (binary output)")
	fs.StringVar(&o.out, "o", "", "output file, .zst or .tasm")
	fs.BoolVar(&o.quiet, "q", false, "print nothing on success")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	o.pos = pos
	return o, nil
}

// listWorkloads prints gen -list: each workload and what it does.
func listWorkloads(stdout io.Writer) {
	for _, n := range workload.Names() {
		fmt.Fprintf(stdout, "%-12s %s\n", n, workload.Describe(n))
	}
}

// validate checks, in this order, the workload count, -o (its suffix, and
// that it is not a directory), -dialect and -chunk. It reports whether the output is binary, and the dialect.
func (o *genOptions) validate() (binary bool, d trace.Dialect, err error) {
	if len(o.pos) != 1 {
		return false, d, usagef("gen takes one workload, got %d (replay gen -list lists them)", len(o.pos))
	}
	switch {
	case strings.HasSuffix(o.out, ".zst"):
		binary = true
	case strings.HasSuffix(o.out, ".tasm"):
	case o.out == "-": // the binary form on standard output, for a pipe into replay -
		binary = true
	case o.out == "":
		return false, d, usagef("gen needs -o OUT.zst or -o OUT.tasm")
	default:
		return false, d, usagef("-o %s: the output must end in .zst (binary) or .tasm (text)", o.out)
	}
	if o.out != "-" {
		if err := checkOutFile(o.out, o.pos[0]+filepath.Ext(o.out)); err != nil {
			return false, d, err
		}
	}
	d, ok := parseDialect(o.dialect)
	if !ok {
		return false, d, usagef("-dialect: unknown dialect %q (ptx, sass, visa, lsc)", o.dialect)
	}
	if o.chunk < 1 || o.chunk > trace.MaxChunkInsts {
		return false, d, usagef("-chunk: %d instructions is outside 1..%d", o.chunk, trace.MaxChunkInsts)
	}
	return binary, d, nil
}

// generator builds the workload's generator; a bad spec is a usage error.
func (o *genOptions) generator(d trace.Dialect) (*workload.Generator, error) {
	g, err := workload.New(workload.Spec{
		Name: o.pos[0], Dialect: d, Seed: o.seed, LaneOps: uint64(o.laneOps),
		Words: o.words.int(), Bins: o.bins.int(), Zipf: o.zipf,
		Vertices: o.vertices.int(), EdgeFactor: o.edgeFactor.int(),
	})
	if err != nil {
		var se *workload.SpecError
		if errors.As(err, &se) {
			return nil, usagef("%v", err)
		}
		return nil, err
	}
	return g, nil
}

// run writes g's trace to -o (atomically; "-": standard output, the
// summary then going to stderr) and prints the summary.
func (o *genOptions) run(g *workload.Generator, d trace.Dialect, binary bool, stdout, stderr io.Writer) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	bar := newProgressBar(stderr, g.Spec().LaneOps)
	start := time.Now()
	var insts uint64
	var size int64
	write := writeAtomically
	summary := stdout
	if o.out == "-" {
		write = func(_ string, fn func(io.Writer) error) error {
			bw := bufio.NewWriterSize(stdout, 1<<20)
			if err := fn(bw); err != nil {
				return err
			}
			return bw.Flush()
		}
		summary = stderr
	}
	err := write(o.out, func(w io.Writer) error {
		var err error
		insts, size, err = writeTrace(ctx, w, g, binary, o.chunk, bar)
		return err
	})
	bar.finish(g.LaneOps(), err == nil)
	if err != nil {
		return fmt.Errorf("gen %s: %w (nothing written)", o.pos[0], err)
	}
	if !o.quiet {
		lo := g.LaneOps()
		fmt.Fprintf(summary, "wrote %s: %s %s, %d instructions, %d lane-ops, %d bytes (%.3f B/lane-op) in %s\n",
			o.out, o.pos[0], d, insts, lo, size, float64(size)/float64(max(lo, 1)), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// writeTrace writes g's instructions to w, binary (chunk instructions a
// chunk) or text, updating bar and checking ctx every 1024 instructions. It
// returns the instructions written, and the bytes once the writer closed.
func writeTrace(ctx context.Context, w io.Writer, g *workload.Generator, binary bool, chunk int, bar *progressBar) (insts uint64, size int64, err error) {
	cw := &countingWriter{w: w}
	var iw trace.InstWriter
	if binary {
		iw, err = trace.NewBinaryWriter(cw, g.Header(), trace.WithChunkInsts(chunk))
	} else {
		iw, err = trace.NewTextWriter(cw, g.Header())
	}
	if err != nil {
		return insts, size, err
	}
	for {
		in, err := g.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return insts, size, err
		}
		if err := iw.Write(in); err != nil {
			return insts, size, err
		}
		insts++
		if insts&1023 == 0 {
			if ctx.Err() != nil {
				return insts, size, errors.New("interrupted")
			}
			bar.update(g.LaneOps())
		}
	}
	if err := iw.Close(); err != nil {
		return insts, size, err
	}
	return insts, cw.n, nil
}

func parseDialect(s string) (trace.Dialect, bool) {
	for _, d := range []trace.Dialect{trace.DialectPTX, trace.DialectSASS, trace.DialectVISA, trace.DialectLSC} {
		if strings.EqualFold(s, d.String()) {
			return d, true
		}
	}
	return trace.DialectInvalid, false
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// progressBar draws the share of the lane-op target done, and the rate, on
// one line of a terminal, at most ten times a second. It draws nothing when
// w is not a terminal.
type progressBar struct {
	w      io.Writer
	on     bool
	target uint64
	start  time.Time
	last   time.Time
}

func newProgressBar(w io.Writer, target uint64) *progressBar {
	now := time.Now()
	return &progressBar{w: w, on: isTerminal(w), target: target, start: now, last: now}
}

// isTerminal reports whether w is a terminal (golang.org/x/term, on every
// OS). A character device such as /dev/null is not one.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

func (p *progressBar) update(done uint64) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	p.draw(done, now)
}

func (p *progressBar) draw(done uint64, now time.Time) {
	const width = 30
	frac := math.Min(float64(done)/float64(max(p.target, 1)), 1)
	fill := int(frac * width)
	rate := 0.0
	if secs := now.Sub(p.start).Seconds(); secs > 0 {
		rate = float64(done) / secs
	}
	fmt.Fprintf(p.w, "\r[%s%s] %5.1f%%  %s / %s lane-ops  %s lane-ops/s ",
		strings.Repeat("#", fill), strings.Repeat(".", width-fill), 100*frac,
		humanCount(done), humanCount(p.target), humanRate(rate))
}

// finish draws the last state and ends the line (clears it on failure).
func (p *progressBar) finish(done uint64, ok bool) {
	if !p.on {
		return
	}
	if ok {
		p.draw(done, time.Now())
		fmt.Fprintln(p.w)
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 90))
}

// humanCount writes n as humanRate does, without the blank: 12.50M.
func humanCount(n uint64) string { return strings.ReplaceAll(humanRate(float64(n)), " ", "") }
