package shard

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
