package trace

import (
	"fmt"
	"strings"
)

// The legal forms: per dialect, one table of the (operation, type) pairs
// its document lists, each row citing the section it comes from. The
// parsers decide legality by looking a form up here (parse_ptx.go,
// parse_sass.go, parse_visa.go, parse_lsc.go), and the engine refuses a
// Static whose form is not here (FormOf, called by engine/plan.go), so a
// Static built by hand cannot reach a formula the documents do not give.
// engine/forms_test.go replays a hand-worked case of every row.
//
// The key of a row is the smallest that lets a parser decide legality:
//
//	PTX   operation, type, vector width (.v2/.v4/.v8, 0 for a scalar atom)
//	SASS  operation, .sz (aliases resolved: no .sz and .32 are .U32)
//	vISA  operation, .16
//	LSC   sub-operation, DataSize
//
// Every row also fixes what the Static of that form holds: Op, Type and
// the Flags that go with it (PTX .noftz, SASS .FTZ).

// Form is one row of a dialect's table of legal forms.
type Form struct {
	Dialect Dialect
	// Name is the operation as the document writes it: PTX "add", SASS
	// "ADD", vISA "IMIN", LSC the sub-operation without lsc_,
	// "atomic_smin".
	Name string
	Op   Op
	Type Type
	// Vec is a PTX vector atom's width (2, 4 or 8); 0 for a scalar atom.
	Vec int
	// Size is a SASS .sz, aliases resolved ("U32", "F32.FTZ.RN").
	Size string
	// Half is a vISA DWORD_ATOMIC's .16.
	Half bool
	// Data is an LSC DataSize.
	Data LSCDataSize
	// Flags are the form's own: FlagNoFTZ for the PTX forms that require
	// .noftz, FlagFTZ for the SASS .sz that flush subnormals.
	Flags Flags
	// Doc is the document section the row comes from.
	Doc string
	// refused, when set, is why the parser refuses a form its document
	// lists (SASS SAFEADD: no published semantics). Forms leaves such rows
	// out; the parsers read them to name the reason.
	refused string
}

// String names the form as its text would: "ptx atom.add.noftz.v2.f16",
// "sass ATOM.ADD.F32.FTZ.RN", "visa DWORD_ATOMIC.IMIN.16",
// "lsc lsc_atomic_smin :d16u32".
func (f Form) String() string {
	switch f.Dialect {
	case DialectPTX:
		s := "ptx atom." + f.Name
		if f.Flags&FlagNoFTZ != 0 {
			s += ".noftz"
		}
		if f.Vec != 0 {
			s += fmt.Sprintf(".v%d", f.Vec)
		}
		return s + "." + f.Type.String()
	case DialectSASS:
		return "sass ATOM." + f.Name + "." + f.Size
	case DialectVISA:
		if f.Half {
			return "visa DWORD_ATOMIC." + f.Name + ".16"
		}
		return "visa DWORD_ATOMIC." + f.Name
	case DialectLSC:
		return "lsc lsc_" + f.Name + " :" + f.Data.String()
	}
	return f.Dialect.String() + " " + f.Name
}

// Forms returns a fresh copy of the legal forms of dialect d, in the
// table's order: every form its parser accepts. It is nil for a dialect
// without a table.
func Forms(d Dialect) []Form {
	var out []Form
	for _, f := range formTable(d) {
		if f.refused == "" {
			out = append(out, f)
		}
	}
	return out
}

// FormOf returns the row of st's dialect table that st is an instance of,
// or an error naming st's form when no row is: a Static the parser did not
// make may hold a pair no document lists.
func FormOf(st *Static) (Form, error) {
	vec := 0
	if st.Elems > 1 {
		vec = st.Elems
	}
	flags := st.Flags & (FlagFTZ | FlagNoFTZ)
	var match func(f *Form) bool
	switch st.Dialect {
	case DialectPTX:
		match = func(f *Form) bool {
			return f.Op == st.Op && f.Type == st.Type && f.Vec == vec && f.Flags == flags
		}
	case DialectSASS:
		match = func(f *Form) bool { return f.Op == st.Op && f.Type == st.Type && f.Flags == flags }
	case DialectVISA:
		match = func(f *Form) bool { return f.Op == st.Op && f.Type == st.Type && f.Flags == flags }
	case DialectLSC:
		l := st.LSC
		if l == nil {
			return Form{}, fmt.Errorf("an LSC instruction without its LSC fields (trace.Static.LSC): parse it with trace.ParseStatic")
		}
		match = func(f *Form) bool {
			return f.Name == l.SubOp && f.Data == l.Data && f.Op == st.Op && f.Type == st.Type && f.Flags == flags
		}
	default:
		return Form{}, fmt.Errorf("the %s dialect has no table of legal forms", st.Dialect)
	}
	if f, ok := lookupForm(st.Dialect, match); ok && f.refused == "" {
		return f, nil
	}
	return Form{}, fmt.Errorf("%s is not a legal form: no row of the %s table of trace.Forms has it", staticFormName(st, vec, flags), st.Dialect)
}

