package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/gpureplay/replay/internal/offheap"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// Summary is what a replay did.
type Summary struct {
	Instructions uint64
	Lanes        uint64 // lanes that ran
	LaneOps      uint64 // lane-element accesses (lanes times vector elements)
	Faults       uint64 // lane-elements that faulted or were dropped
	Words        uint64 // words of final memory written out
	Elapsed      time.Duration
	// How the source was read, for tests and benchmarks that check a fast
	// path was taken (trace.SourceCaps): the instructions the source
	// handed over as repeats of the one before (CapRepeat), and those it
	// decoded into the replay's own storage (CapArena, NextInto).
	RepeatInsts, ArenaInsts uint64
	// BlockInsts counts the instructions a split source handed over a
	// block at a time (trace.CapBlock), applied without a batch (blocks.go).
	BlockInsts uint64
	// FoldedWords counts the words a combined split's fold records set
	// (trace.Fold): each the one operation its split task composed of a
	// slice's accesses to the word, which count in no lane above.
	FoldedWords uint64
}

// memKey names one memory instance: a space, and the group for per-group spaces.
type memKey struct {
	space trace.Space
	group int64
}

// replayer replays one trace (Replay): newReplayer, then run, once.
type replayer struct {
	opts    options
	hdr     *trace.Header
	mem     *shard.Memory
	regions map[trace.Space][]trace.Region
	plans   map[*trace.Static]*plan
	// planList is every plan made, by plan.id; batches index it. It is
	// only appended to, so a batch's copy of its header stays valid
	// while the reader appends. It keeps the plans a .region replaced
	// (addRegion) until the replay ends: as many as the regions it keeps
	// times the instructions of their space, a plan each.
	planList []*plan
	memIDs   map[memKey]uint32
	memKeys  []memKey
	// partKeys is each memory id's PartitionKey, and pt the partitions'
	// map (WithPartition). partKeys is only appended to (by the reader):
	// a batch's copy stays valid.
	partKeys []uint64
	pt       shard.Partitioner
	addrs    *addrTracker // nil unless the sink wants the addresses table
	// oneLoops counts the batches applied as commuting (batch.oneLoop).
	oneLoops int
	// pageSums counts the warps summed in a page accumulator (pageAcc).
	pageSums int
	// prefixWarps counts the warps prefix-summed (prefixAcc).
	prefixWarps int
	// fewHits counts the warps that took their last few-address grouping
	// again (fewWarps).
	fewHits int
	// namedShares counts the instructions that shared an earlier one's
	// vectors by their VecID (batch.addNamed), and fewNamed the warps that
	// met their few-address entry by their vectors' place, not their list
	// (fewWarps.find; tests).
	namedShares, fewNamed int
	// ownedBatches counts the batches the owned pipeline applied
	// (ownedRun).
	ownedBatches int
	ran          bool
	// arenaHint and vecsHint are the most list storage and vectors a
	// batch has needed so far.
	arenaHint, vecsHint int
	// instSlab is what is left of the huge-page memory (instBlk, mapped
	// outside the Go heap) that the read stage carves the batches'
	// instructions from, a default batch's room each, but the first
	// batch's (instsMade; fill): the batches in flight share a huge page,
	// rather than take one each. run releases instBlk once the read stage
	// has returned and no batch is in use.
	instSlab  []binst
	instBlk   *offheap.Block
	instsMade bool
	// recsHint and segsHint are the most records and segments one
	// expander's route has held in a batch so far (batch.expand sizes
	// routes by them). Only expandBatch reads and writes them, under
	// statsMu.
	recsHint, segsHint int
	// statsMu guards the counts above (oneLoops to namedShares) and the
	// hints, which the owned pipeline's workers update as each expands a
	// batch of its own (ownedRun).
	statsMu sync.Mutex
	// The window of WithInterleave being filled: how many instructions it
	// has, and where it starts in the batch.
	winPos, winStart int
	winWarps         []warpKey
	winPerm          []int
	winInsts         []binst
	// pending is an instruction read after a batch's .init: it opens the
	// next batch. The Source owns it until the next call to Next.
	pending *trace.Inst
	// The reader's memo of the last instruction's plan (and the one
	// before it, of another Static) and memory id.
	lastPlan   *plan
	prevPlan   *plan
	lastMemKey memKey
	lastMemID  uint32
	lastMemOK  bool
}

