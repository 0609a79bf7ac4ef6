package columnar

import (
	"encoding/base64"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The Parquet encoding of the tables. Each choice was measured with the
// benchmarks of bench_test.go and single-column variants of them (results:
// 2^20 rows resembling a scattered replay's; instructions: 2^18 rows of a
// 24-instruction loop), on the project's 2-core VM; ns/row is the time
// of encoding and compressing that column alone (the best of several
// runs), B/row its share of the file.
//
//   - DELTA_BINARY_PACKED (encDelta in schema.go) where PLAIN left zstd
//     much to do: results.seq 6 ns and 0.00 B (PLAIN: 23-30 ns, 0.5-0.8
//     B), results.addr 16 ns and 2.9 B (PLAIN: 55-68 ns, 3.4-3.5 B: random
//     words of 4 MiB), results.value 11 ns and 1.7 B (PLAIN: 43-70 ns,
//     1.8-2.2 B), instructions.addresses and max_conflict 7.5 ns and 0.34 B
//     (PLAIN: 17 ns, 0.50 B), instructions.warp 6.8 ns (PLAIN: 8.4 ns);
//     instructions.group 6-7 ns and 0.002 B on a 1-D grid's rows (a group
//     every 8 warps; PLAIN: 10-11.5 ns, 0.19 B) and as cheap as PLAIN
//     where groups cycle (6.3 and 6.0 ns); and the increasing seq and addr
//     columns of the other tables.
//   - PLAIN where the values repeat or cycle: results.lane, elem and
//     value_hi, instructions.lanes and faults cost 2-4.5 ns and
//     0.00-0.01 B, where DELTA cost 5-6.5 ns and a dictionary built by the
//     column writer 14-18 ns (it hashes every value).
//   - RLE_DICTIONARY for the strings, from a dictionary the Writer builds
//     per batch without hashing each row's string (writer.go): the column
//     writer's own dictionary encoder hashed every value, and cost about
//     100 ns and an allocation per row for results.fault. The
//     instructions' five string columns are keyed (batch.go): a row
//     stores one key, and writeStrings expands each column's indices
//     writeBatch rows at a time (fill 20 -> 8 ns a row, table 126 -> 118
//     ns a row, CPU time, in BenchmarkInstructions). A chunk whose
//     dictionary outgrows the dictionary page limit (1 MiB: a thousand
//     distinct instruction texts of 1 KB) is written PLAIN instead.
//   - zstd at level 1 (klauspost's SpeedFastest): level 3 cost 2 ns a row
//     more for a results file of the same size, 13 ns more for an
//     instructions file 2.5% smaller (whole tables, CPU time).
//   - Pages of 64 KiB, the values handed to the column writers 8 Ki at a
//     time: arrow-go's column writers allocate their page buffers anew for
//     every row group, and smaller pages reuse them within it (results
//     67 -> 60 ns a row, instructions 131 -> 104, for files 0.3% and 4%
//     larger than with one page per column chunk).
//   - One row group per batch (64 Ki rows by default), statistics on every
//     column.
//   - A batch of parallelRows rows or more has its numeric columns split
//     between two goroutines (writeParallel): the results table of
//     BenchmarkResults 70-83 -> 56-64 ms a million rows, for the same CPU
//     time and the same bytes (TestParallelColumnsSameFile).
const (
	zstdLevel  = 1
	writeBatch = 8 << 10
	dataPage   = 64 << 10
)

// parquetWriter writes batches as row groups of a Parquet file with
// arrow-go's low-level file writer, from the batch's own buffers (no
// Arrow arrays in between).
type parquetWriter struct {
	fw        *file.Writer
	mem       memory.Allocator
	dictLimit int
	idxBuf    []int32 // a keyed column's indices, writeBatch rows at a time
	aside     []bool  // the columns writeParallel encodes on its second goroutine
}

func parquetProps(spec *tableSpec, batchRows int, mem memory.Allocator) *parquet.WriterProperties {
	popts := []parquet.WriterProperty{
		// zstd: markedly smaller files than snappy at a similar decode
		// speed, and DuckDB, pyarrow/pandas and polars all read it.
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(zstdLevel),
		parquet.WithMaxRowGroupLength(int64(batchRows)),
		parquet.WithBatchSize(int64(writeBatch)),
		parquet.WithDataPageSize(int64(dataPage)),
		parquet.WithDictionaryDefault(false),
		parquet.WithStats(true),
		parquet.WithAllocator(mem),
	}
	for i, f := range spec.schema.Fields() {
		switch spec.encs[i] {
		case encDict:
			popts = append(popts, parquet.WithDictionaryFor(f.Name, true))
		case encDelta:
			popts = append(popts, parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaBinaryPacked))
		}
	}
	return parquet.NewWriterProperties(popts...)
}

