// cluster-check.mjs compares, with DuckDB, the tables of a partitioned replay
// and of its merge with those of the unpartitioned replay of the same trace
// (tools/test-cluster.sh runs it after the Slurm jobs):
//
//   node tools/cluster-check.mjs -reference REF [-partitions OUT -n N] -merged MERGED [-name NAME]
//
// REF holds the tables of `replay TRACE -o REF`, OUT the part=0/ .. part=N-1/
// directories of `replay TRACE -partition i/N -o OUT`, MERGED the tables of
// `replay merge OUT -o MERGED`. It checks that
//   - OUT holds exactly the directories part=0 .. part=N-1;
//   - the memory and results tables of all partitions, read together with
//     one glob (OUT/part=*/T.parquet, hive_partitioning), have the
//     reference's columns and types and the same rows, each as often as in
//     the reference (EXCEPT ALL both ways, and equal counts);
//   - each of the five tables of MERGED has the reference's columns, types
//     and rows, compared the same way.
// Without -partitions and -n it checks only the last: MERGED is then any
// replay's tables (tools/image.sh: those a container wrote).
// It prints one line per comparison and exits 1 if any differs (with a few
// of the differing rows), 2 on bad usage.
//
// It loads @duckdb/node-api from tools/duckdb (npm ci --prefix tools/duckdb).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(new URL('./duckdb/package.json', import.meta.url));
let DuckDBInstance;
try {
  ({ DuckDBInstance } = require('@duckdb/node-api'));
} catch (err) {
  process.stderr.write(`cluster-check: cannot load @duckdb/node-api (run npm ci --prefix tools/duckdb): ${err.message}\n`);
  process.exit(2);
}

const TABLES = ['memory', 'results', 'instructions', 'ops', 'addresses'];
const UNION_TABLES = ['memory', 'results'];