// newReplayer makes a replayer for a trace with header h, with the
// options o (buildOptions): its regions, and its initial memory written
// in.
func newReplayer(h *trace.Header, o options) (*replayer, error) {
	mem, err := shard.New(shard.WithShards(o.shards))
	if err != nil {
		return nil, err
	}
	pt, err := newPartitioner(h, o.parts)
	if err != nil {
		return nil, err
	}
	e := &replayer{opts: o, hdr: h, mem: mem, regions: map[trace.Space][]trace.Region{},
		plans: map[*trace.Static]*plan{}, memIDs: map[memKey]uint32{}, pt: pt}
	for _, r := range h.Regions {
		e.regions[r.Space] = append(e.regions[r.Space], r)
	}
	var own func(uint32, uint64) bool
	if o.parts > 1 {
		own = func(id uint32, a uint64) bool { return e.pt.Of(e.partKeys[id], a) == o.part }
	}
	for i := range h.Inits {
		in := &h.Inits[i]
		if err := writeBytes(mem, e.memID(initKey(in)), in.Addr, in.Data, own); err != nil {
			return nil, fmt.Errorf(".init at %s 0x%x: %w", in.Space, in.Addr, err)
		}
	}
	return e, nil
}

func (e *replayer) memID(k memKey) uint32 {
	id, ok := e.memIDs[k]
	if !ok {
		id = uint32(len(e.memKeys))
		e.memIDs[k] = id
		e.memKeys = append(e.memKeys, k)
		e.partKeys = append(e.partKeys, PartitionKey(k.space, k.group))
	}
	return id
}

// InstError is a replay error tied to one instruction of the trace.
type InstError struct {
	Seq  uint64
	Line int // 0 when the trace is binary
	Text string
	Err  error
}

func (e *InstError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d (instruction %d, %s): %v", e.Line, e.Seq, e.Text, e.Err)
	}
	return fmt.Sprintf("instruction %d (%s): %v", e.Seq, e.Text, e.Err)
}

func (e *InstError) Unwrap() error { return e.Err }

// Replay reads src to the end, replays it, and writes the output to sink:
// committed on success, aborted on any error. It stops between two
// batches when ctx is done, aborting the sink, with an error wrapping
// ctx.Err(). It reads every option but WithOrders and WithClusterSize.
func Replay(ctx context.Context, src trace.Source, sink Sink, opts ...Option) (Summary, error) {
	o, err := buildOptions("Replay", replayReads, opts)
	if err != nil {
		return Summary{}, errors.Join(err, sink.Abort())
	}
	return replay(ctx, src, sink, o)
}

// replay is Replay with its options built.
func replay(ctx context.Context, src trace.Source, sink Sink, o options) (Summary, error) {
	e, err := newReplayer(src.Header(), o)
	if err == nil {
		var sum Summary
		if e.blockPath(src, sink) {
			sum, err = e.runBlocks(ctx, src, sink)
		} else {
			sum, err = e.run(ctx, src, sink)
		}
		if err == nil {
			if err = sink.Commit(); err == nil {
				return sum, nil
			}
		}
	}
	if aerr := sink.Abort(); aerr != nil {
		err = errors.Join(err, aerr)
	}
	return Summary{}, err
}

// run replays src and hands every result, statistic and the final memory
// to sink. It neither commits nor aborts the sink. It stops between two
// batches when ctx is done, with an error wrapping ctx.Err().
func (e *replayer) run(ctx context.Context, src trace.Source, sink Sink) (Summary, error) {
	if e.ran {
		return Summary{}, errors.New("engine: run called twice")
	}
	e.ran = true
	pl := e.newPipeline(sink)
	if e.addrs != nil {
		// After the table is emitted, or on an error once compute has
		// returned: no owner applies any more.
		defer e.addrs.release()
	}
	var runErr error
	go pl.emit(sink)
	if pl.ownedPipeline() {
		pl.owned = newOwnedRun(pl)
		runErr = pl.owned.run(ctx, src)
		close(pl.readDone)
	} else {
		go pl.read(ctx, src)
		runErr = pl.compute()
	}
	close(pl.toEmit)
	<-pl.emitted
	// No batch is in use now but the read stage's, which returns at once
	// after the last batch, and after an error once it finishes a batch
	// it is filling (the source may be slow): release the instructions'
	// memory when it has.
	select {
	case <-pl.readDone:
		e.instBlk.Release()
	default:
		go func() { <-pl.readDone; e.instBlk.Release() }()
	}
	if runErr == nil {
		runErr = pl.emitErr
	}
	if runErr != nil {
		return Summary{}, runErr
	}
	// The addresses table first: its slabs are released before the
	// memory table's buffers are allocated, so the two never add up in
	// the replay's peak memory.
	if e.addrs != nil {
		if err := e.addrs.emit(sink, e.pagesInOrder(), e.memKeys); err != nil {
			return Summary{}, err
		}
		e.addrs.release()
	}
	words, err := e.emitMemory(sink)
	if err != nil {
		return Summary{}, err
	}
	pl.sum.Words = words
	pl.sum.Elapsed = time.Since(pl.start)
	return pl.sum, nil
}

