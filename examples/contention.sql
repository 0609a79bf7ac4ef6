-- Questions a GPU engineer asks of a replay, in DuckDB SQL.
-- Run `go run ./cmd/replay` (it writes ./demo.tables/), then
--   duckdb < examples/contention.sql
-- or paste a query into a notebook: duckdb.sql("…").df() for pandas, .pl() for polars.
-- examples/examples_test.go runs every query below against the demo's tables.

-- 1. The hottest addresses: how many accesses, from how many warps and groups.
SELECT space, "group", printf('0x%x', addr) AS addr, accesses, warps, groups, order_sensitive
FROM 'demo.tables/addresses.parquet'
ORDER BY accesses DESC, addr
LIMIT 5;

-- 2. Serialization by operation: lanes, and how deep the conflicts went.
SELECT dialect, op, type, sum(instructions) AS instructions, sum(lanes) AS lanes,
       max(max_conflict) AS worst_conflict, round(sum(conflict_sum) / sum(instructions), 2) AS mean_conflict
FROM 'demo.tables/ops.parquet'
GROUP BY ALL
ORDER BY lanes DESC, op;

-- 3. Faults, by kind and by instruction.
SELECT r.fault, i.text, count(*) AS lanes
FROM 'demo.tables/results.parquet' r JOIN 'demo.tables/instructions.parquet' i USING (seq)
WHERE r.fault <> ''
GROUP BY ALL
ORDER BY lanes DESC;

-- 4. What the lanes of one instruction got back (here the demo's first atomicAdd).
SELECT lane, printf('0x%x', addr) AS addr, value
FROM 'demo.tables/results.parquet'
WHERE seq = 0
ORDER BY lane
LIMIT 4;

-- 5. The final memory.
SELECT space, "group", printf('0x%x', addr) AS addr, value
FROM 'demo.tables/memory.parquet'
ORDER BY space, "group", addr;
