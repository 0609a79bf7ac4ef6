package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"slices"
)

type readerOptions struct {
	parse     func(string) (*Static, error)
	name      string
	readAhead int // frames ahead of the consumer; 0: the default
	decoders  int // decompressing goroutines; 0: the default
	progress  func(int64)
}

// ReaderOption configures a BinaryReader (and a BinaryIndex, for the
// readers it makes).
type ReaderOption func(*readerOptions) error

// WithStaticParser sets the function that turns a stored instruction text
// into a Static. It runs once per distinct text a reader meets, on the
// goroutine that calls Next. Default ParseStatic.
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

// maxReadAhead bounds WithReadAhead and WithDecoders: a reader of hostile
// input then holds at most 17 frames of at most 64 MiB each.
const maxReadAhead = 16

// WithReadAhead sets how many chunks a reader reads and decompresses ahead
// of the one whose records Next hands out, on other goroutines, 1 to 16:
// the reader then holds at most n+1 chunks (each at most 64 MiB
// decompressed, 1 MiB as the writer cuts them). 0 means the default: one
// more than the decompressors (WithDecoders), so each of them has a chunk
// to work on while a decompressed one waits.
func WithReadAhead(n int) ReaderOption {
	return func(o *readerOptions) error {
		if n < 0 || n > maxReadAhead {
			return fmt.Errorf("trace: read-ahead of %d chunks out of 0..%d", n, maxReadAhead)
		}
		o.readAhead = n
		return nil
	}
}

// WithDecoders sets how many goroutines decompress chunks at once, 1 to 16,
// at most the read-ahead. A streaming reader (NewBinaryReader) reads its input on
// one goroutine whatever this says; a reader from a BinaryIndex also reads
// the file on the decompressors. 0 means the default: 1 for a streaming
// reader; for an index reader, half of GOMAXPROCS, 1 to 4.
func WithDecoders(n int) ReaderOption {
	return func(o *readerOptions) error {
		if n < 0 || n > maxReadAhead {
			return fmt.Errorf("trace: %d decoders out of 0..%d", n, maxReadAhead)
		}
		o.decoders = n
		return nil
	}
}

