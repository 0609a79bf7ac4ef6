package shard

import (
	"fmt"
	mbits "math/bits"
	"math/rand/v2"
	"testing"
)

// TestAddWords adds the same random additions through AddWords (assembly
// on amd64) and through the Go loop into two memories of 192 pages (four
// chunks, page 0 unused), at every length around the prefetch distance and
// a long one, with words added to many times, at both ends of a chunk,
// addends that wrap and sums brought back to zero, and compares every word
// and bit of the two, each word with its sum, and the written words
// (Page.Written) with the words added to: a word whose sum is zero is
// written too.
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
			zeros := 0
			for i := range adds {
				var w uint32
				v := r.Uint32()
				switch r.IntN(5) {
				case 4: // back to zero: minus the sum of an earlier word
					if i == 0 {
						continue
					}
					w = adds[r.IntN(i)].Word
					v = -want[w]
					zeros++
				case 0: // one of a few hot words
					w = refs[r.IntN(4)] + uint32(r.IntN(3))
				case 1: // the first or the last word of chunk 1 or 2
					w = uint32(1+r.IntN(2))*ChunkWords + uint32(r.IntN(2))*(ChunkWords-1)
				default:
					w = refs[r.IntN(pages)] + uint32(r.IntN(PageWords))
				}
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
			}
			written := map[uint32]bool{}
			var bits [PageWords / 64]uint64
			for ref := uint32(1); ref <= pages; ref++ {
				asm.Page(ref).Written(&bits, asm.Page(ref%pages+1))
				for i, b := range bits {
					for ; b != 0; b &= b - 1 {
						written[ref<<(PageShift-2)|uint32(i*64+mbits.TrailingZeros64(b))] = true
					}
				}
			}
			for w := range want {
				if !written[w] {
					t.Fatalf("word %#x (= %#x) added to, not written", w, want[w])
				}
			}
			if len(written) != len(want) {
				t.Fatalf("%d words written, %d added to", len(written), len(want))
			}
			if n > 100 && zeros == 0 {
				t.Fatal("no sum brought back to zero")
			}
		})
	}
}

// TestPageWritten checks Page.Written (assembly on amd64) against the Go
// loop and against the rule it computes, a word by word, on pages of
// every kind: no word set, every word, one word of each group (the
// lowest, the highest), words of one bit (the lowest, the highest), and
// random ones with zero words marked in Touched.
func TestPageWritten(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	c := m.Cursor()
	r := rand.New(rand.NewPCG(5, 6))
	fills := map[string]func(p *Page){
		"empty": func(p *Page) {},
		"full": func(p *Page) {
			for i := range p.Words {
				p.Words[i] = uint32(i) + 1
			}
		},
		"ends of groups": func(p *Page) {
			for g := 0; g < PageWords; g += 64 {
				p.Words[g], p.Words[g+63] = 1, 0x80000000
			}
		},
		"one bit": func(p *Page) {
			for i := range p.Words {
				p.Words[i] = 1 << (i % 32)
			}
		},
		"random": func(p *Page) {
			for i := range p.Words {
				switch r.IntN(4) {
				case 0:
					p.Words[i] = r.Uint32()
				case 1:
					p.Touch(uint32(i))
				}
			}
		},
	}
	addr := uint64(0)
	for name, fill := range fills {
		t.Run(name, func(t *testing.T) {
			p := m.Page(c.Resolve(0, addr).Ref())
			addr += PageBytes
			fill(p)
			var got, want [PageWords / 64]uint64
			p.Written(&got, nil)
			writtenGeneric(p.Words, p.Touched, &want)
			if got != want {
				t.Fatalf("Written %x, the Go loop %x", got, want)
			}
			for i, w := range p.Words {
				set := got[i/64]>>(i%64)&1 == 1
				if rule := w != 0 || p.Touched[i/64]>>(i%64)&1 == 1; set != rule {
					t.Fatalf("word %d (%#x): written %v, want %v", i, w, set, rule)
				}
			}
		})
	}
}

// TestPrefetchWords: asking for the words of every page's first, last
// and some random words, at both ends of chunks, changes no word and no
// bit of the memory (the assembly reads the records and the chunk table,
// and writes nothing), for lists empty, short and long.
func TestPrefetchWords(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	c := m.Cursor()
	const pages = 3 * ChunkPages
	r := rand.New(rand.NewPCG(5, 6))
	var adds []WordAdd
	for i := range pages {
		ref := c.Resolve(0, uint64(i)*PageBytes).WordRef(uint64(i) * PageBytes)
		for _, w := range []uint32{0, PageWords - 1, uint32(r.IntN(PageWords))} {
			adds = append(adds, WordAdd{Word: ref + w, Add: r.Uint32()})
		}
	}
	m.AddWords(adds)
	var before [4][ChunkWords]uint32
	var touched [4][ChunkWords / 64]uint64
	for k := range before {
		before[k], touched[k] = m.chunks[k].Load().Words, m.chunks[k].Load().Touched
	}
	for _, n := range []int{0, 1, 17, len(adds)} {
		m.PrefetchWords(adds[:n])
		for k := range before {
			if ck := m.chunks[k].Load(); ck.Words != before[k] || ck.Touched != touched[k] {
				t.Fatalf("after asking for %d words, chunk %d changed", n, k)
			}
		}
	}
}

