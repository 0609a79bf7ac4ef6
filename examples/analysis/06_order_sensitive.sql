-- Question: which addresses could end with a different value if the hardware
-- ordered their atomics differently? addresses.order_sensitive is true unless
-- every access provably commutes (docs/OUTPUT.md); with the final value and the
-- operations that met there.
-- Tables: addresses.parquet, memory.parquet, results.parquet, instructions.parquet.
-- Flags: -explore (without it order_sensitive is false everywhere and this is empty):
--   go run ./cmd/replay -explore -o demo.tables
SELECT a.space,
       a."group",
       printf('0x%x', a.addr) AS addr,
       a.accesses,
       a.warps,
       m.value AS final_value,
       (SELECT string_agg(DISTINCT i.op || '.' || i.type, ',' ORDER BY i.op || '.' || i.type)
        FROM 'results.parquet' r JOIN 'instructions.parquet' i USING (seq)
        WHERE r.addr = a.addr AND i.space = a.space AND a."group" IN (-1, i."group")
          AND i.op NOT IN ('load', 'store')) AS ops
FROM 'addresses.parquet' a
LEFT JOIN 'memory.parquet' m
  ON m.space = a.space AND m."group" = a."group" AND m.addr = a.addr - a.addr % 4
WHERE a.order_sensitive
ORDER BY a.accesses DESC, a.space, a."group", a.addr;
