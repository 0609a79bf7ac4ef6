-- Question: which lanes faulted, of what kind, and in which instructions?
-- One row per (fault kind, instruction text): the faulting lane-elements and
-- the number of instructions (seq) with that text that faulted. Empty when the
-- trace has no faults (the demo has none).
-- Tables: results.parquet (needs -tables with results, the default), instructions.parquet.
-- Flags: none (-strict would stop the replay at the first fault instead).
SELECT r.fault,
       i.dialect,
       i.text,
       count(*) AS lanes,
       count(DISTINCT r.seq) AS instructions,
       min(r.seq) AS first_seq,
       printf('0x%x', min(r.addr)) AS lowest_addr
FROM 'results.parquet' r
JOIN 'instructions.parquet' i USING (seq)
WHERE r.fault <> ''
GROUP BY r.fault, i.dialect, i.text
ORDER BY lanes DESC, r.fault, i.text;
