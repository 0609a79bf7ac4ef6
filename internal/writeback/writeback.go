package writeback

import "os"

// File is a file under an output's buffer: every Every bytes written, it
// asks the system to start writing them back (sync_file_range on Linux).
type File struct {
	f       *os.File
	fd      uintptr
	every   int64 // bytes that pile up before writeback is asked for
	written int64 // bytes written to f
	started int64 // bytes asked to be written back: [0, started)
	// start asks for [off, off+n) to be written back: startWriteback,
	// or a test's recorder.
	start func(fd uintptr, off, n int64)
}

// New returns f with its writeback started every `every` bytes written
// (at least 1).
func New(f *os.File, every int64) *File {
	return &File{f: f, fd: f.Fd(), every: max(every, 1), start: startWriteback}
}

// Write writes p to the file, and starts the writeback of what has piled
// up once it reaches the threshold.
func (w *File) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.written-w.started >= w.every {
		w.start(w.fd, w.started, w.written-w.started)
		w.started = w.written
	}
	return n, err
}
