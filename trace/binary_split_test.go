package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// splitCase is an instruction text and how to fill each of its inputs.
var splitTexts = []string{
	"@%p atom.global.add.u32 d, [a], b",
	"atom.global.b128.exch d, [a], b",
	"lsc_load.slm   (M1,32) V13:d32x4  flat[V12]:a16",
	"lsc_load.ugm          (M1_NM,1)  V13:d32x16t  bti(0x4)[V12]:a32",
	"lsc_store.slm     (M1,32) flat[V12]:a32  V13:d32x4",
	"lsc_load_strided.ugm   (M1,32) V13:d32  flat[V12,0x100]:a32",
	"@P0 ATOM.ADD R0, [R2], R3",
}

// randomInst is an instruction of st with random vectors: lists on most
// inputs (high halves on some wide ones), a predicate of every lane.
func randomInst(r *rand.Rand, st *Static, seq uint64) Inst {
	in := Inst{Seq: seq, Static: st, Group: int64(r.IntN(4)), Warp: int64(r.IntN(8)), Mask: r.Uint32() | 1}
	for j := range st.Inputs {
		inp := &st.Inputs[j]
		var v Vector
		switch {
		case j == st.Pred:
			v = Vector{Kind: VecBroadcast, Base: 0xffffffff}
		case r.IntN(5) == 0:
			v = Vector{Kind: VecStride, Base: r.Uint64N(1 << 20), Stride: 4}
		default:
			n := inp.Count(st.ExecSize)
			v = Vector{Kind: VecList, List: make([]uint64, n)}
			for i := range v.List {
				v.List[i] = r.Uint64N(1 << uint(8+r.IntN(40)))
			}
			if inp.Bits == 128 {
				if r.IntN(2) == 0 {
					v.ListHi = make([]uint64, n)
					for i := range v.ListHi {
						v.ListHi[i] = r.Uint64()
					}
				} else {
					v.BaseHi = r.Uint64()
				}
			}
		}
		in.Vals = append(in.Vals, v)
	}
	return in
}

