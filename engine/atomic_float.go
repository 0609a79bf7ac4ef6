package engine

import "github.com/gpureplay/replay/internal/fp"

// Floating-point atomics: every float (op, type) of the four seeds, with the
// arithmetic in internal/fp. Each kind fixes the rounding, the subnormal
// handling, the NaN bits and the min/max rule, so replay is bit-exact and
// independent of the host CPU.
//
//	kind               element  rule                                   from
//	kFAddF32           f32      RN, subnormals kept, NaN -> 0x7fffffff  PTX atom.add.f32 on .shared
//	kFAddF32FTZ        f32      RN, flush subnormal in/out, canon NaN   PTX atom.add.f32 on .global (also .v2/.v4.f32), SASS ATOM.ADD.F32.FTZ.RN
//	kFAddF64           f64      RN, IEEE NaN                            PTX atom.add.f64, SASS ATOM.ADD.F64.RN, LSC fadd d64
//	kFSubF64           f64      RN, IEEE NaN                            LSC fsub d64
//	kFAddF16           f16      RN, subnormals kept, NaN -> 0x7fff      PTX atom.add.noftz.f16 (.v2/.v4/.v8)
//	kFAddBF16          bf16     RN, subnormals kept, NaN -> 0x7fff      PTX atom.add.noftz.bf16 (.v2/.v4/.v8)
//	kFAddF16x2         2 x f16  as kFAddF16 per half                    PTX atom.add.noftz.f16x2, SASS ATOM.ADD.F16x2.RN
//	kFAddF16x2FTZ      2 x f16  as kFAddF16x2, flush subnormals         SASS .sz ".F16x2.FTZ.RN" (syntax list)
//	kFAddBF16x2        2 x bf16 as kFAddBF16 per half                   PTX atom.add.noftz.bf16x2
//	kFMinF16PTX ..     f16      fp.MinMaxPTX                            PTX atom.min/max.noftz.f16 (vector forms)
//	kFMinBF16PTX ..    bf16     fp.MinMaxPTX                            PTX atom.min/max.noftz.bf16 (vector forms)
//	kFMinF16x2PTX ..   2 x f16  fp.MinMaxPTX per half                   PTX atom.min/max.noftz.f16x2, SASS ATOM.MIN/MAX.F16x2.RN
//	kFMinBF16x2PTX ..  2 x bf16 fp.MinMaxPTX per half                   PTX atom.min/max.noftz.bf16x2
//	kFAddF16Intel      f16      RN, subnormals kept, IEEE NaN           LSC fadd d16
//	kFSubF16Intel      f16      RN, subnormals kept, IEEE NaN           LSC fsub d16
//	kFAddF32Intel      f32      RN, subnormals kept, IEEE NaN           LSC fadd d32
//	kFSubF32Intel      f32      RN, subnormals kept, IEEE NaN           LSC fsub d32
//	kFMinF16Intel ..   f16      fp.MinMaxIntel                          vISA DWORD_ATOMIC FMIN/FMAX .16 (HF), LSC fmin/fmax d16
//	kFMinF32Intel ..   f32      fp.MinMaxIntel                          vISA DWORD_ATOMIC FMIN/FMAX (F), LSC fmin/fmax d32
//	kFMinF64Intel ..   f64      fp.MinMaxIntel                          LSC fmin/fmax d64
//	kFCASF16           f16      IEEE equality                           vISA FCMPWR .16 (HF), LSC fcas d16
//	kFCASF32           f32      IEEE equality                           vISA FCMPWR (F), LSC fcas d32
//	kFCASF64           f64      IEEE equality                           LSC fcas d64
//
// Not here, because no seed makes them float operations: PTX atom.cas is
// bit-size (.b16/.b32/.b64/.b128) and uses the integer kCAS; SASS ATOM.CAS
// lists only .U32/.S32/.U64; PTX/SASS exch is a bit copy (kExch).
//
// NaN bits. NVIDIA writes one canonical NaN: "The result of a
// single-precision floating-point operation involving one or more input
// NaNs is the quiet NaN of bit pattern 0x7fffffff" (CUDA C++ Programming
// Guide, Compute Capabilities, Floating-Point Standard); for f16 and bf16
// the canonical NaN is 0x7fff (CUDART_NAN_FP16 / CUDART_NAN_BF16, "canonical
// NaN value", cuda_fp16.h / cuda_bf16.h, and the PTX min/max "canonical NaN").
// For f64 no NVIDIA document names a pattern (the guide's 0x7fffffff rule is
// for single precision only), and Intel documents none for fadd/fsub, so
// those follow the IEEE 754 default (fp, invariant 4): the first NaN operand
// (old, then the operand) quieted, or 0x7ff8.. / 0x7fc00000 / 0x7e00 for a
// NaN made from numbers.
//
// Subnormals. PTX: "Current implementation of atom.add.f32 on global memory
// flushes subnormal inputs and results to sign-preserving zero; whereas
// atom.add.f32 on shared memory supports subnormal inputs and results";
// f16/bf16 forms require .noftz. The CUDA guide agrees: global float atomic
// adds "behave equivalent to FADD.F32.FTZ.RN", shared ones to FADD.F32.RN.
// The SASS Atomic Operations table (CUDA Binary Utilities, ATOM) lists
// .F16x2.RN (no FTZ) for ADD/MIN/MAX
// while its .sz list says .F16x2.FTZ.RN: kFAddF16x2 follows the table,
// kFAddF16x2FTZ exists for traces that carry the .FTZ spelling. Intel's
// seeds say nothing about subnormals; they are kept.
//
// Operand roles: b is the operand (PTX b, SASS Rb, vISA src0, LSC Src1Data)
// and, for the CAS kinds, new = (old == b) ? c : old with b the comparand
// and c the new value; vISA FCMPWR's "(src0 == old) ? src1 : old" maps src0
// to b and src1 to c.

