package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/gpureplay/replay/columnar"
)

// Options are the page's settings.
type Options struct {
	// Title heads the page; empty: "replay report: DIR".
	Title string
}

// Number is a headline figure: its value, or why it is missing.
type Number struct {
	Label string
	Value string
	Note  string // under the value: where it came from, or what it needs
	Known bool
	// Approx, when set, follows Note: an estimate, "≈N", capped by what
	// is known exactly; ApproxWhy says which estimate and which cap.
	Approx, ApproxWhy string
}

// Section is one part of the page: a plot and the SQL of its data, or
// what is needed to draw it.
type Section struct {
	ID, Title string
	About     string        // what it shows
	SVG       template.HTML // the plot; empty when there is none
	Message   string        // instead of, or beside, a plot
	Needs     string        // the table or flag it lacks
	Table     *Table        // rows beside or instead of a plot; nil when there are none
	SQL       string        // DuckDB SQL over the Parquet files that gives the plot's (and table's) data
}

// Table is an HTML table of a section: a caption, an optional row of
// column groups over the head, and rows of cells.
type Table struct {
	Caption string
	Groups  []HeadGroup // empty: no group row
	Head    []string
	Rows    [][]Cell
}

// HeadGroup is a heading over Span columns.
type HeadGroup struct {
	Label string
	Span  int
}

// Cell is one cell: text, shown as code (an instruction) when Code, with
// Title as its tooltip.
type Cell struct {
	Text  string
	Code  bool
	Title string
}

// Page is everything the HTML template shows.
type Page struct {
	Title    string
	Dir      string
	Tables   []string // present
	Missing  []string
	Numbers  []Number
	NumSQL   string
	Sections []Section
	// Run is the replay's command as the tables record it (replay.options),
	// RunNotes what it did not do; both empty when they record nothing.
	Run      string
	RunNotes string
	// Estimates: some figure is an estimate (≈), so the page says what ≈ means.
	Estimates bool
}

// Generate reads the tables in dir and writes the report page to w.
func Generate(w io.Writer, dir string, opts Options) error {
	d, err := Load(dir)
	if err != nil {
		return err
	}
	return Write(w, d, opts)
}

// Write renders d as one self-contained HTML page.
func Write(w io.Writer, d *Data, opts Options) error {
	p, err := Build(d, opts)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return err
	}
	_, err = b.WriteTo(w)
	return err
}

// Build computes the page: the headline numbers and each section's plot.
func Build(d *Data, opts Options) (*Page, error) {
	p := &Page{Title: opts.Title, Dir: d.Dir}
	if p.Title == "" {
		p.Title = "replay report: " + d.Dir
	}
	for _, t := range allTables {
		if d.Present[t] {
			p.Tables = append(p.Tables, t)
		} else {
			p.Missing = append(p.Missing, t)
		}
	}
	p.Numbers, p.NumSQL = d.numbers()
	p.Run, p.RunNotes = runLine(d.Run)
	for _, n := range p.Numbers {
		p.Estimates = p.Estimates || n.Approx != ""
	}
	for _, f := range []func() (Section, error){d.hotSection, d.conflictSection, d.opsSection, d.casSection, d.faultSection, d.orderSection, d.witnessSection, d.raceSection, d.activitySection} {
		s, err := f()
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", s.Title, err)
		}
		p.Sections = append(p.Sections, s)
	}
	return p, nil
}

// needs says what a section lacks: the table, and how to get it.
func (d *Data) needs(table, flag string) string {
	if d.Arrow[table] {
		return fmt.Sprintf("needs %s.parquet; %s has %s.arrow only: run replay with -format parquet (or both)", table, d.Dir, table)
	}
	s := fmt.Sprintf("needs the %s table (%s.parquet), which %s lacks: run replay with -tables including %s (replay writes all five tables by default)", table, table, d.Dir, table)
	if flag != "" {
		s += ", and with " + flag
	}
	return s
}

func count(c Count) Number {
	if !c.Known {
		return Number{Value: "—"}
	}
	return Number{Value: commas(c.N), Note: "from " + c.From, Known: true}
}