// pipeline is one run's stages and the channels between them (see the
// package documentation): batches go from the pool to read, compute
// (expand, then apply), emit, and back to the pool.
type pipeline struct {
	e                   *replayer
	start               time.Time
	workers             int
	expanders, appliers int
	noResults           bool
	columns             bool // the sink takes results as columns (CapResultColumns)
	iotaLanes           bool // ... and may be given them without the lanes of full warps (CapIotaLanes), or takes Results
	pool                chan *batch
	toCompute, toEmit   chan *batch
	stop                chan struct{}
	stopOnce            sync.Once
	emitted             chan struct{}
	readDone            chan struct{} // closed when read returns
	owned               *ownedRun     // the owned pipeline's workers (ownedRun), or nil
	sum                 Summary
	emitErr             error
}

// maxInFlight is the most batches a pipeline moves at once (newPipeline).
const maxInFlight = 4

func (e *replayer) newPipeline(sink Sink) *pipeline {
	pl := &pipeline{e: e, start: time.Now(), workers: e.opts.workerCount()}
	caps := sink.Caps()
	pl.noResults = caps&CapResults == 0
	pl.columns = caps&CapResultColumns != 0
	pl.iotaLanes = !pl.columns || caps&CapIotaLanes != 0
	counts := caps&CapAddresses != 0
	pl.expanders, pl.appliers = stages(pl.workers, counts && e.opts.explore)
	if counts {
		// With more workers than one, counters of their own, one a
		// worker; WithExplore's order analysis reads each batch's
		// operands, so the appliers count, before the batch is reused.
		e.addrs = newAddrTracker(pl.appliers, e.opts.explore, pl.workers)
		if d := e.opts.denseAt; d != 0 {
			e.addrs.denseAt = max(d, 0)
		}
		if w := e.opts.addrWindow; w != 0 && e.addrs.window != 0 {
			e.addrs.window, e.addrs.windowInsts = w, e.opts.addrWindowInsts
		}
		if n := e.opts.itemBlocks; n != 0 {
			e.addrs.blockItems = n
		}
	}
	// One batch reading, one expanding and applying (or one expanding, one
	// applying), one emitting. Each gets its storage when first filled
	// (fill): a trace of one batch fills one.
	inFlight := maxInFlight - 1
	if pl.workers > 1 {
		inFlight = maxInFlight
	}
	pl.pool = make(chan *batch, inFlight)
	for i := 0; i < inFlight; i++ {
		pl.pool <- new(batch)
	}
	pl.toCompute, pl.toEmit = make(chan *batch, 1), make(chan *batch, 1)
	pl.stop, pl.emitted, pl.readDone = make(chan struct{}), make(chan struct{}), make(chan struct{})
	return pl
}

// halt stops the read stage, once: the replay failed.
func (pl *pipeline) halt() { pl.stopOnce.Do(func() { close(pl.stop) }) }

// read is stage 1, on a goroutine of its own: it fills batches from src.
func (pl *pipeline) read(ctx context.Context, src trace.Source) {
	e := pl.e
	defer close(pl.readDone)
	defer close(pl.toCompute)
	for {
		var b *batch
		select {
		case b = <-pl.pool:
		case <-pl.stop:
			return
		}
		pl.prepare(b, pl.expanders, pl.appliers)
		if err := ctx.Err(); err != nil {
			// The batch goes on empty, carrying the error: the compute
			// stage stops the replay with it.
			b.err = fmt.Errorf("replay stopped: %w", err)
			select {
			case pl.toCompute <- b:
			case <-pl.stop:
			}
			return
		}
		eof := e.fill(b, src)
		b.partKeys = e.partKeys
		// Decide before handing b over: from then on it is the compute
		// stage's, which may set b.err.
		last := eof || b.err != nil
		select {
		case pl.toCompute <- b:
		case <-pl.stop:
			return
		}
		if last {
			return
		}
	}
}

// prepare empties b for the read stage to fill, for ranges expanders and
// owners appliers, and sets what the replay's options say of it.
func (pl *pipeline) prepare(b *batch, ranges, owners int) {
	e := pl.e
	b.reset(ranges, owners, e.mem.Shards())
	b.noResults = pl.noResults
	b.partitioned = e.opts.parts > 1
	b.pt, b.part = &e.pt, e.opts.part
	b.countsLanes = e.addrs != nil
	b.order, b.seed = e.opts.order, e.opts.seed
	b.avx512 = !e.opts.goLoops && hasConflictsAVX512()
}

