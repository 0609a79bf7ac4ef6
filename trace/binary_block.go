package trace

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// Blocks (docs/FORMAT.md, "Split files"): from split format version 3 on
// (4: an instruction without a lane of the partition has no vectors),
// a split file's instructions come in block records, each holding a run of
// consecutive instructions column by column (their seq gaps, static
// indices, group and warp deltas, masks, rows, then their vectors), so
// that a split task encodes and a partition's replay decodes a block in a
// few tight loops rather than a record an instruction. A block never
// spans a directive or a chunk.

// dirKindBlock is the directive kind of a block record (split files only).
const dirKindBlock = 4

// splitFormatVersion is the format version of a split file: version 2 with
// block records in place of instruction records, whose instructions with
// mask 0 (rows alone) have no vectors, and fold records of runs and
// fixed-width values. A reader refuses split files of version 2 (written
// by replay split before blocks), 3 (whose rows alone had vectors) and 4
// (whose fold records held a varint address delta and value a word),
// naming the version, rather than replay them another way.
const splitFormatVersion = 5

// blockMaxInsts is the most instructions a writer puts in a block.
const blockMaxInsts = 1024

// blockMaxBytes is the size at which a writer ends a block.
const blockMaxBytes = 64 << 10

// blockCols is the number of columns of a block record.
const blockCols = 7

// The columns of a block record, in their order.
const (
	colSeq    = iota // uvarint seq gap, an instruction each
	colStatic        // uvarint static index in the chunk's table
	colGroup         // svarint group delta
	colWarp          // svarint warp delta
	colMask          // uvarint mask: the partition's few lanes, not ^ ExecMask
	colPart          // uvarint lanes, uvarint row [, uvarint max conflict, uvarint sectors]
	colVecs          // each instruction's vectors, as a split instruction record stores them
)

// Block is a run of a split file's instructions, decoded at once
// (BinaryReader.NextBlock). Each of Insts has Seq, Static, Group, Warp,
// Mask, Vals and Part set, as Next would return it but for its compact
// lists (BlockCompact): a list of one value a lane that the file stored
// masked holds only the values of the lanes of the mask, in lane order, not
// a value for every lane, so that a few lanes' values are not spread over
// a warp's. An instruction with mask 0 (a row alone) has a zero
// broadcast for each input, shared by its static's: not to be written.
// They and their lists are the reader's, valid until its next call.
type Block struct {
	Insts []Inst
	parts []PartInfo
	vecs  []Vector
	arena []uint64
}

// blockBuf is the block a split writer is filling.
type blockBuf struct {
	n    int
	cols [blockCols][]byte
}

// addBlockInst appends instruction in (validated, its static index idx)
// to the writer's block.
func (w *BinaryWriter) addBlockInst(in *Inst, idx uint64) {
	k := &w.blk
	c := &k.cols
	pi := in.Part
	c[colSeq] = binary.AppendUvarint(c[colSeq], in.Seq-w.seq)
	c[colStatic] = binary.AppendUvarint(c[colStatic], idx)
	c[colGroup] = binary.AppendUvarint(c[colGroup], zigzag(in.Group-w.group))
	c[colWarp] = binary.AppendUvarint(c[colWarp], zigzag(in.Warp-w.warp))
	c[colMask] = binary.AppendUvarint(c[colMask], uint64(in.Mask))
	w.group, w.warp = in.Group, in.Warp
	p := binary.AppendUvarint(c[colPart], uint64(pi.Lanes))
	if pi.Row {
		p = binary.AppendUvarint(p, uint64(pi.Addresses)+1)
		p = binary.AppendUvarint(p, uint64(pi.MaxConflict))
		p = binary.AppendUvarint(p, uint64(pi.Sectors))
	} else {
		p = append(p, 0)
	}
	c[colPart] = p
	if in.Mask != 0 {
		c[colVecs] = w.appendSplitVecs(c[colVecs], in) // none without a lane (decodeBlock)
	}
	k.n++
}

// blockBytes is the size of the block being filled.
func (k *blockBuf) bytes() int {
	n := 0
	for _, c := range k.cols {
		n += len(c)
	}
	return n
}

