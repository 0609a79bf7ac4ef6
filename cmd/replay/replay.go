package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pkg/profile"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/examples"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

func cmdReplay(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	out := fs.String("o", "", "output directory")
	format := fs.String("format", "parquet", "parquet, arrow or both")
	tables := fs.String("tables", "", "comma-separated tables")
	shards := fs.Int("shards", 64, "memory shards")
	workers := fs.Int("workers", 0, "workers, 0 = GOMAXPROCS")
	batch := fs.Int("batch", 4096, "instructions per batch")
	strict := fs.Bool("strict", false, "stop at the first fault")
	explore := fs.Bool("explore", false, "fill the addresses table's order_sensitive column")
	maxMem := sizeValue(engine.DefaultMaxMemory)
	fs.Var(&maxMem, "max-memory", "simulated memory limit in bytes (8Gi, 512Mi, 1e9)")
	prof := fs.String("profile", "", "cpu, mem, allocs, block, mutex, trace, goroutine")
	profDir := fs.String("profile-dir", "profiles", "profile directory")
	quiet := fs.Bool("q", false, "quiet")
	partFlag := fs.String("partition", "", "replay partition i/n, or auto")
	orderFlag := fs.String("order", "lane", "lane, reverse or random")
	seed := fs.Uint64("seed", 1, "the random order's seed")
	interleave := fs.Int("interleave", 0, "with -order random: reorder warps within windows of W instructions")
	exploreOrders := fs.Int("explore-orders", 0, "replay K random orders too: the orders table")
	races := fs.Bool("races", false, "the races table")
	clusterSize := fs.Int64("cluster-size", 1, "CTAs (groups) a cluster, for .cluster scope")
	partsFlag := fs.Int("partitions", 0, "with -partition auto: n")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("replay takes one trace, got %d: %s", len(pos), strings.Join(pos, " "))
	}
	order, err := engine.ParseOrder(*orderFlag)
	if err != nil {
		return usagef("-order: %v", err)
	}
	if *exploreOrders < 0 || *exploreOrders > 1000 {
		return usagef("-explore-orders %d: want 0..1000", *exploreOrders)
	}
	if *exploreOrders > 0 && len(pos) == 1 && pos[0] == "-" {
		return usagef("-explore-orders replays the trace again per order, so it must be a file, not standard input")
	}
	if *races && len(pos) == 1 && pos[0] == "-" {
		return usagef("-races reads the trace in a pass of its own, so it must be a file, not standard input")
	}
	if *clusterSize < 1 {
		return usagef("-cluster-size %d: want 1 or more", *clusterSize)
	}
	part, parts := 0, 1
	if *partFlag != "" {
		if part, parts, err = partitionOf(*partFlag, *partsFlag, os.Getenv); err != nil {
			return usagef("%v", err)
		}
		if len(pos) == 1 && pos[0] == "-" {
			return usagef("-partition: every partition reads the whole trace, so it must be a file, not standard input")
		}
		if *tables != "" && strings.Contains(","+*tables+",", ",ops,") && !strings.Contains(","+*tables+",", ",instructions,") {
			return usagef("-partition with the ops table needs the instructions table: replay merge recomputes ops from it")
		}
		if *races {
			return usagef("-races looks at every access to an address, which partitions split: replay without -partition")
		}
	} else if *partsFlag != 0 {
		return usagef("-partitions goes with -partition auto")
	}

	var copts []columnar.Option
	f, err := columnar.ParseFormat(*format)
	if err != nil {
		return usagef("-format: %v", err)
	}
	copts = append(copts, columnar.WithFormat(f))
	tableList := *tables
	// The orders and races tables come with their flags, beside the others.
	for _, extra := range []struct {
		on    bool
		table string
	}{{*exploreOrders > 0, "orders"}, {*races, "races"}} {
		if !extra.on {
			continue
		}
		if tableList == "" {
			tableList = strings.Join(columnar.TableNames(), ",")
		}
		if !strings.Contains(","+tableList+",", ","+extra.table+",") {
			tableList += "," + extra.table
		}
	}
	if tableList != "" {
		copts = append(copts, columnar.WithTables(strings.Split(tableList, ",")...))
	}
	eopts := []engine.Option{engine.WithShards(*shards), engine.WithWorkers(*workers),
		engine.WithBatchInsts(*batch), engine.WithStrict(*strict), engine.WithMaxMemory(uint64(maxMem)), engine.WithExplore(*explore),
		engine.WithPartition(part, parts), engine.WithOrder(order, *seed), engine.WithInterleave(*interleave)}
	// Validate every option before touching the trace or the output.
	if _, err := engine.New(&trace.Header{}, eopts...); err != nil {
		return usagef("%v", err)
	}
	if *prof != "" {
		stop, err := startProfile(*prof, *profDir)
		if err != nil {
			return err
		}
		defer stop()
	}

	name, src, closeSrc, prog, err := openTrace(pos)
	if err != nil {
		return err
	}
	defer closeSrc()
	progress := &replayProgress{bar: newProgressBar(stderr, 0), file: prog}
	progress.bar.on = progress.bar.on && !*quiet
	eopts = append(eopts, engine.WithProgress(progress.update))
	dir := *out
	if dir == "" {
		dir = defaultOutDir(name)
	}
	if *partFlag != "" {
		// A partition's tables go to DIR/part=i (Hive partitioning), marked
		// with the partition and the trace, which replay merge checks.
		sum, err := traceChecksum(pos)
		if err != nil {
			return err
		}
		dir = filepath.Join(dir, fmt.Sprintf("part=%d", part))
		copts = append(copts, columnar.WithMetadata(map[string]string{
			columnar.MetaPartition: fmt.Sprintf("%d/%d", part, parts),
			columnar.MetaTrace:     sum,
		}))
	}
	// New reports in one line when it completes or cleans up after a
	// replay that was killed in this directory. It is a warning about
	// files it touched, so it is printed even with -q.
	copts = append(copts, columnar.WithLogf(func(format string, args ...any) {
		fmt.Fprintf(stderr, "replay: "+format+"\n", args...)
	}))
	sink, err := columnar.New(dir, copts...)
	if errors.Is(err, columnar.ErrInvalidOption) {
		return usagef("%v", err)
	}
	if err != nil {
		// Another replay is writing dir, or dir cannot be created,
		// locked or tidied: not a usage error.
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	var replaySink engine.Sink = sink
	open := func() (trace.Source, error) {
		_, s, closeFn, _, err := openTrace(pos)
		if err != nil {
			return nil, err
		}
		return &closingSource{Source: withCancel(ctx, s), close: closeFn}, nil
	}
	if *exploreOrders > 0 || *races {
		// The other orders (each a replay of its own with the memory table
		// only) and the races (a pass of their own) first; their rows go
		// into their tables, committed with the others.
		extra := &extrasThenCommit{Writer: sink}
		var err error
		if *exploreOrders > 0 {
			extra.orders, err = engine.ExploreOrders(open, *exploreOrders, *seed, eopts...)
		}
		if err == nil && *races {
			var src trace.Source
			if src, err = open(); err == nil {
				extra.races, err = engine.Races(src, engine.RacesOptions{ClusterSize: *clusterSize})
				src.(*closingSource).Close()
			}
		}
		if err != nil {
			return errors.Join(fmt.Errorf("%s: %w (no tables written)", name, err), sink.Abort())
		}
		replaySink = extra
	}
	sum, err := engine.Replay(withCancel(ctx, src), replaySink, eopts...)
	progress.clear()
	if err != nil {
		return fmt.Errorf("%s: %w (no tables written)", name, err)
	}
	if !*quiet {
		printSummary(stdout, name, dir, f, *tables, sum)
	}
	return nil
}

