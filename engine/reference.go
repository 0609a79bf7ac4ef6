package engine

import (
	"cmp"
	"encoding/binary"
	"io"
	"math/bits"
	"slices"
	"sort"

	"github.com/gpureplay/replay/trace"
)

// Reference replays src the plain way: one instruction at a time, lanes in
// ascending order (or the order WithOrder gives), memory as a map from byte address to byte. It shares no
// memory code with the sharded engine (package shard is not used) and is
// the oracle the engine's tests compare against. It writes to sink what
// Replay writes, and commits or aborts it the same way.
// Of the options only WithExplore matters.
func Reference(src trace.Source, sink Sink, opts ...Option) (Summary, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return Summary{}, err
		}
	}
	if err := o.checkInterleave(); err != nil {
		return Summary{}, err
	}
	if o.interleave > 0 {
		// Windows of instructions in the interleaved order; the rows back
		// in trace order for the sink.
		src = newInterleaved(src, o.interleave, o.seed)
		sink = &seqOrderSink{Sink: sink}
	}
	sum, err := reference(src, sink, o.explore, o.order, o.seed)
	if err != nil {
		sink.Abort()
		return Summary{}, err
	}
	return sum, sink.Commit()
}

type refAddr struct {
	space trace.Space
	group int64
	addr  uint64
}

// refAddrStat is the reference's addresses-table row under construction:
// plain sets, no estimate.
type refAddrStat struct {
	accesses  uint64
	warps     map[[2]int64]bool
	groups    map[int64]bool
	first     [3]uint64 // kind, b, c of the first access
	same      bool
	family    uint8
	commuting bool
}

func reference(src trace.Source, sink Sink, explore bool, order Order, seed uint64) (Summary, error) {
	h := src.Header()
	m := &refMachine{h: h, explore: explore, order: order, seed: seed, addrs: map[refAddr]*refAddrStat{},
		regions: map[trace.Space][]trace.Region{}, mem: map[refAddr]byte{}, touched: map[refAddr]bool{},
		plans: map[*trace.Static]*plan{}}
	for _, r := range h.Regions {
		m.regions[r.Space] = append(m.regions[r.Space], r)
	}
	for i := range h.Inits {
		m.initMem(&h.Inits[i])
	}
	var sum Summary
	for {
		in, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Summary{}, err
		}
		if d := in.Dir; d != nil {
			m.directive(d)
			continue
		}
		stat, results, err := m.instruction(in)
		if err != nil {
			return Summary{}, err
		}
		if err := sink.Instructions([]InstStat{stat}); err != nil {
			return Summary{}, err
		}
		if err := sink.Results(results); err != nil {
			return Summary{}, err
		}
		sum.Instructions++
		sum.Lanes += uint64(stat.Lanes)
		sum.LaneOps += uint64(len(results))
		sum.Faults += uint64(stat.Faults)
	}
	out := m.words()
	sum.Words = uint64(len(out))
	if err := sink.Memory(out); err != nil {
		return Summary{}, err
	}
	as, ok := sink.(AddressSink)
	if !ok || !as.WantsAddresses() {
		return sum, nil
	}
	return sum, as.Addresses(m.addressRows())
}

// refMachine is the reference interpreter's state: memory as a map of
// bytes, the words written, the addresses table's plain sets, and the
// regions and plans in force.
type refMachine struct {
	h       *trace.Header
	explore bool
	order   Order
	seed    uint64
	addrs   map[refAddr]*refAddrStat
	regions map[trace.Space][]trace.Region
	mem     map[refAddr]byte
	touched map[refAddr]bool // word addresses
	plans   map[*trace.Static]*plan
}

// initMem is a host write: .init in the header, or after an instruction,
// where it lands between that instruction and the next.
func (m *refMachine) initMem(in *trace.Init) {
	g := in.Group
	if !in.Space.PerGroup() {
		g = -1
	}
	for i, by := range in.Data {
		a := refAddr{in.Space, g, in.Addr + uint64(i)}
		m.mem[a] = by
		m.touched[refAddr{a.space, a.group, a.addr &^ 3}] = true
	}
}

// directive applies a .init or .region read after an instruction.
func (m *refMachine) directive(d *trace.Directive) {
	if d.Init != nil {
		m.initMem(d.Init)
	}
	if r := d.Region; r != nil {
		// Memory from here on: later instructions are planned anew
		// against the grown list, earlier ones stand.
		m.regions[r.Space] = append(m.regions[r.Space][:len(m.regions[r.Space]):len(m.regions[r.Space])], *r)
		clear(m.plans)
	}
}

