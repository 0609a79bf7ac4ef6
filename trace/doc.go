// Package trace is the instruction model of a replay: what ran, on which
// lanes, with which operand values. It reads and writes the two forms a
// trace takes: the `.tasm` text of ../shared/TASM.md and the binary,
// zstd-compressed form specified in docs/FORMAT.md.
//
// # Invariants
//
//  1. trace knows no semantics: it never imports engine and never decides
//     what an operation leaves in memory. It records the instruction text,
//     the canonical (dialect, op, type, space) a text names, and per-lane
//     operand values exactly as bound.
//  2. A [Static] is one distinct instruction text, parsed once and shared
//     by every [Inst] that executes it.
//  3. Operand values are kept in the compact form they were given in
//     (broadcast, base:stride, list); [Vector.Lo] expands one lane.
//  4. The text and binary forms are lossless for each other: asm then
//     disasm then asm yields the same bytes.
//  5. Nothing from a trace with an error is handed on: readers report the
//     first error with its line and column (text) or chunk and offset
//     (binary).
package trace
