package trace

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
)

// retriedInsts is a trace of warps that retry their instructions on the
// same lists (a spinlock's CAS until it gets the lock): each of 6 warps of
// 3 groups keeps its static and vectors (lists of 32 and 16 lanes, 128-bit
// lists with high halves, a list beside a broadcast with a high half) and
// takes new ones now and then; a retry may come under another mask, after
// directives and other warps' records, or after a record of the same warp
// with other vectors.
func retriedInsts(r *rand.Rand, n int) []*Inst {
	fresh := func() *Inst {
		addrs := lanes(32, func(int) uint64 { return 0x1000 + uint64(r.IntN(4))*8 })
		switch r.IntN(4) {
		case 0:
			return &Inst{Static: stCAS, Mask: 0xffffffff, Vals: []Vector{
				{Kind: VecBroadcast, Base: 0x3000},
				{Kind: VecList, List: addrs},
				{Kind: VecStride, Base: 7, Stride: 1},
				{Kind: VecBroadcast, Base: uint64(r.IntN(2))}}}
		case 1:
			return &Inst{Static: stExch128, Mask: 0xffffffff, Vals: []Vector{
				{Kind: VecList, List: addrs},
				{Kind: VecList, List: lanes(32, func(i int) uint64 { return uint64(r.IntN(3)) }), ListHi: lanes(32, func(i int) uint64 { return uint64(i) << 60 })}}}
		case 2:
			return &Inst{Static: stExch128, Mask: 0xffffffff, Vals: []Vector{
				{Kind: VecBroadcast, Base: 0x5000},
				{Kind: VecList, List: addrs, BaseHi: uint64(r.IntN(3))}}}
		default:
			return &Inst{Static: stLSC, Mask: 0xffff, Vals: []Vector{
				{Kind: VecStride, Base: 0, Stride: 4},
				{Kind: VecList, List: addrs[:16]}}}
		}
	}
	var warps [3][6]*Inst
	for g := range warps {
		for w := range warps[g] {
			warps[g][w] = fresh()
		}
	}
	var insts []*Inst
	for range n {
		g, w := r.IntN(3), r.IntN(6)
		switch r.IntN(10) {
		case 0:
			warps[g][w] = fresh()
		case 1:
			c := cloneInst(warps[g][w])
			c.Mask = r.Uint32() & c.Mask
			warps[g][w] = c
		case 2:
			insts = append(insts, &Inst{Dir: &Directive{Region: &Region{Space: Global, Base: 0x9000, Size: 0x100}}})
		case 3: // the warp once with other vectors, then its own again
			o := fresh()
			o.Group, o.Warp = int64(g), int64(w)
			insts = append(insts, o)
		}
		c := cloneInst(warps[g][w])
		c.Group, c.Warp = int64(g), int64(w)
		insts = append(insts, c)
	}
	return insts
}

// TestRetriedRecordsDecodeAlike: records whose vectors repeat their
// warp's last list record's bytes (retriedInsts), decoded from that
// record's entry (warpRecs), give back every instruction as written,
// through Next and NextInto, in chunks of 7 and 64 records and of the
// default size; so does a chunk whose first 1024 list records never
// repeat, which then keeps no entries.
func TestRetriedRecordsDecodeAlike(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 3))
	insts := retriedInsts(r, 600)
	// Lists that never repeat (a uniform trace's), then retries.
	var cold []*Inst
	for i := range warpProbe + 100 {
		cold = append(cold, &Inst{Static: stAdd, Group: int64(i % 3), Warp: int64(i % 6), Mask: 0xffffffff, Vals: []Vector{{Kind: VecList,
			List: lanes(32, func(l int) uint64 { return uint64(i*4096+l) * 4 })}}})
	}
	cold = append(cold, retriedInsts(r, 200)...)
	for _, tc := range []struct {
		name     string
		insts    []*Inst
		opts     []WriterOption
		wantHits int
	}{
		{"chunks of 7", insts, []WriterOption{WithChunkInsts(7)}, 10},
		{"chunks of 64", insts, []WriterOption{WithChunkInsts(64)}, 150},
		{"one chunk", insts, nil, 250},
		{"cold chunk", cold, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := writeTrace(t, &Header{}, tc.insts, tc.opts...)
			want := wantInsts(tc.insts)
			for _, into := range []bool{false, true} {
				for _, off := range []bool{false, true} {
					rd, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
					if err != nil {
						t.Fatal(err)
					}
					rd.noWarpRecs = off
					back := readRecords(t, rd, into)
					got, ids, grew := back.insts, back.ids, back.grew
					// A record of a nonzero VecID has the vectors of the
					// first record of that id, and the same static.
					byID, named := map[uint64]*Inst{}, 0
					for i, in := range got {
						id := ids[i]
						if id == 0 {
							continue
						}
						if f, ok := byID[id]; !ok {
							byID[id] = in
						} else if named++; f.Static != in.Static || !reflect.DeepEqual(f.Vals, in.Vals) {
							t.Fatalf("NextInto %v, entries off %v: record %d has VecID %d but not its vectors", into, off, i, id)
						} else if into && grew[i] != 0 {
							// Its lists are its entry's, not the arena's.
							t.Fatalf("NextInto: record %d, of the VecID of one before, grew the arena by %d", i, grew[i])
						}
					}
					if off && named != 0 || !off && named < tc.wantHits {
						t.Errorf("NextInto %v, entries off %v: %d records named the vectors of one before, want %d or more", into, off, named, tc.wantHits)
					}
					for i := range want {
						if i >= len(got) || !reflect.DeepEqual(got[i], want[i]) {
							t.Fatalf("NextInto %v, entries off %v: record %d differs", into, off, i)
						}
					}
					hits := 0
					if rd.warps != nil {
						hits = rd.warps.totalHits + rd.warps.hits
					}
					switch {
					case off && hits != 0:
						t.Errorf("NextInto %v: %d records from entries with the entries off", into, hits)
					case !off && tc.wantHits > 0 && hits < tc.wantHits:
						t.Errorf("NextInto %v: %d records from entries, want %d or more", into, hits, tc.wantHits)
					case !off && tc.wantHits == 0 && hits > 50:
						t.Errorf("NextInto %v: %d records from entries in a chunk that met too few in its first %d", into, hits, warpProbe)
					}
				}
			}
		})
	}
}

