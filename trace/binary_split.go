package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// Split files (docs/FORMAT.md, "Split files"): the records of one
// partition from one slice of a trace's chunks, written by replay split.
// They are binary traces with header flag bit 1, whose header says which
// partition, slice and trace they hold, and whose instructions carry their
// seq in the trace, the lanes that ran there and the statistics row's
// share (PartInfo), and only the lanes of their partition.

// flagSplit is header flag bit 1, 2: a split file.
const flagSplit = 2

// SplitHeader is what a split file's header says it holds.
type SplitHeader struct {
	Part, Parts   int // partition Part of Parts: 0 <= Part < Parts <= 2^16
	Slice, Slices int // slice Slice of Slices of the trace's chunks
	// TraceHash and TraceSize name the trace split: its identity
	// (BinaryIndex.Identity) and its size in bytes.
	TraceHash uint64
	TraceSize uint64
	// FirstChunk and EndChunk are the chunks [FirstChunk, EndChunk) of the
	// trace's Chunks the slice covers.
	FirstChunk, EndChunk, Chunks int
	// Name is the trace's file name, without its directory: what a
	// replay of the partition records as its trace (replay.options).
	Name string
	// Lines is the partition map (optional): lines that belong to the
	// partition it gives, not to their hash's (shard.NewPartitionerMap).
	// Every slice file of a split has the same.
	Lines []SplitLine
	// Combined: the split folded the accesses of commuting operations to
	// a word (Fold records, header flag bit 2), for replays that write
	// no per-lane table (replay split -tables).
	Combined bool
}

// SplitLine is an entry of a split's partition map: the 128-byte line
// Line (an address >> 7) of the memory instance Key (engine.PartitionKey)
// belongs to partition Part.
type SplitLine struct {
	Key, Line uint64
	Part      int
}

// maxSplitLines is the most lines a split header's partition map holds.
const maxSplitLines = 1 << 16

// maxSplitName is the longest Name a split header holds, in bytes.
const maxSplitName = 4096

// Trace is the identity of the trace split, as replay -partition records
// it in its tables (replay.trace): "xxh64:<16 hex digits> <bytes>".
func (s *SplitHeader) Trace() string {
	return fmt.Sprintf("xxh64:%016x %d", s.TraceHash, s.TraceSize)
}

func (s *SplitHeader) check() error {
	switch {
	case s.Parts < 1 || s.Parts > 1<<16 || s.Part < 0 || s.Part >= s.Parts:
		return fmt.Errorf("partition %d of %d", s.Part, s.Parts)
	case s.Slices < 1 || s.Slice < 0 || s.Slice >= s.Slices:
		return fmt.Errorf("slice %d of %d", s.Slice, s.Slices)
	case s.FirstChunk < 0 || s.FirstChunk > s.EndChunk || s.EndChunk > s.Chunks:
		return fmt.Errorf("chunks [%d, %d) of %d", s.FirstChunk, s.EndChunk, s.Chunks)
	case len(s.Name) > maxSplitName:
		return fmt.Errorf("a trace name of %d bytes (at most %d)", len(s.Name), maxSplitName)
	case len(s.Lines) > maxSplitLines:
		return fmt.Errorf("a partition map of %d lines (at most %d)", len(s.Lines), maxSplitLines)
	}
	for _, l := range s.Lines {
		if l.Part < 0 || l.Part >= s.Parts || l.Line > math.MaxUint64>>7 {
			return fmt.Errorf("the partition map gives line %#x partition %d of %d", l.Line, l.Part, s.Parts)
		}
	}
	return nil
}

// appendSplitHeader appends s as the header payload's split section.
func appendSplitHeader(b []byte, s *SplitHeader) ([]byte, error) {
	if err := s.check(); err != nil {
		return b, err
	}
	for _, x := range []int{s.Part, s.Parts, s.Slice, s.Slices} {
		b = binary.AppendUvarint(b, uint64(x))
	}
	b = binary.LittleEndian.AppendUint64(b, s.TraceHash)
	b = binary.AppendUvarint(b, s.TraceSize)
	for _, x := range []int{s.FirstChunk, s.EndChunk, s.Chunks} {
		b = binary.AppendUvarint(b, uint64(x))
	}
	b = binary.AppendUvarint(b, uint64(len(s.Name)))
	b = append(b, s.Name...)
	if len(s.Lines) > 0 { // the partition map, when there is one
		b = binary.AppendUvarint(b, uint64(len(s.Lines)))
		for _, l := range s.Lines {
			b = binary.LittleEndian.AppendUint64(b, l.Key)
			b = binary.AppendUvarint(b, l.Line)
			b = binary.AppendUvarint(b, uint64(l.Part))
		}
	}
	return b, nil
}

