package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/gpureplay/replay/trace"
	"github.com/gpureplay/replay/trace/workload"
)

// cmdGen writes a synthetic trace (package workload), whole or not at all.
func cmdGen(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the workloads")
	dialect := fs.String("dialect", "ptx", "ptx, sass, visa or lsc")
	seed := fs.Uint64("seed", 1, "random seed")
	laneOps := sizeValue(workload.DefaultLaneOps)
	var words, bins, vertices, edgeFactor sizeValue
	fs.Var(&laneOps, "lane-ops", "lane-ops to generate")
	fs.Var(&words, "words", "address-space words")
	fs.Var(&bins, "bins", "histogram bins")
	fs.Var(&vertices, "vertices", "bfs vertices")
	fs.Var(&edgeFactor, "edge-factor", "bfs edges per vertex")
	zipf := fs.Float64("zipf", 0, "histogram key skew")
	chunk := fs.Int("chunk", trace.DefaultChunkInsts, "instructions per chunk (binary output)")
	out := fs.String("o", "", "output file, .zst or .tasm")
	quiet := fs.Bool("q", false, "print nothing on success")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *list {
		for _, n := range workload.Names() {
			fmt.Fprintf(stdout, "%-12s %s\n", n, workload.Describe(n))
		}
		return nil
	}
	if len(pos) != 1 {
		return usagef("gen takes one workload, got %d (replay gen -list lists them)", len(pos))
	}
	var binary bool
	switch {
	case strings.HasSuffix(*out, ".zst"):
		binary = true
	case strings.HasSuffix(*out, ".tasm"):
	case *out == "-": // the binary form on standard output, for a pipe into replay -
		binary = true
	case *out == "":
		return usagef("gen needs -o OUT.zst or -o OUT.tasm")
	default:
		return usagef("-o %s: the output must end in .zst (binary) or .tasm (text)", *out)
	}
	d, ok := parseDialect(*dialect)
	if !ok {
		return usagef("-dialect: unknown dialect %q (ptx, sass, visa, lsc)", *dialect)
	}
	if *chunk < 1 || *chunk > trace.MaxChunkInsts {
		return usagef("-chunk: %d instructions is outside 1..%d", *chunk, trace.MaxChunkInsts)
	}
	g, err := workload.New(workload.Spec{
		Name: pos[0], Dialect: d, Seed: *seed, LaneOps: uint64(laneOps),
		Words: words.int(), Bins: bins.int(), Zipf: *zipf,
		Vertices: vertices.int(), EdgeFactor: edgeFactor.int(),
	})
	if err != nil {
		var se *workload.SpecError
		if errors.As(err, &se) {
			return usagef("%v", err)
		}
		return err
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	bar := newProgressBar(stderr, g.Spec().LaneOps)
	start := time.Now()
	var insts uint64
	var size int64
	write := writeAtomically
	summary := stdout
	if *out == "-" {
		write = func(_ string, fn func(io.Writer) error) error {
			bw := bufio.NewWriterSize(stdout, 1<<20)
			if err := fn(bw); err != nil {
				return err
			}
			return bw.Flush()
		}
		summary = stderr
	}
	err = write(*out, func(w io.Writer) error {
		cw := &countingWriter{w: w}
		var iw trace.InstWriter
		var err error
		if binary {
			iw, err = trace.NewBinaryWriter(cw, g.Header(), trace.WithChunkInsts(*chunk))
		} else {
			iw, err = trace.NewTextWriter(cw, g.Header())
		}
		if err != nil {
			return err
		}
		for {
			in, err := g.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if err := iw.Write(in); err != nil {
				return err
			}
			insts++
			if insts&1023 == 0 {
				if ctx.Err() != nil {
					return errors.New("interrupted")
				}
				bar.update(g.LaneOps())
			}
		}
		if err := iw.Close(); err != nil {
			return err
		}
		size = cw.n
		return nil
	})
	bar.finish(g.LaneOps(), err == nil)
	if err != nil {
		return fmt.Errorf("gen %s: %w (nothing written)", pos[0], err)
	}
	if !*quiet {
		lo := g.LaneOps()
		fmt.Fprintf(summary, "wrote %s: %s %s, %d instructions, %d lane-ops, %d bytes (%.3f B/lane-op) in %s\n",
			*out, pos[0], d, insts, lo, size, float64(size)/float64(max(lo, 1)), time.Since(start).Round(time.Millisecond))
	}
	return nil
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

// isTerminal reports whether w is a terminal: a file whose terminal
// attributes can be read (golang.org/x/sys, already a dependency of
// arrow-go). A character device such as /dev/null is not one.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
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
