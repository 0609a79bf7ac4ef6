package trace

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// sparseFile is a file of a few texts at given offsets, as far into it as
// a test needs.
type sparseFile map[int64]string

func (f sparseFile) ReadAt(p []byte, off int64) (int, error) {
	s, ok := f[off]
	if !ok || len(s) < len(p) {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(p, s), nil
}

// TestBindingsFarInFile: bindings past 2^44 bytes into the file, where a
// context's last line has no room for them, are kept name by name, and
// the last line's names that a far line rebinds are no longer its.
func TestBindingsFarInFile(t *testing.T) {
	far := int64(1) << 45
	f := sparseFile{100: "a=1 b=2", far: "a=3", far + 100: " b=[5]", 200: "c=4"}
	names := &nameTable{m: map[string]uint32{}}
	bs := newBindings(f, names)
	set := func(line int, off int64) {
		bl := bindLine{off: off, n: len(f[off])}
		ws, _ := splitBindings(f[off], 0)
		for _, w := range ws {
			name, _, _ := strings.Cut(w, "=")
			bl.add(names.id(name))
		}
		bs.set(0, 0, line, &bl)
	}
	want := func(name, text string, line int) {
		t.Helper()
		got, l, ok, err := bs.get(0, 0, name)
		if err != nil || !ok || got != text || l != line {
			t.Fatalf("%s = %q from line %d (%v, %v), want %q from line %d", name, got, l, ok, err, text, line)
		}
	}
	set(1, 100)
	want("a", "1", 1)
	want("b", "2", 1)
	set(2, far)
	want("a", "3", 2)
	want("b", "2", 1)
	set(3, far+100)
	want("a", "3", 2)
	want("b", "[5]", 3)
	set(4, 200)
	want("a", "3", 2)
	want("c", "4", 4)
	set(5, 100)
	want("a", "1", 5)
	want("b", "2", 5)
	want("c", "4", 4)
	if _, _, ok, _ := bs.get(0, 1, "a"); ok {
		t.Fatal("a is bound in warp 1")
	}
}

// TestCtxTableGrows: every context stays found as the table grows, and no
// other is.
func TestCtxTableGrows(t *testing.T) {
	var tab ctxTable
	const n = 10000
	for i := range n {
		s := tab.upsert(int64(i/8), int64(i%8))
		if s.line != 0 {
			t.Fatalf("context %d found before it was set", i)
		}
		s.line = i + 1
	}
	for i := range n {
		s := tab.find(int64(i/8), int64(i%8))
		if s == nil || s.line != i+1 || s.group != int64(i/8) || s.warp != int64(i%8) {
			t.Fatalf("context %d: %+v", i, s)
		}
	}
	if tab.find(n, 0) != nil || tab.find(0, 8) != nil {
		t.Fatal("found a context never set")
	}
	if tab.n != n || len(tab.slots) < n*4/3 {
		t.Fatalf("%d in use of %d slots", tab.n, len(tab.slots))
	}
}

// TestPlainLitMatchesParseImm: what plainImm reads (eight hex digits at a
// time) is what parseImm reads, and it reads every plain literal, at every
// length and before every kind of byte.
func TestPlainLitMatchesParseImm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const digits = "0123456789abcdefABCDEF"
	ends := []string{"", ",", "]", " ", "g", "G", ":", "x", "\x80", "\xff", "/", "@", "`", "_"}
	n := 0
	for length := 1; length <= 20; length++ {
		for range 300 {
			var b strings.Builder
			hex := rng.IntN(3) > 0
			if hex {
				b.WriteString([]string{"0x", "0X"}[rng.IntN(2)])
			}
			for range length {
				if hex {
					b.WriteByte(digits[rng.IntN(len(digits))])
				} else {
					b.WriteByte(digits[rng.IntN(10)])
				}
			}
			lit := b.String()
			end := ends[rng.IntN(len(ends))]
			for _, bits := range []int{8, 16, 32, 64} {
				for _, typ := range []Type{TypeU32, TypeF32} {
					s := lit // alone, or before a byte no literal has, and more
					if end != "" {
						s += end + "0x12345678"
					}
					v, j, ok := plainLit(s, 0, bits, typ.Float())
					lo, _, err := parseImm(lit, bits, typ)
					plain := (hex && length <= 16 || !hex && length <= 19 && !typ.Float()) && err == nil
					if ok != plain || ok && (v != lo || j != len(lit)) {
						t.Fatalf("plainLit(%q, %d bits, %s) = %#x, %d, %v; parseImm(%q) = %#x, %v", s, bits, typ, v, j, ok, lit, lo, err)
					}
					n++
				}
			}
		}
	}
	if n < 10000 {
		t.Fatalf("%d cases", n)
	}
}

// BenchmarkBindingsSet records the bindings of 300K lines, each in a
// context of its own, as the bench's uniform trace has them.
func BenchmarkBindingsSet(b *testing.B) {
	names := &nameTable{m: map[string]uint32{}}
	bl := bindLine{n: 500}
	bl.add(names.id("%rd1"))
	bl.add(names.id("%r2"))
	for b.Loop() {
		bs := newBindings(sparseFile{}, names)
		for i := range 300000 {
			bl.off = int64(i) * 570
			bs.set(int64(i/8), int64(i%8), i+1, &bl)
		}
	}
}
