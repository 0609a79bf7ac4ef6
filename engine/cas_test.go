package engine

import (
	"strings"
	"testing"
)

// TestCASFailed: the instructions table's cas_failed, worked out by hand,
// with and without per-lane results (which take other apply loops), with
// one worker and two, and equal to the reference's.
func TestCASFailed(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []uint32 // CASFailed per instruction
	}{{
		// A spinlock's acquire: 32 lanes cas(0 → 1) on one word. Lane 0
		// finds 0 and swaps; the other 31 find 1. Then all 32 find 1.
		"spinlock", `.region global 0x1000 0x100
atom.global.cas.b32 d, [a], 0, 1; | a=0x1000
atom.global.cas.b32 d, [a], 0, 1; | a=0x1000
`, []uint32{31, 32},
	}, {
		// The same without a destination: applied in closed form when no
		// lane reads its result (applyUniform), the failures still count.
		"spinlock, no destination", `.region global 0x1000 0x100
atom.global.cas.b32 _, [a], 0, 1; | a=0x1000
atom.global.cas.b32 _, [a], 0, 1; | a=0x1000
`, []uint32{31, 32},
	}, {
		// One lane a word, each comparing with the word's value (0) or not
		// (1): lanes 1, 3, 5 … fail; a faulting lane neither swaps nor fails.
		"per-lane", `.region global 0x1000 0x100
atom.global.cas.b32 d, [a], b, 7; | a=0x1000:4 b=[` + strings.Repeat("0,1,", 15) + `0,1] mask=0xff
atom.global.cas.b32 d, [a], 0, 9; | a=[0x1000,0x1001,0x1004` + strings.Repeat(",0x1000", 29) + `] mask=0x7
`, []uint32{4, 1}, // the second: 0x1000 holds 7 (fails), 0x1001 faults, 0x1004 holds 0 (lane 1 failed there: swaps)
	}, {
		// vISA CMPXCHG compares with src1 and writes src0: src1 = 0 matches
		// lane 0 only.
		"visa cmpxchg", `.region global 0x1000 0x100
DWORD_ATOMIC.CMPXCHG (4) T255 V1 V2 V3 V4 | V1=0x1000 V2=5 V3=0
`, []uint32{3},
	}, {
		// Float CAS compares by IEEE equality: -0 finds +0 and swaps (lane
		// 0), then every lane finds 1.0 (0x3f800000) and fails.
		"visa fcmpwr", `.region global 0x1000 0x100
DWORD_ATOMIC.FCMPWR (4) T255 V1 V2 V3 V4 | V1=0x1000 V2=0x80000000 V3=0x3f800000
`, []uint32{3},
	}, {
		// 128-bit: both halves compare.
		"b128", `.region global 0x1000 0x100
atom.global.cas.b128 d, [a], b, c; | a=0x1000 b=0 c=5 mask=0x3
`, []uint32{1},
	}} {
		t.Run(c.name, func(t *testing.T) {
			var ref Collector
			if _, err := Reference(textSource(t, c.src), &ref); err != nil {
				t.Fatal(err)
			}
			check := func(what string, stats []InstStat) {
				t.Helper()
				if len(stats) != len(c.want) {
					t.Fatalf("%s: %d rows, want %d", what, len(stats), len(c.want))
				}
				for i, s := range stats {
					if s.CASFailed != c.want[i] {
						t.Errorf("%s: instruction %d: cas_failed %d, want %d", what, i, s.CASFailed, c.want[i])
					}
				}
			}
			check("reference", ref.Stats)
			for _, w := range []int{1, 2} {
				var full Collector
				if _, err := Replay(textSource(t, c.src), &full, WithWorkers(w)); err != nil {
					t.Fatal(err)
				}
				check("with results", full.Stats)
				var lean statsOnly
				if _, err := Replay(textSource(t, c.src), &lean, WithWorkers(w)); err != nil {
					t.Fatal(err)
				}
				check("without results", lean.Stats)
			}
		})
	}
}
