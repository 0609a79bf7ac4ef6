package workload

import "github.com/gpureplay/replay/trace"

// flatKind is a workload where every thread of a 1-D grid runs one atomic:
// thread t is lane t mod the warp size of warp t / warp size, and warps fill
// 256-thread groups in order.
type flatKind uint8

const (
	kHistogram flatKind = iota
	kUniform
	kHotCounter
	kFReduce
	kAppendQueue
)

type flat struct {
	kind flatKind
	in   *instr
	n    uint64 // bins, words or accumulators
	zipf zipf
	warp uint64 // the next warp of the grid
}

func startFlat(k flatKind) func(g *Generator) (stepper, error) {
	return func(g *Generator) (stepper, error) {
		f := &flat{kind: k, n: 1}
		o := opAdd
		switch k {
		case kHistogram:
			f.n = uint64(g.spec.Bins)
			f.zipf = newZipf(f.n, g.spec.Zipf)
		case kUniform:
			f.n = uint64(g.spec.Words)
		case kFReduce:
			f.n = uint64(g.spec.Words)
			o = opFAdd
		case kAppendQueue:
			o = opAppend
		}
		in, err := g.instr(o)
		if err != nil {
			return nil, err
		}
		f.in = in
		if in.st.Space.Kind == trace.SpaceGlobal {
			g.region(f.n)
		}
		return f, nil
	}
}

func (f *flat) step(g *Generator) {
	in, r, l := f.in, g.rng, &g.lanes
	exec := uint64(in.exec)
	for {
		w := f.warp
		f.warp++
		mask := in.st.ExecMask()
		for i := range in.exec {
			switch f.kind {
			case kHistogram:
				l.addr[i], l.val[i] = Base+4*f.zipf.draw(r), 1
			case kUniform:
				l.addr[i], l.val[i] = Base+4*r.Uint64N(f.n), 1+r.Uint64N(256)
			case kHotCounter:
				l.addr[i], l.val[i] = Base, 1
			case kFReduce:
				l.addr[i], l.val[i] = Base+4*((w*exec+uint64(i))%f.n), randF32(r)
			case kAppendQueue:
				l.addr[i], l.val[i] = Base, 1
				if r.Uint32()&1 == 0 {
					mask &^= 1 << i // this thread has no item to append
				}
			}
		}
		if mask == 0 {
			continue // no lane appends: the warp branches around the atomic
		}
		g.emit(in, int64(w/uint64(in.wpg)), int64(w%uint64(in.wpg)), mask)
		return
	}
}
