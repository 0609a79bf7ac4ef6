// Package duckdbq runs SQL through DuckDB for tests, so that the output
// tables are checked by a reader that shares no code with the writer
// (arrow-go). It shells out to tools/duckdb/query.mjs, which uses the npm
// package @duckdb/node-api; set it up once with
//
//	npm ci --prefix tools/duckdb
//
// Tests call [Require] first: it skips the test when node or the npm
// package is missing on a developer machine, and fails it under make test
// and in CI (package internal/testenv).
package duckdbq

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpureplay/replay/internal/testenv"
)

// Result is one query's result.
type Result struct {
	Columns []Column
	// Rows holds the values as decoded from JSON: every integer column
	// (TINYINT .. UHUGEINT) as a decimal string, VARCHAR as string, NULL as
	// nil, BOOLEAN as bool, other numbers as json.Number, nested values as
	// []any and map[string]any.
	Rows [][]any
	// Elapsed is how long running the query's statements took inside
	// DuckDB's process, without starting node, loading DuckDB or encoding
	// the result as JSON: a benchmark's measure of one statement. CPU is
	// the CPU time the process (all its threads) used meanwhile.
	Elapsed, CPU time.Duration
}

// Column is a result column: its name and DuckDB type name (UBIGINT,
// UINTEGER, BIGINT, VARCHAR, INTEGER[], ...).
type Column struct{ Name, Type string }

// Query runs sql (one or more statements; the last one's result is
// returned) with an in-memory DuckDB. Relative paths in sql are relative to
// the working directory. The module root, where tools/duckdb lives, is
// found by walking up from the working directory to go.mod.
func Query(sql string) (*Result, error) {
	var r rawResult
	if err := runScript(nil, sql, &r); err != nil {
		return nil, fmt.Errorf("%w\nSQL: %s", err, sql)
	}
	return r.result(), nil
}

// QueryBatch runs each SQL text in turn, as [Query] does, but with one
// DuckDB instance and connection for all of them (so tables created by one
// are seen by the next) and one process: starting node and loading DuckDB
// takes most of a second. It returns one result per text.
func QueryBatch(sqls []string) ([]*Result, error) {
	in, err := json.Marshal(sqls)
	if err != nil {
		return nil, fmt.Errorf("duckdbq: %w", err)
	}
	var raw []rawResult
	if err := runScript([]string{"--batch"}, string(in), &raw); err != nil {
		return nil, err
	}
	if len(raw) != len(sqls) {
		return nil, fmt.Errorf("duckdbq: %d results for %d queries", len(raw), len(sqls))
	}
	rs := make([]*Result, len(raw))
	for i := range raw {
		rs[i] = raw[i].result()
	}
	return rs, nil
}

type rawResult struct {
	Columns   []struct{ Name, Type string }
	Rows      [][]any
	ElapsedNs json.Number
	CPUNs     json.Number
}

func (raw *rawResult) result() *Result {
	r := &Result{Rows: raw.Rows}
	if ns, err := raw.ElapsedNs.Int64(); err == nil {
		r.Elapsed = time.Duration(ns)
	}
	if ns, err := raw.CPUNs.Int64(); err == nil {
		r.CPU = time.Duration(ns)
	}
	for _, c := range raw.Columns {
		r.Columns = append(r.Columns, Column{c.Name, c.Type})
	}
	return r
}

// runScript runs query.mjs with args and stdin and decodes its JSON output
// into out.
func runScript(args []string, stdin string, out any) error {
	script, err := scriptPath()
	if err != nil {
		return err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("duckdbq: node not found: %w", err)
	}
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("duckdbq: %s", msg)
	}
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("duckdbq: decoding query.mjs output: %w", err)
	}
	return nil
}

// QuoteString returns s as a SQL string literal, for file paths.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// ModuleRoot returns the directory of the go.mod that contains the working
// directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("duckdbq: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("duckdbq: no go.mod above the working directory")
		}
		dir = parent
	}
}

func scriptPath() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "tools", "duckdb", "query.mjs"), nil
}

// missing says what of the setup is absent, or "" if everything is there.
func missing() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not on PATH (install Node.js >= 18)"
	}
	root, err := ModuleRoot()
	if err != nil {
		return err.Error()
	}
	pkg := filepath.Join(root, "tools", "duckdb", "node_modules", "@duckdb", "node-api", "package.json")
	if _, err := os.Stat(pkg); err != nil {
		return "tools/duckdb/node_modules has no @duckdb/node-api; run: npm ci --prefix tools/duckdb"
	}
	return ""
}

var probe = sync.OnceValues(func() (string, error) {
	if m := missing(); m != "" {
		return m, nil
	}
	// Everything is installed: a query must work now (this catches, for
	// example, a native binding missing for this platform).
	r, err := Query("SELECT 42::UBIGINT AS x")
	if err == nil && (len(r.Rows) != 1 || len(r.Rows[0]) != 1 || r.Rows[0][0] != "42") {
		err = fmt.Errorf("duckdbq: probe query returned %+v, want [[\"42\"]]", r)
	}
	return "", err
})

// Require makes sure Query can run. If node or the npm package is missing
// it skips t, naming what is missing and how to install it, or fails t
// when testenv.Required. If they are present but a
// probe query fails, it fails t.
func Require(t testing.TB) {
	t.Helper()
	m, err := probe()
	switch {
	case err != nil:
		t.Fatalf("duckdbq: DuckDB is installed but does not work: %v", err)
	case m == "":
		return
	default:
		testenv.Missing(t, "duckdbq: DuckDB reader unavailable: "+m)
	}
}
