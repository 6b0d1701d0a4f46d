/**
 * Statistics: rows imported per second (CSV files → the statistics store), today's DuckDB importer
 * against the LMDB importer it replaced, in the same run on the same files; then report latency with
 * three months of aggregates for USERS users and RAW_ROWS raw rows (synthetic, written by SQL), the
 * overview over 7 days, and bytes per raw row on disk.
 *
 *   node dist/bench/stats/stats.bench.js [users=10000] [domainsPerDay=20] [importRows=200000] [rawRows=2000000] [--runs=30] [--import-only] [--files=1] [--pipeline-ab] [--fill=weeks|days] [--keep] [--db=DIR [--fill-only]] [--raw-only] [--raw-hours=24]
 *
 * `--fill=weeks` (default) writes the aggregates as the folds leave them (engine/stats/fold.ts) and times
 * the reports once; `--fill=days` writes 92 day tables and times the reports twice in the same run, on
 * the day tables and after folding them into week tables, with the same answers. `--keep` leaves the database.
 *
 * Raw rows: every finished hour as the sort by user leaves it (engine/stats/raw-sort.ts), generated in
 * that order; the hour still being written sorted but for its last RAW_SORT_EVERY_MS of rows (the most
 * a re-sort leaves unsorted); and the oldest hour written in arrival order, then sorted by the engine's
 * sortRawHour, timed, with its bytes per row before and after.
 *
 * `--db=DIR` (the full size takes longer to fill than a locked run may last): the store in DIR, kept; a
 * new one is filled (no import comparison) and, with `--fill-only`, left there; a filled one is only
 * timed, at the clock of its fill (so "the last hour" is the one filled).
 * `--designs` also imports the same files by other designs (bench/stats/import-designs.ts), each into a store of its own.
 */
import { cpSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Config } from '../../engine/config/index.js'
import { parseConfig } from '../../engine/features.js'
import { silentLogger } from '../../engine/log/index.js'
import {
  activityByDay,
  activityByHour,
  detail,
  importClosedFiles,
  openStatsDb,
  overview,
  rawLastHour,
  topDomains,
  ReportTime,
  formatDay,
  type StatsDb
} from '../../engine/stats/index.js'
import { createCsvQueryLog } from '../../engine/querylog/index.js'
import {
  TABLES_SQL,
  hoursTable,
  hoursTableSql,
  metaGet,
  metaPut,
  namesTable,
  namesTableSql
} from '../../engine/stats/db.js'
import { insertRawHour, rawUsersTable } from '../../engine/stats/raw-layout.js'
import { RAW_SORT_EVERY_MS, rawSortSettled, sortRawHour } from '../../engine/stats/raw-sort.js'
import { ALL_USERS } from '../../engine/querylog/files.js'
import { pruneStats } from '../../engine/stats/maintenance.js'
import { foldDays, weekHoursTable, weekNamesTable, weekOf, weekPartitions } from '../../engine/stats/fold.js'
import { buildMonth, dueMonths } from '../../engine/stats/month-build.js'
import { openLegacyStatsDb } from '../../engine/stats/legacy/lmdb.js'
import { importClosedFiles as legacyImport } from '../../engine/testing/stats/legacy/importer.js'
import { syntheticRow } from './rows.js'
import type { QueryLogRecord } from '../../engine/querylog/index.js'
import { importByStage, importDirect } from './import-designs.js'
import { setFailpoint } from '../../engine/failpoints.js'

const USERS = Number(process.argv[2] ?? 10_000)
const DOMAINS_PER_DAY = Number(process.argv[3] ?? 20)
const IMPORT_ROWS = Number(process.argv[4] ?? 200_000)
const RAW_ROWS = Number(process.argv[5] ?? 2_000_000)
const HOUR_MS = 3_600_000
/** Timed calls per report and layout (`--runs=N`). */
const RUNS = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 30)
/** `--files=N`: the import rows written as N closed files (a writer's rotations), taken in by one import run. */
const FILES = Number(process.argv.find((a) => a.startsWith('--files='))?.slice(8) ?? 1)
/** `--import-only`: stop after the import comparison (the aggregate fill takes minutes). */
const IMPORT_ONLY = process.argv.includes('--import-only')
/**
 * `--fill=weeks` (default): the aggregates are written as the folds leave them (week tables, by SQL
 * alone: minutes for 100,000 users); `--fill=days`: as 92 day tables, timed before and after the fold.
 */
