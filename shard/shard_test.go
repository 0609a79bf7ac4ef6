package shard

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func newMem(t testing.TB, opts ...Option) *Memory {
	t.Helper()
	m, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// get is the whole access path: hash once, pick the shard, hand the hash
// down. Tests run on one goroutine, so they skip the lock.
func get(m *Memory, mem uint32, addr uint64) *Block {
	h := Hash(mem, addr)
	return m.Shard(m.ShardIndex(h)).Block(mem, addr, h)
}

func lookup(m *Memory, mem uint32, addr uint64) *Block {
	h := Hash(mem, addr)
	return m.Shard(m.ShardIndex(h)).Lookup(mem, addr, h)
}

func wordOf(addr uint64) int { return int(addr>>2) & (GranuleWords - 1) }

func TestHashIsXXHash(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(mem uint32, addr uint64) {
		var key [16]byte
		binary.LittleEndian.PutUint64(key[:8], uint64(mem))
		binary.LittleEndian.PutUint64(key[8:], addr>>GranuleShift)
		if got, want := Hash(mem, addr), xxhash.Sum64(key[:]); got != want {
			t.Fatalf("Hash(%d, %#x) = %#x, xxhash.Sum64 = %#x", mem, addr, got, want)
		}
		if got, want := hashGranule(mem, addr>>GranuleShift), Hash(mem, addr); got != want {
			t.Fatalf("hashGranule(%d, %#x) = %#x, Hash = %#x", mem, addr>>GranuleShift, got, want)
		}
	}
	for _, a := range []uint64{0, 1, 255, 256, 1 << 32, ^uint64(0) - 255, ^uint64(0)} {
		for _, mem := range []uint32{0, 1, ^uint32(0)} {
			check(mem, a)
		}
	}
	for range 10000 {
		check(r.Uint32(), r.Uint64())
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		shards  int
		wantErr string
	}{
		{"default", nil, DefaultShards, ""},
		{"one", []Option{WithShards(1)}, 1, ""},
		{"three", []Option{WithShards(3)}, 3, ""},
		{"max", []Option{WithShards(1 << 16)}, 1 << 16, ""},
		{"zero", []Option{WithShards(0)}, 0, "WithShards(0)"},
		{"negative", []Option{WithShards(-1)}, 0, "WithShards(-1)"},
		{"too many", []Option{WithShards(1 << 17)}, 0, "WithShards(131072)"},
		{"hint", []Option{WithBlockHint(100000)}, DefaultShards, ""},
		{"hint zero", []Option{WithBlockHint(0)}, DefaultShards, ""},
		{"hint negative", []Option{WithBlockHint(-1)}, 0, "WithBlockHint(-1)"},
		{"hint absurd", []Option{WithBlockHint(1<<32 + 1)}, 0, "WithBlockHint(4294967297)"},
		{"nil option", []Option{nil}, 0, "nil Option"},
		{"last wins", []Option{WithShards(5), WithShards(7)}, 7, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.opts...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New: err = %v, want one containing %q", err, tt.wantErr)
				}
				if m != nil {
					t.Fatal("New returned a memory with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Shards() != tt.shards {
				t.Fatalf("Shards() = %d, want %d", m.Shards(), tt.shards)
			}
		})
	}
}