// openTrace opens the trace named by pos (none: the embedded demo; "-":
// standard input), recognising binary traces by their zstd magic. A binary
// trace in a regular file is read through its seek table, several chunks
// decompressed at once; one on standard input is read as a stream, the
// next chunks read and decompressed while one is decoded. closeFn stops
// the reader's goroutines and closes the file; call it however the
// reading ends. The progress reader is nil unless the trace is a regular
// file.
func openTrace(pos []string) (name string, src trace.Source, closeFn func(), prog *progressReader, err error) {
	closeFn = func() {}
	var r io.Reader
	switch {
	case len(pos) == 0:
		name = "demo"
		r = bytes.NewReader(examples.SimpleAtomicIntrinsics())
	case pos[0] == "-":
		name = "stdin"
		r = os.Stdin
	default:
		name = pos[0]
		f, err := os.Open(pos[0])
		if err != nil {
			return "", nil, closeFn, nil, err
		}
		closeFn = func() { f.Close() }
		r = f
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			prog = &progressReader{r: f, size: fi.Size()}
			r = prog
			var head [4]byte
			if n, _ := f.ReadAt(head[:], 0); trace.IsBinary(head[:n]) {
				x, err := trace.OpenBinaryIndex(f, fi.Size(), trace.WithName(filepath.Base(name)),
					trace.WithProgress(func(off int64) { prog.n.Store(off) }))
				if err != nil {
					f.Close()
					return "", nil, func() {}, nil, err
				}
				br, err := x.Reader(0, x.NumChunks())
				if err != nil {
					f.Close()
					return "", nil, func() {}, nil, err
				}
				return name, br, func() { br.Close(); f.Close() }, prog, nil
			}
		}
	}
	buf := bufio.NewReaderSize(r, 1<<20)
	head, _ := buf.Peek(4)
	if trace.IsBinary(head) {
		var br *trace.BinaryReader
		if br, err = trace.NewBinaryReader(buf, trace.WithName(filepath.Base(name))); err == nil {
			closeFile := closeFn
			closeFn = func() { br.Close(); closeFile() }
			src = br
		}
	} else {
		src, err = trace.NewTextReader(buf, filepath.Base(name))
	}
	if err != nil {
		closeFn()
		return "", nil, func() {}, nil, err
	}
	if len(pos) == 0 {
		name = "demo (" + examples.SimpleAtomicIntrinsicsName + ", embedded)"
	}
	return name, src, closeFn, prog, nil
}

