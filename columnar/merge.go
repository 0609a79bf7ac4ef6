package columnar

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// A partitioned replay (`replay TRACE -partition i/n -o DIR`) writes each
// partition's tables to DIR/part=i. Merge turns the n partition directories
// back into the tables one unpartitioned replay writes:
//
//   - memory, results and addresses: every row is in exactly one partition
//     (a page, hence an address, is in one), and each partition's rows are
//     sorted as the whole table is; Merge interleaves them in that order
//     (a k-way merge, reading each file once, in row groups).
//   - instructions: an instruction's row is in one or more partitions,
//     each with the statistics of its own lanes (every partition, for
//     replay TRACE -partition; for a split trace, the partition replay
//     split chose, with the addresses, largest conflict and sectors of all
//     its lanes, and those with faults or failed compare-and-swaps of
//     their own); Merge combines them (docs/OUTPUT.md): lanes is the same
//     in each, addresses, faults, cas_failed and sectors add up,
//     max_conflict is the largest.
//   - ops: recomputed from the combined instructions, exactly as a replay
//     computes it (a sum of per-instruction max_conflict cannot be
//     combined from partitions' sums), so the partitions must have the
//     instructions table.
//
// Every table goes through a Writer, the one a replay writes with, so the
// merged files have the same schemas, encodings and row order as one
// process's.

// partDir is one partition directory and what its files say it is.
type partDir struct {
	dir          string
	index, count int
	trace        string
	options      string             // MetaOptions, "" when the files have none
	run          *RunOptions        // options parsed; nil when the files have none
	files        map[tableID]string // the file Merge reads per table: Parquet, else Arrow
}

// MergeError is why Merge refused its partitions; it wrote nothing.
type MergeError struct{ Msg string }

func (e *MergeError) Error() string { return "merge: " + e.Msg }

func mergeErr(format string, args ...any) error {
	return &MergeError{Msg: fmt.Sprintf(format, args...)}
}

// PartitionDirs expands Merge's arguments: a directory holding part=*
// directories stands for them, in index order; any other directory is a
// partition directory itself.
func PartitionDirs(args []string) ([]string, error) {
	var dirs []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, mergeErr("%v", err)
		}
		if !st.IsDir() {
			return nil, mergeErr("%s is not a directory", a)
		}
		sub, err := filepath.Glob(filepath.Join(a, "part=*"))
		if err != nil {
			return nil, mergeErr("%v", err)
		}
		var parts []string
		for _, s := range sub {
			if st, err := os.Stat(s); err == nil && st.IsDir() {
				parts = append(parts, s)
			}
		}
		if len(parts) == 0 {
			dirs = append(dirs, a)
			continue
		}
		slices.SortFunc(parts, func(x, y string) int {
			xi, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(x), "part="))
			yi, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(y), "part="))
			return cmp.Or(cmp.Compare(xi, yi), strings.Compare(x, y))
		})
		dirs = append(dirs, parts...)
	}
	return dirs, nil
}

// fileMeta reads the replay metadata of a table file: its partition,
// trace and run options ("" for a key it lacks).
func fileMeta(path string) (part, trc, run string, err error) {
	kv, err := FileMetadata(path)
	if err != nil {
		return "", "", "", err
	}
	return kv[MetaPartition], kv[MetaTrace], kv[MetaOptions], nil
}

// FileMetadata reads the key-value metadata of a table file: a Parquet
// file's footer (without ARROW:schema), an Arrow IPC file's schema
// metadata.
func FileMetadata(path string) (map[string]string, error) {
	if strings.HasSuffix(path, extParquet) {
		pf, err := openParquet(path)
		if err != nil {
			return nil, err
		}
		defer pf.close()
		m := map[string]string{}
		for _, kv := range pf.kv {
			if kv[0] != "ARROW:schema" {
				m[kv[0]] = kv[1]
			}
		}
		return m, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	md := r.Schema().Metadata()
	m := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		m[k] = md.Values()[i]
	}
	return m, nil
}