func TestCreateLookup(t *testing.T) {
	top := ^uint64(0) - (GranuleBytes - 1) // the last granule's base
	tests := []struct {
		name   string
		shards int
		mems   []uint32
		addrs  []uint64
	}{
		{"zero", 64, []uint32{0}, []uint64{0, 4, 252}},
		{"top of address space", 64, []uint32{0, 1}, []uint64{top, top + 4, ^uint64(0) - 3}},
		{"zero and top", 1, []uint32{0, ^uint32(0)}, []uint64{0, top}},
		{"granule edges", 3, []uint32{7}, []uint64{255, 256, 511, 512, 1<<32 - 1, 1 << 32}},
		{"many mems", 64, []uint32{0, 1, 2, 3, 1000, 1 << 20, ^uint32(0)}, []uint64{0, 0x1000, 0x7fff_ffff_ff00, top}},
		{"one shard", 1, []uint32{1, 2}, []uint64{0, 256, 4096, top}},
		{"max shards", 1 << 16, []uint32{1, 2}, []uint64{0, 256, 4096, top}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMem(t, WithShards(tt.shards))
			granules := map[[2]uint64]bool{}
			for _, mem := range tt.mems {
				for _, a := range tt.addrs {
					if b := lookup(m, mem, a); b != nil && !granules[[2]uint64{uint64(mem), a >> GranuleShift}] {
						t.Fatalf("Lookup(%d, %#x) found a block before any Block", mem, a)
					}
					b := get(m, mem, a)
					granules[[2]uint64{uint64(mem), a >> GranuleShift}] = true
					b.Words[wordOf(a)] += uint32(mem) ^ uint32(a) | 1
					b.Touched |= 1 << wordOf(a)
				}
			}
			if got := m.Len(); got != len(granules) {
				t.Fatalf("Len() = %d, want %d", got, len(granules))
			}
			for _, mem := range tt.mems {
				for _, a := range tt.addrs {
					b := lookup(m, mem, a)
					if b == nil {
						t.Fatalf("Lookup(%d, %#x) = nil after Block", mem, a)
					}
					if b != get(m, mem, a) {
						t.Fatalf("Lookup and Block disagree for (%d, %#x)", mem, a)
					}
					if b.Words[wordOf(a)] != uint32(mem)^uint32(a)|1 {
						t.Fatalf("(%d, %#x): word = %#x, want %#x", mem, a, b.Words[wordOf(a)], uint32(mem)^uint32(a)|1)
					}
				}
			}
			// A granule next to a touched one, and a mem never used, are absent.
			if b := lookup(m, 12345, 0); b != nil {
				t.Fatal("Lookup of an unused mem found a block")
			}
			if m.Len() != len(granules) {
				t.Fatal("Lookup created a block")
			}
		})
	}
}

// TestGrowth creates enough blocks for many table resizes and chunk
// allocations, and checks pointers taken early still address their blocks.
func TestGrowth(t *testing.T) {
	const n = 200_000
	for _, shards := range []int{1, 64} {
		for _, hint := range []int{0, n} {
			m := newMem(t, WithShards(shards), WithBlockHint(hint))
			ptrs := make([]*Block, n)
			for i := range n {
				mem := uint32(i % 3)
				addr := uint64(i) * GranuleBytes * 7
				b := get(m, mem, addr)
				if b.Words[0] != 0 || b.Touched != 0 {
					t.Fatalf("new block %d not zero", i)
				}
				b.Words[0] = uint32(i)
				b.Words[GranuleWords-1] = ^uint32(i)
				ptrs[i] = b
			}
			if got := m.Len(); got != n {
				t.Fatalf("shards=%d hint=%d: Len() = %d, want %d", shards, hint, got, n)
			}
			for i := range n {
				mem := uint32(i % 3)
				addr := uint64(i) * GranuleBytes * 7
				b := lookup(m, mem, addr)
				if b != ptrs[i] {
					t.Fatalf("shards=%d hint=%d: block %d moved", shards, hint, i)
				}
				if b.Words[0] != uint32(i) || b.Words[GranuleWords-1] != ^uint32(i) {
					t.Fatalf("shards=%d hint=%d: block %d lost its value", shards, hint, i)
				}
			}
		}
	}
}

// TestPointerStability writes through a pointer, forces the table to grow
// several times, and reads back through the old pointer.
func TestPointerStability(t *testing.T) {
	m := newMem(t, WithShards(1))
	s := m.Shard(0)
	first := get(m, 9, 0x4000)
	first.Words[3] = 0xdeadbeef
	firstSlots := len(s.tab.slots)
	for i := range 10_000 {
		get(m, 1, uint64(i)<<GranuleShift)
	}
	if len(s.tab.slots) < 8*firstSlots {
		t.Fatalf("table did not grow: %d slots, was %d", len(s.tab.slots), firstSlots)
	}
	if first.Words[3] != 0xdeadbeef {
		t.Fatal("value lost through the old pointer")
	}
	first.Words[4] = 42
	if b := get(m, 9, 0x4010); b != first || b.Words[4] != 42 || b.Words[3] != 0xdeadbeef {
		t.Fatal("old pointer and the table no longer agree")
	}
}

