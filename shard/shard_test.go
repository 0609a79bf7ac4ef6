package shard

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func TestHashIsXXHash(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1000; i++ {
		mem, addr := r.Uint32(), r.Uint64()
		var key [16]byte
		binary.LittleEndian.PutUint64(key[:8], uint64(mem))
		binary.LittleEndian.PutUint64(key[8:], addr>>PageShift)
		if got, want := Hash(mem, addr), xxhash.Sum64(key[:]); got != want {
			t.Fatalf("Hash(%d, %#x) = %#x, xxhash.Sum64 = %#x", mem, addr, got, want)
		}
	}
	// Every address of a page hashes alike: the hash names the page.
	if Hash(3, 0x12345000) != Hash(3, 0x12345fff) || Hash(3, 0x12345000) == Hash(3, 0x12346000) {
		t.Error("Hash does not follow page boundaries")
	}
}

func TestOptions(t *testing.T) {
	for _, n := range []int{0, -1, MaxShards + 1} {
		if _, err := New(WithShards(n)); err == nil {
			t.Errorf("WithShards(%d) accepted", n)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("a nil option is accepted")
	}
	m, err := New(WithShards(7))
	if err != nil || m.Shards() != 7 {
		t.Fatalf("WithShards(7): %v, %d shards", err, m.Shards())
	}
}

// TestResolve: a page is created once, zeroed, with its memory, number and
// shard; every address in it resolves to the same entry; WordRef and Word
// name the word of the address; other memories and pages are other pages.
func TestResolve(t *testing.T) {
	m, _ := New(WithShards(5))
	c := m.Cursor()
	e := c.Resolve(2, 0x7000_1234)
	if e == 0 || e.Ref() != 1 {
		t.Fatalf("first page: entry %#x, want ref 1", e)
	}
	p := m.Page(e.Ref())
	if p.Mem != 2 || p.Num != 0x70001 || int(p.Shard) != e.Shard() || e.Shard() != m.ShardIndex(Hash(2, 0x7000_1000)) {
		t.Errorf("page meta mem %d num %#x shard %d (entry %d), want 2, 0x70001, %d", p.Mem, p.Num, p.Shard, e.Shard(), m.ShardIndex(Hash(2, 0x70001000)))
	}
	for _, w := range p.Words {
		if w != 0 {
			t.Fatal("a new page is not zero")
		}
	}
	for _, a := range []uint64{0x7000_1000, 0x7000_1ffc, 0x7000_1234} {
		if got := c.Resolve(2, a); got != e {
			t.Errorf("Resolve(2, %#x) = %#x, want the page's entry %#x", a, got, e)
		}
		if got := m.Lookup(2, a); got != e {
			t.Errorf("Lookup(2, %#x) = %#x, want %#x", a, got, e)
		}
	}
	*m.Word(e.WordRef(0x7000_1234)) = 42
	if p.Words[0x234/4] != 42 {
		t.Error("Word(WordRef(addr)) is not the word of addr")
	}
	if m.Lookup(3, 0x7000_1234) != 0 || m.Lookup(2, 0x7000_2000) != 0 {
		t.Error("Lookup finds a page that was never made")
	}
	other := []Entry{c.Resolve(3, 0x7000_1234), c.Resolve(2, 0x7000_2000), c.Resolve(2, 0x7040_1234), c.Resolve(2, 0)}
	seen := map[uint32]bool{e.Ref(): true}
	for i, o := range other {
		if o == 0 || seen[o.Ref()] {
			t.Errorf("page %d: entry %#x is not a new page", i, o)
		}
		seen[o.Ref()] = true
	}
	if m.Pages() != 5 {
		t.Errorf("%d pages, want 5", m.Pages())
	}
}

// TestConcurrentResolve: cursors racing over the same addresses create
// each page exactly once, and all agree (run with -race).
func TestConcurrentResolve(t *testing.T) {
	m, _ := New()
	const pages = 3000 // crosses several directories and chunks
	got := make([][]Entry, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := m.Cursor()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			got[g] = make([]Entry, pages)
			for _, i := range r.Perm(pages) {
				got[g][i] = c.Resolve(uint32(i%3), uint64(i)<<PageShift*7)
			}
		}()
	}
	wg.Wait()
	if m.Pages() != pages {
		t.Fatalf("%d pages, want %d", m.Pages(), pages)
	}
	for g := 1; g < len(got); g++ {
		for i := range got[g] {
			if got[g][i] != got[0][i] {
				t.Fatalf("goroutine %d resolved page %d to %#x, goroutine 0 to %#x", g, i, got[g][i], got[0][i])
			}
		}
	}
}

