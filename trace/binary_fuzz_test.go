package trace

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"testing"
)

// FuzzBinaryReader feeds arbitrary bytes to the stream reader and the
// index: they must return an error or io.EOF, never panic or hang. Seeds
// are small valid traces; the fake parser gives any text a static, so
// mutated static tables reach the instruction decoder.
func FuzzBinaryReader(f *testing.F) {
	insts := testInsts()
	f.Add(writeTrace(f, testHeader, insts, WithChunkInsts(3)))
	f.Add(writeTrace(f, nil, insts[:4], WithChunkInsts(1)))
	f.Add(writeTrace(f, &Header{}, nil))
	// A chunk whose static comes from the synthetic parser.
	syn, _ := fakeParse("abc")
	f.Add(writeTrace(f, nil, []*Inst{{Static: syn, Mask: 3, Vals: []Vector{{Kind: VecStride, Base: 1, Stride: 2}, {Kind: VecBroadcast, Base: 7}, {Kind: VecBroadcast, Base: 7, BaseHi: 8}}}}))
	f.Add(writeTrace(f, testHeader, withDirectives(), WithChunkInsts(2)))
	// Lists in the fixed-width form, of every width and shift.
	f.Add(writeTrace(f, nil, listInsts()[:6], WithChunkInsts(2)))
	f.Add(writeTrace(f, nil, listInsts()[40:], WithChunkInsts(3)))
	// A split file: its instructions in block records, lists masked.
	var parts []*Inst
	for i, in := range append(testInsts(), listInsts()[:8]...) {
		c := *in
		c.Seq, c.Mask = uint64(3*i), in.Mask&0x8421
		c.Part = &PartInfo{Lanes: 3, Row: i%2 == 0, Addresses: 2, MaxConflict: 1, Sectors: 2}
		parts = append(parts, &c)
	}
	f.Add(writeTrace(f, testHeader, parts, WithChunkInsts(4), WithSplit(SplitHeader{Parts: 2, Slices: 1, Chunks: 1, EndChunk: 1})))
	// A combined split file: fold records between the blocks.
	var folded []*Inst
	for i, in := range parts {
		folded = append(folded, in)
		if i%3 == 1 {
			folded = append(folded, &Inst{Dir: &Directive{Fold: &Fold{Static: in.Static, Group: int64(i),
				Addrs: []uint64{4, 0x84, 1 << 33}, Vals: []uint64{1, uint64(i), 1 << 40}}}})
		}
	}
	f.Add(writeTrace(f, testHeader, folded, WithChunkInsts(4), WithSplit(SplitHeader{Parts: 2, Slices: 1, Chunks: 1, EndChunk: 1, Combined: true})))
	// Rows alone (mask 0: no vectors in the block) among instructions
	// with lanes, and between fold records.
	var rows []*Inst
	for i, in := range folded {
		if in.Dir == nil && i%3 != 2 {
			c := *in
			c.Mask = 0
			in = &c
		}
		rows = append(rows, in)
	}
	f.Add(writeTrace(f, testHeader, rows, WithChunkInsts(4), WithSplit(SplitHeader{Parts: 2, Slices: 1, Chunks: 1, EndChunk: 1, Combined: true})))
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse)); err == nil && r.Split() != nil {
			// A split file read a block at a time: an error, never a panic.
			for {
				b, _, err := r.NextBlock()
				if err != nil {
					checkFuzzErr(t, err)
					break
				}
				if b == nil {
					continue // a directive
				}
				for k := range b.Insts {
					checkRecord(t, k, &b.Insts[k])
				}
			}
		}
		r, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
		if err == nil {
			n := 0
			var copies [][]Vector
			var lastErr error
			for {
				in, err := r.Next()
				if err != nil {
					checkFuzzErr(t, err)
					lastErr = err
					break
				}
				checkRecord(t, n, in)
				copies = append(copies, cloneVals(in))
				n++
			}
			checkNextInto(t, data, copies, lastErr)
		} else {
			checkFuzzErr(t, err)
		}
		c, cerr := CountChunks(bytes.NewReader(data), int64(len(data)))
		x, err := OpenBinaryIndex(bytes.NewReader(data), int64(len(data)), WithStaticParser(fakeParse))
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		// The footer's count, the seek table's (replay's heap advice
		// takes the first for the second).
		if cerr != nil || c != x.NumChunks() {
			t.Errorf("CountChunks = %d, %v; the index has %d chunks", c, cerr, x.NumChunks())
		}
		// All chunks at once, several decompressed in parallel.
		ar, err := x.Reader(0, x.NumChunks())
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; ; n++ {
			in, err := ar.Next()
			if err != nil {
				checkFuzzErr(t, err)
				break
			}
			checkRecord(t, n, in)
		}
		for i := x.NumChunks() - 1; i >= 0; i-- {
			cr, err := x.Reader(i, i+1)
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := cr.Next(); err != nil {
					checkFuzzErr(t, err)
					break
				}
			}
		}
	})
}

