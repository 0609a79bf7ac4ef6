#include "textflag.h"

// CONFLICTS(src) leaves in AX the distinct addresses of the 32 at src and
// in BX the most lanes on one, as warpConflictsAVX512 (below) says. It
// uses Z0-Z10, K1, K2, AX, BX and DX. CONFLICTS_Z0_Z3 is the same of the
// 32 values in Z0-Z3.
#define CONFLICTS(src) \
	VMOVDQU64 0(src), Z0; \
	VMOVDQU64 64(src), Z1; \
	VMOVDQU64 128(src), Z2; \
	VMOVDQU64 192(src), Z3; \
	CONFLICTS_Z0_Z3

#define CONFLICTS_Z0_Z3 \
	VPMOVQD Z0, Y0; \
	VPMOVQD Z1, Y1; \
	VPMOVQD Z2, Y2; \
	VPMOVQD Z3, Y3; \
	VINSERTI64X4 $1, Y1, Z0, Z4; \
	VINSERTI64X4 $1, Y2, Z0, Z5; \
	VINSERTI64X4 $1, Y2, Z1, Z6; \
	VINSERTI64X4 $1, Y3, Z0, Z7; \
	VINSERTI64X4 $1, Y3, Z1, Z8; \
	VINSERTI64X4 $1, Y3, Z2, Z9; \
	VPCONFLICTD Z4, Z4; \
	VPCONFLICTD Z5, Z5; \
	VPCONFLICTD Z6, Z6; \
	VPCONFLICTD Z7, Z7; \
	VPCONFLICTD Z8, Z8; \
	VPCONFLICTD Z9, Z9; \
	MOVL $0xff, AX; \
	VPBROADCASTD AX, Z10; \
	VPANDD Z10, Z6, Z6; \
	VPANDD Z10, Z8, Z8; \
	VPANDD Z10, Z9, Z9; \
	VPOPCNTD Z4, Z4; \
	VPOPCNTD Z5, Z5; \
	VPOPCNTD Z6, Z6; \
	VPOPCNTD Z7, Z7; \
	VPOPCNTD Z8, Z8; \
	VPOPCNTD Z9, Z9; \
	VPADDD Z6, Z5, Z5; \
	VPADDD Z8, Z7, Z7; \
	VPADDD Z9, Z7, Z7; \
	VEXTRACTI64X4 $1, Z5, Y5; \
	VEXTRACTI64X4 $1, Z7, Y7; \
	VINSERTI64X4 $1, Y7, Z5, Z5; \
	VPTESTNMD Z4, Z4, K1; \
	VPTESTNMD Z5, Z5, K2; \
	KMOVW K1, AX; \
	KMOVW K2, BX; \
	POPCNTL AX, AX; \
	POPCNTL BX, BX; \
	ADDL BX, AX; \
	MOVL AX, DX; \
	VPMAXUD Z5, Z4, Z4; \
	VEXTRACTI64X4 $1, Z4, Y5; \
	VPMAXUD Y5, Y4, Y4; \
	VEXTRACTI128 $1, Y4, X5; \
	VPMAXUD X5, X4, X4; \
	VPSHUFD $0x4e, X4, X5; \
	VPMAXUD X5, X4, X4; \
	VPSHUFD $0xb1, X4, X5; \
	VPMAXUD X5, X4, X4; \
	VMOVD X4, BX; \
	INCL BX; \
	MOVL DX, AX

// ADDLANE(k) adds R8 to sums[a>>2&1023], sums at DI, a lane k's address
// at SI (addLanesAVX512, addLanes16AVX512). It uses AX.
#define ADDLANE(k) \
	MOVQ (k*8)(SI), AX; \
	SHRQ $2, AX; \
	ANDL $1023, AX; \
	ADDQ R8, (DI)(AX*8)

