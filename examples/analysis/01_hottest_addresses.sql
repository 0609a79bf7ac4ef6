-- Question: which addresses are the hottest, and how widely are they shared?
-- For the 20 addresses with the most lane-element accesses: how many accesses,
-- from how many warps and groups (estimates when exact is false), and what share
-- of all atomic accesses of the trace they take.
-- Tables: addresses.parquet (written by default; -tables must include addresses).
-- Flags: none (order_sensitive is filled only with -explore; see 06).
SELECT space,
       "group",
       printf('0x%x', addr) AS addr,
       accesses,
       warps,
       groups,
       exact,
       round(100.0 * accesses / sum(accesses) OVER (), 2) AS pct_of_accesses
FROM 'addresses.parquet'
ORDER BY accesses DESC, space, "group", addr
LIMIT 20;
