package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomCounterWarps writes a random PTX trace of warps adding one value
// to one word, nothing returned, in runs of consecutive instructions (an
// append queue's counter): expandWarp's one (word, n·b) record a warp
// (routeSum) and the instructions after it summed into it (sumRun,
// sumRepeats, sumAgain). A run's warps share their address and addend
// and differ in their masks, a broadcast address's word being every
// lane's whichever lanes are active (sumRun.laneFree); a mask of one lane
// on a base:stride address is one word too, another for another lane, so
// a run of those must not be summed as one; some instructions are
// inactive (mask 0), return their old value (d), add on another counter
// or with another addend, or are another operation, each ending a run.
func randomCounterWarps(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x100\n")
	counter, addend := 0x1000, 1
	for range n {
		randContext(r, &b)
		switch r.IntN(10) {
		case 0:
			counter = 0x1000 + 4*r.IntN(3)
		case 1:
			addend = 1 + r.IntN(3)
		}
		dst := "_"
		if r.IntN(8) == 0 {
			dst = "d"
		}
		mask := r.Uint32()
		switch r.IntN(6) {
		case 0:
			mask = 1 << r.IntN(32)
		case 1:
			mask = 0
		case 2:
			mask = ^uint32(0)
		}
		switch r.IntN(8) {
		case 0: // lane k on word counter + 4k: one word for one lane only
			fmt.Fprintf(&b, "atom.global.add.u32 %s, [a], b; | a=0x%x:4 b=%d mask=0x%x\n", dst, 0x1000+4*r.IntN(4), addend, uint32(1)<<r.IntN(32))
		case 1:
			fmt.Fprintf(&b, "atom.global.exch.b32 _, [a], b; | a=0x%x b=%d mask=0x%x\n", counter, r.IntN(4), mask)
		default:
			fmt.Fprintf(&b, "atom.global.add.u32 %s, [a], b; | a=0x%x b=%d mask=0x%x\n", dst, counter, addend, mask)
		}
	}
	return b.String()
}

// TestCounterWarpsEqualReference: runs of warps adding one value to one
// word under changing masks (randomCounterWarps) replay as the reference
// does, under every sink configuration, option set and trace form: the
// counters' values and every statistic (lanes, distinct addresses,
// largest conflict, sectors) of every instruction.
func TestCounterWarpsEqualReference(t *testing.T) {
	equalOnRandom(t, randomCounterWarps, 50)
}
