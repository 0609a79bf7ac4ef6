package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"slices"
)

// BinaryIndex is random access to a binary trace through its seek table:
// it knows where every chunk is, so chunks can be read in any order, or
// several ranges in parallel, each with its own BinaryReader.
type BinaryIndex struct {
	ra       io.ReaderAt
	o        readerOptions
	hdr      *Header
	split    *SplitHeader // a split file's header, nil for any other trace
	ver      uint16       // the header's format version
	entries  []seekEntry  // frame 0 is the header, frame i+1 chunk i
	hasCheck bool         // the entries have checksums
	offsets  []int64      // offset of each frame, and the seek table's last
}

// CountChunks returns how many chunks the seek table of the binary trace
// ra (size bytes) lists, from its footer alone: one read of 9 bytes,
// for a caller that sizes its work before it opens the trace (replay's
// heap advice). It checks the footer's magic and nothing else: a file
// that it counts may still be refused by OpenBinaryIndex, which checks
// the table and the frames.
func CountChunks(ra io.ReaderAt, size int64) (int, error) {
	foot, _, err := readSeekFooter(ra, size)
	if err != nil {
		return 0, err
	}
	// Frames: the header's, then a chunk's each.
	return max(int(binary.LittleEndian.Uint32(foot[:]))-1, 0), nil
}

// readSeekFooter reads the seek table's footer, the last seekFooterLen
// bytes of ra (size bytes), and checks its magic. An error says what is
// wrong, at the file offset it returns.
func readSeekFooter(ra io.ReaderAt, size int64) (foot [seekFooterLen]byte, off int64, err error) {
	if size < 8+seekFooterLen {
		return foot, 0, fmt.Errorf("%w: a file of %d bytes has no seek table", errTruncated, size)
	}
	off = size - seekFooterLen
	if _, err := ra.ReadAt(foot[:], off); err != nil {
		return foot, off, fmt.Errorf("reading the footer: %v", err)
	}
	if m := binary.LittleEndian.Uint32(foot[5:]); m != seekableMagic {
		return foot, off, fmt.Errorf("%w: no seek table (last 4 bytes 0x%08x, want the seekable magic 0x%08x)", errTruncated, m, seekableMagic)
	}
	return foot, off, nil
}

// OpenBinaryIndex reads the seek table at the end of a binary trace of the
// given size, then its header frame.
func OpenBinaryIndex(ra io.ReaderAt, size int64, opts ...ReaderOption) (*BinaryIndex, error) {
	o, err := newReaderOptions(opts)
	if err != nil {
		return nil, err
	}
	fail := func(off int64, format string, args ...any) error {
		return &BinaryError{Name: o.name, Chunk: BinaryChunkSeekTable, Offset: off, Err: fmt.Errorf(format, args...)}
	}
	foot, off, err := readSeekFooter(ra, size)
	if err != nil {
		return nil, fail(off, "%w", err)
	}
	esize := int64(8)
	if foot[4]&seekChecksumFlag != 0 {
		esize = seekEntryLen
	}
	n := int64(binary.LittleEndian.Uint32(foot[:]))
	tlen := 8 + n*esize + seekFooterLen
	if tlen > size {
		return nil, fail(size-seekFooterLen, "the footer declares %d frames, more than a file of %d bytes holds", n, size)
	}
	tstart := size - tlen
	table := make([]byte, tlen)
	if _, err := ra.ReadAt(table, tstart); err != nil {
		return nil, fail(tstart, "reading the table: %v", err)
	}
	entries, hasCheck, err := parseSeekTable(table)
	if err != nil {
		return nil, fail(tstart, "%v", err)
	}
	if len(entries) == 0 {
		return nil, fail(tstart, "no frames: the header frame is missing")
	}
	offsets := make([]int64, len(entries)+1)
	for i, e := range entries {
		if e.dsize > maxFrameContent {
			return nil, fail(tstart, "entry %d: frame content of %d bytes, over the limit of %d", i, e.dsize, maxFrameContent)
		}
		offsets[i+1] = offsets[i] + int64(e.csize)
	}
	if offsets[len(entries)] != tstart {
		return nil, fail(tstart, "the frames add up to %d bytes, but the seek table starts at %d", offsets[len(entries)], tstart)
	}
	x := &BinaryIndex{ra: ra, o: o, entries: entries, hasCheck: hasCheck, offsets: offsets}
	fb := &frameBuf{chunk: BinaryChunkHeader, want: entries[0]}
	w := workerPool.Get().(*worker)
	defer workerPool.Put(w)
	if err := x.loadFrame(fb, w); err != nil {
		return nil, o.wrap(BinaryChunkHeader, 0, err)
	}
	x.hdr, x.ver, x.split, err = w.parseHeaderRecord(fb.raw)
	if err != nil {
		return nil, o.wrap(BinaryChunkHeader, 0, err)
	}
	return x, nil
}

// defaultIndexDecoders is half the processors, 1 to 4: the goroutine
// calling Next decodes the records, which for lists takes longer than
// decompressing them, and a replay's own workers need the rest.
func defaultIndexDecoders() int { return min(max(runtime.GOMAXPROCS(0)/2, 1), 4) }

// loadFrame reads, walks and decompresses the frame fb names (chunk, off,
// want), and checks it against its seek table entry. Errors are unplaced.
func (x *BinaryIndex) loadFrame(fb *frameBuf, w *worker) error {
	bound, err := readFrameAt(x.ra, fb)
	if err != nil {
		return err
	}
	fb.bound = bound
	if err := w.decompress(fb); err != nil {
		return err
	}
	return checkEntry(fb, x.hasCheck)
}

