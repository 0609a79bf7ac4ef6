package columnar

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/gpureplay/replay/engine"
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

// table is one output table: its row builder and the files it goes to.
type table struct {
	id   tableID
	rb   *array.RecordBuilder
	rows int // rows in rb, not yet written
	outs []*output
}

// Writer is an [engine.Sink] that writes the output tables of OUTPUT.md
// into a directory. It is not safe for concurrent use. See the package
// documentation for its invariants.
type Writer struct {
	dir    string
	opt    options
	tables [numTables]*table // nil for tables not selected, and after cleanup
	ops    map[opKey]*opAgg
	spaces map[trace.Space]string
	state  state
	err    error                               // why the writer failed
	lock   *dirLock                            // held from New until Commit, Abort or failure
	rename func(oldpath, newpath string) error // os.Rename; tests inject failures and crashes
	remove func(name string) error             // os.Remove, likewise
}

// opKey is one row of the ops table.
type opKey struct {
	dialect trace.Dialect
	op      trace.Op
	typ     trace.Type
	space   trace.Space
}

type opAgg struct {
	instructions, lanes, faults, conflictSum uint64
	maxConflict                              uint32
}

// New creates dir if needed, takes its lock, and opens a temporary file in
// it for every selected table and format. Nothing is visible under a
// table's final name until [Writer.Commit].
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
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("columnar: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, opt: o, ops: make(map[opKey]*opAgg), spaces: make(map[trace.Space]string),
		lock: lock, rename: os.Rename, remove: os.Remove}
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
		spec := specs[id]
		t := &table{id: id, rb: array.NewRecordBuilder(o.mem, spec.schema)}
		w.tables[id] = t
		for _, f := range []Format{FormatParquet, FormatArrow} {
			if o.format&f == 0 {
				continue
			}
			out, err := openOutput(dir, spec.name, f, spec.schema, o.batchRows, o.mem)
			if err != nil {
				return nil, w.fail(err)
			}
			t.outs = append(t.outs, out)
		}
	}
	return w, nil
}

