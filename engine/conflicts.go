package engine

import (
	"slices"

	"github.com/gpureplay/replay/shard"
)

// Counting a warp's distinct addresses and its largest conflict (the ops
// table's statistics), in Go; conflicts_amd64.s has the AVX-512 loops.

// pageConflicts counts the distinct addresses and the largest conflict of
// one warp whose addresses all lie in one page: a counter per byte of the
// page, indexed directly, live only when stamped with the current warp's
// generation (its high bits), so that no warp clears it; it is cleared
// when the generations wrap, once every 1024 warps.
type pageConflicts struct {
	gen    uint16 // the current warp's generation << pageCountBits
	counts [shard.PageBytes]uint16
}

// pageCountBits is the bits of a counter that count: up to 63 accesses per
// warp and address (a warp has at most 32 lanes).
const pageCountBits = 6

// next starts the next warp's count.
func (ps *pageConflicts) next() {
	ps.gen += 1 << pageCountBits
	if ps.gen == 0 {
		clear(ps.counts[:])
		ps.gen = 1 << pageCountBits
	}
}

// count counts addrs (one page's) as one warp's accesses.
func (ps *pageConflicts) count(addrs []uint64) (distinct, maxc uint32) {
	ps.next()
	gen := ps.gen
	counts := ps.counts[:]
	for _, a := range addrs {
		distinct, maxc = countLane(counts, a, gen, distinct, maxc)
	}
	return distinct, conflictDepth(distinct, maxc)
}

// conflictSet counts, for one instruction at a time, how often each of at
// most 64 addresses occurs: a 128-slot open-addressing table whose slots
// are live only when stamped with the current instruction's generation,
// so that moving to the next instruction clears nothing.
type conflictSet struct {
	gen   uint32
	slots [128]conflictSlot // one cache line holds four whole slots
}

type conflictSlot struct {
	key   uint64
	stamp uint32 // the slot is live when stamp == gen
	count uint32
}

// conflictDepth is an instruction's largest conflict from its counts: the
// most accesses to one address that repeated (maxc, 0 when none did), or
// 1 when it has any access at all.
func conflictDepth(distinct, maxc uint32) uint32 { return max(maxc, min(distinct, 1)) }

// next starts a new instruction.
func (c *conflictSet) next() {
	if c.gen++; c.gen == 0 {
		clear(c.slots[:])
		c.gen = 1
	}
}

// count counts addrs as one instruction's accesses: its distinct
// addresses and its largest conflict (at least 1 when there are any).
func (c *conflictSet) count(addrs []uint64) (distinct, maxc uint32) {
	c.next()
	for _, a := range addrs {
		if n, fresh := c.add(a); fresh {
			distinct++
		} else {
			maxc = max(maxc, n)
		}
	}
	return distinct, conflictDepth(distinct, maxc)
}

// add counts one access to a and returns its count so far, and whether a
// is new to this instruction.
func (c *conflictSet) add(a uint64) (uint32, bool) {
	i := (a * 0x9e3779b97f4a7c15) >> 57
	for {
		s := &c.slots[i&127]
		if s.stamp != c.gen {
			*s = conflictSlot{key: a, stamp: c.gen, count: 1}
			return 1, true
		}
		if s.key == a {
			s.count++
			return s.count, false
		}
		i++
	}
}

// conflictsSmall is conflicts for at most 64 addresses in any order: a
// 128-slot open-addressing table on the stack, one probe sequence per
// address, instead of a quadratic insertion sort of random addresses.
func conflictsSmall(a []uint64) (distinct, maxc uint32) {
	var keys [128]uint64
	var counts [128]uint8 // 0 marks an empty slot
	for _, x := range a {
		i := (x * 0x9e3779b97f4a7c15) >> 57
		for counts[i] != 0 && keys[i] != x {
			i = (i + 1) & 127
		}
		if counts[i] == 0 {
			keys[i] = x
			distinct++
		}
		counts[i]++
		maxc = max(maxc, uint32(counts[i]))
	}
	return distinct, maxc
}

// conflicts counts distinct addresses and the largest number of accesses to
// one of them. It sorts a in place: insertion sort for a warp's worth
// (usually sorted already), slices.Sort beyond.
func conflicts(a []uint64) (distinct, maxc uint32) {
	if len(a) > 64 {
		slices.Sort(a)
	} else if !slices.IsSorted(a) {
		return conflictsSmall(a)
	}
	run := uint32(0)
	for i := range a {
		if i == 0 || a[i] != a[i-1] {
			distinct++
			run = 0
		}
		run++
		maxc = max(maxc, run)
	}
	return distinct, maxc
}
