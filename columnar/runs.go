package columnar

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// seqRun is rows rows of one value (colBuf.runs).
type seqRun struct {
	v    uint64
	rows int
}

// appendRuns appends to c's runs the next k rows of the engine's seq
// runs (engine.ResultColumns: seqs[i] for runs[i] rows) from row used of
// run on, and returns where the row after them is, as putRuns does for a
// column of rows. A run that continues the last one's value extends it.
func appendRuns(c *colBuf, seqs []uint64, runs []uint32, run int, used uint32, k int) (int, uint32) {
	for k > 0 {
		for used == runs[run] {
			run, used = run+1, 0
		}
		m := min(k, int(runs[run]-used))
		if last := len(c.runs) - 1; last >= 0 && c.runs[last].v == seqs[run] {
			c.runs[last].rows += m
		} else {
			c.runs = append(c.runs, seqRun{v: seqs[run], rows: m})
		}
		k, used = k-m, used+uint32(m)
	}
	return run, used
}

// fillRuns stores the rows of c, a column held as runs, in raw, and
// stores its rows from then on.
func (b *batch) fillRuns(c *colBuf) {
	if c.width == 4 {
		fillRunRows(c.u32(), c.runs, c.iota)
	} else {
		fillRunRows(c.u64(), c.runs, c.iota)
	}
	c.inRuns, c.iota, c.runs = false, false, c.runs[:0]
}

// fillRunRows stores the rows of runs in vs: each run's value
// throughout, or, with iota, its value plus the row's index in the run.
func fillRunRows[T uint32 | uint64](vs []T, runs []seqRun, iota bool) {
	r := 0
	for _, s := range runs {
		run := vs[r : r+s.rows]
		if iota {
			for i := range run {
				run[i] = T(s.v) + T(i)
			}
		} else {
			for i := range run {
				run[i] = T(s.v)
			}
		}
		r += s.rows
	}
}

// appendIotaRuns appends to c's runs, as iota runs (colBuf.iota), the
// lanes of the next k rows of the engine's runs (engine.ResultColumns
// with IotaLanes: row j of a run is lane j) from row used of run on, and
// returns where the row after them is. A run that goes on where the last
// one stopped (the next lane) extends it.
func appendIotaRuns(c *colBuf, runs []uint32, run int, used uint32, k int) (int, uint32) {
	for k > 0 {
		for used == runs[run] {
			run, used = run+1, 0
		}
		m := min(k, int(runs[run]-used))
		if last := len(c.runs) - 1; last >= 0 && c.runs[last].v+uint64(c.runs[last].rows) == uint64(used) {
			c.runs[last].rows += m
		} else {
			c.runs = append(c.runs, seqRun{v: uint64(used), rows: m})
		}
		k, used = k-m, used+uint32(m)
	}
	return run, used
}

// encodeIotaRuns is encodeInts of the n rows of a UINT32 DELTA column
// held as iota runs (the results' lane), in the same bytes, from the runs
// rather than from stored rows: a full page whose runs are those of the
// last full page compressed (ch.iota; full warps, page after page and row
// group after row group: a row group of them is one page) is that page
// again without a row written or compared; any other page is written
// from its runs.
func encodeIotaRuns(p *parquetWriter, ch *colChunk, runs []seqRun, n int) {
	const per = maxPageRows
	lo, hi := uint32(math.MaxUint32), uint32(0)
	ri, used := 0, 0 // the next page starts at row used of runs[ri]
	for from := 0; from < n; from += per {
		rows := min(per, n-from)
		pr := ch.runs[:0]
		plo, phi := uint32(math.MaxUint32), uint32(0)
		for left := rows; left > 0; {
			s := runs[ri]
			if m := min(left, s.rows-used); m > 0 {
				first := uint32(s.v) + uint32(used)
				pr = append(pr, seqRun{v: uint64(first), rows: m})
				plo, phi = min(plo, first), max(phi, first+uint32(m)-1)
				left, used = left-m, used+m
			}
			if used == s.rows {
				ri, used = ri+1, 0
			}
		}
		ch.runs = pr
		lo, hi = min(lo, plo), max(hi, phi)
		pg := &ch.iota
		switch {
		case pg.ok && rows == per && ch.stored == 0 && slices.Equal(pr, pg.runs):
			// That page again, of this row group or an earlier one:
			// addPage would compress the same bytes to the same bytes
			// (nothing to store raw, and the page was worth compressing
			// then).
			ch.out = append(ch.out, pg.z...)
			d := pg.desc
			d.end = len(ch.out)
			ch.pages = append(ch.pages, d)
			ch.again = true
			ch.repeated++
		default:
			ch.rows32 = slices.Grow(ch.rows32[:0], rows)[:rows]
			fillRunRows(ch.rows32, pr, true)
			ch.enc, _, _ = appendDeltaHalves(ch.enc[:0], &ch.half, unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(ch.rows32))), rows), int32(unsignedTop[uint32]()))
			at := len(ch.out)
			p.addPage(ch, ch.enc, rows, pqDelta, intStats(p, ch, plo, phi))
			if pg.ok = ch.again && rows == per; pg.ok {
				pg.runs = append(pg.runs[:0], pr...)
				pg.z = append(pg.z[:0], ch.out[at:]...)
				pg.desc = ch.pages[len(ch.pages)-1]
			}
		}
	}
	ch.stats = intStats(p, ch, lo, hi)
}

