package accelsim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// mtLaunch is a mem_trace launch line of a grid of sizes grid ("x,y,z"):
// NVBit's current form (MEMTRACE: CTX … - LAUNCH - …), or, old, the
// earlier releases' (Kernel NAME - grid size …).
func mtLaunch(grid string, old bool) string {
	if old {
		return "Kernel count - grid size " + grid + " - block size 64,1,1 - nregs 16 - shmem 0 - cuda stream id 0\n"
	}
	return "MEMTRACE: CTX 0x00005566aabbccdd - LAUNCH - Kernel pc 0x00007f0000000000 - Kernel name count - grid launch id 0 - grid size " +
		grid + " - block size 64,1,1 - nregs 16 - shmem 0 - cuda stream id 0\n"
}

// mtAccess is a mem_trace access line of block cta ("x,y,z") and warp:
// the 32 lanes' addresses, addrs for the first ones and 0 (inactive) for
// the rest, and with vals, " - " and a value a lane (0 past vals), in
// NVBit's current form or, old, the earlier releases'.
func mtAccess(cta string, warp int, op string, addrs, vals []uint64, old bool) string {
	lanes := func(xs []uint64) string {
		var b strings.Builder
		for l := range trace.MaxLanes {
			var x uint64
			if l < len(xs) {
				x = xs[l]
			}
			if l > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "0x%016x", x)
		}
		return b.String()
	}
	s := fmt.Sprintf("CTA %s - warp %d - %s - %s", cta, warp, op, lanes(addrs))
	if vals != nil {
		s += " - " + lanes(vals)
	}
	if !old {
		s = "MEMTRACE: CTX 0x00005566aabbccdd - grid_launch_id 0 - " + s
	}
	return s + "\n"
}

// memTraceInst is what the reader gives for an instruction, its lanes'
// addresses and values taken out of its vectors.
type memTraceInst struct {
	text        string
	group, warp int64
	mask        uint32
	addrs, vals []uint64 // the active lanes', in lane order
	line        int
}

func readMemTrace(t *testing.T, text string) ([]memTraceInst, *MemTraceReader) {
	t.Helper()
	r := NewMemTraceReader(strings.NewReader(text), "mem.txt")
	var out []memTraceInst
	for {
		in, err := r.Next()
		if err == io.EOF {
			return out, r
		}
		if err != nil {
			t.Fatal(err)
		}
		got := memTraceInst{text: in.Static.Text, group: in.Group, warp: in.Warp, mask: in.Mask, line: in.Line}
		for l := range trace.MaxLanes {
			if in.Mask&(1<<l) == 0 {
				continue
			}
			got.addrs = append(got.addrs, in.Vals[in.Static.Addr].Lo(l))
			if len(in.Static.B) == 1 && in.Static.B[0].In >= 0 {
				got.vals = append(got.vals, in.Vals[in.Static.B[0].In].Lo(l))
			}
		}
		out = append(out, got)
	}
}

// TestMemTraceReader: each access line of an atomic becomes an instruction
// of the block's linear id in its launch's grid, after the earlier
// launches' blocks, and of its warp; the lanes whose address is 0 are
// inactive; loads, stores and the program's own output are passed over;
// with values, each lane's value is its operand, in either of NVBit's
// forms.
func TestMemTraceReader(t *testing.T) {
	a := uint64(0x7f0000001000)
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("old=%v", old), func(t *testing.T) {
			text := "------------- NVBit (NVidia Binary Instrumentation Tool) Loaded --------------\n" +
				mtLaunch("2,2,1", old) + // 4 blocks: launch 0's groups 0-3
				mtAccess("1,1,0", 5, "ATOMG.E.ADD.STRONG.GPU", []uint64{a, a + 4, 0, a + 8}, nil, old) +
				mtAccess("0,1,0", 2, "LDG.E", []uint64{a}, nil, old) +
				"the program's own output - CTA-like but not an access\n" +
				mtLaunch("3,1,1", old) + // launch 1's groups 4-6
				mtAccess("2,0,0", 0, "RED.E.ADD.STRONG.GPU", []uint64{a, a}, nil, old) +
				mtAccess("0,0,0", 31, "ATOMG.E.EXCH.STRONG.GPU", []uint64{0, 0, a + 12}, nil, old)
			got, r := readMemTrace(t, text)
			want := []memTraceInst{
				{text: "ATOMG.E.ADD.STRONG.GPU R0, [R2], R4", group: 3, warp: 5, mask: 0b1011, addrs: []uint64{a, a + 4, a + 8}, line: 3},
				{text: "RED.E.ADD.STRONG.GPU [R2], R4", group: 6, warp: 0, mask: 0b11, addrs: []uint64{a, a}, line: 7},
				{text: "ATOMG.E.EXCH.STRONG.GPU R0, [R2], R4", group: 4, warp: 31, mask: 0b100, addrs: []uint64{a + 12}, line: 8},
			}
			checkMemTrace(t, got, want)
			if !r.Header().AddressOnly {
				t.Errorf("lines without values: the header is not address-only")
			}
			if s := r.Stats(); s.Atomics != 3 || s.Lines != 4 {
				t.Errorf("stats: %d atomics of %d access lines, want 3 of 4", s.Atomics, s.Lines)
			}
		})
	}
	t.Run("values", func(t *testing.T) {
		text := mtLaunch("1,1,1", false) +
			mtAccess("0,0,0", 1, "ATOMG.E.ADD.STRONG.GPU", []uint64{a, a, a + 4}, []uint64{7, 0xffffffff, 9}, false) +
			mtAccess("0,0,0", 1, "ATOMG.E.ADD.64.STRONG.GPU", []uint64{a + 16}, []uint64{1 << 40}, false)
		got, r := readMemTrace(t, text)
		checkMemTrace(t, got, []memTraceInst{
			{text: "ATOMG.E.ADD.STRONG.GPU R0, [R2], R4", group: 0, warp: 1, mask: 0b111, addrs: []uint64{a, a, a + 4}, vals: []uint64{7, 0xffffffff, 9}, line: 2},
			{text: "ATOMG.E.ADD.64.STRONG.GPU R0, [R2], R4", group: 0, warp: 1, mask: 1, addrs: []uint64{a + 16}, vals: []uint64{1 << 40}, line: 3},
		})
		if r.Header().AddressOnly {
			t.Errorf("lines with values: the header is address-only")
		}
	})
}

