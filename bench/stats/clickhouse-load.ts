/**
 * The ClickHouse benchmarks' shared part (bench/stats/clickhouse-ingest.ts, clickhouse-reports.ts): the
 * same rows of one host's query log into both statistics stores, each by its real intake. The rows
 * (bench/stats/rows.ts) are written by the DNS server's own CSV writer as closed files, in time order over
 * `days` days up to `now`; each chunk of files is copied, then imported into a DuckDB store by the importer
 * (engine/stats/importer.ts) and sent into a clickhouse-server child by the sink (engine/clickhouse/sink.ts),
 * one after the other, each timed alone. Chunks bound the disk the files take (two copies of a chunk).
 *
 * The ClickHouse server is the tests' (engine/clickhouse/testing/server.ts): Debian's 18.16 with its data in
 * a temp folder (set TMPDIR for a larger disk).
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { openClickHouse, type ClickHouseStore } from '../../engine/clickhouse/client.js'
import { migrateClickHouse } from '../../engine/clickhouse/schema.js'
import { createClickHouseSink } from '../../engine/clickhouse/sink.js'
import { startClickHouse, type TestClickHouse } from '../../engine/clickhouse/testing/server.js'
import { parseConfig } from '../../engine/features.js'
import { silentLogger } from '../../engine/log/index.js'
import { CLOSED_RE, createCsvQueryLog } from '../../engine/querylog/index.js'
import { importClosedFiles, openStatsDb, ReportTime, type StatsDb } from '../../engine/stats/index.js'
import { makeTempDir } from '../../engine/testing/temp.js'
import { cpuSeconds } from '../common/ceiling.js'
import { syntheticRow } from './rows.js'

export interface LoadOptions {
  rows: number
  users: number
  /** The rows are spread evenly over the `days` days up to `now`, in time order. */
  days: number
  now: number
  /** Rows written, imported and sent per chunk. */
  chunkRows: number
  /** Rows per closed file (the writer rotates after as many). */
  fileRows: number
  /** The sink's `stats.clickhouse.batch-rows`. */
  batchRows: number
}

export interface Loaded {
  duck: StatsDb
  click: ClickHouseStore
  server: TestClickHouse
  /** Rows the importer took in and the sink sent. */
  duckRows: number
  clickRows: number
  /** Wall time of the importer's runs and of the sink's passes, summed over the chunks. */
  duckMs: number
  clickMs: number
  /** CPU time of this process during the sink's passes (the rows read and encoded as TabSeparated, the inserts sent). */
  sinkCpuMs: number
  /** CPU time of clickhouse-server during the sink's passes (rows parsed, written, the views fed, merges). */
  serverCpuMs: number
  /** CPU time of this process during the importer's runs (DuckDB's threads included). */
  duckCpuMs: number
  /** Load averages seen at each chunk, for the record. */
  loads: number[]
  close(): Promise<void>
}

const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000

export const loadAverage = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')

/** `--name=value` of the command line as a number, or `fallback`. */
export function numberArg(name: string, fallback: number): number {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`))
  if (a === undefined) return fallback
  const n = Number(a.slice(name.length + 3).replace(/_/g, ''))
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: not a number: ${a}`)
  return n
}

/** Copies the closed files of `from` into `to` (the writer's open file stays). */
function copyClosed(from: string, to: string): void {
  for (const n of readdirSync(from)) if (CLOSED_RE.test(n)) copyFileSync(join(from, n), join(to, n))
}

export async function loadBoth(o: LoadOptions): Promise<Loaded> {
  const { dir: root, cleanup } = makeTempDir('filterd-chbench-')
  const duckDir = join(root, 'csv-duckdb')
  const clickDir = join(root, 'csv-clickhouse')
  mkdirSync(duckDir)
  mkdirSync(clickDir)
  const config = parseConfig(
    `stats:\n  dir: ${JSON.stringify(duckDir)}\n  db: ${JSON.stringify(join(root, 'db'))}\n  max-file-size: 4294967296\n`,
    join(root, 'bench.yaml')
  )
  const writer = createCsvQueryLog(config, silentLogger(), {
    flushIntervalMs: 0,
    controlPollMs: 0,
    maxPendingBytes: 1 << 30
  })
  // The store as the api role opens it by default (stats.duckdb-threads: 2 on this class of machine).
  const duck = openStatsDb(config.stats.db, { threads: 2, memoryLimit: '1GB' })
  await duck.ready
  const server = await startClickHouse()
  const click = openClickHouse({ url: server.url, user: 'default', password: '', database: 'filterd' }, 600_000)
  await migrateClickHouse(click)
  const time = new ReportTime('UTC')
  const quiet = (): void => {}
  const sink = createClickHouseSink(click, {
    dir: clickDir,
    host: 'bench',
    time,
    batchRows: o.batchRows,
    spoolMaxBytes: Number.MAX_SAFE_INTEGER,
    log: { info: quiet, warn: quiet, error: quiet }
  })
  const span = o.days * 86_400_000
  const first = o.now - span
  const out: Loaded = {
    duck,
    click,
    server,
    duckRows: 0,
    clickRows: 0,
    duckMs: 0,
    clickMs: 0,
    sinkCpuMs: 0,
    serverCpuMs: 0,
    duckCpuMs: 0,
    loads: [],
    async close() {
      await writer.close()
      await duck.close()
      await click.close()
      await server.stop()
      cleanup()
    }
  }
  try {
    for (let c0 = 0; c0 < o.rows; c0 += o.chunkRows) {
      const c1 = Math.min(o.rows, c0 + o.chunkRows)
      for (let i = c0; i < c1; i++) {
        writer.write(syntheticRow(i, o.users, first + Math.floor((i * span) / o.rows)))
        if ((i & 0xffff) === 0) await writer.flush()
        if ((i + 1) % o.fileRows === 0 || i + 1 === c1) await writer.rotateNow()
      }
      copyClosed(duckDir, clickDir)
      out.loads.push(loadavg()[0]!)
      const duckCpu = process.cpuUsage()
      const t0 = performance.now()
      const imported = await importClosedFiles(duck, duckDir, 'UTC', { now: () => o.now })
      out.duckMs += performance.now() - t0
      out.duckCpuMs += cpuMs(process.cpuUsage(duckCpu))
      out.duckRows += imported.rows
      const sinkCpu = process.cpuUsage()
      const server0 = cpuSeconds(server.pid ?? 0)
      const t1 = performance.now()
      out.clickRows += await sink.sendClosed()
      out.clickMs += performance.now() - t1
      out.sinkCpuMs += cpuMs(process.cpuUsage(sinkCpu))
      out.serverCpuMs += (cpuSeconds(server.pid ?? 0) - server0) * 1000
      console.error(`  ${c1} rows loaded (load ${loadAverage()})`)
    }
  } catch (err) {
    // No server or store left behind by a run that failed (a server killed from outside, a full disk).
    await out.close().catch(() => {})
    throw err
  }
  return out
}

export const rate = (rows: number, ms: number): number => Math.round((rows / ms) * 1000)
