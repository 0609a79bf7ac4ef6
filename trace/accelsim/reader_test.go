package accelsim

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
	"github.com/ulikunitz/xz"
)

const testdata = "../../testdata/accelsim"

// readAll reads every instruction of r; directive records (.cluster)
// are passed over (readClusters keeps them).
func readAll(t testing.TB, r trace.Source) []trace.Inst {
	insts, _ := readClusters(t, r)
	return insts
}

// readClusters reads every instruction of r, and the .cluster directive
// records between them.
func readClusters(t testing.TB, r trace.Source) ([]trace.Inst, []trace.Cluster) {
	t.Helper()
	var out []trace.Inst
	var clu []trace.Cluster
	for {
		in, err := r.Next()
		if err == io.EOF {
			return out, clu
		}
		if err != nil {
			t.Fatal(err)
		}
		if in.Dir != nil {
			if in.Dir.Cluster == nil || in.Static != nil {
				t.Fatalf("a directive record %+v that is not a .cluster", in.Dir)
			}
			clu = append(clu, *in.Dir.Cluster)
			continue
		}
		c := *in
		c.Vals = append([]trace.Vector(nil), in.Vals...)
		for i := range c.Vals {
			c.Vals[i].List = append([]uint64(nil), in.Vals[i].List...)
		}
		out = append(out, c)
	}
}

// awkCounts counts a kernel file's instruction lines with awk, a reader
// that shares nothing with this package: the sum of its `insts =` lines,
// and the lines of each opcode. prefix is the fields before the PC (4
// before version 3, 1 with -enable lineinfo = 1).
func awkCounts(t *testing.T, path string, prefix int) (insts uint64, opcodes map[string]uint64) {
	t.Helper()
	out, err := exec.Command("awk", `/^insts = / { s += $3 } END { print s }`, path).Output()
	if err != nil {
		t.Fatalf("awk: %v", err)
	}
	if insts, err = strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64); err != nil {
		t.Fatalf("awk printed %q", out)
	}
	prog := fmt.Sprintf(`$0 !~ /=/ && $1 ~ /^[0-9a-f]+$/ { nd = $(%d); c[$(%d + nd)]++ } END { for (o in c) print o, c[o] }`, prefix+3, prefix+4)
	out, err = exec.Command("awk", prog, path).Output()
	if err != nil {
		t.Fatalf("awk: %v", err)
	}
	opcodes = map[string]uint64{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			opcodes[f[0]], _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	return insts, opcodes
}

// prefixOf is the fields before the PC in a kernel file's lines.
func prefixOf(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	switch {
	case !strings.Contains(s, "-accelsim tracer version = 3") && !strings.Contains(s, "-accelsim tracer version = 4") &&
		!strings.Contains(s, "-accelsim tracer version = 5"):
		return 4
	case strings.Contains(s, "-enable lineinfo = 1"):
		return 1
	}
	return 0
}

