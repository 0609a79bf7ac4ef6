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
