package shard

import "fmt"

// AddSlots performs 32-bit additions that return the words' old values
// (a scattered atomicAdd whose lanes read what they got back): for each
// a of adds, in order, with s = a.Add&mask its slot, it stores the value
// of the word a.Word names in old[s] and adds uint32(ops[s]) to the
// word, wrapping. It marks a word in [Page.Touched] only where the sum is
// zero, as [Memory.AddWords] does. It panics at the first slot not below
// len(ops) and len(old), having made the additions before it. Every word
// named must be in a page of m, and the caller must be the only
// goroutine writing those pages.
//
// On amd64 it is assembly (slots_amd64.s) that asks for the word of the
// addition 32 ahead while it performs this one, as AddWords does 16
// ahead; the Go loop it replaced (the engine's add32Slots) took a
// separate pass of PrefetchWords ahead of it, a segment at a time.
func (m *Memory) AddSlots(adds []WordAdd, mask uint32, ops, old []uint64) {
	n := min(len(ops), len(old))
	if k := addSlots(&m.chunks, adds, mask, ops[:n:n], old[:n:n]); k < len(adds) {
		panic(fmt.Sprintf("shard: AddSlots: addition %d's slot %d, of %d", k, adds[k].Add&mask, n))
	}
}

// addSlotsGeneric is AddSlots in Go: the reference the assembly is tested
// against, and the loop on other architectures. It stops at the first
// slot not below len(ops), returning its index (else len(adds)); old is
// as long as ops.
func addSlotsGeneric(chunks *chunkTable, adds []WordAdd, mask uint32, ops, old []uint64) int {
	old = old[:len(ops)]
	for i, a := range adds {
		s := a.Add & mask
		if int(s) >= len(ops) {
			return i
		}
		c := chunks[a.Word/ChunkWords].Load()
		w := a.Word % ChunkWords
		v := c.Words[w]
		old[s] = uint64(v)
		c.Set(w, v+uint32(ops[s]))
	}
	return len(adds)
}