// TestPublishedTraces: every published trace of testdata/accelsim imports;
// its instruction lines are the sum of its `insts =` lines and the
// opcodes skipped are those awk counts, kernel by kernel and for the whole
// directory; .gz and .xz copies read the same.
func TestPublishedTraces(t *testing.T) {
	for _, dir := range []string{"mgpusim-bfs", "mgpusim-dataset-debug", "microgpusim-vectoradd", "microgpusim-matrixmul", "accelsim-framework-my-app"} {
		t.Run(dir, func(t *testing.T) {
			files, err := kernelsList(filepath.Join(testdata, dir, "kernelslist.g"))
			if err != nil {
				t.Fatal(err)
			}
			var wantLines uint64
			wantOps := map[string]uint64{}
			for _, f := range files {
				n, ops := awkCounts(t, f, prefixOf(t, f))
				wantLines += n
				for k, v := range ops {
					wantOps[k] += v
				}
			}
			if wantLines == 0 {
				t.Fatal("awk found no instruction line")
			}
			r, err := Open(filepath.Join(testdata, dir))
			if err != nil {
				t.Fatal(err)
			}
			insts := readAll(t, r)
			s := r.Stats()
			if s.Lines != wantLines || s.Kernels != len(files) {
				t.Errorf("%d instruction lines of %d kernels, the insts lines say %d of %d", s.Lines, s.Kernels, wantLines, len(files))
			}
			if len(insts) != 0 || s.Atomics != 0 || len(s.Unmapped) != 0 {
				t.Errorf("%d atomics, %v unmapped: the trace has none", len(insts), s.Unmapped)
			}
			if !maps.Equal(s.Skipped, wantOps) {
				t.Errorf("skipped %v\nawk counts %v", s.Skipped, wantOps)
			}
			// The first kernel compressed, as the tracer's xz and a gzip.
			raw, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			var gz, xzb bytes.Buffer
			gw := gzip.NewWriter(&gz)
			gw.Write(raw)
			gw.Close()
			xw, err := xz.NewWriter(&xzb)
			if err != nil {
				t.Fatal(err)
			}
			xw.Write(raw)
			xw.Close()
			n1, ops1 := awkCounts(t, files[0], prefixOf(t, files[0]))
			for name, data := range map[string][]byte{"k.traceg.gz": gz.Bytes(), "k.traceg.xz": xzb.Bytes()} {
				p := filepath.Join(tmp, name)
				os.WriteFile(p, data, 0o644)
				r, err := Open(p)
				if err != nil {
					t.Fatal(err)
				}
				readAll(t, r)
				if s := r.Stats(); s.Lines != n1 || !maps.Equal(s.Skipped, ops1) || s.Bytes != int64(len(raw)) {
					t.Errorf("%s: %d lines, %d bytes, skipped %v; want %d, %d, %v", name, s.Lines, s.Bytes, s.Skipped, n1, len(raw), ops1)
				}
			}
		})
	}
}

// atomicsWant is the hand-written trace testdata/accelsim/atomics as the
// reader must hand it out: per instruction its opcode, .group, .warp,
// mask and every active lane's address (worked out from the lines by
// hand: compression 1 is base + i·stride over the run, 2 the base then one
// delta per further active lane, ATOMS taken from -shmem base_addr).
var atomicsWant = []struct {
	text        string
	group, warp int64
	mask        uint32
	addrs       []uint64 // active lanes', in lane order; one for all when len 1 and the mask has more
}{
	{"ATOMG.E.ADD.STRONG.GPU R0, [R2], R4", 0, 0, 0xffffffff, []uint64{0x7f0000001000}},
	{"RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R2], R4", 0, 0, 0xffff, run(0x7f0000002000, 4, 16)},
	{"ATOM.E.CAS.64.STRONG.SYS R0, [R2], R4, R6", 0, 0, 0xf, []uint64{0x7f0000003000, 0x7f0000003008, 0x7f0000003000, 0x7f0000003040}},
	{"RED.E.ADD.STRONG.GPU [R2], R4", 0, 0, 0, nil},
	{"ATOMG.E.ADD.STRONG.GPU R0, [R2], R4", 0, 1, 0xffffffff, []uint64{0x7f0000001000}},
	{"ATOMS.ADD R0, [R2], R4", 0, 1, 0xf1, []uint64{0x10, 0x14, 0xc, 0x1c, 0x80}},
	{"ATOMG.E.ADD.STRONG.GPU R0, [R2], R4", 1, 0, 0xffffffff, []uint64{0x7f0000001000}},
	{"ATOMS.ADD R0, [R2], R4", 1, 0, 0x3, []uint64{0x10, 0x10}},
	{"ATOMG.E.ADD.STRONG.GPU R0, [R2], R4", 2, 0, 0xffffffff, []uint64{0x7f0000001000}},
	{"RED.E.ADD.STRONG.GPU [R2], R4", 2, 0, 0xffffffff, append(run(0x7f0000004000, 4, 16), run(0x7f00000040bc, 4, 16)...)},
}

func run(base, step uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = base + uint64(i)*step
	}
	return out
}