// TestMemo alternates two mems at the same address, and two addresses in
// one mem, so a memo keyed on the granule alone would mix them up.
func TestMemo(t *testing.T) {
	m := newMem(t, WithShards(1))
	s := m.Shard(0)
	const addr = 0x1230
	ha, hb := Hash(1, addr), Hash(2, addr)
	if ha == hb {
		t.Fatal("hash collision")
	}
	a := s.Block(1, addr, ha)
	b := s.Block(2, addr, hb)
	if a == b {
		t.Fatal("two mems share a block")
	}
	for i := range 100 {
		if s.Block(1, addr, ha) != a || s.Block(1, addr+4, ha) != a {
			t.Fatalf("round %d: mem 1 got the wrong block", i)
		}
		if s.Block(2, addr, hb) != b || s.Lookup(2, addr+8, hb) != b {
			t.Fatalf("round %d: mem 2 got the wrong block", i)
		}
		a.Words[0]++
		b.Words[0] += 2
	}
	if a.Words[0] != 100 || b.Words[0] != 200 {
		t.Fatalf("words = %d, %d, want 100, 200", a.Words[0], b.Words[0])
	}
	// Same mem, neighbouring granules, and mem 0 at granule 0 against the
	// memo's initial state.
	hc := Hash(1, addr+GranuleBytes)
	c := s.Block(1, addr+GranuleBytes, hc)
	if c == a || s.Block(1, addr, ha) != a || s.Block(1, addr+GranuleBytes, hc) != c {
		t.Fatal("neighbouring granules mixed up")
	}
	m2 := newMem(t, WithShards(1))
	if b := m2.Shard(0).Lookup(0, 0, Hash(0, 0)); b != nil {
		t.Fatal("fresh memo answered for (0, 0)")
	}
}

func TestBlocksSorted(t *testing.T) {
	m := newMem(t, WithShards(7))
	r := rand.New(rand.NewPCG(3, 4))
	type key struct {
		mem  uint32
		base uint64
	}
	want := map[key]uint32{}
	for range 5000 {
		mem := uint32(r.IntN(5))
		addr := r.Uint64() &^ 3
		if r.IntN(4) == 0 {
			addr &= 0xffff
		}
		v := r.Uint32()
		b := get(m, mem, addr)
		b.Words[wordOf(addr)] = v
		b.Touched |= 1 << wordOf(addr)
		want[key{mem, addr &^ (GranuleBytes - 1)}] = 0
	}
	refs := m.Blocks()
	if len(refs) != len(want) || m.Len() != len(want) {
		t.Fatalf("Blocks() has %d, Len() = %d, want %d", len(refs), m.Len(), len(want))
	}
	sorted := slices.IsSortedFunc(refs, func(a, b BlockRef) int {
		if a.Mem != b.Mem {
			return int(int64(a.Mem) - int64(b.Mem))
		}
		switch {
		case a.Base < b.Base:
			return -1
		case a.Base > b.Base:
			return 1
		}
		return 0
	})
	if !sorted {
		t.Fatal("Blocks() not sorted by (Mem, Base)")
	}
	for i, ref := range refs {
		if i > 0 && refs[i-1].Mem == ref.Mem && refs[i-1].Base == ref.Base {
			t.Fatalf("duplicate block (%d, %#x)", ref.Mem, ref.Base)
		}
		if _, ok := want[key{ref.Mem, ref.Base}]; !ok {
			t.Fatalf("unexpected block (%d, %#x)", ref.Mem, ref.Base)
		}
		if ref.Base%GranuleBytes != 0 {
			t.Fatalf("base %#x not granule aligned", ref.Base)
		}
		if lookup(m, ref.Mem, ref.Base) != ref.Block {
			t.Fatalf("BlockRef (%d, %#x) names another block", ref.Mem, ref.Base)
		}
	}
}