function usage(msg) {
  process.stderr.write(`cluster-check: ${msg}\nusage: node tools/cluster-check.mjs -reference REF [-partitions OUT -n N] -merged MERGED [-name NAME]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { name: '' };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i].replace(/^--?/, '');
    if (!['reference', 'partitions', 'n', 'merged', 'name'].includes(flag)) usage(`unknown argument ${argv[i]}`);
    if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
    opts[flag] = argv[++i];
  }
  for (const k of ['reference', 'merged']) if (!opts[k]) usage(`-${k} is required`);
  if (!opts.partitions !== !opts.n) usage('-partitions and -n go together');
  if (opts.partitions) {
    opts.n = Number(opts.n);
    if (!Number.isInteger(opts.n) || opts.n < 1) usage('-n must be a positive integer');
  }
  return opts;
}

const sqlString = (s) => `'${s.replaceAll("'", "''")}'`;
const ident = (s) => `"${s.replaceAll('"', '""')}"`;

async function rows(conn, sql) {
  const reader = await conn.runAndReadAll(sql);
  return reader.getRowsJson();
}

// schema returns [[name, type], ...] of a relation (a FROM clause's text).
async function schema(conn, from) {
  return (await rows(conn, `DESCRIBE SELECT * FROM ${from}`)).map((r) => [r[0], r[1]]);
}

async function count(conn, from) {
  return BigInt((await rows(conn, `SELECT count(*) FROM ${from}`))[0][0]);
}

// compare checks that relation got (its columns cols, a SELECT list) holds
// the same multiset of rows as relation want; it returns a list of problems.
async function compare(conn, want, got, cols) {
  const problems = [];
  const nWant = await count(conn, want);
  const nGot = await count(conn, got);
  if (nWant !== nGot) problems.push(`${nGot} rows, the reference has ${nWant}`);
  for (const [a, b, what] of [[want, got, 'missing'], [got, want, 'extra (or too often)']]) {
    const q = `SELECT ${cols} FROM ${a} EXCEPT ALL SELECT ${cols} FROM ${b}`;
    const n = await count(conn, `(${q})`);
    if (n !== 0n) {
      const sample = await rows(conn, `${q} LIMIT 3`);
      problems.push(`${n} rows ${what}, e.g. ${JSON.stringify(sample)}`);
    }
  }
  return { problems, n: nWant };
}

function sameSchema(want, got) {
  return JSON.stringify(want) === JSON.stringify(got);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const label = o.name ? `${o.name}: ` : '';
  let failures = 0;
  let checks = 0;
  const report = (ok, msg) => {
    checks++;
    if (!ok) failures++;
    process.stdout.write(`cluster-check: ${label}${ok ? 'ok  ' : 'FAIL'} ${msg}\n`);
  };

  // The partition directories.
  let missing = [];
  if (o.partitions) {
    const want = Array.from({ length: o.n }, (_, i) => `part=${i}`);
    let dirs = [];
    try {
      dirs = fs.readdirSync(o.partitions, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    } catch (err) {
      report(false, `cannot read ${o.partitions}: ${err.message}`);
    }
    const extra = dirs.filter((d) => !want.includes(d));
    missing = want.filter((d) => !dirs.includes(d));
    report(extra.length === 0 && missing.length === 0,
      `partition directories: ${dirs.join(' ') || 'none'}` +
      (missing.length ? `; missing ${missing.join(' ')}` : '') + (extra.length ? `; unexpected ${extra.join(' ')}` : ''));
  }
  const what = o.partitions ? 'merge' : 'tables';

  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    for (const t of TABLES) {
      const ref = `read_parquet(${sqlString(path.join(o.reference, `${t}.parquet`))})`;
      const refSchema = await schema(conn, ref);
      const cols = refSchema.map(([n]) => ident(n)).join(', ');

      if (o.partitions && UNION_TABLES.includes(t) && missing.length === 0) {
        const glob = path.join(o.partitions, 'part=*', `${t}.parquet`);
        const parts = `read_parquet(${sqlString(glob)}, hive_partitioning = true)`;
        try {
          const partSchema = (await schema(conn, parts)).filter(([n]) => n !== 'part');
          const perPart = await rows(conn, `SELECT part, count(*) FROM ${parts} GROUP BY part ORDER BY part`);
          const split = perPart.map((r) => `${r[0]}:${r[1]}`).join(' ');
          if (!sameSchema(refSchema, partSchema)) {
            report(false, `${t}: partitions' columns ${JSON.stringify(partSchema)} differ from the reference's ${JSON.stringify(refSchema)}`);
          } else {
            const { problems, n } = await compare(conn, ref, parts, cols);
            report(problems.length === 0, `${t}: union of the ${o.n} partitions = unpartitioned replay` +
              (problems.length ? `: ${problems.join('; ')}` : ` (${n} rows; per partition ${split})`));
          }
        } catch (err) {
          report(false, `${t}: reading ${glob}: ${err.message}`);
        }
      }

      const merged = `read_parquet(${sqlString(path.join(o.merged, `${t}.parquet`))})`;
      try {
        const mergedSchema = await schema(conn, merged);
        if (!sameSchema(refSchema, mergedSchema)) {
          report(false, `${t}: merged columns ${JSON.stringify(mergedSchema)} differ from the reference's ${JSON.stringify(refSchema)}`);
        } else {
          const { problems, n } = await compare(conn, ref, merged, cols);
          report(problems.length === 0, `${t}: ${what} = unpartitioned replay` +
            (problems.length ? `: ${problems.join('; ')}` : ` (${n} rows)`));
        }
      } catch (err) {
        report(false, `${t}: reading the merged table: ${err.message}`);
      }
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  process.stdout.write(`cluster-check: ${label}${checks - failures} of ${checks} checks equal\n`);
  if (failures > 0) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`cluster-check: ${err && err.message ? err.message : err}\n`);
  process.exitCode = 1;
});
