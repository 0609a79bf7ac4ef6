package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestItem8TextKeepsSemicolon: issue 46 item 8. The instruction text is
// kept as written: a trailing ';' stays where the line has one, with the
// blank before it, and is not added where it has none, in disasm (of the
// text and of the binary form), in the instructions table's text column,
// and through asm, disasm, asm. A binary trace written at e361db0, which
// stored each text without its ';', still reads, and disasm prints it as
// stored.
func TestItem8TextKeepsSemicolon(t *testing.T) {
	src, err := filepath.Abs("testdata/item8/semicolon.tasm")
	if err != nil {
		t.Fatal(err)
	}
	old, err := filepath.Abs("testdata/item8/e361db0.zst")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"atom.global.add.u32 d, [a], 1;",
		"atom.global.add.u32 d, [a], 1",
		"ATOM.E.ADD.64 R0, [R2 + 8], R8 ;",
		"DWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12",
		"lsc_atomic_iadd.ugm (M1,32) V13:d32 flat[V12]:a64 V14;",
	}
	binds := []string{"a=0x1000", "a=0x1000", "R2=0x1000 R8=0x1", "V10=0x1100:4 V11=0x1", "V12=0x1200:4 V14=0x1"}
	disasm := func(texts []string) string {
		s := ".region global 0x1000 0x1000\n"
		for i := range texts {
			s += texts[i] + " | " + binds[i] + "\n"
		}
		return s
	}
	want := disasm(texts)
	var stored []string // as e361db0 stored them
	for _, s := range texts {
		stored = append(stored, strings.TrimRight(strings.TrimSuffix(s, ";"), " "))
	}
	wantOld := disasm(stored)

	dir := t.TempDir()
	t.Chdir(dir)
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := replayCmd(t, args...)
		if code != 0 {
			t.Fatalf("replay %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	if got := run("disasm", src); got != want {
		t.Errorf("disasm of the text:\n%s\nwant\n%s", got, want)
	}
	run("asm", src, "-o", "a.zst")
	if got := run("disasm", "a.zst"); got != want {
		t.Errorf("disasm of the binary form:\n%s\nwant\n%s", got, want)
	}
	if err := os.WriteFile("b.tasm", []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	run("asm", "b.tasm", "-o", "b.zst")
	a, _ := os.ReadFile("a.zst")
	b, _ := os.ReadFile("b.zst")
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("asm, disasm, asm: %d bytes, then %d different ones", len(a), len(b))
	}
	if got := run("disasm", old); got != wantOld {
		t.Errorf("disasm of a trace written at e361db0:\n%s\nwant\n%s", got, wantOld)
	}

	for _, tc := range []struct{ trace, out string }{{src, "text"}, {"a.zst", "bin"}} {
		run("-q", "-o", tc.out, tc.trace)
		got := instructionTexts(t, filepath.Join(tc.out, "instructions.parquet"))
		if strings.Join(got, "\n") != strings.Join(texts, "\n") {
			t.Errorf("instructions.text of %s:\n%s\nwant\n%s", tc.trace, strings.Join(got, "\n"), strings.Join(texts, "\n"))
		}
	}
}

// instructionTexts reads the text column of an instructions table, in
// seq order.
func instructionTexts(t *testing.T, path string) []string {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	column := func(name string) *arrow.Chunked {
		for i, f := range tbl.Schema().Fields() {
			if f.Name == name {
				return tbl.Column(i).Data()
			}
		}
		t.Fatalf("%s has no column %s", path, name)
		return nil
	}
	texts := make([]string, tbl.NumRows())
	var seqs []uint64
	for _, c := range column("seq").Chunks() {
		seqs = append(seqs, c.(*array.Uint64).Uint64Values()...)
	}
	n := 0
	for _, c := range column("text").Chunks() {
		for i := 0; i < c.Len(); i, n = i+1, n+1 {
			var s string
			switch a := c.(type) {
			case *array.String:
				s = a.Value(i)
			case *array.Dictionary:
				s = a.Dictionary().(*array.String).Value(a.GetValueIndex(i))
			default:
				t.Fatalf("text is %T", c)
			}
			if seqs[n] >= uint64(len(texts)) {
				t.Fatalf("seq %d of %d rows", seqs[n], len(texts))
			}
			texts[seqs[n]] = s
		}
	}
	return texts
}
