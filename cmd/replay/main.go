// Command replay replays traces of GPU atomic and memory instructions on a
// simulated memory and writes the final memory, what every lane got back,
// and per-instruction statistics as Parquet or Arrow tables.
//
//	replay [flags] [TRACE]          replay TRACE (.tasm text or binary .zst); no TRACE: the embedded demo
//	replay asm IN.tasm -o OUT.zst   write the binary form of a text trace
//	replay disasm IN.zst [-o OUT]   print a binary trace as .tasm
//	replay gen WORKLOAD -o OUT      generate a synthetic trace (package trace/workload)
//	replay import accelsim|nvbit PATH -o OUT.zst  import a tracer's output (package trace/accelsim)
//	replay help [SUBCOMMAND]        the overview, or a subcommand's flags
//
// Wiring only: the semantics live in package engine.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpureplay/replay/trace"
	"github.com/gpureplay/replay/trace/workload"
)

// exit codes
const (
	exitOK    = 0
	exitError = 1 // a bad trace, a failed replay, an I/O error
	exitUsage = 2 // bad flags or arguments
)

func main() {
	startHeap(os.Args[1:])
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// heapAdvised is how much of the Go heap main advises into huge pages
// before anything else runs (offheap.AdviseHeap): more than a split task,
// a partition replay or a merge keeps in the heap at once.
const heapAdvised = 64 << 20

// adviseFrom is the size of an input from which main advises the heap:
// the advice costs a collection and a few hundred faults at start-up
// (4-5 ms of CPU), which a replay of a few instructions, a merge of
// small partitions, help or a bad flag would pay for nothing; a replay
// of 8 MiB of trace faults thousands of heap pages.
const adviseFrom = 8 << 20

// adviseChunks is the number of chunks from which a binary trace smaller
// than adviseFrom has the heap advised all the same (manyChunks): more
// than trace.DefaultChunkInsts instructions, so more than 16 batches,
// which grow the heap as a large file's do, however well the trace
// compresses. Lean replays of the bench traces at 9.6 M lane-ops whose
// files are below adviseFrom (measured with the advice against without,
// 15 runs each, best): spinlock in vISA (2.3 MB) 218 -> 196 ms, an
// append queue (3.2 MB) 52 -> 47 ms, a hot counter (1 KB) 32.5 -> 29.9
// ms; spinlock at 2.2 M lane-ops (3 chunks, 0.5 MB) 63 -> 49 ms.
const adviseChunks = 2

// mergeAdviseFrom is adviseFrom for `replay merge`, whose input is
// Parquet columns that it decodes and encodes again, several times their
// compressed size: 8 partitions of bfs at 10^7 lane-ops (600 KB) fault
// 1,850 pages unadvised and 1,050 advised, for 8-13 ms less CPU; 8 of
// 140 KB, 1,150 and 950, for 0-3 ms more.
const mergeAdviseFrom = 512 << 10

// inputEntries is how many directory entries readsMuch looks at, at
// most, before it takes the input for a large one: an argument such as
// -o . must not cost a walk of a large tree.
const inputEntries = 1024

// readsMuch reports whether the command line args names an input that
// grows the heap: any argument, flag values included (a false guess
// costs the advice alone), that is a file of adviseFrom bytes or more, a
// binary trace of adviseChunks chunks or more (manyChunks), or a
// directory whose files, two levels down at most, hold adviseFrom bytes:
// a split directory (DIR/part=i/slice=K.zst), the partitions of a merge
// (DIR/part=i/TABLE.parquet, or part=i itself; mergeAdviseFrom bytes).
func readsMuch(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "help", "-h", "-help", "--help", "disasm", "report", "diff", "gen":
		return false
	}
	from := int64(adviseFrom)
	if args[0] == "merge" {
		from = mergeAdviseFrom
	}
	budget := inputEntries
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if inputBytes(a, 2, &budget) >= from || manyChunks(a) {
			return true
		}
	}
	return false
}

// manyChunks reports whether path is a binary trace whose seek table
// lists adviseChunks chunks or more (trace.CountChunks: two reads, of
// its first 4 bytes and its last 9).
func manyChunks(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !trace.IsBinaryAt(f) {
		return false
	}
	c, err := trace.CountChunks(f, st.Size())
	return err == nil && c >= adviseChunks
}

