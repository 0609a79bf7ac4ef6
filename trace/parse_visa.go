package trace

import (
	"strconv"
	"strings"
)

// vISA DWORD_ATOMIC, per the Intel Graphics Compiler vISA specification
// ("vISA spec"; below, the seed), DWORD_ATOMIC: Text:
//
//	[(<P>)] DWORD_ATOMIC.<Op>[.16] (<Exec_size>) <Surface> <Element_offset> <Src0> <Src1> <Dst>
//
// Exec_size is written (16) or with its execution mask, (M1, 16) or
// (M5_NM, 8). Surface is T0 (shared local memory) or T255 (stateless). The
// operands are raw operands: variables, V0 being the null variable.

// visaReads says which sources a DWORD_ATOMIC operation reads (vISA spec,
// DWORD_ATOMIC: Src0, Src1): Src0 all but INC and DEC ("it must be V0")
// and PREDEC, whose formula new = old - 1 reads no source either; Src1
// only CMPXCHG and FCMPWR ("For all other operations it must be V0"), the
// two compare-and-swaps.
func visaReads(op Op) (src0, src1 bool) {
	return op != OpInc && op != OpDec && op != OpPreDec, op == OpCAS
}

// visaNull is the null variable: "Dst is permitted to be V0, in which case
// no value will be returned".
const visaNull = "V0"

// parseVISA parses a vISA DWORD_ATOMIC (vISA spec, DWORD_ATOMIC).
// The text starts at the opcode or at a (P) predicate.
func parseVISA(lx *lexer, opcode string, opStart int) (*Static, error) {
	b := newBuilder(DialectVISA)
	st := b.st
	st.AddrBits = 32 // Element_offset "Must have type UD": offsets wrap at 32 bits

	pred, err := parseIntelPred(lx)
	if err != nil {
		return nil, err
	}

	form, err := parseVISAOpcode(lx, opStart)
	if err != nil {
		return nil, err
	}
	st.Op, st.Type = form.Op, form.Type

	// Execution size.
	lx.skipSpace()
	n, err := parseVISAExecSize(lx)
	if err != nil {
		return nil, err
	}
	st.ExecSize = n

	ops, err := visaOperands(lx)
	if err != nil {
		return nil, err
	}
	if err := visaSurfaceAndOffset(b, ops); err != nil {
		return nil, err
	}
	if err := visaSources(b, form.Name, ops[2], ops[3]); err != nil {
		return nil, err
	}
	dst := ops[4]
	st.Dst = dst.text
	st.HasDst = dst.text != visaNull

	if pred != nil {
		st.Pred = b.input(pred.name, RolePred, 32, TypeU32)
		st.PredNeg = pred.neg
	}
	return st, nil
}

// parseVISAOpcode reads the opcode, DWORD_ATOMIC.<Op>[.16] (vISA spec,
// DWORD_ATOMIC: Text), ending at a blank or at the '(' of the execution
// size. It returns the operation's row of the vISA table (visaForms), whose
// Name is the operation in upper case.
func parseVISAOpcode(lx *lexer, opStart int) (Form, error) {
	lx.pos = opStart
	for lx.pos < len(lx.src) && lx.src[lx.pos] != ' ' && lx.src[lx.pos] != '\t' && lx.src[lx.pos] != '(' {
		lx.pos++
	}
	word := lx.src[opStart:lx.pos]
	parts := strings.Split(word, ".")
	if parts[0] != "DWORD_ATOMIC" {
		return Form{}, errAt(opStart, "unknown opcode %q (vISA writes DWORD_ATOMIC.<Op>)", word)
	}
	if len(parts) < 2 {
		return Form{}, errAt(opStart, "DWORD_ATOMIC needs an operation (.ADD, .CMPXCHG, …)")
	}
	off := opStart + len(parts[0]) + 1
	opName := strings.ToUpper(parts[1])
	if len(formsNamed(DialectVISA, opName)) == 0 {
		return Form{}, unknownOp(off, DialectVISA, "vISA DWORD_ATOMIC", ".", parts[1])
	}
	off += len(parts[1]) + 1
	half := false
	for _, q := range parts[2:] {
		switch {
		case q == "16" && !half:
			half = true
		case q == "16":
			return Form{}, errAt(off, "qualifier .16 given twice")
		case q == "":
			return Form{}, errAt(off, "empty qualifier")
		default:
			return Form{}, errAt(off, "unknown DWORD_ATOMIC qualifier .%s (only .16)", q)
		}
		off += len(q) + 1
	}
	f, ok := lookupForm(DialectVISA, func(f *Form) bool { return f.Name == opName && f.Half == half })
	if !ok {
		return Form{}, errAt(opStart, "DWORD_ATOMIC.%s does not take .16", opName)
	}
	return f, nil
}

