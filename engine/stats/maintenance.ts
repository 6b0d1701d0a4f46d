/**
 * The statistics store's maintenance: the steps due after each import, in one place and in their order.
 * An import (the api role's timer, `filterd stats-import`, the Redis hosts' segment applier) ends with
 * `maintainAfterImport`; each step decides by the tier table (./tiers.ts) whether anything is due and
 * does nothing otherwise, so running them after every import costs a catalog query or two.
 *
 *   parquet      the raw hours that are over, written out (`stats.parquet-dir`, ./parquet.ts), before
 *                retention may drop them
 *   prune        retention drops whole partitions of every tier; the ledger forgets old files
 *   fold         finished days into their week tables (./fold.ts), in bounded steps
 *   compact      days written since their last compaction: one row per key, sorted by user
 *   raw sort     raw hours sorted by user (./raw-sort.ts), beside the writer
 *   month build  finished months out of their weeks (./month-build.ts), beside the writer
 *
 * Prune, fold and compact take one turn of the write queue; the raw sort and the month build run beside
 * the writer (StatsDb.background) and are not waited for: a failure of theirs is logged, and the next
 * import tries again.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import { failpointNumber } from '../failpoints.js'
import type { Logger } from '../log/index.js'
import { hoursTable, namesTable, partitions, retentionOf, type StatsDb } from './db.js'
import { foldDays, pruneMonths } from './fold.js'
import { buildMonthsInBackground } from './month-build.js'
import { exportParquetHours } from './parquet.js'
import { rawHourTables } from './raw-layout.js'
import { sortRawHoursInBackground } from './raw-sort.js'
import { tier } from './tiers.js'
import { HOUR_MS, ReportTime } from './time.js'
import { transaction } from './transaction.js'

/** The steps, in the order they run. */
export const MAINTENANCE_STEPS = ['parquet', 'prune', 'fold', 'compact', 'raw sort', 'month build'] as const

/** Progress records of finished files are kept as long as aggregates (then the file is long gone). */
const FILES_RETENTION_MS = 100 * 86_400_000

export interface MaintenanceOptions {
  /** `stats.parquet-dir`: the raw hours that are over are written there as Parquet files. */
  parquetDir?: string | undefined
  logger?: Logger | undefined
  /** Unsorted rows from which a raw hour is sorted by user (./raw-sort.ts); tests lower it. */
  rawSortMinRows?: number | undefined
  /**
   * Whether the steps beside the writer (raw sort, month build) run: true but for the Redis hosts' segment
   * applier, whose store is sorted and built by the same steps after its next local import.
   */
  beside?: boolean
}

/**
 * The maintenance steps due after an import, at the time `now()` says (read afresh for each step: a long
 * step moves the clock for the next). Returns the partitions retention dropped.
 */
export async function maintainAfterImport(
  db: StatsDb,
  timeZone: string,
  now: () => number,
  options: MaintenanceOptions = {}
): Promise<number> {
  // Before pruning: an hour is written long before retention drops it (a day).
  if (options.parquetDir !== undefined) await exportParquetHours(db, options.parquetDir, now(), options.logger)
  const pruned = await pruneStats(db, timeZone, now(), options.logger)
  if (options.beside !== false) {
    sortRawHoursInBackground(db, now(), options.logger, options.rawSortMinRows)
    buildMonthsInBackground(db, timeZone, now(), options.logger)
  }
  return pruned
}

/** Rewrites a day's partitions as one row per key, sorted by user (see engine/stats/db.ts). */
async function compactDay(c: DuckDBConnection, day: number): Promise<void> {
  const h = hoursTable(day)
  const n = namesTable(day)
  await transaction(c, async () => {
    const parts = await partitions(c)
    if (parts.hours.includes(day)) {
      await c.run(
        `CREATE TABLE ${h}__c AS SELECT "user", hour, sum(requests)::BIGINT AS requests, sum(blocks)::BIGINT AS blocks ` +
          `FROM ${h} GROUP BY "user", hour ORDER BY "user", hour`
      )
      await c.run(`DROP TABLE ${h}`)
      await c.run(`ALTER TABLE ${h}__c RENAME TO ${h}`)
    }
    if (parts.names.includes(day)) {
      await c.run(
        `CREATE TABLE ${n}__c AS SELECT "user", host, sum(requests)::BIGINT AS requests, sum(nxdomain)::BIGINT AS nxdomain, ` +
          `sum(blocks)::BIGINT AS blocks, coalesce(arg_max(cats, seq) FILTER (WHERE cats <> ''), '') AS cats, max(seq) AS seq, ` +
          `blockedcats FROM ${n} GROUP BY "user", host, blockedcats ORDER BY "user", host`
      )
      await c.run(`DROP TABLE ${n}`)
      await c.run(`ALTER TABLE ${n}__c RENAME TO ${n}`)
    }
    await c.run('DELETE FROM meta WHERE key = $1', [`dirty.${day}`])
  })
}

