package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/gpureplay/replay/internal/testenv"
	"github.com/klauspost/compress/zstd"
)

// Test statics, built directly so these tests do not depend on the text
// parser; fakeParse maps their texts back.
var (
	stAdd = &Static{Text: "atom.global.add.s32 d,[a],1", Dialect: DialectPTX, Op: OpAdd, Type: TypeS32, Space: Global,
		ExecSize: 32, Inputs: []Input{{Name: "a", Role: RoleAddr, Bits: 64, Type: TypeU64}},
		Addr: 0, AddrBits: 64, Elems: 1, B: []Src{{In: -1, Imm: 1}}, Pred: -1, HasDst: true, Dst: "d"}
	stCAS = &Static{Text: "@p atom.global.cas.b32 d,[q],x,y", Dialect: DialectPTX, Op: OpCAS, Type: TypeB32, Space: Global,
		ExecSize: 32, Inputs: []Input{{Name: "q", Role: RoleAddr, Bits: 64, Type: TypeU64}, {Name: "x", Role: RoleSrcB, Bits: 32, Type: TypeB32},
			{Name: "y", Role: RoleSrcC, Bits: 32, Type: TypeB32}, {Name: "p", Role: RolePred, Bits: 32, Type: TypeU32}},
		Addr: 0, AddrBits: 64, Elems: 1, B: []Src{{In: 1}}, C: []Src{{In: 2}}, Pred: 3, HasDst: true, Dst: "d"}
	stExch128 = &Static{Text: "atom.global.exch.b128 d,[a],b", Dialect: DialectPTX, Op: OpExch, Type: TypeB128, Space: Global,
		ExecSize: 32, Inputs: []Input{{Name: "a", Role: RoleAddr, Bits: 64, Type: TypeU64}, {Name: "b", Role: RoleSrcB, Bits: 128, Type: TypeB128}},
		Addr: 0, AddrBits: 64, Elems: 1, B: []Src{{In: 1}}, Pred: -1, HasDst: true, Dst: "d"}
	stLSC = &Static{Text: "lsc_atomic_iadd.ugm (M1,16) V13:d32 bti(0x4)[V12]:a32 V14", Dialect: DialectLSC, Op: OpAdd, Type: TypeU32,
		Space: Space{Kind: SpaceSurface, Surface: 4}, ExecSize: 16,
		Inputs:   []Input{{Name: "V12", Role: RoleAddr, Bits: 32, Type: TypeU32}, {Name: "V14", Role: RoleSrcB, Bits: 32, Type: TypeU32}},
		AddrBits: 32, Elems: 1, B: []Src{{In: 1}}, Pred: -1, HasDst: true, Dst: "V13"}
	stVec = &Static{Text: "atom.shared.v2.f32.add d,[x+4],{1.0,2.0}", Dialect: DialectPTX, Op: OpAdd, Type: TypeF32, Space: Shared,
		ExecSize: 32, Inputs: []Input{{Name: "x", Role: RoleAddr, Bits: 32, Type: TypeU32}},
		Addr: 0, AddrImm: 4, AddrBits: 32, Elems: 2, B: []Src{{In: -1, Imm: 0x3f800000}, {In: -1, Imm: 0x40000000}}, Pred: -1, HasDst: true, Dst: "d"}

	testStatics = []*Static{stAdd, stCAS, stExch128, stLSC, stVec}
)

// fakeParse stands in for ParseStatic: the test statics by text; any other
// text gets a synthetic static derived from its bytes, so fuzzed chunks
// exercise every decoding path.
func fakeParse(text string) (*Static, error) {
	for _, s := range testStatics {
		if s.Text == text {
			return s, nil
		}
	}
	if len(text) < 3 || text[0] == '!' {
		return nil, fmt.Errorf("fake parser: cannot parse %q", text)
	}
	s := &Static{Text: text, Dialect: DialectLSC, Op: OpAdd, Type: TypeU32, Space: Global,
		ExecSize: 1 + int(text[0])%MaxLanes, Elems: 1 + int(text[1])%4, Pred: -1}
	for i := 0; i < int(text[2])%4; i++ {
		s.Inputs = append(s.Inputs, Input{Name: fmt.Sprint("V", i), Bits: []int{32, 64, 128}[(int(text[2])+i)%3]})
	}
	return s, nil
}

var testHeader = &Header{
	Regions: []Region{
		{Space: Global, Base: 0x1000, Size: 0x10000},
		{Space: Shared, Base: 0, Size: 0xc000},
		{Space: Space{Kind: SpaceSurface, Surface: 4}, Base: 0, Size: 1 << 20},
	},
	Inits: []Init{
		{Space: Global, Group: -1, Addr: 0x1000, Type: TypeU32, Data: []byte{1, 0, 0, 0, 2, 0, 0, 0}},
		{Space: Shared, Group: 3, Addr: 0x40, Type: TypeF32, Data: []byte{0, 0, 0xc0, 0x3f}},
		{Space: Space{Kind: SpaceSurface, Surface: 4}, Group: -1, Addr: 8, Type: TypeB128, Data: bytes.Repeat([]byte{0xab}, 16)},
		{Space: Space{Kind: SpaceCounter, Surface: 0xa0}, Group: -1, Addr: 0, Type: TypeU32, Data: []byte{7, 0, 0, 0}},
	},
	Windows: []Window{{Kind: "shared", Base: 0x1000000, Size: 0x10000}, {Kind: "local", Base: 0x2000000, Size: 0x1000}},
}

func lanes(n int, f func(i int) uint64) []uint64 {
	l := make([]uint64, n)
	for i := range l {
		l[i] = f(i)
	}
	return l
}

// testInsts covers every vector kind, negative strides, 128-bit values with
// high halves, masks, predicates, and groups and warps going both ways.
func testInsts() []*Inst {
	return []*Inst{
		{Static: stAdd, Group: 0, Warp: 0, Mask: 0xffffffff, Vals: []Vector{{Kind: VecStride, Base: 0x1000, Stride: 4}}},
		{Static: stAdd, Group: 5, Warp: 3, Mask: 0x0000ffff, Vals: []Vector{{Kind: VecStride, Base: 0x2000, Stride: uint64(^uint64(0) - 7)}}}, // stride -8
		{Static: stCAS, Group: 5, Warp: 1, Mask: 0xffffffff, Vals: []Vector{
			{Kind: VecBroadcast, Base: 0x3000},
			{Kind: VecList, List: lanes(32, func(i int) uint64 { return uint64(31-i) * 1000 })},
			{Kind: VecStride, Base: 7, Stride: 1},
			{Kind: VecBroadcast, Base: 0xf0f0f0f0}}},
		{Static: stExch128, Group: 2, Warp: 7, Mask: 0x80000001, Vals: []Vector{
			{Kind: VecStride, Base: 0x4000, Stride: 16},
			{Kind: VecBroadcast, Base: 0x1111, BaseHi: 0xdeadbeef00000000}}},
		{Static: stExch128, Group: -9, Warp: 0, Mask: 0xffffffff, Vals: []Vector{
			{Kind: VecList, List: lanes(32, func(i int) uint64 { return 0x8000 - uint64(i)*16 })},
			{Kind: VecList, List: lanes(32, func(i int) uint64 { return ^uint64(i) }), ListHi: lanes(32, func(i int) uint64 { return uint64(i) << 60 })}}},
		{Static: stExch128, Group: 1 << 40, Warp: -1, Mask: 0x1, Vals: []Vector{
			{Kind: VecBroadcast, Base: 0x5000},
			{Kind: VecStride, Base: ^uint64(0), Stride: ^uint64(0), BaseHi: 1}}},
		{Static: stExch128, Group: 1, Warp: 1, Mask: 0x3, Vals: []Vector{
			{Kind: VecBroadcast, Base: 0x5000},
			{Kind: VecList, List: lanes(32, func(i int) uint64 { return uint64(i) }), BaseHi: 42}}},
		{Static: stLSC, Group: 0, Warp: 2, Mask: 0xffff, Vals: []Vector{
			{Kind: VecStride, Base: 0, Stride: 4},
			{Kind: VecList, List: lanes(16, func(i int) uint64 { return uint64(i * i) })}}},
		{Static: stVec, Group: 3, Warp: 0, Mask: 0x0f0f0f0f, Vals: []Vector{{Kind: VecBroadcast, Base: 0x40}}},
		{Static: stAdd, Group: 0, Warp: 0, Mask: 0, Vals: []Vector{{Kind: VecBroadcast, Base: 0}}},
	}
}

