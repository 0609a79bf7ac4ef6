package engine

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
	"github.com/gpureplay/replay/trace/workload"
)

// TestAddressesSimpleAtomics: every one of the eleven words is hit by all
// 16384 threads, from 64 blocks of 8 warps; with WithExplore the order
// analysis marks exactly the calls whose result depends on the order.
func TestAddressesSimpleAtomics(t *testing.T) {
	var c Collector
	src, err := readFile(simpleAtomicsFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Replay(t.Context(), textSource(t, src), &c, WithExplore(true), WithWorkers(2)); err != nil {
		t.Fatal(err)
	}
	// add +10 and sub -10 repeat one function; max, min, and, or, xor
	// each stay in one commuting family; inc by 17 and dec by 137 repeat
	// one function; exch and cas carry each thread's own values.
	sensitive := []bool{false, false, true, false, false, false, false, true, false, false, false}
	if len(c.Addrs) != 11 {
		t.Fatalf("%d address rows, want 11", len(c.Addrs))
	}
	for i, a := range c.Addrs {
		// 512 warps and 64 groups are past the exact counters: estimates
		// (deterministic: the keys' hashes are fixed) within two standard
		// errors (warps 15.7%, groups 23.9%: sketch.go), marked so.
		if a.Space.String() != "global" || a.Group != -1 || a.Addr != saBase+uint64(4*i) ||
			a.Accesses != saLen || a.Warps < 352 || a.Warps > 672 || a.Groups < 34 || a.Groups > 94 || a.Exact {
			t.Errorf("row %d: %+v, want 0x%x with %d accesses from ~512 warps in ~64 groups, estimated", i, a, saBase+4*i, saLen)
		}
		if a.OrderSensitive != sensitive[i] {
			t.Errorf("row %d (0x%x): order_sensitive %v, want %v", i, a.Addr, a.OrderSensitive, sensitive[i])
		}
	}
	// Without WithExplore the column stays false.
	var plain Collector
	if _, err := Replay(t.Context(), textSource(t, src), &plain); err != nil {
		t.Fatal(err)
	}
	for _, a := range plain.Addrs {
		if a.OrderSensitive {
			t.Fatalf("order_sensitive set without WithExplore: %+v", a)
		}
	}
}

// TestAddressesEstimate: past a few distinct warps an address's counts are
// a HyperLogLog estimate, within 15%, and say so; a few are exact.
func TestAddressesEstimate(t *testing.T) {
	var b strings.Builder
	for g := 0; g < 600; g++ {
		fmt.Fprintf(&b, ".group %d\n", g)
		for w := 0; w < 4; w++ {
			fmt.Fprintf(&b, ".warp %d\natom.global.add.u32 d, [a], 1 | a=0x100 mask=1\n", w)
		}
	}
	var c Collector
	if _, err := Replay(t.Context(), textSource(t, b.String()), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Addrs) != 1 {
		t.Fatalf("%d rows", len(c.Addrs))
	}
	a := c.Addrs[0]
	if a.Exact || a.Accesses != 2400 {
		t.Errorf("%+v: want 2400 accesses, estimated", a)
	}
	// Within two standard errors (sketch.go).
	if a.Warps < 2400*68/100 || a.Warps > 2400*132/100 {
		t.Errorf("estimated %d warps, exactly 2400", a.Warps)
	}
	if a.Groups < 600*52/100 || a.Groups > 600*148/100 {
		t.Errorf("estimated %d groups, exactly 600", a.Groups)
	}
	// Three warps of one group: exact.
	var few Collector
	src := ".warp 0\natom.global.add.u32 d, [a], 1 | a=0x100 mask=3\n.warp 1\natom.global.add.u32 d, [a], 1 | a=0x100\n.warp 2\natom.global.add.u32 d, [a], 1 | a=0x100\n"
	if _, err := Replay(t.Context(), textSource(t, src), &few); err != nil {
		t.Fatal(err)
	}
	if a := few.Addrs[0]; a.Accesses != 66 || a.Warps != 3 || a.Groups != 1 || !a.Exact {
		t.Errorf("%+v: want 66 accesses from exactly 3 warps in 1 group", a)
	}
}

// noAddrs is a Collector that does not want the addresses table (and
// takes the memory table as Words).
type noAddrs struct{ Collector }

func (*noAddrs) Caps() SinkCaps { return CapResults }

// TestAddressesCountTowardMaxMemory: the addresses table's statistics are
// memory the replay holds, and the limit sees them.
func TestAddressesCountTowardMaxMemory(t *testing.T) {
	var b strings.Builder
	// 40 pages, every word of each: 40960 addresses (about 2.4 MiB of
	// statistics) in 160 KiB of memory.
	for w := 0; w < 40*1024/32; w++ {
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], 1 | a=0x%x:4\n", w*128)
	}
	// Their 40960 items fit one window of the counters': the limit has
	// them counted (flushWindows) when their entries could pass it.
	for _, workers := range []int{1, 2} {
		var with Collector
		_, err := Replay(t.Context(), textSource(t, b.String()), &with, WithMaxMemory(1<<20), WithBatchInsts(8), WithWorkers(workers))
		if err == nil || !strings.Contains(err.Error(), "over the 1 MiB limit (WithMaxMemory)") {
			t.Errorf("tracking 40960 addresses under a 1 MiB limit, %d workers: %v", workers, err)
		}
	}
	var without noAddrs
	if _, err := Replay(t.Context(), textSource(t, b.String()), &without, WithMaxMemory(1<<20)); err != nil {
		t.Errorf("without the addresses table: %v", err)
	}
}