const FILL = process.argv.find((a) => a.startsWith('--fill='))?.slice(7) ?? 'weeks'
/** `--keep`: leave the database for EXPLAIN ANALYZE (its path is printed). */
const KEEP = process.argv.includes('--keep')
const DB_DIR = process.argv.find((a) => a.startsWith('--db='))?.slice(5)
const FILL_ONLY = process.argv.includes('--fill-only')
const NOW_KEY = 'bench.now'
/** `--designs`: also time the SQL import designs (a `read_csv` stage; `read_csv` straight into the partition). */
const DESIGNS = process.argv.includes('--designs')
/**
 * `--pipeline-ab`: the same files imported again four times, each into a store of its own, alternating
 * (serial, pipelined, pipelined, serial: an order bias cancels): `pipeline: false` reads a batch only
 * after the one before it is written; `pipeline: true` (the default) reads it while the one before writes.
 */
const PIPELINE_AB = process.argv.includes('--pipeline-ab')
const AB_ORDER = ['serial1', 'pipelined1', 'pipelined2', 'serial2'] as const
/** `--raw-only`: no aggregates (minutes at 100,000 users): the raw rows, their bytes and the raw report only. */
const RAW_ONLY = process.argv.includes('--raw-only')
/** `--raw-hours=N`: raw rows in the last N hours only (each with RAW_ROWS / 24 rows), the oldest of them sorted by the engine. */
const RAW_HOURS = Number(process.argv.find((a) => a.startsWith('--raw-hours='))?.slice(12) ?? 24)
/**
 * `--build-months` (with `--db`): the finished months made from their week tables (engine/stats/month-build.ts)
 * before the reports are timed, each timed, with imports of IMPORT_ROWS rows beside the build (their wall
 * time against the same import with no build first; importRows 0: no import, so the reports timed after read the
 * store as filled); with `--fill-only`, nothing else.
 */
const BUILD_MONTHS = process.argv.includes('--build-months')
/** User ids sort as numbers (zero-padded): `user000042`. */
const userSql = (u: string): string => `'user' || lpad((${u})::VARCHAR, 6, '0')`
const userId = (u: number): string => `user${String(u).padStart(6, '0')}`

async function sql(db: StatsDb, text: string): Promise<void> {
  await db.write(async (c) => {
    await c.run(text)
  })
}

/** `runs` timed calls of `fn` after one warm-up: median and p99 (ms). */
async function timed(runs: number, fn: () => Promise<unknown>): Promise<{ median: number; p99: number }> {
  await fn()
  const ms: number[] = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    await fn()
    ms.push(performance.now() - t)
  }
  ms.sort((x, y) => x - y)
  return { median: ms[Math.floor(ms.length / 2)]!, p99: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)]! }
}

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')

