package accelsim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/gpureplay/replay/trace"
)

// MaxLine is the longest line a .traceg may hold: a list of 32 addresses
// takes about 600 bytes, so a longer line is not a trace line.
const MaxLine = 64 << 10

// kernelInfo is what a kernel's header says.
type kernelInfo struct {
	name      string // -kernel name
	version   int    // -accelsim tracer version, its integer part (0 when absent)
	lineinfo  bool   // -enable lineinfo = 1
	grid      [3]uint64
	haveGrid  bool
	shmemBase uint64 // -shmem base_addr
}

// lineSplitter cuts one line into its space-separated fields, reporting
// each one's column.
type lineSplitter struct {
	s   []byte
	pos int
}

// next returns the next field and its 1-based column, or nil at the end.
func (ls *lineSplitter) next() ([]byte, int) {
	s := ls.s
	i := ls.pos
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	j := i
	for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\r' {
		j++
	}
	ls.pos = j
	if i == j {
		return nil, i + 1
	}
	return s[i:j], i + 1
}

// parser turns trace lines into instructions: the part a .traceg and a
// .tracez share. It holds the kernel's header and the current block and
// warp, and reuses one instruction and its address list.
type parser struct {
	file    string
	info    kernelInfo
	groupLo int64 // the first group number of this kernel (after earlier kernels')
	stats   *Stats
	statics *[2]map[string]*trace.Static // by opcode, without and with a destination
	out     trace.Inst
	vals    []trace.Vector
	list    [trace.MaxLanes]uint64
	list2   [trace.MaxLanes]uint64 // a second list: data values (mem_trace with values)
	addrs   [trace.MaxLanes]uint64
	seq     *uint64 // the reader's count of instructions handed out
	read    int64   // bytes of trace text read
	clu     trace.Cluster
	cdir    trace.Directive

	group, warp int64
}

func (p *parser) errf(line, col int, field, format string, args ...any) error {
	return &Error{File: p.file, Line: line, Col: col, Offset: -1, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// header reads one `-key = value` line of the kernel header.
func (p *parser) header(line []byte, n int) error {
	key, val, ok := strings.Cut(string(line[1:]), "=")
	if !ok {
		return p.errf(n, 1, "header", "%q is not a -key = value line", line)
	}
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	valCol := bytes.IndexByte(line, '=') + 3 // 1-based, after "= "
	switch key {
	case "kernel name":
		p.info.name = val
	case "grid dim":
		g, err := dims(val)
		if err != nil {
			return p.errf(n, valCol, "grid dim", "%v", err)
		}
		p.info.grid, p.info.haveGrid = g, true
	case "accelsim tracer version":
		// The simulator reads it with %d: "1.2" is version 1.
		num, _, _ := strings.Cut(val, ".")
		v, err := strconv.Atoi(num)
		if err != nil || v < 0 {
			return p.errf(n, valCol, "accelsim tracer version", "%q is not a version number", val)
		}
		if v > 5 {
			return p.errf(n, valCol, "accelsim tracer version", "version %d is unknown: this reader reads the tracer's versions 1.2, 3, 4 and 5 (the TRACER_VERSION values tracer_tool.cu has defined); trace with one of those, or report the new version's format", v)
		}
		p.info.version = v
	case "enable lineinfo":
		switch val {
		case "0":
			p.info.lineinfo = false
		case "1":
			p.info.lineinfo = true
		default:
			return p.errf(n, valCol, "enable lineinfo", "%q: want 0 or 1", val)
		}
	case "shmem base_addr":
		v, err := parseHex(val)
		if err != nil {
			return p.errf(n, valCol, "shmem base_addr", "%q is not a hexadecimal address", val)
		}
		p.info.shmemBase = v
	}
	return nil
}

// dims reads "(x,y,z)".
func dims(s string) ([3]uint64, error) {
	var d [3]uint64
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return d, fmt.Errorf("%q: want (x,y,z)", s)
	}
	parts := strings.Split(s[1:len(s)-1], ",")
	if len(parts) != 3 {
		return d, fmt.Errorf("%q: want three sizes (x,y,z)", s)
	}
	for i, q := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(q), 10, 32)
		if err != nil || v == 0 {
			return d, fmt.Errorf("%q: each size is a positive number", s)
		}
		d[i] = v
	}
	if _, ok := blocksOf(d); !ok {
		return d, fmt.Errorf("%q: more than 2^40 blocks", s)
	}
	return d, nil
}

