package engine

import (
	"errors"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// binst is one instruction copied into a batch. It holds no pointer: its
// plan is an index into the replay's plans (batch.plans), its vectors a
// range of batch.vecs, whose lists are ranges of batch.arena. So the
// collector neither scans a batch's instructions nor puts a write barrier
// on the stores that fill them, and never reads their untouched capacity
// (which maps the kernel's zero page, to be faulted in again when
// written).
type binst struct {
	Seq         uint64
	Line        int
	Group, Warp int64
	Mask        uint32
	pi          uint32 // index of its plan in batch.plans (plan.id)
	vals        uint32 // its vectors: batch.vecs[vals:], one per Static.Inputs
	mem         uint32 // memory id of (space, group)
	active      uint32
	slot        uint32 // first result slot
	pos         uint32 // index in the batch in trace order: of its statistics row
	// The sources as add found them: when bUni, every lane's first
	// source is bVal (already shifted by plan.srcShift) and no slot holds
	// it in batch.opB; likewise cUni, cVal and opC.
	bUni, cUni bool
	bVal, cVal uint64
}

// bvec is a [trace.Vector] as a batch keeps it: its lists as ranges of the
// batch's arena rather than slices, so that it holds no pointer.
type bvec struct {
	Base, Stride, BaseHi uint64
	list, listHi         uint32 // where List and ListHi start in batch.arena
	n                    uint32 // len(List)
	Kind                 trace.VecKind
	hasHi                bool // ListHi is set
}

// xinst is one instruction of a batch as expand and apply read it: a copy
// of its record (they only read it), its plan (whose st is its Static),
// and the batch's vectors and arena, of which its own are
// vecs[vals:vals+len(st.Inputs)] (vec). expand keeps one in the batch per
// range and moves to the next instruction by copying the record, which
// holds no pointer, and the plan only when it changes: while the collector
// marks, a pointer stored to the heap takes a write barrier, and a whole
// xinst stored per instruction (four pointers, through typedmemmove) was
// a good share of the hot counter's instructions under callgrind.
type xinst struct {
	binst
	plan  *plan
	vecs  []bvec
	arena []uint64
}

// vec is the instruction's vector of input j.
func (x *xinst) vec(j int) *bvec { return &x.vecs[int(x.vals)+j] }

// alone makes b hold in alone and returns it as an xinst, its lists
// copied into b's arena, for a pass that reads instructions one at a time
// (races.go) with one batch it reuses.
func (b *batch) alone(in *trace.Inst, p *plan) xinst {
	b.vecs, b.arena, b.lastVecs = b.vecs[:0], b.arena[:0], 0
	b.fill++
	b.insts = append(b.insts[:0], binst{Seq: in.Seq, Line: in.Line, Group: in.Group, Warp: in.Warp, Mask: in.Mask, active: in.Active()})
	b.insts[0].vals = b.addVecs(in, false, b.sharesVecs(in.Vals))
	return xinst{binst: b.insts[0], plan: p, vecs: b.vecs, arena: b.arena}
}

// list is input j's per-lane list (its vector is a VecList).
func (x *xinst) list(j int) []uint64 {
	v := x.vec(j)
	return x.arena[v.list : v.list+v.n : v.list+v.n]
}

// lo is lane (or list index) i's value of input j: the low 64 bits of a
// 128-bit one (trace.Vector.Lo).
func (x *xinst) lo(j, i int) uint64 {
	v := x.vec(j)
	switch v.Kind {
	case trace.VecStride:
		return v.Base + uint64(i)*v.Stride
	case trace.VecList:
		return x.arena[v.list : v.list+v.n][i]
	}
	return v.Base
}

// hi is the high 64 bits of input j's value i (trace.Vector.Hi).
func (x *xinst) hi(j, i int) uint64 {
	v := x.vec(j)
	if v.Kind == trace.VecList && v.hasHi {
		return x.arena[v.listHi : v.listHi+v.n][i]
	}
	return v.BaseHi
}

// Value is a source's low and high 64 bits for one lane (trace.Inst.Value).
func (x *xinst) Value(src trace.Src, lane int) (lo, hi uint64) {
	if src.In < 0 {
		return src.Imm, src.Hi
	}
	i := x.plan.st.ValueIndex(src, lane)
	return x.lo(src.In, i), x.hi(src.In, i)
}

// rec is one lane-element access of a lane that did not fault, routed to
// the worker that owns its page: the word it hits and its result slot. It
// is 8 bytes, so routing a lane writes one small record.
type rec struct {
	word uint32 // shard.Entry.WordRef: page reference << 10 | word in the page
	slot uint32 // result slot in the low slotBits; above them, the byte within the word
}

const (
	slotBits = 30
	slotMask = 1<<slotBits - 1
)

// seg is the records of one instruction for one owner, in one range:
// route.recs[lo:] up to the next segment's lo.
type seg struct {
	inst uint32
	lo   uint32
	// n > 0 makes the segment a run of n lanes, given by its one record:
	// lane k hits the word step*k words from the record's (in the same
	// page) and has slot slot+k. step 0 is a uniform warp (every lane on
	// one address); 1 a coalesced 32-bit warp.
	n    uint32
	step int32
	// vals: the records carry the lane's first source in place of its slot
	// (32-bit accesses that return nothing to anyone).
	vals bool
	// counts: each record is a word and, in place of a slot, how many
	// lanes hit it (the byte within the word above slotBits, as a slot's),
	// every lane applying the instruction's one value, nothing returned
	// (a warp on a few addresses: expandWarp). The instruction's words
	// are one segment rather than a run segment each.
	counts bool
	// pre: a run of prefix-summed warps (prefix.go) from the segment's
	// instruction on: each record a word and the sum of the run's
	// addends on it, the lanes' values their prefixes, slots up to
	// preEnd (applyPrefix).
	pre    bool
	preEnd uint32
}

// route is what one range sends to one owner: records in trace order, cut
// into segments per instruction.
type route struct {
	recs []rec
	segs []seg
}

// add appends r, opening a segment for instruction ii if the last one is
// another instruction's.
func (rt *route) add(ii uint32, r rec, vals bool) {
	rt.open(ii, vals)
	rt.recs = append(rt.recs, r)
}

// open opens a segment for instruction ii's next records unless the last
// segment is ii's already (and not a run or counts).
func (rt *route) open(ii uint32, vals bool) {
	if n := len(rt.segs); n == 0 || rt.segs[n-1].inst != ii || rt.segs[n-1].n != 0 || rt.segs[n-1].counts {
		rt.addSeg(ii, 0, 0, vals)
	}
}

// counts returns room for n records, each a word and its lanes' count
// (see seg.counts), at the end of instruction ii's counts segment,
// opening one if the last segment is not: the caller sets every record.
func (rt *route) counts(ii uint32, n int) []rec {
	if k := len(rt.segs); k == 0 || rt.segs[k-1].inst != ii || !rt.segs[k-1].counts {
		rt.addSeg(ii, 0, 0, false)
		rt.segs[k].counts = true
	}
	r0 := len(rt.recs)
	if cap(rt.recs)-r0 < n {
		rt.recs = slices.Grow(rt.recs, n)
	}
	rt.recs = rt.recs[:r0+n] // the length alone (see push)
	return rt.recs[r0 : r0+n : r0+n]
}

// run appends a run segment of n lanes (see seg) and its one record.
func (rt *route) run(ii uint32, r rec, n uint32, step int32) {
	rt.addSeg(ii, n, step, false)
	x := push(&rt.recs)
	x.word, x.slot = r.word, r.slot
}

// addSeg appends a segment from the route's next record (see push).
func (rt *route) addSeg(ii, n uint32, step int32, vals bool) {
	s := push(&rt.segs)
	s.inst, s.lo, s.n, s.step, s.vals, s.counts = ii, uint32(len(rt.recs)), n, step, vals, false
	s.pre, s.preEnd = false, 0
}

// reset empties the route, keeping its storage.
func (rt *route) reset() { rt.recs, rt.segs = rt.recs[:0], rt.segs[:0] }

// batch is the unit the pipeline moves: instructions, their result slots,
// statistics, and the records routed per (range, owner).
type batch struct {
	insts []binst
	vecs  []bvec   // the instructions' vectors, reused batch after batch
	arena []uint64 // the vectors' lists
	// lastVals and lastVecs are where the last instruction added put its
	// vectors, and 1 + how many; lastVecs is 0 when the next instruction
	// may not share them (addVecs).
	lastVals uint32
	lastVecs int
	// vids are, by warp (fewSlotOf's slots), the last vectors added of two
	// nonzero trace.Inst.VecIDs (a spinlock's CAS and its release), this batch's when gen is fill: an
	// instruction of the same id shares them (a spinlock's retried CAS),
	// not copied again. fill changes at each reset, so that expandWarp
	// may also know two instructions' vectors the same by their vals
	// (fewWarp.vals).
	vids [fewSlots]vidSet
	fill uint64
	// plans are the replay's plans, by plan.id, as of the batch's last
	// instruction (finishAdd): the reader only appends to them.
	plans []*plan
	// The per-lane rows, a column each, by slot (expand writes them:
	// setRow): the lane, the element (only when some instruction has
	// more than one: elems), the address and the fault. A slot's fault
	// is written only when it is not FaultNone (recordFault,
	// foreignRows), and finishAdd clears the column after a use that
	// wrote any. runSeqs and runRows are the seq column as runs, an
	// instruction's a run, made by the emit stage (resultColumns), and
	// rowBuf holds the rows as Results for a sink without
	// CapResultColumns.
	resLane, resElem []uint32
	resAddr          []uint64
	resFault         []Fault
	runSeqs          []uint64
	runRows          []uint32
	rowBuf           []Result
	cols             ResultColumns
	// elems: some instruction has more than one element (resElem is
	// written).
	elems bool
	// vals and valsHi are what each slot's lane got back: the value
	// column and, for 16-byte accesses (wide), its high half. apply
	// writes them.
	vals, valsHi []uint64
	// opB, opC (and their high halves, for 128-bit accesses) are each
	// slot's sources, where they differ from lane to lane (binst.bUni).
	opB, opC, opBhi, opChi []uint64
	// opsSized has opsB and opsC set once needOps has sized opB and opC
	// for this batch's slots; opsMu serialises the sizing between the
	// goroutines expanding the batch's ranges.
	opsSized atomic.Uint32
	opsMu    sync.Mutex
	stats    []InstStat
	// parts holds, by instruction (pos), what a split file said of it
	// (trace.PartInfo), when the batch has such instructions (hasParts);
	// partRows is the rows made of them (rows). Their rows take the
	// addresses, conflict and sectors the split counted over all lanes, so
	// expand counts none of these for them (a partition's own are not the
	// row's), and their single-element lanes are this partition's by
	// construction, so expand does not check them (warpLocal).
	parts    []trace.PartInfo
	hasParts bool
	partRows []InstStat
	// full, fullVals and fullLists hold an instruction of a block with its
	// compact lists spread over the warp (spread, blocks.go).
	full      trace.Inst
	fullVals  []trace.Vector
	fullLists []uint64
	// out holds, per instruction range and owner, the records in trace
	// order. An owner is an applying worker: it owns the pages whose shard
	// is its index modulo the owner count.
	out     [][]route        // [range][owner]
	cur     []xinst          // [range]: the instruction expand has in hand
	scratch [][]uint64       // [range]: one instruction's addresses, for its statistics
	addends [][]uint64       // [range]: a partial warp's addends, gathered (routeScatter)
	cset    []conflictSet    // [range]: the warp path's conflict counts
	filter  []distinctFilter // [range]: routeScatter's test for distinct words
	pset    []*pageConflicts // [range]: the same within one page, made on first use
	sums    []sumRun         // [range]: the last instruction's summed record (routeSum)
	groups  []warpGroups     // [range]: a warp's few addresses (expandWarp)
	few     []*fewWarps      // [range]: the warps' last few-address groupings (expandWarp); made on first use
	acc     []*pageAcc       // [range]: a commuting batch's adds within one page, summed (commute.go); made on first use
	ranges  []int            // instruction index where each range starts; len = ranges+1
	nslots  int
	// recsHint and segsHint are the engine's (replayer.recsHint,
	// segsHint) as this batch's expansion began: how many records and
	// segments to make room for in a route.
	recsHint, segsHint int
	// owner maps a page's shard to its owner, for the current owner count.
	owner []int32
	// repeatInsts and arenaInsts count the instructions the read stage
	// took as repeats (addRepeats) and through the source's NextInto: the
	// Summary's RepeatInsts and ArenaInsts.
	repeatInsts, arenaInsts int
	// namedShares counts the instructions that shared the vectors of one
	// before by their VecID (addNamed) since the engine counted them
	// (replayer.namedShares).
	namedShares int
	// The owned pipeline's (ownedRun): the batch's number in trace order,
	// and the worker whose batch it is.
	no, home int
	// noResults: the sink reads no per-lane rows; only faulting lanes'
	// slots are filled (for --strict), and apply writes no values.
	noResults bool
	// inits are the .init records read after the batch's instructions,
	// applied after them (directive.go); initBytes is their data's size.
	inits      []batchInit
	initBytes  int
	err        error
	rangeErr   []error  // per range: an error expand met (the memory is full)
	firstFault []int    // per range: slot of the first fault, or -1
	faultRow   []Result // per range: the row of that fault
	// wide: some instruction accesses 16 bytes (opBhi, opChi are sized).
	wide bool
	// oneLoop: every access adds and returns nothing (commutes): a route
	// of (word, addend) records is applied in one loop (commute.go).
	oneLoop bool
	// notAdd: some instruction added is not a 32-bit add that returns
	// nothing to anyone (commutes), noted as add takes it.
	notAdd bool
	// retAdds: every instruction added is a 32-bit add that returns its
	// old value to a destination (a histogram's with the results table):
	// its warps may be prefix-summed (prefix.go).
	retAdds bool
	// flagsOf is the plan whose instructions wide, elems, notAdd and
	// retAdds took last: they depend on the plan alone, so the plan's
	// next instructions leave them as they are (nil: none yet).
	flagsOf *plan
	// pre holds, per range, its run of prefix-summed warps, and preBase,
	// per owner, applyPrefix's words before a run, by word of the page
	// (prefix.go); each made on first use.
	pre     []*prefixAcc
	preBase []*[shard.PageWords]uint32
	// countsLanes: the addresses table counts every lane's access from
	// the routes (addresses.go), so a warp's lanes stay a record or a run
	// of them, never summed into one addition (expandWarp).
	countsLanes bool
	// partitioned: the replay is partition part of several (pt): lanes of
	// other partitions' lines are skipped, their rows marked faultForeign
	// (partition.go). partKeys is the engine's, as the reader left it when
	// it handed the batch over: every memory id the batch uses has its key.
	partitioned bool
	pt          *shard.Partitioner
	part        int
	partKeys    []uint64
	// order and seed: the order of lanes within an instruction (order.go);
	// OrderLane takes the paths below as they are.
	order Order
	seed  uint64
	// avx512: the per-warp loops of conflicts_amd64.s run rather than
	// Go's: a list's OR and AND (warpBitsAVX512), and a warp summed in a
	// page accumulator counted by warpConflictsAVX512 rather than lane by
	// lane (commute.go).
	avx512 bool
}

// errMemoryFull is what expand reports when the simulated memory cannot
// take another page.
var errMemoryFull = errors.New("the simulated memory is full: a replay holds at most 16 GiB (shard.MaxBytes)")

// reset empties b for ranges expanding goroutines routing to owners
// applying ones.
func (b *batch) reset(ranges, owners, shards int) {
	b.insts = b.insts[:0]
	b.vecs = b.vecs[:0]
	b.arena = b.arena[:0]
	b.lastVecs = 0
	b.fill++
	b.plans = nil
	b.nslots = 0
	b.parts, b.hasParts = b.parts[:0], false
	b.wide, b.notAdd, b.elems = false, false, false
	b.retAdds, b.flagsOf = true, nil
	clear(b.inits) // drop the copies' data
	b.inits, b.initBytes = b.inits[:0], 0
	b.err = nil
	b.repeatInsts, b.arenaInsts = 0, 0
	if len(b.out) != ranges || len(b.out[0]) != owners || len(b.owner) != shards {
		b.out = make([][]route, ranges)
		for r := range b.out {
			b.out[r] = make([]route, owners)
		}
		b.scratch = make([][]uint64, ranges)
		b.cur = make([]xinst, ranges)
		b.addends = make([][]uint64, ranges)
		for r := range b.addends {
			b.addends[r] = make([]uint64, trace.MaxLanes)
		}
		b.cset = make([]conflictSet, ranges)
		b.filter = make([]distinctFilter, ranges)
		b.pset = make([]*pageConflicts, ranges)
		b.sums = make([]sumRun, ranges)
		b.groups = make([]warpGroups, ranges)
		b.few = make([]*fewWarps, ranges)
		b.acc = make([]*pageAcc, ranges)
		b.pre = make([]*prefixAcc, ranges)
		b.preBase = make([]*[shard.PageWords]uint32, owners)
		b.firstFault = make([]int, ranges)
		b.faultRow = make([]Result, ranges)
		b.rangeErr = make([]error, ranges)
		b.owner = make([]int32, shards)
		for s := range b.owner {
			b.owner[s] = int32(s % owners)
		}
	}
	for r := range b.out {
		for o := range b.out[r] {
			b.out[r][o].reset()
		}
		b.rangeErr[r] = nil
	}
}

// add copies in into the batch. The Source owns in; nothing of it is kept,
// except its lists when they already lie in the batch's arena (inArena:
// the source decoded them there, trace.CapArena).
func (b *batch) add(in *trace.Inst, p *plan, mem uint32, inArena bool) {
	n := len(b.insts)
	shares := b.sharesVecs(in.Vals) // asked once: repeats and addVecs both need it
	if n > 0 && shares && b.repeats(p, mem) {
		// The warp of the instruction before, again (a hot counter's):
		// its sources and vectors, copied; only where it stands differs,
		// and its lanes when its mask does (an append queue's). Copied
		// field by field (see push): the last was stored so, and a whole
		// binst copied in 16-byte loads waits for those stores to reach
		// the cache (what batch.add stalled on, per record, in an append
		// queue's profile).
		bi := push(&b.insts)
		last := &b.insts[n-1]
		bi.Seq, bi.Line, bi.Group, bi.Warp = in.Seq, in.Line, in.Group, in.Warp
		bi.pi, bi.vals, bi.mem = last.pi, last.vals, last.mem
		bi.Mask, bi.active = last.Mask, last.active
		if last.Mask != in.Mask {
			bi.Mask, bi.active = in.Mask, in.Active()
		}
		bi.bUni, bi.cUni, bi.bVal, bi.cVal = last.bUni, last.cUni, last.bVal, last.cVal
		bi.slot, bi.pos = uint32(b.nslots), uint32(n)
		b.nslots += bits.OnesCount32(bi.active) * in.Static.Elems
		return
	}
	bi := push(&b.insts) // set field by field (push)
	active := in.Active()
	bi.Seq, bi.Line, bi.Group, bi.Warp, bi.Mask = in.Seq, in.Line, in.Group, in.Warp, in.Mask
	bi.pi, bi.mem, bi.active = p.id, mem, active
	bi.slot, bi.pos = uint32(b.nslots), uint32(n)
	bi.bUni, bi.cUni, bi.bVal, bi.cVal = false, false, 0, 0
	if in.VecID == 0 {
		bi.vals = b.addVecs(in, inArena, shares)
	} else {
		bi.vals = b.addNamed(in, inArena, shares)
	}
	b.nslots += bits.OnesCount32(active) * in.Static.Elems
	if p != b.flagsOf {
		// The batch's flags, once a run of one plan's instructions (p.st
		// is in.Static: planOf).
		b.flagsOf = p
		b.wide = b.wide || p.size == 16
		b.elems = b.elems || p.st.Elems > 1
		b.notAdd = b.notAdd || !p.add32() || p.st.HasDst && !p.noRet && !b.noResults
		b.retAdds = b.retAdds && p.add32() && p.st.HasDst && !p.noRet
	}
	if in.Static.Elems == 1 && p.size <= 8 {
		b.sources(bi, in, p)
	} // else a source per element, or a 128-bit one: bUni and cUni stay false
}

// repeats reports whether an instruction of plan p and memory mem whose
// vectors are the last added, all scalar (sharesVecs, which the caller
// asked), is the batch's last one again, but for its mask: the same
// plan, memory and vectors (the last added, which the last instruction
// holds: under an interleaving the last in the batch may be another). Its
// sources and vectors are then that instruction's (the sources of scalar
// vectors are one value for every lane, whichever are active: sources).
func (b *batch) repeats(p *plan, mem uint32) bool {
	last := &b.insts[len(b.insts)-1]
	return last.pi == p.id && last.mem == mem && last.vals == b.lastVals
}

// addVecs appends in's vectors to b.vecs, their lists placed by arenaList,
// and returns where they start. An instruction whose vectors are all
// scalar (broadcast or stride) and equal to the last instruction's, as a
// hot counter's warps are, shares that instruction's instead: a batch's
// vectors are read only once added, and the next stages read one entry
// warp after warp rather than a new one each (80 bytes an instruction of
// two inputs, written by the reader and read back by the expander).
// shares is sharesVecs(in.Vals).
func (b *batch) addVecs(in *trace.Inst, inArena, shares bool) uint32 {
	if shares {
		return b.lastVals
	}
	at := uint32(len(b.vecs))
	for j := range in.Vals {
		v := &in.Vals[j]
		bv := push(&b.vecs) // set field by field (push)
		bv.Base, bv.Stride, bv.BaseHi, bv.Kind = v.Base, v.Stride, v.BaseHi, v.Kind
		bv.list, bv.listHi, bv.n, bv.hasHi = 0, 0, 0, false
		if v.Kind == trace.VecList {
			bv.list, bv.n = b.arenaList(v.List, inArena)
			if v.ListHi != nil {
				bv.listHi, _ = b.arenaList(v.ListHi, inArena)
				bv.hasHi = true
			}
		}
	}
	b.lastVals, b.lastVecs = at, len(in.Vals)+1
	return at
}

// vidSet is a warp's vectors of its last two trace.Inst.VecIDs in a
// batch, and which of them it met or added last.
type vidSet struct {
	way  [2]vidEntry
	last uint8
}

// vidEntry is a batch's vectors of a trace.Inst.VecID.
type vidEntry struct {
	fill, id uint64
	vals     uint32
}

// addNamed is addVecs for an instruction of a nonzero VecID: the vectors
// of the batch's instruction of its warp's slot with that id (same id,
// same vectors: trace.Inst), shared, or else added and kept there, in
// place of the one the warp met or added least recently.
func (b *batch) addNamed(in *trace.Inst, inArena, shares bool) uint32 {
	s := &b.vids[(uint64(in.Warp)+uint64(in.Group)*17)&(fewSlots-1)]
	for i := range s.way {
		if w := &s.way[i]; w.fill == b.fill && w.id == in.VecID {
			s.last = uint8(i)
			b.lastVals, b.lastVecs = w.vals, len(in.Vals)+1
			b.namedShares++
			return w.vals
		}
	}
	at := b.addVecs(in, inArena, shares)
	s.last ^= 1
	s.way[s.last] = vidEntry{fill: b.fill, id: in.VecID, vals: at}
	return at
}

// sharesVecs reports whether vals are as many as the last instruction's
// vectors, b.vecs[lastVals:], all broadcast or stride, and equal to them.
func (b *batch) sharesVecs(vals []trace.Vector) bool {
	if b.lastVecs != len(vals)+1 {
		return false
	}
	last := b.vecs[b.lastVals:]
	for j := range vals {
		v, w := &vals[j], &last[j]
		if v.Kind == trace.VecList || v.Kind != w.Kind || v.Base != w.Base || v.Stride != w.Stride || v.BaseHi != w.BaseHi {
			return false
		}
	}
	return true
}

// arenaList returns where list starts in b.arena, and its length: where it
// lies already when the source decoded it into the arena (inArena), else
// where it is copied to, at the arena's end.
func (b *batch) arenaList(list []uint64, inArena bool) (at, n uint32) {
	if inArena && len(list) > 0 && len(b.arena) > 0 {
		d := uintptr(unsafe.Pointer(unsafe.SliceData(list))) - uintptr(unsafe.Pointer(unsafe.SliceData(b.arena)))
		if at := d / 8; d%8 == 0 && at <= uintptr(len(b.arena)) && uintptr(len(list)) <= uintptr(len(b.arena))-at {
			return uint32(at), uint32(len(list))
		}
	}
	at = uint32(len(b.arena))
	b.arena = append(b.arena, list...)
	return at, uint32(len(list))
}

// faultForeign marks the result row of a lane-element that another
// partition replays; the emit stage drops such rows. It never reaches a
// sink.
const faultForeign Fault = 0xff

// foreignRows marks n result rows from slot as another partition's.
func (b *batch) foreignRows(slot, n uint32) {
	if b.noResults {
		return
	}
	for k := range n {
		b.resFault[slot+k] = faultForeign
	}
}

// setRow writes slot's row but its fault (FaultNone unless recordFault
// writes one) and its value, which stays 0 unless apply writes one.
func (b *batch) setRow(slot uint32, lane, e int, addr uint64) {
	b.resLane[slot], b.resAddr[slot] = uint32(lane), addr
	if b.elems {
		b.resElem[slot] = uint32(e)
	}
	b.vals[slot] = 0
	if b.wide {
		b.valsHi[slot] = 0
	}
}

// faulted reports whether some lane of the batch faulted.
func (b *batch) faulted() bool {
	for _, s := range b.firstFault {
		if s >= 0 {
			return true
		}
	}
	return false
}

// resultColumns returns the batch's result rows as columns, without other
// partitions' (in place: the batch is done with them). The seq column is
// a run an instruction, in slot order: binst.pos, which grows with
// binst.slot whatever order an interleaving put the instructions in. The
// lane column is left out where it may be (leaveLanes: CapIotaLanes, or
// rows built from the columns) and every lane is 0 to n-1 of its run.
func (b *batch) resultColumns(leaveLanes bool) *ResultColumns {
	n, ni := b.nslots, len(b.insts)
	b.runSeqs, b.runRows = grow(b.runSeqs, ni), grow(b.runRows, ni)
	// iota: every instruction ran lanes 0 to n-1, one element each, so
	// that its rows' lanes are 0, 1, 2 … (ResultColumns.Lane nil).
	iota := !b.partitioned && !b.elems
	for i := range b.insts {
		bi := &b.insts[i]
		b.runSeqs[bi.pos] = bi.Seq
		b.runRows[bi.pos] = uint32(bits.OnesCount32(bi.active) * b.plans[bi.pi].st.Elems)
		iota = iota && bi.active&(bi.active+1) == 0
	}
	c := &b.cols
	*c = ResultColumns{Seqs: b.runSeqs, Runs: b.runRows, Lane: b.resLane[:n], Addr: b.resAddr[:n], Value: b.vals[:n]}
	if iota && leaveLanes {
		c.Lane = nil
	} else if !b.partitioned && !b.elems {
		b.iotaLanes()
	}
	if b.elems {
		c.Elem = b.resElem[:n]
	}
	if b.wide {
		c.ValueHi = b.valsHi[:n]
	}
	faulted := b.faulted()
	if faulted || b.partitioned {
		c.Fault = b.resFault[:n]
	}
	if b.partitioned {
		m, i := 0, 0
		for k, rows := range c.Runs {
			kept := uint32(0)
			for end := i + int(rows); i < end; i++ {
				f := c.Fault[i]
				if f == faultForeign {
					continue
				}
				c.Lane[m], c.Addr[m], c.Value[m], c.Fault[m] = c.Lane[i], c.Addr[i], c.Value[i], f
				if c.Elem != nil {
					c.Elem[m] = c.Elem[i]
				}
				if c.ValueHi != nil {
					c.ValueHi[m] = c.ValueHi[i]
				}
				m++
				kept++
			}
			c.Runs[k] = kept
		}
		c.Lane, c.Addr, c.Value, c.Fault = c.Lane[:m], c.Addr[:m], c.Value[:m], c.Fault[:m]
		if c.Elem != nil {
			c.Elem = c.Elem[:m]
		}
		if c.ValueHi != nil {
			c.ValueHi = c.ValueHi[:m]
		}
		if !faulted {
			c.Fault = nil
		}
	}
	return c
}

// iotaLanes writes the lanes of the instructions that ran lanes 0 to n-1,
// which warpRows leaves out of a batch of one element an instruction that
// no partition shares, for when some other instruction of the batch ran
// other lanes: the column is then given (resultColumns).
func (b *batch) iotaLanes() {
	for i := range b.insts {
		bi := &b.insts[i]
		if m := bi.active; m&(m+1) == 0 {
			lanes := b.resLane[bi.slot : bi.slot+uint32(bits.OnesCount32(m))]
			for k := range lanes {
				lanes[k] = uint32(k)
			}
		}
	}
}

// results returns c's rows as Results, in a buffer of the batch's.
func (b *batch) results(c *ResultColumns) []Result {
	b.rowBuf = c.AppendRows(b.rowBuf[:0])
	return b.rowBuf
}

// push extends *s by one element and returns it, holding whatever the
// backing array held there: the caller sets every field, one by one. A
// composite literal appended instead is built on the stack in 8- and
// 4-byte stores and copied out in 16-byte loads, which the core cannot
// forward from those stores: each waits for them to reach the cache.
// While there is room it
// reslices, *s = (*s)[:k+1], which stores only the length: storing the
// whole slice back would take the collector's write barrier while it
// marks, on every record.
func push[T any](s *[]T) *T {
	k := len(*s)
	if k < cap(*s) {
		*s = (*s)[:k+1]
	} else {
		var zero T
		*s = append(*s, zero)
	}
	return &(*s)[k]
}

// grow returns s with length n, reallocating only when it is too short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// growWritten is grow for an array whose elements are read before they
// are written (setStat compares a row's Static before it stores one): a
// new array is cleared at once, so that the kernel's fresh pages are
// written first. Fresh memory that is read first maps the shared zero
// page, and the write after it faults again to replace it, flushing the
// TLB on every core the process runs on (an inter-processor interrupt),
// which a hot counter's profile showed under setStat's stores until the
// array was cleared. It clears the array's bytes, not its elements:
// clearing elements that hold pointers while the collector marks goes
// through the write barrier (bulkBarrierPreWrite), which reads every
// pointer slot first, the very read this is to avoid (measured: half of a
// hot counter replay's second faults, each an interrupt to the other
// core). The slots are nil, and nil over nil needs no barrier. It clears
// the n elements in use, not grow's room past them: a batch of the
// default size never uses that room, and clearing it faulted in 14
// pages of 4 KiB a batch in flight for nothing.
func growWritten[T any](s []T, n int) []T {
	fresh := cap(s) < n
	s = grow(s, n)
	if fresh && n > 0 {
		clear(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(n)*unsafe.Sizeof(s[0])))
	}
	return s
}

