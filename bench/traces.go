package bench

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/gpureplay/replay/trace"
	"github.com/gpureplay/replay/trace/workload"
)

// Trace is a benchmark trace, encoded in the binary format.
type Trace struct {
	Name    string
	Data    []byte
	LaneOps uint64
}

// Build makes the named trace of n warp instructions over words 4-byte
// words: "coalesced" (built here) or a `replay gen` workload (uniform,
// histogram, hotcounter, …) of the same size in PTX.
func Build(name string, n, words int) (*Trace, error) {
	if name != "coalesced" && name != "scattered" {
		return buildWorkload(name, n, words)
	}
	st, err := trace.ParseStatic("atom.global.add.u32 %r1, [%rd1], 1;")
	if err != nil {
		return nil, err
	}
	h := &trace.Header{Regions: []trace.Region{{Space: trace.Global, Base: 0, Size: uint64(words) * 4}}}
	var buf bytes.Buffer
	w, err := trace.NewBinaryWriter(&buf, h)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(1, uint64(len(name))))
	in := &trace.Inst{Static: st, Mask: ^uint32(0), Vals: make([]trace.Vector, 1)}
	list := make([]uint64, 32)
	for i := 0; i < n; i++ {
		in.Seq = uint64(i)
		in.Group, in.Warp = int64(i/8), int64(i%8)
		switch name {
		case "coalesced":
			in.Vals[0] = trace.Vector{Kind: trace.VecStride, Base: uint64(r.IntN(words/32)) * 128, Stride: 4}
		case "scattered":
			for l := range list {
				list[l] = uint64(r.IntN(words)) * 4
			}
			in.Vals[0] = trace.Vector{Kind: trace.VecList, List: list}
		default:
			return nil, fmt.Errorf("bench: unknown trace %q", name)
		}
		if err := w.Write(in); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return &Trace{Name: name, Data: buf.Bytes(), LaneOps: uint64(n) * 32}, nil
}

// buildWorkload encodes a generated workload of n*32 lane-ops.
func buildWorkload(name string, n, words int) (*Trace, error) {
	spec := workload.Spec{Name: name, Dialect: trace.DialectPTX, Seed: 1, LaneOps: uint64(n) * 32}
	if name == "uniform" {
		spec.Words = words
	}
	g, err := workload.New(spec)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w, err := trace.NewBinaryWriter(&buf, g.Header())
	if err != nil {
		return nil, err
	}
	for {
		in, err := g.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := w.Write(in); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return &Trace{Name: name, Data: buf.Bytes(), LaneOps: g.LaneOps()}, nil
}
