package trace

import (
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// This file is the part of the text reader that works ahead of Next: it
// cuts the input into chunks of whole lines and parses each line as far as
// the line alone decides.

// textChunk is a run of whole lines of the input and, once done is closed,
// what its lines parse to.
type textChunk struct {
	text string // the lines; the last lacks its '\n' only at the end of the input
	buf  []byte // text's storage
	off  int64  // bytes of the input before the chunk
	base int    // lines before the chunk
	err  error  // what ends the input after these lines (not io.EOF)
	done chan struct{}
	recs []lineRec // its non-blank lines, in order
}

// Kinds of a parsed line.
const (
	recInst = iota
	recDir
)

// lineRec is one non-blank line, parsed as far as the line alone decides.
type lineRec struct {
	kind uint8
	lead int    // blanks before the first word
	line int    // 1-based
	off  int64  // where the line starts in the input
	text string // the line, its comment cut
	err  error  // instruction: its text's error or its first binding's; directive: its error
	dir  dirLine

	// An instruction: in holds its Static (st), line, mask, and the
	// values of the inputs bound on the line; the reader fills in the
	// rest. An input the line does not bind is in fromCtx (bit i for
	// input i), for the reader to take from an earlier line of its
	// context; the first input the line binds to a value that does not
	// parse is errIn, with its error inErr, or -1.
	key     string  // the instruction text, trimmed
	st      *Static // nil when the text does not parse
	in      *Inst
	bind    bindLine // what the line binds, for later lines
	fromCtx uint64
	errIn   int
	inErr   error
	slow    bool // left to the reader whole (more inputs than fromCtx holds)
}

func (r *lineRec) at(name string) lineAt { return lineAt{name, r.line} }

// chunker cuts the input into chunks of whole lines.
type chunker struct {
	r       io.Reader
	name    string
	size    int             // bytes read a chunk
	free    chan *textChunk // chunks done with, to read into again (textPipe)
	carry   []byte          // a line begun in the last chunk's read
	off     int64           // bytes before carry
	lines   int             // lines before carry
	empties int             // reads in a row that returned nothing
	err     error           // what ended the input: io.EOF or a read error
	done    bool            // the last chunk has been cut
}

// chunk returns an empty chunk whose buffer holds at least n bytes, with
// the storage of one done with if it can.
func (k *chunker) chunk(n int) *textChunk {
	select {
	case c := <-k.free:
		if cap(c.buf) >= n {
			*c = textChunk{buf: c.buf[:0], recs: c.recs[:0]}
			return c
		}
	default:
	}
	return &textChunk{buf: make([]byte, 0, n)}
}

// next returns the next chunk, or nil after the last. A line longer than
// MaxLineBytes or a read error ends the input: the chunk with the lines
// before it carries the error.
func (k *chunker) next() *textChunk {
	if k.done {
		return nil
	}
	// Each round reads at most want-len(buf) bytes: less than
	// MaxLineBytes, so that only the line begun before it can be too long.
	want := len(k.carry) + k.size
	c := k.chunk(want)
	buf := append(c.buf, k.carry...)
	for {
		for k.err == nil && len(buf) < want {
			n, err := k.r.Read(buf[len(buf):want])
			if n < 0 || n > want-len(buf) {
				n, err = 0, fmt.Errorf("trace: reader returned an invalid count %d", n)
			}
			buf = buf[:len(buf)+n]
			switch {
			case err != nil:
				k.err = err
			case n > 0:
				k.empties = 0
			default:
				if k.empties++; k.empties >= 100 {
					k.err = io.ErrNoProgress
				}
			}
		}
		if first := bytes.IndexByte(buf, '\n'); first >= MaxLineBytes || first < 0 && len(buf) >= MaxLineBytes {
			k.done = true
			return &textChunk{off: k.off, base: k.lines, done: make(chan struct{}), err: &SyntaxError{File: k.name, Line: k.lines + 1, Msg: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)}}
		}
		if k.err != nil {
			k.done = true
			c.text, c.buf, c.off, c.base, c.done = bytesString(buf), buf, k.off, k.lines, make(chan struct{})
			if k.err != io.EOF {
				n := bytes.Count(buf, []byte{'\n'})
				if len(buf) > 0 && buf[len(buf)-1] != '\n' {
					n++
				}
				c.err = fmt.Errorf("%s: line %d: %w", k.name, k.lines+n+1, k.err)
			} else if len(buf) == 0 {
				return nil
			}
			return c
		}
		last := bytes.LastIndexByte(buf, '\n')
		if last < 0 {
			// One line so far, shorter than MaxLineBytes: read as much again.
			want = 2 * len(buf)
			if cap(buf) < want {
				grown := make([]byte, len(buf), want)
				copy(grown, buf)
				buf = grown
			}
			continue
		}
		k.carry = append(k.carry[:0], buf[last+1:]...)
		buf = buf[:last+1]
		c.text, c.buf, c.off, c.base, c.done = bytesString(buf), buf, k.off, k.lines, make(chan struct{})
		k.off += int64(len(buf))
		k.lines += bytes.Count(buf, []byte{'\n'})
		return c
	}
}

