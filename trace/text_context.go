package trace

import (
	"io"
	"strings"
	"sync"
)

// This file holds what the text reader keeps of every (.group, .warp)
// context: its bindings, for later lines that read a name without binding
// it (TASM.md, Bindings: Lifetime). A trace of many warps has many
// contexts, and the reader goes through each of its lines one after the
// other, so a line costs one probe of a table without pointers, and a
// context keeps where its bindings stand in the input, not their values:
// with WithTextFile the text after a line's `|` is read from the file
// again when a later line reads a name of it; without, the reader keeps a
// copy of that text.

// bindLine is what one line binds: the text after its `|`, and the names
// (as numbers of a nameTable) it binds there, mask= aside.
type bindLine struct {
	off   int64    // where the text starts in the input
	n     int      // its length
	text  string   // the text, the reader's own copy; without WithTextFile only
	names uint64   // bit i: the name numbered i < 64 is bound
	wide  []uint32 // the names numbered 64 and above
}

func (b *bindLine) add(id uint32) {
	if id < 64 {
		b.names |= 1 << id
	} else {
		b.wide = append(b.wide, id)
	}
}

func (b *bindLine) any() bool { return b.names != 0 || len(b.wide) > 0 }

// ownBind is one binding of the line being read, for that line.
type ownBind struct {
	name, text string
	col        int
}

// bindings is every context's bindings: per context, the last line that
// bound names below 64 in it and which (ctxTable); per context and name,
// those bound on an earlier line, and those numbered 64 and above (older).
type bindings struct {
	last  ctxTable
	texts map[warpKey]string // without a file: the text of last's lines
	older map[bindKey]olderBind
	file  io.ReaderAt
	names *nameTable
	ids   map[string]uint32  // memo of names' numbers
	memo  map[bindKey]memoed // values read back
}

type warpKey struct{ group, warp int64 }

type bindKey struct {
	group, warp int64
	name        uint32
}

// olderBind is a name's binding on a line that is not its context's last.
type olderBind struct {
	line int
	off  int64
	n    int
	text string // without a file
}

type memoed struct {
	line int
	text string
}

// maxMemo bounds how many values read back the reader keeps at once.
const maxMemo = 1 << 14

// spanBits is how many low bits of a slot's span hold the text's length.
const spanBits = 20

func newBindings(file io.ReaderAt, names *nameTable) *bindings {
	return &bindings{texts: map[warpKey]string{}, older: map[bindKey]olderBind{}, file: file, names: names,
		ids: map[string]uint32{}, memo: map[bindKey]memoed{}}
}

// set records that line binds b's names in the context of group g, warp w.
func (bs *bindings) set(g, w int64, line int, b *bindLine) {
	if b.off >= 1<<(64-spanBits) && b.names != 0 {
		// Too far into the input for a slot's span: keep each name apart,
		// and the last line's no more.
		low := b.names
		for id := uint32(0); id < 64; id++ {
			if low&(1<<id) != 0 {
				bs.older[bindKey{g, w, id}] = olderBind{line: line, off: b.off, n: b.n, text: b.text}
			}
		}
		if s := bs.last.find(g, w); s != nil {
			s.names &^= low
		}
		nb := *b
		nb.names = 0
		b = &nb
	}
	for _, id := range b.wide {
		bs.older[bindKey{g, w, id}] = olderBind{line: line, off: b.off, n: b.n, text: b.text}
	}
	if b.names == 0 {
		return
	}
	s := bs.last.upsert(g, w)
	if s.line != 0 {
		// Names the last line bound and this one does not stay bound there.
		if kept := s.names &^ b.names; kept != 0 {
			text := ""
			if bs.file == nil {
				text = bs.texts[warpKey{g, w}]
			}
			for id := uint32(0); id < 64; id++ {
				if kept&(1<<id) != 0 {
					bs.older[bindKey{g, w, id}] = olderBind{line: s.line, off: int64(s.span >> spanBits), n: int(s.span & (1<<spanBits - 1)), text: text}
				}
			}
		}
	}
	s.line, s.span, s.names = line, uint64(b.off)<<spanBits|uint64(b.n), b.names
	if bs.file == nil {
		bs.texts[warpKey{g, w}] = b.text
	}
}

