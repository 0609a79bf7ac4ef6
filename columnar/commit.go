package columnar

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gofrs/flock"

	"github.com/gpureplay/replay/internal/outdir"
)

// Besides the tables, a Writer uses these names in the output directory,
// all of them hidden (leading dot). The package documentation and "How
// tables appear together" in docs/OUTPUT.md describe the protocol.
const (
	// lockName is the writers' lock file. It exists while a writer holds
	// the lock, and after a writer was killed (the lock itself dies with
	// the process).
	lockName = ".replay.lock"
	// journalName is the commit journal: it lists the (temporary, final)
	// pairs of a commit, and exists only while a commit is in flight, or
	// after a writer was killed during one.
	journalName = ".replay.commit"
	// journalTmpName is the journal while it is being written.
	journalTmpName = ".replay.commit.tmp"
	journalHeader  = "replay commit journal 1"
	// A table file T (say memory.parquet) is written as .T.tmp-<16 hex
	// digits> and, while a commit replaces it, the earlier T is kept as
	// .T.old.
	tmpInfix     = ".tmp-"
	backupSuffix = ".old"
)

// ErrBusy is returned (wrapped) by [New] when another writer, in this
// process or another, holds the output directory's lock.
var ErrBusy = errors.New("columnar: output directory is locked by another writer")

type busyError struct{ dir string }

func (e *busyError) Error() string {
	return fmt.Sprintf("columnar: %s is being written by another replay (%s is locked)", e.dir, filepath.Join(e.dir, lockName))
}

func (e *busyError) Is(target error) bool { return target == ErrBusy }

// tableFiles returns every file name a Writer can publish: each table in
// each format.
func tableFiles() []string {
	names := make([]string, 0, 2*numTables)
	for _, s := range specs {
		names = append(names, s.name+extParquet, s.name+extArrow)
	}
	return names
}

func isTableFile(name string) bool {
	for _, f := range tableFiles() {
		if name == f {
			return true
		}
	}
	return false
}

func tmpPrefix(final string) string  { return "." + final + tmpInfix }
func backupName(final string) string { return "." + final + backupSuffix }

// isTempOf reports whether name is a temporary file for final, as
// createTemp names them.
func isTempOf(name, final string) bool {
	h, ok := strings.CutPrefix(name, tmpPrefix(final))
	return ok && len(h) == 16 && strings.Trim(h, "0123456789abcdef") == ""
}

// isLeftover reports whether name is a temporary, backup or journal file
// of a Writer's own naming (for a table file of a known table and format).
// The journal itself is not: it is rolled forward, not removed.
func isLeftover(name string) bool {
	if name == journalTmpName {
		return true
	}
	for _, f := range tableFiles() {
		if name == backupName(f) || isTempOf(name, f) {
			return true
		}
	}
	return false
}

// dirLock is a writer's hold on its output directory: an exclusive
// advisory lock (flock(2) on Unix, LockFileEx on Windows) on lockName.
type dirLock struct {
	path string
	fl   *flock.Flock
}

// lockDir takes the lock of dir without waiting. It fails with [ErrBusy]
// when another writer holds it.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockName)
	for range 100 {
		// 0666 before umask, like the tables: a lock file left by a
		// killed writer must not lock out another user who may write dir.
		fl := flock.New(path, flock.SetPermissions(0o666))
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("columnar: locking %s: %w", path, err)
		}
		if !ok {
			return nil, &busyError{dir}
		}
		// A writer that is done removes the lock file while it still
		// holds the lock (see release). If it did so between our open and
		// our lock, the file we locked is no longer the one at path, and
		// a third writer may hold that one: start over with the file at
		// path now.
		held, herr := fl.Stat()
		cur, cerr := os.Stat(path)
		if herr == nil && cerr == nil && os.SameFile(held, cur) {
			return &dirLock{path: path, fl: fl}, nil
		}
		_ = fl.Close()
		if herr != nil {
			return nil, fmt.Errorf("columnar: locking %s: %w", path, herr)
		}
		if cerr != nil && !errors.Is(cerr, fs.ErrNotExist) {
			return nil, fmt.Errorf("columnar: locking %s: %w", path, cerr)
		}
	}
	return nil, fmt.Errorf("columnar: could not lock %s: it kept being replaced", path)
}

// makeAndLock creates dir and its missing parents and takes dir's lock
// (lockDir). It returns the directories it made, which a writer that does
// not commit removes. If a writer that is done removes dir (a directory
// it made) between our making it and opening the lock file, it makes dir
// again.
func makeAndLock(dir string) (outdir.Made, *dirLock, error) {
	for range 100 {
		made, err := outdir.Create(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("columnar: %w", err)
		}
		lock, err := lockDir(dir)
		if err == nil {
			return made, lock, nil
		}
		made.Remove()
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
	}
	return nil, nil, fmt.Errorf("columnar: could not lock %s: it kept being removed", filepath.Join(dir, lockName))
}