/** Day tables `from`..`to` (compacted: one row per key, sorted by user), with the console's totals (ALL_USERS). */
async function fillDayTables(db: StatsDb, from: number, to: number): Promise<void> {
  for (let d = from; d <= to; d++) {
    await sql(db, hoursTableSql(hoursTable(d)) + '; DELETE FROM ' + hoursTable(d))
    await sql(
      db,
      `INSERT INTO ${hoursTable(d)} SELECT ${userSql('u')}, ${d * 24} + h, 100, 10 FROM range(${USERS}) a(u), range(24) b(h) ORDER BY 1, 2`
    )
    await sql(db, namesTableSql(namesTable(d)) + '; DELETE FROM ' + namesTable(d))
    await sql(
      db,
      `INSERT INTO ${namesTable(d)} SELECT ${userSql('u')}, 'site' || ((k * 7 + ${d}) % 500) || '.example.com', 100 - k, k % 3, k % 5, (k % 90)::VARCHAR, 0, '' ` +
        `FROM range(${USERS}) a(u), range(${DOMAINS_PER_DAY}) b(k) ORDER BY 1, 2`
    )
    // The console's totals as the importer keeps them: one row per hour and per name a day.
    await sql(
      db,
      `INSERT INTO ${hoursTable(d)} SELECT '${ALL_USERS}', ${d * 24} + h, 100 * ${USERS}, 10 * ${USERS} FROM range(24) b(h)`
    )
    await sql(
      db,
      `INSERT INTO ${namesTable(d)} SELECT '${ALL_USERS}', 'site' || k || '.example.com', 1000, 3, 50, (k % 90)::VARCHAR, 0, '' FROM range(500) b(k)`
    )
  }
}

/**
 * Week tables holding the days `from`..`to`, as the folds write them (sorted by user, day), generated
 * in that order from one `range` (DuckDB keeps insertion order: no sort), so a fill of 100,000 users
 * takes minutes. The same rows as fillDayTables would give.
 */
async function fillWeekTables(db: StatsDb, from: number, to: number): Promise<void> {
  for (let w = weekOf(from); w <= to; w += 7) {
    const d0 = Math.max(w, from)
    const n = Math.min(w + 6, to) - d0 + 1
    const day = `(${d0} + (i // 24) % ${n})`
    await sql(
      db,
      `CREATE TABLE ${weekHoursTable(w)} AS SELECT ${userSql(`i // ${n * 24}`)} AS "user", ${day}::INTEGER AS day, ` +
        `(${day} * 24 + i % 24)::INTEGER AS hour, 100::BIGINT AS requests, 10::BIGINT AS blocks FROM range(${USERS * n * 24}) t(i)`
    )
    const nday = `(${d0} + (i // ${DOMAINS_PER_DAY}) % ${n})`
    const k = `(i % ${DOMAINS_PER_DAY})`
    await sql(
      db,
      `CREATE TABLE ${weekNamesTable(w)} AS SELECT ${userSql(`i // ${n * DOMAINS_PER_DAY}`)} AS "user", ${nday}::INTEGER AS day, ` +
        `'site' || ((${k} * 7 + ${nday}) % 500) || '.example.com' AS host, (100 - ${k})::BIGINT AS requests, (${k} % 3)::BIGINT AS nxdomain, ` +
        `(${k} % 5)::BIGINT AS blocks, (${k} % 90)::VARCHAR AS cats, 0::BIGINT AS seq FROM range(${USERS * n * DOMAINS_PER_DAY}) t(i)`
    )
    await sql(
      db,
      `INSERT INTO ${weekHoursTable(w)} SELECT '${ALL_USERS}', d, d * 24 + h, 100 * ${USERS}, 10 * ${USERS} FROM range(${d0}, ${d0 + n}) a(d), range(24) b(h)`
    )
    await sql(
      db,
      `INSERT INTO ${weekNamesTable(w)} SELECT '${ALL_USERS}', d, 'site' || k || '.example.com', 1000, 3, 50, (k % 90)::VARCHAR, 0 FROM range(${d0}, ${d0 + n}) a(d), range(500) b(k)`
    )
  }
}

/** IMPORT_ROWS rows made by `row` written as closed CSV files in `dir`, in `files` files; the config used (its store: root/db). */
async function writeSyntheticCsv(
  root: string,
  dir: string,
  files: number,
  row: (i: number) => QueryLogRecord
): Promise<Config> {
  const config = parseConfig(
    `stats:\n  dir: ${JSON.stringify(dir)}\n  db: ${JSON.stringify(join(root, 'db'))}\n  max-file-size: 1073741824\n`,
    join(root, 'x.yaml')
  )
  const log = createCsvQueryLog(config, silentLogger(), {
    flushIntervalMs: 0,
    controlPollMs: 0,
    maxPendingBytes: 1 << 30
  })
  for (let i = 0; i < IMPORT_ROWS; i++) {
    log.write(row(i))
    if ((i & 0xffff) === 0) await log.flush()
    if (files > 1 && (i + 1) % Math.ceil(IMPORT_ROWS / files) === 0) await log.rotateNow()
  }
  await log.close()
  return config
}

