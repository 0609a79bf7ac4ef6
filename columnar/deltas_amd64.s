#include "textflag.h"

// FOLD(op, z, y, x) folds z's halves, quarters and eighths together with
// op (VPMAXSD, VPMINSQ …), leaving the result in x's low qword (y, x: z's
// ymm and xmm; X15 and Y15 are scratch). REDUCED and REDUCEQ then put in
// r the result over z's signed dwords or qwords: its largest for VPMAXSx,
// its smallest for VPMINSx.
#define FOLD(op, z, y, x) \
	VEXTRACTI64X4 $1, z, Y15; \
	op Y15, y, y; \
	VEXTRACTI32X4 $1, y, X15; \
	op X15, x, x; \
	VPSHUFD $0x4e, x, X15; \
	op X15, x, x

#define REDUCED(op, z, y, x, r) \
	FOLD(op, z, y, x); \
	VPSHUFD $0xb1, x, X15; \
	op X15, x, x; \
	VMOVD x, r

#define REDUCEQ(op, z, y, x, r) \
	FOLD(op, z, y, x); \
	VMOVQ x, r

// CHUNK32(off): the 16 values at off(SI) after those in Z0: their deltas
// (Z3) into the miniblock's largest (Z27) and the block's smallest (Z28),
// the values with flip (Z31) into the smallest (Z30) and largest (Z29),
// and the deltas, sign-extended, stored at 2*off(DI).
#define CHUNK32(off) \
	VMOVDQU32 off(SI), Z1; \
	VALIGND $15, Z0, Z1, Z2; \
	VPSUBD Z2, Z1, Z3; \
	VMOVDQA32 Z1, Z0; \
	VPMINSD Z3, Z28, Z28; \
	VPMAXSD Z3, Z27, Z27; \
	VPXORD Z31, Z1, Z4; \
	VPMINSD Z4, Z30, Z30; \
	VPMAXSD Z4, Z29, Z29; \
	VPMOVSXDQ Y3, Z5; \
	VEXTRACTI64X4 $1, Z3, Y6; \
	VPMOVSXDQ Y6, Z6; \
	VMOVDQU64 Z5, (2*(off))(DI); \
	VMOVDQU64 Z6, (2*(off)+64)(DI)

// MINI32(m): miniblock m (32 values, two chunks), its largest delta into
// his[m] (R8) and the block's largest (R9).
#define MINI32(m) \
	VPBROADCASTD R10, Z27; \
	CHUNK32(m*128); \
	CHUNK32(m*128+64); \
	REDUCED(VPMAXSD, Z27, Y27, X27, AX); \
	MOVLQSX AX, AX; \
	MOVQ AX, (m*8)(R8); \
	CMPQ AX, R9; \
	CMOVQGT AX, R9

// func blockDeltas32AVX512(d *[128]int64, his *[4]int64, blk *[128]int32, prev, flip, vlo, vhi int32) (lo, hi int64, vlo2, vhi2 int32)
//
// blockDeltas of a whole block of int32 values, 16 a step: each chunk's
// values shifted one lane up behind the last value before them (VALIGND)
// and taken from them.
TEXT ·blockDeltas32AVX512(SB), NOSPLIT, $0-64
	MOVQ d+0(FP), DI
	MOVQ his+8(FP), R8
	MOVQ blk+16(FP), SI
	MOVL prev+24(FP), AX
	VPBROADCASTD AX, Z0
	MOVL flip+28(FP), AX
	VPBROADCASTD AX, Z31
	MOVL vlo+32(FP), AX
	VPBROADCASTD AX, Z30
	MOVL vhi+36(FP), AX
	VPBROADCASTD AX, Z29
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z28
	MOVL $0x80000000, R10
	MOVQ $0x8000000000000000, R9
	MINI32(0)
	MINI32(1)
	MINI32(2)
	MINI32(3)
	REDUCED(VPMINSD, Z28, Y28, X28, AX)
	MOVLQSX AX, AX
	MOVQ AX, lo+40(FP)
	MOVQ R9, hi+48(FP)
	REDUCED(VPMINSD, Z30, Y30, X30, AX)
	MOVL AX, vlo2+56(FP)
	REDUCED(VPMAXSD, Z29, Y29, X29, AX)
	MOVL AX, vhi2+60(FP)
	VZEROUPPER
	RET

// CHUNK64(off): CHUNK32 for 8 int64 values.
#define CHUNK64(off) \
	VMOVDQU64 off(SI), Z1; \
	VALIGNQ $7, Z0, Z1, Z2; \
	VPSUBQ Z2, Z1, Z3; \
	VMOVDQA64 Z1, Z0; \
	VPMINSQ Z3, Z28, Z28; \
	VPMAXSQ Z3, Z27, Z27; \
	VPXORQ Z31, Z1, Z4; \
	VPMINSQ Z4, Z30, Z30; \
	VPMAXSQ Z4, Z29, Z29; \
	VMOVDQU64 Z3, off(DI)

#define MINI64(m) \
	VPBROADCASTQ R10, Z27; \
	CHUNK64(m*256); \
	CHUNK64(m*256+64); \
	CHUNK64(m*256+128); \
	CHUNK64(m*256+192); \
	REDUCEQ(VPMAXSQ, Z27, Y27, X27, AX); \
	MOVQ AX, (m*8)(R8); \
	CMPQ AX, R9; \
	CMOVQGT AX, R9

// func blockDeltas64AVX512(d *[128]int64, his *[4]int64, blk *[128]int64, prev, flip, vlo, vhi int64) (lo, hi, vlo2, vhi2 int64)
TEXT ·blockDeltas64AVX512(SB), NOSPLIT, $0-88
	MOVQ d+0(FP), DI
	MOVQ his+8(FP), R8
	MOVQ blk+16(FP), SI
	MOVQ prev+24(FP), AX
	VPBROADCASTQ AX, Z0
	MOVQ flip+32(FP), AX
	VPBROADCASTQ AX, Z31
	MOVQ vlo+40(FP), AX
	VPBROADCASTQ AX, Z30
	MOVQ vhi+48(FP), AX
	VPBROADCASTQ AX, Z29
	MOVQ $0x7fffffffffffffff, AX
	VPBROADCASTQ AX, Z28
	MOVQ $0x8000000000000000, R10
	MOVQ R10, R9
	MINI64(0)
	MINI64(1)
	MINI64(2)
	MINI64(3)
	REDUCEQ(VPMINSQ, Z28, Y28, X28, AX)
	MOVQ AX, lo+56(FP)
	MOVQ R9, hi+64(FP)
	REDUCEQ(VPMINSQ, Z30, Y30, X30, AX)
	MOVQ AX, vlo2+72(FP)
	REDUCEQ(VPMAXSQ, Z29, Y29, X29, AX)
	MOVQ AX, vhi2+80(FP)
	VZEROUPPER
	RET
