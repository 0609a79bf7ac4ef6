package engine

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The addresses table counts, per address, the distinct warps and groups
// that hit it, in a fixed few bytes whatever their number: exactly while
// they are few, then with a HyperLogLog (Flajolet, Fusy, Gandouet, Meunier,
// "HyperLogLog: the analysis of a near-optimal cardinality estimation
// algorithm", AofA 2007), with linear counting for small estimates (Heule,
// Nunkesser, Hall, "HyperLogLog in practice", EDBT 2013, section 4). Why our
// own and not a library: every address gets one, so it must live inside a
// 48-byte slab entry with no pointer and no per-sketch header; the
// well-kept Go libraries (axiomhq/hyperloglog, clarkduvall/hyperloglog)
// keep at least 2^4 registers behind a slice and a struct, hundreds of
// bytes each.
//
// A sketch is a byte array and a state byte n: while n < sketchHLL it holds
// n distinct 32-bit keys, in place (little-endian, the slots past the n-th
// holding copies of the first); adding one more than fits turns it into
// m 5-bit registers (the keys it held are added to them, so nothing is
// lost). A key is a 32-bit hash of the (group, warp) pair or of the group;
// two distinct pairs meet with odds about 1 in 2^32 per pair, the only way
// an "exact" count can be off.
const (
	sketchHLL = 0xff

	warpBytes  = 28
	warpExact  = warpBytes / 4     // 7 keys
	warpRegs   = warpBytes * 8 / 5 // 44 registers: standard error 1.04/√44 ≈ 15.7%
	groupBytes = 12
	groupExact = groupBytes / 4     // 3 keys
	groupRegs  = groupBytes * 8 / 5 // 19 registers: standard error 1.04/√19 ≈ 23.9%

	regBits = 5 // a register holds a rank up to 31: no overflow below ~2^31 keys a register
)

// sketchKey is one key as a sketch takes it: the 32 bits it stores
// exactly, themselves a hash, whose bits also give the register and rank
// it sets once the sketch estimates (hllPlace), worked out where they are
// needed. A window's keys, two an instruction, are met at random once
// its items are sorted by page: at 4 bytes each, their lines are half as
// many as they were with the register and rank beside them.
type sketchKey struct {
	key uint32
}

// newSketchKey is the key of hash h: its high 32 bits.
func newSketchKey(h uint64) sketchKey { return sketchKey{key: uint32(h >> 32)} }

// mix64 is SplitMix64's finalizer: a bijection that spreads every input bit
// over the output.
func mix64(h uint64) uint64 {
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	return h ^ h>>31
}

// addWarp adds k to e's warps sketch, and addGroup to its groups sketch:
// a sketch holds its first keys exactly, then turns into registers. Each
// reports false when the sketch holds the key exactly already (it cannot
// tell once it estimates), which is when an access brings nothing new.
//
// They run once per access, about ten million times a replay of
// uniform-1Mi, on keys that repeat at random: a search that stops at the
// match, or a register raised only when lower, is a branch the processor
// guesses wrong about as often as right. So the exact keys are compared all
// at once (the slots past the held ones hold copies of the first key, so
// all of them can be), and a register is written whether or not it rises.
// The first key, and the turn into registers, branch: once per address.
func (e *addrEntry) addWarp(k sketchKey) bool {
	b := &e.warps
	n := e.wn
	if n == sketchHLL {
		bit, rank := hllPlace(k.key, warpRegs)
		hllRaise(b[:], bit, rank)
		return true
	}
	x := k.key
	if n == 0 {
		for i := range warpExact {
			binary.LittleEndian.PutUint32(b[4*i:], x)
		}
		e.wn = 1
		return true
	}
	le := binary.LittleEndian
	if min(le.Uint32(b[0:])^x, le.Uint32(b[4:])^x, le.Uint32(b[8:])^x, le.Uint32(b[12:])^x,
		le.Uint32(b[16:])^x, le.Uint32(b[20:])^x, le.Uint32(b[24:])^x) == 0 {
		return false
	}
	if n < warpExact {
		le.PutUint32(b[4*int(n):], x)
		e.wn = n + 1
		return true
	}
	var held [warpExact]uint32
	for i := range held {
		held[i] = le.Uint32(b[4*i:])
	}
	toRegisters(b[:], held[:], warpRegs, k.key)
	e.wn = sketchHLL
	return true
}

// addGroup is addWarp for the groups sketch: a copy with the other sizes,
// not one function of the sizes, whose loop over the slots made the
// sketches slower (BenchmarkSketchAdd).
func (e *addrEntry) addGroup(k sketchKey) bool {
	b := &e.groups
	n := e.gn
	if n == sketchHLL {
		bit, rank := hllPlace(k.key, groupRegs)
		hllRaise(b[:], bit, rank)
		return true
	}
	x := k.key
	if n == 0 {
		for i := range groupExact {
			binary.LittleEndian.PutUint32(b[4*i:], x)
		}
		e.gn = 1
		return true
	}
	le := binary.LittleEndian
	if min(le.Uint32(b[0:])^x, le.Uint32(b[4:])^x, le.Uint32(b[8:])^x) == 0 {
		return false
	}
	if n < groupExact {
		le.PutUint32(b[4*int(n):], x)
		e.gn = n + 1
		return true
	}
	var held [groupExact]uint32
	for i := range held {
		held[i] = le.Uint32(b[4*i:])
	}
	toRegisters(b[:], held[:], groupRegs, k.key)
	e.gn = sketchHLL
	return true
}

