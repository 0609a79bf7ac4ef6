package trace

import (
	"math/bits"
	"strconv"
	"strings"
)

// Intel vISA LSC_UNTYPED, per the Intel Graphics Compiler vISA specification
// ("vISA spec"; below, the seed), LSC_UNTYPED: Text:
//
//	[(P)] lsc_load.SFID[.L1[.L3]] (ExecSize) DstData:DataSpec AddrType[[Scale*]Src0Addrs[+Imm]]:AddrSize
//	[(P)] lsc_load_strided.SFID[.L1[.L3]] [(ExecSize)] DstData:DataSpec AddrType[[Scale*]Base[+Imm][,Pitch]]:AddrSize
//	[(P)] lsc_load_block2d.SFID[.L1[.L3]] (ExecSize) DstData:DataSize.BxWxH[nt][nt] flat[Base,W,H,P,X,Y]
//	[(P)] lsc_store.SFID[.L1[.L3]] [(ExecSize)] AddrType[…]:AddrSize Src1Data:DataSpec
//	[(P)] lsc_store_block2d.SFID[.L1[.L3]] (ExecSize) flat[Base,W,H,P,X,Y] Src1Data:DataSize.[1x]WxH[nt][nt]
//	[(P)] lsc_atomic_*.SFID[.L1[.L3]] (ExecSize) DstData:DataSpec AddrType[…]:AddrSize Src1Data Src2Data
//	[(P)] lsc_apndctr_atomic_*.SFID[.L1[.L3]] (ExecSize) DstData:DataSpec AddrType(state_offset) Src0Data
//
// DataSpec is DataSize [x DataElemsPerAddr] [t], or DataSize.xyzw channels
// for the quad forms. Decisions where the seed is silent or inconsistent
// are listed in docs/status/lsc.md.

// LSCDataSize is an LSC DataSize: the size of one datum in memory and in
// the register that holds it.
type LSCDataSize uint8

const (
	LSCDataInvalid LSCDataSize = iota
	LSCD8
	LSCD16
	LSCD32
	LSCD64
	LSCD8U32   // 8 bits in memory, zero-extended to 32 in the register
	LSCD16U32  // 16 bits in memory, zero-extended to 32 in the register
	LSCD16U32H // 16 bits in memory, in the upper half of a 32-bit register slot
)

var lscDataNames = [...]string{"invalid", "d8", "d16", "d32", "d64", "d8u32", "d16u32", "d16u32h"}

func (d LSCDataSize) String() string {
	if int(d) < len(lscDataNames) {
		return lscDataNames[d]
	}
	return "LSCDataSize(" + strconv.Itoa(int(d)) + ")"
}

// MemBytes is the size of one datum in memory.
func (d LSCDataSize) MemBytes() int {
	switch d {
	case LSCD8, LSCD8U32:
		return 1
	case LSCD16, LSCD16U32, LSCD16U32H:
		return 2
	case LSCD32:
		return 4
	case LSCD64:
		return 8
	}
	return 0
}

// RegBits is the width of one datum's register slot.
func (d LSCDataSize) RegBits() int {
	switch d {
	case LSCD8:
		return 8
	case LSCD16:
		return 16
	case LSCD64:
		return 64
	case LSCDataInvalid:
		return 0
	}
	return 32
}

// lscClass is the shape of an LSC operation's operands and semantics.
type lscClass uint8

const (
	lscLoad lscClass = iota + 1
	lscLoadStrided
	lscLoadQuad
	lscLoadBlock2D
	lscLoadStatus
	lscStore
	lscStoreStrided
	lscStoreQuad
	lscStoreBlock2D
	lscAtomic
	lscApndctr
)

// lscOpInfo is the shape of a sub-operation's operands; its operation and
// the types of its data are its rows in the LSC table (lscForms).
type lscOpInfo struct {
	class lscClass
	extra int // atomic arguments: the seed's "Extra atomic arguments" column
}

// lscSubOps is the seed's LscSubOp table (names without the lsc_ prefix).
var lscSubOps = map[string]lscOpInfo{
	"load":               {class: lscLoad},
	"load_strided":       {class: lscLoadStrided},
	"load_quad":          {class: lscLoadQuad},
	"load_block2d":       {class: lscLoadBlock2D},
	"load_status":        {class: lscLoadStatus},
	"store":              {class: lscStore},
	"store_uncompressed": {class: lscStore},
	"store_strided":      {class: lscStoreStrided},
	"store_quad":         {class: lscStoreQuad},
	"store_block2d":      {class: lscStoreBlock2D},
	"atomic_iinc":        {class: lscAtomic},
	"atomic_idec":        {class: lscAtomic},
	"atomic_load":        {class: lscAtomic},
	"atomic_store":       {class: lscAtomic, extra: 1},
	"atomic_iadd":        {class: lscAtomic, extra: 1},
	"atomic_isub":        {class: lscAtomic, extra: 1},
	"atomic_smin":        {class: lscAtomic, extra: 1},
	"atomic_smax":        {class: lscAtomic, extra: 1},
	"atomic_umin":        {class: lscAtomic, extra: 1},
	"atomic_umax":        {class: lscAtomic, extra: 1},
	"atomic_icas":        {class: lscAtomic, extra: 2},
	"atomic_fadd":        {class: lscAtomic, extra: 1},
	"atomic_fsub":        {class: lscAtomic, extra: 1},
	"atomic_fmin":        {class: lscAtomic, extra: 1},
	"atomic_fmax":        {class: lscAtomic, extra: 1},
	"atomic_fcas":        {class: lscAtomic, extra: 2},
	"atomic_and":         {class: lscAtomic, extra: 1},
	"atomic_or":          {class: lscAtomic, extra: 1},
	"atomic_xor":         {class: lscAtomic, extra: 1},
	"apndctr_atomic_add": {class: lscApndctr, extra: 1},
	"apndctr_atomic_sub": {class: lscApndctr, extra: 1},
}

