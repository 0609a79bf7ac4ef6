package report

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// scan reads the named columns of the Parquet file path in record batches
// of up to 64 Ki rows and hands each batch to fn, its columns in the order
// of cols. Only those columns are decoded.
func scan(path string, cols []string, fn func(cs []arrow.Array) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer pf.Close()
	mem := memory.DefaultAllocator
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, mem)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// The tables have flat schemas: Arrow field i is Parquet leaf column i.
	idx := make([]int, len(cols))
	for i, c := range cols {
		fi := schema.FieldIndices(c)
		if len(fi) != 1 {
			return fmt.Errorf("%s: no column %q (is it a replay's table?)", path, c)
		}
		idx[i] = fi[0]
	}
	rr, err := fr.GetRecordReader(context.Background(), idx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rr.Release()
	cs := make([]arrow.Array, len(cols))
	for rr.Next() {
		rec := rr.RecordBatch()
		for i, c := range cols {
			fi := rec.Schema().FieldIndices(c)
			if len(fi) != 1 {
				return fmt.Errorf("%s: no column %q in a batch", path, c)
			}
			cs[i] = rec.Column(fi[0])
		}
		if err := fn(cs); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// scanSchema hands fn the Arrow schema of the Parquet file at path.
func scanSchema(path string, fn func(*arrow.Schema)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	s, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fn(s)
	return nil
}

// numRows is the row count in path's footer, read without decoding a column.
func numRows(path string) (int64, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	defer pf.Close()
	return pf.NumRows(), nil
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
