package trace

import (
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
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

// TestCtxTableGrows: every context stays found as the table of groups
// grows, as runs of warps grow and move, and past maxRun warps in a group;
// no other context is found.
func TestCtxTableGrows(t *testing.T) {
	tab := ctxTable{memo: -1}
	type ctx struct{ g, w int64 }
	var all []ctx
	for g := range int64(3000) {
		for w := range g%9 + 1 {
			all = append(all, ctx{g, w * 3})
		}
	}
	for w := range int64(3 * maxRun) {
		all = append(all, ctx{1 << 40, w}, ctx{7, 1000 + w})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(len(all)/2, func(i, j int) { all[i], all[j] = all[j], all[i] })
	for i, c := range all {
		s := tab.upsert(c.g, c.w)
		if s.line != 0 || s.warp != c.w {
			t.Fatalf("context %v found before it was set: %+v", c, s)
		}
		s.line = i + 1
		if i%97 == 0 { // and again, found
			if s := tab.upsert(c.g, c.w); s.line != i+1 {
				t.Fatalf("context %v: %+v", c, s)
			}
		}
	}
	for i, c := range all {
		s := tab.find(c.g, c.w)
		if s == nil || s.line != i+1 || s.warp != c.w {
			t.Fatalf("context %v: %+v", c, s)
		}
	}
	for _, c := range []ctx{{3000, 0}, {0, 1}, {1, 6}, {7, 1000 + 3*maxRun}, {1 << 40, 3 * maxRun}, {-1, 0}} {
		if s := tab.find(c.g, c.w); s != nil {
			t.Fatalf("found context %v, never set: %+v", c, s)
		}
	}
	if tab.n != 3001 || len(tab.big) != 8+2*3*maxRun || len(tab.warps)*blockLen > 3*len(all)+blockLen {
		t.Fatalf("%d groups, %d contexts by context, %d blocks of warps for %d", tab.n, len(tab.big), len(tab.warps), len(all))
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

// TestTextReaderStops: the text reader's goroutines end at io.EOF, at an
// error, on Close (at once, even with its input blocked in a Read), and
// when a reader dropped half-read is collected.
func TestTextReaderStops(t *testing.T) {
	line := "atom.global.add.u32 d, [a], b | a=0x10:4 b=[" + strings.Repeat("1,", 31) + "1]\n.warp 1\n"
	src := strings.Repeat(line, 200)
	o := textOptions{chunk: 512, workers: 2, depth: 2}
	base := runtime.NumGoroutine()
	readN := func(tr *TextReader, n int) error {
		for range n {
			if _, err := tr.Next(); err != nil {
				return err
			}
		}
		return nil
	}

	// To the end, and to an error.
	for _, s := range []string{src, src + "frobnicate\n" + src} {
		tr, err := newTextReader(strings.NewReader(s), "t.tasm", o)
		if err != nil {
			t.Fatal(err)
		}
		err = readN(tr, 1000)
		if s == src && err != io.EOF || s != src && (err == nil || err == io.EOF) {
			t.Fatalf("read to %v", err)
		}
		waitGoroutines(t, base)
	}

	// Closed after a few records; Next then fails.
	tr, err := newTextReader(strings.NewReader(src), "t.tasm", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := readN(tr, 5); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	waitGoroutines(t, base)
	if _, err := tr.Next(); err == nil || err == io.EOF {
		t.Errorf("Next after Close: %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// Dropped after a few records.
	func() {
		tr, err := newTextReader(strings.NewReader(src), "t.tasm", o)
		if err != nil {
			t.Fatal(err)
		}
		if err := readN(tr, 5); err != nil {
			t.Fatal(err)
		}
	}()
	waitGoroutines(t, base)

	// Closed with its input blocked.
	sr := &stallReader{data: []byte(src[:len(src)/2]), release: make(chan struct{})}
	tr, err = newTextReader(sr, "t.tasm", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := readN(tr, 5); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { tr.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for a blocked Read")
	}
	close(sr.release)
	waitGoroutines(t, base)
}

// TestTextReaderLongLines: a line of MaxLineBytes bytes or more is an
// error naming it, wherever it stands, as it was for the reader that read
// line by line; one byte shorter is not.
func TestTextReaderLongLines(t *testing.T) {
	inst := "atom.global.add.u32 d, [a], 1 | a=0\n"
	long := func(n int) string { return "#" + strings.Repeat("x", n-1) } // a comment of n bytes
	srcs := map[string]string{
		"longest first":     long(MaxLineBytes-1) + "\n" + inst,
		"too long first":    long(MaxLineBytes) + "\n" + inst,
		"too long third":    inst + inst + long(MaxLineBytes+7) + "\n" + inst,
		"longest last":      inst + long(MaxLineBytes-1),
		"too long last":     inst + long(MaxLineBytes),
		"longest, too long": inst + long(MaxLineBytes-1) + "\n" + long(MaxLineBytes+5) + "\n" + inst,
		"longest twice":     long(MaxLineBytes-1) + "\n" + long(MaxLineBytes-1) + "\n" + inst,
	}
	for name, src := range srcs {
		t.Run(name, func(t *testing.T) {
			sameAsOld(t, src, textOptions{})
			sameAsOld(t, src, textOptions{chunk: 1000, workers: 2, depth: 1})
			sameAsOld(t, src, textOptions{chunk: 300 << 10, workers: 2, depth: 2, file: strings.NewReader(src)})
		})
	}
}