// inputBytes is the size of the file at path, or of the files under the
// directory at path down to depth levels, as far as it is below
// adviseFrom: it stops counting there, and returns adviseFrom once it
// has looked at *budget directory entries. It is 0 for a path that is
// neither.
func inputBytes(path string, depth int, budget *int) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	if !st.IsDir() {
		return st.Size()
	}
	return dirBytes(path, depth, budget)
}

// dirBytes is inputBytes of the directory dir: a stat of each regular
// file (lstat, from its entry), none of a directory.
func dirBytes(dir string, depth int, budget *int) int64 {
	if depth == 0 {
		return 0
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if *budget--; *budget < 0 {
			return adviseFrom
		}
		path := filepath.Join(dir, e.Name())
		switch t := e.Type(); {
		case t.IsDir():
			n += dirBytes(path, depth-1, budget)
		case t.IsRegular():
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		default: // a symbolic link, or a type the system did not say
			n += inputBytes(path, depth-1, budget)
		}
		if n >= adviseFrom {
			break
		}
	}
	return n
}

// usageError marks errors in how replay was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	var err error
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "asm":
		err = cmdAsm(args[1:], stdout, stderr)
	case "disasm":
		err = cmdDisasm(args[1:], stdout, stderr)
	case "gen":
		err = cmdGen(args[1:], stdout, stderr)
	case "import":
		err = cmdImport(args[1:], stdout, stderr)
	case "merge":
		err = cmdMerge(args[1:], stdout, stderr)
	case "split":
		err = cmdSplit(args[1:], stdout, stderr)
	case "diff":
		err = cmdDiff(args[1:], stdout, stderr)
	case "report":
		err = cmdReport(args[1:], stdout, stderr)
	case "help":
		err = cmdHelp(args[1:], stdout)
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, overview())
		return exitOK
	default:
		cmd = "replay"
		err = cmdReplay(args, stdout, stderr)
	}
	if err == nil {
		return exitOK
	}
	var help *helpRequest
	if errors.As(err, &help) {
		if name := help.fs.Name(); name == "replay" {
			fmt.Fprint(stdout, overview()) // as replay -h
		} else {
			fmt.Fprint(stdout, lookupCommand(name).usage())
		}
		return exitOK
	}
	if errors.Is(err, errDiffer) {
		return exitError
	}
	fmt.Fprintf(stderr, "replay: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		switch cmd {
		case "asm", "disasm", "gen", "import", "merge", "split", "diff", "report":
			fmt.Fprintf(stderr, "run 'replay help %s' for usage\n", cmd)
		default: // replay's flags are in the overview
			fmt.Fprintln(stderr, "run 'replay help' for usage")
		}
		return exitUsage
	}
	return exitError
}

// cmdHelp prints the overview, or with a subcommand's name its usage.
func cmdHelp(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("help", flag.ContinueOnError)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch len(pos) {
	case 0:
		fmt.Fprint(stdout, overview())
		return nil
	case 1:
		c := lookupCommand(pos[0])
		if c == nil {
			return usagef("help: unknown subcommand %q; the subcommands are %s", pos[0], strings.Join(commandNames(), ", "))
		}
		fmt.Fprint(stdout, c.usage())
		return nil
	}
	return usagef("help takes one subcommand, got %d: %s", len(pos), strings.Join(pos, " "))
}

// A command is replay itself or one of its subcommands, and its usage.
// Each command's text is written once, here; func overview composes the
// overview from them.
type command struct {
	name     string
	synopsis []string      // the usage lines; the overview shows the first
	summary  string        // what it does, for the overview
	about    string        // a paragraph after the usage lines, if any
	flags    string        // one flag a line: its argument, what it does, its default
	notes    string        // after the flags, if any
	more     func() string // more sections, if any: gen's workloads
}