// WithProgress sets a function that Next calls, on its goroutine, each
// time it takes up a chunk, with the offset in the file of the chunk
// frame's end: how much of the file has been handed on so far.
func WithProgress(f func(off int64)) ReaderOption {
	return func(o *readerOptions) error {
		o.progress = f
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

// pipelineSize returns the frame buffers and the decompressors of a
// reader whose default is def decompressors.
func (o *readerOptions) pipelineSize(def int) (bufs, decoders int) {
	decoders = o.decoders
	if decoders == 0 {
		decoders = def
	}
	ahead := o.readAhead
	if ahead == 0 {
		ahead = decoders + 1
	}
	return ahead + 1, min(decoders, ahead)
}

// BinaryReader reads the binary trace form of docs/FORMAT.md as a Source.
// Chunks are read and decompressed ahead of Next on other goroutines
// (WithReadAhead, WithDecoders) and handed to Next in trace order; Next
// decodes their records. Errors are *BinaryError, reported in trace order
// and sticky.
//
// The goroutines end when Next returns io.EOF or an error, and on Close.
// A reader dropped without either is stopped when the garbage collector
// finds it unreachable; call Close to stop it at once.
type BinaryReader struct {
	o     readerOptions
	hdr   *Header
	split *SplitHeader // a split file's header; nil for any other trace
	// A split file's block being read (decodeBlock): its instructions,
	// the next one Next returns (blkAt), the statics of its instructions,
	// and the view NextBlock returns of a block Next began.
	blk     Block
	blkView Block
	blkAt   int
	blkSI   []*staticInfo
	// blkArena is the capacity of the largest list backing a block got.
	blkArena int
	ivals    []Vector // NextInto's copy of a block instruction's vectors
	masked   []uint64 // a masked list's values (split files)
	ver      uint16   // the format version of the header
	bias     uint64   // what to take from a record code for the static index: 1 from version 2 on
	simd     bool     // fixed-width lists decode in assembly (hasFixedSIMD)

	// Where chunks come from: src until the first Next starts the pipeline.
	src          frameSource
	bufs, decs   int
	waitDispatch bool
	pipe         *pipeline
	cur          *frameBuf // the chunk being decoded, the consumer's

	where    int   // the chunk (or BinaryChunkHeader/SeekTable) being read
	frameOff int64 // offset of its frame
	chunk    int   // index of the current or next chunk
	stop     int   // index reader: the chunk to stop at; -1 to read to the seek table
	seen     []seekEntry
	seq      uint64 // seq of the next instruction
	first    bool   // no chunk read yet (an index reader takes its seq from it)
	cache    map[string]*staticInfo

	// The current chunk.
	loaded bool
	// The chunk's record bytes, and how many of them are decoded: an
	// offset rather than the rest as a slice, which would be a pointer
	// stored per record, with a write barrier while the collector marks.
	recs    []byte
	at      int
	left    int // records not yet decoded
	count   int
	laneOps uint64
	wantOps uint64
	group   int64
	warp    int64
	statics []*staticInfo

	inst  Inst
	dinst Inst // a directive record, with its storage
	dir   Directive
	dinit Init
	dreg  Region
	dclu  Cluster
	dfold Fold
	lanes []uint64 // list backing, for the widest static met
	// listEnd is how much of the list backing the last instruction used:
	// its lists lie packed in lanes[:listEnd].
	listEnd int
	err     error
	// The last instruction record of the chunk, when it had no list
	// (repeat): its bytes recs[repAt:repAt+repN] (repN 0 for none), its
	// group and warp deltas and its lane-ops. A record of the same bytes
	// is the same instruction again, its deltas applied once more.
	repAt, repN  int
	repDg, repDw int64
	repOps       uint64
	repCode      uint64 // its static's index in statics
	// maskReps counts the records decoded as the one before under
	// another mask (tests).
	maskReps int
	// lastRep: the last record returned was an instruction whose bytes
	// are recs[repAt:repAt+repN] (Repeats may go on from it), and not
	// one that took the record before's under another mask (an append
	// queue's, after which the next is another mask again).
	lastRep bool
	// lastMask: the last record returned took the record before's under
	// another mask; Repeats may go on from it with masks of their own
	// (maskRepeats, into repMasks).
	lastMask bool
	repMasks []uint32
	// warps keeps each warp's last record with a list (warpRecs); made
	// on first use. noWarpRecs turns it off (tests).
	warps      *warpRecs
	noWarpRecs bool
	// noFastVecs sends every vector through decodeVector, fastVecs
	// counts those decodeInst decoded itself (tests).
	noFastVecs bool
	fastVecs   int
}

// staticInfo is what decoding needs of a Static, worked out once per
// distinct text.
type staticInfo struct {
	s       *Static
	exec    uint32 // s.ExecMask()
	elems   uint64 // lane ops per active lane: max(Elems, 1)
	pred    int
	predNeg bool
	lanes   int // list backing: the most its lists can use, high halves included
	inputs  []inputInfo
	// zero is the vectors of a block's instruction without a lane in the
	// partition (mask 0), which has none in the file: a zero broadcast
	// an input, shared, its capacity its length.
	zero []Vector
}

type inputInfo struct {
	n    int  // values of a list: Input.Count
	wide bool // 128 bits
}

func newStaticInfo(s *Static) *staticInfo {
	si := &staticInfo{s: s, exec: s.ExecMask(), elems: uint64(max(s.Elems, 1)), pred: s.Pred, predNeg: s.PredNeg}
	for j := range s.Inputs {
		n := s.Inputs[j].Count(s.ExecSize)
		si.inputs = append(si.inputs, inputInfo{n: n, wide: s.Inputs[j].Bits == 128})
		si.lanes += 2 * n // validStatic bounds n
	}
	si.zero = make([]Vector, len(s.Inputs))
	return si
}

func newBinaryReader(o readerOptions) *BinaryReader {
	return &BinaryReader{o: o, stop: -1, cache: map[string]*staticInfo{}, simd: hasFixedSIMD()}
}

// NewBinaryReader reads and checks the header frame of a binary trace and
// returns a reader positioned at the first instruction. It reads r in
// order and never seeks: from the first Next on, one goroutine reads
// frames ahead and WithDecoders (default 1) decompress them. For random
// access, and parallel decompression of a file, see OpenBinaryIndex.
func NewBinaryReader(r io.Reader, opts ...ReaderOption) (*BinaryReader, error) {
	o, err := newReaderOptions(opts)
	if err != nil {
		return nil, err
	}
	in := &streamIn{br: bufio.NewReaderSize(r, 64<<10)}
	fb := &frameBuf{chunk: BinaryChunkHeader}
	fail := func(err error) error { return o.wrap(BinaryChunkHeader, fb.off, err) }
	kind, bound, err := in.readFrame(fb, true)
	switch {
	case err != nil:
		return nil, fail(err)
	case kind == frameEOF:
		return nil, o.errAt(BinaryChunkHeader, fb.off, "%w: empty input, not a binary trace", errTruncated)
	case kind == frameSkippable:
		return nil, o.errAt(BinaryChunkHeader, fb.off, "not a binary trace: starts with a skippable frame, not the header")
	}
	fb.bound = bound
	w := workerPool.Get().(*worker)
	defer workerPool.Put(w)
	if err := w.decompress(fb); err != nil {
		return nil, fail(err)
	}
	h, v, split, err := w.parseHeaderRecord(fb.raw)
	if err != nil {
		return nil, fail(err)
	}
	br := newBinaryReader(o)
	br.hdr, br.split = h, split
	br.setVersion(v)
	br.seen = append(br.seen, fb.entry)
	so := o // the goroutines must not hold br, so that a dropped reader stops
	br.src = &streamSource{o: &so, in: in, frames: 1}
	br.bufs, br.decs = o.pipelineSize(1)
	return br, nil
}

// Header returns the regions and initial memory the trace declares.
func (r *BinaryReader) Header() *Header { return r.hdr }

// Caps is CapArena|CapRepeat: a binary reader decodes lists into its
// caller's arena and hands over repeated records at once; and, reading a
// split file, CapBlock: its instructions come a block at a time.
func (r *BinaryReader) Caps() SourceCaps {
	if r.split != nil {
		return CapArena | CapRepeat | CapBlock
	}
	return CapArena | CapRepeat
}

func (r *BinaryReader) setVersion(v uint16) {
	r.ver, r.bias = v, 0
	if v >= 2 {
		r.bias = 1 // record code 0 is a directive
	}
}

func (r *BinaryReader) fail(format string, args ...any) error {
	return r.o.errAt(r.where, r.frameOff, format, args...)
}

// Close stops the reader's goroutines and waits for them, except for a
// streaming reader's input goroutine while it is blocked in a Read of the
// io.Reader: that one returns when the Read does, without reading more.
// After Close, Next returns an error. Close must not run concurrently with
// Next; it may be called more than once. It does not close the input.
func (r *BinaryReader) Close() error {
	if r.err == nil {
		r.err = r.fail("%w", errClosed)
	}
	if p := r.pipe; p != nil {
		p.stop()
		p.wg.Wait()
		p.recycle(r.cur)
		r.pipe, r.cur, r.recs, r.at = nil, nil, nil, 0
	}
	r.src = nil
	return nil
}

// start runs the pipeline from the first chunk.
func (r *BinaryReader) start() {
	r.pipe = startPipeline(r.src, r.bufs, r.decs, r.waitDispatch)
	r.src = nil
	runtime.AddCleanup(r, (*pipeline).stop, r.pipe)
}

// setErr makes err sticky and stops the goroutines: nothing after it is
// handed out.
func (r *BinaryReader) setErr(err error) error {
	r.err = err
	if p := r.pipe; p != nil {
		p.stop()
		if err == io.EOF {
			// Every frame was taken: nothing works on a buffer any more.
			p.recycle(r.cur)
			r.pipe, r.cur, r.recs, r.at = nil, nil, nil, 0
		}
	}
	return err
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

func parseHeaderPayload(p []byte, split bool) (*Header, *SplitHeader, error) {
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
				return nil, nil, fmt.Errorf("init %d: %w", i, err)
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
				return nil, nil, fmt.Errorf("window %d: kind %d size %d", i, k, h.Windows[i].Size)
			}
		}
	}
	if c.err != nil {
		return nil, nil, c.err
	}
	var sh *SplitHeader
	if split {
		var err error
		if sh, err = c.splitSection(); err != nil {
			return nil, nil, err
		}
	}
	if len(c.p) != 0 {
		return nil, nil, fmt.Errorf("%d bytes after the header's last window", len(c.p))
	}
	return h, sh, nil
}

// Next returns the next record (an instruction, or a directive with
// Inst.Dir set), or io.EOF after the last one. The Inst, its vectors and a
// directive's data are reused by the following call.
func (r *BinaryReader) Next() (*Inst, error) {
	in, _, err := r.next(nil, false)
	return in, err
}

// NextInto is Next with the instruction's list vectors decoded into
// arena[len(arena):], which it returns grown by what they use; the
// instruction's lists point there, and stay as long as the caller keeps
// the arena, where Next's last until the next call; but the lists of a
// record decoded from its warp's entry (Inst.VecID not 0: warpRecs) are
// the entry's, and last as Next's do: a caller that keeps them copies them.
// (The Inst and its Vals slice are still reused by the next call.) A replay decodes a
// batch's lists this way straight into the batch, rather than copying
// them. When arena has no room, NextInto grows it as append does; lists
// decoded before stay in the old array.
func (r *BinaryReader) NextInto(arena []uint64) (*Inst, []uint64, error) {
	return r.next(arena, true)
}

