package engine_test

import (
	"bufio"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/split"
	"github.com/gpureplay/replay/trace"
)

// writeBinary writes the text trace src as a binary trace of chunks of
// chunk records to a file in dir.
func writeBinary(t *testing.T, dir, src string, chunk int) string {
	t.Helper()
	tr, err := trace.NewTextReader(strings.NewReader(src), "t.tasm")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "t.zst")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	w, err := trace.NewBinaryWriter(bw, tr.Header(), trace.WithChunkInsts(chunk))
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Copy(w, tr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// combineRows is replay merge's rule for instructions rows: for each seq,
// the rows of the partitions that have one, lanes the same in all,
// addresses, faults, cas_failed and sectors added, max_conflict the
// largest.
func combineRows(t *testing.T, rows []engine.InstStat) []engine.InstStat {
	slices.SortStableFunc(rows, func(a, b engine.InstStat) int { return cmp.Compare(a.Seq, b.Seq) })
	var out []engine.InstStat
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1].Seq == r.Seq {
			o := &out[n-1]
			if o.Lanes != r.Lanes || o.Static.Text != r.Static.Text || o.Group != r.Group || o.Warp != r.Warp {
				t.Fatalf("two rows of instruction %d disagree: %+v and %+v", r.Seq, *o, r)
			}
			o.Addresses += r.Addresses
			o.Faults += r.Faults
			o.CASFailed += r.CASFailed
			o.Sectors += r.Sectors
			o.MaxConflict = max(o.MaxConflict, r.MaxConflict)
			continue
		}
		out = append(out, r)
	}
	return out
}

// TestSplitReplaysMakeTheWhole: random traces of all four dialects (every
// form of each, faults, .init and .region mid-trace, per-group memory,
// LSC vector, transposed and block accesses) split into n = 1, 3 and 8
// partitions and 1 to 4 slices: the partitions replayed from their slices
// give together exactly the single replay's memory, results and
// addresses rows, each once, and instructions rows that combine into the
// single replay's.
func TestSplitReplaysMakeTheWhole(t *testing.T) {
	gens := []struct {
		name string
		gen  func(r *rand.Rand, n int) string
	}{{"ptx", engine.RandomPTX}, {"sass", engine.RandomSASS}, {"visa", engine.RandomVISA}, {"lsc", engine.RandomLSC},
		{"adds", func(r *rand.Rand, n int) string { return engine.RandomAdds(r, n, "d") }}}
	for _, g := range gens {
		for seed := uint64(1); seed <= 2; seed++ {
			src := g.gen(rand.New(rand.NewPCG(seed, 77)), 120)
			dir := t.TempDir()
			path := writeBinary(t, dir, src, 9)
			whole := &engine.Collector{}
			f, _ := os.Open(path)
			fi, _ := f.Stat()
			x, err := trace.OpenBinaryIndex(f, fi.Size())
			if err != nil {
				t.Fatal(err)
			}
			wr, _ := x.Reader(0, x.NumChunks())
			if _, err := engine.Replay(t.Context(), wr, whole, engine.WithExplore(true)); err != nil {
				t.Fatalf("%s seed %d: whole: %v", g.name, seed, err)
			}
			f.Close()
			for _, n := range []int{1, 3, 8} {
				for m := 1; m <= 4; m++ {
					t.Run(fmt.Sprintf("%s/seed%d/n%d/m%d", g.name, seed, n, m), func(t *testing.T) {
						checkSplit(t, path, filepath.Join(dir, fmt.Sprintf("s%d-%d", n, m)), n, m, whole)
					})
				}
			}
		}
	}
}

