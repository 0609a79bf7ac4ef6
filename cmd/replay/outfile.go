package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpureplay/replay/internal/outdir"
)

// checkOutFile refuses an -o that names a directory, before any work (the
// rename that ends writeAtomically would fail only after it). example is a
// file name to suggest in it.
func checkOutFile(path, example string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("-o %s: is a directory; name the file to write, such as -o %s", path, filepath.Join(path, example))
	}
	return nil
}

// baseName is the name of the file path without its directory and
// extensions (t for dir/t.tasm); def for standard input or the demo.
func baseName(path, def string) string {
	b := filepath.Base(path)
	if i := strings.IndexByte(b, '.'); i >= 0 {
		b = b[:i]
	}
	if b == "" || b == "-" {
		return def
	}
	return b
}

// writeAtomically writes path, whole or not at all, for every subcommand
// that writes one file (asm, disasm, gen, report): it refuses a path that
// is a directory, creates path's missing parent directories (as a replay
// creates its output directory), writes through a temporary file beside
// path, and renames that into place only when fn succeeds. When fn or the
// writing fails, it removes the temporary file and the directories it
// created. Its errors name path, never the temporary file.
func writeAtomically(path string, fn func(io.Writer) error) (err error) {
	if err := checkOutFile(path, "out"); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	made, err := outdir.Create(dir)
	if err != nil {
		return fmt.Errorf("-o %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		made.Remove()
		return fmt.Errorf("-o %s: cannot create a file in %s: %w", path, dir, bare(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			made.Remove()
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err = fn(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err == nil {
		err = tmp.Close()
	}
	// CreateTemp makes the file 0600; a trace is as readable as any file.
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("-o %s: %w", path, bare(err))
	}
	return nil
}

// bare is err without the path an os function names in it: the temporary
// file's name means nothing to the user.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
