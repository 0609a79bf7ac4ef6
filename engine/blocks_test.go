package engine_test

import (
	"io"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// blockSource is a trace.Source of blocks of split instructions, for the
// block path.
type blockSource struct {
	hdr    *trace.Header
	blocks []trace.Block
	at     int
}

func (s *blockSource) Header() *trace.Header      { return s.hdr }
func (s *blockSource) Next() (*trace.Inst, error) { return nil, io.ErrUnexpectedEOF }
func (s *blockSource) Caps() trace.SourceCaps     { return trace.CapBlock }
func (s *blockSource) NextInto(a []uint64) (*trace.Inst, []uint64, error) {
	return nil, a, io.ErrUnexpectedEOF
}
func (s *blockSource) Repeats(int) (int, int64, int64) { return 0, 0, 0 }
func (s *blockSource) NextBlock() (*trace.Block, *trace.Inst, error) {
	if s.at == len(s.blocks) {
		return nil, nil, io.EOF
	}
	s.at++
	return &s.blocks[s.at-1], nil, nil
}

// TestBlockRowsAloneAfterFaults: the block path stores a row alone's
// fields in place in its buffer of rows (runBlocks), which it reuses
// after each hand-over (blockRows); a row alone in the slot of an earlier
// row with faults and failed compare-and-swaps has none of its own, and
// the statistics of its PartInfo, its seq, group and warp.
func TestBlockRowsAloneAfterFaults(t *testing.T) {
	st, err := trace.ParseStatic("atom.global.cas.b32 %r1, [%rd1], %r2, %r3")
	if err != nil {
		t.Fatal(err)
	}
	hdr := &trace.Header{Regions: []trace.Region{{Space: trace.Global, Base: 0x1000, Size: 0x1000}}}
	const n = 5000 // more than blockRows: the buffer is reused
	faulting, alone := make([]trace.Inst, n), make([]trace.Inst, n)
	parts := make([]trace.PartInfo, 2*n)
	for i := range n {
		// Lanes 0 and 1: lane 0 out of bounds (a fault), lane 1 a compare
		// with 5 of a word that holds 0 (a failed swap).
		parts[i] = trace.PartInfo{Lanes: 2, Row: true, Addresses: 2, MaxConflict: 1, Sectors: 2}
		faulting[i] = trace.Inst{Seq: uint64(i), Static: st, Group: 1, Warp: 2, Mask: 3, Part: &parts[i],
			Vals: []trace.Vector{{Kind: trace.VecStride, Base: 0x800, Stride: 0x800}, {Kind: trace.VecBroadcast, Base: 5}, {Kind: trace.VecBroadcast, Base: 6}}}
		parts[n+i] = trace.PartInfo{Lanes: 32, Row: true, Addresses: uint32(i%7 + 1), MaxConflict: uint32(i%5 + 1), Sectors: uint32(i%3 + 1)}
		alone[i] = trace.Inst{Seq: uint64(n + i), Static: st, Group: int64(i % 4), Warp: int64(i), Part: &parts[n+i],
			Vals: []trace.Vector{{Kind: trace.VecBroadcast}, {Kind: trace.VecBroadcast}, {Kind: trace.VecBroadcast}}}
	}
	src := &blockSource{hdr: hdr, blocks: []trace.Block{{Insts: faulting}, {Insts: alone}}}
	var sink leanSink
	if _, err := engine.Replay(t.Context(), src, &sink, engine.WithPartition(0, 2)); err != nil {
		t.Fatal(err)
	}
	if len(sink.Stats) != 2*n {
		t.Fatalf("%d instructions rows, want %d", len(sink.Stats), 2*n)
	}
	for i, r := range sink.Stats[:n] {
		if r.Seq != uint64(i) || r.Faults != 1 || r.CASFailed != 1 || r.Lanes != 2 {
			t.Fatalf("row %d of an instruction with lanes: %+v, want seq %d, a fault and a failed swap of 2 lanes", i, r, i)
		}
	}
	for i, r := range sink.Stats[n:] {
		p := parts[n+i]
		if r.Seq != uint64(n+i) || r.Static != st || r.Group != int64(i%4) || r.Warp != int64(i) || r.Faults != 0 || r.CASFailed != 0 ||
			r.Lanes != 32 || r.Addresses != p.Addresses || r.MaxConflict != p.MaxConflict || r.Sectors != p.Sectors {
			t.Fatalf("row alone %d: %+v, want seq %d, no fault or failed swap, the statistics of %+v", i, r, n+i, p)
		}
	}
}