// get returns the value bound to name in the context of group g, warp w
// and the line that binds it; ok is false if there is none. err is an
// error reading the file again.
func (bs *bindings) get(g, w int64, name string) (text string, line int, ok bool, err error) {
	id, ok := bs.ids[name]
	if !ok {
		if id, ok = bs.names.lookup(name); !ok {
			return "", 0, false, nil // bound nowhere yet
		}
		bs.ids[strings.Clone(name)] = id
	}
	var off int64
	var n int
	k := warpKey{g, w}
	if s := bs.last.find(g, w); s != nil && id < 64 && s.names&(1<<id) != 0 {
		line, off, n = s.line, int64(s.span>>spanBits), int(s.span&(1<<spanBits-1))
		text = bs.texts[k]
	} else if o, found := bs.older[bindKey{g, w, id}]; found {
		line, off, n, text = o.line, o.off, o.n, o.text
	} else {
		return "", 0, false, nil
	}
	bk := bindKey{g, w, id}
	if m, found := bs.memo[bk]; found && m.line == line {
		return m.text, line, true, nil
	}
	if bs.file != nil {
		buf := make([]byte, n)
		if got, err := bs.file.ReadAt(buf, off); got < n {
			return "", 0, false, err
		}
		text = string(buf)
	}
	// The line's bindings were read without an error once.
	ws, _ := splitBindings(text, 0)
	for i := len(ws) - 1; i >= 0; i-- {
		if nm, val, _ := strings.Cut(ws[i], "="); nm == name {
			text = val
			break
		}
	}
	if len(bs.memo) >= maxMemo {
		clear(bs.memo)
	}
	bs.memo[bk] = memoed{line: line, text: text}
	return text, line, true, nil
}

// ctxTable maps a context to the last line that bound names in it. It
// keeps contexts by group: a table of groups, each with its warps in a run
// of a common slab, so that the lines of the warps of a group, which a
// trace has near one another, find theirs in a few cache lines. None of it
// holds a pointer.
type ctxTable struct {
	groups []groupSlot // a power of two of them, or none
	n      int         // groups in use
	warps  [][]ctxSlot // blocks of runs: slot i is warps[i>>blockLog][i&(blockLen-1)]
	used   int         // slots of the last block taken
	free   [8][]int    // runs given up, by the log2 of their length
	big    map[warpKey]int
	memo   int // index in groups of the last group looked up, or -1
}

// blockLog is the log2 of the slots of a block of runs; a run never
// crosses blocks, and blocks never move.
const blockLog = 12

const blockLen = 1 << blockLog

func (t *ctxTable) slot(i int) *ctxSlot { return &t.warps[i>>blockLog][i&(blockLen-1)] }

// groupSlot is a group's run of warps: warps[start:start+n], with room
// for 1<<runLog. A group of more than maxRun warps has them in big, by
// context.
type groupSlot struct {
	group  int64
	start  int
	n      int32
	runLog int8 // log2 of the run's length; -1: the slot is free
}

type ctxSlot struct {
	warp  int64
	line  int    // 0 only until upsert's caller sets it
	span  uint64 // the text's offset << spanBits | its length
	names uint64
}

// maxRun is the most warps of a group kept in its run: more than a CTA or
// a work-group has.
const maxRun = 64

func groupHash(g int64) uint64 {
	h := uint64(g) * 0x9e3779b97f4a7c15
	return h ^ h>>29
}