// TestHandwrittenAtomics: ATOM, ATOMG, ATOMS and RED in every address
// compression, tracer versions 4 and 5, lineinfo and cluster lines, a
// second kernel's blocks after the first's.
func TestHandwrittenAtomics(t *testing.T) {
	r, err := Open(filepath.Join(testdata, "atomics"))
	if err != nil {
		t.Fatal(err)
	}
	insts, clusters := readClusters(t, r)
	if !r.Header().AddressOnly {
		t.Error("the header is not address-only")
	}
	// Kernel 2's one block (group 2, after kernel 1's two) is in cluster
	// 0,0,0 of its kernel: cluster 2, numbered as the groups are.
	if want := []trace.Cluster{{Group: 2, ID: 2}}; !slices.Equal(clusters, want) {
		t.Errorf("clusters %+v, want %+v", clusters, want)
	}
	if len(insts) != len(atomicsWant) {
		t.Fatalf("%d atomics, want %d", len(insts), len(atomicsWant))
	}
	for i, w := range atomicsWant {
		in := &insts[i]
		if in.Static.Text != w.text || in.Group != w.group || in.Warp != w.warp || in.Mask != w.mask || in.Seq != uint64(i) {
			t.Errorf("%d: %q group %d warp %d mask %#x seq %d; want %q %d %d %#x", i, in.Static.Text, in.Group, in.Warp, in.Mask, in.Seq, w.text, w.group, w.warp, w.mask)
			continue
		}
		v := &in.Vals[in.Static.Addr]
		k := 0
		for l := 0; l < 32; l++ {
			if w.mask&(1<<l) == 0 {
				continue
			}
			want := w.addrs[0]
			if len(w.addrs) > 1 {
				want = w.addrs[k]
			}
			if got := v.Lo(l); got != want {
				t.Errorf("%d (%s): lane %d address %#x, want %#x", i, w.text, l, got, want)
			}
			k++
		}
	}
	s := r.Stats()
	if s.Lines != 18 || s.Atomics != 10 || !maps.Equal(s.Unmapped, map[string]uint64{"ATOMS.POPC.INC.32": 1}) ||
		!maps.Equal(s.Skipped, map[string]uint64{"EXIT": 4, "LDC": 2, "IADD3": 1}) {
		t.Errorf("stats %+v", s)
	}
}

// line5 is a version 5 kernel around one instruction line.
func line5(version, lines string) string {
	return "-kernel name = k\n-grid dim = (2,1,1)\n-block dim = (32,1,1)\n-shmem base_addr = 0x00007f0100000000\n-accelsim tracer version = " + version +
		"\n-enable lineinfo = 0\n\n#traces format = x\n\n#BEGIN_TB\n\nthread block = 1,0,0\n\nwarp = 0\ninsts = " +
		strconv.Itoa(strings.Count(lines, "\n")) + "\n" + lines + "\n#END_TB\n"
}

// TestDeltasAsWritten: compression 2 has one delta fewer than active lanes,
// as base_delta_compress writes; a reader taking one per active lane (as
// trace_parser.cc's base_delta_decompress does) would take the version 5
// immediate for the last delta, or run off a version 4 line.
func TestDeltasAsWritten(t *testing.T) {
	r := NewReader(strings.NewReader(line5("5", "0100 00000007 1 R5 ATOMG.E.ADD.STRONG.GPU 2 R2 R7 4 2 0x7f0000001000 4 8 12 \n")), "k.traceg")
	insts := readAll(t, r)
	if len(insts) != 1 {
		t.Fatalf("%d instructions", len(insts))
	}
	v := &insts[0].Vals[insts[0].Static.Addr]
	if v.Lo(0) != 0x7f0000001000 || v.Lo(1) != 0x7f0000001004 || v.Lo(2) != 0x7f000000100c || insts[0].Group != 1 {
		t.Errorf("lanes %#x %#x %#x group %d; want 0x7f0000001000 0x7f0000001004 0x7f000000100c group 1", v.Lo(0), v.Lo(1), v.Lo(2), insts[0].Group)
	}
	// One delta per active lane, version 4: one field too many.
	_, err := NewReader(strings.NewReader(line5("4", "0100 00000007 1 R5 ATOMG.E.ADD.STRONG.GPU 2 R2 R7 4 2 0x7f0000001000 4 8 12 \n")), "k.traceg").Next()
	if err == nil || !strings.Contains(err.Error(), `k.traceg:16:74: "12" after the last field (a version 4 line ends with its addresses)`) {
		t.Errorf("error %v", err)
	}
}

