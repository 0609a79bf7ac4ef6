package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// The tests of issue 46's report items (13 to 16), each on a trace built
// for it, checking the page's geometry and text.

// replayWith replays src (named name) into a new directory with -explore,
// and -explore-orders k (k > 0, seeds 1 …), recording run (nil: nothing).
func replayWith(t *testing.T, name, src string, k int, run *columnar.RunOptions) string {
	t.Helper()
	dir := t.TempDir()
	open := func() (trace.SourceCloser, error) { return trace.NewTextReader(strings.NewReader(src), name) }
	opts := []columnar.Option{}
	if k > 0 {
		opts = append(opts, columnar.WithTables(append(columnar.TableNames(), "orders")...))
	}
	if run != nil {
		opts = append(opts, columnar.WithRunOptions(*run))
	}
	w, err := columnar.New(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var sink engine.Sink = w
	if k > 0 {
		orders, err := engine.ExploreOrders(t.Context(), open, engine.WithOrders(k, 1))
		if err != nil {
			t.Fatal(err)
		}
		sink = &extras{Writer: w, orders: orders}
	}
	src2, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Replay(t.Context(), src2, sink, engine.WithExplore(true)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// page builds the report of dir and returns its data, its page, and the
// HTML.
func page(t *testing.T, dir string) (*Data, *Page, string) {
	t.Helper()
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(d, Options{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, d, Options{Title: "t"}); err != nil {
		t.Fatal(err)
	}
	return d, p, b.String()
}

// node is an element of a parsed SVG.
type node struct {
	Name  string
	Attr  map[string]string
	Text  string
	Kids  []*node
	Class string
}

func parseSVG(t *testing.T, s string) *node {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(s))
	dec.Strict = false
	root := &node{Name: "#root"}
	stack := []*node{root}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the plot is not well-formed SVG: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			n := &node{Name: x.Name.Local, Attr: map[string]string{}}
			for _, a := range x.Attr {
				n.Attr[a.Name.Local] = a.Value
			}
			n.Class = n.Attr["class"]
			top := stack[len(stack)-1]
			top.Kids = append(top.Kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			stack[len(stack)-1].Text += string(x)
		}
	}
	return root
}

// areaOf is the plot area of a plot (its rect.area).
func areaOf(t *testing.T, svg *node) *node {
	t.Helper()
	as := svg.all(byClass("area"))
	if len(as) != 1 {
		t.Fatalf("%d plot areas (rect.area), want 1", len(as))
	}
	return as[0]
}

// all is every element under n, depth first, that f accepts.
func (n *node) all(f func(*node) bool) []*node {
	var out []*node
	for _, k := range n.Kids {
		if f(k) {
			out = append(out, k)
		}
		out = append(out, k.all(f)...)
	}
	return out
}

func (n *node) f(attr string) float64 {
	v, err := strconv.ParseFloat(n.Attr[attr], 64)
	if err != nil {
		panic(fmt.Sprintf("<%s %s=%q>", n.Name, attr, n.Attr[attr]))
	}
	return v
}

func byClass(c string) func(*node) bool { return func(n *node) bool { return n.Class == c } }

func section(t *testing.T, p *Page, id string) Section {
	t.Helper()
	for _, s := range p.Sections {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no section %q", id)
	return Section{}
}

// TestItem46_13_HeatMapRowsAtTicks (issue 46 item 13): with 20 warps (one
// a group, each running in its own stretch of the trace), the per-warp
// heat map draws row r over the band of the y axis centred on row r's
// tick, rows 0 (g0 w0) to 19 (g19 w0) filling the axis from its top to its
// bottom, as rectangles, not a raster image scaled into the box.
func TestItem46_13_HeatMapRowsAtTicks(t *testing.T) {
	var src strings.Builder
	src.WriteString(".region global 0x1000 0x100\n")
	for g := range 20 {
		fmt.Fprintf(&src, ".group %d\n", g)
		for range 5 {
			src.WriteString("atom.global.add.u32 d, [a], 1; | a=0x1000\n")
		}
	}
	d, p, _ := page(t, replayWith(t, "warps.tasm", src.String(), 0, nil))
	if a := d.Activity; a == nil || len(a.Lanes) != 20 || a.WarpsPerRow != 1 {
		t.Fatalf("activity %+v, want 20 rows of one warp", d.Activity)
	}
	svg := parseSVG(t, string(section(t, p, "activity").SVG))
	if imgs := svg.all(func(n *node) bool { return n.Name == "image" }); len(imgs) != 0 {
		t.Errorf("the heat map embeds %d images", len(imgs))
	}
	heat := svg.all(byClass("heat"))
	areas := svg.all(byClass("area"))
	if len(heat) != 1 || len(areas) != 1 {
		t.Fatalf("%d g.heat and %d rect.area, want one of each", len(heat), len(areas))
	}
	var x0, y0, cw, rowH float64
	if _, err := fmt.Sscanf(heat[0].Attr["transform"], "translate(%g %g) scale(%g %g)", &x0, &y0, &cw, &rowH); err != nil {
		t.Fatalf("transform %q: %v", heat[0].Attr["transform"], err)
	}
	area := areas[0]
	if math.Abs(area.f("y")-y0) > 0.01 || math.Abs(area.f("height")-20*rowH) > 0.01 {
		t.Errorf("the axis spans y %g..%g, the rows %g..%g", area.f("y"), area.f("y")+area.f("height"), y0, y0+20*rowH)
	}
	rows := svg.all(byClass("hrow"))
	if len(rows) != 20 {
		t.Fatalf("%d rows drawn, want 20", len(rows))
	}
	for i, r := range rows {
		if r.Attr["data-row"] != strconv.Itoa(i) || len(r.Kids) == 0 {
			t.Errorf("row %d: data-row %q, %d cells", i, r.Attr["data-row"], len(r.Kids))
			continue
		}
		for _, c := range r.Kids {
			if c.f("y") != float64(i) || c.f("height") != 1 || c.f("x") < 0 || c.f("x")+c.f("width") > float64(len(d.Activity.Lanes[0])) {
				t.Errorf("row %d: a cell at x %s+%s, y %s+%s", i, c.Attr["x"], c.Attr["width"], c.Attr["y"], c.Attr["height"])
			}
		}
	}
	ticks := svg.all(byClass("ytick"))
	seen := map[string]bool{}
	for _, tk := range ticks {
		r, _ := strconv.Atoi(tk.Attr["data-row"])
		line := tk.all(func(n *node) bool { return n.Name == "line" })[0]
		label := strings.TrimSpace(tk.all(func(n *node) bool { return n.Name == "text" })[0].Text)
		if want := y0 + (float64(r)+0.5)*rowH; math.Abs(line.f("y1")-want) > 0.01 || label != fmt.Sprintf("g%d w0", r) {
			t.Errorf("tick %q at y %g; row %d (g%d w0) is centred at %g", label, line.f("y1"), r, r, want)
		}
		seen[label] = true
	}
	if !seen["g0 w0"] || !seen["g19 w0"] {
		t.Errorf("labelled ticks %v: want the first group's and the last's", seen)
	}
}

// TestItem46_14_EstimatesMarkedAndCapped (issue 46 item 14): n warps (more
// than the 7 counted exactly) hit one address: its warps are a HyperLogLog
// estimate, shown "≈" and no more than n, the warps of the trace; among
// the ns tried, the estimate exceeds n at least once, and is capped there.
func TestItem46_14_EstimatesMarkedAndCapped(t *testing.T) {
	capped := 0
	for _, n := range []int{9, 12, 16, 24, 40, 64, 96, 128} {
		var src strings.Builder
		src.WriteString(".region global 0x1000 0x100\n")
		for w := range n {
			fmt.Fprintf(&src, ".warp %d\natom.global.add.u32 d, [a], 1; | a=0x1000 mask=0x3\n", w)
		}
		d, _, html := page(t, replayWith(t, "hot.tasm", src.String(), 0, nil))
		est := d.Hottest.Warps
		shown := min(est, uint64(n))
		if est > uint64(n) {
			capped++
		}
		want := fmt.Sprintf(`%d accesses (100.0%% of all), <span class="approx" title="an estimate (addresses.exact is false: a HyperLogLog, standard error 15.7%%) of %d`, 2*n, est)
		if !strings.Contains(html, want) || !strings.Contains(html, fmt.Sprintf(">≈%d warps</span>", shown)) {
			t.Errorf("%d warps, estimated %d: the page lacks %q and ≈%d warps", n, est, want, shown)
		}
		if est > uint64(n) && !strings.Contains(html, fmt.Sprintf("capped at the %d warps in the trace", n)) {
			t.Errorf("%d warps, estimated %d: the cap is not named", n, est)
		}
		if !strings.Contains(html, `<p class="legend">≈ marks an estimate`) {
			t.Errorf("%d warps: the page does not say what ≈ means", n)
		}
	}
	if capped == 0 {
		t.Error("no estimate exceeded its trace's warps: the test no longer exercises the cap")
	}
}

var integerLabel = regexp.MustCompile(`^[0-9]{1,3}(,[0-9]{3})*$`)

// TestItem46_15_PlotsShowWhatMatters (issue 46 item 15): the conflict
// depth of 300 instructions at 2 and one at 17 on a log count axis, where
// the one instruction's bar stands clear and its count is printed; count
// axes ticked by integers; the serialisation bars within their axis, each
// with its value; an f32 witness shown as floats with its distance in
// ULPs.
func TestItem46_15_PlotsShowWhatMatters(t *testing.T) {
	var src strings.Builder
	src.WriteString(".region global 0x1000 0x100\n")
	for range 300 {
		src.WriteString("atom.global.add.u32 d, [a], 1; | a=0x1000 mask=0x3\n")
	}
	src.WriteString("atom.global.exch.b32 d, [a], 5; | a=0x1004 mask=0x1ffff\n")
	_, p, _ := page(t, replayWith(t, "deep.tasm", src.String(), 0, nil))

	svg := parseSVG(t, string(section(t, p, "conflicts").SVG))
	area := areaOf(t, svg)
	heights := map[string]float64{}
	for _, b := range svg.all(byClass("bar")) {
		heights[b.Attr["data-value"]] = b.f("height")
		if math.Abs(b.f("y")+b.f("height")-(area.f("y")+area.f("height"))) > 0.01 {
			t.Errorf("bar %s does not stand on the axis", b.Attr["data-value"])
		}
	}
	if len(heights) != 2 || heights["1"] < 0.08*area.f("height") || heights["300"]/heights["1"] > 10 {
		t.Errorf("bars %v in an area %g high: want 300 and 1, the 1 a visible bar, on a log axis", heights, area.f("height"))
	}
	var values []string
	for _, v := range svg.all(byClass("value")) {
		values = append(values, strings.TrimSpace(v.Text))
	}
	if strings.Join(values, " ") != "300 1" {
		t.Errorf("the histogram prints %q over its bars, want 300 and 1", values)
	}
	for _, id := range []string{"conflicts", "hot"} {
		for _, x := range parseSVG(t, string(section(t, p, id).SVG)).all(func(n *node) bool { return n.Name == "text" && n.Class == "" }) {
			if s := strings.TrimSpace(x.Text); strings.ContainsAny(s, "0123456789") && !strings.ContainsAny(s, " %()_") && !integerLabel.MatchString(s) {
				t.Errorf("%s: tick label %q is not an integer", id, s)
			}
		}
	}

	ops := parseSVG(t, string(section(t, p, "ops").SVG))
	oa := areaOf(t, ops)
	bars, labels := ops.all(byClass("bar")), ops.all(byClass("value"))
	if len(bars) != 2 || len(labels) != 2 {
		t.Fatalf("%d bars and %d value labels, want 2 of each (add.u32, exch.b32)", len(bars), len(labels))
	}
	for i, b := range bars {
		v, _ := strconv.ParseFloat(b.Attr["data-value"], 64)
		if b.f("x")+b.f("width") > oa.f("x")+oa.f("width")+0.01 {
			t.Errorf("bar %g ends at x %g, past its axis's end %g", v, b.f("x")+b.f("width"), oa.f("x")+oa.f("width"))
		}
		if got := strings.TrimSpace(labels[i].Text); got != fmt.Sprintf("%.2f", v) {
			t.Errorf("bar %g is labelled %q", v, got)
		}
	}

	// f32: 2^24 then 31 ones, in lane order the ones are lost (2^24 + 1
	// rounds to 2^24); in another order some land first.
	f := ".region global 0x1000 0x100\natom.global.add.f32 d, [a], v; | a=0x1000 v=[0f4b800000" + strings.Repeat(",0f3f800000", 31) + "]\n"
	d, _, html := page(t, replayWith(t, "f.tasm", f, 3, nil))
	if len(d.Witnesses) != 1 || d.Witnesses[0].Values[0] != 0x4b800000 {
		t.Fatalf("witnesses %+v, want 0x1000 with 2^24 (0x4b800000) in lane order", d.Witnesses)
	}
	w := d.Witnesses[0]
	row := `<tr><td>global 0x1000</td><td>f32</td>`
	lo, hi := w.Values[0], w.Values[0]
	for k, v := range w.Values {
		row += fmt.Sprintf(`<td title="0x%08x">%s</td>`, v, strconv.FormatFloat(float64(math.Float32frombits(v)), 'f', -1, 32))
		lo, hi = min(lo, w.Values[k]), max(hi, w.Values[k])
	}
	ulps := fmt.Sprintf("%d ULPs", hi-lo) // positive floats: ULPs apart = bit patterns apart
	if hi-lo == 1 {
		ulps = "1 ULP"
	}
	row += "<td>" + ulps + "</td></tr>"
	if hi == lo || !strings.Contains(html, row) || !strings.Contains(html, `<td title="0x4b800000">16777216</td>`) {
		t.Errorf("the page lacks the typed witness row %s", row)
	}
}

// TestItem46_16_ContentionViews (issue 46 item 16): the CAS outcome of a
// spinlock's two acquires (63 of 64 lane-ops fail), the hottest addresses'
// share of all accesses, the order-sensitive addresses joined with the
// witness of their word, and the run's options shown as the command,
// without hedging.
func TestItem46_16_ContentionViews(t *testing.T) {
	spin := ".region global 0x1000 0x100\natom.global.cas.b32 d, [a], 0, 1; | a=0x1000\natom.global.cas.b32 d, [a], 0, 1; | a=0x1000\n" +
		"atom.global.add.u32 d, [a], 1; | a=0x1004 mask=0xff\n"
	_, p, html := page(t, replayWith(t, "spin.tasm", spin, 0, nil))
	if s := section(t, p, "cas"); s.Message != "63 of 64 CAS lane-ops failed (98.4%); 1 swapped (1.6%)." || !strings.Contains(s.SQL, "sum(cas_failed) AS failed") {
		t.Errorf("CAS section: %q\n%s", s.Message, s.SQL)
	}
	cas := parseSVG(t, string(section(t, p, "cas").SVG))
	var vals []string
	for _, b := range cas.all(byClass("bar")) {
		vals = append(vals, b.Attr["data-value"])
	}
	if strings.Join(vals, " ") != "1 63" {
		t.Errorf("CAS bars %v, want swapped 1 and failed 63", vals)
	}
	if s := section(t, p, "hot"); s.Message != "The top 2 of 2 addresses take 100.0% of all 72 accesses (72)." {
		t.Errorf("hot section: %q", s.Message)
	}
	if !strings.Contains(html, "64 accesses (88.9% of all)") {
		t.Error("the hottest address's share of all accesses is not shown")
	}
	if !strings.Contains(html, "The tables do not record the options of the replay that wrote them") {
		t.Error("tables without replay.options: the page does not say so")
	}

	// racy's exch on 0x1004 is order-sensitive and differs between
	// orders; its adds on 0x1000 commute.
	run := &columnar.RunOptions{Trace: "racy.tasm", Version: "v9.9.9", Order: "lane", Seed: 1, Explore: true, ExploreOrders: 2, ClusterSize: 1}
	dir := replayWith(t, "racy.tasm", racy, 2, run)
	d, p, html := page(t, dir)
	s := section(t, p, "order")
	if s.Table == nil || !strings.Contains(s.Message, "1 of them has a witness") || !strings.Contains(s.SQL, "LEFT JOIN") {
		t.Fatalf("order section %q, table %+v", s.Message, s.Table)
	}
	w := d.Witnesses[0]
	want := fmt.Sprintf(`<tr><td>global 0x1004</td><td>32</td><td>1</td><td>yes</td><td title="0x%08x">%d</td><td title="0x%08x">%d</td><td title="0x%08x">%d</td><td>—</td></tr>`,
		w.Values[0], w.Values[0], w.Values[1], w.Values[1], w.Values[2], w.Values[2])
	if !strings.Contains(html, want) {
		t.Errorf("the page lacks the joined row %s", want)
	}
	for _, w := range []string{
		`The tables were written by <code class="cmd">replay racy.tasm -order lane -seed 1 -explore -explore-orders 2 -tables memory,results,instructions,ops,addresses,orders</code> (replay v9.9.9; it ran without -races, -strict.)`,
	} {
		if !strings.Contains(html, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if strings.Contains(html, "if this replay ran") {
		t.Error("the page hedges about the run's flags although the tables record them")
	}

	// Recorded without -explore: the page says so instead of hedging.
	noExplore := &columnar.RunOptions{Trace: "t.tasm", Version: "v1", Order: "lane", Seed: 1}
	_, p, html = page(t, replayWith(t, "t.tasm", tiny, 0, noExplore))
	if s := section(t, p, "order"); !strings.Contains(s.Needs, "this one ran without it") || strings.Contains(html, "if this replay ran") {
		t.Errorf("order section without -explore: needs %q, message %q", s.Needs, s.Message)
	}
}