// finishAdd takes the replay's plans as they are after the batch's last
// instruction (binst.pi indexes them), and sizes the per-slot arrays once
// every instruction is in, only those the batch uses: without per-lane rows (noResults) neither results
// nor what lanes got back, and the high halves of sources only for 16-byte
// accesses. Every byte here is touched once a batch, so what a lean replay
// does not need it does not allocate.
// Lists copied before the arena grew keep pointing at the old backing
// array, which stays alive and unchanged: values were copied, not aliased.
func (b *batch) finishAdd(plans []*plan) {
	b.plans = plans
	n := b.nslots
	if !b.noResults {
		b.resLane, b.resAddr = grow(b.resLane, n), grow(b.resAddr, n)
		if b.partitioned || b.faulted() {
			// The last use wrote faults (or foreign rows) into the
			// column: its ranges' firstFault are still that use's (a
			// range it did not expand wrote none).
			clear(b.resFault[:cap(b.resFault)])
		}
		b.resFault = grow(b.resFault, n) // a new array is 0 too
		if b.elems {
			b.resElem = grow(b.resElem, n)
		}
		b.vals, b.valsHi = grow(b.vals, n), grow(b.valsHi, n)
	} else {
		b.vals, b.valsHi = b.vals[:0], b.valsHi[:0]
	}
	// Sized when an instruction first stores a source there (needOps),
	// so that a batch whose every warp carries its sources in its records
	// (scattered updates without per-lane rows) sizes neither: 2 MiB of
	// a 4096-warp batch's lanes, which the addresses table's replays (two
	// ranges) held in every batch in flight.
	b.opB, b.opC = b.opB[:0], b.opC[:0]
	b.opsSized.Store(0)
	if b.wide {
		b.opBhi, b.opChi = grow(b.opBhi, n), grow(b.opChi, n)
	}
	b.stats = growWritten(b.stats, len(b.insts))
}

