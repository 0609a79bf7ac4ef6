package trace

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
)

// BinaryIndex is random access to a binary trace through its seek table:
// it knows where every chunk is, so chunks can be read in any order, or
// several ranges in parallel, each with its own BinaryReader.
type BinaryIndex struct {
	ra      io.ReaderAt
	o       readerOptions
	hdr     *Header
	ver     uint16      // the header's format version
	entries []seekEntry // frame 0 is the header, frame i+1 chunk i
	offsets []int64     // offset of each frame, and the seek table's last
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
	if size < 8+seekFooterLen {
		return nil, fail(0, "%w: a file of %d bytes has no seek table", errTruncated, size)
	}
	var foot [seekFooterLen]byte
	if _, err := ra.ReadAt(foot[:], size-seekFooterLen); err != nil {
		return nil, fail(size-seekFooterLen, "reading the footer: %v", err)
	}
	if m := binary.LittleEndian.Uint32(foot[5:]); m != seekableMagic {
		return nil, fail(size-seekFooterLen, "%w: no seek table (last 4 bytes 0x%08x, want the seekable magic 0x%08x)", errTruncated, m, seekableMagic)
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
	entries, _, err := parseSeekTable(table)
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
	x := &BinaryIndex{ra: ra, o: o, entries: entries, offsets: offsets}
	hr, err := newReader(io.NewSectionReader(ra, 0, offsets[1]), o, 0)
	if err != nil {
		return nil, err
	}
	hr.stop, hr.want = 0, entries[:1]
	if err := hr.readHeader(); err != nil {
		return nil, err
	}
	if e := entries[0]; e.csize != uint32(len(hr.zbuf)) || e.dsize != uint32(len(hr.raw)) {
		return nil, hr.fail("header frame of %d bytes decompressing to %d, the seek table says %d and %d", len(hr.zbuf), len(hr.raw), e.csize, e.dsize)
	} else if e.check != 0 && e.check != uint32(xxhash.Sum64(hr.raw)) {
		return nil, hr.fail("checksum mismatch (seek table checksum)")
	}
	x.hdr, x.ver = hr.hdr, hr.ver
	return x, nil
}

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
// their seq in the whole trace. Readers are independent: several may run in
// parallel.
func (x *BinaryIndex) Reader(from, to int) (*BinaryReader, error) {
	if from < 0 || to > x.NumChunks() || from > to {
		return nil, fmt.Errorf("trace: chunk range [%d, %d) out of [0, %d)", from, to, x.NumChunks())
	}
	start, end := x.offsets[from+1], x.offsets[to+1]
	r, err := newReader(io.NewSectionReader(x.ra, start, end-start), x.o, start)
	if err != nil {
		return nil, err
	}
	r.hdr, r.ver = x.hdr, x.ver
	r.chunk, r.stop, r.want = from, to, x.entries[from+1:to+1]
	r.first = from > 0
	return r, nil
}
