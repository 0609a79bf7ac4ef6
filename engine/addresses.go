package engine

import (
	"math"
	"math/bits"
	"sort"
	"unsafe"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// AddressStat is one row of the addresses table: an address that atomics
// touched, how often, from how many warps and groups, and whether another
// order of its accesses could leave a different final value.
type AddressStat struct {
	Space    trace.Space
	Group    int64 // the group for per-group spaces; -1 otherwise
	Addr     uint64
	Accesses uint64
	Warps    uint64 // distinct (group, warp) pairs
	Groups   uint64 // distinct groups
	// Exact is false when Warps or Groups is an estimate: past
	// exactDistinct distinct values a counter turns into a HyperLogLog.
	Exact bool
	// OrderSensitive is filled by WithExplore (false otherwise): true unless
	// the accesses provably commute.
	OrderSensitive bool
}

// AddressSink is an optional Sink method: a sink that has it gets the
// addresses table, once, at the end, sorted by (space, group, addr). The
// engine tracks addresses only for such a sink.
type AddressSink interface {
	WantsAddresses() bool
	Addresses(rows []AddressStat) error
}

// exactDistinct is how many distinct values a counter keeps exactly, in
// place; past it the counter is a HyperLogLog.
const exactDistinct = 4

// hllRegisters is the size of the estimator: standard error 1.04/sqrt(128),
// about 9%, and nearly exact for small counts (linear counting).
const hllRegisters = 128

// distinct counts distinct keys (pairs of 64-bit values): exactly up to
// exactDistinct, then with a HyperLogLog of hllRegisters one-byte
// registers, so an address costs a small, fixed amount of memory however
// many warps hit it. The registers live in a slab of the shard's (hll is an
// index into it, plus one), so the statistics hold no pointers and the
// collector never scans them.
type distinct struct {
	n    uint8
	hll  int32
	keys [exactDistinct][2]uint64
}

// hllSlab holds the registers of a shard's estimators.
type hllSlab [][hllRegisters]uint8

// add counts key and returns how many bytes the counter grew by.
func (d *distinct) add(key [2]uint64, slab *hllSlab) (grew uint64) {
	if d.hll != 0 {
		hllAdd(&(*slab)[d.hll-1], key)
		return 0
	}
	for _, k := range d.keys[:d.n] {
		if k == key {
			return 0
		}
	}
	if int(d.n) < exactDistinct {
		d.keys[d.n] = key
		d.n++
		return 0
	}
	*slab = append(*slab, [hllRegisters]uint8{})
	d.hll = int32(len(*slab))
	regs := &(*slab)[d.hll-1]
	for _, k := range d.keys {
		hllAdd(regs, k)
	}
	hllAdd(regs, key)
	return hllRegisters
}

// hllAdd records key in the registers. The hash is SplitMix64's finalizer
// over the two words: uniform enough for an estimator, and cheap.
func hllAdd(regs *[hllRegisters]uint8, key [2]uint64) {
	h := key[0] ^ (key[1]+0x9e3779b97f4a7c15)*0xbf58476d1ce4e5b9
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	h ^= h >> 31
	reg := h >> (64 - 7) // 128 registers
	rank := uint8(bits.LeadingZeros64(h<<7|1<<6)) + 1
	if rank > regs[reg] {
		regs[reg] = rank
	}
}

// count returns the number of distinct keys and whether it is exact.
func (d *distinct) count(slab hllSlab) (uint64, bool) {
	if d.hll == 0 {
		return uint64(d.n), true
	}
	const m = hllRegisters
	sum, zeros := 0.0, 0
	for _, r := range slab[d.hll-1] {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	est := 0.7213 / (1 + 1.079/m) * m * m / sum
	if est <= 2.5*m && zeros > 0 { // small range: linear counting
		est = m * math.Log(float64(m)/float64(zeros))
	}
	return uint64(math.Round(est)), false
}

// addrStat accumulates one address.
type addrStat struct {
	mem      uint32
	addr     uint64
	accesses uint64
	warps    distinct
	groups   distinct
	// For the order analysis: the first access's function, whether every
	// later one was the same, and the commuting family of all of them.
	kind     kind
	b, c     uint64
	same     bool
	family   uint8
	sensible bool // family holds
}

// addrKey names an address of a memory instance.
type addrKey struct {
	mem  uint32
	addr uint64
}

// addrShard holds the statistics of the addresses of one memory shard; only
// the shard's owner touches it while a batch applies.
type addrShard struct {
	index map[addrKey]int32
	stats []addrStat
	hll   hllSlab
	bytes uint64 // what index, stats and hll hold, roughly
}

// addrTracker is the addresses table under construction.
type addrTracker struct {
	shards  []addrShard
	explore bool
}

func newAddrTracker(shards int, explore bool) *addrTracker {
	t := &addrTracker{shards: make([]addrShard, shards), explore: explore}
	for i := range t.shards {
		t.shards[i].index = map[addrKey]int32{}
	}
	return t
}

// Commuting families: accesses of one family, in any order, leave the same
// final value (wrapping integer addition and subtraction; one bitwise
// operation; one min or max).
const (
	famNone uint8 = iota
	famAdd
	famAnd
	famOr
	famXor
	famMinU
	famMinS
	famMaxU
	famMaxS
)

func familyOf(k kind) uint8 {
	switch k {
	case kAdd, kSub:
		return famAdd
	case kAnd:
		return famAnd
	case kOr:
		return famOr
	case kXor:
		return famXor
	case kMinU:
		return famMinU
	case kMinS:
		return famMinS
	case kMaxU:
		return famMaxU
	case kMaxS:
		return famMaxS
	}
	return famNone
}

// observe records the accesses one owner applied from one route (in
// order), each in the statistics of its page's shard.
func (t *addrTracker) observe(b *batch, rt *route, mem *shard.Memory) {
	for k, s := range rt.segs {
		hi := uint32(len(rt.recs))
		if k+1 < len(rt.segs) {
			hi = rt.segs[k+1].lo
		}
		bi := &b.insts[s.inst]
		p := bi.plan
		if p.plain {
			continue // LSC's plain loads and stores are not atomics
		}
		fam := familyOf(p.kind)
		recs := rt.recs[s.lo:hi]
		for _, x := range recs {
			pg := mem.Page(x.word >> (shard.PageShift - 2))
			sh := &t.shards[pg.Shard]
			addr := pg.Num<<shard.PageShift | uint64(x.word&(shard.PageWords-1))<<2
			if !s.vals {
				addr |= uint64(x.slot >> slotBits)
			}
			lanes := uint32(1)
			if s.n > 0 {
				lanes = s.n
			}
			for l := uint32(0); l < lanes; l++ {
				slot := x.slot&slotMask + l
				if l > 0 && s.step != 0 {
					addr += uint64(int64(s.step) * 4)
				}
				key := addrKey{bi.mem, addr}
				idx, ok := sh.index[key]
				if !ok {
					idx = int32(len(sh.stats))
					sh.index[key] = idx
					if len(sh.stats) == cap(sh.stats) {
						sh.bytes += uint64(cap(sh.stats)+1) * uint64(unsafe.Sizeof(addrStat{})) // the slice doubles
					}
					sh.stats = append(sh.stats, addrStat{mem: bi.mem, addr: addr})
					sh.bytes += 48 // its map entry
				}
				st := &sh.stats[idx]
				st.accesses++
				sh.bytes += st.warps.add([2]uint64{uint64(bi.Group), uint64(bi.Warp)}, &sh.hll)
				sh.bytes += st.groups.add([2]uint64{uint64(bi.Group)}, &sh.hll)
				if t.explore {
					bv, cv := bi.bVal, bi.cVal
					if s.vals {
						bv = uint64(x.slot)
					} else if !bi.bUni {
						bv = b.opB[slot]
					}
					if !bi.cUni {
						cv = b.opC[slot]
					}
					if st.accesses == 1 {
						// 128-bit operands are not compared: never "the same".
						st.kind, st.b, st.c, st.same = p.kind, bv, cv, p.size != 16
						st.family, st.sensible = fam, fam != famNone
					} else {
						st.same = st.same && p.kind == st.kind && bv == st.b && cv == st.c
						st.sensible = st.sensible && fam == st.family
					}
				}
			}
		}
	}
}

// bytes is the memory the tracker holds, as its shards counted it.
func (t *addrTracker) bytes() uint64 {
	var n uint64
	for s := range t.shards {
		n += t.shards[s].bytes
	}
	return n
}

// rows returns every tracked address, sorted by (space, group, addr).
func (t *addrTracker) rows(keys []memKey) []AddressStat {
	var out []AddressStat
	for s := range t.shards {
		for i := range t.shards[s].stats {
			st := &t.shards[s].stats[i]
			k := keys[st.mem]
			w, we := st.warps.count(t.shards[s].hll)
			g, ge := st.groups.count(t.shards[s].hll)
			r := AddressStat{Space: k.space, Group: k.group, Addr: st.addr, Accesses: st.accesses,
				Warps: w, Groups: g, Exact: we && ge}
			if t.explore {
				r.OrderSensitive = !st.same && !st.sensible
			}
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if sa, sb := a.Space.String(), b.Space.String(); sa != sb {
			return sa < sb
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Addr < b.Addr
	})
	return out
}
