package columnar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// snapshot reads every file of dir (hidden ones too), by name.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, n := range dirNames(t, dir) {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err != nil {
			t.Fatal(err)
		} else if fi.IsDir() {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m[n] = b
	}
	return m
}

func keys(m map[string][]byte) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// visible is the table files of a snapshot: its names without a leading dot.
func visible(m map[string][]byte) map[string][]byte {
	v := map[string][]byte{}
	for n, b := range m {
		if !strings.HasPrefix(n, ".") {
			v[n] = b
		}
	}
	return v
}

// logged collects what New reports through WithLogf.
type logged []string

func (l *logged) logf(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }

// commitRun writes newFixture(n) into dir and commits it.
func commitRun(t *testing.T, dir string, n int, opts ...Option) {
	t.Helper()
	w, err := New(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	newFixture(n).feed(t, w, 3)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// The earlier run of these tests writes every table in both formats; the
// later one a subset in one format, so that a mix would show.
var (
	earlierOpts = []Option{WithFormat(FormatBoth), WithBatchRows(4)}
	laterTables = []string{"results", "ops"}
)

const earlierRows, laterRows = 10, 30

func laterOpts(extra ...Option) []Option {
	return append([]Option{WithFormat(FormatParquet), WithBatchRows(5), WithTables(laterTables...)}, extra...)
}

// openLater opens the later run's writer on dir and feeds it.
func openLater(t *testing.T, dir string, extra ...Option) *Writer {
	t.Helper()
	w, err := New(dir, laterOpts(extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	newFixture(laterRows).feed(t, w, 7)
	return w
}

// checkLaterSet checks that dir holds the later run's tables, complete,
// and nothing else visible.
func checkLaterSet(t *testing.T, dir string) {
	t.Helper()
	got := keys(visible(snapshot(t, dir)))
	if want := finalNames(laterTables, FormatParquet); !reflect.DeepEqual(got, want) {
		t.Fatalf("directory holds tables %v, want the later run's %v", got, want)
	}
	want := newFixture(laterRows).want()
	for _, n := range got {
		rb := readTable(t, filepath.Join(dir, n))
		checkRows(t, n, rb.rows, want[strings.TrimSuffix(n, filepath.Ext(n))])
	}
}

// checkNoHidden checks that dir holds no file of a writer's but tables.
func checkNoHidden(t *testing.T, dir string) {
	t.Helper()
	for _, n := range dirNames(t, dir) {
		if strings.HasPrefix(n, ".") {
			t.Errorf("directory holds %s", n)
		}
	}
}

// TestLeftoversRemoved: New removes temporary, backup and journal-temporary
// files of its own naming, says so in one line, and touches nothing else.
func TestLeftoversRemoved(t *testing.T) {
	dir := t.TempDir()
	commitRun(t, dir, earlierRows, earlierOpts...)
	earlier := snapshot(t, dir)
	leftovers := []string{
		".memory.parquet.tmp-0123456789abcdef",
		".ops.arrow.tmp-fedcba9876543210",
		".results.parquet.old",
		".replay.commit.tmp",
	}
	others := []string{
		".notes",
		".memory.parquet.tmp-notours",
		".memory.parquet.tmp-0123456789ABCDEF",
		".memory.parquet.tmp-0123456789abcdef0",
		".bogus.parquet.tmp-0123456789abcdef",
		"memory.parquet.tmp-0123456789abcdef",
		".memory.csv.tmp-0123456789abcdef",
		".replay.commit.tmp.x",
	}
	for _, n := range append(slices.Clone(leftovers), others...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	// A directory of a leftover's name is not ours to remove.
	if err := os.Mkdir(filepath.Join(dir, ".instructions.parquet.old"), 0o777); err != nil {
		t.Fatal(err)
	}
	// A killed writer leaves its lock file; the next one takes it over.
	if err := os.WriteFile(filepath.Join(dir, lockName), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	var log logged
	w, err := New(dir, WithLogf(log.logf))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"removed 4 leftover files of an interrupted replay in " + dir}; !reflect.DeepEqual([]string(log), want) {
		t.Errorf("New reported %q, want %q", log, want)
	}
	for _, n := range leftovers {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s is still there", n)
		}
	}
	for _, n := range append(others, ".instructions.parquet.old") {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	for n, b := range earlier {
		if !reflect.DeepEqual(after[n], b) {
			t.Errorf("%s changed", n)
		}
	}
	if _, ok := after[lockName]; ok {
		t.Errorf("the lock file is still there after Abort")
	}

	// Nothing to tidy: nothing reported.
	log = nil
	w, err = New(t.TempDir(), WithLogf(log.logf))
	if err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if len(log) != 0 {
		t.Errorf("New on a clean directory reported %q", log)
	}
}

// TestLocked: a second writer on a directory fails with ErrBusy and
// changes nothing, in particular not the first writer's temporary files.
func TestLocked(t *testing.T) {
	dir := t.TempDir()
	commitRun(t, dir, earlierRows, earlierOpts...)
	w1 := openLater(t, dir)
	before := snapshot(t, dir)
	if _, ok := before[lockName]; !ok {
		t.Fatalf("no lock file while a writer is open: %v", keys(before))
	}
	var log logged
	w2, err := New(dir, WithLogf(log.logf))
	if !errors.Is(err, ErrBusy) {
		if err == nil {
			w2.Abort()
		}
		t.Fatalf("second New: err = %v, want ErrBusy", err)
	}
	if errors.Is(err, ErrInvalidOption) {
		t.Errorf("second New: err = %v, not an option error", err)
	}
	if want := dir + " is being written by another replay"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if len(log) != 0 {
		t.Errorf("the second New reported %q", log)
	}
	if got := snapshot(t, dir); !reflect.DeepEqual(keys(got), keys(before)) {
		t.Errorf("the second New changed the directory: %v, was %v", keys(got), keys(before))
	}
	if err := w1.Commit(); err != nil {
		t.Fatal(err)
	}
	checkLaterSet(t, dir)
	checkNoHidden(t, dir)
	// The lock is free again.
	w3, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	w3.Abort()
}

// TestCommitReplacesEveryTable: Commit removes the earlier run's tables
// that it does not write itself, so the directory holds one run's tables.
func TestCommitReplacesEveryTable(t *testing.T) {
	dir := t.TempDir()
	commitRun(t, dir, earlierRows, earlierOpts...)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o666); err != nil {
		t.Fatal(err)
	}
	w := openLater(t, dir)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("notes.txt: %q, %v", b, err)
	}
	if err := os.Remove(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	checkLaterSet(t, dir)
	checkNoHidden(t, dir)
}

// failingRename fails rename call number k (0 is the journal's) and, if
// sticky, every one after it.
func failingRename(k int, sticky bool, calls *int) func(string, string) error {
	return func(oldpath, newpath string) error {
		i := *calls
		*calls++
		if i == k || (sticky && i > k) {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errors.New("injected failure")}
		}
		return os.Rename(oldpath, newpath)
	}
}

// renames is how many renames a commit of the later run over the earlier
// one makes: the journal, a backup of each earlier table file, a rename
// of each later one.
var renames = 1 + 2*len(TableNames()) + len(laterTables)

// TestRenameFailsPartWay: a rename failing at any point of Commit leaves
// the directory exactly as it was, byte for byte, hidden files included.
func TestRenameFailsPartWay(t *testing.T) {
	for k := range renames {
		t.Run(fmt.Sprint("rename ", k), func(t *testing.T) {
			dir := t.TempDir()
			commitRun(t, dir, earlierRows, earlierOpts...)
			earlier := snapshot(t, dir)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			w := openLater(t, dir, WithAllocator(mem))
			calls := 0
			w.rename = failingRename(k, false, &calls)
			err := w.Commit()
			if err == nil {
				t.Fatalf("Commit succeeded after %d renames", calls)
			}
			if !strings.Contains(err.Error(), "injected failure") || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q names neither the failure nor the directory", err)
			}
			mem.AssertSize(t, 0)
			if got := snapshot(t, dir); !reflect.DeepEqual(got, earlier) {
				t.Errorf("after the failure the directory holds %v, want exactly the earlier %v", keys(got), keys(earlier))
			}
			if err := w.Abort(); err != nil {
				t.Errorf("Abort: %v", err)
			}
		})
	}
	// One more rename than counted would mean the count is wrong and the
	// last renames untested.
	dir := t.TempDir()
	commitRun(t, dir, earlierRows, earlierOpts...)
	w := openLater(t, dir)
	calls := 0
	w.rename = failingRename(-1, false, &calls)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if calls != renames {
		t.Errorf("Commit renamed %d times, the test expects %d", calls, renames)
	}
}

// TestUndoFails: when the renames that would undo a failed commit fail
// too, the journal and the temporary files stay, and the next New
// completes the commit. (From the second backup on: when the first one
// fails there is nothing to undo.)
func TestUndoFails(t *testing.T) {
	for _, k := range []int{2, 5, 1 + 2*len(TableNames()), renames - 1} {
		t.Run(fmt.Sprint("rename ", k), func(t *testing.T) {
			dir := t.TempDir()
			commitRun(t, dir, earlierRows, earlierOpts...)
			w := openLater(t, dir)
			calls := 0
			w.rename = failingRename(k, true, &calls)
			err := w.Commit()
			if err == nil || !strings.Contains(err.Error(), "the next replay into "+dir+" completes this commit") {
				t.Fatalf("Commit: err = %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, journalName)); err != nil {
				t.Fatalf("no journal after a failed undo: %v", err)
			}
			var log logged
			w2, err := New(dir, WithLogf(log.logf))
			if err != nil {
				t.Fatal(err)
			}
			if len(log) != 1 || !strings.HasPrefix(log[0], "completed the interrupted commit of an earlier replay in "+dir+" (2 table files)") {
				t.Errorf("New reported %q", log)
			}
			if err := w2.Abort(); err != nil {
				t.Fatal(err)
			}
			checkLaterSet(t, dir)
			checkNoHidden(t, dir)
		})
	}
}

// TestCrashDuringCommit kills a writer (stops it dead, as SIGKILL would)
// at every rename and removal of its commit. At each point the visible
// table files are some of the earlier run's or some of the later run's,
// never both; the next New then completes the commit (once the journal is
// in place) or removes the leftovers (before), and the directory holds
// one run's complete tables.
func TestCrashDuringCommit(t *testing.T) {
	for k := 0; ; k++ {
		dir := t.TempDir()
		commitRun(t, dir, earlierRows, earlierOpts...)
		earlier := snapshot(t, dir)
		w := openLater(t, dir)
		calls := 0
		crashed := false
		// crash runs the operation unless it is number k: then it stops
		// the goroutine running Commit, with no cleanup.
		crash := func() {
			if calls == k {
				crashed = true
				runtime.Goexit()
			}
			calls++
		}
		w.rename = func(o, n string) error { crash(); return os.Rename(o, n) }
		w.remove = func(n string) error { crash(); return os.Remove(n) }
		done := make(chan error, 1)
		go func() {
			defer close(done)
			done <- w.Commit()
		}()
		err, finished := <-done
		if finished {
			if err != nil {
				t.Fatal(err)
			}
			if calls != k || k <= renames {
				t.Fatalf("Commit finished after %d operations, crashing at %d", calls, k)
			}
			checkLaterSet(t, dir)
			checkNoHidden(t, dir)
			break
		}
		if !crashed {
			t.Fatal("Commit stopped without crashing")
		}
		// The process is gone: its lock with it; its files stay.
		if err := w.lock.fl.Close(); err != nil {
			t.Fatal(err)
		}
		later := newFixture(laterRows).want()
		mid := visible(snapshot(t, dir))
		var fromEarlier, fromLater []string
		for n, b := range mid {
			if reflect.DeepEqual(earlier[n], b) {
				fromEarlier = append(fromEarlier, n)
				continue
			}
			rb := readTable(t, filepath.Join(dir, n))
			checkRows(t, n, rb.rows, later[strings.TrimSuffix(n, filepath.Ext(n))])
			fromLater = append(fromLater, n)
		}
		if len(fromEarlier) > 0 && len(fromLater) > 0 {
			t.Errorf("crash at operation %d: the directory shows the earlier run's %v and the later run's %v", k, fromEarlier, fromLater)
		}
		_, journal := snapshot(t, dir)[journalName]

		var log logged
		w2, err := New(dir, WithLogf(log.logf))
		if err != nil {
			t.Fatalf("crash at operation %d: %v", k, err)
		}
		if err := w2.Abort(); err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 {
			t.Errorf("crash at operation %d: New reported %q, want one line", k, log)
		}
		if journal {
			if len(log) > 0 && !strings.HasPrefix(log[0], "completed the interrupted commit of an earlier replay in "+dir) {
				t.Errorf("crash at operation %d: New reported %q", k, log)
			}
			checkLaterSet(t, dir)
		} else {
			if k != 0 {
				t.Errorf("crash at operation %d: no journal", k)
			}
			// The later run's two temporary files and the journal's.
			if want := []string{"removed 3 leftover files of an interrupted replay in " + dir}; !reflect.DeepEqual([]string(log), want) {
				t.Errorf("crash at operation %d: New reported %q, want %q", k, log, want)
			}
			if got := snapshot(t, dir); !reflect.DeepEqual(got, earlier) {
				t.Errorf("crash at operation %d: the directory holds %v, want the earlier %v", k, keys(got), keys(earlier))
			}
		}
		checkNoHidden(t, dir)
	}
}

// TestBadJournal: New refuses to act on a journal that is not one of its
// own, says which, and leaves the directory as it was.
func TestBadJournal(t *testing.T) {
	for name, text := range map[string]string{
		"garbage":     "hello\n",
		"empty":       journalHeader + "\n",
		"truncated":   journalHeader + "\n.ops.parquet.tmp-0123456789abcdef ops.parquet",
		"foreign tmp": journalHeader + "\n../../etc/passwd memory.parquet\n",
		"foreign":     journalHeader + "\n.memory.parquet.tmp-0123456789abcdef notes.txt\n",
		"mismatch":    journalHeader + "\n.memory.parquet.tmp-0123456789abcdef ops.parquet\n",
		"twice":       journalHeader + "\n.ops.parquet.tmp-0123456789abcdef ops.parquet\n.ops.parquet.tmp-0123456789abcdee ops.parquet\n",
		"missing":     journalHeader + "\n.memory.parquet.tmp-0123456789abcdef memory.parquet\n.ops.parquet.tmp-0123456789abcdef ops.parquet\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			commitRun(t, dir, earlierRows, earlierOpts...)
			if err := os.WriteFile(filepath.Join(dir, journalName), []byte(text), 0o666); err != nil {
				t.Fatal(err)
			}
			if name == "missing" {
				// The first entry could be completed, the second not
				// (neither its temporary file nor its table is there):
				// New must not start.
				if err := os.WriteFile(filepath.Join(dir, ".memory.parquet.tmp-0123456789abcdef"), []byte("x"), 0o666); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(filepath.Join(dir, "ops.parquet")); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, dir)
			_, err := New(dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, journalName)) {
				t.Fatalf("New: err = %v, want one naming the journal", err)
			}
			t.Logf("error: %v", err)
			if errors.Is(err, ErrBusy) {
				t.Errorf("New: err = %v, not a lock problem", err)
			}
			if got := snapshot(t, dir); !reflect.DeepEqual(got, before) {
				t.Errorf("the directory changed: %v, was %v", keys(got), keys(before))
			}
		})
	}
}

