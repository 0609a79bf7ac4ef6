package engine

import (
	"math/bits"
	"slices"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// binst is one instruction copied into a batch.
type binst struct {
	trace.Inst
	plan   *plan
	mem    uint32 // memory id of (space, group)
	active uint32
	slot   uint32 // first result slot
}

// access is one run of lane accesses to memory, routed to its shard: n
// consecutive active lanes (n >= 1) of one instruction, element 0, whose
// addresses step by a constant within one granule, so one hash and one
// block lookup serve them all. A run of one lane carries its source values
// in b and c; a longer run reads them from its instruction (inst).
type access struct {
	addr  uint64 // the first lane's address
	h     uint64 // hash of the granule
	b, c  uint64 // sources of a one-lane run
	slot  uint32 // the first lane's result slot; lane k's is slot+k
	mem   uint32
	inst  uint32 // index of the instruction in the batch
	step  int32  // address step from one lane of the run to the next
	lane0 uint8  // the first lane
	n     uint8  // lanes in the run
	kind  kind
	size  uint8
	flags uint8 // accRetNew, accNoDst, accRetShl16
}

const (
	accRetNew   = 1 << iota // the lane gets the new value (vISA PREDEC)
	accNoDst                // the destination is _, RZ, V0, null: nothing returns
	accRetShl16             // the value returns in the upper half (LSC d16u32h)
)

// batch is the unit the pipeline moves: instructions, their result slots,
// statistics, and the accesses routed per (range, shard).
type batch struct {
	insts   []binst
	arena   []uint64 // backing store for copied vector lists
	results []Result
	// vals and valsHi are what each slot's lane got back. apply writes
	// them (8 bytes a slot, so the writes in shard order stay in cache);
	// mergeValues copies them into results in slot order before emitting.
	vals, valsHi []uint64
	bhi          []uint64 // per slot: high half of a 128-bit first source
	chi          []uint64 // per slot: high half of a 128-bit second source
	stats        []InstStat
	// routed holds, per instruction range and shard, the accesses in trace
	// order. Partitioning by shard (not just by owner) keeps one shard's
	// table and blocks hot in cache while its run is applied.
	routed  [][][]access // [range][shard]
	used    [][]int32    // [range]: the shards with accesses, for reset
	scratch [][]uint64   // [range]: one instruction's addresses, for its statistics
	ranges  []int        // instruction index where each range starts; len = ranges+1
	nslots  int
	// noResults: the sink reads no per-lane rows; only faulting lanes'
	// slots are filled (for --strict), and apply writes no values.
	noResults bool
	// inits are the .init records read after the batch's instructions,
	// applied after them (directive.go); initBytes is their data's size.
	inits      []batchInit
	initBytes  int
	err        error
	firstFault []int // per range: slot of the first fault, or -1
}

func (b *batch) reset(workers, shards int) {
	b.insts = b.insts[:0]
	b.arena = b.arena[:0]
	b.nslots = 0
	clear(b.inits) // drop the copies' data
	b.inits, b.initBytes = b.inits[:0], 0
	b.err = nil
	if len(b.routed) != workers || len(b.routed[0]) != shards {
		b.routed = make([][][]access, workers)
		b.used = make([][]int32, workers)
		b.scratch = make([][]uint64, workers)
		for r := range b.routed {
			b.routed[r] = make([][]access, shards)
		}
		b.firstFault = make([]int, workers)
	}
	for r := range b.routed {
		for _, s := range b.used[r] {
			b.routed[r][s] = b.routed[r][s][:0]
		}
		b.used[r] = b.used[r][:0]
	}
}

// add copies in into the batch. The Source owns in; nothing of it is kept.
func (b *batch) add(in *trace.Inst, p *plan, mem uint32) {
	n := len(b.insts)
	if n < cap(b.insts) {
		b.insts = b.insts[:n+1]
	} else {
		b.insts = append(b.insts, binst{})
	}
	bi := &b.insts[n]
	vals := bi.Vals[:0]
	bi.Inst = *in
	for _, v := range in.Vals {
		if v.Kind == trace.VecList {
			start := len(b.arena)
			b.arena = append(b.arena, v.List...)
			v.List = b.arena[start:len(b.arena):len(b.arena)]
			if v.ListHi != nil {
				start = len(b.arena)
				b.arena = append(b.arena, v.ListHi...)
				v.ListHi = b.arena[start:len(b.arena):len(b.arena)]
			}
		}
		vals = append(vals, v)
	}
	bi.Vals = vals
	bi.plan = p
	bi.mem = mem
	bi.active = in.Active()
	bi.slot = uint32(b.nslots)
	b.nslots += bits.OnesCount32(bi.active) * in.Static.Elems
}

// finishAdd sizes the per-slot arrays once every instruction is in.
// Lists copied before the arena grew keep pointing at the old backing
// array, which stays alive and unchanged: values were copied, not aliased.
func (b *batch) finishAdd() {
	if cap(b.results) < b.nslots {
		b.results = make([]Result, b.nslots, b.nslots+b.nslots/4)
		b.bhi = make([]uint64, b.nslots, cap(b.results))
		b.chi = make([]uint64, b.nslots, cap(b.results))
	}
	b.results = b.results[:b.nslots]
	if cap(b.vals) < b.nslots {
		b.vals = make([]uint64, b.nslots, cap(b.results))
		b.valsHi = make([]uint64, b.nslots, cap(b.results))
	}
	b.vals = b.vals[:b.nslots]
	b.valsHi = b.valsHi[:b.nslots]
	b.bhi = b.bhi[:b.nslots]
	b.chi = b.chi[:b.nslots]
	if cap(b.stats) < len(b.insts) {
		b.stats = make([]InstStat, len(b.insts), cap(b.insts))
	}
	b.stats = b.stats[:len(b.insts)]
}

// expand turns instructions [lo, hi) into runs of accesses, routed to
// shards, and fills their result slots' address and fault, and their
// statistics.
func (b *batch) expand(r, lo, hi int, mem *shard.Memory) {
	routed := b.routed[r]
	used := b.used[r]
	var hasher shard.Hasher
	b.firstFault[r] = -1
	addrs := b.scratch[r][:0]
	// run is the access being extended; it is routed when the next lane
	// cannot join it.
	var run access
	var runShard int
	var last uint64 // address of the run's last lane
	flush := func() {
		if run.n == 0 {
			return
		}
		if len(routed[runShard]) == 0 {
			used = append(used, int32(runShard))
		}
		routed[runShard] = append(routed[runShard], run)
		run.n = 0
	}
	for ii := lo; ii < hi; ii++ {
		bi := &b.insts[ii]
		p := bi.plan
		st := bi.Static
		slot := bi.slot
		var faults uint32
		fl := uint8(0)
		if p.retNew {
			fl |= accRetNew
		}
		if !st.HasDst || p.noRet || b.noResults {
			fl |= accNoDst
		}
		if p.retShl16 {
			fl |= accRetShl16
		}
		// Runs of several lanes: scalar accesses of up to 64 bits, with
		// values read back from the instruction in apply.
		runs := st.Elems == 1 && p.size <= 8 && !p.status
		if runs && p.simple {
			if done, n := b.expandWarp(ii, bi, fl, mem, &hasher, routed, &used, addrs); done {
				addrs = n[:0]
				continue
			}
		}
		for m := bi.active; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			for e := 0; e < st.Elems; e++ {
				addr := p.addr(bi, lane, e)
				addrs = append(addrs, addr)
				f := p.checkElem(bi, lane, e, addr)
				if p.status {
					// lsc_load_status: no access, a 1 for an in-bounds lane.
					b.results[slot] = Result{Seq: bi.Seq, Lane: uint32(lane), Elem: uint32(e), Addr: addr}
					b.vals[slot], b.valsHi[slot] = 0, 0
					if f == FaultNone {
						b.vals[slot] = 1
					}
					slot++
					continue
				}
				if !b.noResults || f != FaultNone {
					b.results[slot] = Result{Seq: bi.Seq, Lane: uint32(lane), Elem: uint32(e), Addr: addr, Fault: f}
					b.vals[slot], b.valsHi[slot] = 0, 0
				}
				if f != FaultNone {
					faults++
					if b.firstFault[r] < 0 {
						b.firstFault[r] = int(slot)
					}
					slot++
					continue
				}
				// Join the run: same instruction, the next lane and slot,
				// the same granule, and the run's address step.
				if runs && run.n > 0 && run.inst == uint32(ii) && int(run.lane0)+int(run.n) == lane &&
					run.n < 255 && addr>>shard.GranuleShift == run.addr>>shard.GranuleShift &&
					(run.n == 1 && addr-last < 1<<31 || run.n > 1 && addr-last == uint64(int64(run.step))) {
					if run.n == 1 {
						run.step = int32(addr - last)
					}
					run.n++
					last = addr
					slot++
					continue
				}
				flush()
				var bv, bh, cv, ch uint64
				if p.b != nil {
					bv, bh = bi.Value(p.b[e], lane)
				}
				if p.c != nil {
					cv, ch = bi.Value(p.c[e], lane)
				}
				bv, cv = bv>>p.srcShift, cv>>p.srcShift
				if p.size == 16 {
					b.bhi[slot], b.chi[slot] = bh, ch
				}
				h := hasher.Hash(bi.mem, addr)
				runShard = mem.ShardIndex(h)
				run = access{addr: addr, h: h, b: bv, c: cv, slot: slot, mem: bi.mem, inst: uint32(ii),
					lane0: uint8(lane), n: 1, kind: p.kind, size: p.size, flags: fl}
				last = addr
				if !runs {
					flush()
				}
				slot++
			}
		}
		flush()
		distinct, maxc := conflicts(addrs)
		addrs = addrs[:0]
		b.stats[ii] = InstStat{Seq: bi.Seq, Static: st, Group: bi.Group, Warp: bi.Warp,
			Lanes: uint32(bits.OnesCount32(bi.active)), Addresses: distinct, MaxConflict: maxc, Faults: faults}
	}
	b.used[r] = used
	b.scratch[r] = addrs
}

