package shard

// addWords is AddWords in assembly (add_amd64.s).
//
//go:noescape
func addWords(chunks *chunkTable, adds []WordAdd)

// prefetchWords is PrefetchWords in assembly (add_amd64.s).
//
//go:noescape
func prefetchWords(chunks *chunkTable, adds []WordAdd)

// addDense is AddDense in assembly (add_amd64.s): it stops at the first
// word not below len(words), returning its index (else len(adds)).
//
//go:noescape
func addDense(words []uint32, touched *uint64, lines *uint32, pages *uint64, adds []WordAdd) int
