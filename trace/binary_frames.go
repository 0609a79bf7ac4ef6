package trace

// The frame layer of the binary reader: finding a frame's bytes (walking a
// stream, or reading the seek table's extent of a file), decompressing it
// and checking the record's fixed part; and the pipeline that does this on
// other goroutines, ahead of the consumer, handing frames out in trace
// order. The consumer side (static tables, records) is binary_reader.go.
//
// Who does what:
//
//	dispatcher (one goroutine)  stream: reads each frame's bytes in order
//	                            (frame and block headers, no decompression),
//	                            then the seek table and what follows it;
//	                            index: names the next chunk's extent.
//	decompressors (N)           index: read the frame (ReadAt); both: walk
//	                            it, decompress it, check it against the seek
//	                            table entry (index), check the record's magic,
//	                            length, checksum, chunk index and count.
//	consumer (Next's caller)    takes frames in trace order, checks seq
//	                            continuity, parses the static table, decodes
//	                            records, checks the chunk's end.
//
// Every frame goes through the order channel in trace order, with its
// problem if it has one; the consumer meets a frame's problem only after
// it has handed out every record of the frames before it, so the first
// error reported is the one a reader going frame by frame reports. At most
// bufs frames are held at once (buffers come from a fixed free list): the
// one the consumer decodes and those read or decompressed ahead of it.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/gpureplay/replay/internal/offheap"
)

// frameBuf is one frame on its way to the consumer, with its buffers.
type frameBuf struct {
	chunk int   // the chunk index, or BinaryChunkSeekTable for a stream's end
	off   int64 // offset in the file of the frame
	zbuf  []byte
	raw   []byte
	// blk holds raw when raw is large (offheap.HugeMin or more): mapped
	// outside the Go heap, released when raw grows, and unmapped by the
	// collector once the buffer leaves framePool.
	blk   *offheap.Block
	bound int       // most the frame can decompress to
	want  seekEntry // index reader: the frame's seek table entry
	entry seekEntry // the frame as read (stream: checked at the seek table)
	err   error     // the frame's problem, a *BinaryError

	// A chunk record's fixed fields, once checked.
	first   uint64
	count   uint32
	laneOps uint64
	payload []byte

	// A stream's end: the seek table's entries, which the consumer checks
	// against the frames it took, and a problem after the table.
	table    []seekEntry
	hasCheck bool
	trailing error

	done chan struct{} // one token when the frame is ready
}

func (o *readerOptions) errAt(chunk int, off int64, format string, args ...any) error {
	return &BinaryError{Name: o.name, Chunk: chunk, Offset: off, Err: fmt.Errorf(format, args...)}
}

// wrap places err, unless it is already a *BinaryError.
func (o *readerOptions) wrap(chunk int, off int64, err error) error {
	var be *BinaryError
	if errors.As(err, &be) {
		return err
	}
	return &BinaryError{Name: o.name, Chunk: chunk, Offset: off, Err: err}
}

// errClosed is the problem of a reader used after Close.
var errClosed = errors.New("the reader is closed")

const (
	frameZstd = iota
	frameSkippable
	frameEOF
)

