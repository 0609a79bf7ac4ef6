package columnar

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/zstd"
)

// The Parquet encoding of the tables. Each choice was measured with the
// benchmarks of bench_test.go (BenchmarkResults, BenchmarkInstructions,
// BenchmarkMemory) and single-column variants of them; the encoders are
// the package's own (pqencode.go), which write the bytes arrow-go's would.
//
//   - DELTA_BINARY_PACKED (encDelta in schema.go) where PLAIN left zstd
//     much to do: sequence numbers, addresses, values, the instructions'
//     addresses, max_conflict, warp and group (a 1-D grid's groups), and
//     the increasing seq and addr columns of the other tables. Also the
//     results' lane: PLAIN's 4 bytes a lane of partial warps (an append
//     queue's random masks, 9.6 M lanes) took zstd 170 ms of CPU, most of
//     the results table's cost, for 7.6 MB of file; DELTA packs them 6
//     bits a lane first (zstd 5x less to do): the default tables of
//     appendqueue-ptx 254 -> 185 ms, the file 5.2 MB; a spinlock's lanes
//     (4.9 -> 5.8 MB) and full warps' (a DELTA page of runs, below) take
//     the same time as PLAIN.
//   - PLAIN where the values repeat or cycle (booleans, the small counts
//     of ops and races): cheaper than DELTA, and than a dictionary, which
//     hashes every value. instructions.lanes and faults are DELTA: a batch
//     whose column keeps to a progression stores no rows (encodeAffine),
//     and a constant PLAIN column would still write 4 bytes a row for
//     zstd.
//   - RLE_DICTIONARY for the strings, from a dictionary the Writer builds
//     per batch without hashing each row's string (writer.go): the column
//     writer's own dictionary encoder hashed every value and allocated a
//     row. The instructions' five string columns are keyed (batch.go): a
//     row stores one key, and encodeStrings expands each column's indices
//     a page at a time. A chunk whose dictionary outgrows the dictionary
//     page limit (1 MiB: a thousand distinct instruction texts of 1 KB)
//     is written PLAIN instead.
//   - zstd at level 1 (klauspost's SpeedFastest): level 3 cost more CPU a
//     row for files hardly smaller.
//   - Pages that zstd does not shrink by a sixteenth stored in raw zstd
//     frames, the column's next 15 pages too, then one compressed again
//     (zstdframe.go): a scattered replay's memory values do not compress,
//     and compressing them was most of that column's cost
//     (BenchmarkMemory). A page of sampledPageBytes or more is judged on
//     a sample first (the results' addresses: pages of 190 KiB).
//   - A PLAIN page equal to the page before it in its column chunk
//     repeats that page's compressed bytes and statistics (repeatPage),
//     as zstd would make them again; so does a lane page of full warps,
//     one a row group, the row group's before it (encodeIotaRuns,
//     colChunk.iota).
//   - Pages of dataPage bytes for PLAIN integers (8 Ki rows of 8 bytes),
//     of up to maxPageRows rows for the other encodings (pqpages.go).
//   - One row group per batch (64 Ki rows by default), statistics on every
//     column.
//   - A batch of parallelRows rows or more has its numeric columns shared
//     between two goroutines (encodeParallel): less wall time for the
//     same CPU time and the same bytes (BenchmarkResults;
//     TestParallelColumnsSameFile).
const (
	zstdLevel = 1
	dataPage  = 64 << 10
)

// parquetWriter writes batches as row groups of a Parquet file. It
// encodes and compresses each column chunk's pages itself (pqencode.go),
// then writes them with their page headers and keeps each column chunk's
// metadata for the footer (pqmeta.go). The column chunks of a row group
// are encoded first, on two goroutines for a large batch
// (encodeParallel), then written in column order.
type parquetWriter struct {
	sink  *tellWriter
	cols  []pqColumn
	kv    [][2]string // the footer's key-value metadata
	rgs   []rowGroupMeta
	pages *zstd.Encoder // the Writer's (newPageEncoder)
	// storedBelow is the largest data page stored rather than
	// compressed (storedPageBytes, or the Writer's option).
	storedBelow int
	dicts       dictCompressor
	dictLimit   int
	encs        []encoding
	hdr         []byte // a page header being written
	// bufs are the column chunks of the row groups being encoded: one
	// set, or encodeSets for a table whose pipeline encodes a batch
	// while it writes the one before (pipeline.runOverlapped).
	bufs [encodeSets][]colChunk
	// stored is the state each column carries from row group to row
	// group (colChunk.stored), once per set of row groups: a table
	// whose pipeline overlaps encodes batch k with state k mod
	// encodeSets (whatever chunks it is encoded into), so the file's
	// bytes depend on its batches alone, never on timing or cores.
	stored [encodeSets][]int
	// freshStates: every row group starts in the state of no page
	// stored raw, not in the last one's (WithSeqRowGroups' instructions:
	// each of its row groups then encodes as the merged file's does
	// from that state, which copyRowGroup checks).
	freshStates bool
	// The columns encodeParallel shares between its goroutines, and the
	// ones it keeps on the table's (splitColumns); shared is nil for a
	// table that is always encoded on one.
	shared, own []int
}