func newParquetWriter(sink io.Writer, spec *tableSpec, batchRows int, mem memory.Allocator, kv [][2]string) (*parquetWriter, error) {
	props := parquetProps(spec, batchRows, mem)
	sc, err := pqarrow.ToParquet(spec.schema, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, err
	}
	// The Arrow schema goes into the file as pqarrow.WithStoreSchema
	// stores it: utf8 strings and unsigned integers, so that Arrow-based
	// readers (pyarrow, pandas, polars, arrow-go) read exactly these
	// types, plain strings and not dictionaries or categoricals.
	meta := metadata.NewKeyValueMetadata()
	if err := meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(spec.schema, mem))); err != nil {
		return nil, err
	}
	for _, p := range kv {
		if err := meta.Append(p[0], p[1]); err != nil {
			return nil, err
		}
	}
	fw, err := file.NewParquetWriterWithError(sink, sc.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	return &parquetWriter{fw: fw, mem: mem, dictLimit: int(props.DictionaryPageSizeLimit()), aside: asideColumns(spec)}, nil
}

// write writes b as one row group.
func (p *parquetWriter) write(b *batch) error {
	if b.rows >= parallelRows && len(p.aside) > 0 {
		return p.writeParallel(b)
	}
	rg, err := p.fw.AppendRowGroupChecked()
	if err != nil {
		return err
	}
	for i := range b.cols {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		if err := p.writeColumn(cw, b, i); err != nil {
			return err
		}
	}
	return rg.Close()
}

// parallelRows is the fewest rows a batch has for its columns to be
// encoded on two goroutines (writeParallel): below, starting one costs
// more than it saves.
const parallelRows = 4096

// writeParallel writes b as a buffered row group, whose column chunks
// arrow-go keeps in memory, each with its own encoder, compressor and
// page buffer, until the row group closes and writes them in column
// order: the columns in p.aside are encoded on a goroutine of their own
// while this one encodes the rest, so a table's encoding uses two cores
// where the replay leaves one free (the memory table, written after the
// replay). The file is the one write would make.
func (p *parquetWriter) writeParallel(b *batch) error {
	rg, err := p.fw.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	writeCols := func(aside bool) error {
		for i := range b.cols {
			if p.aside[i] != aside {
				continue
			}
			cw, err := rg.Column(i)
			if err != nil {
				return err
			}
			if err := p.writeColumn(cw, b, i); err != nil {
				return err
			}
		}
		return nil
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			// As pipeline.write: a panic in arrow-go fails the write, not
			// the process.
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- writeCols(true)
	}()
	err = writeCols(false)
	if errAside := <-done; err == nil {
		err = errAside
	}
	if err != nil {
		return err
	}
	return rg.Close()
}

// asideColumns picks the columns writeParallel encodes on its second
// goroutine: numeric columns only (the string columns share p.idxBuf),
// heaviest first, as long as the goroutine's share stays within half of
// the table's estimated cost. It returns nil when no column qualifies.
func asideColumns(spec *tableSpec) []bool {
	cost := func(i int) int {
		switch {
		case spec.encs[i] == encDelta:
			return 3 // bit-packing, and zstd over what is left
		case spec.schema.Field(i).Type.ID() == arrow.STRING:
			return 1 // a key a row, from a small dictionary
		}
		return 2 // PLAIN: zstd over the column's bytes
	}
	total := 0
	for i := range spec.encs {
		total += cost(i)
	}
	aside := make([]bool, len(spec.encs))
	share, any := 0, false
	for _, w := range []int{3, 2} {
		for i := range spec.encs {
			if cost(i) == w && spec.schema.Field(i).Type.ID() != arrow.STRING && 2*(share+w) <= total {
				aside[i], share, any = true, share+w, true
			}
		}
	}
	if !any {
		return nil
	}
	return aside
}

