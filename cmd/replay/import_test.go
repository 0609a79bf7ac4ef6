package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpureplay/replay/internal/duckdbq"
)

const accelsimData = "../../testdata/accelsim"

// rowsText prints a DuckDB result one row a line, values space-separated.
func rowsText(r *duckdbq.Result) string {
	var b strings.Builder
	for _, row := range r.Rows {
		for i, v := range row {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprint(&b, v)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestImportAccelSimAtomics: the hand-written Accel-Sim trace (ATOM, ATOMG,
// ATOMS and RED in every address compression) imports and replays, and
// DuckDB reads the addresses, instructions and ops rows worked out by hand
// from its lines (testdata/accelsim/atomics, and atomicsWant in package
// accelsim): accesses, warps, groups, max_conflict and sectors.
func TestImportAccelSimAtomics(t *testing.T) {
	duckdbq.Require(t)
	tmp := t.TempDir()
	zst := filepath.Join(tmp, "atomics.zst")
	code, out, errOut := replayCmd(t, "import", "accelsim", filepath.Join(accelsimData, "atomics"), "-o", zst)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	for _, w := range []string{"imported 10 atomics (address-only) from 18 instruction lines of 2 kernel files",
		"skipped atomics the SASS dialect does not take: ATOMS.POPC.INC.32 1", "skipped 7 lines of 3 other opcodes: EXIT 4, LDC 2, IADD3 1"} {
		if !strings.Contains(out, w) {
			t.Errorf("import summary lacks %q:\n%s", w, out)
		}
	}
	dir := filepath.Join(tmp, "t")
	code, out, errOut = replayCmd(t, zst, "-o", dir)
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "{instructions.parquet,ops.parquet,addresses.parquet,races.parquet}") ||
		!strings.Contains(out, "applied       nothing: the trace carries addresses only") {
		t.Errorf("summary:\n%s", out)
	}
	q := func(table string) string { return duckdbq.QuoteString(filepath.Join(dir, table+".parquet")) }
	rs, err := duckdbq.QueryBatch([]string{
		// Every address hit more than once, and shared memory's.
		`SELECT space, "group", printf('%x', addr), accesses, warps, groups FROM ` + q("addresses") +
			` WHERE accesses > 1 OR space = 'shared' ORDER BY space, "group", addr`,
		`SELECT count(*), sum(accesses), max(warps), max(groups) FROM ` + q("addresses") + ` WHERE accesses = 1`,
		`SELECT seq, "group", warp, space, lanes, addresses, max_conflict, sectors FROM ` + q("instructions") + ` ORDER BY seq`,
		`SELECT op, type, space, instructions, lanes, max_conflict, conflict_sum, sectors FROM ` + q("ops") + ` ORDER BY ALL`,
		`SELECT count(*) FROM ` + q("races"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		// 0x…1000: four warps' 32 lanes (block 0 warps 0 and 1, block 1,
		// kernel 2's block, group 2); 0x…3000: the CAS's lanes 0 and 2;
		// shared: block 0's five offsets, block 1's two lanes on 0x10.
		"global -1 7f0000001000 128 4 3\n" +
			"global -1 7f0000003000 2 1 1\n" +
			"shared 0 c 1 1 1\n" +
			"shared 0 10 1 1 1\n" +
			"shared 0 14 1 1 1\n" +
			"shared 0 1c 1 1 1\n" +
			"shared 0 80 1 1 1\n" +
			"shared 1 10 2 1 1\n",
		// Hit once: RED.F32's 16, the CAS's 0x3008 and 0x3040, RED's 32,
		// and block 0's five shared offsets.
		"55 55 1 1\n",
		"0 0 0 global 32 1 32 1\n" +
			"1 0 0 global 16 16 1 2\n" + // 0x2000..0x203c: two sectors
			"2 0 0 global 4 3 2 2\n" + // 0x3000 twice, 0x3008 (one sector), 0x3040
			"3 0 0 global 0 0 0 0\n" + // mask 0, written 1 0x0 0
			"4 0 1 global 32 1 32 1\n" +
			"5 0 1 shared 5 5 1 2\n" + // 0xc 0x10 0x14 0x1c, then 0x80
			"6 1 0 global 32 1 32 1\n" +
			"7 1 0 shared 2 1 2 1\n" +
			"8 2 0 global 32 1 32 1\n" +
			"9 2 0 global 32 32 1 5\n", // 0x4000..0x403c, 0x40bc, 0x40c0..0x40f8
		"add f32 global 1 16 1 1 2\n" +
			"add u32 global 6 160 32 129 9\n" +
			"add u32 shared 2 7 2 3 3\n" +
			"cas u64 global 1 4 2 2 2\n",
		"0\n",
	}
	for i, r := range rs {
		if got := rowsText(r); got != want[i] {
			t.Errorf("query %d:\n%s\nwant:\n%s", i, got, want[i])
		}
	}
}

// TestImportPublishedTraces: every published trace directory of
// testdata/accelsim (three repositories, tracer versions 3, 4 and 5)
// imports and replays: the import reads as many instruction lines as the
// kernel files' `insts =` lines add up to (summed by awk here), none of
// them atomic, and the replay writes the four tables an address-only trace
// has.
func TestImportPublishedTraces(t *testing.T) {
	for _, dir := range []string{"mgpusim-bfs", "mgpusim-dataset-debug", "microgpusim-vectoradd", "microgpusim-matrixmul", "accelsim-framework-my-app"} {
		t.Run(dir, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(accelsimData, dir, "*.traceg"))
			if err != nil || len(files) == 0 {
				t.Fatalf("no kernel file in %s: %v", dir, err)
			}
			awk, err := exec.Command("awk", append([]string{`/^insts = / { s += $3 } END { print s }`}, files...)...).Output()
			if err != nil {
				t.Fatalf("awk: %v", err)
			}
			tmp := t.TempDir()
			zst := filepath.Join(tmp, "p.zst")
			code, out, errOut := replayCmd(t, "import", "accelsim", filepath.Join(accelsimData, dir), "-o", zst)
			if code != 0 {
				t.Fatalf("import: exit %d: %s", code, errOut)
			}
			want := fmt.Sprintf("imported 0 atomics (address-only) from %s instruction lines of %d kernel files", strings.TrimSpace(string(awk)), len(files))
			if !strings.Contains(out, want) {
				t.Errorf("import summary lacks %q:\n%s", want, out)
			}
			code, out, errOut = replayCmd(t, zst, "-o", filepath.Join(tmp, "t"))
			if code != 0 || !strings.Contains(out, "{instructions.parquet,ops.parquet,addresses.parquet,races.parquet}") {
				t.Errorf("replay: exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}

// TestAddressOnlyReplay: an address-only trace refuses the tables and
// flags that need values with the sentence, exit 1 and no output; its
// disasm round-trips through asm to the same bytes.
func TestAddressOnlyReplay(t *testing.T) {
	tmp := t.TempDir()
	zst := filepath.Join(tmp, "a.zst")
	if code, _, errOut := replayCmd(t, "import", "accelsim", filepath.Join(accelsimData, "atomics"), "-o", zst, "-q"); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	for _, args := range [][]string{{"-tables", "memory"}, {"-tables", "instructions,results"}, {"-explore"}, {"-explore-orders", "2"}} {
		dir := filepath.Join(tmp, "out")
		code, out, errOut := replayCmd(t, append([]string{zst, "-o", dir}, args...)...)
		want := "replay: " + zst + ": this trace carries addresses only; its values were not captured; "
		if code != exitError || out != "" || !strings.HasPrefix(errOut, want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", args, code, out, errOut, want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: %s exists after the refusal", args, dir)
		}
	}
	tasm := filepath.Join(tmp, "a.tasm")
	again := filepath.Join(tmp, "again.zst")
	if code, _, errOut := replayCmd(t, "disasm", zst, "-o", tasm); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := replayCmd(t, "asm", tasm, "-o", again); code != 0 {
		t.Fatal(errOut)
	}
	a, _ := os.ReadFile(zst)
	b, _ := os.ReadFile(again)
	text, _ := os.ReadFile(tasm)
	if !bytes.Equal(a, b) || !bytes.HasPrefix(text, []byte(".addresses-only\n")) {
		t.Errorf("import, disasm, asm: %d bytes, then %d; the text starts %q", len(a), len(b), text[:min(len(text), 40)])
	}
}

// TestImportBadTraceWritesNothing: a corrupt or truncated trace is an
// error naming the file, line, column and field, exit 1, and no output.
func TestImportBadTraceWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	src, err := os.ReadFile(filepath.Join(accelsimData, "atomics", "kernel-1.traceg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"bad delta", strings.Replace(string(src), "4 -8 16 100 0", "4 -8 x 100 0", 1), `k.traceg:36:62: mem_addresses (deltas): "x" is not a decimal delta`},
		{"truncated", string(src[:len(src)-200]), "k.traceg:"},
	} {
		in := filepath.Join(tmp, "k.traceg")
		os.WriteFile(in, []byte(tc.text), 0o644)
		outFile := filepath.Join(tmp, "sub", "o.zst")
		code, _, errOut := replayCmd(t, "import", "accelsim", in, "-o", outFile)
		if code != exitError || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, %q; want exit 1 and %q", tc.name, code, errOut, tc.want)
		}
		if _, err := os.Stat(filepath.Join(tmp, "sub")); !os.IsNotExist(err) {
			t.Errorf("%s: the output's directory exists", tc.name)
		}
	}
}

// memTrace is NVBit mem_trace output (mem_trace.cu's format): a launch, an
// ATOMG warp of 4 lanes on two words, a load (skipped), and a RED; with
// values, each access line ends with " - " and a value per lane.
func memTrace(values bool) string {
	lanes := func(first string, n int, zero string) string {
		return strings.TrimSpace(first + " " + strings.Repeat(zero+" ", n))
	}
	atomg := lanes("0x00007f0000001000 0x00007f0000001000 0x00007f0000001004 0x00007f0000001000", 28, "0x0000000000000000")
	ldg := lanes("0x00007f0000002000", 31, "0x0000000000000000")
	red := lanes("0x00007f0000001000", 31, "0x0000000000000000")
	if values {
		atomg += " - " + lanes("0x1 0x2 0x3 0x4", 28, "0x0")
		ldg += " - " + lanes("0x9", 31, "0x0")
		red += " - " + lanes("0x5", 31, "0x0")
	}
	return "------------- NVBit (NVidia Binary Instrumentation Tool) Loaded --------------\n" +
		"MEMTRACE: CTX 0x00005566aabbccdd - LAUNCH - Kernel pc 0x00007f0000000000 - Kernel name count - grid launch id 0 - grid size 2,1,1 - block size 64,1,1 - nregs 16 - shmem 0 - cuda stream id 0\n" +
		"MEMTRACE: CTX 0x00005566aabbccdd - grid_launch_id 0 - CTA 1,0,0 - warp 3 - ATOMG.E.ADD.STRONG.GPU - " + atomg + "\n" +
		"MEMTRACE: CTX 0x00005566aabbccdd - grid_launch_id 0 - CTA 1,0,0 - warp 3 - LDG.E - " + ldg + "\n" +
		"MEMTRACE: CTX 0x00005566aabbccdd - grid_launch_id 0 - CTA 0,0,0 - warp 0 - RED.E.ADD.STRONG.GPU - " + red + "\n" +
		"result: ok\n"
}

// TestImportNVBit: mem_trace's lines become SASS atomics of their CTA
// (linear in the launch's grid) and warp, lanes with address 0 inactive;
// other opcodes and other output are skipped. With a value per lane, the
// values bind Rb and the trace is not address-only.
func TestImportNVBit(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "mem.txt")
	os.WriteFile(in, []byte(memTrace(false)), 0o644)
	zst := filepath.Join(tmp, "m.zst")
	code, out, errOut := replayCmd(t, "import", "nvbit", in, "-o", zst)
	if code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	if !strings.Contains(out, "imported 2 atomics (address-only) from 3 instruction lines") || !strings.Contains(out, "LDG.E 1") {
		t.Errorf("summary:\n%s", out)
	}
	code, text, errOut := replayCmd(t, "disasm", zst)
	if code != 0 {
		t.Fatal(errOut)
	}
	want := ".addresses-only\n.group 1\n.warp 3\n" +
		"ATOMG.E.ADD.STRONG.GPU R0, [R2], R4 | R2=[0x7f0000001000,0x7f0000001000,0x7f0000001004,0x7f0000001000" + strings.Repeat(",0x0", 28) + "] mask=0xf\n" +
		".group 0\n.warp 0\nRED.E.ADD.STRONG.GPU [R2], R4 | R2=0x7f0000001000 mask=0x1\n"
	if text != want {
		t.Errorf("disasm:\n%s\nwant:\n%s", text, want)
	}
	// With values: they bind Rb, and a replay has memory to show.
	os.WriteFile(in, []byte(memTrace(true)), 0o644)
	if code, _, errOut := replayCmd(t, "import", "nvbit", in, "-o", zst, "-q"); code != 0 {
		t.Fatalf("import with values: %s", errOut)
	}
	dir := filepath.Join(tmp, "v")
	if code, _, errOut := replayCmd(t, zst, "-o", dir, "-tables", "memory", "-q"); code != 0 {
		t.Fatalf("replay with values: %s", errOut)
	}
	duckdbq.Require(t)
	r, err := duckdbq.Query(`SELECT printf('%x', addr), value FROM ` + duckdbq.QuoteString(filepath.Join(dir, "memory.parquet")) + ` ORDER BY addr`)
	if err != nil {
		t.Fatal(err)
	}
	// 0x…1000: 1 + 2 + 4 from the ATOMG's lanes 0, 1, 3, then the RED's 5.
	if got := rowsText(r); got != "7f0000001000 12\n7f0000001004 3\n" {
		t.Errorf("memory:\n%s", got)
	}
}

// TestImportHopperClustersRaces: a hand-written Hopper trace of four CTAs
// in two clusters of two (testdata/accelsim/hopper-clusters: each block's
// `cluster id` line) imports with a .cluster record per block, and the
// races pass takes the trace's clusters for PTX .cluster scope. The SASS
// atomics of the trace are .STRONG.GPU (SASS names no cluster scope) and
// race with nothing; .cluster-scoped PTX atomics added to its text form,
// under its own groups, race exactly when their CTAs are in different
// clusters: groups 0 and 1 (cluster 0) on 0x…2000 do not; groups 1 and 2
// (clusters 0 and 1) on 0x…3000 do, though -cluster-size 4 alone would
// put all four in one cluster.
func TestImportHopperClustersRaces(t *testing.T) {
	duckdbq.Require(t)
	tmp := t.TempDir()
	zst := filepath.Join(tmp, "h.zst")
	code, out, errOut := replayCmd(t, "import", "accelsim", filepath.Join(accelsimData, "hopper-clusters"), "-o", zst)
	if code != 0 || !strings.Contains(out, "imported 4 atomics (address-only) from 8 instruction lines of 1 kernel files") {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	code, text, errOut := replayCmd(t, "disasm", zst)
	if code != 0 {
		t.Fatal(errOut)
	}
	for _, want := range []string{".cluster 0\nATOMG", ".group 1\n.cluster 0\nATOMG", ".group 2\n.cluster 1\nATOMG", ".group 3\n.cluster 1\nATOMG"} {
		if !strings.Contains(text, want) {
			t.Errorf("disasm lacks %q:\n%s", want, text)
		}
	}
	ptx := func(group int, addr string) string {
		return fmt.Sprintf(".group %d\natom.global.cluster.add.u32 d, [a], 1; | a=%s mask=0x1\n", group, addr)
	}
	tasm := filepath.Join(tmp, "h.tasm")
	os.WriteFile(tasm, []byte(text+ptx(0, "0x7f0000002000")+ptx(1, "0x7f0000002000")+ptx(1, "0x7f0000003000")+ptx(2, "0x7f0000003000")), 0o644)
	for _, size := range []string{"1", "4"} {
		dir := filepath.Join(tmp, "r"+size)
		if code, _, errOut := replayCmd(t, tasm, "-o", dir, "-tables", "races", "-cluster-size", size, "-q"); code != 0 {
			t.Fatalf("replay: exit %d: %s", code, errOut)
		}
		r, err := duckdbq.Query(`SELECT printf('%x', addr), rule, group_a, group_b, scope_a, scope_b FROM ` +
			duckdbq.QuoteString(filepath.Join(dir, "races.parquet")) + ` ORDER BY addr, rule`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := rowsText(r), "7f0000003000 scope 1 2 cluster cluster\n"; got != want {
			t.Errorf("-cluster-size %s: races\n%swant\n%s", size, got, want)
		}
	}
}
