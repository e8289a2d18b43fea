#include "textflag.h"

// ARGS loads teddyScan's arguments (m in DI, b in SI and DX, out in R8 and R9) and zeroes p
// (CX), n (BX) and the newlines counted (R14).
#define ARGS \
	MOVQ m+0(FP), DI; \
	MOVQ b_base+8(FP), SI; \
	MOVQ b_len+16(FP), DX; \
	MOVQ out_base+32(FP), R8; \
	MOVQ out_len+40(FP), R9; \
	XORQ CX, CX; \
	XORQ BX, BX; \
	XORQ R14, R14

// RESULTS stores n (BX), next (CX), lines (R14) and flags (AL: teddyNUL, teddyASCII).
#define RESULTS \
	MOVQ BX, n+80(FP); \
	MOVQ CX, next+88(FP); \
	MOVQ R14, lines+96(FP); \
	MOVB AL, flags+104(FP)

// FIRST starts the candidates of the 32 positions at off(SI)(CX*1) in ACC, from fingerprint
// byte 0, counts their newlines into NL, keeps the least byte seen in Y14 (0 once a NUL was)
// and ORs the bytes into Y15 (bit 7 set once a byte of 128 or more was). The low-nibble lookup takes the byte as it is: VPSHUFB reads its low nibble and, for a
// byte of 128 or more, gives 0, no bucket, as it must (fingerprints are ASCII: newTeddy).
#define FIRST(off, ACC, NL) \
	VMOVDQU off(SI)(CX*1), Y9; \
	VPCMPEQB Y12, Y9, Y10; \
	VPMOVMSKB Y10, NL; \
	POPCNTL NL, NL; \
	VPMINUB Y9, Y14, Y14; \
	VPOR Y9, Y15, Y15; \
	VPSRLW $4, Y9, Y10; \
	VPAND Y8, Y10, Y10; \
	VPSHUFB Y9, Y0, Y9; \
	VPSHUFB Y10, Y4, Y10; \
	VPAND Y9, Y10, ACC

// NEXT ANDs into ACC the buckets of the bytes at off(SI)(CX*1) as fingerprint byte k, from its
// tables LO and HI.
#define NEXT(off, LO, HI, ACC) \
	VMOVDQU off(SI)(CX*1), Y9; \
	VPSRLW $4, Y9, Y10; \
	VPAND Y8, Y10, Y10; \
	VPSHUFB Y9, LO, Y9; \
	VPSHUFB Y10, HI, Y10; \
	VPAND Y9, ACC, ACC; \
	VPAND Y10, ACC, ACC

// BLOCK32 leaves in ACC the candidates of the 32 positions at CX+off (off, o1, o2, o3: off and
// the next three), their newlines in NL.
#define BLOCK32(off, o1, o2, o3, ACC, NL) \
	FIRST(off, ACC, NL); \
	NEXT(o1, Y1, Y5, ACC); \
	NEXT(o2, Y2, Y6, ACC); \
	NEXT(o3, Y3, Y7, ACC)

// EMIT appends out entry (CX+off)<<32 | the low 32 bits of AX, and R10 (newlines before) to
// nls, at n (BX); n grows only when those 32 bits are not zero.
#define EMIT(off) \
	MOVL R10, (DI)(BX*4); \
	MOVL AX, R11; \
	LEAQ off(CX), R10; \
	SHLQ $32, R10; \
	ORQ  R11, R10; \
	MOVQ R10, (R8)(BX*8); \
	CMPL R11, $1; \
	SBBQ $-1, BX

// EMIT32 appends the entry of the 32 positions at CX+off, their candidates in ACC and R14
// newlines before them.
#define EMIT32(ACC, off) \
	VPXOR Y10, Y10, Y10; \
	VPCMPEQB Y10, ACC, Y9; \
	VPMOVMSKB Y9, AX; \
	NOTL AX; \
	MOVL R14, R10; \
	EMIT(off)

