package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// lscRow is one expected result row: lane, element, address, value, fault.
type lscRow struct {
	lane, elem uint32
	addr, val  uint64
	fault      Fault
}

// lscWord is one expected word of final memory.
type lscWord struct {
	space string
	group int64
	addr  uint64
	val   uint32
}

// replayLSC replays src with the engine, checks it against the reference
// interpreter, and returns the collected output.
func replayLSC(t *testing.T, src string) *Collector {
	t.Helper()
	var c Collector
	if _, err := Replay(t.Context(), textSource(t, src), &c, WithShards(4), WithWorkers(2)); err != nil {
		t.Fatalf("replay: %v", err)
	}
	equalToReference(t, src, engineOptSets[:2]...)
	return &c
}

// TestLSCSemantics checks each sub-op against values worked out by hand
// from the seed's pseudo-code (vISA spec, LSC_UNTYPED: Semantics).
func TestLSCSemantics(t *testing.T) {
	const mem = ".region global 0x1000 0x100\n.init global 0x1000 u32 1 2 3 4 5 6 7 8\n"
	tests := []struct {
		name  string
		src   string
		seq   uint64 // the instruction whose rows are checked
		rows  []lscRow
		words []lscWord
	}{
		{
			// LOAD, SIMT: lane n's vector starts at its address;
			// element v is at addr + 4v.
			name: "gather d32x2 SIMT",
			src:  mem + "lsc_load.ugm (M1,2) V13:d32x2 flat[V12]:a64 | V12=[0x1008,0x1000]\n",
			rows: []lscRow{{0, 0, 0x1008, 3, 0}, {0, 1, 0x100c, 4, 0}, {1, 0, 0x1000, 1, 0}, {1, 1, 0x1004, 2, 0}},
		},
		{
			// STORE SIMT: Src1Data[v].elems[n] goes to addr(n) + 4v; the
			// list is element-major: [e0 of lanes 0,1, e1 of lanes 0,1].
			name:  "store d32x2 SIMT element order",
			src:   mem + "lsc_store.ugm (M1,2) flat[V12]:a64 V13:d32x2 | V12=0x1000:8 V13=[10,11,20,21]\n",
			words: []lscWord{{"global", -1, 0x1000, 10}, {"global", -1, 0x1004, 20}, {"global", -1, 0x1008, 11}, {"global", -1, 0x100c, 21}},
		},
		{
			// STORE transposed: DstData[n].elems[v]; the list is lane-major.
			name:  "store d32x4t transposed order",
			src:   mem + "lsc_store.ugm (M1_NM,1) flat[V12]:a64 V13:d32x4t | V12=0x1010 V13=[10,11,20,21]\n",
			words: []lscWord{{"global", -1, 0x1010, 10}, {"global", -1, 0x1014, 11}, {"global", -1, 0x1018, 20}, {"global", -1, 0x101c, 21}},
		},
		{
			// Strided with pitch 0: every lane loads the same datum.
			name: "strided broadcast",
			src:  mem + "lsc_load_strided.ugm (M1,4) V13:d32 flat[V12,0x0]:a32 | V12=[0x1004,0,0,0]\n",
			rows: []lscRow{{0, 0, 0x1004, 2, 0}, {1, 0, 0x1004, 2, 0}, {2, 0, 0x1004, 2, 0}, {3, 0, 0x1004, 2, 0}},
		},
		{
			// Strided default pitch = 4 bytes x 2 elements: a packed block.
			name: "strided default pitch",
			src:  mem + "lsc_load_strided.ugm (M1,2) V13:d32x2 flat[V12]:a32 | V12=0x1000\n",
			rows: []lscRow{{0, 0, 0x1000, 1, 0}, {0, 1, 0x1004, 2, 0}, {1, 0, 0x1008, 3, 0}, {1, 1, 0x100c, 4, 0}},
		},
		{
			// Strided with an explicit pitch of 0x10.
			name: "strided pitch 0x10",
			src:  mem + "lsc_load_strided.ugm (M1,2) V13:d32 flat[V12,0x10]:a32 | V12=0x1004\n",
			rows: []lscRow{{0, 0, 0x1004, 2, 0}, {1, 0, 0x1014, 6, 0}},
		},
		{
			// a16: 0xfff8 + 0x10 wraps to 0x8.
			name: "a16 wrap",
			src:  ".init shared 0x8 u32 42\nlsc_load.slm (M1,1) V13:d32 flat[V12+0x10]:a16 | V12=0xfff8\n",
			rows: []lscRow{{0, 0, 0x8, 42, 0}},
		},
		{
			// Scale and immediate: 4*V12 + 0x1000.
			name: "scale and immediate",
			src:  mem + "lsc_load.ugm (M1,4) V13:d32 flat[4*V12+0x1000]:a32 | V12=[3,0,7,1]\n",
			rows: []lscRow{{0, 0, 0x100c, 4, 0}, {1, 0, 0x1000, 1, 0}, {2, 0, 0x101c, 8, 0}, {3, 0, 0x1004, 2, 0}},
		},
		{
			// A negative immediate offset.
			name: "negative immediate",
			src:  mem + "lsc_load.ugm (M1,1) V13:d32 flat[V12-0x4]:a64 | V12=0x1008\n",
			rows: []lscRow{{0, 0, 0x1004, 2, 0}},
		},
		{
			name: "store then load",
			src: mem + "lsc_store.ugm (M1,2) flat[V12]:a64 V13:d32 | V12=0x1020:4 V13=[0xaa,0xbb]\n" +
				"lsc_load.ugm (M1,2) V14:d32 flat[V12]:a64\n",
			seq:  1,
			rows: []lscRow{{0, 0, 0x1020, 0xaa, 0}, {1, 0, 0x1024, 0xbb, 0}},
		},
		{
			// Out of bounds: the read returns 0, the write is dropped.
			name: "out of bounds",
			src: mem + "lsc_store.ugm (M1,2) flat[V12]:a64 V13:d32 | V12=[0x1000,0x2000] V13=7\n" +
				"lsc_load.ugm (M1,2) V14:d32 flat[V12]:a64\n",
			seq:   1,
			rows:  []lscRow{{0, 0, 0x1000, 7, 0}, {1, 0, 0x2000, 0, FaultOutOfBounds}},
			words: []lscWord{{"global", -1, 0x1000, 7}},
		},
		{
			// A prefetch (null destination) reads but returns nothing.
			name: "prefetch",
			src:  mem + "lsc_load.ugm (M1,2) null:d32 flat[V12]:a64 | V12=0x1000:4\n",
			rows: []lscRow{{0, 0, 0x1000, 0, 0}, {1, 0, 0x1004, 0, 0}},
		},
		{
			// d8u32: one byte in memory, zero-extended in the register.
			name: "d8u32 load",
			src:  ".init global 0x1000 u32 0x80ff7f01\nlsc_load.ugm (M1,4) V13:d8u32 flat[V12]:a64 | V12=0x1000:1\n",
			rows: []lscRow{{0, 0, 0x1000, 0x01, 0}, {1, 0, 0x1001, 0x7f, 0}, {2, 0, 0x1002, 0xff, 0}, {3, 0, 0x1003, 0x80, 0}},
		},
		{
			// d16u32 store: the low 16 bits of the register go to memory.
			name:  "d16u32 store",
			src:   "lsc_store.ugm (M1,2) flat[V12]:a64 V13:d16u32 | V12=0x1000:2 V13=[0x12345678,0xabcd]\n",
			words: []lscWord{{"global", -1, 0x1000, 0xabcd5678}},
		},
		{
			// LOAD_QUAD .xzw: channels X, Z, W of each lane's xyzw vector.
			name: "load_quad xzw",
			src:  mem + "lsc_load_quad.ugm (M1,2) V13:d32.xzw flat[V12]:a64 | V12=0x1000:16\n",
			rows: []lscRow{{0, 0, 0x1000, 1, 0}, {0, 1, 0x1008, 3, 0}, {0, 2, 0x100c, 4, 0},
				{1, 0, 0x1010, 5, 0}, {1, 1, 0x1018, 7, 0}, {1, 2, 0x101c, 8, 0}},
		},
		{
			// STORE_QUAD .yw: Src1Data[m] is the m-th enabled channel.
			name:  "store_quad yw",
			src:   "lsc_store_quad.ugm (M1,1) flat[V12]:a64 V13:d32.yw | V12=0x1000 V13=[5,6]\n",
			words: []lscWord{{"global", -1, 0x1004, 5}, {"global", -1, 0x100c, 6}},
		},
		{
			// A predicate and a mask: lanes 1 and 3 run.
			name: "predicate and mask",
			src:  mem + "(!P1) lsc_load.ugm (M1,4) V13:d32 flat[V12]:a64 | V12=0x1000:4 P1=0x5 mask=0xb\n",
			rows: []lscRow{{1, 0, 0x1004, 2, 0}, {3, 0, 0x100c, 4, 0}},
		},
		{
			// AppendCounterAtomicAdd: each lane gets the running counter.
			name:  "apndctr add",
			src:   "lsc_apndctr_atomic_add.ugm  (M1,4) VDATA:d32 bti(0xA0) V10:d32 | V10=[1,2,3,4]\n",
			rows:  []lscRow{{0, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, {2, 0, 0, 3, 0}, {3, 0, 0, 6, 0}},
			words: []lscWord{{"apndctr(0xa0)", -1, 0, 10}},
		},
		{
			name:  "apndctr sub",
			src:   ".init apndctr(0x3) 0 u32 10\nlsc_apndctr_atomic_sub.ugm (M1,2) VDATA:d32 bti(0x3) V10 | V10=[1,4] mask=0x3\n",
			rows:  []lscRow{{0, 0, 0, 10, 0}, {1, 0, 0, 9, 0}},
			words: []lscWord{{"apndctr(0x3)", -1, 0, 5}},
		},
		{
			// icas: Src1Data (V14) is compared, Src2Data (V15) written.
			name:  "icas operand roles",
			src:   mem + "lsc_atomic_icas.ugm (M1,2) V13:d32 flat[V12]:a64 V14 V15 | V12=0x1000:4 V14=[1,0] V15=[100,200]\n",
			rows:  []lscRow{{0, 0, 0x1000, 1, 0}, {1, 0, 0x1004, 2, 0}},
			words: []lscWord{{"global", -1, 0x1000, 100}, {"global", -1, 0x1004, 2}},
		},
		{
			// Lanes on one address apply in lane order.
			name:  "iinc conflict",
			src:   mem + "lsc_atomic_iinc.ugm (M1,4) V13:d32 flat[V12]:a64 V0 V0 | V12=0x1000 mask=0x7\n",
			rows:  []lscRow{{0, 0, 0x1000, 1, 0}, {1, 0, 0x1000, 2, 0}, {2, 0, 0x1000, 3, 0}},
			words: []lscWord{{"global", -1, 0x1000, 4}},
		},
		{
			// iinc has no bound (it wraps): 0xffffffff+1 = 0.
			name:  "iinc wraps",
			src:   ".init global 0x1000 u32 0xffffffff\nlsc_atomic_iinc.ugm (M1,1) V13:d32 flat[V12]:a64 | V12=0x1000\n",
			rows:  []lscRow{{0, 0, 0x1000, 0xffffffff, 0}},
			words: []lscWord{{"global", -1, 0x1000, 0}},
		},
		{
			name:  "idec wraps",
			src:   ".init global 0x1000 u32 0\nlsc_atomic_idec.ugm (M1,1) V13:d32 flat[V12]:a64 %null %null | V12=0x1000\n",
			rows:  []lscRow{{0, 0, 0x1000, 0, 0}},
			words: []lscWord{{"global", -1, 0x1000, 0xffffffff}},
		},
		{
			name:  "atomic_load",
			src:   mem + "lsc_atomic_load.ugm (M1,1) V13:d32 flat[V12]:a64 | V12=0x1008\n",
			rows:  []lscRow{{0, 0, 0x1008, 3, 0}},
			words: []lscWord{{"global", -1, 0x1008, 3}},
		},
		{
			// atomic_store exchanges: it returns the old value.
			name:  "atomic_store",
			src:   mem + "lsc_atomic_store.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1008 V14=77\n",
			rows:  []lscRow{{0, 0, 0x1008, 3, 0}},
			words: []lscWord{{"global", -1, 0x1008, 77}},
		},
		{
			name:  "iadd",
			src:   mem + "lsc_atomic_iadd.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=0xffffffff\n",
			rows:  []lscRow{{0, 0, 0x1000, 1, 0}},
			words: []lscWord{{"global", -1, 0x1000, 0}},
		},
		{
			name:  "isub",
			src:   mem + "lsc_atomic_isub.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=3\n",
			words: []lscWord{{"global", -1, 0x1000, 0xfffffffe}},
		},
		{
			name:  "smin",
			src:   mem + "lsc_atomic_smin.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=-5\n",
			words: []lscWord{{"global", -1, 0x1000, 0xfffffffb}},
		},
		{
			name:  "smax",
			src:   mem + "lsc_atomic_smax.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=-5\n",
			words: []lscWord{{"global", -1, 0x1000, 1}},
		},
		{
			name:  "umin",
			src:   mem + "lsc_atomic_umin.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=-5\n",
			words: []lscWord{{"global", -1, 0x1000, 1}},
		},
		{
			name:  "umax",
			src:   mem + "lsc_atomic_umax.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=-5\n",
			words: []lscWord{{"global", -1, 0x1000, 0xfffffffb}},
		},
		{
			name:  "and",
			src:   ".init global 0x1000 u32 0xff0f\nlsc_atomic_and.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=0x0ff0\n",
			words: []lscWord{{"global", -1, 0x1000, 0x0f00}},
		},
		{
			name:  "or",
			src:   ".init global 0x1000 u32 0xff0f\nlsc_atomic_or.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=0x0ff0\n",
			words: []lscWord{{"global", -1, 0x1000, 0xffff}},
		},
		{
			name:  "xor",
			src:   ".init global 0x1000 u32 0xff0f\nlsc_atomic_xor.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=0x0ff0\n",
			words: []lscWord{{"global", -1, 0x1000, 0xf0ff}},
		},
		{
			// d64 smin: signed 64-bit comparison.
			name:  "smin d64",
			src:   ".init global 0x1000 u64 5\nlsc_atomic_smin.ugm (M1,1) V13:d64 flat[V12]:a64 V14 | V12=0x1000 V14=-1\n",
			rows:  []lscRow{{0, 0, 0x1000, 5, 0}},
			words: []lscWord{{"global", -1, 0x1000, 0xffffffff}, {"global", -1, 0x1004, 0xffffffff}},
		},
		{
			name:  "icas d64",
			src:   ".init global 0x1000 u64 0x100000002\nlsc_atomic_icas.ugm (M1,1) V13:d64 flat[V12]:a64 V14 V15 | V12=0x1000 V14=0x100000002 V15=7\n",
			rows:  []lscRow{{0, 0, 0x1000, 0x100000002, 0}},
			words: []lscWord{{"global", -1, 0x1000, 7}, {"global", -1, 0x1004, 0}},
		},
		{
			// d16 smax on the upper half-word leaves the lower one alone.
			name:  "smax d16",
			src:   ".init global 0x1000 u16 0x1111 0xfffe\nlsc_atomic_smax.ugm (M1,1) V13:d16 flat[V12]:a64 V14 | V12=0x1002 V14=-3\n",
			rows:  []lscRow{{0, 0, 0x1002, 0xfffe, 0}},
			words: []lscWord{{"global", -1, 0x1000, 0xfffe1111}},
		},
		{
			// d16u32 atomics: 16 bits in memory, the register's low half.
			name:  "iadd d16u32",
			src:   ".init global 0x1000 u16 0xffff 0x2222\nlsc_atomic_iadd.ugm (M1,1) V13:d16u32 flat[V12]:a64 V14 | V12=0x1000 V14=0x10002\n",
			rows:  []lscRow{{0, 0, 0x1000, 0xffff, 0}},
			words: []lscWord{{"global", -1, 0x1000, 0x22220001}},
		},
		{
			// An atomic on SLM: per group.
			name:  "slm iadd per group",
			src:   ".group 1\nlsc_atomic_iadd.slm (M1,2) V13:d32 flat[V12]:a32 V14 | V12=0x10 V14=[3,4]\n",
			rows:  []lscRow{{0, 0, 0x10, 0, 0}, {1, 0, 0x10, 3, 0}},
			words: []lscWord{{"shared", 1, 0x10, 7}},
		},
		{
			// d16u32h: the datum comes back in the upper half of the
			// 32-bit slot, the lower half zero.
			name: "d16u32h load",
			src:  ".init global 0x1000 u16 0x1234 0xabcd\nlsc_load.ugm (M1,2) V13:d16u32h flat[V12]:a64 | V12=0x1000:2\n",
			rows: []lscRow{{0, 0, 0x1000, 0x12340000, 0}, {1, 0, 0x1002, 0xabcd0000, 0}},
		},
		{
			// d16u32h store: bits 31:16 of the register go to memory.
			name:  "d16u32h store",
			src:   "lsc_store.ugm (M1,2) flat[V12]:a64 V13:d16u32h | V12=0x1000:2 V13=[0x12345678,0xabcd0000]\n",
			words: []lscWord{{"global", -1, 0x1000, 0xabcd1234}},
		},
		{
			// d16u32h transposed x2: element v of the one lane.
			name: "d16u32h transposed load",
			src:  ".init global 0x1000 u16 0x1111 0x2222\nlsc_load.ugm (M1_NM,1) V13:d16u32hx2t flat[V12]:a64 | V12=0x1000\n",
			rows: []lscRow{{0, 0, 0x1000, 0x11110000, 0}, {0, 1, 0x1002, 0x22220000, 0}},
		},
		{
			// An atomic outside the regions is dropped and returns 0.
			name:  "atomic out of bounds",
			src:   mem + "lsc_atomic_iadd.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x3000 V14=1\n",
			rows:  []lscRow{{0, 0, 0x3000, 0, FaultOutOfBounds}},
			words: []lscWord{{"global", -1, 0x1000, 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := replayLSC(t, tc.src)
			if tc.rows != nil {
				var got []lscRow
				for _, r := range c.Res {
					if r.Seq == tc.seq {
						got = append(got, lscRow{r.Lane, r.Elem, r.Addr, r.Value, r.Fault})
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.rows) {
					t.Errorf("rows of instruction %d:\n got %v\nwant %v", tc.seq, got, tc.rows)
				}
			}
			for _, w := range tc.words {
				v, ok := c.Word(w.space, w.group, w.addr)
				if !ok || v != w.val {
					t.Errorf("word %s g%d 0x%x = 0x%x (touched %v), want 0x%x", w.space, w.group, w.addr, v, ok, w.val)
				}
			}
		})
	}
}

// TestLSCTransposedLoad checks DstData[n].elems[v] of a transposed load:
// SIMD1, one row per element from successive addresses of the surface.
func TestLSCTransposedLoad(t *testing.T) {
	src := ".init bti(0x4) 0x10 u32 9 8 7 6\nlsc_load.ugm (M1_NM,1) V13:d32x4t bti(0x4)[V12]:a32 | V12=0x10\n"
	c := replayLSC(t, src)
	want := []lscRow{{0, 0, 0x10, 9, 0}, {0, 1, 0x14, 8, 0}, {0, 2, 0x18, 7, 0}, {0, 3, 0x1c, 6, 0}}
	var got []lscRow
	for _, r := range c.Res {
		got = append(got, lscRow{r.Lane, r.Elem, r.Addr, r.Value, r.Fault})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// The strided form the seed calls identical: 16 lanes, pitch 4.
	src2 := ".init bti(0x4) 0x10 u32 9 8 7 6\nlsc_load_strided.ugm (M1_NM,4) V13:d32 bti(0x4)[V12]:a32 | V12=0x10\n"
	c2 := replayLSC(t, src2)
	for i, r := range c2.Res {
		if r.Lane != uint32(i) || r.Addr != want[i].addr || r.Value != want[i].val {
			t.Errorf("strided lane %d: %+v, want addr 0x%x value %d", i, r, want[i].addr, want[i].val)
		}
	}
}

// TestLSCFloatAtomics checks that the float sub-ops reach the float kinds:
// fadd 1.5 + 2.25, fsub, fmin/fmax, and fcas with Src1Data as comparand.
func TestLSCFloatAtomics(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want uint32 // final word at 0x1000
	}{
		{"fadd d32", ".init global 0x1000 f32 1.5\nlsc_atomic_fadd.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=2.25\n", 0x40700000},
		{"fsub d32", ".init global 0x1000 f32 1.5\nlsc_atomic_fsub.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=2.25\n", 0xbf400000},
		{"fmin d32", ".init global 0x1000 f32 1.5\nlsc_atomic_fmin.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=-2\n", 0xc0000000},
		{"fmax d32", ".init global 0x1000 f32 1.5\nlsc_atomic_fmax.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=-2\n", 0x3fc00000},
		{"fcas d32 hit", ".init global 0x1000 f32 1.5\nlsc_atomic_fcas.ugm (M1,1) V13:d32 flat[V12]:a64 V14 V15 | V12=0x1000 V14=1.5 V15=4\n", 0x40800000},
		{"fcas d32 miss", ".init global 0x1000 f32 1.5\nlsc_atomic_fcas.ugm (M1,1) V13:d32 flat[V12]:a64 V14 V15 | V12=0x1000 V14=4 V15=1.5\n", 0x3fc00000},
		{"fadd d16", ".init global 0x1000 u16 0x3c00 0x1234\nlsc_atomic_fadd.ugm (M1,1) V13:d16 flat[V12]:a64 V14 | V12=0x1000 V14=1\n", 0x12344000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := replayLSC(t, tc.src)
			if v, _ := c.Word("global", -1, 0x1000); v != tc.want {
				t.Errorf("word 0x1000 = 0x%08x, want 0x%08x", v, tc.want)
			}
		})
	}
}

// TestLSCLoadStatus checks LOAD_STATUS: one row per lane that ran,
// dest.bit[n] = 1 when all the lane's DataElemsPerAddr elements are on a
// valid page, "valid" being inside a declared region (or no region
// declared); no memory is touched and nothing counts as a fault.
func TestLSCLoadStatus(t *testing.T) {
	tests := []struct {
		name string
		src  string
		rows []lscRow
	}{
		{
			// Lane 0: 0x1000..0x1007 in; lane 1: 0x1008..0x100f in; lane 2:
			// its second element 0x1010 is past the region; lane 3 did not
			// run; lane 4: 0xff8 is before it.
			name: "x2 with a region",
			src: ".region global 0x1000 0x10\n" +
				"lsc_load_status.ugm (M1,8) V13:d32x2 flat[V12]:a64 | V12=[0x1000,0x1008,0x100c,0x1000,0xff8,0,0,0] mask=0x17\n",
			rows: []lscRow{{0, 0, 0x1000, 1, 0}, {1, 0, 0x1008, 1, 0}, {2, 0, 0x100c, 0, 0}, {4, 0, 0xff8, 0, 0}},
		},
		{
			// No region: every page is valid, misaligned or not, short of
			// wrapping past the top of the address space.
			name: "no region",
			src:  "lsc_load_status.ugm (M1,4) V13:d32 flat[V12]:a64 | V12=[0x0,0x1002,0xfffffffffffffffc,0xfffffffffffffffe]\n",
			rows: []lscRow{{0, 0, 0x0, 1, 0}, {1, 0, 0x1002, 1, 0}, {2, 0, 0xfffffffffffffffc, 1, 0}, {3, 0, 0xfffffffffffffffe, 0, 0}},
		},
		{
			// SLM regions, a16 addresses with a scale and an offset.
			name: "slm a16",
			src:  ".region shared 0x0 0x40\nlsc_load_status.slm (M1,2) V13:d32x4 flat[4*V12+0x10]:a16 | V12=[0x4,0x8]\n",
			rows: []lscRow{{0, 0, 0x20, 1, 0}, {1, 0, 0x30, 1, 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := replayLSC(t, tc.src)
			checkRows(t, c, 0, tc.rows)
			if len(c.Words) != 0 {
				t.Errorf("load_status touched memory: %v", c.Words)
			}
			if c.Stats[0].Faults != 0 {
				t.Errorf("faults %d, want 0", c.Stats[0].Faults)
			}
		})
	}
}

// TestLSCSeedExamples replays every example of the seed's Examples section
// (vISA spec, LSC_UNTYPED: Examples), with bindings chosen here, against the reference,
// and checks each line's row count and a few values.
func TestLSCSeedExamples(t *testing.T) {
	const block = "flat[VSURF_BASE,VSURF_W,V_SURF_H,SURF_P,OFF_X,OFF_Y]"
	lines := []struct {
		text  string // the seed's line
		binds string
		rows  int
	}{
		{"lsc_load.ugm.uc.uc  (M1,32) V13:d32    flat[V12+0x100]:a64", "V12=0x1000:4", 32},
		{"lsc_load.slm   (M1,32) V13:d32x4  flat[V12]:a16", "V12=0:16", 128},
		{"lsc_load.ugm  (M1,32) null:d32  flat[V12]:a64", "V12=0x1000:4", 32},
		{"lsc_load.ugm  (M1,32) V0:d32    flat[V12]:a64", "", 32},
		{"lsc_load.ugm          (M1_NM,1)  V13:d32x16t  bti(0x4)[V12]:a32", "V12=0", 16},
		{"lsc_load_strided.ugm  (M1_NM,16) V13:d32      bti(0x4)[V12]:a32", "", 16},
		{"lsc_load_strided.ugm   (M1,32) V13:d32  flat[V12]:a32", "V12=0x1000", 32},
		{"lsc_load_strided.ugm   (M1,32) V13:d32  flat[V12,0x100]:a32", "", 32},
		{"lsc_load_strided.slm   (M1,32) V13:d32  flat[V12,0x0]:a32", "V12=0x10", 32},
		{"lsc_store.ugm     (M1,32) flat[V12]:a64  V13:d32", "V12=0x2000:4 V13=0:1", 32},
		{"lsc_store.slm     (M1,32) flat[V12]:a32  V13:d32x4", "V12=0:16 V13=0:1", 128},
		{"lsc_load_block2d.ugm  (M1_NM,1)  VDATA:d8.2x16x32nn    " + block,
			"VSURF_BASE=0x10000 VSURF_W=63 V_SURF_H=63 SURF_P=64 OFF_X=0 OFF_Y=0", 1024},
		{"lsc_load_block2d.ugm  (M1_NM,1) VDATA:d16.1x32x16tn   " + block, "", 512},
		{"lsc_load_block2d.ugm  (M1_NM,1) VDATA:d16.1x16x32nt   " + block, "", 512},
		{"lsc_store_block2d.ugm (M1_NM,1)  " + block + "  VDATA:d16.16x32nn", "VDATA=0:1", 512},
		{"lsc_apndctr_atomic_add.ugm  (M1,32) VDATA:d32 bti(0xA0) V10:d32", "V10=1", 32},
	}
	var b strings.Builder
	b.WriteString(".init global 0x10000 u8 " + strings.TrimSpace(strings.Repeat("1 2 3 4 ", 64)) + "\n")
	for _, l := range lines {
		b.WriteString(l.text)
		if l.binds != "" {
			b.WriteString(" | " + l.binds)
		}
		b.WriteString("\n")
	}
	c := replayLSC(t, b.String())
	count := map[uint64]int{}
	for _, r := range c.Res {
		count[r.Seq]++
	}
	for i, l := range lines {
		if count[uint64(i)] != l.rows {
			t.Errorf("%s: %d rows, want %d", l.text, count[uint64(i)], l.rows)
		}
	}
	row := func(seq uint64, elem uint32) Result {
		for _, r := range c.Res {
			if r.Seq == seq && r.Elem == elem {
				return r
			}
		}
		t.Fatalf("no row %d/%d", seq, elem)
		return Result{}
	}
	// d8.2x16x32nn: element 16*32+5 is block 1, row 0, column 5: byte 21
	// of the surface, which holds 2; the last is block 1, row 31, column 15.
	if r := row(11, 517); r.Addr != 0x10015 || r.Value != 2 {
		t.Errorf("d8 nn element 517: %+v, want 0x10015 = 2", r)
	}
	if r := row(11, 1023); r.Addr != 0x10000+31*64+31 || r.Value != 0 {
		t.Errorf("d8 nn element 1023: %+v", r)
	}
	// d16.1x32x16tn: register row x holds column x; element 17 is x=1,
	// y=1: bytes 0x10042..43 = 3, 4.
	if r := row(12, 17); r.Addr != 0x10042 || r.Value != 0x0403 {
		t.Errorf("d16 tn element 17: %+v, want 0x10042 = 0x0403", r)
	}
	// d16.1x16x32nt: element 1 packs row 1 of column 0 above row 0.
	if r := row(13, 1); r.Addr != 0x10040 || r.Value != 0x0201 {
		t.Errorf("d16 nt element 1: %+v, want 0x10040 = 0x0201", r)
	}
	// The store: VDATA=0:1 puts s in slot s; row y, column x is slot
	// 16y + x, at 0x10000 + 64y + 2x.
	if v, _ := c.Word("global", -1, 0x10040); v != 17<<16|16 {
		t.Errorf("word 0x10040 = 0x%x, want 0x00110010", v)
	}
	if v, _ := c.Word("global", -1, 0x10000+31*64+28); v != 511<<16|510 {
		t.Errorf("last stored word = 0x%x, want 0x01ff01fe", v)
	}
}

// randomLSC writes a random LSC trace: loads, stores and atomics of every
// integer sub-op, vector, transposed, strided and quad forms, scales,
// offsets, address sizes, out-of-bounds lanes, append counters, masks,
// predicates, groups and warps.
func randomLSC(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x100\n.region shared 0x0 0x80\n.region bti(0x4) 0x0 0x40\n")
	fmt.Fprintf(&b, ".init global 0x1000 u32 %d %d %d %d\n", r.Uint32(), r.Uint32(), r.Uint32(), r.Uint32())
	atomics := []string{"iinc", "idec", "load", "store", "iadd", "isub", "smin", "smax", "umin", "umax", "icas", "and", "or", "xor"}
	extra := map[string]int{"iinc": 0, "idec": 0, "load": 0, "icas": 2}
	sizes := []struct {
		name  string
		bytes int
	}{{"d8u32", 1}, {"d16u32", 2}, {"d32", 4}, {"d64", 8}, {"d16", 2}, {"d8", 1}, {"d16u32h", 2}}
	execs := []int{1, 2, 4, 8, 16, 32}
	val := func(lanes, bits int) string {
		switch r.IntN(4) {
		case 0:
			return fmt.Sprint(r.IntN(5))
		case 1:
			return fmt.Sprintf("0x%x", r.Uint64()>>(64-bits))
		case 2:
			return fmt.Sprintf("%d:%d", r.IntN(4), r.IntN(3)-1)
		}
		vs := make([]string, lanes)
		for i := range vs {
			vs[i] = fmt.Sprint(r.IntN(3))
		}
		return "[" + strings.Join(vs, ",") + "]"
	}
	for i := 0; i < n; i++ {
		randContext(r, &b)
		exec := execs[r.IntN(len(execs))]
		sfid, space, base := "ugm", "flat", uint64(0x1000)
		switch r.IntN(3) {
		case 1:
			sfid, base = "slm", 0
		case 2:
			space, base = "bti(0x4)", 0
		}
		asize := []string{"a32", "a64"}[r.IntN(2)]
		if sfid == "slm" && r.IntN(2) == 0 {
			asize = "a16"
		}
		pred, binds := "", ""
		if r.IntN(5) == 0 {
			pred = []string{"(P1) ", "(!P1) "}[r.IntN(2)]
			binds += fmt.Sprintf(" P1=0x%x", r.Uint32())
		}
		if r.IntN(4) == 0 {
			binds += fmt.Sprintf(" mask=0x%x", r.Uint32())
		}
		// Address: a register of lane offsets, sometimes scaled, offset,
		// misplaced past the region.
		sz := sizes[r.IntN(len(sizes))]
		scale, imm := 1, 0
		if r.IntN(3) == 0 {
			scale = []int{1, 2, 4}[r.IntN(3)]
		}
		if r.IntN(3) == 0 {
			imm = sz.bytes * r.IntN(4)
		}
		addrExpr := "V12"
		if scale != 1 {
			addrExpr = fmt.Sprintf("%d*V12", scale)
		}
		if imm != 0 {
			addrExpr += fmt.Sprintf("+0x%x", imm)
		}
		aval := func() string {
			start := base / uint64(scale)
			step := uint64(sz.bytes)
			switch r.IntN(8) {
			case 0:
				return fmt.Sprintf("0x%x", start+0x200) // out of bounds
			case 1:
				return fmt.Sprintf("0x%x", start)
			case 2:
				vs := make([]string, exec)
				for i := range vs {
					vs[i] = fmt.Sprintf("0x%x", start+uint64(r.IntN(6))*step)
				}
				return "[" + strings.Join(vs, ",") + "]"
			}
			return fmt.Sprintf("0x%x:%d", start, step*uint64(r.IntN(3)))
		}
		regBits := 32
		if sz.name == "d64" {
			regBits = 64
		} else if sz.name == "d16" {
			regBits = 16
		} else if sz.name == "d8" {
			regBits = 8
		}
		switch k := r.IntN(12); {
		case k < 4: // atomic
			if sz.bytes == 1 {
				sz = sizes[2]
				regBits = 32
			}
			if sz.name == "d16u32h" { // atomics do not take d16u32h
				sz = sizes[1]
			}
			op := atomics[r.IntN(len(atomics))]
			dst := "V13"
			if r.IntN(6) == 0 {
				dst = "%null"
			}
			ne, ok := extra[op]
			if !ok {
				ne = 1
			}
			srcs := ""
			for s := 0; s < ne; s++ {
				name := fmt.Sprintf("V%d", 14+s)
				srcs += " " + name
				binds += fmt.Sprintf(" %s=%s", name, val(exec, regBits))
			}
			if ne == 0 && r.IntN(2) == 0 {
				srcs = " V0 V0"
			}
			fmt.Fprintf(&b, "%slsc_atomic_%s.%s (M1,%d) %s:%s %s[%s]:%s%s | V12=%s%s\n",
				pred, op, sfid, exec, dst, sz.name, space, addrExpr, asize, srcs, aval(), binds)
		case k < 5: // append counter
			fmt.Fprintf(&b, "%slsc_apndctr_atomic_%s.ugm (M1,%d) VDATA:d32 bti(0x%x) V10 | V10=%s%s\n",
				pred, []string{"add", "sub"}[r.IntN(2)], exec, r.IntN(2), val(exec, 32), binds)
		case k < 6: // block2d load or store, over the global region's edges
			b.WriteString(randomBlock2D(r, pred, binds, val))
		case k < 7: // load_status
			vec := []int{1, 2, 4}[r.IntN(3)]
			spec := sz.name
			if vec > 1 {
				spec += fmt.Sprintf("x%d", vec)
			}
			fmt.Fprintf(&b, "%slsc_load_status.%s (M1,%d) V13:%s %s[%s]:%s | V12=%s%s\n",
				pred, sfid, exec, spec, space, addrExpr, asize, aval(), binds)
		default: // load or store, vector, transposed, strided or quad
			vec := []int{1, 1, 2, 3, 4}[r.IntN(5)]
			order, form, aop := "", "", addrExpr
			switch r.IntN(4) {
			case 0:
				exec, vec, order = 1, []int{2, 4, 8, 16}[r.IntN(4)], "t"
			case 1:
				form = "_strided"
				aop = addrExpr
				if r.IntN(2) == 0 {
					aop += fmt.Sprintf(",0x%x", sz.bytes*r.IntN(3))
				}
			case 2:
				if sz.bytes == 4 || sz.bytes == 8 {
					form = "_quad"
				}
			}
			if exec*vec > 256 {
				vec = 1
			}
			spec := fmt.Sprintf("%s%s%s", sz.name, map[bool]string{true: fmt.Sprintf("x%d", vec)}[vec > 1], order)
			lanesElems := exec * vec
			if form == "_quad" {
				chs := []string{"x", "xz", "yw", "xyz", "xzw", "xyzw"}[r.IntN(6)]
				spec = sz.name + "." + chs
				lanesElems = exec * len(chs)
			}
			if r.IntN(2) == 0 {
				dst := "V13"
				if r.IntN(6) == 0 {
					dst = "null"
				}
				fmt.Fprintf(&b, "%slsc_load%s.%s (M1,%d) %s:%s %s[%s]:%s | V12=%s%s\n",
					pred, form, sfid, exec, dst, spec, space, aop, asize, aval(), binds)
			} else {
				data := val(lanesElems, regBits)
				fmt.Fprintf(&b, "%slsc_store%s.%s (M1,%d) %s[%s]:%s V13:%s | V12=%s V13=%s%s\n",
					pred, form, sfid, exec, space, aop, asize, spec, aval(), data, binds)
			}
		}
	}
	return b.String()
}

// randomBlock2D writes one random lsc_load_block2d or lsc_store_block2d
// line on the global space: every data size and transpose/VNNI mode, one
// or two blocks, surfaces that cut the block on any side (X and Y may be
// negative), pitches, occasionally a misaligned base, and a store's whole
// register image bound (trace.LSC.Block2DLayout gives its size).
func randomBlock2D(r *rand.Rand, pred, binds string, val func(lanes, bits int) string) string {
	sizes := []struct {
		name  string
		bytes int
		size  trace.LSCDataSize
	}{{"d8", 1, trace.LSCD8}, {"d16", 2, trace.LSCD16}, {"d32", 4, trace.LSCD32}, {"d64", 8, trace.LSCD64}}
	sz := sizes[r.IntN(len(sizes))]
	l := trace.LSC{Data: sz.size, Blocks: 1 + r.IntN(2), BlockWidth: 1 + r.IntN(8), BlockHeight: 1 + r.IntN(6),
		Transposed: r.IntN(2) == 0, VNNI: r.IntN(2) == 0 && sz.bytes < 8}
	flags := map[bool]string{false: "n", true: "t"}
	store := r.IntN(3) == 0
	if store {
		l.Blocks = 1
	}
	base := 0x1000 + 16*r.IntN(4)
	if r.IntN(10) == 0 {
		base++
	}
	addr := fmt.Sprintf("flat[SB,SW,SH,SP,SX,SY] | SB=0x%x SW=%d SH=%d SP=%d SX=%d SY=%d",
		base, r.IntN(64), r.IntN(8), []int{16, 32, 64}[r.IntN(3)], r.IntN(12)-3, r.IntN(6)-2)
	shape := fmt.Sprintf("%s.%dx%dx%d%s%s", sz.name, l.Blocks, l.BlockWidth, l.BlockHeight, flags[l.Transposed], flags[l.VNNI])
	if !store {
		dst := "VB"
		if r.IntN(6) == 0 {
			dst = "null"
		}
		addr, bind, _ := strings.Cut(addr, " | ")
		return fmt.Sprintf("%slsc_load_block2d.ugm (M1_NM,1) %s:%s %s | %s%s\n", pred, dst, shape, addr, bind, binds)
	}
	_, n := l.Block2DLayout()
	addr, bind, _ := strings.Cut(addr, " | ")
	return fmt.Sprintf("%slsc_store_block2d.ugm (M1_NM,1) %s VB:%s | %s VB=%s%s\n",
		pred, addr, shape, bind, val(n, sz.bytes*8), binds)
}

func TestEngineEqualsReferenceOnRandomLSC(t *testing.T) { equalOnRandom(t, randomLSC, 11) }

func FuzzEngineEqualsReferenceLSC(f *testing.F) { fuzzEqual(f, randomLSC, 11) }

// TestLSCWideLoad: SIMD32 x16 is 512 lane-elements in one instruction; lane
// n element v reads the word at base(n) + 4v, and the conflict statistics
// count every element.
func TestLSCWideLoad(t *testing.T) {
	src := ".init global 0x1000 u32 " + strings.TrimSpace(strings.Repeat("7 ", 16)) + "\n" +
		"lsc_load.ugm (M1,32) V13:d32x16 flat[V12]:a64 | V12=0x1000\n"
	c := replayLSC(t, src)
	if len(c.Res) != 512 {
		t.Fatalf("%d rows, want 512", len(c.Res))
	}
	if r := c.Res[511]; r.Lane != 31 || r.Elem != 15 || r.Addr != 0x103c || r.Value != 7 {
		t.Errorf("last row %+v, want lane 31 elem 15 at 0x103c = 7", r)
	}
	if s := c.Stats[0]; s.Addresses != 16 || s.MaxConflict != 32 {
		t.Errorf("stats %+v, want 16 addresses hit 32 times each", s)
	}
}
