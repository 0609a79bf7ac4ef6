package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpureplay/replay/trace/workload"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGenThenReplay: gen writes a binary and a text trace of each workload
// that replay reads back, disasm of the binary is the text, and stderr
// (not a terminal here) gets no progress bar.
func TestGenThenReplay(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, name := range workload.Names() {
		for _, d := range []string{"ptx", "sass", "visa", "lsc"} {
			flags := []string{"gen", name, "-dialect", d, "-seed", "3", "-lane-ops", "5k"}
			if name == "bfs" {
				flags = append(flags, "-vertices", "1Ki", "-edge-factor", "4")
			}
			base := name + "-" + d
			code, out, errOut := replayCmd(t, append(flags, "-o", base+".zst")...)
			if code != 0 {
				t.Fatalf("gen %s %s: exit %d: %s", name, d, code, errOut)
			}
			if errOut != "" {
				t.Errorf("gen %s %s wrote to stderr: %q", name, d, errOut)
			}
			if !strings.HasPrefix(out, "wrote "+base+".zst: "+name+" "+d+",") || !strings.Contains(out, "lane-ops") {
				t.Errorf("gen %s %s printed %q", name, d, out)
			}
			if code, _, errOut := replayCmd(t, append(flags, "-q", "-o", base+".tasm")...); code != 0 {
				t.Fatalf("gen %s %s -o .tasm: exit %d: %s", name, d, code, errOut)
			}
			code, dis, errOut := replayCmd(t, "disasm", base+".zst")
			if code != 0 {
				t.Fatalf("disasm: exit %d: %s", code, errOut)
			}
			if dis != string(readFile(t, base+".tasm")) {
				t.Errorf("%s %s: disasm of the .zst differs from the .tasm", name, d)
			}
			for _, f := range []string{base + ".zst", base + ".tasm"} {
				code, out, errOut := replayCmd(t, "-o", f+".tables", f)
				if code != 0 {
					t.Fatalf("replay %s: exit %d: %s", f, code, errOut)
				}
				if !strings.Contains(out, "faults        0") {
					t.Errorf("replay %s:\n%s", f, out)
				}
				if _, err := os.Stat(filepath.Join(f+".tables", "memory.parquet")); err != nil {
					t.Error(err)
				}
			}
		}
	}
}