// walkFrame walks a zstd frame after its magic: the frame header, read
// with klauspost's zstd.Header, and every block header (RFC 8878 section
// 3.1.1), taking each block's bytes without decompressing them. It returns
// an upper bound of the decompressed size. take returns the frame's next n
// bytes, valid until its next call.
func walkFrame(take func(n int) ([]byte, error)) (bound int, err error) {
	b, err := take(1)
	if err != nil {
		return 0, err
	}
	fhd := b[0]
	// The header's length is all zstd.Header cannot say before it has the
	// bytes: the descriptor's fields (RFC 8878 section 3.1.1.1.1).
	n := [4]int{0, 1, 2, 4}[fhd&3] + [4]int{0, 2, 4, 8}[fhd>>6]
	switch {
	case fhd&0x20 == 0:
		n++ // Window_Descriptor
	case fhd>>6 == 0:
		n++ // a single segment has a 1-byte Frame_Content_Size
	}
	rest, err := take(n)
	if err != nil {
		return 0, err
	}
	var hdr [zstd.HeaderMaxSize]byte
	binary.LittleEndian.PutUint32(hdr[:], zstdFrameMagic)
	hdr[4] = fhd
	m := 5 + copy(hdr[5:], rest)
	var h zstd.Header
	if err := h.Decode(hdr[:m]); err != nil {
		return 0, fmt.Errorf("zstd frame header: %w", err)
	}
	if h.DictionaryID != 0 {
		return 0, fmt.Errorf("zstd frame needs dictionary %d; binary traces use none", h.DictionaryID)
	}
	if h.HasFCS && h.FrameContentSize > maxFrameContent {
		return 0, fmt.Errorf("frame declares %d decompressed bytes, over the limit of %d", h.FrameContentSize, maxFrameContent)
	}
	window := h.WindowSize
	if h.SingleSegment {
		window = h.FrameContentSize
	}
	if window > maxWindow {
		return 0, fmt.Errorf("zstd window of %d bytes is over the limit of %d", window, maxWindow)
	}
	blocks, err := walkBlocks(take)
	if err != nil {
		return 0, err
	}
	if h.HasCheckSum {
		if _, err := take(4); err != nil {
			return 0, err
		}
	}
	if h.HasFCS {
		if h.FrameContentSize > blocks {
			return 0, fmt.Errorf("frame declares %d decompressed bytes, its blocks hold at most %d", h.FrameContentSize, blocks)
		}
		blocks = h.FrameContentSize
	}
	if blocks > maxFrameContent {
		return 0, fmt.Errorf("frame decompresses to over %d bytes", maxFrameContent)
	}
	return int(blocks), nil
}

// walkBlocks takes a frame's blocks (RFC 8878 section 3.1.1.2) up to the
// last, and returns the most they can decompress to.
func walkBlocks(take func(n int) ([]byte, error)) (blocks uint64, err error) {
	for {
		b, err := take(3)
		if err != nil {
			return 0, err
		}
		v := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		last, typ, size := v&1 != 0, (v>>1)&3, int(v>>3)
		if size > zstdMaxBlock {
			return 0, fmt.Errorf("zstd block of %d bytes, over the maximum %d", size, zstdMaxBlock)
		}
		switch typ {
		case 0: // raw
			_, err = take(size)
			blocks += uint64(size)
		case 1: // RLE
			_, err = take(1)
			blocks += uint64(size)
		case 2: // compressed
			_, err = take(size)
			blocks += zstdMaxBlock
		default:
			return 0, errors.New("zstd block of reserved type 3")
		}
		if err != nil {
			return 0, err
		}
		if last {
			break
		}
	}
	return blocks, nil
}

// streamIn reads frames from an io.Reader, in order, never seeking.
type streamIn struct {
	br   *bufio.Reader
	off  int64         // bytes consumed from the input
	fb   *frameBuf     // the frame being read
	quit chan struct{} // once the pipeline runs: closed when it stops
}

// take reads n more bytes of the current frame onto its zbuf. The buffer
// grows only as bytes arrive, so a truncated file cannot make it allocate
// ahead.
func (s *streamIn) take(n int) ([]byte, error) {
	fb := s.fb
	start := len(fb.zbuf)
	if start+n > maxFrameBytes {
		return nil, fmt.Errorf("frame is over %d bytes", maxFrameBytes)
	}
	select {
	case <-s.quit:
		return nil, errClosed
	default:
	}
	if start+n > cap(fb.zbuf) {
		// Double: a frame arrives in many small takes.
		z := make([]byte, start, min(max(start+n, 2*cap(fb.zbuf), 4<<10), maxFrameBytes))
		copy(z, fb.zbuf)
		fb.zbuf = z
	}
	fb.zbuf = fb.zbuf[:start+n]
	m, err := io.ReadFull(s.br, fb.zbuf[start:])
	s.off += int64(m)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%w: the file ends %d bytes into the frame", errTruncated, s.off-fb.off)
		}
		return nil, err
	}
	return fb.zbuf[start:], nil
}