func (r *BinaryReader) next(arena []uint64, into bool) (*Inst, []uint64, error) {
	if r.inst.RepeatMasks != nil {
		r.inst.RepeatMasks = nil // Repeats' alone
	}
	if r.blkAt < len(r.blk.Insts) && r.err == nil {
		in, arena := r.nextInBlock(arena, into)
		return in, arena, nil
	}
	if r.left == 0 || r.err != nil {
		if err := r.advance(); err != nil {
			return nil, arena, err
		}
	}
	if r.split != nil {
		switch {
		case r.at < len(r.recs) && r.recs[r.at] != 0:
			return nil, arena, r.setErr(r.instErr("an instruction record outside a block in a split file"))
		case r.at+1 < len(r.recs) && r.recs[r.at+1] == dirKindBlock:
			if err := r.decodeBlock(); err != nil {
				return nil, arena, r.setErr(err)
			}
			in, arena := r.nextInBlock(arena, into)
			return in, arena, nil
		}
	}
	if r.ver >= 2 && r.at < len(r.recs) && r.recs[r.at] == 0 {
		if err := r.decodeDirective(); err != nil {
			return nil, arena, r.setErr(err)
		}
		return &r.dinst, arena, nil
	}
	if !into {
		if err := r.decodeInst(r.lanes); err != nil {
			return nil, arena, r.setErr(err)
		}
		return &r.inst, arena, nil
	}
	// The backing of this instruction's lists is the arena's spare room,
	// room enough for the widest static (advance made r.lanes that long).
	n := len(arena)
	if cap(arena)-n < len(r.lanes) {
		// Doubled, not by append's quarter for a large slice: an arena
		// that grows from empty to a batch's 512 KiB copies its
		// contents about once in all, not four times, into fewer new
		// pages (the first batch of a replay, before the engine knows
		// the size to ask for).
		arena = slices.Grow(arena, max(len(r.lanes), n))
	}
	err := r.decodeInst(arena[n : n+len(r.lanes) : n+len(r.lanes)])
	if err != nil {
		return nil, arena[:n], r.setErr(err)
	}
	return &r.inst, arena[:n+r.listEnd], nil
}

// decodeDirective decodes the directive record at r.recs[r.at:] (code 0)
// into r.dinst.
func (r *BinaryReader) decodeDirective() error {
	c := &cursor{p: r.recs[r.at+1:]}
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
	case k == dirKindCluster:
		g, id := unzigzag(c.uvarint("cluster group")), c.uvarint("cluster")
		if c.err == nil && (g < 0 || g > 1<<40 || id > 1<<40) {
			return r.instErr("directive .cluster %d of group %d: both must be from 0 to 2^40", id, g)
		}
		r.dclu = Cluster{Group: g, ID: int64(id)}
		r.dir.Cluster = &r.dclu
	case k == dirKindFold && r.split != nil && r.split.Combined:
		if err := r.decodeFold(c); err != nil {
			return err
		}
		r.dir.Fold = &r.dfold
	default:
		return r.instErr("unknown directive kind %d", k)
	}
	if c.err != nil {
		return r.instErr("directive: %v", c.err)
	}
	r.dinst = Inst{Seq: r.seq, Dir: &r.dir}
	r.at = len(r.recs) - len(c.p)
	r.left--
	r.lastRep, r.lastMask = false, false
	return nil
}

// advance ends the current chunk and loads the next one.
func (r *BinaryReader) advance() error {
	if r.err != nil {
		return r.err
	}
	if r.loaded {
		if err := r.endChunk(); err != nil {
			return r.setErr(err)
		}
	}
	if err := r.loadChunk(); err != nil {
		return r.setErr(err)
	}
	return nil
}

func (r *BinaryReader) endChunk() error {
	r.loaded = false
	if r.at != len(r.recs) {
		return r.fail("%d bytes after the chunk's last record", len(r.recs)-r.at)
	}
	if r.laneOps != r.wantOps {
		return r.fail("the chunk declares %d lane ops, its instructions have %d", r.wantOps, r.laneOps)
	}
	r.chunk++
	return nil
}

// loadChunk takes the next chunk from the pipeline and reads its static
// table.
func (r *BinaryReader) loadChunk() error {
	r.where = r.chunk
	if r.stop >= 0 && r.chunk >= r.stop {
		return io.EOF
	}
	if r.pipe == nil {
		if r.src == nil {
			return r.fail("%w", errClosed)
		}
		r.start()
	}
	if r.cur != nil {
		r.pipe.release(r.cur)
		r.cur = nil
	}
	fb := r.pipe.next()
	if fb == nil {
		return r.fail("%w", errClosed)
	}
	r.cur = fb
	r.where, r.frameOff = fb.chunk, fb.off
	if fb.err != nil {
		return fb.err
	}
	if fb.chunk == BinaryChunkSeekTable {
		return r.endStream(fb)
	}
	if r.stop < 0 {
		r.seen = append(r.seen, fb.entry)
	}
	return r.beginChunk(fb)
}

// beginChunk checks the seq of the chunk in fb, checked as far as a worker
// can, and reads its static table.
func (r *BinaryReader) beginChunk(fb *frameBuf) error {
	first, count := fb.first, fb.count
	if !r.first && first != r.seq && (r.split == nil || first < r.seq) {
		if r.split != nil {
			return r.fail("the chunk starts at seq %d, before seq %d", first, r.seq)
		}
		return r.fail("the chunk starts at seq %d, want %d", first, r.seq)
	}
	if first+uint64(count) < first {
		return r.fail("seq %d + %d instructions overflows", first, count)
	}
	r.first = false
	r.seq = first

	c := &cursor{p: fb.payload}
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
		si := r.cache[string(b)]
		if si == nil {
			text := string(b)
			s, err := r.o.parse(text)
			if err != nil {
				return r.fail("static %d %q: %v", i, text, err)
			}
			if s == nil {
				return r.fail("static %d %q: the parser returned no Static", i, text)
			}
			if err := validStatic(s); err != nil {
				return r.fail("static %d: %v", i, err)
			}
			si = newStaticInfo(s)
			r.cache[text] = si
			if len(r.lanes) < si.lanes {
				r.lanes = make([]uint64, si.lanes)
			}
		}
		r.statics = append(r.statics, si)
	}
	if c.err != nil {
		return r.fail("static table: %v", c.err)
	}
	r.recs, r.at, r.repN, r.lastRep, r.lastMask = c.p, 0, 0, false, false
	if r.warps != nil {
		r.warps.newChunk()
	}
	r.left, r.count = int(count), int(count)
	r.laneOps, r.wantOps = 0, fb.laneOps
	r.group, r.warp = 0, 0
	r.loaded = true
	if r.o.progress != nil {
		r.o.progress(fb.off + int64(len(fb.zbuf)))
	}
	return nil
}

// endStream checks a stream's seek table, read by the dispatcher, against
// the frames taken, and reports what follows it.
func (r *BinaryReader) endStream(fb *frameBuf) error {
	if len(fb.table) != len(r.seen) {
		return r.fail("%d entries, but the file has %d frames", len(fb.table), len(r.seen))
	}
	for i, e := range fb.table {
		s := r.seen[i]
		if !fb.hasCheck {
			s.check = 0
		}
		if e != s {
			return r.fail("entry %d (size %d, content %d, checksum 0x%08x) does not match frame %d (size %d, content %d, checksum 0x%08x)",
				i, e.csize, e.dsize, e.check, i, s.csize, s.dsize, s.check)
		}
	}
	if fb.trailing != nil {
		return fb.trailing
	}
	return io.EOF
}