// maxGridBlocks is the most thread blocks a kernel's grid may have.
const maxGridBlocks = 1 << 40

// maxGroups is the most thread blocks all kernels of a trace may have
// together: their groups' numbers, each kernel's after the earlier
// kernels', stay within an int64 with room for one more grid.
const maxGroups = 1 << 62

// blocksOf is the number of blocks of a grid of sizes d (each below
// 2^32, as dims and triple read them), and whether it is at most
// maxGridBlocks: the product formed so that it cannot wrap around (three
// sizes near 2^32 wrap to any number, 2^31 for 2^32-1, 2^32-1 and 2^31).
func blocksOf(d [3]uint64) (uint64, bool) {
	xy := d[0] * d[1] // below 2^64: each size is below 2^32
	if xy > maxGridBlocks || d[2] != 0 && xy > maxGridBlocks/d[2] {
		return 0, false
	}
	return xy * d[2], true
}

// triple reads "x,y,z".
func triple(s string) ([3]uint64, bool) {
	var d [3]uint64
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return d, false
	}
	for i, q := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(q), 10, 32)
		if err != nil {
			return d, false
		}
		d[i] = v
	}
	return d, true
}

// block sets the group from a thread block's x,y,z: the linear block id
// in the kernel's grid, after the earlier kernels' blocks.
func (p *parser) block(xyz [3]uint64, n, col int) error {
	if !p.info.haveGrid {
		return p.errf(n, col, "thread block", "a thread block before the kernel header's -grid dim: the linear block id needs the grid")
	}
	g := p.info.grid
	if xyz[0] >= g[0] || xyz[1] >= g[1] || xyz[2] >= g[2] {
		return p.errf(n, col, "thread block", "block %d,%d,%d is outside the grid (%d,%d,%d)", xyz[0], xyz[1], xyz[2], g[0], g[1], g[2])
	}
	p.group = p.groupLo + int64(xyz[0]+xyz[1]*g[0]+xyz[2]*g[0]*g[1])
	return nil
}

// cluster is the directive record placing the current block in the
// cluster of a `cluster id = x,y,z` line: its number is linear in the
// kernel's grid (a grid of clusters is no larger), after the earlier
// kernels' groups, as the block's own is, so that two kernels' clusters
// never meet.
func (p *parser) cluster(xyz [3]uint64, n, col int) (*trace.Inst, error) {
	if p.group < 0 {
		return nil, p.errf(n, 1, "cluster id", "a cluster id before its block's thread block = line")
	}
	g := p.info.grid
	if xyz[0] >= g[0] || xyz[1] >= g[1] || xyz[2] >= g[2] {
		return nil, p.errf(n, col, "cluster id", "cluster %d,%d,%d is outside the grid (%d,%d,%d)", xyz[0], xyz[1], xyz[2], g[0], g[1], g[2])
	}
	p.clu = trace.Cluster{Group: p.group, ID: p.groupLo + int64(xyz[0]+xyz[1]*g[0]+xyz[2]*g[0]*g[1])}
	p.cdir = trace.Directive{Cluster: &p.clu}
	p.out = trace.Inst{Seq: *p.seq, Line: n, Group: p.group, Dir: &p.cdir}
	return &p.out, nil
}

// gridBlocks is the kernel's number of blocks (0 before -grid dim).
func (p *parser) gridBlocks() int64 {
	if !p.info.haveGrid {
		return 0
	}
	n, _ := blocksOf(p.info.grid) // dims and triple's callers refused a grid of more
	return int64(n)
}

