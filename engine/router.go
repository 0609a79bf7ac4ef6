package engine

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// Router is the map stage of a split replay (replay split): for each
// instruction of a trace it works out which of n partitions each active
// lane's elements fall in (PartitionOf, with the engine's own effective
// addresses: the same plans a replay makes), and the statistics of the
// instruction's row that depend on its addresses alone: its lanes, its
// distinct addresses, its largest conflict and its sectors, over every
// lane-element, as a whole replay counts them. Faults depend on the
// regions declared before the instruction, which a slice of a trace does
// not know, and failed compare-and-swaps on memory: the partitions count
// their own (see trace.PartInfo).
//
// A Router is used by one goroutine. It allocates nothing per instruction
// once its plans and memory keys are made.
type Router struct {
	hdr   *trace.Header
	pt    shard.Partitioner
	plans map[*trace.Static]*plan
	none  map[trace.Space][]trace.Region
	b     *batch
	keys  map[memKey]uint64
	last  memKey
	lastK uint64
	lastS *trace.Static
	lastP *plan
	addrs []uint64

	owners []uint32 // per partition: the lanes with an element there
	parts  []int    // the partitions with a lane, ascending
	seen   []bool   // per partition: in parts

	laneOps []uint64 // per partition: lane-elements routed there
	hot     hotWords
	avx512  bool // a full warp's conflicts are counted by warpConflictsAVX512
	// addrs512: a full warp's addresses are made by warpAddrsAVX512.
	addrs512 bool

	fold      bool     // SetFold: Route says which instructions fold
	foldAddrs []uint64 // the folded instruction's lanes' addresses, lane order
	foldVals  []uint64 // and their operands (the router's, or its input's list)
	valBuf    []uint64 // room for operands that are not a list to share
	// boundsP is the plan whose regions' hull boundsLo and boundsEnd are
	// (FoldOp.Bounds), found again only when another plan folds.
	boundsP             *plan
	boundsLo, boundsEnd uint64
}

// NewRouter returns a router of the instructions of a trace with header h
// over n partitions.
func NewRouter(h *trace.Header, n int) (*Router, error) {
	pt, err := shard.NewPartitioner(n)
	if err != nil {
		return nil, err
	}
	return NewRouterWith(h, n, pt), nil
}

// NewRouterWith is NewRouter with the partitioner pt of n partitions (a
// partition map's: shard.NewPartitionerMap).
func NewRouterWith(h *trace.Header, n int, pt shard.Partitioner) *Router {
	if h == nil {
		h = &trace.Header{}
	}
	r := &Router{hdr: h, pt: pt, plans: map[*trace.Static]*plan{}, none: map[trace.Space][]trace.Region{},
		b: &batch{}, keys: map[memKey]uint64{}, owners: make([]uint32, n), seen: make([]bool, n),
		laneOps: make([]uint64, n), hot: newHotWords(), avx512: hasConflictsAVX512(),
		addrs512: hasAddrsAVX512()}
	for _, reg := range h.Regions {
		r.none[reg.Space] = append(r.none[reg.Space], reg)
	}
	return r
}

// SetFold makes Route tell which instructions fold (Routed.Fold) and
// keep their lanes' addresses and operands (Folds).
func (r *Router) SetFold(on bool) { r.fold = on }

// Region declares region reg for the instructions routed from now on (a
// .region directive of the trace): the fault checks by which Route tells
// which instructions fold. Regions only add addresses, so an access in
// bounds of the regions a router knows is in bounds of a replay's, which
// knows them and maybe more; but where a router knows none of a space
// (which a replay takes for unbounded), a replay may know one of an
// earlier slice's directives: such a word fails the replay (applyFold).
func (r *Router) Region(reg trace.Region) {
	r.none[reg.Space] = append(slices.Clip(r.none[reg.Space]), reg)
	for st := range r.plans {
		if st.Space == reg.Space {
			delete(r.plans, st)
		}
	}
	r.lastS, r.lastP, r.boundsP = nil, nil, nil
}

