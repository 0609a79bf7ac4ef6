package engine

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// TestItem46_12_EmbeddedSinkCannotLoseResults (issue 46, item 12): a sink
// that embeds the package's do-nothing sink and overrides Results must
// not silently get no results. Either it does not compile until it
// declares its Caps, or it gets what it overrides. Each program below is
// type-checked against this package's source: the two traps must be
// compile errors that name the way out, and the right way must compile.
func TestItem46_12_EmbeddedSinkCannotLoseResults(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package from source")
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil) // one, so that the package is checked once
	for _, tc := range []struct {
		name, decl string
		want       string // "" compiles
	}{
		{"embeds Discard, overrides Results", `
type mySink struct {
	engine.Discard
	n int
}

func (s *mySink) Results(rs []engine.Result) error { s.n += len(rs); return nil }
`, "engine.Discard"},
		{"embeds NopSink, overrides Results, declares nothing", `
type mySink struct {
	engine.NopSink
	n int
}

func (s *mySink) Results(rs []engine.Result) error { s.n += len(rs); return nil }
`, "missing method Caps"},
		{"embeds NopSink, overrides Results, declares CapResults", `
type mySink struct {
	engine.NopSink
	n int
}

func (s *mySink) Caps() engine.SinkCaps { return engine.CapResults }
func (s *mySink) Results(rs []engine.Result) error { s.n += len(rs); return nil }
`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\n\nimport \"github.com/gpureplay/replay/engine\"\n" + tc.decl +
				"\nvar _ engine.Sink = (*mySink)(nil)\n"
			err := typeCheck(t, fset, imp, src)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("does not compile: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("compiles: a sink that overrides Results without declaring it is a silent trap; want an error naming %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q does not name %q", err, tc.want)
			case err != nil:
				t.Logf("as wanted: %v", err)
			}
		})
	}
}

// typeCheck type-checks one file of package p against this module's
// packages, imported from source by imp, and returns the first error.
func typeCheck(t *testing.T, fset *token.FileSet, imp types.Importer, src string) error {
	t.Helper()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var first error
	conf := types.Config{
		Importer: imp,
		Error: func(err error) {
			if first == nil {
				first = err
			}
		},
	}
	conf.Check("p", fset, []*ast.File{f}, nil)
	return first
}