func checkSplit(t *testing.T, path, out string, n, m int, whole *engine.Collector) {
	for k := range m {
		if _, err := split.Split(path, split.Options{Parts: n, Slice: k, Slices: m, Out: out}); err != nil {
			t.Fatalf("split %d/%d: %v", k, m, err)
		}
	}
	var res []engine.Result
	var words []engine.Word
	var addrs []engine.AddressStat
	var rows []engine.InstStat
	for i := range n {
		src, err := split.Open(out, i, n)
		if err != nil {
			t.Fatal(err)
		}
		var c engine.Collector
		opts := []engine.Option{engine.WithPartition(i, n), engine.WithExplore(true), engine.WithWorkers(1 + i%3), engine.WithBatchInsts([]int{4096, 7, 1}[i%3])}
		if _, err := engine.Replay(t.Context(), src, &c, opts...); err != nil {
			t.Fatalf("partition %d/%d: %v", i, n, err)
		}
		src.Close()
		checkBlockPath(t, out, i, n, &c)
		var lines []shard.LineOwner // the split's partition map: its lines are where it says
		for _, l := range src.Header().PartitionMap {
			lines = append(lines, shard.LineOwner{Key: l.Key, Line: l.Line, Part: l.Part})
		}
		pt, err := shard.NewPartitionerMap(n, lines)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.Words {
			if got := pt.Of(engine.PartitionKey(w.Space, w.Group), w.Addr); got != i {
				t.Fatalf("partition %d/%d holds word %s %#x of partition %d", i, n, w.Space, w.Addr, got)
			}
		}
		res = append(res, c.Res...)
		words = append(words, c.Words...)
		addrs = append(addrs, c.Addrs...)
		rows = append(rows, c.Stats...)
	}
	slices.SortFunc(res, func(a, b engine.Result) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Lane, b.Lane), cmp.Compare(a.Elem, b.Elem))
	})
	wordKey := func(a, b engine.Word) int {
		return cmp.Or(cmp.Compare(a.Space.String(), b.Space.String()), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Addr, b.Addr))
	}
	slices.SortFunc(words, wordKey)
	slices.SortFunc(addrs, func(a, b engine.AddressStat) int {
		return wordKey(engine.Word{Space: a.Space, Group: a.Group, Addr: a.Addr}, engine.Word{Space: b.Space, Group: b.Group, Addr: b.Addr})
	})
	if !reflect.DeepEqual(res, whole.Res) && !(len(res) == 0 && len(whole.Res) == 0) {
		t.Errorf("%d result rows together, the whole replay %d (or different rows)", len(res), len(whole.Res))
		for i := 0; i < min(len(res), len(whole.Res)); i++ {
			if res[i] != whole.Res[i] {
				t.Errorf("first difference at row %d: %+v, whole %+v", i, res[i], whole.Res[i])
				break
			}
		}
	}
	if !reflect.DeepEqual(words, whole.Words) && !(len(words) == 0 && len(whole.Words) == 0) {
		t.Errorf("%d memory rows together, the whole replay %d (or different rows)", len(words), len(whole.Words))
	}
	if !reflect.DeepEqual(addrs, whole.Addrs) && !(len(addrs) == 0 && len(whole.Addrs) == 0) {
		t.Errorf("%d addresses rows together, the whole replay %d (or different rows)", len(addrs), len(whole.Addrs))
	}
	got := combineRows(t, rows)
	if len(got) != len(whole.Stats) {
		t.Fatalf("%d instructions rows combined, the whole replay has %d", len(got), len(whole.Stats))
	}
	for i := range got {
		g, w := got[i], whole.Stats[i]
		if g.Static.Text != w.Static.Text {
			t.Fatalf("instruction %d is %q, whole %q", g.Seq, g.Static.Text, w.Static.Text)
		}
		g.Static, w.Static = nil, nil
		if g != w {
			t.Fatalf("instruction %d combines to %+v, whole %+v", got[i].Seq, got[i], whole.Stats[i])
		}
	}
}