// emit is stage 3, on a goroutine of its own: it hands each batch's rows
// to the sink in trace order and counts the summary.
func (pl *pipeline) emit(sink Sink) {
	defer close(pl.emitted)
	for b := range pl.toEmit {
		if pl.emitErr == nil {
			pl.emitErr = sink.Instructions(b.rows())
			if pl.emitErr == nil && !pl.noResults {
				if c := b.resultColumns(pl.iotaLanes); pl.columns {
					pl.emitErr = sink.ResultColumns(c)
				} else {
					pl.emitErr = sink.Results(b.results(c))
				}
			}
			if pl.emitErr != nil {
				pl.halt()
			}
			for i := range b.stats {
				pl.sum.Lanes += uint64(b.stats[i].Lanes)
				pl.sum.Faults += uint64(b.stats[i].Faults)
			}
			pl.sum.Instructions += uint64(len(b.stats))
			pl.sum.LaneOps += uint64(b.nslots)
			pl.sum.RepeatInsts += uint64(b.repeatInsts)
			pl.sum.ArenaInsts += uint64(b.arenaInsts)
			if pl.e.opts.progress != nil {
				s := pl.sum
				s.Elapsed = time.Since(pl.start)
				pl.e.opts.progress(s)
			}
		}
		pl.recycle(b)
	}
}

// recycle returns an emitted batch to the pool it came from.
func (pl *pipeline) recycle(b *batch) {
	if pl.owned != nil {
		pl.owned.recycle(b)
		return
	}
	pl.pool <- b
}

// compute is stage 2, here. With one worker: expand and apply fused. With
// more, expand on a goroutine of its own, apply here: batch k+1 expands
// while batch k applies. It returns the first batch's error.
func (pl *pipeline) compute() error {
	e := pl.e
	fused := pl.workers == 1
	toApply := pl.toCompute
	if !fused {
		expanded := make(chan *batch, 1)
		go func() {
			defer close(expanded)
			for b := range pl.toCompute {
				if b.err == nil {
					e.expandBatch(b, false)
				}
				expanded <- b
			}
		}()
		toApply = expanded
	}
	var runErr error
	for b := range toApply {
		if runErr == nil && b.err == nil {
			e.finishBatch(b, fused)
		}
		if b.err != nil && runErr == nil {
			runErr = b.err
			pl.halt()
		}
		if runErr != nil {
			pl.pool <- b
			continue
		}
		pl.toEmit <- b
	}
	return runErr
}

// finishBatch applies an expanded batch (expanding it too when fused),
// writes its .inits, and checks the memory limit and, with WithStrict,
// for a fault, setting b.err.
func (e *replayer) finishBatch(b *batch, fused bool) {
	if fused {
		e.expandBatch(b, true)
	}
	if b.err == nil {
		e.applyBatch(b, fused)
	}
	e.settleBatch(b)
}

// settleBatch finishes a batch every owner has applied: it writes its
// .inits, and checks the memory limit and, with WithStrict, for a fault,
// setting b.err.
func (e *replayer) settleBatch(b *batch) {
	if err := e.applyInits(b); err != nil && b.err == nil {
		b.err = err
	}
	used := uint64(e.mem.Pages()) * shard.PageBytes
	if e.addrs != nil {
		// The counters' windows hold items not yet counted: when their
		// entries could pass the limit, they are counted now. An item
		// may cost two entries: a page made dense at once (newDense)
		// holds 1024 for as few as 512 items.
		if used+e.addrs.bytes()+uint64(e.addrs.pending())*2*uint64(unsafe.Sizeof(addrEntry{})) > e.opts.maxMemory {
			e.addrs.flushWindows()
		}
		used += e.addrs.bytes()
	}
	if used > e.opts.maxMemory && len(b.insts) > 0 {
		b.err = fmt.Errorf("by instruction %[2]d the replay holds %[1]d MiB of simulated memory and address statistics, over the %[3]d MiB limit (WithMaxMemory)",
			used>>20, b.stats[len(b.insts)-1].Seq, e.opts.maxMemory>>20) // the last in trace order, under -interleave too
	}
	if b.err == nil && e.opts.strict {
		if err := b.strictError(); err != nil {
			b.err = err
		}
	}
}