// ParsePartition parses "i/n" (0 <= i < n).
func ParsePartition(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("partition %q: want i/n with 0 <= i < n", s)
	}
	return i, n, nil
}

// readPartDir finds the table files of a partition directory and checks
// that they agree on which partition of which trace they hold.
func readPartDir(dir string) (*partDir, error) {
	p := &partDir{dir: dir, files: map[tableID]string{}}
	var first string
	for id := range numTables {
		name := specs[id].name
		path := ""
		for _, ext := range []string{extParquet, extArrow} {
			if _, err := os.Stat(filepath.Join(dir, name+ext)); err == nil {
				path = filepath.Join(dir, name+ext)
				break
			}
		}
		if path == "" {
			continue
		}
		part, trc, run, err := fileMeta(path)
		if err != nil {
			return nil, mergeErr("%v", err)
		}
		if part == "" {
			return nil, mergeErr("%s was not written by replay -partition (no %s metadata)", path, MetaPartition)
		}
		i, n, err := ParsePartition(part)
		if err != nil {
			return nil, mergeErr("%s: %v", path, err)
		}
		if first == "" {
			first, p.index, p.count, p.trace, p.options = path, i, n, trc, run
		} else if i != p.index || n != p.count || trc != p.trace {
			return nil, mergeErr("%s says partition %d/%d of %s, but %s says %d/%d of %s", path, i, n, trc, first, p.index, p.count, p.trace)
		} else if run != p.options {
			return nil, mergeErr("%s says it was replayed with %s, but %s says %s", path, run, first, p.options)
		}
		p.files[id] = path
	}
	if first == "" {
		return nil, mergeErr("%s holds no table files", dir)
	}
	if p.options != "" {
		r, err := ParseRunOptions(p.options)
		if err != nil {
			return nil, mergeErr("%s: %v", first, err)
		}
		p.run = &r
	}
	return p, nil
}

