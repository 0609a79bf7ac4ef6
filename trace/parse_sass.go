package trace

import (
	"strconv"
	"strings"
)

// NVIDIA SASS ATOM, per NVIDIA's CUDA Binary Utilities, instruction set
// reference, ATOM (SPA 5.0; below, the seed). Six forms:
//
//	{@{!}Pg} ATOM{.E}.op{.sz}  Rd, [Ra + ImmS20], Rb
//	{@{!}Pg} ATOM{.E}.CAS{.sz} Rd, [Ra + ImmS20], Rb, Rc
//	{@{!}Pg} ATOM{.E}.op{.sz}  Rd, [ImmU20], Rb
//	{@{!}Pg} ATOM{.E}.CAS{.sz} Rd, [ImmU20], Rb, Rc
//	{@{!}Pg} ATOM{.E}.op{.sz}  Ps, Rd, [Ra], Rb        sparse predicate: no immediate
//	{@{!}Pg} ATOM{.E}.CAS{.sz} Ps, Rd, [Ra], Rb, Rc
//
// each optionally followed by {&req_6} {&rdN} {&wrN} {?sched}: dependence
// barriers and scheduling, which change no result and are skipped.
//
// Registers are R0..R254 and RZ (reads 0; as Rd, nothing is returned). A
// 64-bit value (.E address, 64-bit data) lives in an even-odd register pair
// ("even-odd registers for 64-bit ops") and is bound on its first register
// with the whole value (TASM.md). The address is
//
//	non-.E: (Ra + sext(ImmS20)) mod 2^32, "then zero-extended to 40-bits"
//	.E:     ((Ra,Ra+1) + sext(imm)) mod 2^64
//
// so AddrBits is 32 or 64. SASS ATOM addresses global memory through the
// generic address space; a lane whose address falls in a .window is the
// engine's business (invalid_space).
//
// The same .op and .sz qualifiers, and the same operands, are read for the
// other atomic opcodes of the CUDA Binary Utilities' instruction set table,
// as NVBit tracers (Accel-Sim's .traceg, mem_trace) and nvdisasm print them:
//
//	ATOMG{.E}.op{.sz}{.STRONG.scope}  atomic operation on global memory
//	ATOMS.op{.sz}                     atomic operation on shared memory
//	                                  (a 32-bit shared-window offset; no .E)
//	RED{.E}.op{.sz}{.STRONG.scope}    reduction on generic memory: ATOM
//	                                  without Rd, written [Ra + ImmS20], Rb
//
// and ATOM itself takes the trailing .STRONG.scope too. The scope is one of
// .CTA, .GPU and .SYS and is kept in Static.Scope ("cta", "gpu", "sys"); it
// changes no result (the races table reads it).

// sassOps are the seed's .op values. SAFEADD is listed but not defined
// ("Increment put pointer in a circular queue"): it is rejected.
var sassOps = map[string]Op{
	"ADD": OpAdd, "MIN": OpMin, "MAX": OpMax, "INC": OpInc, "DEC": OpDec,
	"AND": OpAnd, "OR": OpOr, "XOR": OpXor, "EXCH": OpExch, "CAS": OpCAS,
	"SAFEADD": OpInvalid,
}

// sassSize is one .sz: its type and whether it flushes subnormals.
type sassSize struct {
	typ Type
	ftz bool
}

// sassAliases: no .sz is .U32 (the default, "U32*"); ".32 is also accepted
// and aliases to .U32 .64 is also accepted and aliases to .U64".
var sassAliases = map[string]string{"": "U32", "32": "U32", "64": "U64"}

const (
	sassRZ      = 255     // RZ, register 255: reads zero, writes nothing
	sassImmS20  = 1 << 19 // ImmS20 is -2^19 .. 2^19-1
	sassImmU20  = 1 << 20 // ImmU20 is 0 .. 2^20-1
	sassNoInput = -1
)

// sassParser checks register use across the operands of one instruction.
type sassParser struct {
	b    *builder
	regs []sassRegUse
}

// sassRegUse is a register (or pair) the instruction reads.
type sassRegUse struct {
	name  string
	first int // register number
	n     int // 1, or 2 for a pair
}

