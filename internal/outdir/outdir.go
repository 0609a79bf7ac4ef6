package outdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Made lists the directories [Create] made, outermost first.
type Made []string

// Create makes dir and its missing parents (mode 0777 before umask) and
// returns the ones it made. On failure it removes those it made and returns
// os.MkdirAll's error, which names the path that could not be made.
func Create(dir string) (Made, error) {
	var missing []string
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break // there, or an error os.MkdirAll reports below
		}
		missing = append(missing, d)
		p := filepath.Dir(d)
		if p == d {
			break
		}
		d = p
	}
	var made Made
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o777)
		if errors.Is(err, fs.ErrExist) {
			continue // made by another in the meantime: not ours
		}
		if err != nil {
			break // os.MkdirAll says why, below
		}
		made = append(made, missing[i])
	}
	// Whatever is in the way (a file named like dir or a parent, a
	// permission), os.MkdirAll reports it as usual.
	if err := os.MkdirAll(dir, 0o777); err != nil {
		made.Remove()
		return nil, err
	}
	return made, nil
}

// Remove removes the directories Create made, innermost first, each only if
// it is empty; it stops at the first that stays. It reports nothing: a
// directory that stays holds something that is not the failed writer's to
// remove.
func (m Made) Remove() {
	for i := len(m) - 1; i >= 0; i-- {
		if os.Remove(m[i]) != nil {
			return
		}
	}
}

// Sync makes the renames and removals in dir durable where the platform
// allows. It is best effort: some file systems cannot sync a directory,
// and a commit needs it only against power loss, not against a killed
// process.
func Sync(dir string) {
	if runtime.GOOS == "windows" {
		// A directory cannot be opened for syncing on Windows
		// (FlushFileBuffers needs a handle with write access); NTFS
		// journals its metadata.
		return
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// SyncThreads raises GOMAXPROCS to n while a commit's syncs run, each on
// a goroutine of its own, and returns what puts it back. A goroutine in a
// system call keeps its processor until the runtime's monitor takes it
// back, which sleeps up to 10 ms in a process that makes few calls: with
// GOMAXPROCS processors (2 here), a split task's syncs of 8 files waited
// for the disk two at a time (~1.5 ms each), and a replay's 3 tables'
// one after another on one thread. With n, each waits on a thread of its
// own at once; they do little else. Nothing else should run then: a
// GOMAXPROCS set meanwhile by anything else is its own.
func SyncThreads(n int) (restore func()) {
	was := runtime.GOMAXPROCS(0)
	if n <= was {
		return func() {}
	}
	runtime.GOMAXPROCS(n)
	return func() {
		if runtime.GOMAXPROCS(0) == n {
			runtime.GOMAXPROCS(was)
		}
	}
}
