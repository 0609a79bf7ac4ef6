// Package bench holds the end-to-end benchmarks of a replay and the
// baselines each is measured against in the same run, so every figure is a
// ratio (docs/PERFORMANCE.md):
//
//   - BenchmarkReplay/<trace>/workers=N: a whole replay of an in-memory
//     binary trace into a sink that keeps the statistics (no per-lane
//     rows), against BenchmarkDecode/<trace>/zstd (klauspost's decoder
//     inflating the same bytes, the in-process equivalent of zstd -d) and
//     BenchmarkDecode/<trace>/zstd-cli (the zstd command itself).
//   - workers=1 against workers=2: the parallel speed-up.
//
// The traces are built here, deterministically, so the benchmarks need no
// files: "coalesced" (each warp adds to 32 consecutive words at a random
// 128-byte line: base:stride vectors) and "scattered" (every lane a random
// word: per-lane lists).
package bench