// splitSection parses the split section at c.
func (c *cursor) splitSection() (*SplitHeader, error) {
	s := &SplitHeader{}
	for _, x := range []*int{&s.Part, &s.Parts, &s.Slice, &s.Slices} {
		v := c.uvarint("split header")
		if v > 1<<32 {
			return nil, fmt.Errorf("split header: %d out of range", v)
		}
		*x = int(v)
	}
	if len(c.p) < 8 {
		return nil, errors.New("split header: the trace's hash is cut short")
	}
	if c.err == nil {
		s.TraceHash = binary.LittleEndian.Uint64(c.p)
		c.p = c.p[8:]
	}
	s.TraceSize = c.uvarint("trace size")
	for _, x := range []*int{&s.FirstChunk, &s.EndChunk, &s.Chunks} {
		v := c.uvarint("split header chunks")
		if v > 1<<32 {
			return nil, fmt.Errorf("split header: chunk %d out of range", v)
		}
		*x = int(v)
	}
	n := c.uvarint("split header name")
	switch {
	case c.err != nil:
		return nil, c.err
	case n > maxSplitName || n > uint64(len(c.p)):
		return nil, fmt.Errorf("split header: a trace name of %d bytes", n)
	}
	s.Name = string(c.p[:n])
	c.p = c.p[n:]
	if len(c.p) > 0 { // a partition map
		k := c.uvarint("partition map")
		if c.err == nil && (k == 0 || k > maxSplitLines || k > uint64(len(c.p))/10) {
			return nil, fmt.Errorf("split header: a partition map of %d lines", k)
		}
		s.Lines = make([]SplitLine, 0, k)
		for range k {
			if c.err != nil || len(c.p) < 8 {
				return nil, errors.New("split header: the partition map is cut short")
			}
			key := binary.LittleEndian.Uint64(c.p)
			c.p = c.p[8:]
			line := c.uvarint("partition map line")
			part := c.uvarint("partition map partition")
			if part > 1<<16 {
				return nil, fmt.Errorf("split header: the partition map gives line %#x partition %d", line, part)
			}
			s.Lines = append(s.Lines, SplitLine{Key: key, Line: line, Part: int(part)})
		}
		if c.err != nil {
			return nil, c.err
		}
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("split header: %v", err)
	}
	return s, nil
}

// WithSplit makes the writer write a split file: header flag bit 1 and s,
// and every instruction with its Seq (increasing) and its Part, which
// Write requires; lists store only the values of the lanes in the
// instruction's mask (vector kind 6).
func WithSplit(s SplitHeader) WriterOption {
	return func(o *writerOptions) error {
		if err := s.check(); err != nil {
			return fmt.Errorf("trace: WithSplit: %v", err)
		}
		o.split = &s
		return nil
	}
}

// Split returns what a split file's header says, nil for any other trace.
func (r *BinaryReader) Split() *SplitHeader { return r.split }

// Split returns what a split file's header says, nil for any other trace.
func (x *BinaryIndex) Split() *SplitHeader { return x.split }

// vecKindMasked is a list holding the values of the record's lanes only
// (split files): an inner list kind, then that list of those values.
const vecKindMasked = 6

// maskable reports whether input j of s may be stored masked: not the
// predicate (Active reads its lane 0) nor a uniform address (every lane
// reads lane 0's).
func maskable(s *Static, j int) bool {
	return j != s.Pred && !(s.AddrUniform && j == s.Addr)
}

// gatherMasked appends to dst the values of vs at the indices whose lane
// is in mask, in index order.
func gatherMasked(dst, vs []uint64, in *Input, execSize int, mask uint32) []uint64 {
	switch {
	case in.Elems <= 1:
		for m := mask; m != 0; m &= m - 1 {
			dst = append(dst, vs[bits.TrailingZeros32(m)])
		}
	case in.Transposed:
		for m := mask; m != 0; m &= m - 1 {
			at := bits.TrailingZeros32(m) * in.Elems
			dst = append(dst, vs[at:at+in.Elems]...)
		}
	default:
		for v := range in.Elems {
			row := vs[v*execSize : (v+1)*execSize]
			for m := mask; m != 0; m &= m - 1 {
				dst = append(dst, row[bits.TrailingZeros32(m)])
			}
		}
	}
	return dst
}

