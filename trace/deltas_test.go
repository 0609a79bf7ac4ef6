package trace

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// deltasRef is readDeltas the plain way: a varint at a time
// (encoding/binary), the reference the 8-byte path is checked against.
func deltasRef(p []byte, vs []uint64) ([]byte, int) {
	var prev uint64
	for i := range vs {
		d, n := binary.Uvarint(p)
		if n <= 0 {
			return p, -i - 1
		}
		p = p[n:]
		prev += uint64(unzigzag(d))
		vs[i] = prev
	}
	return p, 0
}

// TestReadDeltas checks readDeltas against deltasRef on lists whose deltas
// mix one-byte and longer varints in every arrangement the 8-byte path
// meets: runs of one-byte deltas longer and shorter than eight, a long
// one at every position, lists that end the payload (no 8-byte load past
// them) or are followed by bytes with and without continuation bits, and
// lists cut short (the error counts the lanes read).
func TestReadDeltas(t *testing.T) {
	rng := rand.New(rand.NewPCG(50, 4))
	for trial := range 20000 {
		n := 1 + rng.IntN(40)
		vs := make([]uint64, n)
		var prev uint64
		for i := range vs {
			switch rng.IntN(8) {
			case 0: // far: a varint of several bytes
				vs[i] = rng.Uint64() >> rng.IntN(64)
			case 1: // 63 or 64 away: the one-byte limit of a zigzag
				vs[i] = prev + 64 - uint64(rng.IntN(2))*127
			default: // near: one byte
				vs[i] = prev + uint64(rng.IntN(127)) - 63
			}
			prev = vs[i]
		}
		enc := appendDeltas(nil, vs)
		switch trial % 3 {
		case 1:
			enc = append(enc, 0x05, 0x7f, 0x00)
		case 2:
			enc = append(enc, 0x80, 0x81, 0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)
		}
		cut := len(enc)
		if trial%5 == 4 {
			cut = rng.IntN(len(enc)) // cut short: maybe inside a varint
		}
		p := enc[:cut]
		want, got := make([]uint64, n), make([]uint64, n)
		wrest, wn := deltasRef(p, want)
		grest, gn := readDeltas(p, got)
		if gn != wn || len(grest) != len(wrest) {
			t.Fatalf("trial %d: % x: readDeltas returned n %d with %d bytes left, want n %d with %d left", trial, p, gn, len(grest), wn, len(wrest))
		}
		k := n
		if wn < 0 {
			k = -wn - 1
		}
		if !slices.Equal(got[:k], want[:k]) {
			t.Fatalf("trial %d: % x: readDeltas read %x, want %x", trial, p, got[:k], want[:k])
		}
		if wn == 0 && !slices.Equal(got, vs) {
			t.Fatalf("trial %d: decoded %x, the list was %x", trial, got, vs)
		}
	}
}

func BenchmarkReadDeltas(b *testing.B) {
	// A 16-lane spinlock's list: four locks 4 bytes apart, at 0x10000000.
	rng := rand.New(rand.NewPCG(1, 2))
	vs := make([]uint64, 16)
	for i := range vs {
		vs[i] = 0x10000000 + 4*uint64(rng.IntN(4))
	}
	p := append(appendDeltas(nil, vs), 0, 0, 0, 0, 0, 0, 0, 0)
	out := make([]uint64, 16)
	b.Run("readDeltas", func(b *testing.B) {
		for b.Loop() {
			readDeltas(p, out)
		}
	})
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			deltasRef(p, out)
		}
	})
	// Float reductions' lists of 16 addends: the bits of f32 values of
	// any magnitude, deltas of 1 to 5 bytes, 1024 lists read in turn.
	var pf [1024][]byte
	for k := range pf {
		for i := range vs {
			vs[i] = uint64(math.Float32bits(rng.Float32() * float32(int(1)<<rng.IntN(24))))
		}
		pf[k] = append(appendDeltas(nil, vs), 0, 0, 0, 0, 0, 0, 0, 0)
	}
	b.Run("floats", func(b *testing.B) {
		k := 0
		for b.Loop() {
			readDeltas(pf[k&1023], out)
			k++
		}
	})
	b.Run("floats-ref", func(b *testing.B) {
		k := 0
		for b.Loop() {
			deltasRef(pf[k&1023], out)
			k++
		}
	})
}
