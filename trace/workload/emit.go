package workload

import (
	"fmt"
	"slices"

	"github.com/gpureplay/replay/trace"
)

// op is what an instruction does, whatever the dialect.
type op uint8

const (
	opAdd    op = iota // u32 add
	opMin              // u32 min
	opCAS              // b32 compare-and-swap: compare with cmp, write swap
	opExch             // b32 exchange (LSC has none: lsc_atomic_store)
	opFAdd             // f32 add
	opAppend           // LSC: add to a surface's append counter; elsewhere opAdd
)

// form is one instruction text and the registers it reads, by what they hold.
type form struct {
	text                 string
	ops                  []trace.Op // what the parser may call it
	addr, val, cmp, swap string     // register names; "" when not read
}

const (
	lscAdd  = "lsc_atomic_iadd.ugm (M1,32) V13:d32 flat[V12]:a64 V14 V0"
	lscFAdd = "lsc_atomic_fadd.ugm (M1,32) V13:d32 flat[V12]:a64 V14 V0"
)

// forms gives, per dialect, the text of each op. Register numbers follow
// what the compilers emit for `old = atomicOp(&a[i], v)`.
var forms = [...]map[op]form{
	trace.DialectPTX: {
		opAdd:  {"atom.global.add.u32 %r1, [%rd1], %r2;", []trace.Op{trace.OpAdd}, "%rd1", "%r2", "", ""},
		opMin:  {"atom.global.min.u32 %r1, [%rd1], %r2;", []trace.Op{trace.OpMin}, "%rd1", "%r2", "", ""},
		opCAS:  {"atom.global.cas.b32 %r1, [%rd1], %r2, %r3;", []trace.Op{trace.OpCAS}, "%rd1", "", "%r2", "%r3"},
		opExch: {"atom.global.exch.b32 %r4, [%rd1], %r5;", []trace.Op{trace.OpExch}, "%rd1", "%r5", "", ""},
		opFAdd: {"atom.global.add.f32 %f1, [%rd1], %f2;", []trace.Op{trace.OpAdd}, "%rd1", "%f2", "", ""},
	},
	trace.DialectSASS: {
		opAdd: {"ATOM.E.ADD.U32 R0, [R2], R4", []trace.Op{trace.OpAdd}, "R2", "R4", "", ""},
		opMin: {"ATOM.E.MIN.U32 R0, [R2], R4", []trace.Op{trace.OpMin}, "R2", "R4", "", ""},
		// CUDA Binary Utilities, ATOM: for CAS, Rb is an even register and Rc is Rb+1.
		opCAS:  {"ATOM.E.CAS R0, [R2], R4, R5", []trace.Op{trace.OpCAS}, "R2", "", "R4", "R5"},
		opExch: {"ATOM.E.EXCH R0, [R2], R6", []trace.Op{trace.OpExch}, "R2", "R6", "", ""},
		opFAdd: {"ATOM.E.ADD.F32.FTZ.RN R0, [R2], R4", []trace.Op{trace.OpAdd}, "R2", "R4", "", ""},
	},
	trace.DialectVISA: {
		// DWORD_ATOMIC.<Op> (<Exec_size>) <Surface> <Element_offset> <Src0> <Src1> <Dst>
		opAdd: {"DWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12", []trace.Op{trace.OpAdd}, "V10", "V11", "", ""},
		opMin: {"DWORD_ATOMIC.MIN (16) T255 V10 V11 V0 V12", []trace.Op{trace.OpMin}, "V10", "V11", "", ""},
		// CMPXCHG: new = (old == src1) ? src0 : old.
		opCAS:  {"DWORD_ATOMIC.CMPXCHG (16) T255 V10 V11 V13 V12", []trace.Op{trace.OpCAS}, "V10", "", "V13", "V11"},
		opExch: {"DWORD_ATOMIC.XCHG (16) T255 V10 V14 V0 V12", []trace.Op{trace.OpExch}, "V10", "V14", "", ""},
		// DWORD_ATOMIC has no FADD (FMAX, FMIN, FCMPWR only): compilers
		// use the LSC message, at the kernel's SIMD16.
		opFAdd: {"lsc_atomic_fadd.ugm (M1,16) V13:d32 flat[V12]:a64 V14 V0", []trace.Op{trace.OpAdd}, "V12", "V14", "", ""},
	},
	trace.DialectLSC: {
		opAdd: {lscAdd, []trace.Op{trace.OpAdd}, "V12", "V14", "", ""},
		opMin: {"lsc_atomic_umin.ugm (M1,32) V13:d32 flat[V12]:a64 V14 V0", []trace.Op{trace.OpMin}, "V12", "V14", "", ""},
		// icas: new = (old == src1) ? src2 : old.
		opCAS: {"lsc_atomic_icas.ugm (M1,32) V13:d32 flat[V12]:a64 V14 V15", []trace.Op{trace.OpCAS}, "V12", "", "V14", "V15"},
		// LSC has no exchange; lsc_atomic_store writes and returns the old value.
		opExch:   {"lsc_atomic_store.ugm (M1,32) V13:d32 flat[V12]:a64 V16 V0", []trace.Op{trace.OpStore, trace.OpExch}, "V12", "V16", "", ""},
		opFAdd:   {lscFAdd, []trace.Op{trace.OpAdd}, "V12", "V14", "", ""},
		opAppend: {"lsc_apndctr_atomic_add.ugm (M1,32) V13:d32 bti(0xA0) V14:d32", []trace.Op{trace.OpAdd}, "", "V14", "", ""},
	},
}

