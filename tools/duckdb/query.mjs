// query.mjs runs SQL with an in-memory DuckDB and prints the result of the
// last statement as JSON on stdout:
//
//   {"columns":[{"name":"n","type":"UBIGINT"}],"rows":[["18446744073709551615"]]}
//
// The SQL is the command-line arguments joined by spaces or, with no
// arguments, standard input. With the single argument --batch, standard
// input is a JSON array of SQL texts instead; they run one after the other
// on one connection and the output is a JSON array of their results (this
// saves starting node and loading DuckDB once per query).
//
// Each result also carries "elapsedNs" and "cpuNs": the wall time and the
// CPU time of this process (all threads, user and system), in nanoseconds
// as decimal strings, that running the text's statements took (not
// counting node's start, DuckDB's loading or the JSON output), so that
// benchmarks can time one statement, such as a COPY, by itself.
//
// Types are DuckDB's type names. Every integer value (TINYINT .. UHUGEINT)
// is printed as a decimal string so that none loses precision in JSON;
// other values use @duckdb/node-api's JSON form (floats as numbers, NULL as
// null, DECIMAL as a string, nested types as arrays/objects). An error is
// printed on stderr and the exit status is 1.
//
// Used by the Go package internal/duckdbq. Setup: npm ci --prefix tools/duckdb
import { DuckDBInstance, DuckDBTypeId } from '@duckdb/node-api';

const integerTypes = new Set([
  DuckDBTypeId.TINYINT, DuckDBTypeId.SMALLINT, DuckDBTypeId.INTEGER, DuckDBTypeId.BIGINT,
  DuckDBTypeId.UTINYINT, DuckDBTypeId.USMALLINT, DuckDBTypeId.UINTEGER, DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT, DuckDBTypeId.UHUGEINT,
]);

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

// run executes every statement of sql in turn (runAndReadAll alone would
// run only the first) and returns the last one's result.
async function run(conn, sql) {
  if (sql.trim() === '') throw new Error('no SQL given');
  const extracted = await conn.extractStatements(sql);
  if (extracted.count === 0) throw new Error('no SQL statement given');
  let reader;
  const start = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < extracted.count; i++) {
    const stmt = await extracted.prepare(i);
    try {
      reader = await stmt.runAndReadAll();
    } finally {
      stmt.destroySync();
    }
  }
  const elapsedNs = String(process.hrtime.bigint() - start);
  const cpu = process.cpuUsage(cpu0);
  const cpuNs = String((cpu.user + cpu.system) * 1000);
  const names = reader.columnNames();
  const types = reader.columnTypes();
  const columns = names.map((name, i) => ({ name, type: types[i].toString() }));
  const asString = types.map((t) => integerTypes.has(t.typeId));
  const rows = reader.getRowsJson().map((row) =>
    row.map((v, i) => (asString[i] && v !== null ? String(v) : v)));
  return { columns, rows, elapsedNs, cpuNs };
}

async function main() {
  const args = process.argv.slice(2);
  const batch = args.length === 1 && args[0] === '--batch';
  let sqls;
  if (batch) {
    sqls = JSON.parse(await readStdin());
    if (!Array.isArray(sqls) || !sqls.every((s) => typeof s === 'string')) {
      throw new Error('--batch: standard input must be a JSON array of strings');
    }
  } else {
    sqls = [args.length > 0 ? args.join(' ') : await readStdin()];
  }
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const results = [];
  try {
    for (const [i, sql] of sqls.entries()) {
      try {
        results.push(await run(conn, sql));
      } catch (err) {
        if (batch) err.message = `query ${i}: ${err.message}`;
        throw err;
      }
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  const out = batch ? results : results[0];
  process.stdout.write(JSON.stringify(out, (_, v) => (typeof v === 'bigint' ? v.toString() : v)) + '\n');
}

main().catch((err) => {
  process.stderr.write(`query.mjs: ${err && err.message ? err.message : err}\n`);
  process.exitCode = 1;
});
