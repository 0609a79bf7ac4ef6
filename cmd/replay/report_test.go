package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpureplay/replay/internal/duckdbq"
	"github.com/gpureplay/replay/report"
	"github.com/gpureplay/replay/trace"
)

var updateReportPNG = flag.Bool("update-report-png", false, "rewrite docs/report.png from TestReportInBrowser's screenshot")

// browserCheck is what tools/browser/check.mjs prints.
type browserCheck struct {
	ConsoleErrors []string `json:"consoleErrors"`
	PageErrors    []string `json:"pageErrors"`
	Requests      []string `json:"requests"`
	SVGs          int      `json:"svgs"`
	Texts         []string `json:"texts"`
	Title         string   `json:"title"`
	Numbers       []struct {
		Label, Value, Note, Approx, Why string
	} `json:"numbers"`
	Heat *struct {
		Area box `json:"area"`
		Rows []struct {
			box
			Row   int `json:"row"`
			Cells int `json:"cells"`
		} `json:"rows"`
		Ticks []struct {
			Row   int     `json:"row"`
			Y     float64 `json:"y"`
			Label string  `json:"label"`
		} `json:"ticks"`
		Images int `json:"images"`
	} `json:"heat"`
}

// box is an element's rendered bounding box, in CSS pixels.
type box struct {
	Top, Bottom, Left, Right float64
}

// requireBrowser fails the test (it does not skip: CI installs them) when
// node, Chromium or tools/browser's playwright-core is missing, and returns
// the path of check.mjs.
func requireBrowser(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "tools", "browser", "check.mjs")
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	var missing []string
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node (apt-get install -y nodejs npm)")
	}
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, chromium+" (apt-get install -y chromium, or set CHROMIUM)")
	}
	if _, err := os.Stat(filepath.Join(root, "tools", "browser", "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "playwright-core (npm ci --prefix tools/browser)")
	}
	if len(missing) > 0 {
		t.Fatalf("the browser test needs %s", strings.Join(missing, "; "))
	}
	return script
}

