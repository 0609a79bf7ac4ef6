package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpureplay/replay/internal/duckdbq"
)

// TestDiffPTXAndSASS: the simpleAtomicIntrinsics kernel replayed from its
// PTX and from its SASS form: no difference, exit 0, every word and lane
// compared.
func TestDiffPTXAndSASS(t *testing.T) {
	root := t.TempDir()
	ptx, sass := filepath.Join(root, "ptx"), filepath.Join(root, "sass")
	for _, c := range [][2]string{{"../../examples/simpleAtomicIntrinsics.tasm", ptx}, {"../../examples/simpleAtomicIntrinsics.sass.tasm", sass}} {
		if code, _, stderr := replayCmd(t, c[0], "-o", c[1], "-q"); code != 0 {
			t.Fatal(stderr)
		}
	}
	code, out, stderr := replayCmd(t, "diff", ptx, sass)
	if code != exitOK || stderr != "" {
		t.Fatalf("diff: exit %d, %s%s", code, out, stderr)
	}
	for _, want := range []string{
		"memory: 11 words in A, 11 in B: 0 differ, 0 only in A, 0 only in B",
		"results: 180224 lane results in A, 180224 in B: 0 differ, 0 only in A, 0 only in B",
		"no difference",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff output lacks %q:\n%s", want, out)
		}
	}
}

