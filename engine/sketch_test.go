package engine

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSketchExactThenEstimate: a sketch counts exactly while the keys fit
// in place (repeats not counted twice), then estimates, without losing the
// keys it held.
func TestSketchExactThenEstimate(t *testing.T) {
	var e addrEntry
	for i := 0; i < warpExact; i++ {
		for j := range 3 { // repeats count once
			if added := e.addWarp(newSketchKey(mix64(uint64(i)))); added != (j == 0) {
				t.Fatalf("key %d, time %d: added %v", i, j+1, added)
			}
		}
		if c, exact := newSketchCounter(warpRegs).count(e.wn, e.warps[:]); c != uint64(i+1) || !exact {
			t.Fatalf("after %d keys: %d, exact %v", i+1, c, exact)
		}
	}
	e.addWarp(newSketchKey(mix64(99)))
	if c, exact := newSketchCounter(warpRegs).count(e.wn, e.warps[:]); exact || c < 6 || c > 10 {
		t.Errorf("after %d keys: %d, exact %v; want an estimate near %d", warpExact+1, c, exact, warpExact+1)
	}
	// Adding the first keys again changes nothing: they are in the registers.
	before := e.warps
	for i := 0; i < warpExact; i++ {
		e.addWarp(newSketchKey(mix64(uint64(i))))
	}
	if e.warps != before {
		t.Error("keys held exactly were lost when the sketch turned into registers")
	}
}

// sketchKinds are the addresses table's two sketches, as the tests drive
// them.
var sketchKinds = []struct {
	name         string
	bytes, ex, m int
	add          func(*addrEntry, sketchKey) bool
	state        func(*addrEntry) (uint8, []byte)
}{
	{"warps", warpBytes, warpExact, warpRegs, (*addrEntry).addWarp, func(e *addrEntry) (uint8, []byte) { return e.wn, e.warps[:] }},
	{"groups", groupBytes, groupExact, groupRegs, (*addrEntry).addGroup, func(e *addrEntry) (uint8, []byte) { return e.gn, e.groups[:] }},
}

// refSketchAdd is a sketch's add as first written, for any size, a branch
// at each step: it adds k to the sketch (state n, bytes buf) that holds up
// to exact keys, then m registers, and reports false when it held the key
// exactly already. addWarp and addGroup must agree with it.
func refSketchAdd(n *uint8, buf []byte, exact, m int, k sketchKey) bool {
	if *n != sketchHLL {
		held := int(*n)
		for i := 0; i < held; i++ {
			if binary.LittleEndian.Uint32(buf[4*i:]) == k.key {
				return false
			}
		}
		if held < exact {
			binary.LittleEndian.PutUint32(buf[4*held:], k.key)
			*n++
			return true
		}
		saved := make([]uint32, held)
		for i := range saved {
			saved[i] = binary.LittleEndian.Uint32(buf[4*i:])
		}
		clear(buf)
		*n = sketchHLL
		for _, key := range saved {
			bit, rank := hllPlace(key, m)
			refHLLAdd(buf, bit, rank)
		}
	}
	bit, rank := hllPlace(k.key, m)
	refHLLAdd(buf, bit, rank)
	return true
}

// refHLLAdd raises the register at bit to rank, if it is lower.
func refHLLAdd(buf []byte, bit uint16, rank uint8) {
	if i := int(bit) / regBits; getReg(buf, i) < rank {
		setReg(buf, i, rank)
	}
}

// TestSketchAddMatchesReference: over runs of keys drawn from pools small
// and large (so that keys repeat while a sketch is exact, and after), each
// add reports what the reference does, leaves the same state and count,
// the same keys held (in order) while exact, and the same registers, byte
// for byte, once it estimates.
func TestSketchAddMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sk := range sketchKinds {
		counter := newSketchCounter(sk.m)
		for _, pool := range []int{2, sk.ex, sk.ex + 1, 3 * sk.ex, 200, 1 << 30} {
			for trial := range 200 {
				var e addrEntry
				var n uint8
				buf := make([]byte, sk.bytes)
				for step := range 60 {
					k := newSketchKey(mix64(uint64(r.IntN(pool))))
					got, want := sk.add(&e, k), refSketchAdd(&n, buf, sk.ex, sk.m, k)
					st, b := sk.state(&e)
					same := st == n
					if same && n == sketchHLL {
						same = string(b) == string(buf)
					} else if same {
						same = string(b[:4*int(n)]) == string(buf[:4*int(n)])
					}
					gc, _ := counter.count(st, b)
					wc, _ := counter.count(n, buf)
					if got != want || !same || gc != wc {
						t.Fatalf("%s, pool %d, trial %d, step %d: added %v, state %d %x, count %d; reference %v, %d %x, %d",
							sk.name, pool, trial, step, got, st, b, gc, want, n, buf, wc)
					}
				}
			}
		}
	}
}