// maskedCount is how many values a masked list of input in holds.
func maskedCount(in *Input, execSize int, mask uint32) int {
	return bits.OnesCount32(mask) * max(in.Elems, 1)
}

// scatterMasked spreads the values src of the lanes in mask over dst (all
// of input in's values), zero elsewhere: gatherMasked's inverse.
func scatterMasked(dst, src []uint64, in *Input, execSize int, mask uint32) {
	clear(dst)
	k := 0
	switch {
	case in.Elems <= 1:
		for m := mask; m != 0; m &= m - 1 {
			dst[bits.TrailingZeros32(m)] = src[k]
			k++
		}
	case in.Transposed:
		for m := mask; m != 0; m &= m - 1 {
			at := bits.TrailingZeros32(m) * in.Elems
			k += copy(dst[at:at+in.Elems], src[k:])
		}
	default:
		for v := range in.Elems {
			row := dst[v*execSize : (v+1)*execSize]
			for m := mask; m != 0; m &= m - 1 {
				row[bits.TrailingZeros32(m)] = src[k]
				k++
			}
		}
	}
}

// appendSplitVecs appends the vectors of a split file's instruction (a
// block's vector column): lists masked to the record's lanes where they
// may be.
func (w *BinaryWriter) appendSplitVecs(b []byte, in *Inst) []byte {
	s := in.Static
	exec := s.ExecMask()
	mask := in.Mask & exec
	for i := range in.Vals {
		v := &in.Vals[i]
		wide := s.Inputs[i].Bits == 128
		if v.Kind != VecList || mask == exec || !maskable(s, i) {
			b = appendVector(b, v, wide)
			continue
		}
		b = append(b, vecKindMasked)
		inp := &s.Inputs[i]
		if !wide && inp.Elems <= 1 && bits.OnesCount32(mask) <= maskedDeltasMax {
			// A few lanes' values (a scattered warp's share), in a form
			// their spread picks, without gathering or weighing them.
			b = appendMaskedFew(b, v.List, mask)
			continue
		}
		lo := gatherMasked(w.masked[:0], v.List, inp, s.ExecSize, mask)
		m := len(lo)
		var hi []uint64
		if wide && v.ListHi != nil {
			lo = gatherMasked(lo, v.ListHi, inp, s.ExecSize, mask)
			lo, hi = lo[:m:m], lo[m:]
		}
		w.masked = lo[:0]
		if m == 0 {
			b = append(b, vecKindList) // no values
			if wide {
				b = binary.AppendUvarint(b, v.BaseHi)
			}
			continue
		}
		b = appendVector(b, &Vector{Kind: VecList, List: lo, ListHi: hi, BaseHi: v.BaseHi}, wide)
	}
	return b
}