// TestAllSorted: All gives every page once, sorted by (Mem, Base), each
// naming its page, on both of its paths: keys packed into integers and
// radix-sorted (page numbers and memory ids narrow enough), and the
// comparison sort (addresses up to 2^64, or memory ids too wide), with
// pages created in random order, several memories and pages a few
// numbers apart.
func TestAllSorted(t *testing.T) {
	tests := []struct {
		name  string
		pages int
		mems  uint32
		addr  func(r *rand.Rand) uint64
	}{
		{"below 2^40, 3 memories", 500, 3, func(r *rand.Rand) uint64 { return r.Uint64N(1 << 40) }},
		{"dense and shuffled", 5000, 1, func(r *rand.Rand) uint64 { return r.Uint64N(6000) * PageBytes }},
		{"clustered, 2 memories", 3000, 2, func(r *rand.Rand) uint64 { return 1<<36 + r.Uint64N(1<<24) }},
		{"any 64-bit address", 500, 2, func(r *rand.Rand) uint64 { return r.Uint64() }},
		{"memory ids of 32 bits", 300, 0, func(r *rand.Rand) uint64 { return r.Uint64N(1 << 30) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := New()
			c := m.Cursor()
			r := rand.New(rand.NewPCG(3, 4))
			for m.Pages() < tc.pages {
				mem := uint32(0)
				if tc.mems > 0 {
					mem = uint32(r.IntN(int(tc.mems)))
				} else {
					mem = r.Uint32() | 1<<31
				}
				c.Resolve(mem, tc.addr(r))
			}
			all := m.All()
			if len(all) != m.Pages() {
				t.Fatalf("All gives %d pages of %d", len(all), m.Pages())
			}
			for i := range all {
				b := all[i]
				if m.Page(b.Ref) != b.Page || b.Page.Num<<PageShift != b.Base || b.Page.Mem != b.Mem {
					t.Fatalf("page ref %d does not name its page", b.Ref)
				}
				if i == 0 {
					continue
				}
				if a := all[i-1]; a.Mem > b.Mem || a.Mem == b.Mem && a.Base >= b.Base {
					t.Fatalf("All not sorted at %d: (%d, %#x) then (%d, %#x)", i, a.Mem, a.Base, b.Mem, b.Base)
				}
			}
		})
	}
}

// TestRadixSort sorts keys of every width up to 64 bits, at lengths
// around nothing and a digit's buckets, as slices.Sort does.
func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, width := range []int{1, 11, 12, 33, 63, 64} {
		for _, n := range []int{0, 1, 2, 2047, 5000} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = r.Uint64() >> (64 - width)
				if i > 0 && r.IntN(4) == 0 {
					keys[i] = keys[r.IntN(i)] // repeats
				}
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			if got := radixSort(keys, make([]uint64, n), width); !slices.Equal(got, want) {
				t.Errorf("width %d, %d keys: not sorted", width, n)
			}
		}
	}
}

