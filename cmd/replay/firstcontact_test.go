package main

// The tests of issue 46 ("first contact") for the command: each is named
// after its item and fails at e361db0.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/examples"
)

// raceTrace is a trace whose exch race leaves 0x1000's final value to the
// order of its lanes (TestExploreOrdersFlag).
const raceTrace = ".region global 0x1000 0x100\n" +
	"atom.global.exch.b32 d, [a], v; | a=0x1000 v=100:1\n" +
	"atom.global.add.u32 d, [h], 1; | h=0x1040:4\n"

// typoTrace fails on its second line, an unknown operation: the error
// comes from the first instruction, after the output directory is made.
const typoTrace = ".region global 0x1000 0x100\n" +
	"atom.global.bogus.u32 d, [a], 1; | a=0x1000\n"

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// flagText is the text of one flag in a usage: its line and the lines
// that continue it.
func flagText(usage, flagName string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(l, "  -"+flagName+" "):
			in = true
		case strings.HasPrefix(l, "  -") || strings.TrimSpace(l) == "":
			in = false
		}
		if in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestItem46_01_TablesAgreeWithRacesAndOrders: -tables names all seven
// tables in the help; naming races runs the races pass (a row, not an
// empty table); naming orders without -explore-orders, and -explore-orders
// or -races with a list that leaves their table out, are usage errors that
// name the fix and write nothing; -explore-orders with orders in the list
// writes its rows.
func TestItem46_01_TablesAgreeWithRacesAndOrders(t *testing.T) {
	cta, err := filepath.Abs(filepath.Join("..", "..", "engine", "testdata", "races", "cta_two_ctas.tasm"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	writeFiles(t, map[string]string{"race.tasm": raceTrace})

	_, usage, _ := replayCmd(t, "help", "replay")
	text := flagText(usage, "tables")
	for _, n := range columnar.AllTableNames() {
		if !strings.Contains(text, n) {
			t.Errorf("the help of -tables does not name the %s table:\n%s", n, text)
		}
	}
	if len(columnar.AllTableNames()) != 7 {
		t.Errorf("%d tables, want 7: %v", len(columnar.AllTableNames()), columnar.AllTableNames())
	}

	// -tables races: the races pass runs, and the row -races finds is there.
	for _, args := range [][]string{{"-tables", "memory,races"}, {"-races"}} {
		out := "races" + strings.Join(args, "")
		if code, _, errOut := replayCmd(t, append(args, "-q", "-o", out, cta)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if n := parquetRows(t, filepath.Join(out, "races.parquet")); n != 1 {
			t.Errorf("%v: the races table has %d rows, want 1 (the .cta atomics of two CTAs)", args, n)
		}
	}
	// -explore-orders with orders listed: the witnesses of the exch race,
	// lane order and 3 random ones (TestExploreOrdersFlag).
	if code, _, errOut := replayCmd(t, "-q", "-tables", "memory,orders", "-explore-orders", "3", "-seed", "11", "-o", "ord", "race.tasm"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := parquetRows(t, filepath.Join("ord", "orders.parquet")); n != 4 {
		t.Errorf("the orders table has %d rows, want 4", n)
	}
	if got := tableDigests(t, "ord"); len(got) != 2 {
		t.Errorf("-tables memory,orders wrote %v, want memory and orders only", got)
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-tables", "orders"}, []string{"-explore-orders K", "-explore-orders 8"}},
		{[]string{"-tables", "memory,orders"}, []string{"-explore-orders K"}},
		{[]string{"-explore-orders", "2", "-tables", "memory"}, []string{"-tables memory,orders", "drop -explore-orders"}},
		{[]string{"-races", "-tables", "memory"}, []string{"-tables memory,races", "drop -races"}},
		{[]string{"-tables", "races", "-partition", "0/2"}, []string{"-tables races", "without -partition"}},
	} {
		code, _, errOut := replayCmd(t, append(tc.args, "-o", "refused", "race.tasm")...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2: %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: %q lacks %q", tc.args, errOut, w)
			}
		}
		if exists("refused") {
			t.Errorf("%v: refused, yet wrote %v", tc.args, tableDigests(t, "refused"))
		}
	}
	code, _, errOut := replayCmd(t, "-tables", "races", "-")
	if code != exitUsage || !strings.Contains(errOut, "-tables races reads the trace in a pass of its own") {
		t.Errorf("-tables races on standard input: exit %d, %q", code, errOut)
	}
}

// TestItem46_02_FailedReplayLeavesNoDirItMade: a replay that fails on an
// instruction (an unknown operation on line 2, a flipped bit in a .zst, the
// races pass) removes the output directory it created, and its parents; a
// directory that was there before stays, with its earlier tables byte for
// byte.
func TestItem46_02_FailedReplayLeavesNoDirItMade(t *testing.T) {
	t.Chdir(t.TempDir())
	demo := examples.SimpleAtomicIntrinsics()
	writeFiles(t, map[string]string{"typo.tasm": typoTrace, "demo.tasm": string(demo)})
	if code, _, errOut := replayCmd(t, "asm", "demo.tasm", "-o", "demo.zst"); code != 0 {
		t.Fatalf("asm: exit %d: %s", code, errOut)
	}
	zst := readFile(t, "demo.zst")
	writeFiles(t, map[string]string{"flip.zst": string(flipBit(zst, len(zst)/3))})
	if code, _, errOut := replayCmd(t, "-q", "-o", "kept", "demo.zst"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	earlier := tableDigests(t, "kept")

	for _, tc := range []struct {
		args    []string
		gone    []string // directories the replay made
		kept    string   // a directory that was there
		errWant string
	}{
		{args: []string{"typo.tasm"}, gone: []string{"typo.tables"}, errWant: "typo.tasm:2:"},
		{args: []string{"flip.zst"}, gone: []string{"flip.tables"}, errWant: "chunk"},
		{args: []string{"-o", "new/nested/out", "typo.tasm"}, gone: []string{"new"}, errWant: "typo.tasm:2:"},
		{args: []string{"-races", "-o", "r/out", "typo.tasm"}, gone: []string{"r"}, errWant: "typo.tasm:2:"},
		{args: []string{"-o", "p/out", "-partition", "1/2", "typo.tasm"}, gone: []string{"p"}, errWant: "typo.tasm:2:"},
		{args: []string{"-o", "kept", "typo.tasm"}, kept: "kept", errWant: "typo.tasm:2:"},
	} {
		code, _, errOut := replayCmd(t, tc.args...)
		if code != exitError || !strings.Contains(errOut, tc.errWant) || !strings.Contains(errOut, "no tables written") {
			t.Errorf("%v: exit %d, %q; want 1 and an error naming %q", tc.args, code, errOut, tc.errWant)
		}
		for _, d := range tc.gone {
			if exists(d) {
				t.Errorf("%v: the failed replay left %s", tc.args, d)
			}
		}
		if tc.kept != "" {
			if got := tableDigests(t, tc.kept); !equalMaps(got, earlier) {
				t.Errorf("%v: %s changed: %v, was %v", tc.args, tc.kept, got, earlier)
			}
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestItem46_03_OutFileIntoMissingDirOrOntoDir: asm, disasm, gen and report
// create the missing parents of -o, as a replay does its output directory;
// a failure removes what they created; an -o that is an existing directory
// is refused before any work (a bad input is not even read), naming it;
// no error names the temporary file.
func TestItem46_03_OutFileIntoMissingDirOrOntoDir(t *testing.T) {
	t.Chdir(t.TempDir())
	writeFiles(t, map[string]string{"t.tasm": raceTrace, "typo.tasm": typoTrace})
	if code, _, errOut := replayCmd(t, "-q", "-o", "t.tables", "t.tasm"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{
		{"asm", "t.tasm", "-o", "a1/a2/t.zst"},
		{"disasm", "t.tasm", "-o", "d1/d2/t.tasm"},
		{"gen", "uniform", "-lane-ops", "1e3", "-q", "-o", "g1/g2/u.zst"},
		{"report", "t.tables", "-q", "-o", "r1/r2/t.html"},
	} {
		code, _, errOut := replayCmd(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
			continue
		}
		out := args[len(args)-1]
		if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
			t.Errorf("%v: %s not written: %v", args, out, err)
		}
		if h := hiddenNames(t, filepath.Dir(out)); len(h) != 0 {
			t.Errorf("%v: left %v", args, h)
		}
	}
	// asm of a bad trace into a missing directory: nothing stays.
	if code, _, errOut := replayCmd(t, "asm", "typo.tasm", "-o", "b1/b2/t.zst"); code != exitError || !strings.Contains(errOut, "typo.tasm:2:") {
		t.Errorf("asm typo.tasm: exit %d, %q", code, errOut)
	}
	if exists("b1") {
		t.Error("a failed asm left b1, which it created")
	}

	// Onto a directory: refused before the input is read (typo.tasm's
	// error, or report's missing directory, would come first otherwise).
	for _, d := range []string{"adir", "adir.zst", "adir.tasm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args    []string
		example string
	}{
		{[]string{"asm", "typo.tasm", "-o", "adir"}, "adir/typo.zst"},
		{[]string{"disasm", "typo.tasm", "-o", "adir"}, "adir/typo.tasm"},
		{[]string{"gen", "nosuchworkload", "-o", "adir.zst"}, "adir.zst/nosuchworkload.zst"},
		{[]string{"gen", "uniform", "-o", "adir.tasm"}, "adir.tasm/uniform.tasm"},
		{[]string{"report", "no-such.tables", "-o", "adir"}, "adir/report.html"},
	} {
		code, _, errOut := replayCmd(t, tc.args...)
		want := "-o " + filepath.FromSlash(tc.args[len(tc.args)-1]) + ": is a directory; name the file to write, such as -o " + filepath.FromSlash(tc.example)
		if code != exitError || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, %q; want 1 and %q", tc.args, code, errOut, want)
		}
		if strings.Contains(errOut, ".tmp-") {
			t.Errorf("%v: the error names the temporary file: %q", tc.args, errOut)
		}
	}
	// A file where a directory must go: the error names it, not a
	// temporary file.
	writeFiles(t, map[string]string{"plain": ""})
	code, _, errOut := replayCmd(t, "asm", "t.tasm", "-o", "plain/sub/t.zst")
	if code != exitError || !strings.Contains(errOut, "plain") || strings.Contains(errOut, ".tmp-") {
		t.Errorf("asm -o plain/sub/t.zst: exit %d, %q", code, errOut)
	}
	for _, d := range []string{"adir", "adir.zst", "adir.tasm"} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s holds %v", d, ents)
		}
	}
}

// TestItem46_04_MistypedOrMisplacedSubcommand: a first argument that is no
// file and is near a subcommand's name is an unknown subcommand, with the
// closest suggested and all listed; a subcommand after replay's flags is
// told to come first; a trace file named like a word still replays.
func TestItem46_04_MistypedOrMisplacedSubcommand(t *testing.T) {
	t.Chdir(t.TempDir())
	writeFiles(t, map[string]string{"t.tasm": raceTrace})
	if code, _, errOut := replayCmd(t, "asm", "t.tasm", "-o", "t.zst"); code != 0 {
		t.Fatalf("asm: exit %d: %s", code, errOut)
	}
	list := strings.Join(subcommandNames(), ", ")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"diss", "t.zst"}, []string{`unknown subcommand "diss"`, "did you mean disasm?", list}},
		{[]string{"diss"}, []string{`unknown subcommand "diss"`, "did you mean disasm?"}},
		{[]string{"mrege", "out", "-o", "m"}, []string{`unknown subcommand "mrege"`, "did you mean merge?"}},
		{[]string{"dif", "a", "b"}, []string{"did you mean diff?"}},
		{[]string{"frobnicate", "t.zst"}, []string{`unknown subcommand "frobnicate"`, list}},
		{[]string{"-q", "gen", "histgram", "-o", "x.zst"}, []string{"gen is a subcommand, so it comes first, and its flags after it: replay gen -q histgram -o x.zst"}},
		{[]string{"-o", "out", "asm", "t.tasm"}, []string{"asm is a subcommand", "replay asm -o out t.tasm"}},
	} {
		code, _, errOut := replayCmd(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2: %q", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: %q lacks %q", tc.args, errOut, w)
			}
		}
	}
	if exists("x.zst") {
		t.Error("the misplaced gen wrote x.zst")
	}
	// Files named like a subcommand, or near one, are traces.
	writeFiles(t, map[string]string{"diss": raceTrace, "gen": raceTrace})
	for _, args := range [][]string{{"diss"}, {"-q", "gen"}} {
		code, _, errOut := replayCmd(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
		if n := args[len(args)-1]; !exists(n + ".tables/memory.parquet") {
			t.Errorf("%v: no %s.tables/memory.parquet", args, n)
		}
	}
	// A missing trace file stays an I/O error, naming it.
	if code, _, errOut := replayCmd(t, "missing.tasm"); code != exitError || !strings.Contains(errOut, "missing.tasm") {
		t.Errorf("missing.tasm: exit %d, %q", code, errOut)
	}
}