// visaOperands reads the five raw operands after the execution size,
// Surface Element_offset Src0 Src1 Dst, separated by blanks (vISA spec,
// DWORD_ATOMIC: Text).
func visaOperands(lx *lexer) ([]operand, error) {
	lx.skipSpace()
	ws, offs := fields(lx.src[lx.pos:])
	if len(ws) != 5 {
		at := lx.pos
		if len(ws) > 5 {
			at += offs[5]
		}
		return nil, errAt(at, "DWORD_ATOMIC takes 5 operands (Surface Element_offset Src0 Src1 Dst), got %d", len(ws))
	}
	ops := make([]operand, 5)
	for i := range ws {
		ops[i] = operand{text: ws[i], off: lx.pos + offs[i]}
	}
	return ops, nil
}

// visaSurfaceAndOffset reads the Surface (T0 or T255, vISA spec,
// DWORD_ATOMIC: Surface) into the space, checks that Element_offset, Src0,
// Src1 and Dst are variables (raw operands), and binds Element_offset as
// the address.
func visaSurfaceAndOffset(b *builder, ops []operand) error {
	st := b.st
	surf, eoff, src0, src1, dst := ops[0], ops[1], ops[2], ops[3], ops[4]

	switch surf.text {
	case "T0":
		st.Space = Shared
	case "T255":
		st.Space = Global
	default:
		return errAt(surf.off, "surface %s: DWORD_ATOMIC accesses T0 (shared local memory) or T255 (stateless); the seed's valid values are 0: T0, 5: T255", surf.text)
	}

	for _, o := range []operand{eoff, src0, src1, dst} {
		if err := checkVISAVar(o); err != nil {
			return err
		}
	}
	if eoff.text == visaNull {
		return errAt(eoff.off, "Element_offset cannot be the null variable V0")
	}
	st.Addr = b.input(eoff.text, RoleAddr, 32, TypeU32)
	return nil
}

// visaSources binds Src0 and Src1 as the operation reads them (visaReads;
// vISA spec, DWORD_ATOMIC: Src0, Src1): a source the operation does not
// read must be V0, one it reads cannot be.
func visaSources(b *builder, opName string, src0, src1 operand) error {
	st := b.st
	reads0, reads1 := visaReads(st.Op)
	// Sources keep their 32-bit unpacked form with .16 ("the source operand
	// shall be in an unpacked form, and only the lower 16bit part of each
	// dword is used"): bound as 32 bits, encoded in the operation's type.
	switch {
	case !reads0 && src0.text != visaNull:
		return errAt(src0.off, "DWORD_ATOMIC.%s: Src0 must be V0 (the null variable), got %s", opName, src0.text)
	case reads0 && src0.text == visaNull:
		return errAt(src0.off, "DWORD_ATOMIC.%s reads Src0; it cannot be V0", opName)
	case reads0:
		st.B = []Src{{In: b.input(src0.text, RoleSrcB, 32, st.Type)}}
	}
	switch {
	case !reads1 && src1.text != visaNull:
		return errAt(src1.off, "DWORD_ATOMIC.%s: Src1 must be V0 (only CMPXCHG and FCMPWR read Src1), got %s", opName, src1.text)
	case reads1 && src1.text == visaNull:
		return errAt(src1.off, "DWORD_ATOMIC.%s reads Src1; it cannot be V0", opName)
	case reads1:
		st.C = []Src{{In: b.input(src1.text, RoleSrcC, 32, st.Type)}}
	}
	return nil
}

