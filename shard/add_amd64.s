#include "textflag.h"
#include "go_asm.h"

// The offsets of a chunk's words and written bits (go_asm.h), and how far
// ahead the loop asks for a word: 16 additions, which measured best in a
// microbenchmark of random additions into 256 MiB (a miss to memory each)
// among 4, 8, 16, 32 and 64.
#define AHEAD 16

// How far ahead addDense asks for a word: 64 additions. Its arrays are
// a split's windows, 1 to 64 MiB of words, whose misses are mostly to the
// last-level cache, shared with the other core's routing: in a split task
// of uniform (a 4 MiB window) the loop took 55-60% of the cycles at 64
// ahead that it took at 16 (96 and 128 about as few, 48 more). In
// random additions alone (a microbenchmark), 64 ahead was the fastest of
// 16, 32, 64, 96 and 128 into 64 MiB (1.2 times 16's speed), within a
// tenth of the fastest (96) into 16 MiB (1.7 times 16's), and up to a
// fifth slower than 16 into 1 and 4 MiB, which stay in cache there.
#define DENSEAHEAD 64

// ASK asks for (PREFETCHT0) the word the reference ref names, through the
// chunk table in DX; it uses R8 and R9.
#define ASK(ref) \
	MOVL ref, R8 \
	MOVL R8, R9 \
	SHRL $16, R9 \
	MOVQ 0(DX)(R9*8), R9 \
	ANDL $0xffff, R8 \
	PREFETCHT0 Chunk_Words(R9)(R8*4)

// func addWords(chunks *chunkTable, adds []WordAdd)
//
// One loop: at adds[DI] it asks for the word of adds[min(DI+AHEAD, n-1)]
// (the last few ask again for the last: harmless), then performs adds[DI].
// Registers: CX adds, BX n, R13 n-1, DX the chunk table; R8 the word
// reference, R9 its chunk, R11 the word in the chunk, R10 the addend.
TEXT ·addWords(SB), NOSPLIT, $0-32
	MOVQ chunks+0(FP), DX
	MOVQ adds_base+8(FP), CX
	MOVQ adds_len+16(FP), BX
	TESTQ BX, BX
	JEQ done
	LEAQ -1(BX), R13
	XORQ DI, DI

loop:
	// Ask for the word of adds[min(DI+AHEAD, n-1)].
	LEAQ AHEAD(DI), SI
	CMPQ SI, R13
	CMOVQGT R13, SI
	ASK(0(CX)(SI*8))

	// adds[DI]: the word += the addend.
	MOVL 0(CX)(DI*8), R8
	MOVL 4(CX)(DI*8), R10
	MOVL R8, R9
	SHRL $16, R9
	MOVQ 0(DX)(R9*8), R9
	MOVL R8, R11
	ANDL $0xffff, R11
	ADDL R10, Chunk_Words(R9)(R11*4)
	JNZ next

	// The sum is zero: set bit R8%64 of the word's bitmap word (BTSQ on
	// a register takes the bit index mod 64).
	SHRL $6, R11
	MOVQ Chunk_Touched(R9)(R11*8), R12
	BTSQ R8, R12
	MOVQ R12, Chunk_Touched(R9)(R11*8)

next:
	INCQ DI
	CMPQ DI, BX
	JLT loop

done:
	RET

// func prefetchWords(chunks *chunkTable, adds []WordAdd)
//
// Asks for the word of each of adds (PREFETCHT0), in order, writing
// nothing. Registers: CX adds, BX n, DX the chunk table; R8 the word
// reference, R9 its chunk.
TEXT ·prefetchWords(SB), NOSPLIT, $0-32
	MOVQ chunks+0(FP), DX
	MOVQ adds_base+8(FP), CX
	MOVQ adds_len+16(FP), BX
	TESTQ BX, BX
	JEQ pdone

ploop:
	ASK(0(CX))
	ADDQ $8, CX
	DECQ BX
	JNZ ploop

pdone:
	RET

// func addDense(words []uint32, touched *uint64, lines *uint32, pages *uint64, adds []WordAdd) int
//
// addWords over one array of words: at adds[DI] it asks for the word of
// adds[min(DI+DENSEAHEAD, n-1)] (bounded by the words, as a prefetch is not
// checked: a word beyond them is asked for as the last), then, its word w
// below len(words) (else it returns DI), adds adds[DI].Add to words[w],
// sets bit w of touched where the sum is zero, counts lines[w/32] and,
// where that count is 1, sets bit w/1024 of pages. It returns n.
// Registers: DX words, AX touched, R9 lines, R10 pages, CX adds, BX n,
// R13 n-1, DI the addition; R8 the word, R11, R12 and SI scratch.
TEXT ·addDense(SB), NOSPLIT, $0-80
	MOVQ words_base+0(FP), DX
	MOVQ touched+24(FP), AX
	MOVQ lines+32(FP), R9
	MOVQ pages+40(FP), R10
	MOVQ adds_base+48(FP), CX
	MOVQ adds_len+56(FP), BX
	XORQ DI, DI
	TESTQ BX, BX
	JEQ ddone
	LEAQ -1(BX), R13

dloop:
	// Ask for the word of adds[min(DI+DENSEAHEAD, n-1)], if among the words.
	LEAQ DENSEAHEAD(DI), SI
	CMPQ SI, R13
	CMOVQGT R13, SI
	MOVL 0(CX)(SI*8), R8
	CMPQ R8, words_len+8(FP)
	JAE dadd
	PREFETCHT0 0(DX)(R8*4)

dadd:
	// adds[DI]: the word += the addend; a zero sum marks it.
	MOVL 0(CX)(DI*8), R8
	CMPQ R8, words_len+8(FP)
	JAE ddone
	MOVL 4(CX)(DI*8), R11
	ADDL R11, 0(DX)(R8*4)
	JNZ dline
	MOVL R8, R11
	SHRL $6, R11
	MOVQ 0(AX)(R11*8), R12
	BTSQ R8, R12
	MOVQ R12, 0(AX)(R11*8)

dline:
	// Its line's count; the line's first marks the page.
	MOVL R8, R11
	SHRL $5, R11
	MOVL 0(R9)(R11*4), R12
	INCL R12
	MOVL R12, 0(R9)(R11*4)
	CMPL R12, $1
	JNE dnext
	SHRL $10, R8
	MOVL R8, R11
	SHRL $6, R11
	MOVQ 0(R10)(R11*8), SI
	BTSQ R8, SI
	MOVQ SI, 0(R10)(R11*8)

dnext:
	INCQ DI
	CMPQ DI, BX
	JLT dloop

ddone:
	MOVQ DI, ret+72(FP)
	RET