// readFrame reads the next frame's magic into fb and, for a zstd frame,
// the whole frame. It returns the kind, and for a zstd frame an upper
// bound of its decompressed size. A skippable frame is left after its
// magic. Errors are unplaced.
func (s *streamIn) readFrame(fb *frameBuf, header bool) (kind int, bound int, err error) {
	s.fb = fb
	fb.off = s.off
	fb.zbuf = fb.zbuf[:0]
	if _, err := s.br.Peek(1); err == io.EOF {
		return frameEOF, 0, nil
	}
	b, err := s.take(4)
	if err != nil {
		return 0, 0, err
	}
	magic := binary.LittleEndian.Uint32(b)
	if magic&skippableMagicMask == skippableMagicBase {
		return frameSkippable, 0, nil
	}
	if magic != zstdFrameMagic {
		if header {
			return 0, 0, fmt.Errorf("not a binary trace: magic 0x%08x, want the zstd frame magic 0x%08x", magic, zstdFrameMagic)
		}
		return 0, 0, fmt.Errorf("not a zstd frame: magic 0x%08x, want 0x%08x", magic, zstdFrameMagic)
	}
	bound, err = walkFrame(s.take)
	return frameZstd, bound, err
}

// readFrameAt reads the frame at fb.off of the seek table's size fb.want
// into fb and walks it. zbuf is then the walked frame, which may be shorter
// than the table says (the caller's check against the entry tells).
func readFrameAt(ra io.ReaderAt, fb *frameBuf) (bound int, err error) {
	size := int64(fb.want.csize)
	if size > maxFrameBytes {
		return 0, fmt.Errorf("the seek table gives the frame %d bytes, over the limit of %d", size, maxFrameBytes)
	}
	fb.zbuf = slices.Grow(fb.zbuf[:0], int(size))[:size]
	if n, err := ra.ReadAt(fb.zbuf, fb.off); n < len(fb.zbuf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, fmt.Errorf("reading the frame: %w", err)
	}
	at := 0
	take := func(n int) ([]byte, error) {
		if n > len(fb.zbuf)-at {
			return nil, fmt.Errorf("%w: the frame runs past the %d bytes the seek table gives it", errTruncated, len(fb.zbuf))
		}
		at += n
		return fb.zbuf[at-n : at], nil
	}
	b, err := take(4)
	if err != nil {
		return 0, err
	}
	switch magic := binary.LittleEndian.Uint32(b); {
	case magic&skippableMagicMask == skippableMagicBase:
		return 0, fmt.Errorf("skippable frame where chunk %d was expected", fb.chunk)
	case magic != zstdFrameMagic && fb.chunk == BinaryChunkHeader:
		return 0, fmt.Errorf("not a binary trace: magic 0x%08x, want the zstd frame magic 0x%08x", magic, zstdFrameMagic)
	case magic != zstdFrameMagic:
		return 0, fmt.Errorf("not a zstd frame: magic 0x%08x, want 0x%08x", magic, zstdFrameMagic)
	}
	bound, err = walkFrame(take)
	fb.zbuf = fb.zbuf[:at]
	return bound, err
}

// worker is what decompressing takes: a zstd decoder and a hash.
type worker struct {
	dec *zstd.Decoder
	dig *xxhash.Digest
}

// workers are pooled: a decoder's tables and history are worth keeping
// between readers.
//
// The decoder does not verify a frame's content checksum: every record a
// frame holds (the header, a chunk) carries its own XXH64 of its bytes,
// which checkRecord verifies, so the frame's 32-bit checksum would hash
// the same bytes a second time (BenchmarkLimit/uniform-1Mi/reader).
// checkEntry still
// compares the checksum the frame stores with the seek table's.
var workerPool = sync.Pool{New: func() any {
	dec, err := zstd.NewReader(nil,
		zstd.IgnoreChecksum(true),
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(maxWindow),
		zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(err) // fixed, valid options
	}
	return &worker{dec: dec, dig: xxhash.New()}
}}

