package reference

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	module    = "github.com/gpureplay/replay"
	tracePkg  = module + "/trace"
	enginePkg = module + "/engine"
)

// TestImportsOnlyTrace: the package's own files import the standard
// library and package trace (the parser's output types), nothing else of
// the module: not package engine, not internal/fp (the engine's float
// arithmetic). The reference's value is
// that it shares no semantic code with the engine.
func TestImportsOnlyTrace(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if path != tracePkg && strings.Contains(first, ".") {
				t.Errorf("%s imports %s: the reference may import only the standard library and %s", name, path, tracePkg)
			}
		}
	}
	if n == 0 {
		t.Fatal("no Go files found: the test must run in the package's directory")
	}
}

// TestDependenciesOnlyThroughTrace: with the go command at hand, every
// package of the module that the reference depends on is trace or one of
// trace's own dependencies (trace's literal parser encodes f16 literals
// with internal/fp: parsing, not replay). Package engine is never among
// them.
func TestDependenciesOnlyThroughTrace(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		if _, err := os.Stat(gobin); err != nil {
			t.Skip("no go command")
		}
	}
	deps := func(pkg string) map[string]bool {
		out, err := exec.Command(gobin, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		set := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			if p == module || strings.HasPrefix(p, module+"/") {
				set[p] = true
			}
		}
		return set
	}
	self := module + "/engine/internal/reference"
	viaTrace := deps(tracePkg)
	for p := range deps(".") {
		switch {
		case p == enginePkg:
			t.Errorf("the reference depends on %s", enginePkg)
		case p != self && !viaTrace[p]:
			t.Errorf("the reference depends on %s, which trace does not", p)
		}
	}
}