// TestBadInput: a corrupt, truncated or foreign file gets an error naming
// the file, line, column and field, never a panic.
func TestBadInput(t *testing.T) {
	good := "0100 ffffffff 1 R5 ATOMG.E.ADD.STRONG.GPU 2 R2 R7 4 1 0x7f0000001000 4 0 \n"
	for _, tc := range []struct{ name, src, want string }{
		{"mask", line5("5", "0100 fffffffg 1 R5 ATOMG.E.ADD 2 R2 R7 4 1 0x10 4 0\n"), `k.traceg:16:6: mask: "fffffffg" is not a hexadecimal number below 2^32`},
		{"compression", line5("5", "0100 ffffffff 1 R5 ATOMG.E.ADD 2 R2 R7 4 3 0x10 4 0\n"), "k.traceg:16:42: address compression: 3: the tracer writes 0 (list), 1 (base, stride) or 2 (base, deltas)"},
		{"stride run", line5("5", "0100 00000005 1 R5 ATOMG.E.ADD 2 R2 R7 4 1 0x10 4 0\n"), "k.traceg:16:42: address compression: base and stride (1) with mask 00000005"},
		{"short list", line5("5", "0100 00000003 1 R5 ATOMG.E.ADD 2 R2 R7 4 0 0x10\n"), "k.traceg:16:48: mem_addresses: missing: the line ends early"},
		{"no immediate", line5("5", "0100 ffffffff 0 EXIT 0 0\n"), "k.traceg:16:25: immediate: missing: a version 5 line ends with its immediate"},
		{"insts short", strings.Replace(line5("5", good), "insts = 1", "insts = 2", 1), "k.traceg:18:1: insts: warp 0 of block 1 has 1 fewer lines than its insts = (line 15) declares"},
		{"insts long", strings.Replace(line5("5", good+good), "insts = 2", "insts = 1", 1), "k.traceg:17:1: insts: an instruction line beyond the declared lines of warp 0 (insts = on line 15)"},
		{"truncated", strings.TrimSuffix(line5("5", good), "\n#END_TB\n"), "k.traceg:16: #END_TB: the file ends inside a thread block: truncated"},
		{"outside grid", strings.Replace(line5("5", good), "thread block = 1,0,0", "thread block = 2,0,0", 1), "k.traceg:12:16: thread block: block 2,0,0 is outside the grid (2,1,1)"},
		{"version", line5("7", good), "k.traceg:5:28: accelsim tracer version: version 7 is unknown: this reader reads the tracer's versions 1.2, 3, 4 and 5"},
		{"cluster outside grid", strings.Replace(line5("5", good), "thread block = 1,0,0\n", "thread block = 1,0,0\ncluster id = 0,1,0\n", 1), "k.traceg:13:14: cluster id: cluster 0,1,0 is outside the grid (2,1,1)"},
		{"grid of more than 2^40 blocks", strings.Replace(line5("5", good), "(2,1,1)", "(1048576,1048576,2)", 1), `k.traceg:2:13: grid dim: "(1048576,1048576,2)": more than 2^40 blocks`},
		// 0xffffffff·0xffffffff·2^31 wraps to 2^31 modulo 2^64.
		{"grid whose product wraps", strings.Replace(line5("5", good), "(2,1,1)", "(4294967295,4294967295,2147483648)", 1), "k.traceg:2:13: grid dim: \"(4294967295,4294967295,2147483648)\": more than 2^40 blocks"},
		{"version 6", line5("6", good), "k.traceg:5:28: accelsim tracer version: version 6 is unknown: this reader reads the tracer's versions 1.2, 3, 4 and 5"},
		{"foreign", "hello world\n", `k.traceg:1:1: "hello world" before the first #BEGIN_TB`},
		{"empty", "", "k.traceg: no #BEGIN_TB: the file ends in the kernel header"},
		{"atomic without addresses", line5("5", "0100 ffffffff 1 R5 ATOMG.E.ADD.STRONG.GPU 2 R2 R7 0 0\n"), "k.traceg:16:51: mem_width: ATOMG.E.ADD.STRONG.GPU with mem_width 0: an atomic has addresses"},
		{"ATOMS beyond 32 bits", line5("5", "0100 00000001 1 R5 ATOMS.ADD 2 R2 R7 4 2 0x100 0\n"), ""},
		{"ATOMS generic", line5("5", "0100 00000001 1 R5 ATOMS.ADD 2 R2 R7 4 2 0x00007f0200000000 0\n"), "k.traceg:16:38: mem_addresses: lane 0's ATOMS address 0x7f0200000000 is not a shared-memory offset"},
		{"binary", "\x00\x01\x02\xff\n", `k.traceg:1:1: "\x00\x01\x02\xff" before the first #BEGIN_TB`},
	} {
		r := NewReader(strings.NewReader(tc.src), "k.traceg")
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if tc.want == "" {
			if err != io.EOF {
				t.Errorf("%s: %v, want no error", tc.name, err)
			}
			continue
		}
		var ae *Error
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

// FuzzAccelSimReader: any input gets instructions or an error, never a
// panic or a hang.
func FuzzAccelSimReader(f *testing.F) {
	for _, name := range []string{"atomics/kernel-1.traceg", "atomics/kernel-2.traceg", "microgpusim-vectoradd/kernel-1.traceg"} {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(line5("3", "0100 00000005 1 R5 ATOMS.CAS 3 R2 R7 R8 4 2 0x10 -4\n")))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b), "f.traceg")
		for i := 0; i < 1<<16; i++ {
			in, err := r.Next()
			if err != nil {
				return
			}
			if in.Dir != nil {
				if c := in.Dir.Cluster; c == nil || in.Static != nil || c.Group < 0 || c.ID < 0 {
					t.Fatalf("record %d: directive %+v", i, in.Dir)
				}
				continue
			}
			if in.Static == nil || len(in.Vals) != len(in.Static.Inputs) {
				t.Fatalf("instruction %d: %+v", i, in)
			}
		}
	})
}

