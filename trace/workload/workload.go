package workload

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/gpureplay/replay/trace"
)

// Spec says what to generate. A zero size means the workload's default; a
// size the workload does not take must be zero.
type Spec struct {
	Name    string        // one of Names()
	Dialect trace.Dialect // the instruction set of the trace
	Seed    uint64        // seeds every random draw
	// LaneOps is the target size in lane-ops (active lanes, summed over
	// instructions): the generator stops at the first instruction boundary
	// at or past it. Default DefaultLaneOps, at most MaxLaneOps.
	LaneOps uint64
	// Words is the address-space size in 4-byte words, where the workload
	// has one: uniform, the words updated (default 1<<20); spinlock, the
	// lock words (default 4); freduce, the accumulators (default 4).
	Words int
	// Bins is the number of histogram bins (default 256).
	Bins int
	// Zipf is the skew s >= 0 of the histogram keys: bin k-1 is drawn with
	// probability proportional to k^-s. 0 (the default) is uniform.
	Zipf float64
	// Vertices is the number of vertices of the bfs R-MAT graph (default
	// 1<<16, at most MaxVertices); EdgeFactor its edges per vertex
	// (default 16, as Graph500).
	Vertices   int
	EdgeFactor int
}

// Limits and defaults of a Spec.
const (
	DefaultLaneOps = 1_000_000
	MaxLaneOps     = 1 << 40
	MaxWords       = 1 << 32 // words of a region: 16 GiB
	// MaxLocks bounds the lock words of spinlock, which the generator models.
	MaxLocks = 1 << 24
	// MaxVertices bounds bfs: the initial distances (4 bytes a vertex) are
	// the trace header's .init, and a binary header holds at most 64 MiB.
	MaxVertices   = 1 << 23
	MaxEdgeFactor = 1 << 10
	MaxZipf       = 100

	// Base is the address of the first word of every workload's array (the
	// bins, the words, the locks, the distances, the accumulators, the
	// tail counter), in the global space. It is 32-bit, so vISA's UD byte
	// offsets reach it.
	Base = 0x1000_0000
	// GroupThreads is the threads of a group (CTA, work-group): eight warps
	// of 32, or sixteen SIMD16 sub-groups.
	GroupThreads = 256
	// AppendSurface is the binding-table index of the LSC append counter.
	AppendSurface = 0xA0
)

// SpecError is a Spec that New rejects: an unknown workload or dialect, or a
// size out of range or not taken by the workload. The command reports it as
// a usage error.
type SpecError struct{ Msg string }

func (e *SpecError) Error() string { return "workload: " + e.Msg }

func specErrorf(format string, args ...any) error {
	return &SpecError{Msg: fmt.Sprintf(format, args...)}
}

// The sizes a workload takes.
type sizes uint8

const (
	useWords sizes = 1 << iota
	useBins
	useZipf
	useVertices
	useEdgeFactor
)

type info struct {
	name   string
	models string
	uses   sizes
	words  int // default Words
	start  func(g *Generator) (stepper, error)
}

// workloads in the order Names lists them.
var workloads = []info{
	{name: "histogram", uses: useBins | useZipf, start: startFlat(kHistogram),
		models: "each lane increments bin[key], keys Zipf-distributed over -bins bins (-zipf 0 = uniform): image and data histograms; contention grows with skew"},
	{name: "uniform", uses: useWords, words: 1 << 20, start: startFlat(kUniform),
		models: "each lane adds a random value to a random one of -words words: GUPS/RandomAccess-style scattered updates"},
	{name: "hotcounter", start: startFlat(kHotCounter),
		models: "every lane increments one counter: worst-case serialization (ticket and global work counters)"},
	{name: "spinlock", uses: useWords, words: 4, start: startSpinlock,
		models: "CAS 0->1 acquire and exchange-0 release on -words lock words, losers retrying: critical sections"},
	{name: "bfs", uses: useVertices | useEdgeFactor, start: startBFS,
		models: "atomic min on dist[v] over the edges of an R-MAT graph, swept until no distance changes: BFS/SSSP relaxation"},
	{name: "freduce", uses: useWords, words: 4, start: startFlat(kFReduce),
		models: "each lane adds an f32 value to one of -words accumulators (lane t to t mod words): float reductions"},
	{name: "appendqueue", start: startFlat(kAppendQueue),
		models: "lanes holding an item (half, at random) take a slot from a tail counter (LSC: the append counter): stream compaction, work queues"},
}

func lookup(name string) *info {
	for i := range workloads {
		if workloads[i].name == name {
			return &workloads[i]
		}
	}
	return nil
}

// Names lists the workloads.
func Names() []string {
	ns := make([]string, len(workloads))
	for i, w := range workloads {
		ns[i] = w.name
	}
	return ns
}

// Describe says in one line what a workload models, or "" for an unknown
// name.
func Describe(name string) string {
	if w := lookup(name); w != nil {
		return w.models
	}
	return ""
}

// Generator generates one trace. It is a trace.Source.
type Generator struct {
	trace.NoCaps // a generator has no fast path of trace.Source
	spec         Spec
	hdr          trace.Header
	rng          *rand.Rand
	step         stepper
	statics      map[string]*trace.Static

	in      trace.Inst
	lanes   lanes      // per-lane values the stepper fills before emit
	lists   [][]uint64 // per input: the buffer a list vector uses
	emitted uint64     // lane-ops so far
	seq     uint64     // instructions so far
}

