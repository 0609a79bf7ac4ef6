package columnar

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// recordWriter is what pqarrow.FileWriter and ipc.FileWriter have in common.
type recordWriter interface {
	Write(rec arrow.RecordBatch) error
	Close() error
}

// output is one file being written: a temporary name in the output
// directory until [Writer.publishAll] renames it to its final name.
type output struct {
	tmp, final string
	f          *os.File
	bw         *bufio.Writer
	w          recordWriter
	done       bool // finish or discard ran; f is closed
	keep       bool // discard leaves the file: a commit journal names it
}

// bufWriter hides bufio.Writer's other methods (in particular it is not an
// io.Closer), so the format writers never close the file themselves: the
// output closes it after flushing and syncing.
type bufWriter struct{ b *bufio.Writer }

func (w bufWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

const ioBufSize = 256 << 10

// File name extensions of the two formats.
const (
	extParquet = ".parquet"
	extArrow   = ".arrow"
)

func openOutput(dir, table string, format Format, schema *arrow.Schema, batchRows int, mem memory.Allocator) (*output, error) {
	ext := extParquet
	if format == FormatArrow {
		ext = extArrow
	}
	base := table + ext
	f, err := createTemp(dir, "."+base+".tmp-")
	if err != nil {
		return nil, err
	}
	o := &output{tmp: f.Name(), final: filepath.Join(dir, base), f: f, bw: bufio.NewWriterSize(f, ioBufSize)}
	sink := bufWriter{o.bw}
	switch format {
	case FormatParquet:
		popts := []parquet.WriterProperty{
			// zstd rather than snappy: on these tables (long runs of
			// small integers, repeated strings) it gives markedly
			// smaller files at a similar decode speed, and DuckDB,
			// pyarrow/pandas and polars all read it. Default level (3).
			parquet.WithCompression(compress.Codecs.Zstd),
			// Every Write is one record batch of at most batchRows rows,
			// so each batch becomes exactly one row group.
			parquet.WithMaxRowGroupLength(int64(batchRows)),
			// Dictionary-encode the string columns only (space, op,
			// fault, …: a handful of distinct values). On the integer
			// columns (addresses, values, sequence numbers, nearly all
			// distinct) a dictionary costs a hash per row and then falls
			// back to plain anyway: it tripled the memory table's time.
			parquet.WithDictionaryDefault(false),
			parquet.WithStats(true),
			parquet.WithAllocator(mem),
		}
		for _, f := range schema.Fields() {
			if f.Type.ID() == arrow.STRING {
				popts = append(popts, parquet.WithDictionaryFor(f.Name, true))
			}
		}
		props := parquet.NewWriterProperties(popts...)
		arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem))
		o.w, err = pqarrow.NewFileWriter(schema, sink, props, arrProps)
	case FormatArrow:
		// Uncompressed IPC: readable by every Arrow implementation
		// (compressed IPC bodies are not) and memory-mappable.
		o.w, err = ipc.NewFileWriter(sink, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	default:
		err = fmt.Errorf("columnar: invalid format %v", format)
	}
	if err != nil {
		o.discard()
		return nil, fmt.Errorf("columnar: %s: %w", base, err)
	}
	return o, nil
}

// createTemp is os.CreateTemp with mode 0666 (before umask), so that the
// published file gets the same permissions as any other file the user
// creates, not CreateTemp's 0600.
func createTemp(dir, prefix string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf("%s%016x", prefix, rand.Uint64()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("columnar: could not create a temporary file %s* in %s", prefix, dir)
}

func (o *output) write(rec arrow.RecordBatch) error {
	if err := o.w.Write(rec); err != nil {
		return fmt.Errorf("columnar: writing %s: %w", filepath.Base(o.final), err)
	}
	return nil
}

// finish writes the footer and makes the temporary file durable and
// closed. It leaves it under its temporary name.
func (o *output) finish() error {
	if o.done {
		return nil
	}
	o.done = true
	err := o.w.Close()
	if err == nil {
		err = o.bw.Flush()
	}
	if err == nil {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("columnar: finishing %s: %w", filepath.Base(o.final), err)
	}
	return nil
}

// discard releases the format writer and removes the temporary file
// (unless keep is set). It reports only a failure to remove it.
func (o *output) discard() error {
	if !o.done {
		o.done = true
		if o.w != nil {
			_ = o.w.Close() // releases its buffers; the bytes are thrown away
		}
		_ = o.f.Close()
	}
	if o.keep {
		return nil
	}
	if err := os.Remove(o.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("columnar: %w", err)
	}
	return nil
}
