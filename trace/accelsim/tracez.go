package accelsim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/gpureplay/replay/trace"
	"github.com/klauspost/compress/zstd"
)

// A .tracez (tracez_format.h; doc.go): the kernel header text and a NUL,
// u32 dict_size, u32 subchunk_insts, the dictionary, the warps' sub-chunks,
// the index footer, and the footer's u64 offset in the last 8 bytes.

// maxSubchunk bounds one sub-chunk's text: the writer's default is 2048
// lines (TRACEZ_SUBCHUNK_INSTS) of at most MaxLine bytes.
const maxSubchunk = 1 << 28

// tzWarp is a warp's index entry.
type tzWarp struct {
	insts  uint32
	offset uint64
	counts []uint32 // lines per sub-chunk
}

// tzBlock is a thread block's index entry.
type tzBlock struct {
	xyz   [3]uint64
	warps []tzWarp
}

// tracezKernel reads one .tracez: its index first (it says which block
// each warp's sub-chunks belong to), then each warp's sub-chunks in index
// order, one at a time.
type tracezKernel struct {
	p      parser
	f      *os.File
	size   int64
	dec    *zstd.Decoder
	blocks []tzBlock
	b, w   int    // the block and warp being read
	sc     int    // the warp's next sub-chunk
	off    int64  // where the warp's next sub-chunk's size is
	text   []byte // the rest of the current sub-chunk's text
	lines  int    // lines left in it
	line   int    // lines of the warp read
	tbuf   []byte // the sub-chunk's text
	buf    []byte // its compressed bytes
}

func (k *tracezKernel) parserOf() *parser { return &k.p }
func (k *tracezKernel) close() error {
	if k.dec != nil {
		k.dec.Close()
	}
	return k.f.Close()
}

func (k *tracezKernel) errAt(off int64, field, format string, args ...any) error {
	return &Error{File: k.p.file, Offset: off, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func newTracezKernel(f *os.File, name string) (*tracezKernel, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	k := &tracezKernel{p: parser{file: name}, f: f, size: fi.Size()}
	// The header text, up to its NUL.
	const maxHeader = 1 << 20
	hb := make([]byte, min(k.size, maxHeader))
	if _, err := f.ReadAt(hb, 0); err != nil && err != io.EOF {
		return nil, err
	}
	nul := bytes.IndexByte(hb, 0)
	if nul < 0 {
		return nil, k.errAt(0, "header", "no NUL ends the kernel header in its first %d bytes: not a .tracez", len(hb))
	}
	for i, line := range bytes.Split(hb[:nul], []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] == '-' {
			if err := k.p.header(line, i+1); err != nil {
				return nil, err
			}
		}
	}
	k.p.read = int64(nul + 1)
	off := int64(nul + 1)
	var fixed [8]byte
	if _, err := f.ReadAt(fixed[:], off); err != nil {
		return nil, k.errAt(off, "dict_size", "the file ends before the compression header: truncated")
	}
	dictSize := int64(binary.LittleEndian.Uint32(fixed[:]))
	off += 8
	if dictSize > k.size-off {
		return nil, k.errAt(off-8, "dict_size", "%d bytes of dictionary, but %d bytes follow", dictSize, k.size-off)
	}
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxSubchunk), zstd.WithDecoderMaxWindow(1 << 27)}
	if dictSize > 0 {
		dict := make([]byte, dictSize)
		if _, err := f.ReadAt(dict, off); err != nil {
			return nil, k.errAt(off, "dictionary", "%v", err)
		}
		opts = append(opts, zstd.WithDecoderDicts(dict))
	}
	dec, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return nil, k.errAt(off, "dictionary", "not a zstd dictionary: %v", err)
	}
	k.dec = dec
	if err := k.readIndex(); err != nil {
		dec.Close()
		return nil, err
	}
	k.w = -1
	return k, nil
}

