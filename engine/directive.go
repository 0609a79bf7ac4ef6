package engine

import (
	"slices"

	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// Memory set-up in trace order: a .init or .region after the first
// instruction (a trace.Directive record) takes effect at its place.
//
//   - .region changes what later instructions are judged against. Regions
//     only reach the replay through plans (plan.regions), which the reader
//     makes, so the reader adds the region and drops the cached plans of
//     its space; instructions already read keep the plans they were read
//     with, so earlier accesses are not judged again.
//   - .init is a host write. The reader ends the batch after it: the batch's
//     instructions apply, then its inits (compute stage, between batches,
//     when no worker runs), then the next batch. So every earlier
//     instruction's access to those bytes comes before the write and no
//     later one's, for any shard, worker and batch count. Consecutive
//     directives ride on one batch, up to maxBatchInitBytes of data.

// maxBatchInitBytes bounds the .init data one batch carries, so a trace of
// nothing but .init lines replays in bounded memory.
const maxBatchInitBytes = 1 << 20

// batchInit is a .init carried by a batch, applied after its instructions.
type batchInit struct {
	mem  uint32 // memory id of (space, group)
	addr uint64
	data []byte // a copy: the Source owns the record's
}

// directive applies a directive record read by fill: a region at once (for
// the plans of the instructions that follow), an init onto the batch.
func (e *replayer) directive(b *batch, d *trace.Directive) {
	switch {
	case d.Region != nil:
		e.addRegion(*d.Region)
	case d.Init != nil:
		in := d.Init
		b.inits = append(b.inits, batchInit{mem: e.memID(initKey(in)), addr: in.Addr, data: slices.Clone(in.Data)})
		b.initBytes += len(in.Data)
	}
}

// addRegion declares r for the instructions read from now on. The slice a
// plan holds is never appended to in place.
func (e *replayer) addRegion(r trace.Region) {
	e.regions[r.Space] = append(slices.Clip(e.regions[r.Space]), r)
	for st := range e.plans {
		if st.Space == r.Space {
			delete(e.plans, st)
		}
	}
	e.lastPlan, e.prevPlan = nil, nil
}

// initKey is the memory an init writes: its space, and its group for a
// per-group space.
func initKey(in *trace.Init) memKey {
	g := in.Group
	if !in.Space.PerGroup() {
		g = -1
	}
	return memKey{in.Space, g}
}

// writeBytes stores data at addr of memory id, but for the bytes of
// another partition (own, when not nil, says which are this one's; a
// partition owns whole 128-byte lines, shard.LineBytes, so it is asked
// once a line, and each line's bytes, in one page, resolved once). It
// runs only where no worker touches memory: in New, and between batches.
func writeBytes(mem *shard.Memory, id uint32, addr uint64, data []byte, own func(id uint32, addr uint64) bool) error {
	cur := mem.Cursor()
	for len(data) > 0 {
		n := min(uint64(len(data)), shard.LineBytes-addr%shard.LineBytes)
		if own == nil || own(id, addr) {
			en := cur.Resolve(id, addr)
			if en == 0 {
				return errMemoryFull
			}
			pg := mem.Page(en.Ref())
			for i, by := range data[:n] {
				a := addr + uint64(i)
				wi := uint32(a>>2) & (shard.PageWords - 1)
				sh := (a & 3) * 8
				pg.Words[wi] = pg.Words[wi]&^(0xff<<sh) | uint32(by)<<sh
				pg.Touch(wi)
			}
		}
		addr += n
		data = data[n:]
	}
	return nil
}

// applyInits writes the batch's inits, in trace order, after its
// instructions have applied.
func (e *replayer) applyInits(b *batch) error {
	var own func(uint32, uint64) bool
	if b.partitioned {
		own = b.local
	}
	for _, in := range b.inits {
		if err := writeBytes(e.mem, in.mem, in.addr, in.data, own); err != nil {
			return err
		}
	}
	return nil
}