// decompress inflates fb.zbuf into fb.raw, allocating no more than the
// frame's bound, and sets fb.entry. Errors are unplaced.
func (w *worker) decompress(fb *frameBuf) error {
	if cap(fb.raw) < fb.bound {
		// A quarter more than the last frame needed, so that frames
		// slightly larger than the one before do not each allocate. A
		// large one lies on huge pages, outside the Go heap
		// (offheap.Block): the first frames of a reader's buffers were
		// most of the page faults a hot counter's replay took (~960 of
		// 2900), and in the heap each one's huge-page padding raised the
		// collector's goal by 2 MiB.
		n := max(fb.bound, min(cap(fb.raw)+cap(fb.raw)/4, maxFrameContent))
		old := fb.blk
		fb.blk = nil
		if n >= offheap.HugeMin {
			fb.blk = offheap.NewBlock(n)
			fb.raw = fb.blk.Bytes()[:0]
		} else {
			fb.raw = make([]byte, 0, n)
		}
		old.Release() // the frame it held is consumed: fb is being refilled
	}
	out, err := w.dec.DecodeAll(fb.zbuf, fb.raw[:0])
	if err != nil {
		return fmt.Errorf("corrupt zstd frame: %v", err)
	}
	fb.raw = out
	fb.entry = seekEntry{csize: uint32(len(fb.zbuf)), dsize: uint32(len(out))}
	// The seek table's checksum is the low 32 bits of the XXH64 of the
	// decompressed frame, which is exactly the zstd content checksum: when
	// the frame has one, the table's is compared with it, and the record's
	// own checksum (checkRecord) verifies the content.
	if len(fb.zbuf) >= 4+4 && fb.zbuf[4]&0x04 != 0 {
		fb.entry.check = binary.LittleEndian.Uint32(fb.zbuf[len(fb.zbuf)-4:])
	} else {
		fb.entry.check = uint32(xxhash.Sum64(out))
	}
	return nil
}

// checkEntry checks the frame just decompressed against its seek table
// entry; hasCheck says whether the table has checksums.
func checkEntry(fb *frameBuf, hasCheck bool) error {
	e, w := fb.entry, fb.want
	if w.csize != e.csize || w.dsize != e.dsize {
		what := "frame"
		if fb.chunk == BinaryChunkHeader {
			what = "header frame"
		}
		return fmt.Errorf("%s of %d bytes decompressing to %d, the seek table says %d and %d", what, e.csize, e.dsize, w.csize, w.dsize)
	}
	if hasCheck && w.check != e.check {
		return errors.New("checksum mismatch (seek table checksum)")
	}
	return nil
}

// checkRecord checks the payload length and checksum of the record in raw
// with the given fixed part.
func (w *worker) checkRecord(raw []byte, fixed int) error {
	if n := binary.LittleEndian.Uint32(raw[fixed-12:]); int64(n) != int64(len(raw)-fixed) {
		return fmt.Errorf("payload length %d, but the frame holds %d payload bytes", n, len(raw)-fixed)
	}
	w.dig.Reset()
	_, _ = w.dig.Write(raw[:fixed-8])
	_, _ = w.dig.Write(raw[fixed:])
	if w.dig.Sum64() != binary.LittleEndian.Uint64(raw[fixed-8:]) {
		return errors.New("checksum mismatch")
	}
	return nil
}

