package accelsim

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchTrace is a kernel of blocks blocks, each the published matrixmul
// block (tracer version 4) with the hand-written atomics appended to
// every warp: 1 line in 36 an atomic.
func benchTrace(tb testing.TB, blocks int) []byte {
	raw, err := os.ReadFile(filepath.Join(testdata, "microgpusim-matrixmul/kernel-1.traceg"))
	if err != nil {
		tb.Fatal(err)
	}
	atoms, err := os.ReadFile(filepath.Join(testdata, "atomics/kernel-2.traceg"))
	if err != nil {
		tb.Fatal(err)
	}
	var extra []string
	for _, l := range strings.Split(string(atoms), "\n") {
		if strings.Contains(l, "ATOMG") || strings.Contains(l, "RED.") {
			extra = append(extra, l[strings.IndexByte(l, ' ')+1:]) // without the line number
		}
	}
	header, rest, _ := strings.Cut(string(raw), "#BEGIN_TB")
	header = strings.Replace(header, "-grid dim = (1,1,1)", fmt.Sprintf("-grid dim = (%d,1,1)", blocks), 1)
	var warps [][]string
	for _, w := range strings.Split(rest, "\nwarp = ")[1:] {
		lines := strings.Split(strings.TrimSpace(w), "\n")
		var body []string
		for _, l := range lines[2:] {
			if l != "" && l != "#END_TB" {
				body = append(body, l)
			}
		}
		warps = append(warps, append(body, extra...))
	}
	var b bytes.Buffer
	b.WriteString(header)
	for k := 0; k < blocks; k++ {
		fmt.Fprintf(&b, "#BEGIN_TB\n\nthread block = %d,0,0\n", k)
		for i, w := range warps {
			fmt.Fprintf(&b, "\nwarp = %d\ninsts = %d\n%s\n", i, len(w), strings.Join(w, "\n"))
		}
		b.WriteString("\n#END_TB\n\n")
	}
	return b.Bytes()
}

// BenchmarkTracegRead: reading .traceg text into atomics, in MB/s of text.
func BenchmarkTracegRead(b *testing.B) {
	data := benchTrace(b, 100)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), "bench.traceg")
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