// TestGroupsAcrossKernels: a kernel's groups follow the blocks of the
// kernels before it up to 2^62 of them; a kernel after more is refused,
// naming its file, rather than numbering groups that wrap around, and the
// last kernel's blocks close nothing. The kernels before are stood for by
// the reader's count of their blocks (2^22 kernels of 2^40 blocks).
func TestGroupsAcrossKernels(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Replace(line5("5", "0100 00000001 1 R5 ATOMG.E.ADD.STRONG.GPU 2 R2 R7 4 0 0x7f0000001000 0 \n"), "(2,1,1)", "(1048576,1048576,1)", 1)
	huge = strings.Replace(huge, "thread block = 1,0,0", "thread block = 1048575,1048575,0", 1)
	os.WriteFile(filepath.Join(dir, "kernel-1.traceg"), []byte(huge), 0o644)
	os.WriteFile(filepath.Join(dir, "kernel-2.traceg"), []byte(line5("5", "0100 00000001 1 R5 ATOMG.E.ADD.STRONG.GPU 2 R2 R7 4 0 0x7f0000001000 0 \n")), 0o644)
	for _, list := range []string{"kernel-1.traceg\n", "kernel-1.traceg\nkernel-2.traceg\n"} {
		os.WriteFile(filepath.Join(dir, "kernelslist.g"), []byte(list), 0o644)
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		r.groupLo = maxGroups - 1<<40 + 1 // the kernels before
		in, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if in.Group != maxGroups {
			t.Errorf("the last block of a kernel of 2^40 blocks after 2^62-2^40+1: group %d, want %d", in.Group, int64(maxGroups))
		}
		_, err = r.Next()
		if strings.Count(list, "\n") == 1 {
			if err != io.EOF {
				t.Errorf("the last kernel: %v, want io.EOF", err)
			}
			continue
		}
		var ae *Error
		if !errors.As(err, &ae) || ae.File != filepath.Join(dir, "kernel-2.traceg") || !strings.Contains(err.Error(), "more than 2^62 blocks") {
			t.Errorf("a kernel after 2^62 blocks: %v, want an error naming kernel-2.traceg", err)
		}
	}
}