// sources sets bi's uniform sources, once, as in is added: a source is
// uniform when it is an immediate, absent, or an input bound to one value
// for every lane. Only scalar instructions (one element) of at most 8
// bytes are asked; others take every source from opB, opC.
func (b *batch) sources(bi *binst, in *trace.Inst, p *plan) {
	uni := func(srcs []trace.Src) (bool, uint64) {
		if srcs == nil {
			return true, 0
		}
		s := srcs[0]
		if s.In < 0 {
			return true, s.Imm >> p.srcShift
		}
		if v := &in.Vals[s.In]; v.Kind == trace.VecBroadcast && in.Static.Inputs[s.In].Elems <= 1 {
			return true, v.Base >> p.srcShift
		}
		return false, 0
	}
	bi.bUni, bi.bVal = uni(p.b)
	bi.cUni, bi.cVal = uni(p.c)
}

// src returns a lane's two sources: uniform ones from bi, others from its
// slot, or, for a vals record, the first source the record carries.
func (b *batch) src(bi *binst, slot uint32, vals bool, carried uint32) (bv, cv uint64) {
	bv, cv = bi.bVal, bi.cVal
	if vals {
		bv = uint64(carried)
	} else if !bi.bUni {
		bv = b.opB[slot]
	}
	if !bi.cUni {
		cv = b.opC[slot]
	}
	return bv, cv
}

