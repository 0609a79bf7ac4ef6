package engine

import (
	"testing"

	"github.com/gpureplay/replay/shard"
)

// TestWriteBytesByLine: writeBytes, which asks whether a byte is this
// partition's once a 128-byte line and resolves its page once a line,
// writes every byte of this partition's lines and no other, its words
// touched, as a byte at a time does: from unaligned starts, across lines
// and pages, with and without partitions.
func TestWriteBytesByLine(t *testing.T) {
	p, err := shard.NewPartitioner(3)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3*shard.PageBytes+77)
	for i := range data {
		data[i] = byte(i*7 + 1)
	}
	for _, addr := range []uint64{0, 0x1003, 0x2fff, 0x107e} {
		for _, own := range []func(uint32, uint64) bool{nil, func(_ uint32, a uint64) bool { return p.Of(77, a) == 1 }} {
			got, err := shard.New()
			if err != nil {
				t.Fatal(err)
			}
			if err := writeBytes(got, 0, addr, data, own); err != nil {
				t.Fatal(err)
			}
			want, err := shard.New()
			if err != nil {
				t.Fatal(err)
			}
			cur := want.Cursor()
			for i, by := range data { // a byte at a time
				a := addr + uint64(i)
				if own != nil && !own(0, a) {
					continue
				}
				pg := want.Page(cur.Resolve(0, a).Ref())
				wi := uint32(a>>2) & (shard.PageWords - 1)
				sh := (a & 3) * 8
				pg.Words[wi] = pg.Words[wi]&^(0xff<<sh) | uint32(by)<<sh
				pg.Touch(wi)
			}
			owned := 0
			for a := addr &^ 3; a < addr+uint64(len(data)); a += 4 {
				ge, we := got.Lookup(0, a), want.Lookup(0, a)
				if (ge == 0) != (we == 0) {
					t.Fatalf("start 0x%x, partitioned %v: 0x%x's page made %v, want %v", addr, own != nil, a, ge != 0, we != 0)
				}
				if ge == 0 {
					continue
				}
				gp, wp := got.Page(ge.Ref()), want.Page(we.Ref())
				wi := uint32(a>>2) & (shard.PageWords - 1)
				gt, wt := gp.Touched[wi>>6]>>(wi&63)&1, wp.Touched[wi>>6]>>(wi&63)&1
				if gp.Words[wi] != wp.Words[wi] || gt != wt {
					t.Fatalf("start 0x%x, partitioned %v: word 0x%x is 0x%x (touched %d), want 0x%x (%d)", addr, own != nil, a, gp.Words[wi], gt, wp.Words[wi], wt)
				}
				owned += int(wt)
			}
			if owned == 0 || own != nil && owned*2 > len(data)/4 {
				t.Errorf("start 0x%x, partitioned %v: %d words written of %d bytes: not a partition's share", addr, own != nil, owned, len(data))
			}
		}
	}
}
