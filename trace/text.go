package trace

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxLineBytes bounds one `.tasm` line, so a file without newlines cannot
// make the reader buffer without limit.
const MaxLineBytes = 1 << 20

// TextReader reads a `.tasm` trace (docs/TASM.md) as a Source.
// Directives before the first instruction make the Header. A .init or
// .region after it is a directive record (Inst.Dir) at its place in trace
// order; .window must come before the first instruction.
type TextReader struct {
	name    string
	sc      *bufio.Scanner
	line    int
	hdr     Header
	pending string // first instruction line, read while collecting the header
	pendLn  int
	seq     uint64
	group   int64
	warp    int64
	ctx     map[warpKey]map[string]binding
	statics map[string]*Static
	started bool
}

type warpKey struct{ group, warp int64 }

type binding struct {
	text string
	line int
	col  int
}

// NewTextReader reads the header (every directive before the first
// instruction) and returns a reader positioned at the first instruction.
// name is used in error messages.
func NewTextReader(r io.Reader, name string) (*TextReader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	tr := &TextReader{name: name, sc: sc, ctx: map[warpKey]map[string]binding{}, statics: map[string]*Static{}}
	for {
		text, ok, err := tr.nextLine()
		if err != nil {
			return nil, err
		}
		if !ok {
			return tr, nil
		}
		if strings.HasPrefix(text, ".") {
			d, err := tr.directive(text)
			if err != nil {
				return nil, err
			}
			if d != nil {
				tr.hdr.add(d)
			}
			continue
		}
		tr.pending, tr.pendLn = text, tr.line
		return tr, nil
	}
}

// Header returns the regions and initial memory the trace declares.
func (tr *TextReader) Header() *Header { return &tr.hdr }

// Caps is none: a text reader has neither fast path of [Source].
func (tr *TextReader) Caps() SourceCaps { return 0 }

// NextInto fails: a text reader does not declare CapArena.
func (tr *TextReader) NextInto(arena []uint64) (*Inst, []uint64, error) {
	return NoCaps{}.NextInto(arena)
}

// Repeats consumes none: a text reader does not declare CapRepeat.
func (tr *TextReader) Repeats(int) (int, int64, int64) { return 0, 0, 0 }

// Close releases nothing (the caller owns the io.Reader), so that a
// TextReader is a [SourceCloser] as a [BinaryReader] is.
func (tr *TextReader) Close() error { return nil }

// nextLine returns the next non-blank line with its comment removed.
func (tr *TextReader) nextLine() (string, bool, error) {
	for tr.sc.Scan() {
		tr.line++
		text := stripComment(tr.sc.Text())
		if strings.TrimSpace(text) == "" {
			continue
		}
		return text, true, nil
	}
	if err := tr.sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return "", false, &SyntaxError{File: tr.name, Line: tr.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)}
		}
		return "", false, fmt.Errorf("%s: line %d: %w", tr.name, tr.line+1, err)
	}
	return "", false, nil
}

// stripComment cuts `#` and `//` comments. Leading blanks are kept so that
// columns stay true.
func stripComment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "//"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, " \t\r")
}

func (tr *TextReader) errf(col int, format string, args ...any) error {
	return &SyntaxError{File: tr.name, Line: tr.line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// Next returns the next instruction, or io.EOF.
func (tr *TextReader) Next() (*Inst, error) {
	for {
		var text string
		if tr.pending != "" {
			text, tr.line = tr.pending, tr.pendLn
			tr.pending = ""
		} else {
			t, ok, err := tr.nextLine()
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, io.EOF
			}
			text = t
		}
		lead := len(text) - len(strings.TrimLeft(text, " \t"))
		if strings.HasPrefix(text[lead:], ".") {
			d, err := tr.directive(text)
			if err != nil {
				return nil, err
			}
			if d != nil {
				return &Inst{Seq: tr.seq, Line: tr.line, Group: tr.group, Warp: tr.warp, Dir: d}, nil
			}
			continue
		}
		tr.started = true
		return tr.instruction(text)
	}
}

func fields(s string) (ws []string, offs []int) {
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		ws, offs = append(ws, s[i:j]), append(offs, i)
		i = j
	}
	return ws, offs
}

// directive reads one directive line: .group, .warp and .window change the
// reader's state; .region and .init are returned.
func (tr *TextReader) directive(text string) (*Directive, error) {
	ws, offs := fields(text)
	col := func(i int) int { return offs[i] + 1 }
	switch ws[0] {
	case ".group", ".warp":
		return nil, tr.counter(ws, col)
	case ".window":
		return nil, tr.window(ws, col)
	case ".addresses-only":
		if tr.started {
			return nil, tr.errf(col(0), ".addresses-only must come before the first instruction")
		}
		if len(ws) != 1 {
			return nil, tr.errf(col(1), ".addresses-only takes nothing after it")
		}
		tr.hdr.AddressOnly = true
		return nil, nil
	case ".region", ".init":
	default:
		return nil, tr.errf(col(0), "unknown directive %s (.region, .init, .window, .addresses-only, .group, .warp)", ws[0])
	}
	if len(ws) < 2 {
		return nil, tr.errf(col(0), "%s needs a space", ws[0])
	}
	sp, ok := ParseSpace(ws[1])
	if !ok {
		return nil, tr.errf(col(1), "unknown space %q (global, shared, bti(N))", ws[1])
	}
	if ws[0] == ".region" {
		if len(ws) != 4 {
			return nil, tr.errf(col(0), ".region takes SPACE BASE SIZE")
		}
		base, size, err := tr.extent(ws, col, "region")
		if err != nil {
			return nil, err
		}
		return &Directive{Region: &Region{Space: sp, Base: base, Size: size}}, nil
	}
	return tr.initDirective(ws, col, sp)
}

