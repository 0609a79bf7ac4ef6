package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadsMuch: main advises the heap into huge pages (a collection and
// a few hundred faults at start-up) only for a command that reads a large
// input: a merge, a directory, a file of adviseFrom bytes or more; not
// for help, a bad flag or a replay of a small trace.
func TestReadsMuch(t *testing.T) {
	dir := t.TempDir()
	small, large := filepath.Join(dir, "small.zst"), filepath.Join(dir, "large.zst")
	if err := os.WriteFile(small, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	sparseFile(t, large, adviseFrom)
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
		{[]string{"merge", "-o", "out", "p"}, true},
		{[]string{"gen", "uniform", "-o", dir}, false},
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
