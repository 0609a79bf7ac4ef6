package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

type writerOptions struct {
	chunkInsts int
	level      zstd.EncoderLevel
	stored     bool         // frames of raw blocks (WithUncompressed)
	split      *SplitHeader // a split file's header (WithSplit)
	held       *HeldFile    // chunks kept for another writer (WithHeldChunks)
}

// WriterOption configures a BinaryWriter.
type WriterOption func(*writerOptions) error

// WithChunkInsts sets the most records (instructions, and directives
// after the first instruction) a chunk holds, 1..MaxChunkInsts. Default
// DefaultChunkInsts (65536). A chunk also ends early once its payload
// reaches 1 MiB.
func WithChunkInsts(n int) WriterOption {
	return func(o *writerOptions) error {
		if n < 1 || n > MaxChunkInsts {
			return fmt.Errorf("trace: chunk size %d instructions out of 1..%d", n, MaxChunkInsts)
		}
		o.chunkInsts = n
		return nil
	}
}

// WithEncoderLevel sets the zstd compression level. Default zstd.SpeedDefault.
func WithEncoderLevel(l zstd.EncoderLevel) WriterOption {
	return func(o *writerOptions) error {
		if l < zstd.SpeedFastest || l > zstd.SpeedBestCompression {
			return fmt.Errorf("trace: unknown zstd encoder level %d", l)
		}
		o.level = l
		return nil
	}
}

// WithUncompressed makes the writer store each frame's record as it is,
// in zstd raw blocks (docs/FORMAT.md): a frame every zstd reader reads,
// with its content checksum, at no compression cost. For files written
// once and read once where the CPU matters more than the bytes, such as
// replay split's (whose records, a few lanes' addresses and operands each,
// compress little).
func WithUncompressed() WriterOption {
	return func(o *writerOptions) error {
		o.stored = true
		return nil
	}
}

// BinaryWriter writes the binary trace form of docs/FORMAT.md: a header
// frame, one zstd frame per chunk of instructions, and a seek table. It is
// an InstWriter.
type BinaryWriter struct {
	w   io.Writer
	o   writerOptions
	enc *zstd.Encoder
	dig *xxhash.Digest

	entries []seekEntry // one per frame written
	chunk   int         // index of the chunk being filled
	seq     uint64      // seq of the next instruction
	first   uint64      // seq of the chunk's first instruction

	insts   []byte             // the chunk's encoded instructions
	n       int                // instructions in the chunk
	laneOps uint64             // the chunk's lane-op count
	group   int64              // previous instruction's group and warp in the chunk
	warp    int64              //
	index   map[*Static]uint64 // static table index by pointer
	byText  map[string]uint64  // and by text, for distinct pointers with one text
	texts   []string           // the chunk's static table
	last    *Static            // memo of the previous instruction's static
	lastIdx uint64

	chunkBytes int // a chunk ends once its instructions take this many bytes

	rec    []byte   // record being framed
	masked []uint64 // a masked list's values (split files)
	blk    blockBuf // the block being filled (split files)
	zbuf   []byte   // compressed frame
	err    error    // sticky
	done   bool

	// finsts is the chunk payload in flight (split files, stored): a
	// split chunk's frame is its record's head from rec, then its
	// instructions straight from insts, swapped with finsts, not copied;
	// fdig sums a frame of two such pieces.
	finsts []byte
	fdig   *xxhash.Digest

	// A chunk's frame is compressed and written on a goroutine of its own
	// while the next chunk fills (BenchmarkTextAsmFile): inFlight, when
	// not nil, gets its error; until then it owns frec, finsts, fdig,
	// zbuf, entries, enc and w.
	inFlight chan error
	frec     []byte

	// held are the chunks a writer WithHeldChunks keeps in its held
	// file, unsealed and unnumbered, for Append.
	held   []heldChunk
	seqSet bool // held: seq is set (heldSeq)
}

