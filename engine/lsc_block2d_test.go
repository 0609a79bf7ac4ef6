package engine

import (
	"fmt"
	"strings"
	"testing"
)

// iotaInit is an .init line of n elements of typ at 0x1000 holding 0, 1, 2, …
func iotaInit(typ string, n int) string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = fmt.Sprint(i)
	}
	return ".init global 0x1000 " + typ + " " + strings.Join(vs, " ") + "\n"
}

// surf is a 16-byte wide, 4-row surface at 0x1000 with a 16-byte pitch
// (SurfaceWidth and SurfaceHeight are minus-1 encoded).
const surf = "B=0x1000 W=15 H=3 P=16"

// checkRows compares the rows of instruction seq with want.
func checkRows(t *testing.T, c *Collector, seq uint64, want []lscRow) {
	t.Helper()
	var got []lscRow
	for _, r := range c.Res {
		if r.Seq == seq {
			got = append(got, lscRow{r.Lane, r.Elem, r.Addr, r.Value, r.Fault})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows of instruction %d:\n got %v\nwant %v", seq, got, want)
	}
}

// TestLSCBlock2DLoad checks lsc_load_block2d against rows worked out by
// hand from the seed's LOAD_BLOCK2D (with Src0AddrY added): element e is
// the e-th datum in register order, at SurfaceBase + (Y+y)*SurfacePitch +
// (X + b*W + x)*sizeof(T). Memory holds its own offset: with u8, byte
// (r, c) of the surface is 16r+c; with u16, element (r, c) is 8r+c; with
// u32, 4r+c.
func TestLSCBlock2DLoad(t *testing.T) {
	mem8, mem16, mem32 := iotaInit("u8", 80), iotaInit("u16", 40), iotaInit("u32", 20)
	const oob = FaultOutOfBounds
	tests := []struct {
		name string
		src  string
		rows []lscRow
	}{
		{
			// nn: slot y*4 + x (row pitch round_up_pow2(4) = 4). Y=1: rows
			// 1..4; row 4 is past SurfaceHeight=3 and reads zero although
			// memory there holds 64+.
			name: "d8 nn 4x4, last row below the surface",
			src:  mem8 + "lsc_load_block2d.ugm (M1_NM,1) V1:d8.1x4x4nn flat[B,W,H,P,X,Y] | " + surf + " X=4 Y=1\n",
			rows: []lscRow{
				{0, 0, 0x1014, 20, 0}, {0, 1, 0x1015, 21, 0}, {0, 2, 0x1016, 22, 0}, {0, 3, 0x1017, 23, 0},
				{0, 4, 0x1024, 36, 0}, {0, 5, 0x1025, 37, 0}, {0, 6, 0x1026, 38, 0}, {0, 7, 0x1027, 39, 0},
				{0, 8, 0x1034, 52, 0}, {0, 9, 0x1035, 53, 0}, {0, 10, 0x1036, 54, 0}, {0, 11, 0x1037, 55, 0},
				{0, 12, 0x1044, 0, oob}, {0, 13, 0x1045, 0, oob}, {0, 14, 0x1046, 0, oob}, {0, 15, 0x1047, 0, oob},
			},
		},
		{
			// X=14, Y=-1 (signed): row -1 is above the surface, columns 16
			// and 17 are past SurfaceWidth=15; 0x1000/0x1001 hold 0 and 1
			// but are out of the surface as row -1, columns 16 and 17.
			name: "d8 nn out of the surface top and right",
			src:  mem8 + "lsc_load_block2d.ugm (M1_NM,1) V1:d8.1x4x2nn flat[B,W,H,P,X,Y] | " + surf + " X=14 Y=-1\n",
			rows: []lscRow{
				{0, 0, 0xffe, 0, oob}, {0, 1, 0xfff, 0, oob}, {0, 2, 0x1000, 0, oob}, {0, 3, 0x1001, 0, oob},
				{0, 4, 0x100e, 14, 0}, {0, 5, 0x100f, 15, 0}, {0, 6, 0x1010, 0, oob}, {0, 7, 0x1011, 0, oob},
			},
		},
		{
			// Two blocks side by side along X; block b's register image
			// starts at b*64 (one 64-byte register each).
			name: "d8 nn two blocks",
			src:  mem8 + "lsc_load_block2d.ugm (M1_NM,1) V1:d8.2x4x2nn flat[B,W,H,P,X,Y] | " + surf + " X=0 Y=0\n",
			rows: []lscRow{
				{0, 0, 0x1000, 0, 0}, {0, 1, 0x1001, 1, 0}, {0, 2, 0x1002, 2, 0}, {0, 3, 0x1003, 3, 0},
				{0, 4, 0x1010, 16, 0}, {0, 5, 0x1011, 17, 0}, {0, 6, 0x1012, 18, 0}, {0, 7, 0x1013, 19, 0},
				{0, 8, 0x1004, 4, 0}, {0, 9, 0x1005, 5, 0}, {0, 10, 0x1006, 6, 0}, {0, 11, 0x1007, 7, 0},
				{0, 12, 0x1014, 20, 0}, {0, 13, 0x1015, 21, 0}, {0, 14, 0x1016, 22, 0}, {0, 15, 0x1017, 23, 0},
			},
		},
		{
			// nt (VNNI) d16, W=2 H=4, X=1: each dword packs rows y, y+1 of
			// one column, the lower row in the lower half: slots
			// (r0,c1) (r1,c1) (r0,c2) (r1,c2) (r2,c1) (r3,c1) (r2,c2) (r3,c2).
			name: "d16 nt VNNI 2x4",
			src:  mem16 + "lsc_load_block2d.ugm (M1_NM,1) V1:d16.1x2x4nt flat[B,W,H,P,X,Y] | " + surf + " X=1 Y=0\n",
			rows: []lscRow{
				{0, 0, 0x1002, 1, 0}, {0, 1, 0x1012, 9, 0}, {0, 2, 0x1004, 2, 0}, {0, 3, 0x1014, 10, 0},
				{0, 4, 0x1022, 17, 0}, {0, 5, 0x1032, 25, 0}, {0, 6, 0x1024, 18, 0}, {0, 7, 0x1034, 26, 0},
			},
		},
		{
			// nt d8 with H=2: each dword would pack 4 rows; rows 2 and 3
			// are padding (zero in the register, no rows here).
			name: "d8 nt VNNI, height not a multiple of 4",
			src:  mem8 + "lsc_load_block2d.ugm (M1_NM,1) V1:d8.1x4x2nt flat[B,W,H,P,X,Y] | " + surf + " X=0 Y=0\n",
			rows: []lscRow{
				{0, 0, 0x1000, 0, 0}, {0, 1, 0x1010, 16, 0}, {0, 2, 0x1001, 1, 0}, {0, 3, 0x1011, 17, 0},
				{0, 4, 0x1002, 2, 0}, {0, 5, 0x1012, 18, 0}, {0, 6, 0x1003, 3, 0}, {0, 7, 0x1013, 19, 0},
			},
		},
		{
			// tn d32, W=2 H=3, X=1 Y=1: register row x holds column x
			// (row pitch round_up_pow2(3) = 4): slot x*4 + y.
			name: "d32 tn transposed 2x3",
			src:  mem32 + "lsc_load_block2d.ugm (M1_NM,1) V1:d32.1x2x3tn flat[B,W,H,P,X,Y] | " + surf + " X=1 Y=1\n",
			rows: []lscRow{
				{0, 0, 0x1014, 5, 0}, {0, 1, 0x1024, 9, 0}, {0, 2, 0x1034, 13, 0},
				{0, 3, 0x1018, 6, 0}, {0, 4, 0x1028, 10, 0}, {0, 5, 0x1038, 14, 0},
			},
		},
		{
			// tt d16, W=4 H=2, Y=2: columns x0, x0+1 of row y pack into
			// dword y of register row x0/2: slot x0*2 + y*2 + i.
			name: "d16 tt transposed VNNI 4x2",
			src:  mem16 + "lsc_load_block2d.ugm (M1_NM,1) V1:d16.1x4x2tt flat[B,W,H,P,X,Y] | " + surf + " X=0 Y=2\n",
			rows: []lscRow{
				{0, 0, 0x1020, 16, 0}, {0, 1, 0x1022, 17, 0}, {0, 2, 0x1030, 24, 0}, {0, 3, 0x1032, 25, 0},
				{0, 4, 0x1024, 18, 0}, {0, 5, 0x1026, 19, 0}, {0, 6, 0x1034, 26, 0}, {0, 7, 0x1036, 27, 0},
			},
		},
		{
			// Inside the surface but outside every region: dropped like
			// any LSC access.
			name: "d32 nn region",
			src: ".region global 0x1000 0x14\n" + mem32 +
				"lsc_load_block2d.ugm (M1_NM,1) V1:d32.1x2x2nn flat[B,W,H,P,X,Y] | " + surf + " X=0 Y=0\n",
			rows: []lscRow{{0, 0, 0x1000, 0, 0}, {0, 1, 0x1004, 1, 0}, {0, 2, 0x1010, 4, 0}, {0, 3, 0x1014, 0, oob}},
		},
		{
			name: "d32 misaligned base",
			src:  mem32 + "lsc_load_block2d.ugm (M1_NM,1) V1:d32.1x1x1nn flat[B,W,H,P,X,Y] | B=0x1002 W=15 H=3 P=16 X=0 Y=0\n",
			rows: []lscRow{{0, 0, 0x1002, 0, FaultMisaligned}},
		},
		{
			// A null destination is a prefetch: addresses, no values.
			name: "prefetch",
			src:  mem32 + "lsc_load_block2d.ugm (M1_NM,1) null:d32.1x2x1nn flat[B,W,H,P,X,Y] | " + surf + " X=2 Y=3\n",
			rows: []lscRow{{0, 0, 0x1038, 0, 0}, {0, 1, 0x103c, 0, 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkRows(t, replayLSC(t, tc.src), 0, tc.rows)
		})
	}
}

// TestLSCBlock2DStore checks lsc_store_block2d: Src1Data binds the whole
// register image (padding slots included, their values ignored), element
// (y, x) comes from the slot a load with the same flags fills, elements
// outside the surface are dropped; loading the block back returns it.
func TestLSCBlock2DStore(t *testing.T) {
	const pad = "99,99,99,99,99,99,99,99,99,99"
	// nn d32, W=2 H=3: slot y*2 + x; the 16-element image is one register.
	nn := "lsc_store_block2d.ugm (M1_NM,1) flat[B,W,H,P,X,Y] VD:d32.2x3nn | " + surf + " X=1 Y=0 VD=[10,11,12,13,14,15," + pad + "]\n"
	// tn d32: slot x*4 + y, the seed's Src1Data.elems[v*round_up_pow2(BlockHeight) + n].
	tn := "lsc_store_block2d.ugm (M1_NM,1) flat[B,W,H,P,X,Y] VD:d32.1x2x3tn | " + surf + " X=1 Y=0 VD=[10,12,14,99,11,13,15,99,99,99,99,99,99,99,99,99]\n"
	back := "lsc_load_block2d.ugm (M1_NM,1) V2:d32.1x2x3nn flat[B,W,H,P,X,Y]\n" +
		"lsc_load_block2d.ugm (M1_NM,1) V3:d32.1x2x3tn flat[B,W,H,P,X,Y]\n"
	words := []lscWord{{"global", -1, 0x1004, 10}, {"global", -1, 0x1008, 11}, {"global", -1, 0x1014, 12},
		{"global", -1, 0x1018, 13}, {"global", -1, 0x1024, 14}, {"global", -1, 0x1028, 15}}
	// A store's rows are its elements in register order, no values.
	storeRows := map[string][]lscRow{
		"nn": {{0, 0, 0x1004, 0, 0}, {0, 1, 0x1008, 0, 0}, {0, 2, 0x1014, 0, 0}, {0, 3, 0x1018, 0, 0}, {0, 4, 0x1024, 0, 0}, {0, 5, 0x1028, 0, 0}},
		"tn": {{0, 0, 0x1004, 0, 0}, {0, 1, 0x1014, 0, 0}, {0, 2, 0x1024, 0, 0}, {0, 3, 0x1008, 0, 0}, {0, 4, 0x1018, 0, 0}, {0, 5, 0x1028, 0, 0}},
	}
	for name, src := range map[string]string{"nn": nn, "tn": tn} {
		t.Run(name, func(t *testing.T) {
			c := replayLSC(t, src+back)
			checkRows(t, c, 0, storeRows[name])
			for _, w := range words {
				if v, ok := c.Word(w.space, w.group, w.addr); !ok || v != w.val {
					t.Errorf("word 0x%x = %d (touched %v), want %d", w.addr, v, ok, w.val)
				}
			}
			if len(c.Words) != len(words) {
				t.Errorf("%d words touched, want %d: %v", len(c.Words), len(words), c.Words)
			}
			checkRows(t, c, 1, []lscRow{{0, 0, 0x1004, 10, 0}, {0, 1, 0x1008, 11, 0}, {0, 2, 0x1014, 12, 0},
				{0, 3, 0x1018, 13, 0}, {0, 4, 0x1024, 14, 0}, {0, 5, 0x1028, 15, 0}})
			checkRows(t, c, 2, []lscRow{{0, 0, 0x1004, 10, 0}, {0, 1, 0x1014, 12, 0}, {0, 2, 0x1024, 14, 0},
				{0, 3, 0x1008, 11, 0}, {0, 4, 0x1018, 13, 0}, {0, 5, 0x1028, 15, 0}})
		})
	}
	t.Run("out of the surface", func(t *testing.T) {
		// d16 W=4 at X=6 of an 8-column surface: columns 8 and 9 are
		// dropped. VD=1:1 puts 1+slot in each slot.
		c := replayLSC(t, "lsc_store_block2d.ugm (M1_NM,1) flat[B,W,H,P,X,Y] VD:d16.4x1nn | "+surf+" X=6 Y=3 VD=1:1\n")
		checkRows(t, c, 0, []lscRow{{0, 0, 0x103c, 0, 0}, {0, 1, 0x103e, 0, 0},
			{0, 2, 0x1040, 0, FaultOutOfBounds}, {0, 3, 0x1042, 0, FaultOutOfBounds}})
		if v, ok := c.Word("global", -1, 0x103c); !ok || v != 0x00020001 {
			t.Errorf("word 0x103c = 0x%x (touched %v), want 0x00020001", v, ok)
		}
		if _, ok := c.Word("global", -1, 0x1040); ok {
			t.Errorf("word 0x1040 written; it is outside the surface")
		}
		if s := c.Stats[0]; s.Faults != 2 {
			t.Errorf("faults %d, want 2", s.Faults)
		}
	})
}
