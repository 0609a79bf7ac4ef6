package main

import (
	"bufio"
	"flag"
	"io"
	"os"
	"path/filepath"

	"github.com/gpureplay/replay/trace"
)

// cmdAsm writes the binary form of a text trace, whole or not at all.
func cmdAsm(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("asm", flag.ContinueOnError)
	out := fs.String("o", "", "output file")
	chunk := fs.Int("chunk", 65536, "instructions per chunk")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("asm takes one input trace")
	}
	if *out == "" {
		return usagef("asm needs -o OUT.zst")
	}
	name, src, closeSrc, _, err := openTrace(pos)
	if err != nil {
		return err
	}
	defer closeSrc()
	return writeAtomically(*out, func(w io.Writer) error {
		bw, err := trace.NewBinaryWriter(w, src.Header(), trace.WithChunkInsts(*chunk))
		if err != nil {
			return usagef("%v", err)
		}
		if err := trace.Copy(bw, src); err != nil {
			return inTrace(name, err)
		}
		return bw.Close()
	})
}

// cmdDisasm prints a trace as .tasm.
func cmdDisasm(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("disasm", flag.ContinueOnError)
	out := fs.String("o", "", "output file (default: standard output)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("disasm takes one input trace")
	}
	name, src, closeSrc, _, err := openTrace(pos)
	if err != nil {
		return err
	}
	defer closeSrc()
	write := func(w io.Writer) error {
		tw, err := trace.NewTextWriter(w, src.Header())
		if err != nil {
			return err
		}
		if err := trace.Copy(tw, src); err != nil {
			return inTrace(name, err)
		}
		return tw.Close()
	}
	if *out == "" {
		return write(stdout)
	}
	return writeAtomically(*out, write)
}

// writeAtomically writes path through a temporary file in its directory,
// renamed into place only when fn succeeds.
func writeAtomically(path string, fn func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err = fn(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; a trace is as readable as any file.
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
