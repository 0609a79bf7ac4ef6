package columnar

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gpureplay/replay/engine"
)

// TestSeqRowGroups: under WithSeqRowGroups(n) the instructions table's
// row groups are its rows' windows of seqs, [k·n, (k+1)·n), whatever
// the calls' sizes and the gaps between seqs, and the file records each
// row group's ops totals (MetaRowGroups), which add up to the ops table
// a Writer without the option writes, byte for byte.
func TestSeqRowGroups(t *testing.T) {
	f := newMergeFixture(t, 1000)
	// A partition's rows: runs of seqs (slices) and single rows (an
	// instruction with a fault of the partition's own).
	var rows []engine.InstStat
	for _, s := range f.insts {
		if s.Seq < 150 || s.Seq >= 400 && s.Seq < 700 || s.Seq%97 == 5 {
			rows = append(rows, s)
		}
	}
	const n = 64
	root := t.TempDir()
	write := func(dir string, opts ...Option) {
		w, err := New(dir, append([]Option{WithTables("instructions", "ops"), WithBatchRows(50)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := 0, 1; i < len(rows); i, k = i+k, k%23+7 { // calls of 1 to 29 rows
			if err := w.Instructions(rows[i:min(i+k, len(rows))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	seqDir, plainDir := filepath.Join(root, "seq"), filepath.Join(root, "plain")
	write(seqDir, WithSeqRowGroups(n))
	write(plainDir)
	if d := differingTables(t, plainDir, seqDir, FormatParquet, "ops"); len(d) > 0 {
		t.Errorf("%v differs from a Writer's without WithSeqRowGroups", d)
	}
	pf, err := openParquet(filepath.Join(seqDir, "instructions.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.close()
	var m rowGroupsMeta
	if err := json.Unmarshal([]byte(pf.metadata()[MetaRowGroups]), &m); err != nil {
		t.Fatalf("%s: %v", MetaRowGroups, err)
	}
	if m.SeqRows != n || m.StoredBelow != storedPageBytes || len(m.Ops) != len(pf.rgs) {
		t.Fatalf("%s says %d seq rows, pages stored below %d, ops of %d row groups; want %d, %d, %d",
			MetaRowGroups, m.SeqRows, m.StoredBelow, len(m.Ops), n, storedPageBytes, len(pf.rgs))
	}
	// The rows' windows, in order, with their rows and totals.
	type window struct {
		win, lo, hi uint64
		rows        int64
		ops         map[string]rowGroupOp
	}
	var want []window
	for _, s := range rows {
		if len(want) == 0 || want[len(want)-1].win != s.Seq/n {
			want = append(want, window{win: s.Seq / n, lo: s.Seq, ops: map[string]rowGroupOp{}})
		}
		w := &want[len(want)-1]
		w.hi = s.Seq
		w.rows++
		key := s.Static.Dialect.String() + s.Static.Op.String() + s.Static.Type.String() + s.Static.Space.String()
		o := w.ops[key]
		o.Instructions++
		o.Lanes += uint64(s.Lanes)
		o.Faults += uint64(s.Faults)
		o.MaxConflict = max(o.MaxConflict, s.MaxConflict)
		o.ConflictSum += uint64(s.MaxConflict)
		o.Sectors += uint64(s.Sectors)
		w.ops[key] = o
	}
	if len(pf.rgs) != len(want) {
		t.Fatalf("%d row groups, want one a window: %d", len(pf.rgs), len(want))
	}
	for i, w := range want {
		g := &pf.rgs[i]
		st := g.chunks[0].stats
		lo, hi := binary.LittleEndian.Uint64(st.min), binary.LittleEndian.Uint64(st.max)
		if g.rows != w.rows || lo != w.lo || hi != w.hi {
			t.Errorf("row group %d: %d rows, seqs %d to %d; want %d, %d to %d", i, g.rows, lo, hi, w.rows, w.lo, w.hi)
		}
		if len(m.Ops[i]) != len(w.ops) {
			t.Errorf("row group %d: %d ops rows, want %d", i, len(m.Ops[i]), len(w.ops))
		}
		for _, o := range m.Ops[i] {
			x := w.ops[o.Dialect+o.Op+o.Type+o.Space]
			x.Dialect, x.Op, x.Type, x.Space = o.Dialect, o.Op, o.Type, o.Space
			if o != x {
				t.Errorf("row group %d: ops row %+v, want %+v", i, o, x)
			}
		}
	}
}

// TestMergeCopiesRowGroups: partitions whose instructions are written
// with WithSeqRowGroups merge into the one replay's files, byte for
// byte, the row groups of a window of seqs that one partition alone has
// copied (every one of them), the others' rows merged as ever: a
// partition's rows in runs (a split's slices), or with rows of several
// partitions in a window.
func TestMergeCopiesRowGroups(t *testing.T) {
	const rows, win = 1000, 64
	f := newMergeFixture(t, rows)
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	f.write(t, whole, 0, 0, FormatParquet, nil, nil)
	for _, tc := range []struct {
		name string
		n    int
		inst func(seq uint64) []int
	}{
		{"slices", 3, func(s uint64) []int { return []int{int(s * 3 / rows)} }},
		{"one", 1, func(uint64) []int { return []int{0} }},
		{"slices mod n", 4, func(s uint64) []int { return []int{int(s/200) % 4} }},
		{"several", 3, func(s uint64) []int {
			if s%150 == 7 {
				return []int{int(s * 3 / rows), int(s*3/rows+1) % 3} // a row of two
			}
			return []int{int(s * 3 / rows)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(root, tc.name)
			var parts []string
			for i := range tc.n {
				p := filepath.Join(dir, fmt.Sprintf("part=%d", i))
				f.writeWith(t, p, i, tc.n, FormatParquet, tc.inst, func(l uint64) int { return int(l) % tc.n }, WithSeqRowGroups(win))
				parts = append(parts, p)
			}
			// The windows whose rows one partition alone has.
			want := 0
			for lo := uint64(0); lo < rows; lo += win {
				owners := map[int]bool{}
				for s := lo; s < min(lo+win, rows); s++ {
					for _, p := range tc.inst(s) {
						owners[p] = true
					}
				}
				if len(owners) == 1 {
					want++
				}
			}
			for _, chunk := range []int{mergeChunk, 7} {
				out := filepath.Join(dir, fmt.Sprint("merged-", chunk))
				copied := 0
				if err := merge(parts, out, chunk, WithBatchRows(win), withCopiedRowGroups(&copied)); err != nil {
					t.Fatal(err)
				}
				for _, name := range differingTables(t, whole, out, FormatParquet, "instructions", "memory", "ops") {
					t.Errorf("chunks of %d rows: merged %s differs from the whole replay's", chunk, name)
				}
				if copied != want || want == 0 {
					t.Errorf("chunks of %d rows: %d row groups copied, want %d (> 0)", chunk, copied, want)
				}
			}
			// Into other row groups than the partitions' windows, or into
			// Arrow too, nothing is copied, and the files are the same.
			for _, o := range [][]Option{{WithBatchRows(2 * win)}, {WithBatchRows(win), WithFormat(FormatBoth)}} {
				out := filepath.Join(dir, "merged-other")
				copied := 0
				if err := merge(parts, out, mergeChunk, append(o, withCopiedRowGroups(&copied))...); err != nil {
					t.Fatal(err)
				}
				if copied != 0 {
					t.Errorf("%d row groups copied into a file of other row groups or formats", copied)
				}
			}
		})
	}
}

// TestMergeCopiesWithoutOps: partitions with the instructions table and
// not the ops table (no ops totals recorded) have their row groups
// copied too, into the one replay's file.
func TestMergeCopiesWithoutOps(t *testing.T) {
	const rows, win = 1000, 64
	f := newMergeFixture(t, rows)
	root := t.TempDir()
	only := WithTables("instructions")
	whole := filepath.Join(root, "whole")
	f.writeWith(t, whole, 0, 0, FormatParquet, nil, nil, only)
	var parts []string
	for i := range 2 {
		p := filepath.Join(root, fmt.Sprintf("part=%d", i))
		f.writeWith(t, p, i, 2, FormatParquet, func(s uint64) []int { return []int{int(s * 2 / rows)} }, func(uint64) int { return 0 }, only, WithSeqRowGroups(win))
		parts = append(parts, p)
	}
	out := filepath.Join(root, "merged")
	copied := 0
	if err := merge(parts, out, mergeChunk, WithBatchRows(win), withCopiedRowGroups(&copied)); err != nil {
		t.Fatal(err)
	}
	if d := differingTables(t, whole, out, FormatParquet, "instructions"); len(d) > 0 {
		t.Errorf("merged %v differs from the whole replay's", d)
	}
	if copied != 15 { // the 16 windows but the one of seq 500
		t.Errorf("%d row groups copied, want 15", copied)
	}
}

// TestMergeCopyRefused: a row group is copied only where its bytes are
// the ones the merged file's writer would encode. A row group whose page
// did not compress (stored raw, as a page that zstd does not shrink by a
// sixteenth is: its column's state, not only its rows, made it so) is
// decoded; a row group after a merged one whose page did not compress
// (the writer's column then stores its next pages raw) is decoded too,
// though its partition could give it (copyRowGroup refuses it,
// rowCursor.uncopy). Either way the files are the one replay's.
func TestMergeCopyRefused(t *testing.T) {
	const rows, win = 4096, 1024
	for _, tc := range []struct {
		name   string
		random func(seq uint64) bool // rows whose addresses do not compress
		copied int
	}{
		// Window 0, partition 0's alone, does not compress: decoded; the
		// writer then stores pages raw for windows 1 to 3.
		{"partition's page", func(s uint64) bool { return s < win }, 0},
		// Window 1, of both partitions, does not compress: window 0 is
		// copied, windows 2 and 3, partition 1's alone, are not.
		{"writer's state", func(s uint64) bool { return s >= win && s < 2*win }, 1},
		// All compress: windows 0, 2 and 3 copied.
		{"none", func(uint64) bool { return false }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newMergeFixture(t, rows)
			x := uint32(1)
			for i := range f.insts {
				s := &f.insts[i]
				s.Addresses = uint32(s.Seq%7) * 1234567 // pages of 3 KiB that compress
				if tc.random(s.Seq) {
					x = x*1664525 + 1013904223
					s.Addresses = x
				}
			}
			root := t.TempDir()
			whole := filepath.Join(root, "whole")
			f.writeWith(t, whole, 0, 0, FormatParquet, nil, nil, WithBatchRows(win))
			owner := func(s uint64) []int { return []int{min(int(s/1500), 1)} } // [0, 1500) and [1500, 4096)
			var parts []string
			for i := range 2 {
				p := filepath.Join(root, fmt.Sprintf("part=%d", i))
				f.writeWith(t, p, i, 2, FormatParquet, owner, func(l uint64) int { return int(l) % 2 }, WithSeqRowGroups(win))
				parts = append(parts, p)
			}
			out := filepath.Join(root, "merged")
			copied := 0
			if err := merge(parts, out, mergeChunk, WithBatchRows(win), withCopiedRowGroups(&copied)); err != nil {
				t.Fatal(err)
			}
			for _, name := range differingTables(t, whole, out, FormatParquet, "instructions", "memory", "ops") {
				t.Errorf("merged %s differs from the whole replay's", name)
			}
			if copied != tc.copied {
				t.Errorf("%d row groups copied, want %d", copied, tc.copied)
			}
		})
	}
}

// TestSeqRowGroupsFreshStates: under WithSeqRowGroups each instructions
// row group is encoded from the state of no page stored raw, not from
// the row group's before it: after a row group whose page did not
// compress (stored raw, and the column's next pages with it, were the
// state carried over), the next one's pages are compressed, so that a
// merge may copy it (readCopy takes it).
func TestSeqRowGroupsFreshStates(t *testing.T) {
	const win = 1024
	f := newMergeFixture(t, 3*win)
	x := uint32(1)
	for i := range f.insts {
		s := &f.insts[i]
		s.Addresses = uint32(s.Seq%7) * 1234567
		if s.Seq < win {
			x = x*1664525 + 1013904223
			s.Addresses = x // window 0's do not compress
		}
	}
	dir := t.TempDir()
	w, err := New(dir, WithTables("instructions", "ops"), WithSeqRowGroups(win))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Instructions(f.insts); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	pf, err := openParquet(filepath.Join(dir, "instructions.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.close()
	if len(pf.rgs) != 3 {
		t.Fatalf("%d row groups, want 3", len(pf.rgs))
	}
	pool := &wordPool{}
	for rg, want := range []bool{false, true, true} {
		cp, err := pf.readCopy(rg, storedPageBytes, pool)
		if err != nil {
			t.Fatal(err)
		}
		if got := cp != nil; got != want {
			t.Errorf("row group %d: every page compressed (a copy may take it): %v, want %v", rg, got, want)
		}
	}
}
