//go:build !amd64

package shard

import "unsafe"

func addWords(chunks *chunkTable, adds []WordAdd) { addWordsGeneric(chunks, adds) }

func prefetchWords(*chunkTable, []WordAdd) {} // no prefetch instruction from Go

func addDense(words *uint32, touched *uint64, lines *uint32, pages *uint64, adds []WordAdd) {
	m := int(maxDenseWord(adds)) + 1
	addDenseGeneric(&Dense{Words: unsafe.Slice(words, m), Touched: unsafe.Slice(touched, (m+63)/64),
		Lines: unsafe.Slice(lines, (m+31)/32), Pages: unsafe.Slice(pages, (m+PageWords*64-1)/(PageWords*64))}, adds)
}
