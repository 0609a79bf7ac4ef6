package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// TestLanePerm: every order is a permutation of the active lanes; reverse
// is exactly the reverse; random depends on the seed and the instruction,
// and on nothing else.
func TestLanePerm(t *testing.T) {
	var buf [trace.MaxLanes]uint8
	for n := 0; n <= 32; n++ {
		for _, o := range []Order{OrderLane, OrderReverse, OrderRandom} {
			p := lanePerm(o, 9, uint64(n)*7, n, &buf)
			seen := map[uint8]bool{}
			for i, k := range p {
				if int(k) >= n || seen[k] {
					t.Fatalf("%s n=%d: %v is not a permutation", o, n, p)
				}
				seen[k] = true
				if o == OrderLane && int(k) != i || o == OrderReverse && int(k) != n-1-i {
					t.Fatalf("%s n=%d: %v", o, n, p)
				}
			}
		}
	}
	perm := func(seed, seq uint64) string {
		var b [trace.MaxLanes]uint8
		return fmt.Sprint(lanePerm(OrderRandom, seed, seq, 32, &b))
	}
	if a, again := perm(1, 5), perm(1, 5); a != again || a == perm(2, 5) || a == perm(1, 6) {
		t.Errorf("random orders: seed 1 seq 5 %s, again %s, seed 2 %s, seq 6 %s", a, again, perm(2, 5), perm(1, 6))
	}
	var first [32]int // how often each lane comes first, over many instructions
	for seq := range uint64(3200) {
		var b [trace.MaxLanes]uint8
		first[lanePerm(OrderRandom, 1, seq, 32, &b)[0]]++
	}
	for lane, c := range first {
		if c < 50 || c > 170 { // 100 expected; 7 standard deviations either side
			t.Errorf("lane %d came first %d times in 3200 random orders, want about 100", lane, c)
		}
	}
}

// casLocks is a trace of warps that each race for a lock word with
// atom.cas 0 -> 1: the lane that applies first gets 0 (the lock), the
// others 1.
func casLocks(warps int, mask string) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x1000\n")
	for w := range warps {
		fmt.Fprintf(&b, "atom.global.cas.b32 d, [l], 0, 1; | l=0x%x%s\n", 0x1000+4*w, mask)
	}
	return b.String()
}

// winners returns, per instruction, the lanes that got 0 back.
func winners(c *Collector) map[uint64][]uint32 {
	w := map[uint64][]uint32{}
	for _, r := range c.Res {
		if r.Value == 0 {
			w[r.Seq] = append(w[r.Seq], r.Lane)
		}
	}
	return w
}

// TestOrderReverseCASLock: with -order reverse the last active lane takes
// each lock, with lane order the first; exactly one lane wins each.
func TestOrderReverseCASLock(t *testing.T) {
	for _, c := range []struct {
		mask        string
		first, last uint32
	}{{"", 0, 31}, {" mask=0x7f8", 3, 10}} {
		for _, o := range []struct {
			order Order
			want  uint32
		}{{OrderLane, c.first}, {OrderReverse, c.last}} {
			for _, opts := range [][]Option{{WithWorkers(1)}, {WithWorkers(2), WithShards(3), WithBatchInsts(2)}} {
				var col Collector
				if _, err := Replay(textSource(t, casLocks(4, c.mask)), &col, append(opts, WithOrder(o.order, 0))...); err != nil {
					t.Fatal(err)
				}
				for seq := range uint64(4) {
					if got := winners(&col)[seq]; !reflect.DeepEqual(got, []uint32{o.want}) {
						t.Errorf("mask%q -order %s: instruction %d's lock went to lanes %v, want [%d]", c.mask, o.order, seq, got, o.want)
					}
				}
				if len(col.Words) != 4 || col.Words[0].Value != 1 {
					t.Errorf("-order %s: memory %+v, want 4 locks held (1)", o.order, col.Words)
				}
			}
		}
	}
}

