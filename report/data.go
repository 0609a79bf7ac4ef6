package report

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/gpureplay/replay/columnar"
)

// Tables are the tables a replay writes by default, in the order of
// docs/OUTPUT.md.
var Tables = []string{"memory", "results", "instructions", "ops", "addresses"}

// Extras are the tables a replay writes only with a flag: orders
// (-explore-orders K) and races (-races). A report reads them too.
var Extras = []string{"orders", "races"}

// allTables is Tables, then Extras.
var allTables = append(slices.Clone(Tables), Extras...)

// TopN is how many addresses the address plots show, and how many rows
// the races and order-witness tables show.
const TopN = 20

// MaxOrders is how many orders (columns) the order-witness table shows:
// lane order and the first MaxOrders-1 random ones.
const MaxOrders = 16

// maxWindows and maxWarpRows bound the per-warp activity grid.
const (
	maxWindows  = 100
	maxWarpRows = 64
)

// Count is a number the report shows, and whether a table gave it.
type Count struct {
	N     uint64
	Known bool
	From  string // the table it came from
}

// Address is one row of the addresses table, as the plots use it.
type Address struct {
	Space    string
	Group    int64
	Addr     uint64
	Accesses uint64
	Warps    uint64
	Exact    bool  // Warps is exact, not a HyperLogLog estimate (addresses.exact)
	row      int64 // its row in the file, which breaks ties
}

// Label names the address the way the page shows it: space, group when it
// is a shared address, and the address in hex.
func (a Address) Label() string {
	if a.Group >= 0 {
		return fmt.Sprintf("%s g%d 0x%x", a.Space, a.Group, a.Addr)
	}
	return fmt.Sprintf("%s 0x%x", a.Space, a.Addr)
}

// OpStat is the ops table aggregated by (dialect, op, type), as the
// serialisation plot and examples/contention.sql do.
type OpStat struct {
	Dialect, Op, Type string
	Instructions      uint64
	Lanes             uint64
	MaxConflict       uint32
	ConflictSum       uint64
}

// Name is "dialect op.type".
func (o OpStat) Name() string { return o.Dialect + " " + o.Op + "." + o.Type }

// Mean is the mean max_conflict of its instructions: how many times, on
// average, one of them is serialised on its hottest address.
func (o OpStat) Mean() float64 {
	if o.Instructions == 0 {
		return 0
	}
	return float64(o.ConflictSum) / float64(o.Instructions)
}

// KindCount is a count by a name: faults by kind.
type KindCount struct {
	Kind string
	N    uint64
}

// Bin is how many instructions had one max_conflict.
type Bin struct {
	MaxConflict uint32
	N           uint64
}

// RaceSide is one access of a racing pair: its instruction and thread.
type RaceSide struct {
	Seq           uint64
	Dialect, Text string
	Group, Warp   int64
	Lane          uint32
	Scope         string
}

// Race is one row of the races table: the first racing pair on an address
// under a rule ("scope" or "atomic_plain").
type Race struct {
	Address // Accesses and Warps are zero: the table has none
	Rule    string
	A, B    RaceSide
}

// Witness is a word whose final value differs between orders: Values[i]
// is its value under Data.OrderNames[i], Has[i] whether the table gave one.
type Witness struct {
	Address // Accesses and Warps are zero: the table has none
	Values  []uint32
	Has     []bool
	// Type is the type of the instructions that accessed the word, as
	// the instructions table names it ("f32"), when the first of them
	// agree; "" when unknown. Halves: which 16-bit halves of the word
	// they accessed (bit 0 the low, bit 1 the high).
	Type   string
	Halves uint8
}

// Warp is a (group, warp) context.
type Warp struct{ Group, Warp int64 }

// Activity is lanes per warp over windows of the trace: Lanes[row][window]
// is the sum of lanes of the instructions of seq in [window*Window,
// (window+1)*Window) whose warp's rank (in (group, warp) order) divided by
// WarpsPerRow is row.
type Activity struct {
	Window      uint64 // instructions per window
	WarpsPerRow int
	Warps       []Warp // every warp, sorted
	Lanes       [][]uint64
	Max         uint64 // the largest cell
}

