package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Packages and modules the command must not link (issue 47, item 2: a
// quick start). arrow-go's parquet packages import arrow/compute, whose
// kernel registry costs milliseconds of every start; pqarrow brought in
// Arrow Flight, gRPC and protobuf, half the binary. The command writes
// and reads Parquet with columnar's own code instead (pqmeta.go,
// pqread.go), and needs none of them. gonum/plot (the report draws its
// own SVG) and its LaTeX and font tables cost milliseconds more; so did
// github.com/pkg/profile v1.7.0's wall-clock mode (fgprof), which links
// net/http, and with it cgo's resolver, TLS and x509: v1.6.0 has every
// mode -profile offers and none of that.
var (
	forbiddenPackages = []string{
		"github.com/apache/arrow-go/v18/arrow/compute",
		"github.com/apache/arrow-go/v18/arrow/flight",
		"github.com/apache/arrow-go/v18/parquet",
		"github.com/apache/thrift",
		"github.com/andybalholm/brotli",
		"google.golang.org/grpc",
		"google.golang.org/protobuf",
		"golang.org/x/net",
		"gonum.org/v1/plot",
		"net/http",
		"crypto/tls",
		"github.com/felixge/fgprof",
		"testing",
	}
	forbiddenModules = []string{
		"github.com/apache/thrift",
		"github.com/andybalholm/brotli",
		"google.golang.org/grpc",
		"google.golang.org/protobuf",
		"google.golang.org/genproto/googleapis/rpc",
		"golang.org/x/net",
		"gonum.org/v1/plot",
		"github.com/felixge/fgprof",
	}
)

// forbidden returns the entries of list that are, or are inside, one of
// the paths of deny.
func forbidden(list, deny []string) []string {
	var bad []string
	for _, p := range list {
		for _, d := range deny {
			if p == d || strings.HasPrefix(p, d+"/") {
				bad = append(bad, p)
				break
			}
		}
	}
	return bad
}

// TestItem47_02_CommandDeps builds the command and checks that neither its
// packages (go list -deps) nor the modules in the binary (go version -m)
// include what it does not need: arrow-go's compute and Parquet packages,
// Flight, gRPC, protobuf, Thrift, brotli, x/net, or the testing package.
func TestItem47_02_CommandDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the command's packages: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if !slices.Contains(pkgs, "github.com/gpureplay/replay/columnar") || !slices.Contains(pkgs, "github.com/apache/arrow-go/v18/arrow/ipc") {
		t.Fatalf("go list -deps does not list columnar and arrow/ipc: %d packages, not the command's", len(pkgs))
	}
	if bad := forbidden(pkgs, forbiddenPackages); len(bad) > 0 {
		t.Errorf("the command links %d packages it does not need:\n%s", len(bad), strings.Join(bad, "\n"))
	}

	bin := filepath.Join(t.TempDir(), "replay")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err = exec.Command(goTool, "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var mods []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "dep" {
			mods = append(mods, f[1])
		}
	}
	if !slices.Contains(mods, "github.com/apache/arrow-go/v18") {
		t.Fatalf("go version -m lists no arrow-go module among %d: not the build info of the command", len(mods))
	}
	if bad := forbidden(mods, forbiddenModules); len(bad) > 0 {
		t.Errorf("the binary holds %d modules it does not need: %s", len(bad), strings.Join(bad, ", "))
	}
}
