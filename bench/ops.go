package bench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/gpureplay/replay/trace"
)

// OpKind is what a dense loop does to a word for one lane-op.
type OpKind uint8

// The operations the dense loop applies: the 32-bit atomics of the
// `replay gen` workloads.
const (
	KindAdd  OpKind = iota // m += b (add, LSC append counter add)
	KindSub                // m -= b
	KindExch               // m = b (exch, LSC atomic_store)
	KindCAS                // if m == b { m = c }
	KindMinU               // m = min(m, b), unsigned
	KindMinS               // signed
	KindMaxU               // m = max(m, b), unsigned
	KindMaxS               // signed
	KindAnd                // m &= b
	KindOr                 // m |= b
	KindXor                // m ^= b
	KindFAdd               // m = float32(m) + float32(b), round to nearest
	numKinds
)

var kindNames = [numKinds]string{"add", "sub", "exch", "cas", "minu", "mins", "maxu", "maxs", "and", "or", "xor", "fadd"}

func (k OpKind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", k)
}

// Run is consecutive lane-ops of one kind: N lane-ops from where the
// previous run ended.
type Run struct {
	Kind OpKind
	N    int
}

// Ops are a trace's accesses decoded once into flat arrays, for the dense
// loop that is half of a trace's limit: lane-op i applies its run's kind
// with operands B[i] (and C[i] for CAS) to word Idx[i] of a []uint32 of
// Words words, in trace order and, within an instruction, in lane order,
// as the engine applies them.
type Ops struct {
	Runs  []Run
	Idx   []uint32
	B     []uint32
	C     []uint32 // nil when the trace has no CAS
	Init  []uint32 // the memory before the first instruction (.init), Words words
	Words int
	// Kinds counts the lane-ops of each kind.
	Kinds [numKinds]uint64
	dec   *opDecoder
}

// Word is the dense word of a word of the trace's memory (a space, a group
// for per-group spaces, an address), ok false when the trace never
// touches it.
func (o *Ops) Word(space trace.Space, group int64, addr uint64) (int, bool) {
	d := o.dec
	for i, r := range d.regions {
		if r.Space == space && r.Contains(addr, 4) && addr%4 == 0 {
			return d.offsets[i] + int((addr-r.Base)/4), true
		}
	}
	if !space.PerGroup() {
		group = 0
	}
	x, ok := d.extra[wordKey{space, group, addr}]
	return int(x), ok
}

// LaneOps is the number of lane-ops.
func (o *Ops) LaneOps() int { return len(o.Idx) }

// Mix names the kinds of a trace's lane-ops: "add", "cas 88% exch 12%".
func (o *Ops) Mix() string {
	var b bytes.Buffer
	n := float64(len(o.Idx))
	for k, c := range o.Kinds {
		if c == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(OpKind(k).String())
		if uint64(len(o.Idx)) != c {
			fmt.Fprintf(&b, " %.0f%%", 100*float64(c)/n)
		}
	}
	return b.String()
}

// wordKey names a word outside every declared region (an LSC append
// counter): its space, group (per-group spaces) and address.
type wordKey struct {
	space trace.Space
	group int64
	addr  uint64
}

// opDecoder places each address in the dense array: every declared region
// of a space, one after another, then words outside them as they come.
type opDecoder struct {
	regions []trace.Region
	offsets []int // word offset of each region in the dense array
	words   int
	extra   map[wordKey]uint32
}

func (d *opDecoder) addRegion(r trace.Region) {
	d.regions = append(d.regions, r)
	d.offsets = append(d.offsets, d.words)
	d.words += int((r.Size + 3) / 4)
}

// index is the dense word of an address, ok false when it is not a whole
// 32-bit word.
func (d *opDecoder) index(space trace.Space, group int64, a uint64) (uint32, bool) {
	if a%4 != 0 {
		return 0, false
	}
	for i, r := range d.regions {
		if r.Space == space && r.Contains(a, 4) {
			return uint32(d.offsets[i] + int((a-r.Base)/4)), true
		}
	}
	if !space.PerGroup() {
		group = 0
	}
	k := wordKey{space, group, a}
	x, ok := d.extra[k]
	if !ok {
		x = uint32(d.words)
		d.words++
		d.extra[k] = x
	}
	return x, true
}

// kindOf is the dense kind of an instruction and its operands' sources:
// CAS compares with b and writes c.
func kindOf(s *trace.Static) (k OpKind, b, c []trace.Src, err error) {
	b, c = s.B, s.C
	if s.Type.Float() {
		if s.Type == trace.TypeF32 && s.Op == trace.OpAdd {
			return KindFAdd, b, nil, nil
		}
		return 0, nil, nil, fmt.Errorf("%s on %s: the dense loop has no float operation but f32 add", s.Op, s.Type)
	}
	switch s.Op {
	case trace.OpAdd:
		k = KindAdd
	case trace.OpSub:
		k = KindSub
	case trace.OpExch:
		k = KindExch
	case trace.OpCAS:
		k = KindCAS
		if s.Dialect == trace.DialectVISA {
			// DWORD_ATOMIC.CMPXCHG: new = (old == src1) ? src0 : old.
			b, c = s.C, s.B
		}
	case trace.OpMin:
		k = KindMinU
		if s.Type.Signed() {
			k = KindMinS
		}
	case trace.OpMax:
		k = KindMaxU
		if s.Type.Signed() {
			k = KindMaxS
		}
	case trace.OpAnd:
		k = KindAnd
	case trace.OpOr:
		k = KindOr
	case trace.OpXor:
		k = KindXor
	default:
		return 0, nil, nil, fmt.Errorf("%s: the dense loop has no %s", s.Text, s.Op)
	}
	return k, b, c, nil
}

