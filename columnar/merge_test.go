package columnar

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	texts := []string{"atom.global.add.u32 %r1, [%rd1], %r2", "atom.global.exch.b32 d, [0x1000], -1",
		"atom.shared.add.s32 d,[a],1", "atom.global.cas.b64 _, [%rd4+-8], 0x7fffffffffffffff, %rd5"}
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
	opts := []Option{WithFormat(format), WithBatchRows(64), WithTables("instructions", "memory", "ops")}
	if n > 0 {
		opts[1] = WithBatchRows(50 + 13*i) // row groups unlike the merged table's
	}
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
// in row groups of other sizes than the merged table's.
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
		} {
			t.Run(fmt.Sprint(format, "/", tc.name), func(t *testing.T) {
				dir := filepath.Join(root, fmt.Sprint(format), tc.name)
				var parts []string
				for i := range tc.n {
					p := filepath.Join(dir, fmt.Sprintf("part=%d", i))
					f.write(t, p, i, tc.n, format, tc.inst, tc.line)
					parts = append(parts, p)
				}
				out := filepath.Join(dir, "merged")
				if err := Merge(parts, out, WithFormat(format), WithBatchRows(64)); err != nil {
					t.Fatal(err)
				}
				for _, table := range []string{"instructions", "memory", "ops"} {
					name := table + map[Format]string{FormatParquet: extParquet, FormatArrow: extArrow}[format]
					a, err := os.ReadFile(filepath.Join(whole, name))
					if err != nil {
						t.Fatal(err)
					}
					b, err := os.ReadFile(filepath.Join(out, name))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(a, b) {
						t.Errorf("merged %s differs from the whole replay's", name)
					}
				}
			})
		}
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
