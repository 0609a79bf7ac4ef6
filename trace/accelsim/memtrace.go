package accelsim

import (
	"bufio"
	"bytes"
	"io"
	"strconv"

	"github.com/gpureplay/replay/trace"
)

// NVBit's mem_trace tool (NVBit release, tools/mem_trace/mem_trace.cu,
// recv_thread_fun; as in github.com/eunomia-bpf/nvbit-tutorial at 0845c6a)
// prints one line per executed warp memory instruction:
//
//	MEMTRACE: CTX 0x… - grid_launch_id N - CTA x,y,z - warp W - OPCODE - 0x… ×32
//
// and per launch
//
//	MEMTRACE: CTX 0x… - LAUNCH - Kernel pc 0x… - Kernel name NAME - grid launch id N - grid size x,y,z - block size x,y,z - …
//
// Older releases print the access lines without "MEMTRACE: CTX … -
// grid_launch_id N -" and the launch lines as "Kernel NAME - grid size
// x,y,z - …"; both are read. The 32 addresses are every lane's, shuffled
// from the active ones (inject_funcs.cu, instrument_mem): the line carries
// no mask, and the address an inactive lane shows is not defined; this
// reader takes a lane whose address is 0 as inactive (no access is to
// address 0). The `warp` is the hardware warp slot (get_warpid), which the
// trace keeps as the .warp; the CTA becomes the .group, its linear id in
// the launch's grid after the earlier launches' blocks.
//
// With values (a variant of the tool that prints, after the addresses and
// a further " - ", one hexadecimal data value per lane), the values bind
// the data source Rb, and the trace is not address-only; a CAS, which
// needs two values a lane, is then refused. Whether the first access line
// has values decides for the whole file.

// MemTraceReader is a [trace.Source] of the SASS atomics in mem_trace's
// output.
type MemTraceReader struct {
	trace.NoCaps // no fast path: the engine reads it an instruction at a time
	p            parser
	br           *bufio.Reader
	line         int
	hdr          trace.Header
	decided      bool  // whether the trace has values is known
	launch       int64 // the current launch's grid_launch_id; -1 before any
	seq          uint64
	stats        Stats
	err          error
	vals         [trace.MaxLanes]uint64
}

// NewMemTraceReader reads mem_trace's text from rd; name names it in
// errors.
func NewMemTraceReader(rd io.Reader, name string) *MemTraceReader {
	r := &MemTraceReader{launch: -1}
	r.stats = newStats()
	r.stats.Kernels = 1
	r.p = parser{file: name, stats: &r.stats, statics: &[2]map[string]*trace.Static{{}, {}}, seq: &r.seq}
	r.p.info.version = 5
	r.br = bufio.NewReaderSize(countingReader{rd, &r.stats.Bytes}, MaxLine)
	return r
}

// Header is address-only unless the lines carry values. It is known once
// Next returned the first instruction.
func (r *MemTraceReader) Header() *trace.Header { return &r.hdr }

// Stats returns what was read so far.
func (r *MemTraceReader) Stats() Stats { return r.stats.snapshot() }

// Next returns the next atomic, io.EOF at the end, or the first error.
func (r *MemTraceReader) Next() (*trace.Inst, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		b, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.err = r.p.errf(r.line+1, 0, "", "a line longer than %d bytes", MaxLine)
			return nil, r.err
		}
		if err == io.EOF && len(b) == 0 {
			if !r.decided {
				r.hdr.AddressOnly = true
			}
			r.err = io.EOF
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			r.err = err
			return nil, err
		}
		r.line++
		b = bytes.TrimRight(b, "\r\n")
		in, err := r.lineOf(b)
		if err != nil {
			r.err = err
			return nil, err
		}
		if in != nil {
			return in, nil
		}
	}
}

var (
	mtPrefix = []byte("MEMTRACE: ")
	mtSep    = []byte(" - ")
)

