package trace

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// BenchmarkTextReaderFile reads the .tasm file named by $REPLAY_TASM
// (make one with `replay gen uniform -o u.zst` and `replay disasm u.zst -o
// u.tasm`) to its end.
func BenchmarkTextReaderFile(b *testing.B) {
	path := os.Getenv("REPLAY_TASM")
	if path == "" {
		b.Skip("set REPLAY_TASM to a .tasm file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		tr, err := NewTextReader(bytes.NewReader(data), "bench.tasm", WithTextFile(bytes.NewReader(data)))
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkTextAsmFile is BenchmarkTextReaderFile with every record
// written to a BinaryWriter, as `replay asm` does.
func BenchmarkTextAsmFile(b *testing.B) {
	path := os.Getenv("REPLAY_TASM")
	if path == "" {
		b.Skip("set REPLAY_TASM to a .tasm file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		tr, err := NewTextReader(bytes.NewReader(data), "bench.tasm", WithTextFile(bytes.NewReader(data)))
		if err != nil {
			b.Fatal(err)
		}
		bw, err := NewBinaryWriter(io.Discard, tr.Header())
		if err != nil {
			b.Fatal(err)
		}
		if err := Copy(bw, tr); err != nil {
			b.Fatal(err)
		}
		if err := bw.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
