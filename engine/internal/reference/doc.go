// Package reference is the replay's second opinion: a plain, sequential
// interpreter of traces that works out every result again from the four
// ISA documents, sharing no semantic code with package engine.
//
// The engine's tests replay a trace with the sharded engine and with this
// package and require the two to agree row for row. For that comparison to
// test the semantics and not only the engine's ordering and sharding, this
// package imports nothing of the engine: not its plans, not its operation
// kinds, not its float arithmetic (internal/fp). It reads the parser's
// output (package trace: trace.Static, trace.Inst, trace.Header), and the
// only policy it takes from outside is the order in which an instruction's
// lanes apply (Options.LaneOrder), which no document fixes and which the
// engine's wrapper passes in so that random orders match.
//
// Everything else is derived here, from the documents, written so that it
// can be read against them:
//
//   - ptx.go: NVIDIA PTX ISA, "Parallel Synchronization and Communication
//     Instructions: atom" (Description, Semantics).
//   - sass.go: NVIDIA CUDA Binary Utilities, ATOM (SPA 5.0: the Atomic
//     Operations table and the description).
//   - visa.go: Intel Graphics Compiler vISA specification, DWORD_ATOMIC
//     (DWORD_ATOMIC_OP table, Notes, Properties).
//   - lsc.go, block2d.go: the same specification, LSC_UNTYPED (LscSubOp
//     table, Semantics pseudo-code, DataSize, Description).
//   - integer.go: the integer formulas the documents share.
//   - float.go: IEEE 754 arithmetic on bit patterns, by a method of its
//     own (exact sums in float64, rounding by binary search over the
//     format's ordered encodings), and the vendors' NaN and min/max rules.
//   - run.go, memory.go, access.go, addresses.go: memory as a map of
//     bytes, regions, faults, the per-instruction statistics and the
//     addresses table, as docs/TASM.md and docs/OUTPUT.md define them.
//
// Where a document is silent, the decisions are the project's, recorded
// in docs/status/*.md; each is cited where it is applied.
package reference