// checkRecord checks what a reader promises of record n: an instruction
// with a value per input, or a directive with exactly one of .init and
// .region, whole elements of a valid type.
func checkRecord(t *testing.T, n int, in *Inst) {
	t.Helper()
	if in.Dir != nil {
		d := in.Dir
		if n := btoi(d.Init != nil) + btoi(d.Region != nil) + btoi(d.Cluster != nil) + btoi(d.Fold != nil); in.Static != nil || n != 1 {
			t.Fatalf("record %d: directive %+v with static %v", n, d, in.Static)
		}
		if d.Init != nil && (d.Init.Type.Size() == 0 || len(d.Init.Data)%d.Init.Type.Size() != 0) {
			t.Fatalf("record %d: .init of %d bytes of %s", n, len(d.Init.Data), d.Init.Type)
		}
		if c := d.Cluster; c != nil && (c.Group < 0 || c.Group > 1<<40 || c.ID < 0 || c.ID > 1<<40) {
			t.Fatalf("record %d: .cluster %d of group %d", n, c.ID, c.Group)
		}
		if f := d.Fold; f != nil {
			if f.Static == nil || len(f.Addrs) == 0 || len(f.Addrs) != len(f.Vals) {
				t.Fatalf("record %d: a fold of %d addresses and %d values, static %v", n, len(f.Addrs), len(f.Vals), f.Static)
			}
			for i := 1; i < len(f.Addrs); i++ {
				if f.Addrs[i] <= f.Addrs[i-1] {
					t.Fatalf("record %d: a fold's addresses 0x%x, 0x%x", n, f.Addrs[i-1], f.Addrs[i])
				}
			}
		}
		return
	}
	if len(in.Vals) != len(in.Static.Inputs) {
		t.Fatalf("record %d: %d values for %d inputs", n, len(in.Vals), len(in.Static.Inputs))
	}
}

func checkFuzzErr(t *testing.T, err error) {
	var be *BinaryError
	if err != io.EOF && !errors.As(err, &be) {
		t.Fatalf("error %v (%T) is not a *BinaryError", err, err)
	}
}

// FuzzBinaryChunk fuzzes one chunk's payload (static table and
// instructions) behind a valid header, valid checksums and a valid seek
// table, so mutations reach the instruction decoder instead of stopping at
// a checksum.
func FuzzBinaryChunk(f *testing.F) {
	good := writeTrace(f, testHeader, testInsts(), WithChunkInsts(3))
	fs := splitFrames(f, good)
	for _, fr := range fs[1 : len(fs)-1] {
		raw := fr.raw
		f.Add(uint32(3), raw[chunkFixedLen:])
	}
	// Chunks of fixed-width lists.
	lists := listInsts()
	for _, at := range []int{0, 5, 12, 20, 30, 39, 40, 43} {
		fs := splitFrames(f, writeTrace(f, testHeader, lists[at:at+3], WithChunkInsts(3)))
		f.Add(uint32(3), fs[1].raw[chunkFixedLen:])
	}
	hdr := fs[0].raw
	f.Fuzz(func(t *testing.T, count uint32, payload []byte) {
		rec := chunkRecord(0, 0, count, 0, nil, nil)[:chunkFixedLen]
		rec = reseal(fixLen(append(rec, payload...)))
		data := joinFrames(t, [][]byte{hdr, rec})
		r, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
		if err != nil {
			t.Fatal(err)
		}
		records := 0
		var nextErr error
		for {
			if _, err := r.Next(); err != nil {
				checkFuzzErr(t, err)
				nextErr = err
				break
			}
			records++
		}
		// Read again, taking repeats a few at a time (CapRepeat): as
		// many records, and the same error at the end.
		r, err = NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for {
			if _, err = r.Next(); err != nil {
				break
			}
			got++
			max := 1 + got%4
			n, _, _ := r.Repeats(max)
			if n < 0 || n > max {
				t.Fatalf("Repeats(%d) took %d records", max, n)
			}
			got += n
		}
		if got != records || err.Error() != nextErr.Error() {
			t.Fatalf("with Repeats: %d records, then %v; by Next alone %d, then %v", got, err, records, nextErr)
		}
	})
}

// cloneVals copies an instruction's vectors, lists included.
func cloneVals(in *Inst) []Vector {
	if in.Dir != nil {
		return nil
	}
	vs := slices.Clone(in.Vals)
	for i := range vs {
		vs[i].List, vs[i].ListHi = slices.Clone(vs[i].List), slices.Clone(vs[i].ListHi)
	}
	return vs
}

// checkNextInto reads data again with NextInto into one arena, from nil
// so that it grows and moves: every record's vectors must equal Next's
// (copies), still at the end, when every list decoded into the arena is
// still held; and the reading must end with the same error.
func checkNextInto(t *testing.T, data []byte, copies [][]Vector, wantErr error) {
	t.Helper()
	r, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
	if err != nil {
		t.Fatalf("second open: %v", err)
	}
	var arena []uint64
	var kept [][]Vector
	for {
		in, a, err := r.NextInto(arena)
		arena = a
		if err != nil {
			if err.Error() != wantErr.Error() {
				t.Fatalf("NextInto ends with %v, Next with %v", err, wantErr)
			}
			break
		}
		if in.Dir != nil {
			kept = append(kept, nil)
			continue
		}
		kept = append(kept, slices.Clone(in.Vals)) // the lists stay in the arena
	}
	if len(kept) != len(copies) {
		t.Fatalf("NextInto read %d records, Next %d", len(kept), len(copies))
	}
	for i := range kept {
		if !reflect.DeepEqual(kept[i], copies[i]) {
			t.Fatalf("record %d: NextInto kept %+v, Next read %+v", i, kept[i], copies[i])
		}
	}
}
