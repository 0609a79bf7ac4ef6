package engine

import (
	"fmt"
	"strings"
	"testing"
)

// replayText replays a .tasm text with the engine, checks that the
// reference interpreter agrees, and returns the engine's output.
func replayText(t *testing.T, src string) *Collector {
	t.Helper()
	var c Collector
	if _, err := Replay(t.Context(), textSource(t, src), &c, WithShards(3), WithWorkers(2)); err != nil {
		t.Fatalf("replay: %v\n%s", err, src)
	}
	var ref Collector
	if _, err := replayReference(t.Context(), textSource(t, src), &ref); err != nil {
		t.Fatalf("reference: %v", err)
	}
	if got, want := collect(&c), collect(&ref); fmt.Sprint(got) != fmt.Sprint(want) {
		describeDiff(t, got, want)
		t.Fatalf("engine and reference differ on\n%s", src)
	}
	return &c
}

// laneCase is one instruction on one lane: memory before, operands, and
// what the ISA's formula gives.
type laneCase struct {
	name  string
	text  string // instruction, with [a] at 0x100 and bindings b, c
	init  string // .init type and value at 0x100, e.g. "u32 5"
	b, c  string
	ret   uint64 // value returned to the lane
	retHi uint64
	mem   []uint32 // words at 0x100.. afterwards
	fault string
}

func runLaneCases(t *testing.T, cases []laneCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var src strings.Builder
			src.WriteString(".region global 0x100 0x40\n.region shared 0x100 0x40\n")
			if tc.init != "" {
				sp := "global"
				if strings.Contains(tc.text, ".shared") || strings.Contains(tc.text, "SLM") {
					sp = "shared"
				}
				fmt.Fprintf(&src, ".init %s 0x100 %s\n", sp, tc.init)
			}
			fmt.Fprintf(&src, "%s | a=0x100 mask=1", tc.text)
			if tc.b != "" {
				fmt.Fprintf(&src, " b=%s", tc.b)
			}
			if tc.c != "" {
				fmt.Fprintf(&src, " c=%s", tc.c)
			}
			src.WriteString("\n")
			c := replayText(t, src.String())
			if len(c.Res) < 1 {
				t.Fatalf("no result")
			}
			r := c.Res[0]
			if r.Fault.String() != tc.fault || r.Value != tc.ret || r.ValueHi != tc.retHi {
				t.Errorf("lane 0 got %#x:%#x fault %q, want %#x:%#x fault %q", r.ValueHi, r.Value, r.Fault, tc.retHi, tc.ret, tc.fault)
			}
			for i, w := range tc.mem {
				var got uint32
				for _, mw := range c.Words {
					if mw.Addr == 0x100+uint64(4*i) {
						got = mw.Value
					}
				}
				if got != w {
					t.Errorf("word 0x%x = %#x, want %#x", 0x100+4*i, got, w)
				}
			}
		})
	}
}