// inst parses one instruction line of the current warp. It returns the
// instruction when the line is an atomic the SASS dialect takes, nil when
// it is skipped (and counted).
func (p *parser) inst(line []byte, n int) (*trace.Inst, error) {
	ls := lineSplitter{s: line}
	num := func(field string, bitSize int) (uint64, int, error) {
		tok, col := ls.next()
		if tok == nil {
			return 0, col, p.errf(n, col, field, "missing: the line ends early")
		}
		v, ok := parseDec(tok, bitSize)
		if !ok {
			return 0, col, p.errf(n, col, field, "%q is not a decimal number below 2^%d", tok, bitSize)
		}
		return v, col, nil
	}
	hex := func(field string, bitSize int) (uint64, int, error) {
		tok, col := ls.next()
		if tok == nil {
			return 0, col, p.errf(n, col, field, "missing: the line ends early")
		}
		v, err := parseHexBytes(tok, bitSize)
		if err != nil {
			return 0, col, p.errf(n, col, field, "%q is not a hexadecimal number below 2^%d", tok, bitSize)
		}
		return v, col, nil
	}
	if p.info.version < 3 {
		// Before version 3 every line began with its block and warp
		// (trace_parser.cc reads and ignores them).
		for _, f := range []string{"thread block x", "thread block y", "thread block z", "warp"} {
			if _, _, err := num(f, 32); err != nil {
				return nil, err
			}
		}
	}
	if p.info.lineinfo {
		if _, _, err := num("line_num", 32); err != nil {
			return nil, err
		}
	}
	if _, _, err := hex("PC", 64); err != nil {
		return nil, err
	}
	mask64, _, err := hex("mask", 32)
	if err != nil {
		return nil, err
	}
	mask := uint32(mask64)
	nd, col, err := num("dest_num", 8)
	if err != nil {
		return nil, err
	}
	if nd > 8 {
		return nil, p.errf(n, col, "dest_num", "%d destinations: a warp instruction has at most 8", nd)
	}
	for i := uint64(0); i < nd; i++ {
		if err := p.reg(&ls, n, "reg_dests"); err != nil {
			return nil, err
		}
	}
	opcode, opCol := ls.next()
	if opcode == nil {
		return nil, p.errf(n, opCol, "opcode", "missing: the line ends early")
	}
	ns, col, err := num("src_num", 8)
	if err != nil {
		return nil, err
	}
	if ns > 8 {
		return nil, p.errf(n, col, "src_num", "%d sources: a warp instruction has at most 8", ns)
	}
	for i := uint64(0); i < ns; i++ {
		if err := p.reg(&ls, n, "reg_srcs"); err != nil {
			return nil, err
		}
	}
	width, widthCol, err := num("mem_width", 16)
	if err != nil {
		return nil, err
	}
	active := 0
	firstLane := 0
	mode := uint64(0)
	var stride uint64
	if width > 0 {
		var mcol int
		if mode, mcol, err = num("address compression", 8); err != nil {
			return nil, err
		}
		active = bits.OnesCount32(mask)
		firstLane = bits.TrailingZeros32(mask)
		switch mode {
		case 0: // one address per active lane
			for l := 0; l < trace.MaxLanes; l++ {
				if mask&(1<<l) == 0 {
					p.addrs[l] = 0
					continue
				}
				if p.addrs[l], _, err = hex("mem_addresses", 64); err != nil {
					return nil, err
				}
			}
		case 1: // base, stride over a contiguous run of active lanes
			base, _, err := hex("mem_addresses (base)", 64)
			if err != nil {
				return nil, err
			}
			tok, scol := ls.next()
			if tok == nil {
				return nil, p.errf(n, scol, "mem_addresses (stride)", "missing: the line ends early")
			}
			s, ok := parseSigned(tok)
			if !ok {
				return nil, p.errf(n, scol, "mem_addresses (stride)", "%q is not a decimal stride", tok)
			}
			stride = uint64(s)
			if mask != 0 && mask>>firstLane&(mask>>firstLane+1) != 0 {
				return nil, p.errf(n, mcol, "address compression", "base and stride (1) with mask %08x: the tracer writes it only for one contiguous run of active lanes", mask)
			}
			for l := 0; l < trace.MaxLanes; l++ {
				p.addrs[l] = 0
				if mask&(1<<l) != 0 {
					p.addrs[l] = base + uint64(l-firstLane)*stride
				}
			}
		case 2: // base, then one delta per further active lane
			base, _, err := hex("mem_addresses (base)", 64)
			if err != nil {
				return nil, err
			}
			a := base
			seen := false
			for l := 0; l < trace.MaxLanes; l++ {
				p.addrs[l] = 0
				if mask&(1<<l) == 0 {
					continue
				}
				if seen {
					tok, dcol := ls.next()
					if tok == nil {
						return nil, p.errf(n, dcol, "mem_addresses (deltas)", "%d active lanes need %d deltas after the base; the line ends early", active, active-1)
					}
					d, ok := parseSigned(tok)
					if !ok {
						return nil, p.errf(n, dcol, "mem_addresses (deltas)", "%q is not a decimal delta", tok)
					}
					a += uint64(d)
				}
				seen = true
				p.addrs[l] = a
			}
		default:
			return nil, p.errf(n, mcol, "address compression", "%d: the tracer writes 0 (list), 1 (base, stride) or 2 (base, deltas)", mode)
		}
	}
	if p.info.version >= 5 {
		tok, icol := ls.next()
		if tok == nil {
			return nil, p.errf(n, icol, "immediate", "missing: a version 5 line ends with its immediate")
		}
		if _, ok := parseSigned(tok); !ok {
			return nil, p.errf(n, icol, "immediate", "%q is not a decimal number", tok)
		}
	}
	if tok, col := ls.next(); tok != nil {
		return nil, p.errf(n, col, "", "%q after the last field (a version %d line ends with %s)", tok, p.info.version, lastField(p.info.version))
	}
	p.stats.Lines++
	st, skip := p.static(opcode, nd > 0)
	if skip {
		return nil, nil
	}
	if width == 0 {
		return nil, p.errf(n, widthCol, "mem_width", "%s with mem_width 0: an atomic has addresses", opcode)
	}
	return p.build(st, mask, mode == 1 && active > 1, firstLane, stride, n, widthCol)
}