// FoldOp is an operation whose accesses to one word compose into one:
// an integer add or sub (wrapping), and, or, xor, signed or unsigned min
// or max, of 32 or 64 bits, one element a lane, with nothing but its
// operand, in one memory instance. Its zero value is no operation.
type FoldOp struct {
	Space trace.Space
	Group int64  // the .group for a per-group space, else -1
	Key   uint64 // PartitionKey(Space, Group)
	k     kind
	size  uint8
	// lo and end bound the regions of Space the router knew (Bounds);
	// end 0: none, every address.
	lo, end uint64
}

// Bounds is the smallest range [lo, end) that holds every region of f's
// space the router knew when it routed the instruction, ok when it knew
// one: every access of a folded instruction lies in it (Router.Region).
// A caller keeps an instruction's folds in a dense array over it.
func (f FoldOp) Bounds() (lo, end uint64, ok bool) { return f.lo, f.end, f.end != 0 }

// Valid reports whether f is an operation (the instruction folds).
func (f FoldOp) Valid() bool { return f.k != 0 }

// SameOp reports whether f and g are the same operation at the same
// width (in any memory instance): their folds at a word compose.
func (f FoldOp) SameOp(g FoldOp) bool { return f.k == g.k && f.size == g.size }

// Size is the bytes of one access: 4 or 8.
func (f FoldOp) Size() int { return int(f.size) }

// FoldKind is how the operands of a FoldOp's accesses to a word combine.
type FoldKind uint8

// The FoldKinds: FoldAdd adds (add and sub, whose operands add); the
// others are their operation.
const (
	FoldAdd FoldKind = iota + 1
	FoldAnd
	FoldOr
	FoldXor
	FoldMinU
	FoldMaxU
	FoldMinS
	FoldMaxS
)

// Kind is how f's operands combine (Combine's operation).
func (f FoldOp) Kind() FoldKind {
	switch f.k {
	case kAdd, kSub:
		return FoldAdd
	case kAnd:
		return FoldAnd
	case kOr:
		return FoldOr
	case kXor:
		return FoldXor
	case kMinU:
		return FoldMinU
	case kMaxU:
		return FoldMaxU
	case kMinS:
		return FoldMinS
	case kMaxS:
		return FoldMaxS
	}
	return 0
}

// Combine is the operand of one access equal to the access with operand
// acc followed by the access with operand v: the operation itself but
// for sub, whose operands add.
func (f FoldOp) Combine(acc, v uint64) uint64 {
	k := f.k
	if k == kSub {
		k = kAdd
	}
	if f.size == 4 {
		return uint64(opInt(k, uint32(acc), uint32(v), 0))
	}
	return opInt(k, acc, v, 0)
}

// Folds returns the addresses and operands of the active lanes of the
// instruction Route routed last, in lane order, when it folds
// (Routed.Fold); they are the router's (the operands maybe its input's
// list), valid until the next Route, and not to be written.
func (r *Router) Folds() (addrs, vals []uint64) { return r.foldAddrs, r.foldVals }

// foldable reports whether p's accesses to a word compose into one
// (FoldOp).
func (p *plan) foldable() bool {
	switch p.kind {
	case kAdd, kSub, kAnd, kOr, kXor, kMinU, kMaxU, kMinS, kMaxS:
	default:
		return false
	}
	return (p.size == 4 || p.size == 8) && p.st.Elems == 1 && !p.status && p.elemAddr == nil &&
		p.elemFault == nil && p.srcShift == 0 && !p.retShl16 && len(p.b) == 1 && p.c == nil
}