// seqAt is row r of the results' seq column, held as runs or rows.
func (c *colBuf) seqAt(r int) uint64 {
	if !c.inRuns {
		return c.u64()[r]
	}
	for _, s := range c.runs {
		if r < s.rows {
			return s.v
		}
		r -= s.rows
	}
	return 0
}

// encodeRuns is encodeInts of the n rows of a UINT64 DELTA column held
// as runs (the results' seq), in the same bytes, from the runs rather
// than from rows: per page appendDeltaRuns, with the page's statistics.
func encodeRuns(p *parquetWriter, ch *colChunk, runs []seqRun, n int) {
	var lo, hi uint64
	ri, used := 0, 0 // the next page starts at row used of runs[ri]
	for from := 0; from < n; from += maxPageRows {
		rows := min(maxPageRows, n-from)
		// The page's runs, the first and last cut to the page.
		pr := ch.runs[:0]
		for left := rows; left > 0; {
			s := runs[ri]
			m := min(left, s.rows-used)
			if m > 0 {
				pr = append(pr, seqRun{v: s.v, rows: m})
			}
			left, used = left-m, used+m
			if used == s.rows {
				ri, used = ri+1, 0
			}
		}
		ch.runs = pr
		var l, h int64
		ch.enc, l, h = appendDeltaRuns(ch.enc[:0], pr, rows, int64(unsignedTop[uint64]()))
		plo, phi := uint64(l), uint64(h)
		if from == 0 {
			lo, hi = plo, phi
		}
		lo, hi = min(lo, plo), max(hi, phi)
		p.addPage(ch, ch.enc, rows, pqDelta, intStats(p, ch, plo, phi))
	}
	ch.stats = intStats(p, ch, lo, hi)
}