// splitStatics are splitTexts parsed.
func splitStatics(t *testing.T) []*Static {
	t.Helper()
	var statics []*Static
	for _, text := range splitTexts {
		st, err := ParseStatic(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		statics = append(statics, st)
	}
	return statics
}

// TestSplitFileRoundTrip: a split file reads back its header, every
// instruction's seq (with gaps), group, warp, mask and PartInfo, the
// values of the lanes in its mask (lists masked to them, kind 6: zero
// elsewhere), whole predicates and uniform addresses, and its
// directives, for instructions of every list layout (lane, element-major,
// transposed, 128-bit with and without high halves), masks of none, a few
// (deltas written and read lane by lane) to all lanes, and chunks cut
// every few records.
func TestSplitFileRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 8))
	statics := splitStatics(t)
	sh := SplitHeader{Part: 2, Parts: 3, Slice: 1, Slices: 4, TraceHash: 0x0123456789abcdef, TraceSize: 98765, Name: "h.zst",
		FirstChunk: 3, EndChunk: 7, Chunks: 12}
	hdr := &Header{Regions: []Region{{Space: Global, Base: 0x1000, Size: 0x1000}}}
	var buf bytes.Buffer
	w, err := NewBinaryWriter(&buf, hdr, WithSplit(sh), WithChunkInsts(5))
	if err != nil {
		t.Fatal(err)
	}
	var want []Inst
	seq := uint64(100)
	for i := range 60 {
		if i%17 == 5 {
			d := Inst{Dir: &Directive{Init: &Init{Space: Global, Group: -1, Addr: 0x1040, Type: TypeU32, Data: []byte{1, 2, 3, 4}}}}
			if err := w.Write(&d); err != nil {
				t.Fatal(err)
			}
			want = append(want, d)
			continue
		}
		st := statics[r.IntN(len(statics))]
		in := randomInst(r, st, seq)
		switch r.IntN(5) {
		case 0:
			in.Mask = 0
		case 1:
			in.Mask = st.ExecMask()
		case 2: // a few lanes, a scattered warp's share: stored as deltas
			in.Mask = 0
			for range 1 + r.IntN(maskedDeltasMax) {
				in.Mask |= 1 << r.IntN(st.ExecSize)
			}
		}
		in.Part = &PartInfo{Lanes: min(32, uint32(bits.OnesCount32(in.Mask&st.ExecMask()))+uint32(r.IntN(3))), Row: r.IntN(2) == 0}
		if in.Part.Row {
			in.Part.Addresses, in.Part.MaxConflict, in.Part.Sectors = uint32(r.IntN(40)), uint32(1+r.IntN(32)), uint32(r.IntN(300))
		}
		if err := w.Write(&in); err != nil {
			t.Fatal(err)
		}
		want = append(want, in)
		seq += 1 + uint64(r.IntN(3)) // gaps: the other partitions' instructions
	}
	bad := randomInst(r, statics[0], 5) // before the last seq
	bad.Part = &PartInfo{}
	if err := w.Write(&bad); err == nil || !strings.Contains(err.Error(), "after instruction") {
		t.Errorf("an instruction going back in seq: %v", err)
	}
	bad.Seq, bad.Part = seq, nil
	if err := w.Write(&bad); err == nil || !strings.Contains(err.Error(), "no Part") {
		t.Errorf("an instruction without Part: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()

	x, err := OpenBinaryIndex(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Split(); got == nil || !reflect.DeepEqual(*got, sh) {
		t.Fatalf("index split header %+v, want %+v", got, sh)
	}
	if got := x.Split().Trace(); got != "xxh64:0123456789abcdef 98765" {
		t.Errorf("Trace() = %q", got)
	}
	ir, err := x.Reader(0, x.NumChunks())
	if err != nil {
		t.Fatal(err)
	}
	sr, err := NewBinaryReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	br, err := NewBinaryReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if br.Caps()&CapBlock == 0 || sr.Caps()&CapBlock == 0 {
		t.Errorf("a split file's reader declares %v, want CapBlock", br.Caps())
	}
	for name, src := range map[string]interface {
		Header() *Header
		Next() (*Inst, error)
	}{"index": ir, "stream": sr, "blocks": &blockReader{t: t, r: br}} {
		if !reflect.DeepEqual(src.Header().Regions, hdr.Regions) {
			t.Errorf("%s: header regions %+v", name, src.Header().Regions)
		}
		for k, w := range want {
			got, err := src.Next()
			if err != nil {
				t.Fatalf("%s: record %d: %v", name, k, err)
			}
			if w.Dir != nil {
				if got.Dir == nil || !reflect.DeepEqual(*got.Dir.Init, *w.Dir.Init) {
					t.Fatalf("%s: record %d: %+v, want the directive", name, k, got)
				}
				continue
			}
			if got.Seq != w.Seq || got.Group != w.Group || got.Warp != w.Warp || got.Mask != w.Mask || got.Static.Text != w.Static.Text {
				t.Fatalf("%s: record %d: seq %d group %d warp %d mask %#x %q, want %d %d %d %#x %q", name, k,
					got.Seq, got.Group, got.Warp, got.Mask, got.Static.Text, w.Seq, w.Group, w.Warp, w.Mask, w.Static.Text)
			}
			if got.Part == nil || *got.Part != *w.Part {
				t.Fatalf("%s: record %d (seq %d): part %+v, want %+v", name, k, w.Seq, got.Part, *w.Part)
			}
			st := w.Static
			mask := w.Mask & st.ExecMask()
			for j := range st.Inputs {
				inp := &st.Inputs[j]
				wv, gv := &w.Vals[j], &got.Vals[j]
				whole := j == st.Pred || st.AddrUniform && j == st.Addr || mask == st.ExecMask() || wv.Kind != VecList
				for i := range inp.Count(st.ExecSize) {
					in := whole || mask>>uint(laneOf(inp, st.ExecSize, i))&1 != 0
					lo, hi := wv.Lo(i), wv.Hi(i)
					if !in {
						lo, hi = 0, 0
						if wv.ListHi == nil {
							hi = wv.BaseHi
						}
					}
					if w.Mask == 0 {
						// No lane in the partition: no vectors stored,
						// zero broadcasts read back.
						in, lo, hi = false, 0, 0
					}
					if gv.Lo(i) != lo || gv.Hi(i) != hi {
						t.Fatalf("%s: seq %d %q input %s value %d (lane in mask %v): %#x:%#x, want %#x:%#x", name, w.Seq, st.Text, inp.Name, i, in, gv.Hi(i), gv.Lo(i), hi, lo)
					}
				}
			}
		}
		if _, err := src.Next(); err != io.EOF {
			t.Errorf("%s: after the last record: %v, want EOF", name, err)
		}
	}
	// A split file's flag is a version 2 header's, which older readers
	// reject; a plain trace has no split header.
	var plain bytes.Buffer
	pw, _ := NewBinaryWriter(&plain, hdr)
	pw.Close()
	pr, err := NewBinaryReader(bytes.NewReader(plain.Bytes()))
	if err != nil || pr.Split() != nil {
		t.Errorf("a plain trace: split header %v, err %v", pr.Split(), err)
	}
}

// blockReader reads a split file a block at a time (NextBlock) and hands
// its records over one at a time, as Next does: each instruction's compact
// lists (BlockCompact), which it checks hold one value for each lane of
// the mask, spread over the warp.
type blockReader struct {
	t      *testing.T
	r      *BinaryReader
	insts  []Inst
	spread Inst
}

func (b *blockReader) Header() *Header { return b.r.Header() }

func (b *blockReader) Next() (*Inst, error) {
	if len(b.insts) == 0 {
		blk, dir, err := b.r.NextBlock()
		if err != nil {
			return nil, err
		}
		if dir != nil {
			return dir, nil
		}
		b.insts = blk.Insts
	}
	in := &b.insts[0]
	b.insts = b.insts[1:]
	st := in.Static
	mask := in.Mask & st.ExecMask()
	b.spread = *in
	b.spread.Vals = append([]Vector(nil), in.Vals...)
	for j := range in.Vals {
		v := &in.Vals[j]
		masked := v.Kind == VecList && st.Inputs[j].Elems <= 1 && st.Inputs[j].Bits != 128 && maskable(st, j) && mask != st.ExecMask()
		if BlockCompact(in, j) != masked {
			b.t.Fatalf("seq %d %q input %s: BlockCompact %v, want %v", in.Seq, st.Text, st.Inputs[j].Name, BlockCompact(in, j), masked)
		}
		if !masked {
			continue
		}
		if len(v.List) != bits.OnesCount32(mask) {
			b.t.Fatalf("seq %d %q input %s: a compact list of %d values for %d lanes", in.Seq, st.Text, st.Inputs[j].Name, len(v.List), bits.OnesCount32(mask))
		}
		full := make([]uint64, st.ExecSize)
		k := 0
		for m := mask; m != 0; m &= m - 1 {
			full[bits.TrailingZeros32(m)] = v.List[k]
			k++
		}
		b.spread.Vals[j].List = full
	}
	return &b.spread, nil
}

// laneOf is the lane whose value index i of input in is.
func laneOf(in *Input, execSize, i int) int {
	if in.Elems > 1 {
		if in.Transposed {
			return i / in.Elems
		}
		return i % execSize
	}
	return i
}

// chunkGuard is a file that fails any read of bytes in [from, to): the
// frames of a trace's chunks.
type chunkGuard struct {
	b        []byte
	from, to int64
}

func (g *chunkGuard) ReadAt(p []byte, off int64) (int, error) {
	if off < g.to && off+int64(len(p)) > g.from {
		return 0, io.ErrUnexpectedEOF
	}
	return bytes.NewReader(g.b).ReadAt(p, off)
}

// TestIdentityOfHeaderAndSeekTable: a binary trace's identity
// (BinaryIndex.Identity, replay.trace) reads its header frame and seek
// table, never a chunk's frame; it is the same for the same bytes, and
// differs for two traces that differ in one lane's value of one record in
// a middle chunk, the same size compressed or not, and for two traces that
// differ only in their header.
func TestIdentityOfHeaderAndSeekTable(t *testing.T) {
	st, err := ParseStatic("atom.global.add.u32 d, [a], b")
	if err != nil {
		t.Fatal(err)
	}
	write := func(base uint64, change int, opts ...WriterOption) []byte {
		t.Helper()
		var buf bytes.Buffer
		w, err := NewBinaryWriter(&buf, &Header{Regions: []Region{{Space: Global, Base: base, Size: 1 << 20}}},
			append([]WriterOption{WithChunkInsts(4)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		for seq := range uint64(40) {
			in := Inst{Seq: seq, Static: st, Mask: 0xffffffff, Vals: make([]Vector, len(st.Inputs))}
			for j := range in.Vals {
				in.Vals[j] = Vector{Kind: VecList, List: make([]uint64, 32)}
				for l := range in.Vals[j].List {
					in.Vals[j].List[l] = 0x1000 + 4*uint64((int(seq)*7+l*13)%1024)
				}
			}
			if int(seq) == change {
				in.Vals[st.Addr].List[5] += 4 // one lane's address, one word on
			}
			if err := w.Write(&in); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	id := func(b []byte) uint64 {
		t.Helper()
		x, err := OpenBinaryIndex(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		from, _ := x.ChunkOffset(0)
		last, n := x.ChunkOffset(x.NumChunks() - 1)
		g := &chunkGuard{b: b, from: from, to: last + n}
		if x, err = OpenBinaryIndex(g, int64(len(b))); err != nil {
			t.Fatal(err)
		}
		h, err := x.Identity(int64(len(b)))
		if err != nil {
			t.Fatalf("Identity read a chunk's frame: %v", err)
		}
		return h
	}
	for _, opts := range [][]WriterOption{nil, {WithUncompressed()}} {
		a, a2, b, c := write(0x1000, -1, opts...), write(0x1000, -1, opts...), write(0x1000, 21, opts...), write(0x2000, -1, opts...)
		if !bytes.Equal(a, a2) || len(a) != len(b) && opts != nil {
			t.Fatalf("the traces: %d, %d and %d bytes", len(a), len(a2), len(b))
		}
		switch {
		case id(a) != id(a2):
			t.Errorf("two copies of a trace: identities %x and %x", id(a), id(a2))
		case id(a) == id(b):
			t.Errorf("traces differing in one record's value: the same identity %x", id(a))
		case id(a) == id(c):
			t.Errorf("traces differing in their header: the same identity %x", id(a))
		}
	}
}

// TestMaskedFewForms: a masked list of a few one-value lanes is written
// as a fixed-width list (kind 4) when its values differ in more than
// their low byte, with the minimum, shift and width of the format's
// fixed form, else as deltas (kind 2); either reads back into the mask's
// lanes, zero elsewhere, including a list at the very end of the payload
// (no 8-byte load past it), and a list cut short is refused.
func TestMaskedFewForms(t *testing.T) {
	for _, c := range []struct {
		name string
		mask uint32
		vals map[int]uint64
		kind byte
		form byte // fixed: width | shift<<4
	}{
		{"scattered addresses", 1<<3 | 1<<17 | 1<<30, map[int]uint64{3: 0x7f00001000, 17: 0x7f00000040, 30: 0x7f00030000}, vecKindFixed, 2 | 6<<4}, // offsets 0xfc0, 0, 0x2ffc0: >>6, 12 bits
		{"eight lanes, 8-byte offsets", 0xff, map[int]uint64{0: 0, 1: ^uint64(0), 2: 1, 3: 1 << 63, 4: 5, 5: 6, 6: 7, 7: 8}, vecKindFixed, 8},
		{"small values", 1<<1 | 1<<2 | 1<<9, map[int]uint64{1: 3, 2: 1, 9: 200}, vecKindList, 0},
		{"one lane", 1 << 12, map[int]uint64{12: 0xdead_beef_0000}, vecKindList, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			vs := make([]uint64, 32)
			for l, v := range c.vals {
				vs[l] = v
			}
			vs[31] ^= 0x5555 // a lane outside the mask: not stored
			b := appendMaskedFew(nil, vs, c.mask)
			if b[0] != c.kind {
				t.Fatalf("inner kind %d, want %d (% x)", b[0], c.kind, b)
			}
			if c.kind == vecKindFixed {
				_, n := uvarint(b[1:])
				if b[1+n] != c.form {
					t.Errorf("form byte %#x, want %#x", b[1+n], c.form)
				}
			}
			got := make([]uint64, 32)
			for i := range got {
				got[i] = 99 // the arena's leftovers: overwritten with zeros
			}
			var rest []byte
			var ok bool
			if c.kind == vecKindFixed {
				rest, ok = readFixedMasked(b[1:], got, c.mask)
			} else {
				var n int
				rest, n = readDeltasMasked(b[1:], got, c.mask)
				ok = n == 0
			}
			if !ok || len(rest) != 0 {
				t.Fatalf("read: ok %v, %d bytes left", ok, len(rest))
			}
			for l := range got {
				if got[l] != c.vals[l] {
					t.Errorf("lane %d: %#x, want %#x", l, got[l], c.vals[l])
				}
			}
			if c.kind == vecKindFixed {
				if _, ok := readFixedMasked(b[1:len(b)-1], got, c.mask); ok {
					t.Errorf("a list cut short by a byte was read")
				}
			}
		})
	}
}

// TestWriteStoredFrame: a stored frame written piece by piece to the
// output (writeStoredFrame, split files' frames) is byte for byte the
// frame appendStoredFrame makes, and its size is the bytes written, for
// contents of none, one byte, exactly one 128 KiB block, one byte over,
// and several blocks, given whole or as a head and a tail cut anywhere
// around a block's end (TestUncompressedFrames reads such frames back).
func TestWriteStoredFrame(t *testing.T) {
	for _, n := range []int{0, 1, zstdMaxBlock, zstdMaxBlock + 1, 2*zstdMaxBlock + 777} {
		rec := make([]byte, n)
		for i := range rec {
			rec[i] = byte(i*7 + i>>9)
		}
		check := uint32(0xfeedc0de) ^ uint32(n)
		want := appendStoredFrame(nil, rec, check)
		var size int
		for _, cut := range []int{n, 0, 1, n / 2, zstdMaxBlock - 1, zstdMaxBlock, zstdMaxBlock + 1} {
			if cut > n {
				continue
			}
			// The record's head and its tail (a split chunk's
			// instructions) in two pieces: the same frame.
			var got bytes.Buffer
			var err error
			size, err = writeStoredFrame(&got, rec[:cut], rec[cut:], check)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) || size != len(want) {
				t.Errorf("%d bytes cut at %d: wrote %d bytes (size %d), want %d, equal %v", n, cut, got.Len(), size, len(want), bytes.Equal(got.Bytes(), want))
			}
		}
		if blocks := (n + zstdMaxBlock - 1) / zstdMaxBlock; size != 9+3*max(blocks, 1)+n+4 {
			t.Errorf("%d bytes: frame of %d bytes, want %d", n, size, 9+3*max(blocks, 1)+n+4)
		}
	}
}

// TestSplitFileChunkBytes: a split file's writer ends a chunk once its
// instructions take 256 KiB (splitChunkBytes), not the 1 MiB of other
// traces, and every chunk but the last holds at least that much and at
// most that and one record; the file (a stored one: its chunks'
// instructions framed from the chunk buffer, not copied) reads back
// whole, through the reader and through a zstd decoder.
func TestSplitFileChunkBytes(t *testing.T) {
	const want256K = 256 << 10
	st, err := ParseStatic("atom.global.add.u32 d, [a], b")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	var buf bytes.Buffer
	w, err := NewBinaryWriter(&buf, nil, WithSplit(SplitHeader{Parts: 2, Slices: 1}), WithUncompressed())
	if err != nil {
		t.Fatal(err)
	}
	const insts = 3000 // of ~500 bytes: ~1.4 MiB
	for i := range insts {
		in := randomInst(r, st, uint64(i))
		in.Mask = ^uint32(0)
		for j := range in.Vals {
			in.Vals[j] = Vector{Kind: VecList, List: make([]uint64, 32)}
			for l := range in.Vals[j].List {
				in.Vals[j].List[l] = r.Uint64()
			}
		}
		in.Part = &PartInfo{Lanes: 32}
		if err := w.Write(&in); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := OpenBinaryIndex(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	total := buf.Len()
	if n := x.NumChunks(); n < total/want256K || n > total/want256K+1 {
		t.Fatalf("%d chunks in a split file of %d bytes; want about one a %d bytes", n, total, want256K)
	}
	for i, e := range x.entries[1 : len(x.entries)-1] { // not the header's, nor the last chunk's
		if e.dsize < want256K || e.dsize > want256K+4<<10 {
			t.Errorf("chunk %d: %d bytes, want %d and at most a record more", i, e.dsize, want256K)
		}
	}
	// Its chunks (their instructions written from the chunk buffer after
	// the record's head: startFrame) read back whole, checksums and all.
	src, err := x.Reader(0, x.NumChunks())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r = rand.New(rand.NewPCG(9, 9))
	n := 0
	for ; ; n++ {
		in, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("instruction %d: %v", n, err)
		}
		want := randomInst(r, st, uint64(n))
		for j := range want.Vals {
			want.Vals[j] = Vector{Kind: VecList, List: make([]uint64, 32)}
			for l := range want.Vals[j].List {
				want.Vals[j].List[l] = r.Uint64()
			}
		}
		if in.Seq != uint64(n) || !reflect.DeepEqual(in.Vals[len(in.Vals)-1].List, want.Vals[len(want.Vals)-1].List) {
			t.Fatalf("instruction %d: seq %d, last input %x, want %x", n, in.Seq, in.Vals[len(in.Vals)-1].List, want.Vals[len(want.Vals)-1].List)
		}
	}
	if n != insts {
		t.Errorf("read back %d instructions of %d", n, insts)
	}
	// And their frames are zstd's, content checksums and all.
	d, err := zstd.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := io.Copy(io.Discard, d); err != nil {
		t.Errorf("zstd decoder: %v", err)
	}
}

// TestSplitHeaderPartitionMap: a split header's partition map comes back
// as written, a header without one has none, and a map that gives a line
// a partition past Parts is refused.
func TestSplitHeaderPartitionMap(t *testing.T) {
	for _, lines := range [][]SplitLine{nil, {{Key: 0xfedcba9876543210, Line: 0x1234, Part: 2}, {Key: 7, Line: 1 << 50, Part: 0}}} {
		sh := SplitHeader{Part: 1, Parts: 3, Slice: 0, Slices: 1, TraceHash: 1, TraceSize: 2, Name: "t.zst", Chunks: 1, EndChunk: 1, Lines: lines}
		var buf bytes.Buffer
		w, err := NewBinaryWriter(&buf, &Header{}, WithSplit(sh))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		x, err := OpenBinaryIndex(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if got := x.Split(); got == nil || !reflect.DeepEqual(*got, sh) {
			t.Errorf("split header %+v, want %+v", got, sh)
		}
	}
	bad := SplitHeader{Parts: 3, Slices: 1, Lines: []SplitLine{{Key: 1, Line: 2, Part: 3}}}
	if _, err := NewBinaryWriter(&bytes.Buffer{}, &Header{}, WithSplit(bad)); err == nil || !strings.Contains(err.Error(), "partition 3 of 3") {
		t.Errorf("a map with a partition past Parts: %v", err)
	}
}

// appendMaskedFewSpec is appendMaskedFew as docs/FORMAT.md states its
// fixed form: the minimum lo, the shift the trailing zeros of the OR of
// every value's difference from lo (at most 15), the width the bytes of
// the largest shifted difference, each value's shifted difference in
// width bytes.
func appendMaskedFewSpec(b []byte, vs []uint64, mask uint32) []byte {
	var xs []uint64
	for m := mask; m != 0; m &= m - 1 {
		xs = append(xs, vs[bits.TrailingZeros32(m)])
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	if len(xs) < 2 || hi-lo <= 0xff {
		b = append(b, vecKindList)
		var prev uint64
		for _, x := range xs {
			b = binary.AppendUvarint(b, zigzag(int64(x-prev)))
			prev = x
		}
		return b
	}
	var or uint64
	for _, x := range xs {
		or |= x - lo
	}
	shift := min(bits.TrailingZeros64(or), 15)
	width := (bits.Len64((hi-lo)>>shift) + 7) / 8
	b = append(b, vecKindFixed)
	b = binary.AppendUvarint(b, lo)
	b = append(b, byte(width|shift<<4))
	for _, x := range xs {
		b = append(b, binary.LittleEndian.AppendUint64(nil, (x-lo)>>shift)[:width]...)
	}
	return b
}

// TestMaskedFewBytesAsSpec: appendMaskedFew's bytes, after a prefix and
// into buffers of every spare capacity (its fixed form stores 8 bytes a
// value past its length), are the format's, for values sharing low bits
// (shifts 0 to 15 and beyond), of every width, and spread over 1 to 8 lanes.
func TestMaskedFewBytesAsSpec(t *testing.T) {
	r := rand.New(rand.NewPCG(48, 5))
	for i := range 20000 {
		var mask uint32
		for range 1 + r.IntN(maskedDeltasMax) {
			mask |= 1 << r.IntN(32)
		}
		vs := make([]uint64, 32)
		base, shift, width := r.Uint64(), uint(r.IntN(20)), uint(r.IntN(65))
		for l := range vs {
			vs[l] = base + (r.Uint64()>>(64-width))<<shift // width 0: base
		}
		prefix := []byte{0xee, 0xdd}
		buf := append(make([]byte, 0, 2+r.IntN(80)), prefix...)
		got := appendMaskedFew(buf, vs, mask)
		want := appendMaskedFewSpec(slices.Clone(prefix), vs, mask)
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: mask %#x values %x:\n got % x\nwant % x", i, mask, vs, got, want)
		}
	}
}

// TestFoldRecords: a combined split file (header flag bit 2) carries fold
// records between its blocks, read back with their static, group,
// addresses and values by Next and NextBlock alike, and its split header
// says Combined; a writer refuses a fold in a split file that is not
// combined, or with addresses that do not ascend, and stays usable.
func TestFoldRecords(t *testing.T) {
	add, err := ParseStatic("atom.shared.add.u32 d, [a], b")
	if err != nil {
		t.Fatal(err)
	}
	sh := SplitHeader{Parts: 2, Slices: 1, Chunks: 1, EndChunk: 1, Combined: true}
	inst := func(seq uint64) *Inst {
		return &Inst{Seq: seq, Static: add, Group: 3, Mask: 0, Part: &PartInfo{Lanes: 32, Row: true, Addresses: 7},
			Vals: []Vector{{Kind: VecStride, Base: 0x40, Stride: 4}, {Kind: VecBroadcast, Base: 1}}}
	}
	folds := []*Fold{
		{Static: add, Group: 3, Addrs: []uint64{0x40, 0x44, 0x1000, 1 << 40}, Vals: []uint64{32, 0, 0xffffffff, 7}},
		{Static: add, Group: -2, Addrs: []uint64{8}, Vals: []uint64{1 << 33}},
	}
	recs := []*Inst{inst(4), inst(9), {Dir: &Directive{Fold: folds[0]}}, inst(10), {Dir: &Directive{Fold: folds[1]}}}
	data := writeTrace(t, nil, recs, WithSplit(sh), WithChunkInsts(2))
	check := func(how string, got []*Inst) {
		t.Helper()
		if len(got) != len(recs) {
			t.Fatalf("%s: %d records, want %d", how, len(got), len(recs))
		}
		for i, g := range got {
			w := recs[i]
			switch {
			case w.Dir == nil && (g.Dir != nil || g.Seq != w.Seq || g.Part.Lanes != 32):
				t.Errorf("%s: record %d: %+v, want instruction %d", how, i, g, w.Seq)
			case w.Dir != nil && (g.Dir == nil || g.Dir.Fold == nil):
				t.Errorf("%s: record %d: %+v, want a fold", how, i, g)
			case w.Dir != nil:
				f, wf := g.Dir.Fold, w.Dir.Fold
				if f.Static.Text != wf.Static.Text || f.Group != wf.Group || !slices.Equal(f.Addrs, wf.Addrs) || !slices.Equal(f.Vals, wf.Vals) {
					t.Errorf("%s: record %d: fold %+v, want %+v", how, i, *f, *wf)
				}
			}
		}
	}
	r, err := NewBinaryReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Split().Combined {
		t.Error("the split header does not say Combined")
	}
	var got []*Inst
	for {
		in, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c := *in
		if in.Dir != nil && in.Dir.Fold != nil {
			f := *in.Dir.Fold
			f.Addrs, f.Vals = slices.Clone(f.Addrs), slices.Clone(f.Vals)
			c.Dir = &Directive{Fold: &f}
		}
		got = append(got, &c)
	}
	check("Next", got)
	r, err = NewBinaryReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for {
		b, d, err := r.NextBlock()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d != nil {
			f := *d.Dir.Fold
			f.Addrs, f.Vals = slices.Clone(f.Addrs), slices.Clone(f.Vals)
			got = append(got, &Inst{Dir: &Directive{Fold: &f}})
			continue
		}
		for i := range b.Insts {
			c := b.Insts[i]
			got = append(got, &c)
		}
	}
	check("NextBlock", got)

	var buf bytes.Buffer
	plain := sh
	plain.Combined = false
	w, err := NewBinaryWriter(&buf, nil, WithSplit(plain))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Inst{Dir: &Directive{Fold: folds[0]}}); err == nil || !strings.Contains(err.Error(), "outside a combined split file") {
		t.Errorf("a fold in a split file not combined: %v", err)
	}
	w, err = NewBinaryWriter(&buf, nil, WithSplit(sh))
	if err != nil {
		t.Fatal(err)
	}
	bad := &Fold{Static: add, Addrs: []uint64{8, 8}, Vals: []uint64{1, 2}}
	if err := w.Write(&Inst{Dir: &Directive{Fold: bad}}); err == nil || !strings.Contains(err.Error(), "do not ascend") {
		t.Errorf("a fold of addresses 8, 8: %v", err)
	}
	if err := w.Write(inst(1)); err != nil {
		t.Errorf("after a refused fold: %v", err)
	}
}

// TestSplitFileAppendHeld: a split file written as a writer's records
// then a held writer's (WithHeldChunks, Append) reads back, through the
// index and as a stream, as the file of one writer that took them all,
// where that one's chunk ends at the cut: every record, its seq (the held
// writer counts from its first instruction's), group, warp, mask, Part and
// lists; the same chunks, numbered on. The held part starts with an
// instruction, or with a directive (a chunk of directives alone, with
// chunk 1, first seq 0 until Append sets it). An Append of another split
// header, or of seqs going back, is refused.
func TestSplitFileAppendHeld(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	statics := splitStatics(t)
	sh := SplitHeader{Part: 1, Parts: 2, Slice: 0, Slices: 1, TraceHash: 7, TraceSize: 99, Name: "a.zst", Chunks: 4, EndChunk: 4,
		Combined: true, Lines: []SplitLine{{Key: 1, Line: 2, Part: 1}}}
	hdr := &Header{Regions: []Region{{Space: Global, Base: 0x1000, Size: 0x1000}}}
	const chunk = 5
	var recs []Inst
	seq := uint64(10)
	for i := range 47 {
		if i >= 20 && i < 26 || i%9 == 4 { // a chunk of directives at 20
			recs = append(recs, Inst{Dir: &Directive{Init: &Init{Space: Global, Group: -1, Addr: 0x1040, Type: TypeU32, Data: []byte{1, 2, 3, byte(i)}}}})
			continue
		}
		in := randomInst(r, statics[r.IntN(len(statics))], seq)
		in.Part = &PartInfo{Lanes: 3, Row: i%2 == 0}
		recs = append(recs, in)
		seq += 1 + uint64(r.IntN(3))
	}
	write := func(w *BinaryWriter, recs []Inst) {
		t.Helper()
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(data []byte) (got []string, chunks int) {
		t.Helper()
		x, err := OpenBinaryIndex(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		ir, err := x.Reader(0, x.NumChunks())
		if err != nil {
			t.Fatal(err)
		}
		sr, err := NewBinaryReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range []*BinaryReader{ir, sr} {
			for {
				in, err := src.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if in.Dir != nil {
					got = append(got, fmt.Sprint("dir ", in.Dir.Init.Data))
					continue
				}
				got = append(got, fmt.Sprint(in.Seq, in.Static.Text, in.Group, in.Warp, in.Mask, *in.Part, in.Vals))
			}
		}
		return got, x.NumChunks()
	}
	var one bytes.Buffer
	w, err := NewBinaryWriter(&one, hdr, WithSplit(sh), WithUncompressed(), WithChunkInsts(chunk))
	if err != nil {
		t.Fatal(err)
	}
	write(w, recs)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, wantChunks := read(one.Bytes())
	if len(want) != 2*len(recs) {
		t.Fatalf("one writer: %d records read, want %d", len(want), 2*len(recs))
	}
	for _, cut := range []int{15, 20, 30, 47} { // multiples of chunk, and the end
		var two bytes.Buffer
		w, err := NewBinaryWriter(&two, hdr, WithSplit(sh), WithUncompressed(), WithChunkInsts(chunk))
		if err != nil {
			t.Fatal(err)
		}
		// Two held writers, of two partitions, share a held file, their
		// chunks interleaved in it.
		hf := heldFile(t)
		h, err := NewBinaryWriter(nil, hdr, WithSplit(sh), WithUncompressed(), WithChunkInsts(chunk), WithHeldChunks(hf))
		if err != nil {
			t.Fatal(err)
		}
		decoy := sh
		decoy.Part = 0
		d, err := NewBinaryWriter(nil, hdr, WithSplit(decoy), WithUncompressed(), WithChunkInsts(chunk-2), WithHeldChunks(hf))
		if err != nil {
			t.Fatal(err)
		}
		write(w, recs[:cut])
		for i := range recs[cut:] {
			write(h, recs[cut+i:cut+i+1])
			write(d, recs[cut+i:cut+i+1])
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Append(h); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, chunks := read(two.Bytes())
		if chunks != wantChunks {
			t.Errorf("cut at record %d: %d chunks, want %d", cut, chunks, wantChunks)
		}
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || got[i] != want[i] {
				t.Fatalf("cut at record %d: %d records, want %d; record %d differs", cut, len(got), len(want), i)
			}
		}
	}

	w, _ = NewBinaryWriter(io.Discard, hdr, WithSplit(sh), WithUncompressed())
	other := sh
	other.Part = 0
	h, _ := NewBinaryWriter(nil, hdr, WithSplit(other), WithUncompressed(), WithHeldChunks(heldFile(t)))
	if err := w.Append(h); err == nil || !strings.Contains(err.Error(), "another split header") {
		t.Errorf("Append of another partition's writer: %v", err)
	}
	w, _ = NewBinaryWriter(io.Discard, hdr, WithSplit(sh), WithUncompressed())
	h, _ = NewBinaryWriter(nil, hdr, WithSplit(sh), WithUncompressed(), WithHeldChunks(heldFile(t)))
	write(h, recs[:3]) // the held writer's instructions come first
	write(w, recs[5:8])
	if err := w.Append(h); err == nil || !strings.Contains(err.Error(), "after instruction") {
		t.Errorf("Append of earlier seqs: %v", err)
	}
	if _, err := NewBinaryWriter(nil, hdr, WithSplit(sh), WithHeldChunks(heldFile(t))); err == nil {
		t.Error("WithHeldChunks of compressed frames: no error")
	}
	if _, err := NewBinaryWriter(nil, hdr, WithSplit(sh), WithUncompressed(), WithHeldChunks(nil)); err == nil {
		t.Error("WithHeldChunks(nil): no error")
	}
}

// heldFile is a held file in a new temporary file.
func heldFile(t *testing.T) *HeldFile {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "held")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return NewHeldFile(f)
}

// TestHeldWriterMemoryFlat: a held writer holding 128 chunks (32 MiB)
// grows the heap by less than 4 MiB (its chunks are in its held file, not
// in memory), and its Append writes every one of them, in order.
func TestHeldWriterMemoryFlat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	st, err := ParseStatic(splitTexts[0])
	if err != nil {
		t.Fatal(err)
	}
	sh := SplitHeader{Part: 0, Parts: 1, Slices: 1, TraceHash: 1, TraceSize: 1, Name: "a.zst", Chunks: 1, EndChunk: 1}
	const chunks = 128
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	hf := heldFile(t)
	h, err := NewBinaryWriter(nil, nil, WithSplit(sh), WithUncompressed(), WithHeldChunks(hf))
	if err != nil {
		t.Fatal(err)
	}
	in := randomInst(r, st, 1)
	in.Part = &PartInfo{Lanes: 1, Row: true}
	var n uint64
	for h.chunk < chunks {
		n++
		in.Seq = n
		if err := h.Write(&in); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4<<20 {
		t.Errorf("holding %d chunks (%d records) grew the heap by %d bytes, want under 4 MiB", chunks, n, grew)
	}
	var out bytes.Buffer
	w, err := NewBinaryWriter(&out, nil, WithSplit(sh), WithUncompressed())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(h); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	br, err := NewBinaryReader(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); ; i++ {
		got, err := br.Next()
		if err == io.EOF {
			if i != n+1 {
				t.Fatalf("%d records read back, want %d", i-1, n)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if got.Seq != i {
			t.Fatalf("record %d: seq %d, want %d", i, got.Seq, i)
		}
	}
}

// foldSpec encodes a fold record's entry as docs/FORMAT.md gives it,
// apart from appendFold: static 0, the group, the words, the stride,
// the runs (each its gap and length) and the values in width bytes.
func foldSpec(group int64, words, stride uint64, runs [][2]uint64, width int, vals []uint64) []byte {
	b := binary.AppendUvarint(nil, 0)
	b = binary.AppendUvarint(b, zigzag(group))
	b = binary.AppendUvarint(b, words)
	b = binary.AppendUvarint(b, stride)
	b = binary.AppendUvarint(b, uint64(len(runs)))
	for _, r := range runs {
		b = binary.AppendUvarint(b, r[0])
		b = binary.AppendUvarint(b, r[1])
	}
	b = append(b, byte(width))
	for _, v := range vals {
		for k := range width {
			b = append(b, byte(v>>(8*k)))
		}
	}
	return b
}

// TestFoldRunsAndWidths: a fold record holds its addresses as runs a
// stride apart (the least step between two of them) and its values in the
// fewest bytes that hold the largest. appendFold writes each case's bytes
// as the format gives them, and decodeFold reads them back, with or
// without bytes after the record (its value loop loads 8 bytes where
// they are there, and copies the last values byte by byte); a record that
// breaks the format is refused, saying how.
func TestFoldRunsAndWidths(t *testing.T) {
	add, err := ParseStatic("atom.global.add.u32 d, [a], b")
	if err != nil {
		t.Fatal(err)
	}
	line := func(base uint64, n int, stride uint64) []uint64 {
		a := make([]uint64, n)
		for i := range a {
			a[i] = base + uint64(i)*stride
		}
		return a
	}
	small := func(n int, mul uint64) []uint64 {
		v := make([]uint64, n)
		for i := range v {
			v[i] = uint64(i) * mul % 251
		}
		return v
	}
	top := ^uint64(0) - 7 // the last 8-byte word
	cases := []struct {
		name   string
		addrs  []uint64
		vals   []uint64
		stride uint64
		runs   [][2]uint64
		width  int
	}{
		{"one word at 0, value 0", []uint64{0}, []uint64{0}, 1, [][2]uint64{{0, 1}}, 0},
		{"a line of 32 words", line(0x1000, 32, 4), small(32, 7), 4, [][2]uint64{{0x1000, 32}}, 1},
		{"two lines 8 lines apart", append(line(0x80, 32, 4), line(0x480, 32, 4)...), small(64, 13), 4,
			[][2]uint64{{0x80, 32}, {0x480 - 0xfc, 32}}, 1},
		{"8-byte words to the last", line(top-8*9, 10, 8), []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, ^uint64(0)}, 8,
			[][2]uint64{{top - 72, 10}}, 8},
		{"steps of 4 and 12", []uint64{4, 8, 20, 24, 28, 40}, []uint64{0x100, 0xffff, 1, 2, 3, 4}, 4,
			[][2]uint64{{4, 2}, {12, 3}, {12, 1}}, 2},
		{"3-byte values", line(64, 5, 4), []uint64{0xffffff, 1, 0x10000, 0, 7}, 4, [][2]uint64{{64, 5}}, 3},
		{"4-byte values", line(64, 3, 4), []uint64{0xffffffff, 0, 0x1000000}, 4, [][2]uint64{{64, 3}}, 4},
		{"7-byte values", []uint64{0, 1 << 40}, []uint64{1<<56 - 1, 2}, 1 << 40, [][2]uint64{{0, 2}}, 7},
	}
	for _, c := range cases {
		want := foldSpec(5, uint64(len(c.addrs)), c.stride, c.runs, c.width, c.vals)
		w := &BinaryWriter{o: writerOptions{split: &SplitHeader{Combined: true}}, last: add} // add is static 0
		got, err := w.appendFold(nil, &Fold{Static: add, Group: 5, Addrs: c.addrs, Vals: c.vals})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got[0] != dirKindFold || !bytes.Equal(got[1:], want) {
			t.Errorf("%s: appendFold wrote\n% x\nwant %02x % x", c.name, got, dirKindFold, want)
		}
		for _, after := range [][]byte{nil, {0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0x11, 0x22, 0x33}} {
			r := &BinaryReader{statics: []*staticInfo{{s: add}}}
			cur := &cursor{p: append(slices.Clone(want), after...)}
			if err := r.decodeFold(cur); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			f := &r.dfold
			if f.Static != add || f.Group != 5 || !slices.Equal(f.Addrs, c.addrs) || !slices.Equal(f.Vals, c.vals) {
				t.Errorf("%s: decoded group %d\naddrs %x\nvals %x\nwant addrs %x\nvals %x", c.name, f.Group, f.Addrs, f.Vals, c.addrs, c.vals)
			}
			if !bytes.Equal(cur.p, after) {
				t.Errorf("%s: after the record % x, want % x", c.name, cur.p, after)
			}
		}
	}
	// Records that break the format.
	bad := []struct {
		rec  []byte
		want string
	}{
		{foldSpec(0, 2, 0, [][2]uint64{{8, 2}}, 1, []uint64{1, 2}), "a stride of 0"},
		{foldSpec(0, 2, 4, nil, 1, []uint64{1, 2}), "2 words in 0 runs"},
		{foldSpec(0, 1, 4, [][2]uint64{{8, 1}, {8, 1}}, 1, []uint64{1}), "1 words in 2 runs"},
		{foldSpec(0, 3, 4, [][2]uint64{{8, 0}, {8, 3}}, 1, []uint64{1, 2, 3}), "run 0 of 2 has 0 words"},
		{foldSpec(0, 3, 4, [][2]uint64{{8, 2}, {8, 2}}, 1, []uint64{1, 2, 3}), "run 1 of 2 has 2 words, of the 1 left"},
		{foldSpec(0, 4, 4, [][2]uint64{{8, 2}, {8, 1}}, 1, []uint64{1, 2, 3, 4}), "its runs hold 3 words of 4"},
		{foldSpec(0, 4, 4, [][2]uint64{{8, 2}, {0, 2}}, 1, []uint64{1, 2, 3, 4}), "run 1 of 2: addresses do not ascend"},
		{foldSpec(0, 2, 8, [][2]uint64{{^uint64(0) - 7, 2}}, 1, []uint64{1, 2}), "pass the last address"},
		{foldSpec(0, 2, 8, [][2]uint64{{8, 1}, {^uint64(0) - 5, 1}}, 1, []uint64{1, 2}), "run 1 of 2: addresses do not ascend"},
		{foldSpec(0, 1, 4, [][2]uint64{{8, 1}}, 9, []uint64{1}), "1 values of 9 bytes"},
		{foldSpec(0, 4, 4, [][2]uint64{{8, 4}}, 2, []uint64{1, 2, 3, 4})[:15], "4 values of 2 bytes in 7"},
		{foldSpec(0, 4, 4, [][2]uint64{{8, 4}}, 2, nil)[:7], "payload ends before the value width"},
		{foldSpec(0, 1<<16+1, 4, [][2]uint64{{8, 1}}, 1, []uint64{1}), "65537 words"},
	}
	for _, c := range bad {
		r := &BinaryReader{statics: []*staticInfo{{s: add}}}
		err := r.decodeFold(&cursor{p: c.rec})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("% x: %v, want an error saying %q", c.rec, err, c.want)
		}
	}
}
