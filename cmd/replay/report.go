package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/gpureplay/replay/report"
)

// cmdReport is replay report: one self-contained HTML page of a replay's
// tables (package report).
func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("o", "", "the HTML file to write")
	title := fs.String("title", "", "the page's title")
	quiet := fs.Bool("q", false, "quiet")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("report takes one output directory, got %d", len(pos))
	}
	if *out == "" {
		return usagef("report needs -o FILE.html")
	}
	if err := checkOutFile(*out, "report.html"); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	d, err := report.Load(pos[0])
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// Whole or not at all: a temporary file beside -o, renamed into place.
	n := 0
	err = writeAtomically(*out, func(w io.Writer) error {
		cw := &countWriter{w: w}
		err := report.Write(cw, d, report.Options{Title: *title})
		n = cw.n
		return err
	})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if !*quiet {
		fmt.Fprintf(stdout, "wrote %s (%d bytes): %s\n", *out, n, d.Dir)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}