// bytesString views b as a string. b is written again only once the
// chunk is done with (TextReader.peek): then no string of it is left that
// anything reads or can reach.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// textPipe runs a chunker and the parsing workers ahead of the reader.
// Its goroutines never hold the TextReader, so that a reader dropped
// unreachable stops them.
type textPipe struct {
	queue chan *textChunk // chunks in trace order; closed after the last
	free  chan *textChunk // chunks done with, for the chunker
	quit  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup // the workers
}

func startTextPipe(ck *chunker, first *textChunk, o textOptions, statics *staticTable, names *nameTable) *textPipe {
	p := &textPipe{queue: make(chan *textChunk, o.depth), free: make(chan *textChunk, o.depth+2), quit: make(chan struct{})}
	ck.free = p.free
	work := make(chan *textChunk, o.depth+1)
	go p.read(ck, first, work)
	p.wg.Add(o.workers)
	for range o.workers {
		go p.work(newTextWorker(ck.name, statics, names, o.file != nil), work)
	}
	return p
}

func (p *textPipe) stop() { p.once.Do(func() { close(p.quit) }) }

// read cuts chunks and hands each to the workers and, in order, to the
// reader.
func (p *textPipe) read(ck *chunker, c *textChunk, work chan<- *textChunk) {
	defer close(work)
	for ; c != nil; c = ck.next() {
		select {
		case p.queue <- c:
		case <-p.quit:
			return
		}
		work <- c // never blocks: it holds as many as the queue and one more
	}
	close(p.queue)
}

func (p *textPipe) work(w *textWorker, work <-chan *textChunk) {
	defer p.wg.Done()
	for {
		select {
		case c, ok := <-work:
			if !ok {
				return
			}
			w.parse(c)
		case <-p.quit:
			return
		}
	}
}

// staticTable holds the Static of every instruction text whose parse
// depends on the text alone, so that every worker shares one.
type staticTable struct {
	mu sync.Mutex
	m  map[string]*Static
}

// intern returns the Static of key, st if it is the first.
func (t *staticTable) intern(key string, st *Static) *Static {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.m[key]; s != nil {
		return s
	}
	t.m[key] = st
	return st
}

// textWorker parses chunks, one at a time.
type textWorker struct {
	name    string
	statics *staticTable
	local   map[string]*Static // this worker's memo of statics
	// inFile: the reader reads a value kept for later lines from the
	// input again (WithTextFile), so a line's bindings need no copy.
	inFile bool
	names  *nameTable
	ids    map[string]uint32 // this worker's memo of names' ids
	// lineBinds is the bindings of the line being parsed.
	lineBinds []ownBind
	slabs
}