// TestAddressEstimatesBounded: an address's estimated warps never pass its
// accesses, its groups never its warps: 300 addresses, each hit once by
// each of 8 to 14 warps (past the 7 counted exactly) of as many groups.
func TestAddressEstimatesBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x1000\n")
	for a := 0; a < 300; a++ {
		for w := 0; w < 8+a%7; w++ {
			fmt.Fprintf(&b, ".group %d\n.warp %d\natom.global.add.u32 d, [a], 1; | a=0x%x mask=0x1\n", w, a, 0x1000+4*a)
		}
	}
	var c Collector
	if _, err := Replay(t.Context(), textSource(t, b.String()), &c); err != nil {
		t.Fatal(err)
	}
	estimated := 0
	for _, r := range c.Addrs {
		if r.Warps > r.Accesses || r.Groups > r.Warps {
			t.Errorf("0x%x: %d accesses, %d warps, %d groups", r.Addr, r.Accesses, r.Warps, r.Groups)
		}
		if !r.Exact {
			estimated++
		}
	}
	if len(c.Addrs) != 300 || estimated != 300 {
		t.Errorf("%d addresses, %d estimated; want 300 and 300", len(c.Addrs), estimated)
	}
}

// TestOrderSensitiveAtWidth checks that the order analysis compares
// operands as the operation sees them: a 16-bit atomic only the low half
// of its 32-bit source, a 128-bit one both halves. Each trace's accesses
// to 0x100 are the same operation with the same operands at that width,
// so every order leaves the same value, except where a case says not.
func TestOrderSensitiveAtWidth(t *testing.T) {
	cases := []struct {
		name, src string
		want      bool
	}{
		{"vISA CMPXCHG.16, sources equal in their low halves",
			"DWORD_ATOMIC.CMPXCHG.16 (2) T255 V1 V2 V3 V4 | V1=0x100 V2=[0x10007,0x7] V3=5", false},
		{"vISA CMPXCHG.16, sources differ in their low halves",
			"DWORD_ATOMIC.CMPXCHG.16 (2) T255 V1 V2 V3 V4 | V1=0x100 V2=[0x10007,0x8] V3=5", true},
		{"LSC icas d16u32, compare values equal in their low halves",
			"lsc_atomic_icas.ugm (M1,2) V13:d16u32 flat[V12]:a64 V14 V15 | V12=0x100 V14=[0x10005,5] V15=7", false},
		{"PTX exch.b128, one value", "atom.global.exch.b128 d, [a], b; | a=0x100 b=0x20000000000000001 mask=3", false},
		{"PTX exch.b128, values differing in the high half", "atom.global.exch.b128 d, [a], b; | a=0x100 b=[0x20000000000000001,0x30000000000000001" + strings.Repeat(",0", 30) + "] mask=3", true},
		{"PTX cas.b128, one access", "atom.global.cas.b128 d, [a], b, c; | a=0x100 b=0 c=0x10000000000000001 mask=1", false},
		// One operation at two widths is two operations: a 32- and a
		// 128-bit exch of one value, a 32- and a 64-bit add (whose carries
		// differ by order).
		{"PTX exch.b32 and exch.b128 of one value",
			"atom.global.exch.b32 d, [a], b; | a=0x100 b=2 mask=1\natom.global.exch.b128 d, [a], b; | a=0x100 b=2 mask=1", true},
		{"PTX add.u32 and add.u64", "atom.global.add.u32 _, [a], b; | a=0x100 b=1 mask=1\natom.global.add.u64 _, [a], b; | a=0x100 b=5 mask=1", true},
		{"PTX add.u32 twice, other values", "atom.global.add.u32 _, [a], b; | a=0x100 b=1 mask=1\natom.global.add.u32 _, [a], b; | a=0x100 b=5 mask=1", false},
	}
	for _, c := range cases {
		for _, opts := range engineOptSets[:2] {
			var col Collector
			if _, err := Replay(t.Context(), textSource(t, c.src), &col, append(opts, WithExplore(true))...); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if len(col.Addrs) != 1 || col.Addrs[0].Addr != 0x100 {
				t.Fatalf("%s: addresses %+v, want one row for 0x100", c.name, col.Addrs)
			}
			if got := col.Addrs[0].OrderSensitive; got != c.want {
				t.Errorf("%s: order_sensitive %v, want %v", c.name, got, c.want)
			}
		}
		equalToReference(t, c.src, engineOptSets[:2]...)
	}
}