// TestAddDense adds the same random additions through AddDense (assembly
// on amd64) and through its Go loop into two arrays of 3000 words (three
// pages and a part), at every length around the prefetch distance and a
// long one, with hot words, the first and the last word, and sums brought
// back to zero, and compares every word, bit, line count and page bit of
// the two with the sums: a word marked where (and only where) its sum
// reached zero, a line counted its additions, a page marked where a line
// of it was counted.
func TestAddDense(t *testing.T) {
	const n = 3000
	r := rand.New(rand.NewPCG(5, 6))
	newDense := func() *Dense {
		return &Dense{Words: make([]uint32, n), Touched: make([]uint64, (n+63)/64), Lines: make([]uint32, (n+31)/32), Pages: make([]uint64, 1)}
	}
	for _, k := range []int{0, 1, 2, 15, 16, 17, 18, 33, 63, 64, 65, 66, 129, 20000} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			adds := make([]WordAdd, k)
			sum := make([]uint32, n)
			zero := make([]bool, n)
			lines := make([]uint32, (n+31)/32)
			for i := range adds {
				var w uint32
				v := r.Uint32()
				switch r.IntN(5) {
				case 4:
					if i == 0 {
						continue
					}
					w = adds[r.IntN(i)].Word
					v = 0
					for _, a := range adds[:i] {
						if a.Word == w {
							v -= a.Add
						}
					}
				case 0:
					w = uint32(r.IntN(3))
				case 1:
					w = uint32(r.IntN(2)) * (n - 1)
				default:
					w = uint32(r.IntN(n / 2)) // pages 0 and 1 only, the last word's aside
				}
				adds[i] = WordAdd{Word: w, Add: v}
			}
			for _, a := range adds { // (adds[0] may be an addition of 0 to word 0)
				if sum[a.Word] += a.Add; sum[a.Word] == 0 {
					zero[a.Word] = true
				}
				lines[a.Word/32]++
			}
			var pages uint64
			for l, c := range lines {
				if c > 0 {
					pages |= 1 << (l * 32 / PageWords)
				}
			}
			asm, gen := newDense(), newDense()
			AddDense(asm, adds)
			if k := addDenseGeneric(gen, adds); k != len(adds) {
				t.Fatalf("addDenseGeneric stopped at %d of %d", k, len(adds))
			}
			for w := range n {
				bit := asm.Touched[w/64]>>(w%64)&1 == 1
				if asm.Words[w] != sum[w] || gen.Words[w] != sum[w] || bit != zero[w] || bit != (gen.Touched[w/64]>>(w%64)&1 == 1) {
					t.Fatalf("word %d: %#x (Go %#x), marked %v, want %#x, marked %v", w, asm.Words[w], gen.Words[w], bit, sum[w], zero[w])
				}
			}
			for l := range lines {
				if asm.Lines[l] != lines[l] || gen.Lines[l] != lines[l] {
					t.Fatalf("line %d: %d additions (Go %d), want %d", l, asm.Lines[l], gen.Lines[l], lines[l])
				}
			}
			if asm.Pages[0] != pages || gen.Pages[0] != pages {
				t.Fatalf("pages %b (Go %b), want %b", asm.Pages[0], gen.Pages[0], pages)
			}
		})
	}
	// A word beyond the array: the additions before it made, then a panic.
	d := newDense()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AddDense of a word beyond the array did not panic")
			}
		}()
		AddDense(d, []WordAdd{{Word: 7, Add: 5}, {Word: n, Add: 1}, {Word: 8, Add: 1}})
	}()
	if d.Words[7] != 5 || d.Words[8] != 0 {
		t.Errorf("words 7 and 8 %d and %d after a panic at the addition between them, want 5 and 0", d.Words[7], d.Words[8])
	}
	// Beyond the array, far enough into a long list that the loop asks
	// for it (or skips asking) before it reaches it: the additions before
	// it made, none after.
	long := make([]WordAdd, 300)
	for i := range long {
		long[i] = WordAdd{Word: uint32(i), Add: 1}
	}
	long[200].Word = n + 5
	d = newDense()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AddDense of a word beyond the array, addition 200 of 300, did not panic")
			}
		}()
		AddDense(d, long)
	}()
	for w := range 300 {
		want := uint32(0)
		if w < 200 {
			want = 1
		}
		if d.Words[w] != want {
			t.Fatalf("word %d = %d after a panic at addition 200, want %d", w, d.Words[w], want)
		}
	}
	gen := newDense()
	if k := addDenseGeneric(gen, []WordAdd{{Word: 7, Add: 5}, {Word: n, Add: 1}}); k != 1 || gen.Words[7] != 5 {
		t.Errorf("addDenseGeneric stopped at %d, word 7 %d, want 1 and 5", k, gen.Words[7])
	}
}