// TestSketchAccuracy: over many sets of n distinct keys the estimate is
// unbiased (mean error under 6%) and spreads no more than the HyperLogLog's
// 1.04/√m (RMS at most 1.3 times it; linear counting does better for small
// n), from tens to a million keys, for both sketch sizes: the figures
// docs/OUTPUT.md gives.
func TestSketchAccuracy(t *testing.T) {
	for _, sk := range sketchKinds {
		want := 1.04 / math.Sqrt(float64(sk.m))
		for _, n := range []int{20, 100, 512, 5000, 1 << 20} {
			trials := 400
			if n > 10000 {
				trials = 12
			}
			r := rand.New(rand.NewPCG(uint64(n), uint64(sk.m)))
			var sum, sq float64
			for range trials {
				var en addrEntry
				for range n {
					sk.add(&en, newSketchKey(r.Uint64()))
				}
				c, _ := newSketchCounter(sk.m).count(sk.state(&en))
				e := float64(c)/float64(n) - 1
				sum, sq = sum+e, sq+e*e
			}
			mean, rms := sum/float64(trials), math.Sqrt(sq/float64(trials))
			t.Logf("%s (m=%d) n=%d: mean error %+.3f, RMS %.3f (1.04/√m = %.3f)", sk.name, sk.m, n, mean, rms, want)
			if n > 10000 {
				continue // few trials: a smoke test of large counts
			}
			if math.Abs(mean) > 0.06 || rms > 1.3*want {
				t.Errorf("%s n=%d: mean error %+.3f, RMS %.3f; want |mean| < 0.06 and RMS at most 1.3 × %.3f", sk.name, n, mean, rms, want)
			}
		}
	}
}

// refSketchCount is the count as first written, register by register
// with getReg, math.Ldexp and math.Log: sketchCounter must agree exactly.
func refSketchCount(n uint8, buf []byte, m int) (uint64, bool) {
	if n != sketchHLL {
		return uint64(n), true
	}
	fm := float64(m)
	sum, zeros := 0.0, 0
	for i := 0; i < m; i++ {
		r := getReg(buf, i)
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	est := 0.7213 / (1 + 1.079/fm) * fm * fm / sum
	if est <= 2.5*fm && zeros > 0 {
		est = fm * math.Log(fm/float64(zeros))
	}
	return uint64(math.Round(est)), false
}

// TestSketchCountMatchesRegisterByRegister: on sketches of every fill, from
// a few keys to a million, and on random register contents, the one-pass
// count equals the register-by-register one.
func TestSketchCountMatchesRegisterByRegister(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, sk := range sketchKinds {
		for _, n := range []int{8, 30, 200, 5000, 100000} {
			var e addrEntry
			for range n {
				sk.add(&e, newSketchKey(r.Uint64()))
			}
			st, buf := sk.state(&e)
			got, ge := newSketchCounter(sk.m).count(st, buf)
			want, we := refSketchCount(st, buf, sk.m)
			if got != want || ge != we {
				t.Errorf("m=%d after %d keys: %d (exact %v), register by register %d (exact %v)", sk.m, n, got, ge, want, we)
			}
		}
		for range 1000 {
			buf := make([]byte, sk.bytes)
			for i := 0; i < sk.m; i++ {
				setReg(buf, i, uint8(r.IntN(32)))
			}
			got, _ := newSketchCounter(sk.m).count(sketchHLL, buf)
			want, _ := refSketchCount(sketchHLL, buf, sk.m)
			if got != want {
				t.Fatalf("m=%d registers %x: %d, register by register %d", sk.m, buf, got, want)
			}
		}
	}
}

// BenchmarkSketchCount: what the addresses table's emit pays per address
// for its warps sketch, against the register-by-register count.
func BenchmarkSketchCount(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	bufs := make([][]byte, 1024)
	for i := range bufs {
		bufs[i] = make([]byte, warpBytes)
		for k := 0; k < warpRegs; k++ {
			setReg(bufs[i], k, uint8(r.IntN(6))) // small ranks: linear counting, as for most addresses
		}
	}
	b.Run("counter", func(b *testing.B) {
		c := newSketchCounter(warpRegs)
		i := 0
		for b.Loop() {
			c.count(sketchHLL, bufs[i%len(bufs)])
			i++
		}
	})
	b.Run("register-by-register", func(b *testing.B) {
		i := 0
		for b.Loop() {
			refSketchCount(sketchHLL, bufs[i%len(bufs)], warpRegs)
			i++
		}
	})
}

// getReg reads register i of buf (little-endian bit order), as the
// reference count does.
func getReg(buf []byte, i int) uint8 {
	bit := regBits * i
	v := uint16(buf[bit/8])
	if bit/8+1 < len(buf) {
		v |= uint16(buf[bit/8+1]) << 8
	}
	return uint8(v>>(bit%8)) & (1<<regBits - 1)
}

func setReg(buf []byte, i int, r uint8) {
	bit := regBits * i
	v := uint16(buf[bit/8])
	if bit/8+1 < len(buf) {
		v |= uint16(buf[bit/8+1]) << 8
	}
	v = v&^((1<<regBits-1)<<(bit%8)) | uint16(r)<<(bit%8)
	buf[bit/8] = byte(v)
	if bit/8+1 < len(buf) {
		buf[bit/8+1] = byte(v >> 8)
	}
}

// BenchmarkSketchAdd is the sketches' share of counting an access, with
// the entries in cache: 4096 addresses, each hit by nine distinct warps of
// nine groups (uniform-1Mi's pattern: the warps sketch takes seven keys
// exactly, turns into registers at the eighth, adds the ninth to them; the
// groups sketch likewise after three).
func BenchmarkSketchAdd(b *testing.B) {
	const addrs, hits = 4096, 9
	entries := make([]addrEntry, addrs)
	keys := make([]sketchKey, 2*addrs*hits)
	for i := range addrs * hits {
		keys[2*i] = newSketchKey(mix64(uint64(i) * 0x9e3779b97f4a7c15))
		keys[2*i+1] = newSketchKey(mix64(uint64(i)))
	}
	for b.Loop() {
		clear(entries)
		for h := range hits {
			for a := range entries {
				e := &entries[a]
				k := 2 * (h*addrs + a)
				if e.addWarp(keys[k]) {
					e.addGroup(keys[k+1])
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(addrs*hits), "ns/access")
}
