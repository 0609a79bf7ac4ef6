package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

type readerOptions struct {
	parse func(string) (*Static, error)
	name  string
}

// ReaderOption configures a BinaryReader.
type ReaderOption func(*readerOptions) error

// WithStaticParser sets the function that turns a stored instruction text
// into a Static. It runs once per distinct text a reader meets. Default
// ParseStatic.
func WithStaticParser(parse func(string) (*Static, error)) ReaderOption {
	return func(o *readerOptions) error {
		if parse == nil {
			return errors.New("trace: nil static parser")
		}
		o.parse = parse
		return nil
	}
}

// WithName sets the file name that errors start with. Default none.
func WithName(name string) ReaderOption {
	return func(o *readerOptions) error {
		o.name = name
		return nil
	}
}

func newReaderOptions(opts []ReaderOption) (readerOptions, error) {
	o := readerOptions{parse: ParseStatic}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// BinaryReader reads the binary trace form of docs/FORMAT.md as a Source,
// one frame at a time: it holds at most one decompressed chunk. Errors are
// *BinaryError and are sticky.
type BinaryReader struct {
	o   readerOptions
	br  *bufio.Reader
	dec *zstd.Decoder
	dig *xxhash.Digest
	hdr *Header
	ver uint16 // the format version of the header

	off      int64  // bytes consumed from the input
	base     int64  // offset in the file of the input's first byte
	frameOff int64  // offset of the frame being read
	where    int    // the chunk (or BinaryChunkHeader/SeekTable) being read
	zbuf     []byte // the compressed frame
	raw      []byte // the decompressed frame

	chunk int         // index of the current or next chunk
	stop  int         // index reader: the chunk to stop at; -1 to read to the seek table
	want  []seekEntry // index reader: seek table entries of chunks [chunk, stop)
	seen  []seekEntry // stream reader: entries of the frames read, checked against the seek table
	seq   uint64      // seq of the next instruction
	first bool        // no chunk read yet (an index reader takes its seq from it)
	cache map[string]*Static

	// The current chunk.
	loaded  bool
	p       []byte // instructions not yet decoded
	plen    int    // instruction bytes in the chunk
	left    int    // instructions not yet decoded
	count   int
	laneOps uint64
	wantOps uint64
	group   int64
	warp    int64
	statics []*Static

	inst  Inst
	dinst Inst // a directive record, with its storage
	dir   Directive
	dinit Init
	dreg  Region
	lanes []uint64 // list backing: 2*MaxLanes per input
	err   error
}

// NewBinaryReader reads and checks the header frame of a binary trace and
// returns a reader positioned at the first instruction. It reads r in
// order and never seeks; for random access see OpenBinaryIndex.
func NewBinaryReader(r io.Reader, opts ...ReaderOption) (*BinaryReader, error) {
	o, err := newReaderOptions(opts)
	if err != nil {
		return nil, err
	}
	br, err := newReader(r, o, 0)
	if err != nil {
		return nil, err
	}
	if err := br.readHeader(); err != nil {
		return nil, err
	}
	return br, nil
}

func newReader(r io.Reader, o readerOptions, base int64) (*BinaryReader, error) {
	dec, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(maxWindow),
		zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		return nil, err
	}
	return &BinaryReader{
		o: o, br: bufio.NewReaderSize(r, 64<<10), dec: dec, dig: xxhash.New(),
		off: base, base: base, stop: -1, cache: map[string]*Static{},
	}, nil
}

// Header returns the regions and initial memory the trace declares.
func (r *BinaryReader) Header() *Header { return r.hdr }

func (r *BinaryReader) fail(format string, args ...any) error {
	return &BinaryError{Name: r.o.name, Chunk: r.where, Offset: r.frameOff, Err: fmt.Errorf(format, args...)}
}

