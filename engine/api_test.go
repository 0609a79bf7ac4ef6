package engine

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// exportedFuncs parses the package's files (not its tests) and returns every
// exported function and method go doc lists (functions grouped under a
// type included), by name ("Replay", "Collector.Word"), and every exported
// name of the package.
func exportedFuncs(t *testing.T) (map[string]*ast.FuncDecl, []string) {
	t.Helper()
	bp, err := build.ImportDir(".", 0) // the files this platform builds
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/gpureplay/replay/engine")
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]*ast.FuncDecl{}
	var names []string
	for _, f := range p.Funcs {
		funcs[f.Name] = f.Decl
	}
	for _, ty := range p.Types {
		names = append(names, ty.Name)
		for _, f := range ty.Funcs {
			funcs[f.Name] = f.Decl
		}
		for _, m := range ty.Methods {
			funcs[ty.Name+"."+m.Name] = m.Decl
		}
		for _, v := range append(ty.Consts, ty.Vars...) {
			names = append(names, v.Names...)
		}
	}
	for _, v := range append(p.Consts, p.Vars...) {
		names = append(names, v.Names...)
	}
	for name := range funcs {
		names = append(names, name)
	}
	return funcs, names
}

// TestEntryPointsTakeContextFirst: the package's entry points (the
// exported functions and methods that read a trace: a parameter is a
// trace.Source, or a function returning one) are Replay, ExploreOrders
// and Races, and each takes a context.Context first and functional
// options last; the reference interpreter and the forms the entry points
// replaced (ReplayContext, New and Engine.Run, ExploreOrders' positional
// orders, RacesOptions) are not exported.
func TestEntryPointsTakeContextFirst(t *testing.T) {
	funcs, names := exportedFuncs(t)
	var entries []string
	for name, d := range funcs {
		var params []string
		for _, f := range d.Type.Params.List {
			for range max(len(f.Names), 1) {
				params = append(params, types.ExprString(f.Type))
			}
		}
		reads := slices.ContainsFunc(params, func(p string) bool {
			return strings.Contains(p, "trace.Source") // trace.Source, trace.SourceCloser
		})
		if !reads {
			continue
		}
		entries = append(entries, name)
		if params[0] != "context.Context" {
			t.Errorf("%s(%s): an entry point takes a context.Context first", name, strings.Join(params, ", "))
		}
		if params[len(params)-1] != "...Option" {
			t.Errorf("%s(%s): an entry point takes its options last, as ...Option", name, strings.Join(params, ", "))
		}
	}
	slices.Sort(entries)
	if want := []string{"ExploreOrders", "Races", "Replay"}; !slices.Equal(entries, want) {
		t.Errorf("the entry points are %v, want %v", entries, want)
	}
	for _, gone := range []string{"Reference", "ReplayContext", "New", "Engine", "Engine.Run", "RacesOptions"} {
		if slices.Contains(names, gone) {
			t.Errorf("%s is exported", gone)
		}
	}
	if !slices.Contains(names, "ValidateOptions") {
		t.Errorf("ValidateOptions is not exported (exported: %v)", names)
	}
}

// TestEntryPointsRefuseOptionsTheyDoNotRead: an option an entry point
// does not read is an error that names it, not silently ignored; what
// each reads is in its documentation.
func TestEntryPointsRefuseOptionsTheyDoNotRead(t *testing.T) {
	const src = ".region global 0x1000 0x100\natom.global.add.u32 d, [a], 1; | a=0x1000\n"
	open := func() (trace.SourceCloser, error) { return nopSourceCloser{textSource(t, src)}, nil }
	for _, c := range []struct {
		entry string
		run   func(Option) error
		reads []string
	}{
		{"Replay", func(o Option) error {
			var c Collector
			_, err := Replay(t.Context(), textSource(t, src), &c, o)
			if err != nil && (!c.Aborted || c.Committed) {
				t.Errorf("Replay refused an option but left the sink aborted %v, committed %v", c.Aborted, c.Committed)
			}
			return err
		}, []string{"WithShards", "WithWorkers", "WithPartition", "WithStrict", "WithBatchInsts", "WithMaxMemory", "WithExplore", "WithProgress", "WithOrder", "WithInterleave"}},
		{"ExploreOrders", func(o Option) error {
			_, err := ExploreOrders(t.Context(), open, o)
			return err
		}, []string{"WithShards", "WithWorkers", "WithPartition", "WithStrict", "WithBatchInsts", "WithMaxMemory", "WithProgress", "WithOrders"}},
		{"Races", func(o Option) error {
			_, err := Races(t.Context(), textSource(t, src), o)
			return err
		}, []string{"WithClusterSize"}},
	} {
		for name, o := range everyOption() {
			err := c.run(o)
			reads := slices.Contains(c.reads, name)
			switch {
			case reads && err != nil:
				t.Errorf("%s(%s): %v", c.entry, name, err)
			case !reads && (err == nil || !strings.Contains(err.Error(), c.entry+" does not read "+name)):
				t.Errorf("%s(%s): error %v, want %q", c.entry, name, err, c.entry+" does not read "+name)
			}
		}
	}
}

