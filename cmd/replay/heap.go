package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/gpureplay/replay/internal/offheap"
)

// heapFloor is the Go heap below which the process does not collect
// (startHeap). A lean replay of a hot counter or a histogram keeps 4 to
// 8 MB of heap: with the runtime's 4 MB minimum goal it collected once
// or twice, and a collection on a young process faults in the
// collector's own structures (a span set block per size class swept,
// mark bits, work buffers: 250-300 pages, 12-22 us each on a loaded VM)
// besides its CPU. A replay whose heap grows past the floor collects
// there and from then on as GOGC=100 would: its peak heap grows by the
// floor at most, whatever the trace's length.
const heapFloor = 32 << 20

// splitHeapFloor is heapFloor for `replay split`: a split task keeps 23
// to 25 MB of heap live to its end (a writer's buffers a partition and
// part: 16 of them for 8 partitions, the readers' frames, the zstd
// decoders' histories), so under heapFloor it collected once or twice,
// 50-100 ms in, for 6-10 MB: a stop of the world (1-20 ms of wall under
// load) and a mark, on a task of 100-150 ms on two cores. It stays
// within heapAdvised.
const splitHeapFloor = 48 << 20

// floorOf is the heap floor of the command line args.
func floorOf(args []string) int64 {
	if len(args) > 0 && args[0] == "split" {
		return splitHeapFloor
	}
	return heapFloor
}

// startHeap sets up the Go heap for the process before anything else
// runs: collections wait for the heap to reach its floor (floorOf), and,
// for a command that reads much (readsMuch), the heap's next pages are
// advised into huge pages (offheap.AdviseHeap). A GOGC or GOMEMLIMIT in the
// environment is the user's choice and keeps the floor off. It reports
// whether the floor is set.
func startHeap(args []string) bool {
	floor := os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == ""
	// Off during the advice, whatever GOGC says: its 64 MiB allocation
	// would otherwise start a collection of its own, before its forced
	// one. Without the floor, the user's GOGC is back after it.
	gogc := debug.SetGCPercent(-1)
	if readsMuch(args) {
		offheap.AdviseHeap(heapAdvised)
	}
	if !floor {
		debug.SetGCPercent(gogc)
		return false
	}
	// GOGC=off with a memory limit collects once the runtime's memory
	// reaches the limit. After the first such collection, the
	// sentinel's cleanup restores GOGC=100 and lifts the limit: the
	// limit is a floor, not a ceiling that a large replay's live heap
	// would make the collector run against over and over.
	sentinel := new([64]byte) // not a tiny allocation: its cleanup runs
	runtime.AddCleanup(sentinel, func(int) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}, 0)
	debug.SetMemoryLimit(floorOf(args))
	return true
}
