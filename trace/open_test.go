package trace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// openTasm is a small text trace: a hot counter over warps 0 to 4 (the
// records of warps 1 to 4 repeat warp 0's but for the warp's delta, one)
// and an instruction with a list of 1 to 32.
var openTasm = `.region global 0x1000 0x1000
.warp 0
atom.global.add.u32 _, [a], 1; | a=0x1000
.warp 1
atom.global.add.u32 _, [a], 1; | a=0x1000
.warp 2
atom.global.add.u32 _, [a], 1; | a=0x1000
.warp 3
atom.global.add.u32 _, [a], 1; | a=0x1000
.warp 4
atom.global.add.u32 _, [a], 1; | a=0x1000
atom.global.add.u32 d, [a], b; | a=0x1100:4 b=[` + listOf(32) + `]
`

// listOf is "1,2,…,n".
func listOf(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(s, ",")
}

// binaryOfTasm is the binary form of a text trace.
func binaryOfTasm(t *testing.T, text string) []byte {
	t.Helper()
	tr, err := NewTextReader(strings.NewReader(text), "t.tasm")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewBinaryWriter(&buf, tr.Header())
	if err != nil {
		t.Fatal(err)
	}
	if err := Copy(w, tr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// countInsts counts src's instructions (directives aside).
func countInsts(t *testing.T, src Source) int {
	t.Helper()
	n := 0
	for {
		in, err := src.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if in.Dir == nil {
			n++
		}
	}
}

// TestOpenTellsTheFormByContent: Open reads a file that starts with the
// zstd magic as binary whatever its name, any other as text, but refuses
// a .zst that is not binary, naming the file and what it starts with; its
// Caps are its reader's; the progress reaches the file's size.
func TestOpenTellsTheFormByContent(t *testing.T) {
	dir := t.TempDir()
	bin := binaryOfTasm(t, openTasm)
	for _, tc := range []struct {
		file string
		data []byte
		caps SourceCaps
		err  []string
	}{
		{"text.tasm", []byte(openTasm), 0, nil},
		{"text", []byte(openTasm), 0, nil},
		{"bin.zst", bin, CapArena | CapRepeat, nil},
		{"bin.tasm", bin, CapArena | CapRepeat, nil},
		{"bin", bin, CapArena | CapRepeat, nil},
		{"text.zst", []byte(openTasm), 0, []string{"text.zst: not a binary trace (it does not start with the zstd magic 28 b5 2f fd; it starts with 2e 72 65 67)", "name it so"}},
		{"TEXT.ZST", []byte(openTasm), 0, []string{"TEXT.ZST: not a binary trace"}},
		{"junk.zst", []byte("\x05&r\x01junk"), 0, []string{"junk.zst: not a binary trace", "starts with 05 26 72 01"}},
		{"empty.zst", nil, 0, []string{"empty.zst: not a binary trace", "it is empty"}},
		{"truncated.zst", bin[:len(bin)/2], 0, []string{"truncated.zst: seek table"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			var read int64
			src, err := Open(path, WithName(tc.file), WithProgress(func(n int64) { read = n }))
			if tc.err != nil {
				if err == nil {
					src.Close()
					t.Fatalf("opened, want an error with %q", tc.err)
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := src.Caps(); got != tc.caps {
				t.Errorf("caps %v, want %v", got, tc.caps)
			}
			if n := countInsts(t, src); n != 6 {
				t.Errorf("read %d instructions, want 6", n)
			}
			// A binary trace's progress is the end of the last chunk
			// read, before the seek table.
			if size := int64(len(tc.data)); read != size && (tc.caps == 0 || read < size/2 || read > size) {
				t.Errorf("progress says %d bytes read of %d", read, size)
			}
			if err := src.Close(); err != nil {
				t.Error(err)
			}
			if err := src.Close(); err != nil {
				t.Errorf("a second Close: %v", err)
			}
		})
	}
	if _, err := Open(filepath.Join(dir, "missing.tasm")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestOpenStream: a trace in a pipe (no seek table to read, no size) is
// told apart by its first bytes too, and a pipe named .zst must be binary.
func TestOpenStream(t *testing.T) {
	bin := binaryOfTasm(t, openTasm)
	for _, tc := range []struct {
		name string
		data []byte
		caps SourceCaps
		err  string
	}{
		{"bin.zst", bin, CapArena | CapRepeat, ""},
		{"bin.tasm", bin, CapArena | CapRepeat, ""},
		{"text.tasm", []byte(openTasm), 0, ""},
		{"text.zst", []byte(openTasm), 0, "text.zst: not a binary trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() { pw.Write(tc.data); pw.Close() }()
			defer pr.Close()
			src, err := openFile(pr, tc.name, tc.name, nil, []ReaderOption{WithName(tc.name)})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				io.Copy(io.Discard, pr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := src.Caps(); got != tc.caps {
				t.Errorf("caps %v, want %v", got, tc.caps)
			}
			if n := countInsts(t, src); n != 6 {
				t.Errorf("read %d instructions, want 6", n)
			}
			if err := src.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestOpenForwardsFastPaths: the source Open returns for a binary trace
// takes its reader's fast paths, not only declares them: lists decoded
// into the caller's arena, and the hot counter's records handed over as
// repeats.
func TestOpenForwardsFastPaths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.zst")
	if err := os.WriteFile(path, binaryOfTasm(t, openTasm), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var arena []uint64
	insts, repeats := 0, 0
	for {
		in, a, err := src.NextInto(arena)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		arena = a
		if in.Dir != nil {
			continue
		}
		insts++
		n, dg, dw := src.Repeats(10)
		if n > 0 && (dg != 0 || dw != 1) {
			t.Errorf("repeats advance group %d, warp %d; want 0, 1", dg, dw)
		}
		repeats += n
	}
	if insts != 2 || repeats != 4 {
		t.Errorf("read %d instructions and %d repeats, want 2 (warp 0, the list) and 4 (warps 1 to 4)", insts, repeats)
	}
	if len(arena) != 32 || arena[3] != 4 || arena[31] != 32 {
		t.Errorf("the arena holds %v, want the list 1 to 32", arena)
	}
}

func TestSourceCapsString(t *testing.T) {
	for c, want := range map[SourceCaps]string{0: "none", CapArena: "arena", CapRepeat: "repeat", CapArena | CapRepeat: "arena|repeat", 0x80: "?"} {
		if got := c.String(); got != want {
			t.Errorf("%#x: %q, want %q", uint8(c), got, want)
		}
	}
}
