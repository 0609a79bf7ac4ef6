package columnar

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Parquet's metadata: the page headers, the column chunks' and row
// groups' metadata and the footer, in the Thrift structures of
// parquet.thrift (https://github.com/apache/parquet-format), written with
// the package's compact-protocol writer (thrift.go). The writer writes the
// bytes arrow-go's page writer and metadata builders wrote for the same
// pages, field for field (TestParquetGolden), and links none of arrow-go's
// parquet packages: they import arrow/compute, whose kernel registry took
// 3-4 ms of every start of the command, and with pqarrow's Arrow Flight,
// gRPC and protobuf, half its binary.

// Parquet's enums, as parquet.thrift numbers them.
type (
	pqType     int32 // Type: a column's physical type
	pqEncoding int32 // Encoding
	pqPageType int32 // PageType
)

const (
	ptBoolean   pqType = 0
	ptInt32     pqType = 1
	ptInt64     pqType = 2
	ptByteArray pqType = 6

	pqPlain      pqEncoding = 0
	pqPlainDict  pqEncoding = 2
	pqRLE        pqEncoding = 3
	pqDelta      pqEncoding = 5 // DELTA_BINARY_PACKED
	pqRLEDict    pqEncoding = 8
	pqDataPage   pqPageType = 0
	pqDictPage   pqPageType = 2
	pqDataPageV2 pqPageType = 3
	codecNone    int32      = 0 // CompressionCodec UNCOMPRESSED
	codecZstd    int32      = 6
	convUTF8     int32      = 0 // ConvertedType
	convUint32   int32      = 13
	convUint64   int32      = 14
	convInt64    int32      = 18
	repRequired  int32      = 0 // FieldRepetitionType
	noConverted  int32      = -1
)

// pqCreatedBy is the footer's created_by: the string arrow-go 18.8's
// writer put there, kept so that the files stay byte for byte those of
// earlier versions of replay. Readers look it up for the bugs of known
// writers; arrow-go's has none that these files' features reach.
const pqCreatedBy = "parquet-go version 18.8.0"

// maxStatBytes is the longest minimum or maximum a column's statistics
// keep (arrow-go's default): a longer one is left out.
const maxStatBytes = 4096

// pqColumn is a leaf column of a table's Parquet schema, from its Arrow
// field (pqarrow's mapping: utf8 is a STRING BYTE_ARRAY, uintN an
// unsigned INTEGER, int64 a signed one, bool a BOOLEAN).
type pqColumn struct {
	name      string
	typ       pqType
	converted int32 // noConverted for none
	logical   byte  // 0 none, 's' STRING, 'i' INTEGER
	bits      int8  // INTEGER's bit width
	signed    bool  // INTEGER's signedness
	// signedOrder: the column's sort order is signed, so its statistics
	// carry the deprecated min and max fields beside min_value and
	// max_value (as arrow-go writes them for INT64 and BOOLEAN).
	signedOrder bool
}

// pqColumns maps an Arrow schema of the tables' types to Parquet columns.
func pqColumns(sc *arrow.Schema) []pqColumn {
	cols := make([]pqColumn, sc.NumFields())
	for i, f := range sc.Fields() {
		c := pqColumn{name: f.Name, converted: noConverted}
		switch f.Type.ID() {
		case arrow.STRING:
			c.typ, c.converted, c.logical = ptByteArray, convUTF8, 's'
		case arrow.UINT32:
			c.typ, c.converted, c.logical, c.bits = ptInt32, convUint32, 'i', 32
		case arrow.UINT64:
			c.typ, c.converted, c.logical, c.bits = ptInt64, convUint64, 'i', 64
		case arrow.INT64:
			c.typ, c.converted, c.logical, c.bits, c.signed, c.signedOrder = ptInt64, convInt64, 'i', 64, true, true
		case arrow.BOOL:
			c.typ, c.signedOrder = ptBoolean, true
		default:
			panic("columnar: no Parquet column for " + f.Type.String()) // the specs have none
		}
		cols[i] = c
	}
	return cols
}

// pqStats is a page's or column chunk's statistics: a minimum and a
// maximum, PLAIN-encoded, each present unless longer than maxStatBytes,
// and a null count of 0.
type pqStats struct {
	min, max       []byte
	hasMin, hasMax bool
	set            bool // false: the zero value, no statistics
}

func newStats(lo, hi []byte) pqStats {
	return pqStats{min: lo, max: hi, hasMin: len(lo) <= maxStatBytes, hasMax: len(hi) <= maxStatBytes, set: true}
}

// writeStats writes st as Statistics field id.
func (w *thriftWriter) writeStats(id int16, st *pqStats, signedOrder bool) {
	w.begin(id)
	if signedOrder && st.hasMax {
		w.binary(1, st.max)
	}
	if signedOrder && st.hasMin {
		w.binary(2, st.min)
	}
	w.i64(3, 0) // null_count
	if st.hasMax {
		w.binary(5, st.max)
	}
	if st.hasMin {
		w.binary(6, st.min)
	}
	w.end()
}

// appendDataPageHeader appends the PageHeader of a V1 data page: rows
// values in enc, raw bytes before compression, size after, the levels'
// encoding RLE (the columns are required: the page has none).
func appendDataPageHeader(b []byte, raw, size, rows int32, enc pqEncoding, st *pqStats, signedOrder bool) []byte {
	w := thriftWriter{b: b}
	w.i32(1, int32(pqDataPage))
	w.i32(2, raw)
	w.i32(3, size)
	w.begin(5)
	w.i32(1, rows)
	w.i32(2, int32(enc))
	w.i32(3, int32(pqRLE))
	w.i32(4, int32(pqRLE))
	w.writeStats(5, st, signedOrder)
	w.end()
	w.b = append(w.b, tcStop)
	return w.b
}

