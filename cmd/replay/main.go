// Command replay replays traces of GPU atomic and memory instructions on a
// simulated memory and writes the final memory, what every lane got back,
// and per-instruction statistics as Parquet or Arrow tables.
//
//	replay [flags] [TRACE]          replay TRACE (.tasm text or binary .zst); no TRACE: the embedded demo
//	replay asm IN.tasm -o OUT.zst   write the binary form of a text trace
//	replay disasm IN.zst [-o OUT]   print a binary trace as .tasm
//
// Wiring only: the semantics live in package engine.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// exit codes
const (
	exitOK    = 0
	exitError = 1 // a bad trace, a failed replay, an I/O error
	exitUsage = 2 // bad flags or arguments
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError marks errors in how replay was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	var err error
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "asm":
		err = cmdAsm(args[1:], stdout, stderr)
	case "disasm":
		err = cmdDisasm(args[1:], stdout, stderr)
	case "gen":
		err = cmdGen(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	default:
		err = cmdReplay(args, stdout, stderr)
	}
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "replay: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, "run 'replay help' for usage")
		return exitUsage
	}
	return exitError
}

const usageText = `replay: replay traces of GPU atomic instructions exactly, and write what they did as tables.

Usage:
  replay [flags] [TRACE]            replay TRACE (.tasm text, or binary .zst); with no TRACE, the embedded demo
  replay asm [-chunk N] IN.tasm -o OUT.zst
                                    write the binary form of a text trace
  replay disasm IN.zst [-o OUT.tasm]
                                    print a trace (binary or text) as .tasm
  replay gen WORKLOAD [flags] -o OUT.zst|OUT.tasm
                                    generate a synthetic trace (docs/WORKLOADS.md); gen -list lists the workloads
  replay help                       this text

Replay flags:
  -o DIR            where the tables go (default: ./NAME.tables for TRACE NAME.*, ./demo.tables for the demo)
  -format F         parquet (default), arrow, or both
  -tables LIST      comma-separated subset of memory,results,instructions,ops,addresses (default: all)
  -shards N         memory shards, 1..65536 (default 64); results do not depend on it
  -workers N        worker goroutines, 0 = GOMAXPROCS (default 0); results do not depend on it
  -batch N          instructions per batch (default 4096)
  -strict           stop at the first faulting lane
  -explore          mark addresses whose accesses might not commute (addresses.order_sensitive)
  -max-memory N     stop when the simulated memory passes N bytes (default 8Gi; 512Mi, 1e9 …)
  -profile KIND     cpu, mem, allocs, block, mutex, trace or goroutine (github.com/pkg/profile)
  -profile-dir DIR  where the profile goes (default ./profiles)
  -q                print nothing on success (and no progress line)

Gen flags:
  -dialect D        ptx (default), sass, visa or lsc
  -seed N           random seed (default 1); the same flags give byte-identical output
  -lane-ops N       lane-ops to generate (default 1e6); counts take 1e8, 10M, 64Ki
  -words N          uniform: words updated (default 1Mi); spinlock: locks, freduce: accumulators (default 4)
  -bins N           histogram: bins (default 256)
  -zipf S           histogram: Zipf skew of the keys, 0 = uniform (default 0)
  -vertices N       bfs: R-MAT vertices (default 65536)
  -edge-factor N    bfs: edges per vertex (default 16)
  -chunk N          binary output: instructions per chunk (default 65536)
  -q                print no summary line
  -o -              write the binary form to standard output, for a pipe into replay -
  A progress bar goes to standard error when it is a terminal.

On a terminal a replay draws a progress line on standard error. TRACE may be - for standard input.
Exit status: 0 success, 1 a bad trace or failed replay, 2 bad usage.
`