func (r *BinaryReader) instErr(format string, args ...any) error {
	i := r.count - r.left
	return r.fail("record %d (seq %d) at payload byte %d: %s", i, r.seq, r.at, fmt.Sprintf(format, args...))
}

// inputErr is instErr about input j of static si.
func (r *BinaryReader) inputErr(si *staticInfo, j int, format string, args ...any) error {
	return r.instErr("input %s: %s", si.s.Inputs[j].Name, fmt.Sprintf(format, args...))
}

// decodeInst decodes the next instruction of the chunk into r.inst, its
// lists into lanes (room for the widest static's). The one-byte case of
// each varint is inlined by hand. It stores a pointer into r.inst only
// where one changes (its Static, a list): while the collector marks, each
// pointer stored takes a write barrier.
func (r *BinaryReader) decodeInst(lanes []uint64) error {
	p := r.recs[r.at:]
	if n := r.repN; n > 0 && len(p) >= n && r.split == nil {
		rec := r.recs[r.repAt : r.repAt+n]
		if string(p[:n]) == string(rec) {
			r.repeat()
			return nil
		}
		// The same instruction at another group or warp (a hot counter's
		// first warp of a group): the last record's bytes but for its
		// group and warp deltas, each of one byte in both. The code is
		// one byte too, so the rest, mask and vectors, lies at the same
		// place in both.
		if n >= 4 && rec[0]|rec[1]|rec[2] < 0x80 && p[1]|p[2] < 0x80 && p[0] == rec[0] {
			if string(p[3:n]) == string(rec[3:]) {
				r.repAt, r.repDg, r.repDw = r.at, unzigzag(uint64(p[1])), unzigzag(uint64(p[2]))
				r.repeat()
				return nil
			}
			// The same instruction under another mask too (an append
			// queue's warps, whose lanes differ): the vectors after the
			// masks the same bytes. The masks' varints may differ in
			// length (a 16-bit mask takes 2 or 3 bytes, at random in an
			// append queue's): this record is then m bytes, not n, and
			// the one the next is compared with.
			mp, k := uvarint(p[3:])
			if _, kr := uvarint(rec[3:]); k > 0 && kr > 0 && mp <= 0xFFFFFFFF {
				if m := n - kr + k; m <= len(p) && string(p[3+k:m]) == string(rec[3+kr:]) {
					si := r.statics[r.repCode]
					in := &r.inst
					in.Mask = uint32(mp) ^ si.exec
					r.repOps = laneOpsOf(si, in)
					r.repAt, r.repN, r.repDg, r.repDw = r.at, m, unzigzag(uint64(p[1])), unzigzag(uint64(p[2]))
					r.maskReps++
					r.repeat()
					// The next record is most likely another mask
					// again, not this one's bytes: Repeats takes the
					// records after it under their masks.
					r.lastRep, r.lastMask = false, true
					return nil
				}
			}
		}
	}
	start := r.at
	var code, dg, dw, mask uint64
	if len(p) >= 4 && (p[0]|p[1]|p[2]|p[3]) < 0x80 {
		// The usual case: code, group and warp deltas and mask, one
		// byte each.
		code, dg, dw, mask = uint64(p[0]), uint64(p[1]), uint64(p[2]), uint64(p[3])
		p = p[4:]
	} else if len(p) >= 4 && (p[0]|p[1]|p[2]) < 0x80 {
		// A partial mask (a spinlock's retries, an append queue's lanes,
		// vISA's SIMD16): only the mask takes more than a byte.
		code, dg, dw = uint64(p[0]), uint64(p[1]), uint64(p[2])
		var ok bool
		if mask, p, ok = readUvarint(p[3:]); !ok {
			return r.instErr("bad mask")
		}
	} else {
		var err error
		if p, code, dg, dw, mask, err = r.decodeHead(p); err != nil {
			return err
		}
	}
	code -= r.bias // the record code; 0, a directive, does not come here
	if code >= uint64(len(r.statics)) {
		return r.instErr("static index %d out of range (the table has %d)", code, len(r.statics))
	}
	si := r.statics[code]
	if mask > 0xFFFFFFFF {
		return r.instErr("bad mask")
	}
	r.group += unzigzag(dg)
	r.warp += unzigzag(dw)

	in := &r.inst
	if in.Static != si.s {
		in.Static = si.s
	}
	in.Seq, in.Group, in.Warp, in.Mask = r.seq, r.group, r.warp, uint32(mask)^si.exec
	nIn := len(si.inputs)
	if cap(in.Vals) < nIn {
		in.Vals = make([]Vector, nIn, max(nIn, 4))
	}
	in.Vals = in.Vals[:nIn] // the same backing: no pointer stored
	vals := in.Vals
	lanes = lanes[:si.lanes] // loadChunk made room
	at := 0
	listed := false // lists taken from an entry (which lanes does not hold)
	wr := r.warpRecs()
	var e *warpRec
	if wr != nil {
		e = wr.entry(r.group, r.warp, code)
		if n := e.n; n > 0 && e.code == code && e.gen == wr.gen && n <= len(p) && string(p[:n]) == string(r.recs[e.at:e.at+n]) {
			// The vectors' bytes of this warp's last record with a list:
			// the same vectors.
			e.take(vals)
			in.VecID = e.id
			listed = true
			p = p[n:]
			wr.hits++
			e = nil
		}
	}
	if e != nil || wr == nil {
		in.VecID = 0
		vat := len(r.recs) - len(p)
		var starts [warpRecInputs]int32 // where each vector's lists start
		for j := range si.inputs {
			if j < warpRecInputs {
				starts[j] = int32(at)
			}
			// The two kinds of a histogram's and most scattered
			// traces' inputs, a fixed-width list and a broadcast of
			// one byte, without decodeVector's calls; anything else,
			// and any error, takes decodeVector.
			if len(p) > 1 && !si.inputs[j].wide && !r.noFastVecs {
				switch p[0] {
				case vecKindFixed:
					if n := si.inputs[j].n; r.ver >= 2 && at+n <= len(lanes) {
						lo := lanes[at : at+n : at+n]
						if q, ok := readFixed(p[1:], lo, r.simd); ok {
							v := &vals[j]
							v.Kind, v.Base, v.Stride, v.BaseHi = VecList, 0, 0, 0
							v.List = lo
							if v.ListHi != nil {
								v.ListHi = nil
							}
							p, at = q, at+n
							r.fastVecs++
							continue
						}
					}
				case vecKindBroadcast:
					if p[1] < 0x80 {
						vals[j].setScalar(VecBroadcast, uint64(p[1]), 0)
						p = p[2:]
						r.fastVecs++
						continue
					}
				}
			}
			var err error
			if p, at, err = r.decodeVector(si, j, p, &vals[j], lanes, at); err != nil {
				return err
			}
		}
		if e != nil && at > 0 {
			e.keep(wr.gen, code, vat, len(r.recs)-len(p)-vat, vals, lanes[:at], &starts)
			if e.n > 0 {
				wr.ids++
				e.id = wr.ids
				in.VecID = e.id
			}
		}
	}
	r.at = len(r.recs) - len(p)
	r.listEnd = at
	r.left--
	r.seq++
	ops := laneOpsOf(si, in)
	r.laneOps += ops
	r.repN = 0
	if at == 0 && !listed { // no list: the record's bytes are the whole instruction
		r.repAt, r.repN, r.repDg, r.repDw, r.repOps, r.repCode = start, r.at-start, unzigzag(dg), unzigzag(dw), ops, code
	}
	r.lastRep, r.lastMask = r.repN > 0, false
	return nil
}