// progressReader counts the bytes read from a trace file, for the progress
// line; the reader goroutine writes the count, the emitter reads it.
type progressReader struct {
	r    io.Reader
	size int64
	n    atomic.Int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n.Add(int64(n))
	return n, err
}

// fraction is how much of the file has been read.
func (p *progressReader) fraction() float64 { return float64(p.n.Load()) / float64(p.size) }

// replayProgress draws a progress line on a terminal: the share of the
// trace file read (when the trace is a file), lane-ops replayed, the rate.
type replayProgress struct {
	bar  *progressBar
	file *progressReader // nil for the demo and standard input
}

func (p *replayProgress) update(s engine.Summary) {
	now := time.Now()
	if !p.bar.on || now.Sub(p.bar.last) < 100*time.Millisecond {
		return
	}
	p.bar.last = now
	rate := float64(s.LaneOps) / max(now.Sub(p.bar.start).Seconds(), 1e-9)
	if p.file == nil {
		fmt.Fprintf(p.bar.w, "\r%s lane-ops  %s lane-ops/s ", humanCount(s.LaneOps), humanRate(rate))
		return
	}
	const width = 30
	frac := min(p.file.fraction(), 1)
	fill := int(frac * width)
	fmt.Fprintf(p.bar.w, "\r[%s%s] %5.1f%% of the file  %s lane-ops  %s lane-ops/s ",
		strings.Repeat("#", fill), strings.Repeat(".", width-fill), 100*frac, humanCount(s.LaneOps), humanRate(rate))
}

// clear removes the progress line.
func (p *replayProgress) clear() {
	if p.bar.on {
		fmt.Fprintf(p.bar.w, "\r%s\r", strings.Repeat(" ", 100))
	}
}