// checkChunk checks the chunk record in fb.raw as far as it can alone:
// magic, length, checksum, index, count. Seq continuity needs the chunks
// before it and is the consumer's. Errors are unplaced.
func (w *worker) checkChunk(fb *frameBuf) error {
	raw := fb.raw
	if len(raw) >= len(headerMagic) && string(raw[:len(headerMagic)]) == headerMagic {
		return fmt.Errorf("a second header where chunk %d was expected", fb.chunk)
	}
	if len(raw) < len(chunkMagic) || string(raw[:len(chunkMagic)]) != chunkMagic {
		return fmt.Errorf("bad chunk magic %q, want %q", raw[:min(len(raw), len(chunkMagic))], chunkMagic)
	}
	if len(raw) < chunkFixedLen {
		return fmt.Errorf("%w: chunk record of %d bytes, its fixed part is %d", errTruncated, len(raw), chunkFixedLen)
	}
	if err := w.checkRecord(raw, chunkFixedLen); err != nil {
		return err
	}
	idx := binary.LittleEndian.Uint32(raw[4:])
	fb.first = binary.LittleEndian.Uint64(raw[8:])
	fb.count = binary.LittleEndian.Uint32(raw[16:])
	fb.laneOps = binary.LittleEndian.Uint64(raw[20:])
	fb.payload = raw[chunkFixedLen:]
	if int64(idx) != int64(fb.chunk) {
		return fmt.Errorf("chunk %d where chunk %d was expected", idx, fb.chunk)
	}
	if fb.count == 0 || fb.count > MaxChunkInsts {
		return fmt.Errorf("the chunk declares %d records, want 1..%d", fb.count, MaxChunkInsts)
	}
	if uint64(fb.count)*minInstBytes > uint64(len(fb.payload)) {
		return fmt.Errorf("%d records cannot fit in a payload of %d bytes", fb.count, len(fb.payload))
	}
	return nil
}

// parseHeaderRecord checks the header record in raw and parses it. Errors
// are unplaced.
func (w *worker) parseHeaderRecord(raw []byte) (*Header, uint16, *SplitHeader, error) {
	if len(raw) < len(headerMagic) || string(raw[:len(headerMagic)]) != headerMagic {
		return nil, 0, nil, fmt.Errorf("bad magic %q, want %q: not a replay binary trace", raw[:min(len(raw), len(headerMagic))], headerMagic)
	}
	if len(raw) < headerFixedLen {
		return nil, 0, nil, fmt.Errorf("%w: header record of %d bytes, its fixed part is %d", errTruncated, len(raw), headerFixedLen)
	}
	v := binary.LittleEndian.Uint16(raw[8:])
	f := binary.LittleEndian.Uint16(raw[10:])
	switch split := f&flagSplit != 0; {
	case split && v == 2:
		return nil, 0, nil, fmt.Errorf("a split file of format version 2, written by an older replay split (this replay reads split files of version %d, whose instructions come in blocks): run replay split again", splitFormatVersion)
	case split && v == 3:
		return nil, 0, nil, fmt.Errorf("a split file of format version 3, written by an older replay split (this replay reads split files of version %d, whose instructions without a lane of the partition carry no vectors): run replay split again", splitFormatVersion)
	case split && v == 4:
		return nil, 0, nil, fmt.Errorf("a split file of format version 4, written by an older replay split (this replay reads split files of version %d, whose fold records hold runs of addresses and fixed-width values): run replay split again", splitFormatVersion)
	case split && v == splitFormatVersion:
	case v < formatVersionOldest || v > formatVersion:
		return nil, 0, nil, fmt.Errorf("unsupported format version %d (this reader reads versions %d to %d, and split files of version %d)", v, formatVersionOldest, formatVersion, splitFormatVersion)
	}
	if f&^(headerFlagAddressOnly|flagSplit|flagCombined) != 0 || f&flagSplit != 0 && v < 2 || f&flagCombined != 0 && f&flagSplit == 0 {
		return nil, 0, nil, fmt.Errorf("unknown header flags 0x%04x", f)
	}
	if err := w.checkRecord(raw, headerFixedLen); err != nil {
		return nil, 0, nil, err
	}
	h, split, err := parseHeaderPayload(raw[headerFixedLen:], f&flagSplit != 0)
	if err != nil {
		return nil, 0, nil, err
	}
	h.AddressOnly = f&headerFlagAddressOnly != 0
	if split != nil {
		split.Combined = f&flagCombined != 0
	}
	return h, v, split, nil
}

// frameSource is where a pipeline's frames come from.
type frameSource interface {
	// dispatch hands frames to p in trace order until the last, a problem,
	// or p stops. It runs on its own goroutine.
	dispatch(p *pipeline)
	// work makes a dispatched frame ready: fb.err, or fb.raw a checked
	// chunk record. It runs on a decompressor.
	work(fb *frameBuf, w *worker)
}

