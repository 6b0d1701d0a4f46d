/**
 * The import of one whole CSV file done by DuckDB itself: `read_csv` (explicit columns and types, no
 * sniffing) into a temporary table, then one `INSERT ... SELECT` per raw hour partition and one
 * `INSERT ... SELECT ... GROUP BY` per day partition of aggregates, all in the caller's transaction
 * (the one that also writes the file's ledger row). No row passes through JavaScript: appending value
 * by value from JS took ~2,300 rows/s, DuckDB's CSV reader does hundreds of thousands.
 *
 * Local days (stats.timezone) come from a small table of UTC offsets per quarter-hour, filled in JS
 * by ReportTime for the quarter-hours the file covers, so the days match the JS importer's exactly.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import { hoursTable, hoursTableSql, metaPut, namesTable, namesTableSql, rawTable, rawTableSql } from './db.js'
import { ALL_USERS, ANONYMOUS_USER, BLOCK_REASONS } from './files.js'
import { HOUR_MS, type ReportTime } from './time.js'

const QUARTER_MS = 900_000
const DAY_MS = 86_400_000
const CHUNK = 'import_chunk'
const TZ = 'import_tz'

/** A SQL string literal. */
export function sqlString(s: string): string {
  return "'" + s.replaceAll("'", "''") + "'"
}

// The CSV's columns (engine/stats/csv.ts) as DuckDB reads them: all text but `created`, so that no
// value is reinterpreted (cats stay as the CSV spells them, nxdomain is '1' or not).
const COLUMNS =
  "{'created': 'BIGINT', 'nxdomain': 'VARCHAR', 'address': 'VARCHAR', 'host': 'VARCHAR', " +
  "'blockedhost': 'VARCHAR', 'reasom': 'VARCHAR', 'cats': 'VARCHAR', 'blockedcats': 'VARCHAR', 'user': 'VARCHAR'}"

// Columns are read by position. A row with more fields than these (a newer writer may append a
// trailing column, e.g. a client id) is read with the extras ignored (`strict_mode = false`): with
// strict parsing `ignore_errors` would drop such rows without a word. A row with fewer is padded with
// NULLs (`null_padding`) and counted as skipped when it has no `created`.
export function readCsvSql(file: string): string {
  return (
    `read_csv(${sqlString(file)}, columns = ${COLUMNS}, header = true, auto_detect = false, delim = ',', ` +
    "quote = '\"', escape = '\"', null_padding = true, ignore_errors = true, strict_mode = false)"
  )
}

export interface SqlImportOutcome {
  /** Rows read from the file (each counted for its user and the whole server). */
  rows: number
  /** Records with no `created` (not a row). */
  skipped: number
}

export interface SqlImportWindow {
  /** First local day aggregates still keep. */
  keepDay: number
  /** Raw rows older than this (ms) are not kept. */
  keepRaw: number
  /** The raw-row sequence before this file; its rows take the next numbers, in file order. */
  seq: number
  /** The import's chunk number (orders the names partials). */
  chunk: number
}

/**
 * Loads `file` (complete records only: the caller hands over a file that ends in a line break) into
 * the raw and aggregate partitions, inside the caller's transaction. Returns the rows and the new seq.
 */
export async function importCsvFile(
  c: DuckDBConnection,
  time: ReportTime,
  file: string,
  w: SqlImportWindow
): Promise<SqlImportOutcome & { seq: number }> {
  return await importRows(c, time, readCsvSql(file), w)
}

/**
 * `importCsvFile` from any table expression with the CSV's columns (COLUMNS, by name): a segment
 * from another host (`read_parquet(...)`, engine/stats/segment.ts) takes the same path as a CSV file.
 */
export async function importRows(
  c: DuckDBConnection,
  time: ReportTime,
  source: string,
  w: SqlImportWindow
): Promise<SqlImportOutcome & { seq: number }> {
  // One pass over the file: the rows as the partitions store them (user '' is the anonymous user,
  // empty fields ''). The temporary table keeps the file's order, so its rowid numbers the rows.
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${CHUNK} AS SELECT created, coalesce(nullif("user", ''), ${sqlString(ANONYMOUS_USER)}) AS "user", ` +
      "coalesce(nxdomain = '1', false) AS nx, coalesce(address, '') AS address, coalesce(host, '') AS host, " +
      "coalesce(blockedhost, '') AS blockedhost, coalesce(reasom, '') AS reason, coalesce(cats, '') AS cats, " +
      `coalesce(blockedcats, '') AS blockedcats, created // ${HOUR_MS} AS hour FROM ${source}`
  )
  try {
    const [total, valid] = (
      await c.runAndReadAll(`SELECT count(*)::DOUBLE, count(created)::DOUBLE FROM ${CHUNK}`)
    ).getRows()[0]!
    const rows = Number(valid)
    const skipped = Number(total) - rows
    if (rows === 0) return { rows, skipped, seq: w.seq }
    await insertRaw(c, w)
    await insertAggregates(c, w, await daySource(c, time))
    return { rows, skipped, seq: w.seq + Number(total) }
  } finally {
    await c.run(`DROP TABLE IF EXISTS ${TZ}`)
    await c.run(`DROP TABLE IF EXISTS ${CHUNK}`)
  }
}

