/**
 * The statistics reports of the spec (Statistics endpoints), as plain functions over the statistics
 * store (engine/stats/db.ts). Every report is for one user id (or ANONYMOUS_USER) and local days
 * `from`..`to` (inclusive day numbers, engine/stats/time.ts); validating the request is the caller's
 * job (the management API's). Each report is one SQL query over the folded tables (month and week) and
 * day tables of the range (engine/stats/fold.ts, engine/stats/month-build.ts), summing the partial aggregates the importer appended (user and dates are bound parameters; table
 * names are made from numbers only).
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import { TABLES_SQL, hoursTable, namesTable, partitionsAmong, type StatsDb } from './db.js'
import { userRawRows, type UserRawRow } from './raw-layout.js'
import { snapshotHolds } from './snapshot-check.js'
import { HOUR_MS, formatDay, type ReportTime } from './time.js'
import { RETENTION_KEY, foldedAmong } from './fold.js'
import { readOnly } from './transaction.js'
import { tablePatternSql } from './tiers.js'

export interface Dataset {
  label: 'Requests' | 'Blocks' | 'NXdomain'
  data: number[]
}
/** The spec's chart-style object. */
export interface Chart {
  labels: string[]
  datasets: Dataset[]
}

export interface DetailReport extends Chart {
  cats: number[][]
}
export interface Detail {
  timestamps: string[]
  reports: DetailReport[]
}

export const RAW_FIELDS = [
  'created',
  'nxdomain',
  'address',
  'host',
  'blockedhost',
  'reasom',
  'cats',
  'blockedcats'
] as const
export type RawRow = [
  created: string,
  nxdomain: 0 | 1,
  address: string,
  host: string,
  blockedhost: string,
  reasom: string,
  cats: number[],
  blockedcats: number[],
  source?: string
]
/**
 * The raw report's fields beyond the spec's, asked for by name (`?with=source`): `source`, the reason's
 * detail (`list:<id>`, `rpz:<zone>`, '' for none). The spec's eight stay the first, so a client of the
 * spec reads an answer with them as before; without `with` the answer is the spec's exactly.
 */
export const RAW_EXTRA_FIELDS = ['source'] as const
export type RawExtraField = (typeof RAW_EXTRA_FIELDS)[number]
export interface RawReport {
  fields: readonly string[]
  data: RawRow[]
}

/** Top domains per report. */
export const TOP_DOMAINS = 100
/** Rows of the raw report at most (the newest of the last hour). */
export const MAX_RAW_ROWS = 10_000

/** `a b c` (the stored spelling of categories) as numbers. */
export function catsOf(text: unknown): number[] {
  if (typeof text !== 'string' || text === '') return []
  return text.split(' ').map(Number)
}

/**
 * A table a report reads: a day table (`day` its day number) or a folded table (`day` undefined: its
 * rows carry their day, of which the report keeps `from`..`to` and from `keep`, the first day retention
 * still keeps: a folded table is dropped only once its last day is out).
 */
type Source = { table: string; day: number | undefined; from: number; to: number; keep: number }

/** `SELECT <d>, <cols> FROM t1 WHERE <where> UNION ALL ...` over the sources, each row tagged with its day (raw: hour) as `d`. */
function unionSql(sources: readonly Source[], cols: string, where: string): string {
  // Numbers only go into the text (table names, days); the user is a bound parameter.
  return sources
    .map((s) =>
      s.day !== undefined
        ? `SELECT ${s.day} AS d, ${cols} FROM ${s.table} WHERE ${where}`
        : `SELECT day AS d, ${cols} FROM ${s.table} WHERE ${where} AND day BETWEEN ${Math.max(s.from, s.keep)} AND ${s.to}`
    )
    .join(' UNION ALL ')
}

type Kind = 'hours' | 'names' | 'raw'

/**
 * A kind's tables as a report last read them from the catalog: their names, the first day retention keeps,
 * and their fingerprint (`printSql`), which a report's one statement checks against its own snapshot.
 */
interface KindCatalog {
  names: string[]
  keep: number
  print: bigint
}
/** Per store and kind: the catalog the next report's SQL is built from (see `reportRows`). */
const catalogs = new WeakMap<StatsDb, Map<Kind, KindCatalog>>()

