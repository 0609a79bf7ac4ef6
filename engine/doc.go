// Package engine replays a trace: what each instruction does to memory and
// returns, the dispatcher that cuts each instruction's lanes into
// per-worker work, the statistics, and a plain reference interpreter that the fast
// engine is tested against.
//
// # Pipeline
//
// A replay runs in batches of instructions through three stages that overlap:
//
//  1. read: one goroutine pulls instructions from the trace.Source, copies
//     them into a batch, and resolves each distinct Static to a plan (which
//     semantics, access size, fault rules) and each (space, group) to a
//     memory id.
//  2. compute: the batch is cut into one contiguous instruction range per
//     worker; each worker expands its lanes (effective address, fault
//     checks, statistics) and routes each access that did not fault as an
//     8-byte record (the 32-bit reference of the word it hits, and its
//     result slot) to the owner of the word's page: the worker whose index
//     is the page's shard modulo the worker count. Records are cut into
//     segments per instruction, so apply picks one loop per instruction
//     (a 32-bit add loop, a generic one); a warp whose lanes all hit one
//     address, or consecutive words of one page, is one record for the
//     whole warp (a uniform warp with one source and nothing returned is
//     applied in closed form: n adds of b are one add of n*b). After a
//     barrier each worker applies what it owns, range by range, each
//     range's records in order. Results land in per-lane slots fixed
//     before the batch started, so no two workers write the same slot.
//     With one worker there is nothing to route: each instruction's records
//     apply as soon as they are made, while they are in cache.
//  3. emit: a goroutine hands results and statistics to the Sink in trace
//     order while the next batch computes.
//
// Memory set-up after the first instruction (trace.Directive records) takes
// effect at its place (directive.go): the reader applies a .region to the
// plans of the instructions that follow it, and ends the batch at a .init,
// which the compute stage writes after the batch's instructions and before
// the next batch's.
//
// # Invariants
//
//  1. Accesses to one address are applied in trace order, then lane order,
//     then element order: an address lives in one page, a page in one
//     shard, a shard has one owner, and the owner applies ranges in order
//     and each range's records in the order they were expanded. So results
//     are bit-identical for any shard count and any worker count.
//  2. A page is written only by its owner while a batch computes; batches
//     are separated by a barrier, so pages need no lock on the hot path
//     (creating a page takes the memory's lock, once per page).
//  3. engine never imports Arrow: output goes through the Sink interface.
//  4. A replay that fails (bad trace, --strict fault) calls Sink.Abort and
//     leaves nothing behind.
//  5. The reference interpreter (reference.go) shares no memory code with
//     the sharded engine: it keeps memory as a map of bytes.
//  6. A .init after an instruction is ordered after every access of the
//     instructions before it and before every access of those after it, for
//     any shard, worker and batch count: batches are separated by a
//     barrier, and a .init ends its batch.
package engine
