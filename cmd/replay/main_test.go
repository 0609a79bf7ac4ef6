package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/examples"
	"github.com/gpureplay/replay/internal/duckdbq"
)

// replayCmd runs the command in-process and returns its exit code and output.
func replayCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// tableDigests hashes every file in dir, by name.
func tableDigests(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	return m
}

func TestDemoWritesTables(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := replayCmd(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"instructions  5632", "lanes         180224", "faults        0", "memory words  11", "lane-ops/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	got := tableDigests(t, "demo.tables")
	for _, n := range []string{"memory.parquet", "results.parquet", "instructions.parquet", "ops.parquet", "addresses.parquet"} {
		if _, ok := got[n]; !ok {
			t.Errorf("demo.tables lacks %s (has %v)", n, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("demo.tables holds %d files, want 5: %v", len(got), got)
	}
}

// TestTablesIndependentOfShardsAndWorkers: 1, 3 and 64 shards, 1 and 2
// workers write byte-identical tables.
func TestTablesIndependentOfShardsAndWorkers(t *testing.T) {
	t.Chdir(t.TempDir())
	var base map[string]string
	for _, shards := range []string{"1", "3", "64"} {
		for _, workers := range []string{"1", "2"} {
			dir := "s" + shards + "w" + workers
			code, _, errOut := replayCmd(t, "-q", "-shards", shards, "-workers", workers, "-batch", "300", "-o", dir, "-format", "both", "-explore")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			got := tableDigests(t, dir)
			if len(got) != 10 {
				t.Fatalf("%s holds %d files, want 10", dir, len(got))
			}
			if base == nil {
				base = got
				continue
			}
			for n, d := range base {
				if got[n] != d {
					t.Errorf("shards=%s workers=%s: %s differs from shards=1 workers=1", shards, workers, n)
				}
			}
		}
	}
}

// TestDemoTablesInDuckDB reads the demo's tables with DuckDB, a reader that
// shares no code with arrow-go, and checks types, row counts and values.
func TestDemoTablesInDuckDB(t *testing.T) {
	duckdbq.Require(t)
	// duckdbq finds tools/duckdb from the working directory: stay in the module.
	out := filepath.ToSlash(filepath.Join(t.TempDir(), "out"))
	if code, _, errOut := replayCmd(t, "-q", "-explore", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	queries := []string{
		`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM 'out/memory.parquet')`,
		`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM 'out/results.parquet')`,
		`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM 'out/instructions.parquet')`,
		`SELECT space, "group", addr, value FROM 'out/memory.parquet' ORDER BY addr`,
		`SELECT count(*), count(DISTINCT seq), sum(value), max(lane), count(*) FILTER (WHERE fault <> '') FROM 'out/results.parquet'`,
		`SELECT count(*), sum(lanes), max(max_conflict), min(addresses), max(addresses), sum(faults) FROM 'out/instructions.parquet'`,
		`SELECT seq, lane, addr, value FROM 'out/results.parquet' WHERE seq = 11 AND lane IN (0, 31) ORDER BY lane`,
		`SELECT dialect, op, type, space, "group", warp, lanes FROM 'out/instructions.parquet' WHERE seq = 5631`,
		`SELECT count(*), sum(accesses), count(*) FILTER (WHERE warps BETWEEN 352 AND 672 AND groups BETWEEN 34 AND 94), count(*) FILTER (WHERE order_sensitive), bool_or(exact) FROM 'out/addresses.parquet'`,
		`SELECT addr FROM 'out/addresses.parquet' WHERE order_sensitive ORDER BY addr`,
	}
	for i := range queries {
		queries[i] = strings.ReplaceAll(queries[i], "'out/", "'"+out+"/")
	}
	rs, err := duckdbq.QueryBatch(queries)
	if err != nil {
		t.Fatal(err)
	}
	types := func(r *duckdbq.Result) string {
		var parts []string
		for _, row := range r.Rows {
			parts = append(parts, fmt.Sprint(row[0], ":", row[1]))
		}
		return strings.Join(parts, " ")
	}
	wantTypes := []string{
		"space:VARCHAR group:BIGINT addr:UBIGINT value:UINTEGER",
		"seq:UBIGINT lane:UINTEGER elem:UINTEGER addr:UBIGINT value:UBIGINT value_hi:UBIGINT fault:VARCHAR",
		"seq:UBIGINT dialect:VARCHAR op:VARCHAR type:VARCHAR space:VARCHAR group:BIGINT warp:BIGINT lanes:UINTEGER addresses:UINTEGER max_conflict:UINTEGER faults:UINTEGER",
	}
	for i, w := range wantTypes {
		if got := types(rs[i]); !strings.HasPrefix(got, w) {
			t.Errorf("table %d columns:\n got %s\nwant %s…", i, got, w)
		}
	}
	// The final memory the sample's checker demands (see engine's
	// simpleatomics_test.go): add 10*16384, sub -10*16384, exch and cas
	// the last thread, max 16383, min 0, inc 16384 mod 18, dec, and, or, xor.
	wantMem := []uint64{163840, 4294803456, 16383, 16383, 0, 4, 38, 16383, 1, 4294967295, 255}
	if len(rs[3].Rows) != len(wantMem) {
		t.Fatalf("memory has %d rows, want %d", len(rs[3].Rows), len(wantMem))
	}
	for i, row := range rs[3].Rows {
		if row[0] != "global" || row[1] != "-1" || row[2] != fmt.Sprint(0x10000+4*i) || row[3] != fmt.Sprint(wantMem[i]) {
			t.Errorf("memory row %d = %v, want [global -1 %d %d]", i, row, 0x10000+4*i, wantMem[i])
		}
	}
	if got := fmt.Sprint(rs[4].Rows[0]); got != "[180224 5632 "+sumOfResults()+" 31 0]" {
		t.Errorf("results aggregate = %s", got)
	}
	if got := fmt.Sprint(rs[5].Rows[0]); got != "[5632 180224 32 1 1 0]" {
		t.Errorf("instructions aggregate = %s", got)
	}
	// seq 11 is block 0 warp 1's atomicAdd: lanes 0 and 31 are the 33rd
	// and 64th adds, returning 320 and 630.
	if got := fmt.Sprint(rs[6].Rows); got != "[[11 0 65536 320] [11 31 65536 630]]" {
		t.Errorf("results of seq 11 = %s", got)
	}
	if got := fmt.Sprint(rs[7].Rows); got != "[[ptx xor b32 global 63 7 32]]" {
		t.Errorf("last instruction = %s", got)
	}
	// Eleven words, each hit by all 16384 threads from 512 warps in 64
	// groups (estimated within two standard errors of the sketches:
	// engine/sketch.go); -explore marks the exch and cas words
	// (0x10008, 0x1001c).
	if got := fmt.Sprint(rs[8].Rows); got != "[[11 180224 11 2 false]]" {
		t.Errorf("addresses aggregate = %s", got)
	}
	if got := fmt.Sprint(rs[9].Rows); got != "[[65544] [65564]]" {
		t.Errorf("order-sensitive addresses = %s", got)
	}
}

// sumOfResults is the sum of every returned value, recomputed from the
// kernel's definition rather than read from the engine.
func sumOfResults() string {
	const n = 64 * 256
	var sum uint64
	mem := [11]uint32{8: 0xff, 10: 0xff}
	for blk := 0; blk < 64; blk++ {
		for w := 0; w < 8; w++ {
			for call := 0; call < 11; call++ {
				for l := 0; l < 32; l++ {
					tid := uint32(blk*256 + w*32 + l)
					old := mem[call]
					sum += uint64(old)
					switch call {
					case 0:
						mem[0] += 10
					case 1:
						mem[1] -= 10
					case 2:
						mem[2] = tid
					case 3:
						mem[3] = uint32(max(int32(old), int32(tid)))
					case 4:
						mem[4] = uint32(min(int32(old), int32(tid)))
					case 5:
						if old >= 17 {
							mem[5] = 0
						} else {
							mem[5]++
						}
					case 6:
						if old == 0 || old > 137 {
							mem[6] = 137
						} else {
							mem[6]--
						}
					case 7:
						if old == tid-1 {
							mem[7] = tid
						}
					case 8:
						mem[8] &= 2*tid + 7
					case 9:
						mem[9] |= uint32(1) << tid
					case 10:
						mem[10] ^= tid
					}
				}
			}
		}
	}
	_ = n
	return fmt.Sprint(sum)
}

func TestBadInputLeavesNoTables(t *testing.T) {
	t.Chdir(t.TempDir())
	demo := examples.SimpleAtomicIntrinsics()
	if err := os.WriteFile("good.tasm", demo, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := replayCmd(t, "asm", "good.tasm", "-o", "good.zst"); code != 0 {
		t.Fatalf("asm: exit %d: %s", code, errOut)
	}
	zst, err := os.ReadFile("good.zst")
	if err != nil {
		t.Fatal(err)
	}
	// A malformed line deep in the file, after many good instructions.
	lines := strings.Split(string(demo), "\n")
	lines[3000] = "atom.global.add.s33 %r10, [%rd1], 10; | %rd1=0x10000"
	bad := []struct {
		name, file string
		data       []byte
		want       []string
	}{
		{"bad type", "bad.tasm", []byte(strings.Join(lines, "\n")), []string{"bad.tasm:3001:", "unknown PTX atom qualifier .s33"}},
		{"unbound register", "unbound.tasm", []byte("atom.global.add.u32 d, [a], b; | a=0x100\n"), []string{"unbound.tasm:1:", "reads b, which is bound nowhere"}},
		{"short list", "list.tasm", []byte("atom.global.add.u32 d, [a], 1; | a=[1,2,3]\n"), []string{"list.tasm:1:", "3 values; the execution size is 32"}},
		{"value too wide", "wide.tasm", []byte("atom.global.add.u32 d, [a], b; | a=0x100 b=0x1ffffffff\n"), []string{"wide.tasm:1:", "does not fit 32 bits"}},
		{"truncated zst", "trunc.zst", zst[:len(zst)/2], []string{"offset"}},
		{"flipped bit", "flip.zst", flipBit(zst, len(zst)/3), []string{"chunk"}},
		{"empty zst", "empty.zst", zst[:4], []string{"empty.zst", "offset 0x0", "truncated"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(tc.file, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			out := "out-" + strings.ReplaceAll(tc.name, " ", "-")
			code, _, errOut := replayCmd(t, "-o", out, tc.file)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("error %q lacks %q", errOut, w)
				}
			}
			ents, _ := os.ReadDir(out)
			if len(ents) != 0 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("%s holds %v after a failed replay", out, names)
			}
		})
	}
}

func flipBit(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x10
	return c
}

func TestUsageErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{
		{"-shards", "0"},
		{"-workers", "-1"},
		{"-format", "csv"},
		{"-tables", "memory,bogus"},
		{"-nosuchflag"},
		{"a.tasm", "b.tasm"},
		{"asm", "x.tasm"},
		{"-profile", "heap"},
		{"-max-memory", "12x"},
		{"-max-memory", "1000"},
	} {
		code, _, errOut := replayCmd(t, args...)
		if code != 2 || !strings.Contains(errOut, "replay: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with a message", args, code, errOut)
		}
	}
	if code, _, _ := replayCmd(t, "no-such-file.tasm"); code != 1 {
		t.Errorf("missing file: exit %d, want 1", code)
	}
}

// TestAsmDisasmRoundTrip: text -> binary -> text -> binary gives the same
// bytes, and the binary replays to the same tables as the text.
// TestAsmDisasmRoundTrip: asm, disasm, asm gives the same bytes, and the
// text and binary forms replay to the same tables, for the demo and for a
// trace that sets memory up between kernels (.init and .region after
// instructions, per-group shared .init, all four dialects).
func TestAsmDisasmRoundTrip(t *testing.T) {
	directives, err := os.ReadFile("../../testdata/directives.tasm")
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string][]byte{"demo": examples.SimpleAtomicIntrinsics(), "directives": directives} {
		t.Run(name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			if err := os.WriteFile("x.tasm", src, 0o644); err != nil {
				t.Fatal(err)
			}
			steps := [][]string{
				{"asm", "x.tasm", "-o", "a.zst"},
				{"disasm", "a.zst", "-o", "a.tasm"},
				{"asm", "a.tasm", "-o", "b.zst"},
				// The tables record the trace's name (replay.options):
				// the text and the binary trace go by one name, in two
				// directories, for the tables to be the same bytes.
				{"-q", "-o", "text", "t/x"},
				{"-q", "-o", "bin", "b/x"},
			}
			for _, d := range []string{"t", "b"} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile("t/x", src, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, s := range steps {
				if s[len(s)-1] == "b/x" {
					a, _ := os.ReadFile("a.zst")
					if err := os.WriteFile("b/x", a, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if code, _, errOut := replayCmd(t, s...); code != 0 {
					t.Fatalf("%v: exit %d: %s", s, code, errOut)
				}
			}
			a, _ := os.ReadFile("a.zst")
			b, _ := os.ReadFile("b.zst")
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("asm(disasm(asm(x))) differs from asm(x): %d vs %d bytes", len(b), len(a))
			}
			text, bin := tableDigests(t, "text"), tableDigests(t, "bin")
			if len(text) != 5 {
				t.Errorf("%d tables from the text trace, want 5", len(text))
			}
			for n, d := range text {
				if bin[n] != d {
					t.Errorf("%s from the binary trace differs from the text trace's", n)
				}
			}
		})
	}
}

// TestStrictStopsAtFirstFault: without -strict a misaligned lane is
// recorded and the replay goes on; with it, the replay stops with the
// instruction, line, lane and address, and writes no table.
func TestStrictStopsAtFirstFault(t *testing.T) {
	t.Chdir(t.TempDir())
	src := ".region global 0x1000 0x100\n" +
		"atom.global.add.u32 d, [a], 1; | a=0x1000:4\n" +
		"atom.global.add.u32 d, [a], 1; | a=0x1000:4 mask=0x6\n" +
		"atom.global.add.u32 d, [a], 1; | a=[" + strings.Repeat("0x1000,", 5) + "0x1002" + strings.Repeat(",0x1000", 26) + "]\n"
	if err := os.WriteFile("f.tasm", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := replayCmd(t, "-o", "lenient", "f.tasm")
	if code != 0 || !strings.Contains(out, "faults        1") {
		t.Fatalf("lenient: exit %d, %s %s", code, out, errOut)
	}
	code, _, errOut = replayCmd(t, "-strict", "-o", "strict", "f.tasm")
	if code != 1 {
		t.Fatalf("strict: exit %d, want 1", code)
	}
	for _, want := range []string{"line 4", "instruction 2", "lane 5", "misaligned access at 0x1002", "(-strict stops at the first fault)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("strict error %q lacks %q", errOut, want)
		}
	}
	if ents, _ := os.ReadDir("strict"); len(ents) != 0 {
		t.Errorf("strict left %d files", len(ents))
	}
}

// TestReplayProgressLine: the progress line shows the share of the file
// read and the lane-ops replayed; without a terminal nothing is drawn.
func TestReplayProgressLine(t *testing.T) {
	var out bytes.Buffer
	file := &progressReader{r: strings.NewReader(strings.Repeat("x", 1000)), size: 1000}
	if _, err := file.Read(make([]byte, 250)); err != nil {
		t.Fatal(err)
	}
	p := &replayProgress{bar: newProgressBar(&out, 0), file: file}
	if p.bar.on {
		t.Fatal("a bytes.Buffer is not a terminal")
	}
	p.update(engine.Summary{LaneOps: 1500})
	if out.Len() != 0 {
		t.Fatalf("drew %q without a terminal", out.String())
	}
	p.bar.on = true
	p.bar.last = p.bar.last.Add(-time.Second)
	p.update(engine.Summary{LaneOps: 1500})
	if got := out.String(); !strings.Contains(got, " 25.0% of the file") || !strings.Contains(got, "1.50k lane-ops") {
		t.Errorf("progress line %q", got)
	}
	p.clear()
	if !strings.HasSuffix(out.String(), "\r") {
		t.Errorf("clear left %q", out.String())
	}
}
