/**
 * The raw hours sorted by user, so that the raw report (the user's queries of the last hour) reads a few
 * row groups of each hour table instead of scanning every row's `user` (docs/statistics.md, "Raw hours
 * sorted by user"; bench/results/2026-11-history.md, "Reports at 100,000 users and 100 M raw rows": 20 ms against 136 ms
 * at 100 M raw rows a day).
 *
 * The importer appends rows in arrival order. A sort rewrites the hour's rows, `rawi_<hour>`
 * (engine/stats/raw-layout.ts), ordered by (uid, created, rowid), in two steps, so that the long part
 * never holds the write queue (imports go on beside it):
 *
 *   1. beside the writer (StatsDb.background), in one transaction: the hour's row count `n` and a copy
 *      `rawi_<hour>__sorted` of those rows, sorted (a snapshot: rows committed later are not in it). The
 *      copy is written in ranges of (user, time) of about RAW_SORT_CHUNK_ROWS rows, ascending, each sorted
 *      on its own and appended: the same table, row for row, as one sort of the hour, but the memory a sort takes
 *      is one range's, whatever the hour's size (a whole hour at 5,000 q/s took 245-320 MiB of DuckDB's
 *      buffers; bench/results/2026-12-06-api-memory.md);
 *   2. on the writer, in one transaction: the rows appended since (rowid >= n: raw rows are only ever
 *      appended, so rowids number them in commit order) are appended to the copy, the hour table is
 *      dropped and the copy takes its name, and `rawisorted.<hour>` in meta records the sorted prefix.
 *
 * A crash between the steps leaves the hour table as it was and a `__sorted` copy that the next run
 * drops; nothing is lost or counted twice. Rows and the reports' answers are unchanged: only the physical
 * order changes. Row ids stand for the raw-row sequence (reports and the Parquet export order by created,
 * then row id): rows are appended in commit order, and the sort keeps row-id order among rows of equal
 * (uid, created), so the order of a user's rows of one millisecond survives every sort.
 *
 * Hours of the layout before (`raw_<hour>`, a store of an older version) are left as they are: retention
 * drops them within a day.
 *
 * An hour is sorted once its unsorted rows (appended after the last sort) reach RAW_SORT_MIN_ROWS
 * (below that, scanning them costs little): a finished hour once (and again if late rows pile up), the
 * hour still being written at most every RAW_SORT_EVERY_MS, so its unsorted tail stays small.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import { failpointNumber } from '../failpoints.js'
import type { Logger } from '../log/index.js'
import { TABLES_SQL, metaPut, type StatsDb } from './db.js'
import { rawAddrsTable, rawHostsTable, rawRowsTable, rawUsersTable } from './raw-layout.js'
import { transaction } from './transaction.js'
import { tableOf, tier } from './tiers.js'
import { HOUR_MS } from './time.js'

/** Unsorted rows below which an hour is left as it is. */
export const RAW_SORT_MIN_ROWS = 50_000
/**
 * Rows the sorted copy is written in at most (about): each range of (user, time) is sorted on its own, so that a
 * sort's memory does not grow with the hour (18 M rows at 5,000 q/s).
 */
const RAW_SORT_CHUNK_ROWS = 1_000_000
/** The hour still being written is sorted again at most this often. */
export const RAW_SORT_EVERY_MS = tier('raw').due.everyMs

const SORTED_KEY = 'rawisorted.'
/** Older versions' key for the sorted prefix of `raw_<hour>` (forgotten: those hours are not sorted again). */
const LEGACY_SORTED_KEY = 'rawsorted.'
const sortedCopy = (hour: number): string => `${rawRowsTable(hour)}__sorted`
const sortedUsers = (hour: number): string => `${rawUsersTable(hour)}__sorted`
const sortedDict = (dict: string): string => `${dict}__sorted`
/**
 * Step 1's map (old, new) of the hour's ids in `column` (hid, aid), kept for step 2 (which translates the
 * rows imported meanwhile by id) and dropped there; a name the leftover drop (`hourStates`) matches.
 */