// decodeMasked decodes a masked list (kind 6) of input j: its inner kind,
// then the values of the lanes of the record's mask, spread into lanes
// from at, zero elsewhere. wideInner: the inner kind held the high halves
// (no BaseHi follows).
func (r *BinaryReader) decodeMasked(si *staticInfo, j int, p []byte, v *Vector, lanes []uint64, at int) ([]byte, int, bool, error) {
	s := si.s
	if r.split == nil {
		return p, at, false, r.inputErr(si, j, "unknown vector kind %d", vecKindMasked)
	}
	if !maskable(s, j) {
		return p, at, false, r.inputErr(si, j, "a masked list on an input every lane reads lane 0 of")
	}
	if len(p) == 0 {
		return p, at, false, r.inputErr(si, j, "payload ends before the masked list's kind")
	}
	inner := p[0]
	p = p[1:]
	if inner < vecKindList || inner > vecKindFixed128 {
		return p, at, false, r.inputErr(si, j, "masked list of vector kind %d", inner)
	}
	ii := &si.inputs[j]
	in := &s.Inputs[j]
	mask := uint32(r.inst.Mask) & si.exec // decodeInst set it before the vectors
	m := maskedCount(in, s.ExecSize, mask)
	wideInner := inner == vecKindList128 || inner == vecKindFixed128
	if wideInner && !ii.wide {
		return p, at, false, r.inputErr(si, j, "vector kind %d (list with high halves) on a %d-bit input", inner, in.Bits)
	}
	if inner == vecKindFixed && in.Elems <= 1 {
		// A few lanes' scattered values: their offsets, straight to their lanes.
		lo := lanes[at : at+ii.n : at+ii.n]
		p0 := p
		var ok bool
		if p, ok = readFixedMasked(p, lo, mask); !ok {
			return p, at, false, r.inputErr(si, j, "masked list: %s", fixedProblem(p0, m))
		}
		v.Kind, v.Base, v.Stride, v.BaseHi = VecList, 0, 0, 0
		v.List = lo
		if v.ListHi != nil {
			v.ListHi = nil
		}
		return p, at + len(lo), false, nil
	}
	if inner == vecKindList && in.Elems <= 1 {
		// The common case (a few lanes' deltas): straight to their lanes.
		lo := lanes[at : at+ii.n : at+ii.n]
		var n int
		if p, n = readDeltasMasked(p, lo, mask); n < 0 {
			return p, at, false, r.inputErr(si, j, "masked list ends after %d of %d values", -n-1, m)
		}
		v.Kind, v.Base, v.Stride, v.BaseHi = VecList, 0, 0, 0
		v.List = lo
		if v.ListHi != nil {
			v.ListHi = nil
		}
		return p, at + len(lo), false, nil
	}
	if cap(r.masked) < 2*m {
		r.masked = make([]uint64, 2*m)
	}
	fixed := inner == vecKindFixed || inner == vecKindFixed128
	halves := 1
	if wideInner {
		halves = 2
	}
	for h := range halves {
		dst := r.masked[h*m : (h+1)*m : (h+1)*m]
		if fixed {
			p0 := p
			var ok bool
			if p, ok = readFixed(p, dst, r.simd); !ok {
				return p, at, false, r.inputErr(si, j, "masked list: %s", fixedProblem(p0, m))
			}
		} else {
			var n int
			if p, n = readDeltas(p, dst); n < 0 {
				return p, at, false, r.inputErr(si, j, "masked list ends after %d of %d values", -n-1, m)
			}
		}
	}
	lo := lanes[at : at+ii.n : at+ii.n]
	scatterMasked(lo, r.masked[:m], in, s.ExecSize, mask)
	var hi []uint64
	if wideInner {
		hi = lanes[at+ii.n : at+2*ii.n : at+2*ii.n]
		scatterMasked(hi, r.masked[m:2*m], in, s.ExecSize, mask)
	}
	v.Kind, v.Base, v.Stride, v.BaseHi = VecList, 0, 0, 0
	v.List = lo
	if v.ListHi != nil || hi != nil {
		v.ListHi = hi
	}
	return p, at + len(lo) + len(hi), wideInner, nil
}

// Identity is the identity of the binary trace x reads, of size bytes
// (replay.trace, docs/FORMAT.md "Trace identity"): the XXH64 of its header
// frame's bytes followed by its seek table's (from the table's frame to the
// file's end). The table holds every frame's sizes and the low 32 bits of
// the XXH64 of its content, so traces whose records differ differ here,
// and a split task reads only its slice, not the whole trace. A table
// without checksums names too little: then it is the XXH64 of the whole
// file, as for a text trace.
func (x *BinaryIndex) Identity(size int64) (uint64, error) {
	h := xxhash.New()
	if !x.hasCheck {
		if _, err := io.CopyBuffer(h, io.NewSectionReader(x.ra, 0, size), make([]byte, 4<<20)); err != nil {
			return 0, err
		}
		return h.Sum64(), nil
	}
	tstart := x.offsets[len(x.entries)]
	for _, r := range [][2]int64{{0, x.offsets[1]}, {tstart, size}} {
		if _, err := io.Copy(h, io.NewSectionReader(x.ra, r[0], r[1]-r[0])); err != nil {
			return 0, err
		}
	}
	return h.Sum64(), nil
}

// maskedDeltasMax is the most lanes a masked list the writer stores
// without weighing its two forms (appendMaskedFew): for so few values the
// two differ by a few bytes, and weighing them cost a split more than
// encoding them.
const maskedDeltasMax = 8