// TestShardCountIndependence: a page's shard depends on the shard count,
// its place in memory and contents do not.
func TestShardCountIndependence(t *testing.T) {
	for _, n := range []int{1, 3, 64, 1000} {
		m, _ := New(WithShards(n))
		c := m.Cursor()
		for i := uint64(0); i < 200; i++ {
			e := c.Resolve(1, i*PageBytes*3)
			if e.Shard() >= n || e.Shard() != m.ShardIndex(Hash(1, i*PageBytes*3)) {
				t.Fatalf("%d shards: page %d in shard %d", n, i, e.Shard())
			}
			*m.Word(e.WordRef(i*PageBytes*3 + 4)) += uint32(i)
		}
		for i := uint64(0); i < 200; i++ {
			if v := *m.Word(m.Lookup(1, i*PageBytes*3).WordRef(i*PageBytes*3 + 4)); v != uint32(i) {
				t.Fatalf("%d shards: word of page %d holds %d", n, i, v)
			}
		}
	}
}

func TestNoAllocsOnHit(t *testing.T) {
	m, _ := New()
	c := m.Cursor()
	c.Resolve(1, 0x1000)
	c.Resolve(1, 0x900000)
	n := testing.AllocsPerRun(100, func() {
		c.Resolve(1, 0x1004)
		c.Resolve(1, 0x900008)
		_ = m.Lookup(1, 0x1000)
		_ = Hash(1, 0x1000)
	})
	if n != 0 {
		t.Errorf("%v allocations per run of hits", n)
	}
}

