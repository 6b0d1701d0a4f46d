/**
 * Raw rows on disk, the import rate and the raw report, this build against another build of filterd in the
 * same run (bench/results/2026-11-history.md, "Raw rows in fewer bytes"): one hour of ROWS query rows of USERS users,
 * written by the CSV writer as 60,000-row files (a 3 s file at 20,000 q/s), imported by each build's
 * importer into a store of its own (timed), the raw rows' bytes after CHECKPOINT in arrival order, the
 * raw report of one user timed, then the hour sorted by user by each build's sort (timed), the bytes and
 * the report again. The two builds' reports must be the same (checked).
 *
 *   node dist/bench/stats/raw-disk.bench.js [users=100000] [rows=4170000] [--before=DIST] [--runs=30] [--rounds=1]
 *
 * `--before=DIST` is the `dist/` folder of the other build (e.g. `git worktree add /tmp/before main`,
 * `npm ci && npm run build` there); without it only this build is measured. Rounds alternate the builds.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseConfig } from '../../engine/features.js'
import { silentLogger } from '../../engine/log/index.js'
import * as current from '../../engine/stats/index.js'
import { createCsvQueryLog } from '../../engine/querylog/index.js'
import * as currentSort from '../../engine/stats/raw-sort.js'
import { syntheticRow } from './rows.js'

const USERS = Number(process.argv[2] ?? 100_000)
const ROWS = Number(process.argv[3] ?? 4_170_000)
const BEFORE = process.argv.find((a) => a.startsWith('--before='))?.slice(9)
const RUNS = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 30)
const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 1)
const HOUR_MS = 3_600_000
const FILE_ROWS = 60_000

type Stats = typeof current
type Sort = typeof currentSort
interface Build {
  name: string
  stats: Stats
  sort: Sort
}

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')

async function usedBytes(db: current.StatsDb): Promise<number> {
  await db.write((c) => c.run('CHECKPOINT'))
  return await db.read(async (c) => {
    const [used, size] = (
      await c.runAndReadAll('SELECT used_blocks, block_size FROM pragma_database_size()')
    ).getRows()[0]!
    return Number(used) * Number(size)
  })
}

async function timed(fn: () => Promise<unknown>): Promise<{ median: number; p99: number }> {
  await fn()
  const ms: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now()
    await fn()
    ms.push(performance.now() - t)
  }
  ms.sort((x, y) => x - y)
  return { median: ms[Math.floor(ms.length / 2)]!, p99: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)]! }
}

/** The hour's rows as closed CSV files in `dir`. */
async function writeCsv(root: string, hour: number): Promise<string> {
  const config = parseConfig(
    `stats:\n  dir: ${JSON.stringify(join(root, 'csv'))}\n  db: ${JSON.stringify(join(root, 'unused'))}\n  max-file-size: 1073741824\n`,
    join(root, 'x.yaml')
  )
  const log = createCsvQueryLog(config, silentLogger(), {
    flushIntervalMs: 0,
    controlPollMs: 0,
    maxPendingBytes: 1 << 30
  })
  for (let i = 0; i < ROWS; i++) {
    log.write(syntheticRow(i, USERS, hour * HOUR_MS + Math.floor((i * HOUR_MS) / ROWS)))
    if ((i & 0xffff) === 0) await log.flush()
    if ((i + 1) % FILE_ROWS === 0) await log.rotateNow()
  }
  await log.close()
  return config.stats.dir
}

/** Raw tables of either layout (the rest of the store, the aggregates, stays). */
async function dropRaw(db: current.StatsDb): Promise<void> {
  await db.write(async (c) => {
    const names = (await c.runAndReadAll("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'raw%'"))
      .getRows()
      .map((r) => String(r[0]))
    for (const n of names) await c.run(`DROP TABLE ${n}`)
  })
}

async function measure(b: Build, root: string, csv: string, hour: number): Promise<string> {
  const dir = join(root, `csv-${b.name}`)
  cpSync(csv, dir, { recursive: true })
  const db = b.stats.openStatsDb(join(root, `db-${b.name}`), { threads: 2, memoryLimit: '1GB' })
  await db.ready
  const now = (hour + 1) * HOUR_MS + 60_000
  const time = new b.stats.ReportTime('UTC')
  const user = `user${Math.floor(USERS / 2) + 1}`
  const report = (): Promise<current.RawReport> => b.stats.rawLastHour(db, time, user, now)
  const l0 = load()
  const t0 = performance.now()
  const r = await b.stats.importClosedFiles(db, dir, 'UTC', { now: () => now, rawSortMinRows: Number.MAX_SAFE_INTEGER })
  const importMs = performance.now() - t0
  await b.sort.rawSortSettled(db)
  const arrival = await usedBytes(db)
  const ra = await timed(report)
  const answer = JSON.stringify(await report())
  const ts = performance.now()
  await b.sort.sortRawHour(db, hour)
  const sortMs = performance.now() - ts
  const sorted = await usedBytes(db)
  const rs = await timed(report)
  if (JSON.stringify(await report()) !== answer) throw new Error(`${b.name}: the raw report changed with the sort`)
  await dropRaw(db)
  const base = await usedBytes(db)
  await db.close()
  rmSync(join(root, `db-${b.name}`), { recursive: true, force: true })
  console.log(
    `${b.name}: import ${r.rows} rows in ${importMs.toFixed(0)} ms = ${Math.round((r.rows / importMs) * 1000)} rows/s (load ${l0}); ` +
      `raw bytes per row: arrival ${((arrival - base) / r.rows).toFixed(2)}, sorted ${((sorted - base) / r.rows).toFixed(2)}; ` +
      `sort ${(sortMs / 1000).toFixed(1)} s; raw report (${JSON.parse(answer).data.length} rows) median/p99: arrival ` +
      `${ra.median.toFixed(1)} / ${ra.p99.toFixed(1)} ms, sorted ${rs.median.toFixed(1)} / ${rs.p99.toFixed(1)} ms (load ${load()})`
  )
  return answer
}

const root = mkdtempSync(join(tmpdir(), 'filterd-raw-disk-'))
try {
  const hour = Math.floor(Date.now() / HOUR_MS) - 2
  const csv = await writeCsv(root, hour)
  const builds: Build[] = [{ name: 'this build', stats: current, sort: currentSort }]
  if (BEFORE !== undefined)
    builds.unshift({
      name: 'before',
      stats: (await import(join(BEFORE, 'engine/stats/index.js'))) as Stats,
      sort: (await import(join(BEFORE, 'engine/stats/raw-sort.js'))) as Sort
    })
  for (let round = 0; round < ROUNDS; round++) {
    const answers = new Set<string>()
    for (const b of round % 2 === 0 ? builds : [...builds].reverse()) answers.add(await measure(b, root, csv, hour))
    if (answers.size !== 1) throw new Error('the builds answer the raw report differently')
  }
  console.log(`${USERS} users, ${ROWS} rows in one hour; the builds' raw reports are the same`)
} finally {
  rmSync(root, { recursive: true, force: true })
}