func TestGenDeterministic(t *testing.T) {
	t.Chdir(t.TempDir())
	gen := func(out string, extra ...string) []byte {
		args := append([]string{"gen", "histogram", "-zipf", "1.1", "-bins", "1000", "-lane-ops", "1e4", "-chunk", "50", "-o", out}, extra...)
		if code, _, errOut := replayCmd(t, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return readFile(t, out)
	}
	a, b := gen("a.zst"), gen("b.zst")
	if !bytes.Equal(a, b) {
		t.Error("the same flags gave different bytes")
	}
	if c := gen("c.zst", "-seed", "2"); bytes.Equal(a, c) {
		t.Error("-seed 2 gave the bytes of seed 1")
	}
}

func TestGenList(t *testing.T) {
	code, out, _ := replayCmd(t, "gen", "-list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(workload.Names()) {
		t.Fatalf("%d lines for %d workloads:\n%s", len(lines), len(workload.Names()), out)
	}
	for i, n := range workload.Names() {
		if f := strings.Fields(lines[i]); f[0] != n || len(f) < 5 {
			t.Errorf("line %d: %q, want %s and what it models", i, lines[i], n)
		}
	}
}

func TestGenUsageErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "x.zst"}, "gen takes one workload, got 0"},
		{[]string{"nosuch", "-o", "x.zst"}, `unknown workload "nosuch"`},
		{[]string{"uniform"}, "gen needs -o"},
		{[]string{"uniform", "-o", "x.bin"}, "must end in .zst (binary) or .tasm (text)"},
		{[]string{"uniform", "-dialect", "amdgcn", "-o", "x.zst"}, `unknown dialect "amdgcn"`},
		{[]string{"uniform", "-lane-ops", "lots", "-o", "x.zst"}, `"lots" is not a count`},
		{[]string{"uniform", "-lane-ops", "1.5", "-o", "x.zst"}, `"1.5" is not a whole number`},
		{[]string{"uniform", "-lane-ops", "2T", "-o", "x.zst"}, "over the limit"},
		{[]string{"uniform", "-words", "8Gi", "-o", "x.zst"}, "words 8589934592 is outside 1..4294967296"},
		{[]string{"uniform", "-dialect", "visa", "-words", "2Gi", "-o", "x.zst"}, "vISA byte offsets are 32-bit"},
		{[]string{"hotcounter", "-bins", "16", "-o", "x.zst"}, "hotcounter takes no bins"},
		{[]string{"histogram", "-zipf", "-1", "-o", "x.zst"}, "zipf skew -1 is outside"},
		{[]string{"bfs", "-vertices", "1e9", "-o", "x.zst"}, "vertices 1000000000 is outside"},
		{[]string{"uniform", "-chunk", "0", "-o", "x.zst"}, "-chunk: 0 instructions"},
		{[]string{"uniform", "-nosuchflag", "-o", "x.zst"}, "flag provided but not defined"},
		{[]string{"uniform", "extra", "-o", "x.zst"}, "gen takes one workload, got 2"},
	} {
		code, _, errOut := replayCmd(t, append([]string{"gen"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("gen %v: exit %d, %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Errorf("usage errors left files: %v", ents)
	}
}

// TestGenUnwritableLeavesNothing: an -o that cannot be written exits 1
// and leaves no file, not even the temporary one, nor a directory it made.
// (A missing directory is made: TestItem46_03_OutFileIntoMissingDirOrOntoDir.)
func TestGenUnwritableLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// The target is a directory: refused before anything is generated.
	target := filepath.Join(dir, "taken.zst")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := replayCmd(t, "gen", "uniform", "-lane-ops", "1e4", "-o", target)
	if code != exitError || !strings.Contains(errOut, "is a directory") {
		t.Errorf("target is a directory: exit %d, %q; want exit 1", code, errOut)
	}
	// A file where a directory must go.
	if err := os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = replayCmd(t, "gen", "uniform", "-lane-ops", "1e4", "-o", filepath.Join(dir, "plain", "sub", "x.zst"))
	if code != exitError || !strings.Contains(errOut, "not a directory") {
		t.Errorf("a file in the way: exit %d, %q; want exit 1", code, errOut)
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		code, _, errOut = replayCmd(t, "gen", "uniform", "-o", filepath.Join(ro, "x.zst"))
		if code != exitError || !strings.Contains(errOut, "permission denied") {
			t.Errorf("read-only directory: exit %d, %q; want exit 1", code, errOut)
		}
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "plain ro taken.zst" && got != "plain taken.zst" {
		t.Errorf("left behind: %v", names)
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("left in the target directory: %v", ents)
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"1000000", 1_000_000, true}, {"1e6", 1_000_000, true}, {"1E8", 100_000_000, true},
		{"10M", 10_000_000, true}, {"2.5G", 2_500_000_000, true}, {"5k", 5000, true}, {"5K", 5000, true},
		{"64Ki", 65536, true}, {"1Mi", 1 << 20, true}, {"0x100", 256, true}, {"1T", 1e12, true},
		{"", 0, false}, {"M", 0, false}, {"1.5", 0, false}, {"-1", 0, false}, {"1e30", 0, false},
		{"inf", 0, false}, {"NaN", 0, false}, {"0x10M", 0, false}, {"ten", 0, false}, {"1e-3", 0, false},
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := newProgressBar(&b, 1000)
	if p.on {
		t.Fatal("a bytes.Buffer is not a terminal")
	}
	p.on = true // draw as on a terminal
	p.start = p.start.Add(-2 * time.Second)
	p.draw(250, time.Now())
	if got := b.String(); !strings.HasPrefix(got, "\r[#######.......................]  25.0%  250 / 1.00k lane-ops  ") ||
		!strings.Contains(got, "lane-ops/s") {
		t.Errorf("bar: %q", got)
	}
}
