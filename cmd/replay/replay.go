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
	"runtime"
	"runtime/debug"
	"slices"
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
	"github.com/gpureplay/replay/split"
	"github.com/gpureplay/replay/trace"
)

// replayOptions are replay's flags, parsed, and the trace named (pos). part
// and parts are -partition resolved, order -order, by validate.
type replayOptions struct {
	out, format, tables    string
	shards, workers, batch int
	strict, explore        bool
	maxMem                 sizeValue
	prof, profDir          string
	quiet                  bool
	partFlag, orderFlag    string
	seed                   uint64
	interleave             int
	exploreOrders          int
	races                  bool
	clusterSize            int64
	partsFlag              int
	pos                    []string

	order       engine.Order
	part, parts int
	// splitDir: the trace named is a split directory (replay split), of
	// which -partition replays one partition's slices.
	splitDir bool

	// racesFrom is what asked for the races pass: "-races" or "-tables
	// races", for the errors that refuse it.
	racesFrom string

	// observe, when set (by a test), gets every replay's running totals,
	// the replay's own and each -explore-orders order's: which fast paths
	// the command's replays took (engine.Summary's ArenaInsts and
	// RepeatInsts).
	observe func(engine.Summary)
}

// cmdReplay replays a trace (none: the embedded demo; "-": standard input)
// into tables, whole or not at all.
func cmdReplay(args []string, stdout, stderr io.Writer) error {
	return replayObserved(args, stdout, stderr, nil)
}

// replayObserved is cmdReplay with replayOptions.observe.
func replayObserved(args []string, stdout, stderr io.Writer, observe func(engine.Summary)) error {
	o, err := parseReplayFlags(args)
	if err != nil {
		return err
	}
	if err := subcommandMistake(o.pos, args); err != nil {
		return err
	}
	o.observe = observe
	if err := o.validate(); err != nil {
		return err
	}
	copts, f, err := o.columnarOptions()
	if err != nil {
		return err
	}
	eopts := o.engineOptions()
	// Validate every option before touching the trace or the output.
	if err := engine.ValidateOptions(append(eopts, o.extraOptions()...)...); err != nil {
		return usagef("%v", err)
	}
	if o.prof != "" {
		stop, err := startProfile(o.prof, o.profDir, o.quiet)
		if err != nil {
			return err
		}
		defer stop()
	}
	return o.run(copts, eopts, f, stdout, stderr)
}

// parseReplayFlags defines replay's flags and parses args into options.
func parseReplayFlags(args []string) (*replayOptions, error) {
	o := &replayOptions{maxMem: sizeValue(engine.DefaultMaxMemory)}
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.StringVar(&o.out, "o", "", "output directory")
	fs.StringVar(&o.format, "format", "parquet", "parquet, arrow or both")
	fs.StringVar(&o.tables, "tables", "", "comma-separated tables")
	fs.IntVar(&o.shards, "shards", 64, "memory shards")
	fs.IntVar(&o.workers, "workers", 0, "workers, 0 = GOMAXPROCS")
	fs.IntVar(&o.batch, "batch", 4096, "instructions per batch")
	fs.BoolVar(&o.strict, "strict", false, "stop at the first fault")
	fs.BoolVar(&o.explore, "explore", false, "fill the addresses table's order_sensitive column")
	fs.Var(&o.maxMem, "max-memory", "simulated memory limit in bytes (8Gi, 512Mi, 1e9)")
	fs.StringVar(&o.prof, "profile", "", "cpu, mem, allocs, block, mutex, trace, goroutine")
	fs.StringVar(&o.profDir, "profile-dir", "profiles", "profile directory")
	fs.BoolVar(&o.quiet, "q", false, "quiet")
	fs.StringVar(&o.partFlag, "partition", "", "replay partition i/n, or auto")
	fs.StringVar(&o.orderFlag, "order", "lane", "lane, reverse or random")
	fs.Uint64Var(&o.seed, "seed", 1, "the random order's seed")
	fs.IntVar(&o.interleave, "interleave", 0, "with -order random: reorder warps within windows of W instructions")
	fs.IntVar(&o.exploreOrders, "explore-orders", 0, "replay K random orders too: the orders table")
	fs.BoolVar(&o.races, "races", false, "the races table")
	fs.Int64Var(&o.clusterSize, "cluster-size", 1, "CTAs (groups) a cluster, for .cluster scope where the trace names none")
	fs.IntVar(&o.partsFlag, "partitions", 0, "with -partition auto: n")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	o.pos = pos
	return o, nil
}