// readIndex reads the index footer.
func (k *tracezKernel) readIndex() error {
	if k.size < 12 {
		return k.errAt(k.size, "index_offset", "the file ends before its index footer: truncated")
	}
	var b8 [8]byte
	if _, err := k.f.ReadAt(b8[:], k.size-8); err != nil {
		return err
	}
	at := int64(binary.LittleEndian.Uint64(b8[:]))
	end := k.size - 8
	if at < 0 || at > end-4 {
		return k.errAt(k.size-8, "index_offset", "%d is outside the file (%d bytes): truncated or not a .tracez", at, k.size)
	}
	idx := make([]byte, end-at)
	if _, err := k.f.ReadAt(idx, at); err != nil {
		return err
	}
	pos := 0
	u32 := func(field string) (uint32, error) {
		if pos+4 > len(idx) {
			return 0, k.errAt(at+int64(pos), field, "the index ends early")
		}
		v := binary.LittleEndian.Uint32(idx[pos:])
		pos += 4
		return v, nil
	}
	nb, err := u32("num_tbs")
	if err != nil {
		return err
	}
	if int(nb) > len(idx)/44 {
		return k.errAt(at, "num_tbs", "%d blocks cannot fit the %d-byte index", nb, len(idx))
	}
	k.blocks = make([]tzBlock, nb)
	for i := range k.blocks {
		var f [11]uint32
		for j := range f {
			if f[j], err = u32("tb_index"); err != nil {
				return err
			}
		}
		blk := &k.blocks[i]
		blk.xyz = [3]uint64{uint64(f[0]), uint64(f[1]), uint64(f[2])}
		nw := f[10]
		if int(nw) > (len(idx)-pos)/16 {
			return k.errAt(at+int64(pos), "warp_count", "%d warps cannot fit the rest of the index", nw)
		}
		blk.warps = make([]tzWarp, nw)
		for j := range blk.warps {
			w := &blk.warps[j]
			if w.insts, err = u32("inst_count"); err != nil {
				return err
			}
			nsc, err := u32("num_subchunks")
			if err != nil {
				return err
			}
			if pos+8 > len(idx) {
				return k.errAt(at+int64(pos), "file_offset", "the index ends early")
			}
			w.offset = binary.LittleEndian.Uint64(idx[pos:])
			pos += 8
			if int(nsc) > (len(idx)-pos)/4 {
				return k.errAt(at+int64(pos), "num_subchunks", "%d sub-chunks cannot fit the rest of the index", nsc)
			}
			w.counts = make([]uint32, nsc)
			var sum uint64
			for s := range w.counts {
				if w.counts[s], err = u32("subchunk_inst_counts"); err != nil {
					return err
				}
				sum += uint64(w.counts[s])
			}
			if sum != uint64(w.insts) {
				return k.errAt(at+int64(pos), "subchunk_inst_counts", "sub-chunks of %d lines for a warp of %d", sum, w.insts)
			}
			if w.offset >= uint64(at) {
				return k.errAt(at+int64(pos), "file_offset", "%d is not before the index (%d)", w.offset, at)
			}
		}
	}
	if pos != len(idx) {
		return k.errAt(at+int64(pos), "index", "%d bytes after the last block's entry", len(idx)-pos)
	}
	return nil
}

func (k *tracezKernel) next() (*trace.Inst, error) {
	for {
		if k.lines > 0 {
			nl := bytes.IndexByte(k.text, '\n')
			var line []byte
			if nl < 0 {
				line, k.text = k.text, nil
			} else {
				line, k.text = k.text[:nl], k.text[nl+1:]
			}
			k.lines--
			k.line++
			in, err := k.p.inst(bytes.TrimRight(line, " \r"), 0)
			if err != nil {
				if e, ok := err.(*Error); ok {
					e.Msg = fmt.Sprintf("block %d warp %d, the warp's line %d: %s", k.p.group, k.w, k.line, e.Msg)
				}
				return nil, err
			}
			if in != nil {
				return in, nil
			}
			continue
		}
		if len(k.text) > 0 {
			return nil, k.errAt(k.off, "subchunk", "a sub-chunk of warp %d holds more lines than the index says", k.w)
		}
		if err := k.nextSubchunk(); err != nil {
			return nil, err
		}
	}
}

// nextSubchunk decompresses the next sub-chunk, moving to the next warp
// and block as each ends; io.EOF after the last.
func (k *tracezKernel) nextSubchunk() error {
	for k.b < len(k.blocks) && (k.w < 0 || k.sc >= len(k.blocks[k.b].warps[k.w].counts)) {
		blk := &k.blocks[k.b]
		if k.w+1 < len(blk.warps) {
			k.w++
		} else {
			k.b, k.w = k.b+1, -1
			continue
		}
		if k.w == 0 {
			if err := k.p.block(blk.xyz, 0, 0); err != nil {
				return err
			}
		}
		k.p.warp, k.line = int64(k.w), 0
		w := &blk.warps[k.w]
		var hdr [8]byte
		off := int64(w.offset)
		if _, err := k.f.ReadAt(hdr[:], off); err != nil {
			return k.errAt(off, "warp header", "the file ends: truncated")
		}
		if binary.LittleEndian.Uint32(hdr[:]) != w.insts || int(binary.LittleEndian.Uint32(hdr[4:])) != len(w.counts) {
			return k.errAt(off, "warp header", "inst_count %d and num_subchunks %d, the index says %d and %d", binary.LittleEndian.Uint32(hdr[:]), binary.LittleEndian.Uint32(hdr[4:]), w.insts, len(w.counts))
		}
		k.off, k.sc = off+8, 0
	}
	if k.b >= len(k.blocks) {
		return io.EOF
	}
	w := &k.blocks[k.b].warps[k.w]
	var b4 [4]byte
	if _, err := k.f.ReadAt(b4[:], k.off); err != nil {
		return k.errAt(k.off, "subchunk size", "the file ends: truncated")
	}
	n := int64(binary.LittleEndian.Uint32(b4[:]))
	if n > k.size-k.off-4 {
		return k.errAt(k.off, "subchunk size", "%d bytes, but %d remain: truncated", n, k.size-k.off-4)
	}
	if int64(cap(k.buf)) < n {
		k.buf = make([]byte, n)
	}
	comp := k.buf[:n]
	if _, err := k.f.ReadAt(comp, k.off+4); err != nil {
		return k.errAt(k.off+4, "subchunk", "%v", err)
	}
	text, err := k.dec.DecodeAll(comp, k.tbuf[:0])
	if err != nil {
		return k.errAt(k.off+4, "subchunk", "zstd: %v", err)
	}
	k.tbuf = text
	k.p.read += int64(len(text))
	k.text, k.lines = text, int(w.counts[k.sc])
	k.off += 4 + n
	k.sc++
	if k.lines > 0 && len(text) == 0 {
		return k.errAt(k.off, "subchunk", "an empty sub-chunk for %d lines", k.lines)
	}
	return nil
}