// NewBinaryWriter writes the header frame for h (nil: an empty header) to w
// and returns a writer for the instructions. Close writes the rest.
func NewBinaryWriter(w io.Writer, h *Header, opts ...WriterOption) (*BinaryWriter, error) {
	o := writerOptions{chunkInsts: DefaultChunkInsts, level: zstd.SpeedDefault}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	var enc *zstd.Encoder
	if !o.stored {
		var err error
		if enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(o.level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true)); err != nil {
			return nil, err
		}
	}
	bw := &BinaryWriter{
		w: w, o: o, enc: enc, dig: xxhash.New(),
		index: map[*Static]uint64{}, byText: map[string]uint64{},
	}
	bw.chunkBytes = chunkTargetBytes
	if o.split != nil {
		bw.chunkBytes = splitChunkBytes
	}
	if o.split != nil && o.held == nil {
		// A split task has a writer per partition, each filling its
		// chunk as the trace's records come: chunks of splitChunkBytes
		// keep their buffers in the caches, made once at that size. A
		// held writer's grow as it fills them: most of a split task's
		// partitions hold little of a half's records.
		bw.insts = make([]byte, 0, splitChunkBytes+splitChunkBytes/8)
		if o.stored {
			bw.finsts = make([]byte, 0, splitChunkBytes+splitChunkBytes/8)
		}
		for i := range bw.blk.cols { // a block's columns, made once
			n := 4 << 10
			if i == colVecs {
				n = blockMaxBytes + blockMaxBytes/8
			}
			bw.blk.cols[i] = make([]byte, 0, n)
		}
	}
	if o.held != nil {
		if o.split == nil || !o.stored {
			return nil, errors.New("trace: WithHeldChunks without WithSplit and WithUncompressed")
		}
		return bw, nil // no header frame: its chunks go to another writer's file
	}
	if h == nil {
		h = &Header{}
	}
	rec, err := appendHeaderRecord(bw.rec[:0], h, o.split)
	if err != nil {
		return nil, err
	}
	bw.rec = rec
	bw.sealRecord(headerFixedLen, nil)
	if err := bw.writeFrame(); err != nil {
		return nil, err
	}
	return bw, nil
}

// appendHeaderRecord appends the header record with its checksum left zero.
func appendHeaderRecord(b []byte, h *Header, split *SplitHeader) ([]byte, error) {
	b = append(b, headerMagic...)
	v := uint16(formatVersion)
	if split != nil {
		v = splitFormatVersion
	}
	b = binary.LittleEndian.AppendUint16(b, v)
	var flags uint16
	if h.AddressOnly {
		flags |= headerFlagAddressOnly
	}
	if split != nil {
		flags |= flagSplit
		if split.Combined {
			flags |= flagCombined
		}
	}
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint32(b, 0) // payload length, set below
	b = binary.LittleEndian.AppendUint64(b, 0) // checksum, set by sealRecord
	b = binary.AppendUvarint(b, uint64(len(h.Regions)))
	for i := range h.Regions {
		var err error
		if b, err = appendRegionEntry(b, &h.Regions[i]); err != nil {
			return nil, fmt.Errorf("trace: header region %d: %v", i, err)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(h.Inits)))
	for i := range h.Inits {
		var err error
		if b, err = appendInitEntry(b, &h.Inits[i]); err != nil {
			return nil, fmt.Errorf("trace: header init %d: %v", i, err)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(h.Windows)))
	for i, win := range h.Windows {
		k, ok := windowCode(win.Kind)
		if !ok || win.Size == 0 {
			return nil, fmt.Errorf("trace: header window %d: kind %q size %d", i, win.Kind, win.Size)
		}
		b = append(b, k)
		b = binary.AppendUvarint(b, win.Base)
		b = binary.AppendUvarint(b, win.Size)
	}
	if split != nil {
		var err error
		if b, err = appendSplitHeader(b, split); err != nil {
			return nil, fmt.Errorf("trace: split header: %v", err)
		}
	}
	n := len(b) - headerFixedLen
	if n > MaxRecordPayload {
		return nil, fmt.Errorf("trace: header payload of %d bytes is over the limit of %d", n, MaxRecordPayload)
	}
	binary.LittleEndian.PutUint32(b[12:], uint32(n))
	return b, nil
}

