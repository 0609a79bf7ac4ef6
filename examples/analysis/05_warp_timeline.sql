-- Question: how does warp activity evolve over the trace? The trace's
-- instructions are cut into 50 equal buckets of seq (trace order, not time);
-- per bucket: instructions, distinct (group, warp) pairs that issued, lanes that
-- ran, faults, and the mean conflict depth.
-- Tables: instructions.parquet.
-- Flags: none.
WITH n AS (SELECT max(seq) + 1 AS total FROM 'instructions.parquet')
SELECT seq * 50 // n.total AS bucket,
       min(seq) AS first_seq,
       max(seq) AS last_seq,
       count(*) AS instructions,
       count(DISTINCT ("group", warp)) AS warps,
       sum(lanes) AS lanes,
       sum(faults) AS faults,
       round(avg(max_conflict), 2) AS mean_conflict
FROM 'instructions.parquet', n
GROUP BY bucket
ORDER BY bucket;
