#include "textflag.h"

// STEP ORs into R8 the zero-mask of 4 words at SI+16*k, shifted to bits
// 4k..4k+3: PCMPEQL against X0 (zeros) sets a lane of all ones where the
// word is zero, MOVMSKPS takes the lanes' top bits.
#define STEP(k) \
	MOVOU (16*k)(SI), X1 \
	PCMPEQL X0, X1 \
	MOVMSKPS X1, AX \
	SHLQ $(4*k), AX \
	ORQ AX, R8

// func written(words *[PageWords]uint32, touched, dst *[PageWords / 64]uint64, next *[PageWords]uint32)
//
// For each group of 64 words (CX = 0..15): asks for 4 cache lines of the
// next page (PREFETCHT0: its 64 lines over the 16 groups), builds the
// group's zero-mask 4 words at a time, and stores touched | ^zeros. SSE2
// only: every amd64 has it.
TEXT ·written(SB), NOSPLIT, $0-32
	MOVQ words+0(FP), SI
	MOVQ touched+8(FP), R9
	MOVQ dst+16(FP), DI
	MOVQ next+24(FP), DX
	PXOR X0, X0
	XORQ CX, CX

group:
	PREFETCHT0 0(DX)
	PREFETCHT0 64(DX)
	PREFETCHT0 128(DX)
	PREFETCHT0 192(DX)
	ADDQ $256, DX
	XORQ R8, R8
	STEP(0)
	STEP(1)
	STEP(2)
	STEP(3)
	STEP(4)
	STEP(5)
	STEP(6)
	STEP(7)
	STEP(8)
	STEP(9)
	STEP(10)
	STEP(11)
	STEP(12)
	STEP(13)
	STEP(14)
	STEP(15)
	NOTQ R8
	ORQ (R9)(CX*8), R8
	MOVQ R8, (DI)(CX*8)
	ADDQ $256, SI
	INCQ CX
	CMPQ CX, $16
	JLT group
	RET
