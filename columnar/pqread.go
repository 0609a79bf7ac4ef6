package columnar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/gpureplay/replay/internal/offheap"
)

// Reading the tables' Parquet files back (merge, diff, and the report),
// a row group at a time, straight into Arrow arrays. The reader knows what
// the writer writes, and what arrow-go wrote for earlier versions of
// replay: flat schemas of required columns (BOOLEAN, INT32 and INT64 with
// their signed or unsigned INTEGER types, STRING byte arrays), V1 data
// pages PLAIN, DELTA_BINARY_PACKED or dictionary-encoded (strings), zstd
// or no compression. Anything else is an error that names the file and
// the column, not a guess.

// pqLeaf is a column of a file's schema.
type pqLeaf struct {
	name      string
	typ       pqType
	rep       int32
	converted int32
	logical   int16 // the LogicalType union's field id, 0 for none
	bits      int8  // INTEGER's
	signed    bool
	dt        arrow.DataType // nil: a type replay does not write
}

// pqChunkInfo is where a column chunk is and what it holds.
type pqChunkInfo struct {
	codec      int32
	values     int64
	dataOffset int64
	dictOffset int64 // 0: none
	size       int64 // its pages' bytes
	raw        int64 // its pages' bytes before compression (headers included)
	external   bool  // in another file (file_path)
	stats      pqStats
}

type pqRowGroup struct {
	rows   int64
	chunks []pqChunkInfo
}

// pqFile is an open Parquet file and its footer.
type pqFile struct {
	path   string
	f      io.ReaderAt
	closer io.Closer
	size   int64 // the file's bytes before the footer
	leaves []pqLeaf
	rgs    []pqRowGroup
	rows   int64
	kv     [][2]string
	dec    *zstd.Decoder // made at the first zstd page
	buf    []byte        // a column chunk's bytes
	// span, when set, is the file's bytes from spanAt on: a row group's
	// column chunks read at once (readSpan), which readChunk takes its
	// chunks' bytes from.
	span   []byte
	spanAt int64
	page   []byte // a page decompressed
	limits readLimits
	// dictStrings reads string columns as Arrow dictionary arrays (int32
	// indices into the chunk's distinct strings: its dictionary page's,
	// then a PLAIN page's each), not a string a row: merge compares and
	// parses a column chunk's few distinct strings once, not its rows'.
	dictStrings bool
	// reuse, when set, holds the fixed-width columns' storage that the
	// reader's caller is done with, for the next row groups' columns
	// (tableReader.recycle); used collects the storage the row group
	// being read takes.
	reuse *wordPool
	used  [][]uint64
}

// wordPool is storage for fixed-width columns to reuse: a merge decodes
// every partition's every row group, and fresh storage each time was a
// page fault every 4 KiB of it. What it has not got, a merge's pool
// carves from slabs on huge pages (alloc, merge_pool.go).
type wordPool struct {
	mu   sync.Mutex
	free [][]uint64
	// slab is what is left of the last of slabs, which alloc carves
	// new storage from (merge_pool.go); released: release unmapped them.
	slab     []uint64
	slabs    []*offheap.Block
	released bool
}

// get returns storage of n words, zeroed when zero is set, if the pool
// has some that large; nil if not.
func (p *wordPool) get(n int64, zero bool) []uint64 {
	if p != nil {
		p.mu.Lock()
		for i, w := range p.free {
			if int64(cap(w)) >= n {
				p.free[i] = p.free[len(p.free)-1]
				p.free = p.free[:len(p.free)-1]
				p.mu.Unlock()
				w = w[:n]
				if zero {
					clear(w)
				}
				return w
			}
		}
		p.mu.Unlock()
	}
	return nil
}

func (p *wordPool) put(ws ...[]uint64) {
	p.mu.Lock()
	p.free = append(p.free, ws...)
	p.mu.Unlock()
}

// dictString is the type of a string column read with dictStrings.
var dictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// readLimits bound what a file may make the reader allocate, whatever its
// footer and page headers claim: a corrupt file is an error, not an
// allocation of what a corrupt count says.
type readLimits struct {
	rows        int64 // rows in a row group (a Writer's batch at most)
	pageBytes   int   // a page's bytes, decompressed
	stringBytes int   // a column chunk's strings, decoded
}

// writerLimits are the limits of what a Writer writes: at most
// MaxBatchRows rows a row group, pages of about a MiB at most (a PLAIN
// string page may end with one long string), and the 2 GiB of strings an
// Arrow string array holds.
func writerLimits() readLimits {
	return readLimits{rows: MaxBatchRows, pageBytes: 64 << 20, stringBytes: math.MaxInt32}
}

// maxFooter bounds the footer a reader loads.
const maxFooter = 256 << 20