// staticFormName describes a Static's form for FormOf's error.
func staticFormName(st *Static, vec int, flags Flags) string {
	var fl string
	if flags&FlagNoFTZ != 0 {
		fl = " .noftz"
	}
	if flags&FlagFTZ != 0 {
		fl += " .FTZ"
	}
	switch st.Dialect {
	case DialectPTX:
		v := ""
		if vec != 0 {
			v = fmt.Sprintf(".v%d", vec)
		}
		return fmt.Sprintf("ptx atom.%s%s.%s%s", st.Op, v, st.Type, fl)
	case DialectLSC:
		return fmt.Sprintf("lsc lsc_%s :%s (op %s, type %s%s)", st.LSC.SubOp, st.LSC.Data, st.Op, st.Type, fl)
	}
	return fmt.Sprintf("%s %s on %s%s", st.Dialect, st.Op, st.Type, fl)
}

// lookupForm returns the first row of d's table, refused rows included,
// that match accepts.
func lookupForm(d Dialect, match func(f *Form) bool) (Form, bool) {
	fs := formTable(d)
	for i := range fs {
		if match(&fs[i]) {
			return fs[i], true
		}
	}
	return Form{}, false
}

// formsNamed returns the rows of d's table, refused ones included, whose
// Name is name.
func formsNamed(d Dialect, name string) []Form {
	var out []Form
	for _, f := range formTable(d) {
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// formTable builds dialect d's table afresh: no caller can change
// another's.
func formTable(d Dialect) []Form {
	switch d {
	case DialectPTX:
		return ptxForms()
	case DialectSASS:
		return sassForms()
	case DialectVISA:
		return visaForms()
	case DialectLSC:
		return lscForms()
	}
	return nil
}

// joinList writes items as "a, b, c <last> d".
func joinList(items []string, last string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + last + " " + items[len(items)-1]
}

// ptxGroup is a line of the PTX table: one operation on several types and
// vector widths.
type ptxGroup struct {
	name  string
	op    Op
	vecs  []int
	flags Flags
	types []Type
	doc   string
}

// ptxForms is the PTX atom table (PTX ISA, "Parallel Synchronization and
// Communication Instructions: atom"; the seed).
func ptxForms() []Form {
	const (
		bitSize = `atom: Description ("The bit-size operations are .and, .or, .xor, .cas (compare-and-swap), and .exch"), Syntax .type`
		integer = `atom: Description ("The integer operations are .add, .inc, .dec, .min, .max"), Syntax .type`
		incDec  = `atom: Semantics (inc, dec compare unsigned: r >= s, r > s); the PTX ISA lists .u32 only for .inc/.dec`
		fadd    = `atom: Description ("The floating-point operation .add"), Syntax .type .f32 .f64`
		cas16   = `atom: Syntax "atom{.sem}{.scope}{.space}.cas.b16 d, [a], b, c;"`
		b128    = `atom: Syntax "….cas.b128 d, [a], b, c;" and "….exch{.level::cache_hint}.b128"`
		noftz   = `atom: Syntax "….add.noftz{.level::cache_hint}.f16/.f16x2/.bf16/.bf16x2"; Description: "requires the .noftz qualifier"`
		vecF32  = `atom: Syntax, vector type: ".add{.level::cache_hint}.vec_32_bit.f32", .vec_32_bit = { .v2, .v4 }`
		vecHalf = `atom: Syntax, vector type: ".op.noftz{.level::cache_hint}.vec_16_bit.half_word_type", .op = { .add, .min, .max }, .vec_16_bit = { .v2, .v4, .v8 }`
		vecPack = `atom: Syntax, vector type: ".op.noftz{.level::cache_hint}.vec_32_bit.packed_type", .op = { .add, .min, .max }, .vec_32_bit = { .v2, .v4 }`
	)
	scalar, v16, v32 := []int{0}, []int{2, 4, 8}, []int{2, 4}
	groups := []ptxGroup{
		{"and", OpAnd, scalar, 0, []Type{TypeB32, TypeB64}, bitSize},
		{"or", OpOr, scalar, 0, []Type{TypeB32, TypeB64}, bitSize},
		{"xor", OpXor, scalar, 0, []Type{TypeB32, TypeB64}, bitSize},
		{"exch", OpExch, scalar, 0, []Type{TypeB32, TypeB64}, bitSize},
		{"exch", OpExch, scalar, 0, []Type{TypeB128}, b128},
		{"cas", OpCAS, scalar, 0, []Type{TypeB32, TypeB64}, bitSize},
		{"cas", OpCAS, scalar, 0, []Type{TypeB16}, cas16},
		{"cas", OpCAS, scalar, 0, []Type{TypeB128}, b128},
		{"add", OpAdd, scalar, 0, []Type{TypeU32, TypeS32, TypeU64, TypeS64}, integer},
		{"add", OpAdd, scalar, 0, []Type{TypeF32, TypeF64}, fadd},
		{"add", OpAdd, scalar, FlagNoFTZ, []Type{TypeF16, TypeBF16, TypeF16x2, TypeBF16x2}, noftz},
		{"inc", OpInc, scalar, 0, []Type{TypeU32}, incDec},
		{"dec", OpDec, scalar, 0, []Type{TypeU32}, incDec},
		{"min", OpMin, scalar, 0, []Type{TypeU32, TypeS32, TypeU64, TypeS64}, integer},
		{"max", OpMax, scalar, 0, []Type{TypeU32, TypeS32, TypeU64, TypeS64}, integer},
		{"add", OpAdd, v32, 0, []Type{TypeF32}, vecF32},
		{"add", OpAdd, v16, FlagNoFTZ, []Type{TypeF16, TypeBF16}, vecHalf},
		{"min", OpMin, v16, FlagNoFTZ, []Type{TypeF16, TypeBF16}, vecHalf},
		{"max", OpMax, v16, FlagNoFTZ, []Type{TypeF16, TypeBF16}, vecHalf},
		{"add", OpAdd, v32, FlagNoFTZ, []Type{TypeF16x2, TypeBF16x2}, vecPack},
		{"min", OpMin, v32, FlagNoFTZ, []Type{TypeF16x2, TypeBF16x2}, vecPack},
		{"max", OpMax, v32, FlagNoFTZ, []Type{TypeF16x2, TypeBF16x2}, vecPack},
	}
	var out []Form
	for _, g := range groups {
		for _, v := range g.vecs {
			for _, t := range g.types {
				out = append(out, Form{Dialect: DialectPTX, Name: g.name, Op: g.op, Type: t, Vec: v, Flags: g.flags, Doc: "PTX ISA, " + g.doc})
			}
		}
	}
	return out
}

// sassSizeOf is the type and flags of a SASS .sz (aliases resolved), from
// the seed's .sz list and Atomic Operations table; ok is false for a size
// neither names.
func sassSizeOf(sz string) (t Type, f Flags, ok bool) {
	switch sz {
	case "U32":
		return TypeU32, 0, true
	case "S32":
		return TypeS32, 0, true
	case "U64":
		return TypeU64, 0, true
	case "S64":
		return TypeS64, 0, true
	case "F32.FTZ.RN":
		return TypeF32, FlagFTZ, true
	case "F16x2.FTZ.RN":
		return TypeF16x2, FlagFTZ, true
	case "F16x2.RN":
		return TypeF16x2, 0, true
	case "F64.RN":
		return TypeF64, 0, true
	}
	return TypeInvalid, 0, false
}

// sassForms is the SASS ATOM table: the seed's Atomic Operations table
// (CUDA Binary Utilities, ATOM, SPA 5.0), row by row, and the one .sz the
// syntax lists beyond it (.F16x2.FTZ.RN, for ADD).
func sassForms() []Form {
	const table = "CUDA Binary Utilities, ATOM: Atomic Operations table, row "
	rows := []struct {
		name  string
		op    Op
		sizes []string
	}{
		{"ADD", OpAdd, []string{"U32", "S32", "U64", "F32.FTZ.RN", "F16x2.RN", "F16x2.FTZ.RN", "F64.RN"}},
		{"MIN", OpMin, []string{"U32", "S32", "U64", "S64", "F16x2.RN"}},
		{"MAX", OpMax, []string{"U32", "S32", "U64", "S64", "F16x2.RN"}},
		{"INC", OpInc, []string{"U32"}},
		{"DEC", OpDec, []string{"U32"}},
		{"AND", OpAnd, []string{"U32", "S32", "U64"}},
		{"OR", OpOr, []string{"U32", "S32", "U64"}},
		{"XOR", OpXor, []string{"U32", "S32", "U64"}},
		{"EXCH", OpExch, []string{"U32", "S32", "U64"}},
		{"SAFEADD", OpInvalid, []string{"U64"}},
		{"CAS", OpCAS, []string{"U32", "S32", "U64"}},
	}
	var out []Form
	for _, r := range rows {
		for _, sz := range r.sizes {
			t, fl, _ := sassSizeOf(sz)
			f := Form{Dialect: DialectSASS, Name: r.name, Op: r.op, Type: t, Size: sz, Flags: fl, Doc: table + "." + r.name}
			switch {
			case r.name == "ADD" && sz == "F16x2.FTZ.RN":
				// The table's ADD row spells it .F16x2.RN; the syntax's
				// .sz list has ".F16x2.FTZ.RN": ADD takes both.
				f.Doc = "CUDA Binary Utilities, ATOM: .sz list ({ .U32*, .S32, .U64, S64, .F32.FTZ.RN, .F16x2.FTZ.RN })"
			case r.name == "SAFEADD":
				f.refused = `semantics not published (CUDA Binary Utilities, ATOM, says only "Increment put pointer in a circular queue"), so it is not replayed`
			}
			out = append(out, f)
		}
	}
	return out
}

// visaClass is the operand type the vISA seed's Notes give an operation:
// "IMIN, IMAX: type D, FMAX, FMIN, FCMPWR: type F, Other operations: type
// UD".
type visaClass uint8

const (
	visaUD visaClass = iota
	visaD
	visaF
)

// visaType is the data type of an operation class, 32-bit or with .16
// ("lower 16 bits of each dword will be reinterpreted as its 16 bit
// counterpart").
func visaType(c visaClass, half bool) Type {
	switch {
	case c == visaD && half:
		return TypeS16
	case c == visaD:
		return TypeS32
	case c == visaF && half:
		return TypeF16
	case c == visaF:
		return TypeF32
	case half:
		return TypeU16
	}
	return TypeU32
}

// visaForms is the vISA DWORD_ATOMIC table: every operation of the seed's
// DWORD_ATOMIC_OP table, 32-bit and with .16, typed by its Notes.
func visaForms() []Form {
	const (
		table = "vISA spec, DWORD_ATOMIC: DWORD_ATOMIC_OP table; type from Notes (%s); .16 from Text and Notes (16bit Atomics)"
	)
	rows := []struct {
		name  string
		op    Op
		class visaClass
	}{
		{"ADD", OpAdd, visaUD}, {"SUB", OpSub, visaUD}, {"INC", OpInc, visaUD}, {"DEC", OpDec, visaUD},
		{"MIN", OpMin, visaUD}, {"MAX", OpMax, visaUD}, {"XCHG", OpExch, visaUD}, {"CMPXCHG", OpCAS, visaUD},
		{"AND", OpAnd, visaUD}, {"OR", OpOr, visaUD}, {"XOR", OpXor, visaUD},
		{"IMIN", OpMin, visaD}, {"IMAX", OpMax, visaD},
		{"PREDEC", OpPreDec, visaUD},
		{"FMAX", OpMax, visaF}, {"FMIN", OpMin, visaF}, {"FCMPWR", OpCAS, visaF},
	}
	classDoc := [...]string{visaUD: "Other operations: type UD", visaD: "IMIN, IMAX: type D", visaF: "FMAX, FMIN, FCMPWR: type F"}
	var out []Form
	for _, half := range []bool{false, true} {
		for _, r := range rows {
			out = append(out, Form{Dialect: DialectVISA, Name: r.name, Op: r.op, Type: visaType(r.class, half), Half: half,
				Doc: fmt.Sprintf(table, classDoc[r.class])})
		}
	}
	return out
}

// lscKind is how an LSC sub-operation types its data: as it sits in
// memory (unsigned), signed (smin, smax) or float (the f atomics).
type lscKind uint8

const (
	lscMem lscKind = iota
	lscSigned
	lscFloat
)

// lscType is the Type of a datum of size d read as k.
func lscType(d LSCDataSize, k lscKind) Type {
	switch n := d.MemBytes(); {
	case k == lscSigned:
		return map[int]Type{2: TypeS16, 4: TypeS32, 8: TypeS64}[n]
	case k == lscFloat:
		return map[int]Type{2: TypeF16, 4: TypeF32, 8: TypeF64}[n]
	default:
		return map[int]Type{1: TypeU8, 2: TypeU16, 4: TypeU32, 8: TypeU64}[n]
	}
}

// lscForms is the LSC_UNTYPED table: the seed's LscSubOp table crossed with
// the DataSize values each sub-operation takes.
func lscForms() []Form {
	const (
		all    = "vISA spec, LSC_UNTYPED: LscSubOp table; DataSize (d8 d16 d32 d64 d8u32 d16u32 d16u32h)"
		block  = `vISA spec, LSC_UNTYPED: LscSubOp table; LOAD_BLOCK2D "T the element data type (e.g. uint32_t for d32)": no converting sizes (docs/status/lsc.md, note 1)`
		atomic = "vISA spec, LSC_UNTYPED: LscSubOp table (Extra atomic arguments); one datum of d16, d16u32, d32 or d64 (docs/status/lsc.md, decision 4)"
		apnd   = "vISA spec, LSC_UNTYPED: LscSubOp table; AppendCounterAtomicAdd/Sub act on a 32-bit counter"
	)
	allSizes := []LSCDataSize{LSCD8, LSCD16, LSCD32, LSCD64, LSCD8U32, LSCD16U32, LSCD16U32H}
	blockSizes := []LSCDataSize{LSCD8, LSCD16, LSCD32, LSCD64}
	atomicSizes := []LSCDataSize{LSCD16, LSCD16U32, LSCD32, LSCD64}
	rows := []struct {
		name  string
		op    Op
		kind  lscKind
		sizes []LSCDataSize
		doc   string
	}{
		{"load", OpLoad, lscMem, allSizes, all},
		{"load_strided", OpLoad, lscMem, allSizes, all},
		{"load_quad", OpLoad, lscMem, allSizes, all},
		{"load_block2d", OpLoad, lscMem, blockSizes, block},
		{"load_status", OpLoad, lscMem, allSizes, all},
		{"store", OpStore, lscMem, allSizes, all},
		{"store_uncompressed", OpStore, lscMem, allSizes, all},
		{"store_strided", OpStore, lscMem, allSizes, all},
		{"store_quad", OpStore, lscMem, allSizes, all},
		{"store_block2d", OpStore, lscMem, blockSizes, block},
		{"atomic_iinc", OpInc, lscMem, atomicSizes, atomic},
		{"atomic_idec", OpDec, lscMem, atomicSizes, atomic},
		{"atomic_load", OpLoad, lscMem, atomicSizes, atomic},
		{"atomic_store", OpExch, lscMem, atomicSizes, atomic},
		{"atomic_iadd", OpAdd, lscMem, atomicSizes, atomic},
		{"atomic_isub", OpSub, lscMem, atomicSizes, atomic},
		{"atomic_smin", OpMin, lscSigned, atomicSizes, atomic},
		{"atomic_smax", OpMax, lscSigned, atomicSizes, atomic},
		{"atomic_umin", OpMin, lscMem, atomicSizes, atomic},
		{"atomic_umax", OpMax, lscMem, atomicSizes, atomic},
		{"atomic_icas", OpCAS, lscMem, atomicSizes, atomic},
		{"atomic_fadd", OpAdd, lscFloat, atomicSizes, atomic},
		{"atomic_fsub", OpSub, lscFloat, atomicSizes, atomic},
		{"atomic_fmin", OpMin, lscFloat, atomicSizes, atomic},
		{"atomic_fmax", OpMax, lscFloat, atomicSizes, atomic},
		{"atomic_fcas", OpCAS, lscFloat, atomicSizes, atomic},
		{"atomic_and", OpAnd, lscMem, atomicSizes, atomic},
		{"atomic_or", OpOr, lscMem, atomicSizes, atomic},
		{"atomic_xor", OpXor, lscMem, atomicSizes, atomic},
		{"apndctr_atomic_add", OpAdd, lscMem, []LSCDataSize{LSCD32}, apnd},
		{"apndctr_atomic_sub", OpSub, lscMem, []LSCDataSize{LSCD32}, apnd},
	}
	var out []Form
	for _, r := range rows {
		for _, d := range r.sizes {
			out = append(out, Form{Dialect: DialectLSC, Name: r.name, Op: r.op, Type: lscType(d, r.kind), Data: d, Doc: r.doc})
		}
	}
	return out
}
