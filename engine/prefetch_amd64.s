#include "textflag.h"

// func prefetch(ptrs []unsafe.Pointer, span uintptr)
TEXT ·prefetch(SB), NOSPLIT, $0-32
	MOVQ ptrs_base+0(FP), SI
	MOVQ ptrs_len+8(FP), CX
	MOVQ span+24(FP), DX
	TESTQ CX, CX
	JZ done

loop:
	MOVQ (SI), AX
	PREFETCHT0 (AX)
	PREFETCHT0 (AX)(DX*1)
	ADDQ $8, SI
	DECQ CX
	JNZ loop

done:
	RET

// func prefetchRange(p unsafe.Pointer, n uintptr)
TEXT ·prefetchRange(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	ADDQ SI, CX

line:
	CMPQ SI, CX
	JAE end
	PREFETCHT0 (SI)
	ADDQ $64, SI
	JMP line

end:
	RET
