#include "textflag.h"

// func warpConflictsAVX512(addrs *[32]uint64) (distinct, maxc uint32)
//
// The distinct addresses of a full warp whose 32 addresses lie in one page
// (so that their low 32 bits are equal exactly when they are), and the
// most lanes on one of them. For each lane, the lanes before it on its
// address are counted (VPCONFLICTD: a mask of the earlier lanes of a
// 16-lane vector equal to each lane; VPOPCNTD: their number): a lane
// counted 0 is an address's first, and its last lane counts one less than
// its lanes. VPCONFLICTD sees 16 lanes; lanes 16-31 (B) also need the
// lanes of 0-15 (A) before them, which four more conflicts over pairs of
// eight-lane halves give: in [A.lo, B.lo], lane 8+j's mask has bits 0-7
// for the lanes of A.lo equal to B.lo[j] and bits 8-14 for the earlier
// lanes of B.lo; and so on:
//
//	B.lo[j]: [A.lo, B.lo] + ([A.hi, B.lo] & 0xff)
//	B.hi[j]: [A.lo, B.hi] + ([A.hi, B.hi] & 0xff) + ([B.lo, B.hi] & 0xff)
//
// Needs AVX-512 F, CD and VPOPCNTDQ (hasConflictsAVX512).
TEXT ·warpConflictsAVX512(SB), NOSPLIT, $0-16
	MOVQ addrs+0(FP), SI
	// Y0 = A.lo (lanes 0-7), Y1 = A.hi, Y2 = B.lo, Y3 = B.hi: low halves.
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPMOVQD Z0, Y0
	VPMOVQD Z1, Y1
	VPMOVQD Z2, Y2
	VPMOVQD Z3, Y3

	VINSERTI64X4 $1, Y1, Z0, Z4  // A
	VINSERTI64X4 $1, Y2, Z0, Z5  // [A.lo, B.lo]
	VINSERTI64X4 $1, Y2, Z1, Z6  // [A.hi, B.lo]
	VINSERTI64X4 $1, Y3, Z0, Z7  // [A.lo, B.hi]
	VINSERTI64X4 $1, Y3, Z1, Z8  // [A.hi, B.hi]
	VINSERTI64X4 $1, Y3, Z2, Z9  // [B.lo, B.hi]

	VPCONFLICTD Z4, Z4
	VPCONFLICTD Z5, Z5
	VPCONFLICTD Z6, Z6
	VPCONFLICTD Z7, Z7
	VPCONFLICTD Z8, Z8
	VPCONFLICTD Z9, Z9

	// Keep bits 0-7 (the first half's lanes) of the masks that add to
	// another's.
	MOVL $0xff, AX
	VPBROADCASTD AX, Z10
	VPANDD Z10, Z6, Z6
	VPANDD Z10, Z8, Z8
	VPANDD Z10, Z9, Z9

	VPOPCNTD Z4, Z4
	VPOPCNTD Z5, Z5
	VPOPCNTD Z6, Z6
	VPOPCNTD Z7, Z7
	VPOPCNTD Z8, Z8
	VPOPCNTD Z9, Z9

	// Z5's upper half: B.lo's counts; Z7's: B.hi's.
	VPADDD Z6, Z5, Z5
	VPADDD Z8, Z7, Z7
	VPADDD Z9, Z7, Z7
	VEXTRACTI64X4 $1, Z5, Y5
	VEXTRACTI64X4 $1, Z7, Y7
	VINSERTI64X4 $1, Y7, Z5, Z5  // B's counts

	// distinct: the lanes counted 0.
	VPTESTNMD Z4, Z4, K1
	VPTESTNMD Z5, Z5, K2
	KMOVW K1, AX
	KMOVW K2, BX
	POPCNTL AX, AX
	POPCNTL BX, BX
	ADDL BX, AX
	MOVL AX, distinct+8(FP)

	// maxc: the highest count, plus one.
	VPMAXUD Z5, Z4, Z4
	VEXTRACTI64X4 $1, Z4, Y5
	VPMAXUD Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPMAXUD X5, X4, X4
	VPSHUFD $0x4e, X4, X5
	VPMAXUD X5, X4, X4
	VPSHUFD $0xb1, X4, X5
	VPMAXUD X5, X4, X4
	VMOVD X4, AX
	INCL AX
	MOVL AX, maxc+12(FP)
	VZEROUPPER
	RET
