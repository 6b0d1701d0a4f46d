/**
 * Statistics ingest: one host's closed query-log files into one local ClickHouse server by the sink
 * (engine/clickhouse/sink.ts: read, batched as TabSeparated, inserted up to three at a time, the views fed), against the
 * DuckDB importer of the same files in the same run (bench/stats/clickhouse-load.ts). The goal: at least
 * 300,000 rows/s into ClickHouse.
 *
 *   node dist/bench/stats/clickhouse-ingest.js [--rows=1000000] [--users=10000] [--days=1] [--chunk-rows=1000000] [--file-rows=500000] [--batch-rows=250000]
 */
import { loadAverage, loadBoth, numberArg, rate } from './clickhouse-load.js'

const ROWS = numberArg('rows', 1_000_000)
const o = {
  rows: ROWS,
  users: numberArg('users', 10_000),
  days: numberArg('days', 1),
  now: Date.now(),
  chunkRows: numberArg('chunk-rows', 1_000_000),
  fileRows: numberArg('file-rows', 500_000),
  batchRows: numberArg('batch-rows', 250_000)
}
console.log(`clickhouse-ingest: ${JSON.stringify(o)}; node ${process.version}; load ${loadAverage()}`)
const loaded = await loadBoth(o)
try {
  const [stored] = await loaded.click.rows(`SELECT count() AS c FROM ${loaded.click.table('queries')}`)
  const duck = rate(loaded.duckRows, loaded.duckMs)
  const click = rate(loaded.clickRows, loaded.clickMs)
  console.log(
    `DuckDB importer:  ${loaded.duckRows} rows in ${loaded.duckMs.toFixed(0)} ms = ${duck} rows/s; ` +
      `CPU ${loaded.duckCpuMs.toFixed(0)} ms = ${rate(loaded.duckRows, loaded.duckCpuMs)} rows per CPU-second`
  )
  console.log(
    `ClickHouse sink:  ${loaded.clickRows} rows in ${loaded.clickMs.toFixed(0)} ms = ${click} rows/s ` +
      `(${String(stored?.c)} rows in the query log); CPU: the sink ${loaded.sinkCpuMs.toFixed(0)} ms ` +
      `(${rate(loaded.clickRows, loaded.sinkCpuMs)} rows per CPU-second), clickhouse-server ${loaded.serverCpuMs.toFixed(0)} ms ` +
      `(${rate(loaded.clickRows, loaded.serverCpuMs)} rows per CPU-second)`
  )
  // The disk the rows take (the parts as inserted, before merges: about what they keep after).
  const parts = await loaded.click.rows(
    'SELECT table, sum(rows) AS r, sum(data_compressed_bytes) AS c, sum(data_uncompressed_bytes) AS u FROM system.parts ' +
      "WHERE active AND database = 'filterd' GROUP BY table ORDER BY table"
  )
  for (const p of parts)
    console.log(
      `  ${String(p.table).padEnd(10)} ${String(p.r).padStart(9)} rows, ${(Number(p.c) / 1e6).toFixed(1)} MB compressed ` +
        `(${(Number(p.c) / loaded.clickRows).toFixed(1)} bytes per query-log row), ${(Number(p.u) / 1e6).toFixed(1)} MB uncompressed`
    )
  console.log(
    `ClickHouse / DuckDB: ${(click / duck).toFixed(2)}; goal 300000 rows/s: ${click >= 300_000 ? 'met' : 'not met'}`
  )
  console.log(`load average at the chunks: ${loaded.loads.map((l) => l.toFixed(1)).join(' ')}; now ${loadAverage()}`)
} finally {
  await loaded.close()
}
