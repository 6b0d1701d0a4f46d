/**
 * The month tier of the aggregates: finished days folded into one table per local month and kind,
 * sorted by (user, day), so that a report of three months for one user reads a few row groups of at
 * most four month tables instead of one row group in each of ~92 day tables (docs/statistics.md,
 * docs/performance.md "the month tier").
 *
 *   mhours_<month>  the `hours_<day>` rows of the month's folded days, with a `day` column
 *   mnames_<month>  the `names_<day>` rows likewise (`<month>` is the day number of its first day)
 *
 * A fold rewrites one month: the new table is made from the old month table and the day tables to
 * fold (each day's partials summed per key), sorted by (user, day); then the old month table and
 * the day tables are dropped and the new one takes the old one's name, all in one DuckDB
 * transaction. A crash or kill before the commit leaves the day tables and the old month table as
 * they were (nothing lost); after it, the rows are in the month table only (nothing counted twice).
 *
 * A day is folded once it has been over for FOLD_GRACE_MS (files of its last minutes arrive late,
 * above all from the other hosts of a fleet). A partial that arrives for a folded day later still
 * lands in a day table of its own, which reports add to the month table's rows, and which a later
 * fold takes in: at most one fold per FOLD_EVERY_MS per store, so late stragglers never make an
 * import rewrite a month each time. The first prune after a start folds whatever is due.
 */
import { writeSync } from 'node:fs'
import type { DuckDBConnection } from '@duckdb/node-api'
import { hoursTable, metaPut, namesTable, partitions, type StatsDb } from './db.js'
import { HOUR_MS, ReportTime } from './time.js'

const DAY_MS = 86_400_000
/** A day is folded once it has been over this long. */
const FOLD_GRACE_MS = HOUR_MS
/** At most one fold per store this often (stragglers of folded days wait for the next). */
export const FOLD_EVERY_MS = HOUR_MS
/** The meta key of the first day retention keeps: month tables hold older days until dropped whole. */
export const RETENTION_KEY = 'retention.day'

export const monthHoursTable = (month: number): string => `mhours_${month}`
export const monthNamesTable = (month: number): string => `mnames_${month}`

/** The day number of the first day of `day`'s calendar month. */
function monthOf(day: number): number {
  const d = new Date(day * DAY_MS)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / DAY_MS
}

/** The day number of the last day of the month that starts on `month`. */
export function monthEnd(month: number): number {
  const d = new Date(month * DAY_MS)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / DAY_MS - 1
}

/** The month tables that exist, by month (first day number), ascending. */
export async function monthPartitions(c: DuckDBConnection): Promise<{ hours: number[]; names: number[] }> {
  const r = await c.runAndReadAll(
    "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND database_name = current_database()"
  )
  const out = { hours: [] as number[], names: [] as number[] }
  for (const [name] of r.getRows()) {
    const m = /^m(hours|names)_(\d+)$/.exec(String(name))
    if (m !== null) out[m[1] as 'hours' | 'names'].push(Number(m[2]))
  }
  out.hours.sort((a, b) => a - b)
  out.names.sort((a, b) => a - b)
  return out
}

/** What a fold did (for the log and the bench). */
interface FoldResult {
  /** Months rewritten. */
  months: number
  /** Day tables (of either kind) folded into them. */
  days: number
}

/**
 * Test hook: called inside each month's fold transaction, before its commit. Defaults to the one
 * `FILTERD_STATS_FOLD_PAUSE=1` describes: it blocks the process forever (a test SIGKILLs it there).
 */
export type FoldHook = (month: number) => void

function pauseHookFromEnv(): FoldHook | undefined {
  if (process.env.FILTERD_STATS_FOLD_PAUSE !== '1') return undefined
  return (month) => {
    writeSync(1, `PAUSED fold ${month}\n`)
    const cell = new Int32Array(new SharedArrayBuffer(4))
    for (;;) Atomics.wait(cell, 0, 0)
  }
}

const lastFold = new WeakMap<StatsDb, number>()

/**
 * Folds the days due (over for FOLD_GRACE_MS, still kept by retention) into their month tables, on
 * the writer connection `c` of `db`; at most once per FOLD_EVERY_MS per store unless `force`.
 */
