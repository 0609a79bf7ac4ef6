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
// 15% of the hot counter's instructions under callgrind.
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
	b.insts = append(b.insts[:0], binst{Seq: in.Seq, Line: in.Line, Group: in.Group, Warp: in.Warp, Mask: in.Mask, active: in.Active()})
	b.insts[0].vals = b.addVecs(in, false)
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
// segment is ii's already (and not a run).
func (rt *route) open(ii uint32, vals bool) {
	if n := len(rt.segs); n == 0 || rt.segs[n-1].inst != ii || rt.segs[n-1].n != 0 {
		rt.addSeg(ii, 0, 0, vals)
	}
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
	s.inst, s.lo, s.n, s.step, s.vals = ii, uint32(len(rt.recs)), n, step, vals
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
	// plans are the replay's plans, by plan.id, as of the batch's last
	// instruction (finishAdd): the reader only appends to them.
	plans   []*plan
	results []Result
	// vals and valsHi are what each slot's lane got back. apply writes
	// them; mergeValues copies them into results in slot order before
	// emitting.
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
	acc     []*pageAcc       // [range]: a commuting batch's adds within one page, summed (commute.go); made on first use
	ranges  []int            // instruction index where each range starts; len = ranges+1
	nslots  int
	// recsHint is the engine's (Engine.recsHint) as this batch's
	// expansion began: how many records to make room for in a route.
	recsHint int
	// owner maps a page's shard to its owner, for the current owner count.
	owner []int32
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
	// countsLanes: the addresses table counts every lane's access from
	// the routes (addresses.go), so a warp's lanes stay a record or a run
	// of them, never summed into one addition (expandWarp).
	countsLanes bool
	// partitioned: the memory holds one partition of several: lanes of
	// other partitions' pages are skipped, their rows marked faultForeign.
	partitioned bool
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
	b.plans = nil
	b.nslots = 0
	b.wide, b.notAdd = false, false
	clear(b.inits) // drop the copies' data
	b.inits, b.initBytes = b.inits[:0], 0
	b.err = nil
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
		b.acc = make([]*pageAcc, ranges)
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
// the source decoded them there, trace.ArenaSource).
func (b *batch) add(in *trace.Inst, p *plan, mem uint32, inArena bool) {
	n := len(b.insts)
	if n > 0 && b.repeats(in, p, mem) {
		// The warp of the instruction before, again (a hot counter's):
		// its lanes, sources and vectors, copied; only where it stands
		// differs.
		bi := push(&b.insts)
		*bi = b.insts[n-1]
		bi.Seq, bi.Line, bi.Group, bi.Warp = in.Seq, in.Line, in.Group, in.Warp
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
	bi.vals = b.addVecs(in, inArena)
	b.nslots += bits.OnesCount32(active) * in.Static.Elems
	b.wide = b.wide || p.size == 16
	b.notAdd = b.notAdd || !p.add32() || p.st.HasDst && !p.noRet && !b.noResults
	if in.Static.Elems == 1 && p.size <= 8 {
		b.sources(bi, in, p)
	} // else a source per element, or a 128-bit one: bUni and cUni stay false
}

// repeats reports whether in is the warp of the batch's last instruction
// again: the same plan, memory, mask and vectors (the last added, which
// the last instruction holds: under an interleaving the last in the batch
// may be another), all scalar (sharesVecs). Its active lanes, sources
// and vectors are then that instruction's.
func (b *batch) repeats(in *trace.Inst, p *plan, mem uint32) bool {
	last := &b.insts[len(b.insts)-1]
	return last.pi == p.id && last.mem == mem && last.Mask == in.Mask && last.vals == b.lastVals && b.sharesVecs(in.Vals)
}

// addVecs appends in's vectors to b.vecs, their lists placed by arenaList,
// and returns where they start. An instruction whose vectors are all
// scalar (broadcast or stride) and equal to the last instruction's, as a
// hot counter's warps are, shares that instruction's instead: a batch's
// vectors are read only once added, and the next stages read one entry
// warp after warp rather than a new one each (80 bytes an instruction of
// two inputs, written by the reader and read back by the expander).
func (b *batch) addVecs(in *trace.Inst, inArena bool) uint32 {
	if b.sharesVecs(in.Vals) {
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
		b.results[slot+k].Fault = faultForeign
	}
}

// localResults returns the batch's result rows without other partitions'
// (in place: the batch is done with them).
func (b *batch) localResults() []Result {
	if !b.partitioned {
		return b.results
	}
	out := b.results[:0]
	for i := range b.results {
		if b.results[i].Fault != faultForeign {
			out = append(out, b.results[i])
		}
	}
	return out
}

// push extends *s by one element and returns it, holding whatever the
// backing array held there: the caller sets every field, one by one. A
// composite literal appended instead is built on the stack in 8- and
// 4-byte stores and copied out in 16-byte loads, which the core cannot
// forward from those stores: each waits for them to reach the cache (the
// twenty-sixth round in docs/PERFORMANCE.md). While there is room it
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
// TLB on every core the process runs on (an inter-processor interrupt):
// in a hot counter's profile, 1.6% of the samples were the kernel's
// under setStat's stores, 0.03% once cleared (the twenty-seventh round in
// docs/PERFORMANCE.md). It clears the array's bytes, not its elements:
// clearing elements that hold pointers while the collector marks goes
// through the write barrier (bulkBarrierPreWrite), which reads every
// pointer slot first, the very read this is to avoid (measured: half of a
// hot counter replay's second faults, each an interrupt to the other
// core). The slots are nil, and nil over nil needs no barrier.
func growWritten[T any](s []T, n int) []T {
	fresh := cap(s) < n
	s = grow(s, n)
	if fresh && cap(s) > 0 {
		clear(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(cap(s))*unsafe.Sizeof(s[0])))
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
		b.results = grow(b.results, n)
		b.vals, b.valsHi = grow(b.vals, n), grow(b.valsHi, n)
	} else {
		b.results, b.vals, b.valsHi = b.results[:0], b.vals[:0], b.valsHi[:0]
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
	slot := bi.slot
	for m := bi.active; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		if !bi.bUni {
			v, _ := bi.Value(p.b[0], lane)
			b.opB[slot] = v >> p.srcShift
		}
		if !bi.cUni {
			v, _ := bi.Value(p.c[0], lane)
			b.opC[slot] = v >> p.srcShift
		}
		slot++
	}
}

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
			ok, a, err := b.expandWarp(ii, bi, routes, &cur, addrs, r)
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
			if b.partitioned && !mem.Local(bi.mem, addr) {
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
					b.results[slot] = Result{Seq: bi.Seq, Lane: uint32(lane), Elem: uint32(e), Addr: addr}
					b.vals[slot], b.valsHi[slot] = 0, 0
				}
				if !b.routeElem(ii, bi, lane, e, slot, addr, routes, cur) {
					b.rangeErr[r] = errMemoryFull
					return addrs[:0]
				}
			}
		}
	}
	distinct, maxc := conflicts(addrs)
	b.setStat(bi, distinct, maxc, faults)
	return addrs[:0]
}

