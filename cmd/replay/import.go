package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gpureplay/replay/trace"
	"github.com/gpureplay/replay/trace/accelsim"
)

// cmdImport converts a tracer's output into the binary trace form, whole
// or not at all: replay import accelsim PATH -o OUT.zst, replay import
// nvbit FILE -o OUT.zst.
func cmdImport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	out := fs.String("o", "", "output file")
	chunk := fs.Int("chunk", 65536, "instructions per chunk")
	quiet := fs.Bool("q", false, "print no summary")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("import takes a format (accelsim or nvbit) and one PATH, got %d arguments", len(pos))
	}
	if *out == "" {
		return usagef("import needs -o OUT.zst")
	}
	format, path := pos[0], pos[1]
	if err := checkOutFile(*out, baseName(path, "t")+".zst"); err != nil {
		return err
	}
	start := time.Now()
	var src trace.Source
	var stats func() accelsim.Stats
	switch format {
	case "accelsim":
		r, err := accelsim.Open(path)
		if err != nil {
			return importErr(err)
		}
		defer r.Close()
		src, stats = r, r.Stats
	case "nvbit":
		f, err := os.Open(path)
		if err != nil {
			return importErr(err)
		}
		defer f.Close()
		r := accelsim.NewMemTraceReader(f, path)
		src, stats = r, r.Stats
	default:
		return usagef("import: unknown format %q; the formats are accelsim (a trace directory, kernelslist.g or kernel file) and nvbit (mem_trace's output)", format)
	}
	var n uint64
	err = writeAtomically(*out, func(w io.Writer) error {
		// The first instruction comes first: mem_trace's header (values
		// or none) is known once the first access line was read.
		in, err := src.Next()
		if err != nil && err != io.EOF {
			return err
		}
		bw, werr := trace.NewBinaryWriter(w, src.Header(), trace.WithChunkInsts(*chunk))
		if werr != nil {
			return usagef("%v", werr)
		}
		for err != io.EOF {
			if err := bw.Write(in); err != nil {
				return err
			}
			if in.Dir == nil {
				n++ // a .cluster record is no atomic
			}
			if in, err = src.Next(); err != nil && err != io.EOF {
				return err
			}
		}
		return bw.Close()
	})
	if err != nil {
		return importErr(err)
	}
	if !*quiet {
		printImportSummary(stdout, *out, n, src.Header(), stats(), time.Since(start))
	}
	return nil
}

// importErr is an import's error as replay prints it: a trace file's own
// errors (accelsim.Error) name the file, line, column and field already;
// an error opening PATH is os's, which names it.
func importErr(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w; PATH is an Accel-Sim trace directory, a kernelslist.g or a kernel file", err)
	}
	return err
}

// printImportSummary says what an import wrote and what it skipped.
func printImportSummary(w io.Writer, out string, n uint64, h *trace.Header, s accelsim.Stats, took time.Duration) {
	kind := "with values"
	if h.AddressOnly {
		kind = "address-only"
	}
	mb := float64(s.Bytes) / 1e6
	fmt.Fprintf(w, "imported %d atomics (%s) from %d instruction lines of %d kernel files, %.1f MB of text in %s (%.0f MB/s)\n",
		n, kind, s.Lines, s.Kernels, mb, took.Round(time.Millisecond), mb/max(took.Seconds(), 1e-9))
	if len(s.Unmapped) > 0 {
		fmt.Fprintf(w, "skipped atomics the SASS dialect does not take: %s\n", countList(s.Unmapped, 0))
	}
	var skipped uint64
	for _, c := range s.Skipped {
		skipped += c
	}
	if skipped > 0 {
		fmt.Fprintf(w, "skipped %d lines of %d other opcodes: %s\n", skipped, len(s.Skipped), countList(s.Skipped, 12))
	}
	fmt.Fprintf(w, "wrote %s\n", out)
}

// countList prints opcode counts, most frequent first, at most limit of
// them (0: all).
func countList(m map[string]uint64, limit int) string {
	var parts []string
	all := accelsim.Sorted(m)
	for i, c := range all {
		if limit > 0 && i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(all)-limit))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", c.Opcode, c.Count))
	}
	return strings.Join(parts, ", ")
}