// TestReportInBrowser: a generated spinlock trace replayed with -explore,
// its report loaded in headless Chromium: no console or page error, no
// request beyond the file, the plots rendered, the headline numbers shown;
// the heat map drawn where its axis says (issue 46 item 13) and the
// hottest address's warps, a HyperLogLog estimate above the trace's warps,
// marked and capped (item 14), both read from the rendered page; a
// screenshot.
func TestReportInBrowser(t *testing.T) {
	script := requireBrowser(t)
	tmp := t.TempDir()
	trace, out, page := filepath.Join(tmp, "spin.zst"), filepath.Join(tmp, "out"), filepath.Join(tmp, "report.html")
	for _, args := range [][]string{
		{"gen", "spinlock", "-lane-ops", "4e5", "-o", trace, "-q"},
		{"-q", "-explore", "-o", out, trace},
		{"report", out, "-o", page, "-title", "spinlock, 4e5 lane-ops"},
	} {
		if code, _, errOut := replayCmd(t, args...); code != exitOK {
			t.Fatalf("replay %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
	d, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(tmp, "report.png")
	start := time.Now()
	cmd := exec.Command("node", script, page, shot)
	cmd.Env = append(os.Environ(), "SHOT_MAX_HEIGHT=1500")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	t.Logf("Chromium loaded the page in %v", time.Since(start).Round(time.Millisecond))
	var got browserCheck
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("check.mjs printed %q: %v", stdout, err)
	}
	if len(got.ConsoleErrors) > 0 || len(got.PageErrors) > 0 {
		t.Errorf("console errors %q, page errors %q", got.ConsoleErrors, got.PageErrors)
	}
	if len(got.Requests) > 0 {
		t.Errorf("the page fetched %q; it must be self-contained", got.Requests)
	}
	// hottest addresses, conflict depth, ops, CAS outcome, order-sensitive
	// addresses (CAS and exch do not commute), per-warp activity.
	if got.SVGs != 6 {
		t.Errorf("%d rendered <svg> elements, want 6", got.SVGs)
	}
	if got.Title != "spinlock, 4e5 lane-ops" {
		t.Errorf("title %q", got.Title)
	}
	want := []string{commaInt(d.Instructions.N), commaInt(d.Lanes.N), commaInt(d.LaneOps.N), "0", commaInt(d.Addresses.N), d.Hottest.Label()}
	if len(got.Texts) < len(want) {
		t.Fatalf("headline numbers %q, want %q…", got.Texts, want)
	}
	for i, w := range want {
		if got.Texts[i] != w {
			t.Errorf("headline number %d is %q, want %q (all: %q)", i, got.Texts[i], w, got.Texts)
		}
	}
	checkHeatGeometry(t, &got, d)
	checkHeadlineEstimate(t, &got, d, trace)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10<<10 || st.Size() > 300<<10 {
		t.Errorf("screenshot %s: %v (want 10 KiB to 300 KiB)", shot, err)
	}
	if *updateReportPNG {
		b, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../../docs/report.png", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkHeatGeometry (issue 46 item 13): the heat map, as Chromium laid it
// out, has a band of rectangles for every row of the activity grid, in
// order, each band centred on its row's tick; the first row's band starts
// at the top of the plot area and the last one's ends at its bottom, and
// both rows are labelled, first group to last. No raster image stands in
// for the rows.
func checkHeatGeometry(t *testing.T, got *browserCheck, d *report.Data) {
	t.Helper()
	h := got.Heat
	if h == nil {
		t.Error("the page has no heat map drawn as rows (g.hrow) in a plot area (rect.area)")
		return
	}
	a := d.Activity
	rows := len(a.Lanes)
	if len(h.Rows) != rows || h.Images != 0 {
		t.Errorf("the heat map draws %d rows and %d images, want the grid's %d rows and no image", len(h.Rows), h.Images, rows)
		return
	}
	const eps = 0.75 // CSS pixels
	band := (h.Area.Bottom - h.Area.Top) / float64(rows)
	for i, r := range h.Rows {
		if r.Row != i || r.Cells == 0 {
			t.Errorf("row %d: data-row %d with %d cells", i, r.Row, r.Cells)
			continue
		}
		top := h.Area.Top + float64(i)*band
		if math.Abs(r.Top-top) > eps || math.Abs(r.Bottom-(top+band)) > eps {
			t.Errorf("row %d spans y %.1f..%.1f, want its band %.1f..%.1f of the axis %.1f..%.1f", i, r.Top, r.Bottom, top, top+band, h.Area.Top, h.Area.Bottom)
		}
		if r.Left < h.Area.Left-eps || r.Right > h.Area.Right+eps {
			t.Errorf("row %d spans x %.1f..%.1f, outside the axis %.1f..%.1f", i, r.Left, r.Right, h.Area.Left, h.Area.Right)
		}
	}
	if math.Abs(h.Rows[0].Top-h.Area.Top) > eps || math.Abs(h.Rows[rows-1].Bottom-h.Area.Bottom) > eps {
		t.Errorf("the rows span y %.1f..%.1f, the axis %.1f..%.1f", h.Rows[0].Top, h.Rows[rows-1].Bottom, h.Area.Top, h.Area.Bottom)
	}
	label := func(r int) string {
		w := a.Warps[r*a.WarpsPerRow]
		return fmt.Sprintf("g%d w%d", w.Group, w.Warp)
	}
	ticked := map[int]bool{}
	for _, tk := range h.Ticks {
		ticked[tk.Row] = true
		r := h.Rows[tk.Row]
		if math.Abs((r.Top+r.Bottom)/2-tk.Y) > eps || tk.Label != label(tk.Row) {
			t.Errorf("tick %q at y %.1f: row %d (%s) is drawn at %.1f..%.1f", tk.Label, tk.Y, tk.Row, label(tk.Row), r.Top, r.Bottom)
		}
	}
	if !ticked[0] || !ticked[rows-1] {
		t.Errorf("ticks %v: the first row (%s) and the last (%s) must be labelled", h.Ticks, label(0), label(rows-1))
	}
}

// checkHeadlineEstimate (issue 46 item 14): the hottest address's warps,
// an estimate (addresses.exact is false) that exceeds the trace's warps,
// show as "≈N warps", N the trace's warps, counted here from the trace
// itself; the exact accesses show unmarked.
func checkHeadlineEstimate(t *testing.T, got *browserCheck, d *report.Data, tracePath string) {
	t.Helper()
	f, err := os.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br, err := trace.NewBinaryReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	warps := map[[2]int64]bool{}
	for {
		in, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if in.Dir == nil {
			warps[[2]int64{in.Group, in.Warp}] = true
		}
	}
	traceWarps := uint64(len(warps))
	h := d.Hottest
	if h.Exact || h.Warps <= traceWarps {
		t.Fatalf("the hottest address: %d warps (exact %v) of %d in the trace: the trace no longer exercises a capped estimate", h.Warps, h.Exact, traceWarps)
	}
	for _, n := range got.Numbers {
		if n.Label != "hottest address" {
			continue
		}
		wantApprox := "≈" + commaInt(min(traceWarps, h.Accesses)) + " warps"
		if n.Approx != wantApprox || !strings.Contains(n.Why, "estimate") || !strings.Contains(n.Why, commaInt(h.Warps)) || !strings.Contains(n.Why, "capped") {
			t.Errorf("the hottest address's warps show as %q (%q), want %q: the estimate %d, capped", n.Approx, n.Why, wantApprox, h.Warps)
		}
		if !strings.HasPrefix(n.Note, commaInt(h.Accesses)+" accesses") || strings.Contains(strings.TrimSuffix(n.Note, n.Approx), "≈") {
			t.Errorf("the hottest address's note %q: want its exact %d accesses unmarked", n.Note, h.Accesses)
		}
		return
	}
	t.Errorf("no headline figure of the hottest address among %+v", got.Numbers)
}

// commaInt writes n as the page does, with thousands separators.
func commaInt(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// TestReportErrors: a bad or empty DIR fails with exit 1 and leaves no
// file; a missing -o is a usage error; a failed report keeps an earlier page.
func TestReportErrors(t *testing.T) {
	tmp := t.TempDir()
	page := filepath.Join(tmp, "r.html")
	if err := os.WriteFile(page, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(tmp, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", filepath.Join(tmp, "nosuch"), "-o", page}, exitError, "no such file or directory"},
		{[]string{"report", empty, "-o", page}, exitError, "holds none of the tables"},
		{[]string{"report", empty}, exitUsage, "report needs -o FILE.html"},
		{[]string{"report", "-o", page}, exitUsage, "report takes one output directory, got 0"},
		{[]string{"report", empty, "-o", page, "-bogus"}, exitUsage, "run 'replay help report' for usage"},
	} {
		code, _, errOut := replayCmd(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("replay %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
		}
	}
	if b, _ := os.ReadFile(page); string(b) != "earlier" {
		t.Errorf("a failed report changed %s: %q", page, b)
	}
	ents, _ := os.ReadDir(tmp)
	if len(ents) != 2 {
		t.Errorf("%s holds %d entries, want r.html and empty: %v", tmp, len(ents), ents)
	}
}

// TestReportSQLRuns: every SQL text the page shows, the headline numbers'
// and each section's, runs in DuckDB over the tables it was drawn from
// (with every table there: -explore, -explore-orders, -races) and returns
// rows; the headline numbers' first query gives the instructions the page
// counts.
func TestReportSQLRuns(t *testing.T) {
	duckdbq.Require(t)
	root := t.TempDir()
	tr := filepath.Join(root, "t.tasm")
	src := ".region global 0x1000 0x100\n.group 0\natom.cta.global.add.u32 d, [a], 1; | a=0x1000 mask=0x1\n" +
		".group 1\natom.cta.global.add.u32 d, [a], 1; | a=0x1000 mask=0x1\n" +
		"atom.global.exch.b32 d, [a], v; | a=0x1004 v=100:1\natom.global.add.u32 d, [a], 1; | a=0x1009\n" +
		"atom.global.cas.b32 d, [a], 0, 1; | a=0x1010 mask=0x3\n"
	if err := os.WriteFile(tr, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	if code, _, stderr := replayCmd(t, tr, "-explore", "-explore-orders", "2", "-races", "-o", out, "-q"); code != 0 {
		t.Fatal(stderr)
	}
	d, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := report.Build(d, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sqls, names []string
	prefix := "SET file_search_path = " + duckdbq.QuoteString(out) + ";\n"
	sqls, names = append(sqls, prefix+p.NumSQL), append(names, "headline numbers")
	for _, s := range p.Sections {
		if s.SQL != "" {
			sqls, names = append(sqls, prefix+s.SQL), append(names, s.Title)
		}
	}
	if len(sqls) < 8 {
		t.Fatalf("%d SQL texts on the page, want the numbers' and every section's", len(sqls))
	}
	for i, q := range sqls {
		rs, err := duckdbq.QueryBatch([]string{q})
		if err != nil {
			t.Errorf("%s: the page's SQL does not run: %v", names[i], err)
			continue
		}
		if len(rs[0].Rows) == 0 {
			t.Errorf("%s: the page's SQL returns no row", names[i])
		}
	}
}
