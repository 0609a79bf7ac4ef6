package columnar

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// mergeFixture is a replay's instructions and memory rows, whole.
type mergeFixture struct {
	insts []engine.InstStat
	words []engine.Word
}

func newMergeFixture(t *testing.T, n int) mergeFixture {
	t.Helper()
	return newMergeFixtureOf(t, n, []string{"atom.global.add.u32 %r1, [%rd1], %r2", "atom.global.exch.b32 d, [0x1000], -1",
		"atom.shared.add.s32 d,[a],1", "atom.global.cas.b64 _, [%rd4+-8], 0x7fffffffffffffff, %rd5"})
}

// newMergeFixtureOf is newMergeFixture with the instruction texts texts.
func newMergeFixtureOf(t *testing.T, n int, texts []string) mergeFixture {
	t.Helper()
	var statics []*trace.Static
	for _, s := range texts {
		st, err := trace.ParseStatic(s)
		if err != nil {
			t.Fatal(err)
		}
		statics = append(statics, st)
	}
	var f mergeFixture
	for i := range n {
		f.insts = append(f.insts, engine.InstStat{Seq: uint64(i), Static: statics[(i*7/5)%len(statics)],
			Group: int64(i / 40), Warp: int64(i / 8 % 5), Lanes: 32 - uint32(i%3), Addresses: uint32(4 + i%29),
			MaxConflict: uint32(1 + i%11), Faults: uint32(i % 13 / 12), CASFailed: uint32(i % 17 / 15), Sectors: uint32(1 + i%9)})
	}
	// Words of two spaces and groups, each sorted like the memory table:
	// runs of a line's words, gaps, and lines of a few words.
	for _, sp := range []struct {
		space trace.Space
		group int64
	}{{trace.Global, -1}, {trace.Shared, 0}, {trace.Shared, 3}} {
		addr := uint64(0x1000)
		for k := range n {
			f.words = append(f.words, engine.Word{Space: sp.space, Group: sp.group, Addr: addr, Value: uint32(k * 2654435761)})
			addr += 4 + uint64(k%37/35)*128*uint64(1+k%3)
		}
	}
	return f
}

// write writes the fixture's rows of partition i of n (n 0: the whole) to
// dir: instruction rows by inst (the partitions of a row, each with a share
// of its counts), words by their line's partition.
func (f mergeFixture) write(t *testing.T, dir string, i, n int, format Format, inst func(seq uint64) []int, line func(addr uint64) int) {
	t.Helper()
	f.writeWith(t, dir, i, n, format, inst, line)
}