// TestOrderRandomSameForAnyWorkers: one seed gives the same replay for 1
// or 2 workers, 1 or 64 shards, any batch; another seed gives other
// winners; and the winners are spread over the lanes.
func TestOrderRandomSameForAnyWorkers(t *testing.T) {
	src := casLocks(64, "")
	var base Collector
	if _, err := Replay(textSource(t, src), &base, WithOrder(OrderRandom, 5), WithWorkers(1), WithShards(1)); err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]Option{{WithWorkers(2), WithShards(64)}, {WithWorkers(2), WithShards(1), WithBatchInsts(3)}, {WithWorkers(1), WithShards(64), WithBatchInsts(1)}} {
		var c Collector
		if _, err := Replay(textSource(t, src), &c, append(opts, WithOrder(OrderRandom, 5))...); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(collect(&c), collect(&base)) {
			t.Errorf("-order random -seed 5 under %d options differs from 1 worker, 1 shard", len(opts))
		}
	}
	var other Collector
	if _, err := Replay(textSource(t, src), &other, WithOrder(OrderRandom, 6)); err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(winners(&other), winners(&base)) {
		t.Error("seeds 5 and 6 gave every lock to the same lanes")
	}
	lanes := map[uint32]bool{}
	for _, w := range winners(&base) {
		lanes[w[0]] = true
	}
	if len(lanes) < 20 {
		t.Errorf("64 locks went to only %d distinct lanes under a random order", len(lanes))
	}
}

// TestOrdersEqualReference: random traces of all four dialects replayed by
// the engine under reverse and random orders equal the reference
// interpreter under the same order.
func TestOrdersEqualReference(t *testing.T) {
	for _, g := range []struct {
		name string
		gen  randomTrace
	}{{"ptx", randomPTX}, {"sass", randomSASS}, {"visa", randomVISA}, {"lsc", randomLSC}} {
		for seed := uint64(1); seed <= 8; seed++ {
			src := g.gen(rand.New(rand.NewPCG(seed, 31)), 60)
			for _, o := range []Option{WithOrder(OrderReverse, 0), WithOrder(OrderRandom, seed)} {
				var ref Collector
				if _, err := Reference(textSource(t, src), &ref, o, WithExplore(true)); err != nil {
					t.Fatal(err)
				}
				want := collect(&ref)
				for _, opts := range engineOptSets {
					var c Collector
					if _, err := Replay(textSource(t, src), &c, append(append([]Option{}, opts...), o, WithExplore(true))...); err != nil {
						t.Fatal(err)
					}
					got := collect(&c)
					approxAddrs(t, got.Addrs, want.Addrs)
					if !reflect.DeepEqual(got, want) {
						describeDiff(t, got, want)
						t.Fatalf("%s seed %d: the engine differs from the reference under an order", g.name, seed)
					}
				}
			}
		}
	}
}

// closeCounter is a source with a Close that counts its calls.
type closeCounter struct {
	trace.Source
	closed *int
}

func (c *closeCounter) Close() error { *c.closed++; return nil }

