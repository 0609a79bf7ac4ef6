// Package fp is bit-exact IEEE 754 binary arithmetic on bit patterns, for the
// floating-point atomics the replay engine must reproduce: binary16 (f16),
// bfloat16 (bf16), binary32 (f32) and binary64 (f64), each passed and
// returned as its raw bits (uint16, uint16, uint32, uint64).
//
// The package has no state: every function is pure and safe for concurrent
// use.
//
// # Invariants
//
//  1. Every arithmetic result is the exact result rounded once, to nearest
//     with ties to even, to the target format; an exact result too large for
//     the format becomes infinity of its sign. f16, bf16 and f32 are
//     computed in float64 and rounded once to the target: for f16 the
//     float64 sum is already exact; for bf16 and f32 the intermediate
//     rounding to float64 is harmless because 53 >= 2p+2 (p = 8 and 24),
//     the double-rounding theorem of S. A. Figueroa, "When is double rounding
//     innocuous?", ACM SIGNUM Newsletter 30(3), 1995. f64 is Go's float64
//     addition, which is IEEE 754 binary64 round-to-nearest-even on every
//     platform Go supports.
//  2. Subnormal inputs and results are kept, unless a function says it
//     flushes (ftz): then subnormal inputs are read as zero of their sign and
//     a subnormal result is written as zero of its sign. An exact sum of two
//     values of one format that lies below the smallest normal is
//     representable (it is a multiple of the smallest subnormal), so "flush
//     before or after rounding" cannot differ for addition.
//  3. Zero signs follow IEEE 754 round-to-nearest: x + (-x) = +0,
//     (-0) + (-0) = -0, (-0) - (+0) = -0.
//  4. NaN bits never depend on the host CPU. Add and Sub follow the IEEE 754
//     default: the result is the first NaN operand (a, then b) with its quiet
//     bit set; a NaN made from non-NaN operands (inf - inf) is the positive
//     quiet NaN with only the quiet bit set ([DefaultNaN16] and so on). A
//     dialect that writes one canonical NaN instead (NVIDIA) applies
//     [CanonF16], [CanonBF16] or [CanonF32] to the result.
//  5. Min and max are chosen by a [MinMaxRule]; they never round, so their
//     result is always one operand's bits or a canonical NaN.
//  6. [EqF16], [EqBF16], [EqF32] and [EqF64] are IEEE 754 equality (used by
//     float compare-and-swap): -0 equals +0 and a NaN equals nothing, not
//     even itself.
//
// Packed types (f16x2, bf16x2) hold element 0 in bits 0..15 and element 1 in
// bits 16..31, as the PTX ISA's fA[0] = a[0:15]; the two halves never
// interact.
package fp