func writeTrace(t testing.TB, h *Header, insts []*Inst, opts ...WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewBinaryWriter(&buf, h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range insts {
		if err := w.Write(in); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cloneInst deep-copies an instruction a reader is about to reuse.
func cloneInst(in *Inst) *Inst {
	c := *in
	c.VecID = 0 // the reader's name for vectors it met before, not the record's
	if in.Dir != nil {
		d := *in.Dir
		if d.Init != nil {
			i := *d.Init
			i.Data = slices.Clone(i.Data)
			d.Init = &i
		}
		if d.Region != nil {
			r := *d.Region
			d.Region = &r
		}
		if d.Cluster != nil {
			k := *d.Cluster
			d.Cluster = &k
		}
		c.Dir = &d
	}
	c.Vals = slices.Clone(in.Vals)
	for i := range c.Vals {
		c.Vals[i].List = slices.Clone(c.Vals[i].List)
		c.Vals[i].ListHi = slices.Clone(c.Vals[i].ListHi)
	}
	return &c
}

func readTrace(data []byte, opts ...ReaderOption) (*Header, []*Inst, error) {
	r, err := NewBinaryReader(bytes.NewReader(data), append([]ReaderOption{WithStaticParser(fakeParse)}, opts...)...)
	if err != nil {
		return nil, nil, err
	}
	var out []*Inst
	for {
		in, err := r.Next()
		if err == io.EOF {
			return r.Header(), out, nil
		}
		if err != nil {
			return r.Header(), out, err
		}
		out = append(out, cloneInst(in))
	}
}

// readBack is what readRecords read: the instructions (cloned), each one's
// VecID as the reader gave it, and, reading with NextInto, how much each
// record grew the arena.
type readBack struct {
	insts []*Inst
	ids   []uint64
	grew  []int
}

// readRecords reads rd to its end, with NextInto when into is set and Next
// otherwise.
func readRecords(t *testing.T, rd *BinaryReader, into bool) readBack {
	t.Helper()
	var got readBack
	var arena []uint64
	for {
		var in *Inst
		var err error
		if into {
			n := len(arena)
			in, arena, err = rd.NextInto(arena)
			got.grew = append(got.grew, len(arena)-n)
		} else {
			in, err = rd.Next()
		}
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got.insts = append(got.insts, cloneInst(in))
		got.ids = append(got.ids, in.VecID)
	}
}

// wantInsts is what reading back records gives: Seq from 0 counting
// instructions only (a directive takes the next instruction's), Line 0,
// and for a directive no group, warp or mask.
func wantInsts(insts []*Inst) []*Inst {
	var want []*Inst
	seq := uint64(0)
	for _, in := range insts {
		c := cloneInst(in)
		c.Seq, c.Line = seq, 0
		if c.Dir != nil {
			c.Group, c.Warp, c.Mask = 0, 0, 0
		} else {
			seq++
		}
		want = append(want, c)
	}
	return want
}

func TestBinaryRoundTrip(t *testing.T) {
	insts := testInsts()
	// The writer ignores Seq and Line.
	insts[0].Seq, insts[0].Line = 99, 12
	for _, tc := range []struct {
		name   string
		hdr    *Header
		insts  []*Inst
		opts   []WriterOption
		chunks int
	}{
		{"chunks of 3", testHeader, insts, []WriterOption{WithChunkInsts(3)}, 4},
		{"chunks of 1", testHeader, insts, []WriterOption{WithChunkInsts(1), WithEncoderLevel(zstd.SpeedFastest)}, 10},
		{"one chunk", testHeader, insts, []WriterOption{WithEncoderLevel(zstd.SpeedBestCompression)}, 1},
		{"uncompressed", testHeader, insts, []WriterOption{WithUncompressed(), WithChunkInsts(4)}, 3},
		{"no instructions", testHeader, nil, nil, 0},
		{"empty header", &Header{}, insts[:2], nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := writeTrace(t, tc.hdr, tc.insts, tc.opts...)
			if !IsBinary(data) {
				t.Fatalf("IsBinary(% x) = false", data[:4])
			}
			h, got, err := readTrace(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(h, tc.hdr) {
				t.Errorf("header:\n got %+v\nwant %+v", h, tc.hdr)
			}
			want := wantInsts(tc.insts)
			if len(got) != len(want) {
				t.Fatalf("read %d instructions, wrote %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("instruction %d:\n got %+v\nwant %+v", i, got[i], want[i])
				}
				if got[i].Static != want[i].Static {
					t.Errorf("instruction %d: Static %p, want the parser's %p", i, got[i].Static, want[i].Static)
				}
			}
			x, err := OpenBinaryIndex(bytes.NewReader(data), int64(len(data)), WithStaticParser(fakeParse))
			if err != nil {
				t.Fatal(err)
			}
			if x.NumChunks() != tc.chunks {
				t.Errorf("%d chunks, want %d", x.NumChunks(), tc.chunks)
			}
			if n, err := CountChunks(bytes.NewReader(data), int64(len(data))); err != nil || n != tc.chunks {
				t.Errorf("CountChunks = %d, %v; want %d", n, err, tc.chunks)
			}
		})
	}
}

// TestCountChunksRefuses: a file that does not end in a seek table's
// footer (cut short by a byte, or by its whole table, or too short for
// one) has no count.
func TestCountChunksRefuses(t *testing.T) {
	data := writeTrace(t, testHeader, testInsts(), WithChunkInsts(3))
	for _, n := range []int{len(data) - 1, len(data) - seekFooterLen, 12, 0} {
		if c, err := CountChunks(bytes.NewReader(data[:n]), int64(n)); err == nil {
			t.Errorf("CountChunks of the first %d of %d bytes = %d, want an error", n, len(data), c)
		}
	}
}

// TestBinaryDropsMeaningless pins what the format does not store: fields
// a vector's kind and width give no meaning.
func TestBinaryDropsMeaningless(t *testing.T) {
	in := &Inst{Static: stExch128, Mask: 1, Vals: []Vector{
		// A 64-bit input: Stride, List and BaseHi are dropped.
		{Kind: VecBroadcast, Base: 1, Stride: 5, List: []uint64{1}, BaseHi: 9},
		// BaseHi beside ListHi is dropped.
		{Kind: VecList, List: lanes(32, func(int) uint64 { return 3 }), BaseHi: 7, ListHi: lanes(32, func(int) uint64 { return 4 })},
	}}
	_, got, err := readTrace(writeTrace(t, nil, []*Inst{in}))
	if err != nil {
		t.Fatal(err)
	}
	want := []Vector{
		{Kind: VecBroadcast, Base: 1},
		{Kind: VecList, List: in.Vals[1].List, ListHi: in.Vals[1].ListHi},
	}
	if !reflect.DeepEqual(got[0].Vals, want) {
		t.Errorf("got %+v\nwant %+v", got[0].Vals, want)
	}
	for lane := range 32 {
		for i := range want {
			if a, b := got[0].Vals[i].Lo(lane), in.Vals[i].Lo(lane); a != b {
				t.Errorf("input %d lane %d: Lo %#x, want %#x", i, lane, a, b)
			}
		}
		if a, b := got[0].Vals[1].Hi(lane), in.Vals[1].Hi(lane); a != b {
			t.Errorf("lane %d: Hi %#x, want %#x", lane, a, b)
		}
	}
}

func TestBinaryWriterRejects(t *testing.T) {
	noText := *stAdd
	noText.Text = ""
	wide := *stAdd
	wide.ExecSize = 33
	for _, tc := range []struct {
		name string
		in   *Inst
		want string
	}{
		{"nil static", &Inst{}, "no Static"},
		{"values", &Inst{Static: stCAS, Vals: []Vector{{}}}, "1 values for 4 inputs"},
		{"list length", &Inst{Static: stAdd, Vals: []Vector{{Kind: VecList, List: []uint64{1, 2}}}}, "input a has 2 values, want 32"},
		{"high list length", &Inst{Static: stExch128, Vals: []Vector{{}, {Kind: VecList, List: make([]uint64, 32), ListHi: make([]uint64, 3)}}}, "3 high values"},
		{"kind", &Inst{Static: stAdd, Vals: []Vector{{Kind: 9}}}, "unknown vector kind 9"},
		{"no text", &Inst{Static: &noText, Vals: []Vector{{}}}, "no text"},
		{"exec size", &Inst{Static: &wide, Vals: []Vector{{}}}, "execution size 33"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewBinaryWriter(&buf, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = w.Write(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Write: %v, want an error with %q", err, tc.want)
			}
			// A rejected instruction leaves the writer usable.
			if err := w.Write(testInsts()[0]); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if _, got, err := readTrace(buf.Bytes()); err != nil || len(got) != 1 {
				t.Fatalf("read %d instructions, %v", len(got), err)
			}
		})
	}
	for _, opt := range []WriterOption{WithChunkInsts(0), WithChunkInsts(MaxChunkInsts + 1), WithEncoderLevel(0)} {
		if _, err := NewBinaryWriter(io.Discard, nil, opt); err == nil {
			t.Error("NewBinaryWriter accepted a bad option")
		}
	}
	if _, err := NewBinaryWriter(io.Discard, &Header{Inits: []Init{{Space: Global, Type: TypeU32, Data: []byte{1}}}}); err == nil ||
		!strings.Contains(err.Error(), "1 data bytes is not a whole number of u32") {
		t.Errorf("bad init: %v", err)
	}
}

// TestBinaryZstdCompatible checks that a binary trace is a plain zstd file:
// both the zstd CLI and klauspost's stream decoder read it, and give the
// records back to back.
func TestBinaryZstdCompatible(t *testing.T) {
	data := writeTrace(t, testHeader, withDirectives(), WithChunkInsts(3))
	var records []byte
	for _, f := range splitFrames(t, data) {
		records = append(records, f.raw...)
	}
	if !bytes.HasPrefix(records, []byte("RPLTRACE")) {
		t.Fatal("first record is not the header")
	}
	t.Run("klauspost", func(t *testing.T) {
		d, err := zstd.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		got, err := io.ReadAll(d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, records) {
			t.Errorf("decoded %d bytes, want the %d bytes of the records", len(got), len(records))
		}
	})
	t.Run("cli", func(t *testing.T) {
		testenv.LookPath(t, "zstd", "apt-get install zstd")
		cmd := exec.Command("zstd", "-d", "-c")
		cmd.Stdin = bytes.NewReader(data)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("zstd -d -c: %v: %s", err, stderr.Bytes())
		}
		if !bytes.Equal(got, records) {
			t.Errorf("zstd -d gave %d bytes, want the %d bytes of the records", len(got), len(records))
		}
	})
}

// TestUncompressedFrames: WithUncompressed stores each record in zstd raw
// blocks of at most 128 KiB, with the frame header 0xA4 (content size,
// single segment, content checksum), which the trace reader, klauspost's
// decoder and the zstd CLI all read back as the records; a chunk of more
// than 128 KiB takes several blocks.
func TestUncompressedFrames(t *testing.T) {
	base := testInsts()
	var insts []*Inst
	for range 3000 {
		insts = append(insts, base...)
	}
	data := writeTrace(t, testHeader, insts, WithUncompressed(), WithChunkInsts(MaxChunkInsts))
	_, got, err := readTrace(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantInsts(insts); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %d instructions, not the %d written", len(got), len(want))
	}
	fs := splitFrames(t, data) // klauspost's DecodeAll, frame by frame
	var records []byte
	big := 0
	for i, f := range fs[:len(fs)-1] {
		if f.z[4] != 0xA4 {
			t.Errorf("frame %d: header descriptor %#x, want 0xa4", i, f.z[4])
		}
		// magic 4, descriptor 1, size 4, a 3-byte header a block, checksum 4
		blocks := max(1, (len(f.raw)+zstdMaxBlock-1)/zstdMaxBlock)
		if want := 4 + 1 + 4 + 3*blocks + len(f.raw) + 4; len(f.z) != want {
			t.Errorf("frame %d: %d bytes for %d of content, want %d", i, len(f.z), len(f.raw), want)
		}
		if blocks > 1 {
			big++
		}
		records = append(records, f.raw...)
	}
	if big == 0 {
		t.Error("no frame took more than one block")
	}
	testenv.LookPath(t, "zstd", "apt-get install zstd")
	cmd := exec.Command("zstd", "-d", "-c")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zstd -d -c: %v", err)
	}
	if !bytes.Equal(out, records) {
		t.Errorf("zstd -d gave %d bytes, want the %d bytes of the records", len(out), len(records))
	}
}

// frame is one frame of a binary trace: its bytes and, for zstd frames,
// its decompressed content.
type frame struct {
	z, raw []byte
}

type frames []frame

// entries are the seek table entries of zstd frames fs.
func (fs frames) entries() []seekEntry {
	var es []seekEntry
	for _, f := range fs {
		es = append(es, seekEntry{csize: uint32(len(f.z)), dsize: uint32(len(f.raw)), check: uint32(xxhash.Sum64(f.raw))})
	}
	return es
}

// splitFrames cuts a good binary trace into its frames with the seek table;
// the seek table is the last frame, raw nil.
func splitFrames(t testing.TB, data []byte) frames {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[len(data)-9:]))
	tlen := 8 + n*12 + 9
	entries, _, err := parseSeekTable(data[len(data)-tlen:])
	if err != nil {
		t.Fatal(err)
	}
	d, _ := zstd.NewReader(nil)
	defer d.Close()
	var fs frames
	off := 0
	for _, e := range entries {
		z := data[off : off+int(e.csize)]
		raw, err := d.DecodeAll(z, nil)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, frame{z: slices.Clone(z), raw: raw})
		off += int(e.csize)
	}
	return append(fs, frame{z: slices.Clone(data[off:])})
}

var testEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		panic(err)
	}
	return e
})

// joinFrames compresses each record and appends a fresh seek table.
func joinFrames(t testing.TB, records [][]byte) []byte {
	t.Helper()
	e := testEncoder()
	var out []byte
	var entries []seekEntry
	for _, r := range records {
		z := e.EncodeAll(r, nil)
		out = append(out, z...)
		entries = append(entries, seekEntry{csize: uint32(len(z)), dsize: uint32(len(r)), check: uint32(xxhash.Sum64(r))})
	}
	return appendSeekTable(out, entries)
}

// reseal recomputes a record's checksum after a test patched it.
func reseal(rec []byte) []byte {
	fixed := chunkFixedLen
	if bytes.HasPrefix(rec, []byte(headerMagic)) {
		fixed = headerFixedLen
	}
	d := xxhash.New()
	d.Write(rec[:fixed-8])
	d.Write(rec[fixed:])
	binary.LittleEndian.PutUint64(rec[fixed-8:], d.Sum64())
	return rec
}

// version1 makes a header record of format version 1.
func version1(rec []byte) []byte {
	rec = slices.Clone(rec)
	binary.LittleEndian.PutUint16(rec[8:], 1)
	return reseal(rec)
}

// fixLen sets a record's payload length after a test changed its size.
func fixLen(rec []byte) []byte {
	if bytes.HasPrefix(rec, []byte(headerMagic)) {
		binary.LittleEndian.PutUint32(rec[12:], uint32(len(rec)-headerFixedLen))
	} else {
		binary.LittleEndian.PutUint32(rec[28:], uint32(len(rec)-chunkFixedLen))
	}
	return rec
}

