package shard

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
)

const (
	// GranuleShift is log2 of the granule size. A granule holds every
	// naturally aligned access (<= 16 bytes) whole, so no access spans two
	// granules, hence two shards.
	GranuleShift = 8
	// GranuleBytes is the size of a granule in bytes: 256.
	GranuleBytes = 1 << GranuleShift
	// GranuleWords is the number of 32-bit words in a granule: 64.
	GranuleWords = GranuleBytes / 4

	// DefaultShards is the shard count when [WithShards] is not given.
	DefaultShards = 64
	// MaxShards is the largest shard count [WithShards] accepts.
	MaxShards = 1 << 16
	// MaxBlockHint is the largest hint [WithBlockHint] accepts.
	MaxBlockHint = 1 << 32
)

// Block is one granule of memory: 64 little-endian 32-bit words, and a
// bitmap of words touched (bit i = word i).
type Block struct {
	Words   [GranuleWords]uint32
	Touched uint64
}

type options struct {
	shards    int
	blockHint int
}

// Option configures [New].
type Option func(*options) error

// WithShards sets the number of shards, 1..[MaxShards]. The default is
// [DefaultShards] (64). Where each granule lives depends on this count;
// what memory holds does not.
func WithShards(n int) Option {
	return func(o *options) error {
		if n < 1 || n > MaxShards {
			return fmt.Errorf("shard: WithShards(%d): want 1..%d", n, MaxShards)
		}
		o.shards = n
		return nil
	}
}

// WithBlockHint presizes for about n blocks in all, spread over the shards,
// so a replay of known footprint never grows a table. The default is 0:
// tables and chunks start small and grow. n must be in 0..[MaxBlockHint].
func WithBlockHint(n int) Option {
	return func(o *options) error {
		if n < 0 || uint64(n) > MaxBlockHint {
			return fmt.Errorf("shard: WithBlockHint(%d): want 0..%d", n, uint64(MaxBlockHint))
		}
		o.blockHint = n
		return nil
	}
}

// Memory is the simulated memory: a fixed array of shards, each holding
// the granules whose key hashes to it.
type Memory struct {
	shards  []Shard
	nshards uint64
}

// New returns an empty memory.
func New(opts ...Option) (*Memory, error) {
	o := options{shards: DefaultShards}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("shard: nil Option")
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	m := &Memory{shards: make([]Shard, o.shards), nshards: uint64(o.shards)}
	per := 0
	if o.blockHint > 0 {
		// Allow for an uneven spread: an eighth more than the mean, about
		// four standard deviations at 1024 blocks a shard.
		per = (o.blockHint+o.shards-1)/o.shards + o.blockHint/o.shards/8
	}
	for i := range m.shards {
		m.shards[i].init(per)
	}
	return m, nil
}

// Shards returns the number of shards.
func (m *Memory) Shards() int { return len(m.shards) }

// ShardIndex maps a hash to a shard with a multiply-shift (the high word of
// h*Shards()), as pebble's cache does: uniform for any shard count and no
// division. It uses the hash's high bits; a shard's table uses the low ones.
func (m *Memory) ShardIndex(h uint64) int {
	hi, _ := bits.Mul64(h, m.nshards)
	return int(hi)
}

// Shard returns shard i, 0 <= i < Shards().
func (m *Memory) Shard(i int) *Shard { return &m.shards[i] }

// Len returns the number of blocks in all shards. It takes each shard's
// lock in turn.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.Lock()
		n += s.Len()
		s.Unlock()
	}
	return n
}

// BlockRef names one block of a memory: its memory instance and the
// address of its first byte.
type BlockRef struct {
	Mem   uint32
	Base  uint64
	Block *Block
}

// Blocks returns every block of the memory, all shards, sorted by (Mem,
// Base). It takes each shard's lock in turn, so it must not be called with
// a shard's lock held; it is meant for the end of a replay.
func (m *Memory) Blocks() []BlockRef {
	refs := make([]BlockRef, 0, m.Len())
	for i := range m.shards {
		s := &m.shards[i]
		s.Lock()
		s.ForEach(func(mem uint32, base uint64, b *Block) {
			refs = append(refs, BlockRef{Mem: mem, Base: base, Block: b})
		})
		s.Unlock()
	}
	slices.SortFunc(refs, func(a, b BlockRef) int {
		if a.Mem != b.Mem {
			if a.Mem < b.Mem {
				return -1
			}
			return 1
		}
		if a.Base < b.Base {
			return -1
		}
		if a.Base > b.Base {
			return 1
		}
		return 0
	})
	return refs
}

// Shard is one lock stripe of a [Memory]: the blocks whose key hashes to
// it. Every method, and every access through a returned *Block, needs the
// shard's lock held (doc invariant 3).
type Shard struct {
	mu sync.Mutex

	// The memo: the last block returned, for runs of accesses to one
	// granule. memoGran starts as noGranule, which no address has, so a
	// nil memo is never returned.
	memoMem  uint32
	memoGran uint64
	memo     *Block

	tab   table
	arena arena

	// Keep the next shard's mutex and memo off this shard's last cache
	// line, so workers on neighbouring shards do not share lines.
	_ [64]byte
}

