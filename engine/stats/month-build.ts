/**
 * Month tables made from a finished month's week tables, so that a three-month report reads about 3 month
 * tables and the weeks of the current month instead of ~14 week tables (docs/design/statistics.md, "Month
 * tables"; bench/results/2026-11-history.md: planning and running the UNION ALL over the tables costs more than
 * their scans).
 *
 *   mhours_<month>, mnames_<month>   the week tables' rows of the month's days, sorted by (user, day, ...)
 *
 * A month holds tens of millions of rows at 100,000 users: rewriting it on the writer would hold every
 * import for minutes. So it is made in two steps, as the raw-hour sort is (engine/stats/raw-sort.ts):
 *
 *   1. beside the writer (StatsDb.background), in one transaction: the week tables overlapping the month
 *      are noted (name, table oid, row count: the fingerprint), and read into `m<kind>_<month>__mbuild`
 *      (the month's days, sorted) and, for a week that straddles the month's first or last day,
 *      `<week table>__mbuild` (its other days, in their order);
 *   2. on the writer, in one short transaction: if the week tables overlapping the month are still
 *      the ones noted (a fold rewrites a week as a new table: a new oid), they are dropped and the copies
 *      take their names (a straddling week's copy only if it kept rows); if not (a late day folded into a
 *      week meanwhile, retention dropped one), the copies are dropped and the month is made again later.
 *
 * So a day's rows are in exactly one folded table, its month's or its week's, before and after the swap:
 * reports need no rule of which tier wins. A late day folded after its month exists is appended to the
 * month table (engine/stats/fold.ts). A crash before step 1's commit leaves nothing; between the steps,
 * `__mbuild` copies that the next run drops. Retention drops month tables whole, like weeks.
 *
 * A month is made once every week overlapping it is over (for FOLD_GRACE_MS) and has no day table left to
 * fold, so its weeks no longer change but for late files; a store with no month tables (older stores, a
 * fresh one) reads its week tables as before.
 */
import { failpoint, failpointNumber, stopHere } from '../failpoints.js'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { Logger } from '../log/index.js'
import { TABLES_SQL, partitionsAmong, retentionOf, type StatsDb } from './db.js'
import {
  FOLD_GRACE_MS,
  foldedAmong,
  monthEnd,
  monthHoursTable,
  monthNamesTable,
  monthOf,
  weekOf,
  type FoldedTable
} from './fold.js'
import { DEFAULT_RETENTION, ReportTime } from './time.js'
import { transaction } from './transaction.js'
import { tier } from './tiers.js'

/** The background check for months to make runs at most this often per store. */
const MONTH_BUILD_EVERY_MS = tier('month').due.everyMs
const BUILD_SUFFIX = '__mbuild'

type Kind = 'hours' | 'names'
/** One month table to make: its kind and first day. */
export interface MonthUnit {
  kind: Kind
  month: number
}

const COLUMNS: Record<Kind, string> = {
  hours: '"user", day, hour, requests, blocks',
  names: '"user", day, host, requests, nxdomain, blocks, cats, seq, blockedcats'
}
const ORDER: Record<Kind, string> = { hours: '"user", day, hour', names: '"user", day, host' }
const monthTable = (u: MonthUnit): string => (u.kind === 'hours' ? monthHoursTable : monthNamesTable)(u.month)

/** Per store: the run under way, and when the background check last ran. */
const runs = new WeakMap<StatsDb, Promise<number>>()
const lastCheck = new WeakMap<StatsDb, number>()

/**
 * Test hook: called inside step 1's transaction, before its commit. Defaults to the one the
 * `stats.month.pause` failpoint describes: it stops the process for ever (a test SIGKILLs it there).
 */
export type MonthHook = (unit: MonthUnit) => void

function pauseHookFromFailpoint(): MonthHook | undefined {
  if (failpoint('stats.month.pause') !== '1') return undefined
  return (u) => stopHere(`PAUSED month ${u.kind} ${u.month}`)
}

/** The week tables of `kind` overlapping `unit`'s month, and their fingerprint (name, oid, rows). */
async function monthWeeks(
  c: DuckDBConnection,
  unit: MonthUnit
): Promise<{ weeks: FoldedTable[]; print: string; names: Set<string>; rows: number }> {
  const rows = (
    await c.runAndReadAll(TABLES_SQL.replace('SELECT table_name', 'SELECT table_name, table_oid, estimated_size'))
  ).getRows()
  const last = monthEnd(unit.month)
  const weeks = foldedAmong(rows.map((r) => String(r[0]))).filter(
    (t) => t.tier === 'week' && t.kind === unit.kind && t.first <= last && t.last >= unit.month
  )
  const byName = new Map(rows.map((r) => [String(r[0]), `${String(r[1])}:${String(r[2])}`]))
  const size = new Map(rows.map((r) => [String(r[0]), Number(r[2])]))
  return {
    rows: weeks.reduce((n, w) => n + (size.get(w.table) ?? 0), 0),
    weeks,
    print: weeks.map((w) => `${w.table}:${byName.get(w.table)}`).join(','),
    names: new Set(byName.keys())
  }
}

