#include "textflag.h"
#include "go_asm.h"

// How far ahead addSlots asks for a word: 32 additions, twice
// add_amd64.s's AHEAD. Its words are more often out of the caches than a
// lean replay's (the batch's result columns share them): in a replay of
// uniform with the results table it took 70 ms of CPU at 16 ahead, 52 at
// 32, 57 at 64 (profiles of 8 runs each).
#define AHEAD 32

// func addSlots(chunks *chunkTable, adds []WordAdd, mask uint32, ops, old []uint64) int
//
// addWords (add_amd64.s) with a slot a record: at adds[DI] it asks for
// the word of adds[min(DI+AHEAD, n-1)], then, its slot s = Add&mask below
// len(ops) (else it returns DI), stores the word in old[s] and adds the
// low 32 bits of ops[s] to it, marking it where the sum is zero. It
// returns n. Registers: DX the chunk table, CX adds, BX n, R13 n-1, DI
// the addition, R14 mask, AX ops, R15 len(ops), R12 old; R8 the word
// reference, R9 its chunk, R10 the slot, R11 the word in the chunk, SI
// the word's value.
TEXT ·addSlots(SB), NOSPLIT, $0-96
	MOVQ chunks+0(FP), DX
	MOVQ adds_base+8(FP), CX
	MOVQ adds_len+16(FP), BX
	MOVL mask+32(FP), R14
	MOVQ ops_base+40(FP), AX
	MOVQ ops_len+48(FP), R15
	MOVQ old_base+64(FP), R12
	XORQ DI, DI
	TESTQ BX, BX
	JEQ done
	LEAQ -1(BX), R13

loop:
	// Ask for the word of adds[min(DI+AHEAD, n-1)].
	LEAQ AHEAD(DI), SI
	CMPQ SI, R13
	CMOVQGT R13, SI
	MOVL 0(CX)(SI*8), R8
	MOVL R8, R9
	SHRL $16, R9
	MOVQ 0(DX)(R9*8), R9
	ANDL $0xffff, R8
	PREFETCHT0 Chunk_Words(R9)(R8*4)

	// adds[DI]: its slot, checked.
	MOVL 0(CX)(DI*8), R8
	MOVL 4(CX)(DI*8), R10
	ANDL R14, R10
	CMPQ R10, R15
	JAE done

	// old[slot] = the word; the word += ops[slot].
	MOVL R8, R9
	SHRL $16, R9
	MOVQ 0(DX)(R9*8), R9
	MOVL R8, R11
	ANDL $0xffff, R11
	MOVL Chunk_Words(R9)(R11*4), SI
	MOVQ SI, 0(R12)(R10*8)
	ADDL 0(AX)(R10*8), SI
	MOVL SI, Chunk_Words(R9)(R11*4)
	JNZ next

	// The sum is zero: set bit R8%64 of the word's bitmap word.
	SHRL $6, R11
	MOVQ Chunk_Touched(R9)(R11*8), SI
	BTSQ R8, SI
	MOVQ SI, Chunk_Touched(R9)(R11*8)

next:
	INCQ DI
	CMPQ DI, BX
	JLT loop

done:
	MOVQ DI, ret+88(FP)
	RET