// appendDeltaRuns is appendDelta's bytes and range for the rows values
// that runs (each of one row or more) hold, without a row: a delta is 0
// within a run and the step from one run's value to the next at its
// start, so a block is its few run starts. Where the block's smallest
// delta is 0 (a run of two rows or more in it), its miniblocks are zeros
// with the run starts' deltas set in them, else packed by pack32.
func appendDeltaRuns(dst []byte, runs []seqRun, rows int, flip int64) (out []byte, vlo, vhi int64) {
	dst = binary.AppendUvarint(dst, deltaBlock)
	dst = binary.AppendUvarint(dst, deltaMinis)
	dst = binary.AppendUvarint(dst, uint64(rows))
	dst = binary.AppendVarint(dst, int64(runs[0].v))
	vlo, vhi = int64(runs[0].v)^flip, int64(runs[0].v)^flip
	equal, ones := true, true
	for _, s := range runs {
		v := int64(s.v) ^ flip
		vlo, vhi = min(vlo, v), max(vhi, v)
		equal = equal && s.v == runs[0].v
		ones = ones && s.rows == 1
	}
	vlo, vhi = vlo^flip, vhi^flip
	if equal {
		return appendStepBlocks(dst, 0, rows), vlo, vhi
	}
	if ones && len(runs) > 1 {
		// A value a run: arithmetic when one step throughout.
		step := int64(runs[1].v - runs[0].v)
		arith := true
		for i := 2; i < len(runs) && arith; i++ {
			arith = int64(runs[i].v-runs[i-1].v) == step
		}
		if arith {
			return appendStepBlocks(dst, step, rows), vlo, vhi
		}
	}
	// Delta j (0 ≤ j < rows-1) is row j+1 less row j: nonzero only where
	// row j+1 starts a run. starts lists each block's run starts.
	type start struct {
		at int // the delta's index within its block
		d  int64
	}
	var starts, prev [deltaBlock]start
	nprev, prevFrom, prevTo := -1, 0, 0 // the last block's starts and bytes
	ri, row := 0, runs[0].rows          // run ri+1 starts at row row
	for from := 0; from < rows-1; from += deltaBlock {
		blen := min(deltaBlock, rows-1-from)
		ns := 0
		for ri+1 < len(runs) && row-1 < from+blen {
			starts[ns] = start{at: row - 1 - from, d: int64(runs[ri+1].v - runs[ri].v)}
			ns++
			ri++
			row += runs[ri].rows
		}
		ss := starts[:ns]
		if blen == deltaBlock && ns == nprev && slices.Equal(ss, prev[:nprev]) {
			// The block before again (warps of one size, one step):
			// its bytes.
			n := len(dst)
			dst = append(dst, dst[prevFrom:prevTo]...)
			prevFrom, prevTo = n, len(dst)
			continue
		}
		prevFrom = len(dst)
		nprev = -1
		if blen == deltaBlock {
			nprev = copy(prev[:], ss)
		}
		// The block's smallest and largest delta, and each miniblock's
		// largest (his), as deltaBlockRange finds them among its deltas.
		var lo, hi int64
		var his [deltaMinis]int64
		var seen [deltaMinis]bool
		var zeros [deltaMinis]int // each miniblock's deltas within a run: 0
		for m := range deltaMinis {
			zeros[m] = max(0, min(deltaMiniBlock, blen-m*deltaMiniBlock))
		}
		for k, s := range ss {
			if k == 0 {
				lo, hi = s.d, s.d
			}
			lo, hi = min(lo, s.d), max(hi, s.d)
			m := s.at / deltaMiniBlock
			if !seen[m] {
				his[m], seen[m] = s.d, true
			}
			his[m] = max(his[m], s.d)
			zeros[m]--
		}
		if ns < blen {
			if ns == 0 {
				lo, hi = 0, 0
			}
			lo, hi = min(lo, 0), max(hi, 0)
			for m := range deltaMinis {
				if zeros[m] > 0 && !seen[m] {
					his[m] = 0
				} else if zeros[m] > 0 {
					his[m] = max(his[m], 0)
				}
			}
		}
		dst = binary.AppendVarint(dst, lo)
		widths := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		if lo == hi {
			prevTo = len(dst)
			continue
		}
		k := 0
		for m := 0; m < deltaMinis && m*deltaMiniBlock < blen; m++ {
			w := uint(bits.Len64(uint64(his[m] - lo)))
			dst[widths+m] = byte(w)
			end := k
			for end < ns && ss[end].at < (m+1)*deltaMiniBlock {
				end++
			}
			if w == 0 {
				k = end
				continue
			}
			if lo == 0 {
				n := len(dst)
				dst = slices.Grow(dst, 4*int(w))[:n+4*int(w)]
				mb := dst[n:]
				clear(mb)
				for _, s := range ss[k:end] {
					setBits(mb, uint(s.at-m*deltaMiniBlock)*w, uint64(s.d))
				}
			} else {
				var seg [deltaMiniBlock]int64
				cnt := min(deltaMiniBlock, blen-m*deltaMiniBlock)
				for _, s := range ss[k:end] {
					seg[s.at-m*deltaMiniBlock] = s.d
				}
				dst = pack32(dst, seg[:cnt], lo, w)
			}
			k = end
		}
		prevTo = len(dst)
	}
	return dst, vlo, vhi
}

// setBits ors u into buf from bit pos on, least significant bit first.
func setBits(buf []byte, pos uint, u uint64) {
	for u != 0 {
		i, s := pos/8, pos%8
		buf[i] |= byte(u << s)
		u >>= 8 - s
		pos += 8 - s
	}
}
