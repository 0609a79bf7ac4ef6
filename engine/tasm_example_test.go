package engine

import (
	"os"
	"strings"
	"testing"
)

// tasmExample returns the fenced code block of docs/TASM.md that holds
// marker.
func tasmExample(t *testing.T, marker string) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/TASM.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```")
	for i := 1; i < len(blocks); i += 2 { // the odd pieces are inside fences
		if strings.Contains(blocks[i], marker) {
			return strings.TrimPrefix(blocks[i], "\n")
		}
	}
	t.Fatalf("docs/TASM.md has no example holding %q", marker)
	return ""
}

// TestItem10TASMMidTraceExample: issue 46 item 10. docs/TASM.md's example
// of memory set-up in the middle of a trace does what its comments say,
// replayed as text and as binary, by the engine under every option set
// and by the reference: kernel 1's 32 lanes count the counter from 0 to
// 31, the host resets it, kernel 2's lanes count from 0 again, and no lane
// faults; the counter ends at 32 and group 1's shared memory holds the
// seeded 10 and 20.
func TestItem10TASMMidTraceExample(t *testing.T) {
	src := tasmExample(t, "kernel 2 counts from 0 again")
	c := replayTextAndBinary(t, src)
	if len(c.Res) != 64 {
		t.Fatalf("%d results, want 32 lanes of 2 instructions: %s", len(c.Res), resultsText(c))
	}
	for i, r := range c.Res {
		seq, lane := uint64(i/32), uint32(i%32)
		if r.Seq != seq || r.Lane != lane || r.Addr != 0x1000 || r.Value != uint64(lane) || r.Fault != FaultNone {
			t.Errorf("result %d: seq %d lane %d addr %#x value %d fault %s; want seq %d lane %d addr 0x1000 value %d, no fault",
				i, r.Seq, r.Lane, r.Addr, r.Value, r.Fault, seq, lane, lane)
		}
	}
	for _, s := range c.Stats {
		if s.Faults != 0 || s.Lanes != 32 {
			t.Errorf("instruction %d: %d lanes, %d faults; want 32 lanes, no fault", s.Seq, s.Lanes, s.Faults)
		}
	}
	if got, want := memoryText(c), "global@0x1000=0x20 shared[1]@0x0=0xa shared[1]@0x4=0x14"; got != want {
		t.Errorf("final memory %s, want %s", got, want)
	}
}