// checkParts checks that parts are the n partitions of one replay, each
// once, with the same tables.
func checkParts(parts []*partDir) error {
	if len(parts) == 0 {
		return mergeErr("no partition directories")
	}
	p0 := parts[0]
	for _, p := range parts[1:] {
		if p.trace != p0.trace {
			return mergeErr("%s is a partition of another trace (%s) than %s (%s)", p.dir, p.trace, p0.dir, p0.trace)
		}
		if p.count != p0.count {
			return mergeErr("%s is partition %d of %d, but %s is one of %d", p.dir, p.index, p.count, p0.dir, p0.count)
		}
		if !sameTables(p.files, p0.files) {
			return mergeErr("%s has the tables %s, %s has %s", p.dir, tableNames(p.files), p0.dir, tableNames(p0.files))
		}
		if err := sameOptions(p, p0); err != nil {
			return err
		}
	}
	seen := make([]*partDir, p0.count)
	for _, p := range parts {
		if q := seen[p.index]; q != nil {
			return mergeErr("partition %d of %d is there twice: %s and %s", p.index, p.count, q.dir, p.dir)
		}
		seen[p.index] = p
	}
	var missing []string
	for i, p := range seen {
		if p == nil {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return mergeErr("partition %s of %d missing (have %d of them)", strings.Join(missing, ", "), p0.count, len(parts))
	}
	if _, ok := p0.files[tOps]; ok {
		if _, ok := p0.files[tInstructions]; !ok {
			return mergeErr("the partitions have ops but not instructions: ops is recomputed from the instructions")
		}
	}
	return nil
}

// sameOptions checks that partitions p and q were replayed with the same
// options, but for their partition.
func sameOptions(p, q *partDir) error {
	switch {
	case p.run == nil && q.run == nil:
		return nil
	case p.run == nil || q.run == nil:
		return mergeErr("only one of %s and %s records its replay's options (%s metadata)", p.dir, q.dir, MetaOptions)
	}
	a, b := *p.run, *q.run
	a.Partition, b.Partition = "", ""
	if !reflect.DeepEqual(a, b) {
		return mergeErr("%s was replayed with other options (%s) than %s (%s)", p.dir, p.options, q.dir, q.options)
	}
	return nil
}

func sameTables(a, b map[tableID]string) bool {
	if len(a) != len(b) {
		return false
	}
	for id := range a {
		if _, ok := b[id]; !ok {
			return false
		}
	}
	return true
}

func tableNames(files map[tableID]string) string {
	var names []string
	for id := range numTables {
		if _, ok := files[id]; ok {
			names = append(names, specs[id].name)
		}
	}
	return strings.Join(names, ",")
}

// Merge reads the partition directories dirs (see PartitionDirs) of one
// partitioned replay and writes to out the tables one unpartitioned replay
// of the trace writes, in the formats opts give (WithFormat; the tables
// are those the partitions have). It refuses, before writing anything,
// partitions of different traces or counts or replayed with other
// options (MetaOptions, but for the partition), a missing or repeated
// partition, and files without partition metadata, with a *MergeError.
// The merged files record the partitions' options without the partition.
func Merge(dirs []string, out string, opts ...Option) error {
	var parts []*partDir
	for _, d := range dirs {
		p, err := readPartDir(d)
		if err != nil {
			return err
		}
		parts = append(parts, p)
	}
	if err := checkParts(parts); err != nil {
		return err
	}
	slices.SortFunc(parts, func(a, b *partDir) int { return cmp.Compare(a.index, b.index) })
	var tables []string
	for id := range numTables {
		if _, ok := parts[0].files[id]; ok {
			tables = append(tables, specs[id].name)
		}
	}
	opts = append(slices.Clip(opts), WithTables(tables...))
	if r := parts[0].run; r != nil {
		// The options of the whole replay the merged tables are.
		whole := *r
		whole.Partition = ""
		opts = append(opts, WithRunOptions(whole))
	}
	w, err := New(out, opts...)
	if err != nil {
		return err
	}
	if err := mergeInto(w, parts); err != nil {
		return errors.Join(err, w.Abort())
	}
	return w.Commit()
}

func mergeInto(w *Writer, parts []*partDir) error {
	if _, ok := parts[0].files[tInstructions]; ok {
		if err := mergeInstructions(w, parts); err != nil {
			return err
		}
	}
	if _, ok := parts[0].files[tResults]; ok {
		if err := mergeSorted(parts, tResults, w, newResultCursor); err != nil {
			return err
		}
	}
	if _, ok := parts[0].files[tMemory]; ok {
		if err := mergeSorted(parts, tMemory, w, newMemoryCursor); err != nil {
			return err
		}
	}
	if _, ok := parts[0].files[tAddresses]; ok {
		if err := mergeSorted(parts, tAddresses, w, newAddressCursor); err != nil {
			return err
		}
	}
	if _, ok := parts[0].files[tOrders]; ok {
		if err := mergeSorted(parts, tOrders, w, newOrdersCursor); err != nil {
			return err
		}
	}
	return nil
}

// tableReader reads a table file's rows, a record batch at a time.
type tableReader struct {
	path string
	next func() (arrow.RecordBatch, error) // io.EOF-like: nil, nil at the end
	stop func()
}

func openTable(path string) (*tableReader, error) {
	t := &tableReader{path: path}
	if strings.HasSuffix(path, extParquet) {
		pf, err := openParquet(path)
		if err != nil {
			return nil, err
		}
		sc, err := pf.schema()
		if err != nil {
			pf.close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rg := 0
		t.next = func() (arrow.RecordBatch, error) {
			for ; rg < len(pf.rgs); rg++ {
				rows := pf.rgs[rg].rows
				if rows == 0 {
					continue
				}
				cols := make([]arrow.Array, len(pf.leaves))
				for i := range cols {
					a, err := pf.readColumn(rg, i)
					if err != nil {
						return nil, err
					}
					cols[i] = a
				}
				rg++
				return array.NewRecordBatch(sc, cols, rows), nil
			}
			return nil, nil
		}
		t.stop = pf.close
		return t, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	i := 0
	t.next = func() (arrow.RecordBatch, error) {
		if i >= r.NumRecords() {
			return nil, nil
		}
		rec, err := r.RecordBatch(i)
		i++
		return rec, err
	}
	t.stop = func() { r.Close(); f.Close() }
	return t, nil
}

func (t *tableReader) close() { t.stop() }

// column returns the column of rec called name, as T.
func column[T arrow.Array](path string, rec arrow.RecordBatch, name string) (T, error) {
	var zero T
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return zero, fmt.Errorf("%s: no column %s", path, name)
	}
	c, ok := rec.Column(idx[0]).(T)
	if !ok {
		return zero, fmt.Errorf("%s: column %s is %s", path, name, rec.Column(idx[0]).DataType())
	}
	return c, nil
}

// cursor walks one partition's rows of one table in order.
type cursor interface {
	// advance moves to the next row; false at the end.
	advance() (bool, error)
	// less orders the current rows of two cursors by the table's key.
	less(other cursor) bool
	// emit hands the current row to the writer's buffer.
	emit(b *rowBuffer)
	close()
}

// rowCursor is what the cursors share: the reader, its record and row.
type rowCursor struct {
	t    *tableReader
	rec  arrow.RecordBatch
	row  int
	bind func(rec arrow.RecordBatch) error
}

func (c *rowCursor) advance() (bool, error) {
	c.row++
	for c.rec == nil || c.row >= int(c.rec.NumRows()) {
		rec, err := c.t.next()
		if err != nil {
			return false, fmt.Errorf("%s: %w", c.t.path, err)
		}
		if rec == nil {
			c.rec = nil
			return false, nil
		}
		c.rec, c.row = rec, 0
		if err := c.bind(rec); err != nil {
			return false, err
		}
	}
	return true, nil
}

func (c *rowCursor) close() { c.t.close() }

// spaceOf parses a space name, remembering the last.
type spaceMemo struct {
	name  string
	space trace.Space
}

func (m *spaceMemo) parse(path, s string) (trace.Space, error) {
	if s != m.name || m.name == "" {
		sp, ok := trace.ParseSpace(s)
		if !ok {
			return trace.Space{}, fmt.Errorf("%s: space %q", path, s)
		}
		m.name, m.space = strings.Clone(s), sp
	}
	return m.space, nil
}

// binder takes a record's columns by name, keeping the first error.
type binder struct {
	path string
	rec  arrow.RecordBatch
	err  error
}

func bindCol[T arrow.Array](b *binder, dst *T, name string) {
	if b.err == nil {
		*dst, b.err = column[T](b.path, b.rec, name)
	}
}

// wordRow is a cursor over a table sorted like memory, by (space, group,
// addr): memory, addresses and orders share its key columns, order and
// space parsing.
type wordRow struct {
	rowCursor
	space *array.String
	group *array.Int64
	addr  *array.Uint64
	memo  spaceMemo
}

func (c *wordRow) keyRow() *wordRow { return c }

// bindKey binds the key columns, then more (the table's other columns).
func (c *wordRow) bindKey(more func(b *binder)) {
	c.bind = func(rec arrow.RecordBatch) error {
		b := &binder{path: c.t.path, rec: rec}
		bindCol(b, &c.space, "space")
		bindCol(b, &c.group, "group")
		bindCol(b, &c.addr, "addr")
		more(b)
		return b.err
	}
}

func (c *wordRow) less(o cursor) bool {
	d := o.(interface{ keyRow() *wordRow }).keyRow()
	return wordLess(c.space, c.group, c.addr, c.row, d.space, d.group, d.addr, d.row)
}

// rowKey returns the current row's space (parsed), group and addr.
func (c *wordRow) rowKey() (trace.Space, int64, uint64, error) {
	sp, err := c.memo.parse(c.t.path, c.space.Value(c.row))
	return sp, c.group.Value(c.row), c.addr.Value(c.row), err
}

type memoryCursor struct {
	wordRow
	value *array.Uint32
}

func newMemoryCursor(t *tableReader) cursor {
	c := &memoryCursor{wordRow: wordRow{rowCursor: rowCursor{t: t, row: -1}}}
	c.bindKey(func(b *binder) { bindCol(b, &c.value, "value") })
	return c
}

func (c *memoryCursor) emit(b *rowBuffer) {
	sp, g, a, err := c.rowKey()
	if err != nil {
		b.err = err
		return
	}
	b.words = append(b.words, engine.Word{Space: sp, Group: g, Addr: a, Value: c.value.Value(c.row)})
}

// ordersCursor reads the orders table: an address's rows are all in one
// partition, one after another, so merging on the address keeps them
// together and in their order.
type ordersCursor struct {
	wordRow
	order *array.String
	value *array.Uint32
}

func newOrdersCursor(t *tableReader) cursor {
	c := &ordersCursor{wordRow: wordRow{rowCursor: rowCursor{t: t, row: -1}}}
	c.bindKey(func(b *binder) {
		bindCol(b, &c.order, "order")
		bindCol(b, &c.value, "value")
	})
	return c
}

func (c *ordersCursor) emit(b *rowBuffer) {
	sp, g, a, err := c.rowKey()
	if err != nil {
		b.err = err
		return
	}
	b.orders = append(b.orders, engine.OrderWitness{Space: sp, Group: g, Addr: a,
		Order: strings.Clone(c.order.Value(c.row)), Value: c.value.Value(c.row)})
}

type addressCursor struct {
	wordRow
	acc, warps, groups *array.Uint64
	sensitive, exact   *array.Boolean
}

func newAddressCursor(t *tableReader) cursor {
	c := &addressCursor{wordRow: wordRow{rowCursor: rowCursor{t: t, row: -1}}}
	c.bindKey(func(b *binder) {
		bindCol(b, &c.acc, "accesses")
		bindCol(b, &c.warps, "warps")
		bindCol(b, &c.groups, "groups")
		bindCol(b, &c.sensitive, "order_sensitive")
		bindCol(b, &c.exact, "exact")
	})
	return c
}

func (c *addressCursor) emit(b *rowBuffer) {
	sp, g, a, err := c.rowKey()
	if err != nil {
		b.err = err
		return
	}
	r := c.row
	b.addrs = append(b.addrs, engine.AddressStat{Space: sp, Group: g, Addr: a,
		Accesses: c.acc.Value(r), Warps: c.warps.Value(r), Groups: c.groups.Value(r),
		Exact: c.exact.Value(r), OrderSensitive: c.sensitive.Value(r)})
}

type resultCursor struct {
	rowCursor
	seq, addr, value, hi *array.Uint64
	lane, elem           *array.Uint32
	fault                *array.String
}

func newResultCursor(t *tableReader) cursor {
	c := &resultCursor{rowCursor: rowCursor{t: t, row: -1}}
	c.bind = func(rec arrow.RecordBatch) error {
		b := &binder{path: t.path, rec: rec}
		bindCol(b, &c.seq, "seq")
		bindCol(b, &c.lane, "lane")
		bindCol(b, &c.elem, "elem")
		bindCol(b, &c.addr, "addr")
		bindCol(b, &c.value, "value")
		bindCol(b, &c.hi, "value_hi")
		bindCol(b, &c.fault, "fault")
		return b.err
	}
	return c
}

func (c *resultCursor) less(o cursor) bool {
	d := o.(*resultCursor)
	return cmp.Or(cmp.Compare(c.seq.Value(c.row), d.seq.Value(d.row)),
		cmp.Compare(c.lane.Value(c.row), d.lane.Value(d.row)),
		cmp.Compare(c.elem.Value(c.row), d.elem.Value(d.row))) < 0
}

func (c *resultCursor) emit(b *rowBuffer) {
	r := c.row
	f, ok := engine.ParseFault(c.fault.Value(r))
	if !ok {
		b.err = fmt.Errorf("%s: fault %q", c.t.path, c.fault.Value(r))
		return
	}
	b.results = append(b.results, engine.Result{Seq: c.seq.Value(r), Lane: c.lane.Value(r), Elem: c.elem.Value(r),
		Addr: c.addr.Value(r), Value: c.value.Value(r), ValueHi: c.hi.Value(r), Fault: f})
}

// wordLess orders two rows of tables sorted like memory: by space (as a
// string), group, addr.
func wordLess(s1 *array.String, g1 *array.Int64, a1 *array.Uint64, r1 int, s2 *array.String, g2 *array.Int64, a2 *array.Uint64, r2 int) bool {
	return cmp.Or(strings.Compare(s1.Value(r1), s2.Value(r2)), cmp.Compare(g1.Value(r1), g2.Value(r2)),
		cmp.Compare(a1.Value(r1), a2.Value(r2))) < 0
}

// rowBuffer collects merged rows and hands them to the writer in chunks.
type rowBuffer struct {
	results []engine.Result
	words   []engine.Word
	addrs   []engine.AddressStat
	orders  []engine.OrderWitness
	err     error
}

const mergeChunk = 64 << 10

func (b *rowBuffer) flush(w *Writer, final bool) error {
	if b.err != nil {
		return b.err
	}
	n := len(b.results) + len(b.words) + len(b.addrs) + len(b.orders)
	if n < mergeChunk && !final {
		return nil
	}
	var err error
	switch {
	case len(b.results) > 0:
		err = w.Results(b.results)
	case len(b.words) > 0:
		err = w.Memory(b.words)
	case len(b.addrs) > 0:
		err = w.Addresses(b.addrs)
	case len(b.orders) > 0:
		err = w.Orders(b.orders)
	}
	b.results, b.words, b.addrs, b.orders = b.results[:0], b.words[:0], b.addrs[:0], b.orders[:0]
	return err
}

// cursorHeap orders cursors by their current rows.
type cursorHeap []cursor

func (h cursorHeap) Len() int           { return len(h) }
func (h cursorHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h cursorHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)        { *h = append(*h, x.(cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeSorted k-way merges table id of every partition into w.
func mergeSorted(parts []*partDir, id tableID, w *Writer, newCursor func(*tableReader) cursor) error {
	var h cursorHeap
	var all []cursor
	defer func() {
		for _, c := range all {
			c.close()
		}
	}()
	for _, p := range parts {
		t, err := openTable(p.files[id])
		if err != nil {
			return err
		}
		c := newCursor(t)
		all = append(all, c)
		ok, err := c.advance()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	var buf rowBuffer
	for len(h) > 0 {
		c := h[0]
		c.emit(&buf)
		if err := buf.flush(w, false); err != nil {
			return err
		}
		ok, err := c.advance()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return buf.flush(w, true)
}

// instructionCursor reads one partition's instructions rows.
type instructionCursor struct {
	rowCursor
	seq                           *array.Uint64
	group, warp                   *array.Int64
	lanes, addrs, maxc, faults    *array.Uint32
	casFailed                     *array.Uint32
	sectors                       *array.Uint32
	dialect, op, typ, space, text *array.String
}

func newInstructionCursor(t *tableReader) *instructionCursor {
	c := &instructionCursor{rowCursor: rowCursor{t: t, row: -1}}
	c.bind = func(rec arrow.RecordBatch) error {
		b := &binder{path: t.path, rec: rec}
		bindCol(b, &c.seq, "seq")
		bindCol(b, &c.dialect, "dialect")
		bindCol(b, &c.op, "op")
		bindCol(b, &c.typ, "type")
		bindCol(b, &c.space, "space")
		bindCol(b, &c.group, "group")
		bindCol(b, &c.warp, "warp")
		bindCol(b, &c.lanes, "lanes")
		bindCol(b, &c.addrs, "addresses")
		bindCol(b, &c.maxc, "max_conflict")
		bindCol(b, &c.faults, "faults")
		bindCol(b, &c.text, "text")
		bindCol(b, &c.casFailed, "cas_failed")
		bindCol(b, &c.sectors, "sectors")
		return b.err
	}
	return c
}

// mergeInstructions combines the partitions' instructions rows: each
// partition's rows in trace order, an instruction's row in one or more of
// them (every one, for replay TRACE -partition; the one replay split chose,
// and those with faults of their own, for a split trace). The rows of one
// instruction must agree on its lanes and text; every instruction from 0
// on must have a row.
func mergeInstructions(w *Writer, parts []*partDir) error {
	var h instHeap
	var all []*instructionCursor
	defer func() {
		for _, c := range all {
			c.close()
		}
	}()
	for _, p := range parts {
		t, err := openTable(p.files[tInstructions])
		if err != nil {
			return err
		}
		c := newInstructionCursor(t)
		all = append(all, c)
		ok, err := c.advance()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	statics := map[string]*trace.Static{}
	out := make([]engine.InstStat, 0, mergeChunk)
	next := uint64(0)
	for len(h) > 0 {
		c, r := h[0], h[0].row
		seq := c.seq.Value(r)
		if seq != next {
			if seq < next {
				return mergeErr("%s has instruction %d twice, or out of order: not a partition of one replay", c.t.path, seq)
			}
			return mergeErr("no partition has a row of instruction %d (%s has %d next): a partition is missing, or not of this replay", next, c.t.path, seq)
		}
		text := c.text.Value(r)
		s := statics[text]
		if s == nil {
			var err error
			if s, err = trace.ParseStatic(text); err != nil {
				return fmt.Errorf("%s: seq %d: %w", c.t.path, seq, err)
			}
			if s.Dialect.String() != c.dialect.Value(r) || s.Op.String() != c.op.Value(r) || s.Type.String() != c.typ.Value(r) {
				return fmt.Errorf("%s: seq %d: %q parses as %s %s %s, the row says %s %s %s", c.t.path, seq, text,
					s.Dialect, s.Op, s.Type, c.dialect.Value(r), c.op.Value(r), c.typ.Value(r))
			}
			statics[strings.Clone(text)] = s
		}
		st := engine.InstStat{Seq: seq, Static: s, Group: c.group.Value(r), Warp: c.warp.Value(r),
			Lanes: c.lanes.Value(r), Addresses: c.addrs.Value(r), MaxConflict: c.maxc.Value(r), Faults: c.faults.Value(r),
			CASFailed: c.casFailed.Value(r), Sectors: c.sectors.Value(r)}
		first := c
		if err := h.step(); err != nil {
			return err
		}
		for len(h) > 0 && h[0].seq.Value(h[0].row) == seq {
			d, r := h[0], h[0].row
			if d == first {
				return mergeErr("%s has instruction %d twice: not a partition of one replay", d.t.path, seq)
			}
			if d.lanes.Value(r) != st.Lanes || d.text.Value(r) != text {
				return mergeErr("%s says instruction %d is %q with %d lanes, %s says %q with %d: not partitions of one replay",
					d.t.path, seq, d.text.Value(r), d.lanes.Value(r), first.t.path, text, st.Lanes)
			}
			st.Addresses += d.addrs.Value(r)
			st.Faults += d.faults.Value(r)
			st.CASFailed += d.casFailed.Value(r)
			st.Sectors += d.sectors.Value(r) // a sector lies in one partition's line
			st.MaxConflict = max(st.MaxConflict, d.maxc.Value(r))
			if err := h.step(); err != nil {
				return err
			}
		}
		next++
		out = append(out, st)
		if len(out) == mergeChunk {
			if err := w.Instructions(out); err != nil {
				return err
			}
			out = out[:0]
		}
	}
	if len(out) > 0 {
		return w.Instructions(out)
	}
	return nil
}

// instHeap orders instruction cursors by their current row's seq.
type instHeap []*instructionCursor

func (h instHeap) Len() int { return len(h) }
func (h instHeap) Less(i, j int) bool {
	return h[i].seq.Value(h[i].row) < h[j].seq.Value(h[j].row)
}
func (h instHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *instHeap) Push(x any)   { *h = append(*h, x.(*instructionCursor)) }
func (h *instHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// step advances the cursor on top to its next row.
func (h *instHeap) step() error {
	ok, err := (*h)[0].advance()
	if err != nil {
		return err
	}
	if ok {
		heap.Fix(h, 0)
	} else {
		heap.Pop(h)
	}
	return nil
}
