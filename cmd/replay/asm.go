package main

import (
	"flag"
	"io"

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
	if err := checkOutFile(*out, baseName(pos[0], "t")+".zst"); err != nil {
		return err
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
	if *out != "" {
		if err := checkOutFile(*out, baseName(pos[0], "t")+".tasm"); err != nil {
			return err
		}
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
