package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// vectorKinds returns the stored kind of every vector of the first
// instruction of a one-chunk trace of in alone.
func vectorKinds(t *testing.T, in *Inst) []byte {
	t.Helper()
	fs := splitFrames(t, writeTrace(t, nil, []*Inst{in}))
	p := fs[1].raw[chunkFixedLen:]
	p = p[1+1+len(in.Static.Text):] // the static table of one text
	p = p[4:]                       // code, group, warp, mask: one byte each here
	var kinds []byte
	for i := range in.Vals {
		kinds = append(kinds, p[0])
		var err error
		if p, err = skipVector(p[1:], p[0], in.Static.Inputs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return kinds
}

// skipVector steps over a stored vector of the given kind.
func skipVector(p []byte, kind byte, in Input) ([]byte, error) {
	n := in.Count(32)
	vs := make([]uint64, n)
	var ok bool
	switch kind {
	case vecKindBroadcast, vecKindStride:
		_, k := uvarint(p)
		p = p[k:]
		if kind == vecKindStride {
			_, k = uvarint(p)
			p = p[k:]
		}
	case vecKindList, vecKindList128:
		if p, k := readDeltas(p, vs); k < 0 {
			return nil, errors.New("bad deltas")
		} else if kind == vecKindList128 {
			p, _ = readDeltas(p, vs)
			return p, nil
		}
	case vecKindFixed, vecKindFixed128:
		if p, ok = readFixed(p, vs, false); !ok {
			return nil, errors.New("bad fixed list")
		}
		if kind == vecKindFixed128 {
			p, _ = readFixed(p, vs, false)
			return p, nil
		}
	}
	if in.Bits == 128 {
		_, k := uvarint(p)
		p = p[k:]
	}
	return p, nil
}

// TestBinaryListForms: the writer stores each list in the shorter of its
// two forms, fixed width on a tie, and both read back exactly, for every
// width and shift.
func TestBinaryListForms(t *testing.T) {
	l32 := func(f func(i int) uint64) []uint64 { return lanes(32, f) }
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name string
		in   *Inst
		want []byte
	}{
		{"random words", &Inst{Static: stAdd, Mask: ^uint32(0), Vals: []Vector{{Kind: VecList, List: l32(func(int) uint64 { return 0x10000000 + 4*rng.Uint64N(1<<20) })}}}, []byte{vecKindFixed}},
		{"consecutive", &Inst{Static: stAdd, Mask: ^uint32(0), Vals: []Vector{{Kind: VecList, List: l32(func(i int) uint64 { return uint64(i) })}}}, []byte{vecKindList}},
		{"all equal", &Inst{Static: stAdd, Mask: ^uint32(0), Vals: []Vector{{Kind: VecList, List: l32(func(int) uint64 { return 77 })}}}, []byte{vecKindList}},
		// One-byte deltas against one-byte offsets: 32 deltas, 1+1+32 for
		// the fixed form with minimum 0 ... and the first delta of 100
		// takes one byte too: 32 against 34.
		{"small steps", &Inst{Static: stAdd, Mask: ^uint32(0), Vals: []Vector{{Kind: VecList, List: l32(func(i int) uint64 { return 100 + uint64(i%2)*20 })}}}, []byte{vecKindList}},
		{"extremes", &Inst{Static: stAdd, Mask: ^uint32(0), Vals: []Vector{{Kind: VecList, List: l32(func(i int) uint64 { return []uint64{0, ^uint64(0), rng.Uint64()}[min(i, 2)] })}}}, []byte{vecKindFixed}},
		{"shifted", &Inst{Static: stAdd, Mask: ^uint32(0), Vals: []Vector{{Kind: VecList, List: l32(func(int) uint64 { return 0x10000000 + 4*rng.Uint64N(256) })}}}, []byte{vecKindFixed}},
		{"wide with high halves", &Inst{Static: stExch128, Mask: ^uint32(0), Vals: []Vector{{Kind: VecBroadcast},
			{Kind: VecList, List: l32(func(int) uint64 { return rng.Uint64() }), ListHi: l32(func(int) uint64 { return rng.Uint64() })}}}, []byte{vecKindBroadcast, vecKindFixed128}},
		{"wide, sorted high halves", &Inst{Static: stExch128, Mask: ^uint32(0), Vals: []Vector{{Kind: VecBroadcast},
			{Kind: VecList, List: l32(func(i int) uint64 { return uint64(i) }), ListHi: l32(func(i int) uint64 { return uint64(i) })}}}, []byte{vecKindBroadcast, vecKindList128}},
		{"wide, one high half", &Inst{Static: stExch128, Mask: ^uint32(0), Vals: []Vector{{Kind: VecBroadcast},
			{Kind: VecList, List: l32(func(int) uint64 { return rng.Uint64N(1 << 40) }), BaseHi: 9}}}, []byte{vecKindBroadcast, vecKindFixed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := vectorKinds(t, tc.in); !bytes.Equal(got, tc.want) {
				t.Errorf("stored kinds %v, want %v", got, tc.want)
			}
			_, got, err := readTrace(writeTrace(t, nil, []*Inst{tc.in}))
			if err != nil {
				t.Fatal(err)
			}
			if want := wantInsts([]*Inst{tc.in}); !reflect.DeepEqual(got, want) {
				t.Errorf("read back\n %+v\nwant\n %+v", got[0].Vals, want[0].Vals)
			}
		})
	}

	// Every width and shift, and lists at the payload's very end (no
	// bytes after the list for an 8-byte load).
	insts := listInsts()
	for _, chunk := range []int{1, 1000} {
		data := writeTrace(t, nil, insts, WithChunkInsts(chunk))
		_, got, err := readTrace(data)
		if err != nil {
			t.Fatal(err)
		}
		if want := wantInsts(insts); !reflect.DeepEqual(got, want) {
			t.Errorf("chunks of %d: lists of every width and shift do not read back", chunk)
		}
	}
}

// listInsts has lists of every width and shift the fixed-width form takes,
// and 128-bit lists with and without high halves.
func listInsts() []*Inst {
	rng := rand.New(rand.NewPCG(7, 8))
	var insts []*Inst
	for width := 1; width <= 8; width++ {
		for shift := 0; shift <= 16; shift += 4 {
			span := uint64(1)<<(8*width-1) | 1 // needs width bytes
			if width == 8 {
				span = ^uint64(0) >> 1
			}
			base := rng.Uint64()
			list := lanes(32, func(i int) uint64 {
				off := rng.Uint64N(span)
				if i == 0 {
					off = 0
				} else if i == 1 {
					off = span
				}
				return base + off<<shift
			})
			insts = append(insts, &Inst{Static: stAdd, Mask: ^uint32(0), Vals: []Vector{{Kind: VecList, List: list}}})
		}
	}
	for _, span := range []uint64{1 << 8, 1 << 24, 1 << 63} {
		insts = append(insts,
			&Inst{Static: stExch128, Mask: 0xff, Vals: []Vector{{Kind: VecList, List: lanes(32, func(int) uint64 { return rng.Uint64N(span) })},
				{Kind: VecList, List: lanes(32, func(int) uint64 { return rng.Uint64N(span) }), ListHi: lanes(32, func(int) uint64 { return rng.Uint64N(span) << 3 })}}},
			&Inst{Static: stExch128, Mask: 0xff00, Vals: []Vector{{Kind: VecBroadcast, Base: span},
				{Kind: VecList, List: lanes(32, func(int) uint64 { return rng.Uint64N(span) }), BaseHi: span}}},
			&Inst{Static: stLSC, Mask: 0xffff, Vals: []Vector{{Kind: VecList, List: lanes(16, func(int) uint64 { return 4 * rng.Uint64N(span) })},
				{Kind: VecList, List: lanes(16, func(int) uint64 { return rng.Uint64N(span) })}}})
	}
	return insts
}

// pipelineConfigs are the ways a test reads a trace: the stream and index
// readers with several read-aheads and decompressor counts.
var pipelineConfigs = []struct {
	name  string
	index bool
	opts  []ReaderOption
}{
	{"stream", false, nil},
	{"stream ahead 1", false, []ReaderOption{WithReadAhead(1)}},
	{"stream 3 decoders", false, []ReaderOption{WithDecoders(3), WithReadAhead(5)}},
	{"index", true, nil},
	{"index 1 decoder", true, []ReaderOption{WithDecoders(1), WithReadAhead(1)}},
	{"index 4 decoders", true, []ReaderOption{WithDecoders(4)}},
	{"index 8 decoders, ahead 2", true, []ReaderOption{WithDecoders(8), WithReadAhead(2)}},
	{"index 16 decoders", true, []ReaderOption{WithDecoders(16), WithReadAhead(16)}},
}

// openConfig opens data as a reader of configuration c over every chunk.
func openConfig(t testing.TB, data []byte, index bool, opts ...ReaderOption) (*BinaryReader, error) {
	opts = append([]ReaderOption{WithStaticParser(fakeParse), WithName("trace.zst")}, opts...)
	if !index {
		return NewBinaryReader(bytes.NewReader(data), opts...)
	}
	x, err := OpenBinaryIndex(bytes.NewReader(data), int64(len(data)), opts...)
	if err != nil {
		return nil, err
	}
	return x.Reader(0, x.NumChunks())
}

// readBinary reads r to its end: the records and the error that ended them.
func readBinary(r *BinaryReader) ([]*Inst, error) {
	var out []*Inst
	for {
		in, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, cloneInst(in))
	}
}