/** The months to make now (see the top of this file), oldest first, among the store's table names. */
export function dueMonths(
  names: readonly string[],
  timeZone: string,
  now: number,
  months = DEFAULT_RETENTION.months
): MonthUnit[] {
  const time = new ReportTime(timeZone)
  const over = time.dayOf(now - FOLD_GRACE_MS) // days before this one are over since the grace
  const keep = time.aggregateRetentionStart(now, months)
  const present = new Set(names)
  const folded = foldedAmong(names)
  const days = partitionsAmong(names)
  const out: MonthUnit[] = []
  for (const kind of ['hours', 'names'] as const) {
    const months = new Set<number>()
    for (const w of folded)
      if (w.tier === 'week' && w.kind === kind) for (const d of [w.first, w.last]) months.add(monthOf(d))
    for (const month of months) {
      const last = monthEnd(month)
      const weeksEnd = weekOf(last) + 6
      if (present.has(monthTable({ kind, month })) || last < keep || weeksEnd >= over) continue
      if (days[kind].some((d) => d >= weekOf(month) && d <= weeksEnd)) continue // a day still to fold
      out.push({ kind, month })
    }
  }
  return out.sort((a, b) => a.month - b.month || a.kind.localeCompare(b.kind))
}

/**
 * Rows a month is copied in at most (about): each range of users is sorted on its own. One sort of a whole
 * month (72 M rows at 100,000 users) ran out of `memory_limit` (1 GB) in a measured build.
 */
const MONTH_CHUNK_ROWS = 4_000_000

/** MONTH_CHUNK_ROWS, or the `stats.month.chunk-rows` failpoint (tests: several ranges in a small store). */
function chunkRows(): number {
  const set = failpointNumber('stats.month.chunk-rows')
  return set !== undefined && set > 0 ? set : MONTH_CHUNK_ROWS
}

/**
 * The users that split the weeks' rows into ranges of about MONTH_CHUNK_ROWS, ascending (none: one range),
 * from a sample of the largest week (its users stand for the month's). The weeks are sorted by user,
 * so a range's copy reads only its own row groups of each week.
 */
async function userBounds(c: DuckDBConnection, weeks: readonly FoldedTable[], rows: number): Promise<string[]> {
  const chunks = Math.ceil(rows / chunkRows())
  if (chunks <= 1) return []
  let largest = weeks[0]!.table
  let most = -1
  for (const w of weeks) {
    const n = Number((await c.runAndReadAll(`SELECT count(*) FROM ${w.table}`)).getRows()[0]![0])
    if (n > most) [largest, most] = [w.table, n]
  }
  const users = (
    await c.runAndReadAll(
      `SELECT DISTINCT "user" FROM (SELECT "user" FROM ${largest} USING SAMPLE reservoir(${chunks * 50} ROWS) REPEATABLE (1)) WHERE "user" IS NOT NULL ORDER BY 1`
    )
  )
    .getRows()
    .map((r) => String(r[0]))
  const out: string[] = []
  for (let i = 1; i < chunks; i++) {
    const u = users[Math.floor((i * users.length) / chunks)]
    if (u !== undefined && u !== out[out.length - 1]) out.push(u)
  }
  return out
}

/** Step 1, beside the writer: the month's copy and the straddling weeks' copies, from one snapshot. */
async function buildCopies(
  c: DuckDBConnection,
  unit: MonthUnit,
  hook: MonthHook | undefined
): Promise<string | undefined> {
  return await transaction(c, async () => {
    const { weeks, print, rows } = await monthWeeks(c, unit)
    if (weeks.length === 0) {
      return undefined
    }
    const [first, last] = [unit.month, monthEnd(unit.month)]
    const cols = COLUMNS[unit.kind]
    const union = weeks
      .map((w) => `SELECT ${cols} FROM ${w.table} WHERE day BETWEEN ${first} AND ${last}`)
      .join(' UNION ALL ')
    const copy = `${monthTable(unit)}${BUILD_SUFFIX}`
    await c.run(`CREATE TABLE ${copy} AS SELECT * FROM (${union}) LIMIT 0`)
    // In ranges of users, ascending, each sorted: the table ends up sorted, and no sort holds the whole month.
    const bounds = await userBounds(c, weeks, rows)
    for (let i = 0; i <= bounds.length; i++) {
      const range = [i > 0 ? `"user" >= $1` : '', i < bounds.length ? `"user" < $${i > 0 ? 2 : 1}` : '']
      const where = range.filter((x) => x !== '').join(' AND ') || 'true'
      const params = [...(i > 0 ? [bounds[i - 1]!] : []), ...(i < bounds.length ? [bounds[i]!] : [])]
      await c.run(`INSERT INTO ${copy} SELECT * FROM (${union}) WHERE ${where} ORDER BY ${ORDER[unit.kind]}`, params)
    }
    await c.run(`INSERT INTO ${copy} SELECT * FROM (${union}) WHERE "user" IS NULL ORDER BY ${ORDER[unit.kind]}`)
    // A straddling week keeps its other days, in its order (a filter keeps insertion order).
    for (const w of weeks)
      if (w.first < first || w.last > last)
        await c.run(
          `CREATE TABLE ${w.table}${BUILD_SUFFIX} AS SELECT ${cols} FROM ${w.table} WHERE day NOT BETWEEN ${first} AND ${last}`
        )
    hook?.(unit)
    return print
  })
}