// func teddyScan(m *teddyMasks, b []byte, out []uint64, nls []uint32) (n, next, lines int, flags uint8)
TEXT ·teddyScan(SB), NOSPLIT, $0-105
	ARGS
	VPCMPEQB Y14, Y14, Y14  // the least byte seen: none yet
	VPXOR Y15, Y15, Y15     // every byte ORed: none yet
	SUBQ $35, DX            // last p with a whole block (teddyBlock = 35)
	JL   done
	TESTQ R9, R9
	JZ   done
	VMOVDQU 0(DI), Y0       // lo[0..3]
	VMOVDQU 32(DI), Y1
	VMOVDQU 64(DI), Y2
	VMOVDQU 96(DI), Y3
	VMOVDQU 128(DI), Y4     // hi[0..3]
	VMOVDQU 160(DI), Y5
	VMOVDQU 192(DI), Y6
	VMOVDQU 224(DI), Y7
	MOVL $0x0f0f0f0f, AX
	MOVL AX, X8
	VPBROADCASTD X8, Y8     // nibble mask
	MOVL $0x0a0a0a0a, AX
	MOVL AX, X12
	VPBROADCASTD X12, Y12   // newlines
	MOVQ nls_base+56(FP), DI

// loop64 looks at 64 positions, p and p+32, with one branch while both blocks fit and out has
// room for two entries.
loop64:
	LEAQ 32(CX), AX
	CMPQ AX, DX
	JG   tail
	LEAQ 1(BX), AX
	CMPQ AX, R9
	JGE  tail
	BLOCK32(0, 1, 2, 3, Y11, R13)
	BLOCK32(32, 33, 34, 35, Y13, R12)
	VPOR Y11, Y13, Y9
	VPTEST Y9, Y9
	JNZ  found64
	ADDQ R13, R14
	ADDQ R12, R14
	ADDQ $64, CX
	JMP  loop64

found64:
	EMIT32(Y11, 0)
	ADDQ R13, R14
	EMIT32(Y13, 32)
	ADDQ R12, R14
	ADDQ $64, CX
	JMP  loop64

// tail goes on 32 positions at a time, while out has room.
tail:
	CMPQ BX, R9
	JGE  done

loop:
	CMPQ CX, DX
	JG   done
	BLOCK32(0, 1, 2, 3, Y11, R13)
	VPTEST Y11, Y11
	JNZ  found
	ADDQ R13, R14
	ADDQ $32, CX
	JMP  loop

found:
	EMIT32(Y11, 0)
	ADDQ R13, R14
	ADDQ $32, CX
	CMPQ BX, R9
	JL   loop

done:
	VPXOR Y10, Y10, Y10
	VPCMPEQB Y10, Y14, Y14
	VPTEST Y14, Y14
	SETNE AL                // teddyNUL
	VPMOVMSKB Y15, R11
	TESTL R11, R11
	SETEQ R11B
	SHLB $1, R11B           // teddyASCII
	ORB  R11B, AL
	VZEROUPPER
	RESULTS
	RET

// LOOKUP leaves in ACC the bucket bits of the 64 bytes at off(SI)(CX*1) as fingerprint byte k,
// from the 128-byte table in LO (bytes 0-63) and HI (64-127). A byte of 128 or more reads the
// entry of its low 7 bits: a false candidate at worst, which the exact check drops.
#define LOOKUP(off, LO, HI, ACC) \
	VMOVDQU64 off(SI)(CX*1), ACC; \
	VPERMI2B  HI, LO, ACC

// EMIT64 appends the entries of the 64 positions at CX+lo (lo and hi = lo+32): their matches in
// mask register KM, their newlines in KNL, the newlines before them in R14.
#define EMIT64(KM, KNL, lo, hi) \
	KMOVQ KM, AX; \
	MOVL R14, R10; \
	EMIT(lo); \
	SHRQ $32, AX; \
	KMOVD KNL, R10; \
	POPCNTL R10, R10; \
	ADDL R14, R10; \
	EMIT(hi)

// func teddyScan512(m *teddyMasks, b []byte, out []uint64, nls []uint32) (n, next, lines int, flags uint8)
TEXT ·teddyScan512(SB), NOSPLIT, $0-105
	ARGS
	KXORQ K3, K3, K3        // NUL bytes seen
	KXORQ K6, K6, K6        // bytes of 128 or more seen
	SUBQ $131, DX           // last p with two whole blocks (64 + teddyBlock512)
	SUBQ $4, R9             // last n with room for four entries
	VMOVDQU64 256(DI), Z0   // exact[0]
	VMOVDQU64 320(DI), Z1
	VMOVDQU64 384(DI), Z2   // exact[1]
	VMOVDQU64 448(DI), Z3
	VMOVDQU64 512(DI), Z4   // exact[2]
	VMOVDQU64 576(DI), Z5
	VMOVDQU64 640(DI), Z6   // exact[3]
	VMOVDQU64 704(DI), Z7
	MOVL $0x0a, AX
	VPBROADCASTB AX, Z12    // newlines
	MOVQ nls_base+56(FP), DI
	VPXORQ Z13, Z13, Z13             // every byte ORed: bit 7 set when one is 128 or more
	VPTERNLOGD $0xff, Z14, Z14, Z14  // the least byte: 0 when one is NUL

