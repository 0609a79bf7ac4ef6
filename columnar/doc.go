// Package columnar writes a replay's output tables, as specified in
// docs/OUTPUT.md, as Parquet and/or Arrow IPC files. [Writer] is the
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
//     group, warp int64, lanes, addresses, max_conflict, faults uint32,
//     text string (the instruction as written), and sectors uint32 (its
//     distinct 32-byte sectors).
//   - ops: dialect, op, type, space string; instructions, lanes, faults
//     uint64; max_conflict uint32 (the largest of its instructions');
//     conflict_sum uint64 (the sum of its instructions' max_conflict);
//     sectors uint64 (the sum of its instructions' sectors).
//   - addresses: space string, group int64, addr, accesses, warps, groups
//     uint64, order_sensitive bool, and exact bool (false when warps or
//     groups is an estimate).
//
// # Invariants
//
//  1. Whole or not at all. Every file is written under a temporary name in
//     the output directory (.<table>.<ext>.tmp-<16 hex digits>) and renamed
//     to its final name only by [Writer.Commit], after it is complete and
//     synced. Each rename is atomic; invariant 8 makes the set of them
//     appear as one run's.
//  2. After [Writer.Abort], or after any method returned an error (the
//     writer then fails for good; a batch that failed to be written on
//     its table's goroutine, see invariant 3, fails the next call or
//     Commit with that error), no temporary file remains, no final
//     file of this writer was created, no directory that [New] made (the
//     output directory, its missing parents) remains unless something else
//     was put in it (package internal/outdir), and earlier runs' files are
//     as they were, byte for byte: a rename failing part-way through Commit is
//     undone (the renamed files go back to their temporary names, the
//     earlier files back to theirs). The one exception: if undoing fails
//     too, the commit journal and the temporary files stay, Commit's error
//     says so, and the next [New] on the directory completes the commit.
//  3. Bounded memory. Rows go into a batch, column by column, and every
//     BatchRows rows (see [WithBatchRows]; the instructions table's under
//     [WithSeqRowGroups](n), at the end of each window of n seqs, at most
//     n rows) the batch is handed to its
//     table's goroutine, which writes it to each file (one Parquet row
//     group, one IPC record batch) while the next batch fills. The
//     hand-over waits while one batch waits to be written, so a table
//     holds at most three batches (filling, waiting, being written; for
//     the memory table, filling or waiting and two being encoded, below).
//     Only the files' footers (one entry per batch) and the ops totals
//     (one entry per distinct dialect, op, type, space) grow with the trace;
//     the memo of instructions (one entry per distinct *trace.Static) is
//     bounded and starts afresh past 65536 entries.
//  4. Types are exactly those of OUTPUT.md: non-nullable columns, plain
//     utf8 strings (Parquet dictionary-encodes the column chunks; the
//     Arrow schema stored in each Parquet file has utf8, not dictionaries,
//     so pandas and polars read strings, not categoricals), unsigned
//     Parquet logical types for the uint columns, so DuckDB reads UBIGINT,
//     UINTEGER, BIGINT and VARCHAR and no uint64 above 2^63 turns negative.
//     The page headers and the footer are the package's own Thrift
//     (pqmeta.go), in the bytes arrow-go's writer gave them; the package
//     imports none of arrow-go's parquet packages (they link arrow/compute
//     and its start-up cost), and reads its files back (Merge, Diff,
//     [ScanParquet]) with its own reader, pqread.go. Merge copies a
//     partition's instructions row group whose bytes are the merged
//     file's (a window of seqs one partition alone has, its pages
//     compressed, the merged columns in the state of no page stored
//     raw), its column chunks as they are (rgcopy.go).
//     The encodings (parquet.go; the package's own encoders, pqencode.go,
//     whose pages tests read back with arrow-go and DuckDB):
//     DELTA_BINARY_PACKED for sequence numbers, addresses, values and
//     counts, the instructions' group, warp, lanes and faults and the
//     group of the tables sorted by address and the results' lane,
//     PLAIN for the booleans and small counts, RLE_DICTIONARY for strings; zstd level 1 from one
//     encoder per Writer (a 512 KiB window, the largest page), a page
//     that zstd does not shrink by a sixteenth stored in a frame of raw
//     blocks (zstdframe.go; a page of 64 KiB or more judged on a 16 KiB
//     sample from its middle first), a PLAIN page equal to the page
//     before it given that page's compressed bytes again (repeatPage);
//     DELTA_BINARY_PACKED's miniblocks packed by code generated per bit
//     width (pack_gen.go); exact statistics on every column chunk and
//     data page. A column whose rows in a batch are a progression (the
//     instructions' seq, a hot counter's every column, the memory table's
//     space and group) is held as its first value and step and its pages
//     written from them, in the bytes its stored rows would give
//     (batch.go, encodeAffine). The results come from the engine as
//     columns (engine.CapResultColumns, [Writer.ResultColumns]), each
//     copied whole (addr and value held as a progression while they keep
//     to one, a hot counter's, compared rather than copied: schema.go's
//     progs), seq kept as its runs and encoded from them (runs.go:
//     a DELTA block is its few run starts, or the block before's bytes
//     again); lane, when the engine leaves it out (full warps:
//     engine.ResultColumns.IotaLanes), kept as runs of lanes counting up
//     from the run's first and its DELTA pages written from them (a page
//     of the same runs as the one before, or as the last row group's,
//     that page again); elem and
//     value_hi stay constant 0 and fault constant "" until a row is not,
//     the same bytes as from [Writer.Results].
//     Where the CPU has AVX-512, a whole block's deltas are taken in
//     assembly (deltas_amd64.s), to the bytes Go's loop gives
//     (TestBlockDeltasAVX512).
//  5. Rows are written in the order they arrive; the engine guarantees
//     trace order for results and instructions and (space, group, addr)
//     order for memory. The ops table is built from the Instructions calls
//     (whether or not the instructions table is written), sorted by
//     (dialect, op, type, space) as strings. The trace's tables (results,
//     instructions, ops) are complete at the first addresses or memory
//     rows (the engine.Sink order; a merge's writer, which takes the
//     tables' rows side by side, ends them itself once their merge is
//     done), or at Commit if none come: from then
//     on their last batches are written, their memory freed and their
//     files finished (footer, fsync) on a goroutine of their own, beside
//     the tables after the trace; Commit waits for it. Results or
//     Instructions after that fail the writer.
//  6. A crash (the process killed) leaves files behind, never a partial
//     file under a final name: the temporary files, and if it came during
//     a commit the journal (.replay.commit or, while it is written,
//     .replay.commit.tmp) and backups of earlier table files
//     (.<table>.<ext>.old). Its lock dies with the process (the lock file
//     stays). Since only the lock holder writes (invariant 7), whatever
//     [New] finds once it holds the lock is a dead writer's: it completes
//     a commit the journal records (rolls it forward: every temporary file
//     the journal names was complete and synced before the journal was
//     written), then removes every temporary, backup and journal-temporary
//     file of its own naming, for the known tables and formats only, and
//     reports what it did in one line through [WithLogf]. A journal that is
//     not its own (unknown names, missing files) makes New fail, naming
//     it, and changes nothing.
//  7. One writer per directory. [New] takes an exclusive advisory lock on
//     .replay.lock in the directory (github.com/gofrs/flock: flock(2) on
//     Linux, macOS and the BSDs, LockFileEx on Windows) without waiting,
//     and holds it until Commit, Abort or the failure returns; then it
//     removes the lock file (on Unix while still holding the lock, and
//     only if it is still its own, so a writer that opened it in between
//     notices and retries). If another writer, in this process or another,
//     holds the lock, New fails with [ErrBusy] and changes nothing.
//  8. One run's tables. Commit first writes and syncs the journal (the
//     (temporary, final) pairs), then renames every existing table file of
//     the directory (every known table, both formats, whether or not this
//     writer writes it) to its backup name, then each temporary file to
//     its final name, syncs the directory, and removes the backups and the
//     journal. So the visible table files are at every moment some of one
//     run's, never a mix of two, and once Commit returns nil exactly this
//     writer's: an earlier run's table of a table or format this writer
//     does not write is removed. A crash part-way leaves a subset of one
//     run's tables visible until the next New completes the commit. The
//     directory syncs are best effort (skipped on Windows); they matter
//     for power loss, not for a killed process.
//
// Files whose names are not of this naming (other tables, other
// extensions, other hidden files) are never touched.
//
// A Writer is used by one goroutine at a time. It writes each table's
// batches on a goroutine of its own, which Commit, Abort and a failure
// wait for before they touch the files; a Parquet batch of 4096 rows or
// more has some of its numeric columns encoded on a second goroutine
// meanwhile, in a buffered row group, for the same file byte for byte.
// The memory table, written after the trace when the replay leaves a core
// free, has a batch encoded on a goroutine of its own while the batch
// before is encoded or written (pipeline.runOverlapped), into one of two
// sets of column chunks; batch k's columns carry the state of batch k-2
// (when a page is stored raw) on any number of cores, so its file too is
// the same byte for byte on one core and on many.
package columnar
