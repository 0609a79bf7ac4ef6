package bench

import (
	"bytes"
	"io"
	"maps"
	"testing"

	"github.com/gpureplay/replay/trace/accelsim"
)

// TestWriteTraceg: the generated kernel file imports whole, and the
// importer reads the lines, atomics and skipped opcodes the generator says
// it wrote; the same size gives the same bytes.
func TestWriteTraceg(t *testing.T) {
	var b, again bytes.Buffer
	c, err := WriteTraceg(&b, 200_000)
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() < 200_000 || b.Len() > 220_000 || c.Blocks < 2 {
		t.Fatalf("%d bytes in %d blocks for 200000 asked", b.Len(), c.Blocks)
	}
	if _, err := WriteTraceg(&again, 200_000); err != nil || !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Fatalf("a second run wrote other bytes (%v)", err)
	}
	r := accelsim.NewReader(bytes.NewReader(b.Bytes()), "gen.traceg")
	var n uint64
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	s := r.Stats()
	skipped := maps.Clone(c.Opcodes)
	for _, l := range tracegWarp {
		if l.atomic {
			delete(skipped, l.opcode)
		}
	}
	if s.Lines != c.Lines || n != c.Atomics || s.Atomics != c.Atomics || len(s.Unmapped) != 0 || !maps.Equal(s.Skipped, skipped) || s.Bytes != int64(b.Len()) {
		t.Errorf("read %d lines, %d atomics (%d handed out), %d bytes, skipped %v, unmapped %v;\nwrote %d lines, %d atomics, %d bytes, skipped %v",
			s.Lines, s.Atomics, n, s.Bytes, s.Skipped, s.Unmapped, c.Lines, c.Atomics, b.Len(), skipped)
	}
	if c.Atomics != uint64(c.Blocks*tracegWarps*4) || c.Lines != uint64(c.Blocks*tracegWarps*13) {
		t.Errorf("%d atomics and %d lines in %d blocks of %d warps: want 4 and 13 a warp", c.Atomics, c.Lines, c.Blocks, tracegWarps)
	}
}
