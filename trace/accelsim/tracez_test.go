package accelsim

import (
	"bytes"
	"encoding/binary"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
)

// tzWarpLines is one warp of a .traceg: its block and lines.
type tzWarpLines struct {
	block [3]uint32
	lines []string
}

// splitTraceg cuts a post-processed .traceg into its header lines (those
// before the first #BEGIN_TB: the lines write_tracez keeps) and its blocks'
// warps, in order.
func splitTraceg(t *testing.T, text string) (header []string, blocks [][]tzWarpLines) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	i := 0
	for ; i < len(lines) && lines[i] != "#BEGIN_TB"; i++ {
		header = append(header, lines[i])
	}
	var tb [3]uint32
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "#BEGIN_TB":
			blocks = append(blocks, nil)
		case strings.HasPrefix(l, "thread block = "):
			xyz, ok := triple(strings.TrimPrefix(l, "thread block = "))
			if !ok {
				t.Fatalf("line %d", i+1)
			}
			tb = [3]uint32{uint32(xyz[0]), uint32(xyz[1]), uint32(xyz[2])}
		case strings.HasPrefix(l, "warp = "):
			b := &blocks[len(blocks)-1]
			*b = append(*b, tzWarpLines{block: tb})
		case l == "", l == "#END_TB", strings.HasPrefix(l, "insts = "), strings.HasPrefix(l, "cluster "):
		default:
			b := blocks[len(blocks)-1]
			w := &b[len(b)-1]
			w.lines = append(w.lines, lines[i])
		}
	}
	return header, blocks
}

// writeTracez writes a .tracez the way post-traces-processing.cpp's
// write_tracez does (tracez_format.h): the header lines each with '\n'
// and a NUL; dict_size and subchunk_insts; the dictionary, trained on
// every 8th line of every warp; each warp's inst_count, num_subchunks and
// sub-chunks (u32 size, then a zstd frame of its lines joined by '\n');
// the index; its offset.
func writeTracez(t *testing.T, header []string, blocks [][]tzWarpLines, subchunk int, withDict bool) []byte {
	var f bytes.Buffer
	for _, h := range header {
		f.WriteString(h + "\n")
	}
	f.WriteByte(0)
	var d []byte
	if withDict {
		var samples [][]byte
		for _, b := range blocks {
			for _, w := range b {
				for k := 0; k < len(w.lines); k += 8 {
					samples = append(samples, []byte(w.lines[k]))
				}
			}
		}
		var err error
		if d, err = dict.BuildZstdDict(samples, dict.Options{MaxDictSize: 64 << 10, HashBytes: 6}); err != nil {
			t.Fatalf("dictionary: %v", err)
		}
	}
	u32 := func(v uint32) { binary.Write(&f, binary.LittleEndian, v) }
	u32(uint32(len(d)))
	u32(uint32(subchunk))
	f.Write(d)
	opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedDefault)}
	if d != nil {
		opts = append(opts, zstd.WithEncoderDict(d))
	}
	enc, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var index bytes.Buffer
	iu32 := func(v uint32) { binary.Write(&index, binary.LittleEndian, v) }
	iu32(uint32(len(blocks)))
	for _, b := range blocks {
		for _, v := range b[0].block {
			iu32(v)
		}
		for range 7 { // cluster id, cluster cta, cluster rank
			iu32(0)
		}
		iu32(uint32(len(b)))
		for _, w := range b {
			var counts []uint32
			for s := 0; s < len(w.lines); s += subchunk {
				counts = append(counts, uint32(min(subchunk, len(w.lines)-s)))
			}
			iu32(uint32(len(w.lines)))
			iu32(uint32(len(counts)))
			binary.Write(&index, binary.LittleEndian, uint64(f.Len()))
			for _, c := range counts {
				iu32(c)
			}
			u32(uint32(len(w.lines)))
			u32(uint32(len(counts)))
			for s := 0; s < len(w.lines); s += subchunk {
				text := strings.Join(w.lines[s:min(s+subchunk, len(w.lines))], "\n")
				comp := enc.EncodeAll([]byte(text), nil)
				u32(uint32(len(comp)))
				f.Write(comp)
			}
		}
	}
	at := uint64(f.Len())
	f.Write(index.Bytes())
	binary.Write(&f, binary.LittleEndian, at)
	return f.Bytes()
}

// TestTracezRoundTrip: a .tracez written as the published writer writes
// it, with and without a dictionary, in sub-chunks of several sizes, reads
// as the .traceg it came from: the same instructions, lines and skipped
// opcodes.
func TestTracezRoundTrip(t *testing.T) {
	for _, name := range []string{"atomics/kernel-1.traceg", "microgpusim-matrixmul/kernel-1.traceg"} {
		path := filepath.Join(testdata, name)
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		want := readAll(t, r)
		wantStats := r.Stats()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		header, blocks := splitTraceg(t, string(raw))
		for _, withDict := range []bool{false, true} {
			if withDict && strings.HasPrefix(name, "atomics") {
				continue // too few lines to train a dictionary on
			}
			for _, sc := range []int{1, 3, 2048} {
				p := filepath.Join(t.TempDir(), "kernel-1.tracez")
				os.WriteFile(p, writeTracez(t, header, blocks, sc, withDict), 0o644)
				r, err := Open(p)
				if err != nil {
					t.Fatal(err)
				}
				got := readAll(t, r)
				s := r.Stats()
				for i := range got {
					got[i].Line = want[i].Line // a .tracez line has no number in the file
				}
				if !reflect.DeepEqual(got, want) || s.Lines != wantStats.Lines || !maps.Equal(s.Skipped, wantStats.Skipped) {
					t.Errorf("%s, dictionary %v, sub-chunks of %d: %d instructions, %d lines, skipped %v; the .traceg gives %d, %d, %v",
						name, withDict, sc, len(got), s.Lines, s.Skipped, len(want), wantStats.Lines, wantStats.Skipped)
				}
			}
		}
	}
}

// TestTracezBad: a truncated or corrupt .tracez is an error naming the file
// and the byte offset.
func TestTracezBad(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testdata, "atomics/kernel-1.traceg"))
	if err != nil {
		t.Fatal(err)
	}
	header, blocks := splitTraceg(t, string(raw))
	good := writeTracez(t, header, blocks, 2, false)
	nul := bytes.IndexByte(good, 0)
	flip := bytes.Clone(good)
	flip[nul+9+8+5] ^= 0xff // inside the first sub-chunk's zstd frame
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)-20], "at byte offset"},
		{"no header", []byte("abc"), "no NUL ends the kernel header"},
		{"corrupt frame", flip, "subchunk: zstd"},
	} {
		p := filepath.Join(t.TempDir(), "k.tracez")
		os.WriteFile(p, tc.data, 0o644)
		r, err := Open(p)
		if err == nil {
			for err == nil {
				_, err = r.Next()
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "k.tracez") {
			t.Errorf("%s: %v, want an error naming k.tracez and %q", tc.name, err, tc.want)
		}
	}
}
