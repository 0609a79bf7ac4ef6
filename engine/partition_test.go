package engine

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/shard"
)

// CombineStats combines the instruction statistics of the n partitions of
// one replay, each in trace order, into the whole replay's: lanes is every
// partition's, addresses, faults and sectors add up, max_conflict is the largest.
// It is the rule docs/OUTPUT.md gives and `replay merge` applies.
func combineStats(parts [][]InstStat) []InstStat {
	out := slices.Clone(parts[0])
	for _, p := range parts[1:] {
		for i := range out {
			out[i].Addresses += p[i].Addresses
			out[i].Faults += p[i].Faults
			out[i].CASFailed += p[i].CASFailed
			out[i].Sectors += p[i].Sectors
			out[i].MaxConflict = max(out[i].MaxConflict, p[i].MaxConflict)
		}
	}
	return out
}

func wordKey(a, b Word) int {
	return cmp.Or(cmp.Compare(a.Space.String(), b.Space.String()), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Addr, b.Addr))
}

// columnCollector is a Collector that takes the results as columns
// (CapResultColumns).
type columnCollector struct{ *Collector }

func (c *columnCollector) Caps() SinkCaps { return c.Collector.Caps() | CapResultColumns }

// checkPartitions replays src whole and as n partitions (each under its
// own worker and batch count) and checks that the partitions' memory,
// results and addresses rows are the whole replay's, each exactly once,
// that their statistics combine to the whole replay's, and that each
// partition holds only addresses of its own.
func checkPartitions(t *testing.T, src string, n int) {
	t.Helper()
	var whole Collector
	if _, err := Replay(t.Context(), textSource(t, src), &whole, WithExplore(true)); err != nil {
		t.Fatalf("whole: %v", err)
	}
	var res []Result
	var words []Word
	var addrs []AddressStat
	var stats [][]InstStat
	for i := range n {
		var c Collector
		var sink Sink = &c
		if i%2 == 1 {
			sink = &columnCollector{&c} // the results as columns, as columnar.Writer takes them
		}
		opts := []Option{WithPartition(i, n), WithExplore(true), WithWorkers(1 + i%3), WithBatchInsts([]int{4096, 7, 1}[i%3])}
		if _, err := Replay(t.Context(), textSource(t, src), sink, opts...); err != nil {
			t.Fatalf("partition %d/%d: %v", i, n, err)
		}
		for _, w := range c.Words {
			if got := PartitionOf(w.Space, w.Group, w.Addr, n); got != i {
				t.Fatalf("partition %d/%d holds word %s %#x of partition %d", i, n, w.Space, w.Addr, got)
			}
		}
		res = append(res, c.Res...)
		words = append(words, c.Words...)
		addrs = append(addrs, c.Addrs...)
		stats = append(stats, c.Stats)
	}
	slices.SortFunc(res, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Lane, b.Lane), cmp.Compare(a.Elem, b.Elem))
	})
	slices.SortFunc(words, wordKey)
	slices.SortFunc(addrs, func(a, b AddressStat) int {
		return wordKey(Word{Space: a.Space, Group: a.Group, Addr: a.Addr}, Word{Space: b.Space, Group: b.Group, Addr: b.Addr})
	})
	if !reflect.DeepEqual(res, whole.Res) && !(len(res) == 0 && len(whole.Res) == 0) {
		t.Errorf("%d partitions: %d result rows together, the whole replay %d (or different rows)", n, len(res), len(whole.Res))
		for i := 0; i < min(len(res), len(whole.Res)); i++ {
			if res[i] != whole.Res[i] {
				t.Errorf("first difference at row %d: %+v, whole %+v", i, res[i], whole.Res[i])
				break
			}
		}
	}
	if !reflect.DeepEqual(words, whole.Words) && !(len(words) == 0 && len(whole.Words) == 0) {
		t.Errorf("%d partitions: %d memory rows together, the whole replay %d (or different rows)", n, len(words), len(whole.Words))
	}
	if !reflect.DeepEqual(addrs, whole.Addrs) && !(len(addrs) == 0 && len(whole.Addrs) == 0) {
		t.Errorf("%d partitions: %d addresses rows together, the whole replay %d (or different rows)", n, len(addrs), len(whole.Addrs))
	}
	if got := combineStats(stats); !reflect.DeepEqual(got, whole.Stats) {
		for i := range got {
			if got[i] != whole.Stats[i] {
				t.Errorf("%d partitions: instruction %d combines to %+v, whole %+v", n, got[i].Seq, got[i], whole.Stats[i])
				break
			}
		}
	}
}