// fill reads up to a batch of instructions; it reports whether src ended.
// A .init ends the batch: its instructions apply before it (directive.go).
//
// A source that declares trace.CapArena decodes the instructions' lists
// straight into the batch's arena; others' lists are copied there. One
// that declares trace.CapRepeat hands over the records that repeat an
// instruction at once.
func (e *replayer) fill(b *batch, src trace.Source) (eof bool) {
	w := e.opts.interleave
	defer e.closeWindow(b) // a batch ends a window only where the trace does (below)
	caps := src.Caps()
	into := caps&trace.CapArena != 0
	reps := caps&trace.CapRepeat != 0 && w == 0
	if want := e.arenaHint + e.arenaHint/8; into && cap(b.arena) < want {
		// A batch object's first fill: the size the last batch needed at
		// once, not by doubling (each doubling copies, into memory not yet
		// paged in), and an eighth more: the source wants room for its
		// widest instruction's lists past the last one's, and batches
		// differ.
		b.arena = make([]uint64, 0, want)
	}
	if b.insts == nil {
		// A batch object's first fill: room for a default batch's
		// instructions at once, so that filling it never copies them (a
		// larger batch grows as it fills). Not when the pipeline starts:
		// a trace that fits one batch never allocates the others' 320
		// KiB each (a replay of a thousand instructions allocates 4.7 MB
		// rather than 5.7; its time did not change measurably). The
		// first batch's come from make; the others', once a trace
		// needs them, are carved from a huge page that they share
		// (instSlab): their first fills faulted in ~80 pages of 4 KiB
		// each, while a trace of one batch would pay for a huge page,
		// and its padding in the heap, which alone brought a
		// one-instruction replay its first collection.
		n := min(e.opts.batchInsts, defaultBatchInsts)
		if !e.instsMade {
			b.insts, e.instsMade = make([]binst, 0, n), true
		} else {
			if cap(e.instSlab) < n {
				k := (maxInFlight - 1) * n
				if size := k * int(unsafe.Sizeof(binst{})); e.instBlk == nil && size >= offheap.HugeMin {
					e.instBlk = offheap.NewBlock(size)
					e.instSlab = offheap.SliceOf[binst](e.instBlk)
				} else {
					e.instSlab = make([]binst, 0, k)
				}
			}
			b.insts, e.instSlab = e.instSlab[:0:n], e.instSlab[n:cap(e.instSlab)]
		}
	}
	if want := e.vecsHint + e.vecsHint/8; cap(b.vecs) < e.vecsHint {
		// Likewise, and an eighth more: a batch a few vectors longer
		// than the longest before (a spinlock's batches end at their
		// lists' budget, a few instructions apart) would double it, a
		// copy of half a megabyte into fresh pages.
		b.vecs = make([]bvec, 0, want)
	}
	defer func() { e.arenaHint, e.vecsHint = max(e.arenaHint, len(b.arena)), max(e.vecsHint, len(b.vecs)) }()
	if in := e.pending; in != nil {
		e.pending = nil
		// Its lists, if decoded into an arena, are in the last batch's:
		// copied, into the arena sized above (its vectors index it).
		e.winStart = len(b.insts)
		if !e.addInst(b, in, false) {
			b.finishAdd(e.planList)
			return false
		}
		e.windowAdded(b)
	}
	// A batch ends at its instruction count or once its lists fill the
	// list budget (defaultBatchListBytes), whichever comes first, never
	// within an interleaving window.
	for (len(b.insts) < e.opts.batchInsts && len(b.arena) < e.opts.batchListWords || e.winPos > 0) && b.initBytes < maxBatchInitBytes {
		if w > 0 && e.winPos == 0 && len(b.insts) > 0 && len(b.insts)+w > e.opts.batchInsts {
			break // the next window whole in the next batch
		}
		var in *trace.Inst
		var err error
		if into && e.arenaHint == 0 && len(b.arena) > 0 && cap(b.arena) < e.opts.batchListWords {
			// The replay's first batch, and the trace has lists: room
			// for the list budget at once rather than by the source's
			// doublings, each a copy into memory not yet paged in (the
			// lists so far keep their places: vectors index them).
			b.arena = slices.Grow(b.arena, e.opts.batchListWords+e.opts.batchListWords/8-len(b.arena))
		}
		if into {
			in, b.arena, err = src.NextInto(b.arena)
		} else {
			in, err = src.Next()
		}
		if err == io.EOF {
			eof = true
			break
		}
		if err != nil {
			b.err = err
			break
		}
		if in.Dir != nil {
			if in.Dir.Fold != nil {
				b.err = errFoldBatch
				break
			}
			e.closeWindow(b) // a directive ends a window
			e.directive(b, in.Dir)
			continue
		}
		if into {
			b.arenaInsts++
		}
		if len(b.inits) > 0 {
			e.pending = in
			break
		}
		if e.winPos == 0 {
			e.winStart = len(b.insts)
		}
		if !e.addInst(b, in, into) {
			break
		}
		if len(b.insts) == vecsProbe && e.vecsHint == 0 {
			e.sizeFirstVecs(b)
		}
		e.windowAdded(b)
		if reps {
			// The records after it that repeat it (a hot counter's), as
			// many as the batch has room for, taken at once.
			if room := e.opts.batchInsts - len(b.insts); room > 0 {
				if k, dg, dw := src.Repeats(room); k > 0 {
					e.addRepeats(b, in, k, dg, dw)
				}
			}
		}
	}
	b.finishAdd(e.planList)
	return eof
}