// take reads n more bytes of the current frame onto zbuf.
func (r *BinaryReader) take(n int) ([]byte, error) {
	start := len(r.zbuf)
	if start+n > maxFrameBytes {
		return nil, r.fail("frame is over %d bytes", maxFrameBytes)
	}
	r.zbuf = slices.Grow(r.zbuf, n)[:start+n]
	m, err := io.ReadFull(r.br, r.zbuf[start:])
	r.off += int64(m)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, r.fail("%w: the file ends %d bytes into the frame", errTruncated, r.off-r.frameOff)
		}
		return nil, r.fail("%w", err)
	}
	return r.zbuf[start:], nil
}

const (
	frameZstd = iota
	frameSkippable
	frameEOF
)

// readFrame reads the next frame's magic and, for a zstd frame, the whole
// frame, walking its block headers (RFC 8878 section 3.1.1) without
// decompressing. It returns the kind, and for a zstd frame an upper bound
// of its decompressed size. A skippable frame is left after its magic.
func (r *BinaryReader) readFrame() (kind int, bound int, err error) {
	r.frameOff = r.off
	r.zbuf = r.zbuf[:0]
	if _, err := r.br.Peek(1); err == io.EOF {
		return frameEOF, 0, nil
	}
	b, err := r.take(4)
	if err != nil {
		return 0, 0, err
	}
	magic := binary.LittleEndian.Uint32(b)
	if magic&skippableMagicMask == skippableMagicBase {
		return frameSkippable, 0, nil
	}
	if magic != zstdFrameMagic && r.where == BinaryChunkHeader {
		return 0, 0, r.fail("not a binary trace: magic 0x%08x, want the zstd frame magic 0x%08x", magic, zstdFrameMagic)
	}
	if magic != zstdFrameMagic {
		return 0, 0, r.fail("not a zstd frame: magic 0x%08x, want 0x%08x", magic, zstdFrameMagic)
	}
	b, err = r.take(1)
	if err != nil {
		return 0, 0, err
	}
	fhd := b[0]
	if fhd&0x08 != 0 {
		return 0, 0, r.fail("zstd frame header has its reserved bit set")
	}
	single := fhd&0x20 != 0
	nWin := 1
	if single {
		nWin = 0
	}
	nDict := [4]int{0, 1, 2, 4}[fhd&3]
	nFCS := [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && single {
		nFCS = 1
	}
	h, err := r.take(nWin + nDict + nFCS)
	if err != nil {
		return 0, 0, err
	}
	var window uint64
	if !single {
		exp, mant := uint64(h[0]>>3), uint64(h[0]&7)
		base := uint64(1) << (10 + exp)
		window = base + base/8*mant
		h = h[1:]
	}
	var dict uint64
	for i := nDict - 1; i >= 0; i-- {
		dict = dict<<8 | uint64(h[i])
	}
	if dict != 0 {
		return 0, 0, r.fail("zstd frame needs dictionary %d; binary traces use none", dict)
	}
	h = h[nDict:]
	var fcs uint64
	for i := nFCS - 1; i >= 0; i-- {
		fcs = fcs<<8 | uint64(h[i])
	}
	if nFCS == 2 {
		fcs += 256
	}
	if nFCS > 0 && fcs > maxFrameContent {
		return 0, 0, r.fail("frame declares %d decompressed bytes, over the limit of %d", fcs, maxFrameContent)
	}
	if single {
		window = fcs
	}
	if window > maxWindow {
		return 0, 0, r.fail("zstd window of %d bytes is over the limit of %d", window, maxWindow)
	}
	var blocks uint64 // the most the blocks can decompress to
	for {
		b, err := r.take(3)
		if err != nil {
			return 0, 0, err
		}
		v := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		last, typ, size := v&1 != 0, (v>>1)&3, int(v>>3)
		if size > zstdMaxBlock {
			return 0, 0, r.fail("zstd block of %d bytes, over the maximum %d", size, zstdMaxBlock)
		}
		switch typ {
		case 0: // raw
			_, err = r.take(size)
			blocks += uint64(size)
		case 1: // RLE
			_, err = r.take(1)
			blocks += uint64(size)
		case 2: // compressed
			_, err = r.take(size)
			blocks += zstdMaxBlock
		default:
			return 0, 0, r.fail("zstd block of reserved type 3")
		}
		if err != nil {
			return 0, 0, err
		}
		if last {
			break
		}
	}
	if fhd&0x04 != 0 {
		if _, err := r.take(4); err != nil {
			return 0, 0, err
		}
	}
	if nFCS > 0 {
		if fcs > blocks {
			return 0, 0, r.fail("frame declares %d decompressed bytes, its blocks hold at most %d", fcs, blocks)
		}
		blocks = fcs
	}
	if blocks > maxFrameContent {
		return 0, 0, r.fail("frame decompresses to over %d bytes", maxFrameContent)
	}
	return frameZstd, int(blocks), nil
}

// decode decompresses zbuf into raw. bound is an upper bound of the
// decompressed size, so nothing is allocated beyond what the frame can hold.
func (r *BinaryReader) decode(bound int) error {
	if cap(r.raw) < bound {
		r.raw = make([]byte, 0, bound)
	}
	out, err := r.dec.DecodeAll(r.zbuf, r.raw[:0])
	if err != nil {
		if errors.Is(err, zstd.ErrCRCMismatch) {
			return r.fail("checksum mismatch (zstd frame checksum)")
		}
		return r.fail("corrupt zstd frame: %v", err)
	}
	r.raw = out
	return nil
}

// checkFrame checks the frame just decoded against the seek table (index
// reader) or records it for the check at the seek table (stream reader).
func (r *BinaryReader) checkFrame() error {
	e := seekEntry{csize: uint32(len(r.zbuf)), dsize: uint32(len(r.raw)), check: uint32(xxhash.Sum64(r.raw))}
	if r.stop < 0 {
		r.seen = append(r.seen, e)
		return nil
	}
	if r.where < 0 {
		return nil
	}
	w := r.want[r.chunk-r.firstIndex()]
	if w.csize != e.csize || w.dsize != e.dsize {
		return r.fail("frame of %d bytes decompressing to %d, the seek table says %d and %d", e.csize, e.dsize, w.csize, w.dsize)
	}
	if w.check != e.check {
		return r.fail("checksum mismatch (seek table checksum)")
	}
	return nil
}

// readHeader reads and checks the header frame.
func (r *BinaryReader) readHeader() error {
	r.where = BinaryChunkHeader
	kind, bound, err := r.readFrame()
	if err != nil {
		return err
	}
	switch kind {
	case frameEOF:
		return r.fail("%w: empty input, not a binary trace", errTruncated)
	case frameSkippable:
		return r.fail("not a binary trace: starts with a skippable frame, not the header")
	}
	if err := r.decode(bound); err != nil {
		return err
	}
	if err := r.checkFrame(); err != nil {
		return err
	}
	raw := r.raw
	if len(raw) < len(headerMagic) || string(raw[:len(headerMagic)]) != headerMagic {
		return r.fail("bad magic %q, want %q: not a replay binary trace", raw[:min(len(raw), len(headerMagic))], headerMagic)
	}
	if len(raw) < headerFixedLen {
		return r.fail("%w: header record of %d bytes, its fixed part is %d", errTruncated, len(raw), headerFixedLen)
	}
	v := binary.LittleEndian.Uint16(raw[8:])
	if v < formatVersionOldest || v > formatVersion {
		return r.fail("unsupported format version %d (this reader reads versions %d to %d)", v, formatVersionOldest, formatVersion)
	}
	r.ver = v
	if f := binary.LittleEndian.Uint16(raw[10:]); f != 0 {
		return r.fail("unknown header flags 0x%04x", f)
	}
	if err := r.checkRecord(headerFixedLen); err != nil {
		return err
	}
	h, err := parseHeaderPayload(raw[headerFixedLen:])
	if err != nil {
		return r.fail("%v", err)
	}
	r.hdr = h
	return nil
}

// checkRecord checks the payload length and checksum of the record in raw.
func (r *BinaryReader) checkRecord(fixed int) error {
	raw := r.raw
	if n := binary.LittleEndian.Uint32(raw[fixed-12:]); int64(n) != int64(len(raw)-fixed) {
		return r.fail("payload length %d, but the frame holds %d payload bytes", n, len(raw)-fixed)
	}
	r.dig.Reset()
	_, _ = r.dig.Write(raw[:fixed-8])
	_, _ = r.dig.Write(raw[fixed:])
	if r.dig.Sum64() != binary.LittleEndian.Uint64(raw[fixed-8:]) {
		return r.fail("checksum mismatch")
	}
	return nil
}

// cursor reads a record payload; the first error sticks.
type cursor struct {
	p   []byte
	err error
}

func (c *cursor) uvarint(what string) uint64 {
	if c.err != nil {
		return 0
	}
	v, n := uvarint(c.p)
	if n <= 0 {
		c.err = fmt.Errorf("bad varint for %s", what)
		return 0
	}
	c.p = c.p[n:]
	return v
}

func (c *cursor) byte(what string) byte {
	if c.err != nil {
		return 0
	}
	if len(c.p) == 0 {
		c.err = fmt.Errorf("%w: payload ends before %s", errTruncated, what)
		return 0
	}
	b := c.p[0]
	c.p = c.p[1:]
	return b
}

func (c *cursor) bytes(n uint64, what string) []byte {
	if c.err != nil {
		return nil
	}
	if n > uint64(len(c.p)) {
		c.err = fmt.Errorf("%s of %d bytes, but %d bytes are left", what, n, len(c.p))
		return nil
	}
	b := c.p[:n]
	c.p = c.p[n:]
	return b
}

// count reads an item count and checks that the items, at least min bytes
// each, fit in what is left.
func (c *cursor) count(min int, what string) int {
	n := c.uvarint(what)
	if c.err == nil && n > uint64(len(c.p)/min) {
		c.err = fmt.Errorf("%d %s cannot fit in the %d bytes left", n, what, len(c.p))
	}
	if c.err != nil {
		return 0
	}
	return int(n)
}

func (c *cursor) space(what string) Space {
	s := Space{Kind: SpaceKind(c.byte(what))}
	if s.Kind == SpaceSurface || s.Kind == SpaceCounter {
		v := c.uvarint(what)
		if v > 0xFFFFFFFF {
			c.err = fmt.Errorf("%s: surface %d over 32 bits", what, v)
		}
		s.Surface = uint32(v)
	}
	if c.err == nil {
		if err := validSpace(s); err != nil {
			c.err = fmt.Errorf("%s: %v", what, err)
		}
	}
	return s
}

// region reads a region entry (appendRegionEntry).
func (c *cursor) region() Region {
	return Region{Space: c.space("region space"), Base: c.uvarint("region base"), Size: c.uvarint("region size")}
}

// init reads an init entry (appendInitEntry) into in. Its Data aliases the
// payload.
func (c *cursor) init(in *Init) error {
	in.Space = c.space("init space")
	in.Group = unzigzag(c.uvarint("init group"))
	in.Addr = c.uvarint("init address")
	in.Type = Type(c.byte("init type"))
	in.Data = c.bytes(c.uvarint("init data length"), "init data")
	if c.err != nil {
		return c.err
	}
	return validInit(in)
}

func parseHeaderPayload(p []byte) (*Header, error) {
	c := &cursor{p: p}
	h := &Header{}
	if n := c.count(3, "regions"); n > 0 {
		h.Regions = make([]Region, n)
		for i := range h.Regions {
			h.Regions[i] = c.region()
		}
	}
	if n := c.count(6, "inits"); n > 0 {
		h.Inits = make([]Init, n)
		for i := range h.Inits {
			in := &h.Inits[i]
			if err := c.init(in); err != nil {
				return nil, fmt.Errorf("init %d: %w", i, err)
			}
			if len(in.Data) > 0 {
				in.Data = slices.Clone(in.Data) // the payload buffer is reused
			} else {
				in.Data = nil
			}
		}
	}
	if n := c.count(3, "windows"); n > 0 {
		h.Windows = make([]Window, n)
		for i := range h.Windows {
			k := c.byte("window kind")
			h.Windows[i] = Window{Kind: windowKind(k), Base: c.uvarint("window base"), Size: c.uvarint("window size")}
			if c.err == nil && (h.Windows[i].Kind == "" || h.Windows[i].Size == 0) {
				return nil, fmt.Errorf("window %d: kind %d size %d", i, k, h.Windows[i].Size)
			}
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	if len(c.p) != 0 {
		return nil, fmt.Errorf("%d bytes after the header's last window", len(c.p))
	}
	return h, nil
}

// Next returns the next record (an instruction, or a directive with
// Inst.Dir set), or io.EOF after the last one. The Inst, its vectors and a
// directive's data are reused by the following call.
func (r *BinaryReader) Next() (*Inst, error) {
	if r.left == 0 {
		if err := r.advance(); err != nil {
			return nil, err
		}
	}
	if r.ver >= 2 && len(r.p) > 0 && r.p[0] == 0 {
		if err := r.decodeDirective(); err != nil {
			r.err = err
			return nil, err
		}
		return &r.dinst, nil
	}
	if err := r.decodeInst(); err != nil {
		r.err = err
		return nil, err
	}
	return &r.inst, nil
}

// decodeDirective decodes the directive record at r.p (code 0) into r.dinst.
func (r *BinaryReader) decodeDirective() error {
	c := &cursor{p: r.p[1:]}
	r.dir = Directive{}
	switch k := c.byte("directive kind"); {
	case c.err != nil:
	case k == dirKindInit:
		if err := c.init(&r.dinit); err != nil {
			return r.instErr("directive .init: %v", err)
		}
		r.dir.Init = &r.dinit
	case k == dirKindRegion:
		r.dreg = c.region()
		r.dir.Region = &r.dreg
	default:
		return r.instErr("unknown directive kind %d", k)
	}
	if c.err != nil {
		return r.instErr("directive: %v", c.err)
	}
	r.dinst = Inst{Seq: r.seq, Dir: &r.dir}
	r.p = c.p
	r.left--
	return nil
}

// advance ends the current chunk and loads the next one.
func (r *BinaryReader) advance() error {
	if r.err != nil {
		return r.err
	}
	if r.loaded {
		if err := r.endChunk(); err != nil {
			r.err = err
			return err
		}
	}
	if err := r.loadChunk(); err != nil {
		r.err = err
		return err
	}
	return nil
}

func (r *BinaryReader) endChunk() error {
	r.loaded = false
	if len(r.p) != 0 {
		return r.fail("%d bytes after the chunk's last record", len(r.p))
	}
	if r.laneOps != r.wantOps {
		return r.fail("the chunk declares %d lane ops, its instructions have %d", r.wantOps, r.laneOps)
	}
	r.chunk++
	return nil
}

// firstIndex is the first chunk an index reader reads.
func (r *BinaryReader) firstIndex() int { return r.stop - len(r.want) }

func (r *BinaryReader) loadChunk() error {
	r.where = r.chunk
	if r.stop >= 0 && r.chunk >= r.stop {
		return io.EOF
	}
	kind, bound, err := r.readFrame()
	if err != nil {
		return err
	}
	switch kind {
	case frameEOF:
		r.frameOff = r.off
		if r.stop >= 0 {
			return r.fail("%w: the file ends before chunk %d", errTruncated, r.chunk)
		}
		return r.fail("%w: the file ends without a seek table after %d chunks", errTruncated, r.chunk)
	case frameSkippable:
		if r.stop >= 0 {
			return r.fail("skippable frame where chunk %d was expected", r.chunk)
		}
		return r.readSeekTable()
	}
	if err := r.decode(bound); err != nil {
		return err
	}
	if err := r.checkFrame(); err != nil {
		return err
	}
	raw := r.raw
	if len(raw) >= len(headerMagic) && string(raw[:len(headerMagic)]) == headerMagic {
		return r.fail("a second header where chunk %d was expected", r.chunk)
	}
	if len(raw) < len(chunkMagic) || string(raw[:len(chunkMagic)]) != chunkMagic {
		return r.fail("bad chunk magic %q, want %q", raw[:min(len(raw), len(chunkMagic))], chunkMagic)
	}
	if len(raw) < chunkFixedLen {
		return r.fail("%w: chunk record of %d bytes, its fixed part is %d", errTruncated, len(raw), chunkFixedLen)
	}
	if err := r.checkRecord(chunkFixedLen); err != nil {
		return err
	}
	idx := binary.LittleEndian.Uint32(raw[4:])
	first := binary.LittleEndian.Uint64(raw[8:])
	count := binary.LittleEndian.Uint32(raw[16:])
	ops := binary.LittleEndian.Uint64(raw[20:])
	payload := raw[chunkFixedLen:]
	if int64(idx) != int64(r.chunk) {
		return r.fail("chunk %d where chunk %d was expected", idx, r.chunk)
	}
	if count == 0 || count > MaxChunkInsts {
		return r.fail("the chunk declares %d records, want 1..%d", count, MaxChunkInsts)
	}
	if uint64(count)*minInstBytes > uint64(len(payload)) {
		return r.fail("%d records cannot fit in a payload of %d bytes", count, len(payload))
	}
	if !r.first && first != r.seq {
		return r.fail("the chunk starts at seq %d, want %d", first, r.seq)
	}
	if first+uint64(count) < first {
		return r.fail("seq %d + %d instructions overflows", first, count)
	}
	r.first = false
	r.seq = first

	c := &cursor{p: payload}
	ns := c.count(2, "static texts")
	// Version 1 chunks hold instructions only, so at least one text; a
	// version 2 chunk of directives alone has none.
	if c.err == nil && (ns == 0 && r.ver < 2 || ns > int(count)) {
		return r.fail("static table of %d texts for %d records", ns, count)
	}
	r.statics = r.statics[:0]
	for i := 0; i < ns && c.err == nil; i++ {
		n := c.uvarint("static text length")
		if c.err == nil && n == 0 {
			return r.fail("static %d: empty text", i)
		}
		b := c.bytes(n, "static text")
		if c.err != nil {
			break
		}
		s := r.cache[string(b)]
		if s == nil {
			text := string(b)
			s, err = r.o.parse(text)
			if err != nil {
				return r.fail("static %d %q: %v", i, text, err)
			}
			if s == nil {
				return r.fail("static %d %q: the parser returned no Static", i, text)
			}
			if err := validStatic(s); err != nil {
				return r.fail("static %d: %v", i, err)
			}
			r.cache[text] = s
		}
		r.statics = append(r.statics, s)
	}
	if c.err != nil {
		return r.fail("static table: %v", c.err)
	}
	r.p, r.plen = c.p, len(c.p)
	r.left, r.count = int(count), int(count)
	r.laneOps, r.wantOps = 0, ops
	r.group, r.warp = 0, 0
	r.loaded = true
	return nil
}

// readSeekTable reads the seek table frame at the end of a stream, checks
// it against the frames read, and checks that nothing follows.
func (r *BinaryReader) readSeekTable() error {
	magic := binary.LittleEndian.Uint32(r.zbuf)
	if magic != seekTableFrameMagic {
		return r.fail("unexpected skippable frame (magic 0x%08x) where chunk %d was expected", magic, r.chunk)
	}
	r.where = BinaryChunkSeekTable
	b, err := r.take(4)
	if err != nil {
		return err
	}
	size := int64(binary.LittleEndian.Uint32(b))
	k := int64(len(r.seen))
	if size != k*seekEntryLen+seekFooterLen && size != k*8+seekFooterLen {
		return r.fail("seek table frame of %d bytes, but the file has %d frames", size, k)
	}
	if _, err := r.take(int(size)); err != nil {
		return err
	}
	entries, hasCheck, err := parseSeekTable(r.zbuf)
	if err != nil {
		return r.fail("%v", err)
	}
	if len(entries) != len(r.seen) {
		return r.fail("%d entries, but the file has %d frames", len(entries), len(r.seen))
	}
	for i, e := range entries {
		s := r.seen[i]
		if !hasCheck {
			s.check = 0
		}
		if e != s {
			return r.fail("entry %d (size %d, content %d, checksum 0x%08x) does not match frame %d (size %d, content %d, checksum 0x%08x)",
				i, e.csize, e.dsize, e.check, i, s.csize, s.dsize, s.check)
		}
	}
	r.frameOff = r.off
	if _, err := r.br.ReadByte(); err != io.EOF {
		if err != nil {
			return r.fail("%w", err)
		}
		return r.fail("trailing data after the seek table")
	}
	return io.EOF
}

func (r *BinaryReader) instErr(format string, args ...any) error {
	i := r.count - r.left
	return r.fail("record %d (seq %d) at payload byte %d: %s", i, r.seq, r.plen-len(r.p), fmt.Sprintf(format, args...))
}

// decodeInst decodes the next instruction of the chunk into r.inst.
func (r *BinaryReader) decodeInst() error {
	p := r.p
	var n int
	var si uint64
	if len(p) > 0 && p[0] < 0x80 {
		si, p = uint64(p[0]), p[1:]
	} else if si, n = uvarintLong(p); n > 0 {
		p = p[n:]
	} else {
		return r.instErr("bad static index")
	}
	if r.ver >= 2 {
		si-- // the record code; 0, a directive, does not come here
	}
	if si >= uint64(len(r.statics)) {
		return r.instErr("static index %d out of range (the table has %d)", si, len(r.statics))
	}
	s := r.statics[si]
	var dg uint64
	if len(p) > 0 && p[0] < 0x80 {
		dg, p = uint64(p[0]), p[1:]
	} else if dg, n = uvarintLong(p); n > 0 {
		p = p[n:]
	} else {
		return r.instErr("bad group")
	}
	var dw uint64
	if len(p) > 0 && p[0] < 0x80 {
		dw, p = uint64(p[0]), p[1:]
	} else if dw, n = uvarintLong(p); n > 0 {
		p = p[n:]
	} else {
		return r.instErr("bad warp")
	}
	var mask uint64
	if len(p) > 0 && p[0] < 0x80 {
		mask, p = uint64(p[0]), p[1:]
	} else if mask, n = uvarintLong(p); n > 0 {
		p = p[n:]
	} else {
		return r.instErr("bad mask")
	}
	if mask > 0xFFFFFFFF {
		return r.instErr("bad mask")
	}
	r.group += unzigzag(dg)
	r.warp += unzigzag(dw)

	in := &r.inst
	in.Seq, in.Line, in.Static = r.seq, 0, s
	in.Group, in.Warp, in.Mask = r.group, r.warp, uint32(mask)^s.ExecMask()
	nIn := len(s.Inputs)
	if cap(in.Vals) < nIn {
		in.Vals = make([]Vector, nIn)
	}
	in.Vals = in.Vals[:nIn]
	// Room for every list of this Static, low and high halves: at most
	// 2 * inputs * MaxLanes * 64 values (validStatic bounds Elems).
	need := 0
	for j := range s.Inputs {
		need += 2 * s.Inputs[j].Count(s.ExecSize)
	}
	if cap(r.lanes) < need {
		r.lanes = make([]uint64, need)
	}
	at := 0
	for j := range s.Inputs {
		wide := s.Inputs[j].Bits == 128
		lanes := s.Inputs[j].Count(s.ExecSize)
		lo0, hi0 := at, at+lanes
		at += 2 * lanes
		if len(p) == 0 {
			return r.instErr("payload ends in input %s", s.Inputs[j].Name)
		}
		kind := p[0]
		p = p[1:]
		v := &in.Vals[j]
		*v = Vector{}
		switch kind {
		case vecKindBroadcast:
			v.Kind = VecBroadcast
			if len(p) > 0 && p[0] < 0x80 {
				v.Base, p = uint64(p[0]), p[1:]
			} else if v.Base, n = uvarintLong(p); n > 0 {
				p = p[n:]
			} else {
				return r.instErr("input %s: bad value", s.Inputs[j].Name)
			}
		case vecKindStride:
			v.Kind = VecStride
			if len(p) > 0 && p[0] < 0x80 {
				v.Base, p = uint64(p[0]), p[1:]
			} else if v.Base, n = uvarintLong(p); n > 0 {
				p = p[n:]
			} else {
				return r.instErr("input %s: bad base", s.Inputs[j].Name)
			}
			var d uint64
			if len(p) > 0 && p[0] < 0x80 {
				d, p = uint64(p[0]), p[1:]
			} else if d, n = uvarintLong(p); n > 0 {
				p = p[n:]
			} else {
				return r.instErr("input %s: bad stride", s.Inputs[j].Name)
			}
			v.Stride = uint64(unzigzag(d))
		case vecKindList, vecKindList128:
			if kind == vecKindList128 && !wide {
				return r.instErr("input %s: vector kind %d (list with high halves) on a %d-bit input", s.Inputs[j].Name, kind, s.Inputs[j].Bits)
			}
			v.Kind = VecList
			lo := r.lanes[lo0 : lo0+lanes : lo0+lanes]
			if p, n = readDeltas(p, lo); n < 0 {
				return r.instErr("input %s: list ends after %d of %d lanes", s.Inputs[j].Name, -n-1, lanes)
			}
			v.List = lo
			if kind == vecKindList128 {
				hi := r.lanes[hi0 : hi0+lanes : hi0+lanes]
				if p, n = readDeltas(p, hi); n < 0 {
					return r.instErr("input %s: high list ends after %d of %d lanes", s.Inputs[j].Name, -n-1, lanes)
				}
				v.ListHi = hi
				continue
			}
		default:
			return r.instErr("input %s: unknown vector kind %d", s.Inputs[j].Name, kind)
		}
		if wide {
			if len(p) > 0 && p[0] < 0x80 {
				v.BaseHi, p = uint64(p[0]), p[1:]
			} else if v.BaseHi, n = uvarintLong(p); n > 0 {
				p = p[n:]
			} else {
				return r.instErr("input %s: bad high half", s.Inputs[j].Name)
			}
		}
	}
	r.p = p
	r.left--
	r.seq++
	r.laneOps += uint64(bits.OnesCount32(in.Active())) * uint64(max(s.Elems, 1))
	return nil
}

// readDeltas fills vs from zigzag deltas. On a bad varint it returns
// n = -(lanes read)-1.
func readDeltas(p []byte, vs []uint64) ([]byte, int) {
	var prev uint64
	for i := range vs {
		var d uint64
		if len(p) > 0 && p[0] < 0x80 {
			d, p = uint64(p[0]), p[1:]
		} else if x, n := uvarintLong(p); n > 0 {
			d, p = x, p[n:]
		} else {
			return p, -i - 1
		}
		prev += uint64(unzigzag(d))
		vs[i] = prev
	}
	return p, 0
}
