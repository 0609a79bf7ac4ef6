package engine

import (
	"fmt"
	"math/bits"

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