/** Today's partitions are compacted at least this often, the first time this long after the first prune (earlier days once, after their last write). */
const COMPACT_TODAY_MS = tier('day').due.everyMs
/** ... and sooner once the partial rows since the last compaction outnumber the rows it left (and COMPACT_TODAY_MIN_ROWS), but not more often than this. */
const COMPACT_TODAY_FLOOR_MS = 60_000
/**
 * Partial rows appended since today's last compaction below which it waits for COMPACT_TODAY_MS. Each
 * import appends a partial row per (user, name, hour) it saw: a busy host adds hundreds of thousands a
 * minute to a day of a few thousand compacted keys, which every report then sums again and which the
 * store's cache holds (the api role's memory climbed by about 7 MiB a minute between compactions at
 * 5,000 q/s). Compacting when the partials outnumber the compacted rows keeps a compaction's cost
 * proportional to what was appended since the last one.
 */
const COMPACT_TODAY_MIN_ROWS = 200_000
interface TodayCompaction {
  at: number
  /** Rows of today's two tables right after it (or at the first prune). */
  rows: number
}
const lastTodayCompaction = new WeakMap<StatsDb, TodayCompaction>()

/** COMPACT_TODAY_MIN_ROWS, or the `stats.compact-today.min-rows` failpoint (tests: a compaction brought forward). */
function compactTodayMinRows(): number {
  const set = failpointNumber('stats.compact-today.min-rows')
  return set !== undefined && set > 0 ? set : COMPACT_TODAY_MIN_ROWS
}

/** The rows of day `day`'s two tables (DuckDB's own count of a table's rows, no scan). */
async function dayRows(c: DuckDBConnection, day: number): Promise<number> {
  const rows = await c.runAndReadAll(
    'SELECT coalesce(sum(estimated_size), 0)::DOUBLE FROM duckdb_tables() WHERE table_name IN ($1, $2)',
    [hoursTable(day), namesTable(day)]
  )
  return Number(rows.getRows()[0]![0])
}

/** Whether today's tables are compacted now: COMPACT_TODAY_MS since the last time, or sooner when the partials grew past it. */
async function compactTodayNow(db: StatsDb, c: DuckDBConnection, today: number, now: number): Promise<boolean> {
  // The first time counts from the store's first prune: an import run right after a start does
  // not also rewrite all of today (it reads a few more partials until then).
  const last = lastTodayCompaction.get(db)
  if (last === undefined) {
    lastTodayCompaction.set(db, { at: now, rows: await dayRows(c, today) })
    return false
  }
  const since = now - last.at
  if (since < COMPACT_TODAY_FLOOR_MS) return false
  if (since < COMPACT_TODAY_MS && (await dayRows(c, today)) - last.rows < Math.max(last.rows, compactTodayMinRows()))
    return false
  return true
}

/**
 * Drops the partitions retention (`retentionOf(db)`: stats.raw-retention-hours, stats.retention-months) no
 * longer keeps: raw hours wholly older than a day, days older than three months (the defaults), month
 * tables whose last day is (engine/stats/fold.ts); forgets old ledger records;
 * folds the finished days into their month tables; compacts the days written since their last
 * compaction. Returns the partitions dropped by retention (not the day tables folded).
 */
export async function pruneStats(db: StatsDb, timeZone: string, now: number, logger?: Logger): Promise<number> {
  const time = new ReportTime(timeZone)
  const kept = retentionOf(db)
  const keepDay = time.aggregateRetentionStart(now, kept.months)
  const today = time.dayOf(now)
  return await db.write(async (c) => {
    const parts = await partitions(c)
    // A partition is a raw hour's tables (either layout: engine/stats/raw-layout.ts) or one day table.
    const drops: string[][] = []
    for (const h of parts.raw) if ((h + 1) * HOUR_MS <= now - kept.rawMs) drops.push(rawHourTables(h))
    for (const d of parts.hours) if (d < keepDay) drops.push([hoursTable(d)])
    for (const d of parts.names) if (d < keepDay) drops.push([namesTable(d)])
    let dropped = 0
    await transaction(c, async () => {
      for (const t of drops.flat()) await c.run(`DROP TABLE IF EXISTS ${t}`)
      dropped = drops.length + (await pruneMonths(c, keepDay))
      await c.run("DELETE FROM meta WHERE key LIKE 'dirty.%' AND CAST(substr(key, 7) AS INTEGER) < $1", [keepDay])
      await c.run('DELETE FROM files WHERE done AND updated < $1', [BigInt(now - FILES_RETENTION_MS)])
    })
    const folded = await foldDays(db, c, timeZone, now)
    if (folded.days > 0) logger?.info(folded, 'statistics: finished days folded into their week tables')
    await compactDirty(db, c, today, now)
    return dropped
  })
}

async function compactDirty(db: StatsDb, c: DuckDBConnection, today: number, now: number): Promise<void> {
  const dirty = (await c.runAndReadAll("SELECT CAST(substr(key, 7) AS INTEGER) FROM meta WHERE key LIKE 'dirty.%'"))
    .getRows()
    .map((r) => Number(r[0]))
  for (const day of dirty) {
    if (day === today && !(await compactTodayNow(db, c, today, now))) continue
    await compactDay(c, day)
    if (day === today) lastTodayCompaction.set(db, { at: now, rows: await dayRows(c, today) })
  }
}

/** Compacts every day written since its last compaction, today included (no retention: `filterd stats-migrate`). */
export async function compactStats(db: StatsDb): Promise<void> {
  await db.write((c) => compactDirty(db, c, Number.NaN, Date.now()))
}