// role is what an input holds.
type role uint8

const (
	rAddr role = iota
	rVal
	rCmp
	rSwap
)

// lanes is the per-lane values of one instruction, by role.
type lanes struct {
	addr, val, cmp, swap [trace.MaxLanes]uint64
}

func (l *lanes) of(r role) *[trace.MaxLanes]uint64 {
	switch r {
	case rAddr:
		return &l.addr
	case rVal:
		return &l.val
	case rCmp:
		return &l.cmp
	}
	return &l.swap
}

// instr is a parsed form.
type instr struct {
	st   *trace.Static
	role []role // per input
	exec int    // lanes
	wpg  int    // warps (sub-groups) per group
}

// instr parses the dialect's text for o, once, and checks that the parser
// reads it as this package means it.
func (g *Generator) instr(o op) (*instr, error) {
	d := g.spec.Dialect
	if o == opAppend && d != trace.DialectLSC {
		o = opAdd
	}
	f, ok := forms[d][o]
	if !ok {
		return nil, fmt.Errorf("workload %s: no %s form for op %d", g.spec.Name, d, o)
	}
	st := g.statics[f.text]
	if st == nil {
		var err error
		st, err = trace.ParseStatic(f.text)
		if err != nil {
			return nil, fmt.Errorf("workload %s: the %s parser rejects %q: %w", g.spec.Name, d, f.text, err)
		}
		g.statics[f.text] = st
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("workload %s: the %s parser reads %q %s", g.spec.Name, d, f.text, fmt.Sprintf(format, args...))
	}
	if !slices.Contains(f.ops, st.Op) {
		return nil, bad("as op %s, want %v", st.Op, f.ops)
	}
	if st.Type.Size() != 4 || st.Elems != 1 || st.Pred >= 0 {
		return nil, bad("as type %s, %d elements, predicate %d; want one 32-bit element, no predicate", st.Type, st.Elems, st.Pred)
	}
	if st.ExecSize < 1 || GroupThreads%st.ExecSize != 0 {
		return nil, bad("with execution size %d", st.ExecSize)
	}
	in := &instr{st: st, exec: st.ExecSize, wpg: GroupThreads / st.ExecSize}
	for _, inp := range st.Inputs {
		switch inp.Name {
		case f.addr:
			in.role = append(in.role, rAddr)
		case f.val:
			in.role = append(in.role, rVal)
		case f.cmp:
			in.role = append(in.role, rCmp)
		case f.swap:
			in.role = append(in.role, rSwap)
		default:
			return nil, bad("reading %s, which this package does not bind", inp.Name)
		}
	}
	want := 0
	for _, n := range []string{f.addr, f.val, f.cmp, f.swap} {
		if n != "" {
			want++
		}
	}
	if len(in.role) != want {
		return nil, bad("with inputs %v; want %d", st.Inputs, want)
	}
	return in, nil
}

// emit makes g.in the instruction in with the values in g.lanes, active
// on mask.
func (g *Generator) emit(in *instr, group, warp int64, mask uint32) {
	st := in.st
	g.in.Static = st
	g.in.Group, g.in.Warp = group, warp
	g.in.Mask = mask & st.ExecMask()
	n := len(st.Inputs)
	if cap(g.in.Vals) < n {
		g.in.Vals = make([]trace.Vector, n)
	}
	g.in.Vals = g.in.Vals[:n]
	for len(g.lists) < n {
		g.lists = append(g.lists, make([]uint64, 0, trace.MaxLanes))
	}
	for i, r := range in.role {
		g.setVec(i, g.lanes.of(r)[:in.exec], st.Inputs[i].Type.Float())
	}
}

// setVec stores vals as input i's vector in the most compact form a tracer
// would record: broadcast when all lanes agree, base:stride when they form
// an arithmetic sequence (not for floats, whose bits are not numbers), a
// list otherwise.
func (g *Generator) setVec(i int, vals []uint64, float bool) {
	v := &g.in.Vals[i]
	*v = trace.Vector{Base: vals[0]}
	same, arith := true, !float && len(vals) > 1
	if len(vals) > 1 {
		stride := vals[1] - vals[0]
		for l := 1; l < len(vals); l++ {
			same = same && vals[l] == vals[0]
			arith = arith && vals[l] == vals[0]+uint64(l)*stride
		}
		v.Stride = stride
	}
	switch {
	case same:
		v.Kind, v.Stride = trace.VecBroadcast, 0
	case arith:
		v.Kind = trace.VecStride
	default:
		g.lists[i] = append(g.lists[i][:0], vals...)
		*v = trace.Vector{Kind: trace.VecList, List: g.lists[i]}
	}
}