// stdin reports whether the trace is standard input ("-").
func (o *replayOptions) stdin() bool { return len(o.pos) == 1 && o.pos[0] == "-" }

// validate checks the flag combinations, in this order: the trace count,
// -order, -explore-orders (and with -interleave), -tables with -races and
// -explore-orders, -races, -cluster-size, then -partition. It sets o.order, o.part and o.parts, and
// o.races when -tables names the races table.
func (o *replayOptions) validate() error {
	if len(o.pos) > 1 {
		return usagef("replay takes one trace, got %d: %s", len(o.pos), strings.Join(o.pos, " "))
	}
	order, err := engine.ParseOrder(o.orderFlag)
	if err != nil {
		return usagef("-order: %v", err)
	}
	o.order = order
	if o.exploreOrders < 0 || o.exploreOrders > 1000 {
		return usagef("-explore-orders %d: want 0..1000", o.exploreOrders)
	}
	if o.exploreOrders > 0 && o.interleave > 0 {
		return usagef("-explore-orders %d replays lane order and random orders of its own, which -interleave's windows do not reorder: drop -interleave or -explore-orders", o.exploreOrders)
	}
	if err := o.validateExtraTables(); err != nil {
		return err
	}
	if o.exploreOrders > 0 && o.stdin() {
		return usagef("-explore-orders replays the trace again per order, so it must be a file, not standard input")
	}
	if o.races && o.stdin() {
		return usagef("%s reads the trace in a pass of its own, so it must be a file, not standard input", o.racesFrom)
	}
	if o.clusterSize < 1 {
		return usagef("-cluster-size %d: want 1 or more", o.clusterSize)
	}
	return o.validatePartition()
}

// validatePartition resolves -partition (and -partitions) into o.part and
// o.parts, and checks what a partitioned replay cannot do.
func (o *replayOptions) validatePartition() error {
	o.part, o.parts = 0, 1
	if o.partFlag == "" {
		if o.partsFlag != 0 {
			return usagef("-partitions goes with -partition auto")
		}
		return nil
	}
	var err error
	if o.part, o.parts, err = partitionOf(o.partFlag, o.partsFlag, os.Getenv); err != nil {
		return usagef("%v", err)
	}
	if o.stdin() {
		return usagef("-partition: every partition reads the whole trace, so it must be a file, not standard input")
	}
	if len(o.pos) == 1 {
		if st, err := os.Stat(o.pos[0]); err == nil && st.IsDir() {
			if !split.IsSplitDir(o.pos[0]) {
				return usagef("-partition: %s is a directory but no split directory (part=i/slice=K.zst): replay split writes one", o.pos[0])
			}
			o.splitDir = true
			if o.exploreOrders > 0 {
				return usagef("-explore-orders replays the whole trace again per order: replay the trace, not a split directory")
			}
		}
	}
	if o.tables != "" && strings.Contains(","+o.tables+",", ",ops,") && !strings.Contains(","+o.tables+",", ",instructions,") {
		return usagef("-partition with the ops table needs the instructions table: replay merge recomputes ops from it")
	}
	if o.races {
		return usagef("%s looks at every access to an address, which partitions split: replay without -partition", o.racesFrom)
	}
	return nil
}

// validateExtraTables makes -tables agree with the flags whose passes fill
// the races and orders tables. With no -tables, -races and -explore-orders
// add their table to the default ones. A -tables list is exactly the
// tables written: naming races runs the races pass, as -races does; naming
// orders needs -explore-orders K (the orders to compare); and -races or
// -explore-orders with a list that leaves its table out is refused, rather
// than writing a table the list does not name.
func (o *replayOptions) validateExtraTables() error {
	if o.races {
		o.racesFrom = "-races"
	}
	if o.tables == "" {
		return nil
	}
	has := func(table string) bool { return slices.Contains(strings.Split(o.tables, ","), table) }
	if has("races") {
		o.races, o.racesFrom = true, "-tables races"
	} else if o.races {
		return usagef("-races writes the races table, which -tables %s leaves out; add it (-tables %s,races), or drop -races", o.tables, o.tables)
	}
	switch {
	case has("orders") && o.exploreOrders == 0:
		return usagef("-tables %s: the orders table needs -explore-orders K, the random orders to replay beside lane order; add -explore-orders 8, or drop orders from -tables", o.tables)
	case !has("orders") && o.exploreOrders > 0:
		return usagef("-explore-orders %d writes the orders table, which -tables %s leaves out; add it (-tables %s,orders), or drop -explore-orders", o.exploreOrders, o.tables, o.tables)
	}
	return nil
}