// loop128 looks at 128 positions at a time, p and p+64, with one branch: NUL and high bytes are
// gathered in vector registers (Z13, Z14) instead of masks, the candidates of both blocks tested
// together.
loop128:
	CMPQ CX, DX
	JG   tail512
	CMPQ BX, R9
	JG   flush512
	VMOVDQU64 (SI)(CX*1), Z8
	VMOVDQU64 64(SI)(CX*1), Z16
	VPORQ   Z8, Z13, Z13
	VPORQ   Z16, Z13, Z13
	VPMINUB Z8, Z14, Z14
	VPMINUB Z16, Z14, Z14
	VPCMPEQB Z12, Z8, K4
	VPCMPEQB Z12, Z16, K5
	KMOVQ K4, R13
	POPCNTQ R13, R13
	KMOVQ K5, R12
	POPCNTQ R12, R12
	VPERMI2B Z1, Z0, Z8
	VPERMI2B Z1, Z0, Z16
	LOOKUP(1, Z2, Z3, Z9)
	LOOKUP(65, Z2, Z3, Z17)
	LOOKUP(2, Z4, Z5, Z10)
	LOOKUP(66, Z4, Z5, Z18)
	LOOKUP(3, Z6, Z7, Z11)
	LOOKUP(67, Z6, Z7, Z19)
	VPANDQ Z9, Z8, Z8
	VPANDQ Z11, Z10, Z10
	VPANDQ Z17, Z16, Z16
	VPANDQ Z19, Z18, Z18
	VPTESTMB Z10, Z8, K1
	VPTESTMB Z18, Z16, K2
	KORTESTQ K1, K2
	JNZ  found128
	ADDQ R13, R14
	ADDQ R12, R14
	ADDQ $128, CX
	JMP  loop128

// found128 appends an entry for each 32 positions of the two blocks (the first at CX with
// matches K1 and newlines K4, the second at CX+64 with K2 and K5), keeping those with a match
// (n grows by one where the mask is not zero, without a branch).
found128:
	EMIT64(K1, K4, 0, 32)
	ADDQ R13, R14
	EMIT64(K2, K5, 64, 96)
	ADDQ R12, R14
	ADDQ $128, CX
	JMP  loop128

// tail512 goes on 64 positions at a time where two blocks no longer fit.
tail512:
	ADDQ $64, DX            // last p with a whole block (teddyBlock512 = 67)
	ADDQ $2, R9             // last n with room for two entries
	JMP  loop512

// flush512 is where out is full: the loop below stops at once.
flush512:
	MOVQ $-1, DX

loop512:
	CMPQ CX, DX
	JG   done512
	CMPQ BX, R9
	JG   done512
	VMOVDQU64 (SI)(CX*1), Z8
	VPMOVB2M Z8, K5
	KORQ K5, K6, K6
	VPCMPEQB Z12, Z8, K4
	KMOVQ K4, R13
	POPCNTQ R13, R13
	VPTESTNMB Z8, Z8, K2
	KORQ K2, K3, K3
	VPERMI2B Z1, Z0, Z8
	LOOKUP(1, Z2, Z3, Z9)
	LOOKUP(2, Z4, Z5, Z10)
	LOOKUP(3, Z6, Z7, Z11)
	VPANDQ Z9, Z8, Z8
	VPANDQ Z11, Z10, Z10
	VPTESTMB Z10, Z8, K1
	KORTESTQ K1, K1
	JNZ  found512
	ADDQ R13, R14
	ADDQ $64, CX
	JMP  loop512

found512:
	EMIT64(K1, K4, 0, 32)
	ADDQ R13, R14
	ADDQ $64, CX
	JMP  loop512

done512:
	VPMOVB2M Z13, K5
	KORQ K5, K6, K6
	VPTESTNMB Z14, Z14, K2
	KORQ K2, K3, K3
	KORTESTQ K3, K3
	SETNE AL                // teddyNUL
	KORTESTQ K6, K6
	SETEQ R11B
	SHLB $1, R11B           // teddyASCII
	ORB  R11B, AL
	VZEROUPPER
	RESULTS
	RET

// func Prefetch(p *byte)
TEXT ·Prefetch(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	RET
