package examples_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/examples"
	"github.com/gpureplay/replay/internal/duckdbq"
	"github.com/gpureplay/replay/trace"
)

// analysisTail follows the demo in the trace TestAnalysisQueries replays, so
// that every query of examples/analysis/ has something to find that the
// demo alone lacks: a word hotter than the others (0x10028: 16384 + 32 + 16
// accesses), a commuting word made order-sensitive (an exch on the add word
// 0x10000), shared memory in two groups, conflicts of depth 1, 2, 4, 8 and 16,
// and faults of two kinds (misaligned 32 + 16, out_of_range 8 + 31). Group
// 65 ors into its own shared 0x0, which group 64's add and cas, the
// order-sensitive shared word, must not see.
const analysisTail = `
# analysis_test.go: the tail after the demo.
.region shared 0x0 0x100
.region global 0x20000 0x100
.group 64
.warp 0
atom.global.xor.b32 %r1, [%rd1], %r2;   | %rd1=0x10028 %r2=1:3
atom.global.xor.b32 %r1, [%rd1], %r2;   | %rd1=0x10028 %r2=7 mask=0xffff
atom.global.exch.b32 %r1, [%rd1], %r2;  | %rd1=0x10000 %r2=5 mask=0x3
atom.shared.add.u32 %r1, [%rd2], 1;     | %rd2=0:4
atom.shared.add.u32 %r1, [%rd2], 2;     | %rd2=[0,0,0,0,0,0,0,0,4,4,4,4,4,4,4,4,8,8,8,8,8,8,8,8,12,12,12,12,12,12,12,12]
atom.global.add.u32 %r1, [%rd3], 1;     | %rd3=0x20001:4
.warp 1
atom.global.add.u32 %r1, [%rd3], 1;     | %rd3=0x30000:4 mask=0xff
atom.global.max.u32 %r1, [%rd3], %r2;   | %rd3=0x200fc:4 %r2=0:1
atom.shared.cas.b32 %r1, [%rd2], %r3, %r2; | %rd2=0:0 %r2=0:1 %r3=3
.group 65
.warp 3
atom.shared.add.u32 %r1, [%rd2], 1;     | %rd2=0x10:0 mask=0xf0f0
atom.shared.or.b32 %r1, [%rd2], %r2;    | %rd2=0:0 %r2=1:1 mask=0xf
atom.shared.exch.b32 %r1, [%rd2], %r2;  | %rd2=0x80:2 %r2=9
`