// Data is what a report shows, read from an output directory.
type Data struct {
	Dir     string
	Present map[string]bool // the tables found as .parquet files
	Arrow   map[string]bool // tables found only as .arrow files

	Instructions, Lanes, LaneOps, Faults, Addresses, MemoryWords Count
	WorstConflict                                                Count
	Hottest                                                      *Address
	// TraceWarps counts the distinct (group, warp) pairs of the
	// instructions table: every warp of the trace.
	TraceWarps Count
	// Run is what the replay ran with (the tables' replay.options), nil
	// for tables written before replay recorded it.
	Run *columnar.RunOptions

	Hot            []Address // top TopN by accesses
	HotAccesses    uint64    // the accesses of Hot together
	OrderSensitive []Address // top TopN order-sensitive by accesses
	OrderCount     uint64    // order-sensitive addresses
	OrderAccesses  uint64    // their accesses
	TotalAccesses  uint64
	// OrderWitnessed counts the order-sensitive addresses whose word is
	// in the orders table: another order left it another value.
	OrderWitnessed uint64
	// OrderJoin is OrderSensitive's witness rows: OrderJoin[i] is the
	// witness of OrderSensitive[i]'s word, nil when it has none.
	OrderJoin []*Witness

	// CAS is the outcome of compare-and-swap lane-ops by (dialect, op,
	// type), from the instructions table's cas_failed; CASKnown is false
	// when the table predates that column.
	CAS      []CASStat
	CASKnown bool

	Conflicts    []Bin       // by max_conflict, ascending
	Ops          []OpStat    // sorted by dialect, op, type
	FaultKinds   []KindCount // from results, by count descending
	FaultsByInst []KindCount // from instructions, by count descending
	Activity     *Activity

	Races         Count       // rows of races: racing (address, rule) pairs
	RaceAddresses uint64      // distinct addresses among them
	RaceRules     []KindCount // races by rule, by count descending
	RaceRows      []Race      // the first TopN rows, in the table's order

	OrderWords Count     // words of orders: words whose final value differs between orders
	OrderNames []string  // the orders, in the table's order (lane first)
	Witnesses  []Witness // the first TopN words, in the table's order
	// witnessWords is every word of the orders table (its space copied).
	witnessWords map[word]struct{}
}

// Load reads the tables in dir. It fails when dir is not a directory or
// holds none of the tables.
func Load(dir string) (*Data, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (want a replay's output directory)", dir)
	}
	d := &Data{Dir: dir, Present: map[string]bool{}, Arrow: map[string]bool{}}
	for _, t := range allTables {
		if fileExists(filepath.Join(dir, t+".parquet")) {
			d.Present[t] = true
		} else if fileExists(filepath.Join(dir, t+".arrow")) {
			d.Arrow[t] = true
		}
	}
	if len(d.Present) == 0 {
		if parts, _ := filepath.Glob(filepath.Join(dir, "part=*")); len(parts) > 0 {
			return nil, fmt.Errorf("%s holds the partitions of a partitioned replay (%s …), not tables: run replay merge %s -o MERGED, then replay report MERGED", dir, filepath.Base(parts[0]), dir)
		}
		if len(d.Arrow) > 0 {
			return nil, fmt.Errorf("%s holds only .arrow tables; report reads Parquet: run replay with -format parquet (or both)", dir)
		}
		return nil, fmt.Errorf("%s holds none of the tables %s: is it a replay's output directory (replay TRACE -o DIR)?", dir, strings.Join(tableFiles(), ", "))
	}
	steps := []struct {
		table string
		load  func(string) error
	}{
		{"memory", d.loadMemory},
		{"results", d.loadResults},
		{"instructions", d.loadInstructions},
		{"ops", d.loadOps},
		// orders before addresses, which counts the order-sensitive
		// addresses whose word the orders table holds
		{"orders", d.loadOrders},
		{"addresses", d.loadAddresses},
		{"races", d.loadRaces},
	}
	if err := d.loadRun(); err != nil {
		return nil, err
	}
	for _, s := range steps {
		if d.Present[s.table] {
			if err := s.load(d.path(s.table)); err != nil {
				return nil, err
			}
		}
	}
	if err := d.loadWitnessDetail(); err != nil {
		return nil, err
	}
	return d, nil
}

