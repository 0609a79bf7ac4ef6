package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestReadsMuch: main advises the heap into huge pages (a collection and
// a few hundred faults at start-up) only for a command that reads a large
// input: a file of adviseFrom bytes or more, a directory whose files two
// levels down hold as much (a split directory; a merge's partitions from
// mergeAdviseFrom bytes), or a binary trace of adviseChunks chunks or
// more, however small its file;
// not for help, a bad flag, a replay of a small trace, nor a merge of
// small partitions or a replay of a small split directory.
func TestReadsMuch(t *testing.T) {
	dir := t.TempDir()
	small, large := filepath.Join(dir, "small.zst"), filepath.Join(dir, "large.zst")
	if err := os.WriteFile(small, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	sparseFile(t, large, adviseFrom)
	// parts: two small partitions; bigParts: a small and a large one,
	// a table two levels down.
	parts, bigParts := filepath.Join(dir, "parts"), filepath.Join(dir, "bigparts")
	for _, p := range []string{
		filepath.Join(parts, "part=0", "memory.parquet"), filepath.Join(parts, "part=1", "memory.parquet"),
		filepath.Join(bigParts, "part=0", "memory.parquet"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, 100), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(bigParts, "part=1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(large, filepath.Join(bigParts, "part=1", "memory.parquet")); err != nil {
		t.Fatal(err)
	}
	// linked: a partition directory that is a symbolic link to bigParts' large one.
	linked := filepath.Join(dir, "linked")
	if err := os.MkdirAll(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bigParts, "part=1"), filepath.Join(linked, "part=1")); err != nil {
		t.Fatal(err)
	}
	// midParts: a partition of mergeAdviseFrom bytes, below adviseFrom;
	// mid: a trace as large.
	midParts, mid := filepath.Join(dir, "midparts"), filepath.Join(dir, "mid.zst")
	if err := os.MkdirAll(filepath.Join(midParts, "part=0"), 0o755); err != nil {
		t.Fatal(err)
	}
	sparseFile(t, filepath.Join(midParts, "part=0", "memory.parquet"), mergeAdviseFrom)
	sparseFile(t, mid, mergeAdviseFrom)
	// many: more entries than readsMuch looks at, each small.
	many := filepath.Join(dir, "many")
	if err := os.MkdirAll(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range inputEntries + 1 {
		if err := os.WriteFile(filepath.Join(many, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// oneChunk, twoChunks: binary traces of two instructions, small
	// files, in one chunk and in two (adviseChunks); tasm: their text.
	tasm := filepath.Join(dir, "two.tasm")
	oneChunk, twoChunks := filepath.Join(dir, "one.zst"), filepath.Join(dir, "two.zst")
	text := "atom.global.add.u32 %r1, [%rd1], %r2; | %rd1=0x1000 %r2=1\n" +
		"atom.global.add.u32 %r1, [%rd1], %r2; | %rd1=0x1004 %r2=1\n"
	if err := os.WriteFile(tasm, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range [][]string{{"asm", tasm, "-o", oneChunk}, {"asm", "-chunk", "1", tasm, "-o", twoChunks}} {
		var stderr bytes.Buffer
		if code := run(a, io.Discard, &stderr); code != exitOK {
			t.Fatalf("replay %q: exit %d: %s", a, code, stderr.String())
		}
	}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"help"}, false},
		{[]string{"-h"}, false},
		{[]string{"help", dir}, false},
		{[]string{small}, false},
		{[]string{"-tables", "memory", small}, false},
		{[]string{"-no-such-flag"}, false},
		{[]string{filepath.Join(dir, "missing.zst")}, false},
		{[]string{large}, true},
		{[]string{"-q", large}, true},
		{[]string{"-partition", "0/2", dir}, true},
		{[]string{"split", large, "-partitions", "2", "-o", filepath.Join(dir, "s")}, true},
		{[]string{"asm", small, "-o", filepath.Join(dir, "x.zst")}, false},
		{[]string{"merge", "-o", filepath.Join(dir, "out"), parts}, false},
		{[]string{"merge", "-o", filepath.Join(dir, "out"), filepath.Join(parts, "part=0"), filepath.Join(parts, "part=1")}, false},
		{[]string{"merge", "-o", filepath.Join(dir, "out"), bigParts}, true},
		{[]string{"merge", "-o", filepath.Join(dir, "out"), filepath.Join(bigParts, "part=1")}, true},
		{[]string{"merge", "-o", filepath.Join(dir, "out"), linked}, true},
		{[]string{"merge", "-o", filepath.Join(dir, "out"), midParts}, true},
		{[]string{mid}, false},
		{[]string{"-partition", "0/1", midParts}, false},
		{[]string{"-partition", "1/2", parts}, false},
		{[]string{"-partition", "1/2", bigParts}, true},
		{[]string{"-q", "-o", many, small}, true},
		{[]string{"gen", "uniform", "-o", dir}, false},
		{[]string{oneChunk}, false},
		{[]string{twoChunks}, true},
		{[]string{"-tables", "memory", twoChunks}, true},
		{[]string{"split", twoChunks, "-partitions", "2", "-o", filepath.Join(dir, "s")}, true},
		{[]string{tasm}, false},
	} {
		if got := readsMuch(c.args); got != c.want {
			t.Errorf("readsMuch(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// sparseFile creates a file of size bytes at path without writing them
// (a hole), as large as a command that reads much names.
func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}
