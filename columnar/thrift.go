package columnar

import (
	"encoding/binary"
	"errors"
)

// The Thrift compact protocol, as much of it as Parquet's page headers and
// footer use (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md).
// The writer and reader are the package's own, so that writing and reading
// Parquet link none of arrow-go's parquet packages, which bring in
// arrow/compute and its start-up cost (pqmeta.go).

// Compact protocol type codes.
const (
	tcStop   = 0
	tcTrue   = 1
	tcFalse  = 2
	tcI8     = 3
	tcI16    = 4
	tcI32    = 5
	tcI64    = 6
	tcDouble = 7
	tcBinary = 8
	tcList   = 9
	tcSet    = 10
	tcMap    = 11
	tcStruct = 12
)

// thriftWriter appends a Thrift struct in the compact protocol to b. Each
// field method writes one field of the struct being written; fields go in
// increasing id order, as generated Thrift code writes them.
type thriftWriter struct {
	b     []byte
	last  int16   // the last field id of the struct being written
	outer []int16 // the enclosing structs' last ids
}

func (w *thriftWriter) field(id int16, typ byte) {
	if d := id - w.last; d > 0 && d <= 15 {
		w.b = append(w.b, byte(d)<<4|typ)
	} else {
		w.b = append(w.b, typ)
		w.b = binary.AppendVarint(w.b, int64(id))
	}
	w.last = id
}

func (w *thriftWriter) i32(id int16, v int32) {
	w.field(id, tcI32)
	w.b = binary.AppendVarint(w.b, int64(v))
}

func (w *thriftWriter) i64(id int16, v int64) {
	w.field(id, tcI64)
	w.b = binary.AppendVarint(w.b, v)
}

func (w *thriftWriter) i16(id int16, v int16) {
	w.field(id, tcI16)
	w.b = binary.AppendVarint(w.b, int64(v))
}

func (w *thriftWriter) i8(id int16, v int8) {
	w.field(id, tcI8)
	w.b = append(w.b, byte(v))
}

func (w *thriftWriter) boolean(id int16, v bool) {
	if v {
		w.field(id, tcTrue)
	} else {
		w.field(id, tcFalse)
	}
}

func (w *thriftWriter) binary(id int16, v []byte) {
	w.field(id, tcBinary)
	w.b = binary.AppendUvarint(w.b, uint64(len(v)))
	w.b = append(w.b, v...)
}

func (w *thriftWriter) str(id int16, v string) {
	w.field(id, tcBinary)
	w.b = binary.AppendUvarint(w.b, uint64(len(v)))
	w.b = append(w.b, v...)
}

// begin starts a struct field; end ends it.
func (w *thriftWriter) begin(id int16) {
	w.field(id, tcStruct)
	w.enter()
}

// enter starts a struct: a field's (begin) or a list element's.
func (w *thriftWriter) enter() {
	w.outer = append(w.outer, w.last)
	w.last = 0
}

// end ends the struct that begin or enter started.
func (w *thriftWriter) end() {
	w.b = append(w.b, tcStop)
	w.last = w.outer[len(w.outer)-1]
	w.outer = w.outer[:len(w.outer)-1]
}

// list starts a list field of n elements of type typ; the elements follow
// (listI32, or enter and end for each struct).
func (w *thriftWriter) list(id int16, typ byte, n int) {
	w.field(id, tcList)
	if n < 15 {
		w.b = append(w.b, byte(n)<<4|typ)
	} else {
		w.b = append(w.b, 0xf0|typ)
		w.b = binary.AppendUvarint(w.b, uint64(n))
	}
}

// listI32 appends an i32 list element.
func (w *thriftWriter) listI32(v int32) { w.b = binary.AppendVarint(w.b, int64(v)) }

// listStr appends a binary list element.
func (w *thriftWriter) listStr(v string) {
	w.b = binary.AppendUvarint(w.b, uint64(len(v)))
	w.b = append(w.b, v...)
}

// errThrift is a Thrift structure cut short or malformed.
var errThrift = errors.New("malformed Thrift metadata")

// maxThriftDepth bounds the nesting of structs and lists a reader follows.
const maxThriftDepth = 32

// thriftReader reads the compact protocol from b. The first error sticks:
// later reads return zero values, and err says what went wrong.
type thriftReader struct {
	b     []byte
	off   int
	err   error
	depth int
}

func (r *thriftReader) fail() {
	if r.err == nil {
		r.err = errThrift
	}
	r.off = len(r.b)
}

func (r *thriftReader) byte() byte {
	if r.off >= len(r.b) {
		r.fail()
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *thriftReader) varint() int64 {
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.off += n
	return v
}

func (r *thriftReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.off += n
	return v
}

func (r *thriftReader) i32() int32 {
	v := r.varint()
	if int64(int32(v)) != v {
		r.fail()
	}
	return int32(v)
}

func (r *thriftReader) i64() int64 { return r.varint() }

// binary returns the next binary value, a slice of r.b.
func (r *thriftReader) binary() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)-r.off) {
		r.fail()
		return nil
	}
	v := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return v
}

// fields reads a struct, calling fn with each field's id and type; fn
// reads the value (or skips it with r.skip). A boolean field's value is
// its type, tcTrue or tcFalse.
func (r *thriftReader) fields(fn func(id int16, typ byte)) {
	if r.depth++; r.depth > maxThriftDepth {
		r.fail()
	}
	var last int16
	for r.err == nil {
		h := r.byte()
		typ := h & 0x0f
		if typ == tcStop {
			break
		}
		if d := h >> 4; d != 0 {
			last += int16(d)
		} else {
			v := r.varint()
			if int64(int16(v)) != v {
				r.fail()
			}
			last = int16(v)
		}
		fn(last, typ)
	}
	r.depth--
}

// listHeader reads a list's (or set's) header: its element type and length.
func (r *thriftReader) listHeader() (typ byte, n int) {
	h := r.byte()
	typ, size := h&0x0f, uint64(h>>4)
	if size == 15 {
		size = r.uvarint()
	}
	// Every element takes at least a byte (an empty struct its stop).
	if size > uint64(len(r.b)-r.off) {
		r.fail()
		return 0, 0
	}
	return typ, int(size)
}

// skip reads past a value of type typ.
func (r *thriftReader) skip(typ byte) {
	switch typ {
	case tcTrue, tcFalse:
	case tcI8:
		r.byte()
	case tcI16, tcI32, tcI64:
		r.varint()
	case tcDouble:
		if len(r.b)-r.off < 8 {
			r.fail()
			return
		}
		r.off += 8
	case tcBinary:
		r.binary()
	case tcList, tcSet:
		if r.depth++; r.depth > maxThriftDepth {
			r.fail()
		}
		et, n := r.listHeader()
		for i := 0; i < n && r.err == nil; i++ {
			r.skipElem(et)
		}
		r.depth--
	case tcMap:
		if r.depth++; r.depth > maxThriftDepth {
			r.fail()
		}
		n := r.uvarint()
		if n > 0 {
			kv := r.byte()
			for i := uint64(0); i < n && r.err == nil; i++ {
				r.skipElem(kv >> 4)
				r.skipElem(kv & 0x0f)
			}
		}
		r.depth--
	case tcStruct:
		r.fields(func(_ int16, t byte) { r.skip(t) })
	default:
		r.fail()
	}
}

// skipElem skips a list, set or map element: a boolean element is a byte.
func (r *thriftReader) skipElem(typ byte) {
	if typ == tcTrue || typ == tcFalse {
		r.byte()
		return
	}
	r.skip(typ)
}