/** The import comparison: the same CSV files through the LMDB importer of before and the DuckDB one. */
async function importComparison(root: string, now: number): Promise<StatsDb> {
  // Realistic rows (users × a few thousand names, 10% blocked, 3% NXDOMAIN).
  const config = await writeSyntheticCsv(root, join(root, 'csv'), FILES, (i) =>
    syntheticRow(i, USERS, now - 3_000_000 + i)
  )
  cpSync(config.stats.dir, join(root, 'csv-legacy'), { recursive: true })
  if (PIPELINE_AB) for (const d of AB_ORDER) cpSync(config.stats.dir, join(root, `csv-${d}`), { recursive: true })
  if (DESIGNS) for (const d of ['csv-stage', 'csv-direct']) cpSync(config.stats.dir, join(root, d), { recursive: true })
  const legacy = openLegacyStatsDb(join(root, 'legacy'))
  const tl = performance.now()
  const rl = await legacyImport(legacy, join(root, 'csv-legacy'), 'UTC')
  const legacyMs = performance.now() - tl
  await legacy.close()
  const db = openStatsDb(config.stats.db, { threads: 2, memoryLimit: '1GB' })
  await db.ready // opening is asynchronous: not part of the import (the LMDB environment opens before its timer too)
  const t1 = performance.now()
  const r = await importClosedFiles(db, config.stats.dir, 'UTC')
  const importMs = performance.now() - t1
  console.log(
    `import, LMDB (before): ${rl.rows} rows in ${legacyMs.toFixed(0)} ms = ${Math.round((rl.rows / legacyMs) * 1000)} rows/s`
  )
  console.log(`load average ${load()}`)
  console.log(
    `import, DuckDB (now):  ${r.rows} rows in ${importMs.toFixed(0)} ms = ${Math.round((r.rows / importMs) * 1000)} rows/s`
  )
  // Today's partitions are compacted at most every 10 minutes (not in the import run above): its cost, once.
  const tc = performance.now()
  await pruneStats(db, 'UTC', Date.now() + 11 * 60_000)
  console.log(`compaction of today's partials (at most every 10 minutes): ${(performance.now() - tc).toFixed(0)} ms`)
  if (DESIGNS) await importDesigns(root, now)
  if (PIPELINE_AB) await pipelineAb(root)
  return db
}

/** Bytes of the database in use (blocks in use × block size), after a checkpoint. */
async function usedBytes(db: StatsDb): Promise<number> {
  await sql(db, 'CHECKPOINT')
  return await db.read(async (c) => {
    const [used, size] = (
      await c.runAndReadAll('SELECT used_blocks, block_size FROM pragma_database_size()')
    ).getRows()[0]!
    return Number(used) * Number(size)
  })
}

/** One raw hour's rows (`n` of them, numbered from `i0`) as the import's stage has them; `order` 'user' generates them as the sort leaves them. */
function rawRowsSql(h: number, n: number, order: 'arrival' | 'user', i0 = 0): string {
  const user = order === 'user' ? userSql(`(i - ${i0}) * ${USERS} // ${n}`) : userSql(`hash(i + ${h * n}) % ${USERS}`)
  const created =
    order === 'user' ? `${h * HOUR_MS} + hash(i + ${h}) % ${HOUR_MS}` : `${h * HOUR_MS} + i * ${HOUR_MS} // ${n}`
  return (
    `SELECT ${created} AS created, ${user} AS "user", i % 33 = 0 AS nx, ` +
    `'10.' || (i % 250) || '.' || (i % 7) || '.1' AS address, 'host' || (i % 5000) || '.example' || (i % 7) || '.com' AS host, ` +
    `CASE WHEN i % 10 = 0 THEN 'example' || (i % 7) || '.com' ELSE '' END AS blockedhost, ` +
    `CASE WHEN i % 10 = 0 THEN 'category' ELSE 'none' END AS reason, (i % 90)::VARCHAR AS cats, ` +
    `CASE WHEN i % 10 = 0 THEN (i % 90)::VARCHAR ELSE '' END AS blockedcats FROM range(${i0}, ${i0 + n}) t(i)`
  )
}

