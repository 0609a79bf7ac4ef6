package engine

import (
	"testing"
	"unsafe"

	"github.com/gpureplay/replay/internal/offheap"
)

// TestBatchInstsOnHugePages: a batch's first fill puts its instructions
// (a default batch's room, 4096 of them) on huge pages
// (offheap.HeapSlice), whose first writes fault a page in per 2 MiB: the
// batches in flight faulted in ~80 pages of 4 KiB each. The instructions
// read are the trace's.
func TestBatchInstsOnHugePages(t *testing.T) {
	src := ".warp 0\natom.global.add.u32 d, [a], 1 | a=0x100\n.warp 1\natom.global.add.u32 d, [a], 2 | a=0x100 mask=0xffff\n"
	e, err := testReplayer(textSource(t, src).Header(), WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	if bytes := defaultBatchInsts * int(unsafe.Sizeof(binst{})); bytes < offheap.HugeMin {
		t.Fatalf("a default batch's instructions are %d bytes, under offheap.HugeMin: the test cannot tell", bytes)
	}
	b := new(batch)
	b.reset(1, 1, e.opts.shards)
	e.fill(b, textSource(t, src))
	if b.err != nil {
		t.Fatal(b.err)
	}
	if len(b.insts) != 2 || b.insts[0].Mask != 0xffffffff || b.insts[1].Mask != 0xffff {
		t.Fatalf("filled %d instructions (%+v), want the trace's 2", len(b.insts), b.insts)
	}
	if at := uintptr(unsafe.Pointer(unsafe.SliceData(b.insts))); at%offheap.RegionBytes != 0 || cap(b.insts) < defaultBatchInsts {
		t.Errorf("a batch's instructions at %#x, room for %d: want a huge page's start and room for %d", at, cap(b.insts), defaultBatchInsts)
	}
}
