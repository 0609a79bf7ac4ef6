package columnar

import (
	"fmt"
	"path/filepath"
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
	outs   []*output
	jobs   chan *batch
	done   chan struct{} // closed when the goroutine returns
	closed bool          // jobs is closed; only the appending side touches it
	stop   atomic.Bool   // drop the batches still queued
	failed atomic.Bool   // err is set
	err    error         // the first write error; written before failed is set
}

// queuedBatches is how many full batches may wait for the writing
// goroutine. One is enough to absorb the jitter between the two sides;
// more would only hold more memory.
const queuedBatches = 1

// maxBatches is the most batches a table allocates: one being filled,
// and the queued and the written one.
const maxBatches = queuedBatches + 2

// startPipeline starts the goroutine that writes batches to outs and
// gives each back on free once it is written (or dropped).
func startPipeline(outs []*output, free chan<- *batch) *pipeline {
	p := &pipeline{outs: outs, jobs: make(chan *batch, queuedBatches), done: make(chan struct{})}
	go p.run(free)
	return p
}

func (p *pipeline) run(free chan<- *batch) {
	defer close(p.done)
	for b := range p.jobs {
		if !p.failed.Load() && !p.stop.Load() {
			if err := p.write(b); err != nil {
				p.err = err
				p.failed.Store(true)
			}
		}
		free <- b // never blocks: free has room for all of the table's batches
	}
}

// write writes b to each of the table's files.
func (p *pipeline) write(b *batch) (err error) {
	o := p.outs[0]
	defer func() {
		// arrow-go turns most of its panics into errors; one that is
		// not must fail the writer, not kill the process from a
		// goroutine the caller cannot recover in.
		if r := recover(); r != nil {
			err = fmt.Errorf("columnar: writing %s: panic: %v", filepath.Base(o.final), r)
		}
	}()
	for _, o = range p.outs {
		if err := o.write(b); err != nil {
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