// toRegisters turns a full sketch's bytes b, whose keys were held, into m
// registers holding them and k: nothing seen is lost. A key held exactly
// lands where it would have landed had it come in after the switch.
func toRegisters(b []byte, held []uint32, m int, k uint32) {
	clear(b)
	for _, key := range held {
		bit, rank := hllPlace(key, m)
		hllMax(b, bit, rank)
	}
	bit, rank := hllPlace(k, m)
	hllMax(b, bit, rank)
}

// hllPlace is where the 32-bit hash k goes in m registers: the register
// from its high bits (a multiply-shift, so m need not be a power of two),
// given as its first bit, and the rank from its low bits (trailing zeros
// plus one, at most 31, so that it fits 5 bits). They are independent
// enough: only keys of 26 trailing zeros and more (one in 2^26) fall on
// fewer registers than m.
func hllPlace(k uint32, m int) (bit uint16, rank uint8) {
	reg := uint64(k) * uint64(m) >> 32
	rank = uint8(bits.TrailingZeros32(k)) + 1 // 1..33
	return uint16(regBits * reg), min(rank, 1<<regBits-1)
}

// hllRaise is hllMax that stores only when the register rises: on an
// address whose sketch estimates already, the common access. A hot
// address's (a histogram's bin's, thousands of accesses a window) rises
// seldom, so the branch is guessed right, and its accesses, which come
// one after another in a window, do not each wait for the store before.
func hllRaise(buf []byte, bit uint16, rank uint8) {
	i := min(int(bit>>3), len(buf)-2)
	sh := uint(bit) - 8*uint(i)
	v := binary.LittleEndian.Uint16(buf[i:])
	if uint8(v>>sh)&(1<<regBits-1) < rank {
		binary.LittleEndian.PutUint16(buf[i:], v&^((1<<regBits-1)<<sh)|uint16(rank)<<sh)
	}
}

// hllMax raises the register at bit of the 5-bit registers packed in buf
// (little-endian bit order, at least two bytes) to rank, if it is lower,
// through the two bytes that hold it: the last two when it is in the last
// byte alone. It stores them whether or not the register rose.
func hllMax(buf []byte, bit uint16, rank uint8) {
	i := min(int(bit>>3), len(buf)-2)
	sh := uint(bit) - 8*uint(i) // at most 10: the register ends by bit 15
	v := binary.LittleEndian.Uint16(buf[i:])
	r := max(uint8(v>>sh)&(1<<regBits-1), rank)
	binary.LittleEndian.PutUint16(buf[i:], v&^((1<<regBits-1)<<sh)|uint16(r)<<sh)
}

// sketchCounter reads sketches of m registers: sketchCount runs once per
// address of the table, a million times for a million addresses, at the
// end of the replay where nothing else runs, so it reads the registers
// two at a time through a table, sums 2^-rank as an integer (a multiple of
// 2^-31 under 2^6, so every float partial sum of the textbook version is
// exact and the two agree to the bit), and takes linear counting's
// logarithm from a table.
type sketchCounter struct {
	m      int
	linear [256]float64 // linear[z] = m·ln(m/z): linear counting with z empty registers
	// pair[v] is, for the two registers r1, r2 packed in the 10 bits v,
	// 2^(31-r1) + 2^(31-r2) in the low pairSumBits and the number of them
	// that are 0 above.
	pair [1 << (2 * regBits)]uint64
}

const pairSumBits = 40

func newSketchCounter(m int) *sketchCounter {
	c := &sketchCounter{m: m}
	fm := float64(m)
	for z := 1; z <= m && z < len(c.linear); z++ {
		c.linear[z] = fm * math.Log(fm/float64(z))
	}
	for v := range c.pair {
		for _, r := range [2]int{v & (1<<regBits - 1), v >> regBits} {
			c.pair[v] += 1 << (31 - r)
			if r == 0 {
				c.pair[v] += 1 << pairSumBits
			}
		}
	}
	return c
}

// count returns the number of distinct keys of the sketch (state n, bytes
// buf) and whether it is exact.
func (c *sketchCounter) count(n uint8, buf []byte) (uint64, bool) {
	if n != sketchHLL {
		return uint64(n), true
	}
	m := c.m
	var acc uint64 // Σ pair[...]: Σ 2^(31-rank), and the zeros above pairSumBits
	i, j := 0, 0
	for ; i+8 <= m; i, j = i+8, j+5 {
		v := uint64(binary.LittleEndian.Uint32(buf[j:])) | uint64(buf[j+4])<<32
		acc += c.pair[v&0x3ff] + c.pair[v>>10&0x3ff] + c.pair[v>>20&0x3ff] + c.pair[v>>30&0x3ff]
	}
	var v uint64
	for k := j; k < len(buf); k++ {
		v |= uint64(buf[k]) << (8 * (k - j))
	}
	for ; i+2 <= m; i += 2 {
		acc += c.pair[v&0x3ff]
		v >>= 2 * regBits
	}
	sum, zeros := acc&(1<<pairSumBits-1), int(acc>>pairSumBits)
	if i < m { // one register left
		r := v & (1<<regBits - 1)
		sum += 1 << (31 - r)
		zeros += int((r - 1) >> 63) // r == 0
	}
	fm := float64(m)
	est := 0.7213 / (1 + 1.079/fm) * fm * fm / (float64(sum) / (1 << 31))
	if est <= 2.5*fm && zeros > 0 { // small range: linear counting
		est = c.linear[zeros]
	}
	return uint64(math.Round(est)), false
}
