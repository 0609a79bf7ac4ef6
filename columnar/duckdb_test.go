package columnar

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpureplay/replay/internal/duckdbq"
)

// The tests in this file read the Parquet files with DuckDB (through
// internal/duckdbq), a reader that shares no code with arrow-go.

func strRows(rows [][]any) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			out[i][j] = fmt.Sprint(v)
		}
	}
	return out
}

// wantDuckDBTypes is OUTPUT.md's types as DuckDB names them.
var wantDuckDBTypes = map[string]string{
	"memory":       "space VARCHAR, group BIGINT, addr UBIGINT, value UINTEGER",
	"results":      "seq UBIGINT, lane UINTEGER, elem UINTEGER, addr UBIGINT, value UBIGINT, value_hi UBIGINT, fault VARCHAR",
	"instructions": "seq UBIGINT, dialect VARCHAR, op VARCHAR, type VARCHAR, space VARCHAR, group BIGINT, warp BIGINT, lanes UINTEGER, addresses UINTEGER, max_conflict UINTEGER, faults UINTEGER, text VARCHAR, cas_failed UINTEGER, sectors UINTEGER",
	"ops":          "dialect VARCHAR, op VARCHAR, type VARCHAR, space VARCHAR, instructions UBIGINT, lanes UBIGINT, faults UBIGINT, max_conflict UINTEGER, conflict_sum UBIGINT, sectors UBIGINT",
	"addresses":    "space VARCHAR, group BIGINT, addr UBIGINT, accesses UBIGINT, warps UBIGINT, groups UBIGINT, order_sensitive BOOLEAN, exact BOOLEAN",
}