/** The tables of each kind a report reads (day tables, week and month tables). */
const KIND_TABLES: Record<Kind, string> = {
  hours: tablePatternSql([
    ['day', 'hours'],
    ['week', 'hours'],
    ['month', 'hours']
  ]),
  names: tablePatternSql([
    ['day', 'names'],
    ['week', 'names'],
    ['month', 'names']
  ]),
  raw: tablePatternSql([
    ['raw', 'rows'],
    ['raw', 'legacy']
  ])
}

/**
 * SQL, one value: a hash of `kind`'s table names and of the first day retention keeps, as the statement that
 * computes it sees them. Two catalogs with the same value have the same tables of the kind and the same `keep`
 * (but for a 64-bit hash collision).
 */
function printSql(kind: Kind): string {
  return (
    `(SELECT hash(coalesce(string_agg(table_name, ',' ORDER BY table_name), '') || ':' || ` +
    `coalesce((SELECT value FROM meta WHERE key = '${RETENTION_KEY}'), 0)) FROM (${TABLES_SQL}) ` +
    `WHERE regexp_full_match(table_name, '${KIND_TABLES[kind]}'))`
  )
}

/** The store's tables and the first day retention keeps, in one catalog query (remembered for the next report). */
async function catalog(db: StatsDb, c: DuckDBConnection): Promise<{ names: string[]; keep: number }> {
  const r = await c.runAndReadAll(
    `SELECT t.table_name, (SELECT value FROM meta WHERE key = '${RETENTION_KEY}'), ${printSql('hours')}, ${printSql('names')}, ${printSql('raw')} FROM (${TABLES_SQL}) t`
  )
  const rows = r.getRows()
  const names = rows.map((x) => String(x[0]))
  const keep = Number(rows[0]?.[1] ?? 0)
  if (rows[0] !== undefined)
    catalogs.set(
      db,
      new Map([
        ['hours', { names, keep, print: BigInt(rows[0][2] as bigint) }],
        ['names', { names, keep, print: BigInt(rows[0][3] as bigint) }],
        ['raw', { names, keep, print: BigInt(rows[0][4] as bigint) }]
      ])
    )
  return { names, keep }
}

/**
 * `db.read` in one transaction: the catalog query and the report's query see the same tables, though a
 * fold or a month's swap (engine/stats/month-build.ts) drops and renames tables between them.
 */
async function readSnapshot<T>(db: StatsDb, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  return await db.read((c) => readOnly(c, () => fn(c)))
}

async function rows(c: DuckDBConnection, sql: string, params: Array<string | number | bigint>): Promise<unknown[][]> {
  return (await c.runAndReadAll(sql, params)).getRows()
}

/**
 * The tables holding `kind`'s days `from`..`to` among the table names `names`: the folded (week, or older
 * month) tables that overlap the range (engine/stats/fold.ts) and the day tables not folded yet (a day may
 * be in both: a late partial after its fold).
 */
function dayTables(names: readonly string[], keep: number, kind: Kind, from: number, to: number): Source[] {
  const make = kind === 'hours' ? hoursTable : namesTable
  const out: Source[] = foldedAmong(names)
    .filter((t) => t.kind === kind && t.first <= to && t.last >= from)
    .map((t) => ({ table: t.table, day: undefined, from, to, keep }))
  for (const d of partitionsAmong(names)[kind])
    if (d >= from && d <= to) out.push({ table: make(d), day: d, from, to, keep })
  return out
}

/**
 * A report's query over the tables `tables`: its SQL, whose top-level select list ends with `extra` (the
 * fingerprint column of `reportRows`, or nothing), and its parameters.
 */
type ReportQuery = (
  tables: readonly Source[],
  extra: string
) => { sql: string; params: Array<string | number | bigint> }

/**
 * The rows of `sql` if the fingerprint of `kind`'s tables in the statement's snapshot (its last column) is
 * `print`, without that column; `undefined` if not. The statement starts a transaction in the same round
 * trip, so that when it returns no row to carry the fingerprint, a second statement reads it in the same
 * snapshot. The read-only transaction ends with the connection (`StatsDb.read` closes it: a rollback).
 */