// ORAND_RET stores the OR of Z4's eight lanes in or+8(FP) and the AND of
// Z6's in and+16(FP) (warpBitsAVX512, warpBits16AVX512).
#define ORAND_RET \
	VEXTRACTI64X4 $1, Z4, Y5; \
	VPORQ Y5, Y4, Y4; \
	VEXTRACTI64X4 $1, Z6, Y7; \
	VPANDQ Y7, Y6, Y6; \
	VEXTRACTI128 $1, Y4, X5; \
	VPORQ X5, X4, X4; \
	VEXTRACTI128 $1, Y6, X7; \
	VPANDQ X7, X6, X6; \
	VPSHUFD $0x4e, X4, X5; \
	VPORQ X5, X4, X4; \
	VPSHUFD $0x4e, X6, X7; \
	VPANDQ X7, X6, X6; \
	VMOVQ X4, or+8(FP); \
	VMOVQ X6, and+16(FP)

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
	CONFLICTS(SI)
	MOVL AX, distinct+8(FP)
	MOVL BX, maxc+12(FP)
	VZEROUPPER
	RET

// func addLanesAVX512(sums *[1024]uint64, addrs *[32]uint64, add uint64) (distinct, maxc uint32)
//
// addLanes and warpConflictsAVX512 in one call: sums[a>>2&1023] += add for
// each of the 32 addresses, unrolled (a load, a shift, a mask and an add
// to memory a lane), then the count, the addresses loaded again from L1.
TEXT ·addLanesAVX512(SB), NOSPLIT, $0-32
	MOVQ sums+0(FP), DI
	MOVQ addrs+8(FP), SI
	MOVQ add+16(FP), R8
	ADDLANE(0); ADDLANE(1); ADDLANE(2); ADDLANE(3)
	ADDLANE(4); ADDLANE(5); ADDLANE(6); ADDLANE(7)
	ADDLANE(8); ADDLANE(9); ADDLANE(10); ADDLANE(11)
	ADDLANE(12); ADDLANE(13); ADDLANE(14); ADDLANE(15)
	ADDLANE(16); ADDLANE(17); ADDLANE(18); ADDLANE(19)
	ADDLANE(20); ADDLANE(21); ADDLANE(22); ADDLANE(23)
	ADDLANE(24); ADDLANE(25); ADDLANE(26); ADDLANE(27)
	ADDLANE(28); ADDLANE(29); ADDLANE(30); ADDLANE(31)
	CONFLICTS(SI)
	MOVL AX, distinct+24(FP)
	MOVL BX, maxc+28(FP)
	VZEROUPPER
	RET

// func warpBitsAVX512(addrs *[32]uint64) (or, and uint64)
//
// listBits: the OR and the AND of 32 addresses.
TEXT ·warpBitsAVX512(SB), NOSPLIT, $0-24
	MOVQ addrs+0(FP), SI
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPORQ Z1, Z0, Z4
	VPORQ Z3, Z2, Z5
	VPORQ Z5, Z4, Z4
	VPANDQ Z1, Z0, Z6
	VPANDQ Z3, Z2, Z7
	VPANDQ Z7, Z6, Z6
	ORAND_RET
	VZEROUPPER
	RET

