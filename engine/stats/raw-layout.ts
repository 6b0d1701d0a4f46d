/**
 * The raw rows' layout on disk (docs/design/statistics.md, "Raw rows on disk"; bench/results/2026-11-history.md, "Raw rows in
 * fewer bytes"): per UTC hour three tables, dropped together by retention,
 *
 *   rawi_<hour>      one row per query: created (ms), uid, nxdomain, aid, hid, blockedhost, reason,
 *                    cats, blockedcats, source; `uid`, `aid` and `hid` number the user, the client address and
 *                    the name in the three dictionaries below. No seq column: rows are only ever appended in commit order and
 *                    the sort by user (engine/stats/raw-sort.ts) keeps row-id order among equal (uid,
 *                    created), so a table's row ids order its rows as the raw-row sequence did.
 *   rawusers_<hour>  the hour's users: id, name (ids 0, 1, 2, ... in order of first arrival);
 *   rawhosts_<hour>  the hour's names: id, name;
 *   rawaddrs_<hour>  the hour's client addresses: id, name (names and addresses are numbered in order of
 *                    first arrival, then again in the sorted rows' order when the hour is sorted by user).
 *
 * Integer ids instead of strings are what brings a raw row under 10 bytes: a user's id is one value for
 * a whole run of rows once the hour is sorted by user (nearly free), a name's and an address's id are
 * bit-packed (about 2 bytes), where the strings took 3-5 bytes a row each. Dictionaries per hour (not one for the store) so that retention
 * still drops whole tables and a dictionary never outgrows what a day of raw rows needs.
 *
 * Stores written before this layout hold `raw_<hour>` tables (seq, created, user, ..., strings); they are
 * read alongside (`rawHourSources`, `userRawRows` call into ./legacy/raw-layout.ts) until retention drops
 * them a day later, and are never written again but by `filterd stats-migrate` of an LMDB store.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import { legacyRawHourSource, legacyRawTable, legacyUserRawSources } from './legacy/raw-layout.js'
import { snapshotHolds } from './snapshot-check.js'
import { tableName, tableOf } from './tiers.js'

export const rawRowsTable = (hour: number): string => tableName('raw', 'rows', hour)
export const rawUsersTable = (hour: number): string => tableName('raw', 'users', hour)
export const rawHostsTable = (hour: number): string => tableName('raw', 'hosts', hour)
export const rawAddrsTable = (hour: number): string => tableName('raw', 'addrs', hour)

/** Every table of a raw hour, in either layout (retention drops them all). */
export function rawHourTables(hour: number): string[] {
  return [legacyRawTable(hour), rawRowsTable(hour), rawUsersTable(hour), rawHostsTable(hour), rawAddrsTable(hour)]
}

/** The raw hours among the table names `names`, either layout, ascending. */
export function rawHoursAmong(names: Iterable<string>): number[] {
  const hours = new Set<number>()
  for (const name of names) {
    const t = tableOf(name)
    if (t?.tier === 'raw' && (t.kind === 'rows' || t.kind === 'legacy')) hours.add(t.n)
  }
  return [...hours].sort((a, b) => a - b)
}

