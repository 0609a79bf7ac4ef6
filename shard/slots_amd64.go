package shard

// addSlots is AddSlots in assembly (slots_amd64.s): it stops at the
// first slot not below len(ops), returning its index (else len(adds));
// old is as long as ops.
//
//go:noescape
func addSlots(chunks *chunkTable, adds []WordAdd, mask uint32, ops, old []uint64) int
