package trace

import (
	"bytes"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// clusterTrace names clusters for groups 0 and 1 before the first
// instruction and for group 5 after it.
const clusterTrace = ".region global 0x1000 0x100\n.cluster 7\n.group 1\n.cluster 7\n" +
	"atom.global.cluster.add.u32 d, [a], 1; | a=0x1000 mask=0x1\n" +
	".group 5\n.cluster 8\natom.global.cluster.add.u32 d, [a], 1; | a=0x1000 mask=0x1\n"

// TestClusterDirective: a .cluster is a directive record of the current
// .group wherever it stands, before the first instruction too (the
// region before it stays in the header); it survives the binary form and
// disasm, byte for byte.
func TestClusterDirective(t *testing.T) {
	read := func(src Source) (h Header, recs []string) {
		for {
			in, err := src.Next()
			if err == io.EOF {
				return *src.Header(), recs
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case in.Dir != nil && in.Dir.Cluster != nil:
				recs = append(recs, ".cluster "+itoa(in.Dir.Cluster.ID)+" of group "+itoa(in.Dir.Cluster.Group))
			case in.Dir != nil:
				recs = append(recs, "another directive")
			default:
				recs = append(recs, "group "+itoa(in.Group)+": "+in.Static.Text)
			}
		}
	}
	want := []string{".cluster 7 of group 0", ".cluster 7 of group 1", "group 1: atom.global.cluster.add.u32 d, [a], 1;",
		".cluster 8 of group 5", "group 5: atom.global.cluster.add.u32 d, [a], 1;"}
	tr, err := NewTextReader(strings.NewReader(clusterTrace), "c.tasm")
	if err != nil {
		t.Fatal(err)
	}
	h, recs := read(tr)
	if !reflect.DeepEqual(recs, want) || len(h.Regions) != 1 {
		t.Fatalf("records %q, %d regions in the header; want %q and 1", recs, len(h.Regions), want)
	}
	// Binary and back, then disasm and asm again: the same bytes.
	bin := asmBytes(t, clusterTrace)
	br, err := NewBinaryReader(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	tw, err := NewTextWriter(&text, br.Header())
	if err != nil {
		t.Fatal(err)
	}
	for {
		in, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.Write(in); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	if !strings.Contains(text.String(), ".cluster 7\n.group 1\n.cluster 7\n") || !strings.Contains(text.String(), ".group 5\n.cluster 8\n") {
		t.Errorf("disasm:\n%s", text.String())
	}
	if again := asmBytes(t, text.String()); !bytes.Equal(bin, again) {
		t.Errorf("asm of the disasm: %d bytes, the first %d", len(again), len(bin))
	}
	// It ends the header: a .window after it is refused, as after an
	// instruction; a bad number names the line and column.
	for src, msg := range map[string]string{
		".cluster 1\n.window shared 0 4\n": "w.tasm:2:1: .window must come before the first instruction",
		".group 2\n.cluster x\n":           `w.tasm:2:10: .cluster needs a number from 0 to 2^40, got "x"`,
		".cluster 1 2\n":                   "w.tasm:1:1: .cluster takes one number",
		".cluster 1\n.addresses-only\n":    "w.tasm:2:1: .addresses-only must come before the first instruction",
	} {
		tr, err := NewTextReader(strings.NewReader(src), "w.tasm")
		for err == nil {
			_, err = tr.Next()
		}
		if err == io.EOF || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %s", src, err, msg)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// asmBytes writes a text trace's binary form, as replay asm does.
func asmBytes(t *testing.T, src string) []byte {
	t.Helper()
	tr, err := NewTextReader(strings.NewReader(src), "c.tasm")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var b bytes.Buffer
	w, err := NewBinaryWriter(&b, tr.Header())
	if err != nil {
		t.Fatal(err)
	}
	if err := Copy(w, tr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
