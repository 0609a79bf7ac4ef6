package engine

import (
	"math/bits"
	"strings"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// Fault is what went wrong with one lane's access. The replay goes on.
type Fault uint8

const (
	FaultNone         Fault = iota
	FaultMisaligned         // SASS/PTX: address not a multiple of the access size
	FaultOutOfRange         // SASS/PTX: outside every declared region of the space
	FaultInvalidSpace       // SASS: ATOM outside the global window
	FaultOutOfBounds        // vISA/LSC: outside every region; read as zero, write dropped
)

var faultNames = [...]string{"", "misaligned", "out_of_range", "invalid_space", "out_of_bounds"}

// String is the name the results table uses: empty for no fault.
func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "fault?"
}

// ParseFault is the Fault a results table names (String's inverse).
func ParseFault(s string) (Fault, bool) {
	for i, n := range faultNames {
		if n == s {
			return Fault(i), true
		}
	}
	return 0, false
}

// Result is what one lane (and element) of one instruction got back.
type Result struct {
	Seq     uint64
	Lane    uint32
	Elem    uint32
	Addr    uint64
	Value   uint64 // low 64 bits of the returned bit pattern
	ValueHi uint64 // high 64 bits of a 128-bit value
	Fault   Fault
}

// ResultColumns is a batch of per-lane rows as columns, for a sink with
// CapResultColumns: the rows Results would get, in that order. Row i is
// Result{seq, Lane[i], Elem[i], Addr[i], Value[i], ValueHi[i], Fault[i]},
// its seq given as runs: the first Runs[0] rows have seq Seqs[0], the
// next Runs[1] rows Seqs[1], and so on (an instruction's lane-elements; a
// run may be of no rows). Addr and Value hold a value a row; Lane holds
// one too, or, for a sink that declares CapIotaLanes, is nil when every
// run's rows are lanes 0, 1, 2 … in turn (every instruction of the batch
// ran lanes 0 to n-1 and no others, one element each: full warps), so
// that no lane is stored or read (IotaLanes).
// Elem, ValueHi and Fault are nil when every row's is 0 (FaultNone), as
// they are in a batch of scalar accesses of at most 8 bytes that did not
// fault. The slices are the engine's and valid only during the call.
type ResultColumns struct {
	Seqs           []uint64
	Runs           []uint32
	Lane, Elem     []uint32
	Addr           []uint64
	Value, ValueHi []uint64
	Fault          []Fault
}

// Len is the rows' count.
func (c *ResultColumns) Len() int { return len(c.Addr) }

// IotaLanes reports whether Lane is nil: row j of each run is lane j.
func (c *ResultColumns) IotaLanes() bool { return c.Lane == nil }

// LaneAt is row i's lane.
func (c *ResultColumns) LaneAt(i int) uint32 {
	if c.Lane != nil {
		return c.Lane[i]
	}
	for _, n := range c.Runs {
		if i < int(n) {
			break
		}
		i -= int(n)
	}
	return uint32(i)
}

// AppendRows appends the rows to dst as Results.
func (c *ResultColumns) AppendRows(dst []Result) []Result {
	i := 0
	for k, seq := range c.Seqs {
		start := i
		for end := i + int(c.Runs[k]); i < end; i++ {
			r := Result{Seq: seq, Lane: uint32(i - start), Addr: c.Addr[i], Value: c.Value[i]}
			if c.Lane != nil {
				r.Lane = c.Lane[i]
			}
			if c.Elem != nil {
				r.Elem = c.Elem[i]
			}
			if c.ValueHi != nil {
				r.ValueHi = c.ValueHi[i]
			}
			if c.Fault != nil {
				r.Fault = c.Fault[i]
			}
			dst = append(dst, r)
		}
	}
	return dst
}

// InstStat is the per-instruction statistics row.
type InstStat struct {
	Seq         uint64
	Static      *trace.Static
	Group, Warp int64
	Lanes       uint32 // lanes that ran
	Addresses   uint32 // distinct effective addresses among them
	MaxConflict uint32 // most lanes that hit one address
	Faults      uint32 // lanes that faulted or were dropped
	// CASFailed counts the lane-elements of a compare-and-swap that ran
	// (did not fault) and found a value other than the compare operand,
	// so left memory as it was; 0 for every other operation. A CAS's
	// other lane-elements, Lanes − Faults − CASFailed for these scalar
	// atomics, swapped.
	CASFailed uint32
	// Sectors is the distinct 32-byte sectors (address / 32) among the
	// lanes' addresses: the memory transactions the warp instruction
	// needs. A sector lies in one 128-byte line, so in one partition: a
	// partition counts its own and the partitions' counts add up.
	Sectors uint32
}

// Word is one aligned 4-byte word of final memory.
type Word struct {
	Space trace.Space
	Group int64 // -1 for spaces that are not per group
	Addr  uint64
	Value uint32
}

// WordPage is the memory table's rows of one page of final memory, for a
// sink with CapMemoryPages: the words whose bit is set in Written (bit
// i%64 of Written[i/64] is word i), at Base + 4*i, holding Words[i].
// Words is the replay's own memory and Written a buffer the engine reuses
// for the next page: both are valid only during the call.
type WordPage struct {
	Space   trace.Space
	Group   int64 // -1 for spaces that are not per group
	Base    uint64
	Written *[shard.PageWords / 64]uint64
	Words   *[shard.PageWords]uint32
}

