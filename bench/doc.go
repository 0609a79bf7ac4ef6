// Package bench holds the benchmarks behind docs/PERFORMANCE.md and the
// baselines each is measured against in the same run, so that every
// figure is a ratio within one run.
//
// # End to end: the figures the targets are judged on
//
// bench/e2e times the built command as people run it: bin/replay, built
// by `go build` (with cmd/replay/default.pgo, as go build uses it by
// default), started as a process, its wall time from fork to exit, the
// best of 5 runs (-runs). Every trace is made by the command itself,
// `replay gen FAMILY -dialect D -seed 1 -lane-ops N` (uniform with -words
// 1Mi), for every family of [Families] in every dialect of [Dialects]
// (FAMILY-DIALECT; what gen does not support is reported n/a, not
// failed). For each trace:
//
//   - zstd: `zstd -d -c -q FILE >/dev/null`, a process;
//   - dense: the dense Go loop over the trace's operations ([DecodeOps],
//     [Ops.Apply]: add, CAS, exch, min, f32 add … on a []uint32), timed
//     in a process of its own (`e2e dense`) after one warming run;
//     TestOpsMatchReplay checks that it leaves the memory a replay leaves,
//     in every family and dialect;
//   - the limit is zstd + dense;
//   - lean: `replay -q -tables memory,instructions,ops -o DIR FILE`;
//     default: `replay -q -o DIR FILE` (uniform, histogram and the PTX
//     traces: -default-on); addresses: lean and the addresses table
//     (uniform: -addresses-on).
//
// And once: `replay help` and a Go hello world (bench/hello); a replay of
// one instruction with the default tables; uniform-ptx as text (`replay
// disasm`) through `replay asm`, a lean replay of the `.tasm`, and the
// text floor (bench/textfloor: read the file, split it into lines, parse
// every integer after the `|`); the lean replay of uniform-ptx with
// `-workers 1` under `taskset -c 0` (one core) and with `-workers 2`;
// the peak resident set of a default-tables replay of uniform streamed
// from `replay gen -o -` at -lane-ops and 5 times as many (-long);
// `replay import accelsim` of a generated Accel-Sim kernel file
// ([WriteTraceg], -import-mb, 40 MB) and of one twice as long, in MB/s of
// `.traceg` text beside the text floor's MB/s of `.tasm`, with each
// import's peak resident set (flat in the file's length).
//
// The harness runs 5 passes, each every command once, so that a burst of
// other load on the shared machine falls on a figure and its baseline
// alike; each pass also measures the machine: [MachineScaling] (the same
// independent work on one goroutine and split over two: the ceiling of
// two workers over one) and [HandoffNs] (a cache line's round trip
// between the two cores). The report prints them beside the figures;
// `e2e -machine` prints those two alone (bench/scale/run.sh prints them
// before and after its runs).
//
// bench/e2e is a Go program that forks the commands, not hyperfine
// (Debian's 1.15): hyperfine runs each command's runs back to back, where
// the harness interleaves every command pass by pass, so that a figure and
// its baseline share the machine's spells; hyperfine reports no peak
// resident set, which the harness reads from the kernel's rusage (wait4)
// with the CPU time; and the dense loop, which is Go, needs a Go program
// anyway. A child's peak resident set is never below the harness's own at
// the fork (the kernel counts the parent's pages until the exec): the
// harness keeps its own small, decoding each trace in `e2e dense`, and
// prints it (e2e-maxrss-B).
//
// # In process: where the time goes
//
// The traces of the in-process benchmarks are [Specs], built in-process
// at LaneOps (9.6·10^6) lane-ops, exactly as `replay gen` writes them.
// `go test -short` builds them at ShortLaneOps, REPLAY_BENCH_LANEOPS=N at
// any size.
//
//   - BenchmarkLimit/<trace>/zstd-cli and dense: the limit as above, for
//     the add traces ([DecodeLanes], [Dense]); reader: our binary reader
//     alone; addr-floor and addr-floor-16 (uniform-1Mi): the least a
//     per-address table can cost, each lane-op counted into a 48- or
//     16-byte record of its word on two goroutines.
//   - BenchmarkReplay/<trace>/<tables>/workers=N: a whole replay through
//     engine.Replay into columnar's Parquet tables, the trace in memory:
//     lean, lean-1core (GOMAXPROCS 1), addresses, results, all. Each
//     reports words, peakRSS-B (Linux) and handoff-ns.
//   - BenchmarkMachineScaling: [ScalingWork] on one and two goroutines.
//
// `make bench` (bench/run.sh) runs bench/e2e, then one pass (BENCH_COUNT)
// of these, engine's BenchmarkApply and BenchmarkSketchAdd, columnar's
// BenchmarkAddresses and DuckDB comparison, and the lean replays built
// with and without profiles/default.pgo. The raw output goes to
// bench/latest.txt; bench/report writes the figures into
// docs/PERFORMANCE.md.
package bench