// needOps sizes opB (unless bi's first source is uniform) and opC (unless
// its second is) for the batch's slots, once a batch. The goroutines that
// expand a batch's ranges may ask at once: each then writes only its own
// range's slots, and a slice, once sized, is not sized again until the
// batch is refilled.
func (b *batch) needOps(bi *binst) {
	var want uint32
	if !bi.bUni {
		want |= opsB
	}
	if !bi.cUni {
		want |= opsC
	}
	if b.opsSized.Load()&want == want {
		return
	}
	b.opsMu.Lock()
	defer b.opsMu.Unlock()
	have := b.opsSized.Load()
	if want&^have&opsB != 0 {
		b.opB = grow(b.opB, b.nslots)
	}
	if want&^have&opsC != 0 {
		b.opC = grow(b.opC, b.nslots)
	}
	b.opsSized.Store(have | want)
}

// The bits of batch.opsSized.
const (
	opsB = 1 << iota
	opsC
)

// fillSources stores, per active lane, the sources that are not uniform.
func (b *batch) fillSources(bi *xinst) {
	if bi.bUni && bi.cUni {
		return
	}
	b.needOps(&bi.binst)
	p := bi.plan
	if !bi.bUni {
		fillSource(bi, p.b[0], b.opB)
	}
	if !bi.cUni {
		fillSource(bi, p.c[0], b.opC)
	}
}

