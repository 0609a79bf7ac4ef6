package trace

import (
	"bytes"
	"io"
	"reflect"
	"testing"
)

// TestBinaryMaskRepeatsAnyMaskLength reads an append queue's records: one
// instruction under masks whose varints differ in length (1 to 5 bytes,
// as a 16-bit vISA mask takes 2 or 3 at random), each at the next warp,
// with byte-for-byte repeats of a record after one of another length, and
// Repeats after them. Every record after a chunk's first is decoded as the
// one before under another mask (maskReps), whatever its mask's length;
// Repeats takes no record right after one (the next is most likely
// another mask); and Next, NextInto and Repeats give back every
// instruction as written.
func TestBinaryMaskRepeatsAnyMaskLength(t *testing.T) {
	// Masks whose records' varints (the mask XOR the exec mask, all 32
	// lanes) take 5, 1, 2, 3, 4 bytes.
	masks := []uint32{0x0, 0xffffff80, 0xffffc000, 0xffe00000, 0xf0000000,
		0xffffc000, 0xffffff80, 0x0, 0xf0000000, 0xffe00000, 0xffffffff, 0x8f78, 0x444a}
	var insts []*Inst
	warp := int64(0)
	add := func(in Inst) {
		in.Warp = warp
		warp++
		insts = append(insts, cloneInst(&in))
	}
	for _, st := range []*Static{stAdd, stCAS} {
		in := Inst{Static: stAdd, Vals: []Vector{{Kind: VecBroadcast, Base: 0x1000}}}
		if st == stCAS {
			in = Inst{Static: stCAS, Group: 1, Vals: []Vector{
				{Kind: VecBroadcast, Base: 0x3000}, {Kind: VecBroadcast, Base: 5}, {Kind: VecStride, Base: 7, Stride: 1}, {Kind: VecBroadcast, Base: 0xf0f0f0f0}}}
		}
		for i, m := range masks {
			in.Mask = m
			add(in)
			if i%3 == 2 {
				// The same record again, byte for byte, after one of
				// another length: a repeat of this one.
				add(in)
				add(in)
			}
		}
	}
	want := wantInsts(insts)
	for _, chunk := range []int{5, 1000} {
		data := writeTrace(t, &Header{}, insts, WithChunkInsts(chunk))
		for _, into := range []bool{false, true} {
			r, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
			if err != nil {
				t.Fatal(err)
			}
			var got []*Inst
			var arena []uint64
			masked := 0 // records Repeats took under their own masks
			for {
				var in *Inst
				if into {
					in, arena, err = r.NextInto(arena[:0])
				} else {
					in, err = r.Next()
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("chunks of %d: %v", chunk, err)
				}
				got = append(got, cloneInst(in))
				if into {
					continue
				}
				reps := r.maskReps
				n, dg, dw := r.Repeats(2)
				if ms := in.RepeatMasks; ms != nil {
					// Right after a mask repeat, the next records
					// are most likely other masks: Repeats takes them
					// with their masks (maskRepeats).
					if len(ms) != n {
						t.Fatalf("chunks of %d: Repeats took %d records after record %d with %d masks", chunk, n, len(got)-1, len(ms))
					}
					if r.maskReps != reps+n {
						t.Errorf("chunks of %d: %d records counted as mask repeats, want %d", chunk, r.maskReps-reps, n)
					}
					masked += n
				}
				last := got[len(got)-1]
				for i := 1; i <= n; i++ {
					c := cloneInst(last)
					c.Seq, c.Group, c.Warp = last.Seq+uint64(i), last.Group+int64(i)*dg, last.Warp+int64(i)*dw
					if in.RepeatMasks != nil {
						c.Mask = in.RepeatMasks[i-1]
					}
					got = append(got, c)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("chunks of %d (into %v): read %d records, want %d", chunk, into, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("chunks of %d (into %v), record %d:\n got %+v\nwant %+v", chunk, into, i, got[i], want[i])
				}
			}
			if !into && masked < len(insts)/4 {
				t.Errorf("chunks of %d: Repeats took %d of %d records under masks of their own", chunk, masked, len(insts))
			}
			// A record is a mask repeat unless it opens a chunk, opens
			// the CAS's run, or repeats the record before byte for byte.
			exact := 2 * 2 * (len(masks) / 3)
			chunks := (len(insts) + chunk - 1) / chunk
			if into {
				if wantReps := len(insts) - exact - 2; r.maskReps < wantReps-chunks || r.maskReps > wantReps {
					t.Errorf("chunks of %d: %d records decoded as the one before under another mask, want %d to %d", chunk, r.maskReps, wantReps-chunks, wantReps)
				}
			}
		}
	}
}