// TestPartitionsMakeTheWhole: for random traces of all four dialects
// (with .init and .region mid-trace, shared memory per group, faults),
// and a PTX trace of scattered adds over 256 pages, n = 1, 2, 3 and 7
// partitions together give exactly the whole replay.
func TestPartitionsMakeTheWhole(t *testing.T) {
	gens := []struct {
		name string
		gen  randomTrace
	}{{"ptx", randomPTX}, {"sass", randomSASS}, {"visa", randomVISA}, {"lsc", randomLSC},
		{"adds", func(r *rand.Rand, n int) string { return randomAdds(r, n, "d") }}}
	for _, g := range gens {
		for seed := uint64(1); seed <= 4; seed++ {
			src := g.gen(rand.New(rand.NewPCG(seed, 21)), 80)
			for _, n := range []int{1, 2, 3, 7} {
				t.Run(fmt.Sprintf("%s/seed%d/n%d", g.name, seed, n), func(t *testing.T) {
					checkPartitions(t, src, n)
				})
			}
		}
	}
}

// TestPartitionSplitsMemory: on 256 pages of scattered adds, each of 3
// partitions holds some pages and none holds them all: a partition's
// memory is its share, not the whole.
func TestPartitionSplitsMemory(t *testing.T) {
	src := randomAdds(rand.New(rand.NewPCG(5, 5)), 200, "_")
	var whole noAddrs
	if _, err := Replay(t.Context(), textSource(t, src), &whole); err != nil {
		t.Fatal(err)
	}
	total := 0
	for i := range 3 {
		var c noAddrs
		if _, err := Replay(t.Context(), textSource(t, src), &c, WithPartition(i, 3)); err != nil {
			t.Fatal(err)
		}
		if len(c.Words) == 0 || len(c.Words) >= len(whole.Words) {
			t.Errorf("partition %d/3 holds %d of the %d words", i, len(c.Words), len(whole.Words))
		}
		total += len(c.Words)
	}
	if total != len(whole.Words) {
		t.Errorf("the partitions hold %d words together, the whole replay %d", total, len(whole.Words))
	}
	for _, bad := range [][2]int{{0, 0}, {3, 3}, {-1, 2}, {0, shard.MaxPartitions + 1}} {
		if err := ValidateOptions(WithPartition(bad[0], bad[1])); err == nil {
			t.Errorf("WithPartition(%d, %d) accepted", bad[0], bad[1])
		}
	}
}

// TestPartitionSpreadsHotArray: a histogram of 4096 bins (16 KiB: four
// pages) replayed as 8 partitions gives each partition 512 of the bins
// (128/8 lines of 32 words), where owning whole pages left at least half
// of the partitions without a bin.
func TestPartitionSpreadsHotArray(t *testing.T) {
	var b strings.Builder
	b.WriteString(".region global 0x100000 0x4000\n")
	for i := range 64 {
		b.WriteString("atom.global.add.u32 _, [%rd1], 1 | %rd1=[")
		for l := range 32 {
			if l > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "0x%x", 0x100000+4*((i*37+l*129)%4096))
		}
		b.WriteString("]\n")
	}
	for i := range 4096 / 32 {
		fmt.Fprintf(&b, "atom.global.add.u32 _, [%%rd1], 1 | %%rd1=0x%x:4\n", 0x100000+128*i)
	}
	src := b.String()
	var whole noAddrs
	if _, err := Replay(t.Context(), textSource(t, src), &whole); err != nil {
		t.Fatal(err)
	}
	if len(whole.Words) != 4096 {
		t.Fatalf("the whole replay touched %d words, want 4096", len(whole.Words))
	}
	for i := range 8 {
		var c noAddrs
		if _, err := Replay(t.Context(), textSource(t, src), &c, WithPartition(i, 8)); err != nil {
			t.Fatal(err)
		}
		if len(c.Words) != 512 {
			t.Errorf("partition %d/8 holds %d of the 4096 bins, want 512", i, len(c.Words))
		}
	}
}
