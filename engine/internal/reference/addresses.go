package reference

import (
	"maps"
	"slices"

	"github.com/gpureplay/replay/trace"
)

// addrTable is the addresses table under construction (docs/OUTPUT.md,
// addresses): one row per address atomics touched, with plain sets of the
// warps and groups, so the counts are exact.
type addrTable struct {
	rows map[place]*addrRow
}

type addrRow struct {
	accesses uint64
	warps    map[[2]int64]bool
	groups   map[int64]bool
	// The order analysis: the first access's operation, width and
	// operands, and whether every later one was the same (same), and
	// whether all are of one commuting family at one width (commuting: a
	// 16-bit and a 32-bit add at one address do not commute, the carry
	// out of the low half differing).
	op        string
	width     int
	b, c      wide
	family    string
	same      bool
	commuting bool
}

func newAddrTable() *addrTable { return &addrTable{rows: map[place]*addrRow{}} }

// count adds one atomic access to its address's row. A .init is no access
// and does not come here; nor do LSC's plain loads and stores ("One row per
// (space, group, addr) that atomics touched (LSC's plain loads and stores
// do not count)").
func (t *addrTable) count(at place, in *trace.Inst, r *rule, b, c wide) {
	row := t.rows[at]
	if row == nil {
		row = &addrRow{warps: map[[2]int64]bool{}, groups: map[int64]bool{},
			op: r.op, width: r.width, b: b, c: c, family: r.family, same: true, commuting: r.family != ""}
		t.rows[at] = row
	}
	row.accesses++
	row.warps[[2]int64{in.Group, in.Warp}] = true
	row.groups[in.Group] = true
	row.same = row.same && r.op == row.op && r.width == row.width && b == row.b && c == row.c
	row.commuting = row.commuting && r.family == row.family && r.width == row.width
}

// table is the addresses table, sorted like memory. With explore, an
// address is order-sensitive "unless the accesses provably commute (every
// one the same operation with the same operands, or all of one commuting
// family: integer add and sub, one bitwise operation, one min, one max)".
func (t *addrTable) table(explore bool) []AddressStat {
	keys := slices.SortedFunc(maps.Keys(t.rows), comparePlaces)
	out := make([]AddressStat, 0, len(keys))
	for _, k := range keys {
		row := t.rows[k]
		out = append(out, AddressStat{Space: k.space, Group: k.group, Addr: k.addr,
			Accesses: row.accesses, Warps: uint64(len(row.warps)), Groups: uint64(len(row.groups)),
			Exact: true, OrderSensitive: explore && !row.same && !row.commuting})
	}
	return out
}
