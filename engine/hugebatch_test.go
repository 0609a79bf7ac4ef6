package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/gpureplay/replay/internal/offheap"
	"github.com/gpureplay/replay/trace"
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

// TestBatchArenaOnHugePages: the replay's first batch of a trace with
// lists, read into its arena (trace.CapArena), grows the arena to the
// list budget on huge pages (offheap.HeapSlice) rather than by
// slices.Grow, which cleared it a 4 KiB fault at a time; the lists read
// so far keep their values.
func TestBatchArenaOnHugePages(t *testing.T) {
	var sb strings.Builder
	for w := range 8 {
		as := make([]string, 32)
		for l := range as {
			as[l] = fmt.Sprintf("0x%x", 0x1000+((l*7+w)%32)*4)
		}
		fmt.Fprintf(&sb, ".warp %d\natom.global.add.u32 _, [a], 1 | a=[%s]\n", w, strings.Join(as, ","))
	}
	bin := binaryOf(t, sb.String())
	br, err := trace.NewBinaryReader(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	e, err := testReplayer(br.Header(), WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	b := new(batch)
	b.reset(1, 1, e.opts.shards)
	e.fill(b, br)
	if b.err != nil {
		t.Fatal(b.err)
	}
	if len(b.insts) != 8 {
		t.Fatalf("filled %d instructions, want 8", len(b.insts))
	}
	if at := uintptr(unsafe.Pointer(unsafe.SliceData(b.arena))); at%offheap.RegionBytes != 0 || cap(b.arena) < e.opts.batchListWords {
		t.Errorf("the first batch's arena at %#x, room for %d words: want a huge page's start and room for %d", at, cap(b.arena), e.opts.batchListWords)
	}
	for w := range b.insts {
		x := xinst{binst: b.insts[w], vecs: b.vecs, arena: b.arena}
		for l := range 32 {
			if got, want := x.lo(0, l), uint64(0x1000+((l*7+w)%32)*4); got != want {
				t.Fatalf("instruction %d lane %d: address %#x, want %#x", w, l, got, want)
			}
		}
	}
}