// tellWriter counts the bytes written: the file offsets the footer
// records.
type tellWriter struct {
	w io.Writer
	n int64
}

func (t *tellWriter) Write(b []byte) (int, error) {
	n, err := t.w.Write(b)
	t.n += int64(n)
	return n, err
}

func (t *tellWriter) Tell() int64 { return t.n }

// dictPageLimit is the largest dictionary page a column chunk writes
// (arrow-go's default): a batch whose strings take more is written PLAIN.
const dictPageLimit = 1 << 20

func newParquetWriter(sink io.Writer, spec *tableSpec, mem memory.Allocator, pages *zstd.Encoder, kv [][2]string) (*parquetWriter, error) {
	// The Arrow schema goes into the file as pqarrow.WithStoreSchema
	// stores it, an IPC stream of the schema alone, base64: utf8 strings
	// and unsigned integers, so that Arrow-based readers (pyarrow,
	// pandas, polars, arrow-go) read exactly these types, plain strings
	// and not dictionaries or categoricals.
	var ser bytes.Buffer
	iw := ipc.NewWriter(&ser, ipc.WithSchema(spec.schema), ipc.WithAllocator(mem))
	if err := iw.Close(); err != nil {
		return nil, err
	}
	meta := append([][2]string{{"ARROW:schema", base64.StdEncoding.EncodeToString(ser.Bytes())}}, kv...)
	p := &parquetWriter{
		sink:        &tellWriter{w: sink},
		cols:        pqColumns(spec.schema),
		kv:          meta,
		storedBelow: storedPageBytes,
		pages:       pages,
		dictLimit:   dictPageLimit,
		encs:        spec.encs,
	}
	p.shared, p.own = splitColumns(spec)
	p.bufs[0] = p.newChunks()
	for i := range p.stored {
		p.stored[i] = make([]int, len(p.bufs[0]))
	}
	if _, err := p.sink.Write(parquetMagic); err != nil {
		return nil, err
	}
	return p, nil
}

var parquetMagic = []byte("PAR1")

// newChunks returns a set of column chunks, one per column.
func (p *parquetWriter) newChunks() []colChunk {
	chunks := make([]colChunk, len(p.cols))
	for i := range chunks {
		chunks[i].col = &p.cols[i]
	}
	return chunks
}

// encodeSets is how many row groups a table's Parquet writer may have
// encoded or being encoded at once (pipeline.runOverlapped), and how many
// states its columns keep (parquetWriter.stored).
const encodeSets = 2

// write writes b as one row group.
func (p *parquetWriter) write(b *batch) error {
	if err := p.encode(0, 0, b); err != nil {
		return err
	}
	return p.writeEncoded(0, b)
}

// encode encodes b's column chunks into chunk set buf, its columns in
// state (parquetWriter.stored). It may run while another set is encoded
// or written (writeEncoded), never while its own set or state is.
func (p *parquetWriter) encode(state, buf int, b *batch) error {
	chunks := p.bufs[buf]
	if chunks == nil {
		// The first use of this set: made here, so that a writer that
		// never encodes two batches at once never holds it.
		chunks = p.newChunks()
		p.bufs[buf] = chunks
	}
	st := p.stored[state]
	if p.freshStates {
		clear(st)
	}
	for i := range chunks {
		chunks[i].stored = st[i]
	}
	var err error
	if b.rows >= parallelRows && len(p.shared) > 0 {
		err = p.encodeParallel(chunks, b)
	} else {
		for i := range chunks {
			if err = p.encodeColumn(chunks, b, i); err != nil {
				break
			}
		}
	}
	for i := range chunks {
		st[i] = chunks[i].stored
	}
	return err
}

// writeEncoded writes chunk set buf, encoded from b, as the file's next
// row group.
func (p *parquetWriter) writeEncoded(buf int, b *batch) error {
	return p.writeRowGroup(p.bufs[buf], b.rows)
}

// parallelRows is the fewest rows a batch has for its columns to be
// encoded on two goroutines (encodeParallel): below, starting one costs
// more than it saves.
const parallelRows = 4096