// everyOption is one valid value of each exported option, by name.
func everyOption() map[string]Option {
	return map[string]Option{
		"WithShards": WithShards(3), "WithWorkers": WithWorkers(2), "WithPartition": WithPartition(0, 1),
		"WithStrict": WithStrict(false), "WithBatchInsts": WithBatchInsts(16), "WithMaxMemory": WithMaxMemory(1 << 24),
		"WithExplore": WithExplore(true), "WithProgress": WithProgress(func(Summary) {}),
		"WithOrder": WithOrder(OrderReverse, 0), "WithInterleave": WithInterleave(0),
		"WithOrders": WithOrders(2, 1), "WithClusterSize": WithClusterSize(2),
	}
}

// TestValidateOptions: ValidateOptions gives the error an entry point
// gives for an invalid value or combination, and accepts every option's
// valid value (which some entry point reads).
func TestValidateOptions(t *testing.T) {
	for name, o := range everyOption() {
		if err := ValidateOptions(o); err != nil {
			t.Errorf("ValidateOptions(%s): %v", name, err)
		}
	}
	for _, c := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithShards(0)}, "shards: 0 is outside 1..65536"},
		{[]Option{WithWorkers(2000)}, "workers: 2000 is outside 0..1024"},
		{[]Option{WithBatchInsts(0)}, "batch: 0 instructions is outside 1..1048576"},
		{[]Option{WithMaxMemory(1000)}, "max memory: 1000 bytes is under 1 MiB"},
		{[]Option{WithPartition(2, 2)}, "partition 2/2: want 0 <= i < n <= 65536"},
		{[]Option{WithOrder(Order(9), 0)}, "order 9: unknown"},
		{[]Option{WithInterleave(4)}, "interleave 4: only with the random order"},
		{[]Option{WithOrder(OrderRandom, 1), WithInterleave(4)}, ""},
		{[]Option{WithOrders(0, 1)}, "explore-orders: want at least 1 random order, got 0"},
		{[]Option{WithClusterSize(0)}, "cluster size 0: want 1 or more"},
		{[]Option{nil}, "engine: ValidateOptions: a nil Option"},
	} {
		err := ValidateOptions(c.opts...)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("ValidateOptions: %v, want %q", err, c.want)
		}
		if c.want == "" {
			continue
		}
		var col Collector
		_, rerr := Replay(t.Context(), textSource(t, ".region global 0x0 0x10\n"), &col, c.opts...)
		if want := strings.Replace(c.want, "ValidateOptions", "Replay", 1); fmt.Sprint(rerr) != want {
			t.Errorf("Replay: %v, want %q as ValidateOptions", rerr, want)
		}
	}
}

// nopSourceCloser is a Source whose Close does nothing.
type nopSourceCloser struct{ trace.Source }

func (nopSourceCloser) Close() error { return nil }

// TestEntryPointsStopWhenCancelled: each entry point given a context
// already done returns an error wrapping its error, and Replay aborts its
// sink.
func TestEntryPointsStopWhenCancelled(t *testing.T) {
	const src = ".region global 0x1000 0x100\natom.global.add.u32 d, [a], 1; | a=0x1000\n"
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var c Collector
	_, err := Replay(ctx, textSource(t, src), &c)
	if !errors.Is(err, context.Canceled) || !c.Aborted || c.Committed {
		t.Errorf("Replay: %v, aborted %v, committed %v; want context.Canceled and an aborted sink", err, c.Aborted, c.Committed)
	}
	opened := 0
	open := func() (trace.SourceCloser, error) { opened++; return nopSourceCloser{textSource(t, src)}, nil }
	if _, err := ExploreOrders(ctx, open); !errors.Is(err, context.Canceled) || opened != 0 {
		t.Errorf("ExploreOrders: %v, the trace opened %d times; want context.Canceled, never opened", err, opened)
	}
	if _, err := Races(ctx, textSource(t, src)); !errors.Is(err, context.Canceled) {
		t.Errorf("Races: %v, want context.Canceled", err)
	}
}