// pipeline runs a frameSource ahead of the consumer.
type pipeline struct {
	quit  chan struct{}
	once  sync.Once
	free  chan *frameBuf // buffers not in use
	order chan *frameBuf // frames in trace order, ready or not
	jobs  chan *frameBuf // frames for the decompressors
	wg    sync.WaitGroup // the decompressors, and a dispatcher that never blocks in a Read
}

// startPipeline runs src with bufs frame buffers and n decompressors.
// waitDispatch says whether Close may wait for the dispatcher (it never
// blocks in a Read of the input).
func startPipeline(src frameSource, bufs, n int, waitDispatch bool) *pipeline {
	p := &pipeline{
		quit:  make(chan struct{}),
		free:  make(chan *frameBuf, bufs),
		order: make(chan *frameBuf, bufs),
		jobs:  make(chan *frameBuf, bufs),
	}
	for range bufs {
		p.free <- newFrameBuf()
	}
	for range n {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			w := workerPool.Get().(*worker)
			defer workerPool.Put(w)
			for {
				select {
				case fb := <-p.jobs:
					src.work(fb, w)
					fb.done <- struct{}{}
				case <-p.quit:
					return
				}
			}
		}()
	}
	if waitDispatch {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			src.dispatch(p)
		}()
	} else {
		go src.dispatch(p)
	}
	return p
}

// framePool keeps the buffers of readers that are done for the next
// readers: a frame's buffers are megabytes, and fresh memory must be
// zeroed and faulted in.
var framePool sync.Pool

func newFrameBuf() *frameBuf {
	if fb, ok := framePool.Get().(*frameBuf); ok {
		return fb
	}
	return &frameBuf{done: make(chan struct{}, 1)}
}

// recycle gives the buffers of p (and cur, the consumer's) to framePool.
// It may run only once no goroutine of p can write to a buffer: after the
// consumer took the last frame (every job is done, and the dispatcher
// sent its last frame), or after p stopped and its decompressors ended. A
// dispatcher still running then holds at most a buffer it took from the
// free list, which is not recycled.
func (p *pipeline) recycle(cur *frameBuf) {
	put := func(fb *frameBuf) {
		select {
		case <-fb.done:
		default:
		}
		zbuf, raw, blk, done := fb.zbuf[:0], fb.raw[:0], fb.blk, fb.done
		*fb = frameBuf{zbuf: zbuf, raw: raw, blk: blk, done: done}
		framePool.Put(fb)
	}
	if cur != nil {
		put(cur)
	}
	for {
		select {
		case fb := <-p.free:
			put(fb)
		case fb := <-p.order:
			put(fb)
		default:
			return
		}
	}
}

// stop tells every goroutine of p to return. It does not wait.
func (p *pipeline) stop() { p.once.Do(func() { close(p.quit) }) }

// acquire returns a free buffer, or nil once p stops.
func (p *pipeline) acquire() *frameBuf {
	select {
	case fb := <-p.free:
		fb.err, fb.table, fb.trailing, fb.payload = nil, nil, nil, nil
		return fb
	case <-p.quit:
		return nil
	}
}

// send queues fb for the consumer, and for a decompressor when work is
// set (otherwise fb is ready as it is). It reports false once p stops.
func (p *pipeline) send(fb *frameBuf, work bool) bool {
	if !work {
		fb.done <- struct{}{}
	}
	select {
	case p.order <- fb:
	case <-p.quit:
		return false
	}
	if work {
		select {
		case p.jobs <- fb:
		case <-p.quit:
			return false
		}
	}
	return true
}

// next returns the next frame in trace order once it is ready, or nil
// once p stops.
func (p *pipeline) next() *frameBuf {
	select {
	case fb := <-p.order:
		select {
		case <-fb.done:
			return fb
		case <-p.quit:
			return nil
		}
	case <-p.quit:
		return nil
	}
}

// release gives back a buffer taken with next. It never blocks: there are
// as many places as buffers.
func (p *pipeline) release(fb *frameBuf) { p.free <- fb }

// streamSource reads the frames after the header from a stream.
type streamSource struct {
	o      *readerOptions
	in     *streamIn
	chunk  int // the next chunk
	frames int // frames read, the header included
}

