package trace

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
)

// MaxLineBytes bounds one `.tasm` line, so a file without newlines cannot
// make the reader buffer without limit.
const MaxLineBytes = 1 << 20

// TextReader reads a `.tasm` trace (docs/TASM.md) as a Source.
// Directives before the first instruction make the Header. A .init or
// .region after it is a directive record (Inst.Dir) at its place in trace
// order; .window must come before the first instruction. A .cluster is a
// directive record wherever it stands, and ends the header as the first
// instruction does.
//
// It cuts its input into chunks of whole lines and parses them on
// goroutines of its own, one a core, ahead of Next (text_parse.go): each
// line on its own, as far as a line alone decides (its instruction text,
// its bindings, the values it binds and reads). Next then goes through the
// lines in trace order and does what depends on the lines before: the
// .group and .warp context, the bindings a line reads from earlier lines
// of its context, which line's instruction text is the first of its kind,
// and the first error. At most a few chunks are in flight, so the memory it
// needs does not grow with the trace, beyond the bindings of every context
// (TASM.md). An input of one chunk is parsed on the caller's goroutine.
//
// Unlike the binary reader's, every record Next returns is its own and
// stays valid: its *Inst, Vals and lists are never reused.
type TextReader struct {
	name string
	hdr  Header
	pipe *textPipe  // nil for an input of one chunk, and once the reader stopped
	cur  *textChunk // the chunk being handed out
	at   int        // its next record
	err  error      // sticky: io.EOF or the first error

	seq     uint64
	group   int64
	warp    int64
	started bool
	binds   *bindings // every context's
	statics map[string]*Static
	memoSt  *Static // memo: the last line's parsed Static and its canonical one
	memoCan *Static
}

// TextOption configures a TextReader.
type TextOption func(*textOptions)

// WithTextFile says that the text the reader reads is f's, from its first
// byte: as when r reads f from its start, or a bufio.Reader on it. Of a
// line whose bindings later lines of its context may read, the reader then
// keeps where they stand in f rather than a copy, and reads them from f
// again when a later line reads one. Its memory then does not grow with
// the values a trace binds, only with its contexts. f must not change
// while the reader reads it, and must allow ReadAt while r reads (an
// *os.File does).
func WithTextFile(f io.ReaderAt) TextOption {
	return func(o *textOptions) { o.file = f }
}

// textOptions tune the reader; tests also use them to cut a small input
// into many chunks.
type textOptions struct {
	file    io.ReaderAt
	chunk   int // bytes read a chunk (whole lines are parsed together)
	workers int // parsing goroutines; 0: one a core
	depth   int // chunks in flight beyond the one being handed out; 0: two a worker
}

// NewTextReader reads the header (every directive before the first
// instruction) and returns a reader positioned at the first instruction.
// name is used in error messages. The reader's goroutines end at the end
// of the input, at its first error, on Close, or when the reader is
// dropped unreachable.
func NewTextReader(r io.Reader, name string, opts ...TextOption) (*TextReader, error) {
	var o textOptions
	for _, opt := range opts {
		opt(&o)
	}
	return newTextReader(r, name, o)
}