// parseSASS parses a SASS ATOM in one of the seed's six forms. The text
// starts at the opcode, after an optional @{!}Pg guard predicate.
func parseSASS(lx *lexer, opcode string, opStart int, pred *predRef) (*Static, error) {
	sp := &sassParser{b: newBuilder(DialectSASS)}
	st := sp.b.st
	st.ExecSize = 32
	st.Space = Global

	oc, err := parseSASSOpcode(opcode, opStart)
	if err != nil {
		return nil, err
	}
	if oc.base == "ATOMS" {
		st.Space = Shared
	}
	st.Scope = oc.scope
	size, err := parseSASSSize(oc)
	if err != nil {
		return nil, err
	}
	st.Op, st.Type = oc.op, size.typ
	if size.ftz {
		st.Flags |= FlagFTZ
	}
	st.AddrBits = 32
	if oc.ext {
		st.AddrBits = 64
	}
	dbits := st.Type.Size() * 8 // 32 or 64: F16x2 is one 32-bit register

	ops, sparse, err := sassOperands(lx, oc)
	if err != nil {
		return nil, err
	}
	if oc.base == "RED" {
		// RED returns nothing: its operands are ATOM's without Rd.
		st.Dst, st.HasDst = "RZ", false
	} else {
		if err := sp.dest(ops[0], dbits); err != nil {
			return nil, err
		}
		ops = ops[1:]
	}
	// Address.
	if err := sp.addr(ops[0], oc.ext, sparse); err != nil {
		return nil, err
	}
	if err := sp.sources(ops, dbits); err != nil {
		return nil, err
	}
	if err := sp.guard(pred, lx.src, opStart); err != nil {
		return nil, err
	}
	return st, nil
}

// sassOpcode is an ATOM opcode split into its qualifiers.
type sassOpcode struct {
	base      string // ATOM, ATOMG, ATOMS or RED
	scope     string // from .STRONG.scope: "cta", "gpu", "sys"; "" when absent
	ext       bool   // .E: a 64-bit address
	op        Op     // the .op
	opName    string // the .op as written
	opOff     int    // where the .op starts
	szWritten string // the .sz as written, "" when absent
	szOff     int    // the dot before .sz, or the end of the opcode
}

// sassBases are the atomic opcodes read as SASS (see the top of the file).
var sassBases = []string{"ATOM", "ATOMG", "ATOMS", "RED"}

// sassScopes maps the scope of .STRONG.scope to Static.Scope.
var sassScopes = map[string]string{"CTA": "cta", "GPU": "gpu", "SYS": "sys"}

// parseSASSOpcode reads the opcode's qualifiers: ATOM{.E}.op{.sz}, in that
// order (the seed's six forms), for ATOMG, ATOMS and RED too, each with an
// optional trailing .STRONG.scope; the .sz is checked by parseSASSSize.
func parseSASSOpcode(opcode string, opStart int) (sassOpcode, error) {
	var oc sassOpcode
	parts := strings.Split(opcode, ".")
	offs := make([]int, len(parts))
	off := opStart
	for i, q := range parts {
		offs[i] = off
		off += len(q) + 1
		if i > 0 && q == "" {
			return oc, errAt(offs[i], "empty qualifier")
		}
	}
	if !strIn(parts[0], sassBases) {
		return oc, errAt(opStart, "unknown opcode %q", opcode)
	}
	oc.base = parts[0]
	if n := len(parts); n >= 3 && parts[n-2] == "STRONG" {
		sc, ok := sassScopes[parts[n-1]]
		if !ok {
			return oc, errAt(offs[n-1], "unknown scope .STRONG.%s (.STRONG.CTA, .STRONG.GPU or .STRONG.SYS)", parts[n-1])
		}
		oc.scope = sc
		parts, offs = parts[:n-2], offs[:n-2]
	}
	i := 1
	oc.ext = i < len(parts) && parts[i] == "E"
	if oc.ext {
		if oc.base == "ATOMS" {
			return oc, errAt(offs[i], "ATOMS takes no .E: a shared-memory address is a 32-bit offset")
		}
		i++
	}
	if i >= len(parts) {
		return oc, errAt(opStart, "%s needs an operation (.ADD, .MIN, .MAX, .INC, .DEC, .AND, .OR, .XOR, .EXCH or .CAS)", oc.base)
	}
	oc.opName, oc.opOff = parts[i], offs[i]
	op, ok := sassOps[oc.opName]
	if !ok {
		if oc.opName == "E" {
			return oc, errAt(oc.opOff, ".E given twice")
		}
		return oc, unknownOp(oc.opOff, DialectSASS, "SASS "+oc.base, ".", oc.opName)
	}
	if oc.base == "RED" && op == OpCAS {
		return oc, errAt(oc.opOff, "RED has no .CAS: a compare-and-swap returns its prior value (ATOM.CAS)")
	}
	oc.op = op
	oc.szWritten = strings.Join(parts[i+1:], ".")
	oc.szOff = oc.opOff + len(oc.opName) // the dot before .sz, or the end of the opcode
	if oc.szWritten == "STRONG" || strings.HasPrefix(oc.szWritten, "STRONG.") {
		return oc, errAt(offs[i+1], ".STRONG takes one scope and ends the opcode: .STRONG.CTA, .STRONG.GPU or .STRONG.SYS")
	}
	if i+1 < len(parts) {
		oc.szOff = offs[i+1]
	}
	return oc, nil
}

