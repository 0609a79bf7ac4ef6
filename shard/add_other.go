//go:build !amd64

package shard

import "unsafe"

func addWords(chunks *chunkTable, adds []WordAdd) { addWordsGeneric(chunks, adds) }

func prefetchWords(*chunkTable, []WordAdd) {} // no prefetch instruction from Go

func addDense(words []uint32, touched *uint64, lines *uint32, pages *uint64, adds []WordAdd) int {
	n := len(words)
	return addDenseGeneric(&Dense{Words: words, Touched: unsafe.Slice(touched, (n+63)/64),
		Lines: unsafe.Slice(lines, (n+31)/32), Pages: unsafe.Slice(pages, (n+PageWords*64-1)/(PageWords*64))}, adds)
}
