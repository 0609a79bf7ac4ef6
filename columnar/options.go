package columnar

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Format is which file formats a [Writer] writes. It is a bit set:
// [FormatBoth] is [FormatParquet] | [FormatArrow].
type Format uint8

const (
	FormatParquet Format = 1 << iota // <table>.parquet
	FormatArrow                      // <table>.arrow: Arrow IPC file format (Feather v2), uncompressed
	FormatBoth    = FormatParquet | FormatArrow
)

// String returns the name [ParseFormat] accepts.
func (f Format) String() string {
	switch f {
	case FormatParquet:
		return "parquet"
	case FormatArrow:
		return "arrow"
	case FormatBoth:
		return "both"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat reads a format name as the --format flag gives it:
// "parquet", "arrow" or "both".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "parquet":
		return FormatParquet, nil
	case "arrow":
		return FormatArrow, nil
	case "both":
		return FormatBoth, nil
	}
	return 0, fmt.Errorf("columnar: unknown format %q (want parquet, arrow or both)", s)
}

// DefaultBatchRows is the default number of rows per record batch.
const DefaultBatchRows = 64 << 10

// MaxBatchRows is the largest batch size [WithBatchRows] accepts.
const MaxBatchRows = 1 << 24

type options struct {
	format    Format
	batchRows int
	// seqRowGroups, when set, is the instructions table's row groups
	// (WithSeqRowGroups).
	seqRowGroups int
	tables       [numTables]bool
	mem          memory.Allocator
	logf         func(format string, args ...any)
	meta         [][2]string // key-value metadata of every file, sorted by key
	run          *RunOptions // recorded under MetaOptions (WithRunOptions)
	// storedPageBytes is the largest data page stored rather than
	// compressed (zstdframe.go); TestParquetGolden sets 0, as arrow-go
	// compresses every page.
	storedPageBytes int
	// copied, when set, counts the row groups copied (withCopiedRowGroups).
	copied *int
}

func defaultOptions() options {
	o := options{format: FormatParquet, batchRows: DefaultBatchRows, storedPageBytes: storedPageBytes}
	for i := range o.tables {
		o.tables[i] = tableID(i) != tOrders && tableID(i) != tRaces // only when asked for
	}
	return o
}

// Option configures a [Writer]. An Option that is given an invalid argument
// makes [New] fail with an error wrapping [ErrInvalidOption].
type Option func(*options) error

// ErrInvalidOption is wrapped by the error [New] returns when an [Option]
// was given an invalid argument (before New touches the directory), as
// opposed to a failure to lock, tidy or write the directory.
var ErrInvalidOption = errors.New("columnar: invalid option")

// optionError keeps an option's message and adds [ErrInvalidOption].
type optionError struct{ err error }

func (e optionError) Error() string        { return e.err.Error() }
func (e optionError) Unwrap() error        { return e.err }
func (e optionError) Is(target error) bool { return target == ErrInvalidOption }

// WithFormat selects the file formats to write. The default is [FormatParquet].
func WithFormat(f Format) Option {
	return func(o *options) error {
		if f != FormatParquet && f != FormatArrow && f != FormatBoth {
			return fmt.Errorf("columnar: invalid format %v", f)
		}
		o.format = f
		return nil
	}
}

// WithBatchRows sets how many rows are buffered per table before they are
// written out as one record batch (one Parquet row group, one Arrow IPC
// record batch). The default is [DefaultBatchRows]; n must be in
// [1, [MaxBatchRows]]. Memory use per table is proportional to n.
func WithBatchRows(n int) Option {
	return func(o *options) error {
		if n < 1 || n > MaxBatchRows {
			return fmt.Errorf("columnar: batch rows %d out of range [1, %d]", n, MaxBatchRows)
		}
		o.batchRows = n
		return nil
	}
}

// WithSeqRowGroups makes the instructions table's row groups those of
// seqs [k·n, (k+1)·n), at most n rows each, whatever [WithBatchRows]
// says for the other tables, and records in its Parquet file each row
// group's ops totals (MetaRowGroups). A partition of a split trace
// (`replay -partition i/n SPLIT`) writes its instructions so, with n =
// [DefaultBatchRows]: a row group of every seq of its range is then a
// row group of the merged file, byte for byte, which [Merge] copies
// rather than decodes and encodes again. n must be in [1, [MaxBatchRows]].
func WithSeqRowGroups(n int) Option {
	return func(o *options) error {
		if n < 1 || n > MaxBatchRows {
			return fmt.Errorf("columnar: seq row groups of %d rows out of range [1, %d]", n, MaxBatchRows)
		}
		o.seqRowGroups = n
		return nil
	}
}

// WithTables restricts the output to the named tables (see [TableNames]).
// The default is every table. Rows for a table that is not selected are
// accepted and dropped.
func WithTables(names ...string) Option {
	return func(o *options) error {
		if len(names) == 0 {
			return fmt.Errorf("columnar: WithTables needs at least one table")
		}
		var sel [numTables]bool
		for _, n := range names {
			id, ok := tableByName(n)
			if !ok {
				return fmt.Errorf("columnar: unknown table %q (want one of %v)", n, AllTableNames())
			}
			sel[id] = true
		}
		o.tables = sel
		return nil
	}
}

// WithAllocator sets the allocator for Arrow builders and writers. The
// default is a pool of the writer's own that reuses the buffers of one
// row group for the next (pool.go); tests pass a [memory.CheckedAllocator]
// to prove that nothing leaks.
func WithAllocator(mem memory.Allocator) Option {
	return func(o *options) error {
		if mem == nil {
			return fmt.Errorf("columnar: nil allocator")
		}
		o.mem = mem
		return nil
	}
}

// WithMetadata adds key-value pairs to every table file: the Parquet
// footer's key-value metadata, and the Arrow IPC file's schema metadata.
// `replay -partition` records there which partition of which trace a file
// holds (MetaPartition, MetaTrace), which `replay merge` checks; readers
// see them as the file's metadata (pyarrow's schema.metadata, DuckDB's
// parquet_kv_metadata()).
func WithMetadata(kv map[string]string) Option {
	return func(o *options) error {
		for k, v := range kv {
			if k == "" || strings.HasPrefix(k, "ARROW:") || k == MetaOptions || k == MetaRowGroups {
				return fmt.Errorf("columnar: metadata key %q is reserved", k)
			}
			o.meta = append(o.meta, [2]string{k, v})
		}
		slices.SortFunc(o.meta, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
		return nil
	}
}

// Metadata keys `replay -partition` writes into every table file.
const (
	MetaPartition = "replay.partition" // "i/n": partition i of n
	MetaTrace     = "replay.trace"     // "xxh64:<16 hex digits> <bytes>": the trace file replayed
)

// WithLogf sets where [New] reports, in one line, what it did to tidy the
// directory: a commit of a killed writer it completed, leftover temporary
// and backup files of killed writers it removed. By default it reports
// nothing. A nil logf is the default.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(o *options) error {
		o.logf = logf
		return nil
	}
}

// withCopiedRowGroups counts into n the row groups a merge's Writer
// copies from partitions' files (copyRowGroup), for tests.
func withCopiedRowGroups(n *int) Option {
	return func(o *options) error {
		o.copied = n
		return nil
	}
}

// withStoredPageBytes sets the largest data page stored rather than
// compressed (default storedPageBytes): 0 compresses every page, as
// arrow-go does, for tests that compare bytes with its files.
func withStoredPageBytes(n int) Option {
	return func(o *options) error {
		o.storedPageBytes = n
		return nil
	}
}