// check returns nil if the writer is open, and why not otherwise.
func (w *Writer) check() error {
	switch w.state {
	case stateOpen:
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

// cleanup discards every temporary file, releases every builder and then
// the directory's lock.
func (w *Writer) cleanup() error {
	var errs []error
	for i, t := range w.tables {
		if t == nil {
			continue
		}
		for _, o := range t.outs {
			errs = append(errs, o.discard())
		}
		t.rb.Release()
		w.tables[i] = nil
	}
	w.ops = nil
	errs = append(errs, w.unlock())
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

// added counts one appended row and writes the batch out when it is full.
func (w *Writer) added(t *table) error {
	t.rows++
	if t.rows >= w.opt.batchRows {
		return w.flush(t)
	}
	return nil
}

// flush writes the buffered rows of t as one record batch to each of its
// files and releases it.
func (w *Writer) flush(t *table) error {
	if t.rows == 0 {
		return nil
	}
	full := t.rows >= w.opt.batchRows
	rec := t.rb.NewRecordBatch()
	defer rec.Release()
	t.rows = 0
	for _, o := range t.outs {
		if err := o.write(rec); err != nil {
			return err
		}
	}
	if full {
		t.rb.Reserve(w.opt.batchRows) // the next batch will most likely be full too
	}
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

// WantsResults reports whether the results table is being written; the
// engine skips building per-lane rows nobody reads (engine.ResultsWanter).
func (w *Writer) WantsResults() bool { return w.tables[tResults] != nil }

// Results appends rows to the results table.
func (w *Writer) Results(rs []engine.Result) error {
	t, err := w.open(tResults)
	if t == nil {
		return err
	}
	f := t.rb.Fields()
	var (
		seq     = f[0].(*array.Uint64Builder)
		lane    = f[1].(*array.Uint32Builder)
		elem    = f[2].(*array.Uint32Builder)
		addr    = f[3].(*array.Uint64Builder)
		value   = f[4].(*array.Uint64Builder)
		valueHi = f[5].(*array.Uint64Builder)
		fault   = f[6].(*array.StringBuilder)
	)
	for i := range rs {
		r := &rs[i]
		if r.Fault > engine.FaultOutOfBounds {
			return w.fail(fmt.Errorf("columnar: results: seq %d lane %d: unknown fault %d", r.Seq, r.Lane, r.Fault))
		}
		seq.Append(r.Seq)
		lane.Append(r.Lane)
		elem.Append(r.Elem)
		addr.Append(r.Addr)
		value.Append(r.Value)
		valueHi.Append(r.ValueHi)
		fault.Append(r.Fault.String())
		if err := w.added(t); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// Instructions appends rows to the instructions table and adds them to
// the ops totals.
func (w *Writer) Instructions(st []engine.InstStat) error {
	if err := w.check(); err != nil {
		return err
	}
	for i := range st {
		if st[i].Static == nil {
			return w.fail(fmt.Errorf("columnar: instructions: seq %d has no Static", st[i].Seq))
		}
	}
	if w.tables[tOps] != nil {
		for i := range st {
			s := &st[i]
			k := opKey{s.Static.Dialect, s.Static.Op, s.Static.Type, s.Static.Space}
			a := w.ops[k]
			if a == nil {
				a = new(opAgg)
				w.ops[k] = a
			}
			a.instructions++
			a.lanes += uint64(s.Lanes)
			a.faults += uint64(s.Faults)
			a.conflictSum += uint64(s.MaxConflict)
			a.maxConflict = max(a.maxConflict, s.MaxConflict)
		}
	}
	t := w.tables[tInstructions]
	if t == nil {
		return nil
	}
	f := t.rb.Fields()
	var (
		seq         = f[0].(*array.Uint64Builder)
		dialect     = f[1].(*array.StringBuilder)
		op          = f[2].(*array.StringBuilder)
		typ         = f[3].(*array.StringBuilder)
		space       = f[4].(*array.StringBuilder)
		group       = f[5].(*array.Int64Builder)
		warp        = f[6].(*array.Int64Builder)
		lanes       = f[7].(*array.Uint32Builder)
		addresses   = f[8].(*array.Uint32Builder)
		maxConflict = f[9].(*array.Uint32Builder)
		faults      = f[10].(*array.Uint32Builder)
		text        = f[11].(*array.StringBuilder)
	)
	for i := range st {
		s := &st[i]
		seq.Append(s.Seq)
		dialect.Append(s.Static.Dialect.String())
		op.Append(s.Static.Op.String())
		typ.Append(s.Static.Type.String())
		space.Append(w.spaceName(s.Static.Space))
		group.Append(s.Group)
		warp.Append(s.Warp)
		lanes.Append(s.Lanes)
		addresses.Append(s.Addresses)
		maxConflict.Append(s.MaxConflict)
		faults.Append(s.Faults)
		text.Append(s.Static.Text)
		err := w.added(t)
		if err == nil && text.DataLen() >= maxBatchStringBytes {
			err = w.flush(t)
		}
		if err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// Memory appends rows to the memory table, in the order given.
func (w *Writer) Memory(ws []engine.Word) error {
	t, err := w.open(tMemory)
	if t == nil {
		return err
	}
	f := t.rb.Fields()
	var (
		space = f[0].(*array.StringBuilder)
		group = f[1].(*array.Int64Builder)
		addr  = f[2].(*array.Uint64Builder)
		value = f[3].(*array.Uint32Builder)
	)
	for i := range ws {
		m := &ws[i]
		space.Append(w.spaceName(m.Space))
		group.Append(m.Group)
		addr.Append(m.Addr)
		value.Append(m.Value)
		if err := w.added(t); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// WantsAddresses reports whether the addresses table is being written
// (engine.AddressSink): the engine tracks addresses only then.
func (w *Writer) WantsAddresses() bool { return w.tables[tAddresses] != nil }

// Addresses appends the addresses table's rows.
func (w *Writer) Addresses(rows []engine.AddressStat) error {
	t, err := w.open(tAddresses)
	if t == nil {
		return err
	}
	f := t.rb.Fields()
	var (
		space     = f[0].(*array.StringBuilder)
		group     = f[1].(*array.Int64Builder)
		addr      = f[2].(*array.Uint64Builder)
		accesses  = f[3].(*array.Uint64Builder)
		warps     = f[4].(*array.Uint64Builder)
		groups    = f[5].(*array.Uint64Builder)
		sensitive = f[6].(*array.BooleanBuilder)
		exact     = f[7].(*array.BooleanBuilder)
	)
	for i := range rows {
		r := &rows[i]
		space.Append(w.spaceName(r.Space))
		group.Append(r.Group)
		addr.Append(r.Addr)
		accesses.Append(r.Accesses)
		warps.Append(r.Warps)
		groups.Append(r.Groups)
		sensitive.Append(r.OrderSensitive)
		exact.Append(r.Exact)
		if err := w.added(t); err != nil {
			return w.fail(err)
		}
	}
	return nil
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
	f := t.rb.Fields()
	for _, r := range rows {
		f[0].(*array.StringBuilder).Append(r.dialect)
		f[1].(*array.StringBuilder).Append(r.op)
		f[2].(*array.StringBuilder).Append(r.typ)
		f[3].(*array.StringBuilder).Append(r.space)
		f[4].(*array.Uint64Builder).Append(r.instructions)
		f[5].(*array.Uint64Builder).Append(r.lanes)
		f[6].(*array.Uint64Builder).Append(r.faults)
		f[7].(*array.Uint32Builder).Append(r.maxConflict)
		f[8].(*array.Uint64Builder).Append(r.conflictSum)
		if err := w.added(t); err != nil {
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
	// The tables are in place; failing to close the lock file changes
	// nothing about them.
	_ = w.unlock()
	return nil
}

func (w *Writer) commit() error {
	if t := w.tables[tOps]; t != nil {
		if err := w.writeOps(t); err != nil {
			return err
		}
	}
	var outs []*output
	for _, t := range w.tables {
		if t == nil {
			continue
		}
		if err := w.flush(t); err != nil {
			return err
		}
		outs = append(outs, t.outs...)
	}
	for _, o := range outs {
		if err := o.finish(); err != nil {
			return err
		}
	}
	if err := w.publishAll(outs); err != nil {
		return err
	}
	for i, t := range w.tables {
		if t != nil {
			t.rb.Release()
			w.tables[i] = nil
		}
	}
	w.ops = nil
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
