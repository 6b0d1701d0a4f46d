/**
 * The folded tier of the aggregates: finished days folded into one table per local week and kind,
 * sorted by (user, day), so that a report of three months for one user reads a few row groups of
 * about 14 week tables instead of one row group in each of ~92 day tables (docs/design/statistics.md,
 * bench/results/2026-11-history.md "the folded tier").
 *
 *   whours_<week>  the `hours_<day>` rows of the week's folded days, with a `day` column
 *   wnames_<week>  the `names_<day>` rows likewise (`<week>` is the day number of its Monday)
 *
 * Month tables (`mhours_<month>`, `mnames_<month>`, `<month>` the day number of its first day) hold a
 * finished month's days instead of its weeks: engine/stats/month-build.ts makes them beside the writer
 * (stores of an older version folded days straight into them). A day is in one folded table only: a
 * day whose month table exists is folded into it (its partials appended, a short write), not into its week.
 *
 * **A fold is a sequence of bounded steps.** A step folds one day: the day's week table is made again
 * from the old week table and the day's partials (summed per key), sorted by (user, day); then the old
 * week table and the day tables are dropped and the new one takes the old one's name, all in one
 * DuckDB transaction. A step so rewrites at most seven days of rows, whatever the backlog (the first
 * prune after an upgrade finds three months of day tables); imports run between steps, because the
 * writer connection is free again after each (a step continues with the next day only while it has
 * lasted under FOLD_STEP_MS). A crash or kill before a step's commit leaves the day tables and the old
 * week table as they were (nothing lost); after it, the rows are in the week table only (nothing
 * counted twice).
 *
 * A day is folded once it has been over for FOLD_GRACE_MS (files of its last minutes arrive late,
 * above all from the other hosts of a fleet). A partial that arrives for a folded day later still
 * lands in a day table of its own, which reports add to the week table's rows, and which a later
 * fold takes in: a round of steps (until nothing is due) starts at most once per FOLD_EVERY_MS per
 * store, so late stragglers never make every import rewrite a week.
 */
import { failpoint, failpointNumber, stopHere } from '../failpoints.js'
import type { DuckDBConnection } from '@duckdb/node-api'
import { TABLES_SQL, hoursTable, metaPut, namesTable, partitions, retentionOf, type StatsDb } from './db.js'
import { transaction } from './transaction.js'
import { tableName, tableOf, tier } from './tiers.js'
import { ReportTime } from './time.js'

const DAY_MS = 86_400_000
/** A day is folded once it has been over this long (the week tier's due time, ./tiers.ts). */
export const FOLD_GRACE_MS = tier('week').due.graceMs
/** At most one round of fold steps starts per store this often (stragglers of folded days wait for the next). */
export const FOLD_EVERY_MS = tier('week').due.everyMs
/**
 * A step folds further days while it has lasted less than this (ms; the `stats.fold.step-ms` failpoint
 * overrides, 0 = exactly one day per step): small stores fold a backlog at once, large ones a day per import.
 */
const FOLD_STEP_MS = 1000
/** The meta key of the first day retention keeps: folded tables hold older days until dropped whole. */
export const RETENTION_KEY = 'retention.day'

/** A folded table: its tier (week, or month), kind and first day. */
export interface FoldedTable {
  table: string
  tier: 'week' | 'month'
  kind: 'hours' | 'names'
  /** First and last day it may hold. */
  first: number
  last: number
}

export const weekHoursTable = (week: number): string => tableName('week', 'hours', week)
export const weekNamesTable = (week: number): string => tableName('week', 'names', week)
/** Month tables (`<month>` the day number of its first day): engine/stats/month-build.ts makes them from finished weeks. */
export const monthHoursTable = (month: number): string => tableName('month', 'hours', month)
export const monthNamesTable = (month: number): string => tableName('month', 'names', month)

/** The day number of the Monday of `day`'s week (day 4, 1970-01-05, was a Monday). */
export function weekOf(day: number): number {
  return day - ((((day - 4) % 7) + 7) % 7)
}

/** The day number of the first day of `day`'s month. */
export function monthOf(day: number): number {
  const d = new Date(day * DAY_MS)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / DAY_MS
}

/** The day number of the last day of the month that starts on `month`. */
export function monthEnd(month: number): number {
  const d = new Date(month * DAY_MS)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / DAY_MS - 1
}