// TestAddressAccessesCarry: an entry keeps the low 32 bits of its accesses
// and its page the carries, so a count past 2^32 (a long hot trace) comes
// out whole, for an aligned address and a sub-word one of the same word,
// whose chain the carry must not disturb.
func TestAddressAccessesCarry(t *testing.T) {
	tr := newAddrTracker(1, false, 1)
	defer tr.release()
	tr.window = 0 // each count counts: the test sets entries between them
	tr.grow(1)
	b := &batch{insts: make([]binst, 1)}
	const word = 5
	count := func(sub uint8, n uint8) {
		tr.lists[0] = append(tr.lists[0], newStatItem(word, 0, uint32(n), sub))
		tr.count(0, b)
	}
	count(0, 1)
	count(2, 3)
	ps := tr.pages.at(0)
	// Just below the wrap: 2^32-2 accesses at the word, 2^33-1 (one carry
	// already) at its byte 2.
	ps.entry(0).accesses = 1<<32 - 2
	ps.entry(1).accesses = 1<<32 - 1
	ps.carry(1)
	count(0, 200)
	count(2, 1)
	count(2, 1)
	rows := tr.rows(nil, []shard.PageRef{{Ref: 0, Base: 0x4000}}, []memKey{{space: trace.Global, group: -1}},
		newSketchCounter(warpRegs), newSketchCounter(groupRegs))
	want := []struct {
		addr, accesses uint64
	}{{0x4000 + 4*word, 1<<32 + 198}, {0x4000 + 4*word + 2, 2<<32 + 1}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		if rows[i].Addr != w.addr || rows[i].Accesses != w.accesses {
			t.Errorf("row %d: address 0x%x, %d accesses; want 0x%x, %d", i, rows[i].Addr, rows[i].Accesses, w.addr, w.accesses)
		}
	}
}

// TestAddressesCountersSameTable: the addresses table counted on counter
// goroutines (more than one worker), batch after batch while pages are
// added (more of them than a page table's chunk holds), is the table one
// worker counts in its compute stage, row for row and estimate for
// estimate: scattered accesses over 640 pages (the first hotPages of them
// shared between the counters word by word, the others a page to a
// counter), and hot ones (about twelve warps an address) over 16, all
// shared, whose sketches turn into registers; and 96 pages that fill
// (dense pages, past the first hotPages on any number of workers), also
// with pages that turn dense at their first address and with pages that
// never do; and with the counters' windows in off-heap blocks.
func TestAddressesCountersSameTable(t *testing.T) {
	for _, s := range []workload.Spec{
		{Name: "uniform", Dialect: trace.DialectPTX, Seed: 7, LaneOps: 300_000, Words: 640 * shard.PageWords},
		{Name: "uniform", Dialect: trace.DialectSASS, Seed: 8, LaneOps: 200_000, Words: 16 * shard.PageWords},
		{Name: "uniform", Dialect: trace.DialectPTX, Seed: 9, LaneOps: 400_000, Words: 96 * shard.PageWords},
	} {
		var tables [][]AddressStat
		for _, opts := range [][]Option{
			{WithWorkers(1)},
			{WithWorkers(2), WithBatchInsts(64)},
			{WithWorkers(3), WithShards(5), WithBatchInsts(200)},
			{WithWorkers(2)},
			{WithWorkers(1), withDenseAt(-1)},
			{WithWorkers(2), WithBatchInsts(300), withDenseAt(1)},
			{WithWorkers(1), WithBatchInsts(100), withDenseAt(1)},
			// Many windows, counted when full or when the next batch's
			// instructions do not fit.
			{WithWorkers(2), WithBatchInsts(100), withAddrWindow(5000, 1000)},
			{WithWorkers(1), WithBatchInsts(64), withAddrWindow(1<<16, 200)},
			{WithWorkers(3), WithShards(7), withAddrWindow(3000, 1<<16)},
			// Their buffers in off-heap blocks (itemBuf).
			{WithWorkers(2), WithBatchInsts(100), withAddrWindow(5000, 1000), withItemBlocks(1000)},
			{WithWorkers(1), WithBatchInsts(64), withItemBlocks(2000)},
		} {
			gen, err := workload.New(s)
			if err != nil {
				t.Fatal(err)
			}
			var c Collector
			if _, err := Replay(t.Context(), gen, &c, opts...); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, c.Addrs)
		}
		estimates := 0
		for _, a := range tables[0] {
			if !a.Exact {
				estimates++
			}
		}
		full := map[uint64]int{} // addresses a page
		for _, a := range tables[0] {
			full[a.Addr>>shard.PageShift]++
		}
		dense := 0
		for _, n := range full {
			if n >= denseEntries {
				dense++
			}
		}
		if s.Words == 640*shard.PageWords && len(tables[0]) < 100_000 || s.Words == 16*shard.PageWords && estimates < 10_000 ||
			s.Words == 96*shard.PageWords && dense < 80 {
			t.Fatalf("%d words: %d rows, %d estimated: not the table this test is for", s.Words, len(tables[0]), estimates)
		}
		for k, tab := range tables[1:] {
			if !slices.Equal(tab, tables[0]) {
				i := 0
				for i < min(len(tab), len(tables[0])) && tab[i] == tables[0][i] {
					i++
				}
				t.Fatalf("%d words, options %d: %d rows, one worker %d; first difference at row %d: %+v, want %+v", s.Words, k+1, len(tab), len(tables[0]), i,
					tab[min(i, len(tab)-1)], tables[0][min(i, len(tables[0])-1)])
			}
		}
	}
}