// closeBlock appends the block being filled, if any, to the chunk as a
// block record: code 0, kind 4, the instruction count, then each column's
// byte length and bytes.
func (w *BinaryWriter) closeBlock() {
	k := &w.blk
	if k.n == 0 {
		return
	}
	b := append(w.insts, 0, dirKindBlock)
	b = binary.AppendUvarint(b, uint64(k.n))
	for i := range k.cols {
		b = binary.AppendUvarint(b, uint64(len(k.cols[i])))
		b = append(b, k.cols[i]...)
		k.cols[i] = k.cols[i][:0]
	}
	w.insts = b
	k.n = 0
}

// NextBlock returns the next records of a split file: a block of
// instructions (Block.Insts; nil when the next record is a directive),
// or the directive that comes next, or io.EOF after the last. An
// instruction that Next would return next, when Next stopped within a
// block, comes in a block of the rest of that block's instructions.
func (r *BinaryReader) NextBlock() (*Block, *Inst, error) {
	if r.split == nil {
		return nil, nil, fmt.Errorf("trace: NextBlock of a trace that is not a split file")
	}
	if r.blkAt < len(r.blk.Insts) && r.err == nil {
		b := &r.blkView
		b.Insts = r.blk.Insts[r.blkAt:]
		r.blkAt = len(r.blk.Insts)
		return b, nil, nil
	}
	if r.left == 0 || r.err != nil {
		if err := r.advance(); err != nil {
			return nil, nil, err
		}
	}
	if r.at < len(r.recs) && r.recs[r.at] == 0 && r.at+1 < len(r.recs) && r.recs[r.at+1] == dirKindBlock {
		if err := r.decodeBlock(); err != nil {
			return nil, nil, r.setErr(err)
		}
		r.blkAt = len(r.blk.Insts)
		return &r.blk, nil, nil
	}
	in, _, err := r.next(nil, false)
	if err != nil {
		return nil, nil, err
	}
	if in.Dir == nil {
		return nil, nil, r.setErr(r.instErr("an instruction record outside a block in a split file"))
	}
	return nil, in, nil
}

// nextInBlock returns the next instruction of the block being read as
// Next does: its compact lists (Block) spread over all the input's values,
// zero at the lanes outside its mask; its lists in arena when into, else
// in the reader's storage.
func (r *BinaryReader) nextInBlock(arena []uint64, into bool) (*Inst, []uint64) {
	in := &r.blk.Insts[r.blkAt]
	r.blkAt++
	r.inst = *in
	r.inst.Vals = append(r.ivals[:0], in.Vals...)
	r.ivals = r.inst.Vals
	if !into {
		arena = r.lanes[:0]
	}
	s := in.Static
	for j := range r.inst.Vals {
		v := &r.inst.Vals[j]
		if v.Kind != VecList {
			continue
		}
		n := len(arena)
		if BlockCompact(in, j) {
			full := s.Inputs[j].Count(s.ExecSize)
			arena = slices.Grow(arena, full)[:n+full]
			scatterMasked(arena[n:], v.List, &s.Inputs[j], s.ExecSize, in.Mask&s.ExecMask())
		} else {
			arena = append(arena, v.List...)
		}
		v.List = arena[n:len(arena):len(arena)]
		if v.ListHi != nil {
			n = len(arena)
			arena = append(arena, v.ListHi...)
			v.ListHi = arena[n:len(arena):len(arena)]
		}
	}
	if !into {
		r.lanes = arena[:cap(arena)]
		arena = nil
	}
	return &r.inst, arena
}

// compactable reports whether a block may hold input j of s compact: a
// maskable list (not the predicate, not a uniform address) of one value of
// at most 64 bits a lane.
func compactable(s *Static, j int) bool {
	in := &s.Inputs[j]
	return in.Elems <= 1 && in.Bits != 128 && maskable(s, j)
}

// BlockCompact reports whether list input j of in, an instruction of a
// Block, is compact: it holds one value for each lane of the
// instruction's mask (Mask & ExecMask), in lane order, rather than one
// for each of its ExecSize lanes. A block holds so the lists of one value
// of at most 64 bits a lane that the split file stored masked.
// (A list that is not compact holds Input.Count values, at least
// ExecSize; a compact one fewer.)
func BlockCompact(in *Inst, j int) bool {
	v := &in.Vals[j]
	return v.Kind == VecList && len(v.List) < in.Static.ExecSize
}