export function rawHourSchemaSql(hour: number): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${rawRowsTable(hour)} (created BIGINT, uid INTEGER, nxdomain BOOLEAN, aid INTEGER, ` +
    'hid INTEGER, blockedhost VARCHAR, reason VARCHAR, cats VARCHAR, blockedcats VARCHAR, source VARCHAR); ' +
    [rawUsersTable, rawHostsTable, rawAddrsTable]
      .map((t) => `CREATE TABLE IF NOT EXISTS ${t(hour)} (id INTEGER, name VARCHAR)`)
      .join('; ')
  )
}

/** Adds the values of `column` among `rows` that `dict` lacks, numbered on from its last id. */
async function upsertDictionary(c: DuckDBConnection, dict: string, rows: string, column: string): Promise<void> {
  // Ids are dense (0..n-1, never deleted), so the next one is the dictionary's row count. One writer
  // (StatsDb.write) inside the import's transaction: no other insert can take the same ids.
  await c.run(
    `INSERT INTO ${dict} SELECT ((SELECT count(*) FROM ${dict}) + row_number() OVER () - 1)::INTEGER, v ` +
      `FROM (SELECT DISTINCT ${column} AS v FROM ${rows}) n WHERE NOT EXISTS (SELECT 1 FROM ${dict} d WHERE d.name = n.v)`
  )
}

/**
 * Appends to the hour's raw rows the rows of `source` (a table with the columns created, "user", nx,
 * address, host, blockedhost, reason, cats, blockedcats, source) that `where` selects, in `source`'s row-id
 * order (the raw-row sequence), after adding their users and names to the hour's dictionaries. Runs
 * inside the caller's transaction (the import's, with its ledger rows).
 */
export async function insertRawHour(c: DuckDBConnection, hour: number, source: string, where: string): Promise<void> {
  const users = rawUsersTable(hour)
  const hosts = rawHostsTable(hour)
  const addrs = rawAddrsTable(hour)
  const rows = `(SELECT "user", host, address FROM ${source} WHERE ${where})`
  await c.run(rawHourSchemaSql(hour))
  await upsertDictionary(c, users, rows, '"user"')
  await upsertDictionary(c, hosts, rows, 'host')
  await upsertDictionary(c, addrs, rows, 'address')
  await c.run(
    `INSERT INTO ${rawRowsTable(hour)} SELECT s.created, u.id, s.nx, a.id, h.id, s.blockedhost, s.reason, s.cats, s.blockedcats, ` +
      `s.source FROM ${source} s JOIN ${users} u ON u.name = s."user" JOIN ${hosts} h ON h.name = s.host ` +
      `JOIN ${addrs} a ON a.name = s.address WHERE ${where} ORDER BY s.rowid`
  )
}

/**
 * One hour's raw rows in either layout as SELECTs of the columns created, "user", nxdomain, address,
 * host, blockedhost, reason, cats, blockedcats, source ('' for none), then `layout` and `ord`: ordering by (created, layout,
 * ord) is the raw-row sequence's order (the old layout's rows all came before the new one's, which
 * its row ids order). `names` is the store's tables; `where` (on those columns) filters each.
 */
export function rawHourSources(names: ReadonlySet<string>, hour: number, where = 'true'): string[] {
  const out: string[] = []
  const legacy = legacyRawHourSource(names, hour, where)
  if (legacy !== undefined) out.push(legacy)
  if (names.has(rawRowsTable(hour)))
    out.push(
      'SELECT * FROM (SELECT r.created, u.name AS "user", r.nxdomain, a.name AS address, h.name AS host, r.blockedhost, ' +
        `r.reason, r.cats, r.blockedcats, coalesce(r.source, '') AS source, 1 AS layout, r.rowid AS ord FROM ${rawRowsTable(hour)} r ` +
        `JOIN ${rawUsersTable(hour)} u ON u.id = r.uid JOIN ${rawHostsTable(hour)} h ON h.id = r.hid ` +
        `JOIN ${rawAddrsTable(hour)} a ON a.id = r.aid) WHERE ${where}`
    )
  return out
}

/** A raw row as the raw report reads it: created, nxdomain, address, host, blockedhost, reason, cats, blockedcats, source. */
export type UserRawRow = [number, boolean, string, string, string, string, string, string, string]

/** Per hour, the names of the address ids `addrs` and the name ids `hosts` (one query): keys `a:<hour>:<id>`, `h:<hour>:<id>`. */
async function resolveIds(
  c: DuckDBConnection,
  addrs: ReadonlyMap<number, ReadonlySet<number>>,
  hosts: ReadonlyMap<number, ReadonlySet<number>>
): Promise<Map<string, string>> {
  const part = (
    kind: string,
    table: (hour: number) => string,
    ids: ReadonlyMap<number, ReadonlySet<number>>
  ): string[] =>
    [...ids].map(
      ([h, set]) => `SELECT '${kind}:${h}:' || id AS k, name FROM ${table(h)} WHERE id IN (${[...set].join(', ')})`
    )
  const parts = [...part('a', rawAddrsTable, addrs), ...part('h', rawHostsTable, hosts)]
  const out = new Map<string, string>()
  if (parts.length === 0) return out
  for (const [k, name] of (await c.runAndReadAll(parts.join(' UNION ALL '))).getRows()) out.set(String(k), String(name))
  return out
}

/**
 * One user's raw rows of `hours` between `from` and `to` (ms), newest first, at most `limit`, in either
 * layout. The user's id of each hour is joined in (one row, pushed into the scan as a filter on `uid`:
 * zone maps skip the row groups of other users in a sorted hour); the rows' name and address ids are
 * then resolved by id (`IN` lists on the dictionaries), not by a join that would read a whole dictionary.
 * Call it inside one transaction (reports.ts's `readSnapshot`): a sort of the hour (engine/stats/raw-sort.ts)
 * renumbers the ids, and one committed between the rows' query and their names' would give other names.
 *
 * `check` (reports.ts): a value the rows' query also selects, in its own snapshot, and what it must be
 * (the fingerprint of the tables `names` was read from); when it is not, the answer is `undefined` and the
 * names are not read.
 */
export async function userRawRows(
  c: DuckDBConnection,
  names: ReadonlySet<string>,
  hours: readonly number[],
  user: string,
  range: { from: number; to: number; limit: number },
  check?: { sql: string; value: unknown }
): Promise<UserRawRow[] | undefined> {
  const when = `created BETWEEN ${range.from} AND ${range.to}`
  const tail = 'blockedhost, reason, cats, blockedcats, source, layout, ord'
  const sql = legacyUserRawSources(names, hours, when, tail)
  // The user's id joined in (one row): DuckDB pushes it into the scan as a filter, so the zone maps apply.
  for (const h of hours.filter((x) => names.has(rawRowsTable(x))))
    sql.push(
      `SELECT created, nxdomain, NULL AS address, NULL AS host, aid, hid, ${h} AS h, blockedhost, reason, cats, ` +
        `blockedcats, coalesce(source, '') AS source, 1 AS layout, r.rowid AS ord FROM ${rawRowsTable(h)} r JOIN ${rawUsersTable(h)} u ON u.id = r.uid ` +
        `WHERE u.name = $1 AND ${when}`
    )
  if (sql.length === 0) return check === undefined ? [] : undefined
  // (created, layout, ord) is the raw-row sequence's order (see rawHourSources). DuckDB sorts every row of
  // the user's hour for an ORDER BY whose LIMIT passes 5,000 (its top-N heap is kept for smaller limits):
  // the whole hour of a busy user (an ISP's NAT address, 18 M rows at 5,000 q/s) held in the sort's
  // memory at each report, 127 MiB at 1.5 M rows. So the newest `limit` times are found first (`max(x, n)`,
  // a heap of n), and only the rows from the oldest of them on are sorted.
  const found = (
    await c.runAndReadAll(
      `WITH r AS NOT MATERIALIZED (${sql.join(' UNION ALL ')}) ` +
        `SELECT created::DOUBLE, nxdomain, address, host, aid, hid, h, blockedhost, reason, cats, blockedcats, source` +
        `${check === undefined ? '' : `, ${check.sql}`} FROM r ` +
        `WHERE created >= (SELECT list_min(max(created, ${range.limit})) FROM r) ` +
        `ORDER BY created DESC, layout DESC, ord DESC LIMIT ${range.limit}`,
      [user]
    )
  ).getRows()
  if (check !== undefined && !(await snapshotHolds(c, found, check.sql, check.value))) return undefined
  const wanted = (col: number): Map<number, Set<number>> => {
    const m = new Map<number, Set<number>>()
    for (const r of found)
      if (r[col] !== null) {
        const h = Number(r[6])
        m.set(h, (m.get(h) ?? new Set<number>()).add(Number(r[col])))
      }
    return m
  }
  const strings = await resolveIds(c, wanted(4), wanted(5))
  return found.map((r) => [
    Number(r[0]),
    r[1] === true,
    r[4] === null ? String(r[2]) : strings.get(`a:${Number(r[6])}:${Number(r[4])}`)!,
    r[5] === null ? String(r[3]) : strings.get(`h:${Number(r[6])}:${Number(r[5])}`)!,
    String(r[7]),
    String(r[8]),
    String(r[9]),
    String(r[10]),
    String(r[11])
  ])
}