// appendMaskedFew appends the inner kind and values of a masked list of
// one value a lane at the lanes of mask (at most maskedDeltasMax): two
// or more values that differ in more than their low byte (a scattered
// warp's addresses) as a fixed-width list (kind 4), whose values read
// back with a load each rather than a varint each; others as deltas
// (kind 2). One pass for the form, one to write it; no gather buffer.
func appendMaskedFew(b []byte, vs []uint64, mask uint32) []byte {
	if mask&(mask-1) != 0 {
		// lo, hi and the low bits all values share: the trailing zeros
		// of their differences from lo are those of their xors with any
		// one of them (a-b and a^b have the same lowest set bit).
		m := mask
		x0 := vs[bits.TrailingZeros32(m)]
		lo, hi, diff := x0, x0, uint64(0)
		for m &= m - 1; m != 0; m &= m - 1 {
			x := vs[bits.TrailingZeros32(m)]
			lo, hi, diff = min(lo, x), max(hi, x), diff|(x^x0)
		}
		if hi-lo > 0xff {
			shift := min(bits.TrailingZeros64(diff), 15)
			width := (bits.Len64((hi-lo)>>shift) + 7) / 8
			b = append(b, vecKindFixed)
			b = binary.AppendUvarint(b, lo)
			b = append(b, byte(width|shift<<4))
			// Room for the values and an 8-byte store past the last.
			n := len(b)
			b = slices.Grow(b, bits.OnesCount32(mask)*width+8)
			full := b[:cap(b)]
			for m := mask; m != 0; m &= m - 1 {
				binary.LittleEndian.PutUint64(full[n:n+8], (vs[bits.TrailingZeros32(m)]-lo)>>shift)
				n += width
			}
			return b[:n]
		}
	}
	b = append(b, vecKindList)
	return appendMaskedDeltas(b, vs, mask)
}

// readFixedMasked is readFixed of a masked list of one value a lane,
// scattered as it reads: the i-th value goes to vs at the i-th lane of
// mask, zero elsewhere. It reports false, reading nothing into vs, when
// the list is malformed or cut short.
func readFixedMasked(p []byte, vs []uint64, mask uint32) ([]byte, bool) {
	lo, w, sh, p, ok := fixedHead(p)
	size := bits.OnesCount32(mask) * w
	if !ok || w < 1 || w > 8 || size > len(p) {
		return p, false
	}
	clear(vs)
	keep := uint64(1)<<(8*w) - 1
	if w == 8 {
		keep = ^uint64(0)
	}
	at := 0
	for m := mask; m != 0; m &= m - 1 {
		var x uint64
		if at+8 <= len(p) {
			x = binary.LittleEndian.Uint64(p[at:at+8:at+8]) & keep
		} else {
			for k := w - 1; k >= 0; k-- {
				x = x<<8 | uint64(p[at+k])
			}
		}
		vs[bits.TrailingZeros32(m)] = lo + x<<sh
		at += w
	}
	return p[size:], true
}

// appendMaskedDeltas appends the zigzag deltas of the values of vs (one a
// lane) at the lanes of mask, in lane order: appendDeltas of gatherMasked.
func appendMaskedDeltas(b []byte, vs []uint64, mask uint32) []byte {
	var prev uint64
	for m := mask; m != 0; m &= m - 1 {
		x := vs[bits.TrailingZeros32(m)]
		b = binary.AppendUvarint(b, zigzag(int64(x-prev)))
		prev = x
	}
	return b
}

// readDeltasMasked is readDeltas of a masked list of one value a lane,
// scattered as it reads: the i-th value goes to vs at the i-th lane of
// mask, zero elsewhere (scatterMasked of readDeltas). On a bad varint it
// returns n = -(values read)-1.
func readDeltasMasked(p []byte, vs []uint64, mask uint32) ([]byte, int) {
	clear(vs)
	var prev uint64
	i := 0
	for m := mask; m != 0; m &= m - 1 {
		var d uint64
		if len(p) > 0 && p[0] < 0x80 {
			d, p = uint64(p[0]), p[1:]
		} else if x, n := uvarintLong(p); n > 0 {
			d, p = x, p[n:]
		} else {
			return p, -i - 1
		}
		prev += uint64(unzigzag(d))
		vs[bits.TrailingZeros32(m)] = prev
		i++
	}
	return p, 0
}

// flagCombined is header flag bit 2, 4: a combined split file (with bit
// 1 only): one whose split folded the accesses of commuting operations to
// a word into one (Fold records), for replays that write no per-lane table.
const flagCombined = 4

// dirKindFold is the directive kind of a fold record (combined split
// files only).
const dirKindFold = 5

// maxFoldWords is the most words a fold record holds.
const maxFoldWords = 1 << 16

