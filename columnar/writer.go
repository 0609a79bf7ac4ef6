package columnar

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/internal/outdir"
	"github.com/gpureplay/replay/trace"
)

var _ engine.Sink = (*Writer)(nil)

// ErrClosed is returned (wrapped) by every method of a [Writer] that has
// been committed, aborted, or has failed.
var ErrClosed = errors.New("columnar: writer is closed")

// maxBatchStringBytes bounds the string data of one column in one batch:
// Arrow utf8 offsets are int32. Only free text (instructions.text) can come
// near it; a batch is cut short when it does.
const maxBatchStringBytes = 1 << 30

type state uint8

const (
	stateOpen state = iota
	stateCommitted
	stateAborted
	stateFailed
)

// table is one output table: the batch being filled, the files it goes
// to, and the lookups that build the batch's string dictionaries.
type table struct {
	id   tableID
	spec *tableSpec
	b    *batch      // being filled; nil after cleanup
	free chan *batch // batches the pipeline is done with
	nb   int         // batches allocated, at most maxBatches
	outs []*output
	pipe *pipeline // writes the full batches to outs; nil until New opened every file
	mem  memory.Allocator

	// Lookups into b's dictionaries, emptied with every new batch.
	dicts    []map[string]int32 // per column; nil but for strings
	faultIdx [engine.FaultOutOfBounds + 1]int32
	spaceOK  bool // spaceKey was looked up in this batch
	spaceKey trace.Space
	spaceIdx int32
	gen      uint64 // which batch this is: staticMemo.gen
	// win is the window of seqs of the batch's rows, seq / n, under
	// WithSeqRowGroups(n) (the instructions table's).
	win uint64
}

func newTable(id tableID, mem memory.Allocator) *table {
	spec := &specs[id]
	t := &table{id: id, spec: spec, free: make(chan *batch, maxBatches), nb: 1, mem: mem,
		b: newBatch(spec, mem), dicts: make([]map[string]int32, len(spec.encs))}
	for i, e := range spec.encs {
		if e == encDict {
			t.dicts[i] = make(map[string]int32)
		}
	}
	t.resetLookups()
	return t
}

// resetLookups empties the lookups for a new batch.
func (t *table) resetLookups() {
	for _, m := range t.dicts {
		clear(m)
	}
	for i := range t.faultIdx {
		t.faultIdx[i] = -1
	}
	t.spaceOK = false
	t.gen++
}

// next returns an empty batch to fill after one of capacity capHint was
// handed over: one the pipeline is done with, a new one (of that
// capacity: the next batch will most likely fill as far) while t has
// fewer than maxBatches, or else the first the pipeline gives back (it
// gives back every batch, written or dropped).
func (t *table) next(capHint, limit int) *batch {
	var b *batch
	select {
	case b = <-t.free:
	default:
		if t.nb < maxBatches {
			t.nb++
			b = newBatch(t.spec, t.mem)
			b.reserve(capHint, limit)
			return b
		}
		b = <-t.free
	}
	b.reset()
	return b
}

// release frees the memory of every batch of t. The pipeline must be
// done with them.
func (t *table) release() {
	if t.b != nil {
		t.b.release()
		t.b = nil
	}
	t.releaseFree()
}

// releaseFree frees the memory of the batches the pipeline gave back.
func (t *table) releaseFree() {
	for {
		select {
		case b := <-t.free:
			b.release()
		default:
			return
		}
	}
}

// str returns the index of s in column col's dictionary, adding it.
func (t *table) str(col int, s string) int32 {
	m := t.dicts[col]
	i, ok := m[s]
	if !ok {
		i = t.b.cols[col].add(s)
		m[s] = i
	}
	return i
}

// space is str for a space column: the tables sorted by space ask for
// the same space row after row.
func (t *table) space(w *Writer, col int, sp trace.Space) int32 {
	if !t.spaceOK || t.spaceKey != sp {
		t.spaceKey, t.spaceIdx, t.spaceOK = sp, t.str(col, w.spaceName(sp)), true
	}
	return t.spaceIdx
}

// chunk returns how many of n rows go into the current batch (at least
// one) and makes room for them.
func (w *Writer) chunk(t *table, n int) int {
	limit := w.batchRows(t)
	k := min(n, limit-t.b.rows)
	t.b.reserve(k, limit)
	return k
}

// batchRows is the rows of t's batches: WithSeqRowGroups' for the
// instructions table, else WithBatchRows'.
func (w *Writer) batchRows(t *table) int {
	if t.id == tInstructions && w.opt.seqRowGroups > 0 {
		return w.opt.seqRowGroups
	}
	return w.opt.batchRows
}

// added counts k rows appended to t's batch and hands the batch over when
// it is full.
func (w *Writer) added(t *table, k int) error {
	t.b.rows += k
	if t.b.rows >= w.batchRows(t) || t.b.textBytes >= maxBatchStringBytes {
		return w.flush(t)
	}
	return nil
}

// Writer is an [engine.Sink] that writes the output tables of OUTPUT.md
// into a directory. It is not safe for concurrent use. See the package
// documentation for its invariants.
type Writer struct {
	dir     string
	opt     options
	pool    *poolAllocator    // the writer's own allocator (no WithAllocator): released when it ends
	tables  [numTables]*table // nil for tables not selected, and after cleanup
	ops     map[opKey]*opAgg
	statics map[*trace.Static]*staticMemo
	recent  [recentStatics]recentStatic // a direct-mapped cache in front of statics
	spaces  map[trace.Space]string
	state   state
	err     error                               // why the writer failed
	lock    *dirLock                            // held from New until Commit, Abort or failure
	made    outdir.Made                         // the directories New made: removed, if empty, when the writer does not commit
	rename  func(oldpath, newpath string) error // os.Rename; tests inject failures and crashes
	remove  func(name string) error             // os.Remove, likewise
	// traceDone: the engine is past the trace (endTrace); the tables
	// that only its instructions fill are written, or being written, on
	// the goroutine that reports on traceEnded.
	traceDone  bool
	traceEnded chan error
	// anyOrder: the tables after the trace (addresses, memory) may
	// take rows while the trace's still do (a merge's, which writes them
	// side by side: mergeTables); Commit ends the trace, not their first
	// rows (pastTrace).
	anyOrder bool
	// batchOps, under WithSeqRowGroups with the instructions and ops
	// tables, are the ops totals of the instructions batch being
	// filled, which the memos add to (staticMemo.agg); each batch's go
	// into ops, and into rgOps as its row group's, when it is handed
	// over (foldBatchOps, recordRowGroups).
	batchOps map[opKey]*opAgg
	rgOps    [][]rowGroupOp
}

// opKey is one row of the ops table.
type opKey struct {
	dialect trace.Dialect
	op      trace.Op
	typ     trace.Type
	space   trace.Space
}

type opAgg struct {
	instructions, lanes, faults, conflictSum, sectors uint64
	maxConflict                                       uint32
}

// addRun adds rows of one Static to the totals, in a loop that keeps
// the sums in registers.
func (a *opAgg) addRun(st []engine.InstStat) {
	var lanes, faults, conflictSum, sectors uint64
	maxConflict := a.maxConflict
	for i := range st {
		s := &st[i]
		lanes += uint64(s.Lanes)
		faults += uint64(s.Faults)
		conflictSum += uint64(s.MaxConflict)
		maxConflict = max(maxConflict, s.MaxConflict)
		sectors += uint64(s.Sectors)
	}
	a.instructions += uint64(len(st))
	a.lanes += lanes
	a.faults += faults
	a.conflictSum += conflictSum
	a.maxConflict = maxConflict
	a.sectors += sectors
}