// Every (op, type) of PTX ISA, atom: Syntax on one lane, with the formulas
// of PTX ISA, atom: Semantics worked by hand.
func TestPTXSemantics(t *testing.T) {
	runLaneCases(t, []laneCase{
		{"add.u32 wraps", "atom.global.add.u32 d, [a], b", "u32 0xffffffff", "2", "", 0xffffffff, 0, []uint32{1}, ""},
		{"add.s32", "atom.global.add.s32 d, [a], b", "u32 5", "-7", "", 5, 0, []uint32{0xfffffffe}, ""},
		{"add.u64 carries", "atom.global.add.u64 d, [a], b", "u64 0xffffffff", "1", "", 0xffffffff, 0, []uint32{0, 1}, ""},
		{"add.s64", "atom.global.add.s64 d, [a], b", "u64 1", "-2", "", 1, 0, []uint32{0xffffffff, 0xffffffff}, ""},
		{"exch.b32", "atom.global.exch.b32 d, [a], b", "u32 9", "0xdeadbeef", "", 9, 0, []uint32{0xdeadbeef}, ""},
		{"exch.b64", "atom.global.exch.b64 d, [a], b", "u64 0x100000002", "0x300000004", "", 0x100000002, 0, []uint32{4, 3}, ""},
		{"cas.b32 hit", "atom.global.cas.b32 d, [a], b, c", "u32 7", "7", "9", 7, 0, []uint32{9}, ""},
		{"cas.b32 miss", "atom.global.cas.b32 d, [a], b, c", "u32 7", "8", "9", 7, 0, []uint32{7}, ""},
		{"cas.b64 hit", "atom.global.cas.b64 d, [a], b, c", "u64 0x700000000", "0x700000000", "1", 0x700000000, 0, []uint32{1, 0}, ""},
		{"cas.b16 hit keeps the other half", "atom.global.cas.b16 d, [a], b, c", "u32 0xaaaa0007", "7", "0x1234", 7, 0, []uint32{0xaaaa1234}, ""},
		{"cas.b128 hit", "atom.global.cas.b128 d, [a], b, c", "b128 0x0000000200000001", "0x0000000200000001", "0x44444444333333332222222211111111", 0x200000001, 0, []uint32{0x11111111, 0x22222222, 0x33333333, 0x44444444}, ""},
		{"exch.b128", "atom.global.exch.b128 d, [a], b", "b128 0x01000000000000000000000000000002", "0xff", "", 2, 0x0100000000000000, []uint32{0xff, 0, 0, 0}, ""},
		{"min.u32", "atom.global.min.u32 d, [a], b", "u32 0xfffffffe", "3", "", 0xfffffffe, 0, []uint32{3}, ""},
		{"min.s32 negative wins", "atom.global.min.s32 d, [a], b", "u32 3", "-1", "", 3, 0, []uint32{0xffffffff}, ""},
		{"max.u32", "atom.global.max.u32 d, [a], b", "u32 3", "0xffffffff", "", 3, 0, []uint32{0xffffffff}, ""},
		{"max.s32 positive wins", "atom.global.max.s32 d, [a], b", "u32 0xffffffff", "1", "", 0xffffffff, 0, []uint32{1}, ""},
		{"min.u64", "atom.global.min.u64 d, [a], b", "u64 0x100000000", "0xffffffff", "", 0x100000000, 0, []uint32{0xffffffff, 0}, ""},
		{"min.s64", "atom.global.min.s64 d, [a], b", "u64 1", "-1", "", 1, 0, []uint32{0xffffffff, 0xffffffff}, ""},
		{"max.u64", "atom.global.max.u64 d, [a], b", "u64 1", "0x8000000000000000", "", 1, 0, []uint32{0, 0x80000000}, ""},
		{"max.s64", "atom.global.max.s64 d, [a], b", "u64 0x8000000000000000", "-5", "", 0x8000000000000000, 0, []uint32{0xfffffffb, 0xffffffff}, ""},
		// inc(r, s) = (r >= s) ? 0 : r+1; dec(r, s) = (r==0 || r > s) ? s : r-1.
		{"inc below bound", "atom.global.inc.u32 d, [a], b", "u32 4", "5", "", 4, 0, []uint32{5}, ""},
		{"inc at bound", "atom.global.inc.u32 d, [a], b", "u32 5", "5", "", 5, 0, []uint32{0}, ""},
		{"inc above bound", "atom.global.inc.u32 d, [a], b", "u32 9", "5", "", 9, 0, []uint32{0}, ""},
		{"dec from zero", "atom.global.dec.u32 d, [a], b", "u32 0", "5", "", 0, 0, []uint32{5}, ""},
		{"dec above bound", "atom.global.dec.u32 d, [a], b", "u32 9", "5", "", 9, 0, []uint32{5}, ""},
		{"dec inside", "atom.global.dec.u32 d, [a], b", "u32 3", "5", "", 3, 0, []uint32{2}, ""},
		{"and.b32", "atom.global.and.b32 d, [a], b", "u32 0xff00ff00", "0x0ff00ff0", "", 0xff00ff00, 0, []uint32{0x0f000f00}, ""},
		{"or.b64", "atom.global.or.b64 d, [a], b", "u64 1", "0x100000000", "", 1, 0, []uint32{1, 1}, ""},
		{"xor.b32", "atom.global.xor.b32 d, [a], b", "u32 0xffff", "0xff", "", 0xffff, 0, []uint32{0xff00}, ""},
		{"and.b64", "atom.global.and.b64 d, [a], b", "u64 0xffffffffffffffff", "0x8000000000000001", "", 0xffffffffffffffff, 0, []uint32{1, 0x80000000}, ""},
		{"xor.b64", "atom.global.xor.b64 d, [a], b", "u64 3", "1", "", 3, 0, []uint32{2, 0}, ""},
		{"or.b32", "atom.global.or.b32 d, [a], b", "u32 1", "2", "", 1, 0, []uint32{3}, ""},
		// Floats: round to nearest even; f32 on global flushes subnormals.
		{"add.f32", "atom.global.add.f32 d, [a], b", "f32 1.5", "2.25", "", 0x3fc00000, 0, []uint32{0x40700000}, ""},
		{"add.f32 global flushes a subnormal result", "atom.global.add.f32 d, [a], b", "u32 0x00c00000", "0x80800000", "", 0x00c00000, 0, []uint32{0}, ""},
		{"add.f32 global flushes a subnormal input", "atom.global.add.f32 d, [a], b", "u32 0x00800000", "0x80400000", "", 0x00800000, 0, []uint32{0x00800000}, ""},
		{"add.f32 shared keeps the subnormal result", "atom.shared.add.f32 d, [a], b", "u32 0x00c00000", "0x80800000", "", 0x00c00000, 0, []uint32{0x00400000}, ""},
		{"add.f32 shared keeps the subnormal input", "atom.shared.add.f32 d, [a], b", "u32 0x00800000", "0x80400000", "", 0x00800000, 0, []uint32{0x00400000}, ""},
		{"add.f64", "atom.global.add.f64 d, [a], b", "f64 0.1", "0.2", "", 0x3fb999999999999a, 0, []uint32{0x33333334, 0x3fd33333}, ""},
		{"add.noftz.f16", "atom.global.add.noftz.f16 d, [a], b", "u32 0xaaaa3c00", "1", "", 0x3c00, 0, []uint32{0xaaaa4000}, ""},
		{"add.noftz.bf16", "atom.global.add.noftz.bf16 d, [a], b", "u32 0x4380", "1", "", 0x4380, 0, []uint32{0x4380}, ""},
		{"add.noftz.f16x2", "atom.global.add.noftz.f16x2 d, [a], b", "u32 0x3c004000", "0x3c003c00", "", 0x3c004000, 0, []uint32{0x40004200}, ""},
		{"add.noftz.bf16x2", "atom.global.add.noftz.bf16x2 d, [a], b", "u32 0x3f803f80", "0x3f803f80", "", 0x3f803f80, 0, []uint32{0x40004000}, ""},
		// Faults: the replay goes on, the lane records it.
		{"misaligned", "atom.global.add.u32 d, [a+2], b", "u32 1", "1", "", 0, 0, []uint32{1}, "misaligned"},
		{"out of range", "atom.global.add.u32 d, [a+0x40], b", "u32 1", "1", "", 0, 0, []uint32{1}, "out_of_range"},
		{"no destination returns nothing", "atom.global.add.u32 _, [a], b", "u32 6", "1", "", 0, 0, []uint32{7}, ""},
	})
}