// LSC is what an LSC instruction text fixes beyond its [Static]: the
// parser keeps it in [Static.LSC].
type LSC struct {
	SubOp      string // as written after lsc_: "load", "atomic_icas", "apndctr_atomic_add", …
	SFID       string // "ugm", "ugml" or "slm"
	L1, L3     string // caching, "df" when not written
	Data       LSCDataSize
	VecSize    int   // DataElemsPerAddr (1 for quad and block2d)
	Transposed bool  // DataOrder: the `t` suffix (block2d: the first of nt/tn)
	ChMask     uint8 // quad: bit 0 X, bit 1 Y, bit 2 Z, bit 3 W
	AddrType   string
	Float      bool // a floating-point atomic
	// Block2d: the shape, the VNNI transform, and the indexes into
	// Static.Inputs of SurfaceBase, SurfaceWidth, SurfaceHeight,
	// SurfacePitch, Src0AddrX and Src0AddrY.
	Blocks, BlockWidth, BlockHeight int
	VNNI                            bool
	Block2DIn                       [6]int
}

// Load reports whether the operation reads memory into DstData only.
func (l *LSC) Load() bool {
	c := lscSubOps[l.SubOp].class
	return c == lscLoad || c == lscLoadStrided || c == lscLoadQuad || c == lscLoadBlock2D || c == lscLoadStatus
}

// Store reports whether the operation writes memory and returns nothing.
func (l *LSC) Store() bool {
	c := lscSubOps[l.SubOp].class
	return c == lscStore || c == lscStoreStrided || c == lscStoreQuad || c == lscStoreBlock2D
}

// Block2D reports whether the operation is lsc_load_block2d or lsc_store_block2d.
func (l *LSC) Block2D() bool {
	c := lscSubOps[l.SubOp].class
	return c == lscLoadBlock2D || c == lscStoreBlock2D
}

// Status reports whether the operation is lsc_load_status.
func (l *LSC) Status() bool { return l.SubOp == "load_status" }

// LSCOf returns what an LSC Static's text fixes beyond the Static: its
// LSC field, or, for a Static built by hand without one, its text parsed
// again.
func LSCOf(st *Static) (*LSC, error) {
	if st.Dialect != DialectLSC {
		return nil, errAt(0, "not an LSC instruction")
	}
	if st.LSC != nil {
		return st.LSC, nil
	}
	_, l, err := parseLSCText(st.Text)
	return l, err
}

func parseLSCText(text string) (*Static, *LSC, error) {
	text = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(text, " \t"), ";"), " \t")
	lx := &lexer{src: text}
	lx.skipSpace()
	return parseLSCFull(lx)
}

// parseLSC parses an Intel LSC instruction (vISA spec, LSC_UNTYPED).
// The text starts at the opcode or at a (P) predicate.
func parseLSC(lx *lexer, opcode string, opStart int) (*Static, error) {
	st, l, err := parseLSCFull(lx)
	if err != nil {
		return nil, err
	}
	st.LSC = l
	return st, nil
}

// lscCaching names the CachingL1/CachingL3 values.
var lscCaching = map[string]bool{"df": true, "uc": true, "ca": true, "wb": true, "wt": true, "st": true, "ri": true}

// lscCachingPairs is the seed's table of valid (L1, L3) combinations and
// what they apply to: 'b' both, 'l' loads, 's' stores.
var lscCachingPairs = map[[2]string]byte{
	{"df", "df"}: 'b', {"uc", "uc"}: 'b', {"st", "uc"}: 'b',
	{"uc", "ca"}: 'l', {"ca", "uc"}: 'l', {"ca", "ca"}: 'l', {"st", "ca"}: 'l', {"ri", "ca"}: 'l',
	{"uc", "wb"}: 's', {"wt", "uc"}: 's', {"wt", "wb"}: 's', {"st", "wb"}: 's', {"wb", "wb"}: 's',
}

func isNullReg(name string) bool {
	return name == "V0" || name == "null" || name == "%null" || name == "_"
}

// lscTokens splits the operand part of an LSC text at blanks outside
// parentheses and brackets.
func lscTokens(src string, base int) ([]operand, error) {
	var toks []operand
	i := 0
	for i < len(src) {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		if i >= len(src) {
			break
		}
		j, depth := i, 0
		for j < len(src) && (depth > 0 || src[j] != ' ' && src[j] != '\t') {
			switch src[j] {
			case '(', '[':
				depth++
			case ')', ']':
				depth--
				if depth < 0 {
					return nil, errAt(base+j, "unbalanced %q", src[j])
				}
			}
			j++
		}
		if depth != 0 {
			return nil, errAt(base+i, "unclosed parenthesis or bracket in %q", src[i:j])
		}
		toks = append(toks, operand{text: src[i:j], off: base + i})
		i = j
	}
	return toks, nil
}

// parseLSCFull parses an LSC instruction (the seed, LSC_UNTYPED: Text)
// into its Static and what it fixes beyond it. The text starts at the
// opcode or at a (P) predicate.
func parseLSCFull(lx *lexer) (*Static, *LSC, error) {
	b := newBuilder(DialectLSC)
	st := b.st
	l := &LSC{L1: "df", L3: "df", VecSize: 1}
	pred, err := parseIntelPred(lx)
	if err != nil {
		return nil, nil, err
	}
	opStart := lx.pos
	info, err := parseLSCOpcode(lx, st, l)
	if err != nil {
		return nil, nil, err
	}
	toks, err := lscExecSize(lx, st, l, info)
	if err != nil {
		return nil, nil, err
	}
	end := len(lx.src)
	spec, err := lscOperands(b, l, info, toks, end)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLSCData(st, l, info, &spec, opStart); err != nil {
		return nil, nil, err
	}
	memType, regBits := lscTypes(st, spec)
	lscElements(st, l, info, spec)
	if err := lscSources(b, l, info, toks, spec, memType, regBits, end); err != nil {
		return nil, nil, err
	}
	if pred != nil {
		st.Pred = b.input(pred.name, RolePred, 32, TypeU32)
		st.PredNeg = pred.neg
	}
	st.Text = strings.TrimSpace(lx.src)
	return st, l, nil
}

