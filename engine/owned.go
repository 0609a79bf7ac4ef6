package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gpureplay/replay/trace"
)

// ownedRun is the owned pipeline: the read and compute stages of a replay
// with two or three workers and no addresses table, run by the workers
// themselves rather than by a goroutine a stage. A worker reads a batch
// (under readMu, which serialises the source and numbers the batches in
// trace order) and expands it at once, on the same core, while what the
// read stage wrote (the lists, the instructions) is still in its cache;
// worker 0 applies every batch, in order, and settles it (its .inits, the
// memory limit, WithStrict) before it hands it to the emit stage, and
// reads and expands a batch of its own when none is ready to apply. Each
// worker fills batches of its own, which the emit stage returns to it.
//
// Why: on a machine whose cores share no cache, a line written on one
// core and then written on another costs about what a miss to memory
// does. The stage pipeline hands every batch's lists (16 bytes a
// lane-op of a uniform trace's), instructions and records between its
// goroutines, and its read stage writes each batch's lists where another
// core read the last ones: there a second worker gained nothing over one
// pinned core (docs/PERFORMANCE.md, "What bounds the replay now"). Here
// only a batch's records (8 bytes a lane-op) and rows cross, and only for
// the batches that worker 0 did not read itself.
//
// One applier keeps the simulated memory in one core's cache and every
// route single: records routed to several owners cost a route switch a
// lane. Applying is about a third of a lean replay's work, so with more
// workers the stage pipeline, whose appliers share the pages, goes
// further (maxOwnedWorkers).
type ownedRun struct {
	pl *pipeline

	readMu sync.Mutex
	nextNo int // the next batch's number, under readMu

	mu   sync.Mutex
	cond sync.Cond
	// Under mu: the batches read and expanded and not yet applied, by
	// number modulo their ring's length.
	ring []*batch
	// total is how many batches there are once the trace has ended or a
	// batch failed (-1 until then). It is written under both readMu and
	// mu (end), so either lock reads it.
	total int
	// errAt is the number of the first batch that failed to read or
	// expand (math.MaxInt64 until one does): no batch after it is
	// applied.
	errAt  atomic.Int64
	runErr error // the first error in batch order (worker 0's)
	// pools[w] holds worker w's free batches.
	pools []chan *batch
}

// ownedBatches is how many batches each worker of the owned pipeline
// fills: one being read and expanded, one waiting to be applied and
// emitted.
const ownedBatches = 2

// ownedPipeline reports whether the replay runs the owned pipeline: with
// two or three workers (maxOwnedWorkers), when no addresses table is
// counted (its counters are goroutines of their own, fed by the
// appliers).
func (pl *pipeline) ownedPipeline() bool {
	return pl.workers > 1 && pl.workers <= maxOwnedWorkers && pl.e.addrs == nil
}

// maxOwnedWorkers is the most workers the owned pipeline runs with. Its
// one applier does about a third of a lean replay's work (uniform's), so
// it bounds the replay near three workers' speed; with more, the stage
// pipeline, whose appliers share the pages, goes further.
const maxOwnedWorkers = 3

func newOwnedRun(pl *pipeline) *ownedRun {
	w := pl.workers
	r := &ownedRun{pl: pl, total: -1}
	r.cond.L = &r.mu
	r.ring = make([]*batch, w*ownedBatches+1)
	r.errAt.Store(1<<63 - 1)
	r.pools = make([]chan *batch, w)
	for i := range r.pools {
		r.pools[i] = make(chan *batch, ownedBatches)
		for range ownedBatches {
			b := new(batch)
			b.home = i
			r.pools[i] <- b
		}
	}
	return r
}

// run runs the workers and returns the first batch's error, in batch
// order. The emit stage runs beside it (pipeline.emit), returning each
// batch to its worker's pool (pipeline.recycle).
func (r *ownedRun) run(ctx context.Context, src trace.Source) error {
	var wg sync.WaitGroup
	for w := 1; w < r.pl.workers; w++ {
		wg.Go(func() { r.readers(ctx, src, w) })
	}
	r.applier(ctx, src)
	wg.Wait()
	return r.runErr
}

