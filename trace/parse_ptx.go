package trace

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// PTX atom, per NVIDIA's PTX ISA (Parallel Thread Execution ISA), "Parallel
// Synchronization and Communication Instructions: atom" (below, the seed),
// Syntax:
//
//	atom{.sem}{.scope}{.space}.op{.level::cache_hint}.type d, [a], b{, cache-policy};
//	atom{.sem}{.scope}{.space}.op.type d, [a], b, c;
//	atom{.sem}{.scope}{.global}.op{.noftz}{.level::cache_hint}.vec.type d, [a], b{, cache-policy};
//
// Qualifiers may come in any order (the seed's own examples write
// atom.global.v8.f16.max.noftz and atom.shared.b128.cas).

var ptxOps = map[string]Op{
	"and": OpAnd, "or": OpOr, "xor": OpXor, "cas": OpCAS, "exch": OpExch,
	"add": OpAdd, "inc": OpInc, "dec": OpDec, "min": OpMin, "max": OpMax,
}

var ptxTypes = map[string]Type{
	"b16": TypeB16, "b32": TypeB32, "b64": TypeB64, "b128": TypeB128,
	"u32": TypeU32, "u64": TypeU64, "s32": TypeS32, "s64": TypeS64,
	"f32": TypeF32, "f64": TypeF64, "f16": TypeF16, "bf16": TypeBF16,
	"f16x2": TypeF16x2, "bf16x2": TypeBF16x2,
}

// parsePTX parses a PTX atom (the seed, "atom": Syntax). The text starts
// at the opcode, after an optional @p guard predicate.
func parsePTX(lx *lexer, opcode string, opStart int, pred *predRef) (*Static, error) {
	b := newBuilder(DialectPTX)
	st := b.st
	st.ExecSize = 32
	st.AddrBits = 64
	q, err := parsePTXQualifiers(st, opcode, opStart)
	if err != nil {
		return nil, err
	}
	if err := checkPTXQualifiers(st, q, opStart); err != nil {
		return nil, err
	}

	ops, err := ptxOperands(lx, st, q.cacheHint)
	if err != nil {
		return nil, err
	}
	if err := ptxDest(st, ops[0], q.vec); err != nil {
		return nil, err
	}
	// Address: [reg], [reg+imm], [reg-imm], [imm], or a bare name.
	if err := parseAddr(b, ops[1]); err != nil {
		return nil, err
	}
	if err := ptxSources(b, ops, q.vec); err != nil {
		return nil, err
	}
	if pred != nil {
		st.Pred = b.input(pred.name, RolePred, 32, TypeU32)
		st.PredNeg = pred.neg
	}
	return st, nil
}

// ptxQuals is what the qualifiers of an atom opcode say beyond the Static.
type ptxQuals struct {
	haveOp, haveType, haveSpace, cacheHint, noftz bool
	vec                                           int  // 2, 4 or 8; 0 for a scalar atom
	opWritten                                     bool // some qualifier is an operation
}

// ptxOtherQuals are the qualifiers that are neither an operation nor a
// type, for suggestions.
var ptxOtherQuals = []string{
	"relaxed", "acquire", "release", "acq_rel", "cta", "cluster", "gpu", "sys",
	"global", "shared", "shared::cta", "shared::cluster", "L2::cache_hint", "noftz", "v2", "v4", "v8",
}

// parsePTXQualifiers reads the qualifiers after atom, in any order
// ({.sem}{.scope}{.space}.op{.noftz}{.level::cache_hint}{.vec}.type, the
// seed's Syntax), into st; each may be given once.
func parsePTXQualifiers(st *Static, opcode string, opStart int) (ptxQuals, error) {
	var q ptxQuals
	off := opStart + len("atom")
	quals := strings.Split(opcode, ".")[1:]
	for _, name := range quals {
		if _, ok := ptxOps[name]; ok {
			q.opWritten = true
		}
	}
	seen := map[string]bool{}
	for _, name := range quals {
		qoff := off + 1
		off += 1 + len(name)
		if name == "" {
			return q, errAt(qoff, "empty qualifier")
		}
		if seen[name] {
			return q, errAt(qoff, "qualifier .%s given twice", name)
		}
		seen[name] = true
		if err := q.add(st, name, qoff); err != nil {
			return q, err
		}
	}
	return q, nil
}