// lineOf reads one line: an access, a launch, or other output (the
// program's own, NVBit's banner), which is passed over.
func (r *MemTraceReader) lineOf(b []byte) (*trace.Inst, error) {
	n := r.line
	col := 1
	if bytes.HasPrefix(b, mtPrefix) {
		b, col = b[len(mtPrefix):], len(mtPrefix)+1
	}
	if i := bytes.Index(b, []byte("grid size ")); i >= 0 && !bytes.HasPrefix(b, []byte("CTA ")) && (bytes.Contains(b, []byte("LAUNCH")) || bytes.HasPrefix(b, []byte("Kernel "))) {
		rest := b[i+len("grid size "):]
		if j := bytes.Index(rest, mtSep); j >= 0 {
			rest = rest[:j]
		}
		at := col + i + len("grid size ")
		g, ok := triple(string(bytes.TrimSpace(rest)))
		_, fits := blocksOf(g)
		switch {
		case !ok || g[0] == 0 || g[1] == 0 || g[2] == 0:
			return nil, r.p.errf(n, at, "grid size", "%q: want x,y,z, each a positive number", rest)
		case !fits:
			return nil, r.p.errf(n, at, "grid size", "%q: more than 2^40 blocks", rest)
		}
		last := r.p.gridBlocks() // the last launch's blocks, before this one's (0 before the first)
		if r.p.groupLo > maxGroups-last {
			return nil, r.p.errf(n, at, "grid size", "the launches so far have more than 2^62 blocks together: their groups' numbers would not fit")
		}
		r.p.groupLo += last
		r.p.info.grid, r.p.info.haveGrid = g, true
		return nil, nil
	}
	fields := bytes.Split(b, mtSep)
	// [CTX c] [grid_launch_id N] CTA x,y,z  warp W  OPCODE  addrs [ - vals]
	k := 0
	for k < len(fields) && !bytes.HasPrefix(fields[k], []byte("CTA ")) {
		k++
	}
	if k == len(fields) {
		if col > 1 {
			return nil, r.p.errf(n, col, "", "a MEMTRACE: line that is neither an access (… - CTA x,y,z - warp W - OPCODE - addresses) nor a LAUNCH")
		}
		return nil, nil // the program's own output
	}
	at := func(f int) int { // the column of field f
		c := col
		for i := 0; i < f; i++ {
			c += len(fields[i]) + len(mtSep)
		}
		return c
	}
	if len(fields) < k+4 {
		return nil, r.p.errf(n, at(k), "", "an access line needs CTA x,y,z - warp W - OPCODE - 32 addresses")
	}
	cta, ok := triple(string(fields[k][len("CTA "):]))
	if !ok {
		return nil, r.p.errf(n, at(k)+4, "CTA", "%q: want x,y,z", fields[k][4:])
	}
	if !bytes.HasPrefix(fields[k+1], []byte("warp ")) {
		return nil, r.p.errf(n, at(k+1), "warp", "%q: want warp W", fields[k+1])
	}
	w, err := strconv.ParseUint(string(fields[k+1][len("warp "):]), 10, 32)
	if err != nil {
		return nil, r.p.errf(n, at(k+1)+5, "warp", "%q is not a number", fields[k+1][5:])
	}
	opcode := fields[k+2]
	if !r.p.info.haveGrid {
		return nil, r.p.errf(n, at(k), "CTA", "an access before any launch line (its grid size numbers the blocks)")
	}
	if err := r.p.block(cta, n, at(k)+4); err != nil {
		return nil, err
	}
	r.p.warp = int64(w)
	mask, err := r.lanes(fields[k+3], n, at(k+3), &r.p.addrs, "addresses")
	if err != nil {
		return nil, err
	}
	hasVals := len(fields) > k+4
	if len(fields) > k+5 {
		return nil, r.p.errf(n, at(k+5), "", "%q after the values", fields[k+5])
	}
	if !r.decided {
		r.decided = true
		r.hdr.AddressOnly = !hasVals
	}
	if hasVals == r.hdr.AddressOnly {
		return nil, r.p.errf(n, at(k+3), "values", "the first access line set whether lines carry values (%v); this one differs", !r.hdr.AddressOnly)
	}
	if hasVals {
		if _, err := r.lanes(fields[k+4], n, at(k+4), &r.vals, "values"); err != nil {
			return nil, err
		}
	}
	r.stats.Lines++
	hasDst := !bytes.HasPrefix(opcode, []byte("RED"))
	st, skip := r.p.static(opcode, hasDst)
	if skip {
		return nil, nil
	}
	in, err := r.p.build(st, mask, false, 0, 0, n, at(k+3))
	if err != nil || !hasVals {
		return in, err
	}
	if st.Op == trace.OpCAS {
		return nil, r.p.errf(n, at(k+4), "values", "%s: a compare-and-swap needs two values a lane (compare and new); the trace has one", opcode)
	}
	if len(st.B) == 1 && st.B[0].In >= 0 {
		v := &in.Vals[st.B[0].In]
		vals := r.vals
		if bits := st.Inputs[st.B[0].In].Bits; bits < 64 {
			for l := range vals {
				if vals[l]>>bits != 0 {
					return nil, r.p.errf(n, at(k+4), "values", "lane %d's value %#x does not fit the %d-bit %s", l, vals[l], bits, st.Inputs[st.B[0].In].Name)
				}
			}
		}
		r.p.list2 = vals
		v.Kind, v.List = trace.VecList, r.p.list2[:]
	}
	return in, nil
}

// lanes reads 32 hexadecimal numbers into out, and returns the mask of the
// nonzero ones (the active lanes, for addresses).
func (r *MemTraceReader) lanes(f []byte, n, col int, out *[trace.MaxLanes]uint64, field string) (uint32, error) {
	ls := lineSplitter{s: f}
	var mask uint32
	for l := 0; l < trace.MaxLanes; l++ {
		tok, c := ls.next()
		if tok == nil {
			return 0, r.p.errf(n, col+c-1, field, "%d of the 32 lanes' %s: the line ends early", l, field)
		}
		v, err := parseHexBytes(tok, 64)
		if err != nil {
			return 0, r.p.errf(n, col+c-1, field, "lane %d: %q is not a hexadecimal number", l, tok)
		}
		out[l] = v
		if v != 0 {
			mask |= 1 << l
		}
	}
	if tok, c := ls.next(); tok != nil {
		return 0, r.p.errf(n, col+c-1, field, "%q after the 32 lanes' %s", tok, field)
	}
	return mask, nil
}