// parseLSCOpcode reads the opcode lsc_SubOp.SFID[.L1[.L3]] (the seed's
// LscSubOp table, SFID and caching) into st and l, and returns the
// operation's row of the LscSubOp table.
func parseLSCOpcode(lx *lexer, st *Static, l *LSC) (lscOpInfo, error) {
	opStart := lx.pos
	opcode := lx.word()
	if !strings.HasPrefix(opcode, "lsc_") {
		return lscOpInfo{}, errAt(opStart, "expected an lsc_ opcode, got %q", opcode)
	}
	parts := strings.Split(opcode[len("lsc_"):], ".")
	l.SubOp = parts[0]
	info, ok := lscSubOps[l.SubOp]
	if !ok {
		return info, unknownOp(opStart+len("lsc_"), DialectLSC, "LSC", "lsc_", l.SubOp)
	}
	off := opStart + len("lsc_") + len(parts[0])
	if len(parts) < 2 {
		return info, errAt(opStart+len(opcode), "lsc_%s needs an SFID (.ugm, .ugml or .slm)", l.SubOp)
	}
	var cacheOff int
	for i, q := range parts[1:] {
		qoff := off + 1
		off += 1 + len(q)
		switch i {
		case 0:
			switch q {
			case "ugm", "ugml", "slm":
				l.SFID = q
			default:
				return info, errAt(qoff, "unknown LSC SFID .%s (.ugm, .ugml, .slm)", q)
			}
		case 1, 2:
			if !lscCaching[q] {
				return info, errAt(qoff, "unknown caching .%s (df uc ca wb wt st ri)", q)
			}
			if i == 1 {
				l.L1, cacheOff = q, qoff
			} else {
				l.L3 = q
			}
		default:
			return info, errAt(qoff, "too many qualifiers: .SFID.L1.L3 at most")
		}
	}
	if cacheOff > 0 {
		return info, checkLSCCaching(l, info, cacheOff)
	}
	return info, nil
}

// checkLSCCaching checks written caching against the seed's table of
// valid (L1, L3) combinations (lscCachingPairs); SLM takes .df only.
func checkLSCCaching(l *LSC, info lscOpInfo, cacheOff int) error {
	if l.SFID == "slm" && (l.L1 != "df" || l.L3 != "df") {
		return errAt(cacheOff, "caching must be .df for SLM accesses")
	}
	applies, ok := lscCachingPairs[[2]string{l.L1, l.L3}]
	isLoad := info.class <= lscLoadStatus
	isStore := info.class >= lscStore && info.class <= lscStoreBlock2D
	switch {
	case !ok:
		return errAt(cacheOff, "caching .%s.%s is not a valid L1/L3 combination", l.L1, l.L3)
	case applies == 'l' && !isLoad, applies == 's' && !isStore:
		what := map[byte]string{'l': "loads", 's': "stores"}[applies]
		return errAt(cacheOff, "caching .%s.%s applies only to %s", l.L1, l.L3, what)
	}
	return nil
}

// lscExecSize splits the operand part into tokens (lscTokens) and reads
// the execution size, (ExecSize), into st; it returns the tokens after it.
func lscExecSize(lx *lexer, st *Static, l *LSC, info lscOpInfo) ([]operand, error) {
	lx.skipSpace()
	toks, err := lscTokens(lx.src[lx.pos:], lx.pos)
	if err != nil {
		return nil, err
	}
	st.ExecSize = 0
	if len(toks) > 0 && strings.HasPrefix(toks[0].text, "(") {
		n, err := parseLSCExecSize(toks[0])
		if err != nil {
			return nil, err
		}
		st.ExecSize = n
		toks = toks[1:]
	} else if info.class == lscLoadStrided || info.class == lscStore {
		// The seed's Text makes ( ExecSize ) optional for these two; the
		// default is PVC's native SIMD32 ("SIMD16 for DG2 and SIMD32 for PVC").
		st.ExecSize = 32
	} else {
		return nil, errAt(lx.pos, "lsc_%s needs an execution size, e.g. (M1,32)", l.SubOp)
	}
	return toks, nil
}

// lscOperands reads the operands by class, as the seed's Text orders them:
// DstData and the address (loads, atomics), the address and Src1Data
// (stores), or DstData and the surface (append counter). It returns the
// data operand's spec; an atomic's sources are read by lscSources.
func lscOperands(b *builder, l *LSC, info lscOpInfo, toks []operand, end int) (lscSpec, error) {
	need := func(n int, what string) error {
		if len(toks) < n {
			return errAt(end, "lsc_%s needs %s", l.SubOp, what)
		}
		if len(toks) > n {
			return errAt(toks[n].off, "unexpected operand %q", toks[n].text)
		}
		return nil
	}
	var spec lscSpec
	var err error
	switch info.class {
	case lscLoad, lscLoadStrided, lscLoadQuad, lscLoadStatus, lscLoadBlock2D:
		if err := need(2, "DstData and an address"); err != nil {
			return spec, err
		}
		if spec, err = lscDstData(b.st, toks[0], info.class == lscLoadBlock2D); err != nil {
			return spec, err
		}
		err = lscAddress(b, l, info, toks[1], &spec)
	case lscStore, lscStoreStrided, lscStoreQuad, lscStoreBlock2D:
		if err := need(2, "an address and Src1Data"); err != nil {
			return spec, err
		}
		dataTok := toks[1]
		if spec, err = parseLSCData(dataTok, info.class == lscStoreBlock2D); err != nil {
			return spec, err
		}
		if isNullReg(spec.name) {
			return spec, errAt(dataTok.off, "a store needs a data register, not %s", spec.name)
		}
		err = lscAddress(b, l, info, toks[0], &spec)
	case lscAtomic:
		if len(toks) < 2 {
			return spec, errAt(end, "lsc_%s needs DstData, an address and %d source(s)", l.SubOp, info.extra)
		}
		if len(toks) > 4 {
			return spec, errAt(toks[4].off, "unexpected operand %q", toks[4].text)
		}
		if spec, err = lscDstData(b.st, toks[0], false); err != nil {
			return spec, err
		}
		err = lscAddress(b, l, info, toks[1], &spec)
	case lscApndctr:
		if err := need(3, "DstData, a surface and Src0Data"); err != nil {
			return spec, err
		}
		if spec, err = lscDstData(b.st, toks[0], false); err != nil {
			return spec, err
		}
		err = lscApndctrSurface(l, b.st, toks[1])
	}
	return spec, err
}

