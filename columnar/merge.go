package columnar

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
//     (a line, hence an address, is in one), and each partition's rows are
//     sorted as the whole table is; Merge interleaves them in that order
//     (a k-way merge, reading each file once, in row groups), a partition's
//     run of rows before every other's next row (a line's words) with one
//     comparison a row (the memory table's: of the address alone, within
//     a space and group, its rows copied a column at a time and handed
//     to the writer so, space and group as runs of rows: memCols).
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
// process's; a split partition's instructions row group that is, byte for
// byte, the merged file's goes to it as it is (rgcopy.go). The tables are merged on goroutines of their own, beside the
// Writer's (mergeTables: the trace's tables, then addresses and memory,
// which fill a bounded number of chunks ahead meanwhile; when the
// instructions are the trace's one table, their merge calls the Writer
// itself, with its runs' rows where its records hold them, and writes
// the later tables' chunks between them, so that those are merged and
// written beside it), and each
// partition's file is decoded on a goroutine of its own, its next row
// group once its cursor is half way through the one before (prefetch),
// its string columns as their dictionaries' keys, its columns' storage
// taken from one pool for the whole merge, to which each row group's goes
// back once its rows are merged (openTableCols). A partition's
// instructions are decoded once their rows are due, or next: until then
// its first seq, from its file's first page, stands for them
// (openInstructions).

// partDir is one partition directory and what its files say it is.
type partDir struct {
	dir          string
	index, count int
	trace        string
	options      string             // MetaOptions, "" when the files have none
	run          *RunOptions        // options parsed; nil when the files have none
	files        map[tableID]string // the file Merge reads per table: Parquet, else Arrow
	// pq holds the Parquet files opened to read their metadata, footer
	// read, until the merge of their table takes them (openCursors) or
	// close closes them: each footer is read once.
	pq [numTables]*pqFile
}