/**
 * The rows with their local day. UTC needs no table; another zone joins the offsets of the
 * quarter-hours the file covers (ReportTime's, so the days match the reports').
 */
async function daySource(c: DuckDBConnection, time: ReportTime): Promise<string> {
  if (time.timeZone === 'UTC' || time.timeZone === 'Etc/UTC') {
    return `(SELECT rowid AS n, *, created // ${DAY_MS} AS day FROM ${CHUNK} WHERE created IS NOT NULL)`
  }
  await fillOffsets(c, time)
  return `(SELECT c.rowid AS n, c.*, (c.created + t.off) // ${DAY_MS} AS day FROM ${CHUNK} c JOIN ${TZ} t ON t.q = c.created // ${QUARTER_MS})`
}

/** The UTC offset of every quarter-hour the file's rows fall in (ReportTime's, so days match the reports'). */
async function fillOffsets(c: DuckDBConnection, time: ReportTime): Promise<void> {
  const quarters = (
    await c.runAndReadAll(`SELECT DISTINCT created // ${QUARTER_MS} FROM ${CHUNK} WHERE created IS NOT NULL`)
  ).getRows()
  await c.run(`CREATE OR REPLACE TEMP TABLE ${TZ} (q BIGINT, off BIGINT)`)
  // A file spans minutes: a handful of quarter-hours, inserted as literals (all integers).
  const values = quarters.map(([q]) => `(${Number(q)}, ${time.offsetAt(Number(q) * QUARTER_MS)})`)
  for (let i = 0; i < values.length; i += 1000)
    await c.run(`INSERT INTO ${TZ} VALUES ${values.slice(i, i + 1000).join(', ')}`)
}

async function distinct(c: DuckDBConnection, column: string, from: string, where: string): Promise<number[]> {
  return (await c.runAndReadAll(`SELECT DISTINCT ${column} FROM ${from} WHERE ${where} ORDER BY 1`))
    .getRows()
    .map((r) => Number(r[0]))
}

async function insertRaw(c: DuckDBConnection, w: SqlImportWindow): Promise<void> {
  const kept = `created >= ${w.keepRaw}`
  for (const hour of await distinct(c, 'hour', CHUNK, kept)) {
    const table = rawTable(hour)
    await c.run(rawTableSql(table))
    await c.run(
      `INSERT INTO ${table} SELECT ${w.seq + 1} + rowid, created, "user", nx, address, host, blockedhost, reason, cats, blockedcats ` +
        `FROM ${CHUNK} WHERE hour = ${hour} AND ${kept}`
    )
  }
}

async function insertAggregates(c: DuckDBConnection, w: SqlImportWindow, rows: string): Promise<void> {
  const blocks = `sum(CASE WHEN reason IN (${[...BLOCK_REASONS].map(sqlString).join(', ')}) THEN 1 ELSE 0 END)::BIGINT`
  // Each row counts for its user and for the whole server (ALL_USERS, the console's overview): one
  // scan with two grouping sets, the second one's user being ALL_USERS.
  const u = `CASE WHEN grouping("user") = 1 THEN ${sqlString(ALL_USERS)} ELSE "user" END`
  for (const day of await distinct(c, 'day', rows, `day >= ${w.keepDay}`)) {
    const h = hoursTable(day)
    const n = namesTable(day)
    await c.run(hoursTableSql(h))
    await c.run(namesTableSql(n))
    const ofDay = `FROM ${rows} WHERE day = ${day}`
    await c.run(
      `INSERT INTO ${h} SELECT ${u}, hour, count(*)::BIGINT, ${blocks} ${ofDay} GROUP BY GROUPING SETS (("user", hour), (hour))`
    )
    await c.run(
      `INSERT INTO ${n} SELECT ${u}, host, count(*)::BIGINT, sum(nx::INTEGER)::BIGINT, ${blocks}, arg_max(cats, n), ${w.chunk} ` +
        `${ofDay} GROUP BY GROUPING SETS (("user", host), (host))`
    )
    await metaPut(c, `dirty.${day}`, 1)
  }
}