// writeWith is write with the Writer's options more after its own.
func (f mergeFixture) writeWith(t *testing.T, dir string, i, n int, format Format, inst func(seq uint64) []int, line func(addr uint64) int, more ...Option) {
	t.Helper()
	opts := []Option{WithFormat(format), WithBatchRows(64), WithTables("instructions", "memory", "ops")}
	if n > 0 {
		opts[1] = WithBatchRows(50 + 13*i) // row groups unlike the merged table's
	}
	opts = append(opts, more...)
	if n > 0 {
		opts = append(opts, WithMetadata(map[string]string{MetaPartition: fmt.Sprintf("%d/%d", i, n), MetaTrace: "xxh64:0 1"}))
	}
	w, err := New(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var insts []engine.InstStat
	for _, s := range f.insts {
		if n == 0 {
			insts = append(insts, s)
			continue
		}
		ps := inst(s.Seq)
		for k, p := range ps {
			if p != i {
				continue
			}
			// Partition ps[k]'s share: the first has what the others do
			// not, the others an address, a sector and a lower conflict,
			// the last the faults.
			r := s
			if k > 0 {
				r.Addresses, r.Faults, r.CASFailed, r.Sectors, r.MaxConflict = 1, 0, 0, 1, s.MaxConflict/2
				if k == len(ps)-1 {
					r.Faults = s.Faults
				}
			} else {
				r.Addresses -= uint32(len(ps) - 1)
				r.Sectors -= uint32(len(ps) - 1)
				if len(ps) > 1 {
					r.Faults = 0
				}
			}
			insts = append(insts, r)
		}
	}
	if err := w.Instructions(insts); err != nil {
		t.Fatal(err)
	}
	var words []engine.Word
	for _, x := range f.words {
		if n == 0 || line(x.Addr>>7) == i {
			words = append(words, x)
		}
	}
	if err := w.Memory(words); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestMergeRowOwnership: merging partitions gives the one replay's files,
// byte for byte, however the partitions own the rows: an instruction's
// row in one partition, in runs (a slice's, partition K mod N) or row by
// row, or in several (their counts combined); a word by its 128-byte
// line, in runs of a line's words or line by line; in Parquet and Arrow,
// in row groups of other sizes than the merged table's; in chunks of
// rows to the writer that cut runs (a partition's rows merged a column at
// a time, instructionCursor.run, memoryCursor.run) short.
func TestMergeRowOwnership(t *testing.T) {
	const rows = 1000
	f := newMergeFixture(t, rows)
	root := t.TempDir()
	for _, format := range []Format{FormatParquet, FormatArrow} {
		whole := filepath.Join(root, fmt.Sprint("whole-", format))
		f.write(t, whole, 0, 0, format, nil, nil)
		for _, tc := range []struct {
			name string
			n    int
			inst func(seq uint64) []int
			line func(line uint64) int
		}{
			{"runs", 3, func(s uint64) []int { return []int{int(s * 3 / rows)} }, func(l uint64) int { return int(l % 3) }},
			{"slices mod n", 4, func(s uint64) []int { return []int{int(s/97) % 4} }, func(l uint64) int { return int(l*7) % 4 }},
			{"row by row", 5, func(s uint64) []int { return []int{int(s % 5)} }, func(l uint64) int { return int(l/3) % 5 }},
			{"several", 3, func(s uint64) []int {
				if s%4 == 0 {
					return []int{int(s % 3), int(s+1) % 3}
				}
				if s%9 == 1 {
					return []int{2, 0, 1}
				}
				return []int{int(s/50) % 3}
			}, func(l uint64) int { return int(l % 3) }},
			{"one", 1, func(uint64) []int { return []int{0} }, func(uint64) int { return 0 }},
			// Every word in partition 1, whose row groups of 63 rows (a run
			// to a record's end) cross from one space and group to the next.
			{"words in one of two", 2, func(s uint64) []int { return []int{int(s/100) % 2} }, func(uint64) int { return 1 }},
		} {
			t.Run(fmt.Sprint(format, "/", tc.name), func(t *testing.T) {
				dir := filepath.Join(root, fmt.Sprint(format), tc.name)
				var parts []string
				for i := range tc.n {
					p := filepath.Join(dir, fmt.Sprintf("part=%d", i))
					f.write(t, p, i, tc.n, format, tc.inst, tc.line)
					parts = append(parts, p)
				}
				// Chunks of mergeChunk rows, and of 7: runs cut at a chunk's end.
				for _, chunk := range []int{mergeChunk, 7} {
					out := filepath.Join(dir, fmt.Sprint("merged-", chunk))
					if err := merge(parts, out, chunk, WithFormat(format), WithBatchRows(64)); err != nil {
						t.Fatal(err)
					}
					for _, name := range differingTables(t, whole, out, format, "instructions", "memory", "ops") {
						t.Errorf("chunks of %d rows: merged %s differs from the whole replay's", chunk, name)
					}
				}
			})
		}
	}
}

// differingTables returns the files of tables (in format) whose bytes in
// dir b are not those in dir a.
func differingTables(t *testing.T, a, b string, format Format, tables ...string) []string {
	t.Helper()
	var differ []string
	for _, table := range tables {
		name := table + map[Format]string{FormatParquet: extParquet, FormatArrow: extArrow}[format]
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			differ = append(differ, name)
		}
	}
	return differ
}

// oneKindTexts are instructions of one dialect, op and type: a record of
// theirs has a dialect, an op and a type of one key (instructionCursor's
// oneKind), its text keys alone telling its rows apart.
var oneKindTexts = []string{"atom.global.add.u32 %r1, [%rd1], %r2", "atom.global.add.u32 %r3, [%rd2+4], 1",
	"atom.global.add.u32 _, [0x1000], %r7"}

// TestMergeOneKind: rows of one dialect, op and type (oneKindTexts) merge
// into the one replay's files, byte for byte, the texts of a run changing
// row by row and in runs. The Parquet partitions' records take the
// oneKind path; the Arrow ones' (plain text strings) the other.
func TestMergeOneKind(t *testing.T) {
	const rows = 700
	f := newMergeFixtureOf(t, rows, oneKindTexts)
	root := t.TempDir()
	for _, format := range []Format{FormatParquet, FormatArrow} {
		whole := filepath.Join(root, fmt.Sprint("whole-", format))
		f.write(t, whole, 0, 0, format, nil, nil)
		for _, n := range []int{1, 3} {
			dir := filepath.Join(root, fmt.Sprint(format, "-", n))
			var parts []string
			for i := range n {
				p := filepath.Join(dir, fmt.Sprintf("part=%d", i))
				f.write(t, p, i, n, format, func(s uint64) []int { return []int{int(s/97) % n} }, func(l uint64) int { return int(l) % n })
				parts = append(parts, p)
			}
			out := filepath.Join(dir, "merged")
			if err := merge(parts, out, mergeChunk, WithFormat(format), WithBatchRows(64)); err != nil {
				t.Fatal(err)
			}
			for _, name := range differingTables(t, whole, out, format, "instructions", "ops") {
				t.Errorf("%s, %d partitions: merged %s differs from the whole replay's", format, n, name)
			}
		}
	}
}

// TestMergeOneKindRefusesRowUnlikeText: in a record of one dialect, op
// and type, a row whose text parses as another op is refused, named.
func TestMergeOneKindRefusesRowUnlikeText(t *testing.T) {
	f := newMergeFixtureOf(t, 20, oneKindTexts)
	exch, err := trace.ParseStatic("atom.global.exch.b32 d, [0x1000], -1")
	if err != nil {
		t.Fatal(err)
	}
	bad := *exch // an exch text in a row that says add.u32, as every row does
	bad.Op, bad.Type = f.insts[0].Static.Op, f.insts[0].Static.Type
	f.insts[5].Static = &bad
	dir := t.TempDir()
	p := filepath.Join(dir, "part=0")
	f.write(t, p, 0, 1, FormatParquet, func(uint64) []int { return []int{0} }, func(uint64) int { return 0 })
	err = Merge([]string{p}, filepath.Join(dir, "merged"))
	if err == nil || !strings.Contains(err.Error(), "seq 5") || !strings.Contains(err.Error(), "parses as") {
		t.Fatalf("merge: %v, want an error naming seq 5 and what its text parses as", err)
	}
}

// TestMergeRefusesBrokenRows: a partition without an instruction's row, or
// with one twice, or whose row disagrees with another's, is refused, with
// the instruction named.
func TestMergeRefusesBrokenRows(t *testing.T) {
	const rows = 300
	f := newMergeFixture(t, rows)
	for _, tc := range []struct {
		name string
		inst func(seq uint64) []int
		want string
	}{
		{"missing", func(s uint64) []int {
			if s == 123 {
				return nil
			}
			return []int{int(s/40) % 2}
		}, "no partition has a row of instruction 123"},
		{"twice", func(s uint64) []int {
			if s == 77 {
				return []int{1, 1}
			}
			return []int{int(s/40) % 2}
		}, "has instruction 77 twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var parts []string
			for i := range 2 {
				p := filepath.Join(dir, fmt.Sprintf("part=%d", i))
				f.write(t, p, i, 2, FormatParquet, tc.inst, func(l uint64) int { return int(l % 2) })
				parts = append(parts, p)
			}
			err := Merge(parts, filepath.Join(dir, "merged"))
			var me *MergeError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("merge: %v, want a MergeError saying %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "merged", "memory.parquet")); !os.IsNotExist(err) {
				t.Errorf("a refused merge left memory.parquet (%v)", err)
			}
		})
	}
}

