#include "textflag.h"

// func fixedAVX512(vs []uint64, q []byte, w int, lo uint64, sh uint64)
//
// vs[i] = lo + (the w little-endian bytes of q at i*w) << sh, for every i
// of vs, eight lanes a step: a masked 64-byte load takes the 8w bytes of
// eight lanes (no byte past them is read: a masked-off byte never faults),
// VPERMB spreads lane i's w bytes to the low bytes of qword i and zeroes
// the rest (fixedPerm<>, the bytes kept by K1), then shift, add, store.
// The last step takes the lanes left under masks of their bytes and
// qwords. len(q) >= len(vs)*w, 1 <= w <= 8, sh < 64 (readFixed checks).
// Needs AVX-512 F, BW and VBMI (hasFixedAVX512).
TEXT ·fixedAVX512(SB), NOSPLIT, $0-72
	MOVQ vs_base+0(FP), DI
	MOVQ vs_len+8(FP), CX
	MOVQ q_base+24(FP), SI
	MOVQ w+48(FP), DX
	VPBROADCASTQ lo+56(FP), Z2
	VMOVQ sh+64(FP), X3

	// Z1: the permutation of width w; K1: the bytes of a qword kept, w of 8.
	LEAQ fixedPerm<>(SB), R8
	MOVQ DX, R9
	SHLQ $6, R9
	VMOVDQU64 -64(R8)(R9*1), Z1
	MOVQ $-1, R9
	BZHIQ DX, R9, R9
	MOVQ $0x0101010101010101, R10
	IMULQ R9, R10
	KMOVQ R10, K1

	// K2: the 8w bytes of eight lanes. BZHI keeps all 64 bits for w = 8.
	MOVQ DX, R11
	SHLQ $3, R11
	MOVQ $-1, R9
	BZHIQ R11, R9, R9
	KMOVQ R9, K2

loop:
	CMPQ CX, $8
	JB tail
	VMOVDQU8.Z (SI), K2, Z0
	VPERMB.Z Z0, Z1, K1, Z4
	VPSLLQ X3, Z4, Z4
	VPADDQ Z2, Z4, Z4
	VMOVDQU64 Z4, (DI)
	ADDQ R11, SI
	ADDQ $64, DI
	SUBQ $8, CX
	JMP loop

tail:
	TESTQ CX, CX
	JZ done
	// The CX lanes left: their CX*w bytes, their CX qwords.
	MOVQ CX, R9
	IMULQ DX, R9
	MOVQ $-1, R10
	BZHIQ R9, R10, R10
	KMOVQ R10, K2
	MOVQ $-1, R10
	BZHIQ CX, R10, R10
	KMOVQ R10, K3
	VMOVDQU8.Z (SI), K2, Z0
	VPERMB.Z Z0, Z1, K1, Z4
	VPSLLQ X3, Z4, Z4
	VPADDQ Z2, Z4, Z4
	VMOVDQU64 Z4, K3, (DI)

done:
	VZEROUPPER
	RET