// stepper is a workload's state machine: step emits exactly one
// instruction with at least one active lane.
type stepper interface {
	step(g *Generator)
}

// New validates spec, fills in its defaults, parses every instruction text
// the workload emits and returns a generator positioned at the start.
func New(spec Spec) (*Generator, error) {
	w := lookup(spec.Name)
	if w == nil {
		return nil, specErrorf("unknown workload %q (%s)", spec.Name, strings.Join(Names(), ", "))
	}
	if spec.Dialect < trace.DialectPTX || spec.Dialect > trace.DialectLSC {
		return nil, specErrorf("unknown dialect %s (ptx, sass, visa, lsc)", spec.Dialect)
	}
	if err := w.fill(&spec); err != nil {
		return nil, err
	}
	g := &Generator{
		spec:    spec,
		rng:     rand.New(rand.NewPCG(spec.Seed, streamOf(spec.Name))),
		statics: map[string]*trace.Static{},
	}
	st, err := w.start(g)
	if err != nil {
		return nil, err
	}
	g.step = st
	return g, nil
}

// fill checks the sizes of spec against w and sets the defaults.
func (w *info) fill(s *Spec) error {
	type size struct {
		flag string
		use  sizes
		set  bool
	}
	for _, z := range []size{
		{"words", useWords, s.Words != 0}, {"bins", useBins, s.Bins != 0},
		{"zipf", useZipf, s.Zipf != 0}, {"vertices", useVertices, s.Vertices != 0},
		{"edge-factor", useEdgeFactor, s.EdgeFactor != 0},
	} {
		if z.set && w.uses&z.use == 0 {
			return specErrorf("%s takes no %s", w.name, z.flag)
		}
	}
	if s.LaneOps == 0 {
		s.LaneOps = DefaultLaneOps
	}
	if s.LaneOps > MaxLaneOps {
		return specErrorf("lane-ops %d is over the limit of %d (2^40)", s.LaneOps, uint64(MaxLaneOps))
	}
	// vISA DWORD_ATOMIC offsets are UD: the array must end below 4 GiB.
	maxWords := MaxWords
	if s.Dialect == trace.DialectVISA {
		maxWords = (1<<32 - Base) / 4
	}
	inRange := func(flag string, v, lo, hi int) error {
		if v < lo || v > hi {
			why := ""
			if hi == maxWords && maxWords != MaxWords {
				why = " (vISA byte offsets are 32-bit)"
			}
			return specErrorf("%s %d is outside %d..%d%s", flag, v, lo, hi, why)
		}
		return nil
	}
	if w.uses&useWords != 0 {
		if s.Words == 0 {
			s.Words = w.words
		}
		hi := maxWords
		if w.name == "spinlock" {
			hi = MaxLocks
		}
		if err := inRange("words", s.Words, 1, hi); err != nil {
			return err
		}
	}
	if w.uses&useBins != 0 {
		if s.Bins == 0 {
			s.Bins = 256
		}
		if err := inRange("bins", s.Bins, 1, maxWords); err != nil {
			return err
		}
	}
	if w.uses&useZipf != 0 && !(s.Zipf >= 0 && s.Zipf <= MaxZipf) {
		return specErrorf("zipf skew %v is outside 0..%d", s.Zipf, MaxZipf)
	}
	if w.uses&useVertices != 0 {
		if s.Vertices == 0 {
			s.Vertices = 1 << 16
		}
		if err := inRange("vertices", s.Vertices, 2, MaxVertices); err != nil {
			return err
		}
	}
	if w.uses&useEdgeFactor != 0 {
		if s.EdgeFactor == 0 {
			s.EdgeFactor = 16
		}
		if err := inRange("edge-factor", s.EdgeFactor, 1, MaxEdgeFactor); err != nil {
			return err
		}
	}
	return nil
}

// streamOf derives the PCG stream from the workload name (FNV-1a), so that
// two workloads with one seed draw different numbers.
func streamOf(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return h
}

// Spec returns the spec with its defaults filled in.
func (g *Generator) Spec() Spec { return g.spec }

// LaneOps returns the lane-ops generated so far.
func (g *Generator) LaneOps() uint64 { return g.emitted }

// Header returns the regions and initial memory the workload declares.
func (g *Generator) Header() *trace.Header { return &g.hdr }

// Next returns the next instruction, or io.EOF once LaneOps lane-ops are
// out. The instruction and its values are reused by the next call.
func (g *Generator) Next() (*trace.Inst, error) {
	if g.emitted >= g.spec.LaneOps {
		return nil, io.EOF
	}
	g.step.step(g)
	g.in.Seq = g.seq
	g.seq++
	g.emitted += uint64(bits.OnesCount32(g.in.Active()))
	return &g.in, nil
}

// region declares words 4-byte words at Base in the global space.
func (g *Generator) region(words uint64) {
	g.hdr.Regions = append(g.hdr.Regions, trace.Region{Space: trace.Global, Base: Base, Size: 4 * words})
}

// float32 bits of a uniform value in [0, 1) with 24 random bits: exact, so
// the same on every platform.
func randF32(r *rand.Rand) uint64 {
	return uint64(math.Float32bits(float32(r.Uint32()>>8) * (1.0 / (1 << 24))))
}