// lscDstData reads DstData:DataSpec into st's destination; V0, null,
// %null and _ return nothing.
func lscDstData(st *Static, o operand, block2d bool) (lscSpec, error) {
	spec, err := parseLSCData(o, block2d)
	if err != nil {
		return spec, err
	}
	st.Dst = spec.name
	st.HasDst = !isNullReg(spec.name)
	return spec, nil
}

// checkLSCData records the data spec in l and checks it against the
// operation: channels only for the quad forms, the seed's transpose
// restrictions, the (sub-operation, DataSize) pair against the LSC table
// (lscForms, which sets st's operation and type), block2d's shape
// (checkBlock2D), and an atomic's single element.
func checkLSCData(st *Static, l *LSC, info lscOpInfo, spec *lscSpec, opStart int) error {
	l.Data, l.VecSize, l.Transposed, l.ChMask = spec.size, spec.vec, spec.transposed, spec.chmask
	quad := info.class == lscLoadQuad || info.class == lscStoreQuad
	if quad != (spec.chmask != 0) {
		if quad {
			return errAt(spec.sizeOff, "lsc_%s needs channels, e.g. :d32.xzw", l.SubOp)
		}
		return errAt(spec.sizeOff, "channels (.xyzw) are only for lsc_load_quad and lsc_store_quad")
	}
	if spec.transposed && !l.Block2D() {
		if info.class == lscAtomic || info.class == lscApndctr {
			return errAt(spec.tOff, "transpose is not permitted for atomic operations")
		}
		if st.ExecSize != 1 {
			return errAt(spec.tOff, "transpose only supports SIMD1, not (%d)", st.ExecSize)
		}
	}
	if err := lscForm(st, l, spec); err != nil {
		return err
	}
	if l.Block2D() {
		if st.ExecSize != 1 {
			return errAt(opStart, "block2d operations are SIMD1")
		}
		if err := checkBlock2D(l, info, spec); err != nil {
			return err
		}
	}
	if (info.class == lscAtomic || info.class == lscApndctr) && spec.vec != 1 {
		return errAt(spec.sizeOff, "an atomic takes one element per address, not x%d", spec.vec)
	}
	return nil
}

// lscForm looks (sub-operation, DataSize) up in the LSC table and sets st's
// operation and type, and l.Float, from its row.
func lscForm(st *Static, l *LSC, spec *lscSpec) error {
	f, ok := lookupForm(DialectLSC, func(f *Form) bool { return f.Name == l.SubOp && f.Data == spec.size })
	if !ok {
		var sizes []string
		for _, g := range formsNamed(DialectLSC, l.SubOp) {
			sizes = append(sizes, g.Data.String())
		}
		return errAt(spec.sizeOff, "lsc_%s does not take :%s: its data is %s", l.SubOp, spec.size, joinList(sizes, "or"))
	}
	st.Op, st.Type = f.Op, f.Type
	l.Float = f.Type.Float()
	return nil
}

// lscTypes returns the data's type (the row's, set by lscForm) and the
// width of the data register's binding.
func lscTypes(st *Static, spec lscSpec) (Type, int) {
	return st.Type, spec.size.RegBits()
}

// lscElements sets the elements per lane (and a quad's channel offsets)
// and a strided access's uniform base and default lane pitch.
func lscElements(st *Static, l *LSC, info lscOpInfo, spec lscSpec) {
	quad := info.class == lscLoadQuad || info.class == lscStoreQuad
	switch {
	case quad:
		st.Elems = bits.OnesCount8(spec.chmask)
		for ch := 0; ch < 4; ch++ {
			if spec.chmask&(1<<ch) != 0 {
				st.ElemOffsets = append(st.ElemOffsets, int64(ch*spec.size.MemBytes()))
			}
		}
	case l.Block2D():
		// One element per datum moved, padding slots of the register
		// image left out (Block2DLayout).
		st.Elems = spec.blocks * spec.width * spec.height
	case info.class == lscLoadStatus:
		// LOAD_STATUS: one bit per lane over all DataElemsPerAddr
		// elements ("dest.bit[n] = MsgChEn[n] & s"), so one result per
		// lane; LSC.VecSize keeps the vector size.
		st.Elems = 1
	default:
		st.Elems = spec.vec
	}
	if info.class == lscLoadStrided || info.class == lscStoreStrided {
		st.AddrUniform = true
		if !spec.hasPitch {
			st.LanePitch = int64(spec.size.MemBytes() * spec.vec)
		}
	}
}

// lscSources binds the data sources: a store's Src1Data, an atomic's
// Src1Data and Src2Data (lscAtomicSources), an append counter's Src0Data.
func lscSources(b *builder, l *LSC, info lscOpInfo, toks []operand, spec lscSpec, memType Type, regBits, end int) error {
	st := b.st
	dataIn := func(name string, role Role) Src {
		i := b.input(name, role, regBits, memType)
		if st.Elems > 1 {
			b.st.Inputs[i].Elems = st.Elems
			b.st.Inputs[i].Transposed = spec.transposed && !l.Block2D()
		}
		return Src{In: i}
	}
	switch info.class {
	case lscStoreBlock2D:
		// Src1Data binds the whole register image the message reads,
		// padding slots included; element e comes from its slot.
		layout, regElems := l.Block2DLayout()
		i := b.input(spec.name, RoleSrcB, regBits, memType)
		b.st.Inputs[i].Elems = regElems
		for _, el := range layout {
			st.B = append(st.B, Src{In: i, Elem: el.Slot})
		}
	case lscStore, lscStoreStrided, lscStoreQuad:
		s := dataIn(spec.name, RoleSrcB)
		for e := 0; e < st.Elems; e++ {
			st.B = append(st.B, Src{In: s.In, Elem: e})
		}
	case lscAtomic:
		return lscAtomicSources(b, l, info, toks[2:], spec, memType, regBits, end)
	case lscApndctr:
		o := toks[2]
		name, err := lscSourceName(o, spec)
		if err != nil {
			return err
		}
		if isNullReg(name) {
			return errAt(o.off, "lsc_%s needs Src0Data, not %s", l.SubOp, name)
		}
		src, err := b.src(operand{text: name, off: o.off}, regBits, memType, RoleSrcB)
		if err != nil {
			return err
		}
		st.B = []Src{src}
	}
	return nil
}