func (d *Data) numbers() ([]Number, string) {
	var ns []Number
	add := func(label string, n Number, need string) {
		n.Label = label
		if !n.Known && need != "" {
			n.Note = "needs " + need
		}
		ns = append(ns, n)
	}
	add("instructions", count(d.Instructions), "instructions or ops")
	add("lanes", count(d.Lanes), "instructions or ops")
	add("lane-ops", count(d.LaneOps), "results")
	add("faults", count(d.Faults), "results, instructions or ops")
	add("distinct addresses", count(d.Addresses), "addresses")
	if h := d.Hottest; h != nil {
		n := Number{Value: h.Label(), Note: commas(h.Accesses) + " accesses (" + percent(h.Accesses, d.TotalAccesses) + " of all), ", Known: true}
		w, approx, why := d.warps(*h)
		if approx {
			n.Approx, n.ApproxWhy = w+" warps", why
		} else {
			n.Note += w + " warps"
		}
		add("hottest address", n, "")
	} else {
		add("hottest address", Number{Value: "—"}, "addresses")
	}
	add("worst max_conflict", count(d.WorstConflict), "instructions or ops")
	add("memory words", count(d.MemoryWords), "memory")

	var sql []string
	if d.Present["instructions"] {
		sql = append(sql, `SELECT count(*) AS instructions, sum(lanes) AS lanes, sum(faults) AS faults,
       max(max_conflict) AS worst_conflict
FROM 'instructions.parquet';`)
	} else if d.Present["ops"] {
		sql = append(sql, `SELECT sum(instructions) AS instructions, sum(lanes) AS lanes, sum(faults) AS faults,
       max(max_conflict) AS worst_conflict
FROM 'ops.parquet';`)
	}
	if d.Present["results"] {
		sql = append(sql, `SELECT count(*) AS lane_ops, count(*) FILTER (WHERE fault <> '') AS faults
FROM 'results.parquet';`)
	}
	if d.Present["addresses"] {
		sql = append(sql, `SELECT count(*) AS addresses, sum(accesses) AS accesses
FROM 'addresses.parquet';`, hotSQL("", 1))
	}
	if d.Present["memory"] {
		sql = append(sql, `SELECT count(*) AS memory_words FROM 'memory.parquet';`)
	}
	return ns, strings.Join(sql, "\n\n")
}

func hotSQL(where string, limit int) string {
	if where != "" {
		where = "\nWHERE " + where
	}
	return fmt.Sprintf(`SELECT space, "group", printf('0x%%x', addr) AS addr, accesses, warps
FROM 'addresses.parquet'%s
ORDER BY accesses DESC, space, "group", addr
LIMIT %d;`, where, limit)
}

func (d *Data) hotSection() (s Section, err error) {
	s = Section{ID: "hot", Title: "Hottest addresses",
		About: fmt.Sprintf("The %d addresses with the most lane-element accesses by atomics (ties in the table's order: space, group, address), and their share of all accesses.", TopN),
		SQL: hotSQL("", TopN) + fmt.Sprintf(`

SELECT sum(accesses) AS top_accesses,
       (SELECT sum(accesses) FROM 'addresses.parquet') AS all_accesses
FROM (SELECT accesses FROM 'addresses.parquet' ORDER BY accesses DESC LIMIT %d);`, TopN)}
	switch {
	case !d.Present["addresses"]:
		s.Needs = d.needs("addresses", "")
	case len(d.Hot) == 0:
		s.Message = "No atomic touched an address (the addresses table is empty)."
	default:
		s.Message = fmt.Sprintf("The top %d of %s addresses take %s of all %s accesses (%s).",
			len(d.Hot), commas(d.Addresses.N), percent(d.HotAccesses, d.TotalAccesses), commas(d.TotalAccesses), commas(d.HotAccesses))
		s.SVG = hotPlot(fmt.Sprintf("Top %d addresses by accesses", len(d.Hot)), d.Hot, d.TotalAccesses, barColor)
	}
	return s, err
}

func (d *Data) conflictSection() (s Section, err error) {
	s = Section{ID: "conflicts", Title: "Distribution of conflict depth",
		About: "How many instructions had each max_conflict: the most lane-elements of one instruction that hit one address, which the hardware serialises. The count axis is logarithmic, so that a few deep conflicts show beside thousands of shallow ones; each bar's count is printed over it.",
		SQL: `SELECT max_conflict, count(*) AS instructions
FROM 'instructions.parquet'
GROUP BY max_conflict
ORDER BY max_conflict;`}
	switch {
	case !d.Present["instructions"]:
		s.Needs = d.needs("instructions", "")
	case len(d.Conflicts) == 0:
		s.Message = "The instructions table is empty."
	default:
		s.SVG = conflictPlot(d.Conflicts)
	}
	return s, err
}

