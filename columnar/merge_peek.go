package columnar

import "encoding/binary"

// peekHeader is the bytes firstDelta reads first: a data page's header
// (with its statistics) and, for a page of a run of sequence numbers, the
// page's few bytes with it.
const peekHeader = 512

// firstDelta returns the first value of column col of the file's first
// row group with rows, from the header of its first data page, a
// DELTA_BINARY_PACKED one (an instructions file's seq): one small read
// and one page decompressed, not the row group decoded. ok is false when
// the file has no rows, or the column's first page is not such a page,
// or does not parse: the caller then reads the row group, which says
// what is wrong with it. It must not run while the file's records are
// read (it uses the file's buffers).
func (p *pqFile) firstDelta(col int) (first uint64, ok bool) {
	if col < 0 || col >= len(p.leaves) || (p.leaves[col].typ != ptInt64 && p.leaves[col].typ != ptInt32) {
		return 0, false
	}
	for rg := range p.rgs {
		g := &p.rgs[rg]
		if g.rows == 0 {
			continue
		}
		if col >= len(g.chunks) {
			return 0, false
		}
		c := &g.chunks[col]
		if c.external || c.dictOffset > 0 || (c.codec != codecZstd && c.codec != codecNone) ||
			c.dataOffset < 4 || c.size <= 0 || c.dataOffset > p.size || c.size > p.size-c.dataOffset {
			return 0, false
		}
		n := min(c.size, peekHeader)
		if int64(cap(p.buf)) < n {
			p.buf = make([]byte, n)
		}
		buf := p.buf[:n]
		if _, err := p.f.ReadAt(buf, c.dataOffset); err != nil {
			return 0, false
		}
		r := &thriftReader{b: buf}
		h := readPageHeader(r)
		if r.err != nil || h.typ != pqDataPage || h.enc != pqDelta || h.size < 0 || h.raw < 0 ||
			int64(r.off)+int64(h.size) > c.size || int(h.raw) > p.limits.pageBytes {
			return 0, false
		}
		if end := int64(r.off) + int64(h.size); end > n {
			if int64(cap(p.buf)) < end {
				p.buf = make([]byte, end)
			}
			buf = p.buf[:end]
			if _, err := p.f.ReadAt(buf, c.dataOffset); err != nil {
				return 0, false
			}
		}
		vals, err := p.decompress(c.codec, buf[r.off:r.off+int(h.size)], int(h.raw))
		if err != nil {
			return 0, false
		}
		// The page's header: block size, miniblocks a block and values
		// (uvarints), then the first value (zigzag varint).
		for range 3 {
			_, k := binary.Uvarint(vals)
			if k <= 0 {
				return 0, false
			}
			vals = vals[k:]
		}
		v, k := binary.Varint(vals)
		if k <= 0 {
			return 0, false
		}
		if p.leaves[col].typ == ptInt32 {
			return uint64(uint32(v)), true
		}
		return uint64(v), true
	}
	return 0, false
}