// TestSplitRowOwnerIsWindowModN: every instruction has its row in the
// file of the partition of its window, ⌊seq/RowWindow⌋ mod n
// (split.RowPartition), once (with mask 0 where none of its lanes falls
// there), whatever slice it is in, and no other partition's file holds
// its row; a partition's rows ascend. The trace holds two windows and a
// part of a third, and the slices' edges fall inside windows.
func TestSplitRowOwnerIsWindowModN(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(".region global 0x100000 0x100000\n")
	r := rand.New(rand.NewPCG(3, 9))
	const insts = 2*split.RowWindow + 5000
	for range insts {
		// Two lanes a warp, on a line: most rows without lanes of
		// their partition.
		fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b; | a=0x%x:4 b=1 mask=0x3\n", 0x100000+r.IntN(0x2000)*128)
	}
	path := writeBinary(t, dir, b.String(), 4096)
	for _, c := range []struct{ n, m int }{{3, 3}, {3, 5}, {8, 8}, {4, 2}} {
		out := filepath.Join(dir, fmt.Sprintf("s%d-%d", c.n, c.m))
		var rows, empty uint64
		seen := make([]bool, insts)
		for k := range c.m {
			sum, err := split.Split(path, split.Options{Parts: c.n, Slice: k, Slices: c.m, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			var sliceRows uint64
			for i := range c.n {
				f, err := os.Open(filepath.Join(split.PartDir(out, i), split.SliceName(k)))
				if err != nil {
					t.Fatal(err)
				}
				fi, _ := f.Stat()
				x, err := trace.OpenBinaryIndex(f, fi.Size())
				if err != nil {
					t.Fatal(err)
				}
				r, _ := x.Reader(0, x.NumChunks())
				lastRow := -1
				for {
					in, err := r.Next()
					if err != nil {
						break
					}
					if in.Dir != nil || !in.Part.Row {
						continue
					}
					if want := int(in.Seq/split.RowWindow) % c.n; i != want || want != split.RowPartition(in.Seq, c.n) {
						t.Fatalf("n=%d M=%d: instruction %d (slice %d) has its row in partition %d, not %d", c.n, c.m, in.Seq, k, i, want)
					}
					if int(in.Seq) <= lastRow || seen[in.Seq] {
						t.Fatalf("n=%d M=%d: row of instruction %d after %d, or twice", c.n, c.m, in.Seq, lastRow)
					}
					lastRow, seen[in.Seq] = int(in.Seq), true
					sliceRows++
					if in.Mask == 0 {
						empty++
					}
				}
				r.Close()
				f.Close()
			}
			if sliceRows != sum.Instructions {
				t.Errorf("n=%d M=%d slice %d: %d rows for %d instructions", c.n, c.m, k, sliceRows, sum.Instructions)
			}
			rows += sliceRows
		}
		if rows != insts || empty == 0 {
			t.Errorf("n=%d M=%d: %d rows for %d instructions, %d without lanes of their partition", c.n, c.m, rows, insts, empty)
		}
	}
}

// leanSink is a Collector that wants no per-lane rows nor the addresses
// table: a replay of a split source into it takes the block path.
type leanSink struct{ engine.Collector }

func (*leanSink) Caps() engine.SinkCaps { return 0 }

// checkBlockPath replays partition i of n of the split directory out into
// a leanSink, which takes the block path (trace.CapBlock), and checks that
// it read every instruction a block at a time and left the memory and the
// instructions rows of full, the batch path's replay of it.
func checkBlockPath(t *testing.T, out string, i, n int, full *engine.Collector) {
	t.Helper()
	src, err := split.Open(out, i, n)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var lean leanSink
	sum, err := engine.Replay(t.Context(), src, &lean, engine.WithPartition(i, n))
	if err != nil {
		t.Fatalf("partition %d/%d, block path: %v", i, n, err)
	}
	if sum.BlockInsts != sum.Instructions {
		t.Errorf("partition %d/%d: %d of %d instructions taken a block at a time", i, n, sum.BlockInsts, sum.Instructions)
	}
	if !reflect.DeepEqual(lean.Words, full.Words) && !(len(lean.Words) == 0 && len(full.Words) == 0) {
		t.Errorf("partition %d/%d: the block path leaves %d words, the batch path %d (or other values)", i, n, len(lean.Words), len(full.Words))
	}
	if len(lean.Stats) != len(full.Stats) {
		t.Fatalf("partition %d/%d: the block path writes %d instructions rows, the batch path %d", i, n, len(lean.Stats), len(full.Stats))
	}
	for k := range lean.Stats {
		g, w := lean.Stats[k], full.Stats[k]
		if g.Static.Text != w.Static.Text {
			t.Fatalf("partition %d/%d: block path row of %q, batch path of %q", i, n, g.Static.Text, w.Static.Text)
		}
		g.Static, w.Static = nil, nil // each replay's reader parsed its own
		if g != w {
			t.Fatalf("partition %d/%d: block path row %+v, batch path %+v", i, n, lean.Stats[k], full.Stats[k])
		}
	}
}