// chunkRecord builds a sealed chunk record by hand.
func chunkRecord(index uint32, first uint64, count uint32, laneOps uint64, texts []string, insts []byte) []byte {
	b := []byte(chunkMagic)
	b = binary.LittleEndian.AppendUint32(b, index)
	b = binary.LittleEndian.AppendUint64(b, first)
	b = binary.LittleEndian.AppendUint32(b, count)
	b = binary.LittleEndian.AppendUint64(b, laneOps)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.AppendUvarint(b, uint64(len(texts)))
	for _, s := range texts {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = append(b, insts...)
	binary.LittleEndian.PutUint32(b[28:], uint32(len(b)-chunkFixedLen))
	return reseal(b)
}

func TestBinaryBadInput(t *testing.T) {
	good := writeTrace(t, testHeader, testInsts(), WithChunkInsts(3)) // header, 4 chunks, seek table
	fs := splitFrames(t, good)
	if len(fs) != 6 {
		t.Fatalf("%d frames, want 6", len(fs))
	}
	off := func(i int) int64 { // offset of frame i
		var o int64
		for _, f := range fs[:i] {
			o += int64(len(f.z))
		}
		return o
	}
	records := func() [][]byte {
		var rs [][]byte
		for _, f := range fs[:len(fs)-1] {
			rs = append(rs, slices.Clone(f.raw))
		}
		return rs
	}
	patched := func(frame int, patch func([]byte) []byte) []byte {
		rs := records()
		rs[frame] = patch(rs[frame])
		return joinFrames(t, rs)
	}
	// A one-instruction chunk 0 of stAdd (mask 1: one lane op), insts given.
	inst0 := func(insts []byte, count uint32, ops uint64) []byte {
		return joinFrames(t, [][]byte{fs[0].raw, chunkRecord(0, 0, count, ops, []string{stAdd.Text}, insts)})
	}
	flipped := slices.Clone(good)
	flipped[off(2)+int64(len(fs[2].z)/2)] ^= 0x10
	hugeFCS := append(slices.Clone(good[:off(1)]), 0x28, 0xb5, 0x2f, 0xfd, 0xc0|0x20, 0, 0, 0, 0, 0, 1, 0, 0) // FCS 2^40
	swapped := records()
	swapped[2], swapped[3] = swapped[3], swapped[2]
	badSeek := slices.Clone(good)
	badSeek[len(badSeek)-9-12+8] ^= 1                                                  // checksum of the last chunk's entry
	midSkip := append(slices.Clone(good[:off(2)]), 0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0) // an empty skippable frame
	midSkip = append(midSkip, good[off(2):]...)

	for _, tc := range []struct {
		name   string
		data   []byte
		chunk  int
		offset int64 // -1: not checked
		want   string
	}{
		{"empty", nil, BinaryChunkHeader, 0, "empty input"},
		{"text", []byte("atom.global.add.s32 d,[a],1; | a=0\n"), BinaryChunkHeader, 0, "not a binary trace"},
		{"truncated in magic", good[:3], BinaryChunkHeader, 0, "truncated"},
		{"truncated in header", good[:off(1)-5], BinaryChunkHeader, 0, "truncated"},
		{"truncated after header", good[:off(1)], 0, off(1), "ends without a seek table after 0 chunks"},
		{"truncated in chunk 1", good[:off(2)+7], 1, off(2), "truncated: the file ends 7 bytes into the frame"},
		{"truncated before seek table", good[:off(5)], 4, off(5), "ends without a seek table after 4 chunks"},
		{"truncated in seek table", good[:len(good)-1], BinaryChunkSeekTable, off(5), "truncated"},
		{"flipped bit in chunk 1", flipped, 1, off(2), "chunk 1 at offset"},
		{"flipped payload bit in chunk 2", patched(3, func(r []byte) []byte { r[len(r)-3] ^= 4; return r }), 2, -1, "checksum mismatch"},
		{"flipped header bit", patched(0, func(r []byte) []byte { r[30] ^= 1; return r }), BinaryChunkHeader, 0, "checksum mismatch"},
		{"header magic", patched(0, func(r []byte) []byte { r[0] = 'X'; return r }), BinaryChunkHeader, 0, `bad magic "XPLTRACE"`},
		{"version", patched(0, func(r []byte) []byte { r[8] = 6; return r }), BinaryChunkHeader, 0, "unsupported format version 6 (this reader reads versions 1 to 2, and split files of version 5)"},
		{"version 5 of a trace", patched(0, func(r []byte) []byte { r[8] = 5; return r }), BinaryChunkHeader, 0, "unsupported format version 5"},
		{"version 3 of a trace", patched(0, func(r []byte) []byte { r[8] = 3; return r }), BinaryChunkHeader, 0, "unsupported format version 3"},
		{"version 4 of a trace", patched(0, func(r []byte) []byte { r[8] = 4; return r }), BinaryChunkHeader, 0, "unsupported format version 4"},
		{"split file of version 2", patched(0, func(r []byte) []byte { r[10] = 2; return r }), BinaryChunkHeader, 0, "a split file of format version 2, written by an older replay split"},
		{"split file of version 3", patched(0, func(r []byte) []byte { r[8], r[10] = 3, 2; return r }), BinaryChunkHeader, 0, "a split file of format version 3, written by an older replay split"},
		{"split file of version 4", patched(0, func(r []byte) []byte { r[8], r[10] = 4, 2; return r }), BinaryChunkHeader, 0, "a split file of format version 4, written by an older replay split (this replay reads split files of version 5, whose fold records hold runs"},
		{"header flags", patched(0, func(r []byte) []byte { r[10] = 4; return reseal(r) }), BinaryChunkHeader, 0, "unknown header flags 0x0004"},
		{"split flag without its section", patched(0, func(r []byte) []byte { r[8], r[10] = 5, 2; return reseal(r) }), BinaryChunkHeader, 0, "split header: "},
		{"header payload length", patched(0, func(r []byte) []byte { r[15] = 0x80; return reseal(r) }), BinaryChunkHeader, 0, "payload length 2147483"},
		{"region count", patched(0, func(r []byte) []byte {
			return reseal(fixLen(slices.Concat(r[:headerFixedLen], binary.AppendUvarint(nil, 1<<40), r[headerFixedLen+1:])))
		}), BinaryChunkHeader, 0, "1099511627776 regions cannot fit"},
		{"huge instruction count", patched(2, func(r []byte) []byte { binary.LittleEndian.PutUint32(r[16:], 1<<31); return reseal(r) }), 1, -1, "declares 2147483648 records, want 1..1048576"},
		{"count over payload", patched(2, func(r []byte) []byte { binary.LittleEndian.PutUint32(r[16:], 1<<20); return reseal(r) }), 1, -1, "1048576 records cannot fit"},
		{"chunk payload length", patched(2, func(r []byte) []byte { binary.LittleEndian.PutUint32(r[28:], 1<<30); return reseal(r) }), 1, -1, "payload length 1073741824"},
		{"chunk magic", patched(1, func(r []byte) []byte { r[3] = 'X'; return r }), 0, -1, `bad chunk magic "RPLX"`},
		{"second header", joinFrames(t, [][]byte{fs[0].raw, fs[0].raw}), 0, -1, "a second header"},
		{"swapped chunks", joinFrames(t, swapped), 1, -1, "chunk 2 where chunk 1 was expected"},
		{"seq gap", patched(2, func(r []byte) []byte { r[8]++; return reseal(r) }), 1, -1, "the chunk starts at seq 4, want 3"},
		{"lane ops", patched(2, func(r []byte) []byte { r[20]++; return reseal(r) }), 1, -1, "lane ops"},
		{"huge frame content size", hugeFCS, 0, off(1), "frame declares 1099511627776 decompressed bytes, over the limit"},
		{"static index", inst0([]byte{6, 0, 0, 1, 0, 0}, 1, 1), 0, -1, "record 0 (seq 0) at payload byte 0: static index 5 out of range (the table has 1)"},
		{"vector kind", inst0([]byte{1, 0, 0, 1, 7, 0}, 1, 1), 0, -1, "input a: unknown vector kind 7"},
		{"short list", inst0([]byte{1, 0, 0, 1, 2, 0, 0, 0}, 1, 1), 0, -1, "input a: list ends after 3 of 32 lanes"},
		{"list128 on 64-bit", inst0([]byte{1, 0, 0, 1, 3, 0}, 1, 1), 0, -1, "vector kind 3 (list with high halves) on a 64-bit input"},
		{"fixed list short", inst0(slices.Concat([]byte{1, 0, 0, 1, 4, 0, 1}, make([]byte, 31)), 1, 1), 0, -1, "input a: list of 32 values of 1 bytes, but 31 bytes are left"},
		{"fixed list short, shifted", inst0(slices.Concat([]byte{1, 0, 0, 1, 4, 0, 0x32}, make([]byte, 63)), 1, 1), 0, -1, "input a: list of 32 values of 2 bytes, but 63 bytes are left"},
		{"fixed list width 0", inst0(slices.Concat([]byte{1, 0, 0, 1, 4, 0, 0}, make([]byte, 32)), 1, 1), 0, -1, "input a: list width 0 out of 1..8"},
		{"fixed list width 9", inst0(slices.Concat([]byte{1, 0, 0, 1, 4, 0, 9}, make([]byte, 9*32)), 1, 1), 0, -1, "input a: list width 9 out of 1..8"},
		{"fixed list width 0, shifted", inst0(slices.Concat([]byte{1, 0, 0, 1, 4, 0, 0xf0}, make([]byte, 32)), 1, 1), 0, -1, "input a: list width 0 out of 1..8"},
		{"fixed list minimum", inst0([]byte{1, 0, 0, 1, 4, 0x80, 0x80}, 1, 1), 0, -1, "input a: bad list minimum"},
		{"fixed list no width", inst0([]byte{1, 0, 0, 1, 4, 0x81, 0x01}, 1, 1), 0, -1, "input a: payload ends before the list's width"},
		{"fixed list ends the payload", inst0([]byte{1, 0, 0, 1, 4, 0}, 1, 1), 0, -1, "input a: payload ends before the list's width"},
		{"fixed list128 on 64-bit", inst0(slices.Concat([]byte{1, 0, 0, 1, 5, 0, 1}, make([]byte, 32)), 1, 1), 0, -1, "vector kind 5 (list with high halves) on a 64-bit input"},
		{"fixed list128 high halves short", joinFrames(t, [][]byte{fs[0].raw, chunkRecord(0, 0, 1, 1, []string{stExch128.Text},
			slices.Concat([]byte{1, 0, 0, 1, 0, 0, 5, 7, 1}, make([]byte, 32), []byte{0, 3}, make([]byte, 95)))}), 0, -1,
			"input b: high halves: list of 32 values of 3 bytes, but 95 bytes are left"},
		{"fixed list in version 1", joinFrames(t, [][]byte{version1(fs[0].raw), chunkRecord(0, 0, 1, 1, []string{stAdd.Text}, slices.Concat([]byte{0, 0, 0, 1, 4, 0, 1}, make([]byte, 32)))}), 0, -1,
			"input a: unknown vector kind 4"},
		{"bad vector kind", inst0(slices.Concat([]byte{1, 0, 0, 1, 6, 0, 1}, make([]byte, 32)), 1, 1), 0, -1, "input a: unknown vector kind 6"},
		{"bytes after last", inst0([]byte{1, 0, 0, 1, 0, 0, 9}, 1, 1), 0, -1, "1 bytes after the chunk's last record"},
		{"bad mask", inst0([]byte{1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0}, 1, 1), 0, -1, "bad mask"},
		{"mask varint too long", inst0(slices.Concat([]byte{1, 0, 0}, bytes.Repeat([]byte{0xff}, 11), []byte{0, 0}), 1, 1), 0, -1, "record 0 (seq 0) at payload byte 0: bad mask"},
		{"directive kind", inst0([]byte{0, 9, 1, 0, 1}, 1, 0), 0, -1, "record 0 (seq 0) at payload byte 0: unknown directive kind 9"},
		{"directive init type", inst0([]byte{0, dirKindInit, 1, 1, 0x10, 99, 1, 0}, 1, 0), 0, -1, "directive .init: invalid type 99"},
		{"directive init data", inst0([]byte{0, dirKindInit, 1, 1, 0x10, byte(TypeU32), 8, 0, 0, 0, 0}, 1, 0), 0, -1, "init data of 8 bytes, but 4 bytes are left"},
		{"directive init odd data", inst0([]byte{0, dirKindInit, 1, 1, 0x10, byte(TypeU32), 3, 0, 0, 0}, 1, 0), 0, -1, "3 data bytes is not a whole number of u32"},
		{"directive region space", inst0([]byte{0, dirKindRegion, 7, 0, 1}, 1, 0), 0, -1, "region space: invalid space kind 7"},
		{"directive region short", inst0([]byte{0, dirKindRegion, 1, 0x80, 0x80}, 1, 0), 0, -1, "directive: bad varint for region base"},
		{"directives only, lane ops", inst0([]byte{0, dirKindRegion, 1, 0, 1}, 1, 1), 0, -1, "the chunk declares 1 lane ops, its instructions have 0"},
		{"static table", joinFrames(t, [][]byte{fs[0].raw, chunkRecord(0, 0, 1, 1, []string{stAdd.Text, stCAS.Text}, []byte{1, 0, 0, 1, 0, 0})}), 0, -1, "static table of 2 texts for 1 records"},
		{"unparsable static", joinFrames(t, [][]byte{fs[0].raw, chunkRecord(0, 0, 1, 1, []string{"!bad"}, []byte{1, 0, 0, 1, 0, 0})}), 0, -1, `static 0 "!bad": fake parser: cannot parse`},
		{"swapped seek table", badSeek, BinaryChunkSeekTable, off(5), "entry 4"},
		{"skippable in the middle", midSkip, 1, off(2), "unexpected skippable frame (magic 0x184d2a50) where chunk 1 was expected"},
		{"seek table in the middle", append(append(slices.Clone(good[:off(2)]), appendSeekTable(nil, fs[:2].entries())...), good[off(2):]...), BinaryChunkSeekTable, -1, "trailing data after the seek table"},
		{"trailing garbage", append(slices.Clone(good), 0), BinaryChunkSeekTable, int64(len(good)), "trailing data after the seek table"},
		{"trailing frame", append(slices.Clone(good), fs[1].z...), BinaryChunkSeekTable, int64(len(good)), "trailing data after the seek table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Nothing is allocated out of proportion to the bytes present:
			// counts and sizes are checked before anything is made.
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := readTrace(tc.data, WithName("trace.zst"))
			runtime.ReadMemStats(&after)
			if grew, limit := after.TotalAlloc-before.TotalAlloc, uint64(16<<20+256*len(tc.data)); grew > limit {
				t.Errorf("reading %d bad bytes allocated %d bytes (limit %d)", len(tc.data), grew, limit)
			}
			var be *BinaryError
			if !errors.As(err, &be) {
				t.Fatalf("error %v (%T), want a *BinaryError", err, err)
			}
			if be.Chunk != tc.chunk || (tc.offset >= 0 && be.Offset != tc.offset) || !strings.Contains(be.Error(), tc.want) {
				t.Errorf("error %q\n(chunk %d, offset 0x%x), want chunk %d, offset 0x%x, containing %q", be, be.Chunk, be.Offset, tc.chunk, tc.offset, tc.want)
			}
			t.Log(be)
			if !strings.HasPrefix(be.Error(), "trace.zst: ") {
				t.Errorf("error %q does not start with the name", be)
			}
		})
	}
}

func TestBinaryErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		e    BinaryError
		want string
	}{
		{BinaryError{Name: "trace.zst", Chunk: 3, Offset: 0x1a2b, Err: errors.New("checksum mismatch")}, "trace.zst: chunk 3 at offset 0x1a2b: checksum mismatch"},
		{BinaryError{Chunk: BinaryChunkHeader, Err: errors.New("x")}, "header at offset 0x0: x"},
		{BinaryError{Chunk: BinaryChunkSeekTable, Offset: 16, Err: errors.New("y")}, "seek table at offset 0x10: y"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestBinaryIndex(t *testing.T) {
	insts := testInsts()
	data := writeTrace(t, testHeader, insts, WithChunkInsts(2))
	want := wantInsts(insts)
	x, err := OpenBinaryIndex(bytes.NewReader(data), int64(len(data)), WithStaticParser(fakeParse))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x.Header(), testHeader) {
		t.Errorf("header %+v", x.Header())
	}
	if x.NumChunks() != 5 {
		t.Fatalf("%d chunks, want 5", x.NumChunks())
	}
	readRange := func(from, to int) ([]*Inst, error) {
		r, err := x.Reader(from, to)
		if err != nil {
			return nil, err
		}
		var out []*Inst
		for {
			in, err := r.Next()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return out, err
			}
			out = append(out, cloneInst(in))
		}
	}
	// Each chunk alone, in parallel and in reverse order.
	got := make([][]*Inst, x.NumChunks())
	errs := make([]error, x.NumChunks())
	var wg sync.WaitGroup
	for i := x.NumChunks() - 1; i >= 0; i-- {
		wg.Go(func() { got[i], errs[i] = readRange(i, i+1) })
	}
	wg.Wait()
	var all []*Inst
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("chunk %d: %v", i, errs[i])
		}
		all = append(all, got[i]...)
	}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("chunks read apart differ from what was written")
	}
	mid, err := readRange(1, 4)
	if err != nil || !reflect.DeepEqual(mid, want[2:8]) {
		t.Errorf("chunks [1,4): %v", err)
	}
	if off, size := x.ChunkOffset(0); off <= 0 || size <= 0 {
		t.Errorf("ChunkOffset(0) = %d, %d", off, size)
	}

	// Bad seek tables.
	for _, tc := range []struct {
		name  string
		data  []byte
		chunk int
		want  string
	}{
		{"no seek table", data[:len(data)-1], BinaryChunkSeekTable, "no seek table"},
		{"frame count", func() []byte {
			d := slices.Clone(data)
			binary.LittleEndian.PutUint32(d[len(d)-9:], 1<<30)
			return d
		}(), BinaryChunkSeekTable, "declares 1073741824 frames"},
		{"sizes", func() []byte {
			d := slices.Clone(data)
			d[len(d)-9-12*6]++ // header frame's compressed size
			return d
		}(), BinaryChunkSeekTable, "the frames add up to"},
		{"header checksum", func() []byte {
			d := slices.Clone(data)
			d[len(d)-9-12*6+8]++ // header frame's checksum
			return d
		}(), BinaryChunkHeader, "checksum mismatch (seek table checksum)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenBinaryIndex(bytes.NewReader(tc.data), int64(len(tc.data)), WithStaticParser(fakeParse))
			var be *BinaryError
			if !errors.As(err, &be) || be.Chunk != tc.chunk || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want a chunk %d error containing %q", err, tc.chunk, tc.want)
			}
		})
	}
}

