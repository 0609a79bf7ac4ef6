-- Question: what did each lane get back from the hottest address (the first row
-- of 01_hottest_addresses.sql)? Per lane: how often it hit the address, how many
-- distinct values it saw, the smallest and largest, and the values of its first
-- and last access in trace order (the old value for most atomics).
-- Tables: addresses.parquet, results.parquet, instructions.parquet.
-- Flags: none (results must be among -tables, the default).
WITH hot AS (
    SELECT space, "group", addr
    FROM 'addresses.parquet'
    ORDER BY accesses DESC, space, "group", addr
    LIMIT 1
)
SELECT r.lane,
       count(*) AS accesses,
       count(DISTINCT r.value) AS distinct_values,
       min(r.value) AS min_value,
       max(r.value) AS max_value,
       arg_min(r.value, r.seq) AS first_value,
       arg_max(r.value, r.seq) AS last_value,
       count(*) FILTER (WHERE r.fault <> '') AS faults
FROM 'results.parquet' r
JOIN 'instructions.parquet' i USING (seq)
JOIN hot h ON r.addr = h.addr AND i.space = h.space AND h."group" IN (-1, i."group")
WHERE i.op NOT IN ('load', 'store')
GROUP BY r.lane
ORDER BY r.lane;