export async function foldDays(
  db: StatsDb,
  c: DuckDBConnection,
  timeZone: string,
  now: number,
  options: { force?: boolean; hook?: FoldHook } = {}
): Promise<FoldResult> {
  const result: FoldResult = { months: 0, days: 0 }
  if (options.force !== true && now - (lastFold.get(db) ?? -Infinity) < FOLD_EVERY_MS) return result
  const time = new ReportTime(timeZone)
  const before = time.dayOf(now - FOLD_GRACE_MS) // days before this one are over since the grace
  const keepDay = time.aggregateRetentionStart(now)
  const parts = await partitions(c)
  const due = new Map<number, { hours: number[]; names: number[] }>()
  for (const kind of ['hours', 'names'] as const) {
    for (const d of parts[kind]) {
      if (d >= before || d < keepDay) continue
      const m = monthOf(d)
      let e = due.get(m)
      if (e === undefined) due.set(m, (e = { hours: [], names: [] }))
      e[kind].push(d)
    }
  }
  if (due.size === 0) return result
  const months = await monthPartitions(c)
  const hook = options.hook ?? pauseHookFromEnv()
  for (const [month, days] of [...due].sort((a, b) => a[0] - b[0])) {
    await foldMonth(c, month, days, months, hook)
    result.months++
    result.days += days.hours.length + days.names.length
  }
  lastFold.set(db, now) // after the folds: one that failed is tried again at the next prune
  return result
}

async function foldMonth(
  c: DuckDBConnection,
  month: number,
  days: { hours: number[]; names: number[] },
  existing: { hours: number[]; names: number[] },
  hook: FoldHook | undefined
): Promise<void> {
  await c.run('BEGIN TRANSACTION')
  try {
    if (days.hours.length > 0) {
      const mt = monthHoursTable(month)
      const old = existing.hours.includes(month)
        ? `SELECT "user", day, hour, requests, blocks FROM ${mt} UNION ALL `
        : ''
      const fresh = days.hours
        .map(
          (d) =>
            `SELECT "user", ${d}::INTEGER AS day, hour, sum(requests)::BIGINT AS requests, sum(blocks)::BIGINT AS blocks FROM ${hoursTable(d)} GROUP BY "user", hour`
        )
        .join(' UNION ALL ')
      await swapIn(c, mt, `${old}${fresh}`, '"user", day, hour', days.hours.map(hoursTable))
    }
    if (days.names.length > 0) {
      const mt = monthNamesTable(month)
      const cols = '"user", day, host, requests, nxdomain, blocks, cats, seq'
      const old = existing.names.includes(month) ? `SELECT ${cols} FROM ${mt} UNION ALL ` : ''
      // One row per (user, name) and day, as a day's compaction makes it (engine/stats/importer.ts).
      const fresh = days.names
        .map(
          (d) =>
            `SELECT "user", ${d}::INTEGER AS day, host, sum(requests)::BIGINT AS requests, sum(nxdomain)::BIGINT AS nxdomain, ` +
            `sum(blocks)::BIGINT AS blocks, coalesce(arg_max(cats, seq) FILTER (WHERE cats <> ''), '') AS cats, max(seq) AS seq FROM ${namesTable(d)} GROUP BY "user", host`
        )
        .join(' UNION ALL ')
      await swapIn(c, mt, `${old}${fresh}`, '"user", day, host', days.names.map(namesTable))
    }
    for (const d of new Set([...days.hours, ...days.names]))
      await c.run('DELETE FROM meta WHERE key = $1', [`dirty.${d}`])
    hook?.(month)
    await c.run('COMMIT')
  } catch (err) {
    await c.run('ROLLBACK').catch(() => {})
    throw err
  }
}

/** Inside the caller's transaction: `table` becomes `select` sorted by `order`; the folded day tables go. */
async function swapIn(
  c: DuckDBConnection,
  table: string,
  select: string,
  order: string,
  folded: readonly string[]
): Promise<void> {
  // The old month table's rows are already one per key: only the new days' partials are summed.
  await c.run(`CREATE TABLE ${table}__f AS SELECT * FROM (${select}) ORDER BY ${order}`)
  await c.run(`DROP TABLE IF EXISTS ${table}`)
  await c.run(`ALTER TABLE ${table}__f RENAME TO ${table}`)
  for (const t of folded) await c.run(`DROP TABLE ${t}`)
}

/**
 * Inside the caller's transaction: drops the month tables whose last day retention no longer keeps,
 * and records the first day kept, which reports apply to the month tables' rows. Returns the tables dropped.
 */
export async function pruneMonths(c: DuckDBConnection, keepDay: number): Promise<number> {
  const months = await monthPartitions(c)
  let dropped = 0
  for (const m of months.hours)
    if (monthEnd(m) < keepDay) {
      await c.run(`DROP TABLE ${monthHoursTable(m)}`)
      dropped++
    }
  for (const m of months.names)
    if (monthEnd(m) < keepDay) {
      await c.run(`DROP TABLE ${monthNamesTable(m)}`)
      dropped++
    }
  await metaPut(c, RETENTION_KEY, keepDay)
  return dropped
}