// failingAddrs is a Collector whose Addresses fails from its call after:
// the table stops there.
type failingAddrs struct {
	Collector
	calls, after, rows int
}

func (f *failingAddrs) Addresses(rows []AddressStat) error {
	if f.calls++; f.calls > f.after {
		return fmt.Errorf("disk full at call %d", f.calls)
	}
	f.rows += len(rows)
	return f.Collector.Addresses(rows)
}

// TestAddressesEmitStopsAtSinkError: a wave of the table's rows is built
// while the one before it is handed over (emit); when the sink fails, the
// replay returns its error, having handed over no more, and releases the
// statistics only once the wave being built is done (it reads them: were
// they unmapped first, the replay would crash). 24 pages of every word:
// 24576 rows, several waves for one worker and for two.
func TestAddressesEmitStopsAtSinkError(t *testing.T) {
	var b strings.Builder
	for w := 0; w < 24*shard.PageWords/32; w++ {
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], 1 | a=0x%x:4\n", w*128)
	}
	for _, workers := range []int{1, 2} {
		for _, after := range []int{0, 1, 2} {
			f := &failingAddrs{after: after}
			_, err := Replay(t.Context(), textSource(t, b.String()), f, WithWorkers(workers))
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("disk full at call %d", after+1)) {
				t.Errorf("%d workers, failing after %d calls: %v", workers, after, err)
			}
			if f.calls != after+1 || f.rows != after*emitChunk {
				t.Errorf("%d workers, failing after %d calls: %d calls, %d rows; want %d and %d", workers, after, f.calls, f.rows, after+1, after*emitChunk)
			}
		}
	}
}

// TestAddressCountRuns: count takes a page's items a run at a time (at
// most countRun, cut where the page changes). Items of two pages that
// share a sort bucket (past 4096 pages a bucket holds two), interleaved;
// a page with hundreds of items on a few words (runs cut at countRun,
// an address in several); scattered items at sub-word addresses too;
// over three batches: every address's accesses, warps and groups are
// those a map of them gives. The batches (2500 items, 64 instructions
// each, every batch's of other groups) are counted one at a time (window
// 0); in windows that count when full (4000 items: the first two
// batches, then the last) or when the next batch's instructions do not
// fit (100: each batch alone, counted as the next comes); and in one
// window, counted by finish. Each also with its windows and sort buffers
// in off-heap blocks from 1000 items (itemBuf), as a large replay's are.
func TestAddressCountRuns(t *testing.T) {
	for _, w := range [][2]int{{0, 0}, {4000, maxWindowInsts}, {countWindow, 100}, {countWindow, maxWindowInsts}} {
		for _, blockItems := range []int{itemBlockItems, 1000} {
			t.Run(fmt.Sprintf("window%d-insts%d-blocks%d", w[0], w[1], blockItems), func(t *testing.T) {
				testAddressCountRuns(t, w[0], w[1], blockItems)
			})
		}
	}
}

func testAddressCountRuns(t *testing.T, window, windowInsts, blockItems int) {
	const pages = 5000
	tr := newAddrTracker(1, false, 1)
	defer tr.release()
	tr.window, tr.windowInsts, tr.blockItems = window, windowInsts, blockItems
	tr.grow(pages)
	r := rand.New(rand.NewPCG(5, 6))
	type key struct {
		word uint32
		sub  uint8
	}
	type want struct {
		accesses      uint64
		warps, groups map[int64]bool
	}
	wants := map[key]*want{}
	for batchNo := range 3 {
		b := &batch{insts: make([]binst, 64)}
		for i := range b.insts {
			b.insts[i].Group, b.insts[i].Warp = int64(batchNo*100+i/4), int64(i)
		}
		add := func(ref, w uint32, sub uint8) {
			it := newStatItem(ref<<(shard.PageShift-2)|w, uint32(r.IntN(len(b.insts))), uint32(1+r.IntN(3)), sub)
			tr.lists[0] = append(tr.lists[0], it)
			k := key{it.word, sub}
			if wants[k] == nil {
				wants[k] = &want{warps: map[int64]bool{}, groups: map[int64]bool{}}
			}
			bi := &b.insts[it.inst()]
			wants[k].accesses += uint64(it.n())
			wants[k].warps[bi.Group<<32|bi.Warp] = true
			wants[k].groups[bi.Group] = true
		}
		for i := range 200 {
			add(4096+uint32(i%2), uint32(r.IntN(shard.PageWords)), 0)
		}
		for range 300 {
			add(7, uint32(r.IntN(3)), 0)
		}
		for range 2000 {
			add(uint32(r.IntN(pages)), uint32(r.IntN(shard.PageWords)), []uint8{0, 0, 0, 1, 2}[r.IntN(5)])
		}
		tr.count(0, b)
	}
	tr.finish()
	if blocks := len(tr.itemBlocks[0]); window > 0 && blockItems < 2500 && blocks == 0 {
		t.Errorf("no item buffer in a block, with blocks from %d items and batches of 2500", blockItems)
	}
	refs := make([]shard.PageRef, pages)
	keys := []memKey{{space: trace.Global, group: -1}}
	for i := range refs {
		refs[i] = shard.PageRef{Ref: uint32(i), Base: uint64(i) << shard.PageShift}
	}
	rows := tr.rows(nil, refs, keys, newSketchCounter(warpRegs), newSketchCounter(groupRegs))
	if len(rows) != len(wants) {
		t.Fatalf("%d rows, want %d", len(rows), len(wants))
	}
	exact := 0
	for _, row := range rows {
		w := wants[key{uint32(row.Addr >> 2), uint8(row.Addr & 3)}]
		if w == nil {
			t.Fatalf("row %+v: no such address counted", row)
		}
		if row.Accesses != w.accesses {
			t.Errorf("0x%x: %d accesses, want %d", row.Addr, row.Accesses, w.accesses)
		}
		if row.Exact {
			exact++
			if row.Warps != uint64(len(w.warps)) || row.Groups != uint64(len(w.groups)) {
				t.Errorf("0x%x: %d warps, %d groups, exactly; want %d and %d", row.Addr, row.Warps, row.Groups, len(w.warps), len(w.groups))
			}
		}
	}
	if exact < len(rows)/2 {
		t.Errorf("%d of %d rows exact: the test checks too few", exact, len(rows))
	}
}