// decodeBlock decodes the block record at r.recs[r.at:] into r.blk, a
// column at a time: each loop reads one column's varints (most of one
// byte, read inline) into the instructions' fields, and the vectors only
// of the instructions with a lane in the partition (mask ≠ 0): one without
// has no vectors in the file, and reads back with a zero broadcast for
// each input (staticInfo.zero).
func (r *BinaryReader) decodeBlock() error {
	p := r.recs[r.at+2:]
	n, p, ok := readUvarint(p)
	if !ok || n == 0 || n > uint64(r.left) || n > blockMaxInsts {
		return r.instErr("a block of %d instructions (the chunk has %d records left; at most %d a block)", n, r.left, blockMaxInsts)
	}
	var cols [blockCols][]byte
	for i := range cols {
		m, q, ok := readUvarint(p)
		if !ok || m > uint64(len(q)) {
			return r.instErr("block column %d of %d bytes, %d left", i, m, len(q))
		}
		cols[i], p = q[:m], q[m:]
	}
	k := &r.blk
	ni := int(n)
	if cap(k.Insts) < ni {
		k.Insts = make([]Inst, ni, blockMaxInsts)
		k.parts = make([]PartInfo, ni, blockMaxInsts)
	}
	insts, parts := k.Insts[:ni], k.parts[:ni]
	k.Insts, k.parts = insts, parts
	// The statics first: they size the vectors and the lists.
	sis := r.blkSI[:0]
	c := cols[colStatic]
	if oneByteCol(c, ni) {
		// Every index one byte (the column is as long as the block),
		// most of them the one before.
		c = c[:ni]
		var last *staticInfo
		lastX := -1
		for i := range insts {
			x := int(c[i])
			if x != lastX {
				if x >= len(r.statics) {
					return r.instErr("block instruction %d: static index %d out of range (the table has %d)", i, x, len(r.statics))
				}
				last, lastX = r.statics[x], x
			}
			sis = append(sis, last)
			in := &insts[i]
			in.Line, in.Static, in.Dir, in.Part = 0, last.s, nil, &parts[i]
		}
		c = nil
	}
	for i := len(sis); i < ni; i++ {
		x, q, ok := readUvarint(c)
		if !ok || x >= uint64(len(r.statics)) {
			return r.instErr("block instruction %d: static index %d out of range (the table has %d)", i, x, len(r.statics))
		}
		c = q
		si := r.statics[x]
		sis = append(sis, si)
		in := &insts[i]
		in.Line, in.Static, in.Dir, in.Part = 0, si.s, nil, &parts[i]
	}
	r.blkSI = sis
	if len(c) != 0 {
		return r.instErr("block: %d bytes after the static column", len(c))
	}
	// The masks: they say which instructions have vectors.
	nvec, nlanes := 0, 0
	c = cols[colMask]
	for i := range insts {
		var x uint64
		if len(c) > 0 && c[0] < 0x80 {
			x, c = uint64(c[0]), c[1:]
		} else if x, c, ok = readUvarint(c); !ok || x > 0xFFFFFFFF {
			return r.instErr("block instruction %d: the mask column ends early or holds a bad mask", i)
		}
		insts[i].Mask = uint32(x)
		if x != 0 {
			nvec += len(sis[i].inputs)
			nlanes += sis[i].lanes
		}
	}
	if len(c) != 0 {
		return r.instErr("block: bytes left after its %d instructions in a column", ni)
	}
	seq := r.seq
	c = cols[colSeq]
	if oneByteCol(c, ni) {
		// Every gap one byte: no gap can overflow a seq that a chunk's
		// count bounds.
		c = c[:ni]
		for i := range insts {
			seq += uint64(c[i])
			insts[i].Seq = seq
			seq++
		}
		if seq < r.seq {
			return r.instErr("block: seq %d + %d gaps overflows", r.seq, ni)
		}
	} else {
		for i := range insts {
			var gap uint64
			if len(c) > 0 && c[0] < 0x80 {
				gap, c = uint64(c[0]), c[1:]
			} else if gap, c, ok = readUvarint(c); !ok {
				return r.instErr("block instruction %d: the seq column ends early", i)
			}
			if seq+gap < seq {
				return r.instErr("block instruction %d: seq %d + gap %d overflows", i, seq, gap)
			}
			seq += gap
			insts[i].Seq = seq
			seq++
		}
		if len(c) != 0 {
			return r.instErr("block: bytes left after its %d instructions in a column", ni)
		}
	}
	group, err := r.blockDeltas(insts, cols[colGroup], r.group, false)
	if err != nil {
		return err
	}
	warp, err := r.blockDeltas(insts, cols[colWarp], r.warp, true)
	if err != nil {
		return err
	}
	if err := r.blockParts(parts, cols[colPart]); err != nil {
		return err
	}
	if err := r.blockVectors(insts, sis, cols[colVecs], nvec, nlanes); err != nil {
		return err
	}
	r.seq, r.group, r.warp = seq, group, warp
	r.at = len(r.recs) - len(p)
	r.left -= ni
	r.lastRep = false
	r.blkAt = 0
	return nil
}

