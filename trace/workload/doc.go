// Package workload generates synthetic traces of GPU atomic instructions:
// the access patterns that make atomics fast or slow (histograms, random
// updates, one hot counter, spin locks, graph relaxation, float reductions,
// append queues), in any of the four dialects, as a [trace.Source] that
// `replay gen` writes out and `replay` reads back.
//
// A generator emits instructions the way a tracer records them: every
// distinct instruction text is parsed once with [trace.ParseStatic], and the
// registers it reads are bound per lane as a [trace.Vector] in the most
// compact form the values allow (broadcast, base:stride, list). Lanes run in
// warps of 32 (PTX, SASS, LSC SIMD32) or 16 (vISA SIMD16), eight or sixteen
// of them to a 256-thread group, with group and warp ids advancing as in a
// 1-D grid.
//
// # Invariants
//
//  1. Deterministic: the same [Spec] (workload, dialect, seed, sizes) gives
//     the same instructions, hence byte-identical `.tasm` and `.zst` output,
//     on every platform. Randomness comes only from math/rand/v2's PCG seeded
//     from Spec.Seed; the Zipf sampler uses its own logarithm and exponential
//     built from correctly rounded operations with no fused multiply-add,
//     not math.Log and math.Exp, whose results differ between architectures.
//     The per-thread random draws depend on the workload and the seed, not
//     on the dialect: thread t of a histogram hits the same bin in PTX and
//     in vISA, only the warps it is grouped into differ.
//  2. Streaming: nothing is generated ahead. Next builds one instruction
//     into buffers it reuses, so the steady state allocates nothing and the
//     trace is never held, whatever its length.
//  3. Bounded memory: a generator holds O(1) state plus what its workload
//     models: the lock words (spinlock, O(Words)) or the distance array and
//     its initial contents (bfs, O(Vertices)). The R-MAT graph is never
//     materialized: its edges are regenerated from a seeded stream on every
//     sweep.
//  4. Sized by lane-ops: generation stops at the first instruction boundary
//     at or past Spec.LaneOps, so a trace holds at least LaneOps lane-ops and
//     fewer than LaneOps plus one instruction's lanes. Every instruction has
//     at least one active lane.
//  5. Consistent with the replay: where a workload's values depend on memory
//     (which lane's compare-and-swap wins, the distances a relaxation reads),
//     the generator keeps the words involved and updates them in trace
//     order, then lane order, as the engine applies them.
package workload