// TestBinaryReadAhead: whatever the read-ahead and decompressors, readers
// give the records as written, and after a bad chunk the same records and
// the same error: every record before the bad chunk, the bad chunk's own
// records that decode (a stream hands them out before the chunk's end),
// and then the error of the first bad chunk, never a later one.
func TestBinaryReadAhead(t *testing.T) {
	recs := withDirectives()
	recs = append(recs, recs...)
	recs = append(recs, recs...)
	good := writeTrace(t, testHeader, recs, WithChunkInsts(3)) // 20 chunks
	fs := splitFrames(t, good)
	records := func() [][]byte {
		var rs [][]byte
		for _, f := range fs[:len(fs)-1] {
			rs = append(rs, slices.Clone(f.raw))
		}
		return rs
	}
	patch := func(patches map[int]func([]byte) []byte) []byte {
		rs := records()
		for i, p := range patches {
			rs[i] = p(rs[i])
		}
		return joinFrames(t, rs)
	}
	flip := func(r []byte) []byte { r[len(r)-1] ^= 0x40; return r }
	extra := func(r []byte) []byte { // a byte after the last record, found at the chunk's end
		return reseal(fixLen(append(r, 9)))
	}
	truncated := slices.Clone(good)
	var off int
	for _, f := range fs[:9] {
		off += len(f.z)
	}
	truncated = truncated[:off+10]
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" for io.EOF
	}{
		{"good", good, ""},
		{"bad chunks 5 and 9", patch(map[int]func([]byte) []byte{6: flip, 10: flip}), "chunk 5 at offset"},
		{"bad record in chunk 5, bad chunk 6", patch(map[int]func([]byte) []byte{6: extra, 7: flip}), "chunk 5 at offset"},
		{"bad last chunk", patch(map[int]func([]byte) []byte{20: flip}), "chunk 19 at offset"},
		{"truncated in chunk 8", truncated, "chunk 8 at offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var first []*Inst
			var firstErr error
			for i, c := range pipelineConfigs {
				if tc.name == "truncated in chunk 8" && c.index {
					continue // no seek table: the index does not open
				}
				r, err := openConfig(t, tc.data, c.index, c.opts...)
				if err != nil {
					t.Fatal(err)
				}
				got, err := readBinary(r)
				r.Close()
				if tc.want == "" && err != io.EOF || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
					t.Fatalf("%s: error %v after %d records, want %q", c.name, err, len(got), tc.want)
				}
				if tc.want == "" && !reflect.DeepEqual(got, wantInsts(recs)) {
					t.Errorf("%s: records differ from those written", c.name)
				}
				if i == 0 {
					first, firstErr = got, err
					continue
				}
				if !reflect.DeepEqual(got, first) {
					t.Errorf("%s: %d records, the stream gave %d", c.name, len(got), len(first))
				}
				// The index and the stream differ only in how they
				// find the frame; the error names the same chunk.
				if err.Error() != firstErr.Error() && !c.index {
					t.Errorf("%s: error %q, the stream's %q", c.name, err, firstErr)
				}
			}
		})
	}
}

