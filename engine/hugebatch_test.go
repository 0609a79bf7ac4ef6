package engine

import (
	"testing"
	"unsafe"

	"github.com/gpureplay/replay/internal/offheap"
)

// TestBatchInstsOnHugePages: a batch's first fill gives it room for a
// default batch's instructions (4096) at once: the replay's first batch
// from make, as a trace of one batch needs no more, and the others carved
// from a huge page they share (replayer.instSlab, offheap.Block),
// whose first writes fault a page in per 2 MiB: the batches in flight
// faulted in ~80 pages of 4 KiB each. The instructions read are the
// trace's.
func TestBatchInstsOnHugePages(t *testing.T) {
	src := ".warp 0\natom.global.add.u32 d, [a], 1 | a=0x100\n.warp 1\natom.global.add.u32 d, [a], 2 | a=0x100 mask=0xffff\n"
	e, err := testReplayer(textSource(t, src).Header(), WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	if bytes := defaultBatchInsts * int(unsafe.Sizeof(binst{})); bytes < offheap.HugeMin {
		t.Fatalf("a default batch's instructions are %d bytes, under offheap.HugeMin: the test cannot tell", bytes)
	}
	var at []uintptr
	for k := range maxInFlight {
		b := new(batch)
		b.reset(1, 1, e.opts.shards)
		e.fill(b, textSource(t, src))
		if b.err != nil {
			t.Fatal(b.err)
		}
		if len(b.insts) != 2 || b.insts[0].Mask != 0xffffffff || b.insts[1].Mask != 0xffff || cap(b.insts) != defaultBatchInsts {
			t.Fatalf("batch %d: filled %d instructions (%+v), room for %d; want the trace's 2 and room for %d", k, len(b.insts), b.insts, cap(b.insts), defaultBatchInsts)
		}
		at = append(at, uintptr(unsafe.Pointer(unsafe.SliceData(b.insts))))
	}
	step := uintptr(defaultBatchInsts) * unsafe.Sizeof(binst{})
	if at[1]%offheap.RegionBytes != 0 || at[2] != at[1]+step || at[3] != at[2]+step {
		t.Errorf("the instructions of batches 2 to %d at %#x: want one after the other from a huge page's start", maxInFlight, at[1:])
	}
}
