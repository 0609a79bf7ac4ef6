package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/internal/duckdbq"
)

// TestPartitionsEqualOneReplay: for generated traces of all four dialects
// and the text fixture that sets memory up mid-trace and seeds shared
// memory per group, and n = 1, 2, 3 and 7: the partitions' memory and
// results rows, read through DuckDB as one Hive-partitioned dataset, are
// the single replay's, each row once; and replay merge of the partitions
// writes files byte-identical to the single replay's, every table.
func TestPartitionsEqualOneReplay(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	var traces []string
	for _, d := range []string{"ptx", "sass", "visa", "lsc"} {
		p := filepath.Join(root, "uniform-"+d+".zst")
		if code, _, stderr := replayCmd(t, "gen", "uniform", "-dialect", d, "-words", "16Ki", "-lane-ops", "3e4", "-o", p, "-q"); code != 0 {
			t.Fatalf("gen %s: %s", d, stderr)
		}
		traces = append(traces, p)
	}
	traces = append(traces, filepath.Join("..", "..", "testdata", "directives.tasm"))
	var queries, what []string
	for _, tr := range traces {
		name := strings.TrimSuffix(filepath.Base(tr), filepath.Ext(tr))
		whole := filepath.Join(root, name, "whole")
		if code, _, stderr := replayCmd(t, tr, "-o", whole, "-q", "-explore"); code != 0 {
			t.Fatalf("%s: %s", name, stderr)
		}
		want := tableDigests(t, whole)
		for _, n := range []int{1, 2, 3, 7} {
			parts := filepath.Join(root, name, fmt.Sprint("n", n))
			for i := range n {
				args := []string{tr, "-partition", fmt.Sprintf("%d/%d", i, n), "-o", parts, "-q", "-explore",
					"-workers", fmt.Sprint(1 + i%2), "-batch", fmt.Sprint([]int{4096, 3}[i%2])}
				if code, _, stderr := replayCmd(t, args...); code != 0 {
					t.Fatalf("%s partition %d/%d: %s", name, i, n, stderr)
				}
			}
			merged := parts + "-merged"
			if code, _, stderr := replayCmd(t, "merge", parts, "-o", merged, "-q"); code != 0 {
				t.Fatalf("%s: merge of %d: %s", name, n, stderr)
			}
			got := tableDigests(t, merged)
			for f, h := range want {
				if strings.HasPrefix(f, ".") {
					continue
				}
				if got[f] != h {
					t.Errorf("%s, %d partitions: merged %s differs from the single replay's", name, n, f)
				}
			}
			for _, table := range []string{"memory", "results"} {
				one := duckdbq.QuoteString(filepath.Join(whole, table+".parquet"))
				all := fmt.Sprintf("read_parquet(%s, hive_partitioning = true)", duckdbq.QuoteString(filepath.Join(parts, "*", table+".parquet")))
				queries = append(queries, fmt.Sprintf(`SELECT
  (SELECT count(*) FROM (SELECT * FROM %[1]s EXCEPT ALL SELECT * EXCLUDE (part) FROM %[2]s)),
  (SELECT count(*) FROM (SELECT * EXCLUDE (part) FROM %[2]s EXCEPT ALL SELECT * FROM %[1]s)),
  (SELECT count(*) FROM %[1]s), (SELECT count(*) FROM %[2]s), (SELECT count(DISTINCT part) FROM %[2]s)`, one, all))
				what = append(what, fmt.Sprintf("%s %s, %d partitions", name, table, n))
			}
		}
	}
	rs, err := duckdbq.QueryBatch(queries)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range rs {
		row := r.Rows[0]
		if row[0] != "0" || row[1] != "0" || row[2] != row[3] || row[2] == "0" && !strings.Contains(what[k], "directives") {
			t.Errorf("%s: %v rows of the single replay not in the partitions, %v of the partitions not in it; %v rows and %v", what[k], row[0], row[1], row[2], row[3])
		}
	}
}

