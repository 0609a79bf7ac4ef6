package trace

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestFastVectorsDecodeAlike: decodeInst's own decoding of a fixed-width
// list and of a one-byte broadcast (fastVecs) gives back every
// instruction as written, as decodeVector does, through Next and NextInto:
// lists of every width and shift, broadcasts of one byte and of more,
// strides, and 128-bit inputs, which decodeVector alone decodes.
func TestFastVectorsDecodeAlike(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 7))
	list := func() Vector {
		// Offsets of 1 to 8 bytes above a minimum, some shifted (a
		// histogram's word addresses), some not, as a delta list.
		base := r.Uint64N(1 << 40)
		span := uint64(1) << (1 + r.IntN(63))
		sh := uint(r.IntN(4))
		return Vector{Kind: VecList, List: lanes(32, func(int) uint64 { return base + r.Uint64N(span)<<sh })}
	}
	scalar := func() Vector {
		switch r.IntN(3) {
		case 0:
			return Vector{Kind: VecBroadcast, Base: r.Uint64N(0x80)}
		case 1:
			return Vector{Kind: VecBroadcast, Base: r.Uint64N(1 << 33)}
		}
		return Vector{Kind: VecStride, Base: r.Uint64N(1 << 20), Stride: 4}
	}
	vec := func() Vector {
		if r.IntN(2) == 0 {
			return list()
		}
		return scalar()
	}
	var insts []*Inst
	for i := range 3000 {
		in := &Inst{Group: int64(i % 5), Warp: int64(i % 7), Mask: 0xffffffff}
		switch r.IntN(3) {
		case 0:
			in.Static, in.Vals = stAdd, []Vector{vec()}
		case 1:
			in.Static, in.Vals = stCAS, []Vector{vec(), vec(), vec(), {Kind: VecBroadcast, Base: 1}}
		default:
			b := vec()
			if b.Kind == VecList {
				b.ListHi = lanes(32, func(int) uint64 { return r.Uint64N(1 << 20) })
			} else {
				b.BaseHi = r.Uint64()
			}
			in.Static, in.Vals = stExch128, []Vector{vec(), b}
		}
		insts = append(insts, in)
	}
	data := writeTrace(t, &Header{}, insts, WithChunkInsts(500))
	want := wantInsts(insts)
	for _, into := range []bool{false, true} {
		for _, off := range []bool{false, true} {
			rd, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
			if err != nil {
				t.Fatal(err)
			}
			rd.noFastVecs = off
			got := readRecords(t, rd, into).insts
			if len(got) != len(want) {
				t.Fatalf("into %v, fast path off %v: %d instructions, want %d", into, off, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("into %v, fast path off %v: instruction %d\n got %+v\nwant %+v", into, off, i, got[i], want[i])
				}
			}
			if fast := rd.fastVecs; off && fast != 0 || !off && fast < len(insts) {
				t.Errorf("into %v, fast path off %v: %d vectors took the fast path", into, off, fast)
			}
			rd.Close()
		}
	}
}
