// Package columnar writes a replay's output tables, as specified in
// ../shared/OUTPUT.md, as Parquet and/or Arrow IPC files. [Writer] is the
// [engine.Sink] that the replay hands its results to.
//
// # Tables
//
// One file per table and format, named <table>.parquet or <table>.arrow
// (see [TableNames]):
//
//   - memory: space string, group int64, addr uint64, value uint32.
//   - results: seq uint64, lane uint32, elem uint32, addr uint64,
//     value uint64, value_hi uint64, fault string.
//   - instructions: seq uint64, dialect, op, type, space string,
//     group, warp int64, lanes, addresses, max_conflict, faults uint32, and
//     text string (the instruction as written).
//   - ops: dialect, op, type, space string; instructions, lanes, faults
//     uint64; max_conflict uint32 (the largest of its instructions');
//     conflict_sum uint64 (the sum of its instructions' max_conflict).
//   - addresses: space string, group int64, addr, accesses, warps, groups
//     uint64, order_sensitive bool, and exact bool (false when warps or
//     groups is an estimate).
//
// # Invariants
//
//  1. Whole or not at all. Every file is written under a temporary name in
//     the output directory (.<table>.<ext>.tmp-<random>) and renamed to its
//     final name only by [Writer.Commit], after it is complete and synced.
//     A rename replaces an earlier run's file atomically.
//  2. After [Writer.Abort], or after any method returned an error (the
//     writer then fails for good), no temporary file remains and no final
//     file of this writer was created; earlier runs' files are untouched.
//     The one exception is a rename failing part-way through Commit: the
//     files already renamed are removed again, so the directory never
//     holds some of this writer's tables without the others, but the
//     earlier files they replaced are gone.
//  3. Bounded memory. Rows go into Arrow builders and every BatchRows rows
//     (see [WithBatchRows]) a record batch is written to each file (one
//     Parquet row group, one IPC record batch) and released. Only the
//     files' footers (one entry per batch) and the ops totals (one entry
//     per distinct dialect, op, type, space) grow with the trace.
//  4. Types are exactly those of OUTPUT.md: non-nullable columns, plain
//     utf8 strings (Parquet dictionary-encodes the column chunks), unsigned
//     Parquet logical types for the uint columns, so DuckDB reads UBIGINT,
//     UINTEGER, BIGINT and VARCHAR and no uint64 above 2^63 turns negative.
//  5. Rows are written in the order they arrive; the engine guarantees
//     trace order for results and instructions and (space, group, addr)
//     order for memory. The ops table is built from the Instructions calls
//     (whether or not the instructions table is written) and written at
//     Commit, sorted by (dialect, op, type, space) as strings.
//  6. A crash (the process killed) can leave temporary files behind, never
//     a partial file under a final name. New does not remove stale
//     temporaries: another writer may own them.
//
// A Writer is used by one goroutine at a time.
package columnar
