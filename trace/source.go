package trace

import "io"

// Source is a stream of executed instructions: the text reader and the
// binary reader both are one. Next returns io.EOF after the last
// instruction. Memory set-up after the first instruction comes in trace
// order as records with Inst.Dir set (and Static nil); every consumer must
// apply or pass them on at their place. The returned *Inst, its Vals and
// their Lists are owned by the Source and valid only until the next call to
// Next; a Source reuses them so that reading allocates nothing per
// instruction in the steady state.
type Source interface {
	Header() *Header
	Next() (*Inst, error)
}

// ArenaSource is a Source that can decode an instruction's list vectors
// straight into storage its caller keeps, so that a caller that holds many
// instructions at once (a replay's batch) need not copy their lists.
// [BinaryReader] is one.
type ArenaSource interface {
	Source
	// NextInto is Next with the lists decoded into arena[len(arena):]:
	// it returns the arena grown by what they use, and the instruction's
	// lists point into it (see [BinaryReader.NextInto]).
	NextInto(arena []uint64) (*Inst, []uint64, error)
}

// RepeatSource is a Source that can hand over at once the records that
// repeat the instruction it last returned, as a hot counter's warps do,
// rather than one Next each. [BinaryReader] is one.
type RepeatSource interface {
	Source
	// Repeats consumes up to max of the records that follow the
	// instruction Next or NextInto last returned, as long as each is that
	// instruction again: the same Static, Mask and Vals (it has no list),
	// its Group and Warp advanced by the same dg and dw as that
	// instruction's own record advanced them. It returns how many it
	// consumed, n: the i-th (1 to n) is the instruction with Seq+i,
	// Group+i·dg and Warp+i·dw; Next goes on after the last. It consumes
	// none when the last record returned was not such an instruction (a
	// directive, an instruction with a list, none yet).
	Repeats(max int) (n int, dg, dw int64)
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
