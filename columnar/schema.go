package columnar

import "github.com/apache/arrow-go/v18/arrow"

// tableID names one output table. To add a table: add an ID here, its
// spec to [specs], and a Sink-side method that appends rows to it.
type tableID int

const (
	tMemory tableID = iota
	tResults
	tInstructions
	tOps
	tAddresses
	numTables
)

type tableSpec struct {
	name   string
	schema *arrow.Schema
}

// Column types: plain (non-dictionary) utf8 strings and unsigned integers,
// every column non-nullable. DuckDB reads them as VARCHAR, UBIGINT,
// UINTEGER and BIGINT; pandas/pyarrow as object/uint64/uint32/int64.
// Parquet still dictionary-encodes the string column chunks, which is where
// the repetition is cheap to remove.
var (
	tString = arrow.BinaryTypes.String
	tU64    = arrow.PrimitiveTypes.Uint64
	tU32    = arrow.PrimitiveTypes.Uint32
	tI64    = arrow.PrimitiveTypes.Int64
	tBool   = arrow.FixedWidthTypes.Boolean
)

func col(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: false}
}

// Column order within each schema is the order of OUTPUT.md, then extras.
// The append code in writer.go indexes builders by these positions.
var specs = [numTables]tableSpec{
	tMemory: {"memory", arrow.NewSchema([]arrow.Field{
		col("space", tString),
		col("group", tI64),
		col("addr", tU64),
		col("value", tU32),
	}, nil)},
	tResults: {"results", arrow.NewSchema([]arrow.Field{
		col("seq", tU64),
		col("lane", tU32),
		col("elem", tU32),
		col("addr", tU64),
		col("value", tU64),
		col("value_hi", tU64),
		col("fault", tString),
	}, nil)},
	tInstructions: {"instructions", arrow.NewSchema([]arrow.Field{
		col("seq", tU64),
		col("dialect", tString),
		col("op", tString),
		col("type", tString),
		col("space", tString),
		col("group", tI64),
		col("warp", tI64),
		col("lanes", tU32),
		col("addresses", tU32),
		col("max_conflict", tU32),
		col("faults", tU32),
		col("text", tString), // extra: the instruction as written (trace.Static.Text)
	}, nil)},
	tOps: {"ops", arrow.NewSchema([]arrow.Field{
		col("dialect", tString),
		col("op", tString),
		col("type", tString),
		col("space", tString),
		col("instructions", tU64),
		col("lanes", tU64),
		col("faults", tU64),
		col("max_conflict", tU32), // max over the group's instructions
		col("conflict_sum", tU64), // sum of the instructions' max_conflict
	}, nil)},
	tAddresses: {"addresses", arrow.NewSchema([]arrow.Field{
		col("space", tString),
		col("group", tI64),
		col("addr", tU64),
		col("accesses", tU64),
		col("warps", tU64),  // distinct (group, warp) pairs
		col("groups", tU64), // distinct groups
		col("order_sensitive", tBool),
		col("exact", tBool), // extra: false when warps or groups is an estimate
	}, nil)},
}

// TableNames returns the names of the tables a [Writer] can write, in the
// order it writes them.
func TableNames() []string {
	names := make([]string, numTables)
	for i, s := range specs {
		names[i] = s.name
	}
	return names
}

func tableByName(name string) (tableID, bool) {
	for i, s := range specs {
		if s.name == name {
			return tableID(i), true
		}
	}
	return 0, false
}
