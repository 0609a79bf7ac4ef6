package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// tiny: three atom.global.add.u32 on 0x1000 from two warps (2, 1 and 4
// lanes), and one lane of warp 1 that adds at 0x1002, misaligned.
const tiny = `.region global 0x1000 0x100
.warp 0
atom.global.add.u32 d, [a], 1; | a=0x1000 mask=0x3
atom.global.add.u32 d, [a], 1; | mask=0x1
.warp 1
atom.global.add.u32 d, [a], 1; | a=0x1000 mask=0xf
atom.global.add.u32 d, [a], 1; | a=0x1002 mask=0x1
`

// replayTiny replays tiny into a new directory, writing tables (nil: all).
func replayTiny(t *testing.T, tables ...string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := trace.NewTextReader(strings.NewReader(tiny), "tiny.tasm")
	if err != nil {
		t.Fatal(err)
	}
	var opts []columnar.Option
	if tables != nil {
		opts = append(opts, columnar.WithTables(tables...))
	}
	sink, err := columnar.New(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Replay(src, sink, engine.WithExplore(true)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReportTiny: the numbers of tiny, worked out by hand: 4 instructions;
// 2+1+4+1 = 8 lanes and lane-ops; 1 fault (misaligned); one address,
// 0x1000, with 7 accesses from 2 warps (the misaligned access is not one:
// the addresses table counts the accesses that happened); max_conflict 2,
// 1, 4 and 1 (the faulting lane still names its address), so the worst is
// 4 and conflict_sum 8; one memory word.
func TestReportTiny(t *testing.T) {
	dir := replayTiny(t)
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  Count
		want uint64
		from string
	}{
		{"instructions", d.Instructions, 4, "instructions"},
		{"lanes", d.Lanes, 8, "instructions"},
		{"lane-ops", d.LaneOps, 8, "results"},
		{"faults", d.Faults, 1, "results"},
		{"addresses", d.Addresses, 1, "addresses"},
		{"worst max_conflict", d.WorstConflict, 4, "instructions"},
		{"memory words", d.MemoryWords, 1, "memory"},
	} {
		if !c.got.Known || c.got.N != c.want || c.got.From != c.from {
			t.Errorf("%s = %+v, want %d from %s", c.name, c.got, c.want, c.from)
		}
	}
	if h := d.Hottest; h == nil || h.Label() != "global 0x1000" || h.Accesses != 7 || h.Warps != 2 {
		t.Errorf("hottest %+v, want global 0x1000 with 7 accesses from 2 warps", h)
	}
	if want := []Bin{{1, 2}, {2, 1}, {4, 1}}; !equal(d.Conflicts, want) {
		t.Errorf("conflicts %v, want %v", d.Conflicts, want)
	}
	if len(d.Ops) != 1 || d.Ops[0].Name() != "ptx add.u32" || d.Ops[0].Instructions != 4 || d.Ops[0].ConflictSum != 8 || d.Ops[0].MaxConflict != 4 {
		t.Errorf("ops %+v, want ptx add.u32: 4 instructions, conflict_sum 8, worst 4", d.Ops)
	}
	if want := []KindCount{{"misaligned", 1}}; !equal(d.FaultKinds, want) {
		t.Errorf("fault kinds %v, want %v", d.FaultKinds, want)
	}
	// Integer adds commute: nothing is order-sensitive, even with -explore.
	if d.OrderCount != 0 {
		t.Errorf("%d order-sensitive addresses, want 0", d.OrderCount)
	}
	if a := d.Activity; a == nil || a.Window != 1 || len(a.Warps) != 2 || a.Lanes[0][0] != 2 || a.Lanes[0][1] != 1 || a.Lanes[1][2] != 4 || a.Lanes[1][3] != 1 {
		t.Errorf("activity %+v", a)
	}

	var b bytes.Buffer
	if err := Write(&b, d, Options{Title: "tiny <report>"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, w := range []string{
		"<title>tiny &lt;report&gt;</title>",
		`<div class="label">instructions</div><div class="value">4</div>`,
		`<div class="label">lane-ops</div><div class="value">8</div>`,
		`<div class="label">faults</div><div class="value">1</div>`,
		`<div class="label">hottest address</div><div class="value">global 0x1000</div><div class="note">7 accesses, 2 warps</div>`,
		`<div class="label">worst max_conflict</div><div class="value">4</div>`,
		// the SQL under the plots (html/template escapes the quotes)
		"SELECT max_conflict, count(*) AS instructions\nFROM &#39;instructions.parquet&#39;\nGROUP BY max_conflict",
		"ORDER BY accesses DESC, space, &#34;group&#34;, addr\nLIMIT 20;",
		"sum(conflict_sum) / sum(instructions) AS mean_conflict",
		"WHERE fault &lt;&gt; &#39;&#39;",
		"SELECT i.seq // 1 AS &#34;window&#34;, w.rank // 1 AS &#34;row&#34;",
		"a future replay -races flag will write races.parquet",
		"No address is marked order-sensitive",
	} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	// hot, conflicts, ops, faults and activity are plotted; nothing is fetched.
	if n := strings.Count(page, "<svg "); n != 5 {
		t.Errorf("%d <svg> elements, want 5", n)
	}
	for _, bad := range []string{"<script", "http://", "https://", "<?xml", "<link"} {
		if bad == "http://" || bad == "https://" {
			// SVG namespaces are names, not fetches.
			page2 := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", `xmlns:xlink="http://www.w3.org/1999/xlink"`, "").Replace(page)
			if strings.Contains(page2, bad) {
				t.Errorf("the page refers to %s", bad)
			}
			continue
		}
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	// The same tables give the same bytes.
	var b2 bytes.Buffer
	if err := Generate(&b2, dir, Options{Title: "tiny <report>"}); err != nil {
		t.Fatal(err)
	}
	if b2.String() != page {
		t.Error("two reports of one directory differ")
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReportMissingTables: with memory and ops only, the numbers come from
// ops, and each section that lacks its table says which and how to get it.
func TestReportMissingTables(t *testing.T) {
	dir := replayTiny(t, "memory", "ops")
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Instructions != (Count{4, true, "ops"}) || d.Faults != (Count{1, true, "ops"}) || d.LaneOps.Known || d.Addresses.Known {
		t.Errorf("counts: instructions %+v faults %+v lane-ops %+v addresses %+v", d.Instructions, d.Faults, d.LaneOps, d.Addresses)
	}
	var b bytes.Buffer
	if err := Write(&b, d, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, w := range []string{
		"needs the addresses table (addresses.parquet)",
		"needs the instructions table (instructions.parquet)",
		"needs the results table (results.parquet)",
		"and with -explore",
		"run replay with -tables including",
		`<div class="note">needs results</div>`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if n := strings.Count(page, "<svg "); n != 1 { // ops only
		t.Errorf("%d <svg> elements, want 1", n)
	}
}

func TestLoadErrors(t *testing.T) {
	empty := t.TempDir()
	parted := t.TempDir()
	if err := os.Mkdir(filepath.Join(parted, "part=0"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(empty, "x.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(empty, "nosuch"), "no such file"},
		{file, "is not a directory"},
		{empty, "holds none of the tables memory.parquet, results.parquet"},
		{parted, "replay merge"},
	} {
		if _, err := Load(c.dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s) = %v, want an error with %q", c.dir, err, c.want)
		}
	}
}

func TestCommas(t *testing.T) {
	for n, w := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if g := commas(n); g != w {
			t.Errorf("commas(%d) = %q, want %q", n, g, w)
		}
	}
}
