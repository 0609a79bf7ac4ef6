package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gpureplay/replay/internal/duckdbq"
	"github.com/gpureplay/replay/split"
)

// leanTables are the tables a combined split's partitions replay.
const leanTables = "memory,instructions,ops"

// combinedPipeline runs replay split -tables memory,instructions,ops (m
// slices), replay -partition i/n DIR -tables memory,instructions,ops
// (every partition) and replay merge of trace tr under root, and returns
// the merged directory and the lane-ops the splits folded and the words
// they came to.
func combinedPipeline(t *testing.T, tr, root string, n, m int) (merged string, folded, words uint64) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("combined-n%d-m%d", n, m))
	re := regexp.MustCompile(`combined +(\d+) lane-ops folded into (\d+) words`)
	for k := range m {
		code, stdout, stderr := replayCmd(t, "split", tr, "-partitions", fmt.Sprint(n), "-slice", fmt.Sprintf("%d/%d", k, m), "-o", dir, "-tables", leanTables)
		if code != 0 {
			t.Fatalf("split %d/%d into %d: %s", k, m, n, stderr)
		}
		if g := re.FindStringSubmatch(stdout); g != nil {
			f, _ := strconv.ParseUint(g[1], 10, 64)
			w, _ := strconv.ParseUint(g[2], 10, 64)
			folded, words = folded+f, words+w
		}
	}
	parts := dir + "-parts"
	for i := range n {
		args := []string{"-partition", fmt.Sprintf("%d/%d", i, n), dir, "-o", parts, "-q", "-tables", leanTables,
			"-workers", fmt.Sprint(1 + i%2)}
		if code, _, stderr := replayCmd(t, args...); code != 0 {
			t.Fatalf("partition %d/%d of %s: %s", i, n, dir, stderr)
		}
	}
	merged = dir + "-merged"
	if code, _, stderr := replayCmd(t, "merge", parts, "-o", merged, "-q"); code != 0 {
		t.Fatalf("merge of %s: %s", parts, stderr)
	}
	return merged, folded, words
}

// sameTablesQuery is a DuckDB query of the rows of table in one directory
// and not the other, both ways, and of both row counts.
func sameTablesQuery(one, two, table string) string {
	a := duckdbq.QuoteString(filepath.Join(one, table+".parquet"))
	b := duckdbq.QuoteString(filepath.Join(two, table+".parquet"))
	return fmt.Sprintf(`SELECT
  (SELECT count(*) FROM (SELECT * FROM %[1]s EXCEPT ALL SELECT * FROM %[2]s)),
  (SELECT count(*) FROM (SELECT * FROM %[2]s EXCEPT ALL SELECT * FROM %[1]s)),
  (SELECT count(*) FROM %[1]s), (SELECT count(*) FROM %[2]s)`, a, b)
}

// checkSameTables runs the queries and reports each table whose rows
// differ.
func checkSameTables(t *testing.T, queries, what []string) {
	t.Helper()
	rs, err := duckdbq.QueryBatch(queries)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range rs {
		row := r.Rows[0]
		if row[0] != "0" || row[1] != "0" || row[2] != row[3] || row[2] == "0" {
			t.Errorf("%s: %v rows of the single replay not in the merged table, %v of it not in the single replay's; %v rows and %v", what[k], row[0], row[1], row[2], row[3])
		}
	}
}