// staticMemo is what the Writer keeps of one instruction (the engine
// hands the same *trace.Static for every row of one instruction text), so
// that an instructions row costs one pointer lookup, not a hash of each
// of its strings.
type staticMemo struct {
	agg     *opAgg // its ops row; nil when the ops table is not written
	gen     uint64 // the instructions batch that key is of
	key     int32  // its key in that batch (batch.go: its rows' strings)
	textLen int    // len(Text): the row's share of the batch's text bytes
}

// maxStatics bounds the memo: past it, it starts afresh (the ops totals
// stay in Writer.ops).
const maxStatics = 1 << 16

// recentStatics is the size of the cache of Writer.recent: a loop body's
// instructions, which come round and round, then cost no map lookup.
const recentStatics = 256

type recentStatic struct {
	s *trace.Static
	m *staticMemo
}

// memo returns s's memo.
func (w *Writer) memo(s *trace.Static) *staticMemo {
	// Statics are heap objects of more than 16 bytes: the address bits
	// above the fourth tell them apart.
	r := &w.recent[uintptr(unsafe.Pointer(s))>>4%recentStatics]
	if r.s == s {
		return r.m
	}
	m := w.statics[s]
	if m == nil {
		m = w.newMemo(s)
	}
	r.s, r.m = s, m
	return m
}

func (w *Writer) newMemo(s *trace.Static) *staticMemo {
	if len(w.statics) >= maxStatics {
		clear(w.statics)
		clear(w.recent[:])
	}
	m := &staticMemo{textLen: len(s.Text)}
	if w.tables[tOps] != nil {
		k := opKey{s.Dialect, s.Op, s.Type, s.Space}
		m.agg = w.ops[k]
		if m.agg == nil {
			m.agg = new(opAgg)
			w.ops[k] = m.agg
		}
		if w.batchOps != nil {
			if m.agg = w.batchOps[k]; m.agg == nil {
				m.agg = new(opAgg)
				w.batchOps[k] = m.agg
			}
		}
	}
	w.statics[s] = m
	return m
}

// New creates dir if needed, takes its lock, and opens a temporary file in
// it for every selected table and format. Nothing is visible under a
// table's final name until [Writer.Commit]. A writer that does not commit
// (Abort, or a failure, New's own included) removes the directories New
// created, dir and its parents, if they are empty once its files are gone.
//
// If another writer holds the lock, New fails with an error wrapping
// [ErrBusy] and changes nothing. Once it holds the lock, New completes a
// commit that a killed writer left in flight and removes killed writers'
// temporary and backup files, and reports that in one line through the
// function given by [WithLogf].
func New(dir string, opts ...Option) (*Writer, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, optionError{err}
		}
	}
	var pool *poolAllocator
	if o.mem == nil {
		pool = newPoolAllocator()
		o.mem = pool
	}
	if o.run != nil {
		kv, err := o.runMeta()
		if err != nil {
			return nil, optionError{err}
		}
		o.meta = append(slices.Clone(o.meta), kv)
		slices.SortFunc(o.meta, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	}
	made, lock, err := makeAndLock(dir)
	if err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, opt: o, pool: pool, ops: make(map[opKey]*opAgg), statics: make(map[*trace.Static]*staticMemo),
		spaces: make(map[trace.Space]string), lock: lock, made: made, rename: os.Rename, remove: os.Remove}
	if o.seqRowGroups > 0 && o.tables[tInstructions] && o.tables[tOps] {
		w.batchOps = make(map[opKey]*opAgg)
	}
	pages, err := newPageEncoder()
	if err != nil {
		return nil, w.fail(err)
	}
	msg, err := w.tidy()
	if err != nil {
		return nil, w.fail(err)
	}
	if msg != "" && o.logf != nil {
		o.logf("%s", msg)
	}
	for id := range numTables {
		if !o.tables[id] {
			continue
		}
		t := newTable(id, o.mem)
		w.tables[id] = t
		for _, f := range []Format{FormatParquet, FormatArrow} {
			if o.format&f == 0 {
				continue
			}
			out, err := openOutput(dir, t.spec, f, o.mem, pages, o.meta)
			if err != nil {
				return nil, w.fail(err)
			}
			if pw, ok := out.w.(*parquetWriter); ok {
				pw.storedBelow = o.storedPageBytes
				pw.freshStates = id == tInstructions && o.seqRowGroups > 0
			}
			t.outs = append(t.outs, out)
		}
	}
	for _, t := range w.tables {
		if t != nil {
			t.pipe = startPipeline(t.outs, t.spec.overlap, t.free)
		}
	}
	return w, nil
}

// check returns nil if the writer is open, and why not otherwise. A
// batch that failed to be written fails the writer here, at the next call
// after the failure.
func (w *Writer) check() error {
	switch w.state {
	case stateOpen:
		for _, t := range w.tables {
			if t != nil {
				if err := t.pipe.error(); err != nil {
					return w.fail(err)
				}
			}
		}
		return nil
	case stateCommitted:
		return fmt.Errorf("%w: already committed", ErrClosed)
	case stateAborted:
		return fmt.Errorf("%w: aborted", ErrClosed)
	}
	return fmt.Errorf("%w: failed earlier: %w", ErrClosed, w.err)
}

