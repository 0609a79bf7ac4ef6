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
	tOrders // with -explore-orders only: not among the default tables
	tRaces  // with -races only: not among the default tables
	numTables
)

type tableSpec struct {
	name   string
	schema *arrow.Schema
	// encs is each column's Parquet encoding, in schema order.
	encs []encoding
	// keyed marks the string columns stored by the row's key (batch.go):
	// the writer of the table sets every keyed column of a row through
	// one key.
	keyed []bool
	// affine: the table's integer columns and its keys start each batch
	// constant (colBuf.konst), its writer keeping them so row by row
	// (batch.keep): the instructions table, whose seq is a progression
	// and, for a hot counter, every column.
	affine bool
	// zeros marks the integer columns that start each batch constant 0
	// (colBuf.konst, no row stored) and stay so while the writer's rows
	// are 0 (the results' elem and value_hi, 0 but for vector and 128-bit
	// accesses): the writer stores such a column's rows only from the
	// first batch rows that are not.
	zeros []bool
	// progs marks the integer columns that start each batch constant
	// (colBuf.konst, no row stored) and stay so while the writer's rows
	// keep to a progression (putStatCol): the results' addr and value,
	// a hot counter's one address and its count, one a lane.
	progs []bool
	// overlap: the table is written when the replay leaves a core free
	// (the memory table, after the trace), and its pipeline encodes a
	// batch while the one before is written (pipeline.runOverlapped).
	overlap bool
}

// encoding is how a column's values are stored in Parquet. Every column
// chunk is then zstd-compressed. parquet.go has the measurements behind
// each column's choice.
type encoding uint8

const (
	// encPlain: PLAIN, for booleans and small integers that repeat (the
	// ops' and races' counts): zstd removes the repetition for less than
	// any encoding costs. Not the results' lane: partial warps' lanes
	// cost zstd more than packing their deltas (parquet.go).
	encPlain encoding = iota
	// encDelta: DELTA_BINARY_PACKED, for increasing columns (seq; addr and
	// group in the tables sorted by address, where a group holds for
	// long runs; instructions.group, a grid's groups in order) and
	// integers with many distinct values (addresses, values, counts):
	// bit-packing the deltas is both smaller and several times faster
	// than compressing PLAIN's 8 bytes, and a block of 128 equal deltas
	// (a run of one group, words one apart) costs a pass and no packing.
	// Also the instructions' lanes and faults, constant over most
	// batches: a constant delta column's pages are written from its
	// progression without a row (encodeAffine), a PLAIN one's spell out
	// every row for zstd to take out again.
	encDelta
	// encDict: RLE_DICTIONARY, for the string columns, with a dictionary
	// the writer builds itself per batch, so that no row's string is
	// hashed (writer.go, parquet.go).
	encDict
)

// Column types: plain (non-dictionary) utf8 strings and unsigned integers,
// every column non-nullable. DuckDB reads them as VARCHAR, UBIGINT,
// UINTEGER and BIGINT; pandas/pyarrow as object/uint64/uint32/int64.
// The Parquet files dictionary-encode the string column chunks, but the
// logical type (and the Arrow schema stored in the file) stays utf8.
var (
	tString = arrow.BinaryTypes.String
	tU64    = arrow.PrimitiveTypes.Uint64
	tU32    = arrow.PrimitiveTypes.Uint32
	tI64    = arrow.PrimitiveTypes.Int64
	tBool   = arrow.FixedWidthTypes.Boolean
)

// colSpec is one column of a table: its field and Parquet encoding.
type colSpec struct {
	f     arrow.Field
	enc   encoding
	keyed bool
	zeros bool // tableSpec.zeros
	prog  bool // tableSpec.progs
}

// zerosCol is an integer column of tableSpec.zeros: DELTA_BINARY_PACKED,
// so that a batch of zeros is a page header and no rows (encodeAffine).
func zerosCol(name string, t arrow.DataType) colSpec {
	c := col(name, t, encDelta)
	c.zeros = true
	return c
}

// progCol is an integer column of tableSpec.progs: DELTA_BINARY_PACKED,
// so that a batch on a progression is written from it (encodeAffine).
func progCol(name string, t arrow.DataType) colSpec {
	c := col(name, t, encDelta)
	c.prog = true
	return c
}

// col is a column: strings are always dictionary-encoded, integers
// PLAIN unless enc says otherwise.
func col(name string, t arrow.DataType, enc ...encoding) colSpec {
	c := colSpec{f: arrow.Field{Name: name, Type: t, Nullable: false}}
	switch {
	case t.ID() == arrow.STRING:
		c.enc = encDict
	case len(enc) > 0:
		c.enc = enc[0]
	}
	return c
}