/**
 * Appends generated rows to raw hour `h` as the importer does (engine/stats/raw-layout.ts: dictionaries,
 * then rows in the stage's order). For rows generated sorted by user, the users' dictionary is filled in
 * name order first, so their ids are in the sort's order too (as after the engine's sort).
 */
async function appendRawRows(db: StatsDb, h: number, rows: string, usersFirst: boolean): Promise<void> {
  await db.write(async (c) => {
    await c.run(`CREATE OR REPLACE TEMP TABLE bench_raw AS ${rows}`)
    if (usersFirst)
      await c.run(
        `CREATE TABLE IF NOT EXISTS ${rawUsersTable(h)} (id INTEGER, name VARCHAR); ` +
          `INSERT INTO ${rawUsersTable(h)} SELECT u::INTEGER, ${userSql('u')} FROM range(${USERS}) t(u) WHERE NOT EXISTS (SELECT 1 FROM ${rawUsersTable(h)})`
      )
    await insertRawHour(c, h, 'bench_raw', 'true')
    await c.run('DROP TABLE bench_raw')
  })
}

/**
 * RAW_ROWS raw rows over the 24 hours up to `now`'s (or RAW_HOURS of them): see the top of this file.
 * The oldest hour goes in arrival order and is sorted by the engine (timed, bytes before and after).
 */
async function fillRaw(db: StatsDb, now: number): Promise<number> {
  const perHour = Math.ceil(RAW_ROWS / 24)
  const current = Math.floor(now / HOUR_MS)
  const oldest = current - RAW_HOURS + 1
  const tail = Math.ceil((perHour * RAW_SORT_EVERY_MS) / HOUR_MS)
  const before = await usedBytes(db)
  const tw = performance.now()
  await appendRawRows(db, oldest, rawRowsSql(oldest, perHour, 'arrival'), false)
  const writeMs = performance.now() - tw
  const arrival = await usedBytes(db)
  const ts = performance.now()
  await sortRawHour(db, oldest)
  const sortMs = performance.now() - ts
  const sorted = await usedBytes(db)
  console.log(
    `one raw hour of ${perHour} rows: ${((arrival - before) / perHour).toFixed(2)} bytes per row in arrival order, ` +
      `${((sorted - before) / perHour).toFixed(2)} sorted by user; written in ${(writeMs / 1000).toFixed(1)} s, ` +
      `the sort took ${(sortMs / 1000).toFixed(1)} s (load ${load()})`
  )
  for (let h = oldest + 1; h <= current; h++) {
    const sortedRows = h === current ? perHour - tail : perHour
    await appendRawRows(db, h, rawRowsSql(h, sortedRows, 'user'), true)
    if (h === current) await appendRawRows(db, h, rawRowsSql(h, tail, 'arrival', sortedRows), false)
  }
  return perHour * RAW_HOURS
}