// warpRecs keeps, per warp (by its group and warp), the vectors of
// its last record that had a list: where their bytes lie in the chunk, and
// what they decoded to. A warp that retries an instruction on the same
// lanes (a spinlock's CAS until it gets the lock) writes the same vector
// bytes again, a few records on, with other warps' records between: a
// record whose vector bytes are its warp's entry's, in the same chunk and
// of the same static, decodes to the entry's vectors, which are copied
// rather than decoded (its lists' deltas above all). Decoding reads
// nothing but those bytes, so the result is the same. Each entry kept
// takes an id of its own, the Inst.VecID of the record that made it and of
// those decoded from it: the engine then knows them the same vectors
// without comparing them.
//
// A warp keeps its last record of each of two statics (a spinlock's CAS
// and the exchange that releases its lock, in turn: with one entry a
// warp, each replaced the other's and the first CAS after a release was
// decoded again, as was every release).
//
// A chunk whose first warpProbe records with lists meet their entry less
// than once in warpHitShare keeps no more entries (a uniform trace's
// random lists never repeat): the copies into entries would cost more
// than they save.
type warpRecs struct {
	gen       uint64 // the chunk's: an entry of another chunk is stale
	tries     int    // records with lists this chunk
	hits      int    // of them, decoded from their entry (tests)
	off       bool   // this chunk keeps no entries
	slot      [warpRecSlots]warpSet
	totalHits int    // over the replay (tests)
	ids       uint64 // the last entry's id (Inst.VecID): ids are the reader's, never reused
}

// warpSet is a warp's entries: its last records of two statics, and which
// of them it met or kept last.
type warpSet struct {
	way  [2]warpRec
	last uint8
}

const (
	warpRecBits  = 6
	warpRecSlots = 1 << warpRecBits
	// warpRecLanes is the most list values an entry keeps: a list of a
	// full warp and its high halves.
	warpRecLanes = 2 * MaxLanes
	// warpRecInputs is the most inputs an entry keeps.
	warpRecInputs = 4
	warpProbe     = 1024
	warpHitShare  = 8
)

type warpRec struct {
	gen     uint64
	code    uint64
	at, n   int    // the vectors' bytes: recs[at : at+n]; n 0: empty
	id      uint64 // the vectors' Inst.VecID
	nIn     int
	listEnd int
	vecs    [warpRecInputs]recVec
	lanes   [warpRecLanes]uint64
}

// recVec is a decoded Vector of an entry, its lists as ranges of the
// entry's lanes.
type recVec struct {
	Base, Stride, BaseHi uint64
	lo, nLo, nHi         int32 // List = lanes[lo:lo+nLo], ListHi = the nHi after
	Kind                 VecKind
}

// warpRecs returns r's entries, made on first use, or nil when they are
// off: a split file (whose records are a partition's), tests, or a chunk
// that met too few.
func (r *BinaryReader) warpRecs() *warpRecs {
	if r.split != nil || r.noWarpRecs {
		return nil
	}
	wr := r.warps
	if wr == nil {
		wr = new(warpRecs)
		wr.gen = 1
		r.warps = wr
	}
	if wr.off {
		return nil
	}
	wr.tries++
	if wr.tries == warpProbe && wr.hits < warpProbe/warpHitShare {
		wr.off = true
		return nil
	}
	return wr
}

// newChunk makes every entry stale.
func (wr *warpRecs) newChunk() {
	wr.gen++
	wr.totalHits += wr.hits
	wr.tries, wr.hits, wr.off = 0, 0, false
}

// entry is the entry of the warp (group, warp) for static code: the one
// that holds a record of code in this chunk, or else the one to replace,
// the warp's entry it met or kept least recently.
func (wr *warpRecs) entry(group, warp int64, code uint64) *warpRec {
	// The warps of one group (up to 64) in slots of their own: a
	// spinlock's retries come from the warps of a group or two.
	s := &wr.slot[(uint64(warp)+uint64(group)*17)&(warpRecSlots-1)]
	for i := range s.way {
		if e := &s.way[i]; e.n > 0 && e.code == code && e.gen == wr.gen {
			s.last = uint8(i)
			return e
		}
	}
	s.last ^= 1
	return &s.way[s.last]
}

// keep makes e the vectors vals, whose lists lie in lanes from starts
// (vector j's low halves, then its high halves), decoded from the chunk's
// bytes [at, at+n) of a record of static code; it keeps nothing (e empty)
// when they do not fit.
func (e *warpRec) keep(gen, code uint64, at, n int, vals []Vector, lanes []uint64, starts *[warpRecInputs]int32) {
	e.n = 0
	if len(vals) > warpRecInputs || len(lanes) > warpRecLanes {
		return
	}
	for j := range vals {
		v, c := &vals[j], &e.vecs[j]
		c.Base, c.Stride, c.BaseHi, c.Kind = v.Base, v.Stride, v.BaseHi, v.Kind
		c.lo, c.nLo, c.nHi = 0, 0, 0
		if v.Kind == VecList {
			lo, nLo, nHi := int(starts[j]), len(v.List), len(v.ListHi)
			if nLo == 0 || lo+nLo+nHi > len(lanes) || &v.List[0] != &lanes[lo] || nHi > 0 && &v.ListHi[0] != &lanes[lo+nLo] {
				return // lists elsewhere (a split file's masked vector): not kept
			}
			c.lo, c.nLo, c.nHi = int32(lo), int32(nLo), int32(nHi)
		}
	}
	copy(e.lanes[:], lanes)
	e.gen, e.code, e.at, e.n, e.nIn, e.listEnd = gen, code, at, n, len(vals), len(lanes)
}

// take sets vals to e's vectors, their lists e's own: valid until the
// reader's next record, which may replace e (keep), as lanes is. They are
// not copied into lanes (an arena's room): the engine copies them only
// when it does not share an earlier instruction's (Inst.VecID).
func (e *warpRec) take(vals []Vector) {
	lanes := e.lanes[:e.listEnd]
	for j := range vals {
		v, c := &vals[j], &e.vecs[j]
		if c.Kind != VecList {
			v.setScalar(c.Kind, c.Base, c.Stride)
			v.BaseHi = c.BaseHi
			continue
		}
		v.Kind, v.Base, v.Stride, v.BaseHi = VecList, 0, 0, c.BaseHi
		lo, hi := int(c.lo), int(c.lo+c.nLo)
		v.List = lanes[lo:hi:hi]
		switch {
		case c.nHi > 0:
			v.ListHi = lanes[hi : hi+int(c.nHi) : hi+int(c.nHi)]
		case v.ListHi != nil:
			v.ListHi = nil
		}
	}
}