// TestMergeRefusesRowUnlikeText: a row whose op is not its text's is
// refused, though the row before it has the same text (a run's rows are
// checked when their text or kind changes, not only their text).
func TestMergeRefusesRowUnlikeText(t *testing.T) {
	f := newMergeFixture(t, 20)
	add, err := trace.ParseStatic("atom.global.add.u32 %r1, [%rd1], %r2")
	if err != nil {
		t.Fatal(err)
	}
	bad := *add
	bad.Op = trace.OpExch
	for i := range f.insts {
		f.insts[i].Static = add
	}
	f.insts[5].Static = &bad
	dir := t.TempDir()
	p := filepath.Join(dir, "part=0")
	f.write(t, p, 0, 1, FormatParquet, func(uint64) []int { return []int{0} }, func(uint64) int { return 0 })
	err = Merge([]string{p}, filepath.Join(dir, "merged"))
	if err == nil || !strings.Contains(err.Error(), "seq 5") || !strings.Contains(err.Error(), "parses as") {
		t.Fatalf("merge: %v, want an error naming seq 5 and what its text parses as", err)
	}
}

// TestMergeReadAheadOnRequest: a merge's reader decodes a partition's
// next record only when its cursor asks (ahead, half way through its
// record, or next), never two the cursor has not taken: a partition whose
// rows wait for the others' holds one record, not two.
func TestMergeReadAheadOnRequest(t *testing.T) {
	f := newMergeFixture(t, 400)
	dir := filepath.Join(t.TempDir(), "part=0")
	f.write(t, dir, 0, 1, FormatParquet, func(uint64) []int { return []int{0} }, func(uint64) int { return 0 })
	tr, err := openTableCols(filepath.Join(dir, "instructions.parquet"), instructionCols, &wordPool{})
	if err != nil {
		t.Fatal(err)
	}
	var decoded atomic.Int32
	next := tr.next
	tr.next = func() (arrow.RecordBatch, *rowGroupCopy, error) { decoded.Add(1); return next() }
	tr.prefetch()
	defer tr.close()
	settle := func(want int32) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for decoded.Load() < want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // time to decode one more, which it must not
		if got := decoded.Load(); got != want {
			t.Fatalf("%d records decoded, want %d", got, want)
		}
	}
	c := newInstructionCursor(tr)
	if ok, err := c.advance(); !ok || err != nil {
		t.Fatalf("advance: %v %v", ok, err)
	}
	settle(1)
	if c.rows != 50 { // WithBatchRows(50) for partition 0 of a split
		t.Fatalf("a record of %d rows, want 50", c.rows)
	}
	for c.rowCursor.row < c.rows/2-1 {
		if _, err := c.advance(); err != nil {
			t.Fatal(err)
		}
	}
	settle(1)
	if _, err := c.advance(); err != nil { // half way: the next record
		t.Fatal(err)
	}
	settle(2)
	for c.rowCursor.row != 0 {
		if _, err := c.advance(); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.seq.Value(0); got != 50 {
		t.Fatalf("the second record starts at seq %d, want 50", got)
	}
	settle(2)
}

