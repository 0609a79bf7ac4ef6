package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/gpureplay/replay/columnar"
)

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