// expandWarp is expand's fast path for one instruction whose lanes all
// hit memory without a fault: scalar, no per-element hooks, every address
// aligned and inside one region, whatever form the address vector has
// (broadcast, base:stride, a per-lane list, or none: absolute). It computes the addresses in one tight
// loop, checks faults once for the whole warp, and routes runs. It reports
// false, having done nothing, when the instruction needs the general path.
// addrs is scratch; it returns it, possibly grown.
func (b *batch) expandWarp(ii int, bi *binst, fl uint8, mem *shard.Memory, hasher *shard.Hasher,
	routed [][]access, used *[]int32, addrs []uint64) (bool, []uint64) {
	st, p := bi.Static, bi.plan
	var base, stride uint64
	var list []uint64 // per-lane bases, for a list-bound address
	if st.Addr >= 0 {
		v := &bi.Vals[st.Addr]
		switch v.Kind {
		case trace.VecBroadcast:
			base = v.Base
		case trace.VecStride:
			base, stride = v.Base, v.Stride
		case trace.VecList:
			list = v.List
		}
		if st.AddrUniform {
			base, stride, list = v.Lo(0), 0, nil
		}
	}
	scale := uint64(st.AddrScale)
	first := scale*base + uint64(st.AddrImm)
	step := scale*stride + uint64(st.LanePitch)
	mask := st.AddrMask()
	size := uint64(p.size)
	var or uint64
	lo, hi := ^uint64(0), uint64(0)
	if list == nil {
		for m := bi.active; m != 0; m &= m - 1 {
			lane := uint64(bits.TrailingZeros32(m))
			a := (first + lane*step) & mask
			addrs = append(addrs, a)
			or |= a
			lo, hi = min(lo, a), max(hi, a)
		}
	} else {
		imm, pitch := uint64(st.AddrImm), uint64(st.LanePitch)
		for m := bi.active; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			a := (scale*list[lane] + imm + uint64(lane)*pitch) & mask
			addrs = append(addrs, a)
			or |= a
			lo, hi = min(lo, a), max(hi, a)
		}
	}
	if len(addrs) == 0 || or&(size-1) != 0 || hi+size-1 < hi {
		return false, addrs[:0]
	}
	if len(p.regions) > 0 {
		in := false
		for i := range p.regions {
			if p.regions[i].Contains(lo, size) && p.regions[i].Contains(hi, size) {
				in = true
				break
			}
		}
		if !in {
			return false, addrs[:0]
		}
	}
	// No lane faults: route runs of lanes that share a granule.
	slot := bi.slot
	var run access
	var runShard int
	k := 0
	for m := bi.active; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		a := addrs[k]
		k++
		if !b.noResults {
			b.results[slot] = Result{Seq: bi.Seq, Lane: uint32(lane), Addr: a}
			b.vals[slot], b.valsHi[slot] = 0, 0
		}
		if run.n > 0 && int(run.lane0)+int(run.n) == lane && run.n < 255 &&
			a>>shard.GranuleShift == run.addr>>shard.GranuleShift {
			d := a - run.addr
			if run.n == 1 && d < 1<<31 {
				run.step = int32(d)
				run.n++
				slot++
				continue
			}
			if run.n > 1 && d == uint64(int64(run.step))*uint64(run.n) {
				run.n++
				slot++
				continue
			}
		}
		if run.n > 0 {
			if len(routed[runShard]) == 0 {
				*used = append(*used, int32(runShard))
			}
			routed[runShard] = append(routed[runShard], run)
		}
		var bv, cv uint64
		if p.b != nil {
			bv, _ = bi.Value(p.b[0], lane)
		}
		if p.c != nil {
			cv, _ = bi.Value(p.c[0], lane)
		}
		h := hasher.Hash(bi.mem, a)
		runShard = mem.ShardIndex(h)
		run = access{addr: a, h: h, b: bv >> p.srcShift, c: cv >> p.srcShift, slot: slot, mem: bi.mem,
			inst: uint32(ii), lane0: uint8(lane), n: 1, kind: p.kind, size: p.size, flags: fl}
		slot++
	}
	if len(routed[runShard]) == 0 {
		*used = append(*used, int32(runShard))
	}
	routed[runShard] = append(routed[runShard], run)
	var distinct, maxc uint32
	switch n := uint32(len(addrs)); {
	case list != nil:
		distinct, maxc = conflicts(addrs)
	case step == 0:
		distinct, maxc = 1, n // every lane on one address
	case mask == ^uint64(0) && (step < 1<<32 || -step < 1<<32):
		// Lanes l < 32 with a step of magnitude under 2^32: the differences
		// (l1-l2)*step are nonzero and under 2^37, so no two addresses
		// meet, even modulo 2^64.
		distinct, maxc = n, 1
	default:
		distinct, maxc = conflicts(addrs)
	}
	b.stats[ii] = InstStat{Seq: bi.Seq, Static: st, Group: bi.Group, Warp: bi.Warp,
		Lanes: uint32(bits.OnesCount32(bi.active)), Addresses: distinct, MaxConflict: maxc}
	return true, addrs
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
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i - 1
		for j >= 0 && a[j] > v {
			a[j+1] = a[j]
			j--
		}
		a[j+1] = v
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