const idMap = (hour: number, column: string): string => `raw${column}map_${hour}__sorted`

interface HourState {
  hour: number
  rows: number
  sorted: number
}

/** Per store: the sort run under way, and when each hour still being written was last sorted. */
const runs = new WeakMap<StatsDb, Promise<number>>()
const lastOpenSort = new WeakMap<StatsDb, Map<number, number>>()
/** Per store: the hours whose sort is under way (their copies are not leftovers). */
const sorting = new WeakMap<StatsDb, Set<number>>()

/** Each raw hour's rows and sorted prefix; drops the copies of a sort that did not finish. */
async function hourStates(c: DuckDBConnection, busy: ReadonlySet<number>): Promise<HourState[]> {
  // estimated_size is a table's row count (raw tables are only appended to): no count(*) per hour.
  const tables = (
    await c.runAndReadAll(TABLES_SQL.replace('SELECT table_name', 'SELECT table_name, estimated_size'))
  ).getRows()
  const names = tables.map((r) => String(r[0]))
  for (const n of names) {
    const m = /^raw(i|users|hosts|addrs|hidmap|aidmap)?_(\d+)__sorted$/.exec(n)
    if (m !== null && (m[1] === undefined || !busy.has(Number(m[2])))) await c.run(`DROP TABLE IF EXISTS ${n}`)
  }
  const sorted = new Map(
    (await c.runAndReadAll(`SELECT key, value FROM meta WHERE key LIKE '${SORTED_KEY}%'`))
      .getRows()
      .map((r) => [Number(String(r[0]).slice(SORTED_KEY.length)), Number(r[1])])
  )
  const out: HourState[] = []
  for (const [name, size] of tables) {
    const t = tableOf(String(name))
    if (t?.tier !== 'raw' || t.kind !== 'rows') continue
    const hour = t.n
    out.push({ hour, rows: Number(size), sorted: sorted.get(hour) ?? 0 })
  }
  return out
}

/** The hours to sort now: finished ones newest first (the raw report reads the last), then the one being written. */
function due(db: StatsDb, states: readonly HourState[], now: number, minRows: number): number[] {
  const current = Math.floor(now / HOUR_MS)
  const last = lastOpenSort.get(db)?.get(current) ?? -Infinity
  return states
    .filter((s) => s.rows - s.sorted >= minRows && (s.hour < current || now - last >= RAW_SORT_EVERY_MS))
    .map((s) => s.hour)
    .sort((a, b) => (a === current ? 1 : b === current ? -1 : b - a))
}

/** What step 1 copied: the rows and the dictionaries' entries committed then. */
interface Snapshot {
  rows: number
  users: number
  hosts: number
  addrs: number
}

/** The id column of the rows for each renumbered dictionary. */
const RENUMBERED: ReadonlyArray<[(hour: number) => string, 'hid' | 'aid']> = [
  [rawHostsTable, 'hid'],
  [rawAddrsTable, 'aid']
]
/**
 * The map (old, new) of a dictionary's ids (`idMap`) and the dictionary renumbered by it: the new ids in the
 * order the sorted rows first use them (their first (user, time)). A user's few addresses, and the names
 * first seen with a user, get neighbouring ids, so a row group's ids span a narrow range that bit-packs into
 * fewer bits. An entry no row uses (none is written so) goes last.
 */
async function renumber(c: DuckDBConnection, hour: number, dict: string, column: string): Promise<void> {
  const map = idMap(hour, column)
  // An id's first (user, time) as one number, to take the minimum of; ties by the name, so the new ids do
  // not depend on the order an import met the names in (two stores of the same rows get the same ids).
  await c.run(
    `CREATE TABLE ${map} AS SELECT d.id AS old, (row_number() OVER (ORDER BY f.first NULLS LAST, d.name) - 1)::INTEGER AS new ` +
      `FROM ${dict} d LEFT JOIN (SELECT ${column} AS id, min(uid::HUGEINT * 18446744073709551616 + created) AS first ` +
      `FROM ${rawRowsTable(hour)} GROUP BY ${column}) f ON f.id = d.id`
  )
  await c.run(
    `CREATE TABLE ${sortedDict(dict)} AS SELECT m.new AS id, d.name FROM ${dict} d JOIN ${map} m ON m.old = d.id ORDER BY m.new`
  )
}