// parseIntelPred reads the optional predicate that opens a vISA or LSC
// instruction, (P1) or (!P1) (vISA spec, DWORD_ATOMIC and LSC_UNTYPED:
// Text, "[(P)]"), and the space after it: nil when the text does not
// start with "(". The one parser of Intel predicates.
func parseIntelPred(lx *lexer) (*predRef, error) {
	if lx.peek() != '(' {
		return nil, nil
	}
	start := lx.pos
	lx.pos++ // (
	lx.skipSpace()
	neg := false
	if lx.peek() == '!' {
		neg = true
		lx.pos++
		lx.skipSpace()
	}
	nameAt := lx.pos
	name := lx.ident()
	if name == "" {
		return nil, errAt(nameAt, "a predicate is written (P1) or (!P1)")
	}
	lx.skipSpace()
	if lx.peek() != ')' {
		return nil, errAt(lx.pos, "expected ) after the predicate %s", name)
	}
	lx.pos++
	lx.skipSpace()
	return &predRef{name: name, neg: neg, off: start}, nil
}

// parseVISAExecSize reads (<size>) or (<emask>, <size>) at lx.pos. The
// execution mask M1…M8 or M1_NM…M8_NM (Exec_size bits 7..4) says which
// channels of the thread the instruction covers; the trace records the
// lanes that ran (mask= and the predicate), so it does not change a replay.
func parseVISAExecSize(lx *lexer) (int, error) {
	if lx.peek() != '(' {
		return 0, errAt(lx.pos, "expected the execution size, as (16) or (M1, 16)")
	}
	open := lx.pos
	end := strings.IndexByte(lx.src[open:], ')')
	if end < 0 {
		return 0, errAt(open, "unclosed ( in the execution size")
	}
	inner := lx.src[open+1 : open+end]
	innerOff := open + 1
	lx.pos = open + end + 1
	sizeText, sizeOff := inner, innerOff
	if mask, size, ok := strings.Cut(inner, ","); ok {
		lead := len(mask) - len(strings.TrimLeft(mask, " \t"))
		m := strings.TrimSpace(mask)
		if !validVISAEMask(m) {
			return 0, errAt(innerOff+lead, "unknown execution mask %q (M1…M8, M1_NM…M8_NM)", m)
		}
		sizeText, sizeOff = size, innerOff+len(mask)+1
	}
	lead := len(sizeText) - len(strings.TrimLeft(sizeText, " \t"))
	sizeText, sizeOff = strings.TrimSpace(sizeText), sizeOff+lead
	n, err := strconv.Atoi(sizeText)
	if err != nil {
		return 0, errAt(sizeOff, "bad execution size %q", sizeText)
	}
	switch n {
	case 1, 2, 4, 8, 16:
		return n, nil
	}
	return 0, errAt(sizeOff, "execution size %d: DWORD_ATOMIC takes 1, 2, 4, 8 or 16 elements", n)
}

func validVISAEMask(m string) bool {
	m = strings.TrimSuffix(m, "_NM")
	return len(m) == 2 && m[0] == 'M' && m[1] >= '1' && m[1] <= '8'
}

// checkVISAVar requires a raw operand: a variable name, not an immediate.
func checkVISAVar(o operand) error {
	t := o.text
	if !isIdentByte(t[0], true) {
		return errAt(o.off, "%q: DWORD_ATOMIC operands are variables (raw operands), not immediates", t)
	}
	for i := 1; i < len(t); i++ {
		if !isIdentByte(t[i], false) {
			return errAt(o.off+i, "unexpected %q in operand %q", t[i], t)
		}
	}
	return nil
}