// vecsProbe is how many instructions of the replay's first batch
// sizeFirstVecs waits for.
const vecsProbe = 64

// sizeFirstVecs makes room in the replay's first batch for the vectors of
// a whole batch at the rate its first vecsProbe instructions took them,
// and an eighth more: grown by doubling instead, a batch of list
// instructions (three vectors each, a spinlock's) copied its vectors a
// dozen times into fresh pages, 2% of its replay. Instructions that share
// their vectors (a hot counter's) take few, and get little room; a trace
// shorter than a batch gets room it never writes, which costs no page.
func (e *replayer) sizeFirstVecs(b *batch) {
	want := len(b.vecs) * min(e.opts.batchInsts, defaultBatchInsts) / vecsProbe
	want += want / 8
	if cap(b.vecs) < want {
		b.vecs = slices.Grow(b.vecs, want-len(b.vecs))
	}
}

// addRepeats adds k instructions that repeat the batch's last one, in
// (trace.CapRepeat), each with its Seq one more and its Group and Warp
// advanced by dg and dw, and its mask in.RepeatMasks's when the source
// gave them (an append queue's warps): copies of it, as batch.add makes
// of a repeated warp, but without a trace.Inst each. Only a per-group
// space's memory changes with the group.
func (e *replayer) addRepeats(b *batch, in *trace.Inst, k int, dg, dw int64) {
	st := in.Static
	last := b.insts[len(b.insts)-1]
	lanes := bits.OnesCount32(last.active) * st.Elems
	perGroup := st.Space.PerGroup() && dg != 0
	b.repeatInsts += k
	b.insts = slices.Grow(b.insts, k)
	if masks := in.RepeatMasks; len(masks) == k {
		keep := in.ActiveOf(^uint32(0)) // the predicate's lanes: the same vectors
		for i, m := range masks {
			bi := push(&b.insts)
			*bi = last
			j := int64(i + 1)
			bi.Seq, bi.Group, bi.Warp = last.Seq+uint64(j), last.Group+j*dg, last.Warp+j*dw
			bi.Mask, bi.active = m, m&keep
			bi.slot, bi.pos = uint32(b.nslots), uint32(len(b.insts)-1)
			if perGroup {
				bi.mem = e.memOf(st.Space, bi.Group)
			}
			b.nslots += bits.OnesCount32(bi.active) * st.Elems
		}
		return
	}
	for i := 1; i <= k; i++ {
		bi := push(&b.insts)
		*bi = last
		bi.Seq, bi.Group, bi.Warp = last.Seq+uint64(i), last.Group+int64(i)*dg, last.Warp+int64(i)*dw
		bi.slot, bi.pos = uint32(b.nslots), uint32(len(b.insts)-1)
		if perGroup {
			bi.mem = e.memOf(st.Space, bi.Group)
		}
		b.nslots += lanes
	}
}

// memOf is the memory id of (space, group), the last one's remembered:
// consecutive instructions mostly share it.
func (e *replayer) memOf(space trace.Space, group int64) uint32 {
	if !space.PerGroup() {
		group = -1
	}
	if k := (memKey{space, group}); k != e.lastMemKey || !e.lastMemOK {
		e.lastMemKey, e.lastMemID, e.lastMemOK = k, e.memID(k), true
	}
	return e.lastMemID
}

// windowAdded counts an instruction into the window, and closes the window
// when it is full.
func (e *replayer) windowAdded(b *batch) {
	if e.opts.interleave == 0 {
		return
	}
	if e.winPos++; e.winPos == e.opts.interleave {
		e.closeWindow(b)
	}
}

// closeWindow puts the window's instructions, b.insts[winStart:], in the
// interleaved order (interleavePerm): each keeps its result slots and its
// statistics' place (binst.pos), so rows stay in trace order; only the
// order they apply in changes. The reference reads the same windows in
// the same order (interleaved).
func (e *replayer) closeWindow(b *batch) {
	if e.winPos == 0 {
		return
	}
	win := b.insts[e.winStart:]
	e.winPos = 0
	if len(win) < 2 {
		return
	}
	e.winWarps = e.winWarps[:0]
	for i := range win {
		e.winWarps = append(e.winWarps, warpKey{win[i].Group, win[i].Warp})
	}
	e.winPerm = interleavePerm(e.opts.seed, win[0].Seq, e.winWarps, e.winPerm)
	e.winInsts = append(e.winInsts[:0], win...)
	for k, i := range e.winPerm {
		win[k] = e.winInsts[i]
	}
}

