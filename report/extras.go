package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// The tables replay writes only with a flag: races (-races) and orders
// (-explore-orders K). Both are sorted by word (space, group, addr), so a
// report counts words by the changes of that key and keeps only the first
// TopN rows: memory is bounded by TopN and the distinct rules and orders.

// wordRuns counts the words of a table sorted by word: n words so far,
// the current one last (its space copied out of the Arrow buffer).
type wordRuns struct {
	n    uint64
	last Address
}

// next takes a row's word and reports whether it starts a new one.
func (w *wordRuns) next(space string, group int64, addr uint64) bool {
	a := Address{Space: space, Group: group, Addr: addr}
	if w.n > 0 && a == w.last {
		return false
	}
	w.n++
	w.last = Address{Space: strings.Clone(space), Group: group, Addr: addr}
	return true
}

func (d *Data) loadRaces(p string) error {
	cols := []string{"space", "group", "addr", "rule",
		"seq_a", "dialect_a", "text_a", "group_a", "warp_a", "lane_a", "scope_a",
		"seq_b", "dialect_b", "text_b", "group_b", "warp_b", "lane_b", "scope_b"}
	rules := map[string]uint64{}
	var (
		n     uint64
		words wordRuns
	)
	err := scan(p, cols, func(cs []arrow.Array) error {
		sp, grp, addr, err := wordCols(cs)
		if err != nil {
			return err
		}
		rule, ok := cs[3].(strs)
		if !ok {
			return errors.New("rule must be strings")
		}
		type side struct {
			seq              *array.Uint64
			dia, text, scope strs
			group, warp      *array.Int64
			lane             *array.Uint32
		}
		var sides [2]side
		for j := range sides {
			c := 4 + 7*j
			s := &sides[j]
			var ok1, ok2, ok3 bool
			s.dia, ok1 = cs[c+1].(strs)
			s.text, ok2 = cs[c+2].(strs)
			s.scope, ok3 = cs[c+6].(strs)
			if !ok1 || !ok2 || !ok3 {
				return errors.New("dialect, text and scope must be strings")
			}
			if s.seq, err = col[*array.Uint64](cs[c], cols[c]); err != nil {
				return err
			}
			if s.group, err = col[*array.Int64](cs[c+3], cols[c+3]); err != nil {
				return err
			}
			if s.warp, err = col[*array.Int64](cs[c+4], cols[c+4]); err != nil {
				return err
			}
			if s.lane, err = col[*array.Uint32](cs[c+5], cols[c+5]); err != nil {
				return err
			}
		}
		for i := range sp.Len() {
			words.next(sp.Value(i), grp.Value(i), addr.Value(i))
			n++
			r := rule.Value(i)
			if _, ok := rules[r]; !ok {
				r = strings.Clone(r)
			}
			rules[r]++
			if len(d.RaceRows) < TopN {
				race := Race{Address: words.last, Rule: strings.Clone(rule.Value(i))}
				for j, x := range []*RaceSide{&race.A, &race.B} {
					s := &sides[j]
					*x = RaceSide{Seq: s.seq.Value(i), Dialect: strings.Clone(s.dia.Value(i)), Text: strings.Clone(s.text.Value(i)),
						Group: s.group.Value(i), Warp: s.warp.Value(i), Lane: s.lane.Value(i), Scope: strings.Clone(s.scope.Value(i))}
				}
				d.RaceRows = append(d.RaceRows, race)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.Races = Count{n, true, "races"}
	d.RaceAddresses = words.n
	d.RaceRules = sortCounts(rules)
	return nil
}

func (d *Data) loadOrders(p string) error {
	index := map[string]int{}
	d.witnessWords = map[word]struct{}{}
	var (
		words wordRuns
		cur   *Witness // the current word's, while it is among the first TopN
	)
	err := scan(p, ordersColumns(), func(cs []arrow.Array) error {
		sp, grp, addr, ord, val, err := orderCols(cs)
		if err != nil {
			return err
		}
		for i := range sp.Len() {
			if words.next(sp.Value(i), grp.Value(i), addr.Value(i)) {
				l := words.last
				d.witnessWords[word{l.Space, l.Group, l.Addr}] = struct{}{}
				cur = nil
				if len(d.Witnesses) < TopN {
					d.Witnesses = append(d.Witnesses, Witness{Address: words.last})
					cur = &d.Witnesses[len(d.Witnesses)-1]
				}
			}
			o := ord.Value(i)
			k, ok := index[o]
			if !ok {
				k = len(d.OrderNames)
				o = strings.Clone(o)
				index[o] = k
				d.OrderNames = append(d.OrderNames, o)
			}
			if cur != nil {
				for len(cur.Values) <= k {
					cur.Values = append(cur.Values, 0)
					cur.Has = append(cur.Has, false)
				}
				cur.Values[k], cur.Has[k] = val.Value(i), true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range d.Witnesses { // an order first seen after a kept word
		w := &d.Witnesses[i]
		for len(w.Values) < len(d.OrderNames) {
			w.Values = append(w.Values, 0)
			w.Has = append(w.Has, false)
		}
	}
	d.OrderWords = Count{words.n, true, "orders"}
	return nil
}

// needsFlag says what a section of a flag's table lacks.
func (d *Data) needsFlag(table, flag string) string {
	if d.Arrow[table] {
		return fmt.Sprintf("needs %s.parquet; %s has %s.arrow only: run replay with -format parquet (or both)", table, d.Dir, table)
	}
	return fmt.Sprintf("needs the %s table (%s.parquet), which %s lacks: run replay with %s, which writes it (it is not among the default tables)", table, table, d.Dir, flag)
}

const raceRulesSQL = `SELECT rule, count(*) AS addresses
FROM 'races.parquet'
GROUP BY rule
ORDER BY addresses DESC, rule;`

var raceRowsSQL = fmt.Sprintf(`SELECT space, "group", printf('0x%%x', addr) AS addr, rule,
       seq_a, group_a, warp_a, lane_a, scope_a, text_a,
       seq_b, group_b, warp_b, lane_b, scope_b, text_b
FROM 'races.parquet'
ORDER BY space, "group", addr, rule
LIMIT %d;`, TopN)

const raceCountSQL = `SELECT (SELECT count(*) FROM 'races.parquet') AS races,
       (SELECT count(*) FROM (SELECT DISTINCT space, "group", addr FROM 'races.parquet')) AS addresses;`

func (d *Data) raceSection() (s Section, err error) {
	s = Section{ID: "races", Title: "Racing addresses",
		About: "Addresses that two accesses reach without being atomic with respect to each other (replay -races): under rule scope, two atomics whose scopes do not both include the other's thread (a .cta atomic and one of another CTA); under atomic_plain, an atomic and a plain load or store of another thread. One row per address and rule: the first such pair in trace order, A the earlier access.",
		SQL:   raceCountSQL + "\n\n" + raceRulesSQL + "\n\n" + raceRowsSQL}
	switch {
	case !d.Present["races"]:
		s.Needs = d.needsFlag("races", "-races")
	case d.Races.N == 0:
		s.Message = "No race: every two accesses to an address were atomic with respect to each other (the races table is empty)."
	default:
		var by []string
		for _, k := range d.RaceRules {
			by = append(by, k.Kind+" "+commas(k.N))
		}
		s.Message = fmt.Sprintf("%s on %s (by rule: %s).", plural(d.Races.N, "race"), plural(d.RaceAddresses, "address"), strings.Join(by, ", "))
		s.SVG = countPlot("Races by rule", "addresses (one racing pair each)", d.RaceRules, alarmColor)
		s.Table = d.raceTable()
	}
	return s, err
}

func (d *Data) raceTable() *Table {
	t := &Table{
		Caption: fmt.Sprintf("The first %d of %s races, in the table's order (space, group, address, rule).", len(d.RaceRows), commas(d.Races.N)),
		Groups:  []HeadGroup{{"", 2}, {"A (earlier)", 6}, {"B (later)", 6}},
	}
	side := []string{"seq", "group", "warp", "lane", "scope", "text"}
	t.Head = append(append(append(t.Head, "address", "rule"), side...), side...)
	for _, r := range d.RaceRows {
		row := []Cell{{Text: r.Label()}, {Text: r.Rule}}
		for _, x := range []RaceSide{r.A, r.B} {
			row = append(row, Cell{Text: fmt.Sprint(x.Seq)}, Cell{Text: fmt.Sprint(x.Group)}, Cell{Text: fmt.Sprint(x.Warp)},
				Cell{Text: fmt.Sprint(x.Lane)}, Cell{Text: x.Scope}, Cell{Text: x.Text, Code: true, Title: x.Dialect})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// witnessSQL gives the order-witness table's data: the first TopN words in
// the table's order, with the first orders of them in the table's order.
func witnessSQL(orders int) string {
	slice := ""
	if orders > MaxOrders {
		slice = fmt.Sprintf("[1:%d]", MaxOrders)
	}
	orderList, valueList := `list("order" ORDER BY file_row_number)`, `list(value ORDER BY file_row_number)`
	if slice != "" {
		orderList, valueList = "("+orderList+")"+slice, "("+valueList+")"+slice
	}
	return fmt.Sprintf(`SELECT count(*) AS words
FROM (SELECT DISTINCT space, "group", addr FROM 'orders.parquet');

SELECT space, "group", printf('0x%%x', addr) AS addr,
       %s AS orders,
       %s AS "values"
FROM read_parquet('orders.parquet', file_row_number = true)
GROUP BY space, "group", addr
ORDER BY min(file_row_number)
LIMIT %d;`, orderList, valueList, TopN)
}

func (d *Data) witnessSection() (s Section, err error) {
	s = Section{ID: "witnesses", Title: "Order witnesses",
		About: "Words whose final value differs between lane order and K seeded random orders of each instruction's lanes (the orders table, written by replay -explore-orders K): proof that the trace's result depends on an order no ISA document fixes. Each row is a word and its final value under each order, read as the type of the instructions that accessed it (results joined with instructions: f32 as a float, its bits as the tooltip), and for a float how far apart the values lie, in ULPs.",
		SQL:   witnessSQL(len(d.OrderNames))}
	if d.Present["results"] && d.Present["instructions"] {
		s.SQL += "\n\n" + witnessTypeSQL
	}
	switch {
	case !d.Present["orders"]:
		s.Needs = d.needsFlag("orders", "-explore-orders K (K random orders beside lane order)")
	case d.OrderWords.N == 0 && d.Run != nil && d.Run.ExploreOrders > 0:
		s.Message = fmt.Sprintf("No word's final value differed between the %s replayed (lane order and %d random ones, seeds %d to %d): the orders table is empty.",
			plural(d.ordersReplayed(), "order"), d.Run.ExploreOrders, d.Run.Seed, d.Run.Seed+uint64(d.Run.ExploreOrders)-1)
	case d.OrderWords.N == 0:
		s.Message = "No word's final value differed between the orders replayed (the orders table is empty)."
	default:
		s.Message = fmt.Sprintf("%s %s a different final value under different orders (%s replayed).",
			plural(d.OrderWords.N, "word"), map[bool]string{true: "has", false: "have"}[d.OrderWords.N == 1], plural(d.ordersReplayed(), "order"))
		s.Table = d.witnessTable()
	}
	return s, err
}

func (d *Data) witnessTable() *Table {
	names := d.OrderNames[:min(len(d.OrderNames), MaxOrders)]
	t := &Table{Caption: fmt.Sprintf("The first %d of %s words, in the table's order (space, group, address), and their final value under ", len(d.Witnesses), commas(d.OrderWords.N))}
	if len(names) < len(d.OrderNames) {
		t.Caption += fmt.Sprintf("the first %d of %d orders.", len(names), len(d.OrderNames))
	} else {
		t.Caption += "each order."
	}
	t.Head = append([]string{"address", "type"}, names...)
	t.Head = append(t.Head, "spread")
	for _, w := range d.Witnesses {
		typ := w.Type
		if typ == "" {
			typ = "—"
		}
		row := []Cell{{Text: w.Label()}, {Text: typ}}
		for k := range names {
			row = append(row, w.cell(k))
		}
		sp := w.spread()
		if sp == "" {
			sp = "—"
		}
		t.Rows = append(t.Rows, append(row, Cell{Text: sp}))
	}
	return t
}

// cell is the witness's value under order k as its type reads it, the
// bit pattern as the tooltip; "—" when the table has none.
func (w *Witness) cell(k int) Cell {
	if k >= len(w.Has) || !w.Has[k] {
		return Cell{Text: "—"}
	}
	v := w.Values[k]
	t, _ := w.typedValue(v)
	return Cell{Text: t, Title: fmt.Sprintf("0x%08x", v)}
}

// witnessTypeSQL gives the types of the instructions that accessed each
// witness's word (the page reads the first 16 lane-ops of each).
const witnessTypeSQL = `SELECT DISTINCT o.space, o."group", printf('0x%x', o.addr) AS addr, i.type
FROM (SELECT DISTINCT space, "group", addr FROM 'orders.parquet') o
JOIN 'results.parquet' r ON r.addr - r.addr % 4 = o.addr AND r.fault = ''
JOIN 'instructions.parquet' i ON i.seq = r.seq AND i.space = o.space
     AND (o."group" = -1 OR i."group" = o."group")
ORDER BY ALL;`

// plural is n and the noun, plural unless n is 1 ("address": "addresses").
func plural(n uint64, noun string) string {
	if n != 1 {
		if strings.HasSuffix(noun, "s") {
			noun += "es"
		} else {
			noun += "s"
		}
	}
	return commas(n) + " " + noun
}

// wordCols returns the key columns of a table sorted like memory, the
// first three of cs: space, group, addr.
// orderCols is the columns of the orders table, as scan gives them for
// ordersColumns(): the word (wordCols), the order's name and the value.
func orderCols(cs []arrow.Array) (sp strs, grp *array.Int64, addr *array.Uint64, ord strs, val *array.Uint32, err error) {
	if sp, grp, addr, err = wordCols(cs); err != nil {
		return
	}
	var ok bool
	if ord, ok = cs[3].(strs); !ok {
		err = errors.New("order must be strings")
		return
	}
	val, err = col[*array.Uint32](cs[4], "value")
	return
}

// ordersColumns is what orderCols reads of the orders table.
func ordersColumns() []string { return []string{"space", "group", "addr", "order", "value"} }

func wordCols(cs []arrow.Array) (strs, *array.Int64, *array.Uint64, error) {
	sp, ok := cs[0].(strs)
	if !ok {
		return nil, nil, nil, errors.New("space must be strings")
	}
	grp, err := col[*array.Int64](cs[1], "group")
	if err != nil {
		return nil, nil, nil, err
	}
	addr, err := col[*array.Uint64](cs[2], "addr")
	return sp, grp, addr, err
}