// apply performs every access of the shards worker o owns (shard index
// modulo owners): shard by shard, and within a shard range by range, each
// range's accesses in the order expand made them, which is trace order.
// With a tracker, each shard's accesses are also counted for the addresses
// table, by the same owner, in the same order.
func (b *batch) apply(o, owners int, mem *shard.Memory, t *addrTracker) {
	for s := o; s < mem.Shards(); s += owners {
		sh := mem.Shard(s)
		for r := range b.routed {
			if acc := b.routed[r][s]; len(acc) > 0 {
				b.applyRun(sh, acc)
				if t != nil {
					t.observe(s, b, acc)
				}
			}
		}
	}
}

// applyRun performs accesses that all belong to shard sh, in order.
func (b *batch) applyRun(sh *shard.Shard, acc []access) {
	for i := range acc {
		a := &acc[i]
		blk := sh.Block(a.mem, a.addr, a.h)
		if a.n == 1 {
			var bhi, chi uint64
			if a.size == 16 {
				bhi, chi = b.bhi[a.slot], b.chi[a.slot]
			}
			ret, retHi := applyAt(blk, a.addr, a.kind, a.size, a.flags, a.b, a.c, bhi, chi)
			if a.flags&accNoDst == 0 {
				b.vals[a.slot], b.valsHi[a.slot] = ret, retHi
			}
			continue
		}
		bi := &b.insts[a.inst]
		p := bi.plan
		if a.size == 4 && a.kind == kAdd && a.step == 4 && p.srcShift == 0 {
			b.addRun32(blk, a, bi, p)
			continue
		}
		addr := a.addr
		for k := 0; k < int(a.n); k++ {
			lane := int(a.lane0) + k
			var bv, cv uint64
			if p.b != nil {
				bv, _ = bi.Value(p.b[0], lane)
			}
			if p.c != nil {
				cv, _ = bi.Value(p.c[0], lane)
			}
			bv, cv = bv>>p.srcShift, cv>>p.srcShift
			ret, _ := applyAt(blk, addr, a.kind, a.size, a.flags, bv, cv, 0, 0)
			if a.flags&accNoDst == 0 {
				b.vals[a.slot+uint32(k)] = ret
			}
			addr += uint64(int64(a.step))
		}
	}
}