// func addLanes16AVX512(sums *[1024]uint64, addrs *[16]uint64, add uint64) (distinct, maxc, sectors uint32)
//
// addLanesAVX512 of a SIMD16 warp (vISA's, LSC's), its 16 addresses in
// one page, and their sectors: the adds unrolled, then one VPCONFLICTD
// over the 16 addresses' low 32 bits (equal exactly when the addresses
// are, in one page) and one over those bits shifted right by 5 (a 32-byte
// sector's number: equal exactly when the sectors are). A lane whose
// conflict mask is empty is its address's (sector's) first; the most
// lanes on one address is the largest count of earlier equal lanes, plus
// one.
TEXT ·addLanes16AVX512(SB), NOSPLIT, $0-36
	MOVQ sums+0(FP), DI
	MOVQ addrs+8(FP), SI
	MOVQ add+16(FP), R8
	ADDLANE(0); ADDLANE(1); ADDLANE(2); ADDLANE(3)
	ADDLANE(4); ADDLANE(5); ADDLANE(6); ADDLANE(7)
	ADDLANE(8); ADDLANE(9); ADDLANE(10); ADDLANE(11)
	ADDLANE(12); ADDLANE(13); ADDLANE(14); ADDLANE(15)
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VPMOVQD Z0, Y0
	VPMOVQD Z1, Y1
	VINSERTI64X4 $1, Y1, Z0, Z4
	VPSRLD $5, Z4, Z6
	VPCONFLICTD Z4, Z5
	VPCONFLICTD Z6, Z6
	VPOPCNTD Z5, Z5
	VPTESTNMD Z5, Z5, K1
	VPTESTNMD Z6, Z6, K2
	KMOVW K1, AX
	KMOVW K2, CX
	POPCNTL AX, AX
	POPCNTL CX, CX
	VEXTRACTI64X4 $1, Z5, Y7
	VPMAXUD Y7, Y5, Y5
	VEXTRACTI128 $1, Y5, X7
	VPMAXUD X7, X5, X5
	VPSHUFD $0x4e, X5, X7
	VPMAXUD X7, X5, X5
	VPSHUFD $0xb1, X5, X7
	VPMAXUD X7, X5, X5
	VMOVD X5, BX
	INCL BX
	MOVL AX, distinct+24(FP)
	MOVL BX, maxc+28(FP)
	MOVL CX, sectors+32(FP)
	VZEROUPPER
	RET

// func sectors16AVX512(addrs *[16]uint64) (sectors uint32, ok bool)
//
// The distinct 32-byte sectors (address >> 5) of 16 addresses, ok when
// they differ in their low 32 bits alone (else nothing counted): the
// addresses loaded and shifted in registers, their high halves compared
// with the first lane's, then one VPCONFLICTD over the low halves, a lane
// whose mask is empty the first of its sector.
TEXT ·sectors16AVX512(SB), NOSPLIT, $0-13
	MOVQ addrs+0(FP), SI
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VPSRLQ $5, Z0, Z0
	VPSRLQ $5, Z1, Z1
	VPSRLQ $32, Z0, Z2
	VPSRLQ $32, Z1, Z3
	VPBROADCASTQ X2, Z4
	VPCMPEQQ Z4, Z2, K1
	VPCMPEQQ Z4, Z3, K2
	KMOVW K1, AX
	KMOVW K2, CX
	ANDL CX, AX
	CMPL AX, $0xff
	JNE differ
	VPMOVQD Z0, Y0
	VPMOVQD Z1, Y1
	VINSERTI64X4 $1, Y1, Z0, Z4
	VPCONFLICTD Z4, Z5
	VPTESTNMD Z5, Z5, K1
	KMOVW K1, AX
	POPCNTL AX, AX
	MOVL AX, sectors+8(FP)
	MOVB $1, ok+12(FP)
	VZEROUPPER
	RET
differ:
	MOVL $0, sectors+8(FP)
	MOVB $0, ok+12(FP)
	VZEROUPPER
	RET

// func distinct16AVX512(w *[16]uint64) uint32
//
// The distinct values among 16 that differ in their low 32 bits alone:
// one VPCONFLICTD over those bits, a lane whose mask is empty the first of
// its value.
TEXT ·distinct16AVX512(SB), NOSPLIT, $0-12
	MOVQ w+0(FP), SI
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VPMOVQD Z0, Y0
	VPMOVQD Z1, Y1
	VINSERTI64X4 $1, Y1, Z0, Z4
	VPCONFLICTD Z4, Z5
	VPTESTNMD Z5, Z5, K1
	KMOVW K1, AX
	POPCNTL AX, AX
	MOVL AX, ret+8(FP)
	VZEROUPPER
	RET

// func warpBits16AVX512(addrs *[16]uint64) (or, and uint64)
//
// warpBitsAVX512 of a SIMD16 warp's 16 addresses.
TEXT ·warpBits16AVX512(SB), NOSPLIT, $0-24
	MOVQ addrs+0(FP), SI
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VPORQ Z1, Z0, Z4
	VPANDQ Z1, Z0, Z6
	ORAND_RET
	VZEROUPPER
	RET

