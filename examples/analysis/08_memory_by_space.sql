-- Question: what does the final memory look like, per space? Words the trace
-- touched or .init set, how many groups (per-group spaces such as shared), how
-- many words ended non-zero, the address range and the sum of the final values.
-- Tables: memory.parquet.
-- Flags: none.
SELECT space,
       count(DISTINCT "group") AS groups,
       count(*) AS words,
       count(*) FILTER (WHERE value <> 0) AS nonzero_words,
       printf('0x%x', min(addr)) AS lowest_addr,
       printf('0x%x', max(addr)) AS highest_addr,
       sum(value) AS value_sum
FROM 'memory.parquet'
GROUP BY space
ORDER BY space;