// addInst plans in and copies it into b (its lists unless inArena: see
// batch.add); on a plan error it sets b.err and reports false.
func (e *replayer) addInst(b *batch, in *trace.Inst, inArena bool) bool {
	p, err := e.planOf(in)
	if err != nil {
		b.err = err
		return false
	}
	b.add(in, p, e.memOf(in.Static.Space, in.Group), inArena)
	if in.Part != nil {
		b.notePart(in.Part)
	}
	return true
}

// planOf returns in's plan, made on first use (an InstError if it cannot
// be). Consecutive instructions mostly share their Static: one comparison
// each instead of a map lookup.
func (e *replayer) planOf(in *trace.Inst) (*plan, error) {
	p := e.lastPlan
	if p == nil || p.st != in.Static {
		if q := e.prevPlan; q != nil && q.st == in.Static {
			// The plan before the last (a spinlock's CAS after its
			// exch): the two swap places, no map lookup.
			e.lastPlan, e.prevPlan = q, p
			return q, nil
		}
		p = e.plans[in.Static]
		if p == nil {
			var err error
			p, err = newPlan(in.Static, e.hdr, e.regions)
			if err != nil {
				return nil, &InstError{Seq: in.Seq, Line: in.Line, Text: in.Static.Text, Err: err}
			}
			if len(e.planList) > math.MaxUint32 {
				return nil, &InstError{Seq: in.Seq, Line: in.Line, Text: in.Static.Text, Err: errors.New("more than 2^32 distinct instructions")}
			}
			p.id = uint32(len(e.planList))
			e.planList = append(e.planList, p)
			e.plans[in.Static] = p
		}
		e.lastPlan, e.prevPlan = p, e.lastPlan
	}
	return p, nil
}

// stages splits workers between the two compute stages: with one, a
// single goroutine expands and applies each instruction at once (fused);
// with more, workers goroutines expand batch k+1 while workers/2 apply
// batch k (pipelined: expanding reads no memory contents, only which pages
// exist). Expanding a lean replay's batch takes about three times as long
// as applying it, so the expanders get every worker, and the two stages'
// goroutines share the cores: on two cores, two expanders and one
// applier were faster than one of each on all four benchmark traces
// (BenchmarkReplay). When applying also
// counts the addresses table (syncCount: WithExplore's), apply is the
// heavier stage by far: then it has every worker too. Otherwise the
// addresses table has counters of its own (addrTracker).
func stages(workers int, syncCount bool) (expanders, appliers int) {
	switch {
	case workers <= 1:
		return 1, 1
	case syncCount:
		return workers, workers
	}
	return workers, workers / 2
}

// expandBatch cuts b into one instruction range per expander, of about
// equal lane counts, and expands them in parallel, routing to the
// batch's owners. fuse (one worker) applies each instruction as it is
// expanded.
func (e *replayer) expandBatch(b *batch, fuse bool) {
	n := len(b.insts)
	ranges := len(b.out)
	b.ranges = b.ranges[:0]
	per := (b.nslots + ranges - 1) / ranges
	b.ranges = append(b.ranges, 0)
	for i := 0; i < n && len(b.ranges) < ranges; i++ {
		if int(b.insts[i].slot) >= per*len(b.ranges) {
			b.ranges = append(b.ranges, i)
		}
	}
	for len(b.ranges) <= ranges {
		b.ranges = append(b.ranges, n)
	}
	// A batch of additions only is applied each route in one loop
	// (commute.go).
	b.oneLoop = b.commutes()
	e.statsMu.Lock()
	b.recsHint, b.segsHint = e.recsHint, e.segsHint
	e.statsMu.Unlock()
	defer func() {
		e.statsMu.Lock()
		defer e.statsMu.Unlock()
		for _, routes := range b.out {
			if len(routes) == 1 {
				e.recsHint = max(e.recsHint, len(routes[0].recs))
				e.segsHint = max(e.segsHint, len(routes[0].segs))
			}
		}
	}()
	if ranges == 1 {
		b.expand(0, 0, n, e.mem, fuse, e.addrs)
	} else {
		var wg sync.WaitGroup
		for r := 0; r < ranges; r++ {
			wg.Add(1)
			go func(r int) {
				defer wg.Done()
				b.expand(r, b.ranges[r], b.ranges[r+1], e.mem, false, nil)
			}(r)
		}
		wg.Wait()
	}
	e.statsMu.Lock()
	if b.oneLoop {
		e.oneLoops++
	}
	for _, acc := range b.acc {
		if acc != nil {
			e.pageSums += acc.warps
			acc.warps = 0
		}
	}
	for _, acc := range b.pre {
		if acc != nil {
			e.prefixWarps += acc.warps
			acc.warps = 0
		}
	}
	for _, fw := range b.few {
		if fw != nil {
			e.fewHits += fw.hits
			e.fewNamed += fw.named
			fw.hits, fw.named = 0, 0
		}
	}
	e.namedShares += b.namedShares
	b.namedShares = 0
	e.statsMu.Unlock()
	// The chunks of memory the batch's first touches made are faulted in
	// here and on a goroutine of the memory's, both at once, before the
	// batch is applied (shard.Memory.Populate).
	e.mem.Populate()
	for _, err := range b.rangeErr {
		if err != nil {
			b.err = err
			return
		}
	}
}