// TestItem46_06_WroteLineListsEveryFile: the summary's "wrote" line lists
// exactly the files in the output directory, orders and races included,
// with one separator after an -o that ends in one.
func TestItem46_06_WroteLineListsEveryFile(t *testing.T) {
	cta, err := filepath.Abs(filepath.Join("..", "..", "engine", "testdata", "races", "cta_two_ctas.tasm"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	writeFiles(t, map[string]string{"race.tasm": raceTrace})
	sep := string(filepath.Separator)
	for _, tc := range []struct {
		args []string
		dir  string
	}{
		{[]string{"-o", "out" + sep, "-races", "-explore-orders", "2", cta}, "out"},
		{[]string{"-o", "both" + sep + sep, "-format", "both", "-races", "race.tasm"}, "both"},
		{[]string{"-o", "lean/", "-tables", "memory,orders", "-explore-orders", "2", "race.tasm"}, "lean"},
		{[]string{"-explore-orders", "1", "race.tasm"}, "race.tables"},
	} {
		code, stdout, errOut := replayCmd(t, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		_, line, ok := strings.Cut(stdout, "  wrote         ")
		if !ok {
			t.Fatalf("%v: no wrote line:\n%s", tc.args, stdout)
		}
		line = strings.TrimSpace(line)
		prefix := tc.dir + sep + "{"
		if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, "}") {
			t.Errorf("%v: wrote %q, want %s…}", tc.args, line, prefix)
			continue
		}
		listed := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, prefix), "}"), ",")
		var files []string
		for n := range tableDigests(t, tc.dir) {
			files = append(files, n)
		}
		slices.Sort(listed)
		slices.Sort(files)
		if !slices.Equal(listed, files) {
			t.Errorf("%v: the wrote line lists %v; %s holds %v", tc.args, listed, tc.dir, files)
		}
	}
}

// TestItem46_09_DiffMissingDirExits1: replay diff of a missing directory,
// or of directories one of which lacks a table, is an I/O error: exit 1
// with the error on standard error, as merge and report; bad usage stays 2.
func TestItem46_09_DiffMissingDirExits1(t *testing.T) {
	t.Chdir(t.TempDir())
	writeFiles(t, map[string]string{"t.tasm": raceTrace})
	if code, _, errOut := replayCmd(t, "-q", "-o", "a", "t.tasm"); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := replayCmd(t, "-q", "-tables", "memory", "-o", "lean", "t.tasm"); code != 0 {
		t.Fatal(errOut)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"diff", "a", "nosuch"}, exitError, "nosuch"},
		{[]string{"diff", "-q", "nosuch", "a"}, exitError, "nosuch"},
		{[]string{"diff", "a", "lean"}, exitError, "has the results table"},
		{[]string{"merge", "nosuch", "-o", "m"}, exitError, "nosuch"},
		{[]string{"report", "nosuch", "-o", "r.html"}, exitError, "nosuch"},
		{[]string{"diff", "a"}, exitUsage, "two output directories"},
	} {
		code, _, errOut := replayCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}