func newTextWorker(name string, statics *staticTable, names *nameTable, inFile bool) *textWorker {
	return &textWorker{name: name, statics: statics, local: map[string]*Static{}, inFile: inFile, names: names, ids: map[string]uint32{}}
}

// nameID returns the number that stands for a binding's name.
func (w *textWorker) nameID(name string) uint32 {
	id, ok := w.ids[name]
	if !ok {
		id = w.names.id(name)
		w.ids[strings.Clone(name)] = id
	}
	return id
}

// parse parses the lines of c and closes c.done.
func (w *textWorker) parse(c *textChunk) {
	defer close(c.done)
	text := c.text
	if c.recs == nil {
		c.recs = make([]lineRec, 0, len(text)/256+1)
	}
	line := c.base
	for pos := 0; pos < len(text); {
		end := strings.IndexByte(text[pos:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += pos
		}
		raw := text[pos:end]
		pos, line = end+1, line+1
		t := stripComment(raw)
		if t == "" || !(t[0] > ' ' && t[0] < 0x80) && strings.TrimSpace(t) == "" {
			continue
		}
		lead := 0
		for t[lead] == ' ' || t[lead] == '\t' {
			lead++
		}
		c.recs = append(c.recs, lineRec{lead: lead, line: line, off: c.off + int64(end-len(raw)), text: t, errIn: -1})
		r := &c.recs[len(c.recs)-1]
		at := lineAt{w.name, line}
		if t[lead] == '.' {
			r.kind = recDir
			parseDirective(r, at, t)
			continue
		}
		w.instruction(r, at)
	}
}

// instruction parses an instruction line: its Static, its bindings and the
// values of the inputs it binds.
func (w *textWorker) instruction(r *lineRec, at lineAt) {
	instText, bindText, hasBind := strings.Cut(r.text, "|")
	lead := blanks(instText)
	r.key = strings.TrimSpace(instText)
	st := w.local[r.key]
	if st == nil {
		body := instText[lead:]
		s, err := parseStatic(strings.Clone(body))
		if err != nil {
			if ce, ok := err.(*colError); ok {
				r.err = at.errf(lead+ce.off+1, "%s", ce.msg)
			} else {
				r.err = at.errf(lead+1, "%v", err)
			}
			return
		}
		st = s
		if strings.TrimRight(body, " \t") == r.key {
			// The parse depends on the trimmed text alone: share it.
			key := strings.Clone(r.key)
			st = w.statics.intern(key, s)
			w.local[key] = st
		}
	}
	r.st = st
	in := w.inst()
	in.Line, in.Static, in.Mask = at.line, st, st.ExecMask()
	in.Vals = w.vecs(len(st.Inputs))
	r.in = in
	if len(st.Inputs) > 64 {
		r.slow = true
		return
	}
	binds := w.lineBinds[:0]
	if hasBind {
		r.bind.off, r.bind.n = r.off+int64(len(instText)+1), len(bindText)
		if !w.inFile {
			bindText = strings.Clone(bindText) // the reader's bindings keep it
			r.bind.text = bindText
		}
		base := len(instText) + 1
		for i := 0; i < len(bindText); {
			for i < len(bindText) && (bindText[i] == ' ' || bindText[i] == '\t') {
				i++
			}
			if i >= len(bindText) {
				break
			}
			j := bindingEnd(bindText, i)
			word, off := bindText[i:j], base+i
			i = j
			name, val, ok := strings.Cut(word, "=")
			if !ok || name == "" || val == "" {
				r.err = at.errf(off+1, "a binding is NAME=VALUE, got %q", word)
				return
			}
			if name == "mask" {
				m, err := strconv.ParseUint(val, 0, 32)
				if err != nil {
					r.err = at.errf(off+len(name)+2, "mask= takes a 32-bit lane mask, got %q", val)
					return
				}
				in.Mask = uint32(m) & st.ExecMask()
				continue
			}
			r.bind.add(w.nameID(name))
			binds = append(binds, ownBind{name: name, text: val, col: off + len(name) + 2})
		}
		w.lineBinds = binds[:0]
		defer clear(binds) // strings of the chunk, which is read into again once done with
	}
	for i := range st.Inputs {
		inp := &st.Inputs[i]
		var b *ownBind
		for j := len(binds) - 1; j >= 0; j-- {
			if binds[j].name == inp.Name {
				b = &binds[j]
				break
			}
		}
		if b == nil {
			r.fromCtx |= 1 << uint(i)
			continue
		}
		v, err := parseValue(b.text, inp, inp.Count(st.ExecSize), &w.slabs)
		if err != nil {
			r.errIn, r.inErr = i, at.errf(b.col, "%s=%s: %v", inp.Name, b.text, err)
			return
		}
		in.Vals[i] = v
	}
}

// bindingEnd returns where the binding that starts at s[i] ends: at the
// first blank outside brackets, as splitBindings cuts.
func bindingEnd(s string, i int) int {
	depth := 0
	for i < len(s) {
		switch c := s[i]; {
		case c == '[':
			// A list: on to its ']' at once when no '[' comes before it.
			if depth == 0 {
				if k := strings.IndexByte(s[i+1:], ']'); k >= 0 && strings.IndexByte(s[i+1:i+1+k], '[') < 0 {
					i += k + 2
					continue
				}
			}
			depth++
		case c == ']':
			depth--
		case (c == ' ' || c == '\t') && depth <= 0:
			return i
		}
		i++
	}
	return i
}

// blanks is the number of blanks (spaces and tabs) s starts with.
func blanks(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// slabs hands out instructions, vectors, bindings and list storage from
// blocks, so that a line costs no allocation of its own. A block is never
// written again where it was handed out.
type slabs struct {
	insts []Inst
	vals  []Vector
	lists []uint64
}

func (s *slabs) inst() *Inst {
	if len(s.insts) == cap(s.insts) {
		s.insts = make([]Inst, 0, 256)
	}
	s.insts = s.insts[:len(s.insts)+1]
	return &s.insts[len(s.insts)-1]
}

func (s *slabs) vecs(n int) []Vector {
	if n == 0 {
		return []Vector{}
	}
	if cap(s.vals)-len(s.vals) < n {
		s.vals = make([]Vector, 0, max(512, n))
	}
	l := len(s.vals)
	s.vals = s.vals[:l+n]
	return s.vals[l : l+n : l+n]
}

func (s *slabs) list(n int) []uint64 {
	if cap(s.lists)-len(s.lists) < n {
		s.lists = make([]uint64, 0, max(8192, n))
	}
	l := len(s.lists)
	s.lists = s.lists[:l+n]
	return s.lists[l : l+n : l+n]
}

// unlist gives back the last list of n handed out, not yet used.
func (s *slabs) unlist(n int) { s.lists = s.lists[:len(s.lists)-n] }

// parseValue is parseVector, with the plain forms read without allocating
// and a list's values stored in a's blocks (or its own, a nil). The plain
// forms: a list of integer literals without blanks, a single one, and
// base:stride, each for inputs up to 64 bits; every other form, and every
// error, is parseVector's.
func parseValue(s string, inp *Input, lanes int, a *slabs) (Vector, error) {
	if inp.Bits <= 64 && s != "" {
		switch {
		case s[0] == '[':
			if len(s) > 2 && s[len(s)-1] == ']' {
				var dst []uint64
				if a != nil {
					dst = a.list(lanes)
				} else {
					dst = make([]uint64, lanes)
				}
				if plainList(s[1:len(s)-1], inp.Bits, inp.Type.Float(), dst) {
					return Vector{Kind: VecList, List: dst}, nil
				}
				if a != nil {
					a.unlist(lanes)
				}
			}
		case strings.IndexByte(s, ':') >= 0:
			b, st, _ := strings.Cut(s, ":")
			if lo, ok := plainImm(b, inp.Bits, false); ok {
				if stride, err := strconv.ParseInt(st, 0, 64); err == nil {
					return Vector{Kind: VecStride, Base: lo, Stride: uint64(stride)}, nil
				}
			}
		default:
			if lo, ok := plainImm(s, inp.Bits, inp.Type.Float()); ok {
				return Vector{Kind: VecBroadcast, Base: lo}, nil
			}
		}
	}
	return parseVector(s, *inp, lanes)
}

// hexDigit is the value of a hex digit, 0xff for any other byte.
var hexDigit = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c], t[c-'a'+'A'] = byte(c-'a'+10), byte(c-'a'+10)
	}
	return t
}()

