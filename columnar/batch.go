package columnar

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batch is one record batch of a table, column by column: the rows the
// Writer buffers before they go to each file as one Parquet row group and
// one Arrow IPC record batch. The values live in memory from the writer's
// allocator (so a [memory.CheckedAllocator] sees them); a string column
// holds, per row, an index into the batch's dictionary of the distinct
// strings, which the table builds as rows arrive (writer.go) without
// hashing each row's string.
//
// A table whose string columns are all functions of one thing per row
// (instructions: the row's instruction) stores them keyed: per row only
// a key number (key), and per key the index into each keyed column's
// dictionary (colBuf.byKey). A row then costs one index written instead
// of one per string column, and the writers expand the indices a page's
// worth at a time (indices), into a buffer that stays in cache.
//
// A batch belongs either to the goroutine that appends to it or, once
// handed over, to the one that writes it (pipeline.go), never to both.
type batch struct {
	mem  memory.Allocator
	rows int // rows appended
	cap  int // rows every column has room for
	cols []colBuf
	// key is the rows' key numbers (int32) when some column is keyed:
	// indexes into each keyed column's byKey.
	key *colBuf
	// keysVary: some row's key differs from the first row's (putKey).
	// While it is false every row has one key, and each keyed column's
	// page is one RLE run (encodeStrings).
	keysVary bool
	// textBytes is the length of the largest string column as plain utf8
	// (Arrow's int32 offsets bound it): only instructions.text can come
	// near maxBatchStringBytes.
	textBytes int
}

// colBuf is one column of a batch.
type colBuf struct {
	typ   arrow.Type // UINT64, INT64, UINT32, BOOL or STRING
	width int        // bytes per row in raw
	raw   []byte     // cap rows; for STRING int32 dictionary indices, for BOOL one byte 0 or 1
	dict  []string   // STRING: the distinct values, in order of first use
	// keyed: a STRING column stored by the row's key (see batch): raw is
	// unused, byKey[key] is the key's index into dict.
	keyed bool
	byKey []int32
	// dictBytes is the dictionary's size as Parquet stores it (4 bytes of
	// length per value).
	dictBytes int
	// konst: the rows so far are the progression kval, kval+kstep,
	// kval+2·kstep … (an integer's bits, wrapping at the column's width,
	// or a STRING column's dictionary index, or the batch's keys), and
	// raw holds none of them. A column that keeps to one (the
	// instructions' seq, a hot counter's every column; the memory table's
	// space and group, one value page after page) costs a row no store,
	// and the encoder writes its pages from the progression without
	// reading a row (encodeAffine). The first row off it fills raw with
	// the rows before (keep, putConst); so does materialize, for the
	// readers that take rows from raw.
	konst       bool
	kval, kstep uint64
	// affine: the column starts a batch constant (reset), its writer
	// (putInstructions) passing each row through keep.
	affine bool
	// inRuns: the rows are runs, each of one value, and raw holds none of
	// them: the results' seq as ResultColumns gives it (an instruction's
	// lane-elements a run), encoded from the runs (encodeRuns) rather
	// than from 8 bytes a row stored and read again. The first rows that
	// come otherwise (Results), and materialize, fill raw (fillRuns).
	inRuns bool
	runs   []seqRun
	// iota, with inRuns: run s's rows are s.v, s.v+1, s.v+2 … rather than
	// s.v throughout: the results' lane when ResultColumns leaves it out
	// (engine.ResultColumns.IotaLanes), an instruction's lanes a run,
	// encoded from the runs (encodeIotaRuns).
	iota bool
}

// at is row r of a constant column.
func (c *colBuf) at(r int) uint64 { return c.kval + uint64(r)*c.kstep }

// on reports whether v, as row r (past the first two), keeps the
// constant column c on its progression (batch.keep).
func (c *colBuf) on(r int, v uint64) bool { return c.konst && r >= 2 && v == c.at(r) }

