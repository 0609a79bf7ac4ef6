package shard

// addWords is AddWords in assembly (add_amd64.s).
//
//go:noescape
func addWords(chunks *chunkTable, adds []WordAdd)