func newTextReader(r io.Reader, name string, o textOptions) (*TextReader, error) {
	if o.chunk <= 0 {
		o.chunk = 256 << 10
	}
	o.chunk = min(o.chunk, MaxLineBytes/2)
	if o.workers <= 0 {
		o.workers = min(runtime.GOMAXPROCS(0), 8)
	}
	if o.depth <= 0 {
		o.depth = 2 * o.workers
	}
	names := &nameTable{m: map[string]uint32{}}
	tr := &TextReader{name: name, binds: newBindings(o.file, names), statics: map[string]*Static{}}
	ck := &chunker{r: r, name: name, size: o.chunk}
	first := ck.next()
	statics := &staticTable{m: map[string]*Static{}}
	if ck.done {
		// One chunk holds the whole input: no goroutines.
		if first != nil {
			newTextWorker(name, statics, names, o.file != nil).parse(first)
			tr.cur = first
		}
	} else {
		tr.pipe = startTextPipe(ck, first, o, statics, names)
		runtime.AddCleanup(tr, (*textPipe).stop, tr.pipe)
	}
	for {
		rec, err := tr.peek()
		if err == io.EOF {
			return tr, nil
		}
		if err != nil {
			tr.Close()
			return nil, err
		}
		// Before the first instruction, a directive is a line that starts
		// with '.' at its first column; an indented one is read as Next
		// reads it.
		if rec.kind != recDir || rec.lead != 0 || rec.dir.what == dirCluster {
			return tr, nil // a .cluster is a record, as an instruction is
		}
		tr.at++
		d, err := tr.directive(rec)
		if err != nil {
			tr.Close()
			return nil, err
		}
		if d != nil {
			tr.hdr.add(d)
		}
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

// NextBlock fails: a text reader does not declare CapBlock.
func (tr *TextReader) NextBlock() (*Block, *Inst, error) { return NoCaps{}.NextBlock() }

// Close stops the reader's goroutines and waits for those that parse;
// the one reading the input returns when its Read does, without reading
// more. After Close, Next returns an error. Close must not run
// concurrently with Next; it may be called more than once. It does not
// close the input.
func (tr *TextReader) Close() error {
	if tr.err == nil {
		tr.err = fmt.Errorf("%s: the text reader is closed", tr.name)
	}
	tr.stop()
	return nil
}

func (tr *TextReader) stop() {
	if p := tr.pipe; p != nil {
		p.stop()
		p.wg.Wait()
		tr.pipe = nil
	}
	tr.cur = nil
}

// fail makes err sticky and stops the goroutines.
func (tr *TextReader) fail(err error) error {
	tr.err = err
	tr.stop()
	return err
}

// peek returns the next parsed line without consuming it, or the error
// that ends the input at that point (io.EOF at its end).
func (tr *TextReader) peek() (*lineRec, error) {
	for {
		if c := tr.cur; c != nil {
			if tr.at < len(c.recs) {
				return &c.recs[tr.at], nil
			}
			if c.err != nil {
				return nil, c.err
			}
			tr.cur = nil
			if tr.pipe != nil {
				// Nothing that the reader keeps or hands out holds the
				// chunk's text or records: the chunker may use them again.
				select {
				case tr.pipe.free <- c:
				default:
				}
			}
		}
		if tr.pipe == nil {
			return nil, io.EOF
		}
		c, ok := <-tr.pipe.queue
		if !ok {
			tr.stop()
			return nil, io.EOF
		}
		<-c.done
		tr.cur, tr.at = c, 0
	}
}

// Next returns the next instruction, or io.EOF.
func (tr *TextReader) Next() (*Inst, error) {
	if tr.err != nil {
		return nil, tr.err
	}
	for {
		rec, err := tr.peek()
		if err != nil {
			return nil, tr.fail(err)
		}
		tr.at++
		if rec.kind == recDir {
			d, err := tr.directive(rec)
			if err != nil {
				return nil, tr.fail(err)
			}
			if d != nil {
				return &Inst{Seq: tr.seq, Line: rec.line, Group: tr.group, Warp: tr.warp, Dir: d}, nil
			}
			continue
		}
		tr.started = true
		in, err := tr.instruction(rec)
		if err != nil {
			return nil, tr.fail(err)
		}
		return in, nil
	}
}

// directive applies a parsed directive line to the reader's state: .group,
// .warp and .window change it; .region and .init are returned.
func (tr *TextReader) directive(r *lineRec) (*Directive, error) {
	d := &r.dir
	if d.what == dirWindow {
		if tr.started {
			return nil, r.at(tr.name).errf(d.col0, ".window must come before the first instruction")
		}
		if r.err != nil {
			return nil, r.err
		}
		tr.hdr.Windows = append(tr.hdr.Windows, d.window)
		return nil, nil
	}
	if d.what == dirAddressOnly {
		if tr.started {
			return nil, r.at(tr.name).errf(d.col0, ".addresses-only must come before the first instruction")
		}
		if r.err != nil {
			return nil, r.err
		}
		tr.hdr.AddressOnly = true
		return nil, nil
	}
	if r.err != nil {
		return nil, r.err
	}
	switch d.what {
	case dirGroup:
		tr.group = d.n
	case dirWarp:
		tr.warp = d.n
	case dirInit:
		if d.d.Init.Space.PerGroup() {
			d.d.Init.Group = tr.group
		}
		return d.d, nil
	case dirRegion:
		return d.d, nil
	case dirCluster:
		tr.started = true // it ends the header (Directive)
		return &Directive{Cluster: &Cluster{Group: tr.group, ID: d.n}}, nil
	}
	return nil, nil
}

// instruction finishes a parsed instruction line in its context.
func (tr *TextReader) instruction(r *lineRec) (*Inst, error) {
	// The first line with an instruction text decides its Static; later
	// lines with the same text share it, whatever their own parse gave.
	var st *Static
	if r.st != nil && r.st == tr.memoSt {
		st = tr.memoCan
	} else {
		st = tr.statics[r.key]
		if st == nil {
			if r.st == nil {
				return nil, r.err
			}
			st = r.st
			tr.statics[strings.Clone(r.key)] = st
		}
		if r.st != nil {
			tr.memoSt, tr.memoCan = r.st, st
		}
	}
	if st != r.st || r.slow || tr.hdr.AddressOnly {
		// An address-only trace's data inputs carry no value: the line's
		// own parse read them as any trace's (it could not know).
		return tr.slowInstruction(r, st)
	}
	if r.err != nil {
		return nil, r.err
	}
	in := r.in
	if r.bind.any() {
		tr.binds.set(tr.group, tr.warp, r.line, &r.bind)
	}
	if r.fromCtx != 0 || r.errIn >= 0 {
		for i := range st.Inputs {
			if i == r.errIn {
				return nil, r.inErr
			}
			if r.fromCtx&(1<<uint(i)) == 0 {
				continue
			}
			v, err := tr.bound(st, i, r, nil)
			if err != nil {
				return nil, err
			}
			in.Vals[i] = v
		}
	}
	in.Seq, in.Group, in.Warp = tr.seq, tr.group, tr.warp
	tr.seq++
	return in, nil
}

// slowInstruction reads an instruction line whole, as one line alone, with
// the Static st its text has in this trace: for a line whose own parse
// could not be used.
func (tr *TextReader) slowInstruction(r *lineRec, st *Static) (*Inst, error) {
	at := r.at(tr.name)
	instText, bindText, hasBind := strings.Cut(r.text, "|")
	var own []ownBind
	in := &Inst{Seq: tr.seq, Line: r.line, Static: st, Group: tr.group, Warp: tr.warp, Mask: st.ExecMask()}
	if hasBind {
		bindText = strings.Clone(bindText) // the bindings may keep it
		base := len(instText) + 1
		ws, offs := splitBindings(bindText, base)
		for i, w := range ws {
			name, val, ok := strings.Cut(w, "=")
			if !ok || name == "" || val == "" {
				return nil, at.errf(offs[i]+1, "a binding is NAME=VALUE, got %q", w)
			}
			if name == "mask" {
				m, err := strconv.ParseUint(val, 0, 32)
				if err != nil {
					return nil, at.errf(offs[i]+len(name)+2, "mask= takes a 32-bit lane mask, got %q", val)
				}
				in.Mask = uint32(m) & st.ExecMask()
				continue
			}
			own = append(own, ownBind{name: name, text: val, col: offs[i] + len(name) + 2})
		}
		bl := bindLine{off: r.off + int64(len(instText)+1), n: len(bindText), text: bindText}
		for _, b := range own {
			bl.add(tr.binds.names.id(b.name))
		}
		if bl.any() {
			tr.binds.set(tr.group, tr.warp, r.line, &bl)
		}
	}
	in.Vals = make([]Vector, len(st.Inputs))
	for i := range st.Inputs {
		if inp := &st.Inputs[i]; !tr.hdr.Valued(inp) {
			// An address-only trace: its data inputs carry no value.
			for _, b := range own {
				if b.name == inp.Name {
					return nil, at.errf(b.col, "%s is data, and this trace carries addresses only (.addresses-only): bind only addresses and predicates", inp.Name)
				}
			}
			continue
		}
		v, err := tr.bound(st, i, r, own)
		if err != nil {
			return nil, err
		}
		in.Vals[i] = v
	}
	tr.seq++
	return in, nil
}

// bound reads input i of st from the binding its context holds; own are
// the bindings of the line itself, for a line read whole.
func (tr *TextReader) bound(st *Static, i int, r *lineRec, own []ownBind) (Vector, error) {
	inp := &st.Inputs[i]
	text, line, col := "", 0, 0
	for j := len(own) - 1; j >= 0; j-- {
		if own[j].name == inp.Name {
			text, line, col = own[j].text, r.line, own[j].col
			break
		}
	}
	if line == 0 {
		var ok bool
		var err error
		text, line, ok, err = tr.binds.get(tr.group, tr.warp, inp.Name)
		if err != nil {
			return Vector{}, fmt.Errorf("%s: line %d: reading %s again from the file: %w", tr.name, r.line, inp.Name, err)
		}
		if !ok {
			instText, _, _ := strings.Cut(r.text, "|")
			return Vector{}, r.at(tr.name).errf(nameColumn(instText, inp.Name), "%s reads %s, which is bound nowhere in group %d warp %d", st.Text, inp.Name, tr.group, tr.warp)
		}
	}
	v, err := parseValue(text, inp, inp.Count(st.ExecSize), nil)
	if err != nil {
		if line == r.line {
			return Vector{}, r.at(tr.name).errf(col, "%s=%s: %v", inp.Name, text, err)
		}
		return Vector{}, r.at(tr.name).errf(0, "%s=%s (bound on line %d): %v", inp.Name, text, line, err)
	}
	return v, nil
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
	n := len(s)
	for n > 0 && (s[n-1] == ' ' || s[n-1] == '\t' || s[n-1] == '\r') {
		n--
	}
	return s[:n]
}

// lineAt names a line for its errors.
type lineAt struct {
	name string
	line int
}

func (a lineAt) errf(col int, format string, args ...any) error {
	return &SyntaxError{File: a.name, Line: a.line, Col: col, Msg: fmt.Sprintf(format, args...)}
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

// Directive kinds of a parsed directive line.
const (
	dirNone = iota // an error before the kind was known
	dirGroup
	dirWarp
	dirWindow
	dirRegion
	dirInit
	dirAddressOnly // .addresses-only
	dirCluster
)

// dirLine is a directive line as the line alone gives it; the reader
// applies it in its context (TextReader.directive).
type dirLine struct {
	what   uint8
	col0   int        // column of the directive's name
	n      int64      // .group, .warp, .cluster
	window Window     // .window
	d      *Directive // .region, .init (Init.Group is set in context)
}

// parseDirective reads one directive line into r.dir, or its error into
// r.err. A .window with an error still says it is a .window: that it
// stands after the first instruction is the error to report first.
func parseDirective(r *lineRec, at lineAt, text string) {
	d := &r.dir
	if n, what, ok := fastCounter(text); ok {
		d.what, d.n = what, n
		return
	}
	ws, offs := fields(text)
	col := func(i int) int { return offs[i] + 1 }
	d.col0 = col(0)
	var err error
	switch ws[0] {
	case ".group", ".warp":
		d.what = dirGroup
		if ws[0] == ".warp" {
			d.what = dirWarp
		}
		d.n, err = counter(at, ws, col)
	case ".cluster":
		d.what = dirCluster
		d.n, err = counter(at, ws, col)
	case ".window":
		d.what = dirWindow
		d.window, err = window(at, ws, col)
	case ".addresses-only":
		d.what = dirAddressOnly
		if len(ws) != 1 {
			err = at.errf(col(1), ".addresses-only takes nothing after it")
		}
	case ".region", ".init":
		d.d, err = memoryDirective(at, ws, col)
		if err == nil {
			d.what = dirRegion
			if d.d.Init != nil {
				d.what = dirInit
			}
		}
	default:
		err = at.errf(col(0), "unknown directive %s (.region, .init, .window, .addresses-only, .group, .warp, .cluster)", ws[0])
	}
	r.err = err
}

// fastCounter reads a well-formed `.group N` or `.warp N` line; any other
// line is left to the general path and its errors.
func fastCounter(text string) (n int64, what uint8, ok bool) {
	t := text[blanks(text):]
	var rest string
	switch {
	case strings.HasPrefix(t, ".warp"):
		rest, what = t[len(".warp"):], dirWarp
	case strings.HasPrefix(t, ".group"):
		rest, what = t[len(".group"):], dirGroup
	default:
		return 0, 0, false
	}
	num := rest[blanks(rest):]
	if len(num) == len(rest) || num == "" || strings.IndexByte(num, ' ') >= 0 || strings.IndexByte(num, '\t') >= 0 {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(num, 0, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, 0, false
	}
	return n, what, true
}

// counter reads .group N or .warp N (the group or warp of the
// instructions that follow), or .cluster N.
func counter(at lineAt, ws []string, col func(int) int) (int64, error) {
	if len(ws) != 2 {
		return 0, at.errf(col(0), "%s takes one number", ws[0])
	}
	n, err := strconv.ParseInt(ws[1], 0, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, at.errf(col(1), "%s needs a number from 0 to 2^40, got %q", ws[0], ws[1])
	}
	return n, nil
}

// window reads .window shared|local BASE SIZE.
func window(at lineAt, ws []string, col func(int) int) (Window, error) {
	if len(ws) != 4 || (ws[1] != "shared" && ws[1] != "local") {
		return Window{}, at.errf(col(0), ".window takes shared|local BASE SIZE")
	}
	base, size, err := extent(at, ws, col, "window")
	if err != nil {
		return Window{}, err
	}
	kind := "shared"
	if ws[1] == "local" {
		kind = "local"
	}
	return Window{Kind: kind, Base: base, Size: size}, nil
}

// memoryDirective reads .region SPACE BASE SIZE or .init SPACE ADDR TYPE
// v0 v1 ….
func memoryDirective(at lineAt, ws []string, col func(int) int) (*Directive, error) {
	if len(ws) < 2 {
		return nil, at.errf(col(0), "%s needs a space", ws[0])
	}
	sp, ok := ParseSpace(ws[1])
	if !ok {
		return nil, at.errf(col(1), "unknown space %q (global, shared, bti(N))", ws[1])
	}
	if ws[0] == ".region" {
		if len(ws) != 4 {
			return nil, at.errf(col(0), ".region takes SPACE BASE SIZE")
		}
		base, size, err := extent(at, ws, col, "region")
		if err != nil {
			return nil, err
		}
		return &Directive{Region: &Region{Space: sp, Base: base, Size: size}}, nil
	}
	return initDirective(at, ws, col, sp)
}

// extent reads a region's or window's BASE SIZE from ws[2] and ws[3]: a
// nonempty range that ends below 2^64.
func extent(at lineAt, ws []string, col func(int) int, what string) (base, size uint64, err error) {
	base, err = strconv.ParseUint(ws[2], 0, 64)
	if err != nil {
		return 0, 0, at.errf(col(2), "bad %s base %q", what, ws[2])
	}
	size, err = strconv.ParseUint(ws[3], 0, 64)
	if err != nil || size == 0 || base+size-1 < base {
		return 0, 0, at.errf(col(3), "bad %s size %q (must be >0 and end below 2^64)", what, ws[3])
	}
	return base, size, nil
}

// initDirective reads .init SPACE ADDR TYPE v0 v1 …: host writes,
// little-endian. For a per-group space the reader sets the group.
func initDirective(at lineAt, ws []string, col func(int) int, sp Space) (*Directive, error) {
	if len(ws) < 5 {
		return nil, at.errf(col(0), ".init takes SPACE ADDR TYPE v0 v1 …")
	}
	addr, err := strconv.ParseUint(ws[2], 0, 64)
	if err != nil {
		return nil, at.errf(col(2), "bad address %q", ws[2])
	}
	typ, ok := ParseType(ws[3])
	if !ok {
		return nil, at.errf(col(3), "unknown .init type %q (u8 u16 u32 u64 s32 s64 f16 bf16 f32 f64 b128)", ws[3])
	}
	size := typ.Size()
	n := uint64(len(ws) - 4)
	if addr+n*uint64(size)-1 < addr {
		return nil, at.errf(col(2), ".init runs past the end of the address space")
	}
	data := make([]byte, 0, int(n)*size)
	for i := 4; i < len(ws); i++ {
		lo, hi, err := parseImm(ws[i], size*8, typ)
		if err != nil {
			return nil, at.errf(col(i), "%v", err)
		}
		var buf [16]byte
		binary.LittleEndian.PutUint64(buf[:8], lo)
		binary.LittleEndian.PutUint64(buf[8:], hi)
		data = append(data, buf[:size]...)
	}
	return &Directive{Init: &Init{Space: sp, Group: -1, Addr: addr, Type: typ, Data: data}}, nil
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