func TestDuckDB(t *testing.T) {
	duckdbq.Require(t)
	dir := t.TempDir()
	w, err := New(dir, WithBatchRows(7))
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	fx := newFixture(n)
	fx.feed(t, w, 9)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	want := fx.want()
	src := func(table string) string {
		return "read_parquet(" + duckdbq.QuoteString(filepath.Join(dir, table+".parquet")) + ")"
	}

	// All queries go to one DuckDB process; each check then looks at its
	// own result.
	var (
		sqls   []string
		checks []func(t *testing.T, r *duckdbq.Result)
	)
	query := func(sql string, check func(t *testing.T, r *duckdbq.Result)) {
		sqls = append(sqls, sql)
		checks = append(checks, check)
	}
	expect := func(name, sql string, want [][]string) {
		query(sql, func(t *testing.T, r *duckdbq.Result) {
			if got := strRows(r.Rows); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: got %q, want %q", name, got, want)
			}
		})
	}

	for _, table := range TableNames() {
		// Types, as DESCRIBE reports them.
		query("DESCRIBE SELECT * FROM "+src(table), func(t *testing.T, r *duckdbq.Result) {
			var cols []string
			for _, row := range r.Rows {
				cols = append(cols, fmt.Sprintf("%v %v", row[0], row[1]))
			}
			if got := strings.Join(cols, ", "); got != wantDuckDBTypes[table] {
				t.Errorf("DESCRIBE %s\n got  %s\n want %s", table, got, wantDuckDBTypes[table])
			}
		})
		// Every row and value, in file order.
		query("SELECT * EXCLUDE (file_row_number) FROM read_parquet("+
			duckdbq.QuoteString(filepath.Join(dir, table+".parquet"))+", file_row_number = true) ORDER BY file_row_number",
			func(t *testing.T, r *duckdbq.Result) {
				got, exp := strRows(r.Rows), strRows(want[table])
				if len(got) != len(exp) {
					t.Errorf("%s: %d rows, want %d", table, len(got), len(exp))
					return
				}
				for i := range got {
					if !reflect.DeepEqual(got[i], exp[i]) {
						t.Errorf("%s: row %d = %q, want %q", table, i, got[i], exp[i])
						return
					}
				}
			})
	}

	// typeof, per value, for the columns whose type matters most.
	expect("typeof(results)", "SELECT DISTINCT typeof(seq), typeof(lane), typeof(addr), typeof(value), typeof(value_hi), typeof(fault) FROM "+src("results"),
		[][]string{{"UBIGINT", "UINTEGER", "UBIGINT", "UBIGINT", "UBIGINT", "VARCHAR"}})
	expect("typeof(memory)", "SELECT DISTINCT typeof(\"group\"), typeof(value) FROM "+src("memory"),
		[][]string{{"BIGINT", "UINTEGER"}})
	expect("row counts", fmt.Sprintf("SELECT (SELECT count(*) FROM %s), (SELECT count(*) FROM %s), (SELECT count(*) FROM %s), (SELECT count(*) FROM %s)",
		src("memory"), src("results"), src("instructions"), src("ops")),
		[][]string{{"50", "50", "50", "4"}})
	// Filters on values above 2^63 go through the Parquet statistics,
	// which must use unsigned order.
	expect("value = 2^64-1", "SELECT seq, lane, addr, value, value_hi, fault FROM "+src("results")+" WHERE value = 18446744073709551615",
		[][]string{{"0", "0", "9223372036854775808", "18446744073709551615", "16045690981097406464", ""}})
	expect("value_hi above 2^63", "SELECT value_hi FROM "+src("results")+" WHERE value_hi > 9223372036854775807 AND seq = 12",
		[][]string{{"16045690981097406512"}}) // row 48: 0xdeadbeef00000000 | 48
	expect("addr above 2^63", "SELECT count(*), min(addr), max(addr) FROM "+src("results")+" WHERE addr > 9223372036854775908",
		[][]string{{"24", "9223372036854775912", "9223372036854776004"}})
	expect("min/max value", "SELECT min(value), max(value), max(value_hi) FROM "+src("results"),
		[][]string{{"18446744073709551566", "18446744073709551615", "16045690981097406512"}})
	// The filters go through the statistics: the empty string is within
	// the fault chunks' min and max.
	expect("no fault", "SELECT count(*), min(seq), max(seq) FROM "+src("results")+" WHERE fault = ''",
		[][]string{{"10", "0", "11"}})
	expect("faults", "SELECT fault, count(*) FROM "+src("results")+" GROUP BY fault ORDER BY fault",
		[][]string{{"", "10"}, {"invalid_space", "10"}, {"misaligned", "10"}, {"out_of_bounds", "10"}, {"out_of_range", "10"}})
	expect("memory max uint32", "SELECT space, \"group\", addr, value FROM "+src("memory")+" WHERE value = 4294967295",
		[][]string{{"global", "-1", "0", "4294967295"}})
	expect("memory groups", "SELECT space, \"group\", count(*) FROM "+src("memory")+" GROUP BY ALL ORDER BY ALL",
		[][]string{{"bti(0x4)", "-1", "16"}, {"global", "-1", "17"}, {"shared", "0", "8"}, {"shared", "1", "9"}})
	expect("ops totals match instructions", fmt.Sprintf(`SELECT count(*) FROM %s o JOIN (
			SELECT dialect, op, type, space, count(*) AS n, sum(lanes) AS l, sum(faults) AS f,
				max(max_conflict) AS m, sum(max_conflict) AS s, sum(sectors) AS c
			FROM %s GROUP BY ALL) i USING (dialect, op, type, space)
		WHERE o.instructions = i.n AND o.lanes = i.l AND o.faults = i.f AND o.max_conflict = i.m AND o.conflict_sum = i.s
			AND o.sectors = i.c`,
		src("ops"), src("instructions")),
		[][]string{{"4"}})

	rs, err := duckdbq.QueryBatch(sqls)
	if err != nil {
		t.Fatal(err)
	}
	for i, check := range checks {
		check(t, rs[i])
	}
}

// TestDuckDBExtremes: DuckDB reads back every value of every table of the
// extreme fixture: the DELTA_BINARY_PACKED columns with deltas that
// overflow 64 bits, and instruction texts written PLAIN because they
// overflow a dictionary page.
func TestDuckDBExtremes(t *testing.T) {
	duckdbq.Require(t)
	dir := t.TempDir()
	w, err := New(dir, WithBatchRows(1500))
	if err != nil {
		t.Fatal(err)
	}
	fx := extremeFixture(3000)
	fx.feed(t, w, 700)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	want := fx.want()
	var sqls []string
	for _, table := range TableNames() {
		sqls = append(sqls, "SELECT * EXCLUDE (file_row_number) FROM read_parquet("+
			duckdbq.QuoteString(filepath.Join(dir, table+".parquet"))+", file_row_number = true) ORDER BY file_row_number")
	}
	rs, err := duckdbq.QueryBatch(sqls)
	if err != nil {
		t.Fatal(err)
	}
	for i, table := range TableNames() {
		got, exp := strRows(rs[i].Rows), strRows(want[table])
		if len(got) != len(exp) {
			t.Errorf("%s: %d rows, want %d", table, len(got), len(exp))
			continue
		}
		for j := range got {
			if !reflect.DeepEqual(got[j], exp[j]) {
				t.Errorf("%s: row %d = %.200q, want %.200q", table, j, got[j], exp[j])
				break
			}
		}
	}
}