// group returns the index in groups of group g, -1 if it has none and not
// add.
func (t *ctxTable) group(g int64, add bool) int {
	if t.memo >= 0 && t.memo < len(t.groups) && t.groups[t.memo].runLog >= 0 && t.groups[t.memo].group == g {
		return t.memo
	}
	if add && 4*(t.n+1) > 3*len(t.groups) {
		t.grow()
	}
	if len(t.groups) == 0 {
		return -1
	}
	mask := uint64(len(t.groups) - 1)
	for i := groupHash(g) & mask; ; i = (i + 1) & mask {
		s := &t.groups[i]
		if s.runLog < 0 {
			if !add {
				return -1
			}
			*s = groupSlot{group: g, start: t.run(0), runLog: 0}
			t.n++
			t.memo = int(i)
			return int(i)
		}
		if s.group == g {
			t.memo = int(i)
			return int(i)
		}
	}
}

// run returns the start of a free run of 1<<lg slots.
func (t *ctxTable) run(lg int8) int {
	if f := t.free[lg]; len(f) > 0 {
		t.free[lg] = f[:len(f)-1]
		return f[len(f)-1]
	}
	if len(t.warps) == 0 || t.used+1<<lg > blockLen {
		t.warps = append(t.warps, make([]ctxSlot, blockLen))
		t.used = 0
	}
	start := (len(t.warps)-1)<<blockLog + t.used
	t.used += 1 << lg
	return start
}

func (t *ctxTable) grow() {
	old := t.groups
	t.groups = make([]groupSlot, max(64, 2*len(old)))
	for i := range t.groups {
		t.groups[i].runLog = -1
	}
	mask := uint64(len(t.groups) - 1)
	for _, s := range old {
		if s.runLog < 0 {
			continue
		}
		i := groupHash(s.group) & mask
		for t.groups[i].runLog >= 0 {
			i = (i + 1) & mask
		}
		t.groups[i] = s
	}
	t.memo = -1
}

// find returns the slot of context (g, w), or nil.
func (t *ctxTable) find(g, w int64) *ctxSlot {
	gi := t.group(g, false)
	if gi < 0 {
		return nil
	}
	gs := &t.groups[gi]
	if gs.n > maxRun {
		if i, ok := t.big[warpKey{g, w}]; ok {
			return t.slot(i)
		}
		return nil
	}
	run := t.warps[gs.start>>blockLog][gs.start&(blockLen-1):][:gs.n]
	for i := range run {
		if run[i].warp == w {
			return &run[i]
		}
	}
	return nil
}

// upsert returns the slot of context (g, w), a new one (line 0) if it has
// none. The caller sets its line before the next upsert.
func (t *ctxTable) upsert(g, w int64) *ctxSlot {
	if s := t.find(g, w); s != nil {
		return s
	}
	gs := &t.groups[t.group(g, true)]
	switch {
	case gs.n > maxRun:
	case gs.n == maxRun:
		// Too many warps for a run: index them all by context.
		if t.big == nil {
			t.big = map[warpKey]int{}
		}
		for i := range int(gs.n) {
			t.big[warpKey{g, t.slot(gs.start + i).warp}] = gs.start + i
		}
		gs.n++
	default:
		if int(gs.n) == 1<<gs.runLog {
			start := t.run(gs.runLog + 1)
			for i := range int(gs.n) {
				*t.slot(start + i) = *t.slot(gs.start + i)
			}
			t.free[gs.runLog] = append(t.free[gs.runLog], gs.start)
			gs.start = start
			gs.runLog++
		}
		s := t.slot(gs.start + int(gs.n))
		gs.n++
		*s = ctxSlot{warp: w}
		return s
	}
	i := t.run(0)
	t.big[warpKey{g, w}] = i
	s := t.slot(i)
	*s = ctxSlot{warp: w}
	return s
}

// nameTable numbers the names bindings bind, for every worker alike.
type nameTable struct {
	mu sync.Mutex
	m  map[string]uint32
}

// id returns name's number, giving it the next one if it has none.
func (t *nameTable) id(name string) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.m[name]
	if !ok {
		id = uint32(len(t.m))
		t.m[strings.Clone(name)] = id
	}
	return id
}

func (t *nameTable) lookup(name string) (uint32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.m[name]
	return id, ok
}
