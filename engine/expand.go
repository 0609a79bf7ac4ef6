package engine

import (
	"math/bits"
	"slices"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// The expand stage: a batch's instructions turned into records routed to
// their pages' owners, warp by warp (runs, sums, the warp's addresses and
// span). Its routing of single lanes is route.go; the conflict counts,
// conflicts.go.

// expand turns instructions [lo, hi) into records routed to their pages'
// owners, and fills their result slots' address and fault, and their
// statistics. With fuse (one worker: range and owner are the whole batch)
// it applies each instruction's records at once, while they are in cache,
// and t counts them.
func (b *batch) expand(r, lo, hi int, mem *shard.Memory, fuse bool, t *addrTracker) {
	routes := b.out[r]
	if len(routes) == 1 && !fuse {
		// One owner gets at most a record per slot, and about as many as
		// the most a range needed before (recsHint; a warp on one word or
		// a run is one record for all its lanes): room for them at once,
		// not by doubling (each doubling copies, into memory not yet
		// paged in), and not for a record per slot where a record per
		// warp will do (1 MiB a batch of the hot counter, which only
		// brought the collector's next cycle nearer).
		want := b.nslots
		if h := b.recsHint; h > 0 {
			want = min(want, h+h/8)
		} else {
			// No batch expanded yet: a record per warp, and room grown
			// as the records need it (a hot counter's first batch
			// allocated a record per lane, 1 MiB a range, for a few).
			want = min(want, hi-lo)
		}
		if cap(routes[0].recs) < want {
			routes[0].recs = make([]rec, 0, want+want/8)
		}
		// Likewise the segments, a few an instruction at most (a
		// spinlock's warp is one a lock): the most a range needed
		// before. The first batches grew them by doubling, each a copy
		// into fresh pages (2% of a lean spinlock replay's time).
		if h := b.segsHint; h > 0 && cap(routes[0].segs) < h {
			routes[0].segs = make([]seg, 0, h+h/8)
		}
	}
	cur := mem.Cursor()
	b.firstFault[r] = -1
	addrs := b.scratch[r][:0]
	// The instruction in hand, in the batch rather than on the stack: the
	// element hooks (plan.elemAddr) are called through func values, to
	// which a local's address would escape, an allocation per instruction.
	bi := &b.cur[r]
	bi.vecs, bi.arena = b.vecs, b.arena
	sr := &b.sums[r]
	sr.ok = false
	b.startAcc(r)
	sums := b.sumsPages()
	pre := b.prefixes()
	if pre {
		b.startPrefix(r)
	}
	for ii := lo; ii < hi; ii++ {
		if sr.ok && !fuse {
			if k := b.sumRepeats(ii, hi, routes, sr, bi.plan.st); k > 0 {
				ii += k - 1
				continue
			}
		}
		bi.binst = b.insts[ii]
		if sr.ok && sr.same(&bi.binst) {
			b.sumAgain(ii, bi, routes, sr, fuse)
			if fuse {
				b.applyFused(&routes[0], mem, t)
			}
			continue
		}
		sr.ok = false
		p := b.plans[bi.pi]
		if bi.plan != p {
			bi.plan = p
		}
		st := p.st
		if pre {
			taken, err := b.prefixWarp(ii, bi, routes, &cur, r)
			if err != nil {
				b.rangeErr[r] = err
				break
			}
			if taken {
				continue // applied when its run ends
			}
			// Another warp: the run ends before it.
			if acc := b.pre[r]; acc != nil && acc.lanes > 0 {
				b.flushPrefix(acc, routes)
				if fuse {
					b.applyFused(&routes[0], mem, t)
				}
			}
		}
		if b.partitioned && !(b.hasParts && st.Elems == 1) && !b.warpLocal(bi) {
			// Some lane-element is another partition's: each is checked on
			// its own. (The paths below take whole warps of this one.)
			addrs = b.expandLanes(ii, bi, routes, &cur, addrs, mem, r)
			if b.rangeErr[r] != nil {
				break
			}
			if fuse {
				b.applyFused(&routes[0], mem, t)
			}
			continue
		}
		if sums && p.pageSum {
			taken, err := b.sumWarp(ii, bi, routes, &cur, r)
			if err != nil {
				b.rangeErr[r] = err
				break
			}
			if taken {
				if fuse {
					b.applyFused(&routes[0], mem, t)
				}
				continue
			}
		}
		if st.Elems == 1 && p.size <= 8 && !p.status && p.simple {
			ok, a, err := b.expandWarp(ii, bi, routes, &cur, mem, addrs, r)
			addrs = a[:0]
			if err != nil {
				b.rangeErr[r] = err
				break
			}
			if ok {
				if fuse {
					b.applyFused(&routes[0], mem, t)
				}
				continue
			}
		}
		addrs = b.expandLanes(ii, bi, routes, &cur, addrs, mem, r)
		if b.rangeErr[r] != nil {
			break
		}
		if fuse {
			b.applyFused(&routes[0], mem, t)
		}
	}
	if acc := b.acc[r]; acc != nil && acc.lanes > 0 && b.rangeErr[r] == nil {
		b.flushAcc(acc, routes)
		if fuse {
			b.applyFused(&routes[0], mem, t)
		}
	}
	if acc := b.pre[r]; acc != nil && acc.lanes > 0 && b.rangeErr[r] == nil {
		b.flushPrefix(acc, routes)
		if fuse {
			b.applyFused(&routes[0], mem, t)
		}
	}
	b.scratch[r] = addrs
	*bi = xinst{} // keeps nothing of this batch's storage alive past it
	if fuse && t != nil {
		t.grow(mem.Pages() + 1) // one worker: nothing runs beside it
		t.count(0, b)
	}
}

// applyFused applies, with one worker, the records the instruction in hand
// routed (its one owner's route), and empties the route for the next.
func (b *batch) applyFused(rt *route, mem *shard.Memory, t *addrTracker) {
	b.applyRoute(0, rt, mem, t)
	rt.reset()
}

// expandLanes is expand's general path for one instruction: lane by lane
// in the replay's order, element by element, each address checked on its
// own (partition, fault, status), its sources gathered into the batch's
// operand slots and its record routed to the page's shard. It writes the
// instruction's statistics and returns addrs emptied for reuse.
func (b *batch) expandLanes(ii int, bi *xinst, routes []route, cur *shard.Cursor, addrs []uint64, mem *shard.Memory, r int) []uint64 {
	p := bi.plan
	st := bi.plan.st
	var faults uint32
	var lanesBuf, permBuf [trace.MaxLanes]uint8
	ls, pm := b.laneOrder(bi, &lanesBuf, &permBuf)
	for i := range ls {
		k := i
		if pm != nil {
			k = int(pm[i])
		}
		lane := int(ls[k])
		slot := bi.slot + uint32(k*st.Elems)
		for e := 0; e < st.Elems; e, slot = e+1, slot+1 {
			addr := p.addr(bi, lane, e)
			if b.partitioned && !b.local(bi.mem, addr) {
				// Another partition's lane-element: its row, fault and
				// access are that partition's.
				b.foreignRows(slot, 1)
				continue
			}
			addrs = append(addrs, addr)
			f := p.checkElem(bi, lane, e, addr)
			switch {
			case p.status:
				b.statusRow(bi, lane, e, slot, addr, f)
			case f != FaultNone:
				faults++
				b.recordFault(bi, lane, e, slot, addr, f, r)
			default:
				if !b.noResults {
					b.setRow(slot, lane, e, addr)
				}
				if !b.routeElem(ii, bi, lane, e, slot, addr, routes, cur) {
					b.rangeErr[r] = errMemoryFull
					return addrs[:0]
				}
			}
		}
	}
	var distinct, maxc, sectors uint32
	if !b.hasParts { // (a split file's row has its own: batch.parts)
		distinct, maxc = conflicts(addrs)
		sectors = sectorCount(addrs)
	}
	b.setStat(bi, distinct, maxc, faults, sectors)
	return addrs[:0]
}

// statusRow is lsc_load_status's lane-element: no access, a 1 for an
// in-bounds lane.
func (b *batch) statusRow(bi *xinst, lane, e int, slot uint32, addr uint64, f Fault) {
	if b.noResults {
		return
	}
	b.setRow(slot, lane, e, addr)
	if f == FaultNone {
		b.vals[slot] = 1
	}
}

// recordFault records a faulting lane-element's row, and keeps range r's
// first fault in (seq, lane, elem) order, whatever order the lanes apply
// in.
func (b *batch) recordFault(bi *xinst, lane, e int, slot uint32, addr uint64, f Fault, r int) {
	row := Result{Seq: bi.Seq, Lane: uint32(lane), Elem: uint32(e), Addr: addr, Fault: f}
	if !b.noResults {
		b.setRow(slot, lane, e, addr)
		b.resFault[slot] = f
	}
	if b.firstFault[r] < 0 || int(slot) < b.firstFault[r] {
		b.firstFault[r] = int(slot)
		b.faultRow[r] = row
	}
}

// routeElem gathers a lane-element's sources into its operand slots and
// routes its record to the shard that owns addr's page. It reports false
// when memory is full.
func (b *batch) routeElem(ii int, bi *xinst, lane, e int, slot uint32, addr uint64, routes []route, cur *shard.Cursor) bool {
	p := bi.plan
	var bv, bh, cv, ch uint64
	if p.b != nil {
		bv, bh = bi.Value(p.b[e], lane)
	}
	if p.c != nil {
		cv, ch = bi.Value(p.c[e], lane)
	}
	b.needOps(&bi.binst)
	if !bi.bUni {
		b.opB[slot] = bv >> p.srcShift
	}
	if !bi.cUni {
		b.opC[slot] = cv >> p.srcShift
	}
	if p.size == 16 {
		b.opBhi[slot], b.opChi[slot] = bh, ch
	}
	en := cur.Resolve(bi.mem, addr)
	if en == 0 {
		return false
	}
	routes[b.owner[en.Shard()]].add(uint32(ii), rec{word: en.WordRef(addr), slot: slot | uint32(addr&3)<<slotBits}, false)
	return true
}

// expandWarp is expand's fast path for one instruction whose lanes all
// hit memory without a fault: scalar, no per-element hooks, every address
// aligned and inside one region, whatever form the address vector has
// (broadcast, base:stride, a per-lane list, or none: absolute). It computes
// the addresses in one tight loop, checks faults once for the whole warp,
// and routes one record per lane, or one for the whole warp when every
// lane hits one address. It reports false, having done nothing, when the
// instruction needs the general path. addrs is scratch; it returns it,
// possibly grown.
func (b *batch) expandWarp(ii int, bi *xinst, routes []route, cur *shard.Cursor, mem *shard.Memory, addrs []uint64, r int) (bool, []uint64, error) {
	p := bi.plan
	st := p.st
	scratch := addrs
	fw, list := b.fewCandidate(bi, r)
	if fw != nil {
		if e := fw.find(bi, list, b.fill); e != nil {
			// The warp's list and plan of an instruction it grouped on a
			// few addresses, on these lanes or more (a spinlock's retry,
			// its release): the groups of these lanes taken from the
			// entry's, without the addresses worked out again.
			g, sectors := e.take(bi.active)
			if !b.routeGroups(ii, bi, routes, cur, g.addr[:g.n], g.lanes[:g.n]) {
				return true, scratch[:0], errMemoryFull
			}
			b.setStat(bi, uint32(g.n), conflictDepth(uint32(g.n), g.most), 0, sectors)
			fw.hits++
			return true, scratch[:0], nil
		}
	}
	addrs, sp := warpAddresses(bi, scratch, b.noResults, b.avx512)
	if !sp.aliased() {
		scratch = addrs // grown, perhaps
	}
	size := uint64(p.size)
	if sp.n() == 0 || sp.or&(size-1) != 0 || sp.hi+size-1 < sp.hi || !p.inRegion(sp.lo, sp.hi) {
		return false, scratch[:0], nil
	}
	// No lane faults.
	noDst := !st.HasDst || p.noRet || b.noResults
	// A 32-bit access whose value goes nowhere carries its lane's source
	// in its record: apply then reads nothing but the record.
	words, isRun := wordRun(addrs, size, bi.active)
	vals := noDst && p.size == 4 && !bi.bUni && bi.cUni && !p.retShl16 && sp.lo != sp.hi && !isRun
	if !vals {
		b.fillSources(bi)
	}
	if !b.noResults {
		b.warpRows(bi, addrs)
	}
	n := uint32(sp.n())
	var distinct, maxc, sectors uint32
	switch {
	case sp.lo == sp.hi && noDst && bi.bUni && p.add32() && !b.countsLanes:
		// n 32-bit adds of one value to one word, nothing returned: one
		// add of n times the value (modulo 2^32 as the n are), in a
		// (word, addend) record as scattered adds carry theirs
		// (seg.vals), so that a batch of them applies in one loop
		// (commute.go) without reading the instruction again. The word
		// ends the same, and is marked written alike (add32Vals).
		local, ok := b.routeSum(ii, bi, routes, cur, sp.lo, n, sp.laneFree(), &b.sums[r])
		if !ok {
			return true, scratch, errMemoryFull
		}
		if local {
			distinct, maxc, sectors = 1, n, 1
		}
	case sp.lo == sp.hi && (b.order == OrderLane || noDst && bi.bUni && bi.cUni):
		// Every lane on one address: one record for the warp. (Lanes in
		// another order go one record each, below, unless nothing returns
		// and every lane applies the same value: then any order leaves
		// the same.)
		local, ok := b.routeRun(ii, bi, routes, cur, sp.lo, n, 0)
		if !ok {
			return true, scratch, errMemoryFull
		}
		if local {
			distinct, maxc, sectors = 1, n, 1
		}
	case sp.lo != sp.hi && noDst && bi.bUni && bi.cUni && p.size <= 8 && !p.add32() && sp.mayRepeat() &&
		!b.partitioned && len(addrs) == sp.n() && sp.lo>>shard.PageShift == sp.hi>>shard.PageShift &&
		b.groups[r].group(b.pageSet(r), addrs):
		// A few addresses of one page, every lane applying the same value,
		// nothing returned (a spinlock's CAS and exch on its locks): one
		// record a distinct address, its lanes' count in it, all in one
		// segment (seg.counts), its page resolved once. Each address's
		// lanes do in any order what they do in lane order, and distinct
		// aligned addresses of one width do not overlap.
		g := &b.groups[r]
		if !b.routeGroups(ii, bi, routes, cur, g.addr[:g.n], g.lanes[:g.n]) {
			return true, scratch, errMemoryFull
		}
		// The lanes' sectors are their distinct addresses' sectors, in
		// one page: a few bits, not a pass over every lane.
		distinct, maxc, sectors = uint32(g.n), conflictDepth(uint32(g.n), g.most), pageSectors(g.addr[:g.n])
		if fw != nil {
			fw.keep(bi, list, g, addrs, b.fill)
		}
	case isRun:
		// Consecutive lanes, a constant step, one page: one record.
		local, ok := b.routeRun(ii, bi, routes, cur, addrs[0], n, words)
		if !ok {
			return true, scratch, errMemoryFull
		}
		if local {
			distinct, maxc, sectors = n, 1, runSectors(addrs[0], addrs[len(addrs)-1], int64(words)*4, n)
		}
	default:
		for len(addrs) < sp.n() {
			addrs = append(addrs, sp.lo) // the one address, once per lane
		}
		if !sp.aliased() {
			scratch = addrs
		}
		var ok bool
		if distinct, maxc, ok = b.routeWarpLanes(ii, bi, routes, cur, addrs, sp, vals, r); !ok {
			return true, scratch, errMemoryFull
		}
		if distinct > 0 && !b.hasParts {
			// (A partitioned replay is here only with every lane-element
			// its own: expand checked the warp.)
			sectors = warpSectors(addrs[:sp.n()], b.avx512)
		}
	}
	b.setStat(bi, distinct, maxc, 0, sectors)
	return true, scratch, nil
}

// warpGroups is a warp's distinct addresses, in the order of their first
// lanes, and how many lanes hit each.
type warpGroups struct {
	n     int
	most  uint32 // the most lanes on one address
	addr  [trace.MaxLanes]uint64
	lanes [trace.MaxLanes]uint32
}

// routeGroups routes the records of a warp's few addresses of one page
// (expandWarp), addr and the lanes on each, in one segment of instruction
// ii: one (word, lanes) record an address, the page resolved once. It
// reports false when the memory is full.
func (b *batch) routeGroups(ii int, bi *xinst, routes []route, cur *shard.Cursor, addr []uint64, lanes []uint32) bool {
	en := cur.Resolve(bi.mem, addr[0])
	if en == 0 {
		return false
	}
	rt := &routes[b.owner[en.Shard()]]
	out := rt.counts(uint32(ii), len(addr))
	lanes = lanes[:len(addr)]
	for j, a := range addr {
		out[j] = rec{word: en.WordRef(a), slot: lanes[j] | uint32(a&3)<<slotBits}
	}
	return true
}

// fewWarps keeps, for one range, each warp's last few-address grouping
// of each of two plans (by its group and warp: fewSlotOf): a spinlock's
// warp retries its CAS on the same list of lock addresses until it gets
// the lock, on fewer lanes each time one of them does, and releases it
// with an exch on the same list, under the lanes that got it. A grouping
// is a function of the plan (the address formula, its regions), the list
// and the lanes it covers: an entry keeps, for each distinct address, the
// lanes on it, a bit a lane, over every lane of the list when all of them
// pass expandWarp's checks (aligned, in one page and region, at most
// maxWarpGroups addresses), else over the active lanes of the warp that
// made it. A warp with the same plan and list and no lane outside those
// meets its entry: its groups are the entry's addresses with lanes among
// its own (fewWarp.take), which are what grouping its lanes would give,
// and pass the same checks (a subset of addresses that pass them passes
// them). The memory ends the same, as do the statistics.
type fewWarps struct {
	slot [fewSlots]fewSet
	hits int // warps that took their entry since the engine counted them (replayer.fewHits)
	// named: of them, those that met it by their vectors' place (fewWarp.vals)
	named int
}

// fewSet is a warp's entries: of two plans, and which it met or kept last.
type fewSet struct {
	way  [2]fewWarp
	last uint8
}

// fewSlots is how many warps a range keeps: a spinlock's warps of a few
// groups interleaved.
const (
	fewSlotBits = 6
	fewSlots    = 1 << fewSlotBits
)

type fewWarp struct {
	plan  *plan
	cover uint32 // the lanes the groups cover
	n     int    // len(list); 0: empty
	ng    int
	list  [trace.MaxLanes]uint64
	addr  [maxWarpGroups]uint64
	lanes [maxWarpGroups]uint32 // addr[j]'s lanes, a bit a lane
	// The groups of the lanes take took last (took; 0: none), and their
	// sectors: a CAS retried on the same lanes takes them as they are.
	took    uint32
	sectors uint32
	g       fewGroups
	// The vectors of the instruction that made the entry, batch.vecs[vals:]
	// of the batch's fill: an instruction of that batch with the same vals
	// has the same list (batch.addNamed shared them), not compared.
	fill uint64
	vals uint32
}

// fewGroups is warpGroups of at most maxWarpGroups addresses.
type fewGroups struct {
	n     int
	most  uint32
	addr  [maxWarpGroups]uint64
	lanes [maxWarpGroups]uint32
}

// fewCandidate returns range r's fewWarps and bi's address list when bi
// could take the few-address path whatever its addresses: a list address,
// one element a lane, every lane one value, nothing returned, no per-lane
// rows and no partition; nil otherwise.
func (b *batch) fewCandidate(bi *xinst, r int) (*fewWarps, []uint64) {
	p := bi.plan
	st := p.st
	if !b.noResults || b.partitioned || !bi.bUni || !bi.cUni || p.add32() || st.Addr < 0 || st.AddrUniform {
		return nil, nil
	}
	v := bi.vec(st.Addr)
	if v.Kind != trace.VecList || v.n > trace.MaxLanes {
		return nil, nil
	}
	fw := b.few[r]
	if fw == nil {
		fw = new(fewWarps)
		b.few[r] = fw
	}
	return fw, bi.arena[v.list : v.list+v.n : v.list+v.n]
}

// fewSlotOf is the slot of bi's warp, of its group and warp.
func fewSlotOf(bi *xinst) int {
	// The warps of one group (up to 64) in slots of their own: a
	// spinlock's retries come from the warps of a group or two.
	return int((uint64(bi.Warp) + uint64(bi.Group)*17) & (fewSlots - 1))
}

// find returns bi's warp's entry when it holds bi's plan and list and
// covers bi's active lanes, nil otherwise. fill is the batch's: an entry
// made in it from bi's vectors (vals) holds bi's list.
func (fw *fewWarps) find(bi *xinst, list []uint64, fill uint64) *fewWarp {
	s := &fw.slot[fewSlotOf(bi)]
	for i := range s.way {
		e := &s.way[i]
		if e.plan != bi.plan || e.n != len(list) || bi.active == 0 || bi.active&^e.cover != 0 {
			continue
		}
		if e.fill == fill && e.vals == bi.vals {
			fw.named++
		} else if !e.sameList(list) {
			continue
		}
		s.last = uint8(i)
		return e
	}
	return nil
}

// sameList reports whether e's list is list, of e.n values: a warp's 32
// or 16 compared in place as arrays (one memequal; converted to array
// values, both were copied first), others value by value.
func (e *fewWarp) sameList(list []uint64) bool {
	switch len(list) {
	case trace.MaxLanes:
		return *(*[trace.MaxLanes]uint64)(list) == e.list
	case trace.MaxLanes / 2:
		return *(*[trace.MaxLanes / 2]uint64)(list) == *(*[trace.MaxLanes / 2]uint64)(e.list[:])
	}
	return slices.Equal(e.list[:e.n], list)
}

// take returns the groups of the active lanes, which e covers, in the
// order of e's addresses, and their sectors.
func (e *fewWarp) take(active uint32) (*fewGroups, uint32) {
	g := &e.g
	if active == e.took {
		return g, e.sectors
	}
	n, most := 0, uint32(0)
	for j := range e.ng {
		c := uint32(bits.OnesCount32(active & e.lanes[j]))
		if c == 0 {
			continue
		}
		g.addr[n], g.lanes[n] = e.addr[j], c
		n++
		most = max(most, c)
	}
	g.n, g.most = n, most
	e.took, e.sectors = active, pageSectors(g.addr[:n])
	return g, e.sectors
}

// keep makes the entry of bi's warp for its plan (replacing the one it met
// or kept least recently when it has none) the grouping of bi's list:
// over every lane when they all pass expandWarp's checks, else over its
// active lanes, which g groups and addrs holds, in lane order.
func (fw *fewWarps) keep(bi *xinst, list []uint64, g *warpGroups, addrs []uint64, fill uint64) {
	s := &fw.slot[fewSlotOf(bi)]
	i := s.last ^ 1
	if s.way[s.last].plan == bi.plan {
		i = s.last
	} else if s.way[i].plan != bi.plan && s.way[i].n > 0 && s.way[s.last].n == 0 {
		i = s.last // an empty entry before another plan's
	}
	s.last = i
	e := &s.way[i]
	e.n = 0
	if len(list) < trace.MaxLanes && bi.active>>len(list) != 0 {
		return // lanes past the list (not from a parser): not kept
	}
	e.plan, e.n, e.took = bi.plan, copy(e.list[:], list), 0
	e.fill, e.vals = fill, bi.vals
	if e.group(bi.plan, list) {
		return
	}
	// Some lane the warp left out fails a check: the active lanes'
	// groups, each's lanes found among them.
	e.cover, e.ng = bi.active, g.n
	copy(e.addr[:g.n], g.addr[:g.n])
	clear(e.lanes[:g.n])
	k := 0
	for m := bi.active; m != 0 && k < len(addrs); m &= m - 1 {
		a := addrs[k]
		k++
		for j := range g.n {
			if e.addr[j] == a {
				e.lanes[j] |= 1 << bits.TrailingZeros32(m)
				break
			}
		}
	}
}

// group sets e's groups to those of every lane of list under plan p and
// reports whether they pass expandWarp's checks for a few-address warp:
// each address aligned, all in one page and one region, at most
// maxWarpGroups of them.
func (e *fewWarp) group(p *plan, list []uint64) bool {
	st := p.st
	scale, imm, pitch, mask := uint64(st.AddrScale), uint64(st.AddrImm), uint64(st.LanePitch), st.AddrMask()
	size := uint64(p.size)
	lo, hi, or := ^uint64(0), uint64(0), uint64(0)
	ng := 0
	for lane, x := range list {
		a := (scale*x + imm + uint64(lane)*pitch) & mask
		or |= a
		lo, hi = min(lo, a), max(hi, a)
		j := 0
		for j < ng && e.addr[j] != a {
			j++
		}
		if j == ng {
			if ng == maxWarpGroups {
				return false
			}
			e.addr[j], e.lanes[j] = a, 0
			ng++
		}
		e.lanes[j] |= 1 << lane
	}
	if ng == 0 || or&(size-1) != 0 || hi+size-1 < hi || lo>>shard.PageShift != hi>>shard.PageShift || !p.inRegion(lo, hi) {
		return false
	}
	e.ng, e.cover = ng, ^uint32(0)>>(trace.MaxLanes-len(list))
	return true
}

// maxWarpGroups is how many distinct addresses a warp may have for
// expandWarp to route it a record an address: a few locks or counters.
const maxWarpGroups = 8

// group groups addrs, a warp's addresses all in one page, by address, on
// the page counters ps (countLane: no branch the addresses decide), and
// reports whether they hit at most maxWarpGroups addresses.
func (g *warpGroups) group(ps *pageConflicts, addrs []uint64) bool {
	ps.next()
	gen, counts := ps.gen, ps.counts[:]
	n, most := uint32(0), uint32(0)
	for _, a := range addrs {
		g.addr[n&(trace.MaxLanes-1)] = a // kept when a is new
		n, most = countLane(counts, a, gen, n, most)
	}
	g.n, g.most = int(n), most
	if n > maxWarpGroups {
		return false
	}
	for j, a := range g.addr[:n] {
		g.lanes[j] = uint32(counts[a&(shard.PageBytes-1)] & (1<<pageCountBits - 1))
	}
	return true
}

// sectorCount is the number of distinct 32-byte sectors (address / 32)
// among addrs, in any order, repeats allowed. Addresses within one page
// are the bits of two words (pageSectors); others in order (a coalesced
// warp's) take one pass; a warp's worth out of order goes through a small
// hash set (sectorCountSmall), more are sorted in a copy.
func sectorCount(addrs []uint64) uint32 {
	if len(addrs) == 0 {
		return 0
	}
	if onePage(addrs) {
		return pageSectors(addrs)
	}
	n := uint32(1)
	prev := addrs[0] >> 5
	for _, a := range addrs[1:] {
		s := a >> 5
		if s < prev {
			if len(addrs) <= sectorSetLen/2 {
				return sectorCountSmall(addrs)
			}
			return sectorCountSorted(addrs)
		}
		if s != prev {
			n++
		}
		prev = s
	}
	return n
}

// sectorSetLen is sectorCountSmall's table: twice the addresses it takes,
// so that a probe run stays short.
const sectorSetLen = 128

// sectorCountSmall is sectorCount of at most sectorSetLen/2 addresses out
// of order, counted into an open-addressed set of sectors: a scattered
// warp's 32 addresses cost 32 probes rather than a sort. It is
// conflictsSmall's table without the counts, which cost it half again as
// much (BenchmarkSectorCount).
func sectorCountSmall(addrs []uint64) uint32 {
	var keys [sectorSetLen]uint64
	var used [sectorSetLen]bool
	n := uint32(0)
	for _, a := range addrs {
		s := a >> 5
		i := (s * 0x9e3779b97f4a7c15) >> 57
		for used[i] && keys[i] != s {
			i = (i + 1) & (sectorSetLen - 1)
		}
		if !used[i] {
			used[i], keys[i] = true, s
			n++
		}
	}
	return n
}

// pageSectors is sectorCount of addresses that all lie in one page: a
// page's 128 sectors are the bits of two words, kept in registers and
// each lane's bit ORed into one or the other without a branch: the two
// words as an array, indexed by the sector, were a chain of loads and
// stores to one place, one a lane (6% of a lean SIMD16 histogram replay).
func pageSectors(addrs []uint64) uint32 {
	const sectors = shard.PageBytes / 32
	var _ [sectors - 128]struct{} // two words hold the page's sectors:
	var _ [128 - sectors]struct{} // 128 of them, no more and no fewer
	var lo, hi uint64
	for _, a := range addrs {
		s := (a >> 5) % sectors
		bit := uint64(1) << (s % 64)
		up := -(s >> 6) // all ones for a sector in the upper word
		lo |= bit &^ up
		hi |= bit & up
	}
	return uint32(bits.OnesCount64(lo) + bits.OnesCount64(hi))
}

// warpSectors is sectorCount(addrs), for a warp of more than a quarter of
// its lanes whose sectors differ in their low 32 bits alone counted with
// AVX-512 when avx512 (warpConflictsAVX512 compares those bits) rather
// than sorted or hashed: scattered warps, whose addresses come out of
// order, spent most of a replay in the sort. A partial warp fills its
// other lanes with its first lane's sector, which adds none; one of at
// most 16 lanes (a SIMD16 one: vISA's, LSC's) is counted over 16 lanes,
// not 32 (distinct16AVX512); a full warp of 16 or 32 lanes is read and
// shifted in registers (sectors16AVX512, sectors32AVX512: written to s
// first, its 8-byte stores stalled the vector loads that read them); a
// partial one within a page takes pageSectors.
func warpSectors(addrs []uint64, avx512 bool) uint32 {
	if avx512 && len(addrs) == trace.MaxLanes/2 {
		// A full SIMD16 warp's: its addresses read and shifted in
		// registers, not written to s first.
		if d, ok := sectors16AVX512((*[trace.MaxLanes / 2]uint64)(addrs)); ok {
			return d
		}
		return sectorCount(addrs)
	}
	if avx512 && len(addrs) == trace.MaxLanes {
		// A full warp's, likewise.
		if d, ok := sectors32AVX512((*[trace.MaxLanes]uint64)(addrs)); ok {
			return d
		}
		return sectorCount(addrs)
	}
	if n := len(addrs); avx512 && n > trace.MaxLanes/4 && n < trace.MaxLanes {
		var s [trace.MaxLanes]uint64
		s0 := addrs[0] >> 5
		var x uint64
		for i, a := range addrs {
			s[i] = a >> 5
			x |= s[i] ^ s0
		}
		if x>>(shard.PageShift-5) == 0 {
			return pageSectors(addrs)
		}
		if x>>32 == 0 {
			if n <= trace.MaxLanes/2 {
				// A SIMD16 warp's: one 16-lane count.
				for i := n; i < trace.MaxLanes/2; i++ {
					s[i] = s0
				}
				return distinct16AVX512((*[trace.MaxLanes / 2]uint64)(s[:trace.MaxLanes/2]))
			}
			for i := n; i < trace.MaxLanes; i++ {
				s[i] = s0
			}
			d, _ := warpConflictsAVX512(&s)
			return d
		}
	}
	return sectorCount(addrs)
}

// onePage reports whether addrs, at least one, lie in one page.
func onePage(addrs []uint64) bool {
	var x uint64
	for _, a := range addrs {
		x |= a ^ addrs[0]
	}
	return len(addrs) > 0 && x>>shard.PageShift == 0
}

// sectorCountSorted is sectorCount of addresses out of order, sorted in a
// copy.
func sectorCountSorted(addrs []uint64) uint32 {
	var buf [256]uint64
	s := buf[:0]
	if len(addrs) > len(buf) {
		s = make([]uint64, 0, len(addrs)) // wide block2d accesses only
	}
	for _, a := range addrs {
		s = append(s, a>>5)
	}
	slices.Sort(s)
	n := uint32(1)
	for i := 1; i < len(s); i++ {
		if s[i] != s[i-1] {
			n++
		}
	}
	return n
}

// runSectors is the sectors of n addresses from first to last in steps of
// step bytes (a run: wordRun), without looking at each: with steps of at
// most 32 bytes every sector between the ends is hit; with longer steps,
// no two addresses share one.
func runSectors(first, last uint64, step int64, n uint32) uint32 {
	if step > 32 || step < -32 {
		return n
	}
	lo, hi := first, last
	if hi < lo {
		lo, hi = hi, lo
	}
	return uint32(hi>>5-lo>>5) + 1
}

// setStat writes bi's statistics row, every field of InstStat, field by
// field and its Static only when the row (last filled by an instruction
// of an earlier batch) holds another: a typed store of the whole row
// would put a write barrier on the pointer every time while the collector
// marks.
func (b *batch) setStat(bi *xinst, distinct, maxc, faults, sectors uint32) {
	b.putStat(&bi.binst, bi.plan.st, distinct, maxc, faults, sectors)
}

// putStat is setStat for instruction in, of Static st, read where it lies
// in the batch (sumRepeats) rather than from a copy.
func (b *batch) putStat(in *binst, st *trace.Static, distinct, maxc, faults, sectors uint32) {
	s := &b.stats[in.pos]
	if s.Static != st {
		s.Static = st
	}
	s.Seq, s.Group, s.Warp = in.Seq, in.Group, in.Warp
	s.Lanes, s.Addresses, s.MaxConflict, s.Faults = uint32(bits.OnesCount32(in.active)), distinct, maxc, faults
	s.CASFailed = 0 // the apply stage counts them, after this row is set
	s.Sectors = sectors
}

// warpSpan is what expandWarp learns of a warp's addresses as it computes
// them: the OR of the addresses, bounds lo and hi of them (their lowest
// and highest, or, for a plan.bitSpan, their AND and OR: listBits; either
// way equal exactly when the addresses are, in one page exactly when the
// addresses are, and inside a region of the plan exactly when they are),
// and its shape: the
// number of active lanes (addrs may hold just one address for them all:
// see warpAddresses), whether two lanes may share an address other than
// by all sharing one (mayRepeat: per-lane bases, an address mask, or a
// step between lanes of 2^32 or more; else the lanes' addresses are
// distinct by construction: a nonzero step of magnitude under 2^32, no
// mask: the differences (l1-l2)*step of lanes l < 32 are nonzero and
// under 2^37, so no two meet even modulo 2^64), and whether the addresses
// returned are the per-lane list itself (aliased: read only; the scratch
// given was left as it was).
//
// Four fields, so that the compiler keeps it in registers: a larger
// struct lives on the stack, written in 8-byte and 1-byte stores and
// copied in 16-byte loads, which the core cannot forward from those
// stores.
type warpSpan struct {
	or, lo, hi uint64
	shape      uint32 // lanes in the low 8 bits, then spanMayRepeat, spanAliased
}

const (
	spanMayRepeat = 1 << 8
	spanAliased   = 1 << 9
	spanLaneFree  = 1 << 10
)

func (sp warpSpan) n() int          { return int(sp.shape & 0xff) }
func (sp warpSpan) mayRepeat() bool { return sp.shape&spanMayRepeat != 0 }
func (sp warpSpan) aliased() bool   { return sp.shape&spanAliased != 0 }

// laneFree reports whether every lane's address is the one address,
// whichever lanes are active: no per-lane list and no step between lanes
// (an append queue's counter, a broadcast address).
func (sp warpSpan) laneFree() bool { return sp.shape&spanLaneFree != 0 }

// spanShape is a warpSpan's shape of n lanes (at most trace.MaxLanes).
func spanShape(n int, mayRepeat, aliased bool) uint32 {
	s := uint32(n)
	if mayRepeat {
		s |= spanMayRepeat
	}
	if aliased {
		s |= spanAliased
	}
	return s
}

// lanesMayRepeat reports whether lanes on list-bound bases, or a step and
// mask, may hit one address twice (warpSpan's mayRepeat).
func lanesMayRepeat(list []uint64, step, mask uint64) bool {
	return list != nil || mask != ^uint64(0) || step >= 1<<32 && -step >= 1<<32
}

// warpAddresses appends the active lanes' addresses, in lane order, to
// addrs[:0]. oneRow: no per-lane rows are wanted, so a warp whose lanes share
// one address computes it once and appends it once. A full warp whose
// addresses are its per-lane list as it is (scale 1, no offset, pitch or
// mask: PTX's and SASS's [%rd] of 64-bit addresses) returns the list
// itself, to be read only, and sets span.aliased: addrs is left as it was.
func warpAddresses(bi *xinst, addrs []uint64, oneRow, simd bool) ([]uint64, warpSpan) {
	addrs = addrs[:0]
	st := bi.plan.st
	var base, stride uint64
	var list []uint64 // per-lane bases, for a list-bound address
	if st.Addr >= 0 {
		v := bi.vec(st.Addr)
		switch v.Kind {
		case trace.VecBroadcast:
			base = v.Base
		case trace.VecStride:
			base, stride = v.Base, v.Stride
		case trace.VecList:
			list = bi.list(st.Addr)
		}
		if st.AddrUniform {
			base, stride, list = bi.lo(st.Addr, 0), 0, nil
		}
	}
	scale := uint64(st.AddrScale)
	first := scale*base + uint64(st.AddrImm)
	step := scale*stride + uint64(st.LanePitch)
	mask := st.AddrMask()
	// Accumulated in locals and returned by value: a loop storing through
	// a pointer that may point to a local is miscompiled by this Go
	// (docs/STATUS.md).
	var or uint64
	lo, hi := ^uint64(0), uint64(0)
	switch {
	case list == nil && step == 0 && oneRow:
		// Every lane on one address, and no per-lane rows: the address
		// once for the whole warp.
		a := first & mask
		n := bits.OnesCount32(bi.active)
		if n > 0 {
			addrs = append(addrs, a)
			or, lo, hi = a, a, a
		}
		return addrs, warpSpan{or: or, lo: lo, hi: hi, shape: spanShape(n, lanesMayRepeat(nil, step, mask), false) | spanLaneFree}
	case list == nil:
		for m := bi.active; m != 0; m &= m - 1 {
			lane := uint64(bits.TrailingZeros32(m))
			a := (first + lane*step) & mask
			addrs = append(addrs, a)
			or |= a
			lo, hi = min(lo, a), max(hi, a)
		}
	case bi.active == ^uint32(0) && len(list) >= trace.MaxLanes:
		// Every lane of a 32-lane warp: lane i is list[i], in one indexed
		// loop.
		if scale == 1 && st.AddrImm == 0 && st.LanePitch == 0 && mask == ^uint64(0) {
			all := (*[trace.MaxLanes]uint64)(list)
			if bi.plan.bitSpan {
				if simd {
					or, lo = warpBitsAVX512(all)
				} else {
					or, lo = listBits(all)
				}
				hi = or
			} else {
				or, lo, hi = listSpan(all)
			}
			return all[:], warpSpan{or: or, lo: lo, hi: hi, shape: spanShape(trace.MaxLanes, true, true)}
		}
		addrs = slices.Grow(addrs, trace.MaxLanes)[:trace.MaxLanes]
		or, lo, hi = listAddresses((*[trace.MaxLanes]uint64)(addrs), (*[trace.MaxLanes]uint64)(list), scale, uint64(st.AddrImm), uint64(st.LanePitch), mask)
	default:
		// Some lanes of a list (a spinlock's retries): stored by index
		// into room for a warp, not appended (a length and capacity
		// check a lane).
		imm, pitch := uint64(st.AddrImm), uint64(st.LanePitch)
		out := (*[trace.MaxLanes]uint64)(slices.Grow(addrs, trace.MaxLanes)[:trace.MaxLanes])
		k := 0
		for m := bi.active; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			a := (scale*list[lane] + imm + uint64(lane)*pitch) & mask
			out[k&(trace.MaxLanes-1)] = a
			k++
			or |= a
			lo, hi = min(lo, a), max(hi, a)
		}
		addrs = out[:k]
	}
	return addrs, warpSpan{or: or, lo: lo, hi: hi, shape: spanShape(len(addrs), lanesMayRepeat(list, step, mask), false)}
}