// foldOf sets *f to the FoldOp of instruction in of plan p when it
// folds: its every active lane's access in bounds of the regions the
// router knows (not misaligned, in no SASS window, in a region), and
// leaves it as it was when it does not. It keeps the lanes'
// addresses (addrs, one a lane in lane order) and operands. It reports
// whether the instruction folds.
func (r *Router) foldOf(in *trace.Inst, p *plan, k memKey, key uint64, active uint32, addrs []uint64, sp *span, f *FoldOp) bool {
	if !p.foldable() || len(addrs) != bits.OnesCount32(active) {
		return false
	}
	if !sp.ok {
		*sp = spanOf(addrs)
	}
	if !p.inBounds(addrs, sp) {
		return false
	}
	src := p.b[0]
	vals := r.valBuf[:0]
	if src.In < 0 {
		vals = fill(vals, len(addrs), src.Imm)
	} else if v := &in.Vals[src.In]; p.st.Inputs[src.In].Elems > 1 {
		for m := active; m != 0; m &= m - 1 {
			vals = append(vals, v.Lo(p.st.ValueIndex(src, bits.TrailingZeros32(m))))
		}
	} else if v.Kind == trace.VecBroadcast {
		vals = fill(vals, len(addrs), v.Base) // (a histogram's 1)
	} else if v.Kind == trace.VecList && active == 1<<len(addrs)-1 {
		// Lanes 0..n-1: the list's first n, read where they are.
		r.foldVals, r.foldAddrs = v.List[:len(addrs):len(addrs)], addrs
		r.foldOp(p, k, key, f)
		return true
	} else {
		for m := active; m != 0; m &= m - 1 {
			vals = append(vals, v.Lo(bits.TrailingZeros32(m)))
		}
	}
	r.valBuf = vals
	// addrs are the router's (Route's r.addrs): counts, which follows,
	// reorders no fold's (at most a warp's, one a lane).
	r.foldVals, r.foldAddrs = vals, addrs
	r.foldOp(p, k, key, f)
	return true
}

// fill is vals (emptied) holding n copies of x.
func fill(vals []uint64, n int, x uint64) []uint64 {
	vals = slices.Grow(vals[:0], n)[:n]
	for i := range vals {
		vals[i] = x
	}
	return vals
}

// foldOp sets *f to the FoldOp of plan p in memory k (partition key
// key), with the hull of the regions of its space (FoldOp.Bounds), a
// field at a time: a FoldOp made whole and copied went through the stack
// in stores of its fields and loads of 16 bytes, which the processor
// cannot forward from them (a stall of some 20 cycles each, an
// instruction's).
func (r *Router) foldOp(p *plan, k memKey, key uint64, f *FoldOp) {
	if p != r.boundsP {
		lo, end := ^uint64(0), uint64(0)
		for _, reg := range p.regions {
			e := reg.Base + reg.Size
			if reg.Size == 0 {
				continue // holds no access
			}
			if e < reg.Base { // to the top of the address space: no bound
				lo, end = 0, 0
				break
			}
			lo, end = min(lo, reg.Base), max(end, e)
		}
		if end == 0 {
			lo = 0
		}
		r.boundsP, r.boundsLo, r.boundsEnd = p, lo, end
	}
	f.Space, f.Group, f.Key, f.k, f.size, f.lo, f.end = k.space, k.group, key, p.kind, p.size, r.boundsLo, r.boundsEnd
}

// inBounds reports whether every address of addrs is an access of p
// without a fault (p.check, and p.vecAlign's alignment): at once, for
// addresses aligned whose span is in one region and in no SASS window,
// else address by address.
func (p *plan) inBounds(addrs []uint64, sp *span) bool {
	if len(addrs) == 0 {
		return true
	}
	size := uint64(p.size)
	lo, hi, or := sp.lo, sp.hi, sp.or
	if or&(size-1) != 0 {
		return false // misaligned
	}
	span := p.vecAlign == 0 && (len(p.windows) == 0 || !inWindow(p.windows, lo, hi+size-1))
	if span && len(p.regions) > 0 {
		span = false
		if n := hi - lo + size; n >= size { // (not the whole address space)
			for i := range p.regions {
				if p.regions[i].Contains(lo, n) {
					span = true
					break
				}
			}
		}
	}
	if span {
		return true // aligned, hi+size-1 does not wrap
	}
	for _, a := range addrs {
		if p.vecAlign != 0 && a%p.vecAlign != 0 || p.check(a) != FaultNone {
			return false
		}
	}
	return true
}

// Addrs returns the partition key (PartitionKey) and the addresses of the
// lane-elements of the instruction Route routed last, in some order; they
// are the router's, valid until the next Route.
func (r *Router) Addrs() (key uint64, addrs []uint64) { return r.lastK, r.addrs }