// lscAtomicSources binds an atomic's Src1Data and Src2Data: as many as the
// seed's "Extra atomic arguments" column says, the rest null.
func lscAtomicSources(b *builder, l *LSC, info lscOpInfo, srcs []operand, spec lscSpec, memType Type, regBits, end int) error {
	st := b.st
	for i, o := range srcs {
		name, err := lscSourceName(o, spec)
		if err != nil {
			return err
		}
		if i < info.extra {
			if isNullReg(name) {
				return errAt(o.off, "lsc_%s needs Src%dData, not %s", l.SubOp, i+1, name)
			}
			role := RoleSrcB
			if i == 1 {
				role = RoleSrcC
			}
			src, err := b.src(operand{text: name, off: o.off}, regBits, memType, role)
			if err != nil {
				return err
			}
			// lsc_atomic_icas and lsc_atomic_fcas: Src1Data is the
			// compare value and Src2Data the new value (see
			// docs/status/lsc.md: IGC lowers cmpxchg to
			// LSC_ATOMIC_ICAS with (CmpVal, NewVal) as
			// (src1, src2), GenXLoadStoreLowering.cpp
			// createLSCAtomicCmpXchg, and its SLM emulation loop
			// BiF/Library/Atomics/Local/binop.cpp passes (orig,
			// newval) and retries while the return differs from
			// orig). So B (compare) is Src1Data, C (new) Src2Data.
			if i == 0 {
				st.B = []Src{src}
			} else {
				st.C = []Src{src}
			}
		} else if !isNullReg(name) {
			return errAt(o.off, "lsc_%s takes %d source(s); Src%dData must be null (V0, %%null), got %s",
				l.SubOp, info.extra, i+1, name)
		}
	}
	if len(srcs) < info.extra {
		return errAt(end, "lsc_%s needs %d source(s), got %d", l.SubOp, info.extra, len(srcs))
	}
	return nil
}

func validIdent(s string) bool {
	if s == "" || !isIdentByte(s[0], true) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentByte(s[i], false) {
			return false
		}
	}
	return true
}

// parseLSCExecSize reads (M1,32), (M1_NM,1) or (32).
func parseLSCExecSize(o operand) (int, error) {
	t := o.text
	if !strings.HasSuffix(t, ")") {
		return 0, errAt(o.off, "bad execution size %q", t)
	}
	inner := t[1 : len(t)-1]
	num, numOff := inner, o.off+1
	if mask, rest, ok := strings.Cut(inner, ","); ok {
		m := strings.TrimSpace(mask)
		m = strings.TrimSuffix(m, "_NM")
		if len(m) != 2 || m[0] != 'M' || m[1] < '1' || m[1] > '8' {
			return 0, errAt(o.off+1, "bad execution mask %q (M1…M8, M1_NM…M8_NM)", strings.TrimSpace(mask))
		}
		num, numOff = rest, o.off+2+len(mask)
	}
	lead := len(num) - len(strings.TrimLeft(num, " \t"))
	num = strings.TrimSpace(num)
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || n > 32 || n&(n-1) != 0 {
		return 0, errAt(numOff+lead, "execution size must be 1, 2, 4, 8, 16 or 32, got %q", num)
	}
	return n, nil
}

// lscSpec is a parsed `NAME:DataSpec` operand.
type lscSpec struct {
	name       string
	size       LSCDataSize
	sizeOff    int
	vec        int
	transposed bool
	tOff       int
	chmask     uint8
	// block2d
	blocks, width, height int
	vnni                  bool
	shapeOff, vnniOff     int
	hasPitch              bool // strided: a pitch was written
}

var lscDataOrder = []LSCDataSize{LSCD16U32H, LSCD16U32, LSCD8U32, LSCD16, LSCD32, LSCD64, LSCD8}

var lscVecSizes = map[int]bool{1: true, 2: true, 3: true, 4: true, 8: true, 16: true, 32: true, 64: true}

// parseLSCData reads NAME:DataSpec.
func parseLSCData(o operand, block2d bool) (lscSpec, error) {
	var s lscSpec
	name, spec, ok := strings.Cut(o.text, ":")
	if !ok || name == "" {
		return s, errAt(o.off, "a data operand is NAME:DataSize (e.g. V13:d32x4), got %q", o.text)
	}
	if !validIdent(name) {
		return s, errAt(o.off, "bad register name %q", name)
	}
	s.name = name
	off := o.off + len(name) + 1
	s.sizeOff = off
	for _, d := range lscDataOrder {
		if strings.HasPrefix(spec, d.String()) {
			s.size = d
			break
		}
	}
	if s.size == LSCDataInvalid {
		return s, errAt(off, "unknown data size in %q (d8 d16 d32 d64 d8u32 d16u32 d16u32h)", spec)
	}
	rest := spec[len(s.size.String()):]
	roff := off + len(s.size.String())
	s.vec = 1
	if block2d {
		return s, parseBlock2DShape(&s, rest, roff)
	}
	if strings.HasPrefix(rest, ".") {
		chs := rest[1:]
		order := "xyzw"
		last := -1
		for i := 0; i < len(chs); i++ {
			c := strings.IndexByte(order, chs[i])
			if c < 0 || c <= last {
				return s, errAt(roff+1+i, "channels are a subset of x, y, z, w in that order, got %q", chs)
			}
			last = c
			s.chmask |= 1 << c
		}
		if s.chmask == 0 {
			return s, errAt(roff, "empty channel mask")
		}
		return s, nil
	}
	if strings.HasPrefix(rest, "x") {
		j := 1
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(rest[1:j])
		if err != nil || !lscVecSizes[n] {
			return s, errAt(roff, "bad vector size %q (x1 x2 x3 x4 x8 x16 x32 x64)", rest[:j])
		}
		s.vec = n
		rest, roff = rest[j:], roff+j
	}
	if rest == "t" {
		s.transposed, s.tOff = true, roff
		rest = ""
	}
	if rest != "" {
		return s, errAt(roff, "unexpected %q after the data size", rest)
	}
	return s, nil
}

