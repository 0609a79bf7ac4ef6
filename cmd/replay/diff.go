package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gpureplay/replay/columnar"
)

// errDiffer is cmdDiff's result when the replays differ: exit status 1,
// with nothing on standard error (the differences are on standard output).
var errDiffer = errors.New("the replays differ")

// cmdDiff is replay diff: what differs between two replays' tables.
func cmdDiff(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	limit := fs.Int("limit", 20, "differences to list, 0 = all")
	quiet := fs.Bool("q", false, "print nothing; the exit status says")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("diff takes two output directories, got %d", len(pos))
	}
	if *limit < 0 {
		return usagef("diff: -limit %d: want 0 or more", *limit)
	}
	a, b := pos[0], pos[1]
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	listed := 0
	sum, err := columnar.Diff(a, b, func(r columnar.DiffRow) bool {
		if *quiet {
			return false
		}
		if listed == 0 {
			fmt.Fprintf(tw, "table\tkey\t%s\t%s\n", a, b)
		}
		listed++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Table, r.Key, r.A, r.B)
		return *limit == 0 || listed < *limit
	})
	if err != nil {
		// An unreadable directory or table is an I/O error, exit status
		// 1 as in merge and report; unlike "they differ", it says so on
		// standard error, -q or not.
		return fmt.Errorf("diff: %w", err)
	}
	if *quiet {
		if sum.Differ() {
			return errDiffer
		}
		return nil
	}
	tw.Flush()
	fmt.Fprintf(stdout, "memory: %d words in A, %d in B: %d differ, %d only in A, %d only in B\n",
		sum.Words[0], sum.Words[1], sum.WordsDiffer, sum.WordsOnlyA, sum.WordsOnlyB)
	fmt.Fprintf(stdout, "results: %d lane results in A, %d in B: %d differ, %d only in A, %d only in B\n",
		sum.Results[0], sum.Results[1], sum.ResultsDiffer, sum.ResultsOnlyA, sum.ResultsOnlyB)
	for _, t := range sum.MissingTables {
		fmt.Fprintf(stdout, "%s: in neither directory (not compared)\n", t)
	}
	if sum.Differ() {
		if n := sum.WordsDiffer + sum.WordsOnlyA + sum.WordsOnlyB + sum.ResultsDiffer + sum.ResultsOnlyA + sum.ResultsOnlyB; *limit > 0 && n > listed {
			fmt.Fprintf(stdout, "(%d of %d differences listed; -limit 0 lists all)\n", listed, n)
		}
		return errDiffer
	}
	fmt.Fprintln(stdout, "no difference")
	return nil
}
