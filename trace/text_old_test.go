package trace

// The text reader as it was before it parsed chunks of lines in parallel,
// kept as the reference FuzzTextReader compares the reader with: one line
// at a time, every value through parseVector.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
)

type oldBinding struct {
	text string
	line int
	col  int
}

// oldTextReader reads a `.tasm` trace (docs/TASM.md) as a Source.
// Directives before the first instruction make the Header. A .init or
// .region after it is a directive record (Inst.Dir) at its place in trace
// order; .window must come before the first instruction.
type oldTextReader struct {
	name    string
	sc      *bufio.Scanner
	line    int
	hdr     Header
	pending string // first instruction line, read while collecting the header
	pendLn  int
	seq     uint64
	group   int64
	warp    int64
	ctx     map[warpKey]map[string]oldBinding
	statics map[string]*Static
	started bool
}

// newOldTextReader reads the header (every directive before the first
// instruction) and returns a reader positioned at the first instruction.
// name is used in error messages.
func newOldTextReader(r io.Reader, name string) (*oldTextReader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	tr := &oldTextReader{name: name, sc: sc, ctx: map[warpKey]map[string]oldBinding{}, statics: map[string]*Static{}}
	for {
		text, ok, err := tr.nextLine()
		if err != nil {
			return nil, err
		}
		if !ok {
			return tr, nil
		}
		if ws, _ := fields(text); strings.HasPrefix(text, ".") && ws[0] != ".cluster" {
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
func (tr *oldTextReader) Header() *Header { return &tr.hdr }

// nextLine returns the next non-blank line with its comment removed.
func (tr *oldTextReader) nextLine() (string, bool, error) {
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

func (tr *oldTextReader) errf(col int, format string, args ...any) error {
	return &SyntaxError{File: tr.name, Line: tr.line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// Next returns the next instruction, or io.EOF.
func (tr *oldTextReader) Next() (*Inst, error) {
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

// directive reads one directive line: .group, .warp and .window change the
// reader's state; .region and .init are returned.
func (tr *oldTextReader) directive(text string) (*Directive, error) {
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
	case ".cluster":
		if len(ws) != 2 {
			return nil, tr.errf(col(0), "%s takes one number", ws[0])
		}
		n, err := strconv.ParseInt(ws[1], 0, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return nil, tr.errf(col(1), "%s needs a number from 0 to 2^40, got %q", ws[0], ws[1])
		}
		tr.started = true
		return &Directive{Cluster: &Cluster{Group: tr.group, ID: n}}, nil
	case ".region", ".init":
	default:
		return nil, tr.errf(col(0), "unknown directive %s (.region, .init, .window, .addresses-only, .group, .warp, .cluster)", ws[0])
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
func (tr *oldTextReader) counter(ws []string, col func(int) int) error {
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
func (tr *oldTextReader) window(ws []string, col func(int) int) error {
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
func (tr *oldTextReader) extent(ws []string, col func(int) int, what string) (base, size uint64, err error) {
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
func (tr *oldTextReader) initDirective(ws []string, col func(int) int, sp Space) (*Directive, error) {
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
func oldSplitBindings(s string, base int) (ws []string, offs []int) {
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

func (tr *oldTextReader) instruction(text string) (*Inst, error) {
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
		ctx = map[string]oldBinding{}
		tr.ctx[wk] = ctx
	}
	in := &Inst{Seq: tr.seq, Line: tr.line, Static: st, Group: tr.group, Warp: tr.warp, Mask: st.ExecMask()}
	if hasBind {
		base := len(instText) + 1
		ws, offs := oldSplitBindings(bindText, base)
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
			ctx[name] = oldBinding{text: val, line: tr.line, col: offs[i] + len(name) + 2}
		}
	}
	in.Vals = make([]Vector, len(st.Inputs))
	for i, inp := range st.Inputs {
		if !tr.hdr.Valued(&inp) {
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
		v, err := parseVector(b.text, inp, inp.Count(st.ExecSize))
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