// partitionSet replays tr as n partitions into dir.
func partitionSet(t *testing.T, tr, dir string, n int, only ...int) {
	t.Helper()
	idx := only
	if idx == nil {
		for i := range n {
			idx = append(idx, i)
		}
	}
	for _, i := range idx {
		if code, _, stderr := replayCmd(t, tr, "-partition", fmt.Sprintf("%d/%d", i, n), "-o", dir, "-q"); code != 0 {
			t.Fatalf("partition %d/%d: %s", i, n, stderr)
		}
	}
}

// TestMergeRefuses: a missing, repeated or foreign partition, partitions of
// different counts, and tables not written by a partitioned replay are
// refused with an error that says which, exit status 1, and no output.
func TestMergeRefuses(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a.zst"), filepath.Join(root, "b.zst")
	for i, p := range []string{a, b} {
		if code, _, stderr := replayCmd(t, "gen", "histogram", "-seed", fmt.Sprint(i+1), "-lane-ops", "2e4", "-o", p, "-q"); code != 0 {
			t.Fatal(stderr)
		}
	}
	pa := filepath.Join(root, "pa")
	partitionSet(t, a, pa, 3)
	other := filepath.Join(root, "pb")
	partitionSet(t, b, other, 3, 2)
	two := filepath.Join(root, "p2")
	partitionSet(t, a, two, 2, 1)
	whole := filepath.Join(root, "whole")
	if code, _, stderr := replayCmd(t, a, "-o", whole, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	part := func(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("part=%d", i)) }
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{part(pa, 0), part(pa, 2)}, "merge: partition 1 of 3 missing (have 2 of them)"},
		{"twice", []string{pa, part(pa, 1)}, "merge: partition 1 of 3 is there twice: "},
		{"foreign", []string{part(pa, 0), part(pa, 1), part(other, 2)}, "is a partition of another trace (xxh64:"},
		{"counts", []string{part(pa, 0), part(two, 1), part(pa, 2)}, "is partition 1 of 2, but "},
		{"not partitioned", []string{whole}, "was not written by replay -partition (no replay.partition metadata)"},
		{"no tables", []string{root}, "holds no table files"},
	} {
		out := filepath.Join(root, "out-"+strings.ReplaceAll(c.name, " ", "-"))
		code, _, stderr := replayCmd(t, append(append([]string{"merge"}, c.args...), "-o", out)...)
		if code != exitError || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want exit %d and %q", c.name, code, stderr, exitError, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: the output directory exists (%v): merge must write nothing", c.name, err)
		}
	}
	// The complete set merges.
	if code, _, stderr := replayCmd(t, "merge", pa, "-o", filepath.Join(root, "ok")); code != 0 {
		t.Errorf("the complete set: %s", stderr)
	}
	if code, _, stderr := replayCmd(t, "merge", pa); code != exitUsage || !strings.Contains(stderr, "-o DIR is required") {
		t.Errorf("merge without -o: exit %d, %q", code, stderr)
	}
}

