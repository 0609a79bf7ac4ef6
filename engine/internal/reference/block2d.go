package reference

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// LSC lsc_load_block2d and lsc_store_block2d: LSC_UNTYPED, Semantics,
// LOAD_BLOCK2D and STORE_BLOCK2D.
//
// The message is SIMD1: its six address operands (SurfaceBase,
// SurfaceWidth, SurfaceHeight, SurfacePitch, Src0AddrX, Src0AddrY) are the
// running lane's. It moves Blocks x BlockHeight x BlockWidth data. The
// register image is what LOAD_BLOCK2D's pseudo-code writes through
// store_elem_to_grf: block2dImage runs that pseudo-code and records, for
// every register slot, the datum it receives or that it is padding
// (fill_grf_zeros). Element e of the instruction is the e-th datum in slot
// order; padding is no memory access and has no row (docs/status/lsc.md,
// Block2d).
//
// Decisions where the pseudo-code is incomplete (docs/status/lsc.md,
// Block2d):
//
//   - load_elem's "row = SurfaceBase + y * SurfacePitch" leaves Src0AddrY
//     out, though the same code computes "block_start = SurfaceBase +
//     src0.Y * SurfacePitch" and STORE_BLOCK2D adds it: Y is added. Datum
//     (b, y, x) is at SurfaceBase + (Y + y)*SurfacePitch + (X + b*W + x)*T,
//     X and Y signed 32-bit.
//   - With VNNI, a group of elems_per_dword rows (columns when
//     transposed) that runs past the block is padded with zeros, and
//     grf_block_size counts the rounded-up rows.
//   - SurfaceWidth is the width in bytes minus 1, SurfaceHeight the height
//     in rows minus 1, SurfacePitch in bytes. A datum with a byte outside
//     the surface reads zero and its write is dropped (out_of_bounds).
//   - A store reads datum e from the slot a load with the same flags puts
//     it in ("similar to load block2d, but accesses are stores instead of
//     loads and only a single block is permitted"); Src1Data binds the
//     whole image, padding included.

// grfBytes is the register size of the block2d platforms: 64 bytes (the
// Semantics: "8 elements for :d64, 16 for :d32 ..."; DG2, with half of
// that, has no block2d).
const grfBytes = 64

// datum is one element of a block2d access: block b, row y and column x
// of the block, in elements, and its register slot.
type datum struct{ slot, b, y, x int }

// block2dImage runs LOAD_BLOCK2D's loops for a shape and returns the data
// in slot order and the image's size in slots.
func block2dImage(blocks, w, h, t int, transpose, vnni bool) ([]datum, int) {
	epd := max(4/t, 1) // elems_per_dword
	epr := grfBytes / t
	rowSize, rows := w, h
	if transpose {
		rowSize, rows = h, w
	}
	rowPitch := 1
	for rowPitch < rowSize { // round_up_pow2
		rowPitch *= 2
	}
	if vnni {
		rows = (rows + epd - 1) / epd * epd
	}
	blockSize := rowPitch * rows
	blockPitch := (blockSize + epr - 1) / epr * epr // round_to_multiple_of(elems_per_reg, …)
	image := make([]*datum, blocks*blockPitch)
	put := func(slot, b, y, x int) { image[slot] = &datum{slot, b, y, x} }
	for b := 0; b < blocks; b++ {
		at := b * blockPitch
		switch {
		case !transpose && !vnni: // load_row_span(row start, b, y, 0, W)
			for y := 0; y < h; y++ {
				for i := 0; i < w; i++ {
					put(at+y*rowPitch+i, b, y, i)
				}
			}
		case !transpose && vnni: // load_col_span(… + y*pitch + x*epd, b, y, x, epd)
			for y := 0; y < h; y += epd {
				for x := 0; x < w; x++ {
					for i := 0; i < epd && y+i < h; i++ {
						put(at+y*rowPitch+x*epd+i, b, y+i, x)
					}
				}
			}
		case transpose && !vnni: // load_col_span(… + x*pitch, b, 0, x, H)
			for x := 0; x < w; x++ {
				for i := 0; i < h; i++ {
					put(at+x*rowPitch+i, b, i, x)
				}
			}
		default: // load_row_span(… + x*pitch + y*epd, b, y, x, epd)
			for x := 0; x < w; x += epd {
				for y := 0; y < h; y++ {
					for i := 0; i < epd && x+i < w; i++ {
						put(at+x*rowPitch+y*epd+i, b, y, x+i)
					}
				}
			}
		}
	}
	var data []datum
	for _, d := range image {
		if d != nil {
			data = append(data, *d)
		}
	}
	return data, len(image)
}

// block2dRule sets up a block2d load or store.
func block2dRule(r *rule, st *trace.Static, l *trace.LSC, t int) error {
	if l.VNNI && t > 4 {
		return fmt.Errorf("lsc_%s: VNNI packs elements into dwords, not %s", l.SubOp, l.Data)
	}
	data, slots := block2dImage(l.Blocks, l.BlockWidth, l.BlockHeight, t, l.Transposed, l.VNNI)
	r.elems, r.plain = len(data), true
	ops := l.Block2DIn
	reg := func(in *trace.Inst, lane, k int) uint64 { return in.Vals[ops[k]].Lo(lane) }
	// where is datum e's row and byte column in the surface.
	where := func(in *trace.Inst, lane, e int) (row, col int64) {
		d := data[e]
		x := int64(int32(uint32(reg(in, lane, 4))))
		y := int64(int32(uint32(reg(in, lane, 5))))
		return y + int64(d.y), (x + int64(d.b*l.BlockWidth+d.x)) * int64(t)
	}
	r.addr = func(in *trace.Inst, lane, e int) uint64 {
		row, col := where(in, lane, e)
		pitch := int64(uint32(reg(in, lane, 3)))
		return reg(in, lane, 0) + uint64(row*pitch+col)
	}
	r.outsideSurface = func(in *trace.Inst, lane, e int) bool {
		row, col := where(in, lane, e)
		widthM1, heightM1 := int64(uint32(reg(in, lane, 1))), int64(uint32(reg(in, lane, 2)))
		return col < 0 || col+int64(t)-1 > widthM1 || row < 0 || row > heightM1
	}
	if l.SubOp == "load_block2d" {
		r.apply, r.op = func(old, _, _ wide) wide { return old }, "load"
		return nil
	}
	return block2dStore(r, st, data, slots, t)
}

// block2dStore reads datum e of a store from its slot of Src1Data.
func block2dStore(r *rule, st *trace.Static, data []datum, slots, t int) error {
	src := -1
	for i, in := range st.Inputs {
		if in.Role == trace.RoleSrcB {
			src = i
		}
	}
	if src < 0 || st.Inputs[src].Elems != slots {
		return fmt.Errorf("lsc_store_block2d: Src1Data should bind the %d slots of the register image", slots)
	}
	r.source = func(in *trace.Inst, lane, e int) (wide, wide) {
		lo, _ := in.Value(trace.Src{In: src, Elem: data[e].slot}, lane)
		return cut(wide{lo: lo}, t), wide{}
	}
	r.apply, r.give, r.op = func(_, b, _ wide) wide { return b }, giveNothing, "store"
	return nil
}