// fillSource stores source src of each active lane of bi, shifted by its
// plan's srcShift, into ops from bi's first slot on. A per-lane list of
// one element a lane (a scattered add's addends, the values a replay
// that returns results gathers a warp at a time) is read straight from
// the arena, a whole warp in one loop; other vectors through Value.
func fillSource(bi *xinst, src trace.Src, ops []uint64) {
	p, slot := bi.plan, int(bi.slot)
	if src.In >= 0 && p.st.Inputs[src.In].Elems <= 1 {
		if v := bi.vec(src.In); v.Kind == trace.VecList {
			list, shift := bi.arena[v.list:v.list+v.n:v.list+v.n], p.srcShift
			if n := bits.OnesCount32(bi.active); bi.active == 1<<n-1 && n <= len(list) {
				// Lanes 0..n-1: slots and list entries in step.
				dst := ops[slot : slot+n : slot+n]
				for i, x := range list[:n] {
					dst[i] = x >> shift
				}
				return
			}
			for m := bi.active; m != 0; m &= m - 1 {
				ops[slot] = list[bits.TrailingZeros32(m)] >> shift
				slot++
			}
			return
		}
	}
	for m := bi.active; m != 0; m &= m - 1 {
		v, _ := bi.Value(src, bits.TrailingZeros32(m))
		ops[slot] = v >> p.srcShift
		slot++
	}
}