// encodeParallel encodes the batch's column chunks on two goroutines, so
// a table's encoding uses two cores where the replay leaves one free (the
// memory table, written after the replay). The numeric columns are
// shared out as they go: each goroutine takes the next one in p.shared
// (heaviest first) when it is done with the last, so that a column that
// turns out cheap (a constant group) does not leave one goroutine idle
// while the other encodes the rest. The string columns, which share the
// batch's keys, stay on this goroutine, which encodes them first. Each
// column chunk has its own buffers, so which goroutine encodes a column
// makes no difference to the file: it is the one serial encoding makes.
func (p *parquetWriter) encodeParallel(chunks []colChunk, b *batch) error {
	var next atomic.Int32
	take := func() error {
		for {
			k := int(next.Add(1)) - 1
			if k >= len(p.shared) {
				return nil
			}
			if err := p.encodeColumn(chunks, b, p.shared[k]); err != nil {
				next.Store(int32(len(p.shared))) // the other stops at its next take
				return err
			}
		}
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			// As pipeline.write: a panic fails the write, not the
			// process.
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- take()
	}()
	var err error
	for _, i := range p.own {
		if err = p.encodeColumn(chunks, b, i); err != nil {
			break
		}
	}
	if err == nil {
		err = take()
	} else {
		next.Store(int32(len(p.shared)))
	}
	if errShared := <-done; err == nil {
		err = errShared
	}
	return err
}

// splitColumns returns the columns encodeParallel shares between its two
// goroutines, the numeric ones, heaviest first by an estimate of their
// cost (DELTA before PLAIN, wider before narrower), and the string
// columns it keeps on the table's own goroutine. shared is nil when
// fewer than two columns could be shared, as there is nothing to split.
//
// Shared as they go rather than split by the estimate once and for all:
// on the memory table, whose addr, value and group are all DELTA, a fixed
// split sent the constant group column alone to the second goroutine,
// which then had little to do.
func splitColumns(spec *tableSpec) (shared, own []int) {
	cost := func(i int) int {
		w := 4
		switch spec.schema.Field(i).Type.ID() {
		case arrow.UINT64, arrow.INT64:
			w = 8
		case arrow.BOOL:
			w = 1
		}
		if spec.encs[i] == encDelta {
			return 2 * w // bit-packing, and zstd over what is left
		}
		return w // PLAIN: zstd over the column's bytes
	}
	for i := range spec.encs {
		if spec.schema.Field(i).Type.ID() == arrow.STRING {
			own = append(own, i)
		} else {
			shared = append(shared, i)
		}
	}
	if len(shared) < 2 {
		return nil, own
	}
	slices.SortStableFunc(shared, func(a, b int) int { return cost(b) - cost(a) })
	return shared, own
}

// writeRowGroup writes the encoded column chunks as one row group of rows
// rows, in column order: per chunk its dictionary page, if any, and its
// data pages, each after its header, and keeps the chunk's metadata for
// the footer.
func (p *parquetWriter) writeRowGroup(chunks []colChunk, rows int) error {
	rg := rowGroupMeta{chunks: make([]chunkMeta, len(chunks)), rows: int64(rows), ordinal: int16(len(p.rgs))}
	for i := range chunks {
		ch, m := &chunks[i], &rg.chunks[i]
		m.enc = pqPlain
		if p.encs[i] == encDelta {
			m.enc = pqDelta
		}
		if ch.dictN > 0 {
			m.hasDict = true
			z, err := p.dicts.compress(ch.zbuf[:0], ch.dict)
			if err != nil {
				return fmt.Errorf("column %s: %w", ch.col.name, err)
			}
			ch.zbuf = z[:0]
			m.dictOffset = p.sink.Tell()
			if err := p.writePage(m, appendDictPageHeader(p.hdr[:0], int32(len(ch.dict)), int32(len(z)), int32(ch.dictN)), z, len(ch.dict)); err != nil {
				return fmt.Errorf("column %s: %w", ch.col.name, err)
			}
			m.dictPages++
		}
		from := 0
		for k := range ch.pages {
			pg := &ch.pages[k]
			data := ch.out[from:pg.end]
			if k == 0 {
				m.dataOffset = p.sink.Tell()
			}
			hdr := appendDataPageHeader(p.hdr[:0], pg.raw, int32(len(data)), pg.rows, pg.enc, &pg.stats, ch.col.signedOrder)
			if err := p.writePage(m, hdr, data, int(pg.raw)); err != nil {
				return fmt.Errorf("column %s: %w", ch.col.name, err)
			}
			m.values += int64(pg.rows)
			m.dataPages++
			m.dataEncoding = pg.enc
			from = pg.end
		}
		if rows > 0 {
			m.stats = ch.stats
		}
	}
	p.rgs = append(p.rgs, rg)
	return nil
}

// writePage writes a page's header and its data, raw bytes before
// compression, and counts them in its column chunk's sizes.
func (p *parquetWriter) writePage(m *chunkMeta, hdr, data []byte, raw int) error {
	p.hdr = hdr
	if _, err := p.sink.Write(hdr); err != nil {
		return err
	}
	if _, err := p.sink.Write(data); err != nil {
		return err
	}
	m.raw += int64(len(hdr) + raw)
	m.size += int64(len(hdr) + len(data))
	return nil
}

// close writes the footer: the file's metadata, its length and the magic.
func (p *parquetWriter) close() error {
	foot := appendFooter(nil, p.cols, p.rgs, p.kv)
	foot = binary.LittleEndian.AppendUint32(foot, uint32(len(foot)))
	foot = append(foot, parquetMagic...)
	_, err := p.sink.Write(foot)
	return err
}