// parseSASSSize reads the .sz, resolving the seed's aliases, and checks
// (.op, .sz) against the SASS table (sassForms: the seed's Atomic
// Operations table); it then refuses the rows the table marks refused
// (SAFEADD, whose semantics the seed does not define).
func parseSASSSize(oc sassOpcode) (sassSize, error) {
	opName, szWritten, szOff := oc.opName, oc.szWritten, oc.szOff
	sz := szWritten
	if a, ok := sassAliases[sz]; ok {
		sz = a
	}
	_, _, known := sassSizeOf(sz)
	switch {
	case sz == "128" || sz == "U128":
		return sassSize{}, errAt(szOff, "ATOM.%s.%s is illegal (CUDA Binary Utilities, ATOM: \".128 aliases to .U128, but is illegal\")", opName, szWritten)
	case !known && strings.Contains("."+szWritten+".", ".E."):
		return sassSize{}, errAt(szOff, "unknown ATOM size .%s (.E comes before the operation: ATOM.E.%s)", szWritten, opName)
	case !known:
		return sassSize{}, errAt(szOff, "unknown ATOM size .%s (.U32, .S32, .U64, .S64, .F32.FTZ.RN, .F16x2.RN, .F64.RN, .32, .64)", szWritten)
	}
	f, ok := lookupForm(DialectSASS, func(f *Form) bool { return f.Name == opName && f.Size == sz })
	if !ok {
		what := "." + szWritten
		if szWritten == "" {
			what = ".U32 (the default .sz)"
		}
		var row []string
		for _, g := range formsNamed(DialectSASS, opName) {
			row = append(row, "."+g.Size)
		}
		msg := "ATOM.%s does not take %s: the seed's Atomic Operations table gives .%s %s"
		if sz == "F16x2.FTZ.RN" {
			msg += " (.F16x2.FTZ.RN is in the .sz list, but no row of the table takes it)"
		}
		return sassSize{}, errAt(szOff, msg, opName, what, opName, strings.Join(row, " "))
	}
	if f.refused != "" {
		return sassSize{}, errAt(oc.opOff, "ATOM.%s: %s", opName, f.refused)
	}
	return sassSize{typ: f.Type, ftz: f.Flags&FlagFTZ != 0}, nil
}

// sassOperands reads the operands, then the optional scheduling tokens
// (sassHints): Rd, [addr], Rb{, Rc}, after a sparse predicate Ps in the
// seed's last two forms. It returns the operands without Ps and whether Ps
// was given.
func sassOperands(lx *lexer, oc sassOpcode) ([]operand, bool, error) {
	lx.skipSpace()
	body, bodyOff := lx.src[lx.pos:], lx.pos
	end, err := sassHints(body, bodyOff)
	if err != nil {
		return nil, false, err
	}
	ops, err := splitOperands(body[:end], bodyOff)
	if err != nil {
		return nil, false, err
	}
	want := 3
	if oc.op == OpCAS {
		want = 4
	}
	if oc.base == "RED" {
		want-- // no Rd
	}
	sparse := false
	if len(ops) == want+1 {
		if !isSASSPred(ops[0].text) {
			return nil, false, errAt(ops[0].off, "the %d-operand form of %s.%s starts with a sparse predicate Ps (P0–P6 or PT), got %q", want+1, oc.base, oc.opName, ops[0].text)
		}
		sparse = true
		ops = ops[1:]
	}
	if len(ops) != want {
		return nil, false, errAt(bodyOff, "%s.%s takes %d operands (%d with a sparse predicate Ps), got %d", oc.base, oc.opName, want, want+1, len(ops))
	}
	return ops, sparse, nil
}