// plainImm reads s as parseImm does when s is a plain literal that fits
// bits (at most 64): 0x and one to sixteen hex digits, or, unless float,
// one to nineteen decimal digits. It reports false for anything else.
func plainImm(s string, bits int, float bool) (uint64, bool) {
	v, n, ok := plainLit(s, 0, bits, float)
	return v, ok && n == len(s)
}

// plainList reads a list's values, between its brackets, into dst: as many
// plain literals as dst holds, separated by commas alone.
func plainList(s string, bits int, float bool, dst []uint64) bool {
	i := 0
	for k := range dst {
		v, j, ok := plainLit(s, i, bits, float)
		if !ok {
			return false
		}
		dst[k] = v
		if j == len(s) {
			return k == len(dst)-1
		}
		if s[j] != ',' {
			return false
		}
		i = j + 1
	}
	return false
}

// plainLit reads the plain literal at s[i:] up to the first byte that
// cannot continue it, returning its value and where it ends.
func plainLit(s string, i, bits int, float bool) (v uint64, end int, ok bool) {
	if i+2 < len(s) && s[i] == '0' && s[i+1]|0x20 == 'x' {
		j := i + 2
		if j+8 <= len(s) {
			var n int
			v, n = hex8(load64(s, j))
			j += n
			if n < 8 {
				goto hexEnd
			}
		}
		for ; j < len(s); j++ {
			d := hexDigit[s[j]]
			if d > 15 {
				break
			}
			v = v<<4 | uint64(d)
		}
	hexEnd:
		if n := j - i - 2; n == 0 || n > 16 {
			return 0, 0, false
		}
		end = j
	} else {
		if float {
			return 0, 0, false
		}
		j := i
		for ; j < len(s); j++ {
			d := s[j] - '0'
			if d > 9 {
				break
			}
			v = v*10 + uint64(d)
		}
		if n := j - i; n == 0 || n > 19 {
			return 0, 0, false
		}
		end = j
	}
	if bits < 64 && v>>uint(bits) != 0 {
		return 0, 0, false
	}
	return v, end, true
}

