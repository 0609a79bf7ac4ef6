package split

import (
	"cmp"
	"io"
	"slices"
	"sync"
	"unsafe"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/internal/offheap"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// The partition map: a line's hash spreads a trace's lines evenly over the
// partitions by number, not by load; a trace whose load is on a few
// thousand lines (a graph's hot vertices) can leave one partition with
// 1.4 times the mean. So every split task reads the same sample of the
// trace and, when the sample's lane-elements fall unevenly on the
// partitions by hash, counts them a line and gives the heaviest lines,
// heaviest first, to the partition with the least load so far, the
// others' load counted where their hash puts them.

// Sample and map sizes: the first mapSampleLaneOps/S lane-elements of S =
// min(C, mapSampleChunks) chunks spread evenly over the trace's C (0.13%
// of a trace of 10^8 lane-ops, from the first 128 KiB of 8 chunks:
// every split task routes its slice and this; bfs's 512 heaviest lines
// show in it);
// mapLinesPer lines a partition at most; and no map where the sample's
// largest partition by hash is within mapEven of the mean.
const (
	mapSampleChunks  = 8
	mapSampleLaneOps = 1 << 17
	mapLinesPer      = 32
	mapEven          = 1.05
)

// PartitionMap derives the partition map of n partitions from a sample
// of the trace x (the first lane-elements of its chunks ⌊j·C/S⌋, j < S):
// nil when the sample falls evenly on the partitions by hash, else the
// sample's up to 32·n heaviest lines, each given to the partition with the
// least load when its turn comes. It depends on the trace and n alone, so
// every split task of a trace derives the same one, whatever workers (the
// goroutines that read and route the sample's chunks). It returns S too.
func PartitionMap(x *trace.BinaryIndex, n, workers int) ([]shard.LineOwner, int, error) {
	c := x.NumChunks()
	if n == 1 || c == 0 {
		return nil, 0, nil
	}
	pt, err := shard.NewPartitioner(n)
	if err != nil {
		return nil, 0, err
	}
	s := min(c, mapSampleChunks)
	// Chunk j's sample, each routed by its worker's router, which routes
	// an instruction as any other would, into its share of one Block:
	// 2 MiB of lines in fresh 4 KiB pages of the heap took 512 faults
	// (2.5-5 ms of CPU here), in huge pages 2.
	per := sampleCap(c)
	blk := offheap.NewBlock(s * per * int(unsafe.Sizeof(line{})))
	defer blk.Release()
	buf := offheap.SliceOf[line](blk)[:s*per]
	samples := make([][]line, s)
	errs := make([]error, s)
	workers = min(max(workers, 1), s)
	routers := make([]*engine.Router, workers)
	var wg sync.WaitGroup
	for w := range workers {
		routers[w] = engine.NewRouterWith(x.Header(), n, pt)
		wg.Go(func() {
			for j := w; j < s; j += workers {
				samples[j], errs[j] = sampleChunk(x, j*c/s, routers[w], buf[j*per:j*per:(j+1)*per])
				if errs[j] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, 0, err
		}
	}
	load := make([]uint64, n) // by hash
	for _, rt := range routers {
		for i, l := range rt.LaneOps() {
			load[i] += l
		}
	}
	var total uint64
	for _, l := range load {
		total += l
	}
	if total == 0 || float64(slices.Max(load))*float64(n) <= mapEven*float64(total) {
		return nil, s, nil
	}
	// Each worker counts its chunks' lines, then the counts add up.
	counted := make([]map[line]uint64, workers)
	for w := range workers {
		wg.Go(func() {
			m := map[line]uint64{}
			for j := w; j < s; j += workers {
				for _, l := range samples[j] {
					m[l]++
				}
			}
			counted[w] = m
		})
	}
	wg.Wait()
	counts := counted[0]
	for _, m := range counted[1:] {
		for l, k := range m {
			counts[l] += k
		}
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
	for _, h := range top { // the rest's load, by hash
		load[pt.Of(h.key, h.line.line<<shard.LineShift)] -= h.n
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

// line is a 128-byte line of a memory instance.
type line struct{ key, line uint64 }

// sampleChunk routes the first mapSampleLaneOps/mapSampleChunks
// lane-elements of chunk k (and the rest of the last instruction's) with
// rt, and returns their lines, appended to sample[:0]. It reads them
// from the first
// samplePrefix bytes of the chunk (trace.PrefixReader), four times as
// many while those hold too few (their routing undone), up to the whole
// chunk: the same lane-elements, whichever holds them, for a tenth of a
// chunk's reading and decompressing.
func sampleChunk(x *trace.BinaryIndex, k int, rt *engine.Router, sample []line) ([]line, error) {
	return sampleChunkFrom(x, k, rt, samplePrefix, sample)
}

// sampleCap is the most lines a chunk's sample of a trace of c chunks
// holds: its lane-elements, and the rest of its last instruction's.
func sampleCap(c int) int {
	return mapSampleLaneOps/min(c, mapSampleChunks) + trace.MaxLanes*4
}

// samplePrefix is the bytes of a chunk (of 1 MiB, as replay writes them)
// that sampleChunk reads first: 16384 lane-elements of a uniform trace,
// the widest per lane-element of bench-scale's, take about 72 KiB.
const samplePrefix = 128 << 10

// sampleChunkFrom is sampleChunk reading the first prefix bytes first.
func sampleChunkFrom(x *trace.BinaryIndex, k int, rt *engine.Router, prefix int, sample []line) ([]line, error) {
	laneOps := slices.Clone(rt.LaneOps())
	for n := prefix; ; n *= 4 {
		src, whole, err := x.PrefixReader(k, n)
		if err != nil {
			return nil, err
		}
		sample, err = sampleRecords(x, src, rt, sample[:0])
		src.Close()
		if err == nil || whole {
			return sample, err
		}
		copy(rt.LaneOps(), laneOps) // the records routed are routed again
	}
}

// sampleRecords routes the first mapSampleLaneOps/mapSampleChunks
// lane-elements of src (and the rest of the last instruction's) with rt,
// and appends their lines to sample.
func sampleRecords(x *trace.BinaryIndex, src *trace.BinaryReader, rt *engine.Router, sample []line) ([]line, error) {
	left := mapSampleLaneOps / min(x.NumChunks(), mapSampleChunks)
	var r engine.Routed
	for left > 0 {
		in, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return sample, err
		}
		if in.Dir != nil {
			continue
		}
		if err := rt.RouteInto(in, &r); err != nil {
			return sample, err
		}
		key, addrs := rt.Addrs()
		for _, a := range addrs {
			sample = append(sample, line{key, a >> shard.LineShift})
		}
		left -= len(addrs)
	}
	return sample, nil
}