// dest reads Rd: a general register, an even-odd pair for 64-bit data;
// RZ returns nothing.
func (sp *sassParser) dest(d operand, dbits int) error {
	st := sp.b.st
	rd, ok := sassReg(d.text)
	if !ok {
		return errAt(d.off, "Rd must be a general register (R0–R254 or RZ), got %q", d.text)
	}
	if dbits == 64 && rd != sassRZ {
		if err := checkPair(rd, d.off, "Rd"); err != nil {
			return err
		}
	}
	st.Dst = d.text
	st.HasDst = rd != sassRZ
	return nil
}

// sources reads Rb and, for CAS, Rc (ops[1] and ops[2], after the
// address), with the seed's register rules (checkCAS, checkPair).
func (sp *sassParser) sources(ops []operand, dbits int) error {
	st := sp.b.st
	rbOp := ops[1]
	rb, ok := sassReg(rbOp.text)
	if !ok {
		if c := rbOp.text[0]; c >= '0' && c <= '9' || c == '-' {
			return errAt(rbOp.off, "Rb must be a general register (R0–R254 or RZ), got %q: ATOM takes no immediate source", rbOp.text)
		}
		return errAt(rbOp.off, "Rb must be a general register (R0–R254 or RZ), got %q", rbOp.text)
	}
	if st.Op == OpCAS {
		rcOp := ops[2]
		rc, ok := sassReg(rcOp.text)
		if !ok {
			return errAt(rcOp.off, "Rc must be a general register (R0–R254 or RZ), got %q", rcOp.text)
		}
		if err := checkCAS(dbits, rb, rbOp.off, rc, rcOp.off); err != nil {
			return err
		}
		sb, err := sp.src(rbOp, rb, RoleSrcB, dbits, st.Type)
		if err != nil {
			return err
		}
		sc, err := sp.src(rcOp, rc, RoleSrcC, dbits, st.Type)
		if err != nil {
			return err
		}
		st.B, st.C = []Src{sb}, []Src{sc}
		return nil
	}
	if dbits == 64 && rb != sassRZ {
		if err := checkPair(rb, rbOp.off, "Rb"); err != nil {
			return err
		}
	}
	sb, err := sp.src(rbOp, rb, RoleSrcB, dbits, st.Type)
	if err != nil {
		return err
	}
	st.B = []Src{sb}
	return nil
}

// guard binds the guard predicate @{!}Pg: P0..P6, or PT (always true: no
// input). src is the instruction text and opStart where the opcode starts.
func (sp *sassParser) guard(pred *predRef, src string, opStart int) error {
	if pred == nil {
		return nil
	}
	st := sp.b.st
	switch {
	case pred.name == "PT" && pred.neg:
		return errAt(pred.off, "@!PT is never true: the instruction runs on no lane, and a trace records instructions that ran")
	case pred.name == "PT":
	case isSASSPred(pred.name):
		st.Pred = sp.b.input(pred.name, RolePred, 32, TypeU32)
		st.PredNeg = pred.neg
	default:
		return errAt(pred.off, "a SASS guard predicate is P0–P6 or PT, got %q", strings.TrimSpace(src[pred.off:opStart]))
	}
	return nil
}

