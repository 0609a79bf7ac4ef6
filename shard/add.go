package shard

import "fmt"

// WordAdd is one 32-bit addition: the word it adds to, named by its
// [Entry.WordRef], and the addend. It is 8 bytes, the size of the records
// the engine routes scattered updates in.
type WordAdd struct {
	Word uint32
	Add  uint32
}

// AddWords adds each a.Add to the word a.Word names, wrapping, one after
// another in order. It marks a word in [Page.Touched] only where the sum
// is zero: a non-zero word is written anyway ([Page.Written]). Every word
// named must be in a page of m, and the caller must be the only goroutine
// writing those pages (the invariants of the package doc).
//
// It is the loop of scattered 32-bit updates that bounds a replay over a
// large memory: each addition is a miss in cache, and marking every word
// was a second one, in a bitmap of an eighth of the words' size. On amd64
// it is assembly (add_amd64.s) that asks for the word of the addition 16
// ahead (PREFETCHT0) while it performs this one, so that about 16 misses
// are under way at once; the compiled loop kept fewer, and its nil checks
// of the chunk took a load each. Elsewhere it is addWordsGeneric.
func (m *Memory) AddWords(adds []WordAdd) { addWords(&m.chunks, adds) }

// PrefetchWords asks the processor for the cache line of the word each
// of adds names (only a.Word is read), writing nothing: a loop about to
// update words at random calls it on the records some way ahead of the
// one it updates, so that their misses are under way at once. On amd64 it
// is an assembly loop of PREFETCHT0 (add_amd64.s), elsewhere it does
// nothing. Every word named must be in a page of m.
func (m *Memory) PrefetchWords(adds []WordAdd) { prefetchWords(&m.chunks, adds) }

// addWordsGeneric is AddWords in Go: the reference the assembly is tested
// against, and the loop on other architectures.
func addWordsGeneric(chunks *chunkTable, adds []WordAdd) {
	for _, a := range adds {
		c := chunks[a.Word/ChunkWords].Load()
		w := a.Word % ChunkWords
		c.Set(w, c.Words[w]+a.Add)
	}
}

// Dense is an array of words with the bookkeeping of a memory's pages,
// for a caller that keeps words of its own (the split's combiner): the
// words, a bit a word written (Touched, as a page's), the additions
// counted a 32-word (128-byte) line, and a bit a 1024-word page with a
// line counted. Touched, Lines and Pages hold at least a bit, a count and
// a bit for each word, line and page of Words.
type Dense struct {
	Words   []uint32
	Touched []uint64
	Lines   []uint32
	Pages   []uint64
}

// AddDense is AddWords over d: it adds each a.Add to d.Words[a.Word],
// wrapping, one after another in order, marks the word in d.Touched
// where the sum is zero, counts the addition in its line (d.Lines[w/32])
// and, at the line's first count, marks its page in d.Pages (bit w/1024).
// On amd64 it is an assembly loop that asks for the word 64 additions
// ahead while it performs this one (AddWords asks 16 ahead: its misses
// are to memory, d's mostly to the last-level cache, add_amd64.s);
// elsewhere a Go loop. It panics when d's bookkeeping is too short for its words,
// writing nothing, or at the first addition to a word not below
// len(d.Words), having made those before it.
func AddDense(d *Dense, adds []WordAdd) {
	if len(adds) == 0 {
		return
	}
	n := len(d.Words)
	if n == 0 || len(d.Touched) < (n+63)/64 || len(d.Lines) < (n+31)/32 || len(d.Pages) < (n+PageWords*64-1)/(PageWords*64) {
		panic("shard: AddDense: the bookkeeping of the words too short")
	}
	if k := addDense(d.Words, &d.Touched[0], &d.Lines[0], &d.Pages[0], adds); k < len(adds) {
		panic(fmt.Sprintf("shard: AddDense: addition %d to word %d of %d", k, adds[k].Word, n))
	}
}

// addDenseGeneric is AddDense in Go: the reference the assembly is tested
// against, and the loop on other architectures. It stops at the first
// word not below len(d.Words), returning its index (else len(adds)).
func addDenseGeneric(d *Dense, adds []WordAdd) int {
	for i, a := range adds {
		w := a.Word
		if int(w) >= len(d.Words) {
			return i
		}
		if d.Words[w] += a.Add; d.Words[w] == 0 {
			d.Touched[w/64] |= 1 << (w % 64)
		}
		if d.Lines[w/32]++; d.Lines[w/32] == 1 {
			d.Pages[w/PageWords/64] |= 1 << (w / PageWords % 64)
		}
	}
	return len(adds)
}