/** RAW_SORT_CHUNK_ROWS, or the `stats.raw-sort.chunk-rows` failpoint (tests: several ranges in a small hour). */
function chunkRows(): number {
  const set = failpointNumber('stats.raw-sort.chunk-rows')
  return set !== undefined && set > 0 ? set : RAW_SORT_CHUNK_ROWS
}

/** Where a range starts: at a user's first row, or (a user with more than a range's rows) at a time within them. */
export interface RangeStart {
  uid: number
  created?: number
}

/**
 * Where each range of about chunkRows() rows but the first starts, ascending by (uid, created). Whole users
 * first, exact, from the rows per user (one aggregate over `uid`, as small as the hour's users); then a user
 * with more rows than a range (one address behind a NAT, the benchmark's one user) is cut at quantiles of
 * its `created` (approximate, in bounded memory). A cut is a (uid, created) pair: the rows of equal
 * (uid, created) stay in one range, in row-id order, so the ranges together keep one sort's order.
 */
export async function rangeStarts(c: DuckDBConnection, table: string): Promise<RangeStart[]> {
  const chunk = chunkRows()
  const users = (
    await c.runAndReadAll(
      `SELECT min(uid) AS first FROM (SELECT uid, (sum(n) OVER (ORDER BY uid) - n) // ${chunk} AS k ` +
        `FROM (SELECT uid, count(*) AS n FROM ${table} WHERE uid IS NOT NULL GROUP BY uid)) GROUP BY k HAVING k > 0 ORDER BY first`
    )
  )
    .getRows()
    .map((r): RangeStart => ({ uid: Number(r[0]) }))
  const large = (
    await c.runAndReadAll(
      `SELECT uid, count(*) FROM ${table} WHERE uid IS NOT NULL GROUP BY uid HAVING count(*) > ${chunk} ORDER BY uid`
    )
  ).getRows()
  const cuts: RangeStart[] = []
  for (const [uid, n] of large) {
    const parts = Math.ceil(Number(n) / chunk)
    const at = Array.from({ length: parts - 1 }, (_, i) => ((i + 1) / parts).toFixed(6)).join(', ')
    const got = (
      await c.runAndReadAll(`SELECT approx_quantile(created, [${at}]) FROM ${table} WHERE uid = ${Number(uid)}`)
    ).getRows()[0]![0] as { items?: unknown[] } | null
    for (const q of new Set((got?.items ?? []).map(Number)))
      if (Number.isFinite(q)) cuts.push({ uid: Number(uid), created: q })
  }
  return [...users, ...cuts].sort((x, y) => x.uid - y.uid || (x.created ?? -Infinity) - (y.created ?? -Infinity))
}

/** Rows at or after `s` in (uid, created) order; a row without a time goes last among its user's (as ORDER BY puts it). */
function from(s: RangeStart): string {
  return s.created === undefined
    ? `r.uid >= ${s.uid}`
    : `(r.uid > ${s.uid} OR (r.uid = ${s.uid} AND (r.created >= ${s.created} OR r.created IS NULL)))`
}

/** The WHERE of each range from its starts (none: the whole hour), then the rows without a user. */
export function userRanges(starts: readonly RangeStart[]): string[] {
  const out: string[] = []
  for (let i = 0; i <= starts.length; i++) {
    const range = [
      i > 0 ? from(starts[i - 1]!) : 'r.uid IS NOT NULL',
      i < starts.length ? `NOT ${from(starts[i]!)}` : ''
    ]
    out.push(range.filter((x) => x !== '').join(' AND '))
  }
  return [...out, 'r.uid IS NULL']
}

