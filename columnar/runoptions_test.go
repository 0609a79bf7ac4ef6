package columnar

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRunOptionsMetadata: WithRunOptions records the options as JSON under
// replay.options in every file, Parquet and Arrow, with the tables the
// writer writes; FileMetadata and ParseRunOptions read them back.
func TestRunOptionsMetadata(t *testing.T) {
	dir := t.TempDir()
	run := RunOptions{Trace: "spin.zst", Version: "v1.2.3", Commit: "abc123", Order: "random", Seed: 7,
		Explore: true, ExploreOrders: 8, ClusterSize: 1, Tables: []string{"ignored"}}
	commitRun(t, dir, 10, WithFormat(FormatBoth), WithTables("ops", "memory", "orders"), WithRunOptions(run),
		WithMetadata(map[string]string{"x.other": "1"}))
	want := `{"trace":"spin.zst","version":"v1.2.3","commit":"abc123","order":"random","seed":7,"interleave":0,` +
		`"explore":true,"explore_orders":8,"races":false,"cluster_size":1,"strict":false,"tables":["memory","ops","orders"]}`
	for _, f := range []string{"memory.parquet", "memory.arrow", "ops.parquet", "orders.arrow"} {
		kv, err := FileMetadata(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if kv[MetaOptions] != want || kv["x.other"] != "1" || len(kv) != 2 {
			t.Errorf("%s: metadata %q, want %s = %s and x.other", f, kv, MetaOptions, want)
		}
		got, err := ParseRunOptions(kv[MetaOptions])
		if err != nil {
			t.Fatal(err)
		}
		run.Tables = []string{"memory", "ops", "orders"}
		if !reflect.DeepEqual(got, run) {
			t.Errorf("%s: read back %+v, want %+v", f, got, run)
		}
	}
	if _, err := New(t.TempDir(), WithMetadata(map[string]string{MetaOptions: "{}"})); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("WithMetadata(%s) = %v, want it refused: WithRunOptions writes it", MetaOptions, err)
	}
}

// TestMergeKeepsRunOptions: partitions replayed with one set of options
// merge into tables that record it without the partition, as a whole
// replay's do; partitions of other options are refused before anything
// is written.
func TestMergeKeepsRunOptions(t *testing.T) {
	root := t.TempDir()
	run := RunOptions{Trace: "t.zst", Version: "(devel)", Order: "lane", Seed: 1, Explore: true}
	part := func(dir string, i int, r RunOptions) {
		r.Partition = []string{"0/2", "1/2"}[i]
		commitRun(t, filepath.Join(root, dir, []string{"part=0", "part=1"}[i]), 6, WithTables("memory"), WithRunOptions(r),
			WithMetadata(map[string]string{MetaPartition: r.Partition, MetaTrace: "xxh64:0 1"}))
	}
	part("same", 0, run)
	part("same", 1, run)
	out := filepath.Join(root, "merged")
	if err := Merge([]string{filepath.Join(root, "same", "part=0"), filepath.Join(root, "same", "part=1")}, out); err != nil {
		t.Fatal(err)
	}
	kv, err := FileMetadata(filepath.Join(out, "memory.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"trace":"t.zst","version":"(devel)","order":"lane","seed":1,"interleave":0,"explore":true,"explore_orders":0,` +
		`"races":false,"cluster_size":0,"strict":false,"tables":["memory"]}`
	if kv[MetaOptions] != want || len(kv) != 1 {
		t.Errorf("merged metadata %q, want only %s = %s", kv, MetaOptions, want)
	}

	other := run
	other.Explore = false
	part("differ", 0, run)
	part("differ", 1, other)
	err = Merge([]string{filepath.Join(root, "differ", "part=0"), filepath.Join(root, "differ", "part=1")}, filepath.Join(root, "no"))
	var me *MergeError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "was replayed with other options") || !strings.Contains(err.Error(), `"explore":false`) {
		t.Errorf("merge of partitions of other options: %v", err)
	}
}