// TestCombinedSplitEqualsOneReplay: replay split -tables
// memory,instructions,ops combines (folds a slice's commuting atomics to
// a word into one), and the merged tables of its partitions' replays are
// the single replay's, byte for byte and through DuckDB, in all four
// dialects, for n = 1, 3 and 8 partitions and M = 1 to 4 slices; the
// splits folded every lane-op of these traces of adds and mins, into at
// most a word a lane-op, and fewer where lanes share words.
func TestCombinedSplitEqualsOneReplay(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	work := []struct{ workload, dialect string }{
		{"histogram", "ptx"}, {"uniform", "sass"}, {"bfs", "visa"}, {"histogram", "lsc"},
		{"spinlock", "ptx"}} // (spinlock: CAS and exch, which never fold)
	var queries, what []string
	for _, w := range work {
		name := w.workload + "-" + w.dialect
		tr := filepath.Join(root, name+".zst")
		args := []string{"gen", w.workload, "-dialect", w.dialect, "-lane-ops", "1e4", "-chunk", "40", "-o", tr, "-q"}
		switch w.workload {
		case "bfs":
			args = append(args, "-vertices", "256", "-edge-factor", "4")
		case "uniform":
			args = append(args, "-words", "4Ki")
		case "spinlock":
			args = append(args, "-words", "1Ki")
		}
		if code, _, stderr := replayCmd(t, args...); code != 0 {
			t.Fatalf("gen %s: %s", name, stderr)
		}
		whole := filepath.Join(root, name, "whole")
		if code, _, stderr := replayCmd(t, tr, "-o", whole, "-q", "-tables", leanTables); code != 0 {
			t.Fatalf("%s: %s", name, stderr)
		}
		want := tableDigests(t, whole)
		for _, n := range []int{1, 3, 8} {
			for m := 1; m <= 4; m++ {
				merged, folded, words := combinedPipeline(t, tr, filepath.Join(root, name), n, m)
				got := tableDigests(t, merged)
				for f, h := range want {
					if !strings.HasPrefix(f, ".") && got[f] != h {
						t.Errorf("%s, n=%d, M=%d: merged %s differs from the single replay's", name, n, m, f)
					}
				}
				switch {
				case w.workload == "spinlock" && folded != 0:
					t.Errorf("%s, n=%d, M=%d: %d lane-ops of compare-and-swaps and exchanges folded", name, n, m, folded)
				case w.workload != "spinlock" && (folded < 9000 || words == 0 || words >= folded):
					t.Errorf("%s, n=%d, M=%d: %d lane-ops folded into %d words; want about 10^4 into fewer", name, n, m, folded, words)
				}
				if n == 3 || m == 4 {
					for _, table := range []string{"memory", "instructions", "ops"} {
						queries = append(queries, sameTablesQuery(whole, merged, table))
						what = append(what, fmt.Sprintf("%s n=%d M=%d %s", name, n, m, table))
					}
				}
			}
		}
	}
	checkSameTables(t, queries, what)
}

// TestCombinedSplitFlushPoints: in each dialect, adds that fold and, on
// the same words in the middle of a slice, a compare-and-swap that
// expects the adds' sums, an exchange (a store in LSC), a float add (a
// float max in vISA), a .init, a signed min (another operation), a
// 64-bit add (another width), xors and an and: every one must see the
// folds before it applied, so the combined split flushes them before it.
// The merged tables equal the single replay's, byte for byte and
// through DuckDB, for n = 3 and M = 1 to 3 (one to six instructions a
// slice).
func TestCombinedSplitFlushPoints(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	var queries, what []string
	for _, d := range []string{"ptx", "sass", "visa", "lsc"} {
		tr := filepath.Join(root, d+".zst")
		if code, _, stderr := replayCmd(t, "asm", filepath.Join("testdata", "combine", d+".tasm"), "-chunk", "3", "-o", tr); code != 0 {
			t.Fatalf("asm %s: %s", d, stderr)
		}
		whole := filepath.Join(root, d, "whole")
		if code, _, stderr := replayCmd(t, tr, "-o", whole, "-q", "-tables", leanTables); code != 0 {
			t.Fatalf("%s: %s", d, stderr)
		}
		want := tableDigests(t, whole)
		for m := 1; m <= 3; m++ {
			merged, folded, _ := combinedPipeline(t, tr, filepath.Join(root, d), 3, m)
			if folded < 100 {
				t.Errorf("%s, M=%d: %d lane-ops folded; the trace has more than 100 of adds", d, m, folded)
			}
			got := tableDigests(t, merged)
			for f, h := range want {
				if !strings.HasPrefix(f, ".") && got[f] != h {
					t.Errorf("%s, M=%d: merged %s differs from the single replay's", d, m, f)
				}
			}
			for _, table := range []string{"memory", "instructions", "ops"} {
				queries = append(queries, sameTablesQuery(whole, merged, table))
				what = append(what, fmt.Sprintf("%s M=%d %s", d, m, table))
			}
		}
	}
	checkSameTables(t, queries, what)
}