// writeColumn writes the first b.rows values of column i to cw.
func (p *parquetWriter) writeColumn(cw file.ColumnChunkWriter, b *batch, i int) error {
	c := &b.cols[i]
	n := b.rows
	var err error
	switch w := cw.(type) {
	case *file.Int64ColumnChunkWriter: // UINT64 and INT64
		_, err = w.WriteBatch(arrow.GetData[int64](c.raw[:8*n]), nil, nil)
	case *file.Int32ColumnChunkWriter: // UINT32
		_, err = w.WriteBatch(arrow.GetData[int32](c.raw[:4*n]), nil, nil)
	case *file.BooleanColumnChunkWriter:
		_, err = w.WriteBatch(c.bools()[:n], nil, nil)
	case *file.ByteArrayColumnChunkWriter:
		err = p.writeStrings(w, b, c)
	default:
		err = fmt.Errorf("unexpected column writer %T", cw)
	}
	if err != nil {
		return fmt.Errorf("column %s: %w", cw.Descr().Name(), err)
	}
	return nil
}

// dictPutter is the part of arrow-go's dictionary encoder (an internal
// type) that writing a prepared dictionary needs.
type dictPutter interface {
	PutDictionary(arrow.Array) error
	NumEntries() int
}

// writeStrings writes the first n rows of a string column: the batch's
// dictionary as the chunk's dictionary page and the rows' indices as its
// data, as pqarrow writes an Arrow dictionary array. The statistics are
// the dictionary's smallest and largest value (every value of the
// dictionary is used by some row).
func (p *parquetWriter) writeStrings(w *file.ByteArrayColumnChunkWriter, b *batch, c *colBuf) error {
	n := b.rows
	enc, ok := w.CurrentEncoder().(dictPutter)
	if !ok || c.dictBytes > p.dictLimit {
		// Too many distinct strings for one dictionary page: PLAIN.
		w.FallbackToPlain()
		vals := make([]parquet.ByteArray, n)
		var buf []int32
		if c.keyed {
			buf = make([]int32, n)
		}
		for k, i := range b.indices(c, 0, n, buf) {
			vals[k] = parquet.ByteArray(c.dict[i])
		}
		_, err := w.WriteBatch(vals, nil, nil)
		return err
	}
	if n == 0 {
		return nil
	}
	dict := stringArray(c.dict, p.mem)
	err := enc.PutDictionary(dict) // the encoder keeps (retains) dict
	dict.Release()
	if err != nil {
		return err
	}
	if enc.NumEntries() != len(c.dict) {
		return fmt.Errorf("dictionary of %d strings has %d distinct ones", len(c.dict), enc.NumEntries())
	}
	if st, ok := w.PageStatistics().(*metadata.ByteArrayStatistics); ok {
		lo, hi := c.dict[0], c.dict[0]
		for _, s := range c.dict[1:] {
			lo, hi = min(lo, s), max(hi, s)
		}
		// Non-nil even when empty: a nil value means "no statistic".
		st.SetMinMax(append([]byte{}, lo...), append([]byte{}, hi...))
		st.IncNumValues(int64(n))
	}
	if !c.keyed {
		return writeIndices(w, c.idx()[:n])
	}
	if p.idxBuf == nil {
		p.idxBuf = make([]int32, writeBatch)
	}
	for from := 0; from < n; from += writeBatch {
		if err := writeIndices(w, b.indices(c, from, min(writeBatch, n-from), p.idxBuf)); err != nil {
			return err
		}
	}
	return nil
}

// writeIndices writes rows of a dictionary-encoded column, given as
// indices into the chunk's dictionary.
func writeIndices(w *file.ByteArrayColumnChunkWriter, idx []int32) error {
	data := array.NewData(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(idx))}, nil, 0, 0)
	arr := array.NewInt32Data(data)
	data.Release()
	defer arr.Release()
	return w.WriteDictIndices(arr, nil, nil)
}

// stringArray returns ss as an Arrow utf8 array.
func stringArray(ss []string, mem memory.Allocator) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(ss, nil)
	return b.NewArray()
}

func (p *parquetWriter) close() error { return p.fw.Close() }
