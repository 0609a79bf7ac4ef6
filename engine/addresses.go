package engine

import (
	"math"
	"math/bits"
	"sort"
	"unsafe"

	"github.com/cespare/xxhash/v2"

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

// A counter keeps its first distinct values in a slice, then in a map up
// to exactDistinct of them, then only an estimate.
const (
	smallDistinct = 8
	exactDistinct = 1024
)

// distinct counts distinct keys (pairs of 64-bit values): exactly up to
// exactDistinct, then with a HyperLogLog of 256 registers (standard error
// 1.04/16 = 6.5%), so a hot address costs at most a fixed amount.
type distinct struct {
	keys []([2]uint64)
	set  map[[2]uint64]struct{}
	hll  *[256]uint8
}

// add counts key and returns roughly how many bytes the counter grew by.
func (d *distinct) add(key [2]uint64) (grew uint64) {
	switch {
	case d.hll != nil:
		d.hllAdd(key)
	case d.set != nil:
		n := len(d.set)
		d.set[key] = struct{}{}
		if len(d.set) > n {
			grew = 40 // a map entry of a 16-byte key
		}
		if len(d.set) > exactDistinct {
			d.hll = new([256]uint8)
			for k := range d.set {
				d.hllAdd(k)
			}
			d.set = nil
			grew += 256
		}
	default:
		for _, k := range d.keys {
			if k == key {
				return 0
			}
		}
		if len(d.keys) < smallDistinct {
			d.keys = append(d.keys, key)
			return 16
		}
		d.set = make(map[[2]uint64]struct{}, 2*smallDistinct)
		for _, k := range d.keys {
			d.set[k] = struct{}{}
		}
		d.set[key] = struct{}{}
		d.keys = nil
		grew = 40 * 2 * smallDistinct
	}
	return grew
}

func (d *distinct) hllAdd(key [2]uint64) {
	var buf [16]byte
	for i := 0; i < 8; i++ {
		buf[i], buf[8+i] = byte(key[0]>>(8*i)), byte(key[1]>>(8*i))
	}
	h := xxhash.Sum64(buf[:])
	reg := h >> 56
	rank := uint8(bits.LeadingZeros64(h<<8|1<<7)) + 1
	if rank > d.hll[reg] {
		d.hll[reg] = rank
	}
}

// count returns the number of distinct keys and whether it is exact.
func (d *distinct) count() (uint64, bool) {
	switch {
	case d.set != nil:
		return uint64(len(d.set)), true
	case d.hll == nil:
		return uint64(len(d.keys)), true
	}
	const m = 256
	sum, zeros := 0.0, 0
	for _, r := range d.hll {
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
	bytes uint64 // what index and stats hold, roughly
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

// observe records the accesses of shard s (already applied, in order).
func (t *addrTracker) observe(s int, b *batch, acc []access) {
	sh := &t.shards[s]
	for i := range acc {
		a := &acc[i]
		bi := &b.insts[a.inst]
		p := bi.plan
		if p.plain {
			continue // LSC's plain loads and stores are not atomics
		}
		addr := a.addr
		for k := 0; k < int(a.n); k++ {
			lane := int(a.lane0) + k
			key := addrKey{a.mem, addr}
			idx, ok := sh.index[key]
			if !ok {
				idx = int32(len(sh.stats))
				sh.index[key] = idx
				sh.stats = append(sh.stats, addrStat{mem: a.mem, addr: addr})
				sh.bytes += uint64(unsafe.Sizeof(addrStat{})) + 48 // the stat and its map entry
			}
			st := &sh.stats[idx]
			st.accesses++
			sh.bytes += st.warps.add([2]uint64{uint64(bi.Group), uint64(bi.Warp)})
			sh.bytes += st.groups.add([2]uint64{uint64(bi.Group)})
			if t.explore {
				bv, cv := a.b, a.c
				if a.n > 1 {
					bv, cv = 0, 0
					if p.b != nil {
						bv, _ = bi.Value(p.b[0], lane)
					}
					if p.c != nil {
						cv, _ = bi.Value(p.c[0], lane)
					}
					bv, cv = bv>>p.srcShift, cv>>p.srcShift
				}
				fam := familyOf(a.kind)
				if st.accesses == 1 {
					// 128-bit operands are not compared: never "the same".
					st.kind, st.b, st.c, st.same = a.kind, bv, cv, a.size != 16
					st.family, st.sensible = fam, fam != famNone
				} else {
					st.same = st.same && a.kind == st.kind && bv == st.b && cv == st.c
					st.sensible = st.sensible && fam == st.family
				}
			}
			addr += uint64(int64(a.step))
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
			w, we := st.warps.count()
			g, ge := st.groups.count()
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