// TestCombinedSplitFolds: a combined split of a histogram of 64 bins
// writes its partitions the folds of at most 64 words a slice, not its
// 10^5 lane-ops (the second half of a slice, which meets no flush point,
// takes the first's folds: split.subSlices): its slice files are a fraction of an uncombined split's,
// and the partitions' replays apply 64 words, not the lanes (their lanes
// count 0; the row's partition still writes every instruction's row).
func TestCombinedSplitFolds(t *testing.T) {
	root := t.TempDir()
	tr := filepath.Join(root, "h.zst")
	if code, _, stderr := replayCmd(t, "gen", "histogram", "-bins", "64", "-lane-ops", "1e5", "-chunk", "100", "-o", tr, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	size := func(dir string) int64 {
		var n int64
		m, _ := filepath.Glob(filepath.Join(dir, "part=*", "slice=*.zst"))
		for _, f := range m {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			n += st.Size()
		}
		return n
	}
	plain, comb := filepath.Join(root, "plain"), filepath.Join(root, "comb")
	var foldedBySplit uint64
	for k := range 2 {
		if code, _, stderr := replayCmd(t, "split", tr, "-partitions", "4", "-slice", fmt.Sprintf("%d/2", k), "-o", plain, "-q"); code != 0 {
			t.Fatal(stderr)
		}
		code, stdout, stderr := replayCmd(t, "split", tr, "-partitions", "4", "-slice", fmt.Sprintf("%d/2", k), "-o", comb, "-tables", leanTables)
		if code != 0 {
			t.Fatal(stderr)
		}
		g := regexp.MustCompile(`combined +(\d+) lane-ops folded into (\d+) words`).FindStringSubmatch(stdout)
		if g == nil {
			t.Fatalf("slice %d: no combined line in %q", k, stdout)
		}
		if f, _ := strconv.Atoi(g[1]); f < 45000 {
			t.Errorf("slice %d: %d lane-ops folded, want about half of 10^5", k, f)
		}
		w, _ := strconv.Atoi(g[2])
		if w < 1 || w > 64 {
			t.Errorf("slice %d: folds of %d words, want 1 to 64 (the bins)", k, w)
		}
		foldedBySplit += uint64(w)
	}
	if p, c := size(plain), size(comb); c*4 > p {
		t.Errorf("combined slice files %d bytes, uncombined %d: want less than a quarter", c, p)
	}
	var lanes, folded uint64
	for i := range 4 {
		code, stdout, stderr := replayCmd(t, "-partition", fmt.Sprintf("%d/4", i), comb, "-o", comb+"-out", "-tables", leanTables)
		if code != 0 {
			t.Fatal(stderr)
		}
		g := regexp.MustCompile(`lanes +(\d+) \((\d+) lane-ops\)`).FindStringSubmatch(stdout)
		if g == nil {
			t.Fatalf("partition %d: no lanes line in %q", i, stdout)
		}
		n, _ := strconv.ParseUint(g[2], 10, 64)
		lanes += n
		// The summary says what the partition applied instead: the
		// words its split tasks folded.
		if g := regexp.MustCompile(`folded words +(\d+) `).FindStringSubmatch(stdout); g != nil {
			n, _ := strconv.ParseUint(g[1], 10, 64)
			folded += n
		}
	}
	if lanes != 0 {
		t.Errorf("the partitions of a combined split of adds applied %d lane-ops one by one, want 0 (all folded)", lanes)
	}
	if folded != foldedBySplit {
		t.Errorf("the partitions' summaries name %d folded words, the split tasks' %d", folded, foldedBySplit)
	}
}

// TestCombinedSplitRefuses: a replay of a partition of a combined split
// that would write a per-lane table (results, addresses: the default
// tables name both), or replay another order, refuses by name, with a
// non-zero exit and no tables; replay split refuses an unknown table.
// A split for other tables does not combine, and its slice replays
// with every table.
func TestCombinedSplitRefuses(t *testing.T) {
	root := t.TempDir()
	tr := filepath.Join(root, "h.zst")
	if code, _, stderr := replayCmd(t, "gen", "histogram", "-lane-ops", "3e3", "-chunk", "20", "-o", tr, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	comb := filepath.Join(root, "comb")
	if code, _, stderr := replayCmd(t, "split", tr, "-partitions", "2", "-o", comb, "-tables", "memory,ops,instructions", "-q"); code != 0 {
		t.Fatal(stderr)
	}
	for _, c := range []struct {
		flags []string
		names string
	}{
		{nil, "the default tables (results and addresses among them)"},
		{[]string{"-tables", "memory,results"}, "-tables memory,results"},
		{[]string{"-tables", "instructions,ops,addresses"}, "-tables instructions,ops,addresses"},
		{[]string{"-tables", leanTables, "-explore"}, "-explore"},
		{[]string{"-tables", leanTables, "-order", "random", "-interleave", "4"}, "-interleave"},
		{[]string{"-tables", leanTables, "-order", "reverse"}, "-order reverse"},
	} {
		out := filepath.Join(root, "out")
		code, _, stderr := replayCmd(t, append([]string{"-partition", "1/2", comb, "-o", out, "-q"}, c.flags...)...)
		if code != exitError || !strings.Contains(stderr, filepath.Join("part=1", "slice=0.zst")) ||
			!strings.Contains(stderr, "asks for "+c.names+": split the trace again with -tables") {
			t.Errorf("%v: exit %d, %q", c.flags, code, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: %s written (%v)", c.flags, out, err)
		}
	}
	if code, _, stderr := replayCmd(t, "split", tr, "-partitions", "2", "-o", root, "-tables", "memory,bogus"); code != exitUsage || !strings.Contains(stderr, `no table "bogus"`) {
		t.Errorf("split -tables memory,bogus: exit %d, %q", code, stderr)
	}
	plain := filepath.Join(root, "plain")
	code, stdout, stderr := replayCmd(t, "split", tr, "-partitions", "2", "-o", plain, "-tables", "memory,results")
	if code != 0 || strings.Contains(stdout, "combined") {
		t.Fatalf("split -tables memory,results: exit %d, %q, %q", code, stdout, stderr)
	}
	if code, _, stderr := replayCmd(t, "-partition", "1/2", plain, "-o", filepath.Join(root, "plain-out"), "-q"); code != 0 {
		t.Errorf("a partition of a split for results, every table: exit %d, %q", code, stderr)
	}
}

// TestCombinedSplitCountsEveryLaneOp: a combined split counts the lane-ops
// it folds by line when it flushes them, not lane by lane as it routes;
// its summary's lane-ops per partition are an uncombined split's, exactly,
// for traces of 32-bit adds and mins (gen), of 64-bit adds, xors and
// flushes between them (testdata/combine), and of compare-and-swaps that
// never fold, over 3 and 8 partitions, in 1 and 3 slices.
func TestCombinedSplitCountsEveryLaneOp(t *testing.T) {
	root := t.TempDir()
	var traces []string
	for _, w := range []struct{ workload, dialect string }{
		{"histogram", "ptx"}, {"uniform", "sass"}, {"bfs", "visa"}, {"spinlock", "lsc"}} {
		tr := filepath.Join(root, w.workload+".zst")
		args := []string{"gen", w.workload, "-dialect", w.dialect, "-lane-ops", "2e4", "-chunk", "40", "-o", tr, "-q"}
		switch w.workload {
		case "bfs":
			args = append(args, "-vertices", "512", "-edge-factor", "4")
		case "uniform":
			args = append(args, "-words", "16Ki")
		case "spinlock":
			args = append(args, "-words", "1Ki")
		}
		if code, _, stderr := replayCmd(t, args...); code != 0 {
			t.Fatalf("gen %s: %s", w.workload, stderr)
		}
		traces = append(traces, tr)
	}
	for _, d := range []string{"ptx", "sass", "visa", "lsc"} {
		tr := filepath.Join(root, d+".zst")
		if code, _, stderr := replayCmd(t, "asm", filepath.Join("testdata", "combine", d+".tasm"), "-chunk", "3", "-o", tr); code != 0 {
			t.Fatalf("asm %s: %s", d, stderr)
		}
		traces = append(traces, tr)
	}
	laneOps := regexp.MustCompile(`partition lane-ops +([\d ]+)\n`)
	foldedRe := regexp.MustCompile(`combined +(\d+) lane-ops folded`)
	for _, tr := range traces {
		name := strings.TrimSuffix(filepath.Base(tr), ".zst")
		for _, n := range []int{3, 8} {
			for _, m := range []int{1, 3} {
				var folded uint64
				for k := range m {
					dir := filepath.Join(root, fmt.Sprintf("%s-%d-%d", name, n, m))
					split := []string{"split", tr, "-partitions", fmt.Sprint(n), "-slice", fmt.Sprintf("%d/%d", k, m)}
					code, plain, stderr := replayCmd(t, append(split, "-o", dir+"-plain")...)
					if code != 0 {
						t.Fatalf("%s: %s", name, stderr)
					}
					code, comb, stderr := replayCmd(t, append(split, "-o", dir+"-comb", "-tables", leanTables)...)
					if code != 0 {
						t.Fatalf("%s: %s", name, stderr)
					}
					want, got := laneOps.FindStringSubmatch(plain), laneOps.FindStringSubmatch(comb)
					if want == nil || got == nil {
						t.Fatalf("%s: no partition lane-ops in\n%s\n%s", name, plain, comb)
					}
					if got[1] != want[1] {
						t.Errorf("%s, n=%d, slice %d/%d: combined split's lane-ops per partition %s, uncombined %s", name, n, k, m, got[1], want[1])
					}
					if g := foldedRe.FindStringSubmatch(comb); g != nil {
						f, _ := strconv.ParseUint(g[1], 10, 64)
						folded += f
					}
				}
				if strings.HasPrefix(name, "spinlock") != (folded == 0) {
					t.Errorf("%s, n=%d, M=%d: %d lane-ops folded", name, n, m, folded)
				}
			}
		}
	}
}

// TestSplitWorkersSameFiles: replay split -workers 1 and -workers 2 write
// the same slice files, byte for byte, combined or not, for M = 1 and 2
// slices of scattered adds, a histogram, a BFS (whose hot lines make a
// partition map, from a sample read by each worker), and a trace whose .region comes
// in the first part of a slice (split.subSlices) and whose adds in the
// second fault outside it; and the partitions of the latter, replayed and
// merged, give the single replay's tables (the second part's router knew
// the region, so that no access that faults was folded).
func TestSplitWorkersSameFiles(t *testing.T) {
	root := t.TempDir()
	traces := map[string]string{}
	for _, g := range [][]string{{"uniform"}, {"histogram", "-bins", "64"}, {"bfs"}} {
		tr := filepath.Join(root, g[0]+".zst")
		args := append(append([]string{"gen"}, g...), "-lane-ops", "1e5", "-chunk", "100", "-o", tr, "-q")
		if code, _, stderr := replayCmd(t, args...); code != 0 {
			t.Fatalf("gen %s: %s", g[0], stderr)
		}
		traces[g[0]] = tr
	}
	region := filepath.Join(root, "region.zst")
	if code, _, stderr := replayCmd(t, "asm", filepath.Join("testdata", "combine", "region-parts.tasm"), "-chunk", "3", "-o", region); code != 0 {
		t.Fatalf("asm: %s", stderr)
	}
	traces["region"] = region
	for name, tr := range traces {
		for _, tables := range [][]string{nil, {"-tables", leanTables}} {
			for m := 1; m <= 2; m++ {
				var files [2]map[string]string
				for w := range 2 {
					dir := filepath.Join(root, fmt.Sprintf("%s-%d-m%d-w%d", name, len(tables), m, w+1))
					for k := range m {
						args := append([]string{"split", tr, "-partitions", "3", "-slice", fmt.Sprintf("%d/%d", k, m), "-o", dir, "-q",
							"-workers", fmt.Sprint(w + 1)}, tables...)
						if code, _, stderr := replayCmd(t, args...); code != 0 {
							t.Fatalf("split %s: %s", dir, stderr)
						}
					}
					files[w], _ = sliceFiles(t, dir)
				}
				if len(files[0]) != 3*m || !reflect.DeepEqual(files[0], files[1]) {
					t.Errorf("%s %v M=%d: -workers 1 wrote %v, -workers 2 %v", name, tables, m, files[0], files[1])
				}
			}
		}
	}
	whole := filepath.Join(root, "region-whole")
	if code, _, stderr := replayCmd(t, region, "-o", whole, "-q", "-tables", leanTables); code != 0 {
		t.Fatal(stderr)
	}
	dir := filepath.Join(root, "region-2-m1-w2") // combined, one slice, two workers
	for i := range 3 {
		if code, _, stderr := replayCmd(t, "-partition", fmt.Sprintf("%d/3", i), dir, "-o", dir+"-parts", "-q", "-tables", leanTables); code != 0 {
			t.Fatalf("partition %d/3: %s", i, stderr)
		}
	}
	if code, _, stderr := replayCmd(t, "merge", dir+"-parts", "-o", dir+"-merged", "-q"); code != 0 {
		t.Fatal(stderr)
	}
	want, got := tableDigests(t, whole), tableDigests(t, dir+"-merged")
	for f, h := range want {
		if !strings.HasPrefix(f, ".") && got[f] != h {
			t.Errorf("region trace: merged %s differs from the single replay's", f)
		}
	}
}

// TestCombinedSplitTakesFolds: the second half of a combined slice that
// meets no flush point takes the folds pending at the first half's end,
// composed with its own on the same words, and writes them once at its
// end: for adds of 32 bits (words whose sum wraps to 0 among them), of 64
// bits, xors, signed minima and unsigned maxima, the split folds the 300
// instructions' lanes into their 32 words once (not once a half), and
// the merged tables of its partitions are the single replay's.
func TestCombinedSplitTakesFolds(t *testing.T) {
	root := t.TempDir()
	for name, inst := range map[string]string{
		"add":   "atom.global.add.u32 d, [a], b; | a=0x1000:0x40 b=3:1",
		"wrap":  "atom.global.add.u32 d, [a], b; | a=0x1000:0x44 b=0x20000000:0x1",
		"add64": "atom.global.add.u64 d, [a], b; | a=0x1000:0x48 b=0xffffffff:3",
		"xor":   "atom.global.xor.b32 d, [a], b; | a=0x1000:0x40 b=1:3",
		"min":   "atom.global.min.s32 d, [a], b; | a=0x1000:0x40 b=-9:5",
		"max":   "atom.global.max.u32 d, [a], b; | a=0x1000:0x40 b=7:11",
	} {
		src := strings.Repeat(inst+"\n", 300) // 150 a half: more adds than the combiner queues
		tasm := filepath.Join(root, name+".tasm")
		if err := os.WriteFile(tasm, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		tr := filepath.Join(root, name+".zst")
		if code, _, stderr := replayCmd(t, "asm", tasm, "-chunk", "50", "-o", tr); code != 0 {
			t.Fatalf("asm %s: %s", name, stderr)
		}
		whole := filepath.Join(root, name+"-whole")
		if code, _, stderr := replayCmd(t, tr, "-o", whole, "-q", "-tables", leanTables); code != 0 {
			t.Fatalf("%s: %s", name, stderr)
		}
		merged, folded, words := combinedPipeline(t, tr, filepath.Join(root, name), 3, 1)
		if folded != 300*32 || words != 32 {
			t.Errorf("%s: %d lane-ops folded into %d words, want %d into 32", name, folded, words, 300*32)
		}
		want, got := tableDigests(t, whole), tableDigests(t, merged)
		for f, h := range want {
			if !strings.HasPrefix(f, ".") && got[f] != h {
				t.Errorf("%s: merged %s differs from the single replay's", name, f)
			}
		}
	}
}

// TestStoppedSplitLeavesNothing: a combined split on two workers that
// stops midway (Interrupted, as on SIGINT) leaves no file, and while it
// runs partition 0's directory shows one temporary file, its slice file's:
// the second part's held chunks are in a file unlinked as it is made,
// which a killed split cannot leave behind.
func TestStoppedSplitLeavesNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be unlinked there: its held file has a name until the split ends")
	}
	root := t.TempDir()
	tr := filepath.Join(root, "u.zst")
	if code, _, stderr := replayCmd(t, "gen", "uniform", "-lane-ops", "2e6", "-chunk", "1000", "-o", tr, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	dir := filepath.Join(root, "split")
	var polls atomic.Int32
	var seen atomic.Value
	_, err := split.Split(tr, split.Options{Parts: 4, Slices: 1, Out: dir, Combine: true, Workers: 2,
		Interrupted: func() bool {
			if polls.Add(1) == 4 {
				ms, _ := filepath.Glob(filepath.Join(split.PartDir(dir, 0), ".*"))
				seen.Store(ms)
			}
			return polls.Load() >= 8
		}})
	if err == nil {
		t.Fatalf("the split was not stopped (%d polls)", polls.Load())
	}
	if ms, _ := seen.Load().([]string); len(ms) != 1 {
		t.Errorf("while the split ran, partition 0's directory held %v, want its slice's temporary file alone", ms)
	}
	var left []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("the stopped split left %v", left)
	}
}