func tableFiles() []string {
	fs := make([]string, len(allTables))
	for i, t := range allTables {
		fs[i] = t + ".parquet"
	}
	return fs
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func (d *Data) path(table string) string { return filepath.Join(d.Dir, table+".parquet") }

func (d *Data) loadMemory(p string) error {
	n, err := numRows(p)
	if err != nil {
		return err
	}
	d.MemoryWords = Count{uint64(n), true, "memory"}
	return nil
}

func (d *Data) loadResults(p string) error {
	n, err := numRows(p)
	if err != nil {
		return err
	}
	d.LaneOps = Count{uint64(n), true, "results"}
	kinds := map[string]uint64{}
	var faults uint64
	err = scan(p, []string{"fault"}, func(cs []arrow.Array) error {
		f, ok := cs[0].(strs)
		if !ok {
			return fmt.Errorf("column \"fault\" is %s, not a string", cs[0].DataType())
		}
		for i := range f.Len() {
			if s := f.Value(i); s != "" {
				if _, ok := kinds[s]; !ok {
					s = strings.Clone(s)
				}
				kinds[s]++
				faults++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.Faults = Count{faults, true, "results"}
	d.FaultKinds = sortCounts(kinds)
	return nil
}

func sortCounts(m map[string]uint64) []KindCount {
	ks := make([]KindCount, 0, len(m))
	for k, n := range m {
		ks = append(ks, KindCount{k, n})
	}
	slices.SortFunc(ks, func(a, b KindCount) int {
		if a.N != b.N {
			if a.N > b.N {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return ks
}

// instColumns are the columns of one record of the instructions table that
// the first pass reads, checked for their types.
type instColumns struct {
	seq          *array.Uint64
	dia, op, typ strs
	grp, warp    *array.Int64
	ln, mc, fl   *array.Uint32
	cas          *array.Uint32 // cas_failed; nil when the table predates it
}

// instCols names the columns instColumns reads, in its order.
var instCols = []string{"seq", "dialect", "op", "type", "group", "warp", "lanes", "max_conflict", "faults"}

// newInstColumns checks and types the columns of a record read with
// instCols.
func newInstColumns(cs []arrow.Array) (*instColumns, error) {
	var c instColumns
	var err error
	if c.seq, err = col[*array.Uint64](cs[0], "seq"); err != nil {
		return nil, err
	}
	var ok1, ok2, ok3 bool
	c.dia, ok1 = cs[1].(strs)
	c.op, ok2 = cs[2].(strs)
	c.typ, ok3 = cs[3].(strs)
	if !ok1 || !ok2 || !ok3 {
		return nil, errors.New("dialect, op and type must be strings")
	}
	if c.grp, err = col[*array.Int64](cs[4], "group"); err != nil {
		return nil, err
	}
	if c.warp, err = col[*array.Int64](cs[5], "warp"); err != nil {
		return nil, err
	}
	if c.ln, err = col[*array.Uint32](cs[6], "lanes"); err != nil {
		return nil, err
	}
	if c.mc, err = col[*array.Uint32](cs[7], "max_conflict"); err != nil {
		return nil, err
	}
	if c.fl, err = col[*array.Uint32](cs[8], "faults"); err != nil {
		return nil, err
	}
	if len(cs) > 9 {
		if c.cas, err = col[*array.Uint32](cs[9], "cas_failed"); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// instStats is what the first pass over the instructions table gathers.
type instStats struct {
	n, lanes, faults uint64
	worst            uint32
	maxSeq           uint64
	bins             map[uint32]uint64 // instructions by max_conflict
	byInst           map[string]uint64 // faults by "dialect op.type"
	warps            map[Warp]struct{} // the warps seen
	cas              map[string]*CASStat
}

func newInstStats() *instStats {
	return &instStats{bins: map[uint32]uint64{}, byInst: map[string]uint64{}, warps: map[Warp]struct{}{}, cas: map[string]*CASStat{}}
}

// add accumulates one record's rows.
func (s *instStats) add(c *instColumns) {
	var last Warp = Warp{math.MinInt64, math.MinInt64}
	for i := range c.seq.Len() {
		s.n++
		s.maxSeq = max(s.maxSeq, c.seq.Value(i))
		s.lanes += uint64(c.ln.Value(i))
		s.addConflict(c.mc.Value(i))
		if f := c.fl.Value(i); f > 0 {
			s.addFaults(c, i, f)
		}
		if c.cas != nil && c.op.Value(i) == "cas" {
			s.addCAS(c, i)
		}
		if w := (Warp{c.grp.Value(i), c.warp.Value(i)}); w != last {
			s.warps[w] = struct{}{}
			last = w
		}
	}
}

// addConflict counts an instruction of max_conflict c.
func (s *instStats) addConflict(c uint32) {
	s.worst = max(s.worst, c)
	s.bins[c]++
}

// addFaults counts the f faults of row i, by its dialect, op and type.
func (s *instStats) addFaults(c *instColumns, i int, f uint32) {
	s.faults += uint64(f)
	s.byInst[c.dia.Value(i)+" "+c.op.Value(i)+"."+c.typ.Value(i)] += uint64(f)
}

// addCAS counts the lane-ops of row i, a CAS, by its dialect and type.
func (s *instStats) addCAS(c *instColumns, i int) {
	k := c.dia.Value(i) + " cas." + c.typ.Value(i)
	st := s.cas[k]
	if st == nil {
		st = &CASStat{Kind: strings.Clone(k)}
		s.cas[st.Kind] = st
	}
	st.Instructions++
	st.Ran += uint64(c.ln.Value(i)) - uint64(c.fl.Value(i))
	st.Failed += uint64(c.cas.Value(i))
}

// conflicts is the bins, by max_conflict ascending.
func (s *instStats) conflicts() []Bin {
	bs := make([]Bin, 0, len(s.bins))
	for c, k := range s.bins {
		bs = append(bs, Bin{c, k})
	}
	slices.SortFunc(bs, func(a, b Bin) int { return int(a.MaxConflict) - int(b.MaxConflict) })
	return bs
}

// scanInstructions is the first pass over the instructions table at p.
func scanInstructions(p string) (*instStats, bool, error) {
	s := newInstStats()
	has, err := columnNames(p)
	if err != nil {
		return nil, false, err
	}
	cols := instCols
	if has["cas_failed"] {
		cols = append(slices.Clip(cols), "cas_failed")
	}
	err = scan(p, cols, func(cs []arrow.Array) error {
		c, err := newInstColumns(cs)
		if err != nil {
			return err
		}
		s.add(c)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return s, has["cas_failed"], nil
}

// loadInstructions reads the instructions table at p: the counts, the
// max_conflict bins and faults by instruction in one pass, then the
// per-warp activity grid in a second.
func (d *Data) loadInstructions(p string) error {
	s, casKnown, err := scanInstructions(p)
	if err != nil {
		return err
	}
	d.CASKnown = casKnown
	for _, c := range s.cas {
		d.CAS = append(d.CAS, *c)
	}
	slices.SortFunc(d.CAS, func(a, b CASStat) int { return strings.Compare(a.Kind, b.Kind) })
	d.TraceWarps = Count{uint64(len(s.warps)), true, "instructions"}
	d.Instructions = Count{s.n, true, "instructions"}
	d.Lanes = Count{s.lanes, true, "instructions"}
	d.WorstConflict = Count{uint64(s.worst), true, "instructions"}
	if !d.Faults.Known {
		d.Faults = Count{s.faults, true, "instructions"}
	}
	d.FaultsByInst = sortCounts(s.byInst)
	d.Conflicts = s.conflicts()
	if s.n == 0 {
		return nil
	}
	a := newActivity(s.maxSeq, s.warps)
	if err := a.fill(p); err != nil {
		return err
	}
	d.Activity = a
	return nil
}

// newActivity lays out the activity grid, empty: maxWindows windows at
// most over seqs 0..maxSeq, and the warps, sorted, in maxWarpRows rows at
// most.
func newActivity(maxSeq uint64, warps map[Warp]struct{}) *Activity {
	a := &Activity{Window: max(1, (maxSeq+maxWindows)/maxWindows)}
	for w := range warps {
		a.Warps = append(a.Warps, w)
	}
	slices.SortFunc(a.Warps, func(x, y Warp) int {
		if x.Group != y.Group {
			return cmpInt(x.Group, y.Group)
		}
		return cmpInt(x.Warp, y.Warp)
	})
	a.WarpsPerRow = (len(a.Warps) + maxWarpRows - 1) / maxWarpRows
	rows := (len(a.Warps) + a.WarpsPerRow - 1) / a.WarpsPerRow
	windows := int(maxSeq/a.Window) + 1
	a.Lanes = make([][]uint64, rows)
	for r := range a.Lanes {
		a.Lanes[r] = make([]uint64, windows)
	}
	return a
}

// fill is the second pass over the instructions table at p: lanes per
// (warp row, window), then the largest cell.
func (a *Activity) fill(p string) error {
	rank := make(map[Warp]int, len(a.Warps))
	for i, w := range a.Warps {
		rank[w] = i
	}
	err := scan(p, []string{"seq", "group", "warp", "lanes"}, func(cs []arrow.Array) error {
		seq := cs[0].(*array.Uint64)
		grp := cs[1].(*array.Int64)
		warp := cs[2].(*array.Int64)
		ln := cs[3].(*array.Uint32)
		last, lastRow := Warp{math.MinInt64, math.MinInt64}, 0
		for i := range seq.Len() {
			w := Warp{grp.Value(i), warp.Value(i)}
			if w != last {
				last, lastRow = w, rank[w]/a.WarpsPerRow
			}
			a.Lanes[lastRow][seq.Value(i)/a.Window] += uint64(ln.Value(i))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range a.Lanes {
		for _, v := range r {
			a.Max = max(a.Max, v)
		}
	}
	return nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (d *Data) loadOps(p string) error {
	type key struct{ d, o, t string }
	agg := map[key]*OpStat{}
	var insts, lanes, faults uint64
	var worst uint32
	cols := []string{"dialect", "op", "type", "instructions", "lanes", "faults", "max_conflict", "conflict_sum"}
	err := scan(p, cols, func(cs []arrow.Array) error {
		dia, ok1 := cs[0].(strs)
		op, ok2 := cs[1].(strs)
		typ, ok3 := cs[2].(strs)
		if !ok1 || !ok2 || !ok3 {
			return errors.New("dialect, op and type must be strings")
		}
		in, err := col[*array.Uint64](cs[3], "instructions")
		if err != nil {
			return err
		}
		ln, err := col[*array.Uint64](cs[4], "lanes")
		if err != nil {
			return err
		}
		fl, err := col[*array.Uint64](cs[5], "faults")
		if err != nil {
			return err
		}
		mc, err := col[*array.Uint32](cs[6], "max_conflict")
		if err != nil {
			return err
		}
		cs7, err := col[*array.Uint64](cs[7], "conflict_sum")
		if err != nil {
			return err
		}
		for i := range in.Len() {
			k := key{strings.Clone(dia.Value(i)), strings.Clone(op.Value(i)), strings.Clone(typ.Value(i))}
			o := agg[k]
			if o == nil {
				o = &OpStat{Dialect: k.d, Op: k.o, Type: k.t}
				agg[k] = o
			}
			o.Instructions += in.Value(i)
			o.Lanes += ln.Value(i)
			o.MaxConflict = max(o.MaxConflict, mc.Value(i))
			o.ConflictSum += cs7.Value(i)
			insts += in.Value(i)
			lanes += ln.Value(i)
			faults += fl.Value(i)
			worst = max(worst, mc.Value(i))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, o := range agg {
		d.Ops = append(d.Ops, *o)
	}
	slices.SortFunc(d.Ops, func(a, b OpStat) int {
		return strings.Compare(a.Dialect+"\x00"+a.Op+"\x00"+a.Type, b.Dialect+"\x00"+b.Op+"\x00"+b.Type)
	})
	// The instructions table, when present, gave these already (loadInstructions runs first).
	if !d.Instructions.Known {
		d.Instructions = Count{insts, true, "ops"}
		d.Lanes = Count{lanes, true, "ops"}
		d.WorstConflict = Count{uint64(worst), true, "ops"}
	}
	if !d.Faults.Known {
		d.Faults = Count{faults, true, "ops"}
	}
	return nil
}

// topHeap keeps the TopN addresses of most accesses; of equal accesses, the
// earlier row (the table's order: space, group, addr) ranks higher.
type topHeap []Address

func (h topHeap) Len() int { return len(h) }
func (h topHeap) Less(i, j int) bool { // the root is the lowest-ranked
	if h[i].Accesses != h[j].Accesses {
		return h[i].Accesses < h[j].Accesses
	}
	return h[i].row > h[j].row
}
func (h topHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)   { *h = append(*h, x.(Address)) }
func (h *topHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer adds a, keeping the TopN best. It reports whether a was kept, so
// that the caller clones its strings only then.
func (h *topHeap) offer(a Address) {
	if len(*h) < TopN {
		a.Space = strings.Clone(a.Space)
		heap.Push(h, a)
		return
	}
	root := (*h)[0]
	if a.Accesses > root.Accesses { // a later row never beats an equal one
		a.Space = strings.Clone(a.Space)
		(*h)[0] = a
		heap.Fix(h, 0)
	}
}

// sorted is the kept addresses, best first.
func (h topHeap) sorted() []Address {
	s := slices.Clone([]Address(h))
	slices.SortFunc(s, func(a, b Address) int {
		if a.Accesses != b.Accesses {
			if a.Accesses > b.Accesses {
				return -1
			}
			return 1
		}
		return cmpInt(a.row, b.row)
	})
	return s
}

func (d *Data) loadAddresses(p string) error {
	var hot, ord topHeap
	var n int64
	cols := []string{"space", "group", "addr", "accesses", "warps", "order_sensitive", "exact"}
	err := scan(p, cols, func(cs []arrow.Array) error {
		sp, ok := cs[0].(strs)
		if !ok {
			return errors.New("space must be a string")
		}
		grp, err := col[*array.Int64](cs[1], "group")
		if err != nil {
			return err
		}
		addr, err := col[*array.Uint64](cs[2], "addr")
		if err != nil {
			return err
		}
		acc, err := col[*array.Uint64](cs[3], "accesses")
		if err != nil {
			return err
		}
		wp, err := col[*array.Uint64](cs[4], "warps")
		if err != nil {
			return err
		}
		os, err := col[*array.Boolean](cs[5], "order_sensitive")
		if err != nil {
			return err
		}
		ex, err := col[*array.Boolean](cs[6], "exact")
		if err != nil {
			return err
		}
		for i := range sp.Len() {
			a := Address{Space: sp.Value(i), Group: grp.Value(i), Addr: addr.Value(i), Accesses: acc.Value(i), Warps: wp.Value(i), Exact: ex.Value(i), row: n}
			n++
			d.TotalAccesses += a.Accesses
			hot.offer(a)
			if os.Value(i) {
				d.OrderCount++
				d.OrderAccesses += a.Accesses
				ord.offer(a)
				if _, ok := d.witnessWords[wordOf(a)]; ok {
					d.OrderWitnessed++
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.Addresses = Count{uint64(n), true, "addresses"}
	d.Hot = hot.sorted()
	for _, a := range d.Hot {
		d.HotAccesses += a.Accesses
	}
	d.OrderSensitive = ord.sorted()
	if len(d.Hot) > 0 {
		h := d.Hot[0]
		d.Hottest = &h
	}
	return nil
}