// addRun32 is applyRun's loop for the commonest run: 32-bit adds to
// consecutive words (a coalesced atomicAdd), with the add inlined.
func (b *batch) addRun32(blk *shard.Block, a *access, bi *binst, p *plan) {
	w0 := int((a.addr & (shard.GranuleBytes - 1)) >> 2)
	n := int(a.n)
	words := blk.Words[w0 : w0+n : w0+n]
	blk.Touched |= (uint64(1)<<uint(n) - 1) << uint(w0) // n < 64: a run stays in one granule
	var imm uint32
	var vec *trace.Vector
	if p.b[0].In < 0 {
		imm = uint32(p.b[0].Imm)
	} else {
		vec = &bi.Vals[p.b[0].In]
		if vec.Kind == trace.VecBroadcast {
			imm, vec = uint32(vec.Base), nil
		}
	}
	retNew := a.flags&accRetNew != 0
	var res []uint64
	if a.flags&accNoDst == 0 {
		res = b.vals[a.slot : int(a.slot)+n : int(a.slot)+n]
	}
	for k := range words {
		v := imm
		if vec != nil {
			v = uint32(vec.Lo(int(a.lane0) + k))
		}
		old := words[k]
		words[k] = old + v
		if res != nil {
			if retNew {
				res[k] = uint64(old + v)
			} else {
				res[k] = uint64(old)
			}
		}
	}
}