const kFloatBase kind = 32

const (
	kFAddF32 kind = kFloatBase + iota
	kFAddF32FTZ
	kFAddF64
	kFSubF64
	kFAddF16
	kFAddBF16
	kFAddF16x2
	kFAddF16x2FTZ
	kFAddBF16x2
	kFMinF16PTX
	kFMaxF16PTX
	kFMinBF16PTX
	kFMaxBF16PTX
	kFMinF16x2PTX
	kFMaxF16x2PTX
	kFMinBF16x2PTX
	kFMaxBF16x2PTX
	kFAddF16Intel
	kFSubF16Intel
	kFAddF32Intel
	kFSubF32Intel
	kFMinF16Intel
	kFMaxF16Intel
	kFMinF32Intel
	kFMaxF32Intel
	kFMinF64Intel
	kFMaxF64Intel
	kFCASF16
	kFCASF32
	kFCASF64

	kFloatEnd // one past the last float kind
)

// fop16 is the new value of a 16-bit float element (f16, bf16; vISA .16 HF).
func fop16(k kind, old, b, c uint16) uint16 {
	switch k {
	case kFAddF16:
		return fp.CanonF16(fp.AddF16(old, b))
	case kFAddBF16:
		return fp.CanonBF16(fp.AddBF16(old, b))
	case kFMinF16PTX:
		return fp.MinF16(old, b, fp.MinMaxPTX)
	case kFMaxF16PTX:
		return fp.MaxF16(old, b, fp.MinMaxPTX)
	case kFMinBF16PTX:
		return fp.MinBF16(old, b, fp.MinMaxPTX)
	case kFMaxBF16PTX:
		return fp.MaxBF16(old, b, fp.MinMaxPTX)
	case kFAddF16Intel:
		return fp.AddF16(old, b)
	case kFSubF16Intel:
		return fp.SubF16(old, b)
	case kFMinF16Intel:
		return fp.MinF16(old, b, fp.MinMaxIntel)
	case kFMaxF16Intel:
		return fp.MaxF16(old, b, fp.MinMaxIntel)
	case kFCASF16:
		if fp.EqF16(old, b) {
			return c
		}
		return old
	}
	panic(noFormula{k, 16})
}

// fop32 is the new value of a 32-bit float element: f32, or a packed
// f16x2/bf16x2 word whose halves are independent.
func fop32(k kind, old, b, c uint32) uint32 {
	switch k {
	case kFAddF32:
		return fp.CanonF32(fp.AddF32(old, b, false))
	case kFAddF32FTZ:
		return fp.CanonF32(fp.AddF32(old, b, true))
	case kFAddF16x2:
		return canonF16x2(fp.AddF16x2(old, b))
	case kFAddF16x2FTZ:
		lo := fp.FlushF16(fp.AddF16(fp.FlushF16(uint16(old)), fp.FlushF16(uint16(b))))
		hi := fp.FlushF16(fp.AddF16(fp.FlushF16(uint16(old>>16)), fp.FlushF16(uint16(b>>16))))
		return canonF16x2(uint32(lo) | uint32(hi)<<16)
	case kFAddBF16x2:
		r := fp.AddBF16x2(old, b)
		return uint32(fp.CanonBF16(uint16(r))) | uint32(fp.CanonBF16(uint16(r>>16)))<<16
	case kFMinF16x2PTX:
		return fp.MinF16x2(old, b, fp.MinMaxPTX)
	case kFMaxF16x2PTX:
		return fp.MaxF16x2(old, b, fp.MinMaxPTX)
	case kFMinBF16x2PTX:
		return fp.MinBF16x2(old, b, fp.MinMaxPTX)
	case kFMaxBF16x2PTX:
		return fp.MaxBF16x2(old, b, fp.MinMaxPTX)
	case kFAddF32Intel:
		return fp.AddF32(old, b, false)
	case kFSubF32Intel:
		return fp.SubF32(old, b, false)
	case kFMinF32Intel:
		return fp.MinF32(old, b, fp.MinMaxIntel)
	case kFMaxF32Intel:
		return fp.MaxF32(old, b, fp.MinMaxIntel)
	case kFCASF32:
		if fp.EqF32(old, b) {
			return c
		}
		return old
	}
	panic(noFormula{k, 32})
}

// fop64 is the new value of a 64-bit float element.
func fop64(k kind, old, b, c uint64) uint64 {
	switch k {
	case kFAddF64:
		return fp.AddF64(old, b)
	case kFSubF64:
		return fp.SubF64(old, b)
	case kFMinF64Intel:
		return fp.MinF64(old, b, fp.MinMaxIntel)
	case kFMaxF64Intel:
		return fp.MaxF64(old, b, fp.MinMaxIntel)
	case kFCASF64:
		if fp.EqF64(old, b) {
			return c
		}
		return old
	}
	panic(noFormula{k, 64})
}

func canonF16x2(x uint32) uint32 {
	return uint32(fp.CanonF16(uint16(x))) | uint32(fp.CanonF16(uint16(x>>16)))<<16
}