// blockDeltas reads a column of svarint deltas from prev into the
// instructions' Group (Warp when warp) and returns the last value.
func (r *BinaryReader) blockDeltas(insts []Inst, c []byte, prev int64, warp bool) (int64, error) {
	if oneByteCol(c, len(insts)) {
		c = c[:len(insts)]
		for i := range insts {
			prev += unzigzag(uint64(c[i]))
			if warp {
				insts[i].Warp = prev
			} else {
				insts[i].Group = prev
			}
		}
		return prev, nil
	}
	for i := range insts {
		var x uint64
		var ok bool
		if len(c) > 0 && c[0] < 0x80 {
			x, c = uint64(c[0]), c[1:]
		} else if x, c, ok = readUvarint(c); !ok {
			return 0, r.instErr("block instruction %d: the group or warp column ends early", i)
		}
		prev += unzigzag(x)
		if warp {
			insts[i].Warp = prev
		} else {
			insts[i].Group = prev
		}
	}
	if len(c) != 0 {
		return 0, r.instErr("block: bytes left after its %d instructions in a column", len(insts))
	}
	return prev, nil
}

// oneByteCol reports whether column c holds n varints of one byte each:
// n bytes, none with its continuation bit.
func oneByteCol(c []byte, n int) bool {
	if len(c) != n {
		return false
	}
	var acc uint64
	for len(c) >= 8 {
		acc |= binary.LittleEndian.Uint64(c)
		c = c[8:]
	}
	for _, b := range c {
		acc |= uint64(b)
	}
	return acc&0x8080808080808080 == 0
}

// blockParts reads the rows column: lanes, row and, for a row, its
// largest conflict and sectors.
func (r *BinaryReader) blockParts(parts []PartInfo, c []byte) error {
	for i := range parts {
		var lanes, row uint64
		if len(c) >= 2 && c[0]|c[1] < 0x80 {
			lanes, row, c = uint64(c[0]), uint64(c[1]), c[2:]
		} else {
			var ok1, ok2 bool
			lanes, c, ok1 = readUvarint(c)
			row, c, ok2 = readUvarint(c)
			if !ok1 || !ok2 {
				return r.instErr("block instruction %d: the rows column ends early", i)
			}
		}
		if lanes > MaxLanes || row > 1<<32 {
			return r.instErr("block instruction %d: %d lanes that ran, a row of %d addresses", i, lanes, row)
		}
		pi := &parts[i]
		*pi = PartInfo{Lanes: uint32(lanes), Row: row > 0}
		if row == 0 {
			continue
		}
		var maxc, sectors uint64
		if len(c) >= 2 && c[0]|c[1] < 0x80 {
			maxc, sectors, c = uint64(c[0]), uint64(c[1]), c[2:]
		} else {
			var ok bool
			if maxc, c, ok = readUvarint(c); !ok || maxc > 1<<32 {
				return r.instErr("block instruction %d: bad largest conflict", i)
			}
			if sectors, c, ok = readUvarint(c); !ok || sectors > 1<<32 {
				return r.instErr("block instruction %d: bad sectors", i)
			}
		}
		pi.Addresses, pi.MaxConflict, pi.Sectors = uint32(row-1), uint32(maxc), uint32(sectors)
	}
	if len(c) != 0 {
		return r.instErr("block: bytes left after its %d instructions in a column", len(parts))
	}
	return nil
}