/** The folded tables among the table names `names` (week tables, and month tables of the version before), by first day. */
export function foldedAmong(names: Iterable<string>): FoldedTable[] {
  const out: FoldedTable[] = []
  for (const name of names) {
    const t = tableOf(name)
    if (t?.tier !== 'week' && t?.tier !== 'month') continue
    const first = t.n
    out.push({
      table: name,
      tier: t.tier,
      kind: t.kind as 'hours' | 'names',
      first,
      last: t.tier === 'week' ? first + 6 : monthEnd(first)
    })
  }
  return out.sort((a, b) => a.first - b.first)
}

/** The folded tables that exist. */
export async function foldedTables(c: DuckDBConnection): Promise<FoldedTable[]> {
  return foldedAmong((await c.runAndReadAll(TABLES_SQL)).getRows().map((r) => String(r[0])))
}

/** The week tables that exist, by week (first day number), ascending. */
export async function weekPartitions(c: DuckDBConnection): Promise<{ hours: number[]; names: number[] }> {
  const out = { hours: [] as number[], names: [] as number[] }
  for (const t of await foldedTables(c)) if (t.tier === 'week') out[t.kind].push(t.first)
  return out
}

/** What a fold did (for the log and the bench). */
interface FoldResult {
  /** Days folded. */
  days: number
  /** Days still due (the next prune's steps take them). */
  pending: number
}

/**
 * Test hook: called inside each day's fold transaction, before its commit, with the day. Defaults to
 * the one the `stats.fold.pause` failpoint describes: it stops the process for ever (a test SIGKILLs it there).
 */
export type FoldHook = (day: number) => void

function pauseHookFromFailpoint(): FoldHook | undefined {
  if (failpoint('stats.fold.pause') !== '1') return undefined
  return (day) => stopHere(`PAUSED fold ${day}`)
}

/** Per store: whether a round of steps is under way, and when the last round started. */
const rounds = new WeakMap<StatsDb, { open: boolean; startedAt: number }>()

/** The days due (over for FOLD_GRACE_MS, still kept by retention), oldest first, with the kinds each has. */
async function dueDays(
  c: DuckDBConnection,
  timeZone: string,
  now: number,
  months: number
): Promise<Map<number, Set<'hours' | 'names'>>> {
  const time = new ReportTime(timeZone)
  const before = time.dayOf(now - FOLD_GRACE_MS) // days before this one are over since the grace
  const keepDay = time.aggregateRetentionStart(now, months)
  const parts = await partitions(c)
  const due = new Map<number, Set<'hours' | 'names'>>()
  for (const kind of ['hours', 'names'] as const)
    for (const d of parts[kind]) {
      if (d >= before || d < keepDay) continue
      let kinds = due.get(d)
      if (kinds === undefined) due.set(d, (kinds = new Set()))
      kinds.add(kind)
    }
  return new Map([...due].sort((a, b) => a[0] - b[0]))
}

function stepBudgetMs(): number {
  return failpointNumber('stats.fold.step-ms') ?? FOLD_STEP_MS
}

/**
 * One step of folding the days due into their week tables, on the writer connection `c` of `db`: the
 * oldest day due, then the next ones while the step has lasted under FOLD_STEP_MS. A round of steps
 * (until nothing is due) starts at most once per FOLD_EVERY_MS per store; `force` folds every day due now.
 */
export async function foldDays(
  db: StatsDb,
  c: DuckDBConnection,
  timeZone: string,
  now: number,
  options: { force?: boolean; hook?: FoldHook } = {}
): Promise<FoldResult> {
  const round = rounds.get(db) ?? { open: false, startedAt: -Infinity }
  if (options.force !== true && !round.open && now - round.startedAt < FOLD_EVERY_MS) return { days: 0, pending: 0 }
  const due = await dueDays(c, timeZone, now, retentionOf(db).months)
  if (due.size === 0) {
    rounds.set(db, { open: false, startedAt: round.startedAt })
    return { days: 0, pending: 0 }
  }
  // A round starts now (a failed step leaves it open: tried again at the next prune).
  rounds.set(db, { open: true, startedAt: round.open ? round.startedAt : now })
  const existing = new Set((await foldedTables(c)).map((t) => t.table))
  const hook = options.hook ?? pauseHookFromFailpoint()
  const started = performance.now()
  const budget = options.force === true ? Infinity : stepBudgetMs()
  let days = 0
  for (const [day, kinds] of due) {
    if (days > 0 && performance.now() - started >= budget) break
    await foldDay(c, day, kinds, existing, hook)
    days++
  }
  const pending = due.size - days
  rounds.set(db, { open: pending > 0, startedAt: rounds.get(db)!.startedAt })
  return { days, pending }
}

const NAMES_COLS = '"user", day, host, requests, nxdomain, blocks, cats, seq, blockedcats'