var commands = []*command{
	{
		name:     "replay",
		synopsis: []string{"replay [flags] [TRACE]"},
		summary:  "replay TRACE (.tasm text, or binary .zst); with no TRACE, the embedded demo",
		about: `Replays TRACE on a simulated memory and writes what it did as tables: memory, results,
instructions, ops and addresses, and with -races and -explore-orders races and orders
(docs/OUTPUT.md), each whole or not at all; a replay that fails leaves no table, nor a directory
it created. TRACE may be a .tasm text trace, a binary .zst trace, or - for standard input; with
no TRACE, the embedded demo (CUDA simpleAtomicIntrinsics).
`,
		flags: `  -o DIR            where the tables go (default: ./NAME.tables for TRACE NAME.*, ./demo.tables for the demo)
  -format F         parquet (default), arrow, or both
  -tables LIST      comma-separated tables to write, exactly these: memory, results, instructions, ops,
                    addresses (the default: these five), races (runs the -races pass) and orders (needs
                    -explore-orders K); -races or -explore-orders with a LIST that leaves its table out
                    is refused
  -shards N         memory shards, 1..65536 (default 64); results do not depend on it
  -workers N        worker goroutines, 0 = GOMAXPROCS (default 0); results do not depend on it
  -batch N          instructions per batch at most, 1..1048576 (default 4096); a batch also ends
                    when its per-lane lists fill 512 KiB; results do not depend on it
  -strict           stop at the first faulting lane
  -explore          mark addresses whose accesses might not commute (addresses.order_sensitive)
  -order O          the order of an instruction's lanes, which no ISA document fixes: lane (default),
                    reverse, or random (a permutation per instruction from -seed and its seq, the
                    same for any -shards, -workers and -batch)
  -seed N           -order random's seed (default 1)
  -interleave W     with -order random: also reorder the instructions of different warps within windows
                    of W instructions (counted anew after each .init and .region), each warp's in order;
                    not with -explore-orders, whose replays take orders of their own
  -explore-orders K also replay K random orders (seeds -seed, -seed+1, …) and write, for every word whose
                    final value differs between them and lane order, its value under each: the orders
                    table (added to the default tables), witnesses that the result depends on an order
                    the ISA leaves open
  -races            the races table (added to the default tables; as -tables …,races): per address, the
                    first pair of accesses that are not atomic with respect to each other (PTX scopes
                    that do not include the other thread; an atomic and a plain LSC load or store of two
                    threads), from a pass over the trace of its own
  -cluster-size N   -races: CTAs (.group numbers) a cluster, for PTX .cluster scope, where the trace names no .cluster (default 1)
  -max-memory N     stop when the simulated memory passes N bytes (default 8Gi; 512Mi, 1e9 …)
  -partition P      replay partition i/n only (0 <= i < n): the accesses to the 128-byte lines it
                    owns (a page's lines go round-robin over the partitions); the tables go to
                    DIR/part=i; replay merge joins the n partitions. TRACE may be a split directory
                    (replay split): the partition's slices are replayed, in order, and nothing else read.
                    auto: i from SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN) or
                    JOB_COMPLETION_INDEX, n from -partitions, REPLAY_PARTITIONS or SLURM_ARRAY_TASK_COUNT
  -partitions N     with -partition auto: the number of partitions
  -profile KIND     cpu, mem, allocs, block, mutex, trace or goroutine (github.com/pkg/profile)
  -profile-dir DIR  where the profile goes (default ./profiles)
  -q                print nothing on success (no summary, no progress line; a note that leftovers of
                    an interrupted replay were removed from the output directory still goes to stderr)
`,
		notes: "On a terminal a replay draws a progress line on standard error.\n",
	},
	{
		name:     "asm",
		synopsis: []string{"replay asm [-chunk N] IN.tasm -o OUT.zst"},
		summary:  "write the binary form of a text trace",
		about:    "IN may also be a binary trace (to change its chunks) or - for standard input.\n",
		flags: `  -o FILE           the binary trace to write, whole or not at all (required)
  -chunk N          instructions per chunk, 1..1048576 (default 65536)
`,
	},
	{
		name:     "disasm",
		synopsis: []string{"replay disasm IN.zst [-o OUT.tasm]"},
		summary:  "print a trace (binary or text) as .tasm",
		about:    "IN may be a binary or a text trace, or - for standard input.\n",
		flags: `  -o FILE           write the text trace to FILE, whole or not at all (default: standard output)
`,
	},
	{
		name:     "gen",
		synopsis: []string{"replay gen WORKLOAD [flags] -o OUT.zst|OUT.tasm", "replay gen -list"},
		summary:  "generate a synthetic trace of a workload (docs/WORKLOADS.md)",
		about:    "Writes a synthetic trace of WORKLOAD, whole or not at all. The same flags give\nbyte-identical output.\n",
		flags: `  -o FILE           the trace to write: FILE.zst binary, FILE.tasm text, or - the binary form on
                    standard output, for a pipe into replay - (required)
  -dialect D        ptx (default), sass, visa or lsc
  -seed N           random seed (default 1)
  -lane-ops N       lane-ops to generate (default 1e6); counts take 1e8, 10M, 64Ki
  -words N          uniform: words updated (default 1Mi); spinlock: locks, freduce: accumulators (default 4)
  -bins N           histogram: bins (default 256)
  -zipf S           histogram: Zipf skew of the keys, 0 = uniform (default 0)
  -vertices N       bfs: R-MAT vertices (default 65536)
  -edge-factor N    bfs: edges per vertex (default 16)
  -chunk N          binary output: instructions per chunk, 1..1048576 (default 65536)
  -list             list the workloads and exit
  -q                print no summary line
`,
		notes: "A progress bar goes to standard error when it is a terminal.\n",
		more:  workloadList,
	},
	{
		name:     "import",
		synopsis: []string{"replay import accelsim PATH -o OUT.zst", "replay import nvbit FILE -o OUT.zst"},
		summary:  "import the atomics of an Accel-Sim or NVBit mem_trace trace as an address-only binary trace",
		about: `Reads a tracer's output and writes its SASS atomics (ATOM, ATOMG, ATOMS, RED) as a binary trace,
whole or not at all. accelsim: PATH is an Accel-Sim trace directory (its kernelslist.g), a
kernelslist.g, or one kernel file (.traceg, .traceg.gz, .traceg.xz, .tracez). nvbit: FILE is the
text NVBit's mem_trace tool prints (its MEMTRACE: lines). The traces record addresses but no
values: the output is address-only (docs/TASM.md), and a replay of it writes the instructions, ops,
addresses and races tables. It prints how many lines of every other opcode it skipped.
`,
		flags: `  -o FILE           the binary trace to write, whole or not at all (required)
  -chunk N          instructions per chunk, 1..1048576 (default 65536)
  -q                print no summary
`,
	},
	{
		name:     "merge",
		synopsis: []string{"replay merge DIR... -o OUT"},
		summary:  "join the partitions of a partitioned replay into one replay's tables",
		about: `Reads the partition directories DIR/part=i that replay TRACE -partition i/n -o DIR wrote (a
DIR holding part=* directories stands for them all) and writes to OUT the tables one replay of
TRACE without -partition writes (docs/OUTPUT.md, "Partitions"), whole or not at all. It refuses,
writing nothing, partitions of different traces or partition counts, and a missing or repeated
partition.
`,
		flags: `  -o DIR            where the merged tables go (required)
  -format F         parquet (default), arrow, or both
  -profile KIND     cpu, mem, allocs, block, mutex, trace or goroutine (github.com/pkg/profile)
  -profile-dir DIR  where the profile goes (default ./profiles)
  -q                print nothing on success
`,
	},
	{
		name:     "split",
		synopsis: []string{"replay split TRACE.zst -partitions N -slice K/M -o DIR"},
		summary:  "write a slice of a trace's records, by partition, for replay -partition i/N DIR",
		about: `Reads slice K of M of the binary trace's chunks (chunks [K*C/M, (K+1)*C/M) of C), through its
seek table, and writes for every partition i of N the records it owns to DIR/part=i/slice=K.zst:
every directive, and every instruction with a lane whose address is in partition i's lines (with
those lanes only) or whose statistics row partition i writes, with its seq, .group and .warp
(docs/FORMAT.md, "Split files"). The N files of slice K appear whole or not at all; a split that
was killed leaves nothing a rerun does not replace. Then replay -partition i/N DIR -o OUT replays
partition i from its M slices, and replay merge OUT joins the partitions (docs/OUTPUT.md,
"Partitions"). The summary says how the slice's lane-ops fell on the partitions, and names a
word whose accesses alone exceed 1.25 times the mean partition's. With -tables naming only
memory, instructions and ops, the split combines: the accesses of one commuting atomic (integer
add, sub, and, or, xor, min, max) to a word within each half of the slice fold into one, which
the partitions then apply, and whose replays write only those tables.
`,
		flags: `  -o DIR            the split directory (required)
  -tables LIST      the tables the partitions' replays write, as replay -tables (default: its
                    default tables). Only memory, instructions and ops: the split combines
  -partitions N     the number of partitions (required; or REPLAY_PARTITIONS)
  -slice K/M        the slice to write (default 0/1: the whole trace). auto: K from
                    SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN) or JOB_COMPLETION_INDEX, M from
                    -slices, REPLAY_SLICES or SLURM_ARRAY_TASK_COUNT
  -slices M         with -slice auto: the number of slices
  -workers N        goroutines routing a combined slice's two halves at once (an uncombined
                    slice is one), 0 = GOMAXPROCS (default 0); the files do not depend on it
  -sync             sync each file before it appears and the directories after (fsync), so
                    that the slice survives a power loss; without it a slice still appears whole
                    or not at all, and a file left short by a power loss is refused by the replay
  -profile KIND     cpu, mem, allocs, block, mutex, trace or goroutine (github.com/pkg/profile)
  -profile-dir DIR  where the profile goes (default ./profiles)
  -q                print nothing on success
`,
	},
	{
		name:     "diff",
		synopsis: []string{"replay diff A B"},
		summary:  "list what differs between two replays' tables; exit 1 when they differ",
		about: `Compares the memory tables of output directories A and B word by word, on (space, group,
addr), and their results tables lane by lane, on (seq, lane, elem): the key names neither the
dialect nor the text, so a PTX replay and a SASS replay of one kernel compare lane by lane. It
lists the differences (a key in one only, or different values) and a summary. Exit status: 0 no
difference; 1 they differ (nothing on standard error), or a directory or table cannot be read
(the error on standard error); 2 bad usage.
`,
		flags: `  -limit N          differences to list, 0 = all (default 20)
  -q                print nothing: the exit status says
`,
	},
	{
		name:     "report",
		synopsis: []string{"replay report DIR -o FILE.html [-title T]"},
		summary:  "write one self-contained HTML page of a replay's tables: numbers, plots, their SQL",
		about: `Reads the Parquet tables a replay wrote to DIR (any of memory, results, instructions, ops and
addresses; a plot whose table is absent says which table or flag it needs) and writes FILE, whole
or not at all: headline numbers, plots drawn as inline SVG, and under each plot the DuckDB SQL
that gives its data (docs/REPORT.md). The page needs no network to view.
`,
		flags: `  -o FILE           the HTML page to write (required)
  -title T          the page's title (default: replay report: DIR)
  -q                print nothing on success
`,
	},
	{
		name:     "help",
		synopsis: []string{"replay help [SUBCOMMAND]"},
		summary:  "print the overview, or a SUBCOMMAND's usage",
		about: `SUBCOMMAND is replay (the command itself), asm, disasm, gen, import, merge, split, diff, report or help. -h, -help
or --help among a subcommand's arguments prints its usage too; replay -h prints the overview.
`,
	},
}