func (d *Data) opsSection() (s Section, err error) {
	s = Section{ID: "ops", Title: "Serialisation by operation",
		About: "Per (dialect, op, type): the mean max_conflict of its instructions (conflict_sum / instructions), with the instruction count and the worst max_conflict in the label.",
		SQL: `SELECT dialect, op, type, sum(instructions) AS instructions, sum(lanes) AS lanes,
       max(max_conflict) AS worst_conflict,
       sum(conflict_sum) / sum(instructions) AS mean_conflict
FROM 'ops.parquet'
GROUP BY dialect, op, type
ORDER BY dialect, op, type;`}
	switch {
	case !d.Present["ops"]:
		s.Needs = d.needs("ops", "")
	case len(d.Ops) == 0:
		s.Message = "The ops table is empty."
	default:
		s.SVG = opsPlot(d.Ops)
	}
	return s, err
}

func (d *Data) casSection() (s Section, err error) {
	s = Section{ID: "cas", Title: "Compare-and-swap outcome",
		About: "Per kind of CAS: its lane-ops that ran (lanes − faults), those that swapped, and those that failed: found another value than their compare operand and left memory as it was (instructions.cas_failed). A spinlock's failed acquires, a lock-free update's retries.",
		SQL: `SELECT dialect || ' cas.' || type AS kind, count(*) AS instructions,
       sum(lanes) - sum(faults) AS lane_ops,
       sum(lanes) - sum(faults) - sum(cas_failed) AS swapped,
       sum(cas_failed) AS failed
FROM 'instructions.parquet'
WHERE op = 'cas'
GROUP BY kind
ORDER BY kind;`}
	switch {
	case !d.Present["instructions"]:
		s.Needs = d.needs("instructions", "")
	case !d.CASKnown:
		s.Needs = "needs the instructions table's cas_failed column, which these tables predate: replay the trace again"
	case len(d.CAS) == 0:
		s.Message = "The trace has no compare-and-swap."
	default:
		var ran, failed uint64
		for _, c := range d.CAS {
			ran, failed = ran+c.Ran, failed+c.Failed
		}
		s.Message = fmt.Sprintf("%s of %s CAS lane-ops failed (%s); %s swapped (%s).",
			commas(failed), commas(ran), percent(failed, ran), commas(ran-failed), percent(ran-failed, ran))
		s.SVG = casPlot(d.CAS)
	}
	return s, err
}

func (d *Data) faultSection() (s Section, err error) {
	s = Section{ID: "faults", Title: "Faults by kind"}
	switch {
	case d.Present["results"]:
		s.About = "Faulted lane-elements by kind (results.fault)."
		s.SQL = `SELECT fault, count(*) AS lanes
FROM 'results.parquet'
WHERE fault <> ''
GROUP BY fault
ORDER BY lanes DESC, fault;`
		if len(d.FaultKinds) == 0 {
			s.Message = "No lane faulted."
		} else {
			s.SVG = countPlot("Faulted lane-elements by kind", "faulted lane-elements", d.FaultKinds, alarmColor)
		}
	case d.Present["instructions"]:
		s.About = "Without the results table the kinds are unknown: faulted or dropped lane-elements by instruction kind (instructions.faults). Run replay with the results table for the kinds."
		s.SQL = `SELECT dialect || ' ' || op || '.' || type AS kind, sum(faults) AS faults
FROM 'instructions.parquet'
GROUP BY kind
HAVING sum(faults) > 0
ORDER BY faults DESC, kind;`
		if len(d.FaultsByInst) == 0 {
			s.Message = "No lane faulted."
		} else {
			s.SVG = countPlot("Faulted lane-elements by instruction kind", "faulted lane-elements", d.FaultsByInst, alarmColor)
		}
	default:
		s.SQL = `SELECT fault, count(*) AS lanes FROM 'results.parquet' WHERE fault <> '' GROUP BY fault;`
		s.Needs = d.needs("results", "") + " (or, for counts without kinds, the instructions table)"
	}
	return s, err
}