// addr reads [Ra + ImmS20], [Ra - ImmS20], [Ra], [ImmU20], and for the
// sparse-predicate forms only [Ra].
func (sp *sassParser) addr(o operand, ext, sparse bool) error {
	st := sp.b.st
	t := o.text
	if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return errAt(o.off, "the address must be [Ra + ImmS20], [ImmU20] or [Ra], got %q", t)
	}
	inner := t[1 : len(t)-1]
	ioff := o.off + 1 + len(inner) - len(strings.TrimLeft(inner, " \t"))
	inner = strings.TrimSpace(inner)
	if inner == "" {
		return errAt(o.off, "empty address")
	}
	const noImm = "the sparse-predicate form takes [Ra]: immediate offsets are not supported for these variants (CUDA Binary Utilities, ATOM)"
	if c := inner[0]; c >= '0' && c <= '9' || c == '-' || c == '+' {
		// [ImmU20]: an unsigned absolute address.
		if sparse {
			return errAt(ioff, noImm)
		}
		return sp.absAddr(inner, ioff)
	}
	j := 0
	for j < len(inner) && isIdentByte(inner[j], j == 0) {
		j++
	}
	name := inner[:j]
	ra, ok := sassReg(name)
	if !ok {
		return errAt(ioff, "Ra must be a general register (R0–R254 or RZ), got %q", inner)
	}
	bits := 32
	if ext {
		bits = 64
		if ra != sassRZ {
			if err := checkPair(ra, ioff, "Ra of ATOM.E"); err != nil {
				return err
			}
		}
	}
	rest := inner[j:]
	roff := ioff + j + len(rest) - len(strings.TrimLeft(rest, " \t"))
	rest = strings.TrimSpace(rest)
	if rest != "" {
		if sparse {
			return errAt(roff, noImm)
		}
		imm, err := sassAddrOffset(name, rest, roff)
		if err != nil {
			return err
		}
		st.AddrImm = imm
	}
	if ra != sassRZ {
		in, err := sp.input(name, ra, bits, RoleAddr, TypeU64, ioff)
		if err != nil {
			return err
		}
		st.Addr = in
	}
	return nil
}

// absAddr reads [ImmU20], an unsigned absolute address.
func (sp *sassParser) absAddr(inner string, ioff int) error {
	v, ok := sassUint(inner)
	if c := inner[0]; !ok || c == '-' || c == '+' {
		return errAt(ioff, "an absolute address is ImmU20, an unsigned number from 0 to 0xfffff; got %q", inner)
	}
	if v >= sassImmU20 {
		return errAt(ioff, "absolute address %s is outside ImmU20 (0 to 0xfffff)", inner)
	}
	sp.b.st.Addr, sp.b.st.AddrImm = sassNoInput, int64(v)
	return nil
}

// sassAddrOffset reads the "+ ImmS20" or "- ImmS20" after Ra (at column
// roff), a signed 20-bit offset.
func sassAddrOffset(ra, rest string, roff int) (int64, error) {
	if rest[0] != '+' && rest[0] != '-' {
		return 0, errAt(roff, "expected + or - after %s in the address, got %q", ra, rest)
	}
	neg := rest[0] == '-'
	num := rest[1:]
	noff := roff + 1 + len(num) - len(strings.TrimLeft(num, " \t"))
	num = strings.TrimSpace(num)
	if !neg && strings.HasPrefix(num, "-") { // nvdisasm writes [R2+-0x8]
		neg = true
		num = strings.TrimLeft(num[1:], " \t")
	}
	v, ok := sassUint(num)
	if !ok {
		return 0, errAt(noff, "bad address offset %q", rest)
	}
	if neg && v > sassImmS20 || !neg && v >= sassImmS20 {
		return 0, errAt(noff, "offset %s is outside ImmS20 (-0x80000 to 0x7ffff)", rest)
	}
	if neg {
		return -int64(v), nil
	}
	return int64(v), nil
}

// src makes a data source: RZ is the immediate 0, a register an input.
func (sp *sassParser) src(o operand, reg int, role Role, bits int, typ Type) (Src, error) {
	if reg == sassRZ {
		return Src{In: sassNoInput}, nil
	}
	in, err := sp.input(o.text, reg, bits, role, typ, o.off)
	if err != nil {
		return Src{}, err
	}
	return Src{In: in}, nil
}

// input registers a read register (a pair when bits is 64). The same
// register read twice is one input, as wide as its widest use (the low
// half of a pair is its first register); a register read alone and as the
// other half of a pair has no single binding, so it is an error.
func (sp *sassParser) input(name string, reg, bits int, role Role, typ Type, off int) (int, error) {
	n := bits / 32
	for _, u := range sp.regs {
		if u.name == name {
			continue
		}
		if reg < u.first+u.n && u.first < reg+n {
			return 0, errAt(off, "%s overlaps %s: this instruction reads them as different values (one as half of a 64-bit pair), which a trace cannot bind", sassRange(name, reg, n), sassRange(u.name, u.first, u.n))
		}
	}
	sp.regs = append(sp.regs, sassRegUse{name: name, first: reg, n: n})
	i := sp.b.input(name, role, bits, typ)
	if in := &sp.b.st.Inputs[i]; in.Bits < bits {
		in.Bits = bits
	}
	return i, nil
}