// TestPartitionFlag: -partition auto reads the array job's index the way
// Slurm and Kubernetes set it, and bad values are usage errors.
func TestPartitionFlag(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		flag   string
		parts  int
		getenv func(string) string
		i, n   int
		err    string
	}{
		{"2/5", 0, env(), 2, 5, ""},
		{"auto", 0, env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_MIN", "4", "SLURM_ARRAY_TASK_COUNT", "3"), 1, 3, ""},
		{"auto", 7, env("SLURM_ARRAY_TASK_ID", "6", "SLURM_ARRAY_TASK_COUNT", "3"), 6, 7, ""},
		{"auto", 0, env("JOB_COMPLETION_INDEX", "2", "REPLAY_PARTITIONS", "3"), 2, 3, ""},
		{"auto", 4, env("JOB_COMPLETION_INDEX", "3", "REPLAY_PARTITIONS", "3"), 3, 4, ""},
		{"auto", 0, env("JOB_COMPLETION_INDEX", "2"), 0, 0, "how many partitions?"},
		{"auto", 0, env(), 0, 0, "no SLURM_ARRAY_TASK_ID"},
		{"auto", 0, env("JOB_COMPLETION_INDEX", "3", "REPLAY_PARTITIONS", "3"), 0, 0, "index 3 is not one of 3 partitions"},
		{"auto", 0, env("SLURM_ARRAY_TASK_ID", "x", "SLURM_ARRAY_TASK_COUNT", "3"), 0, 0, `SLURM_ARRAY_TASK_ID="x" is not a count`},
		{"3/3", 0, env(), 0, 0, "want i/n with 0 <= i < n"},
		{"1", 0, env(), 0, 0, "want i/n"},
		{"1/2", 2, env(), 0, 0, "-partitions goes with -partition auto"},
		{"0/70000", 0, env(), 0, 0, "at most 65536 partitions"},
	} {
		i, n, err := partitionOf(c.flag, c.parts, c.getenv)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("-partition %s -partitions %d: %v; want an error with %q", c.flag, c.parts, err, c.err)
			}
			continue
		}
		if err != nil || i != c.i || n != c.n {
			t.Errorf("-partition %s -partitions %d: %d/%d, %v; want %d/%d", c.flag, c.parts, i, n, err, c.i, c.n)
		}
	}
	// Through the command: usage errors, exit 2.
	for _, args := range [][]string{{"-partition", "5/3"}, {"-partition", "0/2", "-"}, {"-partitions", "3"},
		{"-partition", "0/2", "-tables", "ops,memory"}} {
		if code, _, stderr := replayCmd(t, args...); code != exitUsage {
			t.Errorf("replay %s: exit %d, %s; want %d", strings.Join(args, " "), code, stderr, exitUsage)
		}
	}
}

