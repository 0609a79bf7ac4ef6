package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gpureplay/replay/trace"
	"github.com/gpureplay/replay/trace/workload"
)

// LaneOps is the size of every benchmark trace: 9.6·10^6 lane-ops, 300 K PTX
// warp instructions of 32 active lanes, the size of the figures.
const LaneOps = 9_600_000

// ShortLaneOps is the size under `go test -short`, for quick checks of the
// harness; the environment variable REPLAY_BENCH_LANEOPS sets any other.
const ShortLaneOps = LaneOps / 32

// Spec is one benchmark trace: a `replay gen` workload, in PTX, seed 1.
type Spec struct {
	Name     string // the benchmark's name for it
	Workload string // the workload of `replay gen`
	Words    int    // -words (uniform only; 0 is the workload's default)
}

// Specs are the benchmark traces, as `replay gen` makes them:
//
//	uniform-1Mi   replay gen uniform -words 1Mi    (GUPS-style scattered 32-bit adds)
//	uniform-64Mi  replay gen uniform -words 64Mi   (the same over 256 MiB)
//	histogram     replay gen histogram             (256 bins, uniform keys)
//	hotcounter    replay gen hotcounter            (every lane on one word)
var Specs = []Spec{
	{Name: "uniform-1Mi", Workload: "uniform", Words: 1 << 20},
	{Name: "uniform-64Mi", Workload: "uniform", Words: 1 << 26},
	{Name: "histogram", Workload: "histogram"},
	{Name: "hotcounter", Workload: "hotcounter"},
}