// DecodeOps reads a binary trace and flattens every active lane's access,
// in trace order. It takes what the `replay gen` workloads hold: scalar
// 32-bit atomics of the kinds above, memory set up before the first
// instruction; anything else is an error (the harness then has no limit
// for the trace).
func DecodeOps(data []byte) (*Ops, error) {
	r, err := trace.NewBinaryReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	d := &opDecoder{extra: map[wordKey]uint32{}}
	for _, reg := range h.Regions {
		d.addRegion(reg)
	}
	o := &Ops{dec: d}
	last := OpKind(numKinds)
	for {
		in, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if in.Dir != nil {
			if in.Dir.Region != nil {
				d.addRegion(*in.Dir.Region)
				continue
			}
			return nil, fmt.Errorf("bench: a .init after the first instruction (seq %d): the dense loop takes memory set up before it only", in.Seq)
		}
		s := in.Static
		if s.Elems != 1 || s.Type.Size() != 4 || len(s.B) != 1 {
			return nil, fmt.Errorf("bench: %q is not a scalar 32-bit atomic", s.Text)
		}
		k, bs, cs, err := kindOf(s)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if k == KindCAS && len(cs) != 1 {
			return nil, fmt.Errorf("bench: %q: a CAS without its new value", s.Text)
		}
		act := in.Active()
		n := 0
		for lane := range s.ExecSize {
			if act&(1<<lane) == 0 {
				continue
			}
			base := uint64(0)
			if s.Addr >= 0 {
				l := lane
				if s.AddrUniform {
					l = 0
				}
				base = in.Vals[s.Addr].Lo(l)
			}
			a := (uint64(s.AddrScale)*base + uint64(s.AddrImm) + uint64(int64(lane)*s.LanePitch)) & s.AddrMask()
			x, ok := d.index(s.Space, in.Group, a)
			if !ok {
				return nil, fmt.Errorf("bench: seq %d lane %d: address %#x is not a 32-bit word", in.Seq, lane, a)
			}
			v, _ := in.Value(bs[0], lane)
			o.Idx = append(o.Idx, x)
			o.B = append(o.B, uint32(v))
			if k == KindCAS {
				if o.C == nil {
					o.C = make([]uint32, len(o.Idx)-1, cap(o.Idx))
				}
				w, _ := in.Value(cs[0], lane)
				o.C = append(o.C, uint32(w))
			} else if o.C != nil {
				o.C = append(o.C, 0)
			}
			n++
		}
		if n == 0 {
			continue
		}
		o.Kinds[k] += uint64(n)
		if k == last {
			o.Runs[len(o.Runs)-1].N += n
		} else {
			o.Runs = append(o.Runs, Run{Kind: k, N: n})
			last = k
		}
	}
	o.Words = d.words
	o.Init = make([]uint32, o.Words)
	for _, in := range h.Inits {
		if in.Addr%4 != 0 || len(in.Data)%4 != 0 {
			return nil, fmt.Errorf("bench: .init at %#x: not whole 32-bit words", in.Addr)
		}
		for i := 0; i+4 <= len(in.Data); i += 4 {
			x, ok := d.index(in.Space, in.Group, in.Addr+uint64(i))
			if !ok || int(x) >= len(o.Init) {
				return nil, fmt.Errorf("bench: .init at %#x: outside the words the trace touches", in.Addr+uint64(i))
			}
			o.Init[x] = binary.LittleEndian.Uint32(in.Data[i:])
		}
	}
	return o, nil
}

// Apply is the dense loop: every lane-op of o applied to mem (Words
// words) in order, one tight loop a run.
func (o *Ops) Apply(mem []uint32) {
	i := 0
	for _, r := range o.Runs {
		idx, b := o.Idx[i:i+r.N], o.B[i:i+r.N]
		switch r.Kind {
		case KindAdd:
			Dense(mem, idx, b)
		case KindSub:
			for j, x := range idx {
				mem[x] -= b[j]
			}
		case KindExch:
			for j, x := range idx {
				mem[x] = b[j]
			}
		case KindCAS:
			c := o.C[i : i+r.N]
			for j, x := range idx {
				if mem[x] == b[j] {
					mem[x] = c[j]
				}
			}
		case KindMinU:
			for j, x := range idx {
				mem[x] = min(mem[x], b[j])
			}
		case KindMinS:
			for j, x := range idx {
				mem[x] = uint32(min(int32(mem[x]), int32(b[j])))
			}
		case KindMaxU:
			for j, x := range idx {
				mem[x] = max(mem[x], b[j])
			}
		case KindMaxS:
			for j, x := range idx {
				mem[x] = uint32(max(int32(mem[x]), int32(b[j])))
			}
		case KindAnd:
			for j, x := range idx {
				mem[x] &= b[j]
			}
		case KindOr:
			for j, x := range idx {
				mem[x] |= b[j]
			}
		case KindXor:
			for j, x := range idx {
				mem[x] ^= b[j]
			}
		case KindFAdd:
			for j, x := range idx {
				mem[x] = math.Float32bits(math.Float32frombits(mem[x]) + math.Float32frombits(b[j]))
			}
		}
		i += r.N
	}
}

// Reset copies the initial memory into mem, for the next Apply.
func (o *Ops) Reset(mem []uint32) { copy(mem, o.Init) }
