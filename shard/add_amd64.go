package shard

// addWords is AddWords in assembly (add_amd64.s).
//
//go:noescape
func addWords(chunks *chunkTable, adds []WordAdd)

// prefetchWords is PrefetchWords in assembly (add_amd64.s).
//
//go:noescape
func prefetchWords(chunks *chunkTable, adds []WordAdd)