// close closes the files of p that no merge took.
func (p *partDir) close() {
	for id, f := range p.pq {
		if f != nil {
			f.close()
			p.pq[id] = nil
		}
	}
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
		return pf.metadata(), nil
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

// metadata is the key-value metadata of the file's footer, without
// ARROW:schema.
func (pf *pqFile) metadata() map[string]string {
	m := map[string]string{}
	for _, kv := range pf.kv {
		if kv[0] != "ARROW:schema" {
			m[kv[0]] = kv[1]
		}
	}
	return m
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
func readPartDir(dir string) (_ *partDir, err error) {
	p := &partDir{dir: dir, files: map[tableID]string{}}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
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
		var kv map[string]string
		if strings.HasSuffix(path, extParquet) {
			pf, err := openParquet(path)
			if err != nil {
				return nil, mergeErr("%v", err)
			}
			p.pq[id] = pf
			kv = pf.metadata()
		} else if kv, err = FileMetadata(path); err != nil {
			return nil, mergeErr("%v", err)
		}
		part, trc, run := kv[MetaPartition], kv[MetaTrace], kv[MetaOptions]
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

// readPartDirs is readPartDir of every directory of dirs, each on a
// goroutine of its own (the footers' reads and parsing side by side), in
// their order; the error is the first directory's that has one, and then
// no file stays open.
func readPartDirs(dirs []string) ([]*partDir, error) {
	parts := make([]*partDir, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for i, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = readPartDir(d)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for _, p := range parts {
				if p != nil {
					p.close()
				}
			}
			return nil, errs[i]
		}
	}
	return parts, nil
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
	return merge(dirs, out, mergeChunk, opts...)
}

// merge is Merge handing the writer chunk rows at a time (mergeChunk;
// tests give fewer, to cut runs at chunks).
func merge(dirs []string, out string, chunk int, opts ...Option) error {
	var parts []*partDir
	defer func() {
		for _, p := range parts {
			p.close()
		}
	}()
	parts, err := readPartDirs(dirs)
	if err != nil {
		return err
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
	if err := mergeInto(w, parts, chunk); err != nil {
		return errors.Join(err, w.Abort())
	}
	return w.Commit()
}

// mergeInto merges the partitions' tables into w, each table on a
// goroutine of its own (mergeTables), and the partitions' files read
// ahead of the merge, each on its own (tableReader.prefetch): the tables'
// merges and their files' decoding share the machine's cores, and the
// Writer, not safe for concurrent use, is called from this goroutine, or
// from the instructions' merge while it runs when it is the trace's one
// table (mergeTables' direct).
func mergeInto(w *Writer, parts []*partDir, chunk int) error {
	var trace, after []func(q *writeQueue) error // the engine.Sink order: the trace's tables first
	if _, ok := parts[0].files[tInstructions]; ok {
		trace = append(trace, func(q *writeQueue) error { return mergeInstructions(q, parts) })
	}
	sorted := []struct {
		id  tableID
		cur func(*tableReader) cursor
	}{{tResults, newResultCursor}, {tOrders, newOrdersCursor}, {tAddresses, newAddressCursor}, {tMemory, newMemoryCursor}}
	for _, t := range sorted {
		if _, ok := parts[0].files[t.id]; !ok {
			continue
		}
		m := func(q *writeQueue) error { return mergeSorted(q, parts, t.id, t.cur) }
		if t.id == tAddresses || t.id == tMemory {
			after = append(after, m)
		} else {
			trace = append(trace, m)
		}
	}
	// The instructions' merge, when the trace's one, calls w itself.
	direct := len(trace) == 1 && parts[0].files[tInstructions] != ""
	return mergeTables(w, chunk, [][]func(q *writeQueue) error{trace, after}, direct)
}

// writeQueue hands a table merge's chunks of rows to the goroutine that
// writes them (mergeTables).
type writeQueue struct {
	jobs    chan writeJob
	ahead   int          // chunks a merge may fill before the writer takes them
	chunk   int          // the rows of a chunk (mergeChunk)
	stopped *atomic.Bool // the writer or a merge failed: the merges stop
	pool    *wordPool    // the storage of the records the merges read (openTableCols)
	// w, when set, is the Writer, which the one merge of the first phase
	// (mergeTables: the instructions') calls itself, instead of sending
	// jobs: it hands it its runs' rows where its records hold them
	// (runDirect), not copied into chunks for another goroutine, and
	// between them writes the jobs the later phases' merges have sent
	// (later, drainLater), so that the tables after the trace are merged
	// and written beside it, not after it. No other goroutine calls w
	// until that merge has returned.
	w     *Writer
	later []*writeQueue
}

// drainLater writes the jobs that the later phases' merges have sent
// and the writer has not taken, for q's merge, which calls the Writer
// itself (q.w): those there now, without waiting for more.
func (q *writeQueue) drainLater() error {
	for i, l := range q.later {
		if l == nil {
			continue
		}
	jobs:
		for {
			select {
			case j, ok := <-l.jobs:
				if !ok {
					q.later[i] = nil // its merges are done
					break jobs
				}
				var err error
				if q.stopped.Load() {
					err = errStopped
				} else {
					err = j.write(q.w)
				}
				j.done()
				if err != nil {
					return err
				}
			default:
				break jobs
			}
		}
	}
	return nil
}

// writeJob writes one chunk of rows, then gives the chunk's storage back
// to its merge (done).
type writeJob struct {
	write func(w *Writer) error
	done  func()
}

// errStopped is a merge that stopped because the writer or another merge
// failed.
var errStopped = errors.New("merge stopped: the writer or another table's merge failed")

// send queues a job; it fails once the writer or a merge has.
func (q *writeQueue) send(j writeJob) error {
	if q.stopped.Load() {
		j.done()
		return errStopped
	}
	q.jobs <- j
	return nil
}

// Chunks a merge fills ahead of the writer: a trace table's merge runs
// beside the others of the trace, whose chunks the writer takes as they
// come; the tables after the trace (addresses, memory), which the writer
// takes only once the trace's are written, fill up to mergeAhead chunks
// meanwhile, a bounded part of their rows.
const (
	traceAhead = 2
	mergeAhead = 4
)

// mergeTables runs each merge on a goroutine of its own and writes the
// chunks they send to w: every chunk of phases[0]'s merges, in the order
// they come (each table's in its merge's order), then phases[1]'s, and so
// on (the engine.Sink order of the tables). With direct, phases[0] is one
// merge that calls w itself (writeQueue.w) and writes the later phases'
// chunks as they come, between its own rows (w.anyOrder); this goroutine
// writes those left once it has returned.
func mergeTables(w *Writer, chunk int, phases [][]func(q *writeQueue) error, direct bool) error {
	stopped := new(atomic.Bool)
	var errs []error
	var mu sync.Mutex
	var queues []*writeQueue
	pool := &wordPool{}
	defer pool.release() // every merge has returned, its readers closed
	direct = direct && len(phases[0]) == 1
	for p, merges := range phases {
		ahead := traceAhead
		if p > 0 {
			ahead = mergeAhead
		}
		q := &writeQueue{jobs: make(chan writeJob, ahead*max(1, len(merges))), ahead: ahead, chunk: chunk, stopped: stopped, pool: pool}
		if p == 0 && direct {
			q.w = w
			w.anyOrder = true
		} else if direct {
			queues[0].later = append(queues[0].later, q)
		}
		queues = append(queues, q)
	}
	for p, merges := range phases {
		q := queues[p]
		var wg sync.WaitGroup
		for _, m := range merges {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := m(q)
				if err == nil && q.w != nil && !stopped.Load() {
					// The trace's tables are complete: their files are
					// finished beside the later tables' merges, as
					// after a replay's trace.
					err = q.w.endTrace()
				}
				if err != nil {
					stopped.Store(true) // the others need not go on
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		go func() {
			wg.Wait()
			close(q.jobs)
		}()
	}
	var werr error
	for _, q := range queues {
		for j := range q.jobs {
			if werr == nil && !stopped.Load() {
				if werr = j.write(w); werr != nil {
					stopped.Store(true)
				}
			}
			j.done()
		}
	}
	if werr != nil {
		return werr
	}
	for _, err := range errs {
		if err != errStopped {
			return err
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// instChunks passes a merge's instructions rows to a writeQueue
// mergeChunk at a time, a column at a time (instCols), in buffers that it
// fills in turn.
type instChunks struct {
	cols *instCols
	free chan *instCols
	q    *writeQueue
}

func newInstChunks(q *writeQueue) *instChunks {
	c := &instChunks{free: make(chan *instCols, q.ahead+1), q: q}
	for range q.ahead {
		c.free <- nil // made when first taken
	}
	c.cols = newInstColsOf(q.chunk, q.pool)
	return c
}

func newInstCols(n int) *instCols { return newInstColsOf(n, nil) }

// newInstColsOf is instCols with room for n rows, the numeric columns'
// from pool's slabs (poolSlice).
func newInstColsOf(n int, pool *wordPool) *instCols {
	return &instCols{seq: poolSlice[uint64](pool, n), static: make([]*trace.Static, 0, n),
		group: poolSlice[int64](pool, n), warp: poolSlice[int64](pool, n),
		lanes: poolSlice[uint32](pool, n), addrs: poolSlice[uint32](pool, n), maxc: poolSlice[uint32](pool, n),
		faults: poolSlice[uint32](pool, n), casFailed: poolSlice[uint32](pool, n), sectors: poolSlice[uint32](pool, n)}
}

// room is how many more rows the chunk takes.
func (c *instChunks) room() int { return c.q.chunk - c.cols.len() }

// flush sends the rows on when there are mergeChunk of them, or any at
// all when final.
func (c *instChunks) flush(final bool) error {
	if n := c.cols.len(); n == 0 || n < c.q.chunk && !final {
		return nil
	}
	cols := c.cols
	if w := c.q.w; w != nil {
		if c.q.stopped.Load() {
			return errStopped
		}
		err := w.instructionCols(*cols)
		cols.truncate(0)
		if err != nil {
			return err
		}
		return c.q.drainLater()
	}
	err := c.q.send(writeJob{
		write: func(w *Writer) error { return w.instructionCols(*cols) },
		done:  func() { cols.truncate(0); c.free <- cols },
	})
	if c.cols = <-c.free; c.cols == nil {
		c.cols = newInstColsOf(c.q.chunk, c.q.pool)
	}
	return err
}

// tableReader reads a table file's rows, a record batch at a time.
type tableReader struct {
	path string
	// next returns the next record, or the next row group to copy
	// (copies); io.EOF-like: nil, nil, nil at the end.
	next func() (arrow.RecordBatch, *rowGroupCopy, error)
	stop func()
	// done, when set, says that the caller is done with the oldest record
	// next gave it: its columns' storage is the next records' (a merge's
	// reader, openTableCols); took hands a record's storage to done.
	done, took func()
	// keysChecked: the keys of its dictionary columns lie within their
	// dictionaries (a Parquet file's reader checks them, hybridReader.fill;
	// an Arrow file's come unchecked, and bindStr checks them).
	keysChecked bool
	// ahead, when set (prefetch), starts decoding the record after the
	// one next gave last, if it is not under way: a cursor calls it half
	// way through its record.
	ahead func()
	// copies, when set, are the Parquet file's row groups that next
	// reads to be copied (planCopies), not decoded, with their ops
	// totals; storedBelow is the file's writer's storedPageBytes.
	// decodeCopy decodes such a row group's bytes as next would have
	// (rowCursor.uncopy). pool is the merge's.
	copies      []bool
	copyOps     [][]rowGroupOp
	storedBelow int
	decodeCopy  func(cp *rowGroupCopy) (arrow.RecordBatch, error)
	pool        *wordPool
}

func openTable(path string) (*tableReader, error) { return openTableCols(path, nil, nil) }

// openTableCols is openTableFile of the file path, opened.
func openTableCols(path string, cols []string, pool *wordPool) (*tableReader, error) {
	return openTableFile(path, nil, cols, pool)
}

// openTableFile opens a table file to read the columns cols of a Parquet
// file (nil: all of them; an Arrow file's records have all); pf, if not
// nil, is the Parquet file path opened, which the reader then owns. With a pool
// (a merge's), its string columns are read as dictionary arrays
// (pqFile.dictStrings), and its fixed-width columns' storage is taken
// from the pool and given back to it once the caller is done with a
// record (done): the pool is shared by every file a merge reads, so that
// one partition's storage is the next one's.
func openTableFile(path string, pf *pqFile, cols []string, pool *wordPool) (*tableReader, error) {
	dict := pool != nil
	t := &tableReader{path: path, pool: pool}
	if strings.HasSuffix(path, extParquet) {
		if pf == nil {
			var err error
			if pf, err = openParquet(path); err != nil {
				return nil, err
			}
		}
		pf.dictStrings = dict
		t.keysChecked = true
		idx, err := pf.columns(cols)
		if err != nil {
			pf.close()
			return nil, err
		}
		fs := make([]arrow.Field, len(idx))
		for i, k := range idx {
			if err := pf.check(k); err != nil {
				pf.close()
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			fs[i] = arrow.Field{Name: pf.leaves[k].name, Type: pf.leafType(k)}
		}
		sc := arrow.NewSchema(fs, nil)
		if dict { // a merge's: each record's storage reused once it is done with
			pf.reuse = pool
			var mu sync.Mutex
			var pending [][][]uint64 // the storage of the records handed out, oldest first
			t.done = func() {
				mu.Lock()
				if len(pending) > 0 {
					pool.put(pending[0]...)
					pending = pending[1:]
				}
				mu.Unlock()
			}
			t.took = func() {
				mu.Lock()
				pending = append(pending, pf.used)
				mu.Unlock()
				pf.used = nil
			}
		}
		rg := 0
		t.next = func() (arrow.RecordBatch, *rowGroupCopy, error) {
			for ; rg < len(pf.rgs); rg++ {
				rows := pf.rgs[rg].rows
				if rows == 0 {
					continue
				}
				if t.copies != nil && t.copies[rg] {
					cp, err := pf.readCopy(rg, t.storedBelow, pool)
					if err != nil {
						return nil, nil, err
					}
					if cp != nil { // else its pages may not be copied: decoded
						if t.copyOps != nil { // nil: no ops table
							cp.ops = t.copyOps[rg]
						}
						rg++
						return nil, cp, nil
					}
				}
				if err := pf.readSpan(rg, idx); err != nil {
					return nil, nil, err
				}
				rec, err := pf.readRecord(rg, idx, sc)
				if err != nil {
					return nil, nil, err
				}
				rg++
				if t.took != nil {
					t.took()
				}
				return rec, nil, nil
			}
			return nil, nil, nil
		}
		t.decodeCopy = func(cp *rowGroupCopy) (arrow.RecordBatch, error) {
			// A reader of its own, beside the one that may be reading
			// ahead: the bytes are read, its storage is the Go heap's.
			fb := &pqFile{path: pf.path, f: pf.f, size: pf.size, leaves: pf.leaves, rgs: pf.rgs, limits: pf.limits,
				dictStrings: pf.dictStrings, span: cp.bytes, spanAt: cp.start}
			defer fb.close()
			return fb.readRecord(cp.rg, idx, sc)
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
	t.next = func() (arrow.RecordBatch, *rowGroupCopy, error) {
		if i >= r.NumRecords() {
			return nil, nil, nil
		}
		rec, err := r.RecordBatch(i)
		i++
		if rec != nil {
			rec.Retain() // the reader releases it at the next
		}
		return rec, nil, err
	}
	t.stop = func() { r.Close(); f.Close() }
	return t, nil
}

// readRecord decodes columns idx of row group rg as a record of the
// schema sc.
func (pf *pqFile) readRecord(rg int, idx []int, sc *arrow.Schema) (arrow.RecordBatch, error) {
	cs := make([]arrow.Array, len(idx))
	for i, k := range idx {
		a, err := pf.readColumn(rg, k)
		if err != nil {
			return nil, err
		}
		cs[i] = a
	}
	return array.NewRecordBatch(sc, cs, pf.rgs[rg].rows), nil
}

// prefetch makes t read its records on a goroutine of its own, beside
// the caller: the decoding of a partition's file beside the merge. It
// decodes a record when asked, by next or by ahead, and never more than
// one the caller has not taken: a partition whose rows wait for the
// others' (a later slice's instructions) holds one record decoded, not
// two, and the storage of a merge's records is what its cursors are at,
// plus one for each that nears the end of its record.
func (t *tableReader) prefetch() {
	type fetched struct {
		rec arrow.RecordBatch
		cp  *rowGroupCopy
		err error
	}
	next, stop := t.next, t.stop
	ch := make(chan fetched, 1)
	want := make(chan struct{}, 1)
	quit := make(chan struct{})
	asked := false // a record is asked for and not yet taken
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ch)
		for {
			select {
			case <-want:
			case <-quit:
				return
			}
			rec, cp, err := next()
			ch <- fetched{rec, cp, err} // never blocks: one asked, one sent
			if rec == nil && cp == nil || err != nil {
				return
			}
		}
	}()
	t.ahead = func() {
		if !asked {
			asked = true
			want <- struct{}{}
		}
	}
	t.next = func() (arrow.RecordBatch, *rowGroupCopy, error) {
		t.ahead()
		f, ok := <-ch
		if !ok {
			return nil, nil, nil
		}
		asked = false
		return f.rec, f.cp, f.err
	}
	t.stop = func() {
		close(quit)
		wg.Wait()
		stop()
	}
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

// strCol is a string column as keys into its distinct values: a Parquet
// column read as a dictionary (openTableCols), or a plain string column,
// each row its own key. Rows of one key have one value.
type strCol struct {
	keys []int32 // nil: row r is key r
	vals *array.String
}

// key is row r's key.
func (s *strCol) key(r int) int32 {
	if s.keys == nil {
		return int32(r)
	}
	return s.keys[r]
}

// Value is row r's string.
func (s *strCol) Value(r int) string { return s.vals.Value(int(s.key(r))) }

// single says every row's key is 0, of a dictionary of one string: its
// keys, bound (bindStr), lie within the dictionary.
func (s *strCol) single() bool { return s.keys != nil && s.vals.Len() == 1 }

// distinct is the number of keys.
func (s *strCol) distinct() int { return s.vals.Len() }

// bindStr binds a string column, a dictionary of strings or strings.
func bindStr(b *binder, dst *strCol, name string) {
	if b.err != nil {
		return
	}
	var a arrow.Array
	if a, b.err = column[arrow.Array](b.path, b.rec, name); b.err != nil {
		return
	}
	switch a := a.(type) {
	case *array.String:
		*dst = strCol{vals: a}
		return
	case *array.Dictionary:
		idx, ok1 := a.Indices().(*array.Int32)
		vals, ok2 := a.Dictionary().(*array.String)
		if ok1 && ok2 {
			keys := idx.Int32Values()
			// An Arrow file's keys come as written (the IPC reader does
			// not check them against the dictionary): one out of range
			// is the file's error, not an index past the merge's slices.
			if n := uint32(vals.Len()); !b.keysChecked {
				for r, k := range keys {
					if uint32(k) >= n {
						b.err = fmt.Errorf("%s: column %s: row %d has dictionary key %d of %d values", b.path, name, r, k, n)
						return
					}
				}
			}
			*dst = strCol{keys: keys, vals: vals}
			return
		}
	}
	b.err = fmt.Errorf("%s: column %s is %s", b.path, name, a.DataType())
}

// cursor walks one partition's rows of one table in order.
type cursor interface {
	// advance moves to the next row; false at the end.
	advance() (bool, error)
	// less orders the current rows of two cursors by the table's key.
	less(other cursor) bool
	// emit hands the current row to the writer's buffer.
	emit(b *rowBuffer)
	// run hands the writer's buffer the current row and those after it
	// in the record that come before next's current row (nil next: to
	// the record's end), at most room rows (room >= 1), and returns how
	// many; the cursor stays at its current row (skip moves it).
	run(b *rowBuffer, next cursor, room int) int
	// skip moves k rows on: advance k times.
	skip(k int) (bool, error)
	close()
}

// rowCursor is what the cursors share: the reader, its record and row.
type rowCursor struct {
	t    *tableReader
	rec  arrow.RecordBatch
	row  int
	rows int // rec's, or cp's
	bind func(rec arrow.RecordBatch) error
	// cp, instead of rec, is a row group to copy (tableReader.copies):
	// its rows are not decoded, and the cursor is at its first.
	cp *rowGroupCopy
	// uncopied: rec is cp's rows, decoded once the writer did not take
	// them (uncopy), in storage of its own, not the reader's pool's.
	uncopied bool
}

func (c *rowCursor) advance() (bool, error) {
	c.row++
	if c.row < c.rows {
		if c.row == c.rows/2 && c.t.ahead != nil {
			c.t.ahead() // the next record, while this one's second half is merged
		}
		return true, nil
	}
	for {
		if c.rec != nil && c.t.done != nil && !c.uncopied {
			c.t.done()
		}
		c.rec, c.uncopied = nil, false
		if c.cp != nil {
			c.t.pool.put(c.cp.words)
			c.cp = nil
		}
		rec, cp, err := c.t.next()
		if err != nil {
			return false, fmt.Errorf("%s: %w", c.t.path, err)
		}
		if cp != nil {
			c.cp, c.row, c.rows = cp, 0, int(cp.rows)
			if c.t.ahead != nil {
				c.t.ahead() // the next record, while this one is copied
			}
			return true, nil
		}
		if rec == nil {
			c.rows = 0
			return false, nil
		}
		c.rec, c.row, c.rows = rec, 0, int(rec.NumRows())
		if err := c.bind(rec); err != nil {
			return false, err
		}
		if c.row < c.rows {
			return true, nil
		}
	}
}

// uncopy decodes the rows of the row group c is at to copy, which the
// writer did not take, as a record of the reader's would hold them.
func (c *rowCursor) uncopy() error {
	cp := c.cp
	rec, err := c.t.decodeCopy(cp)
	c.t.pool.put(cp.words)
	c.cp = nil
	if err != nil {
		return fmt.Errorf("%s: %w", c.t.path, err)
	}
	c.rec, c.uncopied, c.row, c.rows = rec, true, 0, int(rec.NumRows())
	return c.bind(rec)
}

// skip moves k rows on (k >= 1), within the record but for the last
// step: advance k times.
func (c *rowCursor) skip(k int) (bool, error) {
	if h := c.rows / 2; c.row < h && c.row+k-1 >= h && c.t.ahead != nil {
		c.t.ahead() // what advance does at row h
	}
	c.row += k - 1
	return c.advance()
}

func (c *rowCursor) close() { c.t.close() }

// spaceMemo parses a space column's values, remembering the last.
type spaceMemo struct {
	vals  *array.String // of the record key is a key of
	key   int32
	name  string
	space trace.Space
}

func (m *spaceMemo) parse(path string, col *strCol, r int) (trace.Space, error) {
	k := col.key(r)
	if k == m.key && col.vals == m.vals {
		return m.space, nil
	}
	s := col.Value(r)
	if s != m.name || m.name == "" {
		sp, ok := trace.ParseSpace(s)
		if !ok {
			return trace.Space{}, fmt.Errorf("%s: space %q", path, s)
		}
		m.name, m.space = strings.Clone(s), sp
	}
	m.vals, m.key = col.vals, k
	return m.space, nil
}

// binder takes a record's columns by name, keeping the first error.
type binder struct {
	path        string
	rec         arrow.RecordBatch
	keysChecked bool // the record's dictionary keys lie within their dictionaries (tableReader.keysChecked)
	err         error
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
	space strCol
	group *array.Int64
	addr  *array.Uint64
	memo  spaceMemo
}

func (c *wordRow) keyRow() *wordRow { return c }

// bindKey binds the key columns, then more (the table's other columns).
func (c *wordRow) bindKey(more func(b *binder)) {
	c.bind = func(rec arrow.RecordBatch) error {
		b := &binder{path: c.t.path, rec: rec, keysChecked: c.t.keysChecked}
		bindStr(b, &c.space, "space")
		bindCol(b, &c.group, "group")
		bindCol(b, &c.addr, "addr")
		more(b)
		return b.err
	}
}

func (c *wordRow) less(o cursor) bool {
	d := o.(interface{ keyRow() *wordRow }).keyRow()
	return wordLess(&c.space, c.group, c.addr, c.row, &d.space, d.group, d.addr, d.row)
}

// rowKey returns the current row's space (parsed), group and addr.
func (c *wordRow) rowKey() (trace.Space, int64, uint64, error) {
	sp, err := c.memo.parse(c.t.path, &c.space, c.row)
	return sp, c.group.Value(c.row), c.addr.Value(c.row), err
}

// wordCols are the columns a merge reads of the tables sorted like
// memory: the key's, then more.
func wordCols(more ...string) []string { return append([]string{"space", "group", "addr"}, more...) }

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
	b.mem.addr = append(b.mem.addr, a)
	b.mem.value = append(b.mem.value, c.value.Value(c.row))
	b.mem.key(sp, g, 1)
}

// ordersCursor reads the orders table: an address's rows are all in one
// partition, one after another, so merging on the address keeps them
// together and in their order.
type ordersCursor struct {
	wordRow
	order strCol
	value *array.Uint32
}

func newOrdersCursor(t *tableReader) cursor {
	c := &ordersCursor{wordRow: wordRow{rowCursor: rowCursor{t: t, row: -1}}}
	c.bindKey(func(b *binder) {
		bindStr(b, &c.order, "order")
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
	fault                strCol
}

func newResultCursor(t *tableReader) cursor {
	c := &resultCursor{rowCursor: rowCursor{t: t, row: -1}}
	c.bind = func(rec arrow.RecordBatch) error {
		b := &binder{path: t.path, rec: rec, keysChecked: t.keysChecked}
		bindCol(b, &c.seq, "seq")
		bindCol(b, &c.lane, "lane")
		bindCol(b, &c.elem, "elem")
		bindCol(b, &c.addr, "addr")
		bindCol(b, &c.value, "value")
		bindCol(b, &c.hi, "value_hi")
		bindStr(b, &c.fault, "fault")
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

// rowRun is run a row at a time, through emit and less: the cursor c,
// its rowCursor rc.
func rowRun(c cursor, rc *rowCursor, b *rowBuffer, next cursor, room int) int {
	r0 := rc.row
	defer func() { rc.row = r0 }()
	for n := 1; ; n++ {
		c.emit(b)
		if n == room || rc.row+1 >= rc.rows {
			return n
		}
		rc.row++
		if next != nil && !c.less(next) {
			return n
		}
	}
}

func (c *resultCursor) run(b *rowBuffer, next cursor, room int) int {
	return rowRun(c, &c.rowCursor, b, next, room)
}

func (c *ordersCursor) run(b *rowBuffer, next cursor, room int) int {
	return rowRun(c, &c.rowCursor, b, next, room)
}

func (c *addressCursor) run(b *rowBuffer, next cursor, room int) int {
	return rowRun(c, &c.rowCursor, b, next, room)
}

// run is the memory table's: the rows of a run are found by their keys
// (span) and appended a column at a time (memCols), their space and group
// as runs of rows.
func (c *memoryCursor) run(b *rowBuffer, next cursor, room int) int {
	r0 := c.row
	n := c.span(next, min(c.rows, r0+room))
	group := c.group.Int64Values()[r0 : r0+n]
	m := &b.mem
	o := len(m.addr)
	m.addr = append(m.addr, c.addr.Uint64Values()[r0:r0+n]...)
	m.value = append(m.value, c.value.Uint32Values()[r0:r0+n]...)
	for i := 0; i < n; {
		k, g := c.space.key(r0+i), group[i]
		j := i + 1
		for j < n && c.space.key(r0+j) == k && group[j] == g {
			j++
		}
		sp, err := c.memo.parse(c.t.path, &c.space, r0+i)
		if err != nil {
			m.addr, m.value, b.err = m.addr[:o+i], m.value[:o+i], err
			return max(i, 1)
		}
		m.key(sp, g, j-i)
		i = j
	}
	return n
}

// memCols is a chunk of the memory table's rows a column at a time: addr
// and value a row each, space and group as runs of rows (keys), in
// order.
type memCols struct {
	keys  []memKey
	addr  []uint64
	value []uint32
}

// memKey is a run of memCols' rows of one space and group.
type memKey struct {
	space trace.Space
	group int64
	rows  int
}

// key appends n rows of space sp and group g to m's runs: to its last,
// when that is theirs.
func (m *memCols) key(sp trace.Space, g int64, n int) {
	if k := len(m.keys) - 1; k >= 0 && m.keys[k].space == sp && m.keys[k].group == g {
		m.keys[k].rows += n
		return
	}
	m.keys = append(m.keys, memKey{space: sp, group: g, rows: n})
}

func (m *memCols) truncate() { m.keys, m.addr, m.value = m.keys[:0], m.addr[:0], m.value[:0] }

// span is the rows from the current one (which counts whatever its key)
// up to row end that come before next's current row (nil next: all).
// Rows of one space key and group are compared by their addresses only.
func (c *wordRow) span(next cursor, end int) int {
	r := c.row + 1
	if next == nil {
		return end - c.row
	}
	d := next.(interface{ keyRow() *wordRow }).keyRow()
	groups, addrs := c.group.Int64Values(), c.addr.Uint64Values()
	dg, da := d.group.Value(d.row), d.addr.Value(d.row)
	for r < end {
		k, g := c.space.key(r), groups[r]
		o := cmp.Or(strings.Compare(c.space.Value(r), d.space.Value(d.row)), cmp.Compare(g, dg))
		if o > 0 || o == 0 && addrs[r] >= da {
			break
		}
		r++
		for r < end && c.space.key(r) == k && groups[r] == g && (o < 0 || addrs[r] < da) {
			r++
		}
		if r < end && c.space.key(r) == k && groups[r] == g {
			break // o == 0 and the address is not below next's
		}
	}
	return r - c.row
}

// wordLess orders two rows of tables sorted like memory: by space (as a
// string), group, addr.
func wordLess(s1 *strCol, g1 *array.Int64, a1 *array.Uint64, r1 int, s2 *strCol, g2 *array.Int64, a2 *array.Uint64, r2 int) bool {
	return cmp.Or(strings.Compare(s1.Value(r1), s2.Value(r2)), cmp.Compare(g1.Value(r1), g2.Value(r2)),
		cmp.Compare(a1.Value(r1), a2.Value(r2))) < 0
}

// rowBuffer collects merged rows of one table for the writer.
type rowBuffer struct {
	results []engine.Result
	mem     memCols
	addrs   []engine.AddressStat
	orders  []engine.OrderWitness
	err     error
}

// mergeChunk is the rows a merge hands the writer at a time: few enough
// that a chunk of instructions (64 bytes a row) is still in the cache when
// the writer reads it.
const mergeChunk = 8 << 10

func (b *rowBuffer) len() int {
	return len(b.results) + len(b.mem.addr) + len(b.addrs) + len(b.orders)
}

// write writes b's rows to w.
func (b *rowBuffer) write(w *Writer) error {
	switch {
	case len(b.results) > 0:
		return w.Results(b.results)
	case len(b.mem.addr) > 0:
		return w.memoryCols(&b.mem)
	case len(b.addrs) > 0:
		return w.Addresses(b.addrs)
	case len(b.orders) > 0:
		return w.Orders(b.orders)
	}
	return nil
}

// alloc makes room for a chunk of table id's rows, once: the memory
// table's from pool's slabs (poolSlice).
func (b *rowBuffer) alloc(id tableID, chunk int, pool *wordPool) {
	switch {
	case id == tResults && b.results == nil:
		b.results = make([]engine.Result, 0, chunk)
	case id == tMemory && b.mem.addr == nil:
		b.mem.addr, b.mem.value = poolSlice[uint64](pool, chunk), poolSlice[uint32](pool, chunk)
	case id == tAddresses && b.addrs == nil:
		b.addrs = make([]engine.AddressStat, 0, chunk)
	case id == tOrders && b.orders == nil:
		b.orders = make([]engine.OrderWitness, 0, chunk)
	}
}

func (b *rowBuffer) reset() {
	b.results, b.addrs, b.orders = b.results[:0], b.addrs[:0], b.orders[:0]
	b.mem.truncate()
}

// sortedCols are the columns a merge reads of each sorted table.
var sortedCols = map[tableID][]string{
	tResults:   {"seq", "lane", "elem", "addr", "value", "value_hi", "fault"},
	tMemory:    wordCols("value"),
	tAddresses: wordCols("accesses", "warps", "groups", "order_sensitive", "exact"),
	tOrders:    wordCols("order", "value"),
}

// openCursors opens table id of every partition, read ahead (prefetch),
// with newCursor, and moves each to its first row: all the cursors (to
// close), and those with rows, in partition order.
func openCursors[C interface{ advance() (bool, error) }](q *writeQueue, parts []*partDir, id tableID, cols []string, newCursor func(*tableReader) C, all *[]C) ([]C, error) {
	for _, p := range parts {
		pf := p.pq[id]
		p.pq[id] = nil // the reader's, which closes it
		t, err := openTableFile(p.files[id], pf, cols, q.pool)
		if err != nil {
			return nil, err
		}
		t.prefetch()
		t.ahead() // every partition's first record at once
		*all = append(*all, newCursor(t))
	}
	return liveCursors(*all, func(C) bool { return false })
}

// liveCursors moves each of all to its first row, but those pending
// (whose first row is known without it), and returns those with rows and
// the pending ones, in partition order.
func liveCursors[C interface{ advance() (bool, error) }](all []C, pending func(C) bool) ([]C, error) {
	var live []C
	for _, c := range all {
		if pending(c) {
			live = append(live, c)
			continue
		}
		ok, err := c.advance()
		if err != nil {
			return nil, err
		}
		if ok {
			live = append(live, c)
		}
	}
	return live, nil
}

// mergeSorted merges table id of every partition, each sorted by the
// table's key, into its order, and sends it to q. A partition's rows that
// come before every other partition's next row (a run: the words of its
// lines, a slice's instructions) go out together (cursor.run), with one
// comparison a row, not a heap's.
func mergeSorted(q *writeQueue, parts []*partDir, id tableID, newCursor func(*tableReader) cursor) error {
	var all []cursor
	defer func() {
		for _, c := range all {
			c.close()
		}
	}()
	live, err := openCursors(q, parts, id, sortedCols[id], newCursor, &all)
	if err != nil {
		return err
	}
	free := make(chan *rowBuffer, q.ahead+1)
	for range q.ahead {
		free <- new(rowBuffer)
	}
	buf := new(rowBuffer)
	buf.alloc(id, q.chunk, q.pool)
	flush := func(final bool) error {
		if buf.err != nil {
			return buf.err
		}
		if n := buf.len(); n == 0 || n < q.chunk && !final {
			return nil
		}
		b := buf
		err := q.send(writeJob{write: b.write, done: func() { b.reset(); free <- b }})
		buf = <-free
		buf.alloc(id, q.chunk, q.pool)
		return err
	}
	// The cursors in the order of their rows, the first of equals first
	// (partition order): the lowest row's is order[0], the others'
	// lowest order[1], and a cursor whose run ended goes back in its
	// place by a binary search, a few comparisons a run rather than two
	// passes over the cursors (a line's words at a time, the memory
	// table's comparisons were a tenth of a split pipeline's merge).
	type ranked struct {
		c   cursor
		ord int // its partition's place
	}
	// before says whether a's row comes before b's, a's partition first
	// of equals.
	before := func(a, b ranked) bool {
		if a.ord < b.ord {
			return !b.c.less(a.c)
		}
		return a.c.less(b.c)
	}
	order := make([]ranked, len(live))
	for i, c := range live {
		order[i] = ranked{c, i}
	}
	slices.SortStableFunc(order, func(a, b ranked) int {
		if before(a, b) {
			return -1
		}
		if before(b, a) {
			return 1
		}
		return 0
	})
	for len(order) > 0 {
		c := order[0].c
		var nc cursor
		if len(order) > 1 {
			nc = order[1].c
		}
		for {
			k := c.run(buf, nc, q.chunk-buf.len())
			if err := flush(false); err != nil {
				return err
			}
			ok, err := c.skip(k)
			if err != nil {
				return err
			}
			if !ok {
				order = slices.Delete(order, 0, 1)
				break
			}
			if nc != nil && !c.less(nc) {
				// Back in its place among the others.
				e := order[0]
				j := 1 + sort.Search(len(order)-1, func(i int) bool { return before(e, order[1+i]) })
				copy(order, order[1:j])
				order[j-1] = e
				break
			}
		}
	}
	return flush(true)
}

// instructionCursor reads one partition's instructions rows.
type instructionCursor struct {
	rowCursor
	seq                        *array.Uint64
	group, warp                *array.Int64
	lanes, addrs, maxc, faults *array.Uint32
	casFailed                  *array.Uint32
	sectors                    *array.Uint32
	dialect, op, typ, text     strCol
	// statics[k] is the instruction of text key k in this record; kinds[k]
	// the dialect, op and type keys of its first row, which every row of
	// the key has (checked once against the text for the first).
	statics []*trace.Static
	kinds   [][3]int32
	// oneKind: the record's rows have one dialect, op and type (key 0
	// each) and text keys.
	oneKind bool
	// pending: the cursor has read no record yet, and its first row's
	// seq is first, from its file's first page (pqFile.firstDelta): a
	// partition's records are decoded when its rows are due, not all
	// partitions' at the start (openInstructions).
	pending bool
	first   uint64
}

// seqAt is the seq of the cursor's current row: its first row's, read
// from its file, while it is pending.
func (c *instructionCursor) seqAt() uint64 {
	if c.pending {
		return c.first
	}
	if c.cp != nil {
		return c.cp.first // at its first row
	}
	return c.seq.Value(c.rowCursor.row)
}

// load moves a pending cursor to its first row, as openCursors moves
// every other: false if it has none.
func (c *instructionCursor) load() (bool, error) {
	c.pending = false
	return c.advance()
}

// openInstructions opens every partition's instructions, read ahead
// (prefetch), and returns the cursors (all, to close) and those with rows
// (live, in partition order). In a split pipeline a run of one
// partition's rows (a slice's instructions) is most of the table, and the
// others' rows wait for it: a cursor whose first seq its file's first
// page gives is left pending, its records decoded only once its rows are
// due (or next: mergeInstructions asks the one whose rows come after the
// run to start), so the merge holds two or three partitions' records at
// once, not every partition's, whose storage was most of the fresh
// memory the merge touched. Any other cursor reads its first record now,
// as openCursors does.
func openInstructions(q *writeQueue, parts []*partDir, all *[]*instructionCursor) ([]*instructionCursor, error) {
	pfs := make([]*pqFile, len(parts))
	for i, p := range parts {
		pf := p.pq[tInstructions]
		p.pq[tInstructions] = nil // the reader's, which closes it
		t, err := openTableFile(p.files[tInstructions], pf, instructionCols, q.pool)
		if err != nil {
			return nil, err
		}
		c := newInstructionCursor(t)
		*all = append(*all, c)
		if pf != nil {
			c.first, c.pending = pf.firstDelta(pf.column("seq"))
		}
		pfs[i] = pf
	}
	// The row groups copied, not decoded, when the merge calls the
	// Writer itself.
	if plan := planCopies(q.w, pfs); plan != nil {
		for i, c := range *all {
			c.t.copies, c.t.copyOps, c.t.storedBelow = plan.copy[i], plan.ops[i], plan.storedBelow
		}
	}
	for _, c := range *all {
		c.t.prefetch()
		if !c.pending {
			c.t.ahead() // its first record beside the others'
		}
	}
	return liveCursors(*all, func(c *instructionCursor) bool { return c.pending })
}

// instructionCols are the columns the merge reads of instructions: space
// is the text's.
var instructionCols = []string{"seq", "dialect", "op", "type", "group", "warp", "lanes", "addresses",
	"max_conflict", "faults", "text", "cas_failed", "sectors"}

func newInstructionCursor(t *tableReader) *instructionCursor {
	c := &instructionCursor{rowCursor: rowCursor{t: t, row: -1}}
	c.bind = func(rec arrow.RecordBatch) error {
		b := &binder{path: t.path, rec: rec, keysChecked: t.keysChecked}
		bindCol(b, &c.seq, "seq")
		bindStr(b, &c.dialect, "dialect")
		bindStr(b, &c.op, "op")
		bindStr(b, &c.typ, "type")
		bindCol(b, &c.group, "group")
		bindCol(b, &c.warp, "warp")
		bindCol(b, &c.lanes, "lanes")
		bindCol(b, &c.addrs, "addresses")
		bindCol(b, &c.maxc, "max_conflict")
		bindCol(b, &c.faults, "faults")
		bindStr(b, &c.text, "text")
		bindCol(b, &c.casFailed, "cas_failed")
		bindCol(b, &c.sectors, "sectors")
		if b.err == nil {
			c.statics = slices.Grow(c.statics[:0], c.text.distinct())[:c.text.distinct()]
			clear(c.statics)
			c.kinds = slices.Grow(c.kinds[:0], c.text.distinct())[:c.text.distinct()]
			c.oneKind = c.text.keys != nil && c.dialect.single() && c.op.single() && c.typ.single()
		}
		return b.err
	}
	return c
}

// static is the instruction of row r, parsed once a text (parsed, a map
// shared by the partitions' cursors), with its row's dialect, op and type
// checked against it.
func (c *instructionCursor) static(r int, parsed map[string]*trace.Static) (*trace.Static, error) {
	k := c.text.key(r)
	kind := [3]int32{c.dialect.key(r), c.op.key(r), c.typ.key(r)}
	if s := c.statics[k]; s != nil && (c.dialect.keys != nil && c.op.keys != nil && c.typ.keys != nil) && kind == c.kinds[k] {
		return s, nil
	}
	text := c.text.Value(r)
	s := parsed[text]
	if s == nil {
		var err error
		if s, err = trace.ParseStatic(text); err != nil {
			return nil, fmt.Errorf("%s: seq %d: %w", c.t.path, c.seq.Value(r), err)
		}
		parsed[strings.Clone(text)] = s
	}
	if s.Dialect.String() != c.dialect.Value(r) || s.Op.String() != c.op.Value(r) || s.Type.String() != c.typ.Value(r) {
		return nil, fmt.Errorf("%s: seq %d: %q parses as %s %s %s, the row says %s %s %s", c.t.path, c.seq.Value(r), text,
			s.Dialect, s.Op, s.Type, c.dialect.Value(r), c.op.Value(r), c.typ.Value(r))
	}
	c.statics[k], c.kinds[k] = s, kind
	return s, nil
}

// runRows is how many of c's rows from its current one on, within its
// record, are instructions next, next+1, ... below bound, at most room
// (at least one: the current row, instruction next).
func (c *instructionCursor) runRows(next, bound uint64, room int) int {
	seq := c.seq.Uint64Values()[c.rowCursor.row:c.rows]
	n := min(len(seq), room)
	if left := bound - next; left < uint64(n) {
		n = int(left)
	}
	for i := range n {
		if seq[i] != next+uint64(i) {
			return i
		}
	}
	return n
}

// staticsOf sets statics[i] to the instruction of row r0+i, for i <
// len(statics); on an error, it returns how many it set.
func (c *instructionCursor) staticsOf(r0 int, statics []*trace.Static, parsed map[string]*trace.Static) (int, error) {
	var (
		last  *trace.Static
		lastK = int32(-1)
		lastD [3]int32
		from  int // the first row of statics not yet set
	)
	n := len(statics)
	if c.oneKind {
		// One dialect, op and type in the record (key 0 each, checked
		// against a text's on its first row, static): a row's text key
		// alone says whether its Static is the previous row's.
		for i, k := range c.text.keys[r0 : r0+n] {
			if k != lastK {
				s, err := c.static(r0+i, parsed)
				if err != nil {
					return i, err
				}
				last, lastK = s, k
			}
			statics[i] = last
		}
		from = n
	}
	for i := from; i < n; i++ {
		r := r0 + i
		k := c.text.key(r)
		kind := [3]int32{c.dialect.key(r), c.op.key(r), c.typ.key(r)}
		if k != lastK || kind != lastD {
			s, err := c.static(r, parsed)
			if err != nil {
				return i, err
			}
			last, lastK, lastD = s, k, kind
		}
		statics[i] = last
	}
	return n, nil
}

// run appends to out the rows of c from its current one on, within its
// record, that are instructions next, next+1, ... below bound, as many as
// out's chunk has room for (at least one: the current row, instruction
// next), and returns how many. It goes a column at a time: a run of one
// partition's rows (a slice's instructions) is most of the table.
func (c *instructionCursor) run(next, bound uint64, parsed map[string]*trace.Static, out *instChunks) (int, error) {
	r0 := c.rowCursor.row
	n := c.runRows(next, bound, out.room())
	cols := out.cols
	o := cols.grow(n)
	if i, err := c.staticsOf(r0, cols.static[o:o+n], parsed); err != nil {
		cols.truncate(o + i)
		return i, err
	}
	c.copyCols(cols, o, r0, n)
	return n, nil
}

// copyCols copies rows [r0, r0+n) of c's numeric columns to rows [o,
// o+n) of cols.
func (c *instructionCursor) copyCols(cols *instCols, o, r0, n int) {
	copy(cols.seq[o:], c.seq.Uint64Values()[r0:r0+n])
	copy(cols.group[o:], c.group.Int64Values()[r0:r0+n])
	copy(cols.warp[o:], c.warp.Int64Values()[r0:r0+n])
	copy(cols.lanes[o:], c.lanes.Uint32Values()[r0:r0+n])
	copy(cols.addrs[o:], c.addrs.Uint32Values()[r0:r0+n])
	copy(cols.maxc[o:], c.maxc.Uint32Values()[r0:r0+n])
	copy(cols.faults[o:], c.faults.Uint32Values()[r0:r0+n])
	copy(cols.casFailed[o:], c.casFailed.Uint32Values()[r0:r0+n])
	copy(cols.sectors[o:], c.sectors.Uint32Values()[r0:r0+n])
}

// runDirect is run for a merge that calls the Writer itself
// (writeQueue.w): the rows go to it as they lie in c's record, with
// their Statics in statics (room for the chunk's rows), not copied
// into a chunk first. The rows out holds go first, and the later
// tables' chunks sent meanwhile after (drainLater).
func (c *instructionCursor) runDirect(next, bound uint64, parsed map[string]*trace.Static, out *instChunks, statics []*trace.Static) (int, error) {
	if err := out.flush(true); err != nil {
		return 0, err
	}
	r0 := c.rowCursor.row
	n := c.runRows(next, bound, len(statics))
	if _, err := c.staticsOf(r0, statics[:n], parsed); err != nil {
		return 0, err
	}
	if err := out.q.w.instructionCols(c.view(r0, n, statics)); err != nil {
		return 0, err
	}
	return n, out.q.drainLater()
}

// view is rows [r0, r0+n) of c's record as instCols, their Statics
// statics[:n].
func (c *instructionCursor) view(r0, n int, statics []*trace.Static) instCols {
	r1 := r0 + n
	return instCols{seq: c.seq.Uint64Values()[r0:r1], static: statics[:n],
		group: c.group.Int64Values()[r0:r1], warp: c.warp.Int64Values()[r0:r1],
		lanes: c.lanes.Uint32Values()[r0:r1], addrs: c.addrs.Uint32Values()[r0:r1],
		maxc: c.maxc.Uint32Values()[r0:r1], faults: c.faults.Uint32Values()[r0:r1],
		casFailed: c.casFailed.Uint32Values()[r0:r1], sectors: c.sectors.Uint32Values()[r0:r1]}
}

// row is row r's statistics.
func (c *instructionCursor) row(r int, s *trace.Static) engine.InstStat {
	return engine.InstStat{Seq: c.seq.Value(r), Static: s, Group: c.group.Value(r), Warp: c.warp.Value(r),
		Lanes: c.lanes.Value(r), Addresses: c.addrs.Value(r), MaxConflict: c.maxc.Value(r), Faults: c.faults.Value(r),
		CASFailed: c.casFailed.Value(r), Sectors: c.sectors.Value(r)}
}

// mergeInstructions combines the partitions' instructions rows and sends
// them to q: each partition's rows in trace order, an instruction's row in
// one or more of them (every one, for replay TRACE -partition; the one
// replay split chose, and those with faults of their own, for a split
// trace). The rows of one instruction must agree on its lanes and text;
// every instruction from 0 on must have a row. A partition's rows before
// every other partition's next (a run: a slice's instructions, whose rows
// one partition writes) go out together (instructionCursor.run), compared
// with one bound a row, their columns copied one at a time.
func mergeInstructions(q *writeQueue, parts []*partDir) error {
	var all []*instructionCursor
	defer func() {
		for _, c := range all {
			c.close()
		}
	}()
	live, err := openInstructions(q, parts, &all)
	if err != nil {
		return err
	}
	out := newInstChunks(q)
	var statics []*trace.Static // runDirect's
	if q.w != nil {
		statics = make([]*trace.Static, q.chunk)
	}
	parsed := map[string]*trace.Static{}
	next := uint64(0)
	seqOf := (*instructionCursor).seqAt
	for len(live) > 0 {
		lo, bound := 0, uint64(math.MaxUint64) // the cursor of the lowest seq; the others' lowest
		hi := -1                               // the cursor of bound
		for i := 1; i < len(live); i++ {
			if s := seqOf(live[i]); s < seqOf(live[lo]) {
				bound, lo, hi = seqOf(live[lo]), i, lo
			} else if s < bound {
				bound, hi = s, i
			}
		}
		// The pending cursors of the lowest seq read their first
		// records; then the pass starts again, on their rows' seqs.
		loaded, low := false, seqOf(live[lo])
		for i := 0; i < len(live); {
			d := live[i]
			if !d.pending || d.first != low {
				i++
				continue
			}
			loaded = true
			ok, err := d.load()
			if err != nil {
				return err
			}
			if ok {
				i++
			} else {
				live = slices.Delete(live, i, i+1)
			}
		}
		if loaded {
			continue
		}
		if hi >= 0 && live[hi].pending {
			live[hi].t.ahead() // its rows come after this run's
		}
		c := live[lo]
		if seq := seqOf(c); seq != next {
			if seq < next {
				return mergeErr("%s has instruction %d twice, or out of order: not a partition of one replay", c.t.path, seq)
			}
			return mergeErr("no partition has a row of instruction %d (%s has %d next): a partition is missing, or not of this replay", next, c.t.path, seq)
		}
		if c.cp != nil { // a row group to copy, whose rows no other partition has
			copied := false
			if bound-next >= uint64(c.cp.rows) {
				if err := out.flush(true); err != nil {
					return err
				}
				var err error
				if copied, err = q.w.copyRowGroup(c.cp); err != nil {
					return err
				}
			}
			if !copied {
				if err := c.uncopy(); err != nil {
					return err
				}
				continue // its rows, decoded
			}
			next += uint64(c.cp.rows)
			c.rowCursor.row = c.rows - 1
			ok, err := c.advance()
			if err != nil {
				return err
			}
			if !ok {
				live = slices.Delete(live, lo, lo+1)
			}
			if err := q.drainLater(); err != nil {
				return err
			}
			continue
		}
		if next < bound { // a run of c's
			for {
				var k int
				var err error
				if q.w != nil {
					k, err = c.runDirect(next, bound, parsed, out, statics)
				} else {
					k, err = c.run(next, bound, parsed, out)
				}
				if err != nil {
					return err
				}
				next += uint64(k)
				if err := out.flush(false); err != nil {
					return err
				}
				ok, err := c.skip(k)
				if err != nil {
					return err
				}
				if !ok {
					live = slices.Delete(live, lo, lo+1)
					break
				}
				if next >= bound || c.cp != nil || seqOf(c) != next {
					break // the next pass says why, or goes on
				}
			}
			continue
		}
		// Instruction next has rows in several partitions: the first's,
		// with the others' added.
		r := c.rowCursor.row
		s, err := c.static(r, parsed)
		if err != nil {
			return err
		}
		st, text := c.row(r, s), c.text.Value(r)
		for _, d := range live[lo+1:] {
			if seqOf(d) != next { // a pending cursor's first is past next
				continue
			}
			if d.cp != nil { // a row group to copy that is not one partition's alone after all
				if err := d.uncopy(); err != nil {
					return err
				}
			}
			r := d.rowCursor.row
			if d.lanes.Value(r) != st.Lanes || d.text.Value(r) != text {
				return mergeErr("%s says instruction %d is %q with %d lanes, %s says %q with %d: not partitions of one replay",
					d.t.path, next, d.text.Value(r), d.lanes.Value(r), c.t.path, text, st.Lanes)
			}
			st.Addresses += d.addrs.Value(r)
			st.Faults += d.faults.Value(r)
			st.CASFailed += d.casFailed.Value(r)
			st.Sectors += d.sectors.Value(r) // a sector lies in one partition's line
			st.MaxConflict = max(st.MaxConflict, d.maxc.Value(r))
		}
		out.cols.add(&st)
		next++
		if err := out.flush(false); err != nil {
			return err
		}
		for i := 0; i < len(live); {
			d := live[i]
			if seqOf(d) != next-1 {
				i++
				continue
			}
			ok, err := d.advance()
			if err != nil {
				return err
			}
			if ok {
				i++
			} else {
				live = slices.Delete(live, i, i+1)
			}
		}
	}
	return out.flush(true)
}