// TestAddressesDensePages: a page that fills with aligned addresses turns
// dense, and the table is the one a tracker that keeps every page sparse
// gives, row for row: accesses (a count that carries past 2^32 while the
// page is sparse, and after), warps and groups. Page 3 fills over two
// batches and then gets sub-word addresses (a dense page's chains); page
// 5 gets a sub-word address (after its word's own, in a chain) before
// it fills and stays sparse; page 6 never fills; page 7's first count
// brings 600 aligned words, and it is made dense at once (newDense),
// without an index, then gets a sub-word address.
func TestAddressesDensePages(t *testing.T) {
	dense, sparse := newAddrTracker(1, false, 1), newAddrTracker(1, false, 1)
	defer dense.release()
	defer sparse.release()
	sparse.denseAt = 0
	const pages = 8
	for _, tr := range []*addrTracker{dense, sparse} {
		tr.window = 0 // each count counts: the test sets entries between them
		tr.grow(pages)
	}
	const carried = 17 // the word of page 3 whose count carries
	r := rand.New(rand.NewPCG(7, 8))
	for batchNo := range 4 {
		b := &batch{insts: make([]binst, 64)}
		for i := range b.insts {
			b.insts[i].Group, b.insts[i].Warp = int64(batchNo*10+i/8), int64(batchNo*64+i)
		}
		var items []statItem
		add := func(ref, w uint32, sub uint8) {
			items = append(items, newStatItem(ref<<(shard.PageShift-2)|w, uint32(r.IntN(len(b.insts))), uint32(1+r.IntN(200)), sub))
		}
		switch batchNo {
		case 0: // page 3 holds 400 words, page 5 a sub-word address and 999 words, page 7 600 words
			for w := range uint32(400) {
				add(3, w, 0)
			}
			add(5, 2, 1)
			for w := range uint32(999) {
				add(5, w, 0)
			}
			for w := range uint32(600) {
				add(7, w, 0)
			}
		case 1: // page 3 fills and turns dense at the end of the count
			for w := uint32(400); w < 900; w++ {
				add(3, w, 0)
			}
			for w := uint32(900); w < shard.PageWords; w += 2 {
				add(3, w, 0)
			}
			add(3, carried, 0)
			add(7, 700, 2) // a sub-word address on page 7, dense since its first count
			add(7, 800, 0)
		case 2: // a dense page's sub-word addresses, and its words again
			for _, sub := range []uint8{3, 1, 2, 1} {
				add(3, 40, sub)
				add(3, 901, sub) // a word with no aligned access
			}
		}
		for range 3000 {
			ref, w, sub := []uint32{3, 5, 6}[r.IntN(3)], uint32(r.IntN(shard.PageWords)), []uint8{0, 0, 0, 0, 0, 0, 1, 3}[r.IntN(8)]
			switch {
			case ref == 3 && batchNo < 2:
				// Page 3 holds aligned addresses alone until it is
				// dense, its first 400 words until batch 1 (too few
				// to be made dense at once: newDenseWords), its first
				// 900 until batch 2.
				w, sub = w%[]uint32{400, 900}[batchNo], 0
			case ref == 5:
				sub = 0 // its one sub-word address is in a chain, after word 2's own
			}
			add(ref, w, sub)
		}
		add(3, carried, 0)
		for _, tr := range []*addrTracker{dense, sparse} {
			tr.lists[0] = append(tr.lists[0], items...)
			tr.count(0, b)
			if batchNo == 0 {
				// Bring the word's count near the carry, while sparse.
				ps := tr.pages.at(3)
				ps.entry(int(ps.index[carried]) - 1).accesses = 1<<32 - 150
			}
		}
		if batchNo == 0 && dense.pages.at(3).dense {
			t.Fatalf("page 3 dense after 400 addresses")
		}
		if ps := dense.pages.at(7); batchNo == 0 && (!ps.dense || ps.index != nil) {
			t.Fatalf("page 7, 600 aligned words at its first count: dense %v, index %v; want dense at once, no index", ps.dense, ps.index != nil)
		}
	}
	for ref, want := range map[uint32]bool{3: true, 5: false, 6: false, 7: true} {
		if got := dense.pages.at(ref).dense; got != want {
			t.Errorf("page %d dense: %v, want %v", ref, got, want)
		}
		if sparse.pages.at(ref).dense {
			t.Errorf("page %d dense with denseAt 0", ref)
		}
	}
	refs := make([]shard.PageRef, pages)
	for i := range refs {
		refs[i] = shard.PageRef{Ref: uint32(i), Base: uint64(i) << shard.PageShift}
	}
	keys := []memKey{{space: trace.Global, group: -1}}
	rows := func(tr *addrTracker) []AddressStat {
		return tr.rows(nil, refs, keys, newSketchCounter(warpRegs), newSketchCounter(groupRegs))
	}
	got, want := rows(dense), rows(sparse)
	if len(got) != len(want) {
		t.Fatalf("dense pages: %d rows, want %d", len(got), len(want))
	}
	carries, subs := 0, 0
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
		if got[i].Accesses >= 1<<32 {
			carries++
		}
		if got[i].Addr>>shard.PageShift == 3 && got[i].Addr&3 != 0 {
			subs++
		}
	}
	if carries != 1 || subs < 6 {
		t.Errorf("%d counts past 2^32, %d sub-word addresses on page 3: want 1 and at least 6", carries, subs)
	}
	if n := dense.pages.at(3).addrs + dense.pages.at(5).addrs + dense.pages.at(6).addrs + dense.pages.at(7).addrs; n != len(want) {
		t.Errorf("pages count %d addresses, the table has %d", n, len(want))
	}
}