/** Three months of aggregates for USERS users (week tables, today a day table, or 92 day tables) and the raw rows. */
async function fill(db: StatsDb, now: number, today: number): Promise<void> {
  const days = 92
  const t2 = performance.now()
  if (RAW_ONLY) {
    /* no aggregates */
  } else if (FILL === 'days') await fillDayTables(db, today - days + 1, today)
  else {
    // The layout the importer's folds make: every day before today in week tables sorted by (user, day), today a day table.
    await fillWeekTables(db, today - days + 1, today - 1)
    await fillDayTables(db, today, today)
  }
  const fillMs = performance.now() - t2
  const aggBytes = await usedBytes(db)
  const t3 = performance.now()
  const rows = await fillRaw(db, now)
  const allBytes = await usedBytes(db)
  console.log(
    `aggregates: ${USERS} users × ${days} days (${USERS * days * (24 + DOMAINS_PER_DAY)} rows) written in ${(fillMs / 1000).toFixed(1)} s, ` +
      `${(aggBytes / 1e6).toFixed(0)} MB on disk; raw: ${rows} rows in ${((performance.now() - t3) / 1000).toFixed(1)} s, ${((allBytes - aggBytes) / 1e6).toFixed(0)} MB = ` +
      `${((allBytes - aggBytes) / rows).toFixed(1)} bytes per row (load ${load()})`
  )
  await db.write((c) => metaPut(c, NOW_KEY, now))
}

const root = DB_DIR ?? mkdtempSync(join(tmpdir(), 'filterd-stats-bench-'))
try {
  let now = Date.now()
  let db: StatsDb
  if (DB_DIR === undefined) db = await importComparison(root, now)
  else {
    db = openStatsDb(DB_DIR, { threads: 2, memoryLimit: '1GB' })
    await db.ready
  }
  if (IMPORT_ONLY) {
    await db.close()
    rmSync(root, { recursive: true, force: true })
    process.exit(0)
  }
  const filledAt = await db.read((c) => metaGet(c, NOW_KEY))
  if (filledAt > 0) {
    now = filledAt
    console.log(
      `store ${DB_DIR} filled at ${new Date(now).toISOString()}: ${(statSync(db.file).size / 1e6).toFixed(0)} MB`
    )
  }
  const time = new ReportTime('UTC')
  const today = time.dayOf(now)
  const days = 92
  if (filledAt === 0) await fill(db, now, today)
  if (BUILD_MONTHS) await buildMonthsBeside(db, root, now)
  if (FILL_ONLY) {
    await db.close()
    process.exit(0)
  }

  const from = today - days + 2
  const user = userId(Math.floor(USERS / 2))
  const allReports: Array<[string, () => Promise<unknown>]> = [
    ['activity/hour, 3 months', () => activityByHour(db, time, user, from, today)],
    ['activity/day, 3 months', () => activityByDay(db, user, from, today)],
    ['domains/all top 100, 3 months', () => topDomains(db, user, from, today, 'all')],
    ['domains/www top 100, 3 months', () => topDomains(db, user, from, today, 'www')],
    ['domains/all top 100, 1 day', () => topDomains(db, user, today, today, 'all')],
    ['detail, 7 days', () => detail(db, user, today - 6, today)],
    ['detail, 3 months', () => detail(db, user, from, today)],
    ['raw, last hour', () => rawLastHour(db, time, user, now)],
    ['overview, 7 days (all users)', () => overview(db, time, today - 6, today)]
  ]
  const reports = RAW_ONLY ? allReports.filter(([name]) => name.startsWith('raw')) : allReports
  const measure = async (layout: string): Promise<Map<string, { median: number; p99: number }>> => {
    const out = new Map<string, { median: number; p99: number }>()
    for (const [name, fn] of reports) {
      const r = await timed(RUNS, fn)
      out.set(name, r)
      console.log(`${layout}: ${name}: median ${r.median.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (load ${load()})`)
    }
    return out
  }
  if (FILL === 'weeks') {
    const months = await db.read(async (c) =>
      (await c.runAndReadAll(TABLES_SQL)).getRows().some((r) => String(r[0]).startsWith('mhours_'))
    )
    const r = await measure(months ? 'month tables' : 'week tables')
    console.log('\n| Report, one user (overview: all users) | median / p99 |')
    console.log('|---|---:|')
    for (const [name] of reports)
      console.log(`| ${name} | ${r.get(name)!.median.toFixed(1)} / ${r.get(name)!.p99.toFixed(1)} ms |`)
  } else {
    // The same answers from both layouts, and each layout's latency, in the same run.
    const answers = async (): Promise<string> =>
      JSON.stringify(await Promise.all(reports.slice(0, 7).map(([, fn]) => fn())))
    const dayAnswers = await answers()
    const dayTables = await measure('92 day tables')
    // The folded tier: what the prunes after an upgrade do, step by step, when every finished day is still a day table.
    const unfoldedBytes = statSync(db.file).size
    const tf = performance.now()
    await db.write((c) => foldDays(db, c, 'UTC', now, { force: true }))
    const foldMs = performance.now() - tf
    const folded = await db.read((c) => weekPartitions(c))
    if (folded.hours.length === 0) throw new Error('nothing was folded')
    await sql(db, 'CHECKPOINT')
    const foldedBytes = statSync(db.file).size
    console.log(
      `fold of the finished days into ${folded.hours.length} week tables per kind: ${(foldMs / 1000).toFixed(1)} s (load ${load()}); ` +
        `database ${(unfoldedBytes / 1e6).toFixed(0)} MB before, ${(foldedBytes / 1e6).toFixed(0)} MB after (CHECKPOINT)`
    )
    if ((await answers()) !== dayAnswers) throw new Error('the reports differ after the fold')
    const weekTables = await measure('week tables')
    console.log('\n| Report, one user | 92 day tables median / p99 | week tables median / p99 | ratio of medians |')
    console.log('|---|---:|---:|---:|')
    for (const [name] of reports) {
      const a = dayTables.get(name)!
      const b = weekTables.get(name)!
      console.log(
        `| ${name} | ${a.median.toFixed(1)} / ${a.p99.toFixed(1)} ms | ${b.median.toFixed(1)} / ${b.p99.toFixed(1)} ms | ${(a.median / b.median).toFixed(1)}x |`
      )
    }
  }
  await db.close()
} finally {
  if (DB_DIR !== undefined) console.log(`database kept: ${DB_DIR}`)
  else if (KEEP) console.log(`database kept: ${join(root, 'db')}`)
  else rmSync(root, { recursive: true, force: true })
}

