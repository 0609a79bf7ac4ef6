package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/split"
)

// cmdSplit is replay split: the map stage of a scaled-out replay.
func cmdSplit(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("split", flag.ContinueOnError)
	out := fs.String("o", "", "split directory")
	parts := fs.Int("partitions", 0, "partitions")
	sliceFlag := fs.String("slice", "0/1", "slice K/M, or auto")
	slicesFlag := fs.Int("slices", 0, "with -slice auto: M")
	workers := fs.Int("workers", 0, "goroutines routing a combined slice's two parts at once, 0 = GOMAXPROCS; the files do not depend on it")
	quiet := fs.Bool("q", false, "quiet")
	syncFlag := fs.Bool("sync", false, "sync the slice's files before they appear")
	tables := fs.String("tables", "", "the tables the partition replays write (replay's -tables); without a per-lane table (only memory, instructions, ops) the split combines")
	prof := fs.String("profile", "", "cpu, mem, allocs, block, mutex, trace, goroutine")
	profDir := fs.String("profile-dir", "profiles", "profile directory")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("split takes one trace, got %d", len(pos))
	}
	if *out == "" {
		return usagef("split: -o DIR is required")
	}
	if *workers < 0 {
		return usagef("split: -workers %d: want 0 (GOMAXPROCS) or more", *workers)
	}
	n := *parts
	if n == 0 {
		if v := os.Getenv("REPLAY_PARTITIONS"); v != "" {
			if n, err = strconv.Atoi(v); err != nil || n < 1 {
				return usagef("split: REPLAY_PARTITIONS=%q is not a count", v)
			}
		}
	}
	if n < 1 || n > shard.MaxPartitions {
		return usagef("split: -partitions N is required, 1..%d (or REPLAY_PARTITIONS)", shard.MaxPartitions)
	}
	combine := false
	if *tables != "" {
		names := strings.Split(*tables, ",")
		for _, t := range names {
			if !slices.Contains(columnar.AllTableNames(), t) {
				return usagef("split: -tables %s: no table %q (the tables are %s)", *tables, t, strings.Join(columnar.AllTableNames(), ", "))
			}
		}
		combine = split.CombineTables(names)
	}
	k, m, err := sliceOf(*sliceFlag, *slicesFlag, os.Getenv)
	if err != nil {
		return usagef("split: %v", err)
	}
	if *prof != "" {
		stop, err := startProfile(*prof, *profDir, *quiet)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	sum, err := split.Split(pos[0], split.Options{Parts: n, Slice: k, Slices: m, Out: *out, Combine: combine,
		Workers: *workers, Sync: *syncFlag, Interrupted: func() bool { return ctx.Err() != nil }})
	if err != nil {
		return fmt.Errorf("%w (slice %d of %d not written)", err, k, m)
	}
	if !*quiet {
		printSplitSummary(stdout, pos[0], *out, n, k, m, sum)
	}
	return nil
}

// sliceOf resolves -slice: "K/M", or "auto" as -partition auto does (K
// from the array task's index, M from -slices, REPLAY_SLICES or
// SLURM_ARRAY_TASK_COUNT).
func sliceOf(flagVal string, slicesFlag int, getenv func(string) string) (k, m int, err error) {
	if flagVal == "auto" {
		return arrayTask(arrayNames{flag: "-slice", count: "-slices", env: "REPLAY_SLICES", what: "slices", max: 1 << 20}, slicesFlag, getenv)
	}
	if slicesFlag != 0 {
		return 0, 0, fmt.Errorf("-slices goes with -slice auto, not %s", flagVal)
	}
	a, b, ok := strings.Cut(flagVal, "/")
	if ok {
		k, err = strconv.Atoi(a)
		if err == nil {
			m, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || m < 1 || k < 0 || k >= m {
		return 0, 0, fmt.Errorf("-slice %q: want K/M with 0 <= K < M, or auto", flagVal)
	}
	return k, m, nil
}

// printSplitSummary prints what a split wrote, and how evenly the slice's
// lane-ops fell on the partitions: a word whose accesses alone exceed
// 1.25 times the mean partition's load is named, with its share.
func printSplitSummary(w io.Writer, name, dir string, n, k, m int, s *split.Summary) {
	fmt.Fprintf(w, "split %s\n", name)
	fmt.Fprintf(w, "  slice         %d of %d: chunks [%d, %d) of %d\n", k, m, s.FirstChunk, s.EndChunk, s.Chunks)
	fmt.Fprintf(w, "  instructions  %d (%d directives)\n", s.Instructions, s.Directives)
	var total, hi uint64
	lo := ^uint64(0)
	for _, x := range s.LaneOps {
		total += x
		lo, hi = min(lo, x), max(hi, x)
	}
	mean := float64(total) / float64(n)
	if total == 0 {
		lo = 0
	}
	fmt.Fprintf(w, "  lane-ops      %d over %d partitions: %d to %d, the largest %.2fx the mean\n", total, n, lo, hi, float64(hi)/max(mean, 1))
	if n <= 64 {
		fmt.Fprintf(w, "  partition lane-ops %s\n", strings.Trim(fmt.Sprint(s.LaneOps), "[]"))
	}
	if total > 0 && float64(hi) > 1.25*mean {
		// Which partition, and the words of it a sample found hottest: a
		// few hot words, or a hot line of them (its 32 words are one
		// partition's).
		top := 0
		for i, x := range s.LaneOps {
			if x == hi {
				top = i
				break
			}
		}
		var words []string
		pt, _ := shard.NewPartitionerMap(n, s.Map) // split made it
		for _, h := range s.Hot {
			share := float64(h.LaneOps) / float64(total)
			if pt.Of(engine.PartitionKey(h.Space, h.Group), h.Addr) == top && share >= 0.005 && len(words) < 4 {
				words = append(words, fmt.Sprintf("%s (about %.1f%%)", hotName(h), 100*share))
			}
		}
		if len(words) == 0 {
			fmt.Fprintf(w, "  imbalance     partition %d has %.2fx the mean; no word of it takes 0.5%% of the lane-ops: its load is many warm lines\n", top, float64(hi)/mean)
		} else {
			fmt.Fprintf(w, "  imbalance     partition %d has %.2fx the mean; its hottest words: %s\n", top, float64(hi)/mean, strings.Join(words, ", "))
		}
	}
	for _, h := range s.Hot {
		if float64(h.LaneOps) <= 1.25*mean || total == 0 {
			continue
		}
		fmt.Fprintf(w, "  hot word      %s alone: about %.1f%% of the lane-ops, %.2fx the mean partition's: one partition holds it whatever n, a bound no partitioning lifts\n",
			hotName(h), 100*float64(h.LaneOps)/float64(total), float64(h.LaneOps)/mean)
	}
	if s.Folded > 0 {
		fmt.Fprintf(w, "  combined      %d lane-ops folded into %d words (%d fold records): the partition replays write no per-lane table\n", s.Folded, s.FoldWords, s.FoldRecords)
	}
	if len(s.Map) > 0 {
		fmt.Fprintf(w, "  partition map %d lines, the heaviest of a sample of %d chunks, spread by their load\n", len(s.Map), s.SampleChunks)
	}
	fmt.Fprintf(w, "  time          %s\n", s.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "  wrote         %s/part={0..%d}/%s\n", dir, n-1, split.SliceName(k))
}

// hotName names a hot word as the memory table does.
func hotName(h engine.HotWord) string {
	if h.Space.PerGroup() {
		return fmt.Sprintf("%s group %d 0x%x", h.Space, h.Group, h.Addr)
	}
	return fmt.Sprintf("%s 0x%x", h.Space, h.Addr)
}