// TestAddressWindowWordOrder: a window of a counter with many pages
// (wordOrderPages and more) is counted in page order and, within a page,
// in word order (sortWindow), its items the ones gathered: on 5000 pages
// (a sort bucket holds two past 4096, which sortWindow keeps in word
// order within the bucket, not by page) and on 100.
func TestAddressWindowWordOrder(t *testing.T) {
	for _, pages := range []int{100, 5000} {
		tr := newAddrTracker(1, false, 1)
		tr.grow(pages)
		r := rand.New(rand.NewPCG(3, 4))
		var items []statItem
		for range 20000 {
			items = append(items, newStatItem(uint32(r.IntN(pages))<<(shard.PageShift-2)|uint32(r.IntN(shard.PageWords)), uint32(r.IntN(64)), 1, uint8(r.IntN(4))))
		}
		tr.gather(0, [][]statItem{items}, make([]sketchKey, 128))
		shift := uint(0)
		for uint32(tr.pages.len())>>shift > 1<<12 {
			shift++
		}
		sorted := tr.sortWindow(0, tr.win[0], tr.pages.len())
		bucket := func(it statItem) uint32 { return it.word >> (shard.PageShift - 2) >> shift }
		for i := 1; i < len(sorted); i++ {
			a, b := sorted[i-1], sorted[i]
			if bucket(a) > bucket(b) || bucket(a) == bucket(b) && a.word&(shard.PageWords-1) > b.word&(shard.PageWords-1) {
				t.Fatalf("%d pages: item %d %+v after %+v: not in page, then word order", pages, i, b, a)
			}
		}
		key := func(a, b statItem) int {
			if a.word != b.word {
				return cmp.Compare(a.word, b.word)
			}
			return cmp.Compare(a.meta, b.meta)
		}
		got := slices.SortedFunc(slices.Values(sorted), key)
		want := slices.SortedFunc(slices.Values(items), key)
		if !slices.Equal(got, want) {
			t.Fatalf("%d pages: the sorted window is not the items gathered", pages)
		}
		tr.release()
	}
}

// TestAddressSortOneBucket: sortItems returns a list whose items are all
// of one page as it is, not copied (with its extras), and sorts one of two
// pages into page order, stably.
func TestAddressSortOneBucket(t *testing.T) {
	tr := newAddrTracker(1, false, 1)
	defer tr.release()
	tr.grow(10)
	r := rand.New(rand.NewPCG(5, 6))
	var one, two []statItem
	extras := make([]uint64, 100)
	for i := range 100 {
		w := uint32(r.IntN(shard.PageWords))
		one = append(one, newStatItem(3<<(shard.PageShift-2)|w, uint32(i), 1, 0))
		two = append(two, newStatItem(uint32(3+i%2*4)<<(shard.PageShift-2)|w, uint32(i), 1, 0))
		extras[i] = uint64(i)
	}
	sorted, sortedX := tr.sortItems(0, tr.pages.len(), [][]statItem{one}, extras)
	if &sorted[0] != &one[0] || &sortedX[0] != &extras[0] || !slices.Equal(sorted, one) {
		t.Fatalf("one page's items: copied (%v) or not the items", &sorted[0] != &one[0])
	}
	want := slices.Clone(two)
	slices.SortStableFunc(want, func(a, b statItem) int { return cmp.Compare(a.word>>(shard.PageShift-2), b.word>>(shard.PageShift-2)) })
	sorted, _ = tr.sortItems(0, tr.pages.len(), [][]statItem{two}, nil)
	if &sorted[0] == &two[0] || !slices.Equal(sorted, want) {
		t.Fatalf("two pages' items: not sorted by page, stably")
	}
}