/** `--pipeline-ab`: the importer with and without its read-ahead, alternating, on the same files. */
async function pipelineAb(root: string): Promise<void> {
  const rates: Record<string, number[]> = { serial: [], pipelined: [] }
  for (const run of AB_ORDER) {
    const db = openStatsDb(join(root, `db-${run}`), { threads: 2, memoryLimit: '1GB' })
    await db.ready
    const pipeline = run.startsWith('pipelined')
    const cpu = process.cpuUsage()
    const t = performance.now()
    const r = await importClosedFiles(db, join(root, `csv-${run}`), 'UTC', { pipeline })
    const ms = performance.now() - t
    const used = process.cpuUsage(cpu)
    const rate = Math.round((r.rows / ms) * 1000)
    rates[pipeline ? 'pipelined' : 'serial']!.push(rate)
    console.log(
      `import, DuckDB ${pipeline ? 'pipelined' : 'serial   '} (${run}): ${r.rows} rows in ${r.files} files, ${ms.toFixed(0)} ms = ${rate} rows/s, ` +
        `process CPU ${((used.user + used.system) / 1000).toFixed(0)} ms (load ${load()})`
    )
    await db.close()
  }
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
  console.log(`pipelined / serial (means of two): ${(mean(rates.pipelined!) / mean(rates.serial!)).toFixed(2)}x`)
}