// instruction replays one instruction, its lanes in the machine's order,
// and returns its statistics and its rows in lane order.
func (m *refMachine) instruction(in *trace.Inst) (InstStat, []Result, error) {
	st := in.Static
	p := m.plans[st]
	if p == nil {
		var err error
		if p, err = newPlan(st, m.h, m.regions); err != nil {
			return InstStat{}, nil, &InstError{Seq: in.Seq, Line: in.Line, Text: st.Text, Err: err}
		}
		m.plans[st] = p
	}
	g := in.Group
	if !st.Space.PerGroup() {
		g = -1
	}
	bi := &binst{Inst: *in}
	active := in.Active()
	var results []Result
	hits := map[uint64]uint32{}
	var faults uint32
	// The lanes in the replay's order (order.go); the rows are sorted back
	// into lane order below.
	var lanesBuf, permBuf [trace.MaxLanes]uint8
	ls := activeLanes(active, &lanesBuf)
	for _, k := range lanePerm(m.order, m.seed, in.Seq, len(ls), &permBuf) {
		lane := int(ls[k])
		for e := 0; e < st.Elems; e++ {
			addr := refElemAddr(p, bi, lane, e)
			hits[addr]++
			r := Result{Seq: in.Seq, Lane: uint32(lane), Elem: uint32(e), Addr: addr}
			if p.status {
				if p.checkElem(bi, lane, e, addr) == FaultNone {
					r.Value = 1
				}
			} else if f := p.checkElem(bi, lane, e, addr); f != FaultNone {
				r.Fault = f
				faults++
			} else {
				m.access(p, in, g, lane, e, addr, &r)
			}
			results = append(results, r)
		}
	}
	slices.SortStableFunc(results, func(a, b Result) int { return cmp.Compare(a.Lane, b.Lane) })
	maxc := uint32(0)
	for _, n := range hits {
		maxc = max(maxc, n)
	}
	stat := InstStat{Seq: in.Seq, Static: st, Group: in.Group, Warp: in.Warp,
		Lanes: uint32(bits.OnesCount32(active)), Addresses: uint32(len(hits)), MaxConflict: maxc, Faults: faults}
	return stat, results, nil
}

// access performs one lane-element's access that did not fault at addr
// (memory group g), filling what the lane gets back into r.
func (m *refMachine) access(p *plan, in *trace.Inst, g int64, lane, e int, addr uint64, r *Result) {
	st := in.Static
	var bv, bh, cv, ch uint64
	if p.b != nil {
		bv, bh = in.Value(p.b[e], lane)
	}
	if p.c != nil {
		cv, ch = in.Value(p.c[e], lane)
	}
	bv, cv = bv>>p.srcShift, cv>>p.srcShift
	// Read the old value, little-endian.
	var buf [16]byte
	for i := 0; i < int(p.size); i++ {
		buf[i] = m.mem[refAddr{st.Space, g, addr + uint64(i)}]
	}
	oldLo := binary.LittleEndian.Uint64(buf[:8])
	oldHi := binary.LittleEndian.Uint64(buf[8:])
	var newLo, newHi uint64
	switch p.size {
	case 1:
		newLo = uint64(uint8(op16(p.kind, uint16(oldLo), uint16(bv), uint16(cv))))
	case 2:
		newLo = uint64(op16(p.kind, uint16(oldLo), uint16(bv), uint16(cv)))
	case 4:
		newLo = uint64(op32(p.kind, uint32(oldLo), uint32(bv), uint32(cv)))
	case 8:
		newLo = op64(p.kind, oldLo, bv, cv)
	case 16:
		newLo, newHi = op128(p.kind, oldLo, oldHi, bv, bh, cv, ch)
	}
	if !p.plain {
		m.count(refAddr{st.Space, g, addr}, p, in, bv, cv)
	}
	binary.LittleEndian.PutUint64(buf[:8], newLo)
	binary.LittleEndian.PutUint64(buf[8:], newHi)
	for i := 0; i < int(p.size); i++ {
		a := refAddr{st.Space, g, addr + uint64(i)}
		m.mem[a] = buf[i]
		m.touched[refAddr{a.space, a.group, a.addr &^ 3}] = true
	}
	switch {
	case !st.HasDst || p.noRet:
	case p.retNew:
		r.Value, r.ValueHi = newLo, newHi
	default:
		r.Value, r.ValueHi = oldLo, oldHi
	}
	if p.retShl16 {
		r.Value <<= 16
	}
}