// parseBlock2DShape reads .BxWxH[nt][nt] (or .WxH for a store's single block).
func parseBlock2DShape(s *lscSpec, rest string, off int) error {
	if !strings.HasPrefix(rest, ".") {
		return errAt(off, "a block2d data operand is DataSize.BlocksxWidthxHeight[nt][nt], e.g. d8.2x16x32nn")
	}
	body := rest[1:]
	s.shapeOff = off + 1
	i := 0
	for i < len(body) && (body[i] >= '0' && body[i] <= '9' || body[i] == 'x') {
		i++
	}
	dims := strings.Split(body[:i], "x")
	flags := body[i:]
	var ns []int
	for _, d := range dims {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 {
			return errAt(off+1, "bad block2d shape %q", body[:i])
		}
		ns = append(ns, n)
	}
	switch len(ns) {
	case 2:
		s.blocks, s.width, s.height = 1, ns[0], ns[1]
	case 3:
		s.blocks, s.width, s.height = ns[0], ns[1], ns[2]
	default:
		return errAt(off+1, "bad block2d shape %q (BlocksxWidthxHeight)", body[:i])
	}
	if len(flags) > 2 || strings.Trim(flags, "nt") != "" {
		return errAt(off+1+i, "block2d flags are [nt][nt] (transpose, VNNI), got %q", flags)
	}
	if len(flags) >= 1 && flags[0] == 't' {
		s.transposed, s.tOff = true, off+1+i
	}
	if len(flags) == 2 && flags[1] == 't' {
		s.vnni, s.vnniOff = true, off+2+i
	}
	return nil
}

// lscSourceName reads an atomic source: NAME or NAME:DataSpec, whose spec
// must then match DstData's.
func lscSourceName(o operand, dst lscSpec) (string, error) {
	name, spec, ok := strings.Cut(o.text, ":")
	if !validIdent(name) {
		return "", errAt(o.off, "bad source register %q", o.text)
	}
	if ok {
		s, err := parseLSCData(o, false)
		if err != nil {
			return "", err
		}
		if s.size != dst.size || s.vec != dst.vec {
			return "", errAt(o.off+len(name)+1, "source data :%s does not match DstData's :%s", spec, dst.size)
		}
	}
	return name, nil
}

// lscSpace reads an address type: flat, bti(N), bss(N) or ss(N), and
// returns the space for the SFID and the length read.
func lscSpace(l *LSC, t string, off int, sfid string) (Space, int, error) {
	for _, at := range []string{"flat", "bti", "bss", "ss"} {
		if !strings.HasPrefix(t, at) {
			continue
		}
		l.AddrType = at
		if at == "flat" {
			if sfid == "slm" {
				return Shared, len(at), nil
			}
			return Global, len(at), nil
		}
		if len(t) <= len(at) || t[len(at)] != '(' {
			return Space{}, 0, errAt(off, "%s needs a surface in parentheses, e.g. %s(0x4)", at, at)
		}
		close := strings.IndexByte(t, ')')
		if close < 0 {
			return Space{}, 0, errAt(off, "unclosed %s(", at)
		}
		arg := t[len(at)+1 : close]
		v, err := strconv.ParseUint(strings.TrimSpace(arg), 0, 32)
		if err != nil {
			return Space{}, 0, errAt(off+len(at)+1, "the surface of %s(…) must be an immediate index to name a space, got %q", at, arg)
		}
		if sfid == "slm" {
			return Space{}, 0, errAt(off, "SLM takes flat addresses, not %s", at)
		}
		return Space{Kind: SpaceSurface, Surface: uint32(v)}, close + 1, nil
	}
	return Space{}, 0, errAt(off, "unknown address type in %q (flat, bti(N), bss(N), ss(N))", t)
}

// lscAddress reads an address operand into the Static:
// AddrType[[Scale*]Src0Addrs[+Imm]]:AddrSize, AddrType[Base[+Imm][,Pitch]]:AddrSize
// for the strided forms, or flat[Base,W,H,P,X,Y] for block2d (the seed,
// LSC_UNTYPED: Text).
func lscAddress(b *builder, l *LSC, info lscOpInfo, o operand, spec *lscSpec) error {
	st := b.st
	sp, n, err := lscSpace(l, o.text, o.off, l.SFID)
	if err != nil {
		return err
	}
	st.Space = sp
	rest := o.text[n:]
	roff := o.off + n
	if !strings.HasPrefix(rest, "[") {
		return errAt(roff, "expected [ after the address type")
	}
	close := strings.LastIndexByte(rest, ']')
	if close < 0 {
		return errAt(roff, "unclosed [")
	}
	inner, ioff := rest[1:close], roff+1
	suffix, soff := rest[close+1:], roff+close+1
	block2d := info.class == lscLoadBlock2D || info.class == lscStoreBlock2D
	if err := lscAddrSize(st, suffix, soff, block2d); err != nil {
		return err
	}
	parts, err := splitOperands(inner, ioff)
	if err != nil {
		return err
	}
	if block2d {
		return lscBlock2DAddress(b, l, o, parts)
	}
	strided := info.class == lscLoadStrided || info.class == lscStoreStrided
	if err := lscAddrPitch(st, parts, strided, ioff, spec); err != nil {
		return err
	}
	return lscAddrBase(b, parts[0])
}

// lscAddrSize reads the AddrSize suffix, :a16, :a32 or :a64, into
// st.AddrBits; block2d addresses are 64-bit, and may omit it.
func lscAddrSize(st *Static, suffix string, soff int, block2d bool) error {
	st.AddrBits = 64
	switch {
	case suffix == "" && block2d:
	case strings.HasPrefix(suffix, ":a"):
		switch suffix[2:] {
		case "16":
			st.AddrBits = 16
		case "32":
			st.AddrBits = 32
		case "64":
			st.AddrBits = 64
		default:
			return errAt(soff+1, "unknown address size %q (a16, a32, a64)", suffix[1:])
		}
		if block2d && st.AddrBits != 64 {
			return errAt(soff+1, "block2d addresses are 64-bit")
		}
	default:
		return errAt(soff, "an address ends with :a16, :a32 or :a64")
	}
	return nil
}