/** The SQL designs on the same files, each into a store of its own (`--designs`). */
async function importDesigns(root: string, now: number): Promise<void> {
  const first = Math.floor((now - 3_000_000) / HOUR_MS)
  const last = Math.floor((now - 3_000_000 + IMPORT_ROWS) / HOUR_MS)
  for (const design of ['stage', 'direct'] as const) {
    if (design === 'direct' && first !== last) {
      console.log('import, DuckDB read_csv straight into the partition: skipped (the rows span two hours)')
      continue
    }
    const db = openStatsDb(join(root, `db-${design}`), { threads: 2, memoryLimit: '1GB' })
    await db.ready
    const t = performance.now()
    const rows =
      design === 'stage'
        ? await importByStage(db, join(root, 'csv-stage'), now)
        : await importDirect(db, join(root, 'csv-direct'), first)
    const ms = performance.now() - t
    const label =
      design === 'stage' ? 'read_csv into a stage (the core of now)' : 'read_csv straight into the partition'
    console.log(
      `import, DuckDB ${label}: ${rows} rows in ${ms.toFixed(0)} ms = ${Math.round((rows / ms) * 1000)} rows/s`
    )
    await db.close()
  }
}

/** IMPORT_ROWS synthetic rows of the store's clock as closed CSV files in `dir` (round `k` varies the rows). */
async function writeImportFiles(root: string, now: number, k: number): Promise<string> {
  const dir = join(root, `month-import-${k}`)
  await writeSyntheticCsv(root, dir, 1, (i) => syntheticRow(i + k * IMPORT_ROWS, USERS, now - 600_000 + (i % 300_000)))
  return dir
}

/** One import of IMPORT_ROWS rows into `db`: its wall time (ms). */
async function timedImport(db: StatsDb, root: string, now: number, k: number): Promise<number> {
  const dir = await writeImportFiles(root, now, k)
  const t = performance.now()
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => now })
  const ms = performance.now() - t
  rmSync(dir, { recursive: true, force: true })
  if (r.rows !== IMPORT_ROWS) throw new Error(`imported ${r.rows} rows of ${IMPORT_ROWS}`)
  return ms
}

/** `--build-months`: the due months made one by one (step 1 beside the writer, the swap on it), imports going on beside. */
async function buildMonthsBeside(db: StatsDb, root: string, now: number): Promise<void> {
  setFailpoint('stats.month.build', 'off') // the importer's own background build: this one is timed here
  const alone: number[] = []
  for (let k = 0; k < 3 && IMPORT_ROWS > 0; k++) alone.push(await timedImport(db, root, now, k))
  if (IMPORT_ROWS > 0)
    console.log(
      `import of ${IMPORT_ROWS} rows, no build beside: ${alone.map((x) => x.toFixed(0)).join(', ')} ms (load ${load()})`
    )
  const names = await db.read(async (c) => (await c.runAndReadAll(TABLES_SQL)).getRows().map((r) => String(r[0])))
  const units = dueMonths(names, 'UTC', now)
  let building = IMPORT_ROWS > 0 // importRows 0: the build alone (imported rows would change the reports timed after)
  const beside: number[] = []
  const imports = (async () => {
    for (let k = 3; building; k++) beside.push(await timedImport(db, root, now, k))
  })()
  const t0 = performance.now()
  try {
    for (const u of units) {
      const t1 = performance.now()
      let t2 = t1
      const swapped = await buildMonth(db, u, {
        between: () => {
          t2 = performance.now()
          return Promise.resolve()
        }
      })
      const t3 = performance.now()
      console.log(
        `month ${formatDay(u.month)} ${u.kind}: copy beside the writer ${((t2 - t1) / 1000).toFixed(1)} s, ` +
          `swap (its wait in the write queue included) ${(t3 - t2).toFixed(0)} ms, ${swapped ? 'swapped in' : 'NOT swapped'} (load ${load()})`
      )
    }
  } finally {
    building = false
    await imports
    await rawSortSettled(db) // the imports' raw rows start sorts beside the writer
  }
  const sorted = [...beside].sort((a, b) => a - b)
  console.log(
    `months made: ${units.length} tables in ${((performance.now() - t0) / 1000).toFixed(1)} s; ` +
      `${beside.length} imports of ${IMPORT_ROWS} rows beside: median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)} ms, ` +
      `max ${sorted[sorted.length - 1]?.toFixed(0)} ms (each: ${beside.map((x) => x.toFixed(0)).join(', ')}) (load ${load()})`
  )
  await sql(db, 'CHECKPOINT')
}
