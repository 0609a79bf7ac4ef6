package engine

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// batchSizes is a Sink that keeps each batch's instruction count: the
// engine hands a batch's statistics to Instructions once.
type batchSizes struct {
	Discard
	sizes []int
}

func (s *batchSizes) Instructions(st []InstStat) error {
	s.sizes = append(s.sizes, len(st))
	return nil
}

// listAdds is a trace of n 32-bit adds whose addresses and sources are
// both per-lane lists when lists is set (64 list values an instruction),
// and a strided address with a constant source otherwise.
func listAdds(n int, lists bool) string {
	var b strings.Builder
	b.WriteString(".region global 0x10000 0x10000\n")
	for i := range n {
		if !lists {
			fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b | a=0x%x:4 b=%d\n", 0x10000+128*(i%64), i)
			continue
		}
		as, vs := make([]string, 32), make([]string, 32)
		for l := range as {
			as[l] = fmt.Sprintf("0x%x", 0x10000+4*((i*37+l*101)%0x4000))
			vs[l] = fmt.Sprint(i + l)
		}
		fmt.Fprintf(&b, "atom.global.add.u32 _, [a], b | a=[%s] b=[%s]\n", strings.Join(as, ","), strings.Join(vs, ","))
	}
	return b.String()
}

// TestBatchEndsAtListBudget checks where batches end: at the instruction
// count (WithBatchInsts) or, first, once their per-lane lists fill the
// list budget (defaultBatchListBytes: 512 KiB, 1024 instructions of two
// 32-lane lists), read from text (lists copied into the batch) or from
// the binary form (lists decoded into it); and that the cut changes
// nothing in the replay.
func TestBatchEndsAtListBudget(t *testing.T) {
	withLists, without := listAdds(2500, true), listAdds(5000, false)
	cases := []struct {
		name string
		src  string
		opts []Option
		want []int
	}{
		{"lists, default budget", withLists, nil, []int{1024, 1024, 452}},
		{"lists, 10 instructions' worth", listAdds(45, true), []Option{withBatchListBytes(10 * 64 * 8)}, []int{10, 10, 10, 10, 5}},
		{"lists, fewer instructions than the budget", withLists, []Option{WithBatchInsts(1000)}, []int{1000, 1000, 500}},
		{"no lists", without, []Option{withBatchListBytes(8)}, []int{4096, 904}},
	}
	for _, c := range cases {
		for _, binary := range []bool{false, true} {
			src := textSource(t, c.src)
			if binary {
				br, err := trace.NewBinaryReader(bytes.NewReader(binaryOf(t, c.src)))
				if err != nil {
					t.Fatal(err)
				}
				src = br
			}
			var s batchSizes
			if _, err := Replay(src, &s, append(c.opts, WithWorkers(2))...); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.sizes, c.want) {
				t.Errorf("%s (binary %v): batches of %v instructions, want %v", c.name, binary, s.sizes, c.want)
			}
		}
	}
	equalToReference(t, listAdds(200, true), []Option{WithWorkers(1), withBatchListBytes(7 * 64 * 8)}, []Option{WithWorkers(2), WithShards(5), withBatchListBytes(1)})
}

// TestRecIsWordAdd checks what add32Vals relies on to hand its records to
// shard.Memory.AddWords unconverted: a record is a shard.WordAdd, the
// word reference then the addend (in slot), 8 bytes.
func TestRecIsWordAdd(t *testing.T) {
	var r rec
	var a shard.WordAdd
	if unsafe.Sizeof(r) != unsafe.Sizeof(a) || unsafe.Offsetof(r.word) != unsafe.Offsetof(a.Word) ||
		unsafe.Offsetof(r.slot) != unsafe.Offsetof(a.Add) || unsafe.Alignof(r) < unsafe.Alignof(a) {
		t.Fatalf("rec (size %d, word at %d, slot at %d) is not shard.WordAdd (size %d, Word at %d, Add at %d)",
			unsafe.Sizeof(r), unsafe.Offsetof(r.word), unsafe.Offsetof(r.slot),
			unsafe.Sizeof(a), unsafe.Offsetof(a.Word), unsafe.Offsetof(a.Add))
	}
}