// Routed is where one instruction's lanes go. Owners and Parts are the
// router's, valid until the next Route.
type Routed struct {
	// Owners[p] is the mask of the active lanes with an element in
	// partition p; every active lane is in at least one.
	Owners []uint32
	// Parts lists the partitions with a lane, ascending.
	Parts []int
	// Fold, with SetFold, is the instruction's operation when its
	// accesses fold (FoldOp; Router.Folds has its lanes'). Such an
	// instruction's lanes are not routed: Parts is empty, and LaneOps
	// does not count them; the caller that applies their folds does, by
	// the partition of their lines (Partitioner.Of).
	Fold FoldOp
	// Lanes, Addresses, MaxConflict and Sectors are the row's: the
	// active lanes, and the distinct addresses, the most lane-elements on
	// one address and the distinct 32-byte sectors among all of their
	// elements.
	Lanes, Addresses, MaxConflict, Sectors uint32
}

// Route routes instruction in (not a directive).
func (r *Router) Route(in *trace.Inst) (Routed, error) {
	var out Routed
	err := r.RouteInto(in, &out)
	return out, err
}

// RouteInto is Route, setting *out: a caller that routes every
// instruction of a trace keeps one Routed, rather than a copy of one
// returned, which went through the stack in loads wider than the stores
// of its fields, that the processor cannot forward (foldOp).
func (r *Router) RouteInto(in *trace.Inst, out *Routed) error {
	for _, p := range r.parts {
		r.owners[p], r.seen[p] = 0, false
	}
	r.parts = r.parts[:0]
	st := in.Static
	p := r.lastP
	if st != r.lastS {
		if p = r.plans[st]; p == nil {
			var err error
			if p, err = newPlan(st, r.hdr, r.none); err != nil {
				return &InstError{Seq: in.Seq, Line: in.Line, Text: st.Text, Err: err}
			}
			r.plans[st] = p
		}
		r.lastS, r.lastP = st, p
	}
	k := memKey{st.Space, in.Group}
	if !st.Space.PerGroup() {
		k.group = -1
	}
	if k != r.last || r.lastK == 0 {
		key, ok := r.keys[k]
		if !ok {
			key = PartitionKey(k.space, k.group)
			r.keys[k] = key
		}
		r.last, r.lastK = k, key
	}
	key := r.lastK
	active := in.Active()
	out.Lanes = uint32(bits.OnesCount32(active))
	out.Fold = FoldOp{} // foldOf sets it when the instruction folds
	addrs := r.addrs[:0]
	var sp span // of addrs, when ok
	if av := addrList(in); p.elemAddr == nil && av != nil && st.Elems == 1 {
		// A list of one address a lane (a scattered warp's): the formula
		// below in one pass into room made once.
		n := bits.OnesCount32(active)
		addrs = slices.Grow(addrs, n)[:n]
		scale, imm, pitch, mask := uint64(st.AddrScale), uint64(st.AddrImm)+uint64(st.ElemOff(0)), uint64(st.LanePitch), st.AddrMask()
		if n == trace.MaxLanes && len(av) >= n {
			// A full warp: lane i's is element i, each apart from the
			// others (no chain through the mask); their span on the way,
			// for foldOf and counts; eight lanes a register where the
			// CPU can.
			if r.addrs512 {
				lo, hi, or := warpAddrsAVX512((*[trace.MaxLanes]uint64)(addrs), (*[trace.MaxLanes]uint64)(av), scale, imm, pitch, mask)
				sp = span{lo, hi, or, true}
			} else {
				sp = warpAddrs((*[trace.MaxLanes]uint64)(addrs), (*[trace.MaxLanes]uint64)(av), scale, imm, pitch, mask)
			}
		} else {
			i := 0
			for m := active; m != 0; m &= m - 1 {
				lane := bits.TrailingZeros32(m)
				addrs[i] = (scale*av[lane] + imm + uint64(lane)*pitch) & mask
				i++
			}
		}
	} else if p.elemAddr == nil {
		// The Static's formula (plan.addr's) on the instruction's own
		// vectors, without copying them into a batch.
		var av *trace.Vector
		if st.Addr >= 0 {
			av = &in.Vals[st.Addr]
		}
		scale, imm, pitch, mask := uint64(st.AddrScale), uint64(st.AddrImm), uint64(st.LanePitch), st.AddrMask()
		for m := active; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			var base uint64
			if av != nil {
				l := lane
				if st.AddrUniform {
					l = 0
				}
				base = av.Lo(l)
			}
			a0 := scale*base + imm + uint64(lane)*pitch
			for e := range st.Elems {
				addrs = append(addrs, (a0+uint64(st.ElemOff(e)))&mask)
			}
		}
	} else {
		bi := r.b.alone(in, p)
		for m := active; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			for e := range st.Elems {
				addrs = append(addrs, p.addr(&bi, lane, e))
			}
		}
	}
	if len(addrs) > 0 {
		r.hot.sample(k, addrs)
	}
	if r.fold {
		// A folded instruction's lanes are not routed here: the caller
		// counts them by line where it writes their folds (Routed.Fold).
		if r.foldOf(in, p, k, key, active, addrs, &sp, &out.Fold) {
			out.Addresses, out.MaxConflict, out.Sectors = r.countsSpan(addrs, &sp)
			r.addrs = addrs
			out.Owners, out.Parts = r.owners, r.parts
			return nil
		}
	}
	r.part(addrs, active, st.Elems, key)
	out.Addresses, out.MaxConflict, out.Sectors = r.countsSpan(addrs, &sp)
	r.addrs = addrs
	out.Owners, out.Parts = r.owners, r.parts
	return nil
}