// Rows is how many rows the page holds: the bits set in Written.
func (p *WordPage) Rows() int {
	n := 0
	for _, m := range p.Written {
		n += bits.OnesCount64(m)
	}
	return n
}

// SinkCaps are the optional parts of a replay's output that a [Sink]
// declares it wants, a bit each. The engine calls no method that serves a
// part the sink does not declare, and does not build the rows of such a
// part (per-lane results, address statistics): what a sink leaves out
// costs nothing.
type SinkCaps uint8

const (
	// CapResults: Results gets the per-lane rows. Without it the engine
	// builds none (faulting lanes still count in the statistics).
	CapResults SinkCaps = 1 << iota
	// CapAddresses: Addresses gets the addresses table at the end. Without
	// it the engine does not track addresses.
	CapAddresses
	// CapMemoryPages: the engine hands the memory table to MemoryPage, a
	// page at a time, rather than to Memory as Words, so that the sink can
	// fill its columns straight from the memory rather than from a Word
	// per row. Memory is still called, once with no words, when no word
	// was written (and the reference interpreter gives Words to Memory).
	CapMemoryPages
	// CapResultColumns, with CapResults: the engine hands the per-lane rows
	// to ResultColumns as columns rather than to Results as a Result per
	// row, so that the sink copies each column whole (and leaves out the
	// columns that are all 0) instead of reading 48 bytes a row. Without
	// CapResults it means nothing. The reference interpreter gives
	// Results to Results either way.
	CapResultColumns
	// CapIotaLanes, with CapResults|CapResultColumns: ResultColumns may
	// leave Lane nil where every run's rows are lanes 0, 1, 2 …
	// (ResultColumns.IotaLanes), so that the engine writes no lane of a
	// full warp. Without it, Lane is always given.
	CapIotaLanes
)

// allCaps is every flag.
const allCaps = CapResults | CapAddresses | CapMemoryPages | CapResultColumns | CapIotaLanes

// String lists the flags:
// "results|addresses|memory-pages|result-columns|iota-lanes", or "none".
func (c SinkCaps) String() string {
	var names []string
	for _, f := range []struct {
		c    SinkCaps
		name string
	}{{CapResults, "results"}, {CapAddresses, "addresses"}, {CapMemoryPages, "memory-pages"}, {CapResultColumns, "result-columns"}, {CapIotaLanes, "iota-lanes"}} {
		if c&f.c != 0 {
			names = append(names, f.name)
		}
	}
	if c&^allCaps != 0 {
		names = append(names, "?")
	}
	if names == nil {
		return "none"
	}
	return strings.Join(names, "|")
}

// Sink receives a replay's output, in order: Instructions (and Results,
// or ResultColumns, with CapResults) batch by batch in trace order (seq,
// then lane, then element); then the addresses table (with CapAddresses) in one or more
// Addresses calls, sorted by (space, group, addr) across them; then the
// memory table, every written word sorted by (space, group, addr) across
// all calls, as Memory calls or, with CapMemoryPages, MemoryPage calls,
// each page with at least one row. The slices and pages are only valid
// during the call. A sink writes nothing visible until Commit; Abort
// discards everything written so far.
//
// Caps declares the optional parts the sink wants; the engine trusts it,
// and calls Results, ResultColumns, Addresses and MemoryPage only on a
// sink that declared them. Every method is part of the interface, so a wrapper that
// embeds the Sink it wraps forwards them all, Caps with them, and hides
// none. A sink of its own embeds [NopSink] for the methods it does not
// need, and must then declare its Caps: see the package documentation.
type Sink interface {
	// Caps declares the optional parts the sink wants. It returns the
	// same value every time.
	Caps() SinkCaps
	Instructions(st []InstStat) error
	Results(rs []Result) error            // only with CapResults
	ResultColumns(c *ResultColumns) error // only with CapResults|CapResultColumns
	Addresses(rows []AddressStat) error   // only with CapAddresses
	Memory(ws []Word) error
	MemoryPage(p *WordPage) error // only with CapMemoryPages
	Commit() error
	Abort() error
}

// NopSink is every method of Sink but Caps, each doing nothing. A sink
// embeds it for the methods it does not need; it is not a Sink until it
// declares its Caps, so that a sink that overrides Results cannot forget
// to declare CapResults without the compiler saying so.
type NopSink struct{}

func (NopSink) Instructions([]InstStat) error      { return nil }
func (NopSink) Results([]Result) error             { return nil }
func (NopSink) ResultColumns(*ResultColumns) error { return nil }
func (NopSink) Addresses([]AddressStat) error      { return nil }
func (NopSink) Memory([]Word) error                { return nil }
func (NopSink) MemoryPage(*WordPage) error         { return nil }
func (NopSink) Commit() error                      { return nil }
func (NopSink) Abort() error                       { return nil }

// Discard returns a Sink that keeps nothing and wants no optional part,
// so that the engine builds no per-lane rows and tracks no addresses: for
// a replay whose Summary is all that is wanted (and for measuring the
// engine alone). It is a function, not a type, so that no sink embeds it
// and inherits its empty Caps: embed NopSink.
func Discard() Sink { return discard{} }

type discard struct{ NopSink }

func (discard) Caps() SinkCaps { return 0 }