// waitGoroutines waits until at most n goroutines run.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestBinaryReaderStops: a reader's goroutines end at io.EOF, at an error,
// on Close, and when a reader that was dropped half-read is collected.
func TestBinaryReaderStops(t *testing.T) {
	data := writeTrace(t, testHeader, slices.Repeat(testInsts(), 20), WithChunkInsts(2))
	for _, c := range pipelineConfigs {
		t.Run(c.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			// To the end.
			r, err := openConfig(t, data, c.index, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := readBinary(r); err != io.EOF {
				t.Fatal(err)
			}
			waitGoroutines(t, base)

			// Closed after a few records; Next then fails.
			r, err = openConfig(t, data, c.index, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if _, err := r.Next(); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			waitGoroutines(t, base)
			if _, err := r.Next(); err == nil || !errors.Is(err, errClosed) {
				t.Errorf("Next after Close: %v", err)
			}
			if err := r.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}

			// Dropped after a few records.
			func() {
				r, err := openConfig(t, data, c.index, c.opts...)
				if err != nil {
					t.Fatal(err)
				}
				for range 5 {
					if _, err := r.Next(); err != nil {
						t.Fatal(err)
					}
				}
			}()
			waitGoroutines(t, base)
		})
	}
}

// stallReader gives its data, then blocks until released.
type stallReader struct {
	data    []byte
	release chan struct{}
}