// TestPartitionsArrowFormat: partitions written as Arrow IPC (and Parquet,
// -format both) merge, read from the Parquet files, into both formats,
// each file byte-identical to the single replay's; and from Arrow files
// alone when the partitions have no Parquet.
func TestPartitionsArrowFormat(t *testing.T) {
	root := t.TempDir()
	tr := filepath.Join(root, "h.zst")
	if code, _, stderr := replayCmd(t, "gen", "histogram", "-dialect", "sass", "-bins", "4096", "-lane-ops", "3e4", "-o", tr, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	for _, format := range []string{"both", "arrow"} {
		whole := filepath.Join(root, format, "whole")
		if code, _, stderr := replayCmd(t, tr, "-format", format, "-o", whole, "-q"); code != 0 {
			t.Fatal(stderr)
		}
		parts := filepath.Join(root, format, "parts")
		for i := range 3 {
			if code, _, stderr := replayCmd(t, tr, "-format", format, "-partition", fmt.Sprintf("%d/3", i), "-o", parts, "-q"); code != 0 {
				t.Fatal(stderr)
			}
		}
		merged := filepath.Join(root, format, "merged")
		if code, _, stderr := replayCmd(t, "merge", parts, "-format", format, "-o", merged, "-q"); code != 0 {
			t.Fatalf("%s: %s", format, stderr)
		}
		want, got := tableDigests(t, whole), tableDigests(t, merged)
		n := 0
		for f, h := range want {
			if strings.HasPrefix(f, ".") {
				continue
			}
			n++
			if got[f] != h {
				t.Errorf("-format %s: merged %s differs from the single replay's", format, f)
			}
		}
		if wantN := map[string]int{"both": 10, "arrow": 5}[format]; n != wantN {
			t.Errorf("-format %s: %d table files, want %d", format, n, wantN)
		}
	}
}

// TestRunOptionsRecorded (issue 46 item 16): every table file records the
// flags the replay ran with, the trace's name and the build under
// replay.options; a partition its partition, which merge leaves out.
func TestRunOptionsRecorded(t *testing.T) {
	tmp := t.TempDir()
	tr := filepath.Join(tmp, "racy.tasm")
	src := ".region global 0x1000 0x100\n.group 0\natom.cta.global.add.u32 d, [a], 1; | a=0x1000 mask=0x1\n" +
		".group 1\natom.cta.global.add.u32 d, [a], 1; | a=0x1000 mask=0x1\n"
	if err := os.WriteFile(tr, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	if code, _, stderr := replayCmd(t, tr, "-q", "-o", out, "-explore", "-explore-orders", "3", "-seed", "9", "-races",
		"-order", "random", "-strict", "-format", "both", "-workers", "2"); code != 0 {
		t.Fatal(stderr)
	}
	version, commit := buildVersion()
	want := columnar.RunOptions{Trace: "racy.tasm", Version: version, Commit: commit, Order: "random", Seed: 9,
		Explore: true, ExploreOrders: 3, Races: true, ClusterSize: 1, Strict: true,
		Tables: []string{"memory", "results", "instructions", "ops", "addresses", "orders", "races"}}
	files, _ := filepath.Glob(filepath.Join(out, "*.*"))
	if len(files) != 14 {
		t.Fatalf("%d table files, want 7 tables in 2 formats: %q", len(files), files)
	}
	for _, f := range files {
		kv, err := columnar.FileMetadata(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := columnar.ParseRunOptions(kv[columnar.MetaOptions])
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: replay.options %+v (%v), want %+v", filepath.Base(f), got, err, want)
		}
	}

	parts := filepath.Join(tmp, "parts")
	for i := range 2 {
		if code, _, stderr := replayCmd(t, tr, "-q", "-o", parts, "-partition", fmt.Sprintf("%d/2", i), "-tables", "memory"); code != 0 {
			t.Fatal(stderr)
		}
	}
	kv, err := columnar.FileMetadata(filepath.Join(parts, "part=1", "memory.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := columnar.ParseRunOptions(kv[columnar.MetaOptions]); got.Partition != "1/2" || got.Order != "lane" || got.Explore || !reflect.DeepEqual(got.Tables, []string{"memory"}) {
		t.Errorf("partition 1/2 records %+v", got)
	}
	merged := filepath.Join(tmp, "merged")
	if code, _, stderr := replayCmd(t, "merge", parts, "-o", merged, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	kv, err = columnar.FileMetadata(filepath.Join(merged, "memory.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := columnar.ParseRunOptions(kv[columnar.MetaOptions]); got.Partition != "" || got.Trace != "racy.tasm" {
		t.Errorf("merged tables record %+v, want the whole replay's options", got)
	}
}

// TestPartitionRowGroupsSmaller: a partition's tables are written in row
// groups of partitionBatchRows (a quarter of a whole replay's), which is
// what a merge holds decoded of each partition at once; the merged tables
// are in the whole replay's row groups, byte for byte its files.
func TestPartitionRowGroupsSmaller(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	tr := filepath.Join(root, "hot.zst")
	// 80,000 instructions of one warp each: more rows than a whole
	// replay's row group.
	if code, _, stderr := replayCmd(t, "gen", "hotcounter", "-lane-ops", "2.56e6", "-o", tr, "-q"); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	whole := filepath.Join(root, "whole")
	if code, _, stderr := replayCmd(t, tr, "-tables", "memory,instructions,ops", "-o", whole, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	parts := filepath.Join(root, "parts")
	for i := range 2 {
		if code, _, stderr := replayCmd(t, tr, "-partition", fmt.Sprintf("%d/2", i), "-tables", "memory,instructions,ops", "-o", parts, "-q"); code != 0 {
			t.Fatal(stderr)
		}
	}
	merged := filepath.Join(root, "merged")
	if code, _, stderr := replayCmd(t, "merge", parts, "-o", merged, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	groups := func(path string) (n, largest string) {
		t.Helper()
		r, err := duckdbq.Query(`SELECT count(DISTINCT row_group_id)::VARCHAR, max(row_group_num_rows)::VARCHAR FROM parquet_metadata(` +
			duckdbq.QuoteString(path) + `)`)
		if err != nil {
			t.Fatal(err)
		}
		return r.Rows[0][0].(string), r.Rows[0][1].(string)
	}
	for i := range 2 {
		// Without a split, each partition writes a row of every
		// instruction (the merge adds them up).
		path := filepath.Join(parts, fmt.Sprintf("part=%d", i), "instructions.parquet")
		if n, largest := groups(path); n != "5" || largest != fmt.Sprint(partitionBatchRows) {
			t.Errorf("partition %d's instructions: %s row groups of at most %s rows, want 5 of at most %d", i, n, largest, partitionBatchRows)
		}
	}
	if n, largest := groups(filepath.Join(merged, "instructions.parquet")); n != "2" || largest != fmt.Sprint(columnar.DefaultBatchRows) {
		t.Errorf("merged instructions: %s row groups of at most %s rows, want 2 of at most %d", n, largest, columnar.DefaultBatchRows)
	}
	sameFiles(t, whole, merged, "instructions.parquet", "memory.parquet", "ops.parquet")
}

// TestSplitPartitionRowGroupsOfSeqs: a partition of a split trace writes
// its instructions in the row groups of their seqs' windows of a whole
// replay's row groups (columnar.WithSeqRowGroups), recording them
// (columnar.MetaRowGroups) for replay merge, which copies those of a
// window that one partition alone has; a partition replayed from the
// trace does not. The merged tables are the whole replay's, byte for
// byte.
func TestSplitPartitionRowGroupsOfSeqs(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	tr := filepath.Join(root, "hot.zst")
	// 80,000 instructions: two windows of 64 Ki seqs.
	if code, _, stderr := replayCmd(t, "gen", "hotcounter", "-lane-ops", "2.56e6", "-o", tr, "-q"); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	const tables = "memory,instructions,ops"
	whole := filepath.Join(root, "whole")
	if code, _, stderr := replayCmd(t, tr, "-tables", tables, "-o", whole, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	split, parts := filepath.Join(root, "split"), filepath.Join(root, "parts")
	for k := range 2 {
		if code, _, stderr := replayCmd(t, "split", tr, "-partitions", "2", "-slice", fmt.Sprintf("%d/2", k), "-tables", tables, "-o", split, "-q"); code != 0 {
			t.Fatal(stderr)
		}
	}
	for i := range 2 {
		if code, _, stderr := replayCmd(t, split, "-partition", fmt.Sprintf("%d/2", i), "-tables", tables, "-o", parts, "-q"); code != 0 {
			t.Fatal(stderr)
		}
	}
	const window = columnar.DefaultBatchRows
	for i := range 2 {
		path := filepath.Join(parts, fmt.Sprintf("part=%d", i), "instructions.parquet")
		kv, err := columnar.FileMetadata(path)
		if err != nil {
			t.Fatal(err)
		}
		if v := kv[columnar.MetaRowGroups]; !strings.Contains(v, fmt.Sprintf(`"seq_rows":%d,`, window)) {
			t.Errorf("partition %d's instructions: %s is %q, want seq_rows %d", i, columnar.MetaRowGroups, v, window)
		}
		// Each row group's seqs in one window.
		r, err := duckdbq.Query(`SELECT (stats_min_value::UBIGINT // ` + fmt.Sprint(window) + `)::VARCHAR, (stats_max_value::UBIGINT // ` +
			fmt.Sprint(window) + `)::VARCHAR FROM parquet_metadata(` + duckdbq.QuoteString(path) + `) WHERE path_in_schema = 'seq' ORDER BY row_group_id`)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Rows) == 0 {
			t.Errorf("partition %d's instructions: no row groups", i)
		}
		for g, row := range r.Rows {
			if row[0] != row[1] {
				t.Errorf("partition %d's instructions: row group %d holds seqs of windows %v to %v", i, g, row[0], row[1])
			}
		}
	}
	plain := filepath.Join(root, "plain")
	if code, _, stderr := replayCmd(t, tr, "-partition", "0/2", "-tables", tables, "-o", plain, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	if kv, err := columnar.FileMetadata(filepath.Join(plain, "part=0", "instructions.parquet")); err != nil || kv[columnar.MetaRowGroups] != "" {
		t.Errorf("a partition replayed from the trace records %s %q (%v), want none", columnar.MetaRowGroups, kv[columnar.MetaRowGroups], err)
	}
	merged := filepath.Join(root, "merged")
	if code, _, stderr := replayCmd(t, "merge", parts, "-o", merged, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	sameFiles(t, whole, merged, "instructions.parquet", "memory.parquet", "ops.parquet")
}