// release removes the lock file and gives up the lock.
func (l *dirLock) release() error {
	if runtime.GOOS == "windows" {
		// Windows cannot remove a file that is open (Go opens files
		// without FILE_SHARE_DELETE), so unlock and close first. If
		// another writer has opened the file since, the removal fails,
		// harmlessly: that writer goes on with it.
		err := l.fl.Close()
		_ = os.Remove(l.path)
		return err
	}
	// Remove the file while still holding the lock, and only if it is
	// still ours: a writer that opened it before then finds, once it has
	// the lock, that it is gone (lockDir).
	if held, err := l.fl.Stat(); err == nil {
		if cur, err := os.Stat(l.path); err == nil && os.SameFile(held, cur) {
			_ = os.Remove(l.path) // if it stays, the next writer reuses it
		}
	}
	return l.fl.Close()
}

func (w *Writer) path(name string) string { return filepath.Join(w.dir, name) }

// tidy puts the directory in order before the writer creates anything:
// it completes a commit that a killed writer left in flight, and removes
// the temporary and backup files of killed writers. It runs with the lock
// held, so none of them belongs to a live writer. It returns the one-line
// report of what it did, "" if nothing.
func (w *Writer) tidy() (string, error) {
	completed, err := w.rollForward()
	if err != nil {
		return "", err
	}
	removed, err := w.removeLeftovers()
	if err != nil {
		return "", err
	}
	files := func(n int) string {
		if n == 1 {
			return "1 leftover file"
		}
		return fmt.Sprintf("%d leftover files", n)
	}
	switch {
	case completed > 0 && removed > 0:
		return fmt.Sprintf("completed the interrupted commit of an earlier replay in %s (%d table files) and removed %s", w.dir, completed, files(removed)), nil
	case completed > 0:
		return fmt.Sprintf("completed the interrupted commit of an earlier replay in %s (%d table files)", w.dir, completed), nil
	case removed > 0:
		return fmt.Sprintf("removed %s of an interrupted replay in %s", files(removed), w.dir), nil
	}
	return "", nil
}

// removeLeftovers removes the files of the directory that [isLeftover]
// recognises and returns how many there were.
func (w *Writer) removeLeftovers() (int, error) {
	ents, err := os.ReadDir(w.dir)
	if err != nil {
		return 0, fmt.Errorf("columnar: %w", err)
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() || !isLeftover(e.Name()) {
			continue
		}
		err := os.Remove(w.path(e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("columnar: removing a leftover of an interrupted replay: %w", err)
		}
		n++
	}
	return n, nil
}

// journalEntry is one line of the journal: a finished temporary file and
// the table file it becomes.
type journalEntry struct{ tmp, final string }

func formatJournal(es []journalEntry) []byte {
	var b bytes.Buffer
	b.WriteString(journalHeader + "\n")
	for _, e := range es {
		fmt.Fprintf(&b, "%s %s\n", e.tmp, e.final)
	}
	return b.Bytes()
}

// parseJournal reads a journal and checks that it names only files of a
// Writer's own naming, each table file once.
func parseJournal(b []byte) ([]journalEntry, error) {
	lines := strings.Split(string(b), "\n")
	if lines[0] != journalHeader || lines[len(lines)-1] != "" {
		return nil, errors.New("not a commit journal of this version")
	}
	var es []journalEntry
	seen := map[string]bool{}
	for i, l := range lines[1 : len(lines)-1] {
		tmp, final, ok := strings.Cut(l, " ")
		if !ok || !isTableFile(final) || !isTempOf(tmp, final) || seen[final] {
			return nil, fmt.Errorf("line %d: unexpected %q", i+2, l)
		}
		seen[final] = true
		es = append(es, journalEntry{tmp, final})
	}
	if len(es) == 0 {
		return nil, errors.New("no table files")
	}
	return es, nil
}

// writeJournal writes the journal of a commit of outs, durably, under its
// final name. On failure no journal is left.
func (w *Writer) writeJournal(outs []*output) (err error) {
	es := make([]journalEntry, len(outs))
	for i, o := range outs {
		es[i] = journalEntry{filepath.Base(o.tmp), filepath.Base(o.final)}
	}
	tmp := w.path(journalTmpName)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return fmt.Errorf("columnar: writing the commit journal: %w", err)
	}
	_, err = f.Write(formatJournal(es))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.rename(tmp, w.path(journalName))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("columnar: writing the commit journal: %w", err)
	}
	outdir.Sync(w.dir)
	return nil
}

