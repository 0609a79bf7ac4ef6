package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// refHot is the Misra-Gries summary by its definition: every candidate
// compared for each sample, the first free slot taken.
type refHot struct {
	floor  uint64
	keys   [hotSlots]hotKey
	counts [hotSlots]uint64
}

func (h *refHot) add(k memKey, addr uint64) {
	key := hotKey{addr &^ 3, k}
	free := -1
	for i := range h.keys {
		if h.counts[i] <= h.floor {
			if free < 0 {
				free = i
			}
			continue
		}
		if h.keys[i] == key {
			h.counts[i]++
			return
		}
	}
	if free < 0 {
		h.floor++
		return
	}
	h.keys[free], h.counts[free] = key, h.floor+1
}

func (h *refHot) top() []HotWord {
	var out []HotWord
	for i, w := range h.keys {
		if c := h.counts[i]; c > h.floor {
			out = append(out, HotWord{Space: w.mem.space, Group: w.mem.group, Addr: w.addr, LaneOps: (c - h.floor) * HotSample})
		}
	}
	sortHot(out)
	return out
}

// TestHotWordsIndexEqualsScan checks that the indexed summary (its
// table of slots by hash, stale entries, rebuilds and list of free slots)
// keeps exactly the candidates and counts of the summary by definition,
// sample by sample, on streams of scattered words (every sample a miss,
// the table rebuilt over and over), a few hot words among them, words
// that differ only in their memory instance, and words that come back
// after their slot was freed.
func TestHotWordsIndexEqualsScan(t *testing.T) {
	mems := []memKey{{trace.Global, -1}, {trace.Shared, 0}, {trace.Shared, 1}}
	for _, tc := range []struct {
		name  string
		words int     // distinct words drawn from
		hot   int     // hot words among them
		share float64 // of the samples on a hot word
	}{
		{"scattered", 1 << 20, 0, 0},
		{"few", 40, 0, 0},
		{"hot", 1 << 16, 4, 0.3},
		{"histogram", 4096, 0, 0},
		{"one", 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.words)))
			var ref refHot
			got := newHotWords()
			for n := range 200000 {
				w := rng.IntN(tc.words)
				if tc.hot > 0 && rng.Float64() < tc.share {
					w = rng.IntN(tc.hot)
				}
				m := mems[w%len(mems)]
				addr := uint64(w)*4 + uint64(rng.IntN(4)) // any byte of the word
				ref.add(m, addr)
				got.add(m, addr)
				if n%997 == 0 || n == 199999 {
					want, have := ref.top(), got.top(hotSlots)
					if got.floor != ref.floor || !slices.Equal(have, want) {
						t.Fatalf("sample %d: floor %d, candidates %v; want floor %d, %v", n, got.floor, have, ref.floor, want)
					}
				}
			}
			if tc.hot > 0 && len(got.top(1)) == 0 {
				t.Fatalf("no hot word found")
			}
		})
	}
}