// listAddresses sets a full warp's addresses from its per-lane bases and
// returns their OR, lowest and highest. It is a function of its own, not
// inlined, so that its loop keeps its accumulators in registers: inlined
// into expandWarp, the compiler spilled all four to the stack on every
// lane.
//
//go:noinline
func listAddresses(addrs, list *[trace.MaxLanes]uint64, scale, imm, pitch, mask uint64) (or, lo, hi uint64) {
	lo = ^uint64(0)
	out := addrs[:] // see laneSlices
	for lane, x := range list[:] {
		a := (scale*x + imm + uint64(lane)*pitch) & mask
		out[lane] = a
		or |= a
		lo, hi = min(lo, a), max(hi, a)
	}
	return or, lo, hi
}

// listSpan returns the OR, lowest and highest of a full warp's addresses
// (listAddresses without a transform to apply). Not inlined, for its
// registers.
//
//go:noinline
func listSpan(addrs *[trace.MaxLanes]uint64) (or, lo, hi uint64) {
	lo = ^uint64(0)
	for _, a := range addrs[:] { // see laneSlices
		or |= a
		lo, hi = min(lo, a), max(hi, a)
	}
	return or, lo, hi
}

// listBits returns the OR and the AND of a full warp's addresses: bounds
// of them (no address is above the OR or below the AND) that are equal
// when the addresses are, share their bits above a page's when the
// addresses share a page, and lie in a region of 2^k bytes at a multiple
// of 2^k when the addresses do (plan.bitSpan). Two operations of one cycle
// a lane, where listSpan's min and max are compare-and-move chains; four
// lanes a step, in four pairs of accumulators, so that the loop waits on
// no chain of 32 dependent operations (BenchmarkExpand/histogram). Not
// inlined, for its registers.
//
//go:noinline
func listBits(addrs *[trace.MaxLanes]uint64) (or, and uint64) {
	var o0, o1, o2, o3 uint64
	a0, a1, a2, a3 := ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)
	for k := 0; k < trace.MaxLanes; k += 4 {
		x := addrs[k : k+4 : k+4] // one bounds check for the four
		o0, o1, o2, o3 = o0|x[0], o1|x[1], o2|x[2], o3|x[3]
		a0, a1, a2, a3 = a0&x[0], a1&x[1], a2&x[2], a3&x[3]
	}
	return o0 | o1 | o2 | o3, a0 & a1 & a2 & a3
}