func lastField(v int) string {
	if v >= 5 {
		return "its immediate"
	}
	return "its addresses"
}

// reg reads one register field ("R12").
func (p *parser) reg(ls *lineSplitter, n int, field string) error {
	tok, col := ls.next()
	if tok == nil {
		return p.errf(n, col, field, "missing: the line ends early")
	}
	if len(tok) < 2 || tok[0] != 'R' {
		return p.errf(n, col, field, "%q is not a register (R0, R1, …)", tok)
	}
	for _, c := range tok[1:] {
		if c < '0' || c > '9' {
			return p.errf(n, col, field, "%q is not a register (R0, R1, …)", tok)
		}
	}
	return nil
}

// static returns the SASS instruction an atomic opcode maps to, parsed
// once; skip is true (and the opcode counted) for any other opcode.
func (p *parser) static(opcode []byte, hasDst bool) (*trace.Static, bool) {
	base, _, _ := bytes.Cut(opcode, []byte{'.'})
	if !isAtomic(base) {
		p.stats.skip(opcode, false)
		return nil, true
	}
	statics := p.statics[0] // by opcode: without a destination, and with
	if hasDst {
		statics = p.statics[1]
	}
	if st, ok := statics[string(opcode)]; ok {
		if st == nil {
			p.stats.skip(opcode, true)
			return nil, true
		}
		return st, false
	}
	st := parseAtomic(string(opcode), hasDst)
	statics[string(opcode)] = st
	if st == nil {
		p.stats.skip(opcode, true)
		return nil, true
	}
	return st, false
}

func isAtomic(base []byte) bool {
	switch string(base) {
	case "ATOM", "ATOMG", "ATOMS", "RED":
		return true
	}
	return false
}

// parseAtomic writes an atomic opcode as a SASS instruction with the
// canonical registers (doc.go) and parses it; nil when the SASS dialect
// does not take it.
func parseAtomic(opcode string, hasDst bool) *trace.Static {
	rd := "RZ"
	if hasDst {
		rd = "R0"
	}
	var texts []string
	if strings.HasPrefix(opcode, "RED.") {
		texts = []string{opcode + " [R2], R4"}
	} else {
		texts = []string{opcode + " " + rd + ", [R2], R4"}
		if strings.Contains(opcode, ".CAS") {
			// Rc is Rb+1 for a 32-bit CAS, Rb+2 for a 64-bit one.
			texts = []string{opcode + " " + rd + ", [R2], R4, R5", opcode + " " + rd + ", [R2], R4, R6"}
		}
	}
	for _, t := range texts {
		if st, err := trace.ParseStatic(t); err == nil && st.Addr >= 0 {
			return st
		}
	}
	return nil
}