// openParquet opens path and reads its footer.
func openParquet(path string) (*pqFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	p, err := newPQFile(path, f, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	p.closer = f
	return p, nil
}

// newPQFile reads the footer of the n bytes of r, the file path.
func newPQFile(path string, r io.ReaderAt, n int64) (*pqFile, error) {
	p := &pqFile{path: path, f: r, limits: writerLimits()}
	if err := p.readFooter(n); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func (p *pqFile) close() {
	if p.dec != nil {
		p.dec.Close()
	}
	if p.closer != nil {
		p.closer.Close()
	}
}

// errNotParquet is a file without Parquet's magic at both ends.
var errNotParquet = errors.New("not a Parquet file (no PAR1 magic at its start and end)")

func (p *pqFile) readFooter(n int64) error {
	if n < 12 {
		return errNotParquet
	}
	var head, tail [8]byte
	if _, err := p.f.ReadAt(head[:4], 0); err != nil {
		return err
	}
	if _, err := p.f.ReadAt(tail[:], n-8); err != nil {
		return err
	}
	if string(head[:4]) != string(parquetMagic) || string(tail[4:]) != string(parquetMagic) {
		return errNotParquet
	}
	flen := int64(binary.LittleEndian.Uint32(tail[:4]))
	if flen > n-12 || flen > maxFooter {
		return fmt.Errorf("footer of %d bytes in a file of %d: the file is cut short or corrupt", flen, n)
	}
	p.size = n - 8 - flen
	foot := make([]byte, flen)
	if _, err := p.f.ReadAt(foot, p.size); err != nil {
		return err
	}
	r := &thriftReader{b: foot}
	var nschema int
	r.fields(func(id int16, typ byte) {
		switch {
		case id == 2 && typ == tcList:
			_, n := r.listHeader()
			for i := 0; i < n && r.err == nil; i++ {
				l := p.readSchemaElement(r)
				if i == 0 {
					nschema = l.children
					continue
				}
				if l.children > 0 {
					r.err = fmt.Errorf("column %q is nested: replay's tables are flat", l.name)
					return
				}
				p.leaves = append(p.leaves, l.pqLeaf)
			}
		case id == 3 && typ == tcI64:
			p.rows = r.i64()
		case id == 4 && typ == tcList:
			_, n := r.listHeader()
			for i := 0; i < n && r.err == nil; i++ {
				p.rgs = append(p.rgs, readRowGroup(r))
			}
		case id == 5 && typ == tcList:
			_, n := r.listHeader()
			for i := 0; i < n && r.err == nil; i++ {
				var k, v string
				r.fields(func(id int16, typ byte) {
					switch {
					case id == 1 && typ == tcBinary:
						k = string(r.binary())
					case id == 2 && typ == tcBinary:
						v = string(r.binary())
					default:
						r.skip(typ)
					}
				})
				p.kv = append(p.kv, [2]string{k, v})
			}
		default:
			r.skip(typ)
		}
	})
	if r.err != nil {
		return fmt.Errorf("footer: %w", r.err)
	}
	if nschema != len(p.leaves) {
		return fmt.Errorf("footer: the schema's root has %d columns, %d follow", nschema, len(p.leaves))
	}
	for _, rg := range p.rgs {
		if len(rg.chunks) != len(p.leaves) {
			return fmt.Errorf("footer: a row group has %d column chunks for %d columns", len(rg.chunks), len(p.leaves))
		}
	}
	return nil
}

type schemaElement struct {
	pqLeaf
	children int
}

func (p *pqFile) readSchemaElement(r *thriftReader) schemaElement {
	l := schemaElement{pqLeaf: pqLeaf{typ: -1, rep: -1, converted: noConverted}}
	r.fields(func(id int16, typ byte) {
		switch {
		case id == 1 && typ == tcI32:
			l.typ = pqType(r.i32())
		case id == 3 && typ == tcI32:
			l.rep = r.i32()
		case id == 4 && typ == tcBinary:
			l.name = string(r.binary())
		case id == 5 && typ == tcI32:
			l.children = int(r.i32())
		case id == 6 && typ == tcI32:
			l.converted = r.i32()
		case id == 10 && typ == tcStruct:
			r.fields(func(id int16, typ byte) {
				l.logical = id
				if id == 10 && typ == tcStruct { // INTEGER
					r.fields(func(id int16, typ byte) {
						switch {
						case id == 1 && typ == tcI8:
							l.bits = int8(r.byte())
						case id == 2 && (typ == tcTrue || typ == tcFalse):
							l.signed = typ == tcTrue
						default:
							r.skip(typ)
						}
					})
					return
				}
				r.skip(typ)
			})
		default:
			r.skip(typ)
		}
	})
	l.dt = l.arrowType()
	return l
}

// arrowType is the Arrow type a column reads as (the types replay
// writes, as pqarrow maps them), or nil.
func (l *pqLeaf) arrowType() arrow.DataType {
	const logString, logInteger = 1, 10
	unsigned := func(conv int32) bool {
		if l.logical == logInteger {
			return !l.signed
		}
		return l.converted == conv
	}
	switch l.typ {
	case ptBoolean:
		return arrow.FixedWidthTypes.Boolean
	case ptInt32:
		if l.logical == logInteger && l.bits != 32 {
			return nil
		}
		if unsigned(convUint32) {
			return arrow.PrimitiveTypes.Uint32
		}
		return arrow.PrimitiveTypes.Int32
	case ptInt64:
		if l.logical == logInteger && l.bits != 64 {
			return nil
		}
		if unsigned(convUint64) {
			return arrow.PrimitiveTypes.Uint64
		}
		return arrow.PrimitiveTypes.Int64
	case ptByteArray:
		if l.logical == logString || l.converted == convUTF8 {
			return arrow.BinaryTypes.String
		}
	}
	return nil
}

func readRowGroup(r *thriftReader) pqRowGroup {
	var rg pqRowGroup
	r.fields(func(id int16, typ byte) {
		switch {
		case id == 1 && typ == tcList:
			_, n := r.listHeader()
			for i := 0; i < n && r.err == nil; i++ {
				rg.chunks = append(rg.chunks, readColumnChunk(r))
			}
		case id == 3 && typ == tcI64:
			rg.rows = r.i64()
		default:
			r.skip(typ)
		}
	})
	return rg
}

func readColumnChunk(r *thriftReader) pqChunkInfo {
	var c pqChunkInfo
	r.fields(func(id int16, typ byte) {
		switch {
		case id == 1 && typ == tcBinary:
			r.binary()
			c.external = true
		case id == 3 && typ == tcStruct:
			r.fields(func(id int16, typ byte) {
				switch {
				case id == 4 && typ == tcI32:
					c.codec = r.i32()
				case id == 5 && typ == tcI64:
					c.values = r.i64()
				case id == 6 && typ == tcI64:
					c.raw = r.i64()
				case id == 7 && typ == tcI64:
					c.size = r.i64()
				case id == 12 && typ == tcStruct:
					c.stats = readStats(r)
				case id == 9 && typ == tcI64:
					c.dataOffset = r.i64()
				case id == 11 && typ == tcI64:
					c.dictOffset = r.i64()
				default:
					r.skip(typ)
				}
			})
		default:
			r.skip(typ)
		}
	})
	return c
}

// readStats reads a Statistics struct: its min_value and max_value (the
// writer's, writeStats; the deprecated min and max it writes beside them
// for a signed order are the same bytes), slices of the footer.
func readStats(r *thriftReader) pqStats {
	st := pqStats{set: true}
	r.fields(func(id int16, typ byte) {
		switch {
		case id == 5 && typ == tcBinary:
			st.max, st.hasMax = r.binary(), true
		case id == 6 && typ == tcBinary:
			st.min, st.hasMin = r.binary(), true
		default:
			r.skip(typ)
		}
	})
	return st
}

// column returns the index of the column called name, or -1.
func (p *pqFile) column(name string) int {
	for i := range p.leaves {
		if p.leaves[i].name == name {
			return i
		}
	}
	return -1
}

// columns returns the indices of the columns called cols, in their
// order; nil cols is every column.
func (p *pqFile) columns(cols []string) ([]int, error) {
	if cols == nil {
		idx := make([]int, len(p.leaves))
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		if idx[i] = p.column(c); idx[i] < 0 {
			return nil, fmt.Errorf("%s: no column %q (is it a replay's table?)", p.path, c)
		}
	}
	return idx, nil
}

// schema is the Arrow schema of the file's columns (all non-nullable).
func (p *pqFile) schema() (*arrow.Schema, error) {
	fs := make([]arrow.Field, len(p.leaves))
	for i := range p.leaves {
		if err := p.check(i); err != nil {
			return nil, err
		}
		fs[i] = arrow.Field{Name: p.leaves[i].name, Type: p.leafType(i)}
	}
	return arrow.NewSchema(fs, nil), nil
}

// leafType is the Arrow type column i reads as: dictString for a string
// column read with dictStrings.
func (p *pqFile) leafType(i int) arrow.DataType {
	if p.dictStrings && p.leaves[i].typ == ptByteArray {
		return dictString
	}
	return p.leaves[i].dt
}

// check reports whether column i is one the reader reads.
func (p *pqFile) check(i int) error {
	l := &p.leaves[i]
	switch {
	case l.dt == nil:
		return fmt.Errorf("column %q has Parquet type %d (converted %d, logical %d): not a type replay writes", l.name, l.typ, l.converted, l.logical)
	case l.rep != repRequired:
		return fmt.Errorf("column %q is optional or repeated: replay writes required columns only", l.name)
	}
	return nil
}

// readColumn reads column col of row group rg as an Arrow array.
func (p *pqFile) readColumn(rg, col int) (arrow.Array, error) {
	if err := p.check(col); err != nil {
		return nil, err
	}
	l, g := &p.leaves[col], &p.rgs[rg]
	c := &g.chunks[col]
	a, err := p.readChunk(l, c, g.rows)
	if err != nil {
		return nil, fmt.Errorf("row group %d, column %q: %w", rg, l.name, err)
	}
	return a, nil
}

// errCorrupt is a column chunk whose pages do not parse.
var errCorrupt = errors.New("corrupt page data")

func (p *pqFile) readChunk(l *pqLeaf, c *pqChunkInfo, rows int64) (arrow.Array, error) {
	switch {
	case c.external:
		return nil, errors.New("the column chunk is in another file (file_path): not a file replay writes")
	case c.codec != codecZstd && c.codec != codecNone:
		return nil, fmt.Errorf("compression codec %d: replay reads zstd and uncompressed pages only", c.codec)
	case c.values != rows:
		return nil, fmt.Errorf("%d values in a row group of %d rows", c.values, rows)
	case rows < 0 || rows > p.limits.rows:
		return nil, fmt.Errorf("a row group of %d rows: replay writes at most %d", rows, p.limits.rows)
	}
	start := c.dataOffset
	if c.dictOffset > 0 && c.dictOffset < start {
		start = c.dictOffset
	}
	if start < 4 || c.size < 0 || start > p.size || c.size > p.size-start { // no sum to overflow
		return nil, fmt.Errorf("column chunk at %d of %d bytes outside the file's %d bytes of pages", start, c.size, p.size)
	}
	var buf []byte
	if start >= p.spanAt && start+c.size <= p.spanAt+int64(len(p.span)) {
		buf = p.span[start-p.spanAt:][:c.size]
	} else {
		if int64(cap(p.buf)) < c.size {
			p.buf = make([]byte, c.size)
		}
		buf = p.buf[:c.size]
		if _, err := p.f.ReadAt(buf, start); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	d := newColDecoder(l, rows, p.limits.stringBytes)
	d.pool = p.reuse
	d.dictMode = p.dictStrings && l.typ == ptByteArray
	if p.reuse != nil {
		defer func() {
			if d.words != nil {
				p.used = append(p.used, d.words)
			}
		}()
	}
	for len(buf) > 0 {
		r := &thriftReader{b: buf}
		h := readPageHeader(r)
		if r.err != nil {
			return nil, fmt.Errorf("page header: %w", r.err)
		}
		buf = buf[r.off:]
		if h.size < 0 || int(h.size) > len(buf) || h.raw < 0 {
			return nil, fmt.Errorf("page of %d bytes, %d left in the chunk", h.size, len(buf))
		}
		if int(h.raw) > p.limits.pageBytes {
			return nil, fmt.Errorf("a page of %d bytes: replay writes pages of at most a few MiB", h.raw)
		}
		data := buf[:h.size]
		buf = buf[h.size:]
		switch h.typ {
		case pqDataPage, pqDictPage:
		case pqDataPageV2:
			return nil, errors.New("a V2 data page: replay writes V1 pages only")
		default:
			continue // an index page, or one this reader does not know: skipped, as the format allows
		}
		vals, err := p.decompress(c.codec, data, int(h.raw))
		if err != nil {
			return nil, err
		}
		if h.typ == pqDictPage {
			err = d.dictionary(vals, int(h.values), h.enc)
		} else {
			err = d.page(vals, int(h.values), h.enc)
		}
		if err != nil {
			return nil, err
		}
	}
	return d.finish()
}

// readSpan reads the bytes of row group rg's column chunks cols in one
// read, for readChunk, when they lie together (the chunks between them
// are no larger than they are): one system call a row group, not one a
// column. A chunk whose place the footer misstates is left to readChunk,
// which says so.
func (p *pqFile) readSpan(rg int, cols []int) error {
	p.span = p.span[:0]
	lo, hi, need := int64(math.MaxInt64), int64(0), int64(0)
	for _, k := range cols {
		c := &p.rgs[rg].chunks[k]
		start := c.dataOffset
		if c.dictOffset > 0 && c.dictOffset < start {
			start = c.dictOffset
		}
		if c.external || start < 4 || c.size < 0 || start > p.size || c.size > p.size-start {
			return nil
		}
		lo, hi, need = min(lo, start), max(hi, start+c.size), need+c.size
	}
	if hi <= lo || hi-lo > 2*need {
		return nil
	}
	if int64(cap(p.span)) < hi-lo {
		p.span = make([]byte, hi-lo)
	}
	p.span, p.spanAt = p.span[:hi-lo], lo
	if _, err := p.f.ReadAt(p.span, lo); err != nil {
		p.span = p.span[:0]
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

type pageHeader struct {
	typ       pqPageType
	raw, size int32
	values    int32
	enc       pqEncoding
}

func readPageHeader(r *thriftReader) pageHeader {
	h := pageHeader{typ: -1}
	sub := func() {
		r.fields(func(id int16, typ byte) {
			switch {
			case id == 1 && typ == tcI32:
				h.values = r.i32()
			case id == 2 && typ == tcI32:
				h.enc = pqEncoding(r.i32())
			default:
				r.skip(typ)
			}
		})
	}
	r.fields(func(id int16, typ byte) {
		switch {
		case id == 1 && typ == tcI32:
			h.typ = pqPageType(r.i32())
		case id == 2 && typ == tcI32:
			h.raw = r.i32()
		case id == 3 && typ == tcI32:
			h.size = r.i32()
		case (id == 5 || id == 7) && typ == tcStruct:
			sub()
		default:
			r.skip(typ)
		}
	})
	return h
}

// decompress returns a page's raw bytes.
func (p *pqFile) decompress(codec int32, data []byte, raw int) ([]byte, error) {
	if codec == codecNone {
		if len(data) != raw {
			return nil, fmt.Errorf("uncompressed page of %d bytes says it has %d", len(data), raw)
		}
		return data, nil
	}
	if p.dec == nil {
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(p.limits.pageBytes)))
		if err != nil {
			return nil, err
		}
		p.dec = dec
	}
	if cap(p.page) < raw {
		p.page = make([]byte, 0, raw)
	}
	out, err := p.dec.DecodeAll(data, p.page[:0])
	if err != nil {
		return nil, fmt.Errorf("zstd page: %w", err)
	}
	if len(out) != raw {
		return nil, fmt.Errorf("zstd page of %d bytes, its header says %d", len(out), raw)
	}
	p.page = out[:0]
	return out, nil
}

// colDecoder builds one column chunk's Arrow array from its pages.
type colDecoder struct {
	l    *pqLeaf
	want int64 // rows
	n    int64 // values so far
	// fixed-width values (booleans: one bit each, as Arrow holds them),
	// or for strings the offsets; words backs them, 8-byte aligned.
	words []uint64
	vals  []byte
	// strings
	offs     []int32
	idx      []uint32 // a dictionary page's indices
	dict     []string
	hasD     bool
	maxBytes int // of strings
	// dictMode: the strings as indices (didx) into dict, which a PLAIN
	// page's strings are appended to (pqFile.dictStrings); ndict is the
	// dictionary page's part of dict.
	dictMode bool
	didx     []int32
	ndict    int
	pool     *wordPool // pqFile.reuse
	delta    deltaDecoder
}

func newColDecoder(l *pqLeaf, rows int64, maxStringBytes int) *colDecoder {
	return &colDecoder{l: l, want: rows, maxBytes: maxStringBytes}
}

// width is the bytes of a value of the column, 0 for strings and
// booleans.
func (d *colDecoder) width() int {
	switch d.l.typ {
	case ptInt32:
		return 4
	case ptInt64:
		return 8
	}
	return 0
}

// grow makes room in d.vals for the values up to row upto, a fixed-width
// column's, doubling as the pages come (never past the row group's rows),
// in 8-byte words, so that Arrow may read them as any fixed-width type.
func (d *colDecoder) grow(upto int64) {
	need := upto * int64(d.width())
	if d.l.typ == ptBoolean {
		need = (upto + 7) / 8
	}
	if need <= int64(len(d.vals)) {
		return
	}
	size := max(need, min(2*int64(len(d.vals)), d.bytesFor(d.want)))
	var words []uint64
	if len(d.vals) == 0 { // the row group's, whole, if the pool has it
		if words = d.pool.get((d.bytesFor(d.want)+7)/8, d.l.typ == ptBoolean); words != nil {
			size = d.bytesFor(d.want)
		}
	}
	if words == nil && len(d.vals) == 0 && d.pool != nil { // the row group's, whole, new
		words, size = d.pool.alloc((d.bytesFor(d.want)+7)/8), d.bytesFor(d.want)
	}
	if words == nil {
		words = make([]uint64, (size+7)/8)
	}
	vals := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), size)
	copy(vals, d.vals)
	d.words, d.vals = words, vals
}

func (d *colDecoder) bytesFor(rows int64) int64 {
	if d.l.typ == ptBoolean {
		return (rows + 7) / 8
	}
	return rows * int64(d.width())
}

func (d *colDecoder) dictionary(b []byte, n int, enc pqEncoding) error {
	if d.l.typ != ptByteArray {
		return fmt.Errorf("a dictionary page in a %s column: replay dictionary-encodes strings only", d.l.dt)
	}
	if enc != pqPlain && enc != pqPlainDict {
		return fmt.Errorf("dictionary page encoding %d", enc)
	}
	if d.hasD {
		return errors.New("a second dictionary page")
	}
	if n < 0 {
		return errCorrupt
	}
	d.hasD = true
	d.dict = make([]string, 0, min(n, len(b)/4))
	for range n {
		s, rest, ok := plainString(b)
		if !ok {
			return errCorrupt
		}
		d.dict = append(d.dict, s)
		b = rest
	}
	d.ndict = len(d.dict)
	return nil
}

// plainString cuts one PLAIN BYTE_ARRAY value off b.
func plainString(b []byte) (string, []byte, bool) {
	if len(b) < 4 {
		return "", nil, false
	}
	k := binary.LittleEndian.Uint32(b)
	if uint64(k) > uint64(len(b)-4) {
		return "", nil, false
	}
	return string(b[4 : 4+k]), b[4+k:], true
}

func (d *colDecoder) page(b []byte, n int, enc pqEncoding) error {
	if n < 0 || int64(n) > d.want-d.n {
		return fmt.Errorf("a page of %d values past the row group's %d rows", n, d.want)
	}
	if d.l.typ != ptByteArray {
		d.grow(d.n + int64(n))
	}
	var err error
	switch {
	case d.l.typ == ptByteArray:
		err = d.strings(b, n, enc)
	case enc == pqPlain:
		err = d.plain(b, n)
	case enc == pqDelta && d.l.typ != ptBoolean:
		err = d.deltas(b, n)
	default:
		err = fmt.Errorf("%s page encoding %d: not one replay writes", d.l.dt, enc)
	}
	d.n += int64(n)
	return err
}

func (d *colDecoder) plain(b []byte, n int) error {
	switch d.l.typ {
	case ptInt32, ptInt64:
		w := 4
		if d.l.typ == ptInt64 {
			w = 8
		}
		if len(b) < n*w {
			return errCorrupt
		}
		copy(d.vals[int(d.n)*w:], b[:n*w])
	case ptBoolean:
		if len(b) < (n+7)/8 {
			return errCorrupt
		}
		for i := range n {
			if b[i>>3]>>(i&7)&1 != 0 {
				k := d.n + int64(i)
				d.vals[k>>3] |= 1 << (k & 7)
			}
		}
	}
	return nil
}

func (d *colDecoder) strings(b []byte, n int, enc pqEncoding) error {
	if d.dictMode {
		return d.dictStrings(b, n, enc)
	}
	if d.offs == nil {
		d.offs = make([]int32, 1, 1+min(d.want, 1<<16))
	}
	switch enc {
	case pqPlain:
		for range n {
			s, rest, ok := plainString(b)
			if !ok {
				return errCorrupt
			}
			if err := d.appendString(s); err != nil {
				return err
			}
			b = rest
		}
		return nil
	case pqRLEDict, pqPlainDict:
		if !d.hasD {
			return errors.New("a dictionary-encoded page without a dictionary page")
		}
		if len(b) < 1 {
			return errCorrupt
		}
		bw := int(b[0])
		if bw > 32 {
			return errCorrupt
		}
		// The indices first, for the page's bytes: the values then go
		// into storage grown once, not doubled value by value (a
		// chunk's first page grows it for the chunk's rows at its rate).
		rd := hybridReader{b: b[1:], bw: bw}
		idx, total := d.idx[:0], 0
		for range n {
			x, ok := rd.next()
			if !ok || x >= uint64(len(d.dict)) {
				return errCorrupt
			}
			idx = append(idx, uint32(x))
			total += len(d.dict[x])
		}
		d.idx = idx
		if total > d.maxBytes-len(d.vals) {
			return fmt.Errorf("more than %d bytes of strings in a column chunk", d.maxBytes)
		}
		if len(d.vals) == 0 && n > 0 {
			d.vals = slices.Grow(d.vals, int(min(int64(total)*((d.want+int64(n)-1)/int64(n)), int64(d.maxBytes))))
			d.offs = slices.Grow(d.offs, int(d.want))
		}
		for _, x := range idx {
			d.vals = append(d.vals, d.dict[x]...)
			d.offs = append(d.offs, int32(len(d.vals)))
		}
		return nil
	}
	return fmt.Errorf("string page encoding %d: not one replay writes", enc)
}

// dictStrings is strings in dictMode: a dictionary-encoded page's
// indices kept as they are, a PLAIN page's strings appended to the
// dictionary.
func (d *colDecoder) dictStrings(b []byte, n int, enc pqEncoding) error {
	if d.didx == nil {
		if d.words = d.pool.get((d.want*4+7)/8, false); d.words != nil {
			d.didx = unsafe.Slice((*int32)(unsafe.Pointer(&d.words[0])), d.want)[:0]
		} else {
			d.words = d.pool.alloc((d.want*4 + 7) / 8)
			d.didx = unsafe.Slice((*int32)(unsafe.Pointer(&d.words[0])), d.want)[:0]
		}
	}
	switch enc {
	case pqPlain:
		for range n {
			s, rest, ok := plainString(b)
			if !ok {
				return errCorrupt
			}
			d.didx = append(d.didx, int32(len(d.dict)))
			d.dict = append(d.dict, s)
			b = rest
		}
		return nil
	case pqRLEDict, pqPlainDict:
		if !d.hasD {
			return errors.New("a dictionary-encoded page without a dictionary page")
		}
		if len(b) < 1 || b[0] > 32 {
			return errCorrupt
		}
		rd := hybridReader{b: b[1:], bw: int(b[0])}
		k := len(d.didx)
		d.didx = d.didx[:k+n]
		if !rd.fill(d.didx[k:], uint64(d.ndict)) {
			return errCorrupt
		}
		return nil
	}
	return fmt.Errorf("string page encoding %d: not one replay writes", enc)
}

// finishDict is finish in dictMode: a dictString array.
func (d *colDecoder) finishDict() (arrow.Array, error) {
	total := 0
	for _, s := range d.dict {
		total += len(s)
	}
	if total > d.maxBytes {
		return nil, fmt.Errorf("more than %d bytes of strings in a column chunk", d.maxBytes)
	}
	vals := make([]byte, 0, total)
	offs := make([]int32, 1, len(d.dict)+1)
	for _, s := range d.dict {
		vals = append(vals, s...)
		offs = append(offs, int32(len(vals)))
	}
	dict := array.NewData(arrow.BinaryTypes.String, len(d.dict), []*memory.Buffer{nil, memory.NewBufferBytes(int32Bytes(offs)), memory.NewBufferBytes(vals)}, nil, 0, 0)
	defer dict.Release()
	idx := d.didx
	if len(idx) == 0 {
		idx = make([]int32, 1) // a buffer to point at, for no rows
	}
	data := array.NewData(dictString, int(d.want), []*memory.Buffer{nil, memory.NewBufferBytes(int32Bytes(idx))}, nil, 0, 0)
	defer data.Release()
	data.SetDictionary(dict)
	return array.MakeFromData(data), nil
}

// int32Bytes is the bytes of s.
func int32Bytes(s []int32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
}

func (d *colDecoder) appendString(s string) error {
	if len(s) > d.maxBytes-len(d.vals) {
		return fmt.Errorf("more than %d bytes of strings in a column chunk", d.maxBytes)
	}
	d.vals = append(d.vals, s...)
	d.offs = append(d.offs, int32(len(d.vals)))
	return nil
}

func (d *colDecoder) deltas(b []byte, n int) error {
	w := 4
	if d.l.typ == ptInt64 {
		w = 8
	}
	dst := d.vals[int(d.n)*w : (int(d.n)+n)*w]
	return d.delta.decode(b, n, w, dst)
}

func (d *colDecoder) finish() (arrow.Array, error) {
	if d.n != d.want {
		return nil, fmt.Errorf("%d values in the pages of a row group of %d rows", d.n, d.want)
	}
	n := int(d.want)
	if d.dictMode {
		return d.finishDict()
	}
	if d.l.typ == ptByteArray {
		if d.offs == nil { // no pages
			d.offs = make([]int32, 1)
		}
		offs := unsafe.Slice((*byte)(unsafe.Pointer(&d.offs[0])), len(d.offs)*4)
		data := array.NewData(d.l.dt, n, []*memory.Buffer{nil, memory.NewBufferBytes(offs), memory.NewBufferBytes(d.vals)}, nil, 0, 0)
		defer data.Release()
		return array.MakeFromData(data), nil
	}
	d.grow(d.want) // a row group of no rows: no page grew it
	data := array.NewData(d.l.dt, n, []*memory.Buffer{nil, memory.NewBufferBytes(d.vals)}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// hybridReader reads the RLE/bit-packing hybrid encoding of values of bw
// bits (a dictionary page's indices).
type hybridReader struct {
	b      []byte
	bw     int
	rle    uint64 // values left in the current RLE run
	packed uint64 // values left in the current bit-packed run
	v      uint64 // the RLE run's value
	bit    uint64 // the next packed value's bit offset in b
}

func (h *hybridReader) next() (uint64, bool) {
	for h.rle == 0 && h.packed == 0 {
		if h.bit > 0 { // the end of a bit-packed run: to its next byte
			h.b = h.b[(h.bit+7)/8:]
			h.bit = 0
		}
		hdr, k := binary.Uvarint(h.b)
		if k <= 0 {
			return 0, false
		}
		h.b = h.b[k:]
		if hdr&1 == 0 {
			h.rle = hdr >> 1
			nb := (h.bw + 7) / 8
			if len(h.b) < nb {
				return 0, false
			}
			var v uint64
			for i := range nb {
				v |= uint64(h.b[i]) << (8 * i)
			}
			h.v, h.b = v, h.b[nb:]
		} else {
			groups := hdr >> 1
			if groups > uint64(len(h.b)) {
				return 0, false
			}
			h.packed = groups * 8
			if uint64(len(h.b))*8 < h.packed*uint64(h.bw) {
				// The last run may end before its last group's bytes.
				h.packed = uint64(len(h.b)) * 8 / max(uint64(h.bw), 1)
			}
		}
	}
	if h.rle > 0 {
		h.rle--
		return h.v, true
	}
	h.packed--
	v := unpackBits(h.b, h.bit, h.bw)
	h.bit += uint64(h.bw)
	if h.packed == 0 {
		h.b = h.b[(h.bit+7)/8:]
		h.bit = 0
	}
	return v, true
}

// fill reads len(dst) values into dst, an RLE run's at a time (its value
// checked once, as its first): false if the values end first or one is
// not below limit.
func (h *hybridReader) fill(dst []int32, limit uint64) bool {
	for len(dst) > 0 {
		if h.rle == 0 && h.packed == 0 {
			// The next run's header, through next's one value.
			x, ok := h.next()
			if !ok || x >= limit {
				return false
			}
			dst[0], dst = int32(x), dst[1:]
			continue
		}
		if h.rle > 0 { // its value was checked as the run's first, above
			k := int(min(h.rle, uint64(len(dst))))
			fillInt32(dst[:k], int32(h.v))
			h.rle -= uint64(k)
			dst = dst[k:]
			continue
		}
		if k := h.packedRun(dst, limit); k != 0 {
			if k < 0 {
				return false
			}
			dst = dst[k:]
			continue
		}
		x, _ := h.next() // a packed run's value
		if x >= limit {
			return false
		}
		dst[0], dst = int32(x), dst[1:]
	}
	return true
}

// fillInt32 sets every element of dst to v: a long run (an RLE run of a
// dictionary key, a column of one string's) by clear or by copies of
// what it has filled, doubling, not an element at a time.
func fillInt32(dst []int32, v int32) {
	if len(dst) < 16 {
		for i := range dst {
			dst[i] = v
		}
		return
	}
	if v == 0 {
		clear(dst)
		return
	}
	for i := range 8 {
		dst[i] = v
	}
	for n := 8; n < len(dst); n *= 2 {
		copy(dst[n:], dst[:n])
	}
}

// packedRun reads into dst the values of the current bit-packed run
// that can be read 8 bytes at a time (up to the run's last 8 bytes, which
// next reads), at most len(dst), and returns how many: 0 if none can be,
// -1 if one is not below limit.
func (h *hybridReader) packedRun(dst []int32, limit uint64) int {
	if h.bw > 56 {
		return 0
	}
	k := int(min(h.packed, uint64(len(dst))))
	w := uint64(h.bw)
	mask := uint64(1)<<w - 1
	bit, end := h.bit, uint64(len(h.b))
	var hi uint64
	i := 0
	for ; i < k && bit>>3+8 <= end; i++ {
		x := binary.LittleEndian.Uint64(h.b[bit>>3:]) >> (bit & 7) & mask
		hi = max(hi, x)
		dst[i] = int32(x)
		bit += w
	}
	if hi >= limit && i > 0 {
		return -1
	}
	h.bit, h.packed = bit, h.packed-uint64(i)
	if h.packed == 0 && i > 0 {
		h.b = h.b[(h.bit+7)/8:]
		h.bit = 0
	}
	return i
}

// unpackBits returns the w bits (w <= 64) of b from bit offset off, least
// significant first, as Parquet packs them; bits past b's end read as 0.
func unpackBits(b []byte, off uint64, w int) uint64 {
	if w == 0 {
		return 0
	}
	i, s := off>>3, off&7
	var lo uint64
	if i+8 <= uint64(len(b)) {
		lo = binary.LittleEndian.Uint64(b[i:])
	} else {
		for k := uint64(0); i+k < uint64(len(b)); k++ {
			lo |= uint64(b[i+k]) << (8 * k)
		}
	}
	v := lo >> s
	if int(64-s) < w && i+8 < uint64(len(b)) {
		v |= uint64(b[i+8]) << (64 - s)
	}
	if w < 64 {
		v &= 1<<w - 1
	}
	return v
}

// unpackDeltas fills out with a miniblock's values: v plus the running
// sum of minDelta plus its bw-bit deltas at the start of mb, a column's
// 32- or 64-bit values (their low bits; the sum wraps as the format's
// does); bytes of mb after them are read but not used, and with 8 of them
// every value is read 8 bytes at a time. It returns the last value. A miniblock of width 0 (a constant step: seq, a column
// of zeros) is a progression (unpackStep).
func unpackDeltas[T uint32 | uint64](mb []byte, bw byte, v, minDelta uint64, out []T) uint64 {
	if bw == 0 {
		return unpackStep(v, minDelta, out)
	}
	j := 0
	if bw <= 8 { // 8 values in bw bytes: one load for the 8
		j, v = unpackNarrow(mb, bw, v, minDelta, out)
	}
	if bw <= 56 { // a value within the 8 bytes at its first bit's byte
		mask := uint64(1)<<bw - 1
		for ; j < len(out); j++ {
			off := uint64(j) * uint64(bw)
			if off>>3+8 > uint64(len(mb)) {
				break // the miniblock's last bytes: unpackBits
			}
			v += minDelta + binary.LittleEndian.Uint64(mb[off>>3:])>>(off&7)&mask
			out[j] = T(v)
		}
	}
	for ; j < len(out); j++ {
		v += minDelta + unpackBits(mb, uint64(j)*uint64(bw), int(bw))
		out[j] = T(v)
	}
	return v
}

// unpackStep fills out with v+d, v+2d, ... (wrapping) and returns the
// last: 8 values an iteration, each from v and a multiple of d, not from
// the one before, so that the 8 are independent of each other.
func unpackStep[T uint32 | uint64](v, d uint64, out []T) uint64 {
	d2, d3, d4 := 2*d, 3*d, 4*d
	d5, d6, d7, d8 := 5*d, 6*d, 7*d, 8*d
	j := 0
	for ; j+8 <= len(out); j += 8 {
		o := out[j : j+8 : j+8]
		o[0], o[1], o[2], o[3] = T(v+d), T(v+d2), T(v+d3), T(v+d4)
		o[4], o[5], o[6], o[7] = T(v+d5), T(v+d6), T(v+d7), T(v+d8)
		v += d8
	}
	for ; j < len(out); j++ {
		v += d
		out[j] = T(v)
	}
	return v
}

// unpackNarrow is unpackDeltas for widths 1 to 8, 8 values at a time
// while 8 bytes can be read at the group's first byte (a group of 8
// values is bw whole bytes): one load and 8 shifts by amounts fixed for
// the miniblock. It returns how many values of out it filled and the last.
func unpackNarrow[T uint32 | uint64](mb []byte, bw byte, v, minDelta uint64, out []T) (int, uint64) {
	w := uint(bw)
	mask := uint64(1)<<w - 1
	s2, s3, s4, s5, s6, s7 := 2*w, 3*w, 4*w, 5*w, 6*w, 7*w
	j, at := 0, 0
	for ; j+8 <= len(out) && at+8 <= len(mb); j, at = j+8, at+int(w) {
		x := binary.LittleEndian.Uint64(mb[at:])
		o := out[j : j+8 : j+8]
		// The deltas first, apart from the running sum: its chain of
		// additions is then one a value.
		d0, d1 := minDelta+x&mask, minDelta+x>>w&mask
		d2, d3 := minDelta+x>>s2&mask, minDelta+x>>s3&mask
		d4, d5 := minDelta+x>>s4&mask, minDelta+x>>s5&mask
		d6, d7 := minDelta+x>>s6&mask, minDelta+x>>s7&mask
		v0 := v + d0
		v1 := v0 + d1
		v2 := v1 + d2
		v3 := v2 + d3
		v4 := v3 + d4
		v5 := v4 + d5
		v6 := v5 + d6
		v = v6 + d7
		o[0], o[1], o[2], o[3] = T(v0), T(v1), T(v2), T(v3)
		o[4], o[5], o[6], o[7] = T(v4), T(v5), T(v6), T(v)
	}
	return j, v
}

// deltaDecoder reads DELTA_BINARY_PACKED pages.
type deltaDecoder struct {
	widths []byte
}

// decode decodes n values of w bytes (4 or 8) from b into dst (n·w bytes,
// little-endian). The arithmetic wraps at the values' width, as the
// encoding's does.
func (d *deltaDecoder) decode(b []byte, n, w int, dst []byte) error {
	uv := func() uint64 {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			b = nil
			return 0
		}
		b = b[k:]
		return v
	}
	sv := func() int64 {
		v, k := binary.Varint(b)
		if k <= 0 {
			b = nil
			return 0
		}
		b = b[k:]
		return v
	}
	block, minis, total := uv(), uv(), uv()
	first := uint64(sv())
	if b == nil || block == 0 || block%128 != 0 || minis == 0 || block%minis != 0 || (block/minis)%32 != 0 || block > 1<<20 {
		return errCorrupt
	}
	if total != uint64(n) {
		return fmt.Errorf("a DELTA_BINARY_PACKED page of %d values says it has %d", n, total)
	}
	put := func(k int, v uint64) {
		if w == 4 {
			binary.LittleEndian.PutUint32(dst[k*4:], uint32(v))
		} else {
			binary.LittleEndian.PutUint64(dst[k*8:], v)
		}
	}
	if n == 0 {
		return nil
	}
	put(0, first)
	per := int(block / minis)
	if cap(d.widths) < int(minis) {
		d.widths = make([]byte, minis)
	}
	widths := d.widths[:minis]
	v, k := first, 1
	for k < n {
		minDelta := uint64(sv())
		if b == nil || len(b) < len(widths) {
			return errCorrupt
		}
		copy(widths, b)
		b = b[len(widths):]
		for m := 0; m < len(widths); m++ {
			bw := widths[m]
			if k >= n {
				break
			}
			if int(bw) > 8*w {
				return errCorrupt
			}
			if bw == 0 {
				// Miniblocks of width 0 in a row (a constant step for
				// the block, or more of it: seq, a column of zeros) have
				// no bytes: one progression for them all.
				z := 1
				for m+z < len(widths) && widths[m+z] == 0 {
					z++
				}
				m += z - 1
				cnt := min(z*per, n-k)
				if w == 4 {
					v = unpackStep(v, minDelta, unsafe.Slice((*uint32)(unsafe.Pointer(&dst[k*4])), cnt))
				} else {
					v = unpackStep(v, minDelta, unsafe.Slice((*uint64)(unsafe.Pointer(&dst[k*8])), cnt))
				}
				k += cnt
				continue
			}
			nb := per * int(bw) / 8
			if len(b) < nb {
				// The last miniblock may be cut short after its last value.
				if need := (min(per, n-k)*int(bw) + 7) / 8; len(b) < need {
					return errCorrupt
				}
				nb = len(b)
			}
			cnt := min(per, n-k)
			// The miniblock and up to 8 bytes after it (the next one's, or
			// the next block's header), so that its last values too are
			// read 8 bytes at a time, masked to their width.
			mb := b[:min(len(b), nb+8)]
			if w == 4 {
				v = unpackDeltas(mb, bw, v, minDelta, unsafe.Slice((*uint32)(unsafe.Pointer(&dst[k*4])), cnt))
			} else {
				v = unpackDeltas(mb, bw, v, minDelta, unsafe.Slice((*uint64)(unsafe.Pointer(&dst[k*8])), cnt))
			}
			k += cnt
			b = b[nb:]
		}
	}
	return nil
}

// ScanParquet reads the columns cols of the Parquet table file path, one
// of the files a replay writes, a row group at a time, and hands each row
// group's columns to fn in the order of cols (an empty row group is
// skipped). Only those columns are read. The arrays are fn's to keep.
// Errors name path.
func ScanParquet(path string, cols []string, fn func(cs []arrow.Array) error) error {
	p, err := openParquet(path)
	if err != nil {
		return err
	}
	defer p.close()
	return p.scan(cols, fn)
}

func (p *pqFile) scan(cols []string, fn func(cs []arrow.Array) error) error {
	idx, err := p.columns(cols)
	if err != nil {
		return err
	}
	cs := make([]arrow.Array, len(idx))
	for rg := range p.rgs {
		if p.rgs[rg].rows == 0 {
			continue
		}
		for i, k := range idx {
			var err error
			if cs[i], err = p.readColumn(rg, k); err != nil {
				return fmt.Errorf("%s: %w", p.path, err)
			}
		}
		if err := fn(cs); err != nil {
			return fmt.Errorf("%s: %w", p.path, err)
		}
	}
	return nil
}

// ParquetRows returns the row count in the footer of the Parquet file
// path, without reading a column.
func ParquetRows(path string) (int64, error) {
	p, err := openParquet(path)
	if err != nil {
		return 0, err
	}
	defer p.close()
	return p.rows, nil
}

// ParquetSchema is the Arrow schema of a Parquet file replay wrote, read
// from its footer without decoding a column.
func ParquetSchema(path string) (*arrow.Schema, error) {
	p, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer p.close()
	return p.schema()
}