// TestAddressHotPagesInCache: a counter whose windows are sorted by page
// alone (few pages) asks for no lines of its hot pages (inCache), and one
// of many pages does, as it does for pages past the hot ones.
func TestAddressHotPagesInCache(t *testing.T) {
	tr := newAddrTracker(1, false, 2)
	defer tr.release()
	page := func(ref uint32) uint32 { return ref << (shard.PageShift - 2) }
	tr.grow(3)
	tr.countWindow(0, tr.pages, tr.npages)
	if !tr.inCache(0, page(2)) || tr.inCache(1, page(2)) || tr.inCache(0, page(hotPages)) {
		t.Fatalf("3 pages: hot page in cache %v (counter 1: %v, not yet counted), page %d %v", tr.inCache(0, page(2)), tr.inCache(1, page(2)), hotPages, tr.inCache(0, page(hotPages)))
	}
	tr.grow(2 * wordOrderPages)
	tr.countWindow(0, tr.pages, tr.npages)
	if tr.inCache(0, page(2)) {
		t.Fatalf("%d pages: a hot page taken as in cache", 2*wordOrderPages)
	}
}

// TestAddressWindowGatheredWhileCounted: a counter counting a window
// takes the jobs handed to it meanwhile (poll, every yieldItems items):
// it gathers a job's lists into its second window and gives them back at
// once; the first job that asks for a count it notes, to count that
// window once the count under way ends (again), and goes on gathering
// into it; a second such job, one that asks for a reply, or one whose
// lists wait for a count (first) it holds until the count under way ends,
// taking no other. The table is the one one window of every item gives,
// and pending counts every item handed and not yet counted. The test
// stands in for the compute stage, the jobs queued before each count,
// and then runs the counter's loop to the end.
func TestAddressWindowGatheredWhileCounted(t *testing.T) {
	const pages = 200
	r := rand.New(rand.NewPCG(9, 10))
	b := &batch{insts: make([]binst, 64)}
	for i := range b.insts {
		b.insts[i].Group, b.insts[i].Warp = int64(i/8), int64(i)
	}
	keys := batchKeys(nil, b)
	list := func(n int) []statItem {
		var l []statItem
		for range n {
			l = append(l, newStatItem(uint32(hotPages+r.IntN(pages-hotPages))<<(shard.PageShift-2)|uint32(r.IntN(shard.PageWords)),
				uint32(r.IntN(len(b.insts))), 1, uint8(r.IntN(2))))
		}
		return l
	}
	refs := make([]shard.PageRef, pages)
	for i := range refs {
		refs[i] = shard.PageRef{Ref: uint32(i), Base: uint64(i) << shard.PageShift}
	}
	mk := []memKey{{space: trace.Global, group: -1}}
	lists := [][]statItem{list(3 * yieldItems), list(1000), list(2 * yieldItems), list(2000), list(3000), list(500)}

	ref := newAddrTracker(1, false, 1)
	defer ref.release()
	ref.grow(pages)
	for _, l := range lists {
		ref.gather(0, [][]statItem{l}, keys)
	}
	ref.finish()
	want := ref.rows(nil, refs, mk, newSketchCounter(warpRegs), newSketchCounter(groupRegs))

	for _, c := range []struct {
		name                        string
		jobs                        [2]countJob // with lists[3] and lists[4]
		gathered                    int         // of them, while counting
		again, held, first, replied bool
	}{
		{"count, then count", [2]countJob{{count: true}, {count: true}}, 2, true, true, false, false},
		{"count, then gather", [2]countJob{{count: true}, {}}, 2, true, false, false, false},
		{"first", [2]countJob{{first: true}, {}}, 0, false, true, true, false},
		{"reply", [2]countJob{{count: true, reply: true}, {}}, 1, false, true, false, true},
	} {
		tr := newAddrTracker(1, false, 1)
		tr.grow(pages)
		a := &asyncCount{jobs: []chan countJob{make(chan countJob, 2)}, scattered: []chan struct{}{make(chan struct{}, 8)},
			counted: []chan struct{}{make(chan struct{}, 1)}, state: make([]counterState, 1)}
		tr.async = a
		st := &a.state[0]
		st.pages, st.npages = tr.pages, tr.npages
		tr.gather(0, lists[0:1], keys)
		tr.winItems[0] = len(lists[0])
		tr.hand(0)
		a.jobs[0] <- countJob{lists: lists[1:2], keys: keys, pages: tr.pages, npages: tr.npages}
		tr.countWindow(0, tr.pages, tr.npages)
		// The job was taken and its lists gathered while the window was
		// counted.
		if len(a.jobs[0]) != 0 || len(a.scattered[0]) != 1 || len(tr.win[0]) != len(lists[1]) || st.holding || st.again {
			t.Fatalf("%s: job not gathered during the count: %d queued, %d scattered, window of %d items", c.name, len(a.jobs[0]), len(a.scattered[0]), len(tr.win[0]))
		}
		<-a.scattered[0]
		if n := tr.pending(); n != 0 {
			t.Fatalf("%s: %d items pending after the count, want 0 (the second window's were not handed)", c.name, n)
		}
		// A second window of more than yieldItems items is counted while
		// the case's jobs come.
		tr.gather(0, lists[2:3], keys)
		tr.winItems[0] = len(tr.win[0])
		tr.hand(0)
		for k, j := range c.jobs {
			j.lists, j.keys, j.pages, j.npages = lists[3+k:4+k], keys, tr.pages, tr.npages
			if j.first { // as plan does
				tr.hand(0)
			}
			tr.winItems[0] += len(lists[3+k])
			if j.count {
				tr.hand(0)
			}
			a.jobs[0] <- j
		}
		tr.countWindow(0, tr.pages, tr.npages)
		if n := len(a.scattered[0]); n != c.gathered || st.again != c.again || st.holding != c.held || c.held && (st.held.first != c.first || (st.held.lists != nil) != c.first) {
			t.Fatalf("%s: %d lists gathered, again %v, held %v (%+v)", c.name, n, st.again, st.holding, st.held)
		}
		if len(a.jobs[0]) != 2-c.gathered-b2i(c.first) {
			t.Fatalf("%s: %d jobs left queued", c.name, len(a.jobs[0]))
		}
		// The counter's loop: the window again if asked, the held job,
		// those queued, a last one, and the end.
		a.jobs[0] <- countJob{lists: lists[5:6], keys: keys, pages: tr.pages, npages: tr.npages}
		tr.winItems[0] += len(lists[5])
		close(a.jobs[0])
		if st.again {
			tr.countWindows(0)
		}
		a.done.Add(1)
		tr.counter(0)
		if len(a.counted[0]) != b2i(c.replied) {
			t.Fatalf("%s: %d replies", c.name, len(a.counted[0]))
		}
		if n := tr.pending(); n != 0 {
			t.Fatalf("%s: %d items pending at the end, want 0", c.name, n)
		}
		tr.async = nil
		got := tr.rows(nil, refs, mk, newSketchCounter(warpRegs), newSketchCounter(groupRegs))
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d rows, want %d, or not the same", c.name, len(got), len(want))
		}
		tr.release()
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestItemBuf: a counter's item buffer is an ordinary make below
// blockItems and an off-heap block from there, with room for what was
// asked and at least two and a half windows; dropItems releases a
// block's buffer and forgets it, and leaves a heap buffer, another
// counter's blocks and a block it does not know alone.
func TestItemBuf(t *testing.T) {
	tr := newAddrTracker(2, false, 1)
	defer tr.release()
	tr.window, tr.blockItems = 4000, 1000
	small := tr.itemBuf(0, 999)
	if cap(small) != 999 || len(tr.itemBlocks[0]) != 0 {
		t.Fatalf("999 items: cap %d, %d blocks; want a make of 999 and none", cap(small), len(tr.itemBlocks[0]))
	}
	a := tr.itemBuf(0, 1000)
	b := tr.itemBuf(0, 50000)
	c := tr.itemBuf(1, 1000)
	if len(a) != 0 || cap(a) < 10000 || cap(b) < 50000 || len(tr.itemBlocks[0]) != 2 || len(tr.itemBlocks[1]) != 1 {
		t.Fatalf("blocks: caps %d, %d (want >= 10000, 50000), %d and %d blocks (want 2 and 1)",
			cap(a), cap(b), len(tr.itemBlocks[0]), len(tr.itemBlocks[1]))
	}
	for i := range cap(b) {
		b = append(b, statItem{word: uint32(i)}) // written through: memory that is the buffer's
	}
	tr.dropItems(0, small)
	tr.dropItems(0, c) // counter 1's: not 0's to drop
	if len(tr.itemBlocks[0]) != 2 || len(tr.itemBlocks[1]) != 1 {
		t.Fatalf("after dropping a heap buffer and another counter's: %d and %d blocks, want 2 and 1", len(tr.itemBlocks[0]), len(tr.itemBlocks[1]))
	}
	tr.dropItems(0, a)
	if len(tr.itemBlocks[0]) != 1 || unsafe.SliceData(tr.itemBlocks[0][0].Bytes()) != (*byte)(unsafe.Pointer(unsafe.SliceData(b[:1]))) {
		t.Fatalf("after dropping a: %d blocks, want b's alone", len(tr.itemBlocks[0]))
	}
	if b[len(b)-1].word != uint32(cap(b)-1) {
		t.Errorf("b's last item %d after a was dropped, want %d", b[len(b)-1].word, cap(b)-1)
	}
}
