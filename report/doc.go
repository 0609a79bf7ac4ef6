// Package report turns a replay's output directory into one self-contained
// HTML page: the command the tables were replayed with (their
// replay.options metadata), headline numbers (instructions, lanes,
// lane-ops, faults, distinct addresses, the hottest address with its share
// of all accesses and its warps, the worst max_conflict, memory words),
// plots drawn as inline SVG by the package's own renderer (svg.go), and
// under each plot the DuckDB SQL, over the Parquet files by relative path
// ('instructions.parquet'), that gives its data. `replay report DIR -o
// FILE` (cmd/replay) writes it; docs/REPORT.md shows it.
//
// The plots: the hottest addresses (addresses), the distribution of
// max_conflict on a log count axis (instructions), the mean max_conflict
// per (dialect, op, type) (ops), the outcome of compare-and-swap lane-ops
// (instructions.cas_failed), faults by kind (results; instructions without
// kinds when results is absent), order-sensitive addresses (addresses,
// filled by replay -explore) joined with their words' order witnesses
// (orders), order witnesses (orders, written by replay -explore-orders K:
// how many words end with a different value under different orders, and a
// table of the first 20 with their value under each order, at most
// MaxOrders of them, read as the type of the instructions that accessed
// the word, with their spread in ULPs for floats), racing addresses
// (races, written by replay -races: races by rule as a plot, and a table
// of the first 20 racing pairs, each side's seq, group, warp, lane, scope
// and instruction text), and lanes per warp over windows of the trace
// (instructions) as a heat map.
//
// Invariants:
//
//   - The data comes from the Parquet files alone, read with arrow-go
//     (only the columns a plot needs, in batches of 64 Ki rows; memory is
//     bounded by the top-20 heaps, the distinct max_conflict values and
//     CAS kinds, the distinct (group, warp) pairs, a grid of at most 100
//     windows by 64 warp rows, the first 20 rows of races and orders and
//     their distinct rules and orders, and the set of the orders table's
//     words, never by the results or instructions tables' length). The
//     instructions table is read twice: once for the counts and the set
//     of warps, once for the grid; with order witnesses, results and
//     instructions once more for the types of the witnesses' words (the
//     first 16 lane-ops of each). Races and orders are sorted by word
//     (space, group, addr), so their words are counted by the changes of
//     that key.
//   - Each plot's and table's SQL gives exactly the data it shows: the same
//     grouping, order and ties (addresses of equal accesses in the table's
//     order: space, group, addr; races in the table's order, space, group,
//     addr, rule; witnesses and their orders in the file's row order, by
//     DuckDB's file_row_number), and the activity query names the window
//     and rows-per-row sizes the plot used.
//   - An estimate is never shown as exact: an address's warps where
//     addresses.exact is false are marked "≈" and capped by what is known
//     exactly (no more than its accesses, nor the warps of the trace).
//   - Every plot is drawn where its axes say: a bar ends within its axis
//     (the axis runs to a tick at or past the largest value) with its
//     value printed; the heat map's row r fills the band of its tick,
//     first row to last; tick labels of a count axis are whole numbers.
//   - A table that is absent leaves its sections with a note of which table
//     (or flag: -races, -explore-orders K) is needed and how to get it,
//     never an error; where the tables record the run's options, a
//     section says what the run did instead of what it may have done.
//     Load fails only when DIR is not a directory or holds none of the
//     seven tables (the five default ones, orders, races).
//   - The page needs nothing beyond itself: no script, no stylesheet, font
//     or image from elsewhere (the SVGs name Liberation Sans and embed no
//     font).
//   - The same tables give the same bytes: no timestamp, maps sorted.
package report