// laneOpsOf is the lane-ops of in, of static si: its active lanes (its
// mask, and its predicate's lanes) times its elements.
func laneOpsOf(si *staticInfo, in *Inst) uint64 {
	act := in.Mask & si.exec
	if si.pred >= 0 {
		pv := uint32(in.Vals[si.pred].Lo(0))
		if si.predNeg {
			pv = ^pv
		}
		act &= pv
	}
	return uint64(bits.OnesCount32(act)) * si.elems
}

// repeat decodes the record at r.at, whose bytes are the last record's
// (repAt): the same static, mask and vectors, which r.inst holds still
// (decodeInst sets a new mask first), and the same group and warp deltas
// (repDg, repDw). A hot counter's
// records are such, and take about a fifth of the time to decode this
// way.
func (r *BinaryReader) repeat() {
	r.group += r.repDg
	r.warp += r.repDw
	in := &r.inst
	in.Seq, in.Group, in.Warp = r.seq, r.group, r.warp
	r.at += r.repN
	r.listEnd = 0
	r.left--
	r.seq++
	r.laneOps += r.repOps
	r.lastRep = true
}

// Repeats consumes up to max records after the last instruction returned
// that are its record's bytes again (see [Source]'s Repeats), in this chunk:
// each is that instruction with the record's group and warp deltas
// applied once more, as repeat decodes it, without an Inst filled per
// record. A hot counter's replay reads its instructions so; and when the
// record just after is the last one's bytes but for its deltas (a hot
// counter's second warp of a group), the run of that record's bytes.
//
// Records that are the last one's under other masks (an append queue's
// warps, each its own lanes) are handed over too, their masks in
// RepeatMasks (maskRepeats), when the record just after is not the last
// one's bytes again.
func (r *BinaryReader) Repeats(max int) (n int, dg, dw int64) {
	if r.inst.RepeatMasks != nil {
		r.inst.RepeatMasks = nil
	}
	if !(r.lastRep || r.lastMask) || r.err != nil || r.split != nil {
		return 0, 0, 0
	}
	rec := r.recs[r.repAt : r.repAt+r.repN]
	p := r.recs[r.at:]
	if !r.lastRep || len(p) < len(rec) || string(p[:len(rec)]) != string(rec) {
		// Not the last record's bytes again. Its bytes but for its
		// group and warp deltas (a hot counter's second warp of a group,
		// after the first, which moved to the group): that record is
		// the one the run repeats, under its deltas.
		k := len(rec)
		if k < 4 || len(p) < k || p[0] != rec[0] || rec[1]|rec[2]|p[1]|p[2] >= 0x80 || string(p[3:k]) != string(rec[3:]) {
			return r.maskRepeats(max)
		}
		r.repAt, r.repDg, r.repDw = r.at, unzigzag(uint64(p[1])), unzigzag(uint64(p[2]))
		r.lastRep, r.lastMask = true, false
		rec = p[:k]
	}
	for n < max && n < r.left && len(p) >= len(rec) && string(p[:len(rec)]) == string(rec) {
		p = p[len(rec):]
		n++
	}
	r.at += n * len(rec)
	r.left -= n
	r.seq += uint64(n)
	r.group += int64(n) * r.repDg
	r.warp += int64(n) * r.repDw
	r.laneOps += uint64(n) * r.repOps
	in := &r.inst
	in.Seq, in.Group, in.Warp = r.seq-1, r.group, r.warp
	return n, r.repDg, r.repDw
}

// maskRepeats is Repeats of the records after the last one that are its
// bytes but for their masks, each record's code, group and warp deltas of
// one byte, the deltas those of the first it takes (whose mask is another:
// Repeats took it otherwise): the check decodeInst makes of one such record, in a loop that reads only
// the masks, into repMasks (RepeatMasks). The last it takes becomes the
// record the next is compared with, as decodeInst's would.
func (r *BinaryReader) maskRepeats(max int) (n int, dg, dw int64) {
	rec := r.recs[r.repAt : r.repAt+r.repN]
	p := r.recs[r.at:]
	if len(rec) < 4 || len(p) < 4 || rec[0]|rec[1]|rec[2] >= 0x80 || p[0] != rec[0] || p[1]|p[2] >= 0x80 {
		return 0, 0, 0
	}
	_, kr := uvarint(rec[3:])
	if kr <= 0 {
		return 0, 0, 0
	}
	tail := rec[3+kr:] // the vectors' bytes
	head := [3]byte{p[0], p[1], p[2]}
	si := r.statics[r.repCode]
	in := &r.inst
	keep := ^uint32(0)
	if si.pred >= 0 {
		// The predicate is a vector of the record's tail: the same for all.
		keep = uint32(in.Vals[si.pred].Lo(0))
		if si.predNeg {
			keep = ^keep
		}
	}
	keep &= si.exec
	masks := r.repMasks[:0]
	var lanes, lastOps uint64
	at, lastAt, lastN := r.at, 0, 0
	head24 := uint64(head[0]) | uint64(head[1])<<8 | uint64(head[2])<<16
	for n < max && n < r.left && len(p) >= 4 {
		var mp uint64
		var k int
		if len(p) >= 8 {
			// Head and mask in one load: the three bytes, then a
			// varint of at most 5 bytes (32 bits).
			x := binary.LittleEndian.Uint64(p)
			stop := ^x & 0x8080808080000000
			if x&0xffffff != head24 || stop == 0 {
				break
			}
			k = bits.TrailingZeros64(stop)>>3 - 2
			mp = gather7(x>>24, k)
		} else {
			if p[0] != head[0] || p[1] != head[1] || p[2] != head[2] {
				break
			}
			mp, k = uvarint(p[3:])
		}
		m := 3 + k + len(tail)
		if k <= 0 || mp > 0xFFFFFFFF || m > len(p) || string(p[3+k:m]) != string(tail) {
			break
		}
		mask := uint32(mp) ^ si.exec
		masks = append(masks, mask)
		lastOps = uint64(bits.OnesCount32(mask&keep)) * si.elems
		lanes += lastOps
		lastAt, lastN = at, m
		at += m
		p = p[m:]
		n++
	}
	r.repMasks = masks
	if n == 0 {
		return 0, 0, 0
	}
	dg, dw = unzigzag(uint64(head[1])), unzigzag(uint64(head[2]))
	r.at = at
	r.left -= n
	r.seq += uint64(n)
	r.group += int64(n) * dg
	r.warp += int64(n) * dw
	r.laneOps += lanes
	r.maskReps += n
	r.repAt, r.repN, r.repDg, r.repDw, r.repOps = lastAt, lastN, dg, dw, lastOps
	r.lastRep, r.lastMask = false, true
	in.Seq, in.Group, in.Warp, in.Mask = r.seq-1, r.group, r.warp, masks[n-1]
	in.RepeatMasks = masks
	return n, dg, dw
}

