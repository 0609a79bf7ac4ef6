package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Open opens the trace file at path in either form, told apart by its
// first bytes, not its name: a file that starts with the zstd magic is a
// binary trace, whatever it is called; any other is `.tasm` text, except
// that a file named *.zst must be binary (a damaged or mistaken .zst gets
// "not a binary trace" rather than a text parser's complaint about its
// first bytes). A binary trace in a regular file is read through its seek
// table, several chunks decompressed at once (OpenBinaryIndex); one in a
// pipe or a device is read in order (NewBinaryReader).
//
// Of opts, WithName names the trace in errors (default path) and
// WithProgress is called with the bytes of the file read so far, in
// either form; the others apply to a binary trace. Close the source
// however the reading ends: it stops the binary reader's goroutines and
// closes the file. Its Caps are the reader's (a binary reader's
// CapArena|CapRepeat, none for text).
func Open(path string, opts ...ReaderOption) (SourceCloser, error) {
	o, err := newReaderOptions(opts)
	if err != nil {
		return nil, err
	}
	name := o.name
	if name == "" {
		name = path
		opts = append(opts[:len(opts):len(opts)], WithName(name))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	src, err := openFile(f, path, name, o.progress, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return src, nil
}

// openFile reads the trace in f, named name in errors.
func openFile(f *os.File, path, name string, progress func(int64), opts []ReaderOption) (SourceCloser, error) {
	wantBinary := strings.EqualFold(filepath.Ext(path), ".zst")
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		var head [4]byte
		n, err := f.ReadAt(head[:], 0)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if IsBinary(head[:n]) {
			x, err := OpenBinaryIndex(f, fi.Size(), opts...)
			if err != nil {
				return nil, err
			}
			br, err := x.Reader(0, x.NumChunks())
			if err != nil {
				return nil, err
			}
			return &fileSource{Source: br, reader: br, f: f}, nil
		}
		if wantBinary {
			return nil, notBinary(name, head[:n])
		}
	}
	var r io.Reader = f
	if progress != nil {
		r = &countingReader{r: f, progress: progress}
	}
	buf := bufio.NewReaderSize(r, 1<<20)
	head, _ := buf.Peek(4)
	if IsBinary(head) {
		br, err := NewBinaryReader(buf, opts...)
		if err != nil {
			return nil, err
		}
		return &fileSource{Source: br, reader: br, f: f}, nil
	}
	if wantBinary {
		return nil, notBinary(name, head)
	}
	var topts []TextOption
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		// A binding used far from its line is read again from the file
		// rather than kept (WithTextFile).
		topts = append(topts, WithTextFile(f))
	}
	tr, err := NewTextReader(buf, name, topts...)
	if err != nil {
		return nil, err
	}
	return &fileSource{Source: tr, reader: tr, f: f}, nil
}

// notBinary is the error for a file named .zst that is not a binary trace.
func notBinary(name string, head []byte) error {
	got := "is empty"
	if len(head) > 0 {
		got = fmt.Sprintf("starts with % x", head)
	}
	return fmt.Errorf("%s: not a binary trace (it does not start with the zstd magic 28 b5 2f fd; it %s); "+
		"if it is .tasm text, name it so, else write it again with replay asm or replay gen", name, got)
}

// fileSource is a trace read from a file: the reader, as its Source (and
// so its Caps), and what Close releases.
type fileSource struct {
	Source
	reader io.Closer // the reader: its goroutines stop on Close
	f      *os.File
}

func (s *fileSource) Close() error {
	var err error
	if s.reader != nil {
		err = s.reader.Close()
		s.reader = nil
	}
	if s.f != nil {
		err = errors.Join(err, s.f.Close())
		s.f = nil
	}
	return err
}

// countingReader calls progress with the bytes read so far.
type countingReader struct {
	r        io.Reader
	n        int64
	progress func(int64)
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.progress(c.n)
	return n, err
}
