package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/internal/duckdbq"
	"github.com/gpureplay/replay/split"
	"github.com/gpureplay/replay/trace"
)

// splitPipeline runs replay split (m slices), replay -partition i/n DIR
// (every partition) and replay merge of trace tr under root, with the
// replay flags extra, and returns the merged directory.
func splitPipeline(t *testing.T, tr, root string, n, m int, extra ...string) string {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("split-n%d-m%d", n, m))
	for k := range m {
		if code, _, stderr := replayCmd(t, "split", tr, "-partitions", fmt.Sprint(n), "-slice", fmt.Sprintf("%d/%d", k, m), "-o", dir, "-q"); code != 0 {
			t.Fatalf("split %d/%d into %d: %s", k, m, n, stderr)
		}
	}
	parts := dir + "-parts"
	for i := range n {
		args := append([]string{"-partition", fmt.Sprintf("%d/%d", i, n), dir, "-o", parts, "-q",
			"-workers", fmt.Sprint(1 + i%2), "-batch", fmt.Sprint([]int{4096, 5}[i%2])}, extra...)
		if code, _, stderr := replayCmd(t, args...); code != 0 {
			t.Fatalf("partition %d/%d of %s: %s", i, n, dir, stderr)
		}
	}
	merged := dir + "-merged"
	if code, _, stderr := replayCmd(t, "merge", parts, "-o", merged, "-q"); code != 0 {
		t.Fatalf("merge of %s: %s", parts, stderr)
	}
	return merged
}

// TestSplitPipelineEqualsOneReplay: for replay gen workloads in all four
// dialects (a histogram, scattered adds, a BFS, an append queue, and
// spinlocks, whose failed compare-and-swaps fall in any partition), split
// into n = 1, 3 and 8 partitions and M = 1 to 4 slices, each partition
// replayed from its slices and the partitions merged: every table (memory,
// results, instructions, ops, addresses), read through DuckDB, holds
// exactly the single replay's rows, including the instructions whose
// lanes span partitions; and the merged files are the single replay's,
// byte for byte, also for the lean tables (memory, instructions, ops),
// whose partition replays take the split files a block at a time.
func TestSplitPipelineEqualsOneReplay(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	work := []struct{ workload, dialect string }{
		{"histogram", "ptx"}, {"uniform", "sass"}, {"bfs", "visa"}, {"appendqueue", "lsc"},
		{"spinlock", "ptx"}} // (spinlock: failed compare-and-swaps, instructions.cas_failed)
	var queries, what []string
	for _, w := range work {
		name := w.workload + "-" + w.dialect
		tr := filepath.Join(root, name+".zst")
		args := []string{"gen", w.workload, "-dialect", w.dialect, "-lane-ops", "1e4", "-chunk", "40", "-o", tr, "-q"}
		if w.workload == "bfs" {
			args = append(args, "-vertices", "256", "-edge-factor", "4")
		}
		switch w.workload {
		case "uniform":
			args = append(args, "-words", "4Ki")
		case "spinlock": // locks on lines of every partition, a warp's CAS failing on some
			args = append(args, "-words", "1Ki")
		}
		if code, _, stderr := replayCmd(t, args...); code != 0 {
			t.Fatalf("gen %s: %s", name, stderr)
		}
		whole := filepath.Join(root, name, "whole")
		if code, _, stderr := replayCmd(t, tr, "-o", whole, "-q", "-explore"); code != 0 {
			t.Fatalf("%s: %s", name, stderr)
		}
		want := tableDigests(t, whole)
		// The lean tables: the partitions take their split files a block
		// at a time (engine/blocks.go), and merge to the same files.
		lean := []string{"-tables", "memory,instructions,ops"}
		wholeLean := filepath.Join(root, name, "whole-lean")
		if code, _, stderr := replayCmd(t, append([]string{tr, "-o", wholeLean, "-q"}, lean...)...); code != 0 {
			t.Fatalf("%s: %s", name, stderr)
		}
		wantLean := tableDigests(t, wholeLean)
		for _, n := range []int{3, 8} {
			got := tableDigests(t, splitPipeline(t, tr, filepath.Join(root, name, "lean"), n, 2, lean...))
			for f, h := range wantLean {
				if !strings.HasPrefix(f, ".") && got[f] != h {
					t.Errorf("%s, lean tables, n=%d, M=2: merged %s differs from the single replay's", name, n, f)
				}
			}
		}
		for _, n := range []int{1, 3, 8} {
			for m := 1; m <= 4; m++ {
				merged := splitPipeline(t, tr, filepath.Join(root, name), n, m, "-explore")
				got := tableDigests(t, merged)
				for f, h := range want {
					if !strings.HasPrefix(f, ".") && got[f] != h {
						t.Errorf("%s, n=%d, M=%d: merged %s differs from the single replay's", name, n, m, f)
					}
				}
				for _, table := range []string{"memory", "results", "instructions", "ops", "addresses"} {
					one := duckdbq.QuoteString(filepath.Join(whole, table+".parquet"))
					two := duckdbq.QuoteString(filepath.Join(merged, table+".parquet"))
					queries = append(queries, fmt.Sprintf(`SELECT
  (SELECT count(*) FROM (SELECT * FROM %[1]s EXCEPT ALL SELECT * FROM %[2]s)),
  (SELECT count(*) FROM (SELECT * FROM %[2]s EXCEPT ALL SELECT * FROM %[1]s)),
  (SELECT count(*) FROM %[1]s), (SELECT count(*) FROM %[2]s)`, one, two))
					what = append(what, fmt.Sprintf("%s n=%d M=%d %s", name, n, m, table))
				}
			}
		}
	}
	rs, err := duckdbq.QueryBatch(queries)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range rs {
		row := r.Rows[0]
		if row[0] != "0" || row[1] != "0" || row[2] != row[3] || row[2] == "0" && !strings.HasSuffix(what[k], "addresses") {
			t.Errorf("%s: %v rows of the single replay not in the merged table, %v of it not in the single replay's; %v rows and %v", what[k], row[0], row[1], row[2], row[3])
		}
	}
}