// subcommandMistake tells a subcommand that came after replay's flags, or
// a mistyped one, from a trace: it looks at the first positional argument
// of replay (pos; args are replay's arguments) only when no file of that
// name exists, so that replay TRACE works for any file name. It returns nil
// when pos does not look like a subcommand.
func subcommandMistake(pos, args []string) error {
	if len(pos) == 0 || pos[0] == "-" {
		return nil
	}
	p := pos[0]
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		return nil // a trace (or an error opening it reports)
	}
	if c := lookupCommand(p); c != nil && p != "replay" {
		fixed := []string{"replay", p}
		for i, a := range args {
			if a == p {
				fixed = append(fixed, args[:i]...)
				fixed = append(fixed, args[i+1:]...)
				break
			}
		}
		return usagef("%s is a subcommand, so it comes first, and its flags after it: %s", p, strings.Join(fixed, " "))
	}
	if strings.ContainsAny(p, `./\`) {
		return nil // a path: the missing trace file, which opening it reports
	}
	subs := subcommandNames()
	list := strings.Join(subs, ", ")
	if near := closestNames(p, subs); len(near) > 0 {
		return usagef("unknown subcommand %q (and no trace file of that name); did you mean %s? The subcommands are %s", p, strings.Join(near, " or "), list)
	}
	if len(pos) > 1 {
		return usagef("unknown subcommand %q (and no trace file of that name); the subcommands are %s, and replay takes one trace", p, list)
	}
	return nil
}

// subcommandNames are the names of the subcommands, replay itself aside.
func subcommandNames() []string {
	return slices.DeleteFunc(commandNames(), func(n string) bool { return n == "replay" })
}

// closestNames are the names nearest to s by edit distance, at most 2 and
// less than len(s), ties broken by the longest common prefix (diss: disasm,
// not diff); nil when none is that near.
func closestNames(s string, names []string) []string {
	best, bestPre := 3, -1
	var near []string
	for _, n := range names {
		d := trace.EditDistance(s, n)
		if d >= len(s) || d > best {
			continue
		}
		pre := 0
		for pre < min(len(s), len(n)) && s[pre] == n[pre] {
			pre++
		}
		switch {
		case d < best || pre > bestPre:
			best, bestPre, near = d, pre, []string{n}
		case pre == bestPre:
			near = append(near, n)
		}
	}
	return near
}

func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func commandNames() []string {
	ns := make([]string, len(commands))
	for i, c := range commands {
		ns[i] = c.name
	}
	return ns
}

// usage is what replay help NAME prints.
func (c *command) usage() string {
	var b strings.Builder
	name := "replay " + c.name
	if c.name == "replay" {
		name = "replay"
	}
	fmt.Fprintf(&b, "%s: %s\n\nUsage:\n", name, c.summary)
	for _, s := range c.synopsis {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	if c.about != "" {
		fmt.Fprintf(&b, "\n%s", c.about)
	}
	if c.flags != "" {
		fmt.Fprintf(&b, "\nFlags:\n%s", c.flags)
	}
	if c.more != nil {
		fmt.Fprintf(&b, "\n%s", c.more())
	}
	if c.notes != "" {
		fmt.Fprintf(&b, "\n%s", c.notes)
	}
	return b.String()
}

// workloadList is gen's list of workloads, as gen -list prints them.
func workloadList() string {
	var b strings.Builder
	b.WriteString("Workloads:\n")
	for _, n := range workload.Names() {
		fmt.Fprintf(&b, "  %-12s %s\n", n, workload.Describe(n))
	}
	return b.String()
}

// overview is what replay help, replay -h and replay --help print. It is
// built when asked for, not at start-up: a replay never prints it.
func overview() string {
	var b strings.Builder
	b.WriteString("replay: replay traces of GPU atomic instructions exactly, and write what they did as tables.\n\nUsage:\n")
	for _, c := range commands {
		if s := c.synopsis[0]; len(s) < 34 {
			fmt.Fprintf(&b, "  %-34s%s\n", s, c.summary)
		} else {
			fmt.Fprintf(&b, "  %s\n  %34s%s\n", s, "", c.summary)
		}
	}
	r := lookupCommand("replay")
	fmt.Fprintf(&b, "\nReplay flags:\n%s\n", r.flags)
	b.WriteString(r.notes)
	b.WriteString(`TRACE may be - for standard input. Subcommands come first, their flags after them.
-o creates the missing directories of its path; a command that fails leaves none it created.
Run 'replay help SUBCOMMAND' (or replay SUBCOMMAND -h) for a subcommand's flags;
replay help gen also lists the workloads.
Exit status: 0 success, 1 a bad trace, a failed replay or an I/O error (replay diff: or they
differ), 2 bad usage.
`)
	return b.String()
}