// applyBatch applies an expanded batch, each owner in parallel; a fused
// batch is applied already.
func (e *replayer) applyBatch(b *batch, fused bool) {
	if fused {
		return
	}
	if e.addrs != nil {
		e.addrs.grow(e.mem.Pages() + 1) // every page of the batch exists now
		e.addrs.await()                 // the counters have sorted the batch before: its lists are free
	}
	owners := len(b.out[0])
	if owners == 1 {
		b.apply(0, e.mem, e.addrs)
	} else {
		var wg sync.WaitGroup
		for o := 0; o < owners; o++ {
			wg.Add(1)
			go func(o int) {
				defer wg.Done()
				b.apply(o, e.mem, e.addrs)
			}(o)
		}
		wg.Wait()
	}
	if e.addrs != nil && e.addrs.async != nil {
		e.addrs.submit(b)
	}
}

// strictError names the first faulting lane of the batch, in trace order.
func (b *batch) strictError() error {
	for r, s := range b.firstFault {
		if s < 0 {
			continue
		}
		res := &b.faultRow[r]
		for i := range b.insts {
			bi := &b.insts[i]
			if bi.Seq == res.Seq {
				return &InstError{Seq: bi.Seq, Line: bi.Line, Text: b.plans[bi.pi].st.Text,
					Err: fmt.Errorf("lane %d: %s access at 0x%x (WithStrict stops at the first fault)", res.Lane, res.Fault, res.Addr)}
			}
		}
	}
	return nil
}

// pagesInOrder returns every page sorted by (space, group, addr).
func (e *replayer) pagesInOrder() []shard.PageRef {
	pages := e.mem.All()
	rank := make([]int, len(e.memKeys))
	order := make([]int, len(e.memKeys))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := e.memKeys[order[i]], e.memKeys[order[j]]
		if a.space.String() != b.space.String() {
			return a.space.String() < b.space.String()
		}
		return a.group < b.group
	})
	for r, id := range order {
		rank[id] = r
	}
	sort.SliceStable(pages, func(i, j int) bool {
		return rank[pages[i].Mem] < rank[pages[j].Mem] // within a memory, All sorted by base
	})
	return pages
}

// emitMemory hands every written word (shard.Page.Written) to the sink,
// sorted by (space, group, addr): a page at a time to MemoryPage for a
// sink with CapMemoryPages, else as Words, in calls of up to 64 Ki. A
// replay with no word written calls Memory once, with none.
func (e *replayer) emitMemory(sink Sink) (uint64, error) {
	pages := e.pagesInOrder()
	byPage := sink.Caps()&CapMemoryPages != 0
	const chunk = 1 << 16
	var ws []Word
	if !byPage {
		ws = make([]Word, 0, min(chunk, len(pages)*shard.PageWords)) // a few pages need no 2 MiB
	}
	var total uint64
	var written [shard.PageWords / 64]uint64
	for i, pr := range pages {
		k := e.memKeys[pr.Mem]
		var next *shard.Page
		if i+1 < len(pages) {
			next = pages[i+1].Page
		}
		pr.Page.Written(&written, next)
		wp := WordPage{Space: k.space, Group: k.group, Base: pr.Base, Written: &written, Words: pr.Page.Words}
		if byPage {
			if n := wp.Rows(); n > 0 {
				if err := sink.MemoryPage(&wp); err != nil {
					return 0, err
				}
				total += uint64(n)
			}
			continue
		}
		for g, t := range wp.Written {
			for ; t != 0; t &= t - 1 {
				wi := uint64(g*64 + bits.TrailingZeros64(t))
				ws = append(ws, Word{Space: wp.Space, Group: wp.Group, Addr: wp.Base + wi*4, Value: wp.Words[wi]})
				if len(ws) == chunk {
					if err := sink.Memory(ws); err != nil {
						return 0, err
					}
					total += uint64(len(ws))
					ws = ws[:0]
				}
			}
		}
	}
	if len(ws) > 0 || total == 0 {
		if err := sink.Memory(ws); err != nil {
			return 0, err
		}
		total += uint64(len(ws))
	}
	return total, nil
}
