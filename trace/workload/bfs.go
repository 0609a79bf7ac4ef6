package workload

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"

	"github.com/gpureplay/replay/trace"
)

// bfs: Bellman-Ford single-source shortest paths, edge-parallel and
// topology-driven as GPU graph codes write it: each sweep is a launch with
// one thread per edge (u, v, w) of an R-MAT graph, and a thread whose u is
// reached relaxes its edge,
//
//	if (dist[u] != INF) atomicMin(&dist[v], dist[u] + w);
//
// Threads whose u is unreached are inactive lanes; a warp with none active
// branches around the atomic and is not traced. Sweeps repeat until one
// changes nothing; then a new source s joins (one lane: atomicMin(&dist[s],
// 0)), which makes it multi-source SSSP, and the sweeps go on until the
// lane-op target. Weights are 1..16, so with every w = 1 it would be BFS.
//
// dist (4 bytes a vertex) starts as the header's .init: INF = 0xffffffff
// except dist[0] = 0, the first source (the R-MAT hub). The generator keeps
// dist as the replay will have it, reading dist[u] for all lanes before
// applying an instruction's mins in lane order. Edges are never stored: a
// seeded stream regenerates them, in the same order, every sweep.
type bfs struct {
	in      *instr
	n       uint64   // vertices
	scale   int      // bits of a vertex id
	edges   uint64   // Vertices * EdgeFactor
	dist    []uint32 // the distances as the replay will have them
	seeds   [2]uint64
	es      rand.PCG // the edge stream
	e       uint64   // the next edge of this sweep
	changed bool     // this sweep lowered a distance
	active  uint64   // lanes this sweep ran
}

const inf = 0xffff_ffff

// R-MAT quadrant probabilities a=0.57, b=0.19, c=0.19, d=0.05 (Graph500) as
// thresholds on a uniform 32-bit draw.
const (
	rmatA  = 57 * (1 << 32) / 100
	rmatAB = 76 * (1 << 32) / 100
	rmatC  = 95 * (1 << 32) / 100
)

func startBFS(g *Generator) (stepper, error) {
	in, err := g.instr(opMin)
	if err != nil {
		return nil, err
	}
	n := uint64(g.spec.Vertices)
	b := &bfs{in: in, n: n, scale: bits.Len64(n - 1), edges: n * uint64(g.spec.EdgeFactor),
		dist: make([]uint32, n)}
	b.seeds = [2]uint64{g.spec.Seed, streamOf("bfs edges")}
	b.es.Seed(b.seeds[0], b.seeds[1])
	for i := range b.dist {
		b.dist[i] = inf
	}
	b.dist[0] = 0
	g.region(n)
	// The initial distances, in .init lines of at most 4096 words so that a
	// text trace's lines stay short.
	const chunk = 4096
	for v := uint64(0); v < n; v += chunk {
		m := min(chunk, n-v)
		data := make([]byte, 4*m)
		for i := range m {
			binary.LittleEndian.PutUint32(data[4*i:], b.dist[v+i])
		}
		g.hdr.Inits = append(g.hdr.Inits, trace.Init{Space: trace.Global, Group: -1,
			Addr: Base + 4*v, Type: trace.TypeU32, Data: data})
	}
	return b, nil
}

// edge draws the next edge of the stream: R-MAT endpoints, two levels per
// 64-bit draw, redrawn when one falls outside [0, n), and a weight 1..16.
func (b *bfs) edge() (u, v uint64, w uint32) {
	for {
		u, v = 0, 0
		var x uint64
		for lvl := range b.scale {
			if lvl%2 == 0 {
				x = b.es.Uint64()
			}
			r := uint32(x)
			x >>= 32
			var ub, vb uint64
			switch {
			case r < rmatA:
			case r < rmatAB:
				vb = 1
			case r < rmatC:
				ub = 1
			default:
				ub, vb = 1, 1
			}
			u, v = u<<1|ub, v<<1|vb
		}
		w = 1 + uint32(b.es.Uint64()>>60)
		if u < b.n && v < b.n {
			return u, v, w
		}
	}
}

func (b *bfs) newSweep() {
	b.e, b.changed, b.active = 0, false, 0
	b.es.Seed(b.seeds[0], b.seeds[1])
}

func (b *bfs) step(g *Generator) {
	in, l := b.in, &g.lanes
	exec := uint64(in.exec)
	for {
		if b.e == b.edges {
			converged, empty := !b.changed, b.active == 0
			b.newSweep()
			if converged && b.addSource(g, empty) {
				return
			}
		}
		w := b.e / exec
		var mask uint32
		for i := range in.exec {
			l.addr[i], l.val[i] = Base, 0
			if b.e == b.edges {
				continue // past the last edge: the launch's rounded-up last warp
			}
			u, v, wt := b.edge()
			b.e++
			l.addr[i] = Base + 4*v
			if d := b.dist[u]; d != inf {
				l.val[i] = uint64(d + wt)
				mask |= 1 << i
			}
		}
		if mask == 0 {
			continue
		}
		for i := range in.exec {
			if mask&(1<<i) != 0 {
				v := (l.addr[i] - Base) / 4
				if nd := uint32(l.val[i]); nd < b.dist[v] {
					b.dist[v] = nd
					b.changed = true
				}
			}
		}
		b.active += uint64(bits.OnesCount32(mask))
		g.emit(in, int64(w/uint64(in.wpg)), int64(w%uint64(in.wpg)), mask)
		return
	}
}

// addSource makes a new source s and emits atomicMin(&dist[s], 0) from one
// lane. After a sweep that ran no lane, s is edge 0's tail, so the next
// sweep runs at least one; otherwise it is drawn at random among vertices
// not yet at distance 0. It reports whether it emitted.
func (b *bfs) addSource(g *Generator, empty bool) bool {
	var s uint64
	if empty {
		s, _, _ = b.edge()
		b.newSweep()
	} else {
		found := false
		for range 64 {
			if s = g.rng.Uint64N(b.n); b.dist[s] != 0 {
				found = true
				break
			}
		}
		if !found {
			return false // (nearly) every vertex is a source: sweep on
		}
	}
	l := &g.lanes
	for i := range b.in.exec {
		l.addr[i], l.val[i] = Base+4*s, 0
	}
	b.dist[s] = 0
	g.emit(b.in, 0, 0, 1)
	return true
}