func TestJournalRoundTrip(t *testing.T) {
	es := []journalEntry{
		{".memory.parquet.tmp-0123456789abcdef", "memory.parquet"},
		{".ops.arrow.tmp-fedcba9876543210", "ops.arrow"},
	}
	got, err := parseJournal(formatJournal(es))
	if err != nil || !reflect.DeepEqual(got, es) {
		t.Errorf("parseJournal(formatJournal(%v)) = %v, %v", es, got, err)
	}
}

// TestLockExclusive: writers that come and go on one directory (each
// removing the lock file as it ends) never hold it two at a time, and a
// writer that cannot have it gets ErrBusy.
func TestLockExclusive(t *testing.T) {
	dir := t.TempDir()
	const goroutines, rounds = 8, 100
	var (
		mu       sync.Mutex
		holders  int
		acquired int
	)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				w, err := New(dir, WithTables("ops"))
				if errors.Is(err, ErrBusy) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				holders++
				acquired++
				n := holders
				mu.Unlock()
				if n > 1 {
					errs <- fmt.Errorf("%d writers hold the lock", n)
				}
				runtime.Gosched()
				mu.Lock()
				holders--
				mu.Unlock()
				if err := w.Abort(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d of %d attempts got the lock", acquired, goroutines*rounds)
	if acquired == 0 {
		t.Error("no writer got the lock")
	}
	checkNoHidden(t, dir)
}