// fixedPerm<>: 64 bytes per width w = 1..8, byte b (qword b/8, byte b%8
// of it) the index of the input byte it takes, (b/8)*w + b%8, for b%8 < w
// (the bytes past w are zeroed by K1 and hold 0 here).
DATA fixedPerm<>+0(SB)/8, $0x0000000000000000
DATA fixedPerm<>+8(SB)/8, $0x0000000000000001
DATA fixedPerm<>+16(SB)/8, $0x0000000000000002
DATA fixedPerm<>+24(SB)/8, $0x0000000000000003
DATA fixedPerm<>+32(SB)/8, $0x0000000000000004
DATA fixedPerm<>+40(SB)/8, $0x0000000000000005
DATA fixedPerm<>+48(SB)/8, $0x0000000000000006
DATA fixedPerm<>+56(SB)/8, $0x0000000000000007
DATA fixedPerm<>+64(SB)/8, $0x0000000000000100
DATA fixedPerm<>+72(SB)/8, $0x0000000000000302
DATA fixedPerm<>+80(SB)/8, $0x0000000000000504
DATA fixedPerm<>+88(SB)/8, $0x0000000000000706
DATA fixedPerm<>+96(SB)/8, $0x0000000000000908
DATA fixedPerm<>+104(SB)/8, $0x0000000000000b0a
DATA fixedPerm<>+112(SB)/8, $0x0000000000000d0c
DATA fixedPerm<>+120(SB)/8, $0x0000000000000f0e
DATA fixedPerm<>+128(SB)/8, $0x0000000000020100
DATA fixedPerm<>+136(SB)/8, $0x0000000000050403
DATA fixedPerm<>+144(SB)/8, $0x0000000000080706
DATA fixedPerm<>+152(SB)/8, $0x00000000000b0a09
DATA fixedPerm<>+160(SB)/8, $0x00000000000e0d0c
DATA fixedPerm<>+168(SB)/8, $0x000000000011100f
DATA fixedPerm<>+176(SB)/8, $0x0000000000141312
DATA fixedPerm<>+184(SB)/8, $0x0000000000171615
DATA fixedPerm<>+192(SB)/8, $0x0000000003020100
DATA fixedPerm<>+200(SB)/8, $0x0000000007060504
DATA fixedPerm<>+208(SB)/8, $0x000000000b0a0908
DATA fixedPerm<>+216(SB)/8, $0x000000000f0e0d0c
DATA fixedPerm<>+224(SB)/8, $0x0000000013121110
DATA fixedPerm<>+232(SB)/8, $0x0000000017161514
DATA fixedPerm<>+240(SB)/8, $0x000000001b1a1918
DATA fixedPerm<>+248(SB)/8, $0x000000001f1e1d1c
DATA fixedPerm<>+256(SB)/8, $0x0000000403020100
DATA fixedPerm<>+264(SB)/8, $0x0000000908070605
DATA fixedPerm<>+272(SB)/8, $0x0000000e0d0c0b0a
DATA fixedPerm<>+280(SB)/8, $0x000000131211100f
DATA fixedPerm<>+288(SB)/8, $0x0000001817161514
DATA fixedPerm<>+296(SB)/8, $0x0000001d1c1b1a19
DATA fixedPerm<>+304(SB)/8, $0x0000002221201f1e
DATA fixedPerm<>+312(SB)/8, $0x0000002726252423
DATA fixedPerm<>+320(SB)/8, $0x0000050403020100
DATA fixedPerm<>+328(SB)/8, $0x00000b0a09080706
DATA fixedPerm<>+336(SB)/8, $0x000011100f0e0d0c
DATA fixedPerm<>+344(SB)/8, $0x0000171615141312
DATA fixedPerm<>+352(SB)/8, $0x00001d1c1b1a1918
DATA fixedPerm<>+360(SB)/8, $0x0000232221201f1e
DATA fixedPerm<>+368(SB)/8, $0x0000292827262524
DATA fixedPerm<>+376(SB)/8, $0x00002f2e2d2c2b2a
DATA fixedPerm<>+384(SB)/8, $0x0006050403020100
DATA fixedPerm<>+392(SB)/8, $0x000d0c0b0a090807
DATA fixedPerm<>+400(SB)/8, $0x0014131211100f0e
DATA fixedPerm<>+408(SB)/8, $0x001b1a1918171615
DATA fixedPerm<>+416(SB)/8, $0x002221201f1e1d1c
DATA fixedPerm<>+424(SB)/8, $0x0029282726252423
DATA fixedPerm<>+432(SB)/8, $0x00302f2e2d2c2b2a
DATA fixedPerm<>+440(SB)/8, $0x0037363534333231
DATA fixedPerm<>+448(SB)/8, $0x0706050403020100
DATA fixedPerm<>+456(SB)/8, $0x0f0e0d0c0b0a0908
DATA fixedPerm<>+464(SB)/8, $0x1716151413121110
DATA fixedPerm<>+472(SB)/8, $0x1f1e1d1c1b1a1918
DATA fixedPerm<>+480(SB)/8, $0x2726252423222120
DATA fixedPerm<>+488(SB)/8, $0x2f2e2d2c2b2a2928
DATA fixedPerm<>+496(SB)/8, $0x3736353433323130
DATA fixedPerm<>+504(SB)/8, $0x3f3e3d3c3b3a3938
GLOBL fixedPerm<>(SB), RODATA|NOPTR, $512