// columnarOptions are the writer's options from -format and -tables (with
// the orders and races tables their flags add), and the format.
func (o *replayOptions) columnarOptions() ([]columnar.Option, columnar.Format, error) {
	f, err := columnar.ParseFormat(o.format)
	if err != nil {
		return nil, f, usagef("-format: %v", err)
	}
	copts := []columnar.Option{columnar.WithFormat(f)}
	if tableList := o.tableList(); tableList != "" {
		copts = append(copts, columnar.WithTables(strings.Split(tableList, ",")...))
	}
	return copts, f, nil
}

// combinedOK checks that a replay of a partition of a combined split
// (replay split -tables memory,instructions,ops; file is one of its
// slices) needs nothing per lane, which such a split folded away.
func (o *replayOptions) combinedOK(file string) error {
	var what string
	tables := o.tableList()
	switch {
	case tables == "":
		what = "the default tables (results and addresses among them)"
	case !split.CombineTables(strings.Split(tables, ",")):
		what = "-tables " + tables
	case o.explore:
		what = "-explore"
	case o.interleave > 0:
		what = "-interleave"
	case o.order != engine.OrderLane:
		what = "-order " + o.orderFlag
	default:
		return nil
	}
	return fmt.Errorf("%s: its split combined the accesses of commuting atomics to a word (replay split -tables with only memory, instructions and ops), so it holds no lane's own access, but this replay asks for %s: split the trace again with -tables naming the tables this replay writes, or replay with -tables memory,instructions,ops", file, what)
}

// tableList is the tables to write: -tables, which validate made agree
// with -races and -explore-orders, else the default tables with the orders
// and races tables of those flags. "" stands for the default tables.
func (o *replayOptions) tableList() string {
	if o.tables != "" {
		return o.tables
	}
	tableList := ""
	// The orders and races tables come with their flags, beside the others.
	for _, extra := range []struct {
		on    bool
		table string
	}{{o.exploreOrders > 0, "orders"}, {o.races, "races"}} {
		if !extra.on {
			continue
		}
		if tableList == "" {
			tableList = strings.Join(columnar.TableNames(), ",")
		}
		tableList += "," + extra.table
	}
	return tableList
}

// engineOptions are the engine's options from the flags.
func (o *replayOptions) engineOptions() []engine.Option {
	return append(o.sharedOptions(), engine.WithExplore(o.explore), engine.WithOrder(o.order, o.seed), engine.WithInterleave(o.interleave))
}

// sharedOptions are the options of every replay, the main one's and
// -explore-orders' (which picks each replay's order itself).
func (o *replayOptions) sharedOptions() []engine.Option {
	return []engine.Option{engine.WithShards(o.shards), engine.WithWorkers(o.workers),
		engine.WithBatchInsts(o.batch), engine.WithStrict(o.strict), engine.WithMaxMemory(uint64(o.maxMem)),
		engine.WithPartition(o.part, o.parts)}
}

// extraOptions are the options of the -explore-orders and -races passes
// (ExploreOrders' orders, Races' cluster size), for ValidateOptions.
func (o *replayOptions) extraOptions() []engine.Option {
	var opts []engine.Option
	if o.exploreOrders > 0 {
		opts = append(opts, engine.WithOrders(o.exploreOrders, o.seed))
	}
	return append(opts, engine.WithClusterSize(o.clusterSize))
}