// appendRegionEntry appends a region as the header and a directive record
// store it: space, base, size.
func appendRegionEntry(b []byte, r *Region) ([]byte, error) {
	if err := validSpace(r.Space); err != nil {
		return b, err
	}
	b = appendSpace(b, r.Space)
	b = binary.AppendUvarint(b, r.Base)
	return binary.AppendUvarint(b, r.Size), nil
}

// appendInitEntry appends an init as the header and a directive record
// store it: space, group, address, type, data.
func appendInitEntry(b []byte, in *Init) ([]byte, error) {
	if err := validInit(in); err != nil {
		return b, err
	}
	b = appendSpace(b, in.Space)
	b = binary.AppendUvarint(b, zigzag(in.Group))
	b = binary.AppendUvarint(b, in.Addr)
	b = append(b, byte(in.Type))
	b = binary.AppendUvarint(b, uint64(len(in.Data)))
	return append(b, in.Data...), nil
}

func appendSpace(b []byte, s Space) []byte {
	b = append(b, byte(s.Kind))
	if s.Kind == SpaceSurface || s.Kind == SpaceCounter {
		b = binary.AppendUvarint(b, uint64(s.Surface))
	}
	return b
}

// sealRecord stores the checksum of w.rec, the XXH64 of the fixed header
// before the checksum field followed by the payload (and then tail, the
// rest of the payload when it is not in w.rec).
func (w *BinaryWriter) sealRecord(fixed int, tail []byte) { w.seal(w.rec, fixed, tail) }

// seal is sealRecord of the record rec (then tail).
func (w *BinaryWriter) seal(rec []byte, fixed int, tail []byte) {
	w.dig.Reset()
	_, _ = w.dig.Write(rec[:fixed-8])
	_, _ = w.dig.Write(rec[fixed:])
	_, _ = w.dig.Write(tail)
	binary.LittleEndian.PutUint64(rec[fixed-8:], w.dig.Sum64())
}

// writeFrame compresses w.rec into one zstd frame, writes it and records
// its seek table entry.
func (w *BinaryWriter) writeFrame() error {
	return w.writeRec(w.rec, nil)
}

// writeRec writes rec and then tail as one frame and records its seek
// table entry: a compressed frame through zbuf, or a stored one
// (WithUncompressed) straight from rec and tail, its headers between its
// blocks, without a copy. Only a stored frame has a tail.
func (w *BinaryWriter) writeRec(rec, tail []byte) error {
	var check uint32
	if len(tail) == 0 {
		check = uint32(xxhash.Sum64(rec))
	} else {
		if w.fdig == nil {
			w.fdig = xxhash.New()
		}
		w.fdig.Reset()
		_, _ = w.fdig.Write(rec)
		_, _ = w.fdig.Write(tail)
		check = uint32(w.fdig.Sum64())
	}
	var csize int
	if w.o.stored {
		var err error
		if csize, err = writeStoredFrame(w.w, rec, tail, check); err != nil {
			return err
		}
	} else {
		if len(tail) != 0 { // flush gives only a stored frame a tail
			rec = append(rec[:len(rec):len(rec)], tail...)
		}
		w.zbuf = w.frame(w.zbuf[:0], rec, check)
		if _, err := w.w.Write(w.zbuf); err != nil {
			return err
		}
		csize = len(w.zbuf)
	}
	w.entries = append(w.entries, seekEntry{
		csize: uint32(csize),
		dsize: uint32(len(rec) + len(tail)),
		check: check,
	})
	return nil
}

// writeStoredFrame writes to w what appendStoredFrame appends of rec
// followed by tail, piece by piece, and returns its size.
func writeStoredFrame(w io.Writer, rec, tail []byte, check uint32) (int, error) {
	var h [9]byte
	binary.LittleEndian.PutUint32(h[:], zstdFrameMagic)
	h[4] = 0xA4
	binary.LittleEndian.PutUint32(h[5:], uint32(len(rec)+len(tail)))
	size := len(h)
	if _, err := w.Write(h[:]); err != nil {
		return 0, err
	}
	for {
		n := min(len(rec)+len(tail), zstdMaxBlock)
		bh := uint32(n) << 3
		if n == len(rec)+len(tail) {
			bh |= 1 // the last block
		}
		h[0], h[1], h[2] = byte(bh), byte(bh>>8), byte(bh>>16)
		if _, err := w.Write(h[:3]); err != nil {
			return 0, err
		}
		size += 3 + n
		for n > 0 { // from rec, then from tail
			if len(rec) == 0 {
				rec, tail = tail, nil
			}
			k := min(n, len(rec))
			if _, err := w.Write(rec[:k]); err != nil {
				return 0, err
			}
			rec, n = rec[k:], n-k
		}
		if bh&1 != 0 {
			break
		}
	}
	binary.LittleEndian.PutUint32(h[:4], check)
	if _, err := w.Write(h[:4]); err != nil {
		return 0, err
	}
	return size + 4, nil
}