// listBitsN is listBits of any number of addresses.
func listBitsN(addrs []uint64) (or, and uint64) {
	and = ^uint64(0)
	for _, a := range addrs {
		or, and = or|a, and&a
	}
	return or, and
}

// inRegion reports whether accesses at lo and at hi both lie inside one
// of the plan's regions (always, when the space declares none), the
// bytes between them touching no window (SASS).
func (p *plan) inRegion(lo, hi uint64) bool {
	size := uint64(p.size)
	if len(p.windows) > 0 && inWindow(p.windows, lo, hi+size-1) {
		// Some lane may touch a window (SASS): each is checked on its own.
		return false
	}
	if len(p.regions) == 0 {
		return true
	}
	for i := range p.regions {
		if p.regions[i].Contains(lo, size) && p.regions[i].Contains(hi, size) {
			return true
		}
	}
	return false
}

// warpRows writes a fault-free warp's result rows, one per active lane.
// Column by column: the addresses copied whole, the values cleared when
// nothing returns (else apply writes them), the lanes counted up unless
// they are the warp's first n (then resultColumns leaves them out or
// writes them: iotaLanes); the seq column is the emit stage's.
func (b *batch) warpRows(bi *xinst, addrs []uint64) {
	lo := int(bi.slot)
	n := bits.OnesCount32(bi.active)
	hi := lo + n
	copy(b.resAddr[lo:hi], addrs[:n])
	if p := bi.plan; !p.st.HasDst || p.noRet {
		// Nothing returns: the value column's 0. (Every lane of a warp
		// here runs, and apply writes what each gets back: applySeg.)
		clear(b.vals[lo:hi])
	}
	if b.wide {
		clear(b.valsHi[lo:hi])
	}
	if b.elems {
		clear(b.resElem[lo:hi])
	}
	lanes := b.resLane[lo:hi]
	if m := bi.active; m&(m+1) == 0 {
		if !b.partitioned && !b.elems {
			// Lanes 0 to n-1: resultColumns leaves the column out, or
			// writes them (iotaLanes).
			return
		}
		for k := range lanes {
			lanes[k] = uint32(k)
		}
		return
	}
	k := 0
	for m := bi.active; m != 0; m &= m - 1 {
		lanes[k] = uint32(bits.TrailingZeros32(m))
		k++
	}
}