// fail makes err sticky and removes every temporary file, so a writer
// that failed leaves nothing behind even if Abort is never called.
func (w *Writer) fail(err error) error {
	if cerr := w.cleanup(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	w.state, w.err = stateFailed, err
	return err
}

// cleanup stops the pipelines, discards every temporary file, releases
// every batch and then the directory's lock.
func (w *Writer) cleanup() error {
	var errs []error
	for _, t := range w.tables {
		if t != nil && t.pipe != nil {
			t.pipe.stop.Store(true)
		}
	}
	_ = w.waitTrace() // the error is the one being reported, or moot
	for i, t := range w.tables {
		if t == nil {
			continue
		}
		if t.pipe != nil {
			_ = t.pipe.wait() // the error is the one being reported, or moot
		}
		for _, o := range t.outs {
			errs = append(errs, o.discard())
		}
		t.release()
		w.tables[i] = nil
	}
	w.ops, w.statics = nil, nil
	clear(w.recent[:])
	w.pool.release() // every pipeline has returned: no buffer is in use
	errs = append(errs, w.unlock())
	// A writer that does not commit leaves no directory it made (the lock
	// file, the last thing in it, is gone now); one that holds anything
	// else stays.
	w.made.Remove()
	w.made = nil
	return errors.Join(errs...)
}

// unlock releases the directory's lock, once.
func (w *Writer) unlock() error {
	if w.lock == nil {
		return nil
	}
	l := w.lock
	w.lock = nil
	if err := l.release(); err != nil {
		return fmt.Errorf("columnar: unlocking %s: %w", l.path, err)
	}
	return nil
}

// flush hands the rows of t's batch over to the pipeline, which writes
// them as one record batch to each of t's files, and starts a new batch.
func (w *Writer) flush(t *table) error {
	if t.b.rows == 0 {
		return nil
	}
	if err := t.pipe.error(); err != nil {
		return err
	}
	if t.id == tInstructions && w.batchOps != nil {
		w.foldBatchOps()
	}
	capHint := t.b.cap
	t.pipe.submit(t.b)
	t.b = t.next(capHint, w.batchRows(t))
	t.resetLookups()
	return nil
}

func (w *Writer) spaceName(s trace.Space) string {
	n, ok := w.spaces[s]
	if !ok {
		n = s.String()
		w.spaces[s] = n
	}
	return n
}

// open returns table id for appending: nil with the writer's error once
// it has failed or closed, nil with no error when the table is not written.
func (w *Writer) open(id tableID) (*table, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	return w.tables[id], nil
}

// Caps declares what the tables being written need from the engine:
// the per-lane rows only for the results table (as columns, the lanes of
// full warps left out: CapIotaLanes), the addresses table only
// when it is written (the engine builds neither otherwise), and the memory
// table a page at a time, always (MemoryPage).
func (w *Writer) Caps() engine.SinkCaps {
	c := engine.CapMemoryPages
	if w.tables[tResults] != nil {
		c |= engine.CapResults | engine.CapResultColumns | engine.CapIotaLanes
	}
	if w.tables[tAddresses] != nil {
		c |= engine.CapAddresses
	}
	return c
}

// Results appends rows to the results table.
func (w *Writer) Results(rs []engine.Result) error {
	t, err := w.open(tResults)
	if t == nil {
		return err
	}
	if w.traceDone {
		return w.fail(errAfterTrace("results"))
	}
	for len(rs) > 0 {
		k := w.chunk(t, len(rs))
		b, n := t.b, t.b.rows
		cElem, cHi := &b.cols[2], &b.cols[5]
		if n == 0 {
			// A batch's elem and value_hi start constant 0 (zerosCol).
			cElem.kval, cElem.kstep, cHi.kval, cHi.kstep = 0, 0, 0, 0
		}
		for _, c := range []*colBuf{&b.cols[3], &b.cols[4], &b.cols[6]} {
			if c.konst {
				// addr and value, on a progression from ResultColumns (or
				// the batch's start), and the fault column, constant from
				// ResultColumns: stored from here on.
				b.fillRows(c, n)
			}
		}
		for _, c := range []*colBuf{&b.cols[0], &b.cols[1]} {
			if c.inRuns {
				b.fillRuns(c) // seq and lane, as runs from ResultColumns
			}
		}
		var (
			seq     = b.cols[0].u64()[n : n+k]
			lane    = b.cols[1].u32()[n : n+k]
			addr    = b.cols[3].u64()[n : n+k]
			value   = b.cols[4].u64()[n : n+k]
			fault   = b.cols[6].idx()[n : n+k]
			elem    []uint32 // nil while the column is constant 0
			valueHi []uint64
			ors     uint64 // the rows' elem | value_hi
		)
		if !cElem.konst {
			elem = cElem.u32()[n : n+k]
		}
		if !cHi.konst {
			valueHi = cHi.u64()[n : n+k]
		}
		for i, r := range rs[:k] {
			if r.Fault > engine.FaultOutOfBounds {
				return w.fail(fmt.Errorf("columnar: results: seq %d lane %d: unknown fault %d", r.Seq, r.Lane, r.Fault))
			}
			seq[i] = r.Seq
			lane[i] = r.Lane
			addr[i] = r.Addr
			value[i] = r.Value
			ors |= uint64(r.Elem) | r.ValueHi
			if elem != nil {
				elem[i] = r.Elem
			}
			if valueHi != nil {
				valueHi[i] = r.ValueHi
			}
			f := t.faultIdx[r.Fault]
			if f < 0 {
				f = t.str(6, r.Fault.String())
				t.faultIdx[r.Fault] = f
			}
			fault[i] = f
		}
		if ors != 0 && (elem == nil || valueHi == nil) {
			// The first rows of the batch that are not all 0: the
			// constant columns store their rows from here on.
			if elem == nil {
				b.fillRows(cElem, n)
				vs := cElem.u32()[n : n+k]
				for i := range vs {
					vs[i] = rs[i].Elem
				}
			}
			if valueHi == nil {
				b.fillRows(cHi, n)
				vs := cHi.u64()[n : n+k]
				for i := range vs {
					vs[i] = rs[i].ValueHi
				}
			}
		}
		rs = rs[k:]
		if err := w.added(t, k); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// ResultColumns appends rows given as columns to the results table
// (engine.CapResultColumns): the same rows as Results would append, each
// column copied whole, and a column the engine leaves out (elem,
// value_hi: all 0; fault: all none) left constant or filled without
// reading a row.
func (w *Writer) ResultColumns(rc *engine.ResultColumns) error {
	t, err := w.open(tResults)
	if t == nil {
		return err
	}
	if w.traceDone {
		return w.fail(errAfterTrace("results"))
	}
	if len(rc.Runs) != len(rc.Seqs) || runRows(rc.Runs) != rc.Len() {
		return w.fail(fmt.Errorf("columnar: results: %d seq runs for %d seq values, covering %d rows of %d", len(rc.Runs), len(rc.Seqs), runRows(rc.Runs), rc.Len()))
	}
	run, used := 0, uint32(0) // the seq run of row at, and its rows before at
	for at, total := 0, rc.Len(); at < total; {
		k := w.chunk(t, total-at)
		b, n := t.b, t.b.rows
		cElem, cHi := &b.cols[2], &b.cols[5]
		if n == 0 {
			// A batch's elem and value_hi start constant 0 (zerosCol).
			cElem.kval, cElem.kstep, cHi.kval, cHi.kstep = 0, 0, 0, 0
		}
		run0, used0 := run, used // the lanes' runs start where seq's do
		if cSeq := &b.cols[0]; n == 0 || cSeq.inRuns {
			// A batch's seq is held as runs while every row comes from
			// ResultColumns (colBuf.inRuns).
			cSeq.inRuns = true
			run, used = appendRuns(cSeq, rc.Seqs, rc.Runs, run, used, k)
		} else {
			run, used = putRuns(cSeq.u64()[n:n+k], rc.Seqs, rc.Runs, run, used)
		}
		if cLane := &b.cols[1]; rc.Lane != nil || n > 0 && !cLane.inRuns {
			if cLane.inRuns {
				b.fillRuns(cLane)
			}
			if rc.Lane != nil {
				copy(cLane.u32()[n:n+k], rc.Lane[at:at+k])
			} else {
				putIota(cLane.u32()[n:n+k], rc.Runs, run0, used0)
			}
		} else {
			// Lanes 0, 1, 2 … a run (IotaLanes) while the batch's every row
			// comes so: held as runs, never stored (colBuf.iota).
			cLane.inRuns, cLane.iota = true, true
			appendIotaRuns(cLane, rc.Runs, run0, used0, k)
		}
		// addr and value kept as a progression while they keep to one (a
		// hot counter's), compared rather than copied (tableSpec.progs).
		putStatCol(b, &b.cols[3], n, rc.Addr[at:at+k])
		putStatCol(b, &b.cols[4], n, rc.Value[at:at+k])
		if err := t.putFaults(rc.Fault, at, n, k, rc); err != nil {
			return w.fail(err)
		}
		var elem []uint32
		if rc.Elem != nil {
			elem = rc.Elem[at : at+k]
		}
		putZeros(b, cElem, n, k, elem, (*colBuf).u32)
		var hi []uint64
		if rc.ValueHi != nil {
			hi = rc.ValueHi[at : at+k]
		}
		putZeros(b, cHi, n, k, hi, (*colBuf).u64)
		at += k
		if err := w.added(t, k); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// putIota stores in lanes the lanes of the engine's runs from row used
// of run on (engine.ResultColumns.IotaLanes: row j of a run is lane j).
func putIota(lanes []uint32, runs []uint32, run int, used uint32) {
	for len(lanes) > 0 {
		for used == runs[run] {
			run, used = run+1, 0
		}
		k := min(len(lanes), int(runs[run]-used))
		for i := range lanes[:k] {
			lanes[i] = used + uint32(i)
		}
		lanes, used = lanes[k:], used+uint32(k)
	}
}

// runRows is the rows of runs.
func runRows(runs []uint32) int {
	n := 0
	for _, r := range runs {
		n += int(r)
	}
	return n
}

// putRuns fills seq with the runs' values from row used of run on (see
// engine.ResultColumns) and returns where the next row is.
func putRuns(seq []uint64, seqs []uint64, runs []uint32, run int, used uint32) (int, uint32) {
	for len(seq) > 0 {
		for used == runs[run] {
			run, used = run+1, 0
		}
		k := min(len(seq), int(runs[run]-used))
		v := seqs[run]
		for i := range seq[:k] {
			seq[i] = v
		}
		seq, used = seq[k:], used+uint32(k)
	}
	return run, used
}

// putFaults writes the fault column's rows n… from rows at… of rc: while
// every row of the batch is none (fs nil) the column stays constant, its
// dictionary index stored once (putConst).
func (t *table) putFaults(fs []engine.Fault, at, n, k int, rc *engine.ResultColumns) error {
	b, c := t.b, &t.b.cols[6]
	if fs == nil {
		f := t.faultIdx[engine.FaultNone]
		if f < 0 {
			f = t.str(6, engine.FaultNone.String())
			t.faultIdx[engine.FaultNone] = f
		}
		b.putConst(c, uint64(f), n, k)
		return nil
	}
	if c.konst {
		b.fillRows(c, n)
	}
	idx := c.idx()[n : n+k]
	for i, fault := range fs[at : at+k] {
		if fault > engine.FaultOutOfBounds {
			return fmt.Errorf("columnar: results: seq %d lane %d: unknown fault %d", t.b.cols[0].seqAt(n+i), rc.LaneAt(at+i), fault)
		}
		f := t.faultIdx[fault]
		if f < 0 {
			f = t.str(6, fault.String())
			t.faultIdx[fault] = f
		}
		idx[i] = f
	}
	return nil
}

// putZeros writes rows [n, n+k) of c, a column of tableSpec.zeros, from
// vs (all 0 when vs is nil): while the column is constant 0 and the rows
// are 0 it stores nothing.
func putZeros[T uint32 | uint64](b *batch, c *colBuf, n, k int, vs []T, dst func(*colBuf) []T) {
	if vs == nil {
		b.putConst(c, 0, n, k)
		return
	}
	if c.konst {
		var ors T
		for _, v := range vs {
			ors |= v
		}
		if ors == 0 && c.kval == 0 && c.kstep == 0 {
			return
		}
		// The first rows of the batch that are not all 0: the column
		// stores its rows from here on.
		b.fillRows(c, n)
	}
	copy(dst(c)[n:n+k], vs)
}

// Instructions appends rows to the instructions table and adds them to
// the ops totals.
func (w *Writer) Instructions(st []engine.InstStat) error {
	if err := w.check(); err != nil {
		return err
	}
	if w.traceDone {
		return w.fail(errAfterTrace("instructions"))
	}
	t := w.tables[tInstructions]
	if t == nil {
		return w.addOps(st)
	}
	for len(st) > 0 {
		n := len(st)
		if w.opt.seqRowGroups > 0 {
			var err error
			if n, err = w.seqWindow(t, st); err != nil {
				return w.fail(err)
			}
		}
		k, err := w.putInstructions(t, st[:w.chunk(t, n)])
		if err != nil {
			return w.fail(err)
		}
		last := st[k-1].Seq
		st = st[k:]
		if err := w.added(t, k); err != nil {
			return w.fail(err)
		}
		if a := uint64(w.opt.seqRowGroups); a > 0 && t.b.rows > 0 && last%a == a-1 {
			if err := w.flush(t); err != nil { // its window's last seq: the batch is whole
				return w.fail(err)
			}
		}
	}
	return nil
}

// seqWindow returns how many of the rows st (at least one) go into t's
// batch under WithSeqRowGroups(a): those of the batch's window of seqs,
// [win·a, (win+1)·a), the first row's when the batch is empty. A batch
// of rows of another window is handed over first.
func (w *Writer) seqWindow(t *table, st []engine.InstStat) (int, error) {
	a := uint64(w.opt.seqRowGroups)
	if t.b.rows > 0 && st[0].Seq/a != t.win {
		if err := w.flush(t); err != nil {
			return 0, err
		}
	}
	if t.b.rows == 0 {
		t.win = st[0].Seq / a
	}
	lo := t.win * a
	n := 0
	for n < len(st) && st[n].Seq >= lo && st[n].Seq-lo < a {
		n++
	}
	return max(n, 1), nil
}

// addOps adds rows to the ops totals only (the instructions table is not
// written).
func (w *Writer) addOps(st []engine.InstStat) error {
	ops := w.tables[tOps] != nil
	var (
		last *trace.Static
		from int
	)
	for i := range st {
		s := st[i].Static
		if s == last && i > 0 {
			continue
		}
		if s == nil {
			return w.fail(errNoStatic(&st[i]))
		}
		if ops && i > 0 {
			w.memo(last).agg.addRun(st[from:i])
		}
		last, from = s, i
	}
	if ops && len(st) > 0 {
		w.memo(last).agg.addRun(st[from:])
	}
	return nil
}

func errNoStatic(s *engine.InstStat) error { return errNoStaticSeq(s.Seq) }

// instCols is instructions rows a column at a time (the merge's): row i
// is seq[i], static[i], group[i], ..., every slice as long as seq. The
// Writer encodes from them as from a []engine.InstStat, byte for byte,
// without a 64-byte row per instruction between.
type instCols struct {
	seq                                   []uint64
	static                                []*trace.Static
	group, warp                           []int64
	lanes, addrs, maxc, faults, casFailed []uint32
	sectors                               []uint32
}

func (c *instCols) len() int { return len(c.seq) }

// grow makes room for k more rows and returns the first of them: the
// caller fills rows [i, i+k) of every column.
func (c *instCols) grow(k int) int {
	i := len(c.seq)
	c.seq = slices.Grow(c.seq, k)[:i+k]
	c.static = slices.Grow(c.static, k)[:i+k]
	c.group = slices.Grow(c.group, k)[:i+k]
	c.warp = slices.Grow(c.warp, k)[:i+k]
	c.lanes = slices.Grow(c.lanes, k)[:i+k]
	c.addrs = slices.Grow(c.addrs, k)[:i+k]
	c.maxc = slices.Grow(c.maxc, k)[:i+k]
	c.faults = slices.Grow(c.faults, k)[:i+k]
	c.casFailed = slices.Grow(c.casFailed, k)[:i+k]
	c.sectors = slices.Grow(c.sectors, k)[:i+k]
	return i
}

// add appends row st.
func (c *instCols) add(st *engine.InstStat) {
	i := c.grow(1)
	c.seq[i], c.static[i], c.group[i], c.warp[i] = st.Seq, st.Static, st.Group, st.Warp
	c.lanes[i], c.addrs[i], c.maxc[i], c.faults[i] = st.Lanes, st.Addresses, st.MaxConflict, st.Faults
	c.casFailed[i], c.sectors[i] = st.CASFailed, st.Sectors
}

// truncate keeps rows [0, n).
func (c *instCols) truncate(n int) {
	c.seq, c.static, c.group, c.warp = c.seq[:n], c.static[:n], c.group[:n], c.warp[:n]
	c.lanes, c.addrs, c.maxc, c.faults = c.lanes[:n], c.addrs[:n], c.maxc[:n], c.faults[:n]
	c.casFailed, c.sectors = c.casFailed[:n], c.sectors[:n]
}

// rows is rows [i, j).
func (c *instCols) rows(i, j int) instCols {
	return instCols{seq: c.seq[i:j], static: c.static[i:j], group: c.group[i:j], warp: c.warp[i:j],
		lanes: c.lanes[i:j], addrs: c.addrs[i:j], maxc: c.maxc[i:j], faults: c.faults[i:j],
		casFailed: c.casFailed[i:j], sectors: c.sectors[i:j]}
}

// instructionCols is Instructions of the rows of c.
func (w *Writer) instructionCols(c instCols) error {
	if err := w.check(); err != nil {
		return err
	}
	if w.traceDone {
		return w.fail(errAfterTrace("instructions"))
	}
	t := w.tables[tInstructions]
	for c.len() > 0 {
		var k int
		if t == nil {
			k = c.len()
			if err := w.addOpsCols(c); err != nil {
				return err
			}
		} else {
			var err error
			if k, err = w.putInstructionCols(t, c.rows(0, w.chunk(t, c.len()))); err != nil {
				return w.fail(err)
			}
			if err := w.added(t, k); err != nil {
				return w.fail(err)
			}
		}
		c = c.rows(k, c.len())
	}
	return nil
}

// addOpsCols is addOps of the rows of c.
func (w *Writer) addOpsCols(c instCols) error {
	ops := w.tables[tOps] != nil
	var (
		last *trace.Static
		from int
	)
	for i, s := range c.static {
		if s == last && i > 0 {
			continue
		}
		if s == nil {
			return w.fail(errNoStaticSeq(c.seq[i]))
		}
		if ops && i > 0 {
			w.memo(last).agg.addRunCols(c.rows(from, i))
		}
		last, from = s, i
	}
	if ops && c.len() > 0 {
		w.memo(last).agg.addRunCols(c.rows(from, c.len()))
	}
	return nil
}

// addRunCols is addRun of the rows of c.
func (a *opAgg) addRunCols(c instCols) {
	var lanes, faults, conflictSum, sectors uint64
	maxConflict := a.maxConflict
	n := c.len()
	ls, fs, ms, ss := c.lanes[:n], c.faults[:n], c.maxc[:n], c.sectors[:n]
	for i := range n {
		lanes += uint64(ls[i])
		faults += uint64(fs[i])
		conflictSum += uint64(ms[i])
		maxConflict = max(maxConflict, ms[i])
		sectors += uint64(ss[i])
	}
	a.instructions += uint64(c.len())
	a.lanes += lanes
	a.faults += faults
	a.conflictSum += conflictSum
	a.maxConflict = maxConflict
	a.sectors += sectors
}

func errNoStaticSeq(seq uint64) error {
	return fmt.Errorf("columnar: instructions: seq %d has no Static", seq)
}

// putInstructions writes st, for which t's batch has room, into it and
// adds them to the ops totals. It returns how many rows it wrote: fewer
// than len(st) when the text column reached maxBatchStringBytes. A row
// without a Static is an error (the writer then fails: the rows written
// before it are discarded with the rest).
//
// It goes a column at a time, not a row at a time: one pass over the
// rows' Statics (the key column, the ops totals a run of one Static at a
// time, the text bytes), then each number column in a loop of its own
// (putStat), which on a column's progression compares a field a row and
// off it copies one. A row at a time, each row tested every column
// against its progression through the batch's fields, which the stores
// between kept the compiler from holding in registers.
func (w *Writer) putInstructions(t *table, st []engine.InstStat) (int, error) {
	b, n := t.b, t.b.rows
	if len(st) == 0 {
		return 0, nil
	}
	const size = unsafe.Sizeof(engine.InstStat{})
	base := unsafe.Pointer(unsafe.SliceData(st))
	k, err := w.putStatics(t, unsafe.Add(base, unsafe.Offsetof(engine.InstStat{}.Static)), size, len(st),
		func(i int) uint64 { return st[i].Seq },
		func(a *opAgg, from, to int) { a.addRun(st[from:to]) })
	if err != nil {
		return 0, err
	}
	field := func(off uintptr) unsafe.Pointer { return unsafe.Add(base, off) }
	putStat[uint64](b, &b.cols[0], n, k, field(unsafe.Offsetof(engine.InstStat{}.Seq)), size)
	putStat[int64](b, &b.cols[5], n, k, field(unsafe.Offsetof(engine.InstStat{}.Group)), size)
	putStat[int64](b, &b.cols[6], n, k, field(unsafe.Offsetof(engine.InstStat{}.Warp)), size)
	// The counts: the rows that keep all six constant, found in one pass
	// (a hot counter's every row), then each column from the first that
	// does not, as putStat takes them.
	j := constCountRows(b, n, k, field(unsafe.Offsetof(engine.InstStat{}.Lanes)), size)
	if j == k {
		// Every row constant: no row j, whose address would point past
		// the rows (checkptr, under -race, rightly refuses it).
		return k, nil
	}
	from := func(off uintptr) unsafe.Pointer { return unsafe.Add(base, uintptr(j)*size+off) }
	putStat[uint32](b, &b.cols[7], n+j, k-j, from(unsafe.Offsetof(engine.InstStat{}.Lanes)), size)
	putStat[uint32](b, &b.cols[8], n+j, k-j, from(unsafe.Offsetof(engine.InstStat{}.Addresses)), size)
	putStat[uint32](b, &b.cols[9], n+j, k-j, from(unsafe.Offsetof(engine.InstStat{}.MaxConflict)), size)
	putStat[uint32](b, &b.cols[10], n+j, k-j, from(unsafe.Offsetof(engine.InstStat{}.Faults)), size)
	putStat[uint32](b, &b.cols[12], n+j, k-j, from(unsafe.Offsetof(engine.InstStat{}.CASFailed)), size)
	putStat[uint32](b, &b.cols[13], n+j, k-j, from(unsafe.Offsetof(engine.InstStat{}.Sectors)), size)
	return k, nil
}

// countCols are the instructions table's columns of InstStat's counts,
// Lanes to Sectors: six uint32 fields in 24 bytes, in this order (the
// array sizes below fail to compile otherwise).
var countCols = [6]int{7, 8, 9, 10, 12, 13}

var (
	_ [unsafe.Offsetof(engine.InstStat{}.Sectors) - unsafe.Offsetof(engine.InstStat{}.Lanes) - 20]struct{}
	_ [20 - (unsafe.Offsetof(engine.InstStat{}.Sectors) - unsafe.Offsetof(engine.InstStat{}.Lanes))]struct{}
	_ [unsafe.Offsetof(engine.InstStat{}.Lanes) % 8]struct{} // the 24 bytes as three aligned words
	_ [unsafe.Sizeof(engine.InstStat{}) % 8]struct{}
)

// constCountRows is how many of the k rows from row n of b (row i's counts,
// Lanes to Sectors, at counts + i*stride) keep every count column constant
// on its progression: the rows putStat would leave unstored, column by
// column, found in one pass of three word compares a row. 0 unless each
// column is constant (step 0) and the rows lie past the batch's first two,
// which set the progressions.
func constCountRows(b *batch, n, k int, counts unsafe.Pointer, stride uintptr) int {
	if n < 2 || !littleEndian {
		return 0
	}
	for _, ci := range countCols {
		if c := &b.cols[ci]; !c.konst || c.kstep != 0 || c.kval > math.MaxUint32 {
			return 0
		}
	}
	// The six values as they lie in memory, two to a word.
	pair := func(lo, hi int) uint64 { return b.cols[countCols[lo]].kval | b.cols[countCols[hi]].kval<<32 }
	w0, w1, w2 := pair(0, 1), pair(2, 3), pair(4, 5)
	i := 0
	for ; i < k; i++ {
		row := (*[3]uint64)(unsafe.Add(counts, uintptr(i)*stride))
		if row[0] != w0 || row[1] != w1 || row[2] != w2 {
			break
		}
	}
	return i
}

// littleEndian: this machine's, on which constCountRows reads two uint32
// fields as one word.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// putInstructionCols is putInstructions of the rows of c, each column
// read where it lies.
func (w *Writer) putInstructionCols(t *table, c instCols) (int, error) {
	b, n := t.b, t.b.rows
	if c.len() == 0 {
		return 0, nil
	}
	k, err := w.putStatics(t, unsafe.Pointer(unsafe.SliceData(c.static)), unsafe.Sizeof(c.static[0]), c.len(),
		func(i int) uint64 { return c.seq[i] },
		func(a *opAgg, from, to int) { a.addRunCols(c.rows(from, to)) })
	if err != nil {
		return 0, err
	}
	putStatCol(b, &b.cols[0], n, c.seq[:k])
	putStatCol(b, &b.cols[5], n, c.group[:k])
	putStatCol(b, &b.cols[6], n, c.warp[:k])
	putStatCol(b, &b.cols[7], n, c.lanes[:k])
	putStatCol(b, &b.cols[8], n, c.addrs[:k])
	putStatCol(b, &b.cols[9], n, c.maxc[:k])
	putStatCol(b, &b.cols[10], n, c.faults[:k])
	putStatCol(b, &b.cols[12], n, c.casFailed[:k])
	putStatCol(b, &b.cols[13], n, c.sectors[:k])
	return k, nil
}

// putStatics is putInstructions' pass over the rows' Statics, k of them,
// row i's at statics + i*stride: it writes their keys (dialect, op, type,
// space and text) into t's batch, adds the rows to the ops totals (run,
// a run of rows of one Static at a time), and returns how many rows fit
// the batch's text bytes (see maxBatchStringBytes). seq is row i's seq,
// for an error.
func (w *Writer) putStatics(t *table, statics unsafe.Pointer, stride uintptr, k int,
	seq func(i int) uint64, run func(a *opAgg, from, to int)) (int, error) {
	b, n := t.b, t.b.rows
	var (
		// nil while the column has no room: on its progression since the
		// batch began (batch.grow), until keep gives it room.
		key  = rowsOf[int32](b.key, n, k)
		cKey = b.key
		// A hot instruction's rows repeat the previous row's Static: then
		// neither the memo nor its key need looking up, and its rows go
		// into the ops totals as one run (from).
		last *trace.Static
		m    *staticMemo
		from int
	)
	for i := range k {
		s := *(**trace.Static)(unsafe.Add(statics, uintptr(i)*stride))
		if s != last || m == nil {
			if s == nil {
				return 0, errNoStaticSeq(seq(i))
			}
			if m != nil && m.agg != nil {
				run(m.agg, from, i)
			}
			from = i
			last, m = s, w.memo(s)
			if m.gen != t.gen {
				w.keyStatic(t, m, s)
			}
			// Rows between two changes of Static share a key: only the
			// first of each is compared with the batch's first row's.
			if n+i > 0 && m.key != b.firstKey() {
				b.keysVary = true
			}
		}
		r := n + i
		// The test is spelled out: a function around it calls keep, so
		// it is not inlined.
		if v := uint64(m.key); !cKey.on(r, v) && (!cKey.konst || !b.keep(cKey, r, v)) {
			if key == nil {
				key = rowsOf[int32](cKey, n, k)
			}
			key[i] = m.key
		}
		if b.textBytes += m.textLen; b.textBytes >= maxBatchStringBytes {
			k = i + 1 // cut the batch short: see maxBatchStringBytes
			break
		}
	}
	if m != nil && m.agg != nil {
		run(m.agg, from, k)
	}
	return k, nil
}

// putStat writes k values of type T, the i-th at base + i*stride (a
// field of rows, or a column), into column c as rows [n, n+k) of b: each
// row past the first two of the batch either on the column's progression
// (konst), and then not stored, or, from the first that is not
// (batch.keep), stored. It is the rule of batch.keep, a column at a time.
func putStat[T uint64 | int64 | uint32](b *batch, c *colBuf, n, k int, base unsafe.Pointer, stride uintptr) {
	if k == 0 {
		return
	}
	i := 0
	if c.konst {
		// Rows 0 and 1 of the batch set the progression.
		for ; i < k && n+i < 2; i++ {
			b.keep(c, n+i, uint64(*(*T)(unsafe.Add(base, uintptr(i)*stride))))
		}
		if i == k {
			return
		}
		want, step := c.at(n+i), c.kstep
		for ; i < k; i++ {
			if uint64(*(*T)(unsafe.Add(base, uintptr(i)*stride))) != want {
				break
			}
			want += step
		}
		if i == k {
			return
		}
		b.fillRows(c, n+i) // off the progression: stored from here on
	}
	dst := rowsOf[T](c, n, k)
	for ; i < k; i++ {
		dst[i] = *(*T)(unsafe.Add(base, uintptr(i)*stride))
	}
}

// putStatCol is putStat of the column vs: off the progression, a copy.
func putStatCol[T uint64 | int64 | uint32](b *batch, c *colBuf, n int, vs []T) {
	k := len(vs)
	if k == 0 {
		return
	}
	i := 0
	if c.konst {
		for ; i < k && n+i < 2; i++ {
			b.keep(c, n+i, uint64(vs[i]))
		}
		if i == k {
			return
		}
		want, step := c.at(n+i), c.kstep
		for ; i < k; i++ {
			if uint64(vs[i]) != want {
				break
			}
			want += step
		}
		if i == k {
			return
		}
		b.fillRows(c, n+i)
	}
	copy(rowsOf[T](c, n, k)[i:], vs[i:])
}

// keyStatic gives s a key in t's batch, its strings looked up in (or
// added to) the batch's dictionaries, into m.
func (w *Writer) keyStatic(t *table, m *staticMemo, s *trace.Static) {
	idx := [...]int32{t.str(1, s.Dialect.String()), t.str(2, s.Op.String()),
		t.str(3, s.Type.String()), t.space(w, 4, s.Space), t.str(11, s.Text)}
	m.key, m.gen = t.b.addKey(idx[:]), t.gen
}

// Races appends rows to the races table (-races), in the order given.
func (w *Writer) Races(rows []engine.RaceRow) error {
	return addRows(w, tRaces, rows, func(t *table, b *batch, n int, rows []engine.RaceRow) {
		for i := range rows {
			r := &rows[i]
			t.putWord(w, b, n+i, r.Space, r.Group, r.Addr)
			b.cols[3].idx()[n+i] = t.str(3, r.Rule)
			for j, a := range [2]*engine.RaceAccess{&r.A, &r.B} {
				c := 4 + 7*j
				b.cols[c].u64()[n+i] = a.Seq
				b.cols[c+1].idx()[n+i] = t.str(c+1, a.Dialect)
				b.cols[c+2].idx()[n+i] = t.str(c+2, a.Text)
				b.cols[c+3].i64()[n+i] = a.Group
				b.cols[c+4].i64()[n+i] = a.Warp
				b.cols[c+5].u32()[n+i] = a.Lane
				b.cols[c+6].idx()[n+i] = t.str(c+6, a.Scope)
			}
		}
	})
}

// putWord writes a row's key, (space, group, addr), into columns 0-2: the
// first columns of the races and orders tables.
func (t *table) putWord(w *Writer, b *batch, row int, sp trace.Space, group int64, addr uint64) {
	b.cols[0].idx()[row] = t.space(w, 0, sp)
	b.cols[1].i64()[row] = group
	b.cols[2].u64()[row] = addr
}

// WantsRaces reports whether the races table is selected.
func (w *Writer) WantsRaces() bool { return w.tables[tRaces] != nil }

// WantsOrders reports whether the orders table is selected.
func (w *Writer) WantsOrders() bool { return w.tables[tOrders] != nil }

// Orders appends rows to the orders table (-explore-orders), in the order
// given: sorted like memory, then by order.
func (w *Writer) Orders(rows []engine.OrderWitness) error {
	return addRows(w, tOrders, rows, func(t *table, b *batch, n int, rows []engine.OrderWitness) {
		for i := range rows {
			r := &rows[i]
			t.putWord(w, b, n+i, r.Space, r.Group, r.Addr)
			b.cols[3].idx()[n+i] = t.str(3, r.Order)
			b.cols[4].u32()[n+i] = r.Value
		}
	})
}

// Memory appends rows to the memory table, in the order given.
func (w *Writer) Memory(ws []engine.Word) error {
	if err := w.pastTrace(); err != nil {
		return err
	}
	return addRows(w, tMemory, ws, func(t *table, b *batch, n int, ws []engine.Word) {
		for _, c := range [...]*colBuf{&b.cols[0], &b.cols[1]} {
			if c.konst { // MemoryPage's rows before these (putConst)
				b.fillRows(c, n)
			}
		}
		k := len(ws)
		space, group := b.cols[0].idx()[n:n+k], b.cols[1].i64()[n:n+k]
		addr, value := b.cols[2].u64()[n:n+k], b.cols[3].u32()[n:n+k]
		for i := range ws {
			m := &ws[i]
			space[i] = t.space(w, 0, m.Space)
			group[i] = m.Group
			addr[i] = m.Addr
			value[i] = m.Value
		}
	})
}

// MemoryPage appends the rows of one page of final memory
// (engine.CapMemoryPages): its columns filled from the page's bitmap and
// words, with no row in between.
func (w *Writer) MemoryPage(p *engine.WordPage) error {
	if err := w.pastTrace(); err != nil {
		return err
	}
	t, err := w.open(tMemory)
	if t == nil {
		return err
	}
	left := p.Rows()
	gi, m := 0, p.Written[0] // the next row: the lowest bit of m, in bitmap word gi
	for left > 0 {
		k := w.chunk(t, left)
		b, n := t.b, t.b.rows
		sp := t.space(w, 0, p.Space) // after chunk: a new batch has a new dictionary
		b.putConst(&b.cols[0], uint64(sp), n, k)
		b.putConst(&b.cols[1], uint64(p.Group), n, k)
		addr, value := b.cols[2].u64()[n:n+k], b.cols[3].u32()[n:n+k]
		for i := range addr {
			for m == 0 {
				gi++
				m = p.Written[gi]
			}
			wi := gi*64 + bits.TrailingZeros64(m)
			m &= m - 1
			addr[i], value[i] = p.Base+uint64(wi)*4, p.Words[wi]
		}
		if err := w.added(t, k); err != nil {
			return w.fail(err)
		}
		left -= k
	}
	return nil
}

// memoryCols appends a merge's chunk of memory rows (memCols): each run
// of one space and group as MemoryPage puts a page's, those two columns
// held constant (putConst) and addr and value copied, for the bytes
// Memory gives of the same rows.
func (w *Writer) memoryCols(m *memCols) error {
	if err := w.pastTrace(); err != nil {
		return err
	}
	t, err := w.open(tMemory)
	if t == nil {
		return err
	}
	o := 0
	for _, key := range m.keys {
		for left := key.rows; left > 0; {
			k := w.chunk(t, left)
			b, n := t.b, t.b.rows
			sp := t.space(w, 0, key.space) // after chunk, as MemoryPage's
			b.putConst(&b.cols[0], uint64(sp), n, k)
			b.putConst(&b.cols[1], uint64(key.group), n, k)
			copy(b.cols[2].u64()[n:n+k], m.addr[o:o+k])
			copy(b.cols[3].u32()[n:n+k], m.value[o:o+k])
			if err := w.added(t, k); err != nil {
				return w.fail(err)
			}
			o += k
			left -= k
		}
	}
	return nil
}

// addRows appends rows to table id (nothing when it is not selected),
// a batch's room at a time: put writes rows, given, at row n of batch b.
func addRows[T any](w *Writer, id tableID, rows []T, put func(t *table, b *batch, n int, rows []T)) error {
	t, err := w.open(id)
	if t == nil {
		return err
	}
	for len(rows) > 0 {
		k := w.chunk(t, len(rows))
		put(t, t.b, t.b.rows, rows[:k])
		rows = rows[k:]
		if err := w.added(t, k); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// Addresses appends the addresses table's rows.
func (w *Writer) Addresses(rows []engine.AddressStat) error {
	if err := w.pastTrace(); err != nil {
		return err
	}
	return addRows(w, tAddresses, rows, func(t *table, b *batch, n int, rows []engine.AddressStat) {
		k := len(rows)
		space, group := b.cols[0].idx()[n:n+k], b.cols[1].i64()[n:n+k]
		addr, accesses := b.cols[2].u64()[n:n+k], b.cols[3].u64()[n:n+k]
		warps, groups := b.cols[4].u64()[n:n+k], b.cols[5].u64()[n:n+k]
		sensitive, exact := b.cols[6].bools()[n:n+k], b.cols[7].bools()[n:n+k]
		for i := range rows {
			r := &rows[i]
			space[i] = t.space(w, 0, r.Space)
			group[i] = r.Group
			addr[i] = r.Addr
			accesses[i] = r.Accesses
			warps[i] = r.Warps
			groups[i] = r.Groups
			sensitive[i] = r.OrderSensitive
			exact[i] = r.Exact
		}
	})
}

// writeOps appends the ops totals to the ops table, sorted by
// (dialect, op, type, space) as strings.
func (w *Writer) writeOps(t *table) error {
	type row struct {
		dialect, op, typ, space string
		*opAgg
	}
	rows := make([]row, 0, len(w.ops))
	for k, a := range w.ops {
		rows = append(rows, row{k.dialect.String(), k.op.String(), k.typ.String(), w.spaceName(k.space), a})
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(strings.Compare(a.dialect, b.dialect), strings.Compare(a.op, b.op),
			strings.Compare(a.typ, b.typ), strings.Compare(a.space, b.space))
	})
	for _, r := range rows {
		w.chunk(t, 1)
		b, n := t.b, t.b.rows
		b.cols[0].idx()[n] = t.str(0, r.dialect)
		b.cols[1].idx()[n] = t.str(1, r.op)
		b.cols[2].idx()[n] = t.str(2, r.typ)
		b.cols[3].idx()[n] = t.str(3, r.space)
		b.cols[4].u64()[n] = r.instructions
		b.cols[5].u64()[n] = r.lanes
		b.cols[6].u64()[n] = r.faults
		b.cols[7].u32()[n] = r.maxConflict
		b.cols[8].u64()[n] = r.conflictSum
		b.cols[9].u64()[n] = r.sectors
		if err := w.added(t, 1); err != nil {
			return err
		}
	}
	return nil
}

// Commit writes the remaining rows and the ops table, closes every file
// and renames each to its final name. The table files of an earlier run
// are replaced, all of them: those of tables or formats this writer does
// not write are removed, so that the directory holds one run's tables
// (see the package documentation). If Commit fails, the directory holds
// the earlier run's files as they were and no file of this writer, except
// in the one case invariant 2 describes. Then it releases the directory's
// lock. Commit on a writer that was committed, aborted or failed returns
// an error wrapping [ErrClosed].
func (w *Writer) Commit() error {
	if err := w.check(); err != nil {
		return err
	}
	if err := w.commit(); err != nil {
		return w.fail(err)
	}
	w.state = stateCommitted
	w.pool.release()
	// The tables are in place; failing to close the lock file changes
	// nothing about them.
	_ = w.unlock()
	return nil
}

func (w *Writer) commit() error {
	if err := w.endTrace(); err != nil {
		return err
	}
	// The other tables' last batches are written and their files
	// finished (footer, fsync) while endTrace's goroutine may still
	// finish the trace's (a merge's ends its trace just before Commit):
	// the files' syncs side by side, not one after the other.
	var later []*table
	var laterOuts []*output
	for id, t := range w.tables {
		if t == nil || slices.Contains(traceTables[:], tableID(id)) {
			continue
		}
		if t.b != nil {
			if err := w.flush(t); err != nil {
				return err
			}
		}
		later = append(later, t)
		laterOuts = append(laterOuts, t.outs...)
	}
	for _, t := range later {
		if err := t.pipe.wait(); err != nil {
			return err
		}
	}
	if err := finishAll(laterOuts); err != nil {
		return err
	}
	if err := w.waitTrace(); err != nil {
		return err
	}
	var outs []*output
	for _, t := range w.tables {
		if t == nil {
			continue
		}
		if err := t.pipe.wait(); err != nil {
			return err
		}
		outs = append(outs, t.outs...)
	}
	if err := finishAll(outs); err != nil { // the trace's, if endTrace's goroutine did not
		return err
	}
	if err := w.publishAll(outs); err != nil {
		return err
	}
	for i, t := range w.tables {
		if t != nil {
			t.release()
			w.tables[i] = nil
		}
	}
	w.ops, w.statics = nil, nil
	clear(w.recent[:])
	return nil
}

// traceTables are the tables that only the trace's instructions fill
// (the ops table from the instructions' totals): complete once the engine
// is past the trace.
var traceTables = [...]tableID{tResults, tInstructions, tOps}

// endTrace is called, once, when the engine is past the trace: at the
// first call of a table that comes after it (addresses, memory; the
// engine.Sink contract) or at Commit. The tables the trace alone fills
// are complete then: it writes the ops table's rows, hands each such
// table's last batch to its pipeline, and leaves the rest to a goroutine
// of their own, which waits for the pipelines, returns the tables'
// batches to the allocator (the memory table, which comes next, takes
// their buffers rather than fresh memory) and finishes their files
// (footer, fsync). Their last row groups and fsyncs so overlap the
// memory table, which used to wait for them at Commit: the tail of a
// replay, where the memory table is the only work left.
func (w *Writer) endTrace() error {
	if w.traceDone || w.state != stateOpen {
		return nil
	}
	w.traceDone = true
	if t := w.tables[tInstructions]; t != nil && w.opt.seqRowGroups > 0 {
		if w.batchOps != nil && t.b.rows > 0 {
			w.foldBatchOps() // the last batch's, handed over below
		}
		if err := w.recordRowGroups(t); err != nil {
			return w.fail(err)
		}
	}
	if t := w.tables[tOps]; t != nil {
		if err := w.writeOps(t); err != nil {
			return w.fail(err)
		}
	}
	var tabs []*table
	for _, id := range traceTables {
		t := w.tables[id]
		if t == nil {
			continue
		}
		if err := t.pipe.error(); err != nil {
			return w.fail(err)
		}
		if t.b.rows > 0 {
			t.pipe.submit(t.b)
		} else {
			t.b.release()
		}
		t.b = nil
		t.pipe.close()
		// The batches already written go back to the allocator now,
		// not once the table ends: the memory table's first batches,
		// allocated next, take their memory, paged in, rather than
		// fresh.
		t.releaseFree()
		tabs = append(tabs, t)
	}
	if len(tabs) == 0 {
		return nil
	}
	w.traceEnded = make(chan error, 1)
	go func() {
		var err error
		var outs []*output
		for _, t := range tabs {
			<-t.pipe.done
			if perr := t.pipe.error(); perr != nil && err == nil {
				err = perr
			}
			t.releaseFree()
			outs = append(outs, t.outs...)
		}
		if err == nil && !tabs[0].pipe.stop.Load() {
			err = finishAll(outs)
		}
		w.traceEnded <- err
	}()
	return nil
}

// pastTrace is endTrace, for the first rows of a table after the trace,
// unless the writer takes its tables' rows in any order (anyOrder).
func (w *Writer) pastTrace() error {
	if w.anyOrder {
		return nil
	}
	return w.endTrace()
}

// waitTrace waits for endTrace's goroutine, if any, once, and returns its
// error.
func (w *Writer) waitTrace() error {
	if w.traceEnded == nil {
		return nil
	}
	err := <-w.traceEnded
	w.traceEnded = nil
	return err
}

// errAfterTrace is the error of a trace table's rows given after a table
// that comes after the trace.
func errAfterTrace(table string) error {
	return fmt.Errorf("columnar: %s rows after the addresses or memory table: the engine.Sink order is the trace's tables, then addresses, then memory", table)
}

// finishAll finishes outs at once, each on a goroutine and a thread of
// its own (outdir.SyncThreads: on two processors a replay's three
// fsyncs ran one after another on one thread): each waits on its file's
// fsync, and the file system takes them together rather than one after
// another (a lean replay writes three, each fsync a wait on the disk).
// It returns the first
// error in outs' order; the outputs that failed are discarded with the
// rest when the commit fails.
func finishAll(outs []*output) error {
	defer outdir.SyncThreads(len(outs))()
	errs := make([]error, len(outs))
	var wg sync.WaitGroup
	for i, o := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = o.finish()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Abort discards everything: it closes and removes every temporary file,
// leaves files of earlier runs as they were, and releases the directory's
// lock. Abort on a writer that was aborted or failed does nothing and
// returns nil; after a successful Commit it returns an error wrapping
// [ErrClosed] and changes nothing.
func (w *Writer) Abort() error {
	switch w.state {
	case stateOpen:
		w.state = stateAborted
		return w.cleanup()
	case stateCommitted:
		return w.check()
	}
	return nil
}