// TestExploreOrders: a warp of 32 lanes exchanging distinct values into
// one word leaves a different value under different orders (the last lane
// applied wins): the word has a witness per order, at least two of them
// different, lane order's the value of lane 31; an add histogram beside it
// commutes and has none.
func TestExploreOrders(t *testing.T) {
	src := ".region global 0x1000 0x100\n" +
		"atom.global.exch.b32 d, [a], v; | a=0x1000 v=100:1\n" +
		"atom.global.add.u32 d, [h], 1; | h=[" + strings.TrimSuffix(strings.Repeat("0x1040,0x1044,0x1040,0x1048,", 8), ",") + "]\n"
	opened, closed := 0, 0
	open := func() (trace.SourceCloser, error) {
		opened++
		return &closeCounter{textSource(t, src), &closed}, nil
	}
	rows, err := ExploreOrders(open, 4, 7, WithWorkers(2))
	if err != nil {
		t.Fatal(err)
	}
	if opened != 5 || closed != 5 {
		t.Errorf("opened the trace %d times, closed it %d times; want 5 and 5 (lane order and 4 random ones)", opened, closed)
	}
	if len(rows) != 5 {
		t.Fatalf("%d witness rows, want 5 (lane order and 4 random ones) for the exchanged word: %+v", len(rows), rows)
	}
	values := map[uint32]bool{}
	for i, r := range rows {
		if r.Addr != 0x1000 || r.Space != trace.Global || r.Group != -1 {
			t.Errorf("witness %d is of %s %d 0x%x, want global -1 0x1000", i, r.Space, r.Group, r.Addr)
		}
		if r.Value < 100 || r.Value > 131 {
			t.Errorf("witness %d: %d is no lane's value", i, r.Value)
		}
		values[r.Value] = true
	}
	if rows[0].Order != "lane" || rows[0].Value != 131 || rows[1].Order != "random:7" || rows[4].Order != "random:10" {
		t.Errorf("witnesses %+v: want lane order first with 131 (lane 31 last), then random:7 … random:10", rows)
	}
	if len(values) < 2 {
		t.Errorf("every order left %v: want at least two different final values", values)
	}
	// Each random order's value is that of the lane it applies last.
	for i, r := range rows[1:] {
		var p [trace.MaxLanes]uint8
		last := lanePerm(OrderRandom, 7+uint64(i), 0, 32, &p)[31]
		if r.Value != 100+uint32(last) {
			t.Errorf("%s left %d, want %d (lane %d applies last)", r.Order, r.Value, 100+uint32(last), last)
		}
	}
	if _, err := ExploreOrders(open, 0, 1); err == nil {
		t.Error("ExploreOrders with 0 orders accepted")
	}
}

// TestInterleave: windows of instructions from two warps, each warp's own
// order kept: "exch 2" of warp 0 comes after its "exch 1" in every seed's
// interleaving (so it never gets the initial 0 back), likewise warp 1's
// "exch 20" after "exch 10"; the last to apply is one warp's second, so the
// word ends 2 or 20, and across seeds both happen. One seed gives the same
// replay for any batch size and worker count; without -order random the
// option is refused.
func TestInterleave(t *testing.T) {
	src := ".region global 0x1000 0x100\n.warp 0\natom.global.exch.b32 d, [a], 1; | a=0x1000 mask=0x1\n" +
		"atom.global.exch.b32 d, [a], 2; | a=0x1000 mask=0x1\n.warp 1\natom.global.exch.b32 d, [a], 10; | a=0x1000 mask=0x1\n" +
		"atom.global.exch.b32 d, [a], 20; | a=0x1000 mask=0x1\n"
	finals := map[uint32]bool{}
	for seed := range uint64(40) {
		var base Collector
		if _, err := Replay(textSource(t, src), &base, WithOrder(OrderRandom, seed), WithInterleave(4)); err != nil {
			t.Fatal(err)
		}
		if len(base.Res) != 4 || len(base.Words) != 1 {
			t.Fatalf("seed %d: %d results, %d words", seed, len(base.Res), len(base.Words))
		}
		for i, r := range base.Res {
			if r.Seq != uint64(i) {
				t.Fatalf("seed %d: results not in trace order: %+v", seed, base.Res)
			}
		}
		if base.Res[1].Value == 0 || base.Res[3].Value == 0 {
			t.Errorf("seed %d: a warp's second exch got the initial 0: it ran before the warp's first (%+v)", seed, base.Res)
		}
		if f := base.Words[0].Value; f != 2 && f != 20 {
			t.Errorf("seed %d: the word ends %d, want 2 or 20", seed, f)
		}
		finals[base.Words[0].Value] = true
		for _, opts := range [][]Option{{WithBatchInsts(1)}, {WithBatchInsts(3), WithWorkers(2)}, {WithWorkers(1), WithShards(1)}} {
			var c Collector
			if _, err := Replay(textSource(t, src), &c, append(opts, WithOrder(OrderRandom, seed), WithInterleave(4))...); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(collect(&c), collect(&base)) {
				t.Errorf("seed %d: the interleaved replay depends on the batch size or workers", seed)
			}
		}
	}
	if !finals[2] || !finals[20] {
		t.Errorf("over 40 seeds the word ended only %v: the warps were not interleaved", finals)
	}
	if _, err := New(nil, WithInterleave(4)); err == nil {
		t.Error("WithInterleave without the random order accepted")
	}
}

