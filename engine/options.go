package engine

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"

	"github.com/gpureplay/replay/shard"
)

type options struct {
	shards     int
	workers    int
	strict     bool
	batchInsts int
	maxMemory  uint64 // bytes of simulated memory (pages) a replay may create
	explore    bool
	progress   func(Summary)
	part       int // this replay is partition part of parts (WithPartition)
	parts      int
	order      Order  // the lanes' order within an instruction (WithOrder)
	seed       uint64 // OrderRandom's seed
	interleave int    // windows of instructions reordered across warps (WithInterleave)
	// batchListWords ends a batch early once its lists (the arena) hold
	// that many 64-bit values (defaultBatchListBytes); tests lower it.
	batchListWords int
	// goLoops: Go's loops even where the CPU runs the assembly's
	// (batch.avx512); tests set it to check both.
	goLoops bool
	// denseAt, when not 0, is the addresses a page of the addresses
	// table holds when it turns dense (addrTracker.denseAt; -1: never);
	// tests set it to force either layout.
	denseAt int
	// addrWindow and addrWindowInsts, when not 0, are the most items and
	// instructions a window of the addresses table's counters holds
	// (addrTracker.window); tests lower them to count in many windows.
	addrWindow, addrWindowInsts int
	// itemBlocks, when not 0, is the size in items from which the
	// counters' item buffers are off-heap blocks (addrTracker.blockItems).
	itemBlocks int
	// orders and firstSeed are ExploreOrders' random orders (WithOrders).
	orders    int
	firstSeed uint64
	// clusterSize is how many consecutive groups form a cluster, for
	// Races (WithClusterSize).
	clusterSize int64
	// given is the options given, so that an entry point refuses one it
	// does not read.
	given optKind
}

// optKind is an exported option, a bit each: what an entry point reads
// and what a caller gave (options.given).
type optKind uint16

const (
	optShards optKind = 1 << iota
	optWorkers
	optPartition
	optStrict
	optBatchInsts
	optMaxMemory
	optExplore
	optProgress
	optOrder
	optInterleave
	optOrders
	optClusterSize
)

// optNames are the options' names, by bit.
var optNames = [...]string{"WithShards", "WithWorkers", "WithPartition", "WithStrict", "WithBatchInsts",
	"WithMaxMemory", "WithExplore", "WithProgress", "WithOrder", "WithInterleave", "WithOrders", "WithClusterSize"}

// What each entry point reads: Replay every option of a replay; ExploreOrders
// those of its replays but the order (it picks each replay's) and explore
// (its replays keep only the memory); Races only the cluster size.
const (
	replayReads  = optShards | optWorkers | optPartition | optStrict | optBatchInsts | optMaxMemory | optExplore | optProgress | optOrder | optInterleave
	exploreReads = optShards | optWorkers | optPartition | optStrict | optBatchInsts | optMaxMemory | optProgress | optOrders
	racesReads   = optClusterSize
	allOptions   = replayReads | exploreReads | racesReads
)

// set is an Option of kind k that sets what f sets.
func set(k optKind, f func(*options) error) Option {
	return func(o *options) error {
		o.given |= k
		return f(o)
	}
}

// buildOptions applies opts to the defaults for entry point entry, which
// reads the options in reads: a nil Option, an invalid value, an option
// entry does not read or a combination it cannot take is an error.
func buildOptions(entry string, reads optKind, opts []Option) (options, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			return options{}, fmt.Errorf("engine: %s: a nil Option", entry)
		}
		if err := opt(&o); err != nil {
			return options{}, err
		}
	}
	if extra := o.given &^ reads; extra != 0 {
		return options{}, fmt.Errorf("engine: %s does not read %s", entry, optNames[bits.TrailingZeros16(uint16(extra))])
	}
	if err := o.checkInterleave(); err != nil {
		return options{}, err
	}
	return o, nil
}

// ValidateOptions reports the first of opts whose value is invalid (out
// of its range), or a combination that no entry point takes (WithInterleave
// without OrderRandom), without reading a trace or building any memory:
// the error that Replay, ExploreOrders or Races would return for it. Each
// entry point also refuses an option it does not read (its documentation
// lists them), which ValidateOptions, not knowing the entry point, cannot.
func ValidateOptions(opts ...Option) error {
	_, err := buildOptions("ValidateOptions", allOptions, opts)
	return err
}