// SpecByName returns the spec of a benchmark trace.
func SpecByName(name string) (Spec, bool) {
	for _, s := range Specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Trace is a benchmark trace, encoded in the binary format.
type Trace struct {
	Name    string
	Data    []byte
	LaneOps uint64
}

// Generate encodes the named trace at (at least, to the next instruction)
// laneOps lane-ops, exactly as `replay gen WORKLOAD -dialect ptx -seed 1
// -lane-ops N [-words W] -o t.zst` writes it: the same generator and the
// binary writer's default chunking.
func Generate(name string, laneOps uint64) (*Trace, error) {
	s, ok := SpecByName(name)
	if !ok {
		return nil, fmt.Errorf("bench: unknown trace %q", name)
	}
	data, n, err := GenerateSpec(workload.Spec{Name: s.Workload, Dialect: trace.DialectPTX, Seed: 1,
		LaneOps: laneOps, Words: s.Words})
	if err != nil {
		return nil, err
	}
	return &Trace{Name: name, Data: data, LaneOps: n}, nil
}

// GenerateSpec encodes a workload in the binary format as `replay gen`
// writes it, and returns it with its lane-ops.
func GenerateSpec(spec workload.Spec) ([]byte, uint64, error) {
	g, err := workload.New(spec)
	if err != nil {
		return nil, 0, err
	}
	var buf bytes.Buffer
	w, err := trace.NewBinaryWriter(&buf, g.Header())
	if err != nil {
		return nil, 0, err
	}
	if err := trace.Copy(w, g); err != nil {
		return nil, 0, err
	}
	if err := w.Close(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), g.LaneOps(), nil
}

// GenerateCached is Generate, keeping the trace in dir (when not empty) so
// that the several test processes of one `make bench` build it once. The
// cache is only valid for one build of the generator: bench/run.sh makes a
// fresh directory per run and removes it.
func GenerateCached(dir, name string, laneOps uint64) (*Trace, error) {
	if dir == "" {
		return Generate(name, laneOps)
	}
	path := filepath.Join(dir, name+"-"+strconv.FormatUint(laneOps, 10)+".zst")
	meta := path + ".laneops"
	if data, err := os.ReadFile(path); err == nil {
		if m, err := os.ReadFile(meta); err == nil {
			if n, err := strconv.ParseUint(string(m), 10, 64); err == nil {
				return &Trace{Name: name, Data: data, LaneOps: n}, nil
			}
		}
	}
	t, err := Generate(name, laneOps)
	if err != nil {
		return nil, err
	}
	// Written under temporary names and renamed, so that a reader never
	// sees half a file.
	for _, f := range []struct {
		path string
		data []byte
	}{{path, t.Data}, {meta, []byte(strconv.FormatUint(t.LaneOps, 10))}} {
		tmp := f.path + ".tmp" + strconv.Itoa(os.Getpid())
		if err := os.WriteFile(tmp, f.data, 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, f.path); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Lanes are a trace's accesses decoded once into flat arrays, for the dense
// loop: lane-op i adds Val[i] to word Idx[i] of a []uint32 of Words words.
type Lanes struct {
	Idx   []uint32 // (address - region base) / 4
	Val   []uint32
	Words int // the words of the trace's region
}

// DecodeLanes reads a benchmark trace with the binary reader and flattens
// every active lane's access, in trace order. It takes only what the
// benchmark traces hold: one global region, scalar 32-bit atomics whose
// address is the address input and whose operand is the first source.
func DecodeLanes(data []byte) (*Lanes, error) {
	r, err := trace.NewBinaryReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	h := r.Header()
	if len(h.Regions) != 1 {
		return nil, fmt.Errorf("bench: %d regions, want 1", len(h.Regions))
	}
	reg := h.Regions[0]
	l := &Lanes{Words: int(reg.Size / 4)}
	for {
		in, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if in.Dir != nil {
			return nil, fmt.Errorf("bench: unexpected directive at seq %d", in.Seq)
		}
		s := in.Static
		if s.Elems != 1 || s.Addr < 0 || s.AddrUniform || len(s.B) != 1 || s.Type.Size() != 4 {
			return nil, fmt.Errorf("bench: %q is not a scalar 32-bit atomic", s.Text)
		}
		act := in.Active()
		av := &in.Vals[s.Addr]
		for lane := range s.ExecSize {
			if act&(1<<lane) == 0 {
				continue
			}
			a := (uint64(s.AddrScale)*av.Lo(lane) + uint64(s.AddrImm) + uint64(int64(lane)*s.LanePitch)) & s.AddrMask()
			if a < reg.Base || a >= reg.Base+reg.Size || a%4 != 0 {
				return nil, fmt.Errorf("bench: seq %d lane %d: address %#x outside the region", in.Seq, lane, a)
			}
			v, _ := in.Value(s.B[0], lane)
			l.Idx = append(l.Idx, uint32((a-reg.Base)/4))
			l.Val = append(l.Val, uint32(v))
		}
	}
	return l, nil
}

// AddressRecord is the addresses floor's record of one word: 48 bytes, the
// size of the engine's per-address entry (an access count and the warps'
// and groups' sketches), so that the floor moves the same bytes.
type AddressRecord struct {
	Accesses uint32
	_        [10]uint32
	Last     uint32
}

// AddressRecord16 is the same record in 16 bytes: an access count and no
// room for the sketches. A million of them (16 MiB) fit the machine's
// 32 MiB L3, where a million 48-byte records (48 MiB) do not: the floor
// with them says what the sketches' bytes cost.
type AddressRecord16 struct {
	Accesses uint32
	_        [2]uint32
	Last     uint32
}

// AddressFloor is the least a per-address statistic can cost on top of a
// replay: every lane-op counted into its word's record, recs[Idx[i]], a
// read and write of its one or two cache lines, with nothing to find it
// (the record of word i is recs[i]) and no sketch to update.
func AddressFloor(recs []AddressRecord, idx, val []uint32) {
	val = val[:len(idx)]
	for i, x := range idx {
		r := &recs[x]
		r.Accesses++
		r.Last ^= val[i]
	}
}

// AddressFloor16 is AddressFloor into 16-byte records: a loop of its own,
// not one over a record size given at run time, whose slicing and bounds
// checks doubled both floors.
func AddressFloor16(recs []AddressRecord16, idx, val []uint32) {
	val = val[:len(idx)]
	for i, x := range idx {
		r := &recs[x]
		r.Accesses++
		r.Last ^= val[i]
	}
}

// Dense is the bare loop the limit is made of: every lane-op's 32-bit add
// on a dense array, mem[Idx[i]] += Val[i], in trace order.
func Dense(mem, idx, val []uint32) {
	val = val[:len(idx)]
	for i, x := range idx {
		mem[x] += val[i]
	}
}

// Families are the workload families of the end-to-end benchmarks
// (bench/e2e), as `replay gen` names them, and Dialects the dialects each
// is generated in: traces named FAMILY-DIALECT.
var (
	Families = []string{"uniform", "histogram", "hotcounter", "spinlock", "freduce", "bfs", "appendqueue"}
	Dialects = []string{"ptx", "sass", "visa", "lsc"}
)