// "a bf16 +1 repeated 1000 times from 0 ends at 256": 256+1 is a tie
// between 256 and 258 that rounds to the even 256.
func TestPTXBF16Saturates(t *testing.T) {
	var src strings.Builder
	src.WriteString(".region global 0x100 4\n")
	for i := 0; i < 1000; i++ {
		src.WriteString("atom.global.add.noftz.bf16 d, [a], 1.0 | a=0x100 mask=1\n")
	}
	c := replayText(t, src.String())
	if v, _ := c.Word("global", -1, 0x100); v != 0x4380 {
		t.Errorf("bf16 sum = %#x, want 0x4380 (256)", v)
	}
	if got := c.Res[999].Value; got != 0x4380 {
		t.Errorf("the 1000th add returned %#x, want 0x4380", got)
	}
}

func TestPTXVectors(t *testing.T) {
	src := `.region global 0x100 0x40
.init global 0x100 f32 1 2 3 4
.init global 0x110 u16 0x3c00 0x7e00 0xbc00 0x0000 0x8000 0x3c00 0x7c00 0xfc00
atom.global.v4.f32.add {d0,d1,d2,d3}, [a], {b0,b1,b2,b3} | a=0x100 mask=1 b0=0.5 b1=0.5 b2=0.5 b3=-4
atom.global.v8.f16.max.noftz {d0,d1,d2,d3,d4,d5,d6,d7}, [g], {h0,h1,h2,h3,h4,h5,h6,h7} | g=0x110 mask=1 h0=2 h1=1 h2=0x7e00 h3=0x8000 h4=0x0000 h5=0x3c00 h6=1 h7=1
atom.global.v2.f32.add {d0,d1}, [a+4], {b0,b1} | a=0x100 mask=1 b0=1 b1=1
`
	c := replayText(t, src)
	want := map[uint64]uint32{
		0x100: 0x3fc00000, 0x104: 0x40200000, 0x108: 0x40600000, 0x10c: 0, // 1.5 2.5 3.5 0
		// max: 2 > 1; NaN vs 1 gives 1; -1 vs NaN gives -1; 0 vs -0 gives +0;
		// -0 vs +0 gives +0; 1 vs 1; inf vs 1; -inf vs 1 gives 1.
		0x110: 0x3c004000, 0x114: 0x0000bc00, 0x118: 0x3c000000, 0x11c: 0x3c007c00,
	}
	for addr, v := range want {
		if got, _ := c.Word("global", -1, addr); got != v {
			t.Errorf("word 0x%x = %#x, want %#x", addr, got, v)
		}
	}
	if len(c.Res) != 4+8+2 {
		t.Fatalf("%d result rows, want 14 (one per element)", len(c.Res))
	}
	if r := c.Res[3]; r.Elem != 3 || r.Addr != 0x10c || r.Value != 0x40800000 {
		t.Errorf("v4 element 3: %+v", r)
	}
	// .v2.f32 at 0x104 is not 8-byte aligned: both elements fault.
	for _, r := range c.Res[12:] {
		if r.Fault != FaultMisaligned {
			t.Errorf("v2 at 0x104: %+v, want misaligned", r)
		}
	}
}