// part finds the partitions of addrs, elems a lane of the lanes of
// active in lane order, in memory key: the owners of each, the
// partitions hit (ascending) and the lane-ops each takes.
func (r *Router) part(addrs []uint64, active uint32, elems int, key uint64) {
	owners, laneOps, pt := r.owners, r.laneOps, &r.pt
	if len(owners) <= 64 {
		// The partitions hit as bits of a word: ascending without a sort.
		var hit uint64
		k0 := 0
		for m := active; m != 0; m &= m - 1 {
			bit := uint32(1) << bits.TrailingZeros32(m)
			for _, a := range addrs[k0 : k0+elems] {
				part := pt.Of(key, a)
				hit |= 1 << uint(part&63)
				owners[part] |= bit
				laneOps[part]++
			}
			k0 += elems
		}
		for ; hit != 0; hit &= hit - 1 {
			r.parts = append(r.parts, bits.TrailingZeros64(hit))
		}
	} else {
		k0 := 0
		for m := active; m != 0; m &= m - 1 {
			bit := uint32(1) << bits.TrailingZeros32(m)
			for _, a := range addrs[k0 : k0+elems] {
				part := pt.Of(key, a)
				if !r.seen[part] {
					r.seen[part] = true
					r.parts = append(r.parts, part)
				}
				owners[part] |= bit
				laneOps[part]++
			}
			k0 += elems
		}
		if len(r.parts) > 1 {
			slices.Sort(r.parts)
		}
	}
}

// addrList is the list of in's per-lane addresses, nil when its address
// is not a list of one value a lane read lane by lane.
func addrList(in *trace.Inst) []uint64 {
	st := in.Static
	if st.Addr < 0 || st.AddrUniform {
		return nil
	}
	if v := &in.Vals[st.Addr]; v.Kind == trace.VecList {
		return v.List
	}
	return nil
}

// span is the least and greatest of some addresses and their OR, when ok.
type span struct {
	lo, hi, or uint64
	ok         bool
}

// warpAddrs sets a full warp's addresses, lane i's from element i of its
// list av, and returns their span. It is a function of its own: in
// Route's body the span's registers went to the stack, a load and a
// store a lane.
//
//go:noinline
func warpAddrs(addrs, av *[trace.MaxLanes]uint64, scale, imm, pitch, mask uint64) span {
	lo, hi, or := ^uint64(0), uint64(0), uint64(0)
	for lane := range addrs {
		a := (scale*av[lane] + imm + uint64(lane)*pitch) & mask
		addrs[lane] = a
		lo, hi, or = min(lo, a), max(hi, a), or|a
	}
	return span{lo, hi, or, true}
}

// spanOf is the span of addrs.
func spanOf(addrs []uint64) span {
	lo, hi, or := ^uint64(0), uint64(0), uint64(0)
	for _, a := range addrs {
		lo, hi, or = min(lo, a), max(hi, a), or|a
	}
	return span{lo, hi, or, true}
}

