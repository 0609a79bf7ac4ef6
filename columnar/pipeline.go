package columnar

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
)

// pipeline writes a table's full batches on a goroutine of its own, so
// that encoding and compressing one batch (most of a table's cost) runs
// on another core while the replay produces the next rows. Each table has
// its own: the tables are independent files, and a slow one (results)
// does not hold up the others.
//
// It is bounded: the appending goroutine hands a batch over on a channel
// of capacity queuedBatches and blocks while that many batches wait and
// one is being written, so a table has at most maxBatches batches
// (table.next). The table's files are written in batch order, by this
// one goroutine.
//
// Errors: the first write error is kept, every later batch is dropped
// unwritten, and the appending side reports the error at its next call
// (Writer.check, Writer.flush) or at Commit (wait). Abort and failures
// set stop and wait, so that no batch is written to a file after the file
// was discarded.
type pipeline struct {
	outs []*output
	// overlap: encode a batch while the one before is written
	// (runOverlapped).
	overlap bool
	jobs    chan *batch
	done    chan struct{} // closed when the goroutine returns
	closed  bool          // jobs is closed; only the appending side touches it
	stop    atomic.Bool   // drop the batches still queued
	failed  atomic.Bool   // err is set
	err     error         // the first write error; written before failed is set
}

// queuedBatches is how many full batches may wait for the writing
// goroutine. One is enough to absorb the jitter between the two sides;
// more would only hold more memory.
const queuedBatches = 1

// maxBatches is the most batches a table allocates: one being filled,
// and the queued and the written one (for an overlapped table, one
// filling or queued and two being encoded: runOverlapped).
const maxBatches = queuedBatches + 2

// startPipeline starts the goroutine that writes batches to outs and
// gives each back on free once it is written (or dropped).
func startPipeline(outs []*output, overlap bool, free chan<- *batch) *pipeline {
	p := &pipeline{outs: outs, overlap: overlap, jobs: make(chan *batch, queuedBatches), done: make(chan struct{})}
	go p.run(free)
	return p
}

func (p *pipeline) run(free chan<- *batch) {
	defer close(p.done)
	if p.overlap && runtime.GOMAXPROCS(0) > 1 {
		p.runOverlapped(free)
		return
	}
	// One batch at a time. An overlapped table's batch k is in state k
	// mod encodeSets, as runOverlapped has it, so that its file is the
	// same on one core as on more; another table's are all in state 0.
	for k := 0; ; k++ {
		b, ok := <-p.jobs
		if !ok {
			return
		}
		if !p.failed.Load() && !p.stop.Load() {
			state := 0
			if p.overlap {
				state = k % encodeSets
			}
			err := p.encode(state, 0, b)
			if err == nil {
				err = p.writeEncoded(0, b)
			}
			p.fail(err)
		}
		free <- b // never blocks: free has room for all of the table's batches
	}
}

// fail keeps err, unless nil or a first error is kept already.
func (p *pipeline) fail(err error) {
	if err != nil && !p.failed.Load() {
		p.err = err
		p.failed.Store(true)
	}
}

// runOverlapped is run for a table written when the replay leaves a core
// free (the memory table, after the last instruction): a batch's row
// group is encoded on a goroutine of its own while the batch before is
// still being encoded or written, so that the table's encoding, a chain
// of short steps on one or two goroutines per batch (encodeParallel,
// appendDeltaHalves), keeps both cores busy. At most encodeSets batches
// are encoded at once, batch k into the writers' chunk set k mod
// encodeSets, and they are written in batch order, on this goroutine; a
// set is encoded into again only once the batch before in it was
// written. Batch k's columns are in state k mod encodeSets
// (parquetWriter.stored) whatever the cores: on one core run encodes the
// batches one after the other, all in the first chunk set, in the same
// states, and the file is the same. Errors as run's: the first is kept,
// and every batch after it is given back unwritten.
func (p *pipeline) runOverlapped(free chan<- *batch) {
	var (
		queue [encodeSets]*batch // the batches being encoded, oldest in head
		done  [encodeSets]chan error
		n     int // batches in queue
		head  int
		jobs  = p.jobs
	)
	for i := range done {
		done[i] = make(chan error, 1)
	}
	for jobs != nil || n > 0 {
		var in <-chan *batch
		if n < encodeSets {
			in = jobs // nil once closed
		}
		var oldest <-chan error
		if n > 0 {
			oldest = done[head]
		}
		select {
		case b, ok := <-in:
			if !ok {
				jobs = nil
				continue
			}
			if p.failed.Load() || p.stop.Load() {
				free <- b
				continue
			}
			set := (head + n) % encodeSets
			queue[set] = b
			n++
			go func() { done[set] <- p.encode(set, set, b) }()
		case err := <-oldest:
			b := queue[head]
			if err == nil && !p.failed.Load() && !p.stop.Load() {
				err = p.writeEncoded(head, b)
			}
			p.fail(err)
			queue[head] = nil
			head, n = (head+1)%encodeSets, n-1
			free <- b
		}
	}
}

// encode encodes b into chunk set buf, in state, for each of the table's
// files (output.encode).
func (p *pipeline) encode(state, buf int, b *batch) error {
	return p.each(func(o *output) error { return o.encode(state, buf, b) })
}

// writeEncoded writes b, encoded into chunk set buf, to each of the
// table's files.
func (p *pipeline) writeEncoded(buf int, b *batch) error {
	return p.each(func(o *output) error { return o.writeEncoded(buf, b) })
}

// each calls f for each of the table's files, until one fails.
func (p *pipeline) each(f func(o *output) error) (err error) {
	o := p.outs[0]
	defer func() {
		// A panic in an encoder or in arrow-go's IPC writer must fail
		// the writer, not kill the process from a goroutine the caller
		// cannot recover in.
		if r := recover(); r != nil {
			err = fmt.Errorf("columnar: writing %s: panic: %v", filepath.Base(o.final), r)
		}
	}()
	for _, o = range p.outs {
		if err := f(o); err != nil {
			return err
		}
	}
	return nil
}

// submit hands b over to be written.
func (p *pipeline) submit(b *batch) { p.jobs <- b }

// error returns the first write error so far, without waiting.
func (p *pipeline) error() error {
	if p.failed.Load() {
		return p.err
	}
	return nil
}

// close closes the queue: no batch comes after. The appending side may
// call it more than once.
func (p *pipeline) close() {
	if !p.closed {
		p.closed = true
		close(p.jobs)
	}
}

// wait closes the queue, waits until every batch handed over was written
// (or dropped, after stop or an error) and returns the first write error.
func (p *pipeline) wait() error {
	p.close()
	<-p.done
	return p.error()
}