// publishAll makes the finished temporary files outs visible under their
// final names, as one replay's set: every table file of the directory is
// either one of outs or gone.
//
//  1. Check that no table file name is taken by a directory.
//  2. Write the journal (durably): from here on, a writer that finds it
//     completes this commit.
//  3. Rename every existing table file T to .T.old (backup), so that no
//     earlier run's table stays visible next to this run's.
//  4. Rename every temporary file to its final name; sync the directory.
//  5. Remove the backups, then the journal.
//
// If a rename of steps 3 or 4 fails, what was done is undone (published
// files back to their temporary names, backups back to their names) and
// the journal removed, so the directory holds exactly the earlier set. If
// the undoing fails too, the journal and the temporary files stay, and the
// next writer's [New] completes the commit.
func (w *Writer) publishAll(outs []*output) error {
	var existing []string
	for _, f := range tableFiles() {
		fi, err := os.Lstat(w.path(f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("columnar: %w", err)
		}
		if fi.IsDir() {
			return fmt.Errorf("columnar: %s is a directory, not a table file: not replacing it", w.path(f))
		}
		existing = append(existing, f)
	}
	if err := w.writeJournal(outs); err != nil {
		return err
	}
	var backedUp []string
	var published []*output
	for _, f := range existing {
		if err := w.rename(w.path(f), w.path(backupName(f))); err != nil {
			return w.undo(fmt.Errorf("columnar: %w", err), backedUp, published, outs)
		}
		backedUp = append(backedUp, f)
	}
	for _, o := range outs {
		if err := w.rename(o.tmp, o.final); err != nil {
			return w.undo(fmt.Errorf("columnar: %w", err), backedUp, published, outs)
		}
		published = append(published, o)
	}
	outdir.Sync(w.dir)
	// The new set is in place. What is left is tidying: a file that
	// cannot be removed now is removed by the next writer (a backup as a
	// leftover; a journal by completing a commit that is already done).
	for _, f := range backedUp {
		_ = w.remove(w.path(backupName(f)))
	}
	_ = w.remove(w.path(journalName))
	return nil
}

// undo takes back the renames of a commit that failed with cause.
func (w *Writer) undo(cause error, backedUp []string, published, outs []*output) error {
	var errs []error
	for i := len(published) - 1; i >= 0; i-- {
		o := published[i]
		if err := w.rename(o.final, o.tmp); err != nil {
			errs = append(errs, err)
		}
	}
	// Restore the earlier files only once every new one is gone: a
	// restored file next to a new one would be a mix of runs.
	if len(errs) == 0 {
		for i := len(backedUp) - 1; i >= 0; i-- {
			f := backedUp[i]
			if err := w.rename(w.path(backupName(f)), w.path(f)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		outdir.Sync(w.dir)
		if err := w.remove(w.path(journalName)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return cause
	}
	// The journal stays, and so must the files it names.
	for _, o := range outs {
		o.keep = true
	}
	return fmt.Errorf("%w; undoing it failed too (%w): the next replay into %s completes this commit", cause, errors.Join(errs...), w.dir)
}

// rollForward completes a commit that a killed writer left in flight, if
// the journal says there is one, and returns the number of table files it
// published (0 if there was no journal). Every temporary file the journal
// names was finished and synced before the journal was written; one that
// is gone was already renamed to its final name.
func (w *Writer) rollForward() (int, error) {
	jpath := w.path(journalName)
	b, err := os.ReadFile(jpath)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("columnar: reading the journal of an interrupted commit: %w", err)
	}
	cannot := func(err error) error {
		return fmt.Errorf("columnar: cannot complete the interrupted commit that %s records: %w (move the journal away to start afresh)", jpath, err)
	}
	es, err := parseJournal(b)
	if err != nil {
		return 0, cannot(err)
	}
	// Check every entry before changing anything.
	in := map[string]bool{}
	var todo []journalEntry // temporary files not renamed yet
	for _, e := range es {
		in[e.final] = true
		_, err := os.Lstat(w.path(e.tmp))
		if err == nil {
			todo = append(todo, e)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return 0, cannot(err)
		}
		if _, err := os.Lstat(w.path(e.final)); err != nil {
			return 0, cannot(fmt.Errorf("neither %s nor %s is there", e.tmp, e.final))
		}
	}
	for _, e := range todo {
		if err := w.rename(w.path(e.tmp), w.path(e.final)); err != nil {
			return 0, cannot(err)
		}
	}
	for _, f := range tableFiles() {
		if !in[f] {
			if err := removeIfThere(w.path(f)); err != nil {
				return 0, cannot(err)
			}
		}
		if err := removeIfThere(w.path(backupName(f))); err != nil {
			return 0, cannot(err)
		}
	}
	outdir.Sync(w.dir)
	if err := w.remove(jpath); err != nil {
		return 0, cannot(err)
	}
	return len(es), nil
}

func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
