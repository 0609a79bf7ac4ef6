-- Question: which operations serialise the most? Per (dialect, op, type, space):
-- instructions, lanes, faults, the worst and mean conflict depth, and
-- serialisation = conflict_sum / lanes (1.0: every lane of every instruction
-- waited on one address; 1/32: a warp's lanes never shared an address).
-- Tables: ops.parquet.
-- Flags: none.
SELECT dialect, op, type, space,
       instructions,
       lanes,
       faults,
       max_conflict AS worst_conflict,
       round(conflict_sum / instructions, 2) AS mean_conflict,
       round(conflict_sum / greatest(lanes, 1), 4) AS serialisation
FROM 'ops.parquet'
ORDER BY conflict_sum DESC, dialect, op, type, space;