// add reads one qualifier: a memory order (.sem), a scope, a state space,
// .L2::cache_hint, .noftz, a vector size, an operation or a type. Two of
// one kind are an error.
func (pq *ptxQuals) add(st *Static, q string, qoff int) error {
	dup := func(have bool, what string) error {
		if have {
			return errAt(qoff, "two %s qualifiers (.%s)", what, q)
		}
		return nil
	}
	switch q {
	case "relaxed", "acquire", "release", "acq_rel":
		if err := dup(st.Sem != "", "memory-order"); err != nil {
			return err
		}
		st.Sem = q
	case "cta", "cluster", "gpu", "sys":
		if err := dup(st.Scope != "", "scope"); err != nil {
			return err
		}
		st.Scope = q
	case "global", "shared", "shared::cta", "shared::cluster":
		if err := dup(pq.haveSpace, "state-space"); err != nil {
			return err
		}
		pq.haveSpace = true
		if q == "global" {
			st.Space = Global
		} else {
			// .shared::cluster reaches the shared memory of any CTA of
			// the cluster; a trace records the executing CTA's window, so
			// it replays on the group's own shared memory.
			st.Space = Shared
		}
	case "L2::cache_hint":
		pq.cacheHint = true
	case "noftz":
		pq.noftz = true
	case "v2", "v4", "v8":
		if pq.vec != 0 {
			return errAt(qoff, "two vector qualifiers")
		}
		pq.vec = int(q[1] - '0')
	default:
		if op, ok := ptxOps[q]; ok {
			if err := dup(pq.haveOp, "operation"); err != nil {
				return err
			}
			pq.haveOp = true
			st.Op = op
		} else if t, ok := ptxTypes[q]; ok {
			if err := dup(pq.haveType, "type"); err != nil {
				return err
			}
			pq.haveType = true
			st.Type = t
		} else {
			return pq.unknown(q, qoff)
		}
	}
	return nil
}

// unknown is the error for a qualifier that PTX atom does not have. In an
// atom without an operation, a name nearest to an operation, or near to
// no qualifier at all, stands where the operation goes: it is an unknown
// operation. Otherwise it is an unknown qualifier, with the nearest
// qualifier when one is close.
func (pq *ptxQuals) unknown(q string, qoff int) error {
	all := slices.Concat(formOpNames(DialectPTX), slices.Sorted(maps.Keys(ptxTypes)), ptxOtherQuals)
	c := closest(q, all)
	if _, isOp := ptxOps[c]; !pq.opWritten && (c == "" || isOp) {
		return unknownOp(qoff, DialectPTX, "PTX atom", ".", q)
	}
	if c != "" {
		return errAt(qoff, "unknown PTX atom qualifier .%s; did you mean .%s?", q, c)
	}
	return errAt(qoff, "unknown PTX atom qualifier .%s", q)
}

// checkPTXQualifiers applies the seed's rules on the qualifiers as a whole:
// an operation and a type are required, .L2::cache_hint and a vector type
// go with .global only, the (operation, type, vector width) must be a row
// of the PTX table (ptxForms), and .noftz is given exactly when the row
// requires it.
func checkPTXQualifiers(st *Static, q ptxQuals, opStart int) error {
	if !q.haveOp {
		return errAt(opStart, "atom needs an operation (.add, .cas, .exch, …)")
	}
	if !q.haveType {
		return errAt(opStart, "atom needs a type (.u32, .b64, .f32, …)")
	}
	if !q.haveSpace {
		// Generic addressing: the address points to .global or .shared; a
		// trace of generic atoms records global addresses.
		st.Space = Global
	}
	if q.cacheHint && st.Space != Global {
		return errAt(opStart, ".L2::cache_hint is only supported for .global")
	}
	if q.vec != 0 {
		if st.Space != Global {
			return errAt(opStart, "atom with a vector type may be used only with .global")
		}
		st.Elems = q.vec
	}
	f, ok := lookupForm(DialectPTX, func(f *Form) bool {
		return f.Op == st.Op && f.Type == st.Type && f.Vec == q.vec
	})
	if !ok {
		return ptxFormError(st, q.vec, opStart)
	}
	switch {
	case f.Flags&FlagNoFTZ != 0 && !q.noftz:
		vec := ""
		if q.vec != 0 {
			vec = fmt.Sprintf(".v%d", q.vec)
		}
		return errAt(opStart, "atom.%s%s.%s requires .noftz", st.Op, vec, st.Type)
	case f.Flags&FlagNoFTZ == 0 && q.noftz:
		return errAt(opStart, ".noftz applies only to %s", joinList(ptxNoFTZTypes(), "and"))
	}
	st.Flags |= f.Flags
	return nil
}

// ptxFormError says that no row of the PTX table has st's operation and
// type at vector width vec, and which rows the operation or type has.
func ptxFormError(st *Static, vec int, opStart int) error {
	var took []string
	if vec == 0 {
		for _, f := range formsNamed(DialectPTX, st.Op.String()) {
			if f.Vec == 0 {
				took = append(took, "."+f.Type.String())
			}
		}
		msg := fmt.Sprintf("atom.%s does not take .%s (the seed gives .%s %s", st.Op, st.Type, st.Op, strings.Join(took, " "))
		if _, ok := lookupForm(DialectPTX, func(f *Form) bool { return f.Op == st.Op && f.Type == st.Type }); ok {
			msg += fmt.Sprintf("; .%s.%s only as a vector, .v2/.v4…", st.Op, st.Type)
		}
		return errAt(opStart, "%s)", msg)
	}
	for _, f := range Forms(DialectPTX) {
		if f.Vec != 0 && f.Type == st.Type {
			took = append(took, fmt.Sprintf(".%s.v%d", f.Name, f.Vec))
		}
	}
	if len(took) == 0 {
		return errAt(opStart, "atom.v%d does not take .%s: the seed's vector forms are .f32, .f16, .bf16, .f16x2 and .bf16x2", vec, st.Type)
	}
	return errAt(opStart, "atom.v%d.%s does not take .%s: the seed's vector forms of .%s are %s", vec, st.Type, st.Op, st.Type, strings.Join(took, " "))
}