async function checkedRows(
  c: DuckDBConnection,
  sql: string,
  params: Array<string | number | bigint>,
  kind: Kind,
  print: bigint
): Promise<unknown[][] | undefined> {
  const found = await rows(c, `BEGIN TRANSACTION; ${sql}`, params)
  return (await snapshotHolds(c, found, printSql(kind), print)) ? found.map((r) => r.slice(0, -1)) : undefined
}

/**
 * The rows of a report's query over `kind`'s tables of days `from`..`to`, as one snapshot of the store.
 *
 * Fast path (one statement): the SQL is made from the tables the last report saw (`catalogs`), and the
 * statement also returns the fingerprint of the tables in its own snapshot (`printSql`). If that is the
 * fingerprint of the tables the SQL was made from, the statement read every table of its snapshot that
 * holds the range, and its rows are the answer (no row: the fingerprint is read alone in the same snapshot,
 * `checkedRows`). Otherwise (a table made or dropped since: an import's new day, a fold, a month's swap,
 * retention; a table dropped makes the statement fail): the slow path, the catalog and then the query in one
 * transaction, which also remembers the catalog for the next report. A report so costs one round trip
 * instead of four (BEGIN, the catalog, the query, ROLLBACK) while the tables stay the same
 * (bench/results/2026-11-history.md, "Reports in one statement").
 */
async function reportRows(
  db: StatsDb,
  kind: 'hours' | 'names',
  from: number,
  to: number,
  query: ReportQuery
): Promise<unknown[][]> {
  const known = catalogs.get(db)?.get(kind)
  if (known !== undefined) {
    const tables = dayTables(known.names, known.keep, kind, from, to)
    if (tables.length > 0) {
      const q = query(tables, `, ${printSql(kind)}`)
      // Any failure (above all a table dropped since) is left to the slow path, which reports its own.
      const found = await db.read((c) => checkedRows(c, q.sql, q.params, kind, known.print)).catch(() => undefined)
      if (found !== undefined) return found
    }
  }
  return await readSnapshot(db, async (c) => {
    const { names, keep } = await catalog(db, c)
    const tables = dayTables(names, keep, kind, from, to)
    if (tables.length === 0) return []
    const q = query(tables, '')
    return await rows(c, q.sql, q.params)
  })
}

/** Requests and Blocks per hour; every hour of the range is labelled, hours without queries are 0. */
export async function activityByHour(
  db: StatsDb,
  time: ReportTime,
  user: string,
  from: number,
  to: number
): Promise<Chart> {
  const hours = time.hoursOfDays(from, to)
  const labels: string[] = []
  const requests: number[] = []
  const blocks: number[] = []
  if (hours.length === 0) return activityChart(labels, requests, blocks)
  const values = new Map<number, [number, number]>()
  // An hour that straddles local midnight has rows in two day partitions: read one day either side.
  const found = await reportRows(db, 'hours', from - 1, to + 1, (tables, extra) => ({
    sql: `SELECT hour, sum(requests)::DOUBLE, sum(blocks)::DOUBLE${extra} FROM (${unionSql(tables, 'hour, requests, blocks', '"user" = $1 AND hour BETWEEN $2 AND $3')}) GROUP BY hour`,
    params: [user, hours[0]!, hours[hours.length - 1]!]
  }))
  for (const [h, r, b] of found) values.set(Number(h), [Number(r), Number(b)])
  for (const h of hours) {
    const v = values.get(h)
    labels.push(time.hourLabel(h))
    requests.push(v?.[0] ?? 0)
    blocks.push(v?.[1] ?? 0)
  }
  return activityChart(labels, requests, blocks)
}

/** Requests and Blocks per day; every day of the range is labelled. */
export async function activityByDay(db: StatsDb, user: string, from: number, to: number): Promise<Chart> {
  const labels: string[] = []
  const requests: number[] = []
  const blocks: number[] = []
  const values = new Map<number, [number, number]>()
  const found = await reportRows(db, 'hours', from, to, (tables, extra) => ({
    sql: `SELECT d, sum(requests)::DOUBLE, sum(blocks)::DOUBLE${extra} FROM (${unionSql(tables, 'requests, blocks', '"user" = $1')}) GROUP BY d`,
    params: [user]
  }))
  for (const [d, r, b] of found) values.set(Number(d), [Number(r), Number(b)])
  for (let d = from; d <= to; d++) {
    const v = values.get(d)
    labels.push(formatDay(d))
    requests.push(v?.[0] ?? 0)
    blocks.push(v?.[1] ?? 0)
  }
  return activityChart(labels, requests, blocks)
}

