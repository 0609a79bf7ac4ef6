package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/gpureplay/replay/columnar"
)

// mergeGCPercent is the collector's percentage replay merge sets
// (debug.SetGCPercent), and whether it sets one: 400, unless the
// environment sets GOGC. The merge's Go heap holds little (the columns of
// the records it reads lie outside it, in columnar's word pool), so the
// default goal, 4 MiB, has the collector run three to five times during a
// merge of bench-scale's partitions, each a pause, mark work on a core the
// merge uses and faults of its span sets' first pages; 400 (a 16 MiB goal)
// runs it none there, and lets the heap grow to five times what it holds.
func mergeGCPercent(getenv func(string) string) (int, bool) {
	if getenv("GOGC") != "" {
		return 0, false
	}
	return 400, true
}

// cmdMerge is replay merge: the tables of one replay from its partitions.
func cmdMerge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("o", "", "output directory")
	format := fs.String("format", "parquet", "parquet, arrow or both")
	quiet := fs.Bool("q", false, "quiet")
	prof := fs.String("profile", "", "cpu, mem, allocs, block, mutex, trace, goroutine")
	profDir := fs.String("profile-dir", "profiles", "profile directory")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("merge: no partition directories")
	}
	if *out == "" {
		return usagef("merge: -o DIR is required")
	}
	f, err := columnar.ParseFormat(*format)
	if err != nil {
		return usagef("merge: -format: %v", err)
	}
	dirs, err := columnar.PartitionDirs(pos)
	if err != nil {
		return err
	}
	if *prof != "" {
		stop, err := startProfile(*prof, *profDir, *quiet)
		if err != nil {
			return err
		}
		defer stop()
	}
	if pct, ok := mergeGCPercent(os.Getenv); ok {
		defer debug.SetGCPercent(debug.SetGCPercent(pct))
	}
	err = columnar.Merge(dirs, *out, columnar.WithFormat(f), columnar.WithLogf(func(format string, args ...any) {
		fmt.Fprintf(stderr, "replay: "+format+"\n", args...)
	}))
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(stdout, "merged %d partitions into %s\n", len(dirs), *out)
	}
	return nil
}