// lscBlock2DAddress reads block2d's flat[SurfaceBase,SurfaceWidth,
// SurfaceHeight,SurfacePitch,X,Y]: six registers, the base 64-bit.
func lscBlock2DAddress(b *builder, l *LSC, o operand, parts []operand) error {
	if l.AddrType != "flat" {
		return errAt(o.off, "block2d takes flat[SurfaceBase,SurfaceWidth,SurfaceHeight,SurfacePitch,X,Y]")
	}
	if len(parts) != 6 {
		return errAt(o.off, "block2d takes flat[SurfaceBase,SurfaceWidth,SurfaceHeight,SurfacePitch,X,Y], got %d fields", len(parts))
	}
	for i, p := range parts {
		if !validIdent(p.text) {
			return errAt(p.off, "block2d fields are registers, got %q", p.text)
		}
		bitsN := 32
		if i == 0 {
			bitsN = 64
		}
		l.Block2DIn[i] = b.input(p.text, RoleAddr, bitsN, TypeU64)
	}
	b.st.Addr = l.Block2DIn[0]
	return nil
}

// lscAddrPitch checks the number of address fields: one, or for the
// strided forms also an immediate ,Pitch, read into st.LanePitch.
func lscAddrPitch(st *Static, parts []operand, strided bool, ioff int, spec *lscSpec) error {
	if len(parts) == 2 && strided {
		pt := strings.TrimSpace(parts[1].text)
		v, err := strconv.ParseInt(pt, 0, 64)
		if err != nil {
			return errAt(parts[1].off, "the pitch must be an immediate, got %q", pt)
		}
		st.LanePitch = v
		spec.hasPitch = true
	} else if len(parts) != 1 {
		if len(parts) == 0 {
			return errAt(ioff, "empty address")
		}
		if strided {
			return errAt(parts[2%len(parts)].off, "a strided address is [Base[+Imm][,Pitch]]")
		}
		return errAt(parts[1].off, "an address is [[Scale*]Src0Addrs[+Imm]]; only lsc_*_strided take a pitch")
	}
	return nil
}

// lscAddrBase reads [Scale*]Src0Addrs[+Imm]: the scale, the address
// register and the immediate offset.
func lscAddrBase(b *builder, a operand) error {
	st := b.st
	t := a.text
	// Scale.
	if star := strings.IndexByte(t, '*'); star >= 0 {
		sc := strings.TrimSpace(t[:star])
		v, err := strconv.ParseUint(sc, 0, 16)
		if err != nil || v == 0 {
			return errAt(a.off, "the address scale must be an immediate from 1 to 65535, got %q", sc)
		}
		st.AddrScale = int64(v)
		lead := star + 1
		for lead < len(t) && (t[lead] == ' ' || t[lead] == '\t') {
			lead++
		}
		t, a.off = t[lead:], a.off+lead
	}
	name, imm := t, ""
	for i := 1; i < len(t); i++ {
		if t[i] == '+' || t[i] == '-' {
			name, imm = strings.TrimSpace(t[:i]), t[i:]
			break
		}
	}
	if !validIdent(name) {
		return errAt(a.off, "the address needs a register, got %q", name)
	}
	st.Addr = b.input(name, RoleAddr, st.AddrBits, map[int]Type{16: TypeU16, 32: TypeU32, 64: TypeU64}[st.AddrBits])
	if imm != "" {
		r := strings.ReplaceAll(imm, " ", "")
		neg := r[0] == '-'
		v, err := strconv.ParseInt(r[1:], 0, 32)
		if err != nil {
			return errAt(a.off+len(t)-len(imm), "the immediate offset must be a 32-bit integer, got %q", imm)
		}
		if neg {
			v = -v
		}
		st.AddrImm = v
	}
	return nil
}

// lscApndctrSurface reads the append counter's surface: bti(N), bss(N) or ss(N).
func lscApndctrSurface(l *LSC, st *Static, o operand) error {
	sp, n, err := lscSpace(l, o.text, o.off, l.SFID)
	if err != nil {
		return err
	}
	if sp.Kind != SpaceSurface {
		return errAt(o.off, "an append counter needs a stateful surface (bti, bss or ss), not flat")
	}
	if n != len(o.text) {
		return errAt(o.off+n, "unexpected %q after the surface", o.text[n:])
	}
	st.Space = Space{Kind: SpaceCounter, Surface: sp.Surface}
	st.AddrBits = 32
	return nil
}

// LSCGRFBytes is the register (GRF) size that block2d register layouts
// assume: 64 bytes. Block2d messages exist on Xe-HPC (PVC) and later, all
// with 64-byte registers (the seed: "half of this for DG2", which has no
// block2d; intel/llvm ESIMD lsc_load2d: "Supported platforms: PVC",
// GRFBlockPitch = roundUpNextMultiple<64 / sizeof(T), GRFBlockSize>).
const LSCGRFBytes = 64

// lscBlock2DMaxRegs is the most registers one block2d message moves: the
// send descriptor's 5-bit data length (IGC visa/VisaToG4/TranslateSendLsc.cpp,
// lscBlock2dComputeDataRegs: "Destination length of 32 is encoded as 31").
const lscBlock2DMaxRegs = 32

// Block2DElem is one datum of a block2d access: where it sits in the data
// register image and where it comes from in the 2D surface.
type Block2DElem struct {
	Slot     int // index in the register image, in elements of the data size
	Block    int // b: the array block, 0..Blocks-1
	Row, Col int // y and x within the block, in elements
}

