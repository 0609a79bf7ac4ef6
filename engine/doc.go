// Package engine replays a trace: what each instruction does to memory and
// returns, the dispatcher that cuts each instruction's lanes into per-shard
// work, the statistics, and a plain reference interpreter that the fast
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
//     checks, statistics) into runs: consecutive active lanes of one
//     instruction whose addresses step by a constant inside one granule
//     share one hash and one block lookup (a coalesced warp is one run).
//     Runs are routed per (range, shard). After a barrier each worker
//     applies the shards it owns (shard index modulo the worker count),
//     shard by shard, each shard's runs in range order. Results land in
//     per-lane slots fixed before the batch started, so no two workers
//     write the same slot.
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
//     then element order: an address lives in one shard, a shard has one
//     owner per batch, and the owner applies ranges in order and each
//     range's accesses in the order they were expanded. So results are
//     bit-identical for any shard count and any worker count.
//  2. A shard is touched only by its owner while a batch computes; batches
//     are separated by a barrier, so shards need no lock on the hot path.
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
