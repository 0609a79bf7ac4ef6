// Package split is the map stage of a scaled-out replay and the source of
// its reduce stage: `replay split TRACE -partitions n -slice K/M -o DIR`
// reads slice K of M of a binary trace's chunks, through its seek index,
// and writes for every partition i the records it owns to
// DIR/part=i/slice=K.zst ([Split]); `replay -partition i/n DIR` replays
// partition i from its slices, in order ([Open]), never reading another
// partition's files. docs/OUTPUT.md ("Partitions") is the user's guide,
// docs/FORMAT.md ("Split files") the file format.
//
// # Invariants
//
//  1. Slices: slice K of M is the trace's chunks [⌊K·C/M⌋, ⌊(K+1)·C/M⌋)
//     of C: contiguous, disjoint, together every chunk, their sizes
//     within one chunk of each other ([SliceRange]).
//  2. Ownership: every lane-element of an instruction belongs to the
//     partition of its address's 128-byte line: the partition map's
//     partition for the lines it names, engine.PartitionOf's for the
//     others (all of them, when the map is empty). The map
//     ([PartitionMap]) depends on the trace and n alone (a fixed sample
//     of its chunks), so every split task of a trace
//     derives the same one; every slice file's header carries it, and the
//     reduce refuses slices with different maps. The
//     file of partition i holds, in trace order, every directive of the
//     slice's chunks, and every instruction with a lane that has an
//     element in i, or whose statistics row i writes, with its seq,
//     .group and .warp, its lanes with an element in i, the lanes that
//     ran in the trace, and its row's addresses, conflict and sectors (to
//     one partition only). The row of the instruction of seq q is
//     partition ⌊q/RowWindow⌋ mod n's ([RowPartition]; with mask 0 where
//     it has none of its lanes), whatever slice it is in: a partition's
//     rows are whole windows of RowWindow seqs, each a row group of the
//     merged instructions table, which replay merge copies as it is.
//     Slice 0's files carry the trace's header.
//  3. Whole or not at all: each file of slice K is written to a hidden
//     temporary name in its partition's directory, synced when
//     Options.Sync asks, and renamed to slice=K.zst once every
//     partition's is complete. A split that is killed leaves at most
//     temporary files (which the next split of that slice removes) and
//     files of slice K that a rerun replaces; never a partial file under
//     a slice's name. Only a power loss before the system writes an
//     unsynced slice back can leave one short or empty, and the reduce
//     refuses it, naming it (its seek table and checksums).
//  4. The reduce refuses, naming the files, a partition directory with a
//     missing or repeated slice, or slices of different traces,
//     partition counts or slice counts, before it replays anything.
//  5. Blocks: a slice file holds its instructions in block records
//     (docs/FORMAT.md, "Split files"; split format version 5, its rows
//     alone, mask 0, without vectors; fold records of runs and fixed-width
//     values; files of versions 2, 3 and 4 are
//     refused by name), and [Source] declares
//     trace.CapBlock: a replay that needs nothing per lane beyond memory
//     and instruction rows (no results or addresses table, no -explore,
//     -interleave or -order) takes a block at a time and applies its
//     lane-elements without a batch slot an instruction (engine/blocks.go),
//     its work proportional to the lanes it owns; any other replay reads
//     the same files an instruction at a time, through the batch path.
//  6. Parts: a combined slice's chunks are routed in two parts (an
//     uncombined slice's in one: its time is in writing its records,
//     which parts do not share), its chunks cut as SliceRange cuts a
//     trace's (subSlices), each as a slice of its own (its router, its
//     combiner, a fold flush at its end, unless the next part met no
//     flush point: then that part takes its folds and writes them,
//     composed with its own, at its end), on goroutines of their own
//     when [Options.Workers] allows; the second's records follow the
//     first's in every file (its writers hold their chunks,
//     trace.WithHeldChunks, in a temporary file named as the slice's
//     are, in partition 0's directory, unlinked at once where the system
//     allows, until the first's append them a chunk at a time: a split
//     task's memory does not grow with its slice). A part's router knows
//     the regions of the header and of the directives of the parts
//     before it (a part routed at once with one that declares a region
//     is routed again, after it), so the files are the same, byte for
//     byte, for any number of workers.
//  7. Combining ([Options.Combine], replay split -tables without a
//     per-lane table; combine.go): the files of a combined slice (header
//     flag bit 2) hold, for each instruction whose accesses fold
//     (engine.FoldOp: one commuting operation, every active lane in
//     bounds of the regions the split knows), its row alone, and fold
//     records (trace.Fold) of the words of each partition's lines, each
//     the composition of the operands of the accesses to that word since
//     the last flush. Every fold is written before any record that could
//     disagree with it (another operation or width, an instruction that
//     does not fold, an .init or .region) and at a part's end (6), so
//     applying the folds where they stand gives each word the value the
//     lanes give it. A combined slice replays only on the block path;
//     [Source.Combined] names it so that a replay can refuse otherwise.
//  8. Exact: replaying every partition's slices with engine.WithPartition
//     and combining their tables (replay merge) gives the single replay's
//     tables: each word, result row and address in one partition; each
//     instruction's row written by one partition, with the lanes,
//     addresses and conflict of all its lanes, and the faults of the
//     others' lanes added from their fault rows.
package split