func (d *Data) orderSection() (s Section, err error) {
	s = Section{ID: "order", Title: "Order-sensitive addresses",
		About: "Addresses whose accesses might not commute, so that another order the ISA allows could leave a different final value (addresses.order_sensitive, filled by replay -explore): the most accessed of them, and beside each the witness (orders table, replay -explore-orders K) that shows its word's final value did differ under another order.",
		SQL: hotSQL("order_sensitive", TopN) + `

SELECT count(*) FILTER (WHERE order_sensitive) AS order_sensitive,
       sum(accesses) FILTER (WHERE order_sensitive) AS their_accesses,
       sum(accesses) AS accesses
FROM 'addresses.parquet';`}
	if d.Present["orders"] {
		s.SQL += "\n\n" + orderJoinSQL
	}
	switch {
	case !d.Present["addresses"]:
		s.Needs = d.needs("addresses", "-explore")
	case d.Run != nil && !d.Run.Explore:
		s.Needs = "needs a replay with -explore: this one ran without it, so order_sensitive is false for every address. Run replay -explore to fill it"
	case d.OrderCount == 0 && d.Run != nil:
		s.Message = "No address is order-sensitive: this replay ran with -explore, and every address's accesses provably commute."
	case d.OrderCount == 0:
		s.Message = "No address is marked order-sensitive. The tables do not record whether the replay ran with -explore (they predate replay.options); without it the column is always false: run replay -explore to fill it."
	default:
		s.Message = fmt.Sprintf("%s of %s addresses are order-sensitive, with %s of %s accesses.",
			commas(d.OrderCount), commas(d.Addresses.N), commas(d.OrderAccesses), commas(d.TotalAccesses))
		switch {
		case d.Present["orders"]:
			s.Message += fmt.Sprintf(" %s of them %s a witness: a word whose final value differed between the %s replayed.",
				commas(d.OrderWitnessed), map[bool]string{true: "has", false: "have"}[d.OrderWitnessed == 1], plural(d.ordersReplayed(), "order"))
			s.Table = d.orderJoinTable()
		case d.Run != nil:
			s.Message += " This replay ran without -explore-orders: replay with -explore-orders K to see which of them end with another value in another order."
		default:
			s.Message += " Replay with -explore-orders K to see which of them end with another value in another order."
		}
		s.SVG = hotPlot(fmt.Sprintf("Top %d order-sensitive addresses by accesses", len(d.OrderSensitive)), d.OrderSensitive, d.TotalAccesses, alarmColor)
	}
	return s, err
}

// ordersReplayed is how many orders -explore-orders replayed: lane order
// and K random ones, as the run records it, else as the orders table
// names them.
func (d *Data) ordersReplayed() uint64 {
	if d.Run != nil && d.Run.ExploreOrders > 0 {
		return uint64(d.Run.ExploreOrders) + 1
	}
	return uint64(len(d.OrderNames))
}

// orderJoinSQL joins the top order-sensitive addresses with their words'
// rows of the orders table.
var orderJoinSQL = fmt.Sprintf(`SELECT a.space, a."group", printf('0x%%x', a.addr) AS addr, a.accesses, a.warps, a.exact,
       o."values" IS NOT NULL AS differed, o.orders, o."values"
FROM 'addresses.parquet' a
LEFT JOIN (SELECT space, "group", addr,
                  list("order" ORDER BY file_row_number) AS orders,
                  list(value ORDER BY file_row_number) AS "values"
           FROM read_parquet('orders.parquet', file_row_number = true)
           GROUP BY space, "group", addr) o
  ON o.space = a.space AND o."group" = a."group" AND o.addr = a.addr - a.addr %% 4
WHERE a.order_sensitive
ORDER BY a.accesses DESC, a.space, a."group", a.addr
LIMIT %d;`, TopN)

