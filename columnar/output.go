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
	"github.com/klauspost/compress/zstd"

	"github.com/gpureplay/replay/internal/writeback"
)

// batchWriter writes batches to a file in one format.
type batchWriter interface {
	write(b *batch) error
	close() error // writes the footer; releases the writer's buffers
}

// ipcWriter writes batches as the record batches of an Arrow IPC file.
type ipcWriter struct {
	w   *ipc.FileWriter
	sc  *arrow.Schema
	mem memory.Allocator
}

func (w *ipcWriter) write(b *batch) error {
	rec := b.record(w.sc, w.mem)
	defer rec.Release()
	return w.w.Write(rec)
}

func (w *ipcWriter) close() error { return w.w.Close() }

// output is one file being written: a temporary name in the output
// directory until [Writer.publishAll] renames it to its final name.
type output struct {
	tmp, final string
	f          *os.File
	wb         *writeback.File // f, with its writeback started every full buffer written
	bw         *bufio.Writer
	w          batchWriter
	done       bool // finish or discard ran; f is closed
	keep       bool // discard leaves the file: a commit journal names it
}

// bufWriter hides bufio.Writer's other methods (in particular it is not an
// io.Closer), so the format writers never close the file themselves: the
// output closes it after flushing and syncing. An output starts with a
// buffer of ioBufStart bytes and takes one of ioBufSize once a write does
// not fit: a small table (ops; a short replay's three) never allocates
// the large one: a replay of a thousand instructions allocates 3.4 MB,
// not 4.1, and peaks at 1.8 MB above its start, not 2.1.
type bufWriter struct{ o *output }

func (w bufWriter) Write(p []byte) (int, error) {
	o := w.o
	if len(p) >= directWrite {
		// A large page goes to the file from its own memory, after
		// what the buffer holds: bufio would first copy all of it that
		// fits into the buffer (the results' pages of 100-190 KiB,
		// 40 MB of a uniform replay's copied for nothing).
		if err := o.bw.Flush(); err != nil {
			return 0, err
		}
		return o.wb.Write(p)
	}
	if o.bw.Size() < ioBufSize && o.bw.Available() < len(p) {
		if err := o.bw.Flush(); err != nil {
			return 0, err
		}
		o.bw = bufio.NewWriterSize(o.wb, ioBufSize)
	}
	return o.bw.Write(p)
}

const (
	ioBufStart = 16 << 10
	ioBufSize  = 256 << 10
	// directWrite is the smallest write that bypasses the buffer.
	directWrite = 64 << 10
)

// File name extensions of the two formats.
const (
	extParquet = ".parquet"
	extArrow   = ".arrow"
)

func openOutput(dir string, spec *tableSpec, format Format, mem memory.Allocator, pages *zstd.Encoder, meta [][2]string) (*output, error) {
	ext := extParquet
	if format == FormatArrow {
		ext = extArrow
	}
	base := spec.name + ext
	f, err := createTemp(dir, "."+base+".tmp-")
	if err != nil {
		return nil, err
	}
	wb := writeback.New(f, ioBufSize)
	o := &output{tmp: f.Name(), final: filepath.Join(dir, base), f: f, wb: wb, bw: bufio.NewWriterSize(wb, ioBufStart)}
	sink := bufWriter{o}
	switch format {
	case FormatParquet:
		var pw *parquetWriter
		pw, err = newParquetWriter(sink, spec, mem, pages, meta)
		if err == nil {
			o.w = pw
		}
	case FormatArrow:
		// Uncompressed IPC: readable by every Arrow implementation
		// (compressed IPC bodies are not) and memory-mappable.
		var iw *ipc.FileWriter
		sc := spec.schema
		if len(meta) > 0 {
			keys, vals := make([]string, len(meta)), make([]string, len(meta))
			for i, kv := range meta {
				keys[i], vals[i] = kv[0], kv[1]
			}
			md := arrow.NewMetadata(keys, vals)
			sc = arrow.NewSchema(sc.Fields(), &md)
		}
		iw, err = ipc.NewFileWriter(sink, ipc.WithSchema(sc), ipc.WithAllocator(mem))
		if err == nil {
			o.w = &ipcWriter{iw, spec.schema, mem}
		}
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

func (o *output) write(b *batch) error {
	return o.wrap(o.w.write(b))
}

// A stagedWriter is a batchWriter that encodes a batch apart from writing
// it, as the Parquet writer does: pipeline.runOverlapped encodes a batch
// while the one before is written. encode encodes b into chunk set buf
// with its columns in state; it may run while another set and state are
// encoded or written. writeEncoded writes set buf, encoded from b, in the
// file's order.
type stagedWriter interface {
	encode(state, buf int, b *batch) error
	writeEncoded(buf int, b *batch) error
}

// encode encodes b for a staged writer; a writer that is not one (Arrow
// IPC) encodes as it writes, in writeEncoded.
func (o *output) encode(state, buf int, b *batch) error {
	if sw, ok := o.w.(stagedWriter); ok {
		return o.wrap(sw.encode(state, buf, b))
	}
	return nil
}

// writeEncoded writes b, encoded into chunk set buf by encode, to the
// file.
func (o *output) writeEncoded(buf int, b *batch) error {
	if sw, ok := o.w.(stagedWriter); ok {
		return o.wrap(sw.writeEncoded(buf, b))
	}
	return o.write(b)
}

func (o *output) wrap(err error) error {
	if err != nil {
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
	err := o.w.close()
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
			_ = o.w.close() // releases its buffers; the bytes are thrown away
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
