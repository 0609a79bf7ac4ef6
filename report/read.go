package report

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/gpureplay/replay/columnar"
)

// scan reads the named columns of the Parquet file path a row group at a
// time (64 Ki rows as replay writes them) and hands each to fn, its
// columns in the order of cols. Only those columns are decoded.
func scan(path string, cols []string, fn func(cs []arrow.Array) error) error {
	return columnar.ScanParquet(path, cols, fn)
}

// scanSchema hands fn the Arrow schema of the Parquet file at path.
func scanSchema(path string, fn func(*arrow.Schema)) error {
	s, err := columnar.ParquetSchema(path)
	if err != nil {
		return err
	}
	fn(s)
	return nil
}

// numRows is the row count in path's footer, read without decoding a column.
func numRows(path string) (int64, error) {
	return columnar.ParquetRows(path)
}

// col asserts that a column has the Arrow type the table's schema gives it
// (docs/OUTPUT.md).
func col[T arrow.Array](a arrow.Array, name string) (T, error) {
	c, ok := a.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("column %q is %s, not the type replay writes", name, a.DataType())
	}
	return c, nil
}

// strs is a string column, plain or large.
type strs interface {
	arrow.Array
	Value(i int) string
}

var _ strs = (*array.String)(nil)
