package engine

import (
	"fmt"

	"github.com/gpureplay/replay/trace"
)

// Intel LSC lsc_load_block2d and lsc_store_block2d
// (vISA spec, LSC_UNTYPED: Semantics, LOAD_BLOCK2D and STORE_BLOCK2D; below,
// the seed).
//
// The instruction is SIMD1: its six address registers (SurfaceBase,
// SurfaceWidth, SurfaceHeight, SurfacePitch, Src0AddrX, Src0AddrY) are
// read in the one lane that runs. It moves Blocks x BlockHeight x
// BlockWidth data, one result row each: element e is the e-th datum in
// register order (trace.LSC.Block2DLayout), so that the four
// transpose/VNNI modes, which read the same memory, differ in which
// element lands where. The padding slots of the register image (zeros on
// a load) are not rows: they are no memory access, and a row marked
// out_of_bounds for them would count as a dropped access and stop
// --strict replays (docs/status/lsc.md, "Block2d").
//
// Element (b, y, x) of the block is at
//
//	SurfaceBase + (Y + y)*SurfacePitch + (X + b*BlockWidth + x)*sizeof(T)
//
// The seed's load_elem writes `row = SurfaceBase + y*SurfacePitch`,
// leaving Src0AddrY out, although the same pseudo-code computes
// `block_start = SurfaceBase + Y*SurfacePitch`, STORE_BLOCK2D adds
// Src0AddrY, and the operand is "the 2d tile's base Y position in
// elements to load or store". Y is added: SPV_INTEL_2d_block_io, "The
// second component of Coordinate specifies the number of rows to skip,
// from the base of the 2D region of memory"; intel/llvm ESIMD lsc_load2d,
// "Y is zero based Y-coordinate of the left upper rectangle corner in
// rows". Blocks follow each other along X ("If Block Count is greater
// than one, the blocks are loaded in row-major order, with the next block
// beginning immediately after the previous block", same extension).
// X and Y are signed 32-bit (IGC TranslateSendLsc.cpp
// lscBuildBlock2DPayload: "[StartX:s32, StartY:s32, …]").
//
// SurfaceWidth is the width in bytes minus 1 and SurfaceHeight the height
// in rows minus 1 (the seed says "in bytes" for the height, but the
// payload counts rows: ESIMD "SurfaceHeight is the surface height minus 1
// in rows"). SurfacePitch is in bytes, as the seed defines it (IGC's
// payload holds pitch minus 1 there; the seed, which this replay follows,
// does not: docs/status/lsc.md). An element whose bytes are not all
// inside [0, SurfaceWidth] x [0, SurfaceHeight] is out of the surface:
// a load reads zero and a store drops it (SPV_INTEL_2d_block_io,
// "Out-of-Bounds Behavior": "For loads, any out-of-bounds elements are
// assigned the value zero. For prefetches and stores, any out-of-bounds
// elements are ignored."), fault out_of_bounds. Inside the surface, the
// usual alignment and region checks apply.
//
// A store reads element e from the slot of Src1Data that a load with the
// same flags would write it to (the seed: "similar to load block2d, but
// accesses are stores instead of loads and only a single block is
// permitted"). For the `nn` store of the seed's example that is row-major
// with the row pitch padded to a power of two, as SPV_INTEL_2d_block_io
// ("For OpSubgroup2DBlockLoadINTEL, OpSubgroup2DBlockLoadTransformINTEL,
// and OpSubgroup2DBlockStoreINTEL, the Block Width is padded to the next
// power-of-two"), ESIMD lsc_store2d (Vals of getNextPowerOf2(BlockWidth)
// per row) and IGC lscBlock2dComputeDataRegs (the same row pitch for
// loads and stores) have it; the seed's STORE_BLOCK2D index
// `Src1Data.elems[v*round_up_pow2(BlockHeight) + n]` is that layout for a
// transposed (`tn`) store. The parser binds Src1Data as the whole image.

// planBlock2D fills p for lsc_load_block2d and lsc_store_block2d.
func planBlock2D(p *plan, l *trace.LSC) error {
	st := p.st
	layout, _ := l.Block2DLayout()
	if len(layout) != st.Elems {
		return fmt.Errorf("lsc_%s: %d elements in the layout for %d in the instruction", l.SubOp, len(layout), st.Elems)
	}
	size := int64(l.Data.MemBytes())
	p.size = uint8(size)
	in := l.Block2DIn
	w := int64(l.BlockWidth)
	// at is element e's (row, byte column) in the surface.
	at := func(bi *xinst, lane, e int) (row, col int64) {
		el := &layout[e]
		x := int64(int32(uint32(bi.lo(in[4], lane))))
		y := int64(int32(uint32(bi.lo(in[5], lane))))
		return y + int64(el.Row), (x + int64(el.Block)*w + int64(el.Col)) * size
	}
	p.elemAddr = func(bi *xinst, lane, e int) uint64 {
		row, col := at(bi, lane, e)
		base := bi.lo(in[0], lane)
		pitch := int64(uint32(bi.lo(in[3], lane)))
		return base + uint64(row*pitch+col)
	}
	p.elemFault = func(bi *xinst, lane, e int) Fault {
		row, col := at(bi, lane, e)
		widthM1 := int64(uint32(bi.lo(in[1], lane)))
		heightM1 := int64(uint32(bi.lo(in[2], lane)))
		if col < 0 || col+size-1 > widthM1 || row < 0 || row > heightM1 {
			return FaultOutOfBounds
		}
		return FaultNone
	}
	if l.Load() {
		p.kind = kLoad
		p.b, p.c = nil, nil
		return nil
	}
	p.kind = kExch
	p.noRet = true
	return nil
}