// keyedCol is a string column that is a function of the row's key
// (batch.go).
func keyedCol(name string) colSpec {
	c := col(name, tString)
	c.keyed = true
	return c
}

// affineTable is s with its integer columns and keys constant while
// they keep to a progression (tableSpec.affine).
func affineTable(s tableSpec) tableSpec {
	s.affine = true
	return s
}

// overlappedTable is s with its batches encoded while the one before is
// written (tableSpec.overlap).
func overlappedTable(s tableSpec) tableSpec {
	s.overlap = true
	return s
}

func newTableSpec(name string, cols ...colSpec) tableSpec {
	s := tableSpec{name: name}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = c.f
		s.encs = append(s.encs, c.enc)
		s.keyed = append(s.keyed, c.keyed)
		s.zeros = append(s.zeros, c.zeros)
		s.progs = append(s.progs, c.prog)
	}
	s.schema = arrow.NewSchema(fields, nil)
	return s
}

// Column order within each schema is the order of OUTPUT.md, then extras.
// The append code in writer.go indexes columns by these positions.
var specs = [numTables]tableSpec{
	tMemory: overlappedTable(newTableSpec("memory",
		col("space", tString),
		col("group", tI64, encDelta),
		col("addr", tU64, encDelta),
		col("value", tU32, encDelta),
	)),
	tResults: newTableSpec("results",
		col("seq", tU64, encDelta),
		col("lane", tU32, encDelta),
		zerosCol("elem", tU32),
		progCol("addr", tU64),
		progCol("value", tU64),
		zerosCol("value_hi", tU64),
		col("fault", tString),
	),
	tInstructions: affineTable(newTableSpec("instructions",
		col("seq", tU64, encDelta),
		// The strings of a row are its instruction's (trace.Static).
		keyedCol("dialect"),
		keyedCol("op"),
		keyedCol("type"),
		keyedCol("space"),
		col("group", tI64, encDelta),
		col("warp", tI64, encDelta),
		col("lanes", tU32, encDelta),
		col("addresses", tU32, encDelta),
		col("max_conflict", tU32, encDelta),
		col("faults", tU32, encDelta),
		keyedCol("text"),                  // extra: the instruction as written (trace.Static.Text)
		col("cas_failed", tU32, encDelta), // extra: a CAS's lane-elements that did not swap; 0 for other ops
		// extra: distinct 32-byte sectors among the lane-elements' addresses
		col("sectors", tU32, encDelta),
	)),
	tOps: newTableSpec("ops",
		col("dialect", tString),
		col("op", tString),
		col("type", tString),
		col("space", tString),
		col("instructions", tU64),
		col("lanes", tU64),
		col("faults", tU64),
		col("max_conflict", tU32), // max over the group's instructions
		col("conflict_sum", tU64), // sum of the instructions' max_conflict
		col("sectors", tU64),      // extra: sum of the instructions' sectors
	),
	tOrders: newTableSpec("orders",
		col("space", tString),
		col("group", tI64, encDelta),
		col("addr", tU64, encDelta),
		col("order", tString), // "lane", or "random:SEED"
		col("value", tU32, encDelta),
	),
	tRaces: newTableSpec("races",
		col("space", tString),
		col("group", tI64, encDelta),
		col("addr", tU64, encDelta),
		col("rule", tString), // "scope" or "atomic_plain"
		col("seq_a", tU64, encDelta),
		col("dialect_a", tString),
		col("text_a", tString),
		col("group_a", tI64),
		col("warp_a", tI64),
		col("lane_a", tU32),
		col("scope_a", tString),
		col("seq_b", tU64, encDelta),
		col("dialect_b", tString),
		col("text_b", tString),
		col("group_b", tI64),
		col("warp_b", tI64),
		col("lane_b", tU32),
		col("scope_b", tString),
	),
	tAddresses: newTableSpec("addresses",
		col("space", tString),
		col("group", tI64, encDelta),
		col("addr", tU64, encDelta),
		col("accesses", tU64, encDelta),
		col("warps", tU64, encDelta),  // distinct (group, warp) pairs
		col("groups", tU64, encDelta), // distinct groups
		col("order_sensitive", tBool),
		col("exact", tBool), // extra: false when warps or groups is an estimate
	),
}

// TableNames returns the names of the tables a [Writer] writes by default,
// in the order it writes them: every table but orders and races, which
// only `-explore-orders` and `-races` fill ([AllTableNames]).
func TableNames() []string {
	var names []string
	for i, s := range specs {
		if tableID(i) != tOrders && tableID(i) != tRaces {
			names = append(names, s.name)
		}
	}
	return names
}

// AllTableNames returns the names of every table a [Writer] can write.
func AllTableNames() []string {
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