// counter reads .group N or .warp N: the group or warp of the
// instructions that follow.
func (tr *TextReader) counter(ws []string, col func(int) int) error {
	if len(ws) != 2 {
		return tr.errf(col(0), "%s takes one number", ws[0])
	}
	n, err := strconv.ParseInt(ws[1], 0, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return tr.errf(col(1), "%s needs a number from 0 to 2^40, got %q", ws[0], ws[1])
	}
	if ws[0] == ".group" {
		tr.group = n
	} else {
		tr.warp = n
	}
	return nil
}

// window reads .window shared|local BASE SIZE into the header.
func (tr *TextReader) window(ws []string, col func(int) int) error {
	if tr.started {
		return tr.errf(col(0), ".window must come before the first instruction")
	}
	if len(ws) != 4 || (ws[1] != "shared" && ws[1] != "local") {
		return tr.errf(col(0), ".window takes shared|local BASE SIZE")
	}
	base, size, err := tr.extent(ws, col, "window")
	if err != nil {
		return err
	}
	tr.hdr.Windows = append(tr.hdr.Windows, Window{Kind: ws[1], Base: base, Size: size})
	return nil
}

// extent reads a region's or window's BASE SIZE from ws[2] and ws[3]: a
// nonempty range that ends below 2^64.
func (tr *TextReader) extent(ws []string, col func(int) int, what string) (base, size uint64, err error) {
	base, err = strconv.ParseUint(ws[2], 0, 64)
	if err != nil {
		return 0, 0, tr.errf(col(2), "bad %s base %q", what, ws[2])
	}
	size, err = strconv.ParseUint(ws[3], 0, 64)
	if err != nil || size == 0 || base+size-1 < base {
		return 0, 0, tr.errf(col(3), "bad %s size %q (must be >0 and end below 2^64)", what, ws[3])
	}
	return base, size, nil
}

// initDirective reads .init SPACE ADDR TYPE v0 v1 …: host writes, little-endian,
// into the current group's memory for a per-group space.
func (tr *TextReader) initDirective(ws []string, col func(int) int, sp Space) (*Directive, error) {
	if len(ws) < 5 {
		return nil, tr.errf(col(0), ".init takes SPACE ADDR TYPE v0 v1 …")
	}
	addr, err := strconv.ParseUint(ws[2], 0, 64)
	if err != nil {
		return nil, tr.errf(col(2), "bad address %q", ws[2])
	}
	typ, ok := ParseType(ws[3])
	if !ok {
		return nil, tr.errf(col(3), "unknown .init type %q (u8 u16 u32 u64 s32 s64 f16 bf16 f32 f64 b128)", ws[3])
	}
	size := typ.Size()
	n := uint64(len(ws) - 4)
	if addr+n*uint64(size)-1 < addr {
		return nil, tr.errf(col(2), ".init runs past the end of the address space")
	}
	data := make([]byte, 0, int(n)*size)
	for i := 4; i < len(ws); i++ {
		lo, hi, err := parseImm(ws[i], size*8, typ)
		if err != nil {
			return nil, tr.errf(col(i), "%v", err)
		}
		var buf [16]byte
		binary.LittleEndian.PutUint64(buf[:8], lo)
		binary.LittleEndian.PutUint64(buf[8:], hi)
		data = append(data, buf[:size]...)
	}
	g := int64(-1)
	if sp.PerGroup() {
		g = tr.group
	}
	return &Directive{Init: &Init{Space: sp, Group: g, Addr: addr, Type: typ, Data: data}}, nil
}

// splitBindings splits `a=1 b=[1, 2] c=0:4` at blanks outside brackets.
func splitBindings(s string, base int) (ws []string, offs []int) {
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		j, depth := i, 0
		for j < len(s) && (depth > 0 || s[j] != ' ' && s[j] != '\t') {
			if s[j] == '[' {
				depth++
			} else if s[j] == ']' {
				depth--
			}
			j++
		}
		ws, offs = append(ws, s[i:j]), append(offs, base+i)
		i = j
	}
	return ws, offs
}