// run opens the trace and the output directory, runs the extra passes,
// replays and prints the summary.
func (o *replayOptions) run(copts []columnar.Option, eopts []engine.Option, f columnar.Format, stdout, stderr io.Writer) error {
	var name, id, optName string
	var src trace.Source
	var closeSrc func()
	var prog *progressReader
	var err error
	if o.splitDir {
		// A partition of a split trace: its slices, in order, and no other
		// partition's files.
		var ss *split.Source
		// With more than one worker, the slices' blocks are decoded on a
		// goroutine of their own, ahead of the engine applying them,
		// unless every slice is combined (split.WithDecodeAhead).
		if ss, err = split.Open(o.pos[0], o.part, o.parts, split.WithDecodeAhead(o.workers != 1)); err != nil {
			return err
		}
		if c := ss.Combined(); c != "" {
			if err := o.combinedOK(c); err != nil {
				ss.Close()
				return err
			}
		}
		name, src, closeSrc, id, optName = o.pos[0], ss, func() { ss.Close() }, ss.Trace(), ss.Name()
	} else if name, src, closeSrc, prog, err = openTrace(o.pos); err != nil {
		return err
	}
	defer closeSrc()
	addrOnly := src.Header().AddressOnly
	if addrOnly {
		if err := o.addressOnly(name); err != nil {
			return err
		}
		if copts, f, err = o.columnarOptions(); err != nil {
			return err
		}
	}
	progress := &replayProgress{bar: newProgressBar(stderr, 0), file: prog}
	progress.bar.on = progress.bar.on && !o.quiet
	withProgress := engine.WithProgress(func(s engine.Summary) {
		progress.update(s)
		if o.observe != nil {
			o.observe(s)
		}
	})
	eopts = append(eopts, withProgress)
	dir, copts, err := o.outputDir(name, id, copts)
	if err != nil {
		return err
	}
	if optName == "" {
		optName = name
	}
	copts = append(copts, columnar.WithRunOptions(o.runOptions(optName)))
	// Ctrl-C is caught before the first table file is made: from then on
	// it stops the replay, which removes them, rather than killing the
	// process and leaving them.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	sink, err := openSink(dir, copts, stderr)
	if err != nil {
		return err
	}
	var replaySink engine.Sink = sink
	if o.exploreOrders > 0 || o.races {
		if replaySink, err = o.extras(ctx, name, sink, withProgress); err != nil {
			return err
		}
	}
	// No cancelSource here: engine.Replay looks at ctx before each batch
	// (a batch is 4096 records at most), and the wrapper's calls a record,
	// on the read stage, cost a lean histogram replay 4-8% of its CPU.
	sum, err := engine.Replay(ctx, src, replaySink, eopts...)
	progress.clear()
	if err != nil && ctx.Err() != nil {
		// Ctrl-C or SIGTERM: say so, as cancelSource does, not the
		// context's error.
		err = errors.New("interrupted")
	}
	if err != nil {
		return fmt.Errorf("%w (no tables written)", inTrace(name, cliError{err}))
	}
	if !o.quiet {
		printSummary(stdout, name, dir, f, o.tableList(), sum)
		if addrOnly {
			fmt.Fprintf(stdout, "  applied       nothing: the trace carries addresses only (no memory or results table)\n")
		}
	}
	return nil
}

// errAddressOnly is what a replay of an address-only trace says of what
// needs values.
const errAddressOnly = "this trace carries addresses only; its values were not captured"

// addressOnly fits the options to an address-only trace (imported from a
// tracer that records addresses, not values: TASM.md): it refuses what
// needs values (the memory and results tables, -explore, -explore-orders),
// and without -tables writes the tables addresses decide: instructions,
// ops, addresses, and races (unless the trace is standard input or a
// partition, which a races pass cannot take).
func (o *replayOptions) addressOnly(name string) error {
	if o.tables != "" {
		for _, t := range strings.Split(o.tables, ",") {
			if t == "memory" || t == "results" {
				return fmt.Errorf("%s: %s; -tables %s asks for the %s table: leave memory and results out (such a trace writes instructions, ops, addresses and races)", name, errAddressOnly, o.tables, t)
			}
		}
	}
	switch {
	case o.explore:
		return fmt.Errorf("%s: %s; -explore compares the operands of an address's accesses: drop -explore", name, errAddressOnly)
	case o.exploreOrders > 0:
		return fmt.Errorf("%s: %s; -explore-orders compares final values: drop -explore-orders", name, errAddressOnly)
	}
	if o.tables == "" {
		o.tables = "instructions,ops,addresses"
		if !o.stdin() && o.parts <= 1 {
			o.tables += ",races"
			o.races, o.racesFrom = true, "-tables races"
		}
	}
	return nil
}