// routeRun routes n lanes as one record from addr: all on one word
// (words 0) or a run words apart. ok is false when memory is full (local
// is true otherwise: every lane that reaches here is this partition's).
func (b *batch) routeRun(ii int, bi *xinst, routes []route, cur *shard.Cursor, addr uint64, n uint32, words int32) (local, ok bool) {
	en := cur.Resolve(bi.mem, addr)
	if en == 0 {
		return false, false
	}
	slot := bi.slot
	if words == 0 {
		slot |= uint32(addr&3) << slotBits
	}
	routes[b.owner[en.Shard()]].run(uint32(ii), rec{word: en.WordRef(addr), slot: slot}, n, words)
	return true, true
}

// routeSum routes the n lanes of a warp on one 32-bit word, each adding
// bi's one value, as one (word, addend) record of their sum (expandWarp);
// as routeRun otherwise. laneFree: the word is every lane's whichever
// lanes are active (warpSpan.laneFree).
func (b *batch) routeSum(ii int, bi *xinst, routes []route, cur *shard.Cursor, addr uint64, n uint32, laneFree bool, sr *sumRun) (local, ok bool) {
	en := cur.Resolve(bi.mem, addr)
	if en == 0 {
		return false, false
	}
	o := b.owner[en.Shard()]
	r := rec{word: en.WordRef(addr), slot: uint32(bi.bVal) * n}
	routes[o].add(uint32(ii), r, true)
	if b.noResults {
		// Field by field: a whole sumRun built on the stack and copied
		// stalled on the copy's 16-byte loads of the temporary's 4- and
		// 8-byte stores (no store forwarding), 5% of a lean appendqueue
		// replay.
		sr.ok, sr.vals, sr.pi, sr.mem, sr.active, sr.laneFree = true, bi.vals, bi.pi, bi.mem, bi.active, laneFree
		sr.owner, sr.at, sr.r, sr.b = o, len(routes[o].recs)-1, r, uint32(bi.bVal)
	}
	return true, true
}