/** Step 2, on the writer: the copies replace the weeks if these are unchanged since step 1; true if swapped. */
async function swapMonth(c: DuckDBConnection, unit: MonthUnit, print: string): Promise<boolean> {
  return await transaction(c, async () => {
    const { weeks, print: current, names } = await monthWeeks(c, unit)
    const swap = current === print && !names.has(monthTable(unit))
    if (!swap) {
      // Only this build's copies exist (one run at a time per store): all go.
      for (const n of names) if (n.endsWith(BUILD_SUFFIX)) await c.run(`DROP TABLE ${n}`)
    } else {
      for (const w of weeks) {
        const copy = `${w.table}${BUILD_SUFFIX}`
        await c.run(`DROP TABLE ${w.table}`)
        if (!names.has(copy)) continue
        const rows = Number((await c.runAndReadAll(`SELECT count(*) FROM ${copy}`)).getRows()[0]![0])
        await c.run(rows > 0 ? `ALTER TABLE ${copy} RENAME TO ${w.table}` : `DROP TABLE ${copy}`)
      }
      await c.run(`ALTER TABLE ${monthTable(unit)}${BUILD_SUFFIX} RENAME TO ${monthTable(unit)}`)
    }
    return swap
  })
}

/**
 * Makes `unit`'s month table in the two steps above; `between` (tests) runs after the first. Returns
 * whether it was swapped in (false: nothing to read, or the weeks changed meanwhile).
 */
export async function buildMonth(
  db: StatsDb,
  unit: MonthUnit,
  options: { between?: () => Promise<void>; hook?: MonthHook } = {}
): Promise<boolean> {
  const print = await db.background((c) => buildCopies(c, unit, options.hook ?? pauseHookFromFailpoint()))
  await options.between?.()
  if (print === undefined) return false
  return await db.write((c) => swapMonth(c, unit, print))
}

/** On the writer: drops the copies of a build that did not finish (none is under way: one run at a time); returns the table names left. */
async function dropLeftovers(c: DuckDBConnection): Promise<string[]> {
  const names = (await c.runAndReadAll(TABLES_SQL)).getRows().map((r) => String(r[0]))
  for (const n of names) if (n.endsWith(BUILD_SUFFIX)) await c.run(`DROP TABLE IF EXISTS ${n}`)
  return names.filter((n) => !n.endsWith(BUILD_SUFFIX))
}

/**
 * Makes every month table that is due, one after the other; returns how many were swapped in. Runs at
 * most once at a time per store: a call while a run is under way returns that run.
 */
export function buildMonths(db: StatsDb, timeZone: string, now: number): Promise<number> {
  const running = runs.get(db)
  if (running !== undefined) return running
  const run = (async () => {
    const names = await db.write(dropLeftovers)
    let built = 0
    for (const unit of dueMonths(names, timeZone, now, retentionOf(db).months)) if (await buildMonth(db, unit)) built++
    return built
  })().finally(() => runs.delete(db))
  runs.set(db, run)
  return run
}

/** `buildMonths` without waiting, at most every MONTH_BUILD_EVERY_MS (the importer's call): a failure is logged. */
export function buildMonthsInBackground(db: StatsDb, timeZone: string, now: number, logger?: Logger): void {
  // The `stats.month.build` failpoint `off`: none (tests that make months step by step).
  if (failpoint('stats.month.build') === 'off') return
  if (now - (lastCheck.get(db) ?? -Infinity) < MONTH_BUILD_EVERY_MS) return
  lastCheck.set(db, now)
  buildMonths(db, timeZone, now).then(
    (months) => {
      if (months > 0) logger?.info({ months }, 'statistics: finished months made from their week tables')
    },
    (err: unknown) => {
      // A store closing meanwhile (refused, or its build interrupted) is not a failure.
      if ((err as { code?: unknown }).code !== 'ENGINE_STORE_OPEN')
        logger?.warn({ err }, 'statistics: making a month table failed; tried again later')
    }
  )
}

/** The month build under way for `db`, if any (tests and the bench wait for it). */
export function monthBuildSettled(db: StatsDb): Promise<unknown> {
  return (runs.get(db) ?? Promise.resolve()).catch(() => {})
}