// build makes the instruction of an atomic line from p.addrs.
func (p *parser) build(st *trace.Static, mask uint32, strided bool, first int, stride uint64, n, col int) (*trace.Inst, error) {
	in := &p.out
	in.Seq = *p.seq
	in.Static, in.Dir, in.Line = st, nil, n
	in.Group, in.Warp, in.Mask = p.group, p.warp, mask
	if cap(p.vals) < len(st.Inputs) {
		p.vals = make([]trace.Vector, len(st.Inputs))
	}
	in.Vals = p.vals[:len(st.Inputs)]
	for i := range in.Vals {
		in.Vals[i] = trace.Vector{}
	}
	v := &in.Vals[st.Addr]
	if st.AddrBits == 32 {
		// ATOMS: an offset in the block's shared memory.
		for l := 0; l < trace.MaxLanes; l++ {
			if mask&(1<<l) == 0 {
				continue
			}
			a := p.addrs[l]
			if p.info.shmemBase != 0 && a >= p.info.shmemBase {
				a -= p.info.shmemBase
			}
			if a >= 1<<32 {
				return nil, p.errf(n, col, "mem_addresses", "lane %d's ATOMS address %#x is not a shared-memory offset (below 2^32, or above the header's -shmem base_addr %#x)", l, p.addrs[l], p.info.shmemBase)
			}
			p.addrs[l] = a
		}
		strided = false
	}
	uniform := true
	var a0 uint64
	if mask != 0 {
		a0 = p.addrs[first]
	}
	for l := 0; l < trace.MaxLanes && uniform; l++ {
		if mask&(1<<l) != 0 && p.addrs[l] != a0 {
			uniform = false
		}
	}
	switch {
	case uniform:
		v.Kind, v.Base = trace.VecBroadcast, a0
	case strided:
		v.Kind, v.Base, v.Stride = trace.VecStride, a0-uint64(first)*stride, stride
	default:
		p.list = p.addrs
		v.Kind, v.List = trace.VecList, p.list[:]
	}
	*p.seq++
	p.stats.Atomics++
	return in, nil
}

// parseDec reads an unsigned decimal number below 2^bitSize, without
// making a string of it.
func parseDec(b []byte, bitSize int) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, bitSize >= 64 || v>>bitSize == 0
}

// parseSigned reads a signed 64-bit decimal number (%d, %lld).
func parseSigned(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	v, ok := parseDec(b, 64)
	if !ok || v > 1<<63 || !neg && v == 1<<63 {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// parseHex reads a hexadecimal number with or without 0x.
func parseHex(s string) (uint64, error) {
	return parseHexBytes([]byte(s), 64)
}

func parseHexBytes(b []byte, bitSize int) (uint64, error) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
	}
	if len(b) == 0 || len(b) > 16 {
		return 0, strconv.ErrSyntax
	}
	var v uint64
	for _, c := range b {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, strconv.ErrSyntax
		}
		v = v<<4 | uint64(d)
	}
	if bitSize < 64 && v>>bitSize != 0 {
		return 0, strconv.ErrRange
	}
	return v, nil
}

// textKernel reads one .traceg kernel, line by line.
type textKernel struct {
	p      parser
	br     *bufio.Reader
	closer io.Closer
	line   int
	body   bool // past the header
	inTB   bool
	left   int // lines left in the current warp; -1 before its insts line
	warpAt int // the line of the current warp's insts line
}

// readLine returns the next line without its newline, or io.EOF.
func (k *textKernel) readLine() ([]byte, error) {
	b, err := k.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, k.p.errf(k.line+1, 0, "", "a line longer than %d bytes: not an Accel-Sim trace line", MaxLine)
	}
	if err == io.EOF && len(b) == 0 {
		return nil, io.EOF
	}
	if err != nil && err != io.EOF {
		return nil, &Error{File: k.p.file, Line: k.line + 1, Offset: -1, Msg: "reading: " + err.Error()}
	}
	k.line++
	b = bytes.TrimSuffix(b, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	return b, nil
}

// next returns the kernel's next atomic, or io.EOF at its end.
func (k *textKernel) next() (*trace.Inst, error) {
	for {
		line, err := k.readLine()
		if err == io.EOF {
			return nil, k.end()
		}
		if err != nil {
			return nil, err
		}
		n := k.line
		t := bytes.TrimLeft(line, " \t")
		if len(t) == 0 {
			continue
		}
		if !k.body {
			switch {
			case t[0] == '-':
				if err := k.p.header(t, n); err != nil {
					return nil, err
				}
				continue
			case t[0] == '#':
				k.body = true
			default:
				return nil, k.p.errf(n, 1, "", "%q before the first #BEGIN_TB: a kernel header has only -key = value lines (is this an Accel-Sim .traceg?)", clip(t))
			}
		}
		isLabel := t[0] == '#' || bytes.IndexByte(t, '=') >= 0
		if k.left > 0 && isLabel {
			return nil, k.p.errf(n, 1, "insts", "warp %d of block %d has %d fewer lines than its insts = (line %d) declares", k.p.warp, k.p.group, k.left, k.warpAt)
		}
		switch {
		case t[0] == '#':
			if err := k.mark(t, n); err != nil {
				return nil, err
			}
		case t[0] == '-':
			return nil, k.p.errf(n, 1, "header", "a -key = value line after the kernel header")
		case isLabel:
			in, err := k.label(t, n)
			if err != nil || in != nil {
				return in, err
			}
		case k.left > 0:
			k.left--
			in, err := k.p.inst(t, n)
			if err != nil || in != nil {
				return in, err
			}
		case k.inTB && k.left == 0:
			return nil, k.p.errf(n, 1, "insts", "an instruction line beyond the %s lines of warp %d (insts = on line %d)", "declared", k.p.warp, k.warpAt)
		default:
			return nil, k.p.errf(n, 1, "", "%q is not a trace line here (an instruction belongs to a warp = and insts = of a thread block)", clip(t))
		}
	}
}