// load64 is the 8 bytes of s at i, the first in the low byte.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hex8 reads the hex digits that 8 bytes (as load64 gives them) start
// with, all at once: how many there are, n, and their value.
func hex8(w uint64) (v uint64, n int) {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	// A byte b below 0x80 is at least c when b+0x80-c has its high bit;
	// no sum carries into the next byte. A byte from 0x80 is no digit,
	// and what it carries only reaches the bytes after it.
	lower := w | 0x20*ones
	digit := (w + (0x80-'0')*ones) &^ (w + (0x80-'9'-1)*ones)
	alpha := (lower + (0x80-'a')*ones) &^ (lower + (0x80-'f'-1)*ones)
	valid := (digit | alpha) &^ w & high
	n = bits.TrailingZeros64(^valid&high) >> 3
	if n == 0 {
		return 0, 0
	}
	d := w&(0x0f*ones) + 9*(w>>6&ones) // each byte's digit value
	if n < 8 {
		d &= 1<<(8*uint(n)) - 1
	}
	d = (d&0x000f000f000f000f)<<4 | d>>8&0x000f000f000f000f
	d = (d&0x000000ff000000ff)<<8 | d>>16&0x000000ff000000ff
	d = (d&0xffff)<<16 | d>>32&0xffff
	return d >> (4 * (8 - uint(n))), n
}