// decodeVector decodes input j's vector into v: its kind byte, then a
// broadcast or stride value, or a list into lanes from at (decoded in
// place, the batch's arena); then a 128-bit input's high half. It returns
// the rest of the payload and the next free lane slot.
func (r *BinaryReader) decodeVector(si *staticInfo, j int, p []byte, v *Vector, lanes []uint64, at int) ([]byte, int, error) {
	ii := &si.inputs[j]
	if len(p) == 0 {
		return p, at, r.inputErr(si, j, "payload ends before its vector")
	}
	kind := p[0]
	p = p[1:]
	var ok bool
	switch kind {
	case vecKindBroadcast:
		var x uint64
		if x, p, ok = readUvarint(p); !ok {
			return p, at, r.inputErr(si, j, "bad value")
		}
		v.setScalar(VecBroadcast, x, 0)
	case vecKindStride:
		var x, d uint64
		if x, p, ok = readUvarint(p); !ok {
			return p, at, r.inputErr(si, j, "bad base")
		}
		if d, p, ok = readUvarint(p); !ok {
			return p, at, r.inputErr(si, j, "bad stride")
		}
		v.setScalar(VecStride, x, uint64(unzigzag(d)))
	case vecKindFixed128, vecKindList128:
		return r.decodeList(si, j, kind, p, v, lanes, at)
	case vecKindFixed, vecKindList:
		// A list of low halves on a 128-bit input: one high half follows.
		var err error
		if p, at, err = r.decodeList(si, j, kind, p, v, lanes, at); err != nil {
			return p, at, err
		}
	case vecKindMasked:
		var err error
		var wideInner bool
		if p, at, wideInner, err = r.decodeMasked(si, j, p, v, lanes, at); err != nil || wideInner {
			return p, at, err
		}
	default:
		return p, at, r.inputErr(si, j, "unknown vector kind %d", kind)
	}
	if ii.wide {
		if v.BaseHi, p, ok = readUvarint(p); !ok {
			return p, at, r.inputErr(si, j, "bad high half")
		}
	}
	return p, at, nil
}

// decodeList decodes a list vector (fixed-width or delta, with or without
// high halves) into lanes from at.
func (r *BinaryReader) decodeList(si *staticInfo, j int, kind byte, p []byte, v *Vector, lanes []uint64, at int) ([]byte, int, error) {
	ii := &si.inputs[j]
	fixed := kind == vecKindFixed || kind == vecKindFixed128
	if fixed && r.ver < 2 {
		return p, at, r.inputErr(si, j, "unknown vector kind %d", kind)
	}
	wideKind := kind == vecKindFixed128 || kind == vecKindList128
	if wideKind && !ii.wide {
		return p, at, r.inputErr(si, j, "vector kind %d (list with high halves) on a %d-bit input", kind, si.s.Inputs[j].Bits)
	}
	lo := lanes[at : at+ii.n : at+ii.n]
	var hi []uint64
	var err error
	if p, err = r.readList(si, j, fixed, p, lo, ""); err != nil {
		return p, at, err
	}
	if wideKind {
		hi = lanes[at+ii.n : at+2*ii.n : at+2*ii.n]
		if p, err = r.readList(si, j, fixed, p, hi, "high halves: "); err != nil {
			return p, at, err
		}
	}
	v.Kind, v.Base, v.Stride, v.BaseHi = VecList, 0, 0, 0
	v.List = lo
	if v.ListHi != nil || hi != nil {
		v.ListHi = hi
	}
	return p, at + len(lo) + len(hi), nil
}

// readList reads one list of input j into dst, fixed-width or deltas;
// half names it in an error (the high halves of a 128-bit list).
func (r *BinaryReader) readList(si *staticInfo, j int, fixed bool, p []byte, dst []uint64, half string) ([]byte, error) {
	if fixed {
		p0 := p
		var ok bool
		if p, ok = readFixed(p, dst, r.simd); !ok {
			return p, r.inputErr(si, j, "%s%s", half, fixedProblem(p0, len(dst)))
		}
		return p, nil
	}
	var n int
	if p, n = readDeltas(p, dst); n < 0 {
		return p, r.inputErr(si, j, "%slist ends after %d of %d lanes", half, -n-1, len(dst))
	}
	return p, nil
}

// uvarint8 decodes a varint of at most 8 bytes from the first 8 bytes of
// p, in one load: its length from the first byte without a continuation
// bit, its 7-bit groups gathered by three shifts and masks rather than a
// branch a byte. It returns n = 0 when p is shorter than 8 bytes or the
// varint longer (uvarintLong's case); 8 bytes hold 56 bits, so no varint
// it decodes overflows.
func uvarint8(p []byte) (uint64, int) {
	if len(p) < 8 {
		return 0, 0
	}
	x := binary.LittleEndian.Uint64(p)
	stop := ^x & 0x8080808080808080
	if stop == 0 {
		return 0, 0
	}
	n := bits.TrailingZeros64(stop)>>3 + 1
	return gather7(x, n), n
}

// gather7 is the value of the varint of n bytes, 1 to 8, at the low end of
// x: its 7-bit groups gathered by three shifts and masks.
func gather7(x uint64, n int) uint64 {
	v := x & (^uint64(0) >> (64 - 8*n)) & 0x7f7f7f7f7f7f7f7f
	v = v&0x007f007f007f007f | v&0x7f007f007f007f00>>1
	v = v&0x00003fff00003fff | v&0x3fff00003fff0000>>2
	return v&0x000000000fffffff | v&0x0fffffff00000000>>4
}

// readUvarint reads one varint, the one-byte case inline.
func readUvarint(p []byte) (uint64, []byte, bool) {
	if len(p) > 0 && p[0] < 0x80 {
		return uint64(p[0]), p[1:], true
	}
	if x, n := uvarint8(p); n > 0 {
		return x, p[n:], true
	}
	x, n := uvarintLong(p)
	if n <= 0 {
		return 0, p, false
	}
	return x, p[n:], true
}

// decodeHead decodes an instruction's code, group and warp deltas and
// mask, one varint each, the long way.
func (r *BinaryReader) decodeHead(p []byte) (rest []byte, code, dg, dw, mask uint64, err error) {
	var n int
	if code, n = uvarint(p); n <= 0 {
		return p, 0, 0, 0, 0, r.instErr("bad static index")
	}
	p = p[n:]
	if dg, n = uvarint(p); n <= 0 {
		return p, 0, 0, 0, 0, r.instErr("bad group")
	}
	p = p[n:]
	if dw, n = uvarint(p); n <= 0 {
		return p, 0, 0, 0, 0, r.instErr("bad warp")
	}
	p = p[n:]
	if mask, n = uvarint(p); n <= 0 {
		return p, 0, 0, 0, 0, r.instErr("bad mask")
	}
	return p[n:], code, dg, dw, mask, nil
}