// noGranule is a granule number no address has: addr>>GranuleShift is
// below 1<<(64-GranuleShift).
const noGranule = ^uint64(0)

func (s *Shard) init(hint int) {
	s.memoGran = noGranule
	s.tab.init(hint)
	s.arena.init(hint)
}

// Lock locks the shard.
func (s *Shard) Lock() { s.mu.Lock() }

// Unlock unlocks the shard.
func (s *Shard) Unlock() { s.mu.Unlock() }

// Block returns the block holding addr in memory instance mem, creating it
// zeroed if absent. h must be Hash(mem, addr), and the shard must be the
// one [Memory.ShardIndex](h) names. The pointer stays valid for the life of
// the memory; a hit allocates nothing.
func (s *Shard) Block(mem uint32, addr uint64, h uint64) *Block {
	if addr>>GranuleShift == s.memoGran && mem == s.memoMem {
		return s.memo
	}
	return s.block(mem, addr, h)
}

// block is Block past the memo.
func (s *Shard) block(mem uint32, addr, h uint64) *Block {
	g := addr >> GranuleShift
	ref, pos := s.tab.find(mem, g, h)
	if ref == 0 {
		ref = s.create(mem, g, h, pos)
	}
	b := s.arena.at(ref)
	s.memoMem, s.memoGran, s.memo = mem, g, b
	return b
}

// create adds a zeroed block for (mem, g) at table position pos, where
// find stopped, and returns its reference.
func (s *Shard) create(mem uint32, g, h uint64, pos uint64) uint32 {
	ref := s.arena.alloc()
	if s.tab.full() {
		s.tab.grow()
		_, pos = s.tab.find(mem, g, h)
	}
	s.tab.put(pos, mem, g, ref)
	return ref
}

// Lookup is Block without creating: it returns nil if the granule holding
// addr in mem has no block.
func (s *Shard) Lookup(mem uint32, addr uint64, h uint64) *Block {
	g := addr >> GranuleShift
	if g == s.memoGran && mem == s.memoMem {
		return s.memo
	}
	ref, _ := s.tab.find(mem, g, h)
	if ref == 0 {
		return nil
	}
	b := s.arena.at(ref)
	s.memoMem, s.memoGran, s.memo = mem, g, b
	return b
}

// Len returns the number of blocks in the shard.
func (s *Shard) Len() int { return s.tab.n }

// ForEach calls fn for every block of the shard, in no particular order;
// base is the address of the granule's first byte. fn must not create
// blocks in this shard.
func (s *Shard) ForEach(fn func(mem uint32, base uint64, b *Block)) {
	for i := range s.tab.slots {
		sl := &s.tab.slots[i]
		if sl.ref != 0 {
			fn(sl.mem, (sl.gran1-1)<<GranuleShift, s.arena.at(sl.ref))
		}
	}
}

// xxhash64 primes.
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

// Hash is the xxhash64 of the granule key of addr in memory instance mem:
// the 16 bytes uint64(mem), addr>>GranuleShift, little endian. It equals
// xxhash.Sum64 of those bytes, computed inline without a buffer.
func Hash(mem uint32, addr uint64) uint64 {
	// Seed 0 and length 16, then one 8-byte round per word; + and ^
	// associate left to right.
	h := (prime5 + 16) ^ xxRound(uint64(mem))
	h = bits.RotateLeft64(h, 27)*prime1 + prime4 ^ xxRound(addr>>GranuleShift)
	h = bits.RotateLeft64(h, 27)*prime1 + prime4
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// Hasher is Hash with a one-entry memo: for runs of accesses to one
// granule (coalesced lanes, a sequential sweep) it returns the last hash
// without recomputing it. The zero value is ready to use; it is not safe
// for concurrent use.
type Hasher struct {
	mem   uint32
	gran1 uint64 // granule number plus one; 0 matches no address
	h     uint64
}

// Hash returns [Hash](mem, addr).
func (k *Hasher) Hash(mem uint32, addr uint64) uint64 {
	if addr>>GranuleShift+1 == k.gran1 && mem == k.mem {
		return k.h
	}
	return k.miss(mem, addr)
}

func (k *Hasher) miss(mem uint32, addr uint64) uint64 {
	k.mem, k.gran1, k.h = mem, addr>>GranuleShift+1, Hash(mem, addr)
	return k.h
}

// hashGranule is Hash of a granule number g < 1<<(64-GranuleShift).
func hashGranule(mem uint32, g uint64) uint64 {
	return Hash(mem, g<<GranuleShift)
}

func xxRound(x uint64) uint64 {
	return bits.RotateLeft64(x*prime2, 31) * prime1
}
