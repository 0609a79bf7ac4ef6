package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// replaySASS replays a .tasm text with the engine and the reference
// interpreter, requires them to agree, and returns the engine's output.
func replaySASS(t *testing.T, src string) *Collector {
	t.Helper()
	var c, ref Collector
	if _, err := Replay(t.Context(), textSource(t, src), &c, WithShards(3), WithWorkers(2)); err != nil {
		t.Fatalf("replay: %v\n%s", err, src)
	}
	if _, err := replayReference(t.Context(), textSource(t, src), &ref); err != nil {
		t.Fatalf("reference: %v", err)
	}
	if got, want := collect(&c), collect(&ref); !reflect.DeepEqual(got, want) {
		describeDiff(t, got, want)
		t.Fatalf("engine and reference differ on\n%s", src)
	}
	return &c
}

// sassLane is what one lane must get back.
type sassLane struct {
	lane  uint32
	addr  uint64
	val   uint64
	fault Fault
}

// sassCase is a small trace and everything its replay must produce: every
// lane's result, in lane order, and every global word touched afterwards.
type sassCase struct {
	name  string
	head  string // directives: .region, .init
	line  string // the instruction with its bindings
	lanes []sassLane
	mem   map[uint64]uint32
}

// Expected values are worked by hand from the seed's Atomic Operations
// table ("Rd = M; M = <formula>"), its address rule and its fault rules.
var sassCases = []sassCase{
	// .ADD
	{"ADD.U32", ".init global 0x1000 u32 7", "ATOM.ADD.U32 R0, [R2], R3 | R2=0x1000 R3=5 mask=1",
		[]sassLane{{0, 0x1000, 7, 0}}, map[uint64]uint32{0x1000: 12}},
	{"ADD wraps (default .U32)", ".init global 0x1000 u32 0xffffffff", "ATOM.ADD R0, [R2], R3 | R2=0x1000 R3=2 mask=1",
		[]sassLane{{0, 0x1000, 0xffffffff, 0}}, map[uint64]uint32{0x1000: 1}},
	{"ADD.32", ".init global 0x1000 u32 1", "ATOM.ADD.32 R0, [R2], R3 | R2=0x1000 R3=2 mask=1",
		[]sassLane{{0, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 3}},
	{"ADD.S32 -3+5", ".init global 0x1000 s32 -3", "ATOM.ADD.S32 R0, [R2], R3 | R2=0x1000 R3=5 mask=1",
		[]sassLane{{0, 0x1000, 0xfffffffd, 0}}, map[uint64]uint32{0x1000: 2}},
	{"ADD.U64 seed example carries", ".init global 0x1000 u64 0xffffffff", "ATOM.ADD.U64 R0, [R4 + 8], R2; | R4=0xff8 R2=1 mask=1",
		[]sassLane{{0, 0x1000, 0xffffffff, 0}}, map[uint64]uint32{0x1000: 0, 0x1004: 1}},
	{"ADD.64 alias", ".init global 0x1000 u64 5", "ATOM.ADD.64 R0, [R2], R4 | R2=0x1000 R4=0x100000000 mask=1",
		[]sassLane{{0, 0x1000, 5, 0}}, map[uint64]uint32{0x1000: 5, 0x1004: 1}},
	{"ADD.S32 seed example, absolute", ".init global 0xfff00 s32 10", "ATOM.ADD.S32 R9, [0xfff00], R8; | R8=-1 mask=1",
		[]sassLane{{0, 0xfff00, 10, 0}}, map[uint64]uint32{0xfff00: 9}},
	{"ADD 32 lanes serialize in lane order", ".init global 0x1000 u32 0", "ATOM.ADD R0, [R2], R3 | R2=0x1000 R3=3",
		sassSerial(32, 0x1000, func(i int) uint64 { return uint64(3 * i) }), map[uint64]uint32{0x1000: 96}},

	// .MIN / .MAX: unsigned for U, signed for S.
	{"MIN.U32 unsigned", ".init global 0x1000 u32 0xffffffff", "ATOM.MIN.U32 R0, [R2], R3 | R2=0x1000 R3=1 mask=1",
		[]sassLane{{0, 0x1000, 0xffffffff, 0}}, map[uint64]uint32{0x1000: 1}},
	{"MIN.S32 of 1 in memory and -1", ".init global 0x1000 s32 1", "ATOM.MIN.S32 R0, [R2], R3 | R2=0x1000 R3=-1 mask=1",
		[]sassLane{{0, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 0xffffffff}},
	{"MIN.S32 of -1 in memory and 1", ".init global 0x1000 s32 -1", "ATOM.MIN.S32 R0, [R2], R3 | R2=0x1000 R3=1 mask=1",
		[]sassLane{{0, 0x1000, 0xffffffff, 0}}, map[uint64]uint32{0x1000: 0xffffffff}},
	{"MAX.U32 unsigned", ".init global 0x1000 u32 0xffffffff", "ATOM.MAX.U32 R0, [R2], R3 | R2=0x1000 R3=1 mask=1",
		[]sassLane{{0, 0x1000, 0xffffffff, 0}}, map[uint64]uint32{0x1000: 0xffffffff}},
	{"MAX.S32 of -1 in memory and 1", ".init global 0x1000 s32 -1", "ATOM.MAX.S32 R0, [R2], R3 | R2=0x1000 R3=1 mask=1",
		[]sassLane{{0, 0x1000, 0xffffffff, 0}}, map[uint64]uint32{0x1000: 1}},
	{"MIN.U64", ".init global 0x1000 u64 0x100000000", "ATOM.MIN.U64 R0, [R2], R4 | R2=0x1000 R4=0xffffffff mask=1",
		[]sassLane{{0, 0x1000, 0x100000000, 0}}, map[uint64]uint32{0x1000: 0xffffffff, 0x1004: 0}},
	{"MIN.S64 seed example", ".init global 0x1000 s64 5", "ATOM.MIN.S64 R0, [R4 + 8], R2; | R4=0xff8 R2=-2 mask=1",
		[]sassLane{{0, 0x1000, 5, 0}}, map[uint64]uint32{0x1000: 0xfffffffe, 0x1004: 0xffffffff}},
	{"MAX.U64", ".init global 0x1000 u64 1", "ATOM.MAX.U64 R0, [R2], R4 | R2=0x1000 R4=-1 mask=1",
		[]sassLane{{0, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 0xffffffff, 0x1004: 0xffffffff}},
	{"MAX.S64", ".init global 0x1000 s64 -5", "ATOM.MAX.S64 R0, [R2], R4 | R2=0x1000 R4=3 mask=1",
		[]sassLane{{0, 0x1000, 0xfffffffffffffffb, 0}}, map[uint64]uint32{0x1000: 3, 0x1004: 0}},

	// .INC: M = (M >= Rb)? 0 : (M + 1)
	{"INC from Rb gives 0", ".init global 0x1000 u32 5", "ATOM.INC.U32 R0, [R2], R3 | R2=0x1000 R3=5 mask=1",
		[]sassLane{{0, 0x1000, 5, 0}}, map[uint64]uint32{0x1000: 0}},
	{"INC below Rb", ".init global 0x1000 u32 4", "ATOM.INC R0, [R2], R3 | R2=0x1000 R3=5 mask=1",
		[]sassLane{{0, 0x1000, 4, 0}}, map[uint64]uint32{0x1000: 5}},
	{"INC above Rb gives 0", ".init global 0x1000 u32 7", "ATOM.INC R0, [R2], R3 | R2=0x1000 R3=5 mask=1",
		[]sassLane{{0, 0x1000, 7, 0}}, map[uint64]uint32{0x1000: 0}},
	{"INC four lanes cycle", ".init global 0x1000 u32 3", "ATOM.INC R0, [R2], R3 | R2=0x1000 R3=5 mask=0xf",
		[]sassLane{{0, 0x1000, 3, 0}, {1, 0x1000, 4, 0}, {2, 0x1000, 5, 0}, {3, 0x1000, 0, 0}}, map[uint64]uint32{0x1000: 1}},

	// .DEC: M = (M == 0 || M > Rb)? Rb : M - 1
	{"DEC from 0 gives Rb", ".init global 0x1000 u32 0", "ATOM.DEC.U32 R0, [R2], R3 | R2=0x1000 R3=5 mask=1",
		[]sassLane{{0, 0x1000, 0, 0}}, map[uint64]uint32{0x1000: 5}},
	{"DEC", ".init global 0x1000 u32 3", "ATOM.DEC R0, [R2], R3 | R2=0x1000 R3=5 mask=1",
		[]sassLane{{0, 0x1000, 3, 0}}, map[uint64]uint32{0x1000: 2}},
	{"DEC above Rb gives Rb", ".init global 0x1000 u32 9", "ATOM.DEC R0, [R2], R3 | R2=0x1000 R3=5 mask=1",
		[]sassLane{{0, 0x1000, 9, 0}}, map[uint64]uint32{0x1000: 5}},
	{"DEC three lanes cycle", ".init global 0x1000 u32 1", "ATOM.DEC R0, [R2], R3 | R2=0x1000 R3=2 mask=7",
		[]sassLane{{0, 0x1000, 1, 0}, {1, 0x1000, 0, 0}, {2, 0x1000, 2, 0}}, map[uint64]uint32{0x1000: 1}},

	// .AND .OR .XOR
	{"AND.U32", ".init global 0x1000 u32 0xf0f0", "ATOM.AND.U32 R0, [R2], R3 | R2=0x1000 R3=0xff00 mask=1",
		[]sassLane{{0, 0x1000, 0xf0f0, 0}}, map[uint64]uint32{0x1000: 0xf000}},
	{"AND.S32", ".init global 0x1000 s32 -1", "ATOM.AND.S32 R0, [R2], R3 | R2=0x1000 R3=-16 mask=1",
		[]sassLane{{0, 0x1000, 0xffffffff, 0}}, map[uint64]uint32{0x1000: 0xfffffff0}},
	{"OR.S32", ".init global 0x1000 u32 0xf0f0", "ATOM.OR.S32 R0, [R2], R3 | R2=0x1000 R3=0xff00 mask=1",
		[]sassLane{{0, 0x1000, 0xf0f0, 0}}, map[uint64]uint32{0x1000: 0xfff0}},
	{"OR.U32", ".init global 0x1000 u32 1", "ATOM.OR R0, [R2], R3 | R2=0x1000 R3=0x80000000 mask=1",
		[]sassLane{{0, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 0x80000001}},
	{"XOR.U32", ".init global 0x1000 u32 0xf0f0", "ATOM.XOR.U32 R0, [R2], R3 | R2=0x1000 R3=0xff00 mask=1",
		[]sassLane{{0, 0x1000, 0xf0f0, 0}}, map[uint64]uint32{0x1000: 0x0ff0}},
	{"XOR.S32", ".init global 0x1000 s32 -1", "ATOM.XOR.S32 R0, [R2], R3 | R2=0x1000 R3=1 mask=1",
		[]sassLane{{0, 0x1000, 0xffffffff, 0}}, map[uint64]uint32{0x1000: 0xfffffffe}},
	{"AND.U64", ".init global 0x1000 u64 0xffff00000000ffff", "ATOM.AND.U64 R0, [R2], R4 | R2=0x1000 R4=0x0000ffffffff0000 mask=1",
		[]sassLane{{0, 0x1000, 0xffff00000000ffff, 0}}, map[uint64]uint32{0x1000: 0, 0x1004: 0}},
	{"OR.U64", ".init global 0x1000 u64 0xffff00000000ffff", "ATOM.OR.U64 R0, [R2], R4 | R2=0x1000 R4=0x0000ffffffff0000 mask=1",
		[]sassLane{{0, 0x1000, 0xffff00000000ffff, 0}}, map[uint64]uint32{0x1000: 0xffffffff, 0x1004: 0xffffffff}},
	{"XOR.64", ".init global 0x1000 u64 0xff00ff00ff00ff00", "ATOM.XOR.64 R0, [R2], R4 | R2=0x1000 R4=0xffffffff00000000 mask=1",
		[]sassLane{{0, 0x1000, 0xff00ff00ff00ff00, 0}}, map[uint64]uint32{0x1000: 0xff00ff00, 0x1004: 0x00ff00ff}},

	// .EXCH: M = Rb
	{"EXCH.U32", ".init global 0x1000 u32 7", "ATOM.EXCH R0, [R2], R3 | R2=0x1000 R3=9 mask=1",
		[]sassLane{{0, 0x1000, 7, 0}}, map[uint64]uint32{0x1000: 9}},
	{"EXCH.S32", ".init global 0x1000 s32 -1", "ATOM.EXCH.S32 R0, [R2], R3 | R2=0x1000 R3=-2 mask=1",
		[]sassLane{{0, 0x1000, 0xffffffff, 0}}, map[uint64]uint32{0x1000: 0xfffffffe}},
	{"EXCH.U64", ".init global 0x1000 u64 1", "ATOM.EXCH.U64 R0, [R2], R4 | R2=0x1000 R4=0x123456789abcdef0 mask=1",
		[]sassLane{{0, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 0x9abcdef0, 0x1004: 0x12345678}},
	{"EXCH: the last lane's value stays", ".init global 0x1000 u32 0", "ATOM.EXCH R0, [R2], R3 | R2=0x1000 R3=10:1 mask=7",
		[]sassLane{{0, 0x1000, 0, 0}, {1, 0x1000, 10, 0}, {2, 0x1000, 11, 0}}, map[uint64]uint32{0x1000: 12}},

	// .CAS: if (M == Rb) M = Rc
	{"CAS.U32 equal", ".init global 0x1000 u32 7", "ATOM.CAS R0, [R2], R4, R5 | R2=0x1000 R4=7 R5=9 mask=1",
		[]sassLane{{0, 0x1000, 7, 0}}, map[uint64]uint32{0x1000: 9}},
	{"CAS.S32 not equal", ".init global 0x1000 s32 7", "ATOM.CAS.S32 R0, [R2], R4, R5 | R2=0x1000 R4=8 R5=9 mask=1",
		[]sassLane{{0, 0x1000, 7, 0}}, map[uint64]uint32{0x1000: 7}},
	{"CAS.32 Rc=RZ writes 0", ".init global 0x1000 u32 7", "ATOM.CAS.32 R0, [R2], R4, RZ | R2=0x1000 R4=7 mask=1",
		[]sassLane{{0, 0x1000, 7, 0}}, map[uint64]uint32{0x1000: 0}},
	{"CAS.U64 equal", ".init global 0x1000 u64 0x100000005", "ATOM.CAS.U64 R0, [R2], R4, R6 | R2=0x1000 R4=0x100000005 R6=0x200000000 mask=1",
		[]sassLane{{0, 0x1000, 0x100000005, 0}}, map[uint64]uint32{0x1000: 0, 0x1004: 2}},
	{"CAS.64 compares all 64 bits", ".init global 0x1000 u64 0x100000005", "ATOM.CAS.64 R0, [R2], R4, R6 | R2=0x1000 R4=5 R6=0 mask=1",
		[]sassLane{{0, 0x1000, 0x100000005, 0}}, map[uint64]uint32{0x1000: 5, 0x1004: 1}},
	{"E.CAS.64 TASM example: only lane 0 swaps", "", "ATOM.E.CAS.64 R0, [R2 + 8], R8, R10 | R2=0x10000 R8=0 R10=1:1",
		sassSerial(32, 0x10008, func(i int) uint64 { return uint64(min(i, 1)) }), map[uint64]uint32{0x10008: 1, 0x1000c: 0}},

	// Floats: the kinds of atomic_float.go, values worked by hand.
	{"ADD.F32.FTZ.RN seed example", ".init global 0x4000 f32 1 2", "ATOM.ADD.F32.FTZ.RN R0, [R1 - 400], R9; | R1=0x4190:4 R9=1.5 mask=3",
		[]sassLane{{0, 0x4000, 0x3f800000, 0}, {1, 0x4004, 0x40000000, 0}}, map[uint64]uint32{0x4000: 0x40200000, 0x4004: 0x40600000}},
	{"ADD.F32.FTZ.RN flushes a subnormal sum", ".init global 0x1000 u32 0x00c00000", "ATOM.ADD.F32.FTZ.RN R0, [R2], R3 | R2=0x1000 R3=0x80800000 mask=1",
		[]sassLane{{0, 0x1000, 0x00c00000, 0}}, map[uint64]uint32{0x1000: 0}},
	{"ADD.F16x2.RN per half", ".init global 0x1000 u32 0x3c003c00", "ATOM.ADD.F16x2.RN R0, [R2], R3 | R2=0x1000 R3=0x40003c00 mask=1",
		[]sassLane{{0, 0x1000, 0x3c003c00, 0}}, map[uint64]uint32{0x1000: 0x42004000}},
	{"MIN.F16x2.RN per half", ".init global 0x1000 u32 0x3c004200", "ATOM.MIN.F16x2.RN R0, [R2], R3 | R2=0x1000 R3=0x4000bc00 mask=1",
		[]sassLane{{0, 0x1000, 0x3c004200, 0}}, map[uint64]uint32{0x1000: 0x3c00bc00}},
	{"MAX.F16x2.RN per half", ".init global 0x1000 u32 0x3c004200", "ATOM.MAX.F16x2.RN R0, [R2], R3 | R2=0x1000 R3=0x4000bc00 mask=1",
		[]sassLane{{0, 0x1000, 0x3c004200, 0}}, map[uint64]uint32{0x1000: 0x40004200}},
	{"ADD.F64.RN 1+2", ".init global 0x1000 f64 1", "ATOM.E.ADD.F64.RN R0, [R2], R4 | R2=0x1000 R4=2 mask=1",
		[]sassLane{{0, 0x1000, 0x3ff0000000000000, 0}}, map[uint64]uint32{0x1000: 0, 0x1004: 0x40080000}},

	// Addresses: 32-bit addition zero-extended; .E is 64-bit.
	{"Ra+imm wraps at 32 bits", "", "ATOM.ADD R0, [R2 + 0x20], R3 | R2=0xfffffff0 R3=1 mask=1",
		[]sassLane{{0, 0x10, 0, 0}}, map[uint64]uint32{0x10: 1}},
	{"Ra-imm wraps at 32 bits", "", "ATOM.ADD R0, [R2 - 0x10], R3 | R2=0x8 R3=1 mask=1",
		[]sassLane{{0, 0xfffffff8, 0, 0}}, map[uint64]uint32{0xfffffff8: 1}},
	{".E does not wrap at 32 bits", "", "ATOM.E.ADD R0, [R2 + 0x20], R5 | R2=0xfffffff0 R5=1 mask=1",
		[]sassLane{{0, 0x100000010, 0, 0}}, map[uint64]uint32{0x100000010: 1}},
	{".E with a negative offset", "", "ATOM.E.ADD R0, [R2+-0x10], R5 | R2=0x100000008 R5=1 mask=1",
		[]sassLane{{0, 0xfffffff8, 0, 0}}, map[uint64]uint32{0xfffffff8: 1}},
	{"per-lane addresses", "", "ATOM.ADD R0, [R2 + 4], R3 | R2=0x1000:8 R3=1 mask=3",
		[]sassLane{{0, 0x1004, 0, 0}, {1, 0x100c, 0, 0}}, map[uint64]uint32{0x1004: 1, 0x100c: 1}},
	{"RZ as Ra", "", "ATOM.ADD R0, [RZ + 0x40], R3 | R3=1 mask=1",
		[]sassLane{{0, 0x40, 0, 0}}, map[uint64]uint32{0x40: 1}},

	// RZ as destination and source.
	{"RZ as Rd returns nothing", ".init global 0x1000 u32 7", "ATOM.ADD RZ, [R2], R3 | R2=0x1000 R3=5 mask=1",
		[]sassLane{{0, 0x1000, 0, 0}}, map[uint64]uint32{0x1000: 12}},
	{"RZ as Rb reads 0", ".init global 0x1000 u32 7", "ATOM.EXCH R0, [R2], RZ | R2=0x1000 mask=1",
		[]sassLane{{0, 0x1000, 7, 0}}, map[uint64]uint32{0x1000: 0}},

	// Predicates, the sparse form and scheduling tokens.
	{"@P0 runs lanes 0 and 2", ".init global 0x1000 u32 0", "@P0 ATOM.ADD R0, [R2], R3 | P0=5 R2=0x1000 R3=1",
		[]sassLane{{0, 0x1000, 0, 0}, {2, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 2}},
	{"@!P0 runs the others", ".init global 0x1000 u32 0", "@!P0 ATOM.ADD R0, [R2], R3 | P0=0xfffffffa R2=0x1000 R3=1",
		[]sassLane{{0, 0x1000, 0, 0}, {2, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 2}},
	{"@PT is always true", ".init global 0x1000 u32 0", "@PT ATOM.ADD R0, [R2], R3 | R2=0x1000 R3=1 mask=3",
		[]sassLane{{0, 0x1000, 0, 0}, {1, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 2}},
	{"sparse form", ".init global 0x1000 u32 1", "ATOM.ADD P1, R0, [R2], R3 | R2=0x1000 R3=1 mask=1",
		[]sassLane{{0, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 2}},
	{"scheduling tokens", ".init global 0x1000 u32 1", "ATOM.ADD R0, [R2], R3 &req_6 &wr0 ?sched; | R2=0x1000 R3=1 mask=1",
		[]sassLane{{0, 0x1000, 1, 0}}, map[uint64]uint32{0x1000: 2}},

	// Faults: the lane faults, the others go on.
	{"misaligned .U32", "", "ATOM.ADD R0, [R2 + 2], R3 | R2=0x1000 R3=1 mask=1",
		[]sassLane{{0, 0x1002, 0, FaultMisaligned}}, map[uint64]uint32{}},
	{"misaligned .U64 at 4 mod 8", ".init global 0x1000 u64 1", "ATOM.ADD.U64 R0, [R2 + 4], R4 | R2=0x1000 R4=1 mask=1",
		[]sassLane{{0, 0x1004, 0, FaultMisaligned}}, map[uint64]uint32{0x1000: 1, 0x1004: 0}},
	{"out of range", ".region global 0x1000 0x10\n.init global 0x1000 u32 0 0 0 5", "ATOM.ADD R0, [R2 + 4], R3 | R2=0x1008:4 R3=1 mask=3",
		[]sassLane{{0, 0x100c, 5, 0}, {1, 0x1010, 0, FaultOutOfRange}}, map[uint64]uint32{0x1000: 0, 0x1004: 0, 0x1008: 0, 0x100c: 6}},
	{".U64 past the region end", ".region global 0x1000 0xc", "ATOM.ADD.U64 R0, [R2], R4 | R2=0x1008 R4=1 mask=1",
		[]sassLane{{0, 0x1008, 0, FaultOutOfRange}}, map[uint64]uint32{}},
	{"misaligned before out of range", ".region global 0x1000 0x10", "ATOM.ADD R0, [R2], R3 | R2=0x2001 R3=1 mask=1",
		[]sassLane{{0, 0x2001, 0, FaultMisaligned}}, map[uint64]uint32{}},
}

// sassSerial is n lanes on one address, lane i getting ret(i).
func sassSerial(n int, addr uint64, ret func(i int) uint64) []sassLane {
	ls := make([]sassLane, n)
	for i := range ls {
		ls[i] = sassLane{uint32(i), addr, ret(i), 0}
	}
	return ls
}

func TestSASSSemantics(t *testing.T) {
	for _, tc := range sassCases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.line + "\n"
			if tc.head != "" {
				src = tc.head + "\n" + src
			}
			c := replaySASS(t, src)
			var want []Result
			for _, l := range tc.lanes {
				want = append(want, Result{Lane: l.lane, Addr: l.addr, Value: l.val, Fault: l.fault})
			}
			if !reflect.DeepEqual(c.Res, want) {
				t.Errorf("results\n got %+v\nwant %+v", c.Res, want)
			}
			got := map[uint64]uint32{}
			for _, w := range c.Words {
				if w.Space != trace.Global || w.Group != -1 {
					t.Errorf("word %+v is not global", w)
				}
				got[w.Addr] = w.Value
			}
			if !reflect.DeepEqual(got, tc.mem) {
				t.Errorf("memory\n got %#x\nwant %#x", got, tc.mem)
			}
			if len(c.Stats) != 1 || c.Stats[0].Static.Dialect != trace.DialectSASS {
				t.Errorf("stats %+v", c.Stats)
			}
		})
	}
}

// Every (op, sz) of the seed's table has a kind, and the instruction
// statistics carry the canonical op and type.
func TestSASSKinds(t *testing.T) {
	tests := []struct {
		text string
		k    kind
		size uint8
	}{
		{"ATOM.ADD R0, [R2], R3", kAdd, 4},
		{"ATOM.ADD.S32 R0, [R2], R3", kAdd, 4},
		{"ATOM.ADD.U64 R0, [R2], R4", kAdd, 8},
		{"ATOM.ADD.F32.FTZ.RN R0, [R2], R3", kFAddF32FTZ, 4},
		{"ATOM.ADD.F16x2.RN R0, [R2], R3", kFAddF16x2, 4},
		{"ATOM.ADD.F64.RN R0, [R2], R4", kFAddF64, 8},
		{"ATOM.MIN.U32 R0, [R2], R3", kMinU, 4},
		{"ATOM.MIN.S32 R0, [R2], R3", kMinS, 4},
		{"ATOM.MIN.U64 R0, [R2], R4", kMinU, 8},
		{"ATOM.MIN.S64 R0, [R2], R4", kMinS, 8},
		{"ATOM.MIN.F16x2.RN R0, [R2], R3", kFMinF16x2PTX, 4},
		{"ATOM.MAX.U32 R0, [R2], R3", kMaxU, 4},
		{"ATOM.MAX.S32 R0, [R2], R3", kMaxS, 4},
		{"ATOM.MAX.U64 R0, [R2], R4", kMaxU, 8},
		{"ATOM.MAX.S64 R0, [R2], R4", kMaxS, 8},
		{"ATOM.MAX.F16x2.RN R0, [R2], R3", kFMaxF16x2PTX, 4},
		{"ATOM.INC R0, [R2], R3", kIncBounded, 4},
		{"ATOM.DEC R0, [R2], R3", kDecBounded, 4},
		{"ATOM.AND.S32 R0, [R2], R3", kAnd, 4},
		{"ATOM.OR.U64 R0, [R2], R4", kOr, 8},
		{"ATOM.XOR R0, [R2], R3", kXor, 4},
		{"ATOM.EXCH.U64 R0, [R2], R4", kExch, 8},
		{"ATOM.CAS.S32 R0, [R2], R4, R5", kCAS, 4},
		{"ATOM.CAS.U64 R0, [R2], R4, R6", kCAS, 8},
	}
	for _, tc := range tests {
		st, err := trace.ParseStatic(tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		p, err := newPlan(st, &trace.Header{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if p.kind != tc.k || p.size != tc.size || p.retNew || p.noRet || p.dropOOB {
			t.Errorf("%s: kind %d size %d retNew %v noRet %v dropOOB %v, want kind %d size %d", tc.text, p.kind, p.size, p.retNew, p.noRet, p.dropOOB, tc.k, tc.size)
		}
		if st.Op == trace.OpCAS && (!reflect.DeepEqual(p.b, st.B) || !reflect.DeepEqual(p.c, st.C)) {
			t.Errorf("%s: CAS compares with Rb and writes Rc: b %v c %v", tc.text, p.b, p.c)
		}
	}
	// A Static no parser makes: planSASS refuses what the table lacks.
	bad := &trace.Static{Dialect: trace.DialectSASS, Op: trace.OpInc, Type: trace.TypeS64, Elems: 1, Addr: -1, Pred: -1}
	if err := planSASS(&plan{st: bad}); err == nil || !strings.Contains(err.Error(), "not in the Atomic Operations table") {
		t.Errorf("INC.S64: %v", err)
	}
}

// An access into a shared or local window faults invalid_space; one next
// to it does not; misalignment is reported first.
func TestSASSWindows(t *testing.T) {
	ws := []trace.Window{{Kind: "shared", Base: 0x2000, Size: 0x100}, {Kind: "local", Base: 0xff000000, Size: 0x1000000}}
	for _, tc := range []struct {
		text string
		addr uint64
		want Fault
	}{
		{"ATOM.ADD R0, [R2], R3", 0x1ffc, FaultNone},
		{"ATOM.ADD R0, [R2], R3", 0x2000, FaultInvalidSpace},
		{"ATOM.ADD R0, [R2], R3", 0x20fc, FaultInvalidSpace},
		{"ATOM.ADD R0, [R2], R3", 0x2100, FaultNone},
		{"ATOM.ADD R0, [R2], R3", 0x2002, FaultMisaligned},
		{"ATOM.ADD R0, [R2], R3", 0xfffffffc, FaultInvalidSpace},
		{"ATOM.ADD.U64 R0, [R2], R4", 0x1ff8, FaultNone},
		{"ATOM.ADD.U64 R0, [R2], R4", 0x20f8, FaultInvalidSpace},
	} {
		st, err := trace.ParseStatic(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		p := &plan{st: st}
		if err := planSASS(p); err != nil {
			t.Fatal(err)
		}
		sassWindows(p, ws)
		if got := p.check(tc.addr); got != tc.want {
			t.Errorf("%s at %#x: %q, want %q", tc.text, tc.addr, got, tc.want)
		}
	}
	p := &plan{st: &trace.Static{}}
	if sassWindows(p, nil); p.windows != nil {
		t.Error("no windows should mean no window check")
	}
}

// The same through a replay: .window in the trace header.
func TestSASSWindowsReplay(t *testing.T) {
	src := ".window shared 0x2000 0x100\n.window local 0x3000 0x100\n" +
		"ATOM.ADD R0, [R2], R3 | R2=[" + strings.TrimSuffix(strings.Repeat("0x1ffc,0x2000,0x3010,0x3100,", 8), ",") + "] R3=1\n"
	h := textSource(t, src).Header()
	st, _ := trace.ParseStatic("ATOM.ADD R0, [R2], R3")
	if p, err := newPlan(st, h, nil); err != nil || p.windows == nil {
		t.Fatalf("newPlan does not apply .window to SASS: %v", err)
	}
	c := replaySASS(t, src)
	for _, r := range c.Res {
		want := FaultInvalidSpace
		if r.Addr == 0x1ffc || r.Addr == 0x3100 {
			want = FaultNone
		}
		if r.Fault != want {
			t.Errorf("lane %d at %#x: %q, want %q", r.Lane, r.Addr, r.Fault, want)
		}
	}
	if v, _ := c.Word("global", -1, 0x1ffc); v != 8 {
		t.Errorf("0x1ffc = %d, want 8 (the global lanes ran)", v)
	}
	if _, ok := c.Word("global", -1, 0x2000); ok {
		t.Error("a faulting lane wrote memory")
	}
}

// randomSASS writes a random SASS ATOM trace: every (op, sz) of the table
// and every operand form (.E, absolute, RZ, sparse predicate, guard
// predicates, scheduling tokens), few distinct addresses so lanes
// conflict, some misaligned, outside the region, wrapping at 32 bits or in
// the shared window, several groups and warps, every value form.
func randomSASS(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x80\n.window shared 0x1070 0x8\n")
	fmt.Fprintf(&b, ".init global 0x1000 u32 %d %d %d\n", r.Uint32(), r.Uint32(), r.Uint32())
	type form struct {
		op, sz string
		bits   int
	}
	forms := []form{
		{"ADD", "", 32}, {"ADD", ".U32", 32}, {"ADD", ".S32", 32}, {"ADD", ".U64", 64}, {"ADD", ".64", 64},
		{"ADD", ".F32.FTZ.RN", 32}, {"ADD", ".F16x2.RN", 32}, {"ADD", ".F64.RN", 64},
		{"MIN", ".U32", 32}, {"MIN", ".S32", 32}, {"MIN", ".U64", 64}, {"MIN", ".S64", 64}, {"MIN", ".F16x2.RN", 32},
		{"MAX", ".32", 32}, {"MAX", ".S32", 32}, {"MAX", ".U64", 64}, {"MAX", ".S64", 64}, {"MAX", ".F16x2.RN", 32},
		{"INC", "", 32}, {"INC", ".U32", 32}, {"DEC", "", 32}, {"DEC", ".U32", 32},
		{"AND", ".U32", 32}, {"AND", ".S32", 32}, {"AND", ".U64", 64},
		{"OR", "", 32}, {"OR", ".S32", 32}, {"OR", ".64", 64},
		{"XOR", ".U32", 32}, {"XOR", ".S32", 32}, {"XOR", ".U64", 64},
		{"EXCH", "", 32}, {"EXCH", ".S32", 32}, {"EXCH", ".U64", 64},
		{"CAS", "", 32}, {"CAS", ".S32", 32}, {"CAS", ".U64", 64}, {"CAS", ".64", 64},
	}
	val := func(bits int) string {
		switch r.IntN(4) {
		case 0:
			return fmt.Sprint(r.IntN(5))
		case 1:
			return fmt.Sprintf("0x%x", r.Uint64()>>(64-bits))
		case 2:
			return fmt.Sprintf("%d:%d", r.IntN(4), r.IntN(3)-1)
		}
		vs := make([]string, 32)
		for i := range vs {
			vs[i] = fmt.Sprint(r.IntN(3))
		}
		return "[" + strings.Join(vs, ",") + "]"
	}
	for i := 0; i < n; i++ {
		randContext(r, &b)
		f := forms[r.IntN(len(forms))]
		ext := r.IntN(2) == 0
		size := uint64(f.bits / 8)
		cas := f.op == "CAS"
		var binds []string
		// Address: mostly aligned in the region; sometimes misaligned, past
		// its end, in the shared window, or wrapping at 32 bits.
		sparse := r.IntN(6) == 0
		imm := []int64{0, 4, 8, -8, 0x10}[r.IntN(5)]
		if sparse {
			imm = 0
		}
		target := 0x1000 + uint64(r.IntN(8))*size
		switch r.IntN(10) {
		case 0:
			target += 2
		case 1:
			target = 0x1078
		case 2:
			target = 0x1070
		}
		addr := "[R2]"
		switch {
		case imm > 0:
			addr = fmt.Sprintf("[R2 + %#x]", imm)
		case imm < 0:
			addr = fmt.Sprintf("[R2 - %#x]", -imm)
		}
		base := target - uint64(imm)
		switch k := r.IntN(8); {
		case k == 0 && !sparse:
			addr = fmt.Sprintf("[%#x]", target)
		case k == 1 && !sparse:
			addr = fmt.Sprintf("[RZ + %#x]", target)
		case k == 2 && !sparse: // 0xfffffff0 + 0x1010: 0x1000 in 32 bits, out of range with .E
			addr = "[R2 + 0x1010]"
			binds = append(binds, "R2=0xfffffff0")
		case k == 3:
			binds = append(binds, fmt.Sprintf("R2=%#x:%d", base, size*uint64(r.IntN(2))))
		default:
			binds = append(binds, fmt.Sprintf("R2=%#x", base))
		}
		if !strings.Contains(addr, "R2") {
			binds = binds[:0]
		}
		dst := "R0"
		if r.IntN(6) == 0 {
			dst = "RZ"
		}
		if sparse {
			dst = []string{"P0, ", "P1, ", "PT, "}[r.IntN(3)] + dst
		}
		srcs := "R5"
		if f.bits == 64 || cas {
			srcs = "R4"
		}
		switch {
		case cas && f.bits == 32:
			srcs += ", R5"
		case cas:
			srcs += ", R6"
		}
		if cas && r.IntN(5) == 0 {
			srcs = srcs[:strings.Index(srcs, ",")] + ", RZ"
		}
		if !cas && r.IntN(8) == 0 {
			srcs = "RZ"
		}
		for _, reg := range strings.Split(srcs, ", ") {
			if reg != "RZ" {
				binds = append(binds, reg+"="+val(f.bits))
			}
		}
		pred := ""
		switch r.IntN(6) {
		case 0:
			pred = "@P0 "
		case 1:
			pred = "@!P0 "
		case 2:
			pred = "@PT "
		}
		if strings.Contains(pred, "P0") {
			binds = append(binds, fmt.Sprintf("P0=%#x", r.Uint32()))
		}
		if r.IntN(4) == 0 {
			binds = append(binds, fmt.Sprintf("mask=%#x", r.Uint32()))
		}
		e := ""
		if ext {
			e = ".E"
		}
		hints := ""
		if r.IntN(5) == 0 {
			hints = " &req_6 &wr0 ?sched"
		}
		fmt.Fprintf(&b, "%sATOM%s.%s%s %s, %s, %s%s; | %s\n", pred, e, f.op, f.sz, dst, addr, srcs, hints, strings.Join(binds, " "))
	}
	return b.String()
}

func TestEngineEqualsReferenceOnRandomSASS(t *testing.T) { equalOnRandom(t, randomSASS, 11) }

func FuzzEngineEqualsReferenceSASS(f *testing.F) { fuzzEqual(f, randomSASS, 11) }

// TestSASSAddF16x2FTZ: .F16x2.FTZ.RN (the .sz list's spelling) flushes
// subnormal halves to zero; .F16x2.RN (the table's) keeps them.
func TestSASSAddF16x2FTZ(t *testing.T) {
	for _, tc := range []struct {
		sz   string
		want uint32
	}{{"F16x2.FTZ.RN", 0x3c000000}, {"F16x2.RN", 0x3c000002}} {
		// Memory holds (hi 1.0, lo smallest subnormal); Rb adds the same.
		src := ".init global 0x1000 u32 0x3c000001\n" +
			"ATOM.ADD." + tc.sz + " R0, [R2], R3 | R2=0x1000 R3=0x00000001 mask=1\n"
		c := replaySASS(t, src)
		if v, _ := c.Word("global", -1, 0x1000); v != tc.want {
			t.Errorf("ATOM.ADD.%s: memory %#x, want %#x", tc.sz, v, tc.want)
		}
	}
}

// TestSASSWindowedWarpsEqualReference: with shared and local windows
// declared, a SASS warp whose lanes' span touches no window takes the
// whole-warp paths (a histogram's page sums, a spinlock's few addresses),
// and one whose span touches a window, whether or not a lane falls in it,
// is checked lane by lane: the memory, faults and statistics are the
// reference's.
func TestSASSWindowedWarpsEqualReference(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 4))
	var b strings.Builder
	// Windows inside the region's second and third pages.
	b.WriteString(".window shared 0x11400 0x100\n.window local 0x12800 0x80\n.region global 0x10000 0x4000\n")
	list := func(f func() uint64) string {
		s := make([]string, 32)
		for l := range s {
			s[l] = fmt.Sprintf("0x%x", f())
		}
		return strings.Join(s, ",")
	}
	for i := range 300 {
		var page, span uint64
		switch i / 10 % 5 { // ten warps on a page before the next
		case 0, 1: // the first page: no window near
			page, span = 0x10000, 0x1000
		case 2: // the second page, above its window
			page, span = 0x11500, 0xb00
		case 3: // the second page across its window: lanes around it or in it
			page, span = 0x11300, 0x300
		case 4: // the third page, its window among the lanes
			page, span = 0x12000, 0x1000
		}
		addr := func() uint64 { return page + uint64(r.IntN(int(span)/4))*4 }
		if i >= 200 { // then a spinlock's CAS on a few addresses
			locks := []uint64{addr(), addr(), addr()}
			fmt.Fprintf(&b, "ATOM.E.CAS RZ, [R2], R4, R5 | R2=[%s] R4=%d R5=1\n", list(func() uint64 { return locks[r.IntN(3)] }), r.IntN(2))
			continue
		}
		fmt.Fprintf(&b, "ATOM.E.ADD.U32 RZ, [R2], R4 | R2=[%s] R4=%d\n", list(addr), 1+r.IntN(3))
	}
	src := b.String()
	equalToReference(t, src, []Option{WithWorkers(1)}, []Option{WithWorkers(2), WithBatchInsts(17)}, []Option{WithWorkers(3), withGoLoops()})
	sink, _ := sinkFor(true, false)
	if e := runEngine(t, src, sink, WithBatchInsts(50)); e.pageSums < 80 {
		// (sumWarp bounds a warp by its addresses' AND and OR: those of
		// the second page's take expandWarp's path.)
		t.Errorf("%d warps summed in a page, want the first page's 80", e.pageSums)
	}
}