// appendDictPageHeader appends the PageHeader of a dictionary page of n
// PLAIN values.
func appendDictPageHeader(b []byte, raw, size, n int32) []byte {
	w := thriftWriter{b: b}
	w.i32(1, int32(pqDictPage))
	w.i32(2, raw)
	w.i32(3, size)
	w.begin(7)
	w.i32(1, n)
	w.i32(2, int32(pqPlain))
	w.boolean(3, false) // is_sorted
	w.end()
	w.b = append(w.b, tcStop)
	return w.b
}

// chunkMeta is what the footer says of one column chunk.
type chunkMeta struct {
	dictOffset   int64 // 0: no dictionary page
	dataOffset   int64 // the first data page's
	values       int64
	raw, size    int64 // the pages' bytes (headers included) before and after compression
	enc          pqEncoding
	dictPages    int32
	dataPages    int32
	stats        pqStats
	hasDict      bool
	dataEncoding pqEncoding // the data pages' encoding
}

func (c *chunkMeta) fileOffset() int64 {
	if c.dictOffset > 0 {
		return c.dictOffset
	}
	return c.dataOffset
}

// rowGroupMeta is what the footer says of one row group.
type rowGroupMeta struct {
	chunks  []chunkMeta
	rows    int64
	ordinal int16
}

// appendFooter appends the FileMetaData of a file of the columns cols,
// the row groups rgs and the key-value metadata kv.
func appendFooter(b []byte, cols []pqColumn, rgs []rowGroupMeta, kv [][2]string) []byte {
	w := thriftWriter{b: b}
	w.i32(1, 2) // version
	w.list(2, tcStruct, len(cols)+1)
	w.enter()
	w.str(4, "schema")
	w.i32(5, int32(len(cols)))
	w.end()
	for i := range cols {
		c := &cols[i]
		w.enter()
		w.i32(1, int32(c.typ))
		w.i32(3, repRequired)
		w.str(4, c.name)
		if c.converted != noConverted {
			w.i32(6, c.converted)
		}
		switch c.logical {
		case 's':
			w.begin(10)
			w.begin(1)
			w.end()
			w.end()
		case 'i':
			w.begin(10)
			w.begin(10)
			w.i8(1, c.bits)
			w.boolean(2, c.signed)
			w.end()
			w.end()
		}
		w.end()
	}
	var rows int64
	for i := range rgs {
		rows += rgs[i].rows
	}
	w.i64(3, rows)
	w.list(4, tcStruct, len(rgs))
	for i := range rgs {
		rg := &rgs[i]
		w.enter()
		w.list(1, tcStruct, len(rg.chunks))
		var raw, size int64
		for k := range rg.chunks {
			ch := &rg.chunks[k]
			raw += ch.raw
			size += ch.size
			w.enter()
			w.i64(2, ch.fileOffset())
			w.begin(3)
			w.i32(1, int32(cols[k].typ))
			if ch.hasDict {
				w.list(2, tcI32, 3)
				w.listI32(int32(pqRLEDict))
				w.listI32(int32(pqPlain))
			} else {
				w.list(2, tcI32, 2)
				w.listI32(int32(ch.enc))
			}
			w.listI32(int32(pqRLE))
			w.list(3, tcBinary, 1)
			w.listStr(cols[k].name)
			w.i32(4, codecZstd)
			w.i64(5, ch.values)
			w.i64(6, ch.raw)
			w.i64(7, ch.size)
			w.i64(9, ch.dataOffset)
			if ch.dictOffset > 0 {
				w.i64(11, ch.dictOffset)
			}
			if ch.stats.set {
				w.writeStats(12, &ch.stats, cols[k].signedOrder)
			}
			n := 0
			if ch.dictPages > 0 {
				n++
			}
			if ch.dataPages > 0 {
				n++
			}
			w.list(13, tcStruct, n)
			if ch.dictPages > 0 {
				w.enter()
				w.i32(1, int32(pqDictPage))
				w.i32(2, int32(pqPlain))
				w.i32(3, ch.dictPages)
				w.end()
			}
			if ch.dataPages > 0 {
				w.enter()
				w.i32(1, int32(pqDataPage))
				w.i32(2, int32(ch.dataEncoding))
				w.i32(3, ch.dataPages)
				w.end()
			}
			w.end() // ColumnMetaData
			w.end() // ColumnChunk
		}
		w.i64(2, raw)
		w.i64(3, rg.rows)
		var first int64
		if len(rg.chunks) > 0 {
			first = rg.chunks[0].fileOffset()
		}
		w.i64(5, first)
		w.i64(6, size)
		w.i16(7, rg.ordinal)
		w.end()
	}
	if len(kv) > 0 {
		w.list(5, tcStruct, len(kv))
		for _, p := range kv {
			w.enter()
			w.str(1, p[0])
			w.str(2, p[1])
			w.end()
		}
	}
	w.str(6, pqCreatedBy)
	w.list(7, tcStruct, len(cols))
	for range cols {
		w.enter()
		w.begin(1) // TYPE_ORDER
		w.end()
		w.end()
	}
	w.b = append(w.b, tcStop)
	return w.b
}