// defaultOutDir is ./NAME.tables for a trace NAME.ext…, ./demo.tables for the demo.
func defaultOutDir(name string) string {
	if strings.HasPrefix(name, "demo") {
		return "demo.tables"
	}
	if name == "stdin" {
		return "stdin.tables"
	}
	base := filepath.Base(name)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base + ".tables"
}

// closingSource is a Source with the function that closes its file.
type closingSource struct {
	trace.Source
	close func()
}

func (s *closingSource) Close() error { s.close(); return nil }

// extrasThenCommit writes the -explore-orders witnesses and the -races rows
// into their tables just before the replay's commit, so that they appear
// with the other tables or not at all.
type extrasThenCommit struct {
	*columnar.Writer
	orders []engine.OrderWitness
	races  []engine.RaceRow
}

func (s *extrasThenCommit) Commit() error {
	if s.Writer.WantsOrders() {
		if err := s.Writer.Orders(s.orders); err != nil {
			return err
		}
	}
	if s.Writer.WantsRaces() {
		if err := s.Writer.Races(s.races); err != nil {
			return err
		}
	}
	return s.Writer.Commit()
}

// partitionOf resolves -partition: "i/n", or "auto": i from the array
// job's index (Slurm: SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN;
// Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX) and n from -partitions,
// else REPLAY_PARTITIONS, else (Slurm) SLURM_ARRAY_TASK_COUNT.
func partitionOf(flagVal string, partsFlag int, getenv func(string) string) (i, n int, err error) {
	if flagVal != "auto" {
		if partsFlag != 0 {
			return 0, 0, fmt.Errorf("-partitions goes with -partition auto, not %s", flagVal)
		}
		i, n, err = columnar.ParsePartition(flagVal)
		if err == nil && n > shard.MaxPartitions {
			err = fmt.Errorf("-partition %s: at most %d partitions", flagVal, shard.MaxPartitions)
		}
		return i, n, err
	}
	num := func(name string) (int, bool, error) {
		s := getenv(name)
		if s == "" {
			return 0, false, nil
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return 0, true, fmt.Errorf("-partition auto: %s=%q is not a count", name, s)
		}
		return v, true, nil
	}
	n = partsFlag
	if n == 0 {
		v, ok, err := num("REPLAY_PARTITIONS")
		if err != nil {
			return 0, 0, err
		}
		if ok {
			n = v
		}
	}
	if id, ok, err := num("SLURM_ARRAY_TASK_ID"); err != nil {
		return 0, 0, err
	} else if ok {
		lo, _, err := num("SLURM_ARRAY_TASK_MIN")
		if err != nil {
			return 0, 0, err
		}
		i = id - lo
		if n == 0 {
			if n, _, err = num("SLURM_ARRAY_TASK_COUNT"); err != nil {
				return 0, 0, err
			}
		}
	} else if idx, ok, err := num("JOB_COMPLETION_INDEX"); err != nil {
		return 0, 0, err
	} else if ok {
		i = idx
	} else {
		return 0, 0, fmt.Errorf("-partition auto: no SLURM_ARRAY_TASK_ID (Slurm array job) nor JOB_COMPLETION_INDEX (Kubernetes Indexed Job) in the environment")
	}
	switch {
	case n == 0:
		return 0, 0, fmt.Errorf("-partition auto: how many partitions? give -partitions N or REPLAY_PARTITIONS")
	case n > shard.MaxPartitions:
		return 0, 0, fmt.Errorf("-partition auto: %d partitions, at most %d", n, shard.MaxPartitions)
	case i < 0 || i >= n:
		return 0, 0, fmt.Errorf("-partition auto: index %d is not one of %d partitions (0..%d)", i, n, n-1)
	}
	return i, n, nil
}

