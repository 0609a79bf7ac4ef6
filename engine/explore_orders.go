package engine

import (
	"errors"
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// OrderWitness is the final value of one word under one order: a row of
// the orders table. ExploreOrders writes one per order for each word whose
// final value is not the same under all of them.
type OrderWitness struct {
	Space trace.Space
	Group int64
	Addr  uint64
	Order string // "lane", or "random:SEED"
	Value uint32
}

// memorySink keeps only the final memory: an exploring replay needs
// nothing else.
type memorySink struct {
	NopSink
	words []Word
}

func (s *memorySink) Caps() SinkCaps         { return 0 }
func (s *memorySink) Memory(ws []Word) error { s.words = append(s.words, ws...); return nil }
func (s *memorySink) Abort() error           { s.words = nil; return nil }

// ExploreOrders replays a trace in lane order and in k random orders
// (seeds first, first+1, …: WithOrder) and returns, for every word whose
// final value differs between them, its value under each order, sorted by
// (space, group, addr), then order: witnesses that the trace's result
// depends on an order the ISA leaves open, where -explore's
// order_sensitive marks only the addresses whose accesses might not
// commute. open returns the trace from its start, once per replay, and
// ExploreOrders closes it after the replay. The words a replay touches do
// not depend on the order (its addresses are the trace's), so the
// replays' memories line up word for word.
func ExploreOrders(open func() (trace.SourceCloser, error), k int, first uint64, opts ...Option) ([]OrderWitness, error) {
	if k < 1 {
		return nil, fmt.Errorf("explore-orders: %d orders, want at least 1", k)
	}
	names := []string{OrderLane.String()}
	var base []Word
	var values [][]uint32 // [order][word]
	for i := 0; i <= k; i++ {
		o := WithOrder(OrderLane, 0)
		if i > 0 {
			seed := first + uint64(i-1)
			o = WithOrder(OrderRandom, seed)
			names = append(names, fmt.Sprintf("random:%d", seed))
		}
		src, err := open()
		if err != nil {
			return nil, err
		}
		var s memorySink
		_, err = Replay(src, &s, append(append([]Option{}, opts...), o, WithExplore(false))...)
		err = errors.Join(err, src.Close())
		if err != nil {
			return nil, fmt.Errorf("explore-orders, %s order: %w", names[i], err)
		}
		if i == 0 {
			base = s.words
		} else if len(s.words) != len(base) {
			return nil, fmt.Errorf("explore-orders: %s order touched %d words, lane order %d", names[i], len(s.words), len(base))
		}
		v := make([]uint32, len(s.words))
		for j := range s.words {
			if i > 0 && (s.words[j].Addr != base[j].Addr || s.words[j].Group != base[j].Group || s.words[j].Space != base[j].Space) {
				return nil, fmt.Errorf("explore-orders: %s order's word %d is %s 0x%x, lane order's %s 0x%x", names[i], j, s.words[j].Space, s.words[j].Addr, base[j].Space, base[j].Addr)
			}
			v[j] = s.words[j].Value
		}
		values = append(values, v)
	}
	var out []OrderWitness
	for j, w := range base {
		same := true
		for _, v := range values[1:] {
			same = same && v[j] == values[0][j]
		}
		if same {
			continue
		}
		for i, v := range values {
			out = append(out, OrderWitness{Space: w.Space, Group: w.Group, Addr: w.Addr, Order: names[i], Value: v[j]})
		}
	}
	return out, nil
}
