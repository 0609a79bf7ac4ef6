package split

import (
	"cmp"
	"io"
	"slices"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// The partition map: a line's hash spreads a trace's lines evenly over the
// partitions by number, not by load; a trace whose load is on a few
// thousand lines (a graph's hot vertices) can leave one partition with
// 1.4 times the mean. So every split task reads the same sample of the
// trace, counts its lane-elements a line, and gives the heaviest lines,
// heaviest first, to the partition with the least load so far, the
// others' load counted where their hash puts them.

// Sample and map sizes: mapSampleChunks chunks spread evenly over the
// trace (about 5% of a trace of 300 chunks), and mapLinesPer lines a
// partition at most.
const (
	mapSampleChunks = 16
	mapLinesPer     = 32
)

// PartitionMap derives the partition map of n partitions from a sample
// of the trace x: the chunks ⌊j·C/S⌋ for j < S = min(C, 16) of its C. It
// depends on the trace and n alone, so every split task of a trace derives
// the same one; it holds the sample's up to 32·n heaviest lines (nil for
// n = 1), and returns S.
func PartitionMap(x *trace.BinaryIndex, n int) ([]shard.LineOwner, int, error) {
	c := x.NumChunks()
	if n == 1 || c == 0 {
		return nil, 0, nil
	}
	pt, err := shard.NewPartitioner(n)
	if err != nil {
		return nil, 0, err
	}
	rt := engine.NewRouterWith(x.Header(), n, pt)
	type line struct{ key, line uint64 }
	counts := map[line]uint64{}
	s := min(c, mapSampleChunks)
	for j := range s {
		k := j * c / s
		src, err := x.Reader(k, k+1)
		if err != nil {
			return nil, 0, err
		}
		for {
			in, err := src.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				src.Close()
				return nil, 0, err
			}
			if in.Dir != nil {
				continue
			}
			if _, err := rt.Route(in); err != nil {
				src.Close()
				return nil, 0, err
			}
			key, addrs := rt.Addrs()
			last, run := line{}, uint64(0) // a warp's lanes on one line: one map update
			for _, a := range addrs {
				l := line{key, a >> shard.LineShift}
				if l != last && run > 0 {
					counts[last] += run
					run = 0
				}
				last = l
				run++
			}
			if run > 0 {
				counts[last] += run
			}
		}
		src.Close()
	}
	type heavy struct {
		line
		n uint64
	}
	all := make([]heavy, 0, len(counts))
	for l, k := range counts {
		all = append(all, heavy{l, k})
	}
	slices.SortFunc(all, func(a, b heavy) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.key, b.key), cmp.Compare(a.line.line, b.line.line))
	})
	top := all[:min(len(all), mapLinesPer*n, shard.MaxMappedLines)]
	load := make([]uint64, n)
	for _, h := range all[len(top):] {
		load[pt.Of(h.key, h.line.line<<shard.LineShift)] += h.n
	}
	m := make([]shard.LineOwner, 0, len(top))
	for _, h := range top {
		p := 0
		for i, l := range load {
			if l < load[p] {
				p = i
			}
		}
		load[p] += h.n
		m = append(m, shard.LineOwner{Key: h.key, Line: h.line.line, Part: p})
	}
	return m, s, nil
}