func sassRange(name string, reg, n int) string {
	if n == 1 {
		return name
	}
	return "the pair " + name + ":R" + strconv.Itoa(reg+1)
}

// checkPair: a 64-bit operand is an even-odd register pair.
func checkPair(reg, off int, what string) error {
	if reg%2 != 0 {
		return errAt(off, "%s of a 64-bit operand must be an even register (the pair R2n:R2n+1), got R%d", what, reg)
	}
	if reg == 254 {
		return errAt(off, "R254 cannot start a register pair (R255 is RZ)")
	}
	return nil
}

// checkCAS applies the seed's register rule: "{Rb,Rc} are expected to be
// consecutive registers, naturally aligned based on .sz. Specifically, in
// ATOM.CAS.32, Rb must be R2n+0 (even register) (and cannot be RZ), and Rc
// must be Rb+1 or RZ. Similarly, for ATOM.CAS.64, Rb must be R4n+0 (and
// cannot be RZ) and Rc must be Rb+2 or RZ."
func checkCAS(bits, rb, rbOff, rc, rcOff int) error {
	align, step := 2, 1
	if bits == 64 {
		align, step = 4, 2
	}
	if rb == sassRZ {
		return errAt(rbOff, "ATOM.CAS.%d: Rb cannot be RZ", bits)
	}
	if rb%align != 0 {
		return errAt(rbOff, "ATOM.CAS.%d: Rb must be R%dn (a multiple of %d), got R%d", bits, align, align, rb)
	}
	if rc != sassRZ && rc != rb+step {
		return errAt(rcOff, "ATOM.CAS.%d: Rc must be R%d (Rb+%d) or RZ, got R%d", bits, rb+step, step, rc)
	}
	if bits == 64 && rc != sassRZ {
		return checkPair(rc, rcOff, "Rc")
	}
	return nil
}

// sassReg reads a general register: R0..R254 (no leading zeros) or RZ,
// returned as 255.
func sassReg(s string) (int, bool) {
	if s == "RZ" {
		return sassRZ, true
	}
	if len(s) < 2 || s[0] != 'R' || len(s) > 2 && s[1] == '0' {
		return 0, false
	}
	n := 0
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
		if n > 254 {
			return 0, false
		}
	}
	return n, true
}

// isSASSPred reports whether s names a predicate register: P0..P6 or PT.
func isSASSPred(s string) bool {
	return s == "PT" || len(s) == 2 && s[0] == 'P' && s[1] >= '0' && s[1] <= '6'
}

// sassUint reads an unsigned decimal or 0x-hex number.
func sassUint(s string) (uint64, bool) {
	base, digits := 10, s
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		base, digits = 16, s[2:]
	}
	if digits == "" || digits[0] == '+' || digits[0] == '-' || strings.Contains(digits, "_") {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, base, 64)
	return v, err == nil
}

// sassHints finds where the scheduling tokens ({&req_6} {&rdN} {&wrN}
// {?sched}, braces optional) begin, checks that nothing else follows, and
// returns the length of the operand text before them (and before a ';'
// that ends the operands).
func sassHints(s string, base int) (int, error) {
	depth := 0
	start := -1
	for i := 0; i < len(s) && start < 0; i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '&', '?', '{':
			if depth == 0 {
				start = i
			}
		}
	}
	if start < 0 {
		return len(s), nil
	}
	ws, offs := fields(s[start:])
	for k, w := range ws {
		tok := w
		if strings.HasPrefix(tok, "{") && strings.HasSuffix(tok, "}") {
			tok = tok[1 : len(tok)-1]
		}
		if len(tok) < 2 || tok[0] != '&' && tok[0] != '?' {
			return 0, errAt(base+start+offs[k], "unexpected %q after the operands (only &req_N, &rdN, &wrN and ?sched may follow)", w)
		}
	}
	// The seed puts ';' after the tokens; accept it before them too.
	ops := strings.TrimRight(s[:start], " \t")
	return len(strings.TrimSuffix(ops, ";")), nil
}

func strIn(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
