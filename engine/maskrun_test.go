package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// randomAppendWarps writes a random trace of append queues' warps, vISA's
// DWORD_ATOMIC and LSC's: runs of one instruction under random masks,
// each warp the next one's, a group every few warps, which the binary
// reader hands over a run at once with their masks (Repeats,
// RepeatMasks) and the engine adds as copies (addRepeats). A run's
// instruction is an add, an increment or a max, on a global or a shared
// word (the memory of its group), of 8 or 16 lanes, with a predicate or
// not, returning its old values or not; LSC's append counter (its own
// word) and a scattered LSC add (a list: no repeat) come between runs.
func randomAppendWarps(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x40\n.region shared 0x0 0x20\n")
	fmt.Fprintf(&b, ".init global 0x1000 u32 %d %d\n", r.Uint32(), r.Uint32())
	group, warp := 0, 0
	for n > 0 {
		pred, binds := "", ""
		if r.IntN(4) == 0 {
			pred = []string{"(P1) ", "(!P1) "}[r.IntN(2)]
			binds = fmt.Sprintf(" P1=0x%x", r.Uint32())
		}
		var inst string
		lanes := []int{8, 16}[r.IntN(2)]
		switch k := r.IntN(8); {
		case k < 5:
			op := []string{"ADD", "ADD", "INC", "MAX"}[r.IntN(4)]
			surf, off := "T255", 0x1000+4*r.IntN(3)
			if r.IntN(3) == 0 {
				surf, off = "T0", 4*r.IntN(3)
			}
			dst := []string{"V12", "V0"}[r.IntN(2)]
			src, vals := "V11", fmt.Sprintf(" V10=0x%x V11=%d", off, 1+r.IntN(3))
			if op == "INC" {
				src, vals = "V0", fmt.Sprintf(" V10=0x%x", off)
			}
			binds = vals + binds
			inst = fmt.Sprintf("%sDWORD_ATOMIC.%s (%d) %s V10 %s V0 %s |%s", pred, op, lanes, surf, src, dst, binds)
		case k < 7:
			lanes = []int{16, 32}[r.IntN(2)]
			dst := []string{"V13", "%null"}[r.IntN(2)]
			inst = fmt.Sprintf("%slsc_apndctr_atomic_add.ugm (M1,%d) %s:d32 bti(0xA0) V14:d32 | V14=%d%s", pred, lanes, dst, 1+r.IntN(2), binds)
		default:
			vs := make([]string, 16)
			for i := range vs {
				vs[i] = fmt.Sprintf("0x%x", 0x1000+4*r.IntN(8))
			}
			inst = fmt.Sprintf("lsc_atomic_iadd.ugm (M1,16) %%null:d32 flat[V12]:a32 V14 | V12=[%s] V14=1", strings.Join(vs, ","))
		}
		for range min(n, 1+r.IntN(24)) {
			if warp++; warp == 8 || r.IntN(20) == 0 {
				group, warp = group+1, 0
				if r.IntN(4) == 0 {
					group = r.IntN(3)
				}
				fmt.Fprintf(&b, ".group %d\n", group)
			}
			fmt.Fprintf(&b, ".warp %d\n", warp)
			mask := r.Uint32() & (1<<lanes - 1)
			switch r.IntN(8) {
			case 0:
				mask = 0
			case 1:
				mask = 1<<lanes - 1
			}
			fmt.Fprintf(&b, "%s mask=0x%x\n", inst, mask)
			n--
		}
	}
	return b.String()
}

// TestAppendWarpsEqualReference: runs of an append queue's warps, one
// instruction under the masks of its warps (randomAppendWarps), replay as
// the reference does under every sink configuration, option set and trace
// form; and the binary form's runs are handed over at once under their
// masks (Summary.RepeatInsts: before, the reader handed over no record
// that changed its mask, and an append queue's were all read one by one).
func TestAppendWarpsEqualReference(t *testing.T) {
	srcs := equalOnRandom(t, randomAppendWarps, 51)
	var reps, insts uint64
	for _, src := range srcs {
		sum := replayBinary(t, src, 1000)
		reps += sum.RepeatInsts
		insts += sum.Instructions
	}
	if reps < insts*3/5 {
		t.Errorf("%d of %d instructions taken as repeats, want at least three fifths", reps, insts)
	}
}

// TestHotCounterGroupsRepeat: a vISA hot counter over groups of 16 warps,
// as replay gen writes it, is read a record a group and the rest as
// repeats: the first warp of a group moves to it (its group and warp
// deltas differ from the warp before's), and the second, the first's
// bytes but for those deltas, starts the run that Repeats hands over
// (before, it was read on its own too). The replay equals the
// reference's.
func TestHotCounterGroupsRepeat(t *testing.T) {
	const groups, warps = 20, 16
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x4\n")
	for g := range groups {
		fmt.Fprintf(&b, ".group %d\n", g)
		for w := range warps {
			fmt.Fprintf(&b, ".warp %d\nDWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12 | V10=0x1000 V11=0x1\n", w)
		}
	}
	src := b.String()
	equalToReference(t, src, nil, nil, []Option{WithWorkers(2)}, []Option{WithWorkers(2), WithBatchInsts(7)})
	sum := replayBinary(t, src, 1000)
	if sum.Instructions != groups*warps || sum.RepeatInsts != groups*(warps-1) {
		t.Errorf("%d instructions, %d as repeats; want %d and %d (all but a group's first)", sum.Instructions, sum.RepeatInsts, groups*warps, groups*(warps-1))
	}
}

// replayBinary replays src's binary form, in chunks of chunk
// instructions, into nothing, and returns the summary.
func replayBinary(t *testing.T, src string, chunk int) Summary {
	t.Helper()
	br, err := trace.NewBinaryReader(bytes.NewReader(binaryOfChunks(t, src, chunk)))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Replay(t.Context(), br, Discard())
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