// readers is worker w > 0: it reads and expands batches until the trace
// ends or the replay fails.
func (r *ownedRun) readers(ctx context.Context, src trace.Source, w int) {
	for {
		var b *batch
		select {
		case b = <-r.pools[w]:
		case <-r.pl.stop:
			r.stopReading()
			return
		}
		if !r.readExpand(ctx, src, b) {
			return
		}
	}
}

// applier is worker 0: it applies every batch in order, and reads and
// expands one of its own when no batch is ready to apply.
func (r *ownedRun) applier(ctx context.Context, src trace.Source) {
	for next := 0; ; {
		r.mu.Lock()
		var b *batch
		for {
			if r.total >= 0 && next >= r.total {
				r.mu.Unlock()
				return
			}
			if c := r.ring[next%len(r.ring)]; c != nil && c.no == next {
				b = c
				break
			}
			if len(r.pools[0]) > 0 && r.total < 0 {
				break
			}
			r.cond.Wait()
		}
		r.mu.Unlock()
		if b == nil {
			// Nothing to apply yet: read a batch.
			select {
			case b = <-r.pools[0]:
				r.readExpand(ctx, src, b)
			default:
			}
			continue
		}
		if b.err == nil && int64(next) < r.errAt.Load() {
			b.apply(0, r.pl.e.mem, nil)
			r.pl.e.ownedBatches++
		}
		next++
		r.settle(b)
	}
}

// stopReading records that no batch is read after those numbered.
func (r *ownedRun) stopReading() {
	r.readMu.Lock()
	if r.total < 0 {
		r.end(r.nextNo - 1)
	}
	r.readMu.Unlock()
}

// readExpand reads batch b from src and expands it, then hands it to the
// applier. It reports false once the trace has ended (b goes back to its
// pool when it read nothing).
func (r *ownedRun) readExpand(ctx context.Context, src trace.Source, b *batch) bool {
	pl, e := r.pl, r.pl.e
	r.readMu.Lock()
	if r.total >= 0 {
		r.readMu.Unlock()
		r.pools[b.home] <- b
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
		return false
	}
	no := r.nextNo
	r.nextNo++
	pl.prepare(b, 1, 1)
	if err := ctx.Err(); err != nil {
		b.err = fmt.Errorf("replay stopped: %w", err)
		r.end(no)
	} else if eof := e.fill(b, src); eof || b.err != nil {
		r.end(no)
	}
	b.partKeys = e.partKeys
	r.readMu.Unlock()
	b.no = no
	if b.err == nil {
		e.expandBatch(b, false)
	}
	if b.err != nil {
		r.failAt(no)
	}
	r.mu.Lock()
	r.ring[no%len(r.ring)] = b
	r.cond.Broadcast()
	r.mu.Unlock()
	return true
}

// end records, under readMu, that batch no is the last.
func (r *ownedRun) end(no int) {
	r.mu.Lock()
	r.total = no + 1
	r.cond.Broadcast()
	r.mu.Unlock()
}

// failAt records that batch no failed: no batch after it is applied.
func (r *ownedRun) failAt(no int) {
	for {
		at := r.errAt.Load()
		if int64(no) >= at || r.errAt.CompareAndSwap(at, int64(no)) {
			return
		}
	}
}

// settle finishes batch b once it is applied, and hands it to the emit
// stage; batches are settled in order.
func (r *ownedRun) settle(b *batch) {
	pl, e := r.pl, r.pl.e
	if b.err == nil && int64(b.no) < r.errAt.Load() {
		e.settleBatch(b)
		if b.err != nil {
			r.failAt(b.no)
		}
	}
	failed := b.err != nil || int64(b.no) > r.errAt.Load()
	if b.err != nil && r.runErr == nil {
		r.runErr = b.err
	}
	r.mu.Lock()
	r.ring[b.no%len(r.ring)] = nil
	r.mu.Unlock()
	if failed {
		pl.halt()
		r.stopReading()
		r.pools[b.home] <- b
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
		return
	}
	pl.toEmit <- b
}

// recycle returns an emitted batch to its worker's pool. Worker 0 may be
// waiting for a batch to apply or a free one of its own: it is told.
func (r *ownedRun) recycle(b *batch) {
	r.pools[b.home] <- b
	if b.home == 0 {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	}
}
