package split

import "os"

// writeBehind is the file under a slice file's buffer. Every
// writeBehindBytes written, it asks the system to start writing them to
// the device (startWriteback), without waiting, so that the fsync that
// makes the file durable before its rename (outputs.commit) finds most of
// it written already, rather than writing a split task's every file at its
// end on no core's work. It mirrors columnar's write-behind of tables.
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
// asks for them to be written back.
const writeBehindBytes = 1 << 20

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