// frame appends rec as one zstd frame to b: compressed, or stored
// (WithUncompressed). check is the low 32 bits of rec's XXH64, the
// frame's content checksum.
func (w *BinaryWriter) frame(b, rec []byte, check uint32) []byte {
	if !w.o.stored {
		return w.enc.EncodeAll(rec, b)
	}
	return appendStoredFrame(b, rec, check)
}

// appendStoredFrame appends rec to b as one zstd frame of raw blocks (RFC
// 8878): the magic; a frame header descriptor of 0xA4 (a 4-byte content
// size, a single segment, a content checksum); the content size; blocks of
// at most 128 KiB, each a 3-byte header (last block, type 0 raw, size) and
// its bytes; then check.
func appendStoredFrame(b, rec []byte, check uint32) []byte {
	b = binary.LittleEndian.AppendUint32(b, zstdFrameMagic)
	b = append(b, 0xA4)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(rec)))
	for {
		n := min(len(rec), zstdMaxBlock)
		h := uint32(n) << 3
		if n == len(rec) {
			h |= 1 // the last block
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
		b = append(b, rec[:n]...)
		rec = rec[n:]
		if h&1 != 0 {
			break
		}
	}
	return binary.LittleEndian.AppendUint32(b, check)
}

// startFrame hands the sealed w.rec (followed by w.insts when withInsts)
// to a goroutine that compresses and writes it as writeFrame does, once
// the frame in flight is written; w.rec (and w.insts) are then free
// buffers.
func (w *BinaryWriter) startFrame(withInsts bool) error {
	if err := w.wait(); err != nil {
		return err
	}
	w.rec, w.frec = w.frec[:0], w.rec
	var tail []byte
	if withInsts {
		w.insts, w.finsts = w.finsts[:0], w.insts
		tail = w.finsts
	}
	done := make(chan error, 1)
	w.inFlight = done
	go func(rec, tail []byte) {
		done <- w.writeRec(rec, tail)
	}(w.frec, tail)
	return nil
}

// wait waits for the frame in flight, if any, and returns its error.
func (w *BinaryWriter) wait() error {
	if w.inFlight == nil {
		return nil
	}
	err := <-w.inFlight
	w.inFlight = nil
	return err
}