// Fold is a combined split file's folded accesses to words of one memory
// instance: for each i, the operation of Static (its kind and width; an
// instruction form of the trace) applied once at Addrs[i] with the source
// Vals[i], the composition of the operations of the instructions before
// the record that accessed that word (and that no other record in
// between touched). Addrs ascend. A fold makes no instructions row and
// counts no lanes. The reader's Fold and its slices are valid until its
// next call.
type Fold struct {
	Static *Static
	Group  int64 // the .group context, for a per-group space
	Addrs  []uint64
	Vals   []uint64
}

// appendFold appends fold record f's kind and entry (docs/FORMAT.md,
// "Combined split files"): the static's index in the chunk's table, the
// group, the word count, the stride (the least step between two of its
// addresses), the runs of addresses a stride apart (each its gap from the
// run before and its length), then the values in the fewest bytes that
// hold the largest, little-endian. A partition's words of a line are a
// run, and a value's width is known before its bytes: a reader decodes a
// record in two loops without a varint a word.
func (w *BinaryWriter) appendFold(b []byte, f *Fold) ([]byte, error) {
	switch {
	case w.o.split == nil || !w.o.split.Combined:
		return b, errors.New("a fold record outside a combined split file")
	case f.Static == nil:
		return b, errors.New("a fold record without a static")
	case len(f.Addrs) != len(f.Vals) || len(f.Addrs) == 0 || len(f.Addrs) > maxFoldWords:
		return b, fmt.Errorf("a fold record of %d addresses and %d values (1 to %d)", len(f.Addrs), len(f.Vals), maxFoldWords)
	}
	stride := uint64(1)
	if len(f.Addrs) > 1 {
		stride = ^uint64(0)
	}
	for i := 1; i < len(f.Addrs); i++ {
		if f.Addrs[i] <= f.Addrs[i-1] {
			return b, fmt.Errorf("a fold record's addresses do not ascend (0x%x after 0x%x)", f.Addrs[i], f.Addrs[i-1])
		}
		stride = min(stride, f.Addrs[i]-f.Addrs[i-1])
	}
	idx, err := w.staticIndex(f.Static)
	if err != nil {
		return b, err
	}
	runs := uint64(1)
	var most uint64
	for i, v := range f.Vals {
		if i > 0 && f.Addrs[i]-f.Addrs[i-1] != stride {
			runs++
		}
		most |= v
	}
	b = append(b, dirKindFold)
	b = binary.AppendUvarint(b, idx)
	b = binary.AppendUvarint(b, zigzag(f.Group))
	b = binary.AppendUvarint(b, uint64(len(f.Addrs)))
	b = binary.AppendUvarint(b, stride)
	b = binary.AppendUvarint(b, runs)
	last := uint64(0) // the last address of the run before
	for i := 0; i < len(f.Addrs); {
		j := i + 1
		for j < len(f.Addrs) && f.Addrs[j]-f.Addrs[j-1] == stride {
			j++
		}
		b = binary.AppendUvarint(b, f.Addrs[i]-last)
		b = binary.AppendUvarint(b, uint64(j-i))
		last, i = f.Addrs[j-1], j
	}
	width := (bits.Len64(most) + 7) / 8
	b = append(b, byte(width))
	if width == 0 {
		return b, nil
	}
	// Each value an 8-byte store, width bytes apart, into room for them
	// and 8 bytes past the last (as appendMaskedFew's), not an append of
	// width bytes, a call to memmove a value.
	n := len(b)
	b = slices.Grow(b, len(f.Vals)*width+8)
	full := b[:cap(b)]
	for _, v := range f.Vals {
		binary.LittleEndian.PutUint64(full[n:n+8], v)
		n += width
	}
	return b[:n], nil
}