// countsSpan is counts of addrs whose span sp may know: a full warp
// within 4 GiB (its addresses' high halves equal, as those of its least
// and greatest are) goes to warpConflictsAVX512 without a pass to find
// out.
func (r *Router) countsSpan(addrs []uint64, sp *span) (distinct, maxc, sectors uint32) {
	if sp.ok && len(addrs) == trace.MaxLanes && r.avx512 && sp.lo>>32 == sp.hi>>32 {
		d, c := warpConflictsAVX512((*[trace.MaxLanes]uint64)(addrs))
		return d, conflictDepth(d, c), warpSectors(addrs, true)
	}
	return r.counts(addrs)
}

// counts is the distinct addresses, the largest conflict and the distinct
// sectors of addrs, which it may reorder. A full warp whose addresses
// differ only in their low 32 bits (warpConflictsAVX512 compares those) is
// counted with AVX-512, its sectors too; others are sorted once for both.
func (r *Router) counts(addrs []uint64) (distinct, maxc, sectors uint32) {
	if len(addrs) == trace.MaxLanes && r.avx512 {
		var x uint64
		for _, a := range addrs {
			x |= a ^ addrs[0]
		}
		if x>>32 == 0 {
			d, c := warpConflictsAVX512((*[trace.MaxLanes]uint64)(addrs))
			return d, conflictDepth(d, c), warpSectors(addrs, true)
		}
	}
	if n := len(addrs); n > trace.MaxLanes/4 && n < trace.MaxLanes && r.avx512 {
		// A partial warp (a BFS's frontier lanes), its addresses aligned
		// to 4 bytes and within 4 GiB: the full warp's count, its other
		// lanes on addresses of their own, 1 mod 4 (no lane's), apart
		// in their low 32 bits, each an address of one lane.
		var x, or uint64
		for _, a := range addrs {
			x, or = x|(a^addrs[0]), or|a
		}
		if x>>32 == 0 && or&3 == 0 {
			var w [trace.MaxLanes]uint64
			copy(w[:], addrs)
			for i := n; i < trace.MaxLanes; i++ {
				w[i] = addrs[0] | 1 + uint64(i)<<2
			}
			d, c := warpConflictsAVX512(&w)
			d -= uint32(trace.MaxLanes - n)
			return d, conflictDepth(d, c), warpSectors(addrs, true)
		}
	}
	distinct, maxc = conflicts(addrs) // sorts addrs: sectorCount takes one pass
	return distinct, maxc, sectorCount(addrs)
}

// LaneOps is how many lane-elements Route has sent to each partition
// (not those of the instructions that fold: Routed.Fold).
func (r *Router) LaneOps() []uint64 { return r.laneOps }

// HotWord is a word that may take a large share of a trace's accesses, as
// a sample of them saw it.
type HotWord struct {
	Space trace.Space
	Group int64
	Addr  uint64 // of the word: a multiple of 4
	// LaneOps estimates the lane-elements that hit the word: those
	// sampled, times the sampling period.
	LaneOps uint64
}

// HotWords returns up to k words that the lane-elements routed so far hit
// most, as a sample of one lane-element in HotSample counted them
// (Misra-Gries): every word with more than 1/32 of the samples is among
// them. Most first.
func (r *Router) HotWords(k int) []HotWord { return r.hot.top(k) }

// HotSample is the period of the sample HotWords counts: a word of 0.5%
// of a split task's 10^7 lane-ops still gets about 800 samples, and on a
// trace with no hot word, where every sample misses the summary, the
// sample costs a uniform split task 1% of its CPU rather than 4% (1 in 16).
const HotSample = 64

// hotWords is a Misra-Gries summary of a sample of the words accessed:
// at most hotSlots candidates and their counts. A count is stored with
// floor added: decrementing every candidate is floor++, and a slot whose
// count is at most floor is free. A sample finds its candidate through
// index, an open-addressed table of slots by the word's hash, rather than
// by comparing every candidate: an entry may be stale (its slot freed or
// taken by another word since), so a slot found is its word's only if
// the slot holds that word and is not free; the table is rebuilt from the
// candidates once it holds hotRebuild entries. free lists slots known to
// be free (a slot freed stays free until taken); when it is empty, one
// pass over the counts refills it before a sample concludes that no slot
// is free.
type hotWords struct {
	tick    uint32
	floor   uint64
	keys    [hotSlots]hotKey
	counts  [hotSlots]uint64
	index   [hotIndex]uint8 // a slot + 1; 0: empty
	entries int             // in index
	free    [hotSlots]uint8 // free[:nfree]
	nfree   int
}