// orderJoinTable is the top order-sensitive addresses and their witnesses.
func (d *Data) orderJoinTable() *Table {
	names := d.OrderNames[:min(len(d.OrderNames), 4)]
	t := &Table{Caption: fmt.Sprintf("The top %d order-sensitive addresses by accesses, joined with the orders table on their word: whether its final value differed, and its value under ", len(d.OrderSensitive))}
	if len(names) < len(d.OrderNames) {
		t.Caption += fmt.Sprintf("the first %d of %d orders.", len(names), len(d.OrderNames))
	} else {
		t.Caption += "each order."
	}
	t.Head = append([]string{"address", "accesses", "warps", "differed"}, names...)
	t.Head = append(t.Head, "spread")
	for i, a := range d.OrderSensitive {
		wt, approx, why := d.warps(a)
		row := []Cell{{Text: a.Label()}, {Text: commas(a.Accesses)}, {Text: wt}}
		if approx {
			row[2].Title = why
		}
		var w *Witness
		if i < len(d.OrderJoin) {
			w = d.OrderJoin[i]
		}
		if w == nil {
			row = append(row, Cell{Text: "no"})
			for range names {
				row = append(row, Cell{Text: "—"})
			}
			row = append(row, Cell{Text: "—"})
		} else {
			row = append(row, Cell{Text: "yes"})
			for k := range names {
				row = append(row, w.cell(k))
			}
			sp := w.spread()
			if sp == "" {
				sp = "—"
			}
			row = append(row, Cell{Text: sp})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// warps is a's warps as the page shows them, and whether they are an
// estimate (addresses.exact false: a HyperLogLog), then "≈N", capped by
// what is known exactly: no more than its accesses, nor the warps of the
// trace; why says so.
func (d *Data) warps(a Address) (text string, approx bool, why string) {
	if a.Exact {
		return commas(a.Warps), false, ""
	}
	n, cap, of := a.Warps, a.Accesses, "accesses"
	if d.TraceWarps.Known && d.TraceWarps.N < cap {
		cap, of = d.TraceWarps.N, "warps in the trace"
	}
	why = fmt.Sprintf("an estimate (addresses.exact is false: a HyperLogLog, standard error 15.7%%) of %s", commas(n))
	if n > cap {
		n = cap
		why += fmt.Sprintf(", capped at the %s %s", commas(cap), of)
	}
	return "≈" + commas(n), true, why
}

func (d *Data) activitySection() (s Section, err error) {
	s = Section{ID: "activity", Title: "Per-warp activity over the trace",
		About: "Lanes that ran, per (group, warp) and window of the trace (seq): white where a warp ran nothing."}
	a := d.Activity
	w, r := uint64(1), 1
	if a != nil {
		w, r = a.Window, a.WarpsPerRow
		s.About += fmt.Sprintf(" %d windows of %d instructions; %d warps", len(a.Lanes[0]), a.Window, len(a.Warps))
		if r > 1 {
			s.About += fmt.Sprintf(", %d to a row (in (group, warp) order)", r)
		}
		s.About += "."
	}
	s.SQL = fmt.Sprintf(`WITH w AS (
  SELECT "group", warp, row_number() OVER (ORDER BY "group", warp) - 1 AS rank
  FROM (SELECT DISTINCT "group", warp FROM 'instructions.parquet'))
SELECT i.seq // %d AS "window", w.rank // %d AS "row", sum(i.lanes) AS lanes
FROM 'instructions.parquet' i JOIN w USING ("group", warp)
GROUP BY ALL
ORDER BY "window", "row";`, w, r)
	switch {
	case !d.Present["instructions"]:
		s.Needs = d.needs("instructions", "")
	case a == nil:
		s.Message = "The instructions table is empty."
	default:
		s.SVG = activityPlot(a)
	}
	return s, err
}

// runLine is the replay's command as r records it, and what it did not
// do; "" when there is no record.
func runLine(r *columnar.RunOptions) (cmd, notes string) {
	if r == nil {
		return "", ""
	}
	args := []string{"replay", r.Trace}
	if r.Partition != "" {
		args = append(args, "-partition", r.Partition)
	}
	args = append(args, "-order", r.Order)
	if r.Order == "random" || r.ExploreOrders > 0 {
		args = append(args, "-seed", fmt.Sprint(r.Seed))
	}
	if r.Interleave > 0 {
		args = append(args, "-interleave", fmt.Sprint(r.Interleave))
	}
	var without []string
	flag := func(on bool, name string, more ...string) {
		if on {
			args = append(append(args, name), more...)
		} else {
			without = append(without, name)
		}
	}
	flag(r.Explore, "-explore")
	flag(r.ExploreOrders > 0, "-explore-orders", fmt.Sprint(r.ExploreOrders))
	flag(r.Races, "-races")
	if r.Races && r.ClusterSize > 1 {
		args = append(args, "-cluster-size", fmt.Sprint(r.ClusterSize))
	}
	flag(r.Strict, "-strict")
	args = append(args, "-tables", strings.Join(r.Tables, ","))
	cmd = strings.Join(args, " ")
	notes = "replay " + r.Version
	if r.Commit != "" {
		notes += " (" + r.Commit + ")"
	}
	if len(without) > 0 {
		notes += "; it ran without " + strings.Join(without, ", ")
	}
	return cmd, notes + "."
}

// commas writes n with thousands separators.
func commas(n uint64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="replay report">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 0 auto; max-width: 62rem; padding: 1rem 1.5rem 3rem; color: #1d232a; background: #fff; }
h1 { font-size: 1.5rem; margin: .5rem 0 .25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .25rem; border-bottom: 1px solid #d8dee4; padding-bottom: .2rem; }
.meta { color: #57606a; font-size: .9rem; }
.numbers { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); gap: .6rem; margin: 1rem 0; }
.num { border: 1px solid #d8dee4; border-radius: 6px; padding: .5rem .7rem; }
.num .label { color: #57606a; font-size: .8rem; }
.num .value { font-size: 1.35rem; font-weight: bold; overflow-wrap: anywhere; }
.num .note { color: #57606a; font-size: .75rem; }
.num.missing .value { color: #8c959f; }
.approx { border-bottom: 1px dotted #57606a; cursor: help; }
.legend, .run { color: #57606a; font-size: .85rem; }
svg.plot { display: block; width: 100%; max-width: 46rem; height: auto; margin: .5rem 0; }
pre { background: #f6f8fa; border: 1px solid #d8dee4; border-radius: 6px; padding: .6rem .8rem; overflow-x: auto; font-size: .8rem; }
.needs { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: .5rem .8rem; }
.sqlhead { font-size: .8rem; color: #57606a; margin: .4rem 0 0; }
nav a { margin-right: .8rem; font-size: .9rem; }
table.data { border-collapse: collapse; font-size: .8rem; margin: .5rem 0; display: block; overflow-x: auto; }
table.data caption { caption-side: top; text-align: left; color: #57606a; padding-bottom: .3rem; }
table.data th, table.data td { border: 1px solid #d8dee4; padding: .2rem .45rem; text-align: left; vertical-align: top; }
table.data th { background: #f6f8fa; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">Output directory <code>{{.Dir}}</code>. Tables read: {{range $i, $t := .Tables}}{{if $i}}, {{end}}<code>{{$t}}.parquet</code>{{end}}{{if .Missing}}; absent: {{range $i, $t := .Missing}}{{if $i}}, {{end}}<code>{{$t}}</code>{{end}}{{end}}.
The SQL under each plot (DuckDB) reproduces its data: run it in DIR, e.g. <code>cd DIR &amp;&amp; duckdb</code>.</p>
{{if .Run}}<p class="run">The tables were written by <code class="cmd">{{.Run}}</code> ({{.RunNotes}})</p>
{{else}}<p class="run">The tables do not record the options of the replay that wrote them (replay.options: they predate it).</p>
{{end}}
<nav>{{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a>{{end}}</nav>
<section id="numbers">
<div class="numbers">
{{range .Numbers}}<div class="num{{if not .Known}} missing{{end}}"><div class="label">{{.Label}}</div><div class="value">{{.Value}}</div>{{if or .Note .Approx}}<div class="note">{{.Note}}{{if .Approx}}<span class="approx" title="{{.ApproxWhy}}">{{.Approx}}</span>{{end}}</div>{{end}}</div>
{{end}}</div>
{{if .Estimates}}<p class="legend">≈ marks an estimate (the addresses table counts an address's warps exactly up to 7, then by a HyperLogLog, standard error 15.7%), capped by what is known exactly: no more than the address's accesses, nor the warps in the trace. Hover over it for the estimate and its cap.</p>{{end}}
{{if .NumSQL}}<p class="sqlhead">SQL</p>
<pre><code class="sql">{{.NumSQL}}</code></pre>{{end}}
</section>
{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{if .About}}<p>{{.About}}</p>{{end}}
{{if .Needs}}<p class="needs">This section {{.Needs}}.</p>{{end}}
{{if .Message}}<p class="message">{{.Message}}</p>{{end}}
{{.SVG}}
{{with .Table}}<table class="data">
<caption>{{.Caption}}</caption>
<thead>{{if .Groups}}<tr>{{range .Groups}}<th colspan="{{.Span}}">{{.Label}}</th>{{end}}</tr>
{{end}}<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Title}} title="{{.Title}}"{{end}}>{{if .Code}}<code>{{.Text}}</code>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{end}}
{{if .SQL}}<p class="sqlhead">SQL</p>
<pre><code class="sql">{{.SQL}}</code></pre>{{end}}
</section>
{{end}}</body>
</html>
`))