// blockVectors reads the vectors column: the vectors of the instructions
// with a mask, nvec of them over nlanes list values at most, and counts
// their lane ops; those without take their static's zero broadcasts.
func (r *BinaryReader) blockVectors(insts []Inst, sis []*staticInfo, vc []byte, nvec, nlanes int) error {
	k := &r.blk
	k.vecs = slices.Grow(k.vecs[:0], nvec)[:nvec]
	if cap(k.arena) < nlanes {
		// As large as the largest the reader made: NextBlockInto's
		// blocks take turns, each growing once rather than each in turn.
		r.blkArena = max(r.blkArena, nlanes+nlanes/4)
		k.arena = make([]uint64, nlanes, r.blkArena)
	}
	arena := k.arena[:cap(k.arena)]
	vat, lat := 0, 0
	var laneOps uint64
	for i := range insts {
		in, si := &insts[i], sis[i]
		if in.Mask == 0 {
			in.Vals = si.zero
			continue
		}
		nIn := len(si.inputs)
		vals := k.vecs[vat : vat+nIn : vat+nIn]
		vat += nIn
		in.Vals = vals
		r.inst.Mask = in.Mask // decodeMasked reads the record's mask there
		r.seq = in.Seq
		lanesBuf := arena[lat : lat+si.lanes : lat+si.lanes]
		at := 0
		for j := range si.inputs {
			var err error
			if len(vc) >= 2 && vc[0] == vecKindMasked && (vc[1] == vecKindList || vc[1] == vecKindFixed) && compactable(si.s, j) {
				// A masked list of one value a lane: its values as they
				// are, the mask's lanes' (Block).
				m := bits.OnesCount32(in.Mask & si.exec)
				lo := lanesBuf[at : at+m : at+m]
				v := &vals[j]
				if vc[1] == vecKindFixed {
					q := vc[2:]
					var ok bool
					if vc, ok = readFixed(q, lo, r.simd); !ok {
						return r.inputErr(si, j, "masked list: %s", fixedProblem(q, m))
					}
				} else {
					var n int
					if vc, n = readDeltas(vc[2:], lo); n < 0 {
						return r.inputErr(si, j, "masked list ends after %d of %d values", -n-1, m)
					}
				}
				v.Kind, v.Base, v.Stride, v.BaseHi, v.List = VecList, 0, 0, 0, lo
				if v.ListHi != nil {
					v.ListHi = nil
				}
				at += m
				continue
			}
			if vc, at, err = r.decodeVector(si, j, vc, &vals[j], lanesBuf, at); err != nil {
				return err
			}
		}
		lat += at
		act := in.Mask & si.exec
		if si.pred >= 0 {
			pv := uint32(vals[si.pred].Lo(0))
			if si.predNeg {
				pv = ^pv
			}
			act &= pv
		}
		laneOps += uint64(bits.OnesCount32(act)) * si.elems
	}
	if len(vc) != 0 {
		return r.instErr("block: bytes left after its %d instructions in a column", len(insts))
	}
	r.laneOps += laneOps
	return nil
}

// NextBlockInto is NextBlock for a caller that holds on to what it
// returns past the reader's next calls (a consumer on another goroutine):
// a block comes in b's storage, and a fold record's words in f's, swapped
// with the reader's, which decodes its next ones into what b and f held.
// The block and the fold stay valid until the caller hands b or f to the
// reader again. The directive record it returns, but for its Fold, is the
// reader's, valid until its next call.
func (r *BinaryReader) NextBlockInto(b *Block, f *Fold) (*Block, *Inst, error) {
	blk, in, err := r.NextBlock()
	switch {
	case err != nil:
		return nil, nil, err
	case blk != nil:
		// A whole block, or the view of the rest of one Next began.
		at := len(r.blk.Insts) - len(blk.Insts)
		*b, r.blk = r.blk, *b
		b.Insts = b.Insts[at:]
		r.blk.Insts, r.blkAt = r.blk.Insts[:0], 0
		return b, nil, nil
	case in.Dir != nil && in.Dir.Fold == &r.dfold:
		*f, r.dfold = r.dfold, *f
		in.Dir.Fold = f
	}
	return nil, in, nil
}
