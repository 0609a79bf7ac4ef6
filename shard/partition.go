package shard

import (
	"fmt"
	"math/bits"
)

const (
	// LineShift is log2 of the unit a partition owns: a 128-byte line.
	// Every access that touches memory is naturally aligned and at most
	// 16 bytes (a misaligned one faults first), so it lies in one line,
	// hence in one partition.
	LineShift = 7
	// LineBytes is the size of a line: 128 bytes, 32 words.
	LineBytes = 1 << LineShift
	// PageLines is the number of lines in a page: 32.
	PageLines = PageBytes / LineBytes

	// MaxPartitions is the most partitions a replay can be split into.
	MaxPartitions = 1 << 16
)

// Partitioner maps an address of a memory instance to its partition of n
// (see [Partition]), with the reductions modulo n worked out once, so that
// a replay checks a lane in a few instructions and no division. The zero
// Partitioner is not usable: see [NewPartitioner].
type Partitioner struct {
	n       uint32
	lineMod [PageLines]uint32 // line % n
	// mapped is the partition map's lines (NewPartitionerMap), an open
	// addressing table of a power of two slots, at most half full, that
	// a line's page hash and line in the page index; nil without a map.
	mapped []mappedLine
	shift  uint8 // 64 - log2(len(mapped))
}

// LineOwner is an entry of a partition map: the 128-byte line Line
// (an address >> LineShift) of the memory instance Key belongs to
// partition Part, whatever [Partition] says.
type LineOwner struct {
	Key, Line uint64
	Part      int
}

// mappedLine is a slot of Partitioner.mapped: part is the partition + 1,
// 0 for an empty slot.
type mappedLine struct {
	key, line uint64
	part      uint32
}

// MaxMappedLines is the most lines a partition map holds.
const MaxMappedLines = 1 << 16

// NewPartitioner returns the partitioner of n partitions, 1..MaxPartitions.
func NewPartitioner(n int) (Partitioner, error) {
	if n < 1 || n > MaxPartitions {
		return Partitioner{}, fmt.Errorf("shard: %d partitions: want 1..%d", n, MaxPartitions)
	}
	p := Partitioner{n: uint32(n)}
	for l := range p.lineMod {
		p.lineMod[l] = uint32(l % n)
	}
	return p, nil
}

// NewPartitionerMap returns the partitioner of n partitions that gives
// each line of lines its partition and every other line [Partition]'s:
// a partition map, which replay split derives from a sample of a trace
// so that its few heaviest lines are spread over the partitions by their
// load rather than by a hash. A line must be in lines at most once, with
// a partition below n.
func NewPartitionerMap(n int, lines []LineOwner) (Partitioner, error) {
	p, err := NewPartitioner(n)
	if err != nil || len(lines) == 0 {
		return p, err
	}
	if len(lines) > MaxMappedLines {
		return Partitioner{}, fmt.Errorf("shard: a partition map of %d lines: at most %d", len(lines), MaxMappedLines)
	}
	size := 1 << bits.Len(uint(2*len(lines)-1)) // at least twice the lines
	p.mapped, p.shift = make([]mappedLine, size), uint8(64-bits.TrailingZeros(uint(size)))
	for _, l := range lines {
		if l.Part < 0 || l.Part >= n {
			return Partitioner{}, fmt.Errorf("shard: a partition map gives line %#x of memory %#x partition %d of %d", l.Line, l.Key, l.Part, n)
		}
		i := p.slot(l.Key, l.Line, PageMix(l.Key, l.Line<<LineShift))
		for ; p.mapped[i].part != 0; i = (i + 1) & (size - 1) {
			if p.mapped[i].key == l.Key && p.mapped[i].line == l.Line {
				return Partitioner{}, fmt.Errorf("shard: a partition map has line %#x of memory %#x twice", l.Line, l.Key)
			}
		}
		p.mapped[i] = mappedLine{key: l.Key, line: l.Line, part: uint32(l.Part) + 1}
	}
	return p, nil
}

// slot is where line (of page hash h) of memory key starts its probe in
// p.mapped.
func (p *Partitioner) slot(key, line, h uint64) int {
	return int((h ^ (line&(PageLines-1))*0x9e3779b97f4a7c15) >> p.shift)
}

// Of is [Partition](key, addr, n), for the n of NewPartitioner, or the
// partition map's partition of addr's line.
func (p *Partitioner) Of(key, addr uint64) int {
	h := PageMix(key, addr)
	if p.mapped != nil {
		line, mask := addr>>LineShift, len(p.mapped)-1
		for i := p.slot(key, line, h); p.mapped[i].part != 0; i = (i + 1) & mask {
			if m := &p.mapped[i]; m.line == line && m.key == key {
				return int(m.part - 1)
			}
		}
	}
	hi, _ := bits.Mul64(h, uint64(p.n))
	x := p.lineMod[lineOrder(uint32(addr>>LineShift)&(PageLines-1), h)] + uint32(hi)
	if x >= p.n {
		x -= p.n
	}
	return int(x)
}

// lineOrder is where line u of a page of hash h comes in the page's
// round-robin: a bijection of 0..PageLines-1 (an xor, then twice a
// multiplication by an odd number and an xorshift, all modulo 32), which
// moves the low bits of u, not only their sum with a constant, so that
// lines hot for their low bits being zero (an R-MAT graph's vertices)
// do not all come round to one partition.
func lineOrder(u uint32, h uint64) uint32 {
	const m = PageLines - 1
	u = (u ^ uint32(h)) & m
	u = u * (uint32(h>>16) | 1) & m
	u ^= u >> 2
	u = u * (uint32(h>>32) | 1) & m
	return u ^ u>>2
}

// Partition is the partition, of n, that owns addr in the memory instance
// named by key (a number that depends only on the instance, the same in
// every process: engine.PartitionKey): the 128-byte lines of a page go
// round-robin over the partitions, in an order and from a starting
// partition that the page's hash h = PageMix(key, addr) picks,
//
//	(lineOrder(line in page, h) + h·n / 2^64) mod n.
//
// So a page's 32 lines spread over min(n, 32) partitions, as evenly as 32
// allows; a contiguous array of lines (a histogram's bins) spreads evenly
// however few pages it takes; arrays at a page stride do not all start in
// one partition; and lines hot for the low bits of their index do not all
// come round to one.
func Partition(key, addr uint64, n int) int {
	p, err := NewPartitioner(n)
	if err != nil {
		panic(err)
	}
	return p.Of(key, addr)
}

// PageMix is the hash that rotates a page's lines over the partitions:
// the splitmix64 finalizer of key XOR the page number times 2^64/φ. It is
// computed for every lane a partitioned replay or a split checks, so it is
// a multiply-xorshift mix (two multiplications) rather than [Hash]'s
// xxhash; it need only make the rotation of one page independent of its
// neighbours'.
func PageMix(key, addr uint64) uint64 {
	z := key ^ (addr>>PageShift)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