func TestLen(t *testing.T) {
	m := newMem(t, WithShards(4))
	if m.Len() != 0 {
		t.Fatal("new memory not empty")
	}
	for i := range 4 {
		if m.Shard(i).Len() != 0 {
			t.Fatalf("shard %d not empty", i)
		}
	}
	get(m, 0, 0)
	get(m, 0, 4)   // same granule
	get(m, 0, 256) // next granule
	get(m, 1, 0)   // other mem
	total := 0
	for i := range 4 {
		total += m.Shard(i).Len()
	}
	if m.Len() != 3 || total != 3 {
		t.Fatalf("Len() = %d, shards sum to %d, want 3", m.Len(), total)
	}
}

// TestShardAssignment checks doc invariant 1: the shard of a granule is a
// pure function of its hash and the shard count.
func TestShardAssignment(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 64, 1000, 1 << 16} {
		m1 := newMem(t, WithShards(n))
		m2 := newMem(t, WithShards(n), WithBlockHint(1000))
		counts := make([]int, n)
		for range 20000 {
			mem, addr := r.Uint32()%8, r.Uint64()
			h := Hash(mem, addr)
			i := m1.ShardIndex(h)
			if i < 0 || i >= n {
				t.Fatalf("n=%d: ShardIndex = %d out of range", n, i)
			}
			if j := m2.ShardIndex(h); j != i {
				t.Fatalf("n=%d: two memories disagree: %d, %d", n, i, j)
			}
			if want := int((h >> 32) * uint64(n) >> 32); n <= 1<<16 && i != want && i != want+1 && i != want-1 {
				// Multiply-shift: i is h*n / 2^64, within one of the
				// high-word approximation.
				t.Fatalf("n=%d: ShardIndex(%#x) = %d, not a multiply-shift (%d)", n, h, i, want)
			}
			if Hash(mem, addr|(GranuleBytes-1)) != h || Hash(mem, addr&^(GranuleBytes-1)) != h {
				t.Fatal("Hash depends on the offset inside the granule")
			}
			counts[i]++
			// The block lands in shard i and no other.
			b := m1.Shard(i).Block(mem, addr, h)
			if m1.Shard((i+1)%n).Lookup(mem, addr, h) == b && n > 1 {
				t.Fatal("block found in a second shard")
			}
		}
		if n <= 64 {
			for i, c := range counts {
				if mean := 20000 / n; c < mean/2 {
					t.Errorf("n=%d: shard %d got %d of 20000, mean %d", n, i, c, mean)
				}
			}
		}
	}
}

// TestShardCountIndependence replays one sequence of writes with several
// shard counts and checks Blocks() is the same.
func TestShardCountIndependence(t *testing.T) {
	type word struct {
		mem  uint32
		base uint64
		b    Block
	}
	run := func(shards int) []word {
		m := newMem(t, WithShards(shards))
		r := rand.New(rand.NewPCG(7, 8))
		for range 30000 {
			mem := uint32(r.IntN(4))
			addr := uint64(r.IntN(1<<20)) &^ 3
			if r.IntN(10) == 0 {
				addr = ^uint64(0) - uint64(r.IntN(1<<12))&^3
			}
			b := get(m, mem, addr)
			w := wordOf(addr)
			b.Words[w] = b.Words[w]*31 + r.Uint32()
			b.Touched |= 1 << w
		}
		var out []word
		for _, ref := range m.Blocks() {
			out = append(out, word{ref.Mem, ref.Base, *ref.Block})
		}
		return out
	}
	want := run(1)
	for _, n := range []int{3, 64, 1000} {
		if got := run(n); !slices.Equal(got, want) {
			t.Fatalf("Blocks() with %d shards differs from 1 shard (%d vs %d blocks)", n, len(got), len(want))
		}
	}
}

