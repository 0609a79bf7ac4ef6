package trace_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpureplay/replay/trace"
)

// Open a trace file whichever its form: here a text trace, then its
// binary form under a name that does not say so.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	const tasm = ".region global 0x1000 0x100\natom.global.add.u32 d, [a], 1; | a=0x1000\n"
	text := filepath.Join(dir, "t.tasm")
	if err := os.WriteFile(text, []byte(tasm), 0o644); err != nil {
		log.Fatal(err)
	}
	// The binary form, as replay asm writes it.
	tr, err := trace.NewTextReader(strings.NewReader(tasm), "t.tasm")
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "t.bin"))
	if err != nil {
		log.Fatal(err)
	}
	w, err := trace.NewBinaryWriter(f, tr.Header())
	if err != nil {
		log.Fatal(err)
	}
	if err := trace.Copy(w, tr); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	f.Close()

	for _, path := range []string{text, f.Name()} {
		src, err := trace.Open(path)
		if err != nil {
			log.Fatal(err)
		}
		in, err := src.Next()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s (fast paths: %v)\n", filepath.Base(path), in.Static.Text, src.Caps())
		if _, err := src.Next(); err != io.EOF {
			log.Fatal("more than one instruction")
		}
		src.Close()
	}
	// Output:
	// t.tasm: atom.global.add.u32 d, [a], 1; (fast paths: none)
	// t.bin: atom.global.add.u32 d, [a], 1; (fast paths: arena|repeat)
}