// clip shortens a line for an error message.
func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// mark reads #BEGIN_TB, #END_TB and comments.
func (k *textKernel) mark(t []byte, n int) error {
	w, _, _ := bytes.Cut(t, []byte{' '})
	switch string(w) {
	case "#BEGIN_TB":
		if k.inTB {
			return k.p.errf(n, 1, "#BEGIN_TB", "a thread block begins before the previous one ended (#END_TB)")
		}
		k.inTB, k.left = true, 0
		k.p.group, k.p.warp = -1, -1
	case "#END_TB":
		if !k.inTB {
			return k.p.errf(n, 1, "#END_TB", "no thread block to end (#BEGIN_TB)")
		}
		if k.left < 0 {
			return k.p.errf(n, 1, "insts", "warp %d has no insts = line", k.p.warp)
		}
		k.inTB = false
	}
	return nil // other # lines are comments (the #traces format line)
}

// label reads `thread block = x,y,z`, the cluster lines, `warp = n` and
// `insts = n`; anything else there is not a trace line. A `cluster id`
// line is handed out as a .cluster directive record.
func (k *textKernel) label(t []byte, n int) (*trace.Inst, error) {
	key, val, _ := bytes.Cut(t, []byte{'='})
	nb, vb := bytes.TrimSpace(key), bytes.TrimSpace(val)
	col := bytes.IndexByte(t, '=') + 3
	if !k.inTB {
		return nil, k.p.errf(n, 1, string(nb), "outside a thread block (#BEGIN_TB … #END_TB)")
	}
	switch string(nb) {
	case "thread block":
		v := string(vb)
		xyz, ok := triple(v)
		if !ok {
			return nil, k.p.errf(n, col, string(nb), "%q: want x,y,z", v)
		}
		return nil, k.p.block(xyz, n, col)
	case "cluster id", "cluster cta":
		xyz, ok := triple(string(vb))
		if !ok {
			return nil, k.p.errf(n, col, string(nb), "%q: want x,y,z", vb)
		}
		if string(nb) == "cluster id" {
			return k.p.cluster(xyz, n, col)
		}
	case "cluster rank":
		if _, ok := parseDec(vb, 32); !ok {
			return nil, k.p.errf(n, col, string(nb), "%q: want a number", vb)
		}
	case "warp":
		if k.p.group < 0 {
			return nil, k.p.errf(n, 1, string(nb), "a warp before its block's thread block = line")
		}
		if k.left < 0 {
			return nil, k.p.errf(n, 1, "insts", "warp %d has no insts = line", k.p.warp)
		}
		w, ok := parseDec(vb, 32)
		if !ok {
			return nil, k.p.errf(n, col, string(nb), "%q: want a number", vb)
		}
		k.p.warp, k.left = int64(w), -1
	case "insts":
		if k.p.warp < 0 || k.left >= 0 {
			return nil, k.p.errf(n, 1, string(nb), "an insts = line without its warp = line")
		}
		c, ok := parseDec(vb, 31)
		if !ok {
			return nil, k.p.errf(n, col, string(nb), "%q: want a number", vb)
		}
		k.left, k.warpAt = int(c), n
	default:
		return nil, k.p.errf(n, 1, "", "%q is not a trace line (thread block, cluster, warp, insts or an instruction of a warp)", clip(t))
	}
	return nil, nil
}

// end checks the kernel ended where a kernel may.
func (k *textKernel) end() error {
	switch {
	case !k.body:
		return k.p.errf(k.line, 0, "", "no #BEGIN_TB: the file ends in the kernel header (empty or not a .traceg)")
	case k.left > 0:
		return k.p.errf(k.line, 0, "insts", "the file ends %d lines short of warp %d's insts = (line %d): truncated", k.left, k.p.warp, k.warpAt)
	case k.inTB:
		return k.p.errf(k.line, 0, "#END_TB", "the file ends inside a thread block: truncated")
	}
	return io.EOF
}