// decodeFold decodes a fold record's entry at c into r.dfold: its runs'
// addresses in one loop, its values in another, each value one load
// where 8 bytes are left.
func (r *BinaryReader) decodeFold(c *cursor) error {
	idx := c.uvarint("fold static")
	g := unzigzag(c.uvarint("fold group"))
	n := c.uvarint("fold words")
	stride := c.uvarint("fold stride")
	runs := c.uvarint("fold runs")
	switch {
	case c.err != nil:
		return r.instErr("fold record: %v", c.err)
	case idx >= uint64(len(r.statics)):
		return r.instErr("fold record: static index %d out of range (the table has %d)", idx, len(r.statics))
	case n == 0 || n > maxFoldWords:
		return r.instErr("fold record of %d words (1 to %d)", n, maxFoldWords)
	case stride == 0:
		return r.instErr("fold record: a stride of 0")
	case runs == 0 || runs > n || runs > uint64(len(c.p))/2:
		return r.instErr("fold record of %d words in %d runs, in %d bytes", n, runs, len(c.p))
	}
	f := &r.dfold
	f.Static, f.Group = r.statics[idx].s, g
	f.Addrs, f.Vals = slices.Grow(f.Addrs[:0], int(n))[:n], slices.Grow(f.Vals[:0], int(n))[:n]
	addrs, vals := f.Addrs[:n:n], f.Vals[:n:n]
	p := c.p
	at := 0 // the next word
	last := uint64(0)
	for k := range runs {
		gap, q, ok1 := readUvarint(p)
		length, q, ok2 := readUvarint(q)
		p = q
		switch {
		case !ok1 || !ok2:
			return r.instErr("fold record: run %d of %d: bad varint", k, runs)
		case length == 0 || length > uint64(len(addrs)-at):
			return r.instErr("fold record: run %d of %d has %d words, of the %d left", k, runs, length, len(addrs)-at)
		case k > 0 && (gap == 0 || last+gap < last):
			return r.instErr("fold record: run %d of %d: addresses do not ascend", k, runs)
		case (length - 1) > (^uint64(0)-(last+gap))/stride:
			return r.instErr("fold record: run %d of %d: its %d words a stride of %d apart pass the last address", k, runs, length, stride)
		}
		a := last + gap
		for i := range addrs[at : at+int(length)] {
			addrs[at+i] = a
			a += stride
		}
		at += int(length)
		last = a - stride
	}
	if at != len(addrs) {
		return r.instErr("fold record: its runs hold %d words of %d", at, len(addrs))
	}
	if len(p) == 0 {
		return r.instErr("fold record: %v: payload ends before the value width", errTruncated)
	}
	width := int(p[0])
	p = p[1:]
	if width > 8 || len(vals)*width > len(p) {
		return r.instErr("fold record: %d values of %d bytes in %d", len(vals), width, len(p))
	}
	if width == 0 {
		clear(vals)
	} else {
		mask := ^uint64(0) >> (64 - 8*width)
		i := 0
		for ; i < len(vals) && i*width+8 <= len(p); i++ {
			vals[i] = binary.LittleEndian.Uint64(p[i*width:]) & mask
		}
		for ; i < len(vals); i++ {
			var le [8]byte
			copy(le[:], p[i*width:i*width+width])
			vals[i] = binary.LittleEndian.Uint64(le[:])
		}
	}
	c.p = p[len(vals)*width:]
	return nil
}

// WithHeldChunks makes a split file's writer (WithSplit, WithUncompressed)
// keep its chunks in f rather than write a file: no header frame, no seek
// table, its chunks neither numbered nor sealed until another writer's
// Append reads them back, one at a time, and writes them in its own file,
// after its own records. A split task routes the parts of a slice
// concurrently this way, and its files are those of one writer that took
// every record in order: the same bytes. Its memory is about a chunk a
// writer, whatever it holds.
func WithHeldChunks(f *HeldFile) WriterOption {
	return func(o *writerOptions) error {
		if f == nil {
			return errors.New("trace: WithHeldChunks: no held file")
		}
		o.held = f
		return nil
	}
}

// HeldFile is where writers WithHeldChunks keep their chunks until an
// Append: any number of writers used from one goroutine share one, each
// chunk written as it ends (through a small buffer) and read back once.
// Its memory does not grow with what it holds; its file's removal is its
// maker's (replay split unlinks it at once where the system allows).
type HeldFile struct {
	f   heldStore
	bw  *bufio.Writer
	off int64  // bytes written through bw
	buf []byte // Append's chunk, read back
}

// heldStore is a held file's backing: written in order, read back at
// offsets (an *os.File).
type heldStore interface {
	io.Writer
	io.ReaderAt
}

// NewHeldFile makes a held file writing to f and reading back from it:
// f's writes must land at offsets 0, 1, ... in order (a new file).
func NewHeldFile(f interface {
	io.Writer
	io.ReaderAt
}) *HeldFile {
	return &HeldFile{f: f, bw: bufio.NewWriterSize(f, 64<<10)}
}

