// Package bench holds the end-to-end benchmarks of a replay and the
// baselines each is measured against in the same run, so that every figure
// of docs/PERFORMANCE.md is a ratio within one run.
//
// The traces are `replay gen` workloads in PTX (seed 1), built in-process
// and deterministically at LaneOps (9.6·10^6) lane-ops, 300 K warp
// instructions: uniform over 1 Mi words (uniform-1Mi), uniform over 64 Mi
// words (uniform-64Mi), histogram (256 bins) and hotcounter. `go test
// -short` builds them at ShortLaneOps, REPLAY_BENCH_LANEOPS=N at any size.
//
//   - BenchmarkLimit/<trace>/zstd-cli: the zstd command, `zstd -d -c -q
//     FILE >/dev/null`, on the trace file.
//   - BenchmarkLimit/<trace>/dense: the bare Go loop mem[idx[i]] += val[i]
//     over the trace's lanes, decoded once beforehand (DecodeLanes) into
//     flat []uint32 word indices and values, on a []uint32 the size of the
//     trace's region, allocated and paged in before the timer: the loop
//     alone, the cheapest any replay could apply the same adds.
//     TestDenseMatchesReplay checks that it leaves the memory a replay
//     leaves.
//   - The limit of a trace is zstd-cli + dense.
//   - BenchmarkLimit/<trace>/reader (information): our binary reader
//     decoding every instruction.
//   - BenchmarkReplay/<trace>/<tables>/workers=N: a whole replay through
//     engine.Replay into columnar's Parquet tables in a temporary
//     directory, as `replay -tables … -workers N -o DIR t.zst` does with
//     the trace in memory. lean is -tables memory,instructions,ops (workers
//     1 and 2); addresses adds the addresses table, results (uniform-1Mi
//     only) the results table; all is the default tables; lean-1core
//     (uniform-1Mi only) is lean with one worker and GOMAXPROCS 1, the
//     whole replay on one core. Each reports
//     words (distinct addresses: the memory table's rows) and, on Linux,
//     peakRSS-B: the resident set's high-water mark during the replay above
//     the resident set before it, with the heap returned to the OS before
//     each replay (outside the timer) as a new process starts; and, with
//     two or more Ps, handoff-ns: the slowest cross-core round trip of a
//     cache line measured before each replay (HandoffNs), by which the
//     report tells the replays that ran in one of the VM's slow spells.
//   - BenchmarkMachineScaling: one fixed piece of independent work on one
//     and on two goroutines, the ceiling for two workers on two cores over
//     one on one core (lean-1core).
//
// `make bench` (bench/run.sh) runs these, engine's BenchmarkApply and
// columnar's BenchmarkResultsVsDuckDB in six passes, each pass every
// benchmark once (the short baselines for the standard second, each replay
// once but the lean ones, three in a row, whose mean is the pass's figure),
// so that other load on the machine falls on a figure and its baseline
// alike. It also runs the lean replays of uniform-1Mi and
// histogram from a test binary built with profiles/default.pgo and one
// without (the PGO gain), and cmd/replay's TestPeakMemoryFlat. The raw
// output goes to bench/latest.txt; bench/report takes each benchmark's
// median and rewrites the figures of docs/PERFORMANCE.md, beside the old
// figures of bench/old.txt.
//
// bench/old.txt is the same harness run on the code before the redesign
// (commit c1edf01), kept small (the lines the report reads): bench/old.sh
// makes it in a temporary worktree with this harness copied in. Its last
// block, "run: onecore", is a later run of the same harness on that commit
// (lean-1core and lean on two workers of uniform-1Mi, and
// BenchmarkMachineScaling), for the one-core baseline the first run did not
// have; the report takes the speed-up and its ceiling from that block.
package bench