// TestBinaryParseStatic round-trips through the real text parser, the
// reader's default.
func TestBinaryParseStatic(t *testing.T) {
	st, err := ParseStatic("atom.global.add.s32 d,[a],1")
	if err != nil {
		t.Fatalf("ParseStatic: %v", err)
	}
	in := &Inst{Static: st, Mask: 0xff, Vals: []Vector{{Kind: VecStride, Base: 0x1000, Stride: 4}}}
	data := writeTrace(t, nil, []*Inst{in, in})
	r, err := NewBinaryReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Static, st) || got.Seq != uint64(i) || !reflect.DeepEqual(got.Vals, in.Vals) {
			t.Errorf("instruction %d: %+v", i, got)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next at the end: %v", err)
	}
}

func TestIsBinary(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want bool
	}{
		{[]byte{0x28, 0xb5, 0x2f, 0xfd, 0}, true},
		{[]byte{0x28, 0xb5, 0x2f}, false},
		{[]byte(".region global 0 16\n"), false},
		{nil, false},
	} {
		if got := IsBinary(tc.in); got != tc.want {
			t.Errorf("IsBinary(%q) = %v", tc.in, got)
		}
		// IsBinaryAt reads the same 4 bytes from the file's start.
		if got := IsBinaryAt(bytes.NewReader(tc.in)); got != tc.want {
			t.Errorf("IsBinaryAt(%q) = %v", tc.in, got)
		}
	}
}