// errNoOrders is ExploreOrders' error for fewer than one random order.
var errNoOrders = errors.New("explore-orders: want at least 1 random order")

// DefaultMaxMemory bounds the simulated memory a replay creates: 8 GiB of
// 4 KiB pages.
const DefaultMaxMemory = 8 << 30

// defaultBatchInsts is how many instructions a batch holds unless
// WithBatchInsts says otherwise.
const defaultBatchInsts = 4096

// defaultBatchListBytes ends a batch before its instruction count when its
// per-lane lists (addresses, sources) fill 512 KiB, 1024 instructions of
// two 32-lane lists: the lists, the records expanded from them and the
// batch's other arrays then stay within one core's L2 cache (1 MiB on the
// project's machine) as the batch passes from reading to expanding to
// applying, and a replay's memory holds four such batches, not four of
// 4096 such instructions. Traces without lists (broadcast and strided
// operands, hotcounter) keep batches of 4096: their batches are small
// anyway, and a batch costs wake-ups between stages. The lean replays of
// uniform and histogram are faster with this than with whole batches of
// 4096 (BenchmarkReplay/uniform-1Mi/lean).
const defaultBatchListBytes = 512 << 10

func defaultOptions() options {
	return options{shards: 64, workers: 0, batchInsts: defaultBatchInsts, maxMemory: DefaultMaxMemory, parts: 1,
		batchListWords: defaultBatchListBytes / 8, orders: defaultOrders, firstSeed: 1, clusterSize: 1}
}

// defaultOrders is how many random orders ExploreOrders replays unless
// WithOrders says otherwise.
const defaultOrders = 4

// Option configures an entry point: Replay, ExploreOrders or Races. Each
// option says which of them read it, and each refuses, with an error, an
// option it does not read.
type Option func(*options) error

// WithShards sets the number of memory shards, 1..65536. Default 64. The
// result does not depend on it. Replay and ExploreOrders read it.
func WithShards(n int) Option {
	return set(optShards, func(o *options) error {
		if n < 1 || n > 1<<16 {
			return fmt.Errorf("shards: %d is outside 1..65536", n)
		}
		o.shards = n
		return nil
	})
}

// WithWorkers sets the number of goroutines that expand and apply, 0..1024;
// 0 (the default) means GOMAXPROCS. The result does not depend on it.
// Replay and ExploreOrders read it.
func WithWorkers(n int) Option {
	return set(optWorkers, func(o *options) error {
		if n < 0 || n > 1024 {
			return fmt.Errorf("workers: %d is outside 0..1024", n)
		}
		o.workers = n
		return nil
	})
}

// WithPartition replays partition i of n: only the accesses to addresses
// whose 128-byte line falls in partition i (PartitionOf: the lines of a
// page go round-robin over the partitions, in an order and from a start
// the page's hash picks; shard.Partition), so that n replays of the same
// trace, one per partition, together do exactly what one replay does, and
// a hot array of a few pages is spread over all of them. A partition's
// memory, results and addresses are its own rows of the whole replay's;
// its instructions' statistics count its own lanes (addresses and faults
// add up over the partitions, max_conflict is the largest of theirs, lanes
// is every partition's). n = 1 (the default) is the whole replay. Replay
// and ExploreOrders read it.
func WithPartition(i, n int) Option {
	return set(optPartition, func(o *options) error {
		if n < 1 || n > shard.MaxPartitions || i < 0 || i >= n {
			return fmt.Errorf("partition %d/%d: want 0 <= i < n <= %d", i, n, shard.MaxPartitions)
		}
		o.part, o.parts = i, n
		return nil
	})
}

// WithStrict stops the replay at the first faulting lane, with an error
// naming the instruction, line, lane and address. Default false: faults are
// recorded per lane and the replay goes on. Replay and ExploreOrders read
// it.
func WithStrict(strict bool) Option {
	return set(optStrict, func(o *options) error { o.strict = strict; return nil })
}

// WithBatchInsts sets how many instructions a batch holds at most,
// 1..1<<20. Default 4096. A batch whose instructions' per-lane lists fill
// 512 KiB ends before that. Memory use is proportional to it, never to
// trace length. Replay and ExploreOrders read it.
func WithBatchInsts(n int) Option {
	return set(optBatchInsts, func(o *options) error {
		if n < 1 || n > 1<<20 {
			return fmt.Errorf("batch: %d instructions is outside 1..1048576", n)
		}
		o.batchInsts = n
		return nil
	})
}