// notePart records what a split file said of the instruction just added.
func (b *batch) notePart(pi *trace.PartInfo) {
	for len(b.parts) < len(b.insts)-1 {
		b.parts = append(b.parts, trace.PartInfo{}) // (a split file's instructions all have one)
	}
	b.parts = append(b.parts, *pi)
	b.hasParts = true
}

// rows is the batch's instructions rows for the sink. An instruction of a
// split file carries only this partition's lanes: its row counts the
// lanes that ran in the trace split (PartInfo.Lanes), and is written by
// the partition the split chose (PartInfo.Row), with the addresses, the
// largest conflict and the sectors of all its lanes; another partition
// writes a row only for its own faults or failed compare-and-swaps, with
// no addresses, conflict or sectors, which replay merge adds to the
// chosen one's.
func (b *batch) rows() []InstStat {
	if !b.hasParts {
		return b.stats
	}
	out := b.partRows[:0]
	for i := range b.stats {
		s := b.stats[i]
		if i >= len(b.parts) {
			out = append(out, s)
			continue
		}
		pi := &b.parts[i]
		s.Lanes = pi.Lanes
		switch {
		case pi.Row:
			s.Addresses, s.MaxConflict, s.Sectors = pi.Addresses, pi.MaxConflict, pi.Sectors
		case s.Faults == 0 && s.CASFailed == 0:
			continue
		default:
			s.Addresses, s.MaxConflict, s.Sectors = 0, 0, 0
		}
		out = append(out, s)
	}
	b.partRows = out
	return out
}