// TestReference checks random Block and Lookup calls against a map.
func TestReference(t *testing.T) {
	m := newMem(t, WithShards(5))
	type key struct {
		mem uint32
		g   uint64
	}
	ref := map[key]*[GranuleWords]uint32{}
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 100000 {
		mem := uint32(r.IntN(3))
		addr := uint64(r.IntN(1<<16)) &^ 3
		k := key{mem, addr >> GranuleShift}
		w := wordOf(addr)
		if r.IntN(3) == 0 {
			b := lookup(m, mem, addr)
			if (b == nil) != (ref[k] == nil) {
				t.Fatalf("op %d: Lookup(%d, %#x) = %v, reference has %v", i, mem, addr, b != nil, ref[k] != nil)
			}
			if b != nil && b.Words != *ref[k] {
				t.Fatalf("op %d: block (%d, %#x) differs from the reference", i, mem, addr)
			}
			continue
		}
		if ref[k] == nil {
			ref[k] = new([GranuleWords]uint32)
		}
		v := r.Uint32()
		get(m, mem, addr).Words[w] += v
		ref[k][w] += v
	}
	if m.Len() != len(ref) {
		t.Fatalf("Len() = %d, reference has %d", m.Len(), len(ref))
	}
}

func TestForEach(t *testing.T) {
	m := newMem(t, WithShards(1))
	get(m, 3, 0x500)
	get(m, 4, ^uint64(0))
	seen := map[BlockRef]bool{}
	m.Shard(0).ForEach(func(mem uint32, base uint64, b *Block) {
		seen[BlockRef{mem, base, b}] = true
	})
	if len(seen) != 2 || !seen[BlockRef{3, 0x500, lookup(m, 3, 0x500)}] ||
		!seen[BlockRef{4, ^uint64(0) - 255, lookup(m, 4, ^uint64(0))}] {
		t.Fatalf("ForEach saw %v", seen)
	}
}

func TestNoAllocs(t *testing.T) {
	m := newMem(t)
	const mem = 2
	addrs := make([]uint64, 1024)
	for i := range addrs {
		addrs[i] = uint64(i) * 4096
		get(m, mem, addrs[i])
	}
	tests := []struct {
		name string
		fn   func()
	}{
		{"memo", func() {
			for j := range 64 {
				a := uint64(0x1000 + 4*j)
				h := Hash(mem, a)
				m.Shard(m.ShardIndex(h)).Block(mem, a, h).Words[j]++
			}
		}},
		{"table hit", func() {
			for _, a := range addrs {
				h := Hash(mem, a)
				m.Shard(m.ShardIndex(h)).Block(mem, a, h).Words[0]++
			}
		}},
		{"lookup", func() {
			for _, a := range addrs {
				h := Hash(mem, a)
				m.Shard(m.ShardIndex(h)).Lookup(mem, a, h)
			}
		}},
		{"lookup miss", func() {
			for _, a := range addrs {
				h := Hash(mem+1, a)
				m.Shard(m.ShardIndex(h)).Lookup(mem+1, a, h)
			}
		}},
	}
	for _, tt := range tests {
		if n := testing.AllocsPerRun(100, tt.fn); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tt.name, n)
		}
	}
}

func TestHasher(t *testing.T) {
	var k Hasher
	r := rand.New(rand.NewPCG(13, 14))
	top := ^uint64(0)
	// The zero value must not answer for (0, 0), and a run in one granule
	// must not leak into another mem or granule.
	cases := []struct {
		mem  uint32
		addr uint64
	}{{0, 0}, {0, 4}, {1, 4}, {0, 8}, {0, 256}, {0, top}, {1, top}, {1, top - 255}, {1, 0}}
	for _, c := range cases {
		if got, want := k.Hash(c.mem, c.addr), Hash(c.mem, c.addr); got != want {
			t.Fatalf("Hasher.Hash(%d, %#x) = %#x, want %#x", c.mem, c.addr, got, want)
		}
	}
	for range 10000 {
		mem, addr := r.Uint32()%2, r.Uint64()%2048
		if got, want := k.Hash(mem, addr), Hash(mem, addr); got != want {
			t.Fatalf("Hasher.Hash(%d, %#x) = %#x, want %#x", mem, addr, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { k.Hash(3, 0x100); k.Hash(3, 0x104) }); n != 0 {
		t.Errorf("Hasher.Hash: %v allocations per run, want 0", n)
	}
}