func newBatch(spec *tableSpec, mem memory.Allocator) *batch {
	sc := spec.schema
	b := &batch{mem: mem, cols: make([]colBuf, sc.NumFields())}
	for i, f := range sc.Fields() {
		c := &b.cols[i]
		c.typ = f.Type.ID()
		if spec.keyed[i] {
			c.keyed = true
			if b.key == nil {
				b.key = &colBuf{typ: arrow.INT32, width: 4, affine: spec.affine, konst: spec.affine}
			}
			continue // no per-row buffer
		}
		switch c.typ {
		case arrow.UINT64, arrow.INT64:
			c.width = 8
		case arrow.UINT32, arrow.STRING:
			c.width = 4
		case arrow.BOOL:
			c.width = 1
		default:
			panic(fmt.Sprintf("columnar: column %s: unsupported type %s", f.Name, f.Type))
		}
		if spec.affine && c.typ != arrow.STRING && c.typ != arrow.BOOL || spec.zeros[i] || spec.progs[i] {
			c.affine, c.konst = true, true
		}
	}
	return b
}

// minBatchCap is the capacity of a new batch's columns: a small table
// (ops, a short trace) should not cost a full batch of memory.
const minBatchCap = 1 << 10

// jumpFraction: a batch that outgrows this fraction of a full one grows
// to a full one at once. A table that long most likely fills its batch,
// and doubling the rest of the way would allocate (and fault in, and
// copy) about as much again as the full batch: a hot counter's
// instructions table, 300 K rows, allocated 7.6 MB of columns a replay.
const jumpFraction = 8

// reserve makes room for n more rows, up to limit rows in all: it grows
// every column to max(rows+n, min(2·cap, limit)), and straight to limit
// once that is past limit/jumpFraction.
func (b *batch) reserve(n, limit int) {
	need := b.rows + n
	if need <= b.cap {
		return
	}
	newCap := max(need, min(max(2*b.cap, minBatchCap), limit))
	if newCap > limit/jumpFraction {
		newCap = limit
	}
	for i := range b.cols {
		b.grow(&b.cols[i], newCap)
	}
	if b.key != nil {
		b.grow(b.key, newCap)
	}
	b.cap = newCap
}

// grow gives column c room for newCap rows, keeping its rows. An affine
// column on its progression (konst) holds no rows, and gets no room until
// it leaves it (fillRows): a hot counter's instructions table, every
// column constant, allocated 6 MB of buffers a replay that no row was
// written to, and its heap's growth set off a collection or two more.
func (b *batch) grow(c *colBuf, newCap int) {
	if c.keyed || c.affine && c.konst {
		return
	}
	raw := b.mem.Allocate(newCap * c.width)
	copy(raw, c.raw[:b.rows*c.width])
	if c.raw != nil {
		b.mem.Free(c.raw)
	}
	c.raw = raw
}

// reset empties b for reuse, keeping its memory.
func (b *batch) reset() {
	b.rows, b.textBytes, b.keysVary = 0, 0, false
	for i := range b.cols {
		c := &b.cols[i]
		clear(c.dict)
		c.dict, c.dictBytes, c.byKey = c.dict[:0], 0, c.byKey[:0]
		c.konst = c.affine
		c.inRuns, c.iota, c.runs = false, false, c.runs[:0]
	}
	if b.key != nil {
		b.key.konst = b.key.affine
	}
}

// keep reports whether v, row r of column c (rows come in order), keeps
// c constant: row 0 starts the progression, row 1 sets its step, a later
// row must be on it. The first that is not fills raw with the rows before
// it; keep then reports false, and the caller stores v.
//
// Its caller writes a row as
//
//	if !c.on(r, v) && (!c.konst || !b.keep(c, r, v)) { store v }
//
// so that a row on the progression (on, inlined) and a row of a stored
// column cost no call.
func (b *batch) keep(c *colBuf, r int, v uint64) bool {
	if !c.konst {
		return false
	}
	switch {
	case r == 0:
		c.kval = v
		return true
	case r == 1:
		c.kstep = v - c.kval
		return true
	case v == c.at(r):
		return true
	}
	b.fillRows(c, r)
	return false
}