/**
 * Step 1, beside the writer: the sorted copy of the rows committed so far, with the names' and addresses'
 * ids renumbered in that order (`renumber`), and the users' dictionary sorted by name (ids unchanged), so
 * that the raw report's lookup of a user's id reads a row group or two of it (zone maps on `name`)
 * instead of every name.
 */
async function sortedSnapshot(c: DuckDBConnection, hour: number): Promise<Snapshot> {
  return await transaction(c, async () => {
    const t = rawRowsTable(hour)
    const count = async (table: string): Promise<number> =>
      Number((await c.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0]![0])
    const snap = {
      rows: await count(t),
      users: await count(rawUsersTable(hour)),
      hosts: await count(rawHostsTable(hour)),
      addrs: await count(rawAddrsTable(hour))
    }
    for (const [dict, column] of RENUMBERED) await renumber(c, hour, dict(hour), column)
    const select =
      `SELECT r.created, r.uid, r.nxdomain, a.new AS aid, h.new AS hid, r.blockedhost, r.reason, r.cats, ` +
      `r.blockedcats, r.source FROM ${t} r JOIN ${idMap(hour, 'aid')} a ON a.old = r.aid ` +
      `JOIN ${idMap(hour, 'hid')} h ON h.old = r.hid`
    await c.run(`CREATE TABLE ${sortedCopy(hour)} AS ${select} LIMIT 0`)
    // Ranges ascending, each in (uid, created, rowid) order, then the rows without a user (last, as
    // ORDER BY puts NULLs): the copy is in the order one sort gives, and no sort holds the whole hour.
    for (const where of userRanges(await rangeStarts(c, t)))
      await c.run(`INSERT INTO ${sortedCopy(hour)} ${select} WHERE ${where} ORDER BY r.uid, r.created, r.rowid`)
    await c.run(`CREATE TABLE ${sortedUsers(hour)} AS SELECT * FROM ${rawUsersTable(hour)} ORDER BY name`)
    return snap
  })
}

/**
 * Step 2's rows: those appended since the snapshot follow the sorted copy, their name and address ids
 * translated by step 1's maps (entries added since keep their ids, which the renumbering did not use: the
 * dictionaries' ids are dense, so an id past the map is one of them).
 */
async function appendSince(c: DuckDBConnection, hour: number, snap: Snapshot): Promise<void> {
  const t = rawRowsTable(hour)
  for (const [dict, n] of [
    [rawHostsTable(hour), snap.hosts],
    [rawAddrsTable(hour), snap.addrs]
  ] as const)
    await c.run(`INSERT INTO ${sortedDict(dict)} SELECT id, name FROM ${dict} WHERE id >= ${n}`)
  const [hmap, amap] = [idMap(hour, 'hid'), idMap(hour, 'aid')]
  await c.run(
    `INSERT INTO ${sortedCopy(hour)} SELECT r.created, r.uid, r.nxdomain, coalesce(a.new, r.aid), coalesce(h.new, r.hid), ` +
      `r.blockedhost, r.reason, r.cats, r.blockedcats, r.source FROM ${t} r LEFT JOIN ${amap} a ON a.old = r.aid ` +
      `LEFT JOIN ${hmap} h ON h.old = r.hid WHERE r.rowid >= ${snap.rows} ORDER BY r.rowid`
  )
  await c.run(`INSERT INTO ${sortedUsers(hour)} SELECT * FROM ${rawUsersTable(hour)} WHERE rowid >= ${snap.users}`)
}

