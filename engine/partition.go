package engine

import (
	"fmt"
	"math/bits"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// A partitioned replay (WithPartition) applies the accesses to the lines
// its partition owns (shard.Partition) and skips the others. The read
// stage gives every memory id the key that names its (space, group) in
// any process (PartitionKey); expand checks each warp: a warp whose every
// lane-element is this partition's takes the paths a whole replay takes,
// any other goes lane-element by lane-element (expandLanes), the others'
// rows dropped. A split trace (replay split) holds only the lanes that
// have an element here, so its warps take the whole-warp paths.

// PartitionKey names the memory instance of space (and group, for a
// per-group space) the same way in every process: the key shard.Partition
// takes. group is ignored for a space that is not per group.
func PartitionKey(space trace.Space, group int64) uint64 {
	if !space.PerGroup() {
		group = -1
	}
	k := uint64(space.Kind)<<32 | uint64(space.Surface)
	return mix64(k*0x9e3779b97f4a7c15 ^ mix64(uint64(group)))
}

// PartitionOf is the partition, of n, that owns addr in space (group): the
// one whose replay applies the accesses to it.
func PartitionOf(space trace.Space, group int64, addr uint64, n int) int {
	return shard.Partition(PartitionKey(space, group), addr, n)
}

// newPartitioner is the partitioner of n partitions of a trace with
// header h: the hash's, or the partition map's for the lines it names (a
// split trace's, trace.Header.PartitionMap).
func newPartitioner(h *trace.Header, n int) (shard.Partitioner, error) {
	if n == 1 || len(h.PartitionMap) == 0 {
		return shard.NewPartitioner(n)
	}
	lines := make([]shard.LineOwner, len(h.PartitionMap))
	for i, l := range h.PartitionMap {
		lines[i] = shard.LineOwner{Key: l.Key, Line: l.Line, Part: l.Part}
	}
	pt, err := shard.NewPartitionerMap(n, lines)
	if err != nil {
		return pt, fmt.Errorf("engine: the trace's partition map: %w", err)
	}
	return pt, nil
}

// local reports whether addr of memory id mem is this partition's.
func (b *batch) local(mem uint32, addr uint64) bool {
	return b.pt.Of(b.partKeys[mem], addr) == b.part
}

// warpLocal reports whether every active lane-element of bi is this
// partition's.
func (b *batch) warpLocal(bi *xinst) bool {
	p := bi.plan
	key := b.partKeys[bi.mem]
	for m := bi.active; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		for e := range p.st.Elems {
			if b.pt.Of(key, p.addr(bi, lane, e)) != b.part {
				return false
			}
		}
	}
	return true
}
