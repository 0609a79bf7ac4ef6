package reference

import (
	"cmp"
	"maps"
	"slices"

	"github.com/gpureplay/replay/trace"
)

// wide is a value of up to 128 bits: lo holds bits 0..63, hi bits 64..127.
type wide struct{ lo, hi uint64 }

// place names one byte (or word) of memory: its space, its group for a
// per-group space (-1 otherwise), and its address.
type place struct {
	space trace.Space
	group int64
	addr  uint64
}

// memory is simulated memory as a map of bytes, and the set of aligned
// words any access or .init touched (docs/OUTPUT.md, memory: "One row per
// aligned 4-byte word the trace touched (any access, including loads) or
// .init set"). Memory nobody wrote reads zero (docs/TASM.md: "Memory that
// no .init sets reads as zero").
type memory struct {
	bytes map[place]byte
	words map[place]bool
}

func newMemory() *memory {
	return &memory{bytes: map[place]byte{}, words: map[place]bool{}}
}

// groupOf is the memory instance of an access or .init in group g: shared
// memory is each group's own, every other space is one for all.
func groupOf(space trace.Space, g int64) int64 {
	if space.Kind == trace.SpaceShared {
		return g
	}
	return -1
}

// read returns n bytes at at, little-endian (every document: PTX and SASS
// registers are little-endian, "ATOM interprets memory data in
// little-endian byte order"; .init data is little-endian, docs/TASM.md).
func (m *memory) read(at place, n int) wide {
	var v wide
	for i := 0; i < n; i++ {
		b := uint64(m.bytes[place{at.space, at.group, at.addr + uint64(i)}])
		if i < 8 {
			v.lo |= b << (8 * i)
		} else {
			v.hi |= b << (8 * (i - 8))
		}
	}
	return v
}

// write stores the low n bytes of v at at, little-endian.
func (m *memory) write(at place, n int, v wide) {
	for i := 0; i < n; i++ {
		b := v.lo >> (8 * i)
		if i >= 8 {
			b = v.hi >> (8 * (i - 8))
		}
		m.setByte(place{at.space, at.group, at.addr + uint64(i)}, byte(b))
	}
}

func (m *memory) setByte(at place, b byte) {
	m.bytes[at] = b
	m.words[place{at.space, at.group, at.addr &^ 3}] = true
}

// init is a .init: a host write of its bytes.
func (m *memory) init(in *trace.Init) {
	g := groupOf(in.Space, in.Group)
	for i, b := range in.Data {
		m.setByte(place{in.Space, g, in.Addr + uint64(i)}, b)
	}
}

// comparePlaces is the tables' order: space by its name, group, address.
func comparePlaces(a, b place) int {
	return cmp.Or(cmp.Compare(a.space.String(), b.space.String()), cmp.Compare(a.group, b.group), cmp.Compare(a.addr, b.addr))
}

// table is the memory table: every touched word and its final value.
func (m *memory) table() []Word {
	words := slices.SortedFunc(maps.Keys(m.words), comparePlaces)
	out := make([]Word, 0, len(words))
	for _, w := range words {
		v := m.read(w, 4)
		out = append(out, Word{Space: w.space, Group: w.group, Addr: w.addr, Value: uint32(v.lo)})
	}
	return out
}