// count adds an atomic access to its address's row of the addresses table.
func (m *refMachine) count(ra refAddr, p *plan, in *trace.Inst, bv, cv uint64) {
	as := m.addrs[ra]
	if as == nil {
		as = &refAddrStat{warps: map[[2]int64]bool{}, groups: map[int64]bool{}, same: p.size != 16,
			first: [3]uint64{uint64(p.kind), bv, cv}, family: familyOf(p.kind)}
		as.commuting = as.family != famNone
		m.addrs[ra] = as
	}
	as.accesses++
	as.warps[[2]int64{in.Group, in.Warp}] = true
	as.groups[in.Group] = true
	as.same = as.same && as.first == [3]uint64{uint64(p.kind), bv, cv}
	as.commuting = as.commuting && familyOf(p.kind) == as.family
}

// words returns the memory table: every word written, sorted.
func (m *refMachine) words() []Word {
	words := make([]refAddr, 0, len(m.touched))
	for w := range m.touched {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		a, b := words[i], words[j]
		if a.space.String() != b.space.String() {
			return a.space.String() < b.space.String()
		}
		if a.group != b.group {
			return a.group < b.group
		}
		return a.addr < b.addr
	})
	out := make([]Word, len(words))
	for i, w := range words {
		var v uint32
		for j := uint64(0); j < 4; j++ {
			v |= uint32(m.mem[refAddr{w.space, w.group, w.addr + j}]) << (8 * j)
		}
		out[i] = Word{Space: w.space, Group: w.group, Addr: w.addr, Value: v}
	}
	return out
}

// addressRows returns the addresses table, sorted like memory.
func (m *refMachine) addressRows() []AddressStat {
	rows := make([]AddressStat, 0, len(m.addrs))
	for k, a := range m.addrs {
		r := AddressStat{Space: k.space, Group: k.group, Addr: k.addr, Accesses: a.accesses,
			Warps: uint64(len(a.warps)), Groups: uint64(len(a.groups)), Exact: true}
		if m.explore {
			r.OrderSensitive = !a.same && !a.commuting
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := &rows[i], &rows[j]
		if a.Space.String() != b.Space.String() {
			return a.Space.String() < b.Space.String()
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Addr < b.Addr
	})
	return rows
}

// refElemAddr is the Static's address formula, written out again:
// (scale*base + imm + lane*pitch + elemOff) wrapped to the address width.
func refElemAddr(p *plan, bi *binst, lane, e int) uint64 {
	if p.elemAddr != nil {
		return p.elemAddr(bi, lane, e)
	}
	st := p.st
	base := uint64(0)
	if st.Addr >= 0 {
		if st.AddrUniform {
			base = bi.Vals[st.Addr].Lo(0)
		} else {
			base = bi.Vals[st.Addr].Lo(lane)
		}
	}
	a := base*uint64(st.AddrScale) + uint64(st.AddrImm) + uint64(int64(lane)*st.LanePitch) + uint64(st.ElemOff(e))
	if st.AddrBits < 64 {
		a %= uint64(1) << uint(st.AddrBits)
	}
	return a
}

// seqOrderSink holds the instruction and result rows until the memory
// comes, then hands them on sorted by seq (then lane, element): the
// reference's rows under WithInterleave.
type seqOrderSink struct {
	Sink
	stats   []InstStat
	results []Result
	flushed bool
}

func (s *seqOrderSink) Instructions(st []InstStat) error {
	s.stats = append(s.stats, st...)
	return nil
}

func (s *seqOrderSink) Results(rs []Result) error {
	s.results = append(s.results, rs...)
	return nil
}

func (s *seqOrderSink) flush() error {
	if s.flushed {
		return nil
	}
	s.flushed = true
	slices.SortStableFunc(s.stats, func(a, b InstStat) int { return cmp.Compare(a.Seq, b.Seq) })
	slices.SortStableFunc(s.results, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Lane, b.Lane), cmp.Compare(a.Elem, b.Elem))
	})
	if err := s.Sink.Instructions(s.stats); err != nil {
		return err
	}
	return s.Sink.Results(s.results)
}

func (s *seqOrderSink) Memory(ws []Word) error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.Sink.Memory(ws)
}

func (s *seqOrderSink) Commit() error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.Sink.Commit()
}

func (s *seqOrderSink) WantsAddresses() bool {
	as, ok := s.Sink.(AddressSink)
	return ok && as.WantsAddresses()
}

func (s *seqOrderSink) Addresses(rows []AddressStat) error {
	return s.Sink.(AddressSink).Addresses(rows)
}
