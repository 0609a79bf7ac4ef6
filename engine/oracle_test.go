package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gpureplay/replay/engine/internal/reference"
	"github.com/gpureplay/replay/trace"
)

// replayReference replays src the plain way, with the reference
// interpreter of engine/internal/reference: one instruction at a time,
// lanes in ascending order (or the order WithOrder gives), memory as a map
// from byte address to byte, every semantic rule (formulas, floats,
// addressing, faults) worked out again from the ISA documents. It shares
// with the engine only the parsed trace and the lane-order policy
// (lanePerm, and WithInterleave's window order), and is the oracle the
// engine's tests compare against; it lives in a test file, so that it is
// neither part of the package's API nor linked into a program. It writes
// to sink what Replay writes, and commits or aborts it the same way. Of
// the options only WithExplore, WithOrder and WithInterleave matter, and
// of ctx only whether it is done before the replay starts.
func replayReference(ctx context.Context, src trace.Source, sink Sink, opts ...Option) (Summary, error) {
	o, err := buildOptions("replayReference", allOptions, opts)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		sink.Abort()
		return Summary{}, err
	}
	if o.interleave > 0 {
		// Windows of instructions in the interleaved order; the rows back
		// in trace order for the sink.
		src = newInterleaved(src, o.interleave, o.seed)
		sink = &seqOrderSink{Sink: sink}
	}
	sum, err := runReference(src, sink, o)
	if err != nil {
		sink.Abort()
		return Summary{}, err
	}
	return sum, sink.Commit()
}

// runReference runs the reference interpreter and hands its rows to sink:
// per instruction its statistics and, with CapResults, its results; then,
// with CapAddresses, the addresses table; then memory, as Words (the order
// Run hands them in).
func runReference(src trace.Source, sink Sink, o options) (Summary, error) {
	caps := sink.Caps()
	order, seed := o.order, o.seed
	laneOrder := func(seq uint64, lanes []uint8) []uint8 {
		perm := lanePerm(order, seed, seq, len(lanes), new([trace.MaxLanes]uint8))
		out := make([]uint8, len(perm))
		for i, k := range perm {
			out[i] = lanes[k]
		}
		return out
	}
	out, err := reference.Run(src, reference.Options{Explore: o.explore, LaneOrder: laneOrder})
	if err != nil {
		if ie, ok := errors.AsType[*reference.InstError](err); ok {
			return Summary{}, &InstError{Seq: ie.Seq, Line: ie.Line, Text: ie.Text, Err: ie.Err}
		}
		return Summary{}, err
	}
	var sum Summary
	for _, step := range out.Steps {
		st := step.Inst
		stat := InstStat{Seq: st.Seq, Static: st.Static, Group: st.Group, Warp: st.Warp, Lanes: st.Lanes,
			Addresses: st.Addresses, MaxConflict: st.MaxConflict, Faults: st.Faults, CASFailed: st.CASFailed, Sectors: st.Sectors}
		results, err := refResults(step.Results)
		if err != nil {
			return Summary{}, err
		}
		if err := sink.Instructions([]InstStat{stat}); err != nil {
			return Summary{}, err
		}
		if caps&CapResults != 0 {
			if err := sink.Results(results); err != nil {
				return Summary{}, err
			}
		}
		sum.Instructions++
		sum.Lanes += uint64(stat.Lanes)
		sum.LaneOps += uint64(len(results))
		sum.Faults += uint64(stat.Faults)
	}
	if caps&CapAddresses != 0 {
		rows := make([]AddressStat, len(out.Addresses))
		for i, a := range out.Addresses {
			rows[i] = AddressStat{Space: a.Space, Group: a.Group, Addr: a.Addr, Accesses: a.Accesses,
				Warps: a.Warps, Groups: a.Groups, Exact: a.Exact, OrderSensitive: a.OrderSensitive}
		}
		if err := sink.Addresses(rows); err != nil {
			return Summary{}, err
		}
	}
	words := make([]Word, len(out.Memory))
	for i, w := range out.Memory {
		words[i] = Word{Space: w.Space, Group: w.Group, Addr: w.Addr, Value: w.Value}
	}
	sum.Words = uint64(len(words))
	if err := sink.Memory(words); err != nil {
		return Summary{}, err
	}
	return sum, nil
}

// refResults converts the reference's result rows, their faults named as
// the results table names them.
func refResults(rs []reference.Result) ([]Result, error) {
	out := make([]Result, len(rs))
	for i, r := range rs {
		f, ok := ParseFault(r.Fault)
		if !ok {
			return nil, fmt.Errorf("reference: unknown fault %q", r.Fault)
		}
		out[i] = Result{Seq: r.Seq, Lane: r.Lane, Elem: r.Elem, Addr: r.Addr, Value: r.Value, ValueHi: r.ValueHi, Fault: f}
	}
	return out, nil
}

// seqOrderSink holds the instruction and result rows until the addresses
// or the memory come, then hands them on sorted by seq (then lane,
// element): the reference's rows under WithInterleave. It forwards the
// wrapped sink's Caps, and every method it does not hold rows for.
type seqOrderSink struct {
	Sink
	stats   []InstStat
	results []Result
	flushed bool
}

func (s *seqOrderSink) Instructions(st []InstStat) error {
	s.stats = append(s.stats, st...)
	return nil
}

func (s *seqOrderSink) Results(rs []Result) error {
	s.results = append(s.results, rs...)
	return nil
}

func (s *seqOrderSink) ResultColumns(c *ResultColumns) error {
	s.results = c.AppendRows(s.results)
	return nil
}

func (s *seqOrderSink) flush() error {
	if s.flushed {
		return nil
	}
	s.flushed = true
	slices.SortStableFunc(s.stats, func(a, b InstStat) int { return cmp.Compare(a.Seq, b.Seq) })
	slices.SortStableFunc(s.results, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Lane, b.Lane), cmp.Compare(a.Elem, b.Elem))
	})
	if err := s.Sink.Instructions(s.stats); err != nil {
		return err
	}
	if s.Sink.Caps()&CapResults == 0 {
		return nil // none came
	}
	return s.Sink.Results(s.results)
}

func (s *seqOrderSink) Memory(ws []Word) error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.Sink.Memory(ws)
}

func (s *seqOrderSink) Commit() error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.Sink.Commit()
}

func (s *seqOrderSink) Addresses(rows []AddressStat) error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.Sink.Addresses(rows)
}

// testReplayer is newReplayer with opts, as Replay builds them: for the
// tests that look at a replayer's counters or drive its stages.
func testReplayer(h *trace.Header, opts ...Option) (*replayer, error) {
	o, err := buildOptions("testReplayer", allOptions, opts)
	if err != nil {
		return nil, err
	}
	return newReplayer(h, o)
}