// sumRun is the record routeSum made for an instruction (a warp adding one
// value to one word, nothing returned), kept for the instruction after it:
// one with the same plan, memory, active lanes and vectors (batch.addVecs
// shares equal scalar vectors, so the same vectors are the same index)
// adds the same sum to the same word, and its statistics are the same.
// Where the word is every lane's whichever lanes are active (laneFree: an
// append queue's counter, whose warps differ in their masks), one with
// other active lanes, at least one, adds the value once a lane to the same
// word, and its statistics are those of its lanes on one word. Only
// without per-lane rows (noResults): a warp's rows are written one by
// one (warpRows).
type sumRun struct {
	ok                    bool
	laneFree              bool
	vals, pi, mem, active uint32
	owner                 int32
	at                    int // the record's index in its route
	r                     rec
	b                     uint32 // what each lane adds
}

// same reports whether bi is such an instruction.
func (sr *sumRun) same(bi *binst) bool {
	return bi.vals == sr.vals && bi.pi == sr.pi && bi.mem == sr.mem && (bi.active == sr.active || sr.laneFree && bi.active != 0)
}

// sumRepeats is sumAgain for the instructions from ii on, below hi, that
// are sr's warp again (sumRun.same), one after another (a hot counter's,
// an append queue's), while sr's
// record is its route's last: their sums go into it at once, and their
// statistics rows (of Static st, sr's) are written in one loop, without
// an instruction copied into the range's xinst each. It returns how many
// it took.
func (b *batch) sumRepeats(ii, hi int, routes []route, sr *sumRun, st *trace.Static) int {
	rt := &routes[sr.owner]
	if len(rt.recs) != sr.at+1 {
		return 0
	}
	sum := rt.recs[sr.at].slot
	k := ii
	for ; k < hi; k++ {
		in := &b.insts[k]
		if !sr.same(in) {
			break
		}
		n := uint32(bits.OnesCount32(in.active))
		sum += sr.b * n
		b.putStat(in, st, 1, n, 0, 1)
	}
	rt.recs[sr.at].slot = sum
	return k - ii
}

// sumAgain routes instruction ii, the same warp as sr's (sumRun.same), without working
// its addresses out again: its sum (its lanes times sr's addend) goes into sr's record while that is
// still its route's last (the adds of consecutive instructions to one
// word, nothing between them, are one add of their total, modulo 2^32 as
// the adds are), or else into a record of its own (fused, the last was
// applied already).
func (b *batch) sumAgain(ii int, bi *xinst, routes []route, sr *sumRun, fuse bool) {
	rt := &routes[sr.owner]
	n := uint32(bits.OnesCount32(bi.active))
	if !fuse && len(rt.recs) == sr.at+1 {
		rt.recs[sr.at].slot += sr.b * n
	} else {
		rt.add(uint32(ii), rec{word: sr.r.word, slot: sr.b * n}, true)
		sr.at = len(rt.recs) - 1
	}
	b.setStat(bi, 1, n, 0, 1)
}
