package trace

import (
	"fmt"
	"strings"
)

// SyntaxError is a problem in `.tasm` text, with its place.
type SyntaxError struct {
	File string
	Line int // 1-based; 0 when parsing a lone instruction text
	Col  int // 1-based byte column; 0 when unknown
	Msg  string
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, "%d:", e.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(e.Msg)
	return b.String()
}

// colError is an error at a byte offset of the text being parsed; the text
// reader turns it into a SyntaxError with line and column.
type colError struct {
	off int
	msg string
}

func (e *colError) Error() string { return e.msg }

func errAt(off int, format string, args ...any) error {
	return &colError{off: off, msg: fmt.Sprintf(format, args...)}
}

// ParseStatic parses one instruction text, the part of a `.tasm` line
// before `|`, into a Static. The dialect is recognised from the opcode:
// atom… is PTX, ATOM… SASS, DWORD_ATOMIC… vISA, lsc_… Intel LSC.
func ParseStatic(text string) (*Static, error) {
	s, err := parseStatic(text)
	if err != nil {
		if ce, ok := err.(*colError); ok {
			return nil, &SyntaxError{Col: ce.off + 1, Msg: ce.msg}
		}
		return nil, err
	}
	return s, nil
}

// parseStatic returns *colError with offsets into text.
func parseStatic(text string) (*Static, error) {
	t := strings.TrimRight(text, " \t")
	t = strings.TrimSuffix(t, ";")
	t = strings.TrimRight(t, " \t")
	lx := &lexer{src: t}
	lx.skipSpace()
	// Intel predicates come first in parentheses: (P1) or (!P1).
	if lx.peek() == '(' {
		end := strings.IndexByte(t[lx.pos:], ')')
		if end < 0 {
			return nil, errAt(lx.pos, "unclosed ( in a predicate")
		}
		save := lx.pos
		lx.pos += end + 1
		lx.skipSpace()
		opStart := lx.pos
		opcode := lx.word()
		lx.pos = save
		switch {
		case strings.HasPrefix(opcode, "DWORD_ATOMIC"):
			return finishStatic(parseVISA(lx, opcode, opStart))(text)
		case strings.HasPrefix(opcode, "lsc_"):
			return finishStatic(parseLSC(lx, opcode, opStart))(text)
		}
		return nil, errAt(save, "a (P) predicate must precede a DWORD_ATOMIC or lsc_ instruction")
	}
	var pred *predRef
	if lx.peek() == '@' {
		start := lx.pos
		lx.pos++
		neg := false
		if lx.peek() == '!' {
			neg = true
			lx.pos++
		}
		name := lx.ident()
		if name == "" {
			return nil, errAt(start, "a predicate needs a name after @")
		}
		pred = &predRef{name: name, neg: neg, off: start}
		lx.skipSpace()
	}
	opStart := lx.pos
	opcode := lx.word()
	if opcode == "" {
		return nil, errAt(opStart, "missing opcode")
	}
	var st *Static
	var err error
	switch {
	case opcode == "atom" || strings.HasPrefix(opcode, "atom."):
		st, err = parsePTX(lx, opcode, opStart, pred)
	case isSASSOpcode(opcode):
		st, err = parseSASS(lx, opcode, opStart, pred)
	case pred != nil && (strings.HasPrefix(opcode, "DWORD_ATOMIC") || strings.HasPrefix(opcode, "lsc_")):
		err = errAt(pred.off, "vISA and LSC predicates are written (P1), not @P1")
	case strings.HasPrefix(opcode, "DWORD_ATOMIC"):
		lx.pos = opStart
		st, err = parseVISA(lx, opcode, opStart)
	case strings.HasPrefix(opcode, "lsc_"):
		lx.pos = opStart
		st, err = parseLSC(lx, opcode, opStart)
	default:
		err = errAt(opStart, "unknown opcode %q (atom… is PTX, ATOM…, ATOMG…, ATOMS… and RED… SASS, DWORD_ATOMIC… vISA, lsc_… LSC)", opcode)
	}
	if err != nil {
		return nil, err
	}
	st.Text = strings.TrimSpace(text)
	return st, nil
}

// isSASSOpcode reports whether an opcode is one of the SASS atomics
// (sassBases), with or without qualifiers.
func isSASSOpcode(opcode string) bool {
	base, _, _ := strings.Cut(opcode, ".")
	return strIn(base, sassBases)
}

// finishStatic sets the text of a parsed Static: as written, a trailing
// ';' kept when there is one.
func finishStatic(st *Static, err error) func(string) (*Static, error) {
	return func(text string) (*Static, error) {
		if err != nil {
			return nil, err
		}
		st.Text = strings.TrimSpace(text)
		return st, nil
	}
}