// Held is how many bytes of chunks hf holds, written or buffered.
func (hf *HeldFile) Held() int64 { return hf.off }

// keep writes a chunk's head and instructions and returns where.
func (hf *HeldFile) keep(head, insts []byte) (heldChunk, error) {
	c := heldChunk{off: hf.off, head: len(head), insts: len(insts),
		first: binary.LittleEndian.Uint64(head[8:])}
	if _, err := hf.bw.Write(head); err != nil {
		return c, err
	}
	if _, err := hf.bw.Write(insts); err != nil {
		return c, err
	}
	hf.off += int64(len(head) + len(insts))
	return c, nil
}

// read returns chunk c's head and instructions, valid until the next read.
func (hf *HeldFile) read(c heldChunk) (head, insts []byte, err error) {
	if err := hf.bw.Flush(); err != nil {
		return nil, nil, err
	}
	n := c.head + c.insts
	hf.buf = slices.Grow(hf.buf[:0], n)[:n]
	if _, err := hf.f.ReadAt(hf.buf, c.off); err != nil {
		return nil, nil, fmt.Errorf("reading a held chunk back: %w", err)
	}
	return hf.buf[:c.head:c.head], hf.buf[c.head:], nil
}

// heldChunk is a chunk record kept by a writer WithHeldChunks in its held
// file: at off, its head's bytes (fixed part and static table; index and
// checksum not yet set), then its instructions'; first is its first seq.
type heldChunk struct {
	off         int64
	head, insts int
	first       uint64
}

// Append closes h, a writer WithHeldChunks with the same split header,
// and writes its records after w's: its chunks, read back one at a time,
// numbered on from w's and sealed. They start a chunk. h's instructions'
// seqs must not go back from w's.
func (w *BinaryWriter) Append(h *BinaryWriter) error {
	switch {
	case w.err != nil:
		return w.err
	case w.done:
		return errors.New("trace: binary writer: Append after Close")
	case w.o.held != nil || h.o.held == nil:
		return errors.New("trace: binary writer: Append takes a writer WithHeldChunks into one without")
	case w.o.split == nil || !sameSplit(w.o.split, h.o.split) || w.o.stored != h.o.stored:
		return errors.New("trace: binary writer: Append of a writer with another split header")
	}
	if err := h.Close(); err != nil {
		return err
	}
	for _, c := range h.held {
		// 0 where h had no instruction yet (heldSeq): the chunk is of
		// directives, and takes w's next seq.
		if c.first != 0 && c.first < w.seq {
			return fmt.Errorf("trace: binary writer: Append of a chunk from instruction %d after instruction %d", c.first, w.seq-1)
		}
	}
	err := w.flush()
	if werr := w.wait(); err == nil {
		err = werr
	}
	for _, c := range h.held {
		if err != nil {
			break
		}
		var head, insts []byte
		if head, insts, err = h.o.held.read(c); err != nil {
			break
		}
		binary.LittleEndian.PutUint32(head[4:], uint32(w.chunk))
		if c.first == 0 {
			binary.LittleEndian.PutUint64(head[8:], w.seq)
		}
		w.seal(head, chunkFixedLen, insts)
		err = w.writeRec(head, insts)
		w.chunk++
	}
	h.held = nil
	if err != nil {
		w.err = err
		return err
	}
	w.seq = max(w.seq, h.seq)
	return nil
}

// heldSeq starts the seqs of a writer WithHeldChunks, which does not know
// the seq of the instruction before its first, at that first instruction
// in: its seq is the base of the deltas that follow, and the first seq
// of the chunk being filled. A chunk of directives it ended before keeps
// first seq 0, which Append sets.
func (w *BinaryWriter) heldSeq(in *Inst) {
	w.seqSet = true
	w.seq = in.Seq
	if w.n > 0 {
		w.first = in.Seq
	}
}

// sameSplit reports whether a and b are one split header.
func sameSplit(a, b *SplitHeader) bool {
	type scalars struct {
		part, parts, slice, slices int
		hash, size                 uint64
		first, end, chunks         int
		name                       string
		combined                   bool
	}
	of := func(s *SplitHeader) scalars {
		return scalars{s.Part, s.Parts, s.Slice, s.Slices, s.TraceHash, s.TraceSize, s.FirstChunk, s.EndChunk, s.Chunks, s.Name, s.Combined}
	}
	return of(a) == of(b) && slices.Equal(a.Lines, b.Lines)
}