// traceChecksum names the trace a partition replays, for replay merge:
// the xxhash64 of the file's bytes and its size (of the embedded demo's,
// without a TRACE).
func traceChecksum(pos []string) (string, error) {
	h := xxhash.New()
	var n int64
	if len(pos) == 0 {
		b := examples.SimpleAtomicIntrinsics()
		h.Write(b)
		n = int64(len(b))
	} else {
		f, err := os.Open(pos[0])
		if err != nil {
			return "", err
		}
		defer f.Close()
		if n, err = io.Copy(h, f); err != nil {
			return "", fmt.Errorf("%s: %w", pos[0], err)
		}
	}
	return fmt.Sprintf("xxh64:%016x %d", h.Sum64(), n), nil
}

// cancelSource stops a replay when ctx is cancelled (Ctrl-C): the engine
// then aborts the sink and no table is left behind.
type cancelSource struct {
	trace.Source
	ctx context.Context
	n   uint32
}

func (s *cancelSource) Next() (*trace.Inst, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Source.Next()
}

// check looks at ctx every 1024 records.
func (s *cancelSource) check() error {
	s.n++
	if s.n&1023 == 0 && s.ctx.Err() != nil {
		return fmt.Errorf("interrupted")
	}
	return nil
}

// cancelArenaSource is a cancelSource over a trace.ArenaSource, which it
// stays, so that the engine still decodes lists into its batches.
type cancelArenaSource struct {
	cancelSource
	as trace.ArenaSource
}

func (s *cancelArenaSource) NextInto(arena []uint64) (*trace.Inst, []uint64, error) {
	if err := s.check(); err != nil {
		return nil, arena, err
	}
	return s.as.NextInto(arena)
}

// withCancel wraps src in a cancelSource, an ArenaSource if src is one.
func withCancel(ctx context.Context, src trace.Source) trace.Source {
	if as, ok := src.(trace.ArenaSource); ok {
		return &cancelArenaSource{cancelSource{Source: src, ctx: ctx}, as}
	}
	return &cancelSource{Source: src, ctx: ctx}
}

func startProfile(kind, dir string) (func(), error) {
	modes := map[string]func(*profile.Profile){
		"cpu": profile.CPUProfile, "mem": profile.MemProfile, "allocs": profile.MemProfileAllocs,
		"block": profile.BlockProfile, "mutex": profile.MutexProfile, "trace": profile.TraceProfile,
		"goroutine": profile.GoroutineProfile,
	}
	mode, ok := modes[kind]
	if !ok {
		return nil, usagef("-profile: unknown kind %q (cpu, mem, allocs, block, mutex, trace, goroutine)", kind)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := profile.Start(mode, profile.ProfilePath(dir), profile.NoShutdownHook)
	return p.Stop, nil
}

func printSummary(w io.Writer, name, dir string, f columnar.Format, tables string, s engine.Summary) {
	secs := s.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(s.LaneOps) / secs
	}
	fmt.Fprintf(w, "replayed %s\n", name)
	fmt.Fprintf(w, "  instructions  %d\n", s.Instructions)
	fmt.Fprintf(w, "  lanes         %d (%d lane-ops)\n", s.Lanes, s.LaneOps)
	fmt.Fprintf(w, "  faults        %d\n", s.Faults)
	fmt.Fprintf(w, "  memory words  %d\n", s.Words)
	fmt.Fprintf(w, "  time          %s (%s lane-ops/s)\n", s.Elapsed.Round(time.Microsecond), humanRate(rate))
	names := columnar.TableNames()
	if tables != "" {
		names = strings.Split(tables, ",")
	}
	var files []string
	for _, n := range names {
		switch f {
		case columnar.FormatArrow:
			files = append(files, n+".arrow")
		case columnar.FormatBoth:
			files = append(files, n+".parquet", n+".arrow")
		default:
			files = append(files, n+".parquet")
		}
	}
	fmt.Fprintf(w, "  wrote         %s/{%s}\n", dir, strings.Join(files, ","))
}

func humanRate(r float64) string {
	switch {
	case r >= 1e9:
		return fmt.Sprintf("%.2f G", r/1e9)
	case r >= 1e6:
		return fmt.Sprintf("%.2f M", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.2f k", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}