// putConst gives rows [n, n+k) of column c (INT64 or STRING) the value v
// (a STRING column's dictionary index). While every row of the batch has
// one value the column stays constant (konst), with no row in raw; the
// first other value fills raw with the rows before it.
func (b *batch) putConst(c *colBuf, v uint64, n, k int) {
	switch {
	case n == 0:
		c.konst, c.kval, c.kstep = true, v, 0
		return
	case c.konst && c.kstep == 0 && c.kval == v:
		return
	case c.konst:
		b.fillRows(c, n)
	}
	b.fill(c, n, k, v)
}

// fillRows stores rows [0, n) of constant column c in raw, giving an affine
// one room for the batch's rows first (grow gives it none while it is
// constant); c is stored from then on.
func (b *batch) fillRows(c *colBuf, n int) {
	if size := b.cap * c.width; len(c.raw) < size {
		// Constant: no row of it is in raw to keep.
		b.free(c)
		c.raw = b.mem.Allocate(size)
	}
	if c.width == 8 {
		vs := c.u64()[:n]
		for r := range vs {
			vs[r] = c.at(r)
		}
	} else {
		vs := c.u32()[:n]
		for r := range vs {
			vs[r] = uint32(c.at(r))
		}
	}
	c.konst = false
}

// fill sets rows [n, n+k) of column c to v.
func (b *batch) fill(c *colBuf, n, k int, v uint64) {
	if c.width == 8 {
		vs := c.u64()[n : n+k]
		for i := range vs {
			vs[i] = v
		}
		return
	}
	vs := c.u32()[n : n+k]
	for i := range vs {
		vs[i] = uint32(v)
	}
}

// materialize fills the rows of b's constant columns into raw, for the
// readers that take rows from raw (the Arrow IPC record, the encoders'
// general paths).
func (b *batch) materialize() {
	for i := range b.cols {
		if c := &b.cols[i]; c.konst {
			b.fillRows(c, b.rows)
		} else if c.inRuns {
			b.fillRuns(c)
		}
	}
	if b.key != nil && b.key.konst {
		b.fillRows(b.key, b.rows)
	}
}

// firstKey is the batch's first row's key.
func (b *batch) firstKey() int32 {
	if b.key.konst {
		return int32(b.key.kval)
	}
	return b.key.idx()[0]
}

// release returns b's memory to the allocator.
func (b *batch) release() {
	for i := range b.cols {
		c := &b.cols[i]
		b.free(c)
		c.dict, c.byKey = nil, nil
	}
	if b.key != nil {
		b.free(b.key)
	}
	b.cap, b.rows = 0, 0
}

func (b *batch) free(c *colBuf) {
	if c.raw != nil {
		b.mem.Free(c.raw)
		c.raw = nil
	}
}

// indices returns the dictionary indices of STRING column c for rows
// [from, from+n): the column's own buffer, or for a keyed column buf
// (of at least n) filled from the rows' keys.
func (b *batch) indices(c *colBuf, from, n int, buf []int32) []int32 {
	if !c.keyed {
		return c.idx()[from : from+n]
	}
	buf, byKey := buf[:n], c.byKey
	if b.key.konst {
		for k := range buf {
			buf[k] = byKey[int32(b.key.at(from+k))]
		}
		return buf
	}
	for k, key := range b.key.idx()[from : from+n] {
		buf[k] = byKey[key]
	}
	return buf
}

// addKey adds a key whose strings have the indices idx in the keyed
// columns, in column order, and returns its number.
func (b *batch) addKey(idx []int32) int32 {
	j, key := 0, int32(0)
	for i := range b.cols {
		if c := &b.cols[i]; c.keyed {
			key = int32(len(c.byKey)) // the same in every keyed column
			c.byKey = append(c.byKey, idx[j])
			j++
		}
	}
	return key
}

