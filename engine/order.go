package engine

import (
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/gpureplay/replay/trace"
)

// Order is the order in which the active lanes of one instruction apply.
// The ISA documents fix none: PTX's memory consistency model orders no two
// atomics of one instruction's threads, and SASS, vISA and LSC describe
// the lanes of one instruction as performed in an unspecified order. So
// every order is one the hardware may take, and a result that changes
// with the order is one the program does not determine.
type Order uint8

const (
	// OrderLane applies lanes in increasing lane order, then elements in
	// order (the default).
	OrderLane Order = iota
	// OrderReverse applies lanes from the highest active lane down.
	OrderReverse
	// OrderRandom applies the active lanes of each instruction in a
	// permutation drawn from the seed and the instruction's seq: the same
	// for a seed whatever the shard, worker and batch counts.
	OrderRandom
)

var orderNames = [...]string{"lane", "reverse", "random"}

func (o Order) String() string {
	if int(o) < len(orderNames) {
		return orderNames[o]
	}
	return fmt.Sprintf("Order(%d)", uint8(o))
}

// ParseOrder parses "lane", "reverse" or "random".
func ParseOrder(s string) (Order, error) {
	for i, n := range orderNames {
		if n == s {
			return Order(i), nil
		}
	}
	return 0, fmt.Errorf("order %q: want lane, reverse or random", s)
}

// WithOrder sets the order of the lanes within each instruction, and for
// OrderRandom the seed. Elements of one lane stay in element order; the
// results table stays sorted by (seq, lane, elem): what changes is what
// lanes that share an address get back, and what such an address is left
// holding.
func WithOrder(o Order, seed uint64) Option {
	return func(opts *options) error {
		if int(o) >= len(orderNames) {
			return fmt.Errorf("order %d: unknown", o)
		}
		opts.order, opts.seed = o, seed
		return nil
	}
}

// lanePerm returns the order in which instruction seq's n active lanes
// apply, as indexes among its active lanes (0 is the lowest active lane),
// in perm's storage: for OrderRandom a Fisher-Yates shuffle driven by
// SplitMix64 from (seed, seq), so that it depends on nothing else.
func lanePerm(o Order, seed, seq uint64, n int, perm *[trace.MaxLanes]uint8) []uint8 {
	p := perm[:n]
	for i := range p {
		p[i] = uint8(i)
	}
	switch o {
	case OrderReverse:
		for i := range p {
			p[i] = uint8(n - 1 - i)
		}
	case OrderRandom:
		x := mix64(seed ^ mix64(seq+0x9e3779b97f4a7c15))
		for i := n - 1; i > 0; i-- {
			x += 0x9e3779b97f4a7c15
			hi, _ := bits.Mul64(mix64(x), uint64(i+1))
			j := int(hi)
			p[i], p[j] = p[j], p[i]
		}
	}
	return p
}

// activeLanes lists the lanes set in mask, lowest first.
func activeLanes(mask uint32, lanes *[trace.MaxLanes]uint8) []uint8 {
	l := lanes[:0]
	for m := mask; m != 0; m &= m - 1 {
		l = append(l, uint8(bits.TrailingZeros32(m)))
	}
	return l
}

// WithInterleave, with OrderRandom, also reorders the instructions of
// different warps within windows of w consecutive instructions, keeping
// each warp's own instructions in their order: the warps of a kernel run
// concurrently, and nothing in the documents orders one warp's atomics
// against another's. Windows are counted from the trace's start and start
// anew after every .init or .region, so they do not depend on the batch
// size. 0 (the default) keeps trace order.
func WithInterleave(w int) Option {
	return func(opts *options) error {
		if w < 0 || w > 1<<16 {
			return fmt.Errorf("interleave %d: want 0..65536", w)
		}
		opts.interleave = w
		return nil
	}
}

// warpKey names a warp for interleaving.
type warpKey struct{ group, warp int64 }

// interleavePerm returns the order in which a window's instructions apply
// (perm[k] is the index in trace order of the k-th to apply): a random
// interleaving of the warps' sequences, each warp's kept in order, drawn
// from the seed and the window's first seq: at each step a warp with
// instructions left is picked with probability in proportion to how many
// it has left, which makes every interleaving equally likely.
func interleavePerm(seed, first uint64, warps []warpKey, perm []int) []int {
	var keys []warpKey
	var queues [][]int
	for i, w := range warps {
		j := slices.Index(keys, w)
		if j < 0 {
			keys = append(keys, w)
			queues = append(queues, nil)
			j = len(keys) - 1
		}
		queues[j] = append(queues[j], i)
	}
	perm = perm[:0]
	left := len(warps)
	x := mix64(seed ^ mix64(first^0x5851f42d4c957f2d))
	for left > 0 {
		x += 0x9e3779b97f4a7c15
		hi, _ := bits.Mul64(mix64(x), uint64(left))
		r := int(hi)
		for j := range queues {
			if r < len(queues[j]) {
				perm = append(perm, queues[j][0])
				queues[j] = queues[j][1:]
				break
			}
			r -= len(queues[j])
		}
		left--
	}
	return perm
}

// interleaved is a Source that hands out the instructions of each window
// in interleavePerm's order (deep copies: the underlying source reuses
// its Inst), and directives where they stand. The reference interpreter
// reads through it; the engine permutes its batches' windows in place
// (Engine.fill), to the same order. It declares no fast path of
// trace.Source, whatever src's: it hands out copies, in another order,
// so it has neither lists in its caller's arena nor repeats of the
// record before.
type interleaved struct {
	trace.NoCaps
	src  trace.Source
	w    int
	seed uint64
	buf  []trace.Inst
	perm []int
	next int
	dir  *trace.Inst // a directive read after the window, handed out after it
	eof  bool
	err  error
	keys []warpKey
}

func newInterleaved(src trace.Source, w int, seed uint64) *interleaved {
	return &interleaved{src: src, w: w, seed: seed}
}

func (s *interleaved) Header() *trace.Header { return s.src.Header() }

func (s *interleaved) Next() (*trace.Inst, error) {
	if s.next < len(s.perm) {
		in := &s.buf[s.perm[s.next]]
		s.next++
		return in, nil
	}
	if d := s.dir; d != nil {
		s.dir = nil
		return d, nil
	}
	if s.err != nil {
		return nil, s.err
	}
	if s.eof {
		return nil, io.EOF
	}
	s.buf, s.perm, s.next, s.keys = s.buf[:0], s.perm[:0], 0, s.keys[:0]
	for len(s.buf) < s.w {
		in, err := s.src.Next()
		if err != nil {
			if err == io.EOF {
				s.eof = true
			} else {
				s.err = err
			}
			break
		}
		if in.Dir != nil {
			if len(s.buf) == 0 {
				return in, nil
			}
			d := *in
			s.dir = &d
			break
		}
		s.buf = append(s.buf, cloneInst(in))
		s.keys = append(s.keys, warpKey{in.Group, in.Warp})
	}
	if len(s.buf) == 0 {
		return s.Next()
	}
	s.perm = interleavePerm(s.seed, s.buf[0].Seq, s.keys, s.perm)
	return s.Next()
}

// cloneInst copies an instruction and its vectors' lists.
func cloneInst(in *trace.Inst) trace.Inst {
	c := *in
	c.Vals = slices.Clone(in.Vals)
	for i := range c.Vals {
		c.Vals[i].List, c.Vals[i].ListHi = slices.Clone(c.Vals[i].List), slices.Clone(c.Vals[i].ListHi)
	}
	return c
}
