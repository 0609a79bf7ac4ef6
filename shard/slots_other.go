//go:build !amd64

package shard

func addSlots(chunks *chunkTable, adds []WordAdd, mask uint32, ops, old []uint64) int {
	return addSlotsGeneric(chunks, adds, mask, ops, old)
}