// hotKey is a word: addr first, which tells most words apart in one
// comparison (struct equality compares fields in order).
type hotKey struct {
	addr uint64
	mem  memKey
}

const (
	hotSlots   = 32
	hotIndex   = 256 // entries of hotWords.index: a power of 2
	hotRebuild = 96  // entries at most in hotWords.index
)

func newHotWords() hotWords { return hotWords{} }

// sample counts one lane-element in HotSample of addrs.
func (h *hotWords) sample(k memKey, addrs []uint64) {
	for h.tick < uint32(len(addrs)) {
		h.add(k, addrs[h.tick])
		h.tick += HotSample
	}
	h.tick -= uint32(len(addrs))
}

// hash is key's first entry in hotWords.index.
func (key *hotKey) hash() uint32 {
	x := key.addr>>2 ^ uint64(key.mem.group)<<40 ^ uint64(key.mem.space.Kind)<<56 ^ uint64(key.mem.space.Surface)<<48
	return uint32((x * 0x9e3779b97f4a7c15) >> 56)
}

// add counts a sampled lane-element on the word of addr: its candidate's
// count goes up, or it takes a free slot with a count of 1, or, with no
// slot free, every count goes down by one.
func (h *hotWords) add(k memKey, addr uint64) {
	key := hotKey{addr &^ 3, k}
	i := key.hash()
	for ; ; i = (i + 1) & (hotIndex - 1) {
		e := h.index[i]
		if e == 0 {
			break
		}
		if s := e - 1; h.keys[s] == key && h.counts[s] > h.floor {
			h.counts[s]++
			return
		}
	}
	if h.nfree == 0 {
		for s, c := range h.counts {
			if c <= h.floor {
				h.free[h.nfree] = uint8(s)
				h.nfree++
			}
		}
		if h.nfree == 0 {
			h.floor++
			return
		}
	}
	h.nfree--
	s := h.free[h.nfree]
	h.keys[s], h.counts[s] = key, h.floor+1
	if h.entries == hotRebuild {
		h.index = [hotIndex]uint8{}
		h.entries = 0
		for t := range h.keys {
			if h.counts[t] > h.floor && uint8(t) != s {
				h.insert(uint8(t))
			}
		}
		i = key.hash()
		for h.index[i] != 0 {
			i = (i + 1) & (hotIndex - 1)
		}
	}
	h.index[i] = s + 1 // i: the empty entry the search ended at
	h.entries++
}

// insert enters slot s's word in index.
func (h *hotWords) insert(s uint8) {
	i := h.keys[s].hash()
	for h.index[i] != 0 {
		i = (i + 1) & (hotIndex - 1)
	}
	h.index[i] = s + 1
	h.entries++
}

func (h *hotWords) top(k int) []HotWord {
	var out []HotWord
	for i, w := range h.keys {
		if c := h.counts[i]; c > h.floor {
			out = append(out, HotWord{Space: w.mem.space, Group: w.mem.group, Addr: w.addr, LaneOps: (c - h.floor) * HotSample})
		}
	}
	sortHot(out)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// MergeHotWords is the k hottest of the words of hs (the HotWords of
// several routers: a split task's parts), the estimates of a word there
// more than once added, most first, as HotWords orders them.
func MergeHotWords(hs []HotWord, k int) []HotWord {
	type word struct {
		space trace.Space
		group int64
		addr  uint64
	}
	at := map[word]int{}
	var out []HotWord
	for _, h := range hs {
		w := word{h.Space, h.Group, h.Addr}
		if i, ok := at[w]; ok {
			out[i].LaneOps += h.LaneOps
			continue
		}
		at[w] = len(out)
		out = append(out, h)
	}
	sortHot(out)
	return out[:min(len(out), k)]
}

func sortHot(hs []HotWord) {
	slices.SortFunc(hs, func(a, b HotWord) int {
		return cmp.Or(cmp.Compare(b.LaneOps, a.LaneOps), cmp.Compare(a.Space.Kind, b.Space.Kind),
			cmp.Compare(a.Space.Surface, b.Space.Surface), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Addr, b.Addr))
	})
}