// func sectors32AVX512(addrs *[32]uint64) (sectors uint32, ok bool)
//
// sectors16AVX512 of a full warp's 32 addresses: loaded, shifted right by
// 5 and their high halves compared with the first lane's in registers,
// then CONFLICTS of the sectors.
TEXT ·sectors32AVX512(SB), NOSPLIT, $0-13
	MOVQ addrs+0(FP), SI
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPSRLQ $5, Z0, Z0
	VPSRLQ $5, Z1, Z1
	VPSRLQ $5, Z2, Z2
	VPSRLQ $5, Z3, Z3
	VPSRLQ $32, Z0, Z4
	VPBROADCASTQ X4, Z8
	VPSRLQ $32, Z1, Z5
	VPSRLQ $32, Z2, Z6
	VPSRLQ $32, Z3, Z7
	VPCMPEQQ Z8, Z4, K1
	VPCMPEQQ Z8, Z5, K2
	KANDW K2, K1, K1
	VPCMPEQQ Z8, Z6, K2
	KANDW K2, K1, K1
	VPCMPEQQ Z8, Z7, K2
	KANDW K2, K1, K1
	KMOVW K1, AX
	CMPL AX, $0xff
	JNE differ32
	CONFLICTS_Z0_Z3
	MOVL AX, sectors+8(FP)
	MOVB $1, ok+12(FP)
	VZEROUPPER
	RET
differ32:
	MOVL $0, sectors+8(FP)
	MOVB $0, ok+12(FP)
	VZEROUPPER
	RET

// func pageSectorsAVX512(addrs *[32]uint64) uint32
//
// pageSectors of a full warp whose 32 addresses lie in one page: lane k's
// sector s = a>>5 & 127 is bit s of a 128-bit set, built in registers:
// VPSLLVQ shifts a 1 left by s into the low word (0 when s is 64 or more)
// and by s-64 into the high word (0 when s is less than 64: the count,
// unsigned, is then above 63), the 32 lanes' words ORed together, then
// counted. No conflict count, and no array stored then loaded whole (a
// load the stores before it cannot forward).
TEXT ·pageSectorsAVX512(SB), NOSPLIT, $0-12
	MOVQ addrs+0(FP), SI
	MOVL $127, AX
	VPBROADCASTQ AX, Z8
	MOVL $1, AX
	VPBROADCASTQ AX, Z9
	MOVL $64, AX
	VPBROADCASTQ AX, Z10
#define SECTORBITS(off, lo, hi) \
	VPSRLQ $5, off(SI), Z4; \
	VPANDQ Z8, Z4, Z4; \
	VPSLLVQ Z4, Z9, lo; \
	VPSUBQ Z10, Z4, Z4; \
	VPSLLVQ Z4, Z9, hi
	SECTORBITS(0, Z0, Z1)
	SECTORBITS(64, Z2, Z3)
	VPORQ Z2, Z0, Z0
	VPORQ Z3, Z1, Z1
	SECTORBITS(128, Z2, Z3)
	VPORQ Z2, Z0, Z0
	VPORQ Z3, Z1, Z1
	SECTORBITS(192, Z2, Z3)
	VPORQ Z2, Z0, Z0
	VPORQ Z3, Z1, Z1
#undef SECTORBITS
	// Z0: the low words, Z1: the high ones, eight of each: OR them down.
	VEXTRACTI64X4 $1, Z0, Y2
	VPORQ Y2, Y0, Y0
	VEXTRACTI64X4 $1, Z1, Y3
	VPORQ Y3, Y1, Y1
	VEXTRACTI128 $1, Y0, X2
	VPORQ X2, X0, X0
	VEXTRACTI128 $1, Y1, X3
	VPORQ X3, X1, X1
	VPUNPCKLQDQ X1, X0, X2
	VPUNPCKHQDQ X1, X0, X3
	VPORQ X3, X2, X2
	VMOVQ X2, AX
	VPEXTRQ $1, X2, BX
	POPCNTQ AX, AX
	POPCNTQ BX, BX
	ADDL BX, AX
	MOVL AX, ret+8(FP)
	VZEROUPPER
	RET

