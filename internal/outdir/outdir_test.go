package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TestCreateAndRemove: Create returns exactly the directories it made,
// outermost first; Remove takes those back and nothing else.
func TestCreateAndRemove(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		made []string
	}{
		{"a", nil},
		{"a/b", []string{"a/b"}},
		{"a/b/c/d/", []string{"a/b", "a/b/c", "a/b/c/d"}},
		{"x/y", []string{"x", "x/y"}},
	} {
		dir := filepath.Join(root, tc.dir)
		made, err := Create(dir)
		if err != nil {
			t.Fatalf("Create(%s): %v", tc.dir, err)
		}
		var rel []string
		for _, d := range made {
			r, _ := filepath.Rel(root, d)
			rel = append(rel, filepath.ToSlash(r))
		}
		if !slices.Equal(rel, tc.made) {
			t.Errorf("Create(%s) made %v, want %v", tc.dir, rel, tc.made)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("Create(%s): no directory: %v", tc.dir, err)
		}
		made.Remove()
		for _, d := range made {
			if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Create(%s): %s stays after Remove: %v", tc.dir, d, err)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "a")); err != nil {
			t.Errorf("Create(%s): Remove took a, which was there before: %v", tc.dir, err)
		}
	}
}

// TestRemoveKeepsWhatHoldsFiles: a made directory that holds a file stays,
// and so do its parents; the empty ones inside it go.
func TestRemoveKeepsWhatHoldsFiles(t *testing.T) {
	root := t.TempDir()
	made, err := Create(filepath.Join(root, "p", "q", "r"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p", "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	made.Remove()
	if _, err := os.Stat(filepath.Join(root, "p", "q")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("p/q stays: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "p", "keep")); err != nil {
		t.Errorf("p/keep is gone: %v", err)
	}
}

// TestCreateInTheWay: a file where a directory must go fails with
// os.MkdirAll's error, naming the path, and makes nothing.
func TestCreateInTheWay(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub", "sub2")} {
		made, err := Create(dir)
		var pe *os.PathError
		if !errors.As(err, &pe) || pe.Path != file {
			t.Errorf("Create(%s) = %v; want an error naming %s", dir, err, file)
		}
		if made != nil {
			t.Errorf("Create(%s) returned %v on failure", dir, made)
		}
	}
	if ents, _ := os.ReadDir(root); len(ents) != 1 {
		t.Errorf("root holds %d entries after the failures, want 1 (f)", len(ents))
	}
}

// TestSyncThreads: SyncThreads raises GOMAXPROCS to n, never lowers it,
// and its restore puts back the value before, unless something else set
// another meanwhile.
func TestSyncThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, c := range []struct {
		n, during, after int
		other            int // set between SyncThreads and restore (0: none)
	}{
		{4, 4, 2, 0},
		{2, 2, 2, 0},
		{1, 2, 2, 0},
		{3, 3, 5, 5},
	} {
		runtime.GOMAXPROCS(2)
		restore := SyncThreads(c.n)
		if got := runtime.GOMAXPROCS(0); got != c.during {
			t.Errorf("SyncThreads(%d) from 2: GOMAXPROCS %d, want %d", c.n, got, c.during)
		}
		if c.other != 0 {
			runtime.GOMAXPROCS(c.other)
		}
		restore()
		if got := runtime.GOMAXPROCS(0); got != c.after {
			t.Errorf("SyncThreads(%d) from 2, %d set meanwhile: GOMAXPROCS %d after, want %d", c.n, c.other, got, c.after)
		}
	}
}