func (s *stallReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		<-s.release
		return 0, io.EOF
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// TestBinaryCloseBlockedStream: Close of a streaming reader whose input
// blocks returns at once; the input goroutine ends when the Read does.
func TestBinaryCloseBlockedStream(t *testing.T) {
	data := writeTrace(t, testHeader, slices.Repeat(testInsts(), 20), WithChunkInsts(2))
	base := runtime.NumGoroutine()
	sr := &stallReader{data: data[:len(data)/2], release: make(chan struct{})}
	r, err := NewBinaryReader(sr, WithStaticParser(fakeParse))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { r.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for a blocked Read")
	}
	close(sr.release)
	waitGoroutines(t, base)
}

// TestBinaryProgress: WithProgress reports each chunk's end, in order, up
// to the last chunk's.
func TestBinaryProgress(t *testing.T) {
	data := writeTrace(t, testHeader, testInsts(), WithChunkInsts(3))
	fs := splitFrames(t, data)
	var ends []int64
	var end int64
	for _, f := range fs[:len(fs)-1] {
		end += int64(len(f.z))
		ends = append(ends, end)
	}
	for _, c := range pipelineConfigs {
		var got []int64
		r, err := openConfig(t, data, c.index, append(c.opts, WithProgress(func(off int64) {
			got = append(got, off)
		}))...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := readBinary(r); err != io.EOF {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ends[1:]) {
			t.Errorf("%s: progress %v, want %v", c.name, got, ends[1:])
		}
	}
}

func TestBinaryReaderOptions(t *testing.T) {
	for _, opt := range []ReaderOption{WithReadAhead(-1), WithReadAhead(17), WithDecoders(-1), WithDecoders(17)} {
		if _, err := NewBinaryReader(bytes.NewReader(nil), opt); err == nil || strings.Contains(err.Error(), "empty") {
			t.Errorf("a bad option: %v", err)
		}
	}
	for _, tc := range []struct {
		ahead, decoders, def int
		bufs, decs           int
	}{
		{0, 0, 1, 3, 1},
		{0, 0, 2, 4, 2},
		{1, 0, 2, 2, 1},
		{4, 2, 1, 5, 2},
		{0, 3, 1, 5, 3},
	} {
		o := readerOptions{readAhead: tc.ahead, decoders: tc.decoders}
		if b, d := o.pipelineSize(tc.def); b != tc.bufs || d != tc.decs {
			t.Errorf("read-ahead %d, decoders %d, default %d: %d buffers, %d decoders; want %d, %d", tc.ahead, tc.decoders, tc.def, b, d, tc.bufs, tc.decs)
		}
	}
}

// TestBinarySeekTableWithoutChecksums: a seek table of 8-byte entries is
// read by both readers, checking sizes only.
func TestBinarySeekTableWithoutChecksums(t *testing.T) {
	data := writeTrace(t, testHeader, testInsts(), WithChunkInsts(3))
	fs := splitFrames(t, data)
	var out []byte
	var table []byte
	for _, f := range fs[:len(fs)-1] {
		out = append(out, f.z...)
		table = binary.LittleEndian.AppendUint32(table, uint32(len(f.z)))
		table = binary.LittleEndian.AppendUint32(table, uint32(len(f.raw)))
	}
	out = binary.LittleEndian.AppendUint32(out, seekTableFrameMagic)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(table)+seekFooterLen))
	out = append(out, table...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(fs)-1))
	out = append(out, 0)
	out = binary.LittleEndian.AppendUint32(out, seekableMagic)
	for _, index := range []bool{false, true} {
		r, err := openConfig(t, out, index)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readBinary(r)
		if err != io.EOF || !reflect.DeepEqual(got, wantInsts(testInsts())) {
			t.Errorf("index %v: %d records, %v", index, len(got), err)
		}
	}
}