/** Folds one day's tables into its week's, in one transaction (see the top of this file). */
async function foldDay(
  c: DuckDBConnection,
  day: number,
  kinds: ReadonlySet<'hours' | 'names'>,
  existing: Set<string>,
  hook: FoldHook | undefined
): Promise<void> {
  const week = weekOf(day)
  const month = monthOf(day)
  await transaction(c, async () => {
    if (kinds.has('hours') && existing.has(monthHoursTable(month)))
      await appendTo(c, monthHoursTable(month), hoursOfDaySql(day), hoursTable(day))
    else if (kinds.has('hours')) {
      const wt = weekHoursTable(week)
      const old = existing.has(wt) ? `SELECT "user", day, hour, requests, blocks FROM ${wt} UNION ALL ` : ''
      await swapIn(c, wt, `${old}${hoursOfDaySql(day)}`, '"user", day, hour', hoursTable(day))
    }
    if (kinds.has('names') && existing.has(monthNamesTable(month)))
      await appendTo(c, monthNamesTable(month), namesOfDaySql(day), namesTable(day))
    else if (kinds.has('names')) {
      const wt = weekNamesTable(week)
      const old = existing.has(wt) ? `SELECT ${NAMES_COLS} FROM ${wt} UNION ALL ` : ''
      await swapIn(c, wt, `${old}${namesOfDaySql(day)}`, '"user", day, host', namesTable(day))
    }
    await c.run('DELETE FROM meta WHERE key = $1', [`dirty.${day}`])
    hook?.(day)
  })
  if (kinds.has('hours') && !existing.has(monthHoursTable(month))) existing.add(weekHoursTable(week))
  if (kinds.has('names') && !existing.has(monthNamesTable(month))) existing.add(weekNamesTable(week))
}

/** A day's hour partials summed per key, with its `day`: the rows a fold adds to a folded table. */
function hoursOfDaySql(day: number): string {
  return `SELECT "user", ${day}::INTEGER AS day, hour, sum(requests)::BIGINT AS requests, sum(blocks)::BIGINT AS blocks FROM ${hoursTable(day)} GROUP BY "user", hour`
}

/** A day's name partials summed: one row per (user, name, blocking categories) and day, as a day's compaction makes it (engine/stats/importer.ts). */
function namesOfDaySql(day: number): string {
  return (
    `SELECT "user", ${day}::INTEGER AS day, host, sum(requests)::BIGINT AS requests, sum(nxdomain)::BIGINT AS nxdomain, ` +
    `sum(blocks)::BIGINT AS blocks, coalesce(arg_max(cats, seq) FILTER (WHERE cats <> ''), '') AS cats, max(seq) AS seq, ` +
    `blockedcats FROM ${namesTable(day)} GROUP BY "user", host, blockedcats`
  )
}

/**
 * Inside the caller's transaction: a late day of a month that already has its month table is appended
 * to it (sorted by user: one more row group that few users' reads touch) and its day table goes. Rewriting
 * the month would hold the writer for the whole month's rows; a straggler is a few rows.
 */
async function appendTo(c: DuckDBConnection, table: string, select: string, folded: string): Promise<void> {
  await c.run(`INSERT INTO ${table} BY NAME SELECT * FROM (${select}) ORDER BY "user"`)
  await c.run(`DROP TABLE ${folded}`)
}

/** Inside the caller's transaction: `table` becomes `select` sorted by `order`; the folded day table goes. */
async function swapIn(
  c: DuckDBConnection,
  table: string,
  select: string,
  order: string,
  folded: string
): Promise<void> {
  // The old week table's rows are already one per key: only the new day's partials are summed.
  await c.run(`CREATE TABLE ${table}__f AS SELECT * FROM (${select}) ORDER BY ${order}`)
  await c.run(`DROP TABLE IF EXISTS ${table}`)
  await c.run(`ALTER TABLE ${table}__f RENAME TO ${table}`)
  await c.run(`DROP TABLE ${folded}`)
}

/**
 * Inside the caller's transaction: drops the folded tables whose last day retention no longer keeps,
 * and records the first day kept, which reports apply to the folded tables' rows. Returns the tables dropped.
 */
export async function pruneMonths(c: DuckDBConnection, keepDay: number): Promise<number> {
  let dropped = 0
  for (const t of await foldedTables(c))
    if (t.last < keepDay) {
      await c.run(`DROP TABLE ${t.table}`)
      dropped++
    }
  await metaPut(c, RETENTION_KEY, keepDay)
  return dropped
}