// func warpAddrsAVX512(addrs, av *[32]uint64, scale, imm, pitch, mask uint64) (lo, hi, or uint64)
//
// warpAddrs in 8 lanes a register: addrs[i] = (scale*av[i] + imm +
// i*pitch) & mask for the 32 lanes, and their least, greatest and OR.
// Registers: Z20 scale, Z21 pitch, Z22 mask, Z24 imm + i*pitch of the
// eight lanes in hand, Z25 8*pitch; Z0-Z3 the four eights of addresses.
TEXT ·warpAddrsAVX512(SB), NOSPLIT, $0-72
	MOVQ addrs+0(FP), DI
	MOVQ av+8(FP), SI
	MOVQ scale+16(FP), AX
	MOVQ imm+24(FP), BX
	MOVQ pitch+32(FP), CX
	MOVQ mask+40(FP), DX
	VPBROADCASTQ AX, Z20
	VPBROADCASTQ CX, Z21
	VPBROADCASTQ DX, Z22
	VPBROADCASTQ BX, Z23
	VMOVDQU64 laneIota<>(SB), Z24
	VPMULLQ Z21, Z24, Z24
	VPADDQ Z23, Z24, Z24
	SHLQ $3, CX
	VPBROADCASTQ CX, Z25
#define EIGHT(k, z) \
	VMOVDQU64 (k*64)(SI), z; \
	VPMULLQ Z20, z, z; \
	VPADDQ Z24, z, z; \
	VPANDQ Z22, z, z; \
	VMOVDQU64 z, (k*64)(DI); \
	VPADDQ Z25, Z24, Z24
	EIGHT(0, Z0)
	EIGHT(1, Z1)
	EIGHT(2, Z2)
	EIGHT(3, Z3)
#undef EIGHT
	VPMINUQ Z1, Z0, Z4
	VPMINUQ Z3, Z2, Z5
	VPMINUQ Z5, Z4, Z4
	VPMAXUQ Z1, Z0, Z6
	VPMAXUQ Z3, Z2, Z7
	VPMAXUQ Z7, Z6, Z6
	VPORQ Z1, Z0, Z8
	VPORQ Z3, Z2, Z9
	VPORQ Z9, Z8, Z8
	VEXTRACTI64X4 $1, Z4, Y5
	VPMINUQ Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPMINUQ X5, X4, X4
	VPSHUFD $0x4e, X4, X5
	VPMINUQ X5, X4, X4
	VMOVQ X4, lo+48(FP)
	VEXTRACTI64X4 $1, Z6, Y7
	VPMAXUQ Y7, Y6, Y6
	VEXTRACTI128 $1, Y6, X7
	VPMAXUQ X7, X6, X6
	VPSHUFD $0x4e, X6, X7
	VPMAXUQ X7, X6, X6
	VMOVQ X6, hi+56(FP)
	VEXTRACTI64X4 $1, Z8, Y9
	VPORQ Y9, Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPORQ X9, X8, X8
	VPSHUFD $0x4e, X8, X9
	VPORQ X9, X8, X8
	VMOVQ X8, or+64(FP)
	VZEROUPPER
	RET

// laneIota is 0 to 7, a lane's index in its eight.
DATA laneIota<>+0(SB)/8, $0
DATA laneIota<>+8(SB)/8, $1
DATA laneIota<>+16(SB)/8, $2
DATA laneIota<>+24(SB)/8, $3
DATA laneIota<>+32(SB)/8, $4
DATA laneIota<>+40(SB)/8, $5
DATA laneIota<>+48(SB)/8, $6
DATA laneIota<>+56(SB)/8, $7
GLOBL laneIota<>(SB), RODATA|NOPTR, $64