func (s *streamSource) dispatch(p *pipeline) {
	s.in.quit = p.quit
	for {
		fb := p.acquire()
		if fb == nil {
			return
		}
		fb.chunk = s.chunk
		kind, bound, err := s.in.readFrame(fb, false)
		switch {
		case err != nil:
			fb.err = s.o.wrap(s.chunk, fb.off, err)
		case kind == frameEOF:
			fb.err = s.o.errAt(s.chunk, fb.off, "%w: the file ends without a seek table after %d chunks", errTruncated, s.chunk)
		case kind == frameSkippable:
			fb.err = s.readSeekTable(fb)
		default:
			fb.bound = bound
			s.frames++
			s.chunk++
			if !p.send(fb, true) {
				return
			}
			continue
		}
		p.send(fb, false)
		return
	}
}

func (s *streamSource) work(fb *frameBuf, w *worker) {
	if err := w.decompress(fb); err != nil {
		fb.err = s.o.wrap(fb.chunk, fb.off, err)
	} else if err := w.checkChunk(fb); err != nil {
		fb.err = s.o.wrap(fb.chunk, fb.off, err)
	}
}

// readSeekTable reads the seek table frame at the end of a stream, whose
// magic is in fb.zbuf, and checks that nothing follows. The consumer checks
// its entries against the frames.
func (s *streamSource) readSeekTable(fb *frameBuf) error {
	magic := binary.LittleEndian.Uint32(fb.zbuf)
	if magic != seekTableFrameMagic {
		return s.o.errAt(s.chunk, fb.off, "unexpected skippable frame (magic 0x%08x) where chunk %d was expected", magic, s.chunk)
	}
	fb.chunk = BinaryChunkSeekTable
	b, err := s.in.take(4)
	if err != nil {
		return s.o.wrap(fb.chunk, fb.off, err)
	}
	size := int64(binary.LittleEndian.Uint32(b))
	k := int64(s.frames)
	if size != k*seekEntryLen+seekFooterLen && size != k*8+seekFooterLen {
		return s.o.errAt(fb.chunk, fb.off, "seek table frame of %d bytes, but the file has %d frames", size, k)
	}
	if _, err := s.in.take(int(size)); err != nil {
		return s.o.wrap(fb.chunk, fb.off, err)
	}
	entries, hasCheck, err := parseSeekTable(fb.zbuf)
	if err != nil {
		return s.o.errAt(fb.chunk, fb.off, "%v", err)
	}
	if len(entries) != s.frames {
		return s.o.errAt(fb.chunk, fb.off, "%d entries, but the file has %d frames", len(entries), s.frames)
	}
	fb.table, fb.hasCheck = entries, hasCheck
	end := s.in.off
	if _, err := s.in.br.ReadByte(); err != io.EOF {
		if err != nil {
			fb.trailing = s.o.wrap(fb.chunk, end, err)
		} else {
			fb.trailing = s.o.errAt(fb.chunk, end, "trailing data after the seek table")
		}
	}
	return nil
}

// indexSource reads chunks [from, to) of an indexed file, several at once;
// with prefix, only the first prefix bytes of each (PrefixReader).
type indexSource struct {
	o        *readerOptions
	x        *BinaryIndex
	from, to int
	prefix   int
}

func (s *indexSource) dispatch(p *pipeline) {
	for c := s.from; c < s.to; c++ {
		fb := p.acquire()
		if fb == nil {
			return
		}
		fb.chunk, fb.off, fb.want = c, s.x.offsets[c+1], s.x.entries[c+1]
		if !p.send(fb, true) {
			return
		}
	}
}

func (s *indexSource) work(fb *frameBuf, w *worker) {
	if s.prefix > 0 {
		if err := s.x.loadPrefix(fb, w, s.prefix); err != nil {
			fb.err = s.o.wrap(fb.chunk, fb.off, err)
		}
		return
	}
	if err := s.x.loadFrame(fb, w); err != nil {
		fb.err = s.o.wrap(fb.chunk, fb.off, err)
	} else if err := w.checkChunk(fb); err != nil {
		fb.err = s.o.wrap(fb.chunk, fb.off, err)
	}
}