// rowsOf is rows [n, n+k) of c's buffer, as T, or nil while c has no room
// for them: an affine column on its progression (grow), until keep fills
// its rows.
func rowsOf[T uint64 | int64 | uint32 | int32](c *colBuf, n, k int) []T {
	if len(c.raw) < (n+k)*c.width {
		return nil
	}
	return arrow.GetData[T](c.raw)[n : n+k]
}

// Typed views of the columns' whole capacity. Appending code writes rows
// [rows, rows+n) after reserve(n).
func (c *colBuf) u64() []uint64 { return arrow.GetData[uint64](c.raw) }
func (c *colBuf) i64() []int64  { return arrow.GetData[int64](c.raw) }
func (c *colBuf) u32() []uint32 { return arrow.GetData[uint32](c.raw) }
func (c *colBuf) idx() []int32  { return arrow.GetData[int32](c.raw) }
func (c *colBuf) bools() []bool {
	if len(c.raw) == 0 {
		return nil
	}
	return unsafe.Slice((*bool)(unsafe.Pointer(&c.raw[0])), len(c.raw))
}

// add appends s to the dictionary and returns its index. The caller knows
// that s is not in it yet (writer.go looks it up first).
func (c *colBuf) add(s string) int32 {
	c.dict = append(c.dict, s)
	c.dictBytes += 4 + len(s)
	return int32(len(c.dict) - 1)
}

// strings returns the first n rows of STRING column c as a plain utf8
// array (the IPC format has no dictionary here: OUTPUT.md's type is utf8).
func (b *batch) strings(c *colBuf, n int, mem memory.Allocator) arrow.Array {
	var buf []int32
	if c.keyed {
		raw := mem.Allocate(4 * n)
		defer mem.Free(raw)
		buf = arrow.GetData[int32](raw)
	}
	idx := b.indices(c, 0, n, buf)
	size := 0
	for _, i := range idx {
		size += len(c.dict[i])
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((n + 1) * 4)
	valBuf := memory.NewResizableBuffer(mem)
	valBuf.Resize(size)
	offs, vals := arrow.GetData[int32](offBuf.Bytes()), valBuf.Bytes()
	pos := 0
	for k, i := range idx {
		offs[k] = int32(pos)
		pos += copy(vals[pos:], c.dict[i])
	}
	offs[n] = int32(pos)
	data := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offBuf, valBuf}, nil, 0, 0)
	offBuf.Release()
	valBuf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// record returns the batch as an Arrow record batch of schema sc. The
// numeric columns share b's memory, so the record must be released before
// b is reused.
func (b *batch) record(sc *arrow.Schema, mem memory.Allocator) arrow.RecordBatch {
	b.materialize()
	n := b.rows
	cols := make([]arrow.Array, len(b.cols))
	for i := range b.cols {
		c := &b.cols[i]
		var data *array.Data
		switch c.typ {
		case arrow.STRING:
			cols[i] = b.strings(c, n, mem)
			continue
		case arrow.BOOL:
			bits := memory.NewResizableBuffer(mem)
			bits.Resize(int((n + 7) / 8))
			bm := bits.Bytes()
			clear(bm)
			for k, v := range c.raw[:n] {
				bm[k/8] |= v << (k % 8)
			}
			data = array.NewData(sc.Field(i).Type, n, []*memory.Buffer{nil, bits}, nil, 0, 0)
			bits.Release()
		default:
			data = array.NewData(sc.Field(i).Type, n, []*memory.Buffer{nil, memory.NewBufferBytes(c.raw[:n*c.width])}, nil, 0, 0)
		}
		cols[i] = array.MakeFromData(data)
		data.Release()
	}
	rec := array.NewRecordBatch(sc, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}
