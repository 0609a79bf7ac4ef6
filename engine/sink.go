package engine

import (
	"math/bits"

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

// InstStat is the per-instruction statistics row.
type InstStat struct {
	Seq         uint64
	Static      *trace.Static
	Group, Warp int64
	Lanes       uint32 // lanes that ran
	Addresses   uint32 // distinct effective addresses among them
	MaxConflict uint32 // most lanes that hit one address
	Faults      uint32 // lanes that faulted or were dropped
	// Sectors is the distinct 32-byte sectors (address / 32) among the
	// lanes' addresses: the memory transactions the warp instruction
	// needs. A sector lies in one page, so a partition counts its own and
	// the partitions' counts add up.
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
// [PageSink]: the words whose bit is set in Written (bit i%64 of
// Written[i/64] is word i), at Base + 4*i, holding Words[i]. Words is the
// replay's own memory and Written a buffer the engine reuses for the next
// page: both are valid only during the call.
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

// PageSink is an optional Sink method: a sink that has it gets the memory
// table a page at a time instead of through Memory, in the same order
// (space, group, addr), each page with at least one row, so that it can
// fill its columns straight from the memory rather than from a Word per
// row. A replay with no memory rows still calls Memory, once, with none.
type PageSink interface {
	MemoryPage(p *WordPage) error
}

// ResultsWanter is an optional Sink method: a sink whose WantsResults
// returns false gets no Results calls, and the engine skips building the
// per-lane rows (faulting lanes still count in the statistics).
type ResultsWanter interface {
	WantsResults() bool
}

// Sink receives a replay's output, in order. Results and InstStats arrive in
// trace order (seq, then lane, then element). Memory is called at the end,
// one or more times, with every touched word sorted by (space, group, addr)
// across all calls. The slices are
// only valid during the call. A sink writes nothing visible until Commit;
// Abort discards everything written so far.
type Sink interface {
	Results(rs []Result) error
	Instructions(st []InstStat) error
	Memory(ws []Word) error
	Commit() error
	Abort() error
}

// Discard is a Sink that keeps nothing and reads no per-lane results and
// no addresses table: for a replay whose Summary is all that is wanted
// (and for measuring the engine alone).
type Discard struct{}

func (Discard) Results([]Result) error        { return nil }
func (Discard) Instructions([]InstStat) error { return nil }
func (Discard) Memory([]Word) error           { return nil }
func (Discard) Commit() error                 { return nil }
func (Discard) Abort() error                  { return nil }

// WantsResults is false: the engine builds no per-lane rows.
func (Discard) WantsResults() bool { return false }