// TestRowWindowIsRowGroup: a split sends the rows of each window of
// split.RowWindow seqs to one partition (split.RowPartition), and a
// partition replay cuts its instructions table at the windows of a whole
// replay's row groups (columnar.DefaultBatchRows): the two are one, so that
// each row group of the merged table is one partition's, which the merge
// copies. A lean pipeline of uniform over two windows and part of a
// third, in 3 slices (their edges inside windows) and 3 partitions,
// merges into the single replay's files, byte for byte.
func TestRowWindowIsRowGroup(t *testing.T) {
	if split.RowWindow != columnar.DefaultBatchRows {
		t.Fatalf("split.RowWindow %d, columnar.DefaultBatchRows %d: a partition's row windows are not the merged table's row groups", split.RowWindow, columnar.DefaultBatchRows)
	}
	root := t.TempDir()
	tr := filepath.Join(root, "u.zst")
	laneOps := fmt.Sprint(32 * (2*split.RowWindow + 9000))
	if code, _, stderr := replayCmd(t, "gen", "uniform", "-words", "64Ki", "-lane-ops", laneOps, "-o", tr, "-q"); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	lean := []string{"-tables", "memory,instructions,ops"}
	whole := filepath.Join(root, "whole")
	if code, _, stderr := replayCmd(t, append([]string{tr, "-o", whole, "-q"}, lean...)...); code != 0 {
		t.Fatalf("replay: %s", stderr)
	}
	dir := filepath.Join(root, "split")
	for k := range 3 {
		if code, _, stderr := replayCmd(t, append([]string{"split", tr, "-partitions", "3", "-slice", fmt.Sprintf("%d/3", k), "-o", dir, "-q"}, lean...)...); code != 0 {
			t.Fatalf("split %d/3: %s", k, stderr)
		}
	}
	parts := filepath.Join(root, "parts")
	for i := range 3 {
		if code, _, stderr := replayCmd(t, append([]string{"-partition", fmt.Sprintf("%d/3", i), dir, "-o", parts, "-q"}, lean...)...); code != 0 {
			t.Fatalf("partition %d/3: %s", i, stderr)
		}
	}
	// Partition i's rows are window i's, whole: one row group.
	for i := range 3 {
		md, err := columnar.FileMetadata(filepath.Join(parts, fmt.Sprintf("part=%d", i), "instructions.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		var rg struct{ Ops []json.RawMessage }
		if err := json.Unmarshal([]byte(md[columnar.MetaRowGroups]), &rg); err != nil || len(rg.Ops) != 1 {
			t.Errorf("partition %d: row groups %s (%v); want window %d's alone", i, md[columnar.MetaRowGroups], err, i)
		}
	}
	merged := filepath.Join(root, "merged")
	if code, _, stderr := replayCmd(t, "merge", parts, "-o", merged, "-q"); code != 0 {
		t.Fatalf("merge: %s", stderr)
	}
	sameFiles(t, whole, merged, "memory.parquet", "instructions.parquet", "ops.parquet")
}

// sameFiles checks that the files names of the directories whole and
// merged are the same, byte for byte.
func sameFiles(t *testing.T, whole, merged string, names ...string) {
	t.Helper()
	for _, name := range names {
		a, err := os.ReadFile(filepath.Join(whole, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(merged, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("merged %s: %d bytes, the whole replay's %d: not the same", name, len(b), len(a))
		}
	}
}

// TestSplitRefuses: the replay of a partition refuses, naming the file or
// the slice, a split directory with a missing slice, a slice twice, a
// slice of another trace (even one that differs in one lane's address of
// one record) or of another partition count; replay split refuses bad
// flags.
func TestSplitRefuses(t *testing.T) {
	root := t.TempDir()
	tr := filepath.Join(root, "h.zst")
	other := filepath.Join(root, "o.zst")
	for _, g := range [][]string{{"gen", "histogram", "-lane-ops", "3e3", "-chunk", "20", "-o", tr, "-q"},
		{"gen", "histogram", "-seed", "2", "-lane-ops", "3e3", "-chunk", "20", "-o", other, "-q"}} {
		if code, _, stderr := replayCmd(t, g...); code != 0 {
			t.Fatal(stderr)
		}
	}
	split := func(dir, trace string, n, k, m int) {
		t.Helper()
		if code, _, stderr := replayCmd(t, "split", trace, "-partitions", fmt.Sprint(n), "-slice", fmt.Sprintf("%d/%d", k, m), "-o", dir, "-q"); code != 0 {
			t.Fatalf("split: %s", stderr)
		}
	}
	replayPart := func(dir string, i, n int) (int, string) {
		code, _, stderr := replayCmd(t, "-partition", fmt.Sprintf("%d/%d", i, n), dir, "-o", dir+"-out", "-q")
		return code, stderr
	}
	// A missing slice.
	missing := filepath.Join(root, "missing")
	split(missing, tr, 2, 0, 3)
	split(missing, tr, 2, 2, 3)
	if code, stderr := replayPart(missing, 1, 2); code != exitError || !strings.Contains(stderr, "slice 1 of 3 missing") || !strings.Contains(stderr, "part=1") {
		t.Errorf("a missing slice: exit %d, %q", code, stderr)
	}
	// A slice twice: the file of slice 1 copied under slice 0's name.
	twice := filepath.Join(root, "twice")
	split(twice, tr, 2, 0, 2)
	split(twice, tr, 2, 1, 2)
	b, _ := os.ReadFile(filepath.Join(twice, "part=0", "slice=1.zst"))
	os.WriteFile(filepath.Join(twice, "part=0", "slice=01.zst"), b, 0o644)
	if code, stderr := replayPart(twice, 0, 2); code != exitError || !strings.Contains(stderr, "slice 1 of 2 is there twice") ||
		!strings.Contains(stderr, "slice=01.zst") || !strings.Contains(stderr, "slice=1.zst") {
		t.Errorf("a slice twice: exit %d, %q", code, stderr)
	}
	os.Remove(filepath.Join(twice, "part=0", "slice=01.zst"))
	os.WriteFile(filepath.Join(twice, "part=0", "slice=0.zst"), b, 0o644)
	if code, stderr := replayPart(twice, 0, 2); code != exitError || !strings.Contains(stderr, "slice=0.zst holds slice 1 of 2") {
		t.Errorf("a slice under another's name: exit %d, %q", code, stderr)
	}
	// A slice of another trace.
	mixed := filepath.Join(root, "mixed")
	split(mixed, tr, 2, 0, 2)
	split(mixed, other, 2, 1, 2)
	if code, stderr := replayPart(mixed, 0, 2); code != exitError || !strings.Contains(stderr, "is a slice of another trace") || !strings.Contains(stderr, "slice=1.zst") {
		t.Errorf("slices of two traces: exit %d, %q", code, stderr)
	}
	// A slice of a trace that differs from the other's in one lane's
	// address of one record: the identity (header frame and seek table)
	// tells them apart, though a split task reads only its slice.
	same, changed := filepath.Join(root, "same.zst"), filepath.Join(root, "changed.zst")
	copyChanged(t, tr, same, -1)
	copyChanged(t, tr, changed, 37)
	oneValue := filepath.Join(root, "onevalue")
	split(oneValue, same, 2, 0, 2)
	split(oneValue, changed, 2, 1, 2)
	if code, stderr := replayPart(oneValue, 0, 2); code != exitError || !strings.Contains(stderr, "is a slice of another trace") {
		t.Errorf("slices of two traces differing in one value: exit %d, %q", code, stderr)
	}
	split(oneValue, same, 2, 1, 2) // the slice of the same trace replaces it
	if code, stderr := replayPart(oneValue, 0, 2); code != 0 {
		t.Errorf("slices of one trace: exit %d, %q", code, stderr)
	}
	// A slice file left short or empty, as a power loss can leave an
	// unsynced one: refused, naming it; -sync writes the same bytes.
	short, synced := filepath.Join(root, "short"), filepath.Join(root, "synced")
	split(short, tr, 2, 0, 2)
	split(short, tr, 2, 1, 2)
	if code, _, stderr := replayCmd(t, "split", tr, "-partitions", "2", "-slice", "1/2", "-sync", "-o", synced, "-q"); code != 0 {
		t.Fatalf("split -sync: %s", stderr)
	}
	f := filepath.Join(short, "part=1", "slice=1.zst")
	full, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(synced, "part=1", "slice=1.zst")); err != nil || !bytes.Equal(b, full) {
		t.Errorf("split -sync: %d bytes (%v), without: %d; want the same", len(b), err, len(full))
	}
	for _, n := range []int{len(full) / 2, len(full) - 1, 0} {
		os.WriteFile(f, full[:n], 0o644)
		if code, stderr := replayPart(short, 1, 2); code != exitError || !strings.Contains(stderr, "slice=1.zst") || !strings.Contains(stderr, "seek table") {
			t.Errorf("slice file of %d of its %d bytes: exit %d, %q", n, len(full), code, stderr)
		}
	}
	// Slices of another partition count, and counts of slices.
	counts := filepath.Join(root, "counts")
	split(counts, tr, 3, 0, 2)
	if code, stderr := replayPart(counts, 0, 2); code != exitError || !strings.Contains(stderr, "is partition 0/3, not 0/2") {
		t.Errorf("another partition count: exit %d, %q", code, stderr)
	}
	split(counts, tr, 3, 1, 3)
	if code, stderr := replayPart(counts, 0, 3); code != exitError || !strings.Contains(stderr, "is slice 1 of 3, but") {
		t.Errorf("two slice counts: exit %d, %q", code, stderr)
	}
	if code, stderr := replayPart(filepath.Join(root, "nosuch"), 0, 2); code == 0 {
		t.Errorf("a directory that does not exist: exit 0, %q", stderr)
	}
	for _, bad := range [][]string{
		{"split", tr, "-slice", "0/2", "-o", root},
		{"split", tr, "-partitions", "2", "-slice", "2/2", "-o", root},
		{"split", tr, "-partitions", "2", "-slice", "auto", "-o", root},
		{"split", tr, "-partitions", "2", "-o", root, "-slices", "3"},
		{"split", tr, "-partitions", "2"},
	} {
		if code, _, stderr := replayCmd(t, bad...); code != exitUsage {
			t.Errorf("replay %s: exit %d, %q; want a usage error", strings.Join(bad, " "), code, stderr)
		}
	}
}

// TestSliceAuto: -slice auto takes K and M from a Slurm array task (minus
// its first index) or a Kubernetes Indexed Job, as -partition auto does.
func TestSliceAuto(t *testing.T) {
	for _, c := range []struct {
		flag   string
		slices int
		env    map[string]string
		k, m   int
		err    string
	}{
		{"auto", 0, map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "3"}, 1, 3, ""},
		{"auto", 4, map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, 2, 4, ""},
		{"auto", 0, map[string]string{"JOB_COMPLETION_INDEX": "2", "REPLAY_SLICES": "5"}, 2, 5, ""},
		{"auto", 0, map[string]string{"JOB_COMPLETION_INDEX": "2"}, 0, 0, "how many slices? give -slices N or REPLAY_SLICES"},
		{"auto", 0, nil, 0, 0, "-slice auto: no SLURM_ARRAY_TASK_ID"},
		{"auto", 2, map[string]string{"JOB_COMPLETION_INDEX": "2"}, 0, 0, "index 2 is not one of 2 slices"},
		{"1/3", 0, nil, 1, 3, ""},
		{"3/3", 0, nil, 0, 0, "want K/M"},
		{"1/3", 3, nil, 0, 0, "-slices goes with -slice auto"},
	} {
		k, m, err := sliceOf(c.flag, c.slices, func(s string) string { return c.env[s] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %v: err %v, want %q", c.flag, c.env, err, c.err)
			}
			continue
		}
		if err != nil || k != c.k || m != c.m {
			t.Errorf("%s %v: %d/%d, %v; want %d/%d", c.flag, c.env, k, m, err, c.k, c.m)
		}
	}
}

// sliceFiles hashes the files of every partition directory of a split
// directory, by part=i/name; hidden lists the hidden ones.
func sliceFiles(t *testing.T, dir string) (files map[string]string, hidden []string) {
	t.Helper()
	files = map[string]string{}
	parts, _ := filepath.Glob(filepath.Join(dir, "part=*"))
	for _, p := range parts {
		for name, h := range tableDigests(t, p) {
			rel := filepath.Join(filepath.Base(p), name)
			if strings.HasPrefix(name, ".") {
				hidden = append(hidden, rel)
				continue
			}
			files[rel] = h
		}
	}
	return files, hidden
}

// TestKilledSplit kills replay split (SIGKILL) while it writes a slice's
// files: the directory then holds the earlier split's files of that slice
// as they were, and temporary files; a rerun removes those and writes the
// slice whole, the same files a split into a fresh directory writes.
func TestKilledSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	tmp := t.TempDir()
	big := filepath.Join(tmp, "uniform.zst")
	small := filepath.Join(tmp, "small.zst")
	if out, err := self("gen", "uniform", "-lane-ops", "2e7", "-o", big, "-q").CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	if code, _, stderr := replayCmd(t, "gen", "histogram", "-lane-ops", "1e4", "-o", small, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	dir := filepath.Join(tmp, "split")
	// An earlier split's slice 0 of 2 (of another trace), and its slice 1,
	// which the killed split does not touch.
	for _, k := range []string{"0/2", "1/2"} {
		if code, _, stderr := replayCmd(t, "split", small, "-partitions", "4", "-slice", k, "-o", dir, "-q"); code != 0 {
			t.Fatal(stderr)
		}
	}
	earlier, _ := sliceFiles(t, dir)
	if len(earlier) != 8 {
		t.Fatalf("the earlier split wrote %v", earlier)
	}

	victim := self("split", big, "-partitions", "4", "-slice", "0/2", "-o", dir, "-q")
	var victimErr bytes.Buffer
	victim.Stderr = &victimErr
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()
	reaped := false
	defer func() {
		if !reaped {
			victim.Process.Kill()
			<-exited
		}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ms, _ := filepath.Glob(filepath.Join(dir, "part=3", ".slice=0.zst.tmp-*"))
		if len(ms) == 1 {
			if fi, err := os.Stat(ms[0]); err == nil && fi.Size() > 256<<10 {
				break
			}
		}
		select {
		case err := <-exited:
			reaped = true
			t.Fatalf("the split ended (%v) before it could be killed; stderr: %s", err, victimErr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the split's files did not grow within 2 minutes")
		}
	}
	if err := victim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	reaped = true

	got, hidden := sliceFiles(t, dir)
	t.Logf("the killed split left %v", hidden)
	if len(hidden) != 4 {
		t.Errorf("after the kill: hidden files %v, want a temporary file in each of the 4 partitions", hidden)
	}
	if !reflect.DeepEqual(got, earlier) {
		t.Errorf("the killed split changed the slice files: %v, was %v", got, earlier)
	}
	// What a replay of the partition makes of it: the earlier split's slices.
	if code, _, stderr := replayCmd(t, "-partition", "3/4", dir, "-o", filepath.Join(tmp, "p"), "-q"); code != 0 {
		t.Errorf("the partition of the earlier split after the kill: %s", stderr)
	}

	// The rerun.
	if code, _, stderr := replayCmd(t, "split", big, "-partitions", "4", "-slice", "0/2", "-o", dir, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	fresh := filepath.Join(tmp, "fresh")
	if code, _, stderr := replayCmd(t, "split", big, "-partitions", "4", "-slice", "0/2", "-o", fresh, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	want, _ := sliceFiles(t, fresh)
	got, hidden = sliceFiles(t, dir)
	if len(hidden) != 0 {
		t.Errorf("after the rerun: hidden files %v", hidden)
	}
	for name, h := range want {
		if got[name] != h {
			t.Errorf("after the rerun %s is not what a fresh split writes", name)
		}
	}
	for name, h := range earlier {
		if strings.HasSuffix(name, "slice=1.zst") && got[name] != h {
			t.Errorf("the rerun of slice 0 changed %s", name)
		}
	}
}

// TestSplitNamesHotWords: the summary of a split whose partitions are
// uneven says which partition and names its hottest words; a word whose
// accesses alone exceed 1.25 times the mean partition's is named with its
// share. A Zipf histogram's bin 0 takes about 14% of the lane-ops: more
// than 1.25/32 of them, less than 1.25/8.
func TestSplitNamesHotWords(t *testing.T) {
	root := t.TempDir()
	tr := filepath.Join(root, "z.zst")
	if code, _, stderr := replayCmd(t, "gen", "histogram", "-bins", "4096", "-zipf", "1.1", "-lane-ops", "2e5", "-o", tr, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	for _, c := range []struct {
		n        int
		hot      bool
		contains []string
	}{
		{8, false, []string{"imbalance     partition ", "its hottest words: global 0x10000000 (about 1"}},
		{32, true, []string{"hot word      global 0x10000000 alone: about 1", "one partition holds it whatever n"}},
	} {
		code, out, stderr := replayCmd(t, "split", tr, "-partitions", fmt.Sprint(c.n), "-o", filepath.Join(root, fmt.Sprint(c.n)))
		if code != 0 {
			t.Fatal(stderr)
		}
		for _, w := range c.contains {
			if !strings.Contains(out, w) {
				t.Errorf("n=%d: the summary lacks %q:\n%s", c.n, w, out)
			}
		}
		if got := strings.Contains(out, "hot word"); got != c.hot {
			t.Errorf("n=%d: a hot word named: %v, want %v:\n%s", c.n, got, c.hot, out)
		}
	}
}

// copyChanged copies the binary trace from to the file to, record for
// record, in chunks of 20, with lane 3's address of instruction seq
// change (none when negative) one word on.
func copyChanged(t *testing.T, from, to string, change int64) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	x, err := trace.OpenBinaryIndex(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	r, err := x.Reader(0, x.NumChunks())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	w, err := trace.NewBinaryWriter(&buf, x.Header(), trace.WithChunkInsts(20))
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	for {
		in, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if in.Dir == nil && int64(in.Seq) == change {
			v := &in.Vals[in.Static.Addr]
			if v.Kind != trace.VecList {
				t.Fatalf("instruction %d: its address is not a list", in.Seq)
			}
			v.List[3] += 4
			changed = true
		}
		if err := w.Write(in); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if change >= 0 && !changed {
		t.Fatalf("no instruction %d", change)
	}
	if err := os.WriteFile(to, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSplitBalancesHotLines (issue 48, item 3): a BFS's lane-ops fall on a
// few thousand lines, some of them hot; by their hash alone, one of 8 or 16
// partitions took 1.4 times the mean. split's partition map (a sample of
// the trace's chunks, its heaviest lines given to the least loaded
// partition) brings every partition within 1.25 times the mean, summed
// over M slices whose tasks each derive the map on their own, and the
// partitions' replays count the same lane-ops the split sent them.
func TestSplitBalancesHotLines(t *testing.T) {
	root := t.TempDir()
	tr := filepath.Join(root, "bfs.zst")
	if code, _, stderr := replayCmd(t, "gen", "bfs", "-lane-ops", "3e5", "-chunk", "100", "-o", tr, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	wholeDir := filepath.Join(root, "whole")
	if code, _, stderr := replayCmd(t, tr, "-tables", "memory", "-o", wholeDir, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	whole := tableDigests(t, wholeDir)
	const m = 3
	for _, n := range []int{8, 16} {
		dir := filepath.Join(root, fmt.Sprint(n))
		sum := make([]uint64, n)
		for k := range m {
			code, out, stderr := replayCmd(t, "split", tr, "-partitions", fmt.Sprint(n), "-slice", fmt.Sprintf("%d/%d", k, m), "-o", dir)
			if code != 0 {
				t.Fatal(stderr)
			}
			_, line, ok := strings.Cut(out, "partition lane-ops ")
			line, _, _ = strings.Cut(line, "\n")
			fs := strings.Fields(line)
			if !ok || len(fs) != n {
				t.Fatalf("n=%d slice %d: no partition lane-ops in\n%s", n, k, out)
			}
			for i, f := range fs {
				x, err := strconv.ParseUint(f, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				sum[i] += x
			}
		}
		var total, hi uint64
		for _, x := range sum {
			total += x
			hi = max(hi, x)
		}
		if r := float64(hi) * float64(n) / float64(total); total < 3e5 || r > 1.25 {
			t.Errorf("n=%d: partitions' lane-ops %v (%d in all): the largest %.2fx the mean, want at most 1.25x", n, sum, total, r)
		}
		for i := range n {
			code, out, stderr := replayCmd(t, dir, "-partition", fmt.Sprintf("%d/%d", i, n), "-tables", "memory", "-o", filepath.Join(root, fmt.Sprint(n, "-parts")))
			if code != 0 {
				t.Fatal(stderr)
			}
			if want := fmt.Sprintf("(%d lane-ops)", sum[i]); !strings.Contains(out, want) {
				t.Errorf("n=%d: partition %d's replay does not say %s:\n%s", n, i, want, out)
			}
		}
		merged := filepath.Join(root, fmt.Sprint(n, "-merged"))
		if code, _, stderr := replayCmd(t, "merge", filepath.Join(root, fmt.Sprint(n, "-parts")), "-o", merged, "-q"); code != 0 {
			t.Fatal(stderr)
		}
		if got := tableDigests(t, merged)["memory.parquet"]; got != whole["memory.parquet"] || got == "" {
			t.Errorf("n=%d: the merged memory table differs from the single replay's", n)
		}
	}
}