// WithMaxMemory bounds the memory a replay may build up, in bytes: the
// simulated memory's 4 KiB pages, and the addresses table's statistics
// when that table is written. The process's peak RSS can reach about twice
// that: Go's collector lets the heap grow to twice what is live before it
// runs. A trace that touches more stops with an error instead of
// exhausting the machine. Default DefaultMaxMemory; at least 1 MiB, at
// most 16 GiB (shard.MaxBytes, what page references can name). Replay and
// ExploreOrders read it.
func WithMaxMemory(bytes uint64) Option {
	return set(optMaxMemory, func(o *options) error {
		if bytes < 1<<20 {
			return fmt.Errorf("max memory: %d bytes is under 1 MiB", bytes)
		}
		if bytes > shard.MaxBytes {
			return fmt.Errorf("max memory: %d bytes is over the engine's 16 GiB of simulated memory", bytes)
		}
		o.maxMemory = bytes
		return nil
	})
}

// WithExplore fills the addresses table's order_sensitive column: true for
// an address unless its accesses provably commute (every access the same
// operation with the same operands, or all of one commuting family: integer
// add and sub, one bitwise operation, one min or max), so that no other
// order the ISA allows could leave a different final value. Default false.
// Replay reads it (ExploreOrders' replays keep only the memory).
func WithExplore(explore bool) Option {
	return set(optExplore, func(o *options) error { o.explore = explore; return nil })
}

// WithProgress calls fn from the emitting goroutine after each batch with
// the running totals. Replay reads it, and ExploreOrders, for each of its
// replays.
func WithProgress(fn func(Summary)) Option {
	return set(optProgress, func(o *options) error { o.progress = fn; return nil })
}

// WithOrders sets the random orders ExploreOrders replays besides lane
// order: k of them, k >= 1, their seeds first, first+1, … (WithOrder's
// seed). Default 4 orders from seed 1. ExploreOrders reads it.
func WithOrders(k int, first uint64) Option {
	return set(optOrders, func(o *options) error {
		if k < 1 {
			return fmt.Errorf("%w, got %d", errNoOrders, k)
		}
		o.orders, o.firstSeed = k, first
		return nil
	})
}

// WithClusterSize sets how many consecutive .group numbers form a cluster
// (PTX .cluster scope), n >= 1: group g is in cluster g / n. Default 1,
// one CTA a cluster. Races reads it, for the groups the trace names no
// cluster for (trace.Cluster); it never puts a group in a named cluster.
func WithClusterSize(n int64) Option {
	return set(optClusterSize, func(o *options) error {
		if n < 1 {
			return fmt.Errorf("cluster size %d: want 1 or more", n)
		}
		o.clusterSize = n
		return nil
	})
}

func (o *options) workerCount() int {
	w := o.workers
	if w == 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return w
}

// checkInterleave: windows of instructions reorder only under a random
// order.
func (o *options) checkInterleave() error {
	if o.interleave > 0 && o.order != OrderRandom {
		return fmt.Errorf("interleave %d: only with the random order", o.interleave)
	}
	return nil
}

// withBatchListBytes sets the bytes of per-lane lists that end a batch
// early (defaultBatchListBytes): tests lower it, so that small traces are
// cut by it.
func withBatchListBytes(n int) Option {
	return func(o *options) error {
		o.batchListWords = max(n/8, 1)
		return nil
	}
}

// withAddrWindow makes the addresses table's counters count their items
// in windows of at most items items and insts instructions.
func withAddrWindow(items, insts int) Option {
	return func(o *options) error {
		o.addrWindow, o.addrWindowInsts = items, insts
		return nil
	}
}

// withItemBlocks makes the addresses table's counters keep item buffers
// of n items or more in off-heap blocks (addrTracker.blockItems), so that
// a small trace's windows are blocks as a large one's are.
func withItemBlocks(n int) Option {
	return func(o *options) error {
		o.itemBlocks = n
		return nil
	}
}

// withDenseAt makes a page of the addresses table turn dense once it holds
// n addresses, or never for n = -1 (options.denseAt).
func withDenseAt(n int) Option {
	return func(o *options) error {
		o.denseAt = n
		return nil
	}
}

// withGoLoops makes the replay run Go's loops where it would run
// assembly for this CPU (options.goLoops).
func withGoLoops() Option {
	return func(o *options) error {
		o.goLoops = true
		return nil
	}
}
