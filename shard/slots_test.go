package shard

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestAddSlots performs the same random additions through AddSlots
// (assembly on amd64) and through the Go loop into two memories, at
// every length around the prefetch distance and a long one: words added
// to many times (each lane getting the sum of those before it), at both
// ends of a chunk, addends whose high 32 bits are not the addend's,
// slots above the mask's bits that the mask drops, and sums brought back
// to zero, which mark their words. It compares every word and bit of the
// two memories, each slot's old value with the sum of the additions to
// its word before it, and the slots no addition names with what they
// held. A slot past ops or old panics, having made the additions before.
func TestAddSlots(t *testing.T) {
	const pages = 3 * ChunkPages
	const mask = 1<<30 - 1
	build := func() (*Memory, []uint32) {
		m, err := New()
		if err != nil {
			t.Fatal(err)
		}
		c := m.Cursor()
		refs := make([]uint32, pages)
		for i := range refs {
			refs[i] = c.Resolve(0, uint64(i)*PageBytes).WordRef(uint64(i) * PageBytes)
		}
		return m, refs
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 15, 16, 17, 18, 33, 100, 20000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			asm, refs := build()
			gen, _ := build()
			adds := make([]WordAdd, n)
			nslots := 2*n + 1
			ops := make([]uint64, nslots)
			oldA, oldG := make([]uint64, nslots), make([]uint64, nslots)
			for i := range oldA {
				oldA[i] = 0xdead_0000_0000 + uint64(i)
				oldG[i] = oldA[i]
			}
			sums := map[uint32]uint32{}
			wantOld := map[uint32]uint64{}
			for i := range adds {
				var w uint32
				v := r.Uint32()
				kind := r.IntN(5)
				if i == 0 && kind == 4 {
					kind = 3 // no word to bring back yet
				}
				switch kind {
				case 4: // back to zero
					w = adds[r.IntN(i)].Word
					v = -sums[w]
				case 0: // one of a few hot words
					w = refs[r.IntN(4)] + uint32(r.IntN(3))
				case 1: // the first or the last word of chunk 1 or 2
					w = uint32(1+r.IntN(2))*ChunkWords + uint32(r.IntN(2))*(ChunkWords-1)
				default:
					w = refs[r.IntN(pages)] + uint32(r.IntN(PageWords))
				}
				slot := uint32(2*i + 1)
				ops[slot] = uint64(r.Uint32())<<32 | uint64(v)
				adds[i] = WordAdd{Word: w, Add: slot | uint32(r.IntN(4))<<30}
				wantOld[slot] = uint64(sums[w])
				sums[w] += v
			}
			asm.AddSlots(adds, mask, ops, oldA)
			if k := addSlotsGeneric(&gen.chunks, adds, mask, ops, oldG); k != n {
				t.Fatalf("the Go loop stopped at %d of %d", k, n)
			}
			for k := range 4 {
				ca, cg := asm.chunks[k].Load(), gen.chunks[k].Load()
				if ca.Words != cg.Words || ca.Touched != cg.Touched {
					t.Fatalf("chunk %d: AddSlots and the Go loop differ", k)
				}
			}
			for w, v := range sums {
				if got := *asm.Word(w); got != v {
					t.Fatalf("word %#x = %#x, want %#x", w, got, v)
				}
				if v == 0 {
					c, i := asm.Chunk(w), w%ChunkWords
					if c.Touched[i/64]&(1<<(i%64)) == 0 {
						t.Fatalf("word %#x: sum 0, not marked written", w)
					}
				}
			}
			for s := range oldA {
				want, ok := wantOld[uint32(s)]
				if !ok {
					want = 0xdead_0000_0000 + uint64(s)
				}
				if oldA[s] != want || oldG[s] != want {
					t.Fatalf("slot %d: old %#x (assembly), %#x (Go), want %#x", s, oldA[s], oldG[s], want)
				}
			}
		})
	}
	t.Run("slot past the values", func(t *testing.T) {
		m, refs := build()
		adds := []WordAdd{{Word: refs[1], Add: 0}, {Word: refs[1], Add: 1}, {Word: refs[2], Add: 2}}
		ops, old := []uint64{5, 7, 9}, make([]uint64, 2)
		defer func() {
			if recover() == nil {
				t.Fatal("AddSlots with a slot past old did not panic")
			}
			if got := *m.Word(refs[1]); got != 12 || old[1] != 5 || *m.Word(refs[2]) != 0 {
				t.Fatalf("before the panic: word %d, old %v; want 12, [0 5], the third not made", got, old)
			}
		}()
		m.AddSlots(adds, mask, ops, old)
	})
}