/** Step 2, on the writer: the rows appended since the snapshot follow the copy, which replaces the hour table. */
async function swapSorted(c: DuckDBConnection, hour: number, snap: Snapshot): Promise<void> {
  const pairs: Array<[string, string]> = [
    [rawRowsTable(hour), sortedCopy(hour)],
    [rawUsersTable(hour), sortedUsers(hour)],
    [rawHostsTable(hour), sortedDict(rawHostsTable(hour))],
    [rawAddrsTable(hour), sortedDict(rawAddrsTable(hour))]
  ]
  await transaction(c, async () => {
    const exists = (await c.runAndReadAll(`${TABLES_SQL} AND table_name = '${pairs[0]![0]}'`)).getRows().length > 0
    if (exists) {
      await appendSince(c, hour, snap)
      for (const [t, s] of pairs) {
        await c.run(`DROP TABLE ${t}`)
        await c.run(`ALTER TABLE ${s} RENAME TO ${t}`)
      }
      await metaPut(c, SORTED_KEY + hour, snap.rows)
    } else for (const [, s] of pairs) await c.run(`DROP TABLE ${s}`) // retention dropped the hour meanwhile
    for (const [, column] of RENUMBERED) await c.run(`DROP TABLE IF EXISTS ${idMap(hour, column)}`)
  })
}

/** Forgets the sorted prefix of hours that no longer exist. */
async function forgetDropped(c: DuckDBConnection, states: readonly HourState[]): Promise<void> {
  const keep = states.map((s) => s.hour)
  const list =
    keep.length === 0 ? '' : `AND CAST(substr(key, ${SORTED_KEY.length + 1}) AS BIGINT) NOT IN (${keep.join(', ')})`
  await c.run(`DELETE FROM meta WHERE key LIKE '${SORTED_KEY}%' ${list}`)
  await c.run(`DELETE FROM meta WHERE key LIKE '${LEGACY_SORTED_KEY}%'`)
}

/**
 * Sorts `rawi_<hour>` by user in the two steps above; `between` (tests) runs after the first. Returns
 * the rows of the sorted prefix.
 */
export async function sortRawHour(db: StatsDb, hour: number, between?: () => Promise<void>): Promise<number> {
  const busy = sorting.get(db) ?? new Set<number>()
  sorting.set(db, busy.add(hour))
  try {
    const snap = await db.background((c) => sortedSnapshot(c, hour))
    await between?.()
    await db.write((c) => swapSorted(c, hour, snap))
    return snap.rows
  } finally {
    busy.delete(hour)
  }
}

/**
 * Sorts every raw hour that is due (see the top of this file), one after the other; returns the hours
 * sorted. Runs at most once at a time per store: a call while a run is under way returns that run.
 */
export function sortRawHours(db: StatsDb, now: number, minRows = RAW_SORT_MIN_ROWS): Promise<number> {
  const running = runs.get(db)
  if (running !== undefined) return running
  const run = (async () => {
    const states = await db.write(async (c) => {
      const s = await hourStates(c, sorting.get(db) ?? new Set())
      await forgetDropped(c, s)
      return s
    })
    let sorted = 0
    for (const hour of due(db, states, now, minRows)) {
      if (sorting.get(db)?.has(hour) === true) continue
      await sortRawHour(db, hour)
      if (hour === Math.floor(now / HOUR_MS)) {
        const m = lastOpenSort.get(db) ?? new Map<number, number>()
        lastOpenSort.set(db, m.set(hour, now))
      }
      sorted++
    }
    return sorted
  })().finally(() => runs.delete(db))
  runs.set(db, run)
  return run
}

/** `sortRawHours` without waiting (the importer's call): a failure is logged, a store closing meanwhile is not one. */
export function sortRawHoursInBackground(db: StatsDb, now: number, logger?: Logger, minRows?: number): void {
  sortRawHours(db, now, minRows).then(
    (hours) => {
      if (hours > 0) logger?.info({ hours }, 'statistics: raw hours sorted by user')
    },
    (err: unknown) => {
      // A store closing meanwhile (refused, or its sort interrupted) is not a failure.
      if ((err as { code?: unknown }).code !== 'ENGINE_STORE_OPEN')
        logger?.warn({ err }, 'statistics: sorting a raw hour by user failed; tried again after the next import')
    }
  )
}

/** The sort run under way for `db`, if any (tests and the bench wait for it). */
export function rawSortSettled(db: StatsDb): Promise<unknown> {
  return (runs.get(db) ?? Promise.resolve()).catch(() => {})
}
