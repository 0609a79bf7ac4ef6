package writeback

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFile: the file gets every byte in order, and writeback is
// asked for in consecutive ranges from 0, each once at least
// every have piled up since the last, never past what was
// written.
func TestFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ranges [][2]int64
	const every = 1 << 16
	w := New(f, every)
	w.start = func(fd uintptr, off, n int64) {
		if fd != f.Fd() {
			t.Errorf("writeback asked for fd %d, the file is %d", fd, f.Fd())
		}
		ranges = append(ranges, [2]int64{off, n})
	}
	var want bytes.Buffer
	sizes := []int{100, every - 100, 1, every / 2, every/2 + 7, 3 * every, 10}
	for i, n := range sizes {
		p := bytes.Repeat([]byte{byte(i + 1)}, n)
		if k, err := w.Write(p); k != n || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", n, k, err)
		}
		want.Write(p)
	}
	wantRanges := [][2]int64{
		{0, every},
		{every, 1 + every/2 + every/2 + 7},
		{2*every + 8, 3 * every},
	}
	if len(ranges) != len(wantRanges) {
		t.Fatalf("writeback ranges %v, want %v", ranges, wantRanges)
	}
	for i := range ranges {
		if ranges[i] != wantRanges[i] {
			t.Fatalf("writeback ranges %v, want %v", ranges, wantRanges)
		}
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the file holds %d bytes, not the %d written in order", len(got), want.Len())
	}
	startWriteback(f.Fd(), 0, int64(len(got))) // the real call, on a real file: must not fail or block
}