// ptxNoFTZTypes lists the types of the PTX forms that require .noftz.
func ptxNoFTZTypes() []string {
	var ts []string
	for _, f := range Forms(DialectPTX) {
		if name := f.Type.String(); f.Flags&FlagNoFTZ != 0 && !strIn(name, ts) {
			ts = append(ts, name)
		}
	}
	return ts
}

// ptxOperands splits the operands, d, [a], b{, c}{, cache-policy} (the
// seed's Syntax), and checks their number.
func ptxOperands(lx *lexer, st *Static, cacheHint bool) ([]operand, error) {
	lx.skipSpace()
	ops, err := splitOperands(lx.src[lx.pos:], lx.pos)
	if err != nil {
		return nil, err
	}
	want := 3
	if st.Op == OpCAS {
		want = 4
	}
	if cacheHint {
		want++ // the 64-bit cache-policy operand: a hint, it never changes a result
	}
	if len(ops) != want {
		return nil, errAt(lx.pos, "atom.%s takes %d operands, got %d", st.Op, want, len(ops))
	}
	return ops, nil
}

// ptxDest reads the destination d: a register, or with .vec a brace list
// of vec registers.
func ptxDest(st *Static, d operand, vec int) error {
	st.Dst = d.text
	st.HasDst = d.text != "_" && d.text != "%null"
	if vec != 0 {
		els, err := vectorList(d)
		if err != nil {
			return err
		}
		if len(els) != vec {
			return errAt(d.off, "a .v%d destination has %d elements, got %d", vec, vec, len(els))
		}
	} else if d.text[0] == '{' {
		return errAt(d.off, "a vector destination needs a .v2/.v4/.v8 qualifier")
	}
	return nil
}

// ptxSources reads the sources: b (a brace list of vec elements with
// .vec) and, for .cas, c.
func ptxSources(b *builder, ops []operand, vec int) error {
	st := b.st
	bits := st.Type.Size() * 8
	if vec != 0 {
		els, err := vectorList(ops[2])
		if err != nil {
			return err
		}
		if len(els) != vec {
			return errAt(ops[2].off, "a .v%d source has %d elements, got %d", vec, vec, len(els))
		}
		for _, e := range els {
			s, err := b.src(e, bits, st.Type, RoleSrcB)
			if err != nil {
				return err
			}
			st.B = append(st.B, s)
		}
		return nil
	}
	s, err := b.src(ops[2], bits, st.Type, RoleSrcB)
	if err != nil {
		return err
	}
	st.B = []Src{s}
	if st.Op == OpCAS {
		c, err := b.src(ops[3], bits, st.Type, RoleSrcC)
		if err != nil {
			return err
		}
		st.C = []Src{c}
	}
	return nil
}

// parseAddr reads a PTX address operand into the builder.
func parseAddr(b *builder, o operand) error {
	t := o.text
	inner, ioff := t, o.off
	if strings.HasPrefix(t, "[") {
		if !strings.HasSuffix(t, "]") {
			return errAt(o.off, "unclosed [ in address %q", t)
		}
		inner, ioff = t[1:len(t)-1], o.off+1
	}
	lead := len(inner) - len(strings.TrimLeft(inner, " \t"))
	inner, ioff = strings.TrimSpace(inner), ioff+lead
	if inner == "" {
		return errAt(o.off, "empty address")
	}
	st := b.st
	// Split reg [+|- imm].
	name, rest := inner, ""
	for i := 1; i < len(inner); i++ {
		if inner[i] == '+' || inner[i] == '-' {
			name, rest = strings.TrimSpace(inner[:i]), inner[i:]
			break
		}
	}
	if isIdentByte(name[0], true) {
		for i := 1; i < len(name); i++ {
			if !isIdentByte(name[i], false) {
				return errAt(ioff+i, "unexpected %q in address %q", name[i], t)
			}
		}
		st.Addr = b.input(name, RoleAddr, st.AddrBits, TypeU64)
	} else {
		rest = inner // an absolute address
	}
	if rest != "" {
		r := strings.ReplaceAll(rest, " ", "")
		if st.Addr >= 0 {
			r = strings.TrimPrefix(r, "+")
		}
		v, err := strconv.ParseInt(r, 0, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(r, 0, 64)
			if uerr != nil || st.Addr >= 0 {
				return errAt(ioff, "bad address offset %q", rest)
			}
			v = int64(u)
		}
		st.AddrImm = v
	}
	return nil
}