// TestDiffOneWord: two traces that differ in one addend, of a warp whose
// 32 lanes all add to one word and get nothing back, leave one word
// different, and nothing else: diff lists exactly that word, with both
// values, and exits 1; -q says the same by its status alone.
func TestDiffOneWord(t *testing.T) {
	root := t.TempDir()
	trace := func(addend string) string {
		return ".region global 0x1000 0x100\n" +
			"atom.global.add.u32 d, [a], 1; | a=0x1000:4\n" +
			"atom.global.add.u32 _, [a], " + addend + "; | a=0x1080\n"
	}
	dirs := map[string]string{}
	for _, c := range []string{"2", "3"} {
		p := filepath.Join(root, "t"+c+".tasm")
		if err := os.WriteFile(p, []byte(trace(c)), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs[c] = filepath.Join(root, "out"+c)
		if code, _, stderr := replayCmd(t, p, "-o", dirs[c], "-q"); code != 0 {
			t.Fatal(stderr)
		}
	}
	code, out, stderr := replayCmd(t, "diff", dirs["2"], dirs["3"])
	if code != exitError || stderr != "" {
		t.Fatalf("diff: exit %d (want 1), %s%s", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("diff printed %d lines, want a header, one difference and two summary lines:\n%s", len(lines), out)
	}
	// 32 lanes add 2 (or 3) to 0x1080: 0x40 against 0x60.
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "memory global -1 0x1080 0x00000040 0x00000060" {
		t.Errorf("the difference is %q, want memory global -1 0x1080 0x00000040 0x00000060", lines[1])
	}
	for _, want := range []string{
		"memory: 33 words in A, 33 in B: 1 differ, 0 only in A, 0 only in B",
		// The second instruction's lanes get nothing back (`_`): 0 in both.
		"results: 64 lane results in A, 64 in B: 0 differ, 0 only in A, 0 only in B",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff output lacks %q:\n%s", want, out)
		}
	}
	if code, out, _ := replayCmd(t, "diff", "-q", dirs["2"], dirs["3"]); code != exitError || out != "" {
		t.Errorf("diff -q of different replays: exit %d, %q; want 1 and nothing", code, out)
	}
	if code, out, _ := replayCmd(t, "diff", "-q", dirs["2"], dirs["2"]); code != exitOK || out != "" {
		t.Errorf("diff -q of a replay and itself: exit %d, %q; want 0 and nothing", code, out)
	}
	// Trouble is 1 with an error on standard error (issue 46 item 9): a
	// missing directory, a table on one side only.
	if code, _, stderr := replayCmd(t, "diff", dirs["2"], filepath.Join(root, "nosuch")); code != exitError || !strings.Contains(stderr, "nosuch") {
		t.Errorf("diff with a missing directory: exit %d, %q; want 1", code, stderr)
	}
	lean := filepath.Join(root, "lean")
	if code, _, stderr := replayCmd(t, filepath.Join(root, "t2.tasm"), "-tables", "memory", "-o", lean, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := replayCmd(t, "diff", dirs["2"], lean); code != exitError || !strings.Contains(stderr, "has the results table") {
		t.Errorf("diff with results on one side only: exit %d, %q; want 1", code, stderr)
	}
}

// TestOrderFlag: -order reverse gives a CAS lock to the last lane, as the
// results table shows through DuckDB; replay diff then tells the two
// orders apart, lane by lane; a bad -order is a usage error.
func TestOrderFlag(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	tr := filepath.Join(root, "lock.tasm")
	if err := os.WriteFile(tr, []byte(".region global 0x1000 0x100\natom.global.cas.b32 d, [l], 0, 1; | l=0x1000 mask=0xff0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, o := range []string{"lane", "reverse"} {
		dirs[o] = filepath.Join(root, o)
		if code, _, stderr := replayCmd(t, tr, "-order", o, "-o", dirs[o], "-q"); code != 0 {
			t.Fatal(stderr)
		}
	}
	var qs []string
	for _, o := range []string{"lane", "reverse"} {
		qs = append(qs, fmt.Sprintf("SELECT list(lane ORDER BY lane) FROM %s WHERE value = 0", duckdbq.QuoteString(filepath.Join(dirs[o], "results.parquet"))))
	}
	rs, err := duckdbq.QueryBatch(qs)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rs[0].Rows[0][0], rs[1].Rows[0][0]); got != "[4] [11]" {
		t.Errorf("the lock went to lanes %s under lane and reverse order, want [4] [11]", got)
	}
	// Lanes 4 and 11 swapped their values: two lane results differ.
	code, out, _ := replayCmd(t, "diff", dirs["lane"], dirs["reverse"])
	if code != exitError || !strings.Contains(out, "results: 8 lane results in A, 8 in B: 2 differ") {
		t.Errorf("diff of the two orders: exit %d:\n%s", code, out)
	}
	if code, _, stderr := replayCmd(t, tr, "-order", "sideways"); code != exitUsage || !strings.Contains(stderr, "want lane, reverse or random") {
		t.Errorf("-order sideways: exit %d, %q", code, stderr)
	}
}

// TestExploreOrdersFlag: -explore-orders writes the orders table with the
// others: rows only for the word that an exch race leaves order-dependent
// (one per order, lane order and K random), none for the add histogram;
// -explore's static marking stays; standard input is refused.
func TestExploreOrdersFlag(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	tr := filepath.Join(root, "race.tasm")
	src := ".region global 0x1000 0x100\n" +
		"atom.global.exch.b32 d, [a], v; | a=0x1000 v=100:1\n" +
		"atom.global.add.u32 d, [h], 1; | h=0x1040:4\n" +
		"atom.global.add.u32 d, [h], 1; | h=0x1040:4\n"
	if err := os.WriteFile(tr, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	if code, _, stderr := replayCmd(t, tr, "-explore", "-explore-orders", "3", "-seed", "11", "-o", out, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	orders := duckdbq.QuoteString(filepath.Join(out, "orders.parquet"))
	rs, err := duckdbq.QueryBatch([]string{
		"SELECT addr, list(\"order\" ORDER BY \"order\"), count(DISTINCT value) > 1 FROM " + orders + " GROUP BY addr",
		"SELECT value FROM " + orders + " WHERE \"order\" = 'lane'",
		"SELECT count(*) FILTER (WHERE order_sensitive) FROM " + duckdbq.QuoteString(filepath.Join(out, "addresses.parquet")),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rs[0].Rows); got != "[[4096 [lane random:11 random:12 random:13] true]]" {
		t.Errorf("orders table grouped by address: %s; want only 0x1000 (4096), under 4 orders, with differing values", got)
	}
	if got := fmt.Sprint(rs[1].Rows); got != "[[131]]" {
		t.Errorf("lane order left %s at 0x1000, want 131 (lane 31's value)", got)
	}
	if got := fmt.Sprint(rs[2].Rows); got != "[[1]]" {
		t.Errorf("%s addresses marked order_sensitive, want 1 (the exch)", got)
	}
	if code, _, stderr := replayCmd(t, "-explore-orders", "2", "-"); code != exitUsage || !strings.Contains(stderr, "not standard input") {
		t.Errorf("-explore-orders on standard input: exit %d, %q", code, stderr)
	}
}

// TestRacesFlag: -races writes the races table with the others, one row
// for the .cta atomics of two CTAs (engine/testdata/races), none with
// -cluster-size 2 putting them in one cluster when they are .cluster; and
// -races is refused on standard input and with -partition.
func TestRacesFlag(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	cta := filepath.Join("..", "..", "engine", "testdata", "races", "cta_two_ctas.tasm")
	clu := filepath.Join("..", "..", "engine", "testdata", "races", "cluster.tasm")
	outs := map[string][]string{
		"cta":  {cta, "-races"},
		"clu1": {clu, "-races"},
		"clu2": {clu, "-races", "-cluster-size", "2"},
	}
	var qs []string
	for _, k := range []string{"cta", "clu1", "clu2"} {
		out := filepath.Join(root, k)
		if code, _, stderr := replayCmd(t, append(outs[k], "-o", out, "-q")...); code != 0 {
			t.Fatalf("%s: %s", k, stderr)
		}
		qs = append(qs, "SELECT list(rule || ' ' || addr || ' ' || seq_a || ':' || group_a || ':' || scope_a || ' ' || seq_b || ':' || group_b || ':' || scope_b ORDER BY seq_b) FROM "+
			duckdbq.QuoteString(filepath.Join(out, "races.parquet")))
	}
	rs, err := duckdbq.QueryBatch(qs)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		"[scope 4096 0:0:cta 1:1:cta]",
		"[scope 4096 0:0:cluster 1:1:cluster]", // one CTA a cluster: groups 0 and 1 race at once
		"[scope 4096 0:0:cluster 2:2:cluster]", // two a cluster: 0 and 1 share one, 2 does not
	} {
		if got := fmt.Sprint(rs[i].Rows[0][0]); got != want {
			t.Errorf("races %d: %s, want %s", i, got, want)
		}
	}
	for _, args := range [][]string{{"-races", "-"}, {cta, "-races", "-partition", "0/2"}, {cta, "-races", "-cluster-size", "0"}} {
		if code, _, stderr := replayCmd(t, args...); code != exitUsage {
			t.Errorf("replay %s: exit %d, %q; want 2", strings.Join(args, " "), code, stderr)
		}
	}
}