/** The activity reports' chart: Requests and Blocks per label. */
export function activityChart(labels: string[], requests: number[], blocks: number[]): Chart {
  return {
    labels,
    datasets: [
      { label: 'Requests', data: requests },
      { label: 'Blocks', data: blocks }
    ]
  }
}

/** `www` keeps the names that start with the label `www.`. */
export type DomainFilter = 'all' | 'www'

export interface DomainSum {
  day: number
  host: string
  r: number
  n: number
  b: number
  cats: number[]
}

/** The domain reports' chart: per name its categories, Requests, NXdomain and Blocks. */
export function domainChart(list: readonly DomainSum[]): DetailReport {
  const labels: string[] = []
  const cats: number[][] = []
  const r: number[] = []
  const n: number[] = []
  const b: number[] = []
  for (const d of list) {
    labels.push(d.host)
    cats.push(d.cats)
    r.push(d.r)
    n.push(d.n)
    b.push(d.b)
  }
  return {
    labels,
    cats,
    datasets: [
      { label: 'Requests', data: r },
      { label: 'NXdomain', data: n },
      { label: 'Blocks', data: b }
    ]
  }
}

/**
 * The per-day, per-name sums of `user` over the range as SQL (columns d, host, r, n, b, c): the
 * partials of a day summed, the name's categories the last non-empty ones seen that day.
 */
function perDaySql(tables: readonly Source[], where: string): string {
  return (
    `SELECT d, host, sum(requests) AS r, sum(nxdomain) AS n, sum(blocks) AS b, ` +
    `coalesce(arg_max(cats, seq) FILTER (WHERE cats <> ''), '') AS c FROM (${unionSql(tables, 'host, requests, nxdomain, blocks, cats, seq', where)}) GROUP BY d, host`
  )
}

function domainSum(row: readonly unknown[]): DomainSum {
  return {
    day: Number(row[0]),
    host: String(row[1]),
    r: Number(row[2]),
    n: Number(row[3]),
    b: Number(row[4]),
    cats: catsOf(row[5])
  }
}

/** The top 100 domains of the range by Requests, with NXdomain and Blocks. */
export async function topDomains(
  db: StatsDb,
  user: string,
  from: number,
  to: number,
  filter: DomainFilter,
  limit = TOP_DOMAINS
): Promise<Chart> {
  const where = '"user" = $1' + (filter === 'www' ? " AND starts_with(host, 'www.')" : '')
  // Most requested first; ties by name so the cut is stable. A name's categories: those of its first day in the range.
  const found = await reportRows(db, 'names', from, to, (tables, extra) => ({
    sql:
      `SELECT 0, host, sum(r)::DOUBLE AS total, sum(n)::DOUBLE, sum(b)::DOUBLE, arg_min(c, d)${extra} FROM (${perDaySql(tables, where)}) ` +
      'GROUP BY host ORDER BY total DESC, host LIMIT $2',
    params: [user, limit]
  }))
  const list = found.map(domainSum)
  const { labels, datasets } = domainChart(list)
  return { labels, datasets }
}

/**
 * Per day of the range (`timestamps`, `YYYY-MM-DD`), that day's top 100 domains with their
 * categories (`cats`, aligned with `labels`) and Requests, NXdomain, Blocks.
 */
export async function detail(
  db: StatsDb,
  user: string,
  from: number,
  to: number,
  limit = TOP_DOMAINS
): Promise<Detail> {
  const perDay = new Map<number, DomainSum[]>()
  const found = await reportRows(db, 'names', from, to, (tables, extra) => ({
    sql:
      `SELECT d, host, r::DOUBLE AS r, n::DOUBLE, b::DOUBLE, c${extra} FROM (${perDaySql(tables, '"user" = $1')}) ` +
      'QUALIFY row_number() OVER (PARTITION BY d ORDER BY r DESC, host) <= $2 ORDER BY d, r DESC, host',
    params: [user, limit]
  }))
  for (const row of found) {
    const s = domainSum(row)
    let list = perDay.get(s.day)
    if (list === undefined) perDay.set(s.day, (list = []))
    list.push(s)
  }
  const timestamps: string[] = []
  const reports: DetailReport[] = []
  for (let d = from; d <= to; d++) {
    timestamps.push(formatDay(d))
    reports.push(domainChart(perDay.get(d) ?? []))
  }
  return { timestamps, reports }
}

