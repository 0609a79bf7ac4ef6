package report

import (
	"bytes"
	"fmt"
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
		`<div class="label">hottest address</div><div class="value">global 0x1000</div><div class="note">7 accesses (100.0% of all), 2 warps</div>`,
		`<div class="label">worst max_conflict</div><div class="value">4</div>`,
		// the SQL under the plots (html/template escapes the quotes)
		"SELECT max_conflict, count(*) AS instructions\nFROM &#39;instructions.parquet&#39;\nGROUP BY max_conflict",
		"ORDER BY accesses DESC, space, &#34;group&#34;, addr\nLIMIT 20;",
		"sum(conflict_sum) / sum(instructions) AS mean_conflict",
		"WHERE fault &lt;&gt; &#39;&#39;",
		"SELECT i.seq // 1 AS &#34;window&#34;, w.rank // 1 AS &#34;row&#34;",
		"needs the races table (races.parquet), which " + dir + " lacks: run replay with -races, which writes it",
		"needs the orders table (orders.parquet), which " + dir + " lacks: run replay with -explore-orders K",
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

// racy: one .cta add on 0x1000 from each of two CTAs, which race (rule
// scope: neither's scope includes the other's thread), and an exch of 32
// lanes (values 100 … 131) on 0x1004, whose final value is lane 31's, 131,
// in lane order and some other lane's in a random order.
const racy = `.region global 0x1000 0x100
.group 0
atom.cta.global.add.u32 d, [a], 1; | a=0x1000 mask=0x1
.group 1
atom.cta.global.add.u32 d, [a], 1; | a=0x1000 mask=0x1
atom.global.exch.b32 d, [a], v; | a=0x1004 v=100:1
`

// extras writes the orders and races rows just before the replay's commit,
// as cmd/replay does.
type extras struct {
	*columnar.Writer
	orders []engine.OrderWitness
	races  []engine.RaceRow
}

func (s *extras) Commit() error {
	if err := s.Writer.Orders(s.orders); err != nil {
		return err
	}
	if err := s.Writer.Races(s.races); err != nil {
		return err
	}
	return s.Writer.Commit()
}

// replayRacy replays racy with -explore, -races and -explore-orders 2
// (seeds 1 and 2) into a new directory, and returns the witnesses too.
func replayRacy(t *testing.T) (string, []engine.OrderWitness) {
	t.Helper()
	dir := t.TempDir()
	open := func() (trace.SourceCloser, error) { return trace.NewTextReader(strings.NewReader(racy), "racy.tasm") }
	orders, err := engine.ExploreOrders(open, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	src, err := open()
	if err != nil {
		t.Fatal(err)
	}
	races, err := engine.Races(src, engine.RacesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := columnar.New(dir, columnar.WithTables(columnar.AllTableNames()...))
	if err != nil {
		t.Fatal(err)
	}
	if src, err = open(); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Replay(src, &extras{w, orders, races}, engine.WithExplore(true)); err != nil {
		t.Fatal(err)
	}
	return dir, orders
}

// TestReportRacesAndOrders: racy's one race (scope, 0x1000, group 0's add
// then group 1's) and its one order witness (0x1004: 131 in lane order)
// are counted, plotted (the races by rule) and listed on the page.
func TestReportRacesAndOrders(t *testing.T) {
	dir, orders := replayRacy(t)
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Races != (Count{1, true, "races"}) || d.RaceAddresses != 1 {
		t.Errorf("races %+v on %d addresses, want 1 on 1", d.Races, d.RaceAddresses)
	}
	if want := []KindCount{{"scope", 1}}; !equal(d.RaceRules, want) {
		t.Errorf("races by rule %v, want %v", d.RaceRules, want)
	}
	const text = "atom.cta.global.add.u32 d, [a], 1;" // as written, with its ";"
	wantA := RaceSide{Seq: 0, Dialect: "ptx", Text: text, Group: 0, Warp: 0, Lane: 0, Scope: "cta"}
	wantB := wantA
	wantB.Seq, wantB.Group = 1, 1
	if len(d.RaceRows) != 1 || d.RaceRows[0].Label() != "global 0x1000" || d.RaceRows[0].Rule != "scope" || d.RaceRows[0].A != wantA || d.RaceRows[0].B != wantB {
		t.Errorf("race rows %+v, want global 0x1000 scope: %+v then %+v", d.RaceRows, wantA, wantB)
	}

	// Only 0x1004 differs (adds commute); one row per order, lane first.
	if len(orders) != 3 || orders[0].Addr != 0x1004 || orders[0].Order != "lane" || orders[0].Value != 131 {
		t.Fatalf("ExploreOrders gave %+v, want three rows of 0x1004, lane order's value 131", orders)
	}
	if d.OrderWords != (Count{1, true, "orders"}) || !equal(d.OrderNames, []string{"lane", "random:1", "random:2"}) {
		t.Errorf("order words %+v, orders %q", d.OrderWords, d.OrderNames)
	}
	if len(d.Witnesses) != 1 || d.Witnesses[0].Label() != "global 0x1004" ||
		!equal(d.Witnesses[0].Values, []uint32{orders[0].Value, orders[1].Value, orders[2].Value}) ||
		!equal(d.Witnesses[0].Has, []bool{true, true, true}) {
		t.Errorf("witnesses %+v, want global 0x1004 with %+v", d.Witnesses, orders)
	}

	var b bytes.Buffer
	if err := Write(&b, d, Options{Title: "racy"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, w := range []string{
		"1 race on 1 address (by rule: scope 1).",
		`<svg class="plot" role="img" aria-label="Races by rule"`,
		"The first 1 of 1 races, in the table&#39;s order",
		`<th colspan="6">A (earlier)</th><th colspan="6">B (later)</th>`,
		`<tr><td>global 0x1000</td><td>scope</td>` +
			`<td>0</td><td>0</td><td>0</td><td>0</td><td>cta</td><td title="ptx"><code>` + text + `</code></td>` +
			`<td>1</td><td>1</td><td>0</td><td>0</td><td>cta</td><td title="ptx"><code>` + text + `</code></td></tr>`,
		"SELECT rule, count(*) AS addresses\nFROM &#39;races.parquet&#39;",
		"ORDER BY space, &#34;group&#34;, addr, rule\nLIMIT 20;",
		"1 word has a different final value under different orders (3 orders replayed).",
		"<tr><th>address</th><th>type</th><th>lane</th><th>random:1</th><th>random:2</th><th>spread</th></tr>",
		fmt.Sprintf(`<tr><td>global 0x1004</td><td>b32</td><td title="0x00000083">131</td><td title="0x%08x">%d</td><td title="0x%08x">%d</td><td>—</td></tr>`,
			orders[1].Value, orders[1].Value, orders[2].Value, orders[2].Value),
		"FROM read_parquet(&#39;orders.parquet&#39;, file_row_number = true)",
		"<code>orders.parquet</code>, <code>races.parquet</code>",
	} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	// hot, conflicts, ops, order-sensitive (the exch), races and activity.
	if n := strings.Count(page, "<svg "); n != 6 {
		t.Errorf("%d <svg> elements, want 6", n)
	}
	var b2 bytes.Buffer
	if err := Generate(&b2, dir, Options{Title: "racy"}); err != nil {
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

// TestWitnessSQLSlices: past MaxOrders orders, the table and its SQL show
// the first MaxOrders only.
func TestWitnessSQLSlices(t *testing.T) {
	if s := witnessSQL(MaxOrders); strings.Contains(s, "[1:") {
		t.Errorf("%d orders: the SQL slices its lists:\n%s", MaxOrders, s)
	}
	if s := witnessSQL(MaxOrders + 1); !strings.Contains(s, fmt.Sprintf("(list(value ORDER BY file_row_number))[1:%d] AS", MaxOrders)) {
		t.Errorf("%d orders: the SQL does not slice its lists:\n%s", MaxOrders+1, s)
	}
}
