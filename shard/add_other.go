//go:build !amd64

package shard

func addWords(chunks *chunkTable, adds []WordAdd) { addWordsGeneric(chunks, adds) }

func prefetchWords(*chunkTable, []WordAdd) {} // no prefetch instruction from Go