// TestUvarint8 decodes varints of every length, 1 to 10 bytes, at the
// start of 8 or more bytes with anything after them, as binary.Uvarint
// does, or leaves a longer one (n 0) to uvarintLong.
func TestUvarint8(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for i := range 20000 {
		x := r.Uint64() >> r.IntN(64)
		p := binary.AppendUvarint(nil, x)
		for len(p) < 8 || r.IntN(3) == 0 {
			p = append(p, byte(r.Uint32()))
		}
		got, n := uvarint8(p)
		want, wn := binary.Uvarint(p)
		switch {
		case wn > 8 && n != 0:
			t.Fatalf("%d: %x: n %d for a varint of %d bytes, want 0", i, p, n, wn)
		case wn <= 8 && (got != want || n != wn):
			t.Fatalf("%d: %x: %#x in %d bytes, want %#x in %d", i, p, got, n, want, wn)
		}
	}
	if _, n := uvarint8([]byte{0x80, 0x80, 0x01}); n != 0 {
		t.Errorf("a varint in fewer than 8 bytes: n %d, want 0", n)
	}
}

// TestItem50_RetriedRecordsTwoStatics: a spinlock's warps take turns
// between their CAS (under fewer lanes each time a lane gets its lock) and
// the exchange that releases the lock, on the same list of lock addresses:
// each warp keeps its last record of both statics, so every record but
// each warp's first CAS and first exchange is decoded from its entry, and
// reads back as written. With one entry a warp, each replaced the other's
// and none was.
func TestItem50_RetriedRecordsTwoStatics(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 6))
	const warps, rounds = 8, 30
	var lists [warps][]uint64
	for w := range lists {
		lists[w] = lanes(32, func(int) uint64 { return 0x1000 + uint64(r.IntN(4))*4 })
	}
	var insts []*Inst
	for k := range rounds {
		for w := range warps {
			mask := uint32(0xffffffff) >> (k % 8)
			insts = append(insts, &Inst{Static: stCAS, Group: 2, Warp: int64(w), Mask: mask, Vals: []Vector{
				{Kind: VecList, List: lists[w]},
				{Kind: VecBroadcast, Base: 0},
				{Kind: VecBroadcast, Base: 1},
				{Kind: VecBroadcast, Base: 0xffffffff}}})
			insts = append(insts, &Inst{Static: stExch128, Group: 2, Warp: int64(w), Mask: 1 << (k % 32), Vals: []Vector{
				{Kind: VecList, List: lists[w]},
				{Kind: VecBroadcast, Base: 0}}})
		}
	}
	data := writeTrace(t, &Header{}, insts)
	rd, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
	if err != nil {
		t.Fatal(err)
	}
	want := wantInsts(insts)
	for i := range want {
		in, err := rd.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(cloneInst(in), want[i]) {
			t.Fatalf("record %d differs:\n got %+v\nwant %+v", i, in, want[i])
		}
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Fatalf("after the last record: %v, want EOF", err)
	}
	hits := rd.warps.totalHits + rd.warps.hits
	if want := len(insts) - 2*warps; hits != want {
		t.Errorf("%d records decoded from their warp's entry, want %d (all but each warp's first CAS and first exchange)", hits, want)
	}
}