// loadPrefix reads the start of the frame fb names (chunk, off, want) and
// decompresses it into fb.raw, as a stream, until n bytes or the end of
// what it read (n and a block more, and the frame's header, at most the
// frame: the blocks that hold the first n bytes, where the frame's data
// is stored or compressed): the start of the chunk's record, whose fixed
// part it parses
// (fb.first, count, laneOps, payload) without a check of the length or
// checksum of the whole, which it does not have. Errors are unplaced.
func (x *BinaryIndex) loadPrefix(fb *frameBuf, w *worker, n int) error {
	size := min(int64(fb.want.csize), int64(n)+zstdMaxBlock+prefixSlack)
	fb.zbuf = slices.Grow(fb.zbuf[:0], int(size))[:size]
	if m, err := x.ra.ReadAt(fb.zbuf, fb.off); m < len(fb.zbuf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("reading the frame: %w", err)
	}
	if cap(fb.raw) < n {
		old := fb.blk
		fb.blk = nil
		fb.raw = make([]byte, 0, n)
		old.Release() // the frame it held is consumed: fb is being refilled
	}
	if err := w.dec.Reset(bytes.NewReader(fb.zbuf)); err != nil {
		return fmt.Errorf("corrupt zstd frame: %v", err)
	}
	// What came before an error (the end of what was read, mid-block) is
	// the prefix; a record past it is the reader's error.
	got, _ := io.ReadFull(w.dec, fb.raw[:n])
	_ = w.dec.Reset(nil) // (the pooled decoder holds no reader)
	raw := fb.raw[:got]
	fb.raw = raw
	if len(raw) < chunkFixedLen || string(raw[:len(chunkMagic)]) != chunkMagic {
		return fmt.Errorf("%w: the first %d bytes of the frame hold no chunk record's fixed part", errTruncated, len(raw))
	}
	if idx := binary.LittleEndian.Uint32(raw[4:]); int64(idx) != int64(fb.chunk) {
		return fmt.Errorf("chunk %d where chunk %d was expected", idx, fb.chunk)
	}
	fb.first = binary.LittleEndian.Uint64(raw[8:])
	fb.count = binary.LittleEndian.Uint32(raw[16:])
	fb.laneOps = binary.LittleEndian.Uint64(raw[20:])
	fb.payload = raw[chunkFixedLen:]
	return nil
}

// prefixSlack is the compressed bytes loadPrefix reads beyond a prefix
// and a block (zstdMaxBlock): the frame's header and its blocks' headers.
const prefixSlack = 4 << 10

// Header returns the regions and initial memory the trace declares.
func (x *BinaryIndex) Header() *Header { return x.hdr }

// NumChunks is the number of chunks in the trace.
func (x *BinaryIndex) NumChunks() int { return len(x.entries) - 1 }

// ChunkOffset returns where chunk i's frame starts in the file and its
// compressed size.
func (x *BinaryIndex) ChunkOffset(i int) (off, size int64) {
	return x.offsets[i+1], int64(x.entries[i+1].csize)
}

// Reader returns a Source over chunks [from, to). Its instructions carry
// their seq in the whole trace. From its first Next, WithDecoders
// goroutines (default half of GOMAXPROCS, 1 to 4) read and decompress
// chunks in parallel, at most WithReadAhead ahead, and Next hands their
// records out in order. Readers are independent: several may run in
// parallel.
func (x *BinaryIndex) Reader(from, to int) (*BinaryReader, error) {
	if from < 0 || to > x.NumChunks() || from > to {
		return nil, fmt.Errorf("trace: chunk range [%d, %d) out of [0, %d)", from, to, x.NumChunks())
	}
	r := newBinaryReader(x.o)
	r.hdr, r.split = x.hdr, x.split
	r.setVersion(x.ver)
	r.chunk, r.stop = from, to
	r.first = from > 0
	so := x.o // the goroutines must not hold r, so that a dropped reader stops
	r.src = &indexSource{o: &so, x: x, from: from, to: to}
	r.bufs, r.decs = x.o.pipelineSize(defaultIndexDecoders())
	r.decs = min(r.decs, max(to-from, 1))
	r.waitDispatch = true
	return r, nil
}

// PrefixReader returns a Source over the records of chunk k that lie in
// the first n bytes of its decompressed frame, of which it reads and
// decompresses no more: a reader that needs only a chunk's first records
// (the sample of replay split's partition map) takes them at a fraction
// of the chunk's cost. They are Reader(k, k+1)'s first records; Next
// fails at the first record that runs past the n bytes, and the chunk's
// checksum, which covers the whole, is not checked. When n holds the
// whole frame it returns Reader(k, k+1), and whole true.
func (x *BinaryIndex) PrefixReader(k, n int) (r *BinaryReader, whole bool, err error) {
	if k < 0 || k >= x.NumChunks() {
		return nil, false, fmt.Errorf("trace: chunk %d out of [0, %d)", k, x.NumChunks())
	}
	if n >= int(x.entries[k+1].dsize) {
		r, err := x.Reader(k, k+1)
		return r, true, err
	}
	if r, err = x.Reader(k, k+1); err != nil {
		return nil, false, err
	}
	r.src.(*indexSource).prefix = max(n, chunkFixedLen)
	return r, false, nil
}