func checkMemTrace(t *testing.T, got, want []memTraceInst) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d instructions, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.text != w.text || g.group != w.group || g.warp != w.warp || g.mask != w.mask || g.line != w.line ||
			fmt.Sprint(g.addrs) != fmt.Sprint(w.addrs) || w.vals != nil && fmt.Sprint(g.vals) != fmt.Sprint(w.vals) {
			t.Errorf("instruction %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// TestMemTraceErrors: a line the reader cannot take is refused with its
// line, column and field, and Next keeps returning that error.
func TestMemTraceErrors(t *testing.T) {
	a := []uint64{0x7f0000001000}
	launch := mtLaunch("2,1,1", false)
	full := mtAccess("0,0,0", 0, "ATOMG.E.ADD.STRONG.GPU", a, nil, false)
	outside := mtAccess("2,0,0", 0, "ATOMG.E.ADD.STRONG.GPU", a, nil, false)
	badWarp := strings.Replace(full, "warp 0", "warp x", 1)
	withVals := mtAccess("1,0,0", 0, "ATOMG.E.ADD.STRONG.GPU", a, []uint64{1}, false)
	// col is the 1-based column of sub in line.
	col := func(line, sub string) int { return strings.Index(line, sub) + 1 }
	cases := []struct {
		name, text, want string
	}{
		{"access before a launch", full, fmt.Sprintf("mem.txt:1:%d: CTA: an access before any launch line", col(full, "CTA "))},
		{"block outside the grid", launch + outside,
			fmt.Sprintf("mem.txt:2:%d: thread block: block 2,0,0 is outside the grid (2,1,1)", col(outside, "2,0,0"))},
		{"warp not a number", launch + badWarp, fmt.Sprintf(`mem.txt:2:%d: warp: "x" is not a number`, col(badWarp, "x - "))},
		{"a lane short", launch + strings.TrimSuffix(full, " 0x0000000000000000\n") + "\n", "addresses: 31 of the 32 lanes' addresses: the line ends early"},
		{"a lane not hexadecimal", launch + strings.Replace(full, "0x00007f0000001000", "0x00007f000000100g", 1), `addresses: lane 0: "0x00007f000000100g" is not a hexadecimal number`},
		{"a 33rd lane", launch + strings.TrimSuffix(full, "\n") + " 0x1\n", `addresses: "0x1" after the 32 lanes' addresses`},
		{"values on one line only", launch + full + withVals,
			fmt.Sprintf("mem.txt:3:%d: values: the first access line set whether lines carry values (false); this one differs", col(withVals, "0x00007f0000001000"))},
		{"a compare-and-swap with one value", launch + mtAccess("0,0,0", 0, "ATOMG.E.CAS.STRONG.GPU", a, []uint64{1}, false),
			"values: ATOMG.E.CAS.STRONG.GPU: a compare-and-swap needs two values a lane (compare and new); the trace has one"},
		{"a value wider than the operand", launch + mtAccess("0,0,0", 0, "ATOMG.E.ADD.STRONG.GPU", a, []uint64{1 << 32}, false),
			"values: lane 0's value 0x100000000 does not fit the 32-bit"},
		{"a MEMTRACE line of neither kind", "MEMTRACE: CTX 0x1 - something else\n", "mem.txt:1:11: a MEMTRACE: line that is neither an access"},
		{"a grid size of no blocks", mtLaunch("2,0,1", false),
			fmt.Sprintf(`mem.txt:1:%d: grid size: "2,0,1": want x,y,z, each a positive number`, col(mtLaunch("2,0,1", false), "2,0,1"))},
		{"a grid size not x,y,z", mtLaunch("2,1", false), `grid size: "2,1": want x,y,z`},
		{"a grid of no blocks but huge sizes", mtLaunch("4294967295,4294967295,0", false), `grid size: "4294967295,4294967295,0": want x,y,z, each a positive number`},
		{"a grid of more than 2^40 blocks", mtLaunch("1048576,1048576,2", false), `grid size: "1048576,1048576,2": more than 2^40 blocks`},
		// 0xffffffff·0xffffffff·2^31 is 2^31 modulo 2^64: a product that
		// wraps around looks like a grid of 2^31 blocks.
		{"a grid whose product wraps", mtLaunch("4294967295,4294967295,2147483648", false), "more than 2^40 blocks"},
		{"a line longer than MaxLine", launch + strings.Repeat("x", MaxLine+1) + "\n", fmt.Sprintf("mem.txt:2: a line longer than %d bytes", MaxLine)},
	}
	for _, c := range cases {
		r := NewMemTraceReader(strings.NewReader(c.text), "mem.txt")
		var err error
		for range 16 {
			if _, err = r.Next(); err != nil {
				break
			}
		}
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an *Error with %q", c.name, err, c.want)
			continue
		}
		if _, again := r.Next(); again != err {
			t.Errorf("%s: Next after the error gave %v, want the error again", c.name, again)
		}
	}
}

// TestMemTraceGroupsAcrossLaunches: the groups of a launch follow the
// earlier launches' blocks up to 2^62 of them, and a launch past that is
// refused, naming its line, rather than numbering groups that wrap around.
// The launches before are stood for by the reader's count of their blocks
// (2^22 launches of 2^40 blocks would be 250 MB of lines).
func TestMemTraceGroupsAcrossLaunches(t *testing.T) {
	text := mtLaunch("1048576,1048576,1", true) +
		mtAccess("1048575,1048575,0", 0, "ATOMG.E.ADD.STRONG.GPU", []uint64{0x1000}, nil, true) +
		mtLaunch("1,1,1", true)
	r := NewMemTraceReader(strings.NewReader(text), "mem.txt")
	r.p.groupLo = maxGroups - 1<<40 + 1 // the earlier launches' blocks
	in, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(maxGroups); in.Group != want {
		t.Errorf("the last block of a launch of 2^40 blocks after 2^62-2^40+1: group %d, want %d", in.Group, want)
	}
	_, err = r.Next()
	if err == nil || !strings.HasPrefix(err.Error(), "mem.txt:3:") || !strings.Contains(err.Error(), "more than 2^62 blocks") {
		t.Errorf("a launch past 2^62 blocks: %v, want an error naming line 3", err)
	}
}

// FuzzMemTraceReader: whatever the bytes, the reader returns instructions
// of a known static, a group and warp in range, and an error or io.EOF,
// never a panic or a loop.
func FuzzMemTraceReader(f *testing.F) {
	a := []uint64{0x7f0000001000, 0x7f0000001004}
	f.Add([]byte(mtLaunch("2,2,1", false) + mtAccess("1,1,0", 3, "ATOMG.E.ADD.STRONG.GPU", a, nil, false) +
		mtAccess("0,0,0", 1, "LDG.E", a, nil, false) + mtAccess("0,1,0", 0, "RED.E.ADD.STRONG.GPU", a, nil, false)))
	f.Add([]byte(mtLaunch("1,1,1", true) + mtAccess("0,0,0", 7, "ATOM.E.EXCH", a, []uint64{1, 2}, true)))
	f.Add([]byte(mtLaunch("1,1,1", false) + mtAccess("0,0,0", 7, "ATOMS.CAS", a, nil, false)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewMemTraceReader(bytes.NewReader(b), "f.txt")
		for i := 0; ; i++ {
			in, err := r.Next()
			if err != nil {
				if _, again := r.Next(); again != err {
					t.Fatalf("Next after %v gave %v", err, again)
				}
				return
			}
			if i > len(b) {
				t.Fatalf("%d instructions from %d bytes", i, len(b))
			}
			if in.Dir != nil || in.Static == nil || len(in.Vals) != len(in.Static.Inputs) || in.Group < 0 || in.Warp < 0 {
				t.Fatalf("instruction %d: %+v", i, in)
			}
		}
	})
}
