// Package engine replays a trace of GPU atomic instructions on a simulated
// memory: what each instruction leaves in memory and returns to each lane,
// and per-instruction statistics, handed to a [Sink].
//
// # Usage
//
// The package has three entry points, each of the same form: a context
// first (each stops, with an error wrapping ctx.Err(), when it is done),
// then the trace and what it needs, then functional options ([Option]):
//
//   - [Replay](ctx, src, sink, opts...) replays a trace into a [Sink]:
//     [Collector] keeps everything in memory, columnar.Writer writes the
//     tables, [Discard] keeps nothing. It commits the sink on success and
//     aborts it on any error.
//   - [ExploreOrders](ctx, open, opts...) replays the trace again under
//     lane order and random ones ([WithOrders]) and returns the words
//     whose final value depends on the order.
//   - [Races](ctx, src, opts...) lists the accesses that race under the
//     PTX scope rules ([WithClusterSize]).
//
// For example ([trace.Open] reads a file in either form):
//
//	src, err := trace.Open("kernel.zst")
//	if err != nil {
//		return err
//	}
//	defer src.Close()
//	var c engine.Collector
//	sum, err := engine.Replay(ctx, src, &c, engine.WithWorkers(4))
//	if err != nil {
//		return err // the sink was aborted: nothing half-written
//	}
//	v, _ := c.Word("global", -1, 0x1000) // a word's final value
//	fmt.Println(sum.LaneOps, "lane-ops; word 0x1000 is", v)
//
// The options (With…) set the workers, shards, batch size, memory limit,
// the lane order and partitions, the orders to explore and the cluster
// size; each says its default and which entry points read it, and an
// entry point refuses, with an error, an option it does not read.
// [ValidateOptions] checks options without reading a trace or building
// any memory, as a command checks its flags before it opens anything.
//
// # Sinks and sources declare what they can do
//
// A Sink declares in one method, Caps, which optional parts of the output
// it wants: per-lane results ([CapResults]), as columns rather than
// Results ([CapResultColumns]), those without the lanes of full warps
// ([CapIotaLanes]), the addresses table ([CapAddresses]),
// the memory table a page at a time ([CapMemoryPages]). The engine
// trusts it: it calls Results, ResultColumns, Addresses and MemoryPage
// only on a sink that declared them, and builds no rows for a part
// nobody declared. A sink of your own embeds [NopSink] for the
// methods it does not need and declares its Caps:
//
//	type resultCounter struct {
//		engine.NopSink
//		n int
//	}
//
//	func (c *resultCounter) Caps() engine.SinkCaps            { return engine.CapResults }
//	func (c *resultCounter) Results(rs []engine.Result) error { c.n += len(rs); return nil }
//
// Why so, rather than optional methods the engine finds by type
// assertion: a wrapper (a sink that embeds another to add to it) forwards
// Caps with every other method, so it cannot hide a capability; and a
// declaration cannot be forgotten without the compiler saying so. NopSink
// has no Caps, so a sink that overrides Results does not compile until it
// declares whether it wants them. Discard, which declares nothing, is a
// function, not a type, so that no sink embeds it, overrides Results and
// silently inherits its empty Caps. Collector, the complete sink a program may embed,
// declares every part, so that whatever method an embedder overrides is
// called; an embedder that wants less overrides Caps. The price is that
// every Sink has all of Sink's methods; NopSink supplies them.
//
// A [trace.Source] declares its fast paths the same way (trace.CapArena:
// lists decoded straight into the batch; trace.CapRepeat: a hot counter's
// repeated records handed over at once; trace.CapBlock: a partition's
// split files handed over a block of instructions at a time, which the
// replay applies lane-element by lane-element without the pipeline below
// when it needs no per-lane rows, addresses table, WithExplore,
// WithInterleave or other lane order: blocks.go), and the engine takes them when
// declared; [Summary]'s ArenaInsts, RepeatInsts and BlockInsts count the
// instructions that took them.
//
// # Pipeline
//
// A replay runs in batches of instructions through three stages that overlap:
//
//  1. read: one goroutine pulls instructions from the trace.Source, copies
//     them into a batch, and resolves each distinct Static to a plan (which
//     semantics, access size, fault rules) and each (space, group) to a
//     memory id. A batch's instructions hold no pointer (binst: a plan
//     index, vectors whose lists are ranges of the batch's arena), so the
//     collector neither scans them nor puts barriers on filling them. A
//     source that declares trace.CapArena decodes the lists straight into
//     that arena; one that declares trace.CapRepeat hands over the records
//     that repeat the instruction just read at once, as many as the batch
//     has room for, and they are added as copies of it (addRepeats), each
//     under its own mask when they differ in theirs (an append queue's:
//     trace.Inst.RepeatMasks). An instruction whose trace.Inst.VecID is
//     that of its warp's earlier one in the batch shares its vectors
//     (addNamed: the same id, the same vectors), its lists not copied.
//  2. compute: the batch is cut into one contiguous instruction range per
//     expanding worker; each expands its lanes (effective address, fault
//     checks, statistics) and routes each access that did not fault as an
//     8-byte record (the 32-bit reference of the word it hits, and its
//     result slot) to the owner of the word's page: the applying worker
//     whose index is the page's shard modulo the owner count. Records are
//     cut into segments per instruction, so apply picks one loop per
//     instruction (a 32-bit add loop, a generic one); a warp whose lanes
//     all hit one address, or consecutive words of one page, is one record
//     for the whole warp (a uniform warp with one source and nothing
//     returned is applied in closed form: n adds of b are one add of n*b;
//     for 32-bit adds, expand makes that one (word, n*b) record, unless
//     the addresses table counts the lanes; without per-lane rows, the
//     same warp again in the next instruction, as a hot counter's, adds
//     its n*b to that record, and so does the same instruction under
//     another mask when its address is every lane's, as an append
//     queue's: sumRun; a warp of one value on a few addresses of one page,
//     a spinlock's, is one segment of (word, lanes) records: seg.counts;
//     a warp that retries on a list it grouped, as a spinlock's does
//     until it gets the lock and when it releases it, takes that grouping
//     again under whatever lanes it covers: fewWarps, the list not
//     compared when the batch shares its vectors).
//     Each owner then applies what it owns, range by range, each range's
//     records in order; a batch whose every access is an addition that
//     returns nothing commutes: its owners apply each route's records in
//     one loop, whatever instruction they came from, and a full warp of it
//     whose lanes all fall in one page (a histogram's) is summed per word
//     in its range's page accumulator, routed as one (word, sum) record a
//     word when the range ends or leaves the page (commute.go). A batch
//     of 32-bit adds that return their old values (a histogram's, with
//     the results table) sums such warps alike, run by run of consecutive
//     warps on one page, each lane given its word's running sum (its
//     prefix); the owner adds each word's sum and then the word's value
//     before it to the run's lanes (prefix.go), and the addresses table
//     counts the run's lanes from their result rows. Results land in per-lane slots fixed
//     before the batch started, so no two workers write the same slot.
//     With one worker nothing is routed: each instruction's records apply
//     as soon as they are made, while they are in cache. With two or
//     three workers and no addresses table, the stages are not goroutines
//     of their own but the workers' (the owned pipeline, owned.go): a
//     worker reads a batch (the reading serialised, numbering the
//     batches), expands it while its lists are in that core's cache, and
//     worker 0 applies every batch in order, reading one of its own when
//     none is ready; what crosses between cores is a batch's records and
//     rows, not its lists. Otherwise, with W > 1, W workers expand batch
//     k+1 while W/2 apply batch k (W each with the addresses table under
//     WithExplore): expanding reads no memory contents, only which pages
//     exist, so the two stages overlap on different cores.
//     The addresses table is counted beside: the appliers copy each access
//     into a list for the counter that owns its page (a hash of the page's
//     reference; on the first 64 pages, of its word); with W > 1, W counter
//     goroutines each gather their accesses of batch k into a window of
//     many batches' and, once it is full, sort it by page and count it
//     into their pages' slabs while later batches are read, expanded and
//     applied, yielding to those stages every 4096 accesses. With one
//     worker each applier gathers and counts its own pages' windows in
//     the compute stage; with WithExplore (whose order analysis reads the
//     batch's operands) it counts each batch after applying it.
//  3. emit: a goroutine hands results and statistics to the Sink in trace
//     order while the next batch computes.
//
// After the last batch, the replay hands over the addresses table (when
// the sink wants it), releases its statistics' slabs, which live outside
// the Go heap (internal/offheap), and then hands over the memory table:
// the two tables' buffers never add up in the replay's peak memory.
//
// Memory set-up after the first instruction (trace.Directive records) takes
// effect at its place (directive.go): the reader applies a .region to the
// plans of the instructions that follow it, and ends the batch at a .init,
// which the compute stage writes after the batch's instructions and before
// the next batch's.
//
// The stages by file: engine.go runs the pipeline; batch.go is the batch
// and what the read stage copies into it; expand.go and route.go turn its
// instructions into routed records, conflicts.go (and conflicts_amd64.s)
// counts each warp's conflicts on the way; apply.go, commute.go and
// prefix.go perform the records; addresses.go and sketch.go count the addresses
// table. The semantics of each operation are in the files of their ISA
// (ptx.go, sass.go, visa.go, lsc.go) and in atomic_int.go and
// atomic_float.go.
//
// # Invariants
//
//  1. Accesses to one address are applied in trace order, then lane order,
//     then element order: an address lives in one page, a page in one
//     shard, a shard has one owner, and the owner applies ranges in order
//     and each range's records in the order they were expanded. So results
//     are bit-identical for any shard count and any worker count. Only a
//     batch that commutes (32-bit adds that return nothing to anyone) is
//     applied in another order, which leaves the same memory; a run of
//     prefix-summed warps (prefix.go) adds its sums at once, and each of
//     its lanes gets what its word held before the run plus the addends
//     of the lanes before it on that word, in trace and lane order: what
//     the adds one at a time give it. Any other warp of its range ends
//     the run before it is routed.
//  2. A page's words are written only by its owner while a batch applies,
//     and batches apply one after another, so words need no lock on the
//     hot path. Creating a page (while another batch may apply) takes the
//     memory's lock, once per page, and writes only the new page.
//  3. engine never imports Arrow: output goes through the Sink interface.
//  4. A replay that fails (bad trace, --strict fault) calls Sink.Abort and
//     leaves nothing behind.
//  5. The reference interpreter (engine/internal/reference, which the
//     tests call through replayReference in oracle_test.go: it is no part
//     of the API, and no program links it) shares no semantic code with
//     the engine: it imports only package trace (TestImportsOnlyTrace),
//     keeps memory as a map of bytes, and takes from the engine only the
//     lane-order policy.
//  6. A .init after an instruction is ordered after every access of the
//     instructions before it and before every access of those after it, for
//     any shard, worker and batch count: a .init ends its batch, and the
//     apply stage writes it after that batch applied and before the next.
//  7. Results do not depend on the CPU. Where it has AVX-512 (x/sys/cpu
//     says so), a few per-warp loops run in amd64 assembly
//     (conflicts_amd64.s: a warp's distinct addresses and largest conflict,
//     its distinct sectors, a histogram warp's page sums and sectors, a
//     list's OR and AND; of 32 lanes or of SIMD16's 16); they compute
//     what Go's loops compute, which run elsewhere and are their tests'
//     reference (TestWarpConflictsAVX512, TestAddLanes16AVX512,
//     TestPageSectorsAVX512, TestWarpSectorsPartialWarps), and the
//     reference tests replay with either (withGoLoops).
//  8. The engine and the reference call no Sink method for a part the
//     sink's Caps does not declare (TestSinkGetsOnlyWhatItDeclares), and
//     take a Source's fast paths only when its Caps declares them.
//
// # Adding an operation
//
// An operation is a row of its dialect's table of legal forms (a new type
// of an operation too). The steps, in order, and the test that fails by
// name when one is missed:
//
//  1. trace/model.go: the Op, after the last one (before numOps), and its
//     name in opNames. Without the name: TestOpAndTypeNames.
//  2. trace/forms.go: the row, citing the document section it comes from.
//     Without it the parser refuses the text: TestFormsExpectations fails at
//     the hand-worked case ("does not take"), and TestFormsCounts.
//  3. The parser's name map: ptxOps in trace/parse_ptx.go (the SASS, vISA and
//     LSC parsers have theirs). Without it: TestFormsPlan ("does not parse").
//  4. engine/atomic_int.go (intKind, a kind, its formula in opInt) or
//     atomic_float.go for a float operation, and the dialect's file
//     (ptx.go, sass.go, visa.go, lsc.go) where it picks the kind itself.
//     Without the kind: TestFormsPlan ("is not replayed yet"); without the
//     formula: TestFormsPlan ("no 32-bit formula").
//  5. The reference's dialect file, engine/internal/reference/ptx.go (or
//     sass.go, visa.go, lsc.go; the formula in integer.go or float.go),
//     worked out again from the document. Without it: TestFormsExpectations
//     ("the reference knows no …").
//  6. A hand-worked case in engine/testdata/forms/DIALECT.tasm, with
//     operands for which a neighbouring formula gives another answer.
//     Without it: TestFormsExpectations ("no expectation").
//  7. trace/forms_test.go: the dialect's row count in TestFormsCounts.
//  8. The unknown-operation message lists the table's operations, so its
//     expected texts change: TestItem7PTXOperationOrQualifier
//     (trace/suggest_test.go), TestItem7UnknownOperationMessages
//     (cmd/replay/unknown_op_test.go) and the example in docs/TASM.md.
//  9. docs/STATUS.md's page of the dialect (docs/status/): the row, its
//     tests, and the row count. No test reads it.
//  10. The dialect's random trace (randomPTX in reference_test.go,
//     randomSASS, randomVISA, randomLSC): the form, so that the
//     engine-versus-reference random tests reach it. No test fails
//     without it.
//  11. Sometimes addresses.go and apply.go. An operation that commutes
//     with others of its family gets its case in familyOf (addresses.go,
//     -explore's order_sensitive) if the reference's intFamily
//     (engine/internal/reference/integer.go) puts it in one; otherwise the
//     random tests with -explore fail. One whose n repeats have a closed
//     form (add's n*b; and, or, min, max once; xor n mod 2) may get a case
//     in applyUniform (apply.go); without one it takes the general loop,
//     which is exact and slower, and no test fails.
package engine