type predRef struct {
	name string
	neg  bool
	off  int
}

// lexer walks an instruction text; pos is a byte offset.
type lexer struct {
	src string
	pos int
}

func (l *lexer) peek() byte {
	if l.pos < len(l.src) {
		return l.src[l.pos]
	}
	return 0
}

func (l *lexer) skipSpace() {
	for l.pos < len(l.src) && (l.src[l.pos] == ' ' || l.src[l.pos] == '\t') {
		l.pos++
	}
}

// word reads up to the next blank.
func (l *lexer) word() string {
	start := l.pos
	for l.pos < len(l.src) && l.src[l.pos] != ' ' && l.src[l.pos] != '\t' {
		l.pos++
	}
	return l.src[start:l.pos]
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || c == '$' || c == '%' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
		!first && c >= '0' && c <= '9'
}

// ident reads a register or symbol name.
func (l *lexer) ident() string {
	start := l.pos
	for l.pos < len(l.src) && isIdentByte(l.src[l.pos], l.pos == start) {
		l.pos++
	}
	return l.src[start:l.pos]
}

// operand is one comma-separated operand of an instruction, with its offset.
type operand struct {
	text string
	off  int
}

// splitOperands splits the rest of the text at top-level commas (not inside
// braces or brackets).
func splitOperands(src string, base int) ([]operand, error) {
	var ops []operand
	depth := 0
	start := 0
	for i := 0; i <= len(src); i++ {
		if i < len(src) {
			switch src[i] {
			case '{', '[':
				depth++
				continue
			case '}', ']':
				depth--
				if depth < 0 {
					return nil, errAt(base+i, "unbalanced %q", src[i])
				}
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if depth != 0 {
			return nil, errAt(base+len(src), "unclosed brace or bracket")
		}
		raw := src[start:i]
		lead := len(raw) - len(strings.TrimLeft(raw, " \t"))
		ops = append(ops, operand{text: strings.TrimSpace(raw), off: base + start + lead})
		start = i + 1
	}
	if len(ops) == 1 && ops[0].text == "" {
		return nil, nil
	}
	for _, o := range ops {
		if o.text == "" {
			return nil, errAt(o.off, "empty operand")
		}
	}
	return ops, nil
}

// builder collects a Static's inputs, deduplicating names.
type builder struct {
	st *Static
}

func newBuilder(d Dialect) *builder {
	return &builder{st: &Static{Dialect: d, Addr: -1, Pred: -1, Elems: 1, AddrScale: 1, AddrBits: 64}}
}

// input registers name as an input of the given role and width, returning
// its index. A name read twice (as in `{%f0,…}` sources) is one input.
func (b *builder) input(name string, role Role, bits int, typ Type) int {
	for i, in := range b.st.Inputs {
		if in.Name == name {
			return i
		}
	}
	b.st.Inputs = append(b.st.Inputs, Input{Name: name, Role: role, Bits: bits, Type: typ, Elems: 1})
	return len(b.st.Inputs) - 1
}

// src reads a source operand: a register name or an immediate literal.
func (b *builder) src(o operand, bits int, typ Type, role Role) (Src, error) {
	t := o.text
	if t == "" {
		return Src{}, errAt(o.off, "missing operand")
	}
	if isIdentByte(t[0], true) && !looksNumeric(t) {
		for i := 1; i < len(t); i++ {
			if !isIdentByte(t[i], false) {
				return Src{}, errAt(o.off+i, "unexpected %q in operand %q", t[i], t)
			}
		}
		return Src{In: b.input(t, role, bits, typ)}, nil
	}
	lo, hi, err := parseImm(t, bits, typ)
	if err != nil {
		return Src{}, errAt(o.off, "%v", err)
	}
	return Src{In: -1, Imm: lo, Hi: hi}, nil
}

func looksNumeric(s string) bool {
	ls := strings.ToLower(s)
	switch ls {
	case "inf", "nan":
		return true
	}
	if len(ls) > 2 && ls[0] == '0' && (ls[1] == 'f' || ls[1] == 'd') && isHex(ls[2:]) {
		return true
	}
	return false
}

// vectorList reads `{a, b, c}` into its element operands.
func vectorList(o operand) ([]operand, error) {
	t := o.text
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, errAt(o.off, "expected a brace-enclosed vector, got %q", t)
	}
	els, err := splitOperands(t[1:len(t)-1], o.off+1)
	if err != nil {
		return nil, err
	}
	if len(els) == 0 {
		return nil, errAt(o.off, "empty vector")
	}
	return els, nil
}
