package duckdbq

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestQuery(t *testing.T) {
	Require(t)
	r, err := Query(`SELECT 18446744073709551615::UBIGINT AS u, 4294967295::UINTEGER AS i,
		(-9223372036854775808)::BIGINT AS b, 'it''s' AS s, NULL::INTEGER AS n, 0.5::DOUBLE AS d, true AS t`)
	if err != nil {
		t.Fatal(err)
	}
	wantCols := []Column{{"u", "UBIGINT"}, {"i", "UINTEGER"}, {"b", "BIGINT"}, {"s", "VARCHAR"},
		{"n", "INTEGER"}, {"d", "DOUBLE"}, {"t", "BOOLEAN"}}
	if !reflect.DeepEqual(r.Columns, wantCols) {
		t.Errorf("columns = %v, want %v", r.Columns, wantCols)
	}
	wantRows := [][]any{{"18446744073709551615", "4294967295", "-9223372036854775808", "it's", nil, json.Number("0.5"), true}}
	if !reflect.DeepEqual(r.Rows, wantRows) {
		t.Errorf("rows = %#v, want %#v", r.Rows, wantRows)
	}
}

func TestQueryStatements(t *testing.T) {
	Require(t)
	r, err := Query("CREATE TABLE x AS SELECT range AS v FROM range(5); SELECT sum(v) AS s, count(*) AS c FROM x")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]any{{"10", "5"}}; !reflect.DeepEqual(r.Rows, want) {
		t.Errorf("rows = %#v, want %#v", r.Rows, want)
	}
}

func TestQueryError(t *testing.T) {
	Require(t)
	_, err := Query("SELECT no_such_column")
	if err == nil || !strings.Contains(err.Error(), "no_such_column") {
		t.Fatalf("err = %v, want a binder error naming the column", err)
	}
}

func TestQuoteString(t *testing.T) {
	if got, want := QuoteString("/tmp/a'b"), "'/tmp/a''b'"; got != want {
		t.Errorf("QuoteString = %s, want %s", got, want)
	}
}

func TestQueryBatch(t *testing.T) {
	Require(t)
	rs, err := QueryBatch([]string{
		"CREATE TABLE x (v UBIGINT)",
		"INSERT INTO x VALUES (18446744073709551615), (1)",
		"SELECT max(v) AS m, typeof(max(v)) AS t FROM x",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	if want := [][]any{{"18446744073709551615", "UBIGINT"}}; !reflect.DeepEqual(rs[2].Rows, want) {
		t.Errorf("rows = %#v, want %#v", rs[2].Rows, want)
	}
	for i, r := range rs {
		if r.Elapsed <= 0 || r.Elapsed > time.Minute {
			t.Errorf("query %d: Elapsed = %v, want a duration in (0, 1m]", i, r.Elapsed)
		}
		if r.CPU < 0 || r.CPU > time.Minute {
			t.Errorf("query %d: CPU = %v, want a duration in [0, 1m]", i, r.CPU)
		}
	}
	_, err = QueryBatch([]string{"SELECT 1", "SELECT nope"})
	if err == nil || !strings.Contains(err.Error(), "query 1") {
		t.Errorf("err = %v, want one naming query 1", err)
	}
}