// outputDir is the directory the tables go to: -o, else one named after
// the trace; a partition's is its part=i below, and copts gain the
// partition's metadata (id, when not empty, is the trace's identity: that
// of the trace a split directory holds).
func (o *replayOptions) outputDir(name, id string, copts []columnar.Option) (string, []columnar.Option, error) {
	dir := o.out
	if dir == "" {
		dir = defaultOutDir(name)
	}
	if o.partFlag != "" {
		// A partition's tables go to DIR/part=i (Hive partitioning), marked
		// with the partition and the trace, which replay merge checks.
		sum := id
		if sum == "" {
			var err error
			if sum, err = traceChecksum(o.pos); err != nil {
				return "", nil, err
			}
		}
		dir = filepath.Join(dir, fmt.Sprintf("part=%d", o.part))
		copts = append(copts, columnar.WithMetadata(map[string]string{
			columnar.MetaPartition: fmt.Sprintf("%d/%d", o.part, o.parts),
			columnar.MetaTrace:     sum,
		}), columnar.WithBatchRows(partitionBatchRows))
		if o.splitDir {
			// Its instructions rows are whole windows of seqs
			// (split.RowWindow): the row groups of those windows are the
			// merged file's, which replay merge copies.
			copts = append(copts, columnar.WithSeqRowGroups(columnar.DefaultBatchRows))
		}
	}
	return dir, copts, nil
}

// partitionBatchRows is the row groups' size of a partition's tables: a
// quarter of a whole replay's, so that replay merge, which holds a row
// group of every partition's file decoded at once (and one more where it
// merges), holds a quarter of the memory. The merged tables are written
// in the whole replay's row groups, whatever the partitions' are.
const partitionBatchRows = columnar.DefaultBatchRows / 4

// runOptions is what the tables record of this replay (replay.options):
// the flags that change what they hold, the trace's name and the build.
func (o *replayOptions) runOptions(name string) columnar.RunOptions {
	if len(o.pos) > 0 {
		name = filepath.Base(name)
	}
	r := columnar.RunOptions{Trace: name, Order: o.order.String(), Seed: o.seed, Interleave: o.interleave,
		Explore: o.explore, ExploreOrders: o.exploreOrders, Races: o.races, ClusterSize: o.clusterSize, Strict: o.strict}
	if o.partFlag != "" {
		r.Partition = fmt.Sprintf("%d/%d", o.part, o.parts)
	}
	r.Version, r.Commit = buildVersion()
	return r
}

// buildVersion is the command's module version and VCS revision, as the
// Go toolchain recorded them in the binary.
func buildVersion() (version, commit string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown", ""
	}
	version = bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if commit != "" && modified {
		commit += "+dirty"
	}
	return version, commit
}

// openSink creates the columnar writer for dir, logging to stderr.
func openSink(dir string, copts []columnar.Option, stderr io.Writer) (*columnar.Writer, error) {
	// New reports in one line when it completes or cleans up after a
	// replay that was killed in this directory. It is a warning about
	// files it touched, so it is printed even with -q.
	copts = append(copts, columnar.WithLogf(func(format string, args ...any) {
		fmt.Fprintf(stderr, "replay: "+format+"\n", args...)
	}))
	sink, err := columnar.New(dir, copts...)
	if errors.Is(err, columnar.ErrInvalidOption) {
		return nil, usagef("%v", err)
	}
	if err != nil {
		// Another replay is writing dir, or dir cannot be created,
		// locked or tidied: not a usage error.
		return nil, err
	}
	return sink, nil
}

// extras runs the -explore-orders and -races passes, and returns the sink
// that writes their rows at the replay's commit. On failure it aborts sink.
func (o *replayOptions) extras(ctx context.Context, name string, sink *columnar.Writer, withProgress engine.Option) (engine.Sink, error) {
	open := func() (trace.SourceCloser, error) {
		_, s, closeFn, _, err := openTrace(o.pos)
		if err != nil {
			return nil, err
		}
		return &closingSource{Source: withCancel(ctx, s), close: closeFn}, nil
	}
	// The other orders (each a replay of its own with the memory table
	// only) and the races (a pass of their own) first; their rows go
	// into their tables, committed with the others.
	extra := &extrasThenCommit{Writer: sink}
	var err error
	if o.exploreOrders > 0 {
		// The replay's options but the order (ExploreOrders picks each
		// replay's) and -explore (its replays keep only the memory).
		opts := append(o.sharedOptions(), withProgress, engine.WithOrders(o.exploreOrders, o.seed))
		extra.orders, err = engine.ExploreOrders(ctx, open, opts...)
	}
	if err == nil && o.races {
		var src trace.SourceCloser
		if src, err = open(); err == nil {
			extra.races, err = engine.Races(ctx, src, engine.WithClusterSize(o.clusterSize))
			src.Close()
		}
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%w (no tables written)", inTrace(name, err)), sink.Abort())
	}
	return extra, nil
}