func (tr *TextReader) instruction(text string) (*Inst, error) {
	instText, bindText, hasBind := strings.Cut(text, "|")
	lead := len(instText) - len(strings.TrimLeft(instText, " \t"))
	key := strings.TrimSpace(instText)
	st := tr.statics[key]
	if st == nil {
		s, err := parseStatic(instText[lead:])
		if err != nil {
			if ce, ok := err.(*colError); ok {
				return nil, tr.errf(lead+ce.off+1, "%s", ce.msg)
			}
			return nil, tr.errf(lead+1, "%v", err)
		}
		st = s
		tr.statics[key] = st
	}
	wk := warpKey{tr.group, tr.warp}
	ctx := tr.ctx[wk]
	if ctx == nil {
		ctx = map[string]binding{}
		tr.ctx[wk] = ctx
	}
	in := &Inst{Seq: tr.seq, Line: tr.line, Static: st, Group: tr.group, Warp: tr.warp, Mask: st.ExecMask()}
	if hasBind {
		base := len(instText) + 1
		ws, offs := splitBindings(bindText, base)
		for i, w := range ws {
			name, val, ok := strings.Cut(w, "=")
			if !ok || name == "" || val == "" {
				return nil, tr.errf(offs[i]+1, "a binding is NAME=VALUE, got %q", w)
			}
			if name == "mask" {
				m, err := strconv.ParseUint(val, 0, 32)
				if err != nil {
					return nil, tr.errf(offs[i]+len(name)+2, "mask= takes a 32-bit lane mask, got %q", val)
				}
				in.Mask = uint32(m) & st.ExecMask()
				continue
			}
			ctx[name] = binding{text: val, line: tr.line, col: offs[i] + len(name) + 2}
		}
	}
	in.Vals = make([]Vector, len(st.Inputs))
	for i := range st.Inputs {
		inp := &st.Inputs[i]
		if !tr.hdr.Valued(inp) {
			// An address-only trace: its data inputs carry no value.
			if b, ok := ctx[inp.Name]; ok && b.line == tr.line {
				return nil, tr.errf(b.col, "%s is data, and this trace carries addresses only (.addresses-only): bind only addresses and predicates", inp.Name)
			}
			continue
		}
		b, ok := ctx[inp.Name]
		if !ok {
			return nil, tr.errf(nameColumn(instText, inp.Name), "%s reads %s, which is bound nowhere in group %d warp %d", st.Text, inp.Name, tr.group, tr.warp)
		}
		v, err := parseVector(b.text, *inp, inp.Count(st.ExecSize))
		if err != nil {
			if b.line == tr.line {
				return nil, tr.errf(b.col, "%s=%s: %v", inp.Name, b.text, err)
			}
			return nil, tr.errf(0, "%s=%s (bound on line %d): %v", inp.Name, b.text, b.line, err)
		}
		in.Vals[i] = v
	}
	tr.seq++
	return in, nil
}

// nameColumn is the 1-based column of the first whole-word use of name in
// the instruction text, or 0 if it cannot be found.
func nameColumn(text, name string) int {
	for from := 0; ; {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return 0
		}
		i += from
		end := i + len(name)
		if (i == 0 || !isIdentByte(text[i-1], false)) && (end == len(text) || !isIdentByte(text[end], false)) {
			return i + 1
		}
		from = i + 1
	}
}

// parseVector reads a bound value: v, base:stride or [v0,v1,…].
func parseVector(s string, inp Input, lanes int) (Vector, error) {
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") {
			return Vector{}, fmt.Errorf("unclosed list")
		}
		parts := strings.Split(s[1:len(s)-1], ",")
		if len(parts) != lanes {
			if inp.Elems > 1 {
				return Vector{}, fmt.Errorf("the list has %d values; %s holds %d (%d per lane)", len(parts), inp.Name, lanes, inp.Elems)
			}
			return Vector{}, fmt.Errorf("the list has %d values; the execution size is %d lanes", len(parts), lanes)
		}
		v := Vector{Kind: VecList, List: make([]uint64, lanes)}
		if inp.Bits > 64 {
			v.ListHi = make([]uint64, lanes)
		}
		for i, p := range parts {
			lo, hi, err := parseImm(strings.TrimSpace(p), inp.Bits, inp.Type)
			if err != nil {
				return Vector{}, fmt.Errorf("lane %d: %v", i, err)
			}
			v.List[i] = lo
			if v.ListHi != nil {
				v.ListHi[i] = hi
			}
		}
		return v, nil
	}
	if b, st, ok := strings.Cut(s, ":"); ok && !looksNumeric(s) {
		if inp.Bits > 64 {
			return Vector{}, fmt.Errorf("base:stride is not supported for %d-bit values", inp.Bits)
		}
		lo, _, err := parseImm(b, inp.Bits, TypeU64)
		if err != nil {
			return Vector{}, err
		}
		stride, err := strconv.ParseInt(st, 0, 64)
		if err != nil {
			return Vector{}, fmt.Errorf("stride %q is not an integer", st)
		}
		return Vector{Kind: VecStride, Base: lo, Stride: uint64(stride)}, nil
	}
	lo, hi, err := parseImm(s, inp.Bits, inp.Type)
	if err != nil {
		return Vector{}, err
	}
	return Vector{Kind: VecBroadcast, Base: lo, BaseHi: hi}, nil
}