// TestInterleaveEqualsReference: random traces of all four dialects (several
// groups and warps, .init and .region between instructions) with random
// orders and windows of 3 and 16 instructions: the engine equals the
// reference, which reads the same windows in the same order.
func TestInterleaveEqualsReference(t *testing.T) {
	for _, g := range []struct {
		name string
		gen  randomTrace
	}{{"ptx", randomPTX}, {"sass", randomSASS}, {"visa", randomVISA}, {"lsc", randomLSC}} {
		for seed := uint64(1); seed <= 6; seed++ {
			src := g.gen(rand.New(rand.NewPCG(seed, 41)), 60)
			for _, w := range []int{3, 16} {
				opts := []Option{WithOrder(OrderRandom, seed), WithInterleave(w), WithExplore(true)}
				var ref Collector
				if _, err := Reference(textSource(t, src), &ref, opts...); err != nil {
					t.Fatal(err)
				}
				want := collect(&ref)
				for _, eo := range engineOptSets {
					var c Collector
					if _, err := Replay(textSource(t, src), &c, append(append([]Option{}, eo...), opts...)...); err != nil {
						t.Fatal(err)
					}
					got := collect(&c)
					approxAddrs(t, got.Addrs, want.Addrs)
					if !reflect.DeepEqual(got, want) {
						describeDiff(t, got, want)
						t.Fatalf("%s seed %d window %d: the engine differs from the reference", g.name, seed, w)
					}
				}
			}
		}
	}
}

// TestInterleavedRepeats: a hot counter's warps, runs of one instruction
// with one of three values and two masks, from several warps, in windows
// of 2 to 5 instructions applied in a random order: the engine equals the
// reference, with and without per-lane rows. A window's order puts an
// instruction last in the batch that was not added last, and the next
// instruction may repeat either (batch.repeats, sumRun).
func TestInterleavedRepeats(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 43))
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x100\n")
	v, m := 1, "0xffffffff"
	for range 400 {
		if r.IntN(3) == 0 {
			v = 1 + r.IntN(3)
		}
		if r.IntN(6) == 0 {
			m = []string{"0xffffffff", "0xff"}[r.IntN(2)]
		}
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, ".warp %d\n", r.IntN(8))
		}
		fmt.Fprintf(&b, "atom.global.add.u32 d, [a], b; | a=0x1000 b=%d mask=%s\n", v, m)
	}
	src := b.String()
	for seed := uint64(1); seed <= 4; seed++ {
		for _, w := range []int{2, 3, 5} {
			opts := []Option{WithOrder(OrderRandom, seed), WithInterleave(w)}
			var ref Collector
			if _, err := Reference(textSource(t, src), &ref, opts...); err != nil {
				t.Fatal(err)
			}
			want := collect(&ref)
			for _, eo := range [][]Option{{WithWorkers(1), WithBatchInsts(64)}, {WithWorkers(2), WithBatchInsts(50)}, {WithWorkers(3)}} {
				for _, lean := range []bool{false, true} {
					sink, c := sinkFor(lean, false)
					if _, err := Replay(textSource(t, src), sink, append(append([]Option{}, eo...), opts...)...); err != nil {
						t.Fatal(err)
					}
					got, want := collect(c), want
					if lean {
						got.Res, want.Res = nil, nil
					}
					want.Addrs = []AddressStat{}
					if !reflect.DeepEqual(got, want) {
						describeDiff(t, got, want)
						t.Fatalf("seed %d window %d lean %v, %d options: the engine differs from the reference", seed, w, lean, len(eo))
					}
				}
			}
		}
	}
}
