// Package trace is the instruction model of a replay: what ran, on which
// lanes, with which operand values. It reads and writes the two forms a
// trace takes: the `.tasm` text of docs/TASM.md and the binary,
// zstd-compressed form specified in docs/FORMAT.md. Where the CPU has
// AVX-512 with its byte permutation, fixed-width lists decode eight lanes
// an instruction (fixed_amd64.s), to exactly what Go's loops decode
// elsewhere (TestFixedAVX512MatchesGo).
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
//  6. A [BinaryReader] works ahead of its consumer on goroutines of its own
//     (reading, zstd, checksums) and hands records to Next in trace
//     order; its errors come in trace order too, the first being the one
//     a reader going chunk by chunk would report. It holds at most
//     [WithReadAhead]+1 chunks. Its goroutines end when Next returns
//     io.EOF or an error, on Close, or, for a reader dropped half-read,
//     when the garbage collector finds it unreachable: a consumer that
//     stops early (a replay that fails) should Close the reader, and
//     never leaks it for good when it does not.
//  7. A [TextReader] likewise parses chunks of lines on goroutines of its
//     own, a few chunks ahead of Next, and ends them the same ways. What
//     it hands out is what reading the lines one by one gives: the same
//     records, each Static the one the first line of its text gave, and
//     the first error with its line and column (FuzzTextReader compares
//     it with that reader, kept in text_old_test.go). Its memory is a
//     few chunks and a slot for each context (docs/TASM.md).
package trace
