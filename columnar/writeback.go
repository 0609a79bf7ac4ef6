package columnar

import "os"

// writeBehind is the file under an output's buffer. Every writeBehindBytes
// written, it asks the system to start writing them to the device
// (startWriteback), without waiting, so that the fsync that makes the
// file durable at the end (output.finish) finds most of it written
// already. Without it, that fsync wrote the whole file at the end of the
// replay, on no core's work, waiting for the device (TestWriteBehind;
// BenchmarkReplay). Databases do the same
// (RocksDB's bytes_per_sync, PostgreSQL's backend_flush_after).
//
// The hint changes nothing about the file's bytes or durability: a
// failure to start writing back is left to the fsync to report.
type writeBehind struct {
	f       *os.File
	fd      uintptr
	written int64 // bytes written to f
	started int64 // bytes asked to be written back: [0, started)
	// start asks for [off, off+n) to be written back: startWriteback,
	// or a test's recorder.
	start func(fd uintptr, off, n int64)
}

// writeBehindBytes is how many bytes writeBehind lets pile up before it
// asks for them to be written back: one full output buffer (ioBufSize).
const writeBehindBytes = ioBufSize

func newWriteBehind(f *os.File) *writeBehind {
	return &writeBehind{f: f, fd: f.Fd(), start: startWriteback}
}

func (w *writeBehind) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.written-w.started >= writeBehindBytes {
		w.start(w.fd, w.started, w.written-w.started)
		w.started = w.written
	}
	return n, err
}