// openTrace opens the trace named by pos (none: the embedded demo; "-":
// standard input), recognising binary traces by their zstd magic, and a
// file through trace.Open (which refuses a .zst that is not binary). A
// binary trace in a regular file is read through its seek table, several
// chunks decompressed at once; one on standard input is read as a stream,
// the next chunks read and decompressed while one is decoded. closeFn
// stops the reader's goroutines and closes the file; call it however the
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
		opts := []trace.ReaderOption{trace.WithName(name)}
		if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			prog = &progressReader{size: fi.Size()}
			opts = append(opts, trace.WithProgress(func(off int64) { prog.n.Store(off) }))
		}
		f, err := trace.Open(name, opts...)
		if err != nil {
			return "", nil, closeFn, nil, err
		}
		return name, f, func() { f.Close() }, prog, nil
	}
	buf := bufio.NewReaderSize(r, 1<<20)
	head, _ := buf.Peek(4)
	if trace.IsBinary(head) {
		var br *trace.BinaryReader
		if br, err = trace.NewBinaryReader(buf, trace.WithName(name)); err == nil {
			closeFile := closeFn
			closeFn = func() { br.Close(); closeFile() }
			src = br
		}
	} else {
		var tr *trace.TextReader
		if tr, err = trace.NewTextReader(buf, name); err == nil {
			closeFile := closeFn
			closeFn = func() { tr.Close(); closeFile() }
			src = tr
		}
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

// inTrace names the trace in err once: the readers' errors
// (trace.SyntaxError, trace.BinaryError) start with its name already, as
// given on the command line; any other (an instruction the engine
// refused, say) gets it in front.
func inTrace(name string, err error) error {
	var se *trace.SyntaxError
	var be *trace.BinaryError
	if errors.As(err, &se) && se.File != "" || errors.As(err, &be) && be.Name != "" {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// progressReader counts the bytes read from a trace file, for the progress
// line; the reader goroutine writes the count (through Read, or
// trace.WithProgress), the emitter reads it.
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

// closingSource is a Source with the function that closes its file. It
// forwards every method of the Source, Caps with them.
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
	return arrayTask(arrayNames{flag: "-partition", count: "-partitions", env: "REPLAY_PARTITIONS", what: "partitions", max: shard.MaxPartitions}, partsFlag, getenv)
}

// arrayNames names what an array task's index counts, for arrayTask's
// messages.
type arrayNames struct {
	flag, count, env, what string
	max                    int
}

// arrayTask is "auto" of -partition and -slice: i from the array job's
// index (Slurm: SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN; Kubernetes
// Indexed Jobs: JOB_COMPLETION_INDEX) and n from the count flag, else the
// environment variable nm.env, else (Slurm) SLURM_ARRAY_TASK_COUNT.
func arrayTask(nm arrayNames, countFlag int, getenv func(string) string) (i, n int, err error) {
	num := func(name string) (int, bool, error) {
		s := getenv(name)
		if s == "" {
			return 0, false, nil
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return 0, true, fmt.Errorf("%s auto: %s=%q is not a count", nm.flag, name, s)
		}
		return v, true, nil
	}
	n = countFlag
	if n == 0 {
		v, ok, err := num(nm.env)
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
		return 0, 0, fmt.Errorf("%s auto: no SLURM_ARRAY_TASK_ID (Slurm array job) nor JOB_COMPLETION_INDEX (Kubernetes Indexed Job) in the environment", nm.flag)
	}
	switch {
	case n == 0:
		return 0, 0, fmt.Errorf("%s auto: how many %s? give %s N or %s", nm.flag, nm.what, nm.count, nm.env)
	case n > nm.max:
		return 0, 0, fmt.Errorf("%s auto: %d %s, at most %d", nm.flag, n, nm.what, nm.max)
	case i < 0 || i >= n:
		return 0, 0, fmt.Errorf("%s auto: index %d is not one of %d %s (0..%d)", nm.flag, i, n, nm.what, n-1)
	}
	return i, n, nil
}

// traceChecksum names the trace a partition replays, for replay merge:
// of a binary trace, its identity as replay split records it
// (split.Identity: the XXH64 of its header frame and seek table, and its
// size); of any other, the XXH64 of the file's bytes and its size (of the
// embedded demo's, without a TRACE).
func traceChecksum(pos []string) (string, error) {
	if len(pos) > 0 {
		if id, bin, err := split.Identity(pos[0]); err != nil || bin {
			return id, err
		}
	}
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

// cancelSource stops a pass of -explore-orders or -races when ctx is
// cancelled (Ctrl-C): the engine then aborts the sink and no table is left
// behind. (The replay itself is not wrapped: engine.Replay looks at ctx
// before each batch.) It forwards the source's Caps: NextInto checks ctx
// as Next does, and Repeats, which reads no record of its own, is the
// source's.
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
		return errors.New("interrupted")
	}
	return nil
}

func (s *cancelSource) NextInto(arena []uint64) (*trace.Inst, []uint64, error) {
	if err := s.check(); err != nil {
		return nil, arena, err
	}
	return s.Source.NextInto(arena)
}

// withCancel wraps src in a cancelSource.
func withCancel(ctx context.Context, src trace.Source) trace.Source {
	return &cancelSource{Source: src, ctx: ctx}
}

// startProfile starts a profile of kind into dir; quiet (-q) keeps
// pkg/profile's lines about it off standard error.
func startProfile(kind, dir string, quiet bool) (func(), error) {
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
	opts := []func(*profile.Profile){mode, profile.ProfilePath(dir), profile.NoShutdownHook}
	if quiet {
		opts = append(opts, profile.Quiet)
	}
	p := profile.Start(opts...)
	if kind == "mem" || kind == "allocs" {
		// A heap profile is as of the last collection: without one now,
		// a short replay's profile would miss what it allocated since.
		return func() { runtime.GC(); p.Stop() }, nil
	}
	return p.Stop, nil
}

// printSummary prints what the replay did and every file it wrote: each of
// tables (the list given to the writer, "" for the default tables) in
// format f.
func printSummary(w io.Writer, name, dir string, f columnar.Format, tables string, s engine.Summary) {
	secs := s.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(s.LaneOps) / secs
	}
	fmt.Fprintf(w, "replayed %s\n", name)
	fmt.Fprintf(w, "  instructions  %d\n", s.Instructions)
	fmt.Fprintf(w, "  lanes         %d (%d lane-ops)\n", s.Lanes, s.LaneOps)
	if s.FoldedWords > 0 {
		// A combined split's partition: its split tasks folded the
		// lane-ops counted in their summaries into these words.
		fmt.Fprintf(w, "  folded words  %d (each a slice's accesses to a word, combined by replay split)\n", s.FoldedWords)
	}
	fmt.Fprintf(w, "  faults        %d\n", s.Faults)
	fmt.Fprintf(w, "  memory words  %d\n", s.Words)
	fmt.Fprintf(w, "  time          %s (%s lane-ops/s)\n", s.Elapsed.Round(time.Microsecond), humanRate(rate))
	names := columnar.TableNames()
	if tables != "" {
		names = strings.Split(tables, ",")
	}
	var files []string
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			continue // -tables memory,memory writes one memory table
		}
		switch f {
		case columnar.FormatArrow:
			files = append(files, n+".arrow")
		case columnar.FormatBoth:
			files = append(files, n+".parquet", n+".arrow")
		default:
			files = append(files, n+".parquet")
		}
	}
	// One separator after the directory, however -o ended (out/, not out//).
	sep := string(filepath.Separator)
	fmt.Fprintf(w, "  wrote         %s%s{%s}\n", strings.TrimSuffix(filepath.Clean(dir), sep), sep, strings.Join(files, ","))
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

// cliError is a library error as the command shows it: the engine names
// its options (WithMaxMemory), the command the flags that set them
// (-max-memory).
type cliError struct{ err error }

func (e cliError) Error() string {
	return strings.NewReplacer("(WithMaxMemory)", "(-max-memory)", "(WithStrict ", "(-strict ").Replace(e.err.Error())
}

func (e cliError) Unwrap() error { return e.err }