// TestBindStrRefusesKeyPastDictionary: a dictionary column whose key lies
// past its dictionary (an Arrow partition file, whose keys the IPC reader
// does not check) is the file's error, naming the column and row, not a
// panic in the merge.
func TestBindStrRefusesKeyPastDictionary(t *testing.T) {
	mem := memory.NewGoAllocator()
	dict := array.NewStringBuilder(mem)
	dict.AppendValues([]string{"ptx", "sass"}, nil)
	dictArr := dict.NewStringArray()
	defer dictArr.Release()
	for _, tc := range []struct {
		keys []int32
		want string
	}{
		{[]int32{0, 1, 0}, ""},
		{[]int32{0, 2, 0}, "row 1 has dictionary key 2 of 2 values"},
		{[]int32{-1}, "row 0 has dictionary key -1 of 2 values"},
	} {
		ib := array.NewInt32Builder(mem)
		ib.AppendValues(tc.keys, nil)
		idx := ib.NewInt32Array()
		dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
		col := array.NewDictionaryArray(dt, idx, dictArr)
		sc := arrow.NewSchema([]arrow.Field{{Name: "dialect", Type: dt}}, nil)
		rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(len(tc.keys)))
		b := &binder{path: "part=0/instructions.arrow", rec: rec}
		var dst strCol
		bindStr(b, &dst, "dialect")
		switch {
		case tc.want == "" && b.err != nil:
			t.Errorf("keys %v: %v", tc.keys, b.err)
		case tc.want == "" && dst.Value(1) != "sass":
			t.Errorf("keys %v: row 1 is %q, want sass", tc.keys, dst.Value(1))
		case tc.want != "" && (b.err == nil || !strings.Contains(b.err.Error(), tc.want) || !strings.Contains(b.err.Error(), "part=0/instructions.arrow: column dialect")):
			t.Errorf("keys %v: error %v, want one naming the file, the column and %q", tc.keys, b.err, tc.want)
		}
		rec.Release()
		col.Release()
		idx.Release()
	}
}