// benchTrace is ~1M instructions of broadcast and stride vectors.
func benchTrace(b *testing.B) ([]byte, int) {
	const n = 1 << 20
	var buf bytes.Buffer
	w, err := NewBinaryWriter(&buf, testHeader)
	if err != nil {
		b.Fatal(err)
	}
	add := &Inst{Static: stAdd, Mask: 0xffffffff, Vals: []Vector{{Kind: VecStride, Stride: 4}}}
	cas := &Inst{Static: stCAS, Mask: 0xffffffff, Vals: []Vector{{Kind: VecStride, Stride: 8}, {Kind: VecBroadcast}, {Kind: VecBroadcast, Base: 1}, {Kind: VecBroadcast, Base: 0xffff}}}
	for i := range n {
		in := add
		if i%4 == 3 {
			in = cas
		}
		in.Group, in.Warp = int64(i/256), int64(i%8)
		in.Vals[0].Base = 0x10000 + uint64(i%4096)*128
		if in == cas {
			in.Vals[1].Base = uint64(i)
		}
		if err := w.Write(in); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes(), n
}

func BenchmarkBinaryReader(b *testing.B) {
	data, n := benchTrace(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != n {
			b.Fatalf("read %d instructions, want %d", got, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/inst")
	b.ReportMetric(float64(len(data))/float64(n), "bytes/inst")
}

func BenchmarkBinaryWriter(b *testing.B) {
	insts := testInsts()
	b.ReportAllocs()
	for b.Loop() {
		w, err := NewBinaryWriter(io.Discard, testHeader)
		if err != nil {
			b.Fatal(err)
		}
		for i := range 1 << 16 {
			if err := w.Write(insts[i%len(insts)]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// withDirectives interleaves testInsts with .init and .region records: a
// shared-space .init per group, a .region, directives back to back, and a
// directive after the last instruction.
func withDirectives() []*Inst {
	insts := testInsts()
	dir := func(d Directive) *Inst { return &Inst{Dir: &d, Group: 77, Mask: 5} } // Group and Mask are not stored
	initG := dir(Directive{Init: &Init{Space: Global, Group: -1, Addr: 0x1000, Type: TypeU32, Data: []byte{1, 0, 0, 0, 2, 0, 0, 0}}})
	initS := dir(Directive{Init: &Init{Space: Shared, Group: 5, Addr: 0x10, Type: TypeU16, Data: []byte{0xff, 0xee}}})
	initB := dir(Directive{Init: &Init{Space: Space{Kind: SpaceSurface, Surface: 4}, Group: -1, Addr: 0, Type: TypeB128, Data: bytes.Repeat([]byte{7}, 16)}})
	region := dir(Directive{Region: &Region{Space: Global, Base: 0x8000, Size: 0x100}})
	regionC := dir(Directive{Region: &Region{Space: Space{Kind: SpaceCounter, Surface: 0xa0}, Base: 0, Size: 4}})
	clu := dir(Directive{Cluster: &Cluster{Group: 3, ID: 1 << 40}})
	clu0 := dir(Directive{Cluster: &Cluster{Group: 0, ID: 0}})
	var out []*Inst
	out = append(out, clu0, insts[0], initG, insts[1], insts[2], initS, region, clu, insts[3])
	out = append(out, insts[4:8]...)
	out = append(out, regionC, initB, insts[8], insts[9], initG)
	return out
}

func TestBinaryDirectiveRecords(t *testing.T) {
	recs := withDirectives()
	want := wantInsts(recs)
	for _, chunk := range []int{1, 2, 3, 1000} {
		t.Run(fmt.Sprint("chunks of ", chunk), func(t *testing.T) {
			data := writeTrace(t, testHeader, recs, WithChunkInsts(chunk))
			h, got, err := readTrace(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(h, testHeader) {
				t.Errorf("header:\n got %+v\nwant %+v", h, testHeader)
			}
			if len(got) != len(want) {
				t.Fatalf("read %d records, wrote %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("record %d:\n got %+v %+v\nwant %+v %+v", i, got[i], got[i].Dir, want[i], want[i].Dir)
				}
			}
			// Every chunk read on its own, last first, gives the same
			// records with the same seqs.
			x, err := OpenBinaryIndex(bytes.NewReader(data), int64(len(data)), WithStaticParser(fakeParse))
			if err != nil {
				t.Fatal(err)
			}
			if n := (len(recs) + chunk - 1) / chunk; x.NumChunks() != n {
				t.Errorf("%d chunks, want %d", x.NumChunks(), n)
			}
			var parts [][]*Inst
			for c := x.NumChunks() - 1; c >= 0; c-- {
				r, err := x.Reader(c, c+1)
				if err != nil {
					t.Fatal(err)
				}
				var part []*Inst
				for {
					in, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					part = append(part, cloneInst(in))
				}
				parts = append([][]*Inst{part}, parts...)
			}
			if all := slices.Concat(parts...); !reflect.DeepEqual(all, want) {
				t.Errorf("chunk by chunk: %d records, differ from the stream's", len(all))
			}
		})
	}
}

func TestBinaryWriterRejectsBadDirective(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewBinaryWriter(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		d    Directive
		want string
	}{
		{Directive{}, "exactly one of .init, .region and .cluster"},
		{Directive{Region: &Region{Space: Global, Size: 1}, Cluster: &Cluster{}}, "exactly one"},
		{Directive{Cluster: &Cluster{Group: 1, ID: 1<<40 + 1}}, ".cluster 1099511627777 of group 1: both must be from 0 to 2^40"},
		{Directive{Init: &Init{Space: Global, Type: TypeU32, Data: []byte{1}}, Region: &Region{Space: Global, Size: 1}}, "exactly one"},
		{Directive{Init: &Init{Space: Global, Type: TypeU32, Data: []byte{1, 2}}}, "2 data bytes is not a whole number of u32"},
		{Directive{Region: &Region{Space: Space{Kind: 9}, Size: 4}}, "invalid space kind 9"},
	} {
		d := tc.d
		if err := w.Write(&Inst{Dir: &d}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.d, err, tc.want)
		}
	}
	// The writer stays usable and wrote nothing for the rejected records.
	if err := w.Write(testInsts()[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, got, err := readTrace(buf.Bytes())
	if err != nil || len(got) != 1 || got[0].Dir != nil {
		t.Fatalf("read %d records (%v), want the one instruction", len(got), err)
	}
}

// TestReadsVersion1: a file of format version 1, written by the writer
// before version 2, reads to the records it was written from and prints as
// that writer's disasm printed it.
func TestReadsVersion1(t *testing.T) {
	data, err := os.ReadFile("testdata/v1/mixed.zst")
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(splitFrames(t, data)[0].raw[8:]); v != 1 {
		t.Fatalf("the fixture is version %d, want 1", v)
	}
	golden, err := os.ReadFile("testdata/v1/mixed.disasm.tasm")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewBinaryReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tw, err := NewTextWriter(&out, r.Header())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		in, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if in.Dir != nil {
			t.Fatalf("record %d of a version-1 file is a directive", n)
		}
		if err := tw.Write(in); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("%d instructions, want 6", n)
	}
	if out.String() != string(golden) {
		t.Errorf("disasm of the version-1 file:\n%s\nwant:\n%s", out.String(), golden)
	}
}

// TestBinaryWriterCutsChunksAtPayload: instructions with per-lane lists end
// a chunk once its payload reaches chunkTargetBytes, long before the
// instruction count does, so that a reader holds chunks of about 1 MiB
// (docs/FORMAT.md, Limits). Every chunk but the last is at least the
// target and at most the target plus one instruction; the trace reads
// back whole.
func TestBinaryWriterCutsChunksAtPayload(t *testing.T) {
	const n = 40000 // about 3 MiB of payload: 32 two-byte address offsets and more a record
	insts := make([]*Inst, n)
	x := uint64(1)
	for i := range insts {
		insts[i] = &Inst{Static: stAdd, Group: int64(i / 64), Warp: int64(i % 64), Mask: 0xffffffff,
			Vals: []Vector{{Kind: VecList, List: lanes(32, func(int) uint64 {
				x = x*6364136223846793005 + 1442695040888963407 // LCG: scattered addresses, incompressible
				return 0x1000 + (x>>40)&0xfffc
			})}}}
	}
	data := writeTrace(t, testHeader, insts)
	ix, err := OpenBinaryIndex(bytes.NewReader(data), int64(len(data)), WithStaticParser(fakeParse))
	if err != nil {
		t.Fatal(err)
	}
	if ix.NumChunks() < 3 {
		t.Fatalf("%d chunks: the writer did not cut at %d bytes of payload", ix.NumChunks(), chunkTargetBytes)
	}
	const maxRecord = 4 << 10 // one record of 32 fixed-width addresses, generously
	for i := 0; i < ix.NumChunks(); i++ {
		size := int(ix.entries[i+1].dsize)
		if size > chunkTargetBytes+maxRecord || (i < ix.NumChunks()-1 && size < chunkTargetBytes) {
			t.Errorf("chunk %d of %d: %d bytes decompressed, want %d..%d", i, ix.NumChunks(), size, chunkTargetBytes, chunkTargetBytes+maxRecord)
		}
	}
	_, got, err := readTrace(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantInsts(insts)) {
		t.Errorf("read back %d instructions, not the %d written", len(got), n)
	}
}

// TestNextIntoArenaDoubles: an arena that NextInto grows from empty, as a
// replay's first batch's is, at least doubles each time it is moved, so
// its contents are copied about once in all (append grows a large slice
// by a quarter: some twenty copies from 32 words to 64 Ki), and holds
// every instruction's list as decoded.
func TestNextIntoArenaDoubles(t *testing.T) {
	var insts []*Inst
	for i := range 2048 {
		insts = append(insts, &Inst{Static: stAdd, Mask: 0xffffffff, Vals: []Vector{{Kind: VecList,
			List: lanes(32, func(l int) uint64 { return uint64(i*131+l*l) * 4 })}}})
	}
	data := writeTrace(t, &Header{}, insts)
	r, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
	if err != nil {
		t.Fatal(err)
	}
	var arena []uint64
	moves := 0
	for i := 0; ; i++ {
		in, a, err := r.NextInto(arena)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if cap(a) != cap(arena) {
			if cap(arena) > 0 && cap(a) < 2*cap(arena) {
				t.Fatalf("record %d: the arena grew from %d to %d words, less than twice", i, cap(arena), cap(a))
			}
			moves++
		}
		if got := a[len(arena):]; !slices.Equal(got, insts[i].Vals[0].List) || !slices.Equal(in.Vals[0].List, got) {
			t.Fatalf("record %d: NextInto put %v in the arena, want %v", i, got, insts[i].Vals[0].List)
		}
		arena = a
	}
	if len(arena) != 2048*32 || moves > 13 {
		t.Errorf("the arena holds %d words after %d moves, want %d after at most 13", len(arena), moves, 2048*32)
	}
}

// TestBinaryRepeatedRecords reads traces whose records repeat, byte for
// byte, as a hot counter's do (BinaryReader.repeat): runs of one warp
// shape with constant group and warp steps, a predicate, 128-bit values,
// runs broken by a list record, a directive and a mask, and chunks of 7
// records, so that a run crosses from one chunk into the next, whose
// static table and deltas start again. Next and NextInto both give back
// every instruction as written.
func TestBinaryRepeatedRecords(t *testing.T) {
	var insts []*Inst
	run := func(n int, in Inst, dg, dw int64) {
		for range n {
			c := cloneInst(&in)
			insts = append(insts, c)
			in.Group += dg
			in.Warp += dw
		}
	}
	hot := Inst{Static: stAdd, Mask: 0xffffffff, Vals: []Vector{{Kind: VecBroadcast, Base: 0x1000}}}
	run(20, hot, 0, 1)
	run(9, Inst{Static: stAdd, Group: 3, Warp: 40, Mask: 0xffff, Vals: []Vector{{Kind: VecStride, Base: 0x2000, Stride: 8}}}, 2, -3)
	list := Inst{Static: stAdd, Mask: 0xffffffff, Vals: []Vector{{Kind: VecList, List: lanes(32, func(i int) uint64 { return 0x3000 + uint64(i*i) })}}}
	run(4, list, 0, 1)
	run(5, hot, 0, 1)
	// A directive between records of the same bytes: not a repeat of it.
	insts = append(insts, &Inst{Dir: &Directive{Region: &Region{Space: Global, Base: 0x9000, Size: 0x100}}})
	hot.Warp = 5
	run(3, hot, 0, 1)
	hot.Warp = 0
	// Groups of 8 warps: the first of a group the same record as the one
	// before but for its group and warp deltas.
	for g := range 4 {
		hot.Group = int64(g) + 10
		run(8, hot, 0, 1)
	}
	hot.Group = 0
	insts = append(insts, &Inst{Dir: &Directive{Region: &Region{Space: Global, Base: 0x8000, Size: 0x100}}})
	run(6, hot, 1, 0)
	cas := Inst{Static: stCAS, Group: 1, Mask: 0xffffffff, Vals: []Vector{
		{Kind: VecBroadcast, Base: 0x3000}, {Kind: VecBroadcast, Base: 5}, {Kind: VecStride, Base: 7, Stride: 1}, {Kind: VecBroadcast, Base: 0xf0f0f0f0}}}
	run(8, cas, 0, 2)
	hot.Mask = 0x0f
	run(3, hot, 0, 0)
	run(7, Inst{Static: stExch128, Group: -2, Warp: 5, Mask: 0x3, Vals: []Vector{
		{Kind: VecBroadcast, Base: 0x5000}, {Kind: VecStride, Base: ^uint64(0), Stride: 1, BaseHi: 9}}}, -1, 1)
	// An append queue's warps: the same instruction under masks that
	// differ (decodeInst takes the record before's vectors), of one
	// varint length or not, with and without a predicate (the CAS's
	// lane-ops are its mask's lanes that its predicate leaves: the
	// chunk's count of lane-ops checks them).
	for _, in := range []Inst{hot, cas} {
		for _, m := range []uint32{0x444a, 0x8f78, 0x8f78, 0x813a, 0x1, 0x7f, 0x80, 0x0, 0xffffffff, 0xfffffffe, 0x9bd9, 0x9bd9} {
			in.Mask = m
			run(1, in, 0, 0)
			in.Warp++
		}
	}
	want := wantInsts(insts)
	for _, chunk := range []int{7, 1000} {
		data := writeTrace(t, &Header{}, insts, WithChunkInsts(chunk))
		_, got, err := readTrace(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("chunks of %d: read %d records, want %d", chunk, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("chunks of %d, record %d (Next):\n got %+v\nwant %+v", chunk, i, got[i], want[i])
			}
		}
		r, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
		if err != nil {
			t.Fatal(err)
		}
		var arena []uint64
		for i := 0; ; i++ {
			in, a, err := r.NextInto(arena)
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("chunks of %d: NextInto read %d records, want %d", chunk, i, len(want))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(a) - len(arena); in.Dir == nil && n != len(in.Vals[0].List) {
				t.Fatalf("chunks of %d, record %d: NextInto took %d arena words for a list of %d", chunk, i, n, len(in.Vals[0].List))
			}
			if c := cloneInst(in); !reflect.DeepEqual(c, want[i]) {
				t.Fatalf("chunks of %d, record %d (NextInto):\n got %+v\nwant %+v", chunk, i, c, want[i])
			}
			arena = a
		}
		// Next, and after each instruction Repeats of up to max: the
		// records it consumes, made from the instruction as it says, are
		// the records Next reads. It takes none after a directive or an
		// instruction with a list, and stops at a chunk's end.
		for _, max := range []int{1, 2, 5, 1 << 20} {
			r, err := NewBinaryReader(bytes.NewReader(data), WithStaticParser(fakeParse))
			if err != nil {
				t.Fatal(err)
			}
			var got []*Inst
			taken, masked := 0, 0
			for {
				in, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, cloneInst(in))
				n, dg, dw := r.Repeats(max)
				if n > max || n > 0 && (in.Dir != nil || in.Vals[0].Kind == VecList) {
					t.Fatalf("chunks of %d, max %d: %d repeats of record %d %+v", chunk, max, n, len(got)-1, in)
				}
				if ms := in.RepeatMasks; ms != nil && len(ms) != n {
					t.Fatalf("chunks of %d, max %d: %d repeats of record %d with %d masks", chunk, max, n, len(got)-1, len(ms))
				}
				last := got[len(got)-1]
				for i := 1; i <= n; i++ {
					c := cloneInst(last)
					c.Seq, c.Group, c.Warp = last.Seq+uint64(i), last.Group+int64(i)*dg, last.Warp+int64(i)*dw
					if in.RepeatMasks != nil {
						c.Mask = in.RepeatMasks[i-1]
						masked++
					}
					got = append(got, c)
				}
				taken += n
			}
			if len(got) != len(want) {
				t.Fatalf("chunks of %d, max %d: Next and Repeats read %d records, want %d", chunk, max, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("chunks of %d, max %d, record %d (Repeats):\n got %+v\nwant %+v", chunk, max, i, got[i], want[i])
				}
			}
			if taken == 0 || masked == 0 {
				t.Errorf("chunks of %d, max %d: Repeats took %d records, %d of them under masks of their own", chunk, max, taken, masked)
			}
		}
	}
}
