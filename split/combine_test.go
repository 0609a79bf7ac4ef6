package split

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// TestCombinerWindowEqualsPaged folds the same accesses into combiners
// whose memory instances keep them in windows (a space with regions:
// FoldOp.Bounds) and into ones that keep them in the paged memory (no
// region), and checks that their fold records are the same bytes and
// their lane-ops a partition the same, a large window merged and flushed
// by one, two or three goroutines (merge, flushWindow): for a 32-bit add over a large
// window (queued, shard.AddDense) with sums brought back to zero, a
// 32-bit min and a 64-bit add over small and large windows, a 32-bit add
// over a small window, two
// memory instances (shared, per .group) taken in turn, folds taken from a
// part before (take: window by window, and into an idle one), and a
// window spilled to the paged memory midway.
func TestCombinerWindowEqualsPaged(t *testing.T) {
	const base, size = 0x10000000, 4 << 20 // a window of 4 MiB is queued
	cases := []struct {
		name, form string
		span       uint64 // addresses in [base, base+span)
		spill      bool
		lines      int // warps: every other one writes a whole line (0: 600 warps, none)
	}{
		{"add32-large", "atom.global.add.u32 d, [a], b", size, false, 0},
		{"add32-large-spilled", "atom.global.add.u32 d, [a], b", size, true, 0},
		{"add32-large-lines", "atom.global.add.u32 d, [a], b", size, false, 4000},
		{"add32-small", "atom.global.add.u32 d, [a], b", 1 << 12, false, 0},
		{"min32", "atom.global.min.u32 d, [a], b", 1 << 16, false, 0},
		{"min32-large", "atom.global.min.u32 d, [a], b", size, false, 0},
		{"add64", "atom.global.add.u64 d, [a], b", 1 << 16, false, 0},
		{"add64-large", "atom.global.add.u64 d, [a], b", size, false, 0},
		{"shared-add32", "atom.shared.add.u32 d, [a], b", 1 << 12, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := trace.ParseStatic(tc.form)
			if err != nil {
				t.Fatal(err)
			}
			opOf := func(regions bool) engine.FoldOp {
				h := &trace.Header{}
				if regions {
					h.Regions = []trace.Region{{Space: st.Space, Base: base, Size: tc.span}}
				}
				rt, err := engine.NewRouter(h, 3)
				if err != nil {
					t.Fatal(err)
				}
				rt.SetFold(true)
				r, err := rt.Route(&trace.Inst{Static: st, Mask: 1, Vals: []trace.Vector{{Kind: trace.VecBroadcast, Base: base}, {Kind: trace.VecBroadcast, Base: 1}}})
				if err != nil || !r.Fold.Valid() {
					t.Fatalf("%v %+v", err, r)
				}
				if _, _, ok := r.Fold.Bounds(); ok != regions {
					t.Fatalf("Bounds ok %v with regions %v", ok, regions)
				}
				return r.Fold
			}
			// Warps of 32 accesses: a third of them on 64 hot words, each
			// warp of one .group of two (a per-group space: two memory
			// instances), each word's sum in its part (of two) brought
			// back to 0 now and then.
			r := rand.New(rand.NewPCG(7, 8))
			width := uint64(opOf(false).Size())
			type warp struct {
				group       int64
				addrs, vals []uint64
			}
			var warps []warp
			sums := map[uint64]uint64{} // the part's: its own sums reach 0
			total := max(600, tc.lines)
			for i := range total {
				if i == total/2 {
					sums = map[uint64]uint64{}
				}
				w := warp{group: int64(r.IntN(2))}
				// A whole 128-byte line's words, in turn: the lines a
				// window's flush takes at once (flushWindow).
				line := tc.lines > 0 && i%2 == 1
				first := base + r.Uint64N(tc.span/128)*128
				for k := range uint64(32) {
					a := base + r.Uint64N(tc.span/width)*width
					if line {
						a = first + k*width%128
					} else if r.IntN(3) == 0 {
						a = base + r.Uint64N(64)*width
					}
					v := r.Uint64N(1 << 20)
					if r.IntN(8) == 0 {
						v = -sums[a]
					}
					sums[a] += v
					w.addrs, w.vals = append(w.addrs, a), append(w.vals, v)
				}
				warps = append(warps, w)
			}
			run := func(regions bool, flushWorkers int, dir string) ([]uint64, [2]uint64) {
				op := opOf(regions)
				// The paged run commits with syncs, the windows' without:
				// their files are compared below, byte for byte.
				o := Options{Parts: 3, Slice: 0, Slices: 1, Out: dir, Sync: !regions}
				outs, err := openOutputs(o)
				if err != nil {
					t.Fatal(err)
				}
				if err := outs.writers(&trace.Header{}, trace.SplitHeader{Parts: 3, Slices: 1, Combined: true}); err != nil {
					t.Fatal(err)
				}
				pt, err := shard.NewPartitioner(3)
				if err != nil {
					t.Fatal(err)
				}
				sum := &Summary{Records: make([]uint64, 3)}
				// Two parts: the first's folds taken by the second's.
				a, b := newCombiner(3), newCombiner(3)
				for i, w := range warps {
					c := a
					if i >= len(warps)/2 {
						c = b
					}
					opw := op
					if st.Space.PerGroup() {
						opw.Group, opw.Key = w.group, engine.PartitionKey(st.Space, w.group)
					}
					if err := c.add(&trace.Inst{Static: st, Group: w.group}, &opw, w.addrs, w.vals); err != nil {
						t.Fatal(err)
					}
					if tc.spill && regions && i == len(warps)/4 {
						if err := a.spill(a.memOf(&opw, st, w.group)); err != nil {
							t.Fatal(err)
						}
					}
				}
				b.flushWorkers = flushWorkers
				if !b.canTake(a) {
					t.Fatal("the second part cannot take the first's folds")
				}
				if err := b.take(a, &pt); err != nil {
					t.Fatal(err)
				}
				if err := b.flush(outs, &pt, sum); err != nil {
					t.Fatal(err)
				}
				// A large window's merge (take) and flush are shared among
				// the goroutines.
				want := 0
				if regions && flushWorkers > 1 && tc.span >= 4*parallelFlushWords && !tc.spill {
					want = 2
				}
				if b.sharedWindows != want {
					t.Errorf("regions %v, %d flush workers: %d windows merged or flushed by goroutines, want %d", regions, flushWorkers, b.sharedWindows, want)
				}
				if err := outs.commit(); err != nil {
					t.Fatal(err)
				}
				laneOps := make([]uint64, 3)
				for i := range laneOps {
					laneOps[i] = a.laneOps[i] + b.laneOps[i]
				}
				if a.lanes+b.lanes != uint64(32*len(warps)) {
					t.Errorf("regions %v: %d lane-ops folded, want %d", regions, a.lanes+b.lanes, 32*len(warps))
				}
				return laneOps, [2]uint64{a.words + b.words, a.records + b.records}
			}
			// The windows flushed by one goroutine, by two (a partition of
			// three on one, two on the other) and by three.
			paged := t.TempDir()
			pl, pc := run(false, 1, paged)
			for _, g := range []int{1, 2, 3} {
				dense := t.TempDir()
				dl, dc := run(true, g, dense)
				if dc != pc || dc[0] == 0 {
					t.Errorf("%d flush workers: %v fold words and records from windows, %v paged", g, dc, pc)
				}
				if dl[0]+dl[1]+dl[2] != uint64(32*len(warps)) || dl[0] != pl[0] || dl[1] != pl[1] || dl[2] != pl[2] {
					t.Errorf("%d flush workers: lane-ops a partition %v in windows, %v paged, want %d in all", g, dl, pl, 32*len(warps))
				}
				for i := range 3 {
					name := filepath.Join(PartDir("", i), SliceName(0))
					d, err := os.ReadFile(filepath.Join(dense, name))
					if err != nil {
						t.Fatal(err)
					}
					p, err := os.ReadFile(filepath.Join(paged, name))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(d, p) || len(d) < 200 {
						t.Errorf("%d flush workers: partition %d: %d bytes of folds from windows, %d paged, not the same", g, i, len(d), len(p))
					}
				}
			}
		})
	}
}