// TestMergeKeysChecked: a merge's reader of a Parquet partition file
// declares its dictionary keys checked (its pages' reader refuses a key
// past the dictionary), and bindStr then does not scan them; an Arrow
// file's it scans (TestBindStrRefusesKeyPastDictionary). A Parquet
// record of one dialect, op and type (oneKindTexts) binds as one kind.
func TestMergeKeysChecked(t *testing.T) {
	f := newMergeFixtureOf(t, 120, oneKindTexts)
	for _, tc := range []struct {
		format  Format
		file    string
		checked bool
	}{{FormatParquet, "instructions.parquet", true}, {FormatArrow, "instructions.arrow", false}} {
		dir := filepath.Join(t.TempDir(), "part=0")
		f.write(t, dir, 0, 1, tc.format, func(uint64) []int { return []int{0} }, func(uint64) int { return 0 })
		tr, err := openTableCols(filepath.Join(dir, tc.file), instructionCols, &wordPool{})
		if err != nil {
			t.Fatal(err)
		}
		if tr.keysChecked != tc.checked {
			t.Errorf("%s: keysChecked %v, want %v", tc.file, tr.keysChecked, tc.checked)
		}
		c := newInstructionCursor(tr)
		if ok, err := c.advance(); !ok || err != nil {
			t.Fatalf("%s: advance: %v %v", tc.file, ok, err)
		}
		// A Parquet file's strings read as dictionaries, of one string
		// each here; an Arrow file's are plain, a key a row.
		if one := c.dialect.single() && c.op.single() && c.typ.single(); one != tc.checked || c.oneKind != tc.checked {
			t.Errorf("%s: dialect, op, type of one key each %v (oneKind %v), want %v", tc.file, one, c.oneKind, tc.checked)
		}
		if got := c.dialect.Value(c.rows - 1); got != "ptx" {
			t.Errorf("%s: last row's dialect %q, want ptx", tc.file, got)
		}
		tr.close()
	}
}

// TestDrainLater checks how the merge that calls the Writer itself
// writes the later tables' chunks (writeQueue.drainLater): those sent so
// far, in the order sent, each given back (done), without waiting for
// more; a closed queue is dropped; once the merges failed, the chunks are
// given back unwritten.
func TestDrainLater(t *testing.T) {
	w := &Writer{}
	var wrote []int
	done := 0
	job := func(k int) writeJob {
		return writeJob{write: func(got *Writer) error {
			if got != w {
				t.Errorf("chunk %d written to another Writer", k)
			}
			wrote = append(wrote, k)
			return nil
		}, done: func() { done++ }}
	}
	stopped := new(atomic.Bool)
	later := &writeQueue{jobs: make(chan writeJob, 4), stopped: stopped}
	q := &writeQueue{w: w, later: []*writeQueue{later}, stopped: stopped}
	later.jobs <- job(1)
	later.jobs <- job(2)
	if err := q.drainLater(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(wrote) != "[1 2]" || done != 2 {
		t.Fatalf("first drain wrote chunks %v and gave back %d, want [1 2] and 2", wrote, done)
	}
	if err := q.drainLater(); err != nil || len(wrote) != 2 {
		t.Fatalf("a drain with nothing sent: %v, chunks %v", err, wrote)
	}
	later.jobs <- job(3)
	close(later.jobs)
	if err := q.drainLater(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(wrote) != "[1 2 3]" || done != 3 || q.later[0] != nil {
		t.Fatalf("last drain: chunks %v, %d given back, queue kept %v; want [1 2 3], 3, dropped", wrote, done, q.later[0] != nil)
	}
	later = &writeQueue{jobs: make(chan writeJob, 1), stopped: stopped}
	q.later = []*writeQueue{later}
	later.jobs <- job(4)
	stopped.Store(true)
	if err := q.drainLater(); err != errStopped || len(wrote) != 3 || done != 4 {
		t.Fatalf("drain after a failure: %v, chunks %v, %d given back; want errStopped, [1 2 3], 4", err, wrote, done)
	}
}