// Write appends one instruction, or a directive record (in.Dir). Seq and
// Line are not stored: read back, Seq counts from 0 and Line is 0. Fields a
// vector's kind and its input's width give no meaning are not stored either
// (see docs/FORMAT.md).
func (w *BinaryWriter) Write(in *Inst) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return errors.New("trace: binary writer: Write after Close")
	}
	if in != nil && in.Dir != nil {
		w.closeBlock() // a block never spans a directive
		if err := w.encodeDirective(in.Dir); err != nil {
			return err
		}
	} else {
		if err := w.encode(in); err != nil {
			return err // the instruction is rejected; the writer stays usable
		}
		if w.o.split != nil {
			w.seq = in.Seq
		}
		w.seq++
	}
	w.n++
	pending := 0
	if w.o.split != nil {
		if pending = w.blk.bytes(); w.blk.n >= blockMaxInsts || pending >= blockMaxBytes {
			w.closeBlock()
			pending = 0
		}
	}
	if w.n >= w.o.chunkInsts || len(w.insts)+pending >= w.chunkBytes {
		if err := w.flush(); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// encode validates in and appends it to the chunk.
func (w *BinaryWriter) encode(in *Inst) error {
	if in == nil || in.Static == nil {
		return fmt.Errorf("trace: binary writer: instruction %d has no Static", w.seq)
	}
	s := in.Static
	if len(in.Vals) != len(s.Inputs) {
		return fmt.Errorf("trace: binary writer: instruction %d (%s): %d values for %d inputs", w.seq, s.Text, len(in.Vals), len(s.Inputs))
	}
	for i := range in.Vals {
		v := &in.Vals[i]
		switch v.Kind {
		case VecBroadcast, VecStride:
		case VecList:
			want := s.Inputs[i].Count(s.ExecSize)
			if len(v.List) != want {
				return fmt.Errorf("trace: binary writer: instruction %d (%s): input %s has %d values, want %d", w.seq, s.Text, s.Inputs[i].Name, len(v.List), want)
			}
			if s.Inputs[i].Bits == 128 && v.ListHi != nil && len(v.ListHi) != want {
				return fmt.Errorf("trace: binary writer: instruction %d (%s): input %s has %d high values, want %d", w.seq, s.Text, s.Inputs[i].Name, len(v.ListHi), want)
			}
		default:
			return fmt.Errorf("trace: binary writer: instruction %d (%s): input %s has unknown vector kind %d", w.seq, s.Text, s.Inputs[i].Name, v.Kind)
		}
	}

	if sp := w.o.split; sp != nil {
		switch {
		case in.Part == nil:
			return fmt.Errorf("trace: binary writer: instruction %d (%s) of a split file has no Part", in.Seq, s.Text)
		case in.Seq < w.seq:
			return fmt.Errorf("trace: binary writer: instruction %d of a split file after instruction %d", in.Seq, w.seq-1)
		}
	}
	idx, err := w.staticIndex(s)
	if err != nil {
		return fmt.Errorf("trace: binary writer: instruction %d: %v", w.seq, err)
	}
	// Valid: nothing below can fail.
	if w.o.held != nil && !w.seqSet {
		w.heldSeq(in)
	}
	if w.n == 0 {
		w.first = w.seq
	}
	if w.o.split != nil {
		// Its columns go to the block being filled (binary_block.go).
		w.addBlockInst(in, idx)
		w.laneOps += uint64(bits.OnesCount32(in.Active())) * uint64(max(s.Elems, 1))
		return nil
	}
	b := w.insts
	b = binary.AppendUvarint(b, idx+1) // record code: 0 is a directive
	b = binary.AppendUvarint(b, zigzag(in.Group-w.group))
	b = binary.AppendUvarint(b, zigzag(in.Warp-w.warp))
	b = binary.AppendUvarint(b, uint64(in.Mask^s.ExecMask()))
	w.group, w.warp = in.Group, in.Warp
	for i := range in.Vals {
		b = appendVector(b, &in.Vals[i], s.Inputs[i].Bits == 128)
	}
	w.insts = b
	w.laneOps += uint64(bits.OnesCount32(in.Active())) * uint64(max(s.Elems, 1))
	return nil
}

// Directive record kinds, after the record code 0.
const (
	dirKindInit    = 1
	dirKindRegion  = 2
	dirKindCluster = 3
)

// encodeDirective validates d and appends it to the chunk as a directive
// record: code 0, kind, then the entry as the header stores it.
func (w *BinaryWriter) encodeDirective(d *Directive) error {
	b := append(w.insts, 0)
	var err error
	switch n := btoi(d.Init != nil) + btoi(d.Region != nil) + btoi(d.Cluster != nil) + btoi(d.Fold != nil); {
	case n != 1:
		err = errors.New("a directive record holds exactly one of .init, .region and .cluster (or a fold, in a combined split file)")
	case d.Fold != nil:
		b, err = w.appendFold(b, d.Fold)
	case d.Init != nil:
		b, err = appendInitEntry(append(b, dirKindInit), d.Init)
	case d.Region != nil:
		b, err = appendRegionEntry(append(b, dirKindRegion), d.Region)
	default:
		b, err = appendClusterEntry(append(b, dirKindCluster), d.Cluster)
	}
	if err != nil {
		// w.insts is unchanged: the record is rejected, the writer stays usable.
		return fmt.Errorf("trace: binary writer: directive before instruction %d: %v", w.seq, err)
	}
	if w.n == 0 {
		w.first = w.seq
	}
	w.insts = b
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appendClusterEntry appends a .cluster: svarint group, uvarint ID, each
// from 0 to 2^40 as the text's .group and .cluster are.
func appendClusterEntry(b []byte, c *Cluster) ([]byte, error) {
	if c.Group < 0 || c.Group > 1<<40 || c.ID < 0 || c.ID > 1<<40 {
		return b, fmt.Errorf(".cluster %d of group %d: both must be from 0 to 2^40", c.ID, c.Group)
	}
	b = binary.AppendUvarint(b, zigzag(c.Group))
	return binary.AppendUvarint(b, uint64(c.ID)), nil
}

func appendVector(b []byte, v *Vector, wide bool) []byte {
	switch v.Kind {
	case VecBroadcast:
		b = append(b, vecKindBroadcast)
		b = binary.AppendUvarint(b, v.Base)
	case VecStride:
		b = append(b, vecKindStride)
		b = binary.AppendUvarint(b, v.Base)
		b = binary.AppendUvarint(b, zigzag(int64(v.Stride)))
	case VecList:
		// Each list takes whichever of its two forms is shorter; fixed
		// width on a tie, as it decodes faster.
		if wide && v.ListHi != nil {
			lo, hi := fixedForm(v.List), fixedForm(v.ListHi)
			if lo.size(len(v.List))+hi.size(len(v.ListHi)) <= deltasLen(v.List)+deltasLen(v.ListHi) {
				b = append(b, vecKindFixed128)
				b = appendFixed(b, v.List, lo)
				return appendFixed(b, v.ListHi, hi)
			}
			b = append(b, vecKindList128)
			b = appendDeltas(b, v.List)
			return appendDeltas(b, v.ListHi)
		}
		if f := fixedForm(v.List); f.size(len(v.List)) <= deltasLen(v.List) {
			b = append(b, vecKindFixed)
			b = appendFixed(b, v.List, f)
		} else {
			b = append(b, vecKindList)
			b = appendDeltas(b, v.List)
		}
	}
	if wide {
		b = binary.AppendUvarint(b, v.BaseHi)
	}
	return b
}

// appendDeltas stores each value as the zigzag of its difference to the
// previous one (the first to 0).
func appendDeltas(b []byte, vs []uint64) []byte {
	var prev uint64
	for _, x := range vs {
		b = binary.AppendUvarint(b, zigzag(int64(x-prev)))
		prev = x
	}
	return b
}

// deltasLen is the size appendDeltas gives vs.
func deltasLen(vs []uint64) int {
	var prev uint64
	n := 0
	for _, x := range vs {
		n += uvarintLen(zigzag(int64(x - prev)))
		prev = x
	}
	return n
}

// uvarintLen is the size of x as a uvarint.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// fixed is a list's fixed-width form: its minimum, the shift its offsets
// from the minimum all allow (their common trailing zero bits, at most
// 15), and the bytes of the largest shifted offset.
type fixed struct {
	min   uint64
	shift int // 0..15
	width int // 1..8
}

func fixedForm(vs []uint64) fixed {
	lo, hi := vs[0], vs[0]
	for _, x := range vs[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	var or uint64
	for _, x := range vs {
		or |= x - lo
	}
	shift := 0
	if or != 0 {
		shift = min(bits.TrailingZeros64(or), 15)
	}
	return fixed{min: lo, shift: shift, width: max(1, (bits.Len64((hi-lo)>>shift)+7)/8)}
}

// size is the stored size of n values in form f: the minimum, the width
// byte, the offsets.
func (f fixed) size(n int) int { return uvarintLen(f.min) + 1 + n*f.width }

// appendFixed stores vs in form f: uvarint minimum, a byte of width and
// shift, then each value's offset from the minimum, shifted right, in width
// little-endian bytes.
func appendFixed(b []byte, vs []uint64, f fixed) []byte {
	b = binary.AppendUvarint(b, f.min)
	b = append(b, byte(f.width|f.shift<<4))
	for _, x := range vs {
		// All 8 bytes, then keep width of them.
		n := len(b) + f.width
		b = binary.LittleEndian.AppendUint64(b, (x-f.min)>>f.shift)[:n]
	}
	return b
}

// Stored vector kinds. Kinds 4 and 5 exist from format version 2 on.
const (
	vecKindBroadcast = 0 // Base [BaseHi]
	vecKindStride    = 1 // Base, Stride [BaseHi]
	vecKindList      = 2 // n deltas [BaseHi]
	vecKindList128   = 3 // n deltas, n high deltas; 128-bit inputs only
	vecKindFixed     = 4 // minimum, width, n offsets [BaseHi]
	vecKindFixed128  = 5 // kind 4's form for the low halves, then for the high halves; 128-bit inputs only
)

// staticIndex returns s's index in the chunk's static table, adding it.
func (w *BinaryWriter) staticIndex(s *Static) (uint64, error) {
	if s == w.last {
		return w.lastIdx, nil
	}
	idx, ok := w.index[s]
	if !ok {
		if err := validStatic(s); err != nil {
			return 0, err
		}
		idx, ok = w.byText[s.Text]
		if !ok {
			idx = uint64(len(w.texts))
			w.texts = append(w.texts, s.Text)
			w.byText[s.Text] = idx
		}
		w.index[s] = idx
	}
	w.last, w.lastIdx = s, idx
	return idx, nil
}

// flush writes the chunk being filled as one frame and starts the next.
func (w *BinaryWriter) flush() error {
	w.closeBlock()
	if w.n == 0 {
		return nil
	}
	b := w.rec[:0]
	b = append(b, chunkMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(w.chunk))
	b = binary.LittleEndian.AppendUint64(b, w.first)
	b = binary.LittleEndian.AppendUint32(b, uint32(w.n))
	b = binary.LittleEndian.AppendUint64(b, w.laneOps)
	b = binary.LittleEndian.AppendUint32(b, 0) // payload length
	b = binary.LittleEndian.AppendUint64(b, 0) // checksum
	b = binary.AppendUvarint(b, uint64(len(w.texts)))
	for _, t := range w.texts {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	// A split file's stored chunk: its instructions follow from
	// w.insts, not copied (startFrame).
	tail := w.o.split != nil && w.o.stored
	if !tail {
		b = append(b, w.insts...)
	}
	n := len(b) - chunkFixedLen
	if tail {
		n += len(w.insts)
	}
	if n > MaxRecordPayload {
		return fmt.Errorf("trace: binary writer: chunk %d payload of %d bytes is over the limit of %d", w.chunk, n, MaxRecordPayload)
	}
	binary.LittleEndian.PutUint32(b[28:], uint32(n))
	w.rec = b
	switch {
	case w.o.held != nil:
		// Kept in the held file for Append, which numbers and seals it.
		c, err := w.o.held.keep(b, w.insts)
		if err != nil {
			return fmt.Errorf("trace: binary writer: keeping chunk %d: %w", w.chunk, err)
		}
		w.held = append(w.held, c)
	case tail:
		w.sealRecord(chunkFixedLen, w.insts)
	default:
		w.sealRecord(chunkFixedLen, nil)
	}
	if w.o.held == nil {
		if err := w.startFrame(tail); err != nil {
			return err
		}
	}
	w.chunk++
	w.insts = w.insts[:0]
	w.n, w.laneOps, w.group, w.warp = 0, 0, 0, 0
	clear(w.index)
	clear(w.byText)
	w.texts = w.texts[:0]
	w.last = nil
	return nil
}

// Close writes the last chunk and the seek table. It does not close the
// underlying writer.
func (w *BinaryWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return nil
	}
	w.done = true
	err := w.flush()
	if werr := w.wait(); err == nil {
		err = werr
	}
	if err != nil {
		w.err = err
		return err
	}
	if w.o.held != nil {
		return nil // no seek table: Append writes the chunks
	}
	w.zbuf = appendSeekTable(w.zbuf[:0], w.entries)
	if _, err := w.w.Write(w.zbuf); err != nil {
		w.err = err
		return err
	}
	return nil
}
