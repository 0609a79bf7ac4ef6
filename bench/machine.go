package bench

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// HandoffNs is the time one cache line takes to go from one core to the
// other and back, in ns: two goroutines spinning on one atomic counter,
// each incrementing it in turn, the median of handoffTrials trials of
// handoffRounds round trips. It is 0 with fewer than two Ps, where the two
// could not spin at once.
//
// It is this machine's cross-core latency at the moment it is measured.
// The project's VM has spells, tens of seconds long, in which it is three
// to five times its usual 90-130 ns; a replay on two cores, which hands
// every batch from core to core, then takes up to twice as long, while a
// replay on one core, or BenchmarkMachineScaling's goroutines, which share
// nothing, take as long as ever (docs/PERFORMANCE.md). BenchmarkReplay
// measures it before each replay and reports the highest as handoff-ns,
// so that the report can tell the replays of a spell.
func HandoffNs() float64 {
	if runtime.GOMAXPROCS(0) < 2 {
		return 0
	}
	trials := make([]float64, handoffTrials)
	for i := range trials {
		trials[i] = handoffTrial(handoffRounds)
	}
	slices.Sort(trials)
	return trials[len(trials)/2]
}

const (
	handoffTrials = 5
	handoffRounds = 4000 // 0.4 ms at 100 ns, 2 ms in a spell
)

// handoffTrial times rounds round trips of the counter between this
// goroutine, which writes the odd values, and another, which writes the
// even ones. Both spin, yielding every spinYield loads so that a goroutine
// waiting for the other's P never holds it for long.
func handoffTrial(rounds int64) float64 {
	var x atomic.Int64
	await := func(v int64) {
		for n := 1; x.Load() != v; n++ {
			if n%spinYield == 0 {
				runtime.Gosched()
			}
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(1); i <= rounds; i++ {
			await(2*i - 1)
			x.Store(2 * i)
		}
	}()
	// The first round trip waits for the goroutine to start: not timed.
	x.Store(1)
	await(2)
	start := time.Now()
	for i := int64(2); i <= rounds; i++ {
		x.Store(2*i - 1)
		await(2 * i)
	}
	elapsed := time.Since(start)
	<-done
	return float64(elapsed.Nanoseconds()) / float64(rounds-1)
}

const spinYield = 1 << 16

// ScalingWork is the machine's scaling baseline's piece of independent
// work: n multiply-adds of a linear congruential generator, each also
// adding into a word of mem (a power-of-two length) that no other
// goroutine touches.
func ScalingWork(mem []uint32, n int) {
	x := uint32(1)
	m := uint32(len(mem) - 1)
	for range n {
		x = x*1664525 + 1013904223
		mem[x&m] += x
	}
}

// ScalingWords is the table of each goroutine of the scaling ceiling: 4
// MiB, the size of uniform-1Mi's region.
const ScalingWords = 1 << 20

// MachineScaling times n pieces of ScalingWork on goroutines goroutines
// at once, each on a table of its own of words words: the same total work
// as on one, split. One over two is the most two cores of this machine
// give independent work: the ceiling of two workers over one.
func MachineScaling(goroutines, words, n int) time.Duration {
	mems := make([][]uint32, goroutines)
	for i := range mems {
		mems[i] = make([]uint32, words)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, mem := range mems {
		wg.Go(func() { ScalingWork(mem, n/goroutines) })
	}
	wg.Wait()
	return time.Since(start)
}