/**
 * The user's queries of the last hour before `now`, oldest first (at most the newest MAX_RAW_ROWS). The rows
 * and their names are read in one transaction (engine/stats/raw-layout.ts, `userRawRows`); the raw hours are
 * those the last report saw, checked by the rows' query against its own snapshot as `reportRows` does, and
 * read from the catalog (in the same transaction) only when they changed.
 */
export async function rawLastHour(
  db: StatsDb,
  time: ReportTime,
  user: string,
  now: number,
  extra: readonly RawExtraField[] = []
): Promise<RawReport> {
  const [first, last] = [Math.floor((now - HOUR_MS) / HOUR_MS), Math.floor(now / HOUR_MS)]
  const range = { from: now - HOUR_MS, to: now, limit: MAX_RAW_ROWS }
  const inRange = (names: readonly string[]): number[] =>
    partitionsAmong(names).raw.filter((h) => h >= first && h <= last)
  const known = catalogs.get(db)?.get('raw')
  const fast = async (c: DuckDBConnection): Promise<UserRawRow[] | undefined> => {
    if (known === undefined) return undefined
    const check = { sql: printSql('raw'), value: known.print }
    // A failure (above all an hour dropped since) leaves the transaction unusable: the slow path starts another.
    return await userRawRows(c, new Set(known.names), inRange(known.names), user, range, check).catch(() => undefined)
  }
  const found =
    (known === undefined ? undefined : await readSnapshot(db, fast)) ??
    (await readSnapshot(db, async (c) => {
      const names = (await catalog(db, c)).names
      return (await userRawRows(c, new Set(names), inRange(names), user, range)) ?? []
    }))
  const withSource = extra.includes('source')
  const data: RawRow[] = found.map((v) => {
    const row: RawRow = [time.formatTime(v[0]), v[1] ? 1 : 0, v[2], v[3], v[4], v[5], catsOf(v[6]), catsOf(v[7])]
    if (withSource) row.push(v[8])
    return row
  })
  data.reverse()
  return { fields: withSource ? [...RAW_FIELDS, 'source'] : RAW_FIELDS, data }
}

/**
 * Blocks of the range per category that blocked them (the overview's "Blocked by category"): a block counts
 * for each of its row's `blockedcats` (a name's partials are kept per blocking categories), so a name blocked
 * by a list counts for none of its categories, and one blocked by one of its two categories for that one.
 * Partials imported before the column existed (NULL: unknown) count for the name's categories, as every
 * block did before.
 */
export async function blocksByCategory(
  db: StatsDb,
  user: string,
  from: number,
  to: number
): Promise<Map<number, number>> {
  const found = await reportRows(db, 'names', from, to, (tables, extra) => ({
    sql:
      `SELECT coalesce(blockedcats, cats), sum(blocks)::DOUBLE${extra} FROM ` +
      `(${unionSql(tables, 'blockedcats, cats, blocks', '"user" = $1 AND blocks > 0')}) GROUP BY 1`,
    params: [user]
  }))
  const out = new Map<number, number>()
  for (const [cats, blocks] of found) for (const c of catsOf(cats)) out.set(c, (out.get(c) ?? 0) + Number(blocks))
  return out
}

/**
 * The whole server's blocked names of the range (for the overview): per name, the blocks and
 * requests of the days it was blocked on, and its categories on the first of them.
 */
export async function blockedNames(db: StatsDb, user: string, from: number, to: number): Promise<DomainSum[]> {
  const found = await reportRows(db, 'names', from, to, (tables, extra) => ({
    sql: `SELECT 0, host, sum(r)::DOUBLE, 0, sum(b)::DOUBLE, arg_min(c, d)${extra} FROM (${perDaySql(tables, '"user" = $1')}) WHERE b > 0 GROUP BY host`,
    params: [user]
  }))
  return found.map(domainSum)
}