// readDeltas fills vs from zigzag deltas. On a bad varint it returns
// n = -(lanes read)-1.
//
// Lanes whose addresses lie near each other (a spinlock's few locks, a
// queue's slots) have deltas of one byte each, after a first of several:
// up to eight of them are read in one 8-byte load, checked for a
// continuation bit at once, rather than a byte and a branch each
// (BenchmarkReadDeltas). The load needs 8 bytes of p, which a record
// that goes on after its list has; the last list of a chunk takes the
// loop below.
func readDeltas(p []byte, vs []uint64) ([]byte, int) {
	var prev uint64
	i := 0
	for i < len(vs) {
		if len(p) >= 8 {
			m := min(len(vs)-i, 8)
			x := binary.LittleEndian.Uint64(p)
			if m == 8 && x&0x8080808080808080 == 0 {
				// Unrolled, the sums in registers: each lane's value
				// is the one before plus its delta.
				out := (*[8]uint64)(vs[i : i+8])
				v0 := prev + uint64(unzigzag(x&0x7f))
				v1 := v0 + uint64(unzigzag(x>>8&0x7f))
				v2 := v1 + uint64(unzigzag(x>>16&0x7f))
				v3 := v2 + uint64(unzigzag(x>>24&0x7f))
				v4 := v3 + uint64(unzigzag(x>>32&0x7f))
				v5 := v4 + uint64(unzigzag(x>>40&0x7f))
				v6 := v5 + uint64(unzigzag(x>>48&0x7f))
				v7 := v6 + uint64(unzigzag(x>>56))
				out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7] = v0, v1, v2, v3, v4, v5, v6, v7
				prev, p, i = v7, p[8:], i+8
				continue
			}
			if x&(0x8080808080808080>>(64-8*m)) == 0 {
				out := vs[i : i+m : i+m]
				for k := range out {
					prev += uint64(unzigzag(x & 0x7f))
					out[k] = prev
					x >>= 8
				}
				p, i = p[m:], i+m
				continue
			}
			if stop := ^x & 0x8080808080808080; stop != 0 {
				// One delta of up to 8 bytes (a float's bits, the
				// first of a list of addresses), from the same load,
				// without a branch a byte.
				n := bits.TrailingZeros64(stop)>>3 + 1
				prev += uint64(unzigzag(gather7(x, n)))
				vs[i] = prev
				p, i = p[n:], i+1
				continue
			}
		}
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
		i++
	}
	return p, 0
}

// fixedProblem says what is wrong with the fixed-width list of n values at
// p, which readFixed rejected.
func fixedProblem(p []byte, n int) string {
	_, k := uvarint(p)
	switch {
	case k <= 0:
		return "bad list minimum"
	case k == len(p):
		return "payload ends before the list's width"
	case p[k]&15 < 1 || p[k]&15 > 8:
		return fmt.Sprintf("list width %d out of 1..8", p[k]&15)
	}
	return fmt.Sprintf("list of %d values of %d bytes, but %d bytes are left", n, p[k]&15, len(p)-k-1)
}

// fixedHead reads a fixed-width list's head (vector kinds 4 and 5): its
// uvarint minimum and its width byte, whose low 4 bits are the width w of
// an offset in bytes and high 4 bits the shift sh of the offsets. It
// reports false when the head is cut short or its varint too long; the
// caller checks w.
func fixedHead(p []byte) (lo uint64, w int, sh byte, rest []byte, ok bool) {
	if len(p) > 0 && p[0] < 0x80 {
		lo, p = uint64(p[0]), p[1:]
	} else if x, n := uvarintLong(p); n > 0 {
		lo, p = x, p[n:]
	} else {
		return 0, 0, 0, p, false
	}
	if len(p) == 0 {
		return 0, 0, 0, p, false
	}
	return lo, int(p[0] & 15), p[0] >> 4, p[1:], true
}

// readFixed fills vs from a fixed-width list (vector kinds 4 and 5): a
// uvarint minimum, a width byte w, then len(vs) offsets of w little-endian
// bytes. The list's length is checked once; the loops then read without a
// varint's branches. It reports false for a bad list (fixedProblem says
// what is wrong). simd: the CPU runs fixedSIMD (hasFixedSIMD).
func readFixed(p []byte, vs []uint64, simd bool) ([]byte, bool) {
	lo, w, sh, p, ok := fixedHead(p)
	if !ok || w < 1 || w > 8 {
		return p, false
	}
	size := len(vs) * w
	if size > len(p) {
		return p, false
	}
	q, rest := p[:size:size], p[size:]
	if !simd || !fixedSIMD(vs, q, w, lo, sh) {
		fixedGo(vs, p, w, lo, sh)
	}
	return rest, true
}

// fixedGo is readFixed's loops in Go: vs[i] = lo + (the w little-endian
// bytes of p at i*w) << sh. p holds at least len(vs)*w bytes; a width of
// 3 reads the byte after the list too when p has it.
func fixedGo(vs []uint64, p []byte, w int, lo uint64, sh uint8) {
	size := len(vs) * w
	q := p[:size:size]
	switch w {
	case 1:
		q = q[:len(vs)]
		for i := range vs {
			vs[i] = lo + uint64(q[i])<<sh
		}
	case 2:
		for i := range vs {
			b := q[2*i : 2*i+2 : 2*i+2]
			vs[i] = lo + (uint64(b[0])|uint64(b[1])<<8)<<sh
		}
	case 3:
		// 4-byte loads, masked, when a byte follows the list in p (almost
		// always: the record goes on), so that the last load stays in p;
		// else byte by byte.
		i := 0
		if len(p) > size {
			for ; i < len(vs); i++ {
				x := binary.LittleEndian.Uint32(p[3*i : 3*i+4 : 3*i+4])
				vs[i] = lo + uint64(x&0xffffff)<<sh
			}
		}
		for ; i < len(vs); i++ {
			b := q[3*i : 3*i+3 : 3*i+3]
			vs[i] = lo + (uint64(b[0])|uint64(b[1])<<8|uint64(b[2])<<16)<<sh
		}
	case 4:
		for i := range vs {
			b := q[4*i : 4*i+4 : 4*i+4]
			vs[i] = lo + uint64(binary.LittleEndian.Uint32(b))<<sh
		}
	case 8:
		for i := range vs {
			b := q[8*i : 8*i+8 : 8*i+8]
			vs[i] = lo + binary.LittleEndian.Uint64(b)<<sh
		}
	default: // 5, 6, 7: 8-byte loads, masked
		mask := uint64(1)<<(8*w) - 1
		for i := range vs {
			var x uint64
			if o := i * w; o+8 <= len(q) {
				x = binary.LittleEndian.Uint64(q[o:o+8:o+8]) & mask
			} else {
				for k := w - 1; k >= 0; k-- {
					x = x<<8 | uint64(q[o+k])
				}
			}
			vs[i] = lo + x<<sh
		}
	}
}