// statusRow is lsc_load_status's lane-element: no access, a 1 for an
// in-bounds lane.
func (b *batch) statusRow(bi *xinst, lane, e int, slot uint32, addr uint64, f Fault) {
	if b.noResults {
		return
	}
	b.results[slot] = Result{Seq: bi.Seq, Lane: uint32(lane), Elem: uint32(e), Addr: addr}
	b.vals[slot], b.valsHi[slot] = 0, 0
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
		b.results[slot] = row
		b.vals[slot], b.valsHi[slot] = 0, 0
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
	if en.Foreign() {
		panic("engine: a local address resolved to another partition's page") // Local and Resolve use one hash
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
func (b *batch) expandWarp(ii int, bi *xinst, routes []route, cur *shard.Cursor, addrs []uint64, r int) (bool, []uint64, error) {
	p := bi.plan
	st := p.st
	scratch := addrs
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
	var distinct, maxc uint32
	switch {
	case sp.lo == sp.hi && noDst && bi.bUni && p.add32() && !b.countsLanes:
		// n 32-bit adds of one value to one word, nothing returned: one
		// add of n times the value (modulo 2^32 as the n are), in a
		// (word, addend) record as scattered adds carry theirs
		// (seg.vals), so that a batch of them applies in one loop
		// (commute.go) without reading the instruction again. The word
		// ends the same, and is marked written alike (add32Vals).
		local, ok := b.routeSum(ii, bi, routes, cur, sp.lo, n, uint32(bi.bVal)*n, &b.sums[r])
		if !ok {
			return true, scratch, errMemoryFull
		}
		if local {
			distinct, maxc = 1, n
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
			distinct, maxc = 1, n
		}
	case isRun:
		// Consecutive lanes, a constant step, one page: one record.
		local, ok := b.routeRun(ii, bi, routes, cur, addrs[0], n, words)
		if !ok {
			return true, scratch, errMemoryFull
		}
		if local {
			distinct, maxc = n, 1
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
	}
	b.setStat(bi, distinct, maxc, 0)
	return true, scratch, nil
}

// setStat writes bi's statistics row, every field of InstStat, field by
// field and its Static only when the row (last filled by an instruction
// of an earlier batch) holds another: a typed store of the whole row
// would put a write barrier on the pointer every time while the collector
// marks.
func (b *batch) setStat(bi *xinst, distinct, maxc, faults uint32) {
	b.putStat(&bi.binst, bi.plan.st, distinct, maxc, faults)
}

// putStat is setStat for instruction in, of Static st, read where it lies
// in the batch (sumRepeats) rather than from a copy.
func (b *batch) putStat(in *binst, st *trace.Static, distinct, maxc, faults uint32) {
	s := &b.stats[in.pos]
	if s.Static != st {
		s.Static = st
	}
	s.Seq, s.Group, s.Warp = in.Seq, in.Group, in.Warp
	s.Lanes, s.Addresses, s.MaxConflict, s.Faults = uint32(bits.OnesCount32(in.active)), distinct, maxc, faults
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
// stores (the twenty-sixth round in docs/PERFORMANCE.md).
type warpSpan struct {
	or, lo, hi uint64
	shape      uint32 // lanes in the low 8 bits, then spanMayRepeat, spanAliased
}

const (
	spanMayRepeat = 1 << 8
	spanAliased   = 1 << 9
)

func (sp warpSpan) n() int          { return int(sp.shape & 0xff) }
func (sp warpSpan) mayRepeat() bool { return sp.shape&spanMayRepeat != 0 }
func (sp warpSpan) aliased() bool   { return sp.shape&spanAliased != 0 }

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
		return addrs, warpSpan{or: or, lo: lo, hi: hi, shape: spanShape(n, lanesMayRepeat(nil, step, mask), false)}
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
		imm, pitch := uint64(st.AddrImm), uint64(st.LanePitch)
		for m := bi.active; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			a := (scale*list[lane] + imm + uint64(lane)*pitch) & mask
			addrs = append(addrs, a)
			or |= a
			lo, hi = min(lo, a), max(hi, a)
		}
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
// no chain of 32 dependent operations (BenchmarkExpand/histogram 2.33 ->
// 2.29 ns a lane). Not inlined, for its registers.
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

// inRegion reports whether accesses at lo and at hi both lie inside one
// of the plan's regions (always, when the space declares none).
func (p *plan) inRegion(lo, hi uint64) bool {
	if len(p.regions) == 0 {
		return true
	}
	size := uint64(p.size)
	for i := range p.regions {
		if p.regions[i].Contains(lo, size) && p.regions[i].Contains(hi, size) {
			return true
		}
	}
	return false
}

// warpRows writes a fault-free warp's result rows, one per active lane.
func (b *batch) warpRows(bi *xinst, addrs []uint64) {
	slot := bi.slot
	k := 0
	for m := bi.active; m != 0; m &= m - 1 {
		b.results[slot] = Result{Seq: bi.Seq, Lane: uint32(bits.TrailingZeros32(m)), Addr: addrs[k]}
		b.vals[slot], b.valsHi[slot] = 0, 0 // what stays when nothing returns
		slot++
		k++
	}
}

// warpEntry resolves the page of addr for a warp's n lanes routed as one
// record. It returns the zero Entry with ok true for another partition's
// page, whose lanes get their foreign rows here, and with ok false when
// memory is full.
func (b *batch) warpEntry(bi *xinst, cur *shard.Cursor, addr uint64, n uint32) (en shard.Entry, ok bool) {
	en = cur.Resolve(bi.mem, addr)
	if en == 0 {
		return 0, false
	}
	if en.Foreign() {
		b.foreignRows(bi.slot, n)
		return 0, true
	}
	return en, true
}

// routeRun routes n lanes as one record from addr: all on one word
// (words 0) or a run words apart. Another partition's page gets the
// lanes' foreign rows instead (local false). ok is false when memory is
// full.
func (b *batch) routeRun(ii int, bi *xinst, routes []route, cur *shard.Cursor, addr uint64, n uint32, words int32) (local, ok bool) {
	en, ok := b.warpEntry(bi, cur, addr, n)
	if en == 0 {
		return false, ok
	}
	slot := bi.slot
	if words == 0 {
		slot |= uint32(addr&3) << slotBits
	}
	routes[b.owner[en.Shard()]].run(uint32(ii), rec{word: en.WordRef(addr), slot: slot}, n, words)
	return true, true
}

// routeSum routes the n lanes of a warp on one 32-bit word as one (word,
// addend) record of their sum (expandWarp); as routeRun otherwise.
func (b *batch) routeSum(ii int, bi *xinst, routes []route, cur *shard.Cursor, addr uint64, n, sum uint32, sr *sumRun) (local, ok bool) {
	en, ok := b.warpEntry(bi, cur, addr, n)
	if en == 0 {
		return false, ok
	}
	o := b.owner[en.Shard()]
	r := rec{word: en.WordRef(addr), slot: sum}
	routes[o].add(uint32(ii), r, true)
	if b.noResults {
		*sr = sumRun{ok: true, vals: bi.vals, pi: bi.pi, mem: bi.mem, active: bi.active, owner: o, at: len(routes[o].recs) - 1, r: r, n: n}
	}
	return true, true
}

// sumRun is the record routeSum made for an instruction (a warp adding one
// value to one word, nothing returned), kept for the instruction after it:
// one with the same plan, memory, active lanes and vectors (batch.addVecs
// shares equal scalar vectors, so the same vectors are the same index)
// adds the same sum to the same word, and its statistics are the same.
// Only without per-lane rows (noResults): a warp's rows are written one by
// one (warpRows).
type sumRun struct {
	ok                    bool
	vals, pi, mem, active uint32
	owner                 int32
	at                    int // the record's index in its route
	r                     rec
	n                     uint32 // the warp's lanes
}

// same reports whether bi is such an instruction.
func (sr *sumRun) same(bi *binst) bool {
	return bi.vals == sr.vals && bi.pi == sr.pi && bi.mem == sr.mem && bi.active == sr.active
}

// sumRepeats is sumAgain for the instructions from ii on, below hi, that
// are sr's warp again, one after another (a hot counter's), while sr's
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
		sum += sr.r.slot
		b.putStat(in, st, 1, sr.n, 0)
	}
	rt.recs[sr.at].slot = sum
	return k - ii
}

// sumAgain routes instruction ii, the same warp as sr's, without working
// its addresses out again: its sum goes into sr's record while that is
// still its route's last (the adds of consecutive instructions to one
// word, nothing between them, are one add of their total, modulo 2^32 as
// the adds are), or else into a record of its own (fused, the last was
// applied already).
func (b *batch) sumAgain(ii int, bi *xinst, routes []route, sr *sumRun, fuse bool) {
	rt := &routes[sr.owner]
	if !fuse && len(rt.recs) == sr.at+1 {
		rt.recs[sr.at].slot += sr.r.slot
	} else {
		rt.add(uint32(ii), sr.r, true)
		sr.at = len(rt.recs) - 1
	}
	b.setStat(bi, 1, sr.n, 0)
}

// routeWarpLanes routes a warp's lanes one record each, counting
// conflicts unless the addresses are distinct by construction.
func (b *batch) routeWarpLanes(ii int, bi *xinst, routes []route, cur *shard.Cursor, addrs []uint64, sp warpSpan, vals bool, r int) (distinct, maxc uint32, ok bool) {
	p := bi.plan
	// A vals segment's sources: straight from a per-lane list when the
	// first source is one (scattered updates), else lane by lane.
	var srcList []uint64
	if vals && p.b[0].In >= 0 {
		if j := p.b[0].In; bi.vec(j).Kind == trace.VecList && p.st.Inputs[j].Elems <= 1 {
			srcList = bi.list(j)
		}
	}
	// Lanes on distinct addresses by construction (!sp.mayRepeat()) need no
	// conflict count. A partition counts only its own lanes.
	count := sp.lo == sp.hi || sp.mayRepeat() || b.partitioned
	if b.order == OrderLane && sp.lo>>shard.PageShift == sp.hi>>shard.PageShift {
		return b.routePageLanes(ii, bi, routes, cur, addrs, sp, vals, srcList, count, r)
	}
	if b.order == OrderLane && (srcList != nil || !vals) && len(routes) == 1 && !b.partitioned {
		return b.routeScatter(ii, bi, &routes[0], cur, addrs, srcList, count, r)
	}
	if distinct, maxc, ok = b.routeLanes(ii, bi, routes, cur, addrs, vals, srcList, count, r); !ok || count {
		return distinct, maxc, ok
	}
	n := uint32(len(addrs))
	return n, 1, true
}

// wordRun reports whether the addresses (of the active lanes, in lane
// order) are a run: consecutive lanes, word-sized or larger accesses, one
// page, a constant nonzero step of whole words; and returns the step in
// words.
func wordRun(addrs []uint64, size uint64, active uint32) (int32, bool) {
	if len(addrs) < 2 || size < 4 || active&(active+active&-active) != 0 {
		return 0, false
	}
	d := int64(addrs[1] - addrs[0])
	if d == 0 || d%4 != 0 || d > 1<<12 || d < -1<<12 || addrs[0]>>shard.PageShift != addrs[len(addrs)-1]>>shard.PageShift {
		return 0, false
	}
	for i := 2; i < len(addrs); i++ {
		if int64(addrs[i]-addrs[i-1]) != d {
			return 0, false
		}
	}
	return int32(d / 4), true
}

// laneOrder lists bi's active lanes, lowest first, and, unless the batch
// applies lanes in lane order, the order they apply in (indexes into the
// list; nil for lane order: order.go), in the storage given.
func (b *batch) laneOrder(bi *xinst, lanes, perm *[trace.MaxLanes]uint8) (ls, pm []uint8) {
	ls = activeLanes(bi.active, lanes)
	if b.order != OrderLane {
		pm = lanePerm(b.order, b.seed, bi.Seq, len(ls), perm)
	}
	return ls, pm
}

// routeLanes routes one record per lane of a warp that does not fault,
// addrs being its active lanes' addresses in lane order, and, with count,
// counts its distinct addresses and largest conflict on the range's
// conflict set as it goes. It reports false when the memory is full.
func (b *batch) routeLanes(ii int, bi *xinst, routes []route, cur *shard.Cursor, addrs []uint64, vals bool, srcList []uint64, count bool, r int) (distinct, maxc uint32, ok bool) {
	p := bi.plan
	cs := &b.cset[r]
	cs.next()
	var en shard.Entry
	owners := len(routes)
	var lanesBuf, permBuf [trace.MaxLanes]uint8
	ls, pm := b.laneOrder(bi, &lanesBuf, &permBuf)
	for i := range addrs {
		k := i
		if pm != nil {
			k = int(pm[i])
		}
		a, lane, slot := addrs[k], int(ls[k]), bi.slot+uint32(k)
		if en = cur.Cached(bi.mem, a); en == 0 {
			if en = cur.Resolve(bi.mem, a); en == 0 {
				return 0, 0, false
			}
		}
		if en.Foreign() {
			b.foreignRows(slot, 1)
			continue
		}
		o := 0
		if owners > 1 {
			o = int(b.owner[en.Shard()])
		}
		aux := slot | uint32(a&3)<<slotBits
		if srcList != nil {
			aux = uint32(srcList[lane&(trace.MaxLanes-1)] >> p.srcShift)
		} else if vals {
			v, _ := bi.Value(p.b[0], lane)
			aux = uint32(v >> p.srcShift)
		}
		routes[o].add(uint32(ii), rec{word: en.WordRef(a), slot: aux}, vals)
		if count {
			if c, fresh := cs.add(a); fresh {
				distinct++
			} else {
				maxc = max(maxc, c)
			}
		}
	}
	return distinct, conflictDepth(distinct, maxc), true
}

// routeScatter is routeLanes for scattered updates to one owner (a lean
// replay on one or two workers, or any replay on one): every lane's
// record, in lane order, into one segment written in place, made in the
// loop that resolves the words (Cursor.WordAdds), which stops at a page
// not made yet; Resolve makes it, and the loop goes on from there. With
// srcList, a (word, addend) record a lane (a vals segment): the k-th
// address takes the k-th addend, a full warp's the source's per-lane list
// itself, a partial warp's its active lanes' gathered first. Without, a
// (word, slot) record a lane, for a lane that gets a result: the loop
// takes k as the k-th address's addend, and the slots are made from it
// after, with the address's byte in its word.
func (b *batch) routeScatter(ii int, bi *xinst, rt *route, cur *shard.Cursor, addrs, srcList []uint64, count bool, r int) (distinct, maxc uint32, ok bool) {
	addends, shift := srcList, bi.plan.srcShift
	switch {
	case srcList == nil:
		addends, shift = b.addends[r][:len(addrs)], 0
		for k := range addends {
			addends[k] = uint64(k)
		}
	case len(addrs) < trace.MaxLanes || len(srcList) < trace.MaxLanes:
		var lanesBuf [trace.MaxLanes]uint8
		ls := activeLanes(bi.active, &lanesBuf)
		addends = b.addends[r][:len(addrs)]
		for k := range addends {
			addends[k] = srcList[ls[k]&(trace.MaxLanes-1)]
		}
	}
	mem := bi.mem
	rt.open(uint32(ii), srcList != nil)
	r0 := len(rt.recs)
	if cap(rt.recs)-r0 < len(addrs) {
		rt.recs = slices.Grow(rt.recs, len(addrs))
	}
	rt.recs = rt.recs[:r0+len(addrs)] // the length alone (see push)
	out := rt.recs[r0:]
	adds := wordAdds(out)
	for n := cur.WordAdds(mem, addrs, addends, shift, adds); n < len(addrs); {
		en := cur.Resolve(mem, addrs[n])
		if en == 0 {
			rt.recs = rt.recs[:r0]
			return 0, 0, false
		}
		out[n] = rec{word: en.WordRef(addrs[n]), slot: uint32(addends[n] >> shift)}
		n++
		n += cur.WordAdds(mem, addrs[n:], addends[n:], shift, adds[n:])
	}
	if srcList == nil {
		for k := range out {
			out[k].slot = bi.slot + out[k].slot | uint32(addrs[k]&3)<<slotBits
		}
	}
	if !count || b.filter[r].distinct(out) {
		return uint32(len(addrs)), 1, true
	}
	distinct, maxc = b.cset[r].count(addrs)
	return distinct, maxc, true
}

// wordAdds is records of (word, addend) as what they are, shard.WordAdds
// (TestRecIsWordAdd): for shard.Memory.AddWords and Cursor.WordAdds,
// without a copy.
func wordAdds(recs []rec) []shard.WordAdd {
	if len(recs) == 0 {
		return nil
	}
	return unsafe.Slice((*shard.WordAdd)(unsafe.Pointer(&recs[0])), len(recs))
}

// distinctFilter tells, for most warps of scattered words, that no two
// lanes hit one word, at less than conflictSet's cost: a table of 8192
// slots indexed by a hash of the word, a slot holding the generation of
// the last warp that hashed there. A slot already holding the current
// warp's generation (a repeated word, or two that collide: about one warp
// in seventeen of 32 random words) leaves the warp to conflictSet's exact
// count. A warp costs a load and a store per lane and nothing to clear;
// the table is cleared when the generations wrap, once every 65535 warps.
type distinctFilter struct {
	gen  uint16
	seen [1 << distinctBits]uint16
}

// distinctBits is log2 of distinctFilter's slots: 16 KiB of them, in L1.
const distinctBits = 13

// distinct reports whether the records' words are sure to be distinct.
func (f *distinctFilter) distinct(recs []rec) bool {
	if f.gen++; f.gen == 0 {
		clear(f.seen[:])
		f.gen = 1
	}
	g := f.gen
	for _, r := range recs {
		h := r.word * 0x9e3779b1 >> (32 - distinctBits)
		if f.seen[h] == g {
			return false
		}
		f.seen[h] = g
	}
	return true
}

// routePageLanes is routeLanes for a warp whose lanes, in lane order, all
// hit one page (a histogram's bins, a scatter within 4 KiB): the page is
// resolved once and every record goes to its owner's route in one
// segment, in one loop per kind of source.
func (b *batch) routePageLanes(ii int, bi *xinst, routes []route, cur *shard.Cursor, addrs []uint64, sp warpSpan, vals bool, srcList []uint64, count bool, r int) (distinct, maxc uint32, ok bool) {
	en := cur.Resolve(bi.mem, addrs[0])
	if en == 0 {
		return 0, 0, false
	}
	n := uint32(len(addrs))
	if en.Foreign() {
		b.foreignRows(bi.slot, n)
		return 0, 0, true
	}
	o := 0
	if len(routes) > 1 {
		o = int(b.owner[en.Shard()])
	}
	page := en.WordRef(addrs[0]) &^ (shard.PageWords - 1)
	if b.oneLoop && !b.countsLanes && count && len(addrs) == trace.MaxLanes && (bi.bUni || len(srcList) >= trace.MaxLanes) {
		if acc := b.pageAcc(r); acc.on {
			distinct, maxc = b.sumPage(acc, ii, bi, routes, o, page, addrs, sp, srcList, r)
			return distinct, conflictDepth(distinct, maxc), true
		}
	}
	rt := &routes[o]
	rt.open(uint32(ii), vals)
	r0 := len(rt.recs)
	if cap(rt.recs)-r0 < len(addrs) {
		rt.recs = slices.Grow(rt.recs, len(addrs))
	}
	rt.recs = rt.recs[:r0+len(addrs)] // the length alone (see push)
	out := rt.recs[r0:]
	p := bi.plan
	switch {
	case srcList != nil && count && len(out) == trace.MaxLanes && len(srcList) >= trace.MaxLanes:
		// A full warp of scattered updates, a value per lane, within one
		// page (a weighted histogram's): lane k is the k-th address, and
		// the records and the conflict count go in one loop.
		ps := b.pageSet(r)
		ps.next()
		distinct, maxc = pageRecs((*[trace.MaxLanes]rec)(out), (*[trace.MaxLanes]uint64)(addrs), (*[trace.MaxLanes]uint64)(srcList), page, p.srcShift, &ps.counts, ps.gen)
		return distinct, conflictDepth(distinct, maxc), true
	case srcList != nil:
		var lanesBuf [trace.MaxLanes]uint8
		ls := activeLanes(bi.active, &lanesBuf)
		for k, a := range addrs {
			out[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: uint32(srcList[ls[k]&(trace.MaxLanes-1)] >> p.srcShift)}
		}
	case vals:
		var lanesBuf [trace.MaxLanes]uint8
		ls := activeLanes(bi.active, &lanesBuf)
		for k, a := range addrs {
			v, _ := bi.Value(p.b[0], int(ls[k]))
			out[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: uint32(v >> p.srcShift)}
		}
	case count && len(out) == trace.MaxLanes:
		// A full warp within one page whose lanes take their sources
		// from their slots or the instruction (a histogram's increments):
		// the records and the conflict count in one loop, as above.
		ps := b.pageSet(r)
		ps.next()
		distinct, maxc = pageRecsSlots((*[trace.MaxLanes]rec)(out), (*[trace.MaxLanes]uint64)(addrs), page, bi.slot, &ps.counts, ps.gen)
		return distinct, conflictDepth(distinct, maxc), true
	default:
		for k, a := range addrs {
			out[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: bi.slot + uint32(k) | uint32(a&3)<<slotBits}
		}
	}
	if !count {
		return n, 1, true
	}
	distinct, maxc = b.pageSet(r).count(addrs)
	return distinct, maxc, true
}

// pageSet returns range r's pageConflicts, made on first use.
func (b *batch) pageSet(r int) *pageConflicts {
	ps := b.pset[r]
	if ps == nil {
		ps = new(pageConflicts)
		b.pset[r] = ps
	}
	return ps
}

// pageRecs writes a full warp's (word, addend) records, its addresses all
// in the page whose first word reference is page, and counts them as one
// warp's accesses on counts (pageConflicts.count, fused: the records'
// loop and the count's in one). It returns the distinct addresses and the
// largest count of one (0 when none repeats). Not inlined, for its
// registers (see listAddresses).
//
//go:noinline
func pageRecs(out *[trace.MaxLanes]rec, addrs, src *[trace.MaxLanes]uint64, page uint32, shift uint8, counts *[shard.PageBytes]uint16, gen uint16) (distinct, maxc uint32) {
	o, sv, c := out[:], src[:], counts[:] // see laneSlices
	for k, a := range addrs[:] {
		o[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: uint32(sv[k] >> shift)}
		distinct, maxc = countLane(c, a, gen, distinct, maxc)
	}
	return distinct, maxc
}

// pageRecsSlots is pageRecs for records that carry their lane's slot
// (from slot on) and byte within the word, not a source.
//
//go:noinline
func pageRecsSlots(out *[trace.MaxLanes]rec, addrs *[trace.MaxLanes]uint64, page, slot uint32, counts *[shard.PageBytes]uint16, gen uint16) (distinct, maxc uint32) {
	o, c := out[:], counts[:] // see laneSlices
	for k, a := range addrs[:] {
		o[k] = rec{word: page | uint32(a>>2)&(shard.PageWords-1), slot: slot + uint32(k) | uint32(a&3)<<slotBits}
		distinct, maxc = countLane(c, a, gen, distinct, maxc)
	}
	return distinct, maxc
}

// laneSlices: the per-lane loops of a warp (pageRecs, pageRecsSlots,
// sumLanes, sumLanesList, listBits, listSpan, listAddresses) take their
// arrays as slices,
// made once before the loop, of the arrays' constant lengths. Indexed
// through the array pointers, each pointer was checked for nil on every
// lane, a load each (BenchmarkExpand/histogram 2.54 -> 2.47 ns a lane).

// countLane is pageConflicts.count's step for one access at a, in the
// generation gen: distinct and maxc as they stand after it. counts is a
// pageConflicts' counts, PageBytes long.
//
// It has no branch the data decides (the compiler makes the two
// assignments conditional moves): a histogram's warps, 32 lanes over a
// few hundred words, repeat an address in about two lanes of 32 at
// random, each a mispredicted branch when it was one
// (BenchmarkExpand/histogram 2.40 -> 2.33 ns a lane). A new address
// raises maxc to at least 1, which conflictDepth does for every warp
// with a lane anyway.
func countLane(counts []uint16, a uint64, gen uint16, distinct, maxc uint32) (uint32, uint32) {
	c := &counts[a&(shard.PageBytes-1)]
	old := *c
	n, fresh := old+1, uint32(0)
	if old&^(1<<pageCountBits-1) != gen {
		n, fresh = gen|1, 1
	}
	*c = n
	return distinct + fresh, max(maxc, uint32(n&(1<<pageCountBits-1)))
}

// pageConflicts counts the distinct addresses and the largest conflict of
// one warp whose addresses all lie in one page: a counter per byte of the
// page, indexed directly, live only when stamped with the current warp's
// generation (its high bits), so that no warp clears it; it is cleared
// when the generations wrap, once every 1024 warps.
type pageConflicts struct {
	gen    uint16 // the current warp's generation << pageCountBits
	counts [shard.PageBytes]uint16
}

// pageCountBits is the bits of a counter that count: up to 63 accesses per
// warp and address (a warp has at most 32 lanes).
const pageCountBits = 6

// next starts the next warp's count.
func (ps *pageConflicts) next() {
	ps.gen += 1 << pageCountBits
	if ps.gen == 0 {
		clear(ps.counts[:])
		ps.gen = 1 << pageCountBits
	}
}

// count counts addrs (one page's) as one warp's accesses.
func (ps *pageConflicts) count(addrs []uint64) (distinct, maxc uint32) {
	ps.next()
	gen := ps.gen
	counts := ps.counts[:]
	for _, a := range addrs {
		distinct, maxc = countLane(counts, a, gen, distinct, maxc)
	}
	return distinct, conflictDepth(distinct, maxc)
}

// conflictSet counts, for one instruction at a time, how often each of at
// most 64 addresses occurs: a 128-slot open-addressing table whose slots
// are live only when stamped with the current instruction's generation,
// so that moving to the next instruction clears nothing.
type conflictSet struct {
	gen   uint32
	slots [128]conflictSlot // one cache line holds four whole slots
}

type conflictSlot struct {
	key   uint64
	stamp uint32 // the slot is live when stamp == gen
	count uint32
}

// conflictDepth is an instruction's largest conflict from its counts: the
// most accesses to one address that repeated (maxc, 0 when none did), or
// 1 when it has any access at all.
func conflictDepth(distinct, maxc uint32) uint32 { return max(maxc, min(distinct, 1)) }

// next starts a new instruction.
func (c *conflictSet) next() {
	if c.gen++; c.gen == 0 {
		clear(c.slots[:])
		c.gen = 1
	}
}

// count counts addrs as one instruction's accesses: its distinct
// addresses and its largest conflict (at least 1 when there are any).
func (c *conflictSet) count(addrs []uint64) (distinct, maxc uint32) {
	c.next()
	for _, a := range addrs {
		if n, fresh := c.add(a); fresh {
			distinct++
		} else {
			maxc = max(maxc, n)
		}
	}
	return distinct, conflictDepth(distinct, maxc)
}

// add counts one access to a and returns its count so far, and whether a
// is new to this instruction.
func (c *conflictSet) add(a uint64) (uint32, bool) {
	i := (a * 0x9e3779b97f4a7c15) >> 57
	for {
		s := &c.slots[i&127]
		if s.stamp != c.gen {
			*s = conflictSlot{key: a, stamp: c.gen, count: 1}
			return 1, true
		}
		if s.key == a {
			s.count++
			return s.count, false
		}
		i++
	}
}

// conflictsSmall is conflicts for at most 64 addresses in any order: a
// 128-slot open-addressing table on the stack, one probe sequence per
// address, instead of a quadratic insertion sort of random addresses.
func conflictsSmall(a []uint64) (distinct, maxc uint32) {
	var keys [128]uint64
	var counts [128]uint8 // 0 marks an empty slot
	for _, x := range a {
		i := (x * 0x9e3779b97f4a7c15) >> 57
		for counts[i] != 0 && keys[i] != x {
			i = (i + 1) & 127
		}
		if counts[i] == 0 {
			keys[i] = x
			distinct++
		}
		counts[i]++
		maxc = max(maxc, uint32(counts[i]))
	}
	return distinct, maxc
}

// mergeValues copies each slot's returned value into its result row.
func (b *batch) mergeValues() {
	vals, his := b.vals[:len(b.results)], b.valsHi[:len(b.results)]
	for i := range b.results {
		b.results[i].Value, b.results[i].ValueHi = vals[i], his[i]
	}
}

// conflicts counts distinct addresses and the largest number of accesses to
// one of them. It sorts a in place: insertion sort for a warp's worth
// (usually sorted already), slices.Sort beyond.
func conflicts(a []uint64) (distinct, maxc uint32) {
	if len(a) > 64 {
		slices.Sort(a)
	} else if !slices.IsSorted(a) {
		return conflictsSmall(a)
	}
	run := uint32(0)
	for i := range a {
		if i == 0 || a[i] != a[i-1] {
			distinct++
			run = 0
		}
		run++
		maxc = max(maxc, run)
	}
	return distinct, maxc
}

// apply performs every record owner o received, range by range, each
// range's records in the order expand made them, which is trace order.
// With a tracker, the records are also counted for the addresses table, by
// the same owner, in the same order.
func (b *batch) apply(o int, mem *shard.Memory, t *addrTracker) {
	for r := range b.out {
		b.applyRoute(o, &b.out[r][o], mem, t)
	}
	if t != nil && t.async == nil {
		t.count(o, b)
	}
}

// applyRoute performs a route's segments in order, then collects them
// for owner o's addresses table, if there is one.
func (b *batch) applyRoute(o int, rt *route, mem *shard.Memory, t *addrTracker) {
	if b.oneLoop && allVals(rt.segs) {
		// Additions that commute, each record its word and addend: one
		// loop over them all, whatever instruction they came from.
		add32Vals(mem, rt.recs)
	} else {
		// One xinst, its record copied in per segment and its plan set
		// (as expand's): built whole per segment, it went through a
		// temporary on the stack whose 8-byte stores the copy's 16-byte
		// loads could not forward from (the twenty-sixth round in
		// docs/PERFORMANCE.md).
		x := xinst{vecs: b.vecs, arena: b.arena}
		asked := 0 // the records whose words were asked for: rt.recs[:asked]
		for k, s := range rt.segs {
			hi := uint32(len(rt.recs))
			if k+1 < len(rt.segs) {
				hi = rt.segs[k+1].lo
			}
			if want := min(int(hi)+applyAhead, len(rt.recs)); asked < want {
				mem.PrefetchWords(wordAdds(rt.recs[asked:want]))
				asked = want
			}
			in := &b.insts[s.inst]
			x.binst = *in
			x.plan = b.plans[in.pi]
			b.applySeg(mem, &x, s, rt.recs[s.lo:hi])
		}
	}
	if t != nil {
		t.collect(o, b, rt)
	}
}

// applyAhead is how many records ahead of the segment it applies
// applyRoute asks for their words (shard.Memory.PrefetchWords): the loops
// of a segment (a warp's 32 lanes, at most a few hundred elements) are too
// short to keep more than a few of their misses under way by themselves,
// and a replay that returns results pushes the words out of the caches
// between batches.
const applyAhead = 64

// applySeg performs one instruction's records, with the loop its
// operation, width and sources call for.
func (b *batch) applySeg(mem *shard.Memory, bi *xinst, s seg, recs []rec) {
	p := bi.plan
	noDst := !p.st.HasDst || p.noRet || b.noResults
	add32ok := p.add32()
	switch {
	case s.n > 0 && s.step == 1 && add32ok:
		// A coalesced atomicAdd: consecutive words (of one page), in one
		// tight loop, in the chunk's words.
		x := recs[0]
		c := mem.Chunk(x.word)
		slot0, w0, n := int(x.slot&slotMask), int(x.word%shard.ChunkWords), int(s.n)
		words := c.Words[w0 : w0+n : w0+n]
		touchRange(c.Touched[:], w0, n)
		var res []uint64 // what the lanes get back, unless nothing returns
		if !noDst {
			res = b.vals[slot0 : slot0+n : slot0+n]
		}
		if bi.bUni {
			addRunUniform(words, uint32(bi.bVal), res)
		} else {
			addRunSlots(words, b.opB[slot0:slot0+n:slot0+n], res)
		}
		return
	case s.n > 0 && s.step == 0:
		b.applyUniform(mem, bi, recs[0], s.n, noDst)
		return
	case s.n > 0:
		b.applyRun(mem, bi, recs[0], s, noDst)
		return
	case s.vals && add32ok:
		add32Vals(mem, recs)
		return
	case add32ok && bi.bUni:
		add32(mem, recs, uint32(bi.bVal), b.vals, noDst)
		return
	case add32ok:
		add32Slots(mem, recs, b.opB, b.vals, noDst)
		return
	}
	fl := p.flags()
	for _, x := range recs {
		slot := x.slot & slotMask
		bv, cv := b.src(&bi.binst, slot, s.vals, x.slot)
		var bh, ch uint64
		if p.size == 16 {
			bh, ch = b.opBhi[slot], b.opChi[slot]
		}
		pg := mem.Page(x.word >> (shard.PageShift - 2))
		byteOff := x.slot >> slotBits
		if s.vals {
			byteOff = 0
		}
		ret, retHi := applyWord(pg, x.word&(shard.PageWords-1), byteOff, p.kind, p.size, fl, bv, cv, bh, ch)
		if !noDst {
			b.vals[slot], b.valsHi[slot] = ret, retHi
		}
	}
}

// applyRun performs a run segment other than a coalesced 32-bit add
// (applySeg's): lane k on the word s.step*k words from x's, in lane order.
func (b *batch) applyRun(mem *shard.Memory, bi *xinst, x rec, s seg, noDst bool) {
	p := bi.plan
	slot0 := x.slot & slotMask
	pg := mem.Page(x.word >> (shard.PageShift - 2))
	fl := p.flags()
	wi := int(x.word & (shard.PageWords - 1))
	for k := uint32(0); k < s.n; k++ {
		slot := slot0 + k
		bv, cv := b.src(&bi.binst, slot, false, 0)
		ret, retHi := applyWord(pg, uint32(wi), 0, p.kind, p.size, fl, bv, cv, 0, 0)
		if !noDst {
			b.vals[slot], b.valsHi[slot] = ret, retHi
		}
		wi += int(s.step)
	}
}

// addRunUniform adds v to each of words (a coalesced atomicAdd of one
// value), and stores each old value in res unless res is nil.
func addRunUniform(words []uint32, v uint32, res []uint64) {
	if res == nil {
		for k := range words {
			words[k] += v
		}
		return
	}
	res = res[:len(words)]
	for k, old := range words {
		words[k] = old + v
		res[k] = uint64(old)
	}
}

// addRunSlots adds ops[k] to words[k] (a coalesced atomicAdd of per-lane
// values), and stores each old value in res unless res is nil.
func addRunSlots(words []uint32, ops, res []uint64) {
	ops = ops[:len(words)]
	if res == nil {
		for k := range words {
			words[k] += uint32(ops[k])
		}
		return
	}
	res = res[:len(words)]
	for k, old := range words {
		words[k] = old + uint32(ops[k])
		res[k] = uint64(old)
	}
}

// add32 is the commonest loop: 32-bit adds of one value (atomicAdd of a
// constant: histograms, counters). Like add32Vals and add32Slots, it finds
// each record's word in its chunk (shard.Memory.Chunk), with no page in
// between: one load to the chunk, then word and bit indexed directly. Its
// words are mostly written before (a histogram's bins), so it marks them
// with Chunk.Mark, which stores only a new bit: histogram, lean, 2 workers,
// 81.6 → 77.9 ms (alternating runs). add32Slots, whose words are
// scattered, marks only a zero sum.
func add32(mem *shard.Memory, recs []rec, v uint32, vals []uint64, noDst bool) {
	if noDst {
		for _, x := range recs {
			c := mem.Chunk(x.word)
			w := x.word % shard.ChunkWords
			c.Words[w] += v
			c.Mark(w)
		}
		return
	}
	for _, x := range recs {
		c := mem.Chunk(x.word)
		w := x.word % shard.ChunkWords
		old := c.Words[w]
		c.Words[w] = old + v
		c.Mark(w)
		vals[x.slot&slotMask] = uint64(old)
	}
}

// add32Vals is add32 with a value per lane carried in the records, and
// nothing returned (scattered updates in a lean replay). Such a record is
// a shard.WordAdd, word and addend, in the same 8 bytes (TestRecIsWordAdd),
// so the records go to shard.Memory.AddWords as they are: on amd64 a loop
// in assembly that keeps many of the misses of scattered words under way
// at once (shard/add_amd64.s).
func add32Vals(mem *shard.Memory, recs []rec) {
	mem.AddWords(wordAdds(recs))
}

// add32Slots is add32 with a value per lane (scattered updates). A word
// is written when it is non-zero or marked (shard.Page), so, as
// shard.Memory.AddWords, it marks only a word whose sum is zero: marking
// every word was a second access at random per lane, to the bitmap beside
// the words, and when the batches of a replay that returns results had
// pushed the words and bitmaps out of the caches (a uniform-1Mi replay
// with the results table), both missed: 14 ns an add cold, 11.5 with
// the mark only on a zero sum, 5.5 with the words asked for ahead too
// (applyRoute; the thirty-second round in docs/PERFORMANCE.md).
func add32Slots(mem *shard.Memory, recs []rec, opB, vals []uint64, noDst bool) {
	if noDst {
		for _, x := range recs {
			c := mem.Chunk(x.word)
			w := x.word % shard.ChunkWords
			sum := c.Words[w] + uint32(opB[x.slot&slotMask])
			c.Words[w] = sum
			if sum == 0 {
				c.Touched[w/64] |= 1 << (w % 64)
			}
		}
		return
	}
	for _, x := range recs {
		c := mem.Chunk(x.word)
		w := x.word % shard.ChunkWords
		slot := x.slot & slotMask
		old := c.Words[w]
		sum := old + uint32(opB[slot])
		c.Words[w] = sum
		if sum == 0 {
			c.Touched[w/64] |= 1 << (w % 64)
		}
		vals[slot] = uint64(old)
	}
}

// touchRange marks words w0..w0+n-1 written in touched, a bitmap of
// words (bit w%64 of touched[w/64]), 64 at a time.
func touchRange(touched []uint64, w0, n int) {
	for n > 0 {
		i, b := w0>>6, w0&63
		k := min(n, 64-b)
		touched[i] |= (^uint64(0) >> (64 - k)) << b
		w0, n = w0+k, n-k
	}
}

// applyUniform performs a warp whose n lanes all hit one address, in lane
// order. Where nothing returns and the sources are one value, the n
// applications have a closed form: n additions of b are one addition of
// n*b (integer arithmetic wraps alike), and a bitwise operation, min, max
// or exchange of one value leaves after n applications what it leaves
// after one (xor: after n mod 2).
func (b *batch) applyUniform(mem *shard.Memory, bi *xinst, x rec, n uint32, noDst bool) {
	p := bi.plan
	slot0 := x.slot & slotMask
	pg := mem.Page(x.word >> (shard.PageShift - 2))
	wi := x.word & (shard.PageWords - 1)
	byteOff := x.slot >> slotBits
	fl := p.flags()
	if noDst && bi.bUni && bi.cUni && p.size <= 8 {
		times := n
		switch p.kind {
		case kAdd, kSub:
			bv := bi.bVal * uint64(n)
			applyWord(pg, wi, byteOff, p.kind, p.size, fl, bv, bi.cVal, 0, 0)
			return
		case kAnd, kOr, kMinU, kMinS, kMaxU, kMaxS, kExch:
			times = 1
		case kXor:
			times = n & 1
		}
		for range times {
			applyWord(pg, wi, byteOff, p.kind, p.size, fl, bi.bVal, bi.cVal, 0, 0)
		}
		if times == 0 {
			// xor with itself an even number of times leaves the value,
			// but the word was written.
			pg.Touch(wi)
			if p.size == 8 {
				pg.Touch(wi + 1)
			}
		}
		return
	}
	for k := uint32(0); k < n; k++ {
		slot := slot0 + k
		bv, cv := b.src(&bi.binst, slot, false, 0)
		ret, retHi := applyWord(pg, wi, byteOff, p.kind, p.size, fl, bv, cv, 0, 0)
		if !noDst {
			b.vals[slot], b.valsHi[slot] = ret, retHi
		}
	}
}

// Access flags for applyWord, from the plan.
const (
	accRetNew   = 1 << iota // the lane gets the new value (vISA PREDEC)
	accRetShl16             // the value returns in the upper half (LSC d16u32h)
)

// add32 reports whether the plan is a 32-bit integer add whose old value
// is what a lane gets back, if anything: the additions that commute
// (commute.go) and that the 32-bit add loops perform.
func (p *plan) add32() bool {
	return p.kind == kAdd && p.size == 4 && !p.retNew && !p.retShl16
}

func (p *plan) flags() uint8 {
	var fl uint8
	if p.retNew {
		fl |= accRetNew
	}
	if p.retShl16 {
		fl |= accRetShl16
	}
	return fl
}

// applyWord performs one access of size bytes at word wi of pg (byte
// byteOff within the word, for 8- and 16-bit accesses) and returns what the
// lane gets back.
func applyWord(pg *shard.Page, wi, byteOff uint32, k kind, size, flags uint8, b, c, bhi, chi uint64) (ret, retHi uint64) {
	switch size {
	case 4:
		p := &pg.Words[wi]
		old := *p
		nw := op32(k, old, uint32(b), uint32(c))
		*p = nw
		pg.Touch(wi)
		ret = uint64(old)
		if flags&accRetNew != 0 {
			ret = uint64(nw)
		}
	case 8:
		w := pg.Words[wi : wi+2 : wi+2]
		old := uint64(w[0]) | uint64(w[1])<<32
		nw := op64(k, old, b, c)
		w[0], w[1] = uint32(nw), uint32(nw>>32)
		pg.Touch(wi)
		pg.Touch(wi + 1)
		ret = old
		if flags&accRetNew != 0 {
			ret = nw
		}
	case 2:
		sh := (byteOff & 2) * 8
		p := &pg.Words[wi]
		old := uint16(*p >> sh)
		nw := op16(k, old, uint16(b), uint16(c))
		*p = *p&^(0xffff<<sh) | uint32(nw)<<sh
		pg.Touch(wi)
		ret = uint64(old)
		if flags&accRetNew != 0 {
			ret = uint64(nw)
		}
	case 1:
		sh := byteOff * 8
		p := &pg.Words[wi]
		old := uint8(*p >> sh)
		nw := uint8(op16(k, uint16(old), uint16(b), uint16(c)))
		*p = *p&^(0xff<<sh) | uint32(nw)<<sh
		pg.Touch(wi)
		ret = uint64(old)
	case 16:
		w := pg.Words[wi : wi+4 : wi+4]
		oldLo := uint64(w[0]) | uint64(w[1])<<32
		oldHi := uint64(w[2]) | uint64(w[3])<<32
		nlo, nhi := op128(k, oldLo, oldHi, b, bhi, c, chi)
		w[0], w[1], w[2], w[3] = uint32(nlo), uint32(nlo>>32), uint32(nhi), uint32(nhi>>32)
		pg.Touched[wi>>6] |= 0xf << (wi & 63)
		return oldLo, oldHi
	}
	if flags&accRetShl16 != 0 {
		ret <<= 16
	}
	return ret, 0
}

// op128 is the new value of a 128-bit atomic: only cas and exch exist
// (PTX atom.cas.b128, atom.exch.b128).
func op128(k kind, oldLo, oldHi, bLo, bHi, cLo, cHi uint64) (uint64, uint64) {
	switch k {
	case kExch:
		return bLo, bHi
	case kCAS:
		if oldLo == bLo && oldHi == bHi {
			return cLo, cHi
		}
		return oldLo, oldHi
	}
	panic(noFormula{k, 128})
}