func BenchmarkResolve(b *testing.B) {
	m, _ := New()
	c := m.Cursor()
	r := rand.New(rand.NewPCG(1, 1))
	addrs := make([]uint64, 1<<16)
	for i := range addrs {
		addrs[i] = r.Uint64N(4<<20) &^ 3 // one directory
	}
	for _, a := range addrs {
		c.Resolve(0, a)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var sink Entry
	for i := 0; i < b.N; i++ {
		sink ^= c.Resolve(0, addrs[i&(len(addrs)-1)])
	}
	_ = sink
}

// TestCached: the cursor's fast path answers only for its own directory
// (same instance, same 4 MiB) and existing pages, and never for instances
// too high for its key, which Resolve still finds.
func TestCached(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	c := m.Cursor()
	if e := c.Cached(0, 0x1000); e != 0 {
		t.Fatalf("Cached on a fresh cursor = %#x, want 0", e)
	}
	e := c.Resolve(0, 0x1000)
	if got := c.Cached(0, 0x1ffc); got != e {
		t.Errorf("Cached in the same page = %#x, want %#x", got, e)
	}
	if got := c.Cached(0, 0x2000); got != 0 {
		t.Errorf("Cached on a page not created = %#x, want 0", got)
	}
	if got := c.Cached(1, 0x1000); got != 0 {
		t.Errorf("Cached in another instance = %#x, want 0", got)
	}
	if got := c.Cached(0, 0x1000+DirPages*PageBytes); got != 0 {
		t.Errorf("Cached in another directory = %#x, want 0", got)
	}
	// An instance at 1<<22 would collide with instance 0's key if the key
	// kept it: the cursor must not remember its directory.
	const high = 1 << 22
	h := c.Resolve(high, 0x1000)
	if h == 0 || h == e {
		t.Fatalf("Resolve(%d, 0x1000) = %#x, want a new page (instance 0's is %#x)", high, h, e)
	}
	if got := c.Cached(high, 0x1000); got != 0 {
		t.Errorf("Cached(%d) = %#x, want 0: the key cannot hold the instance", high, got)
	}
	if got := c.Cached(0, 0x1000); got != 0 {
		t.Errorf("Cached(0) after instance %d = %#x, want 0", high, got)
	}
	if got := c.Resolve(0, 0x1000); got != e {
		t.Errorf("Resolve(0, 0x1000) again = %#x, want %#x", got, e)
	}
	if got := c.Resolve(high, 0x1004); got != h {
		t.Errorf("Resolve(%d, 0x1004) = %#x, want %#x", high, got, h)
	}
}

// TestWordAdds: Cursor.WordAdds resolves the prefix of addresses whose
// pages exist, across directories and memory instances, to the WordRefs
// Resolve gives, each beside its addend shifted right (wordAdds), stops at
// the first page that does not exist, and
// creates nothing; and a Chunk's words and bits are its pages'.
func TestWordAdds(t *testing.T) {
	m, _ := New(WithShards(3))
	c := m.Cursor()
	addrs := []uint64{0x1000, 0x1ffc, 0x40_0000 + 8, 0x1004, 0x9000_0000} // directories 0, 1, 0, 0x240
	for _, a := range addrs {
		c.Resolve(1, a)
	}
	c.Resolve(2, 0x1000)
	want := make([]uint32, len(addrs))
	for i, a := range addrs {
		want[i] = m.Lookup(1, a).WordRef(a)
	}
	fresh := m.Cursor() // remembers no directory
	for _, cur := range []*Cursor{&fresh, &c} {
		out := make([]uint32, len(addrs))
		if n := wordAdds(t, cur, 1, addrs, out); n != len(addrs) || !slices.Equal(out, want) {
			t.Errorf("WordAdds = %d, %#x; want %d, %#x", n, out, len(addrs), want)
		}
	}
	pages := m.Pages()
	out := make([]uint32, 4)
	// Instance 2 has only the page at 0x1000; 0x2000 has none anywhere.
	if n := wordAdds(t, &c, 2, []uint64{0x1008, 0x2000, 0x1000}, out); n != 1 || out[0] != m.Lookup(2, 0x1008).WordRef(0x1008) {
		t.Errorf("WordAdds over a missing page = %d (%#x), want 1", n, out[0])
	}
	if n := wordAdds(t, &c, 1, []uint64{0x5_0000_0000}, out); n != 0 {
		t.Errorf("WordAdds in a directory never made = %d, want 0", n)
	}
	if m.Pages() != pages {
		t.Error("WordAdds created a page")
	}
	// Words and bits through the chunk are the page's.
	w := want[1]
	*m.Word(w) = 7
	m.Chunk(w).Touched[w%ChunkWords/64] |= 1 << (w % 64)
	p := m.Page(w >> (PageShift - 2))
	if p.Words[0xffc/4] != 7 || p.Touched[0xffc/4/64]>>(0xffc/4%64)&1 != 1 {
		t.Error("a chunk's word or written bit is not its page's")
	}
}

// wordAdds returns c.WordAdds(mem, addrs, addends, 3, …) and sets out to
// the words it resolved, having checked each addition's addend (the one
// given, shifted right by 3 and cut to 32 bits) and that the cursor is
// left in the directory of the last address resolved.
func wordAdds(t *testing.T, c *Cursor, mem uint32, addrs []uint64, out []uint32) int {
	t.Helper()
	addends := make([]uint64, len(addrs))
	for i := range addends {
		addends[i] = (uint64(i) + 1) * 0x9e37_79b9_7f4a_7c15 // bits past 32+3 too, which the cut drops
	}
	adds := make([]WordAdd, len(addrs))
	n := c.WordAdds(mem, addrs, addends, 3, adds)
	for i := range n {
		if want := uint32(addends[i] >> 3); adds[i].Add != want {
			t.Errorf("WordAdds(%#x)[%d] adds %#x, want %#x", addrs, i, adds[i].Add, want)
		}
		out[i] = adds[i].Word
	}
	if k, _ := dirKey(mem, addrs[max(n, 1)-1]); n > 0 && c.key != k {
		t.Errorf("WordAdds(%#x) leaves its cursor at key %#x, want %#x (its last address's directory)", addrs, c.key, k)
	}
	return n
}

// TestChunkMark marks words of a chunk, some twice, and checks the bitmap
// holds exactly the marked words, at the ends of the chunk too.
func TestChunkMark(t *testing.T) {
	c := newChunk()
	marked := map[uint32]bool{}
	for _, w := range []uint32{0, 63, 64, 65, 1000, 1000, ChunkWords - 1, ChunkWords - 64, 63} {
		c.Mark(w)
		marked[w] = true
	}
	for w := uint32(0); w < ChunkWords; w++ {
		if got := c.Touched[w/64]>>(w%64)&1 == 1; got != marked[w] {
			t.Fatalf("word %d: marked %v, want %v", w, got, marked[w])
		}
	}
}
