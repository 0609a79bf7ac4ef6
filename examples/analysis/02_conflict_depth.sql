-- Question: how deep do conflicts go? A histogram of instructions.max_conflict,
-- the most lane-elements of one instruction that hit one address: 1 means the
-- lanes touched distinct addresses, 32 that a whole warp serialised on one word.
-- Tables: instructions.parquet.
-- Flags: none.
SELECT max_conflict,
       count(*) AS instructions,
       sum(lanes) AS lanes,
       round(100.0 * count(*) / sum(count(*)) OVER (), 2) AS pct_of_instructions
FROM 'instructions.parquet'
GROUP BY max_conflict
ORDER BY max_conflict;
