package shard

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestAddWords adds the same random additions through AddWords (assembly
// on amd64) and through the Go loop into two memories of 192 pages (four chunks, page 0 unused), at
// every length around the prefetch distance and a long one, with words
// added to many times, at both ends of a chunk and with addends that wrap,
// and compares every word and written bit, and the words' sums.
func TestAddWords(t *testing.T) {
	const pages = 3 * ChunkPages
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
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 15, 16, 17, 18, 31, 32, 33, 100, 20000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			asm, refs := build()
			gen, _ := build()
			adds := make([]WordAdd, n)
			want := map[uint32]uint32{}
			for i := range adds {
				var w uint32
				switch r.IntN(4) {
				case 0: // one of a few hot words
					w = refs[r.IntN(4)] + uint32(r.IntN(3))
				case 1: // the first or the last word of chunk 1 or 2
					w = uint32(1+r.IntN(2))*ChunkWords + uint32(r.IntN(2))*(ChunkWords-1)
				default:
					w = refs[r.IntN(pages)] + uint32(r.IntN(PageWords))
				}
				v := r.Uint32()
				adds[i] = WordAdd{Word: w, Add: v}
				want[w] += v
			}
			asm.AddWords(adds)
			addWordsGeneric(&gen.chunks, adds)
			for k := range 4 { // refs 1..192: chunk 3 holds the last
				ca, cg := asm.chunks[k].Load(), gen.chunks[k].Load()
				if ca.Words != cg.Words || ca.Touched != cg.Touched {
					t.Fatalf("chunk %d: AddWords and the Go loop differ", k)
				}
			}
			for w, v := range want {
				if got := *asm.Word(w); got != v {
					t.Fatalf("word %#x = %#x, want %#x", w, got, v)
				}
				if asm.Chunk(w).Touched[w%ChunkWords/64]>>(w%64)&1 != 1 {
					t.Fatalf("word %#x not marked written", w)
				}
			}
			written := 0
			for k := range 4 {
				for _, b := range asm.chunks[k].Load().Touched {
					for ; b != 0; b &= b - 1 {
						written++
					}
				}
			}
			if written != len(want) {
				t.Fatalf("%d words marked written, %d added to", written, len(want))
			}
		})
	}
}