// Block2DLayout is the register layout of a block2d access, from the
// seed's LOAD_BLOCK2D pseudo-code (its four transpose/VNNI cases): the
// data in register order with the padding slots left out, and the size of
// the whole register image (padding included) in elements. With
// T = DataSize bytes, epd = 4/T (elements per dword) and epr =
// LSCGRFBytes/T (elements per register):
//
//	grf_row_pitch   = round_up_pow2(transposed ? H : W)
//	grf_block_size  = grf_row_pitch * (transposed ? W : H)
//	grf_block_pitch = round_up(grf_block_size, epr)
//	nn: slot b*pitch + y*row_pitch + x                    <- (b, y, x)
//	nt: slot b*pitch + y0*row_pitch + x*epd + i           <- (b, y0+i, x), y0 = 0, epd, …
//	tn: slot b*pitch + x*row_pitch + y                    <- (b, y, x)
//	tt: slot b*pitch + x0*row_pitch + y*epd + i           <- (b, y, x0+i), x0 = 0, epd, …
//
// One decision where the pseudo-code is incomplete: with VNNI, a group of
// epd rows (nt) or columns (tt) that runs past H (W) is padded with zeros
// rather than read past the block, and grf_block_size counts the rounded-up
// rows (columns). SPV_INTEL_2d_block_io, "Mapping Block Data to
// Invocations": "For OpSubgroup2DBlockLoadTransformINTEL, the Block Height
// is padded to a multiple of four for 1-byte elements, and a multiple of
// two for 2-byte elements. For loads, the value of any padded elements is
// zero." (ESIMD lsc_load2d sizes the result
// roundUpNextMultiple(BlockHeight, 4 / sizeof(T)) * getNextPowerOf2(BlockWidth)
// likewise). When H (W) is a multiple of epd this is the seed exactly.
//
// Only d8, d16, d32 and d64 have a layout; the parser refuses VNNI on d64
// (epd would be 0).
func (l *LSC) Block2DLayout() ([]Block2DElem, int) {
	rowPitch, blockPitch, epd := l.block2DPitches()
	if blockPitch == 0 {
		return nil, 0
	}
	b, w, h := l.Blocks, l.BlockWidth, l.BlockHeight
	out := make([]Block2DElem, 0, b*w*h)
	for blk := 0; blk < b; blk++ {
		base := blk * blockPitch
		switch {
		case !l.Transposed && !l.VNNI:
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					out = append(out, Block2DElem{base + y*rowPitch + x, blk, y, x})
				}
			}
		case !l.Transposed && l.VNNI:
			for y0 := 0; y0 < h; y0 += epd {
				for x := 0; x < w; x++ {
					for i := 0; i < epd && y0+i < h; i++ {
						out = append(out, Block2DElem{base + y0*rowPitch + x*epd + i, blk, y0 + i, x})
					}
				}
			}
		case l.Transposed && !l.VNNI:
			for x := 0; x < w; x++ {
				for y := 0; y < h; y++ {
					out = append(out, Block2DElem{base + x*rowPitch + y, blk, y, x})
				}
			}
		default: // transposed and VNNI
			for x0 := 0; x0 < w; x0 += epd {
				for y := 0; y < h; y++ {
					for i := 0; i < epd && x0+i < w; i++ {
						out = append(out, Block2DElem{base + x0*rowPitch + y*epd + i, blk, y, x0 + i})
					}
				}
			}
		}
	}
	return out, b * blockPitch
}

// block2DPitches is the register row pitch and block pitch of a block2d
// shape, in elements, and the elements per dword; all 0 for a shape out
// of the seed's field ranges (Blocks:ub, BlockWidth:uw, BlockHeight:uw).
func (l *LSC) block2DPitches() (rowPitch, blockPitch, epd int) {
	t := l.Data.MemBytes()
	if t == 0 || l.Blocks < 1 || l.Blocks > 0xff || l.BlockWidth < 1 || l.BlockWidth > 0xffff ||
		l.BlockHeight < 1 || l.BlockHeight > 0xffff {
		return 0, 0, 0
	}
	epd = max(4/t, 1)
	rowSize, rows := l.BlockWidth, l.BlockHeight
	if l.Transposed {
		rowSize, rows = l.BlockHeight, l.BlockWidth
	}
	rowPitch = ceilPow2(rowSize)
	if l.VNNI {
		rows = roundUpTo(rows, epd)
	}
	return rowPitch, roundUpTo(rowPitch*rows, LSCGRFBytes/t), epd
}

func ceilPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

func roundUpTo(n, m int) int { return (n + m - 1) / m * m }

// checkBlock2D checks a block2d shape against the seed and records it in l.
func checkBlock2D(l *LSC, info lscOpInfo, spec *lscSpec) error {
	// The data size is checked by lscForm: d8, d16, d32, d64 (the seed's
	// LOAD_BLOCK2D: "let T be the element data type (e.g. uint32_t for
	// d32)"; the conversions have no element type there, and ESIMD's
	// lsc_load2d/lsc_store2d take only u8, u16, u32, u64).
	if spec.vnni && spec.size == LSCD64 {
		// elems_per_dword = 4/sizeof(T) is 0 for d64: the seed's VNNI
		// loops never advance. ESIMD: "VNNI transform is supported only
		// for data size U8 or U16".
		return errAt(spec.vnniOff, "VNNI packs elements into dwords: not for d64")
	}
	if info.class == lscStoreBlock2D && spec.blocks != 1 {
		// STORE_BLOCK2D: "only a single block is permitted".
		return errAt(spec.shapeOff, "lsc_store_block2d stores a single block, not %d", spec.blocks)
	}
	l.Blocks, l.BlockWidth, l.BlockHeight, l.VNNI = spec.blocks, spec.width, spec.height, spec.vnni
	l.Data, l.Transposed = spec.size, spec.transposed
	_, pitch, _ := l.block2DPitches()
	if pitch == 0 {
		return errAt(spec.shapeOff, "block2d %dx%dx%d is out of the seed's field ranges (Blocks:ub, BlockWidth:uw, BlockHeight:uw)",
			spec.blocks, spec.width, spec.height)
	}
	if bytes := l.Blocks * pitch * spec.size.MemBytes(); bytes > lscBlock2DMaxRegs*LSCGRFBytes {
		return errAt(spec.shapeOff, "block2d %dx%dx%d of %s needs more than the %d registers (%d bytes) one message moves",
			spec.blocks, spec.width, spec.height, spec.size, lscBlock2DMaxRegs, lscBlock2DMaxRegs*LSCGRFBytes)
	}
	return nil
}
