package trace

import (
	"errors"
	"io"
	"strings"
)

// Source is a stream of executed instructions: the text reader and the
// binary reader both are one. Next returns io.EOF after the last
// instruction. Memory set-up after the first instruction comes in trace
// order as records with Inst.Dir set (and Static nil); every consumer must
// apply or pass them on at their place. The returned *Inst, its Vals and
// their Lists are owned by the Source and valid only until the next call to
// Next; a Source reuses them so that reading allocates nothing per
// instruction in the steady state.
//
// Beyond Next a source may have fast paths, NextInto and Repeats. Caps
// declares which of them work; a consumer calls one only when Caps has its
// flag, and trusts the flag. They are methods of every Source, so that a
// wrapper that embeds the Source it wraps forwards them, with Caps, and
// hides none: a wrapper that changes what Next returns (one that checks a
// context, say) overrides NextInto too, or returns fewer Caps. A source
// with neither fast path embeds [NoCaps].
type Source interface {
	Header() *Header
	Next() (*Inst, error)
	// Caps declares the fast paths that work. It returns the same value
	// every time.
	Caps() SourceCaps
	// NextInto is Next with the instruction's lists decoded into
	// arena[len(arena):], storage its caller keeps, so that a caller that
	// holds many instructions at once (a replay's batch) need not copy
	// them: it returns the arena grown by what they use, and the
	// instruction's lists point into it, or, a record's whose VecID is
	// not 0, may point to the source's own storage until the next call
	// (see [BinaryReader.NextInto]). Only with CapArena.
	NextInto(arena []uint64) (*Inst, []uint64, error)
	// Repeats consumes up to max of the records that follow the
	// instruction Next or NextInto last returned, as long as each is that
	// instruction again: the same Static and Vals (it has no list), and
	// the same Mask unless the instruction's RepeatMasks says otherwise,
	// each record advancing Group and Warp by the same dg and dw. It
	// returns how many it consumed, n: the i-th (1 to n) is the
	// instruction with Seq+i, Group+i·dg, Warp+i·dw and, when
	// RepeatMasks is set (len n), Mask RepeatMasks[i-1]; Next goes on
	// after the last. It consumes none when the last record returned was
	// not such an instruction (a directive, an instruction with a list,
	// none yet). Only with CapRepeat.
	Repeats(max int) (n int, dg, dw int64)
	// NextBlock returns the next records of a partition's split files
	// (docs/FORMAT.md, "Split files") a block of instructions at a time:
	// either a block, or the directive record that comes next (in, with
	// Dir set), or io.EOF after the last. The block's instructions are
	// those Next would return one by one, and, like them, the source's
	// until its next call. Only with CapBlock.
	NextBlock() (b *Block, in *Inst, err error)
}

// SourceCaps are the fast paths a [Source] declares, a bit each.
type SourceCaps uint8

const (
	// CapArena: NextInto decodes lists into the caller's arena.
	// [BinaryReader] has it.
	CapArena SourceCaps = 1 << iota
	// CapRepeat: Repeats hands over at once the records that repeat the
	// instruction just returned, as a hot counter's warps do, rather
	// than one Next each. [BinaryReader] has it.
	CapRepeat
	// CapBlock: NextBlock hands over a split file's instructions a block
	// at a time, which a replay applies without a batch slot each.
	// [BinaryReader] of a split file and split.Source have it.
	CapBlock
)

// String lists the flags: "arena|repeat", or "none".
func (c SourceCaps) String() string {
	var names []string
	for _, f := range []struct {
		c    SourceCaps
		name string
	}{{CapArena, "arena"}, {CapRepeat, "repeat"}, {CapBlock, "block"}} {
		if c&f.c != 0 {
			names = append(names, f.name)
		}
	}
	if c&^(CapArena|CapRepeat|CapBlock) != 0 {
		names = append(names, "?")
	}
	if names == nil {
		return "none"
	}
	return strings.Join(names, "|")
}

// NoCaps is embedded by a Source that has no fast path: it declares none,
// and its NextInto, Repeats and NextBlock, which no consumer calls, do
// nothing.
type NoCaps struct{}

// Caps is none.
func (NoCaps) Caps() SourceCaps { return 0 }

// NextInto fails: the source does not declare CapArena.
func (NoCaps) NextInto(arena []uint64) (*Inst, []uint64, error) {
	return nil, arena, errors.New("trace: NextInto on a source that does not declare CapArena")
}

// Repeats consumes none.
func (NoCaps) Repeats(int) (int, int64, int64) { return 0, 0, 0 }

// NextBlock fails: the source does not declare CapBlock.
func (NoCaps) NextBlock() (*Block, *Inst, error) {
	return nil, nil, errors.New("trace: NextBlock on a source that does not declare CapBlock")
}

// SourceCloser is a Source with what it holds (a file, a reader's
// goroutines): Close releases them, however the reading ended. [Open]
// returns one.
type SourceCloser interface {
	Source
	io.Closer
}

// InstWriter is where instructions go: the binary and text writers are
// one. Write takes directive records (Inst.Dir) too, and copies what it
// needs before returning.
type InstWriter interface {
	Write(in *Inst) error
	Close() error
}

// Copy writes every record of src to w, directives included, in order, up
// to src's end. It neither writes the header (the writer took it when it
// was made) nor closes w.
func Copy(w InstWriter, src Source) error {
	for {
		in, err := src.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := w.Write(in); err != nil {
			return err
		}
	}
}