// applyAt performs one access of size bytes at addr, inside blk, and
// returns what the lane gets back.
func applyAt(blk *shard.Block, addr uint64, k kind, size, flags uint8, b, c, bhi, chi uint64) (ret, retHi uint64) {
	wi := (addr & (shard.GranuleBytes - 1)) >> 2
	switch size {
	case 4:
		p := &blk.Words[wi]
		old := *p
		nw := op32(k, old, uint32(b), uint32(c))
		*p = nw
		blk.Touched |= 1 << wi
		ret = uint64(old)
		if flags&accRetNew != 0 {
			ret = uint64(nw)
		}
	case 8:
		old := uint64(blk.Words[wi]) | uint64(blk.Words[wi+1])<<32
		nw := op64(k, old, b, c)
		blk.Words[wi], blk.Words[wi+1] = uint32(nw), uint32(nw>>32)
		blk.Touched |= 3 << wi
		ret = old
		if flags&accRetNew != 0 {
			ret = nw
		}
	case 2:
		sh := (addr & 2) * 8
		p := &blk.Words[wi]
		old := uint16(*p >> sh)
		nw := op16(k, old, uint16(b), uint16(c))
		*p = *p&^(0xffff<<sh) | uint32(nw)<<sh
		blk.Touched |= 1 << wi
		ret = uint64(old)
		if flags&accRetNew != 0 {
			ret = uint64(nw)
		}
	case 1:
		sh := (addr & 3) * 8
		p := &blk.Words[wi]
		old := uint8(*p >> sh)
		nw := uint8(op16(k, uint16(old), uint16(b), uint16(c)))
		*p = *p&^(0xff<<sh) | uint32(nw)<<sh
		blk.Touched |= 1 << wi
		ret = uint64(old)
	case 16:
		w := blk.Words[wi : wi+4 : wi+4]
		oldLo := uint64(w[0]) | uint64(w[1])<<32
		oldHi := uint64(w[2]) | uint64(w[3])<<32
		nlo, nhi := op128(k, oldLo, oldHi, b, bhi, c, chi)
		w[0], w[1], w[2], w[3] = uint32(nlo), uint32(nlo>>32), uint32(nhi), uint32(nhi>>32)
		blk.Touched |= 0xf << wi
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
	}
	return oldLo, oldHi
}
