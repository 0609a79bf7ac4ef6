package reference

import (
	"cmp"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/gpureplay/replay/trace"
)

// Options are what a reference replay needs beyond the trace.
type Options struct {
	// Explore fills AddressStat.OrderSensitive (docs/OUTPUT.md, addresses).
	Explore bool
	// LaneOrder, when set, returns the order in which instruction seq's
	// running lanes (given lowest first) apply. No document fixes that
	// order, so it is policy, passed in by the caller; nil is ascending
	// lane order.
	LaneOrder func(seq uint64, lanes []uint8) []uint8
}

// Result is one row of the results table (docs/OUTPUT.md, results): what
// one lane, and element, of one instruction got back. Fault is the
// table's name for the fault: "", "misaligned", "out_of_range",
// "invalid_space" or "out_of_bounds".
type Result struct {
	Seq     uint64
	Lane    uint32
	Elem    uint32
	Addr    uint64
	Value   uint64
	ValueHi uint64
	Fault   string
}

// InstStat is one row of the instructions table.
type InstStat struct {
	Seq         uint64
	Static      *trace.Static
	Group, Warp int64
	Lanes       uint32 // lanes that ran
	Addresses   uint32 // distinct effective addresses among their lane-elements
	MaxConflict uint32 // the most lane-elements that hit one address
	Faults      uint32 // lane-elements that faulted or were dropped
	CASFailed   uint32 // lane-elements of a CAS that ran and did not swap
	Sectors     uint32 // distinct 32-byte sectors among their addresses
}

// Word is one row of the memory table: an aligned 4-byte word.
type Word struct {
	Space trace.Space
	Group int64 // -1 for spaces that are not per group
	Addr  uint64
	Value uint32
}

// AddressStat is one row of the addresses table. The reference counts
// with plain sets, so Exact is always true.
type AddressStat struct {
	Space          trace.Space
	Group          int64
	Addr           uint64
	Accesses       uint64
	Warps          uint64
	Groups         uint64
	Exact          bool
	OrderSensitive bool
}

// Step is one instruction's statistics and its results, in lane order.
type Step struct {
	Inst    InstStat
	Results []Result
}

// Output is a whole replay: the instructions in the order the source gave
// them, final memory and the addresses table, both sorted by (space as a
// string, group, addr).
type Output struct {
	Steps     []Step
	Memory    []Word
	Addresses []AddressStat
}

// InstError is an instruction the reference cannot replay.
type InstError struct {
	Seq  uint64
	Line int
	Text string
	Err  error
}

func (e *InstError) Error() string {
	return fmt.Sprintf("instruction %d (%s): %v", e.Seq, e.Text, e.Err)
}

func (e *InstError) Unwrap() error { return e.Err }

// Run replays src from its header to its end, one instruction at a time.
func Run(src trace.Source, opts Options) (*Output, error) {
	h := src.Header()
	m := newMachine(h, opts)
	out := &Output{}
	for {
		in, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if in.Dir != nil {
			m.directive(in.Dir)
			continue
		}
		step, err := m.step(in)
		if err != nil {
			return nil, err
		}
		out.Steps = append(out.Steps, step)
	}
	out.Memory = m.mem.table()
	out.Addresses = m.addrs.table(opts.Explore)
	return out, nil
}

// machine is the interpreter's state.
type machine struct {
	opts    Options
	windows []trace.Window
	regions map[trace.Space][]trace.Region
	mem     *memory
	addrs   *addrTable
	rules   map[*trace.Static]*rule
}

func newMachine(h *trace.Header, opts Options) *machine {
	m := &machine{opts: opts, windows: h.Windows, regions: map[trace.Space][]trace.Region{},
		mem: newMemory(), addrs: newAddrTable(), rules: map[*trace.Static]*rule{}}
	for _, r := range h.Regions {
		m.regions[r.Space] = append(m.regions[r.Space], r)
	}
	for i := range h.Inits {
		m.mem.init(&h.Inits[i])
	}
	return m
}

// directive applies memory set-up met between instructions (docs/TASM.md,
// "Memory set-up in the middle of a trace"): a .init is a host write at its
// place; a .region counts for the accesses after it.
func (m *machine) directive(d *trace.Directive) {
	if d.Init != nil {
		m.mem.init(d.Init)
	}
	if r := d.Region; r != nil {
		m.regions[r.Space] = append(m.regions[r.Space], *r)
	}
}

// step replays one instruction: its running lanes in the lane order, the
// elements of a lane in element order; the rows come back in lane order.
func (m *machine) step(in *trace.Inst) (Step, error) {
	st := in.Static
	r, err := m.ruleOf(st)
	if err != nil {
		return Step{}, &InstError{Seq: in.Seq, Line: in.Line, Text: st.Text, Err: err}
	}
	running := runningLanes(in)
	order := running
	if m.opts.LaneOrder != nil {
		order = m.opts.LaneOrder(in.Seq, slices.Clone(running))
	}
	hits := map[uint64]uint32{}
	rows := make([]Result, 0, len(running)*r.elems)
	stat := InstStat{Seq: in.Seq, Static: st, Group: in.Group, Warp: in.Warp, Lanes: uint32(len(running))}
	for _, lane := range order {
		for e := 0; e < r.elems; e++ {
			row, casFailed := m.access(r, in, int(lane), e)
			hits[row.Addr]++
			if row.Fault != "" {
				stat.Faults++
			}
			if casFailed {
				stat.CASFailed++
			}
			rows = append(rows, row)
		}
	}
	slices.SortStableFunc(rows, func(a, b Result) int { return cmp.Compare(a.Lane, b.Lane) })
	stat.Addresses = uint32(len(hits))
	sectors := map[uint64]bool{}
	for a, n := range hits {
		stat.MaxConflict = max(stat.MaxConflict, n)
		sectors[a/32] = true
	}
	stat.Sectors = uint32(len(sectors))
	return Step{Inst: stat, Results: rows}, nil
}

// ruleOf is the rule of a Static, worked out on first use.
func (m *machine) ruleOf(st *trace.Static) (*rule, error) {
	if r, ok := m.rules[st]; ok {
		return r, nil
	}
	var r *rule
	var err error
	switch st.Dialect {
	case trace.DialectPTX:
		r, err = ptxRule(st)
	case trace.DialectSASS:
		r, err = sassRule(st)
	case trace.DialectVISA:
		r, err = visaRule(st)
	case trace.DialectLSC:
		r, err = lscRule(st)
	default:
		err = fmt.Errorf("the reference does not know the %s dialect", st.Dialect)
	}
	if err != nil {
		return nil, err
	}
	m.rules[st] = r
	return r, nil
}

// runningLanes lists the lanes that run, lowest first: those of the
// execution size that are active (the reserved binding mask=) and whose
// predicate, if any, holds (docs/TASM.md, Bindings: "A lane runs when it is
// active and its predicate, if any, holds"; a predicate is bound to a lane
// mask).
func runningLanes(in *trace.Inst) []uint8 {
	st := in.Static
	run := uint64(in.Mask)
	if st.ExecSize < 32 {
		run &= 1<<uint(st.ExecSize) - 1
	}
	if st.Pred >= 0 {
		p := in.Vals[st.Pred].Lo(0)
		if st.PredNeg {
			p = ^p
		}
		run &= p
	}
	lanes := make([]uint8, 0, bits.OnesCount64(run))
	for lane := 0; lane < 32; lane++ {
		if run&(1<<uint(lane)) != 0 {
			lanes = append(lanes, uint8(lane))
		}
	}
	return lanes
}