// ExampleBinaryReader_Close shows a reader stopped before the end.
func ExampleBinaryReader_Close() {
	var buf bytes.Buffer
	w, _ := NewBinaryWriter(&buf, nil)
	st, _ := ParseStatic("atom.global.add.u32 %r1, [%rd1], 1")
	for range 3 {
		_ = w.Write(&Inst{Static: st, Mask: 1, Vals: []Vector{{Kind: VecBroadcast, Base: 0x100}}})
	}
	_ = w.Close()
	r, _ := NewBinaryReader(&buf)
	defer r.Close() // stops the read-ahead: the rest is never read
	in, _ := r.Next()
	fmt.Println(in.Seq, in.Static.Text)
	// Output: 0 atom.global.add.u32 %r1, [%rd1], 1
}

// TestBinaryReadersConcurrent runs many readers at once, some stopped
// early, some dropped, so that buffers go back and forth between readers
// through the pool while others still work: every reader read to its end
// must still give exactly the records written (run it with -race).
func TestBinaryReadersConcurrent(t *testing.T) {
	recs := slices.Repeat(listInsts(), 4)
	data := writeTrace(t, testHeader, recs, WithChunkInsts(7))
	want := wantInsts(recs)
	errs := make(chan error)
	for g := range 8 {
		go func() {
			var err error
			defer func() { errs <- err }()
			for i := range 6 {
				c := pipelineConfigs[(g+i)%len(pipelineConfigs)]
				r, e := openConfig(t, data, c.index, c.opts...)
				if e != nil {
					err = e
					return
				}
				switch i % 3 {
				case 0: // to the end
					got, e := readBinary(r)
					if e != io.EOF || !reflect.DeepEqual(got, want) {
						err = fmt.Errorf("%s: %d records, %v", c.name, len(got), e)
						return
					}
				case 1: // closed early
					for range 10 {
						if _, e := r.Next(); e != nil {
							err = e
							return
						}
					}
					r.Close()
				case 2: // dropped
					if _, e := r.Next(); e != nil {
						err = e
						return
					}
				}
			}
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestReadFixedWidths reads lists written by appendFixed at every width
// and shift, with the values last in the buffer and with bytes after
// them: the wide loads of some widths read past a value only where the
// buffer goes on, and must not take the next bytes into the last value.
func TestReadFixedWidths(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for width := 1; width <= 8; width++ {
		for _, shift := range []int{0, 2, 15} {
			for _, n := range []int{1, 2, 31, 32} {
				vs := make([]uint64, n)
				base := rng.Uint64() >> 1
				span := uint64(1)<<(8*width-1) | rng.Uint64()&(uint64(1)<<(8*width-1)-1)
				if width == 8 {
					span = rng.Uint64() >> 17
				}
				for i := range vs {
					vs[i] = base + (rng.Uint64N(span)>>shift)<<shift
				}
				vs[0] = base
				f := fixedForm(vs)
				for _, tail := range [][]byte{nil, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}} {
					for _, simd := range []bool{false, hasFixedSIMD()} {
						p := append(appendFixed(nil, vs, f), tail...)
						got := make([]uint64, n)
						rest, ok := readFixed(p, got, simd)
						if !ok || len(rest) != len(tail) || !slices.Equal(got, vs) {
							t.Fatalf("width %d (form %+v) shift %d, %d values, %d bytes after, simd %v: ok %v, %d bytes left, got %x, want %x",
								width, f, shift, n, len(tail), simd, ok, len(rest), got, vs)
						}
					}
				}
			}
		}
	}
}

// TestPrefixReaderFirstRecords: PrefixReader(k, n) gives the first records
// of chunk k that Reader(k, k+1) gives, as many as lie in the first n
// bytes of the chunk's frame, more as n grows, and then an error, not
// io.EOF; with n the whole frame, every record and io.EOF (whole).
func TestPrefixReaderFirstRecords(t *testing.T) {
	insts := listInsts()
	insts = append(insts, insts...)
	data := writeTrace(t, nil, insts, WithChunkInsts(40))
	x, err := OpenBinaryIndex(bytes.NewReader(data), int64(len(data)), WithStaticParser(fakeParse), WithName("trace.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if x.NumChunks() < 3 {
		t.Fatalf("%d chunks, want several", x.NumChunks())
	}
	partial := 0
	for k := range x.NumChunks() {
		r, err := x.Reader(k, k+1)
		if err != nil {
			t.Fatal(err)
		}
		all, err := readBinary(r)
		if err != io.EOF || len(all) == 0 {
			t.Fatalf("chunk %d: %d records, then %v", k, len(all), err)
		}
		last := 0
		for _, n := range []int{16, 256, 1 << 10, 2 << 10, 4 << 10, 8 << 10, 1 << 20} {
			r, whole, err := x.PrefixReader(k, n)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBinary(r)
			r.Close()
			switch {
			case whole && (err != io.EOF || len(got) != len(all)):
				t.Errorf("chunk %d, the whole frame (%d bytes): %d records of %d, then %v", k, n, len(got), len(all), err)
			case !whole && (err == nil || err == io.EOF || len(got) >= len(all)):
				t.Errorf("chunk %d, its first %d bytes: %d records of %d, then %v, want fewer and an error", k, n, len(got), len(all), err)
			case len(got) < last:
				t.Errorf("chunk %d, its first %d bytes: %d records, fewer than a shorter prefix's %d", k, n, len(got), last)
			case len(got) > 0 && !reflect.DeepEqual(got, all[:len(got)]):
				t.Errorf("chunk %d, its first %d bytes: its %d records are not the chunk's first", k, n, len(got))
			}
			if !whole && len(got) > 0 {
				partial++
			}
			last = len(got)
		}
	}
	if partial == 0 {
		t.Error("no prefix held some of its chunk's records but not all")
	}
}