// analysisReplay replays the demo and analysisTail with -explore twice: into
// Parquet tables in a temporary directory, and into a Collector, from which
// the test computes every answer on its own.
func analysisReplay(t *testing.T) (dir string, c *engine.Collector) {
	t.Helper()
	text := append(slices.Clip(examples.SimpleAtomicIntrinsics()), analysisTail...)
	dir = t.TempDir()
	sink, err := columnar.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	c = new(engine.Collector)
	for _, s := range []engine.Sink{sink, c} {
		src, err := trace.NewTextReader(bytes.NewReader(text), "demo+tail")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := engine.Replay(t.Context(), src, s, engine.WithExplore(true)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, c
}

// analysisFiles lists examples/analysis/*.sql by base name, sorted.
func analysisFiles(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("analysis", "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names)
	if len(names) == 0 {
		t.Fatal("no .sql files in examples/analysis/")
	}
	return names
}

// tablePath matches a quoted table file name in a query.
var tablePath = regexp.MustCompile(`'([^']*\.(?:parquet|arrow))'`)

// TestAnalysisQueries runs every examples/analysis/*.sql, as the notebook
// does, over the tables of one replay with -explore, and checks each answer
// against the same replay's Collector.
//
// The notebook runs a query with the tables directory as DuckDB's working
// directory. The test cannot chdir there (t.Chdir): internal/duckdbq finds
// tools/duckdb by walking up from the working directory to go.mod. It sets
// DuckDB's file_search_path to the directory instead, which resolves the
// queries' relative table names the same way; the examples directory holds
// no table of that name, so a query cannot read anything else.
func TestAnalysisQueries(t *testing.T) {
	duckdbq.Require(t)
	names := analysisFiles(t)
	dir, c := analysisReplay(t)

	sqls := make([]string, len(names))
	for i, name := range names {
		b, err := os.ReadFile(filepath.Join("analysis", name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if !strings.HasPrefix(text, "-- Question: ") || !strings.Contains(text, "\n-- Tables: ") || !strings.Contains(text, "\n-- Flags: ") {
			t.Errorf("%s: must start with a comment: -- Question: …, -- Tables: …, -- Flags: …", name)
		}
		for _, m := range tablePath.FindAllStringSubmatch(text, -1) {
			if strings.ContainsAny(m[1], `/\`) {
				t.Errorf("%s: table %s: the notebook runs the query in the tables directory; name the file alone", name, m[0])
			}
			if _, err := os.Stat(m[1]); err == nil {
				t.Fatalf("examples/%s exists: it would shadow the replay's table", m[1])
			}
		}
		sqls[i] = "SET file_search_path = " + duckdbq.QuoteString(dir) + ";\n" + text
	}
	rs, err := duckdbq.QueryBatch(sqls)
	if err != nil {
		t.Fatal(err)
	}
	a := newAnalysis(c)
	for i, name := range names {
		check, ok := analysisChecks[name]
		if !ok {
			t.Errorf("%s has no check in analysisChecks: add one", name)
			continue
		}
		t.Run(strings.TrimSuffix(name, ".sql"), func(t *testing.T) { check(t, a, rs[i]) })
	}
	for name := range analysisChecks {
		if !slices.Contains(names, name) {
			t.Errorf("analysisChecks has %s, which is not in examples/analysis/", name)
		}
	}
}

// analysis is the Collector's tables, indexed for the checks.
type analysis struct {
	c     *engine.Collector
	stat  map[uint64]*engine.InstStat // by seq
	addrs []engine.AddressStat        // hottest first, as 01 and 07 order them
}

func newAnalysis(c *engine.Collector) *analysis {
	a := &analysis{c: c, stat: make(map[uint64]*engine.InstStat)}
	for i := range c.Stats {
		a.stat[c.Stats[i].Seq] = &c.Stats[i]
	}
	a.addrs = slices.Clone(c.Addrs)
	slices.SortStableFunc(a.addrs, func(x, y engine.AddressStat) int {
		return cmp.Or(cmp.Compare(y.Accesses, x.Accesses), cmp.Compare(x.Space.String(), y.Space.String()),
			cmp.Compare(x.Group, y.Group), cmp.Compare(x.Addr, y.Addr))
	})
	return a
}

// at reports whether result r of an atomic is an access to address s, as the
// queries join results to addresses: same address and space, and the same
// group for a per-group space.
func (a *analysis) at(r *engine.Result, s *engine.AddressStat) bool {
	st := a.stat[r.Seq]
	if r.Addr != s.Addr || st.Static.Space != s.Space || (s.Group != -1 && s.Group != st.Group) {
		return false
	}
	op := st.Static.Op.String()
	return op != "load" && op != "store"
}

var analysisChecks = map[string]func(*testing.T, *analysis, *duckdbq.Result){
	"01_hottest_addresses.sql": func(t *testing.T, a *analysis, r *duckdbq.Result) {
		want := a.addrs[:min(20, len(a.addrs))]
		if len(r.Rows) != len(want) {
			t.Fatalf("%d rows, want %d", len(r.Rows), len(want))
		}
		var total uint64
		for _, s := range a.c.Addrs {
			total += s.Accesses
		}
		for i, s := range want {
			w := []any{s.Space.String(), s.Group, hex(s.Addr), s.Accesses, s.Warps, s.Groups, s.Exact}
			if got := fmt.Sprint(r.Rows[i][:7]); got != fmt.Sprint(w) {
				t.Errorf("row %d: %s, want %v", i, got, w)
			}
			checkFloat(t, fmt.Sprintf("row %d pct_of_accesses", i), r.Rows[i][7], round(100*float64(s.Accesses)/float64(total), 2))
		}
		// The tail made 0x10028 the hottest: the demo's 16384 accesses, 32 and 16 more.
		if got := fmt.Sprint(r.Rows[0][:4]); got != "[global -1 0x10028 16432]" {
			t.Errorf("hottest address %s, want [global -1 0x10028 16432]", got)
		}
	},
	"02_conflict_depth.sql": func(t *testing.T, a *analysis, r *duckdbq.Result) {
		type bin struct{ insts, lanes uint64 }
		bins := map[uint32]*bin{}
		for _, s := range a.c.Stats {
			b := bins[s.MaxConflict]
			if b == nil {
				b = new(bin)
				bins[s.MaxConflict] = b
			}
			b.insts++
			b.lanes += uint64(s.Lanes)
		}
		depths := slices.Sorted(maps.Keys(bins))
		var want [][]any
		for _, d := range depths {
			want = append(want, []any{d, bins[d].insts, bins[d].lanes})
		}
		checkRows(t, r, 3, want)
		for i, d := range depths {
			checkFloat(t, fmt.Sprintf("depth %d pct", d), r.Rows[i][3], round(100*float64(bins[d].insts)/float64(len(a.c.Stats)), 2))
		}
		if fmt.Sprint(depths) != "[1 2 4 8 16 32]" {
			t.Errorf("conflict depths %v, want [1 2 4 8 16 32]", depths)
		}
	},
	"03_ops_serialisation.sql": func(t *testing.T, a *analysis, r *duckdbq.Result) {
		type kind struct{ dialect, op, typ, space string }
		type agg struct {
			insts, lanes, faults, sum uint64
			max                       uint32
		}
		aggs := map[kind]*agg{}
		for _, s := range a.c.Stats {
			k := kind{s.Static.Dialect.String(), s.Static.Op.String(), s.Static.Type.String(), s.Static.Space.String()}
			g := aggs[k]
			if g == nil {
				g = new(agg)
				aggs[k] = g
			}
			g.insts++
			g.lanes += uint64(s.Lanes)
			g.faults += uint64(s.Faults)
			g.sum += uint64(s.MaxConflict)
			g.max = max(g.max, s.MaxConflict)
		}
		keys := slices.SortedFunc(maps.Keys(aggs), func(x, y kind) int {
			return cmp.Or(cmp.Compare(aggs[y].sum, aggs[x].sum), cmp.Compare(x.dialect, y.dialect),
				cmp.Compare(x.op, y.op), cmp.Compare(x.typ, y.typ), cmp.Compare(x.space, y.space))
		})
		var want [][]any
		for _, k := range keys {
			g := aggs[k]
			want = append(want, []any{k.dialect, k.op, k.typ, k.space, g.insts, g.lanes, g.faults, g.max})
		}
		checkRows(t, r, 8, want)
		for i, k := range keys {
			g := aggs[k]
			checkFloat(t, fmt.Sprintf("%v mean_conflict", k), r.Rows[i][8], round(float64(g.sum)/float64(g.insts), 2))
			checkFloat(t, fmt.Sprintf("%v serialisation", k), r.Rows[i][9], round(float64(g.sum)/float64(max(g.lanes, 1)), 4))
		}
	},
	"04_faults.sql": func(t *testing.T, a *analysis, r *duckdbq.Result) {
		type key struct{ fault, dialect, text string }
		type agg struct {
			lanes, first, low uint64
			seqs              map[uint64]bool
		}
		aggs := map[key]*agg{}
		kinds := map[string]uint64{}
		for _, res := range a.c.Res {
			if res.Fault == engine.FaultNone {
				continue
			}
			st := a.stat[res.Seq].Static
			k := key{res.Fault.String(), st.Dialect.String(), st.Text}
			g := aggs[k]
			if g == nil {
				g = &agg{first: res.Seq, low: res.Addr, seqs: map[uint64]bool{}}
				aggs[k] = g
			}
			g.lanes++
			g.seqs[res.Seq] = true
			g.first, g.low = min(g.first, res.Seq), min(g.low, res.Addr)
			kinds[k.fault]++
		}
		keys := slices.SortedFunc(maps.Keys(aggs), func(x, y key) int {
			return cmp.Or(cmp.Compare(aggs[y].lanes, aggs[x].lanes), cmp.Compare(x.fault, y.fault), cmp.Compare(x.text, y.text))
		})
		var want [][]any
		for _, k := range keys {
			g := aggs[k]
			want = append(want, []any{k.fault, k.dialect, k.text, g.lanes, len(g.seqs), g.first, hex(g.low)})
		}
		checkRows(t, r, 7, want)
		// The faults by kind, summed over the query's rows, add up to the
		// instructions table's faults.
		var instFaults uint64
		for _, s := range a.c.Stats {
			instFaults += uint64(s.Faults)
		}
		got := map[string]uint64{}
		for _, row := range r.Rows {
			got[row[0].(string)] += atou(t, row[3])
		}
		if fmt.Sprint(got) != fmt.Sprint(kinds) || got["misaligned"]+got["out_of_range"] != instFaults || instFaults != 87 {
			t.Errorf("faults by kind %v (want %v), instructions' faults %d (want 87 = their sum)", got, kinds, instFaults)
		}
	},
	"05_warp_timeline.sql": func(t *testing.T, a *analysis, r *duckdbq.Result) {
		const buckets = 50
		var total uint64
		for _, s := range a.c.Stats {
			total = max(total, s.Seq+1)
		}
		type agg struct {
			first, last, insts, lanes, faults, conflict uint64
			warps                                       map[[2]int64]bool
		}
		aggs := map[uint64]*agg{}
		for _, s := range a.c.Stats {
			b := s.Seq * buckets / total
			g := aggs[b]
			if g == nil {
				g = &agg{first: s.Seq, warps: map[[2]int64]bool{}}
				aggs[b] = g
			}
			g.first, g.last = min(g.first, s.Seq), max(g.last, s.Seq)
			g.insts++
			g.lanes += uint64(s.Lanes)
			g.faults += uint64(s.Faults)
			g.conflict += uint64(s.MaxConflict)
			g.warps[[2]int64{s.Group, s.Warp}] = true
		}
		bs := slices.Sorted(maps.Keys(aggs))
		var want [][]any
		for _, b := range bs {
			g := aggs[b]
			want = append(want, []any{b, g.first, g.last, g.insts, len(g.warps), g.lanes, g.faults})
		}
		checkRows(t, r, 7, want)
		for i, b := range bs {
			checkFloat(t, fmt.Sprintf("bucket %d mean_conflict", b), r.Rows[i][7], round(float64(aggs[b].conflict)/float64(aggs[b].insts), 2))
		}
		if len(bs) != buckets || aggs[buckets-1].faults != 87 {
			t.Errorf("%d buckets (want %d); faults in the last %d (want all 87)", len(bs), buckets, aggs[bs[len(bs)-1]].faults)
		}
	},
	"06_order_sensitive.sql": func(t *testing.T, a *analysis, r *duckdbq.Result) {
		var want [][]any
		for _, s := range a.addrs {
			if !s.OrderSensitive {
				continue
			}
			v, ok := a.c.Word(s.Space.String(), s.Group, s.Addr&^3)
			if !ok {
				t.Fatalf("%v: no memory word", s)
			}
			ops := map[string]bool{}
			for i := range a.c.Res {
				if a.at(&a.c.Res[i], &s) {
					st := a.stat[a.c.Res[i].Seq].Static
					ops[st.Op.String()+"."+st.Type.String()] = true
				}
			}
			want = append(want, []any{s.Space.String(), s.Group, hex(s.Addr), s.Accesses, s.Warps, v,
				strings.Join(slices.Sorted(maps.Keys(ops)), ",")})
		}
		checkRows(t, r, 7, want)
		// The demo's exch and cas words, the add word the tail's exch joined,
		// and shared 0x0 of group 64 (add and cas; group 65's or is another
		// word); not the xor word, whose accesses, all xor, commute, nor
		// group 65's shared 0x0.
		var addrs []string
		for _, row := range r.Rows {
			addrs = append(addrs, fmt.Sprint(row[:3]))
		}
		if got := strings.Join(addrs, " "); got != "[global -1 0x10000] [global -1 0x10008] [global -1 0x1001c] [shared 64 0x0]" {
			t.Errorf("order-sensitive addresses %s", got)
		}
	},
	"07_hot_address_lanes.sql": func(t *testing.T, a *analysis, r *duckdbq.Result) {
		hot := a.addrs[0]
		type agg struct {
			n, lo, hi, first, last, firstSeq, lastSeq, faults uint64
			vals                                              map[uint64]bool
		}
		aggs := map[uint32]*agg{}
		for i := range a.c.Res {
			res := &a.c.Res[i]
			if !a.at(res, &hot) {
				continue
			}
			g := aggs[res.Lane]
			if g == nil {
				g = &agg{lo: res.Value, hi: res.Value, first: res.Value, last: res.Value, firstSeq: res.Seq, lastSeq: res.Seq, vals: map[uint64]bool{}}
				aggs[res.Lane] = g
			}
			g.n++
			g.vals[res.Value] = true
			g.lo, g.hi = min(g.lo, res.Value), max(g.hi, res.Value)
			if res.Seq < g.firstSeq {
				g.first, g.firstSeq = res.Value, res.Seq
			}
			if res.Seq > g.lastSeq {
				g.last, g.lastSeq = res.Value, res.Seq
			}
			if res.Fault != engine.FaultNone {
				g.faults++
			}
		}
		lanes := slices.Sorted(maps.Keys(aggs))
		var want [][]any
		var sum uint64
		for _, l := range lanes {
			g := aggs[l]
			want = append(want, []any{l, g.n, len(g.vals), g.lo, g.hi, g.first, g.last, g.faults})
			sum += g.n
		}
		checkRows(t, r, 8, want)
		// The results rows at the address are exactly its accesses in the
		// addresses table: 32 lanes, 514 accesses each in lanes 0-15 (the
		// tail's two xors), 513 in lanes 16-31.
		if len(lanes) != 32 || sum != hot.Accesses || aggs[0].n != 514 || aggs[31].n != 513 {
			t.Errorf("%d lanes, %d accesses (addresses table: %d)", len(lanes), sum, hot.Accesses)
		}
	},
	"08_memory_by_space.sql": func(t *testing.T, a *analysis, r *duckdbq.Result) {
		type agg struct {
			groups                 map[int64]bool
			words, nonzero, lo, hi uint64
			sum                    uint64
		}
		aggs := map[string]*agg{}
		for _, w := range a.c.Words {
			g := aggs[w.Space.String()]
			if g == nil {
				g = &agg{groups: map[int64]bool{}, lo: w.Addr, hi: w.Addr}
				aggs[w.Space.String()] = g
			}
			g.groups[w.Group] = true
			g.words++
			if w.Value != 0 {
				g.nonzero++
			}
			g.lo, g.hi = min(g.lo, w.Addr), max(g.hi, w.Addr)
			g.sum += uint64(w.Value)
		}
		spaces := slices.Sorted(maps.Keys(aggs))
		var want [][]any
		for _, s := range spaces {
			g := aggs[s]
			want = append(want, []any{s, len(g.groups), g.words, g.nonzero, hex(g.lo), hex(g.hi), g.sum})
		}
		checkRows(t, r, 7, want)
		if fmt.Sprint(spaces) != "[global shared]" || aggs["shared"].groups[65] != true || len(aggs["shared"].groups) != 2 {
			t.Errorf("spaces %v, want global and shared of groups 64 and 65", spaces)
		}
	},
}

// checkRows compares the first n columns of r's rows with want, printed.
func checkRows(t *testing.T, r *duckdbq.Result, n int, want [][]any) {
	t.Helper()
	if len(r.Rows) != len(want) {
		t.Fatalf("%d rows, want %d:\n got %v\nwant %v", len(r.Rows), len(want), r.Rows, want)
	}
	if len(want) == 0 {
		t.Fatal("no rows: the test trace should give this query something to find")
	}
	for i := range want {
		if got, w := fmt.Sprint(r.Rows[i][:n]), fmt.Sprint(want[i]); got != w {
			t.Errorf("row %d: %s, want %s", i, got, w)
		}
	}
}

// checkFloat compares a DOUBLE column's JSON value with want.
func checkFloat(t *testing.T, what string, v any, want float64) {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Errorf("%s: %v (%T), want a number", what, v, v)
		return
	}
	got, err := n.Float64()
	if err != nil || math.Abs(got-want) > 1e-9 {
		t.Errorf("%s: %v, want %v", what, n, want)
	}
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func hex(a uint64) string { return fmt.Sprintf("0x%x", a) }

func atou(t *testing.T, v any) uint64 {
	t.Helper()
	s, _ := v.(string)
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%v: not an integer column value", v)
	}
	return u
}

// TestAnalysisNotebook checks that examples/analysis.ipynb is a notebook
// Jupyter opens (nbformat 4.5: cell ids, a python3 kernelspec), stored
// without outputs, and that it and examples/analysis/ cannot drift apart:
// every analysis/*.sql it loads exists, each .sql file is loaded, and no
// SQL is copied into a code cell.
func TestAnalysisNotebook(t *testing.T) {
	b, err := os.ReadFile("analysis.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			ID             *string         `json:"id"`
			CellType       string          `json:"cell_type"`
			Metadata       map[string]any  `json:"metadata"`
			Source         json.RawMessage `json:"source"`
			Outputs        []any           `json:"outputs"`
			ExecutionCount *int            `json:"execution_count"`
		} `json:"cells"`
		Metadata struct {
			Kernelspec struct{ Name, Language string } `json:"kernelspec"`
		} `json:"metadata"`
		Nbformat      int `json:"nbformat"`
		NbformatMinor int `json:"nbformat_minor"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		t.Fatalf("analysis.ipynb is not JSON: %v", err)
	}
	if nb.Nbformat != 4 || nb.NbformatMinor != 5 || nb.Metadata.Kernelspec.Name != "python3" || nb.Metadata.Kernelspec.Language != "python" {
		t.Errorf("nbformat %d.%d, kernelspec %+v; want 4.5, python3", nb.Nbformat, nb.NbformatMinor, nb.Metadata.Kernelspec)
	}
	loaded := map[string]bool{}
	ids := map[string]bool{}
	validID := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	sqlRef := regexp.MustCompile(`["']analysis/([^"'\s]+\.sql)["']`) // a string literal that names a file
	var code strings.Builder
	for i, c := range nb.Cells {
		if c.ID == nil || !validID.MatchString(*c.ID) || ids[*c.ID] {
			t.Errorf("cell %d: id missing, invalid or repeated", i)
		} else {
			ids[*c.ID] = true
		}
		if c.Metadata == nil {
			t.Errorf("cell %d: no metadata", i)
		}
		var lines []string
		if err := json.Unmarshal(c.Source, &lines); err != nil {
			var s string
			if err := json.Unmarshal(c.Source, &s); err != nil {
				t.Fatalf("cell %d: source is neither a string nor a list of strings", i)
			}
			lines = []string{s}
		}
		src := strings.Join(lines, "")
		switch c.CellType {
		case "code":
			if c.Outputs == nil || len(c.Outputs) != 0 || c.ExecutionCount != nil {
				t.Errorf("cell %d: stored with outputs or an execution count", i)
			}
			for _, m := range sqlRef.FindAllStringSubmatch(src, -1) {
				loaded[m[1]] = true
			}
			if regexp.MustCompile(`(?i)\bSELECT\b.*\bFROM\b`).MatchString(src) {
				t.Errorf("cell %d: SQL copied into the notebook; load it from analysis/ instead", i)
			}
			code.WriteString(src)
		case "markdown":
		default:
			t.Errorf("cell %d: cell_type %q", i, c.CellType)
		}
	}
	for name := range loaded {
		if _, err := os.Stat(filepath.Join("analysis", name)); err != nil {
			t.Errorf("the notebook loads analysis/%s, which does not exist", name)
		}
	}
	for _, name := range analysisFiles(t) {
		if !loaded[name] {
			t.Errorf("the notebook does not load analysis/%s", name)
		}
	}
	for _, s := range []string{"duckdb.sql(", ".df()", "os.chdir(", "-explore", "import matplotlib"} {
		if !strings.Contains(code.String(), s) && !strings.Contains(string(b), s) {
			t.Errorf("the notebook never mentions %q", s)
		}
	}
}
