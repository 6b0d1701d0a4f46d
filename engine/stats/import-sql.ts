/**
 * The import of whole CSV files done by DuckDB itself: one `read_csv` of a list of files (explicit
 * columns and types, no sniffing) into a temporary table, then one `INSERT ... SELECT` per raw hour
 * partition and one `INSERT ... SELECT ... GROUP BY` per day partition of aggregates, all in the
 * caller's transaction (the one that also writes each file's ledger row). No row passes through
 * JavaScript: appending value by value from JS took ~2,300 rows/s, DuckDB's CSV reader does hundreds
 * of thousands. Several files in one statement share the fixed cost of an import (some ten
 * statements, the transaction, the commit), which is most of it for the few-second files of a busy host.
 *
 * Local days (stats.timezone) come from a small table of UTC offsets per quarter-hour, filled in JS
 * by ReportTime for the quarter-hours the file covers, so the days match the JS importer's exactly.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import { SEQ_PER_CHUNK, hoursTable, hoursTableSql, metaPutMany, namesTable, namesTableSql } from './db.js'
import { insertRawHour } from './raw-layout.js'
import { ALL_USERS, ANONYMOUS_USER, BLOCK_REASONS } from '../querylog/index.js'
import { HOUR_MS, type ReportTime } from './time.js'

const QUARTER_MS = 900_000
const DAY_MS = 86_400_000
const CHUNK = 'import_chunk'
const TZ = 'import_tz'

/** A SQL string literal. */
export function sqlString(s: string): string {
  return "'" + s.replaceAll("'", "''") + "'"
}

// The CSV's columns (engine/querylog/csv.ts) as DuckDB reads them: all text but `created`, so that no
// value is reinterpreted (cats stay as the CSV spells them, nxdomain is '1' or not).
const COLUMNS =
  "{'created': 'BIGINT', 'nxdomain': 'VARCHAR', 'address': 'VARCHAR', 'host': 'VARCHAR', " +
  "'blockedhost': 'VARCHAR', 'reasom': 'VARCHAR', 'cats': 'VARCHAR', 'blockedcats': 'VARCHAR', 'user': 'VARCHAR', " +
  "'client_id': 'VARCHAR', 'source': 'VARCHAR'}"

// Columns are read by position. A row with more fields than these (a newer writer may append a
// trailing column, e.g. a client id) is read with the extras ignored (`strict_mode = false`): with
// strict parsing `ignore_errors` would drop such rows without a word. A row with fewer is padded with
// NULLs (`null_padding`: a file written before `client_id` and `source` has nine fields) and counted
// as skipped when it has no `created`. With `filename`, each row
// also carries the path it came from (a column `filename`), which the import counts rows by.
export function readCsvSql(files: string | readonly string[], filename = false): string {
  // One file needs no per-row path from the reader (a quarter of read_csv's time, bench/results/2026-11-history.md):
  // the path is a constant, which the stage keeps the same way.
  const paths = typeof files === 'string' ? [files] : files
  const one = paths.length === 1 ? paths[0]! : undefined
  const list = one !== undefined ? sqlString(one) : `[${paths.map(sqlString).join(', ')}]`
  const read =
    `read_csv(${list}, columns = ${COLUMNS}, header = true, auto_detect = false, delim = ',', ` +
    `quote = '"', escape = '"', null_padding = true, ignore_errors = true, strict_mode = false, filename = ${filename && one === undefined})`
  return filename && one !== undefined ? `(SELECT *, ${sqlString(one)} AS filename FROM ${read})` : read
}

/**
 * Segments (engine/stats/segment.ts) as an import source: their rows, in list order, with `filename`. A
 * segment written by a version before the trailing columns has no `client_id` nor `source`: the union by
 * name with an empty row of them reads those as NULL instead of failing the statement.
 */
export function readParquetSql(files: readonly string[]): string {
  return (
    '(SELECT * FROM (SELECT NULL::VARCHAR AS client_id, NULL::VARCHAR AS source WHERE false) UNION ALL BY NAME ' +
    `SELECT * FROM read_parquet([${files.map(sqlString).join(', ')}], filename = true))`
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
  /** The raw-row sequence before these files; their rows take the next numbers, in list and file order. */
  seq: number
  /** The import's chunk number (orders the names partials). */
  chunk: number
}

export interface SqlBatchOutcome {
  /** Per source path (as given to `readCsvSql`/`readParquetSql`): its rows and skipped records. */
  files: Map<string, SqlImportOutcome>
  /** The raw-row sequence after these files. */
  seq: number
}

/**
 * Loads the rows of any table expression with the CSV's columns (COLUMNS, by name) and `filename` into
 * the raw and aggregate partitions, inside the caller's transaction: `readCsvSql` of closed files
 * (complete records only) or segments from other hosts (`readParquetSql`, engine/stats/segment.ts).
 * Returns each source's rows and the new seq. The importer runs the two steps apart (`stageRows`, `applyStage`).
 */
export async function importRows(
  c: DuckDBConnection,
  time: ReportTime,
  source: string,
  w: SqlImportWindow
): Promise<SqlBatchOutcome> {
  let out: SqlBatchOutcome
  try {
    out = await applyStage(c, time, await stageRows(c, source), w)
  } catch (err) {
    // A failed statement aborts the caller's transaction: the drop fails too ("transaction is aborted")
    // and must not hide the cause (a full disk, which row groups flushed during the insert meet there).
    // The caller's rollback undoes the tables.
    await dropStage(c).catch(() => {})
    throw err
  }
  await dropStage(c)
  return out
}

/** Files read into a connection's stage (`stageRows`): their counts, its size, its quarter-hours. */
export interface Stage {
  readonly files: Map<string, SqlImportOutcome>
  /** The stage's rows as read: the seq numbers the batch takes (the `seq` counter of `meta`). */
  readonly span: number
  readonly quarters: readonly Quarter[]
}

/**
 * Reads `source` into the connection's temporary stage table (the slow part of an import: DuckDB's
 * CSV or Parquet reader), in or out of a transaction: a temporary table is the connection's own, so a
 * stage made outside the write transaction lets the importer read the next files while another
 * connection writes (engine/stats/importer.ts). `applyStage` on the same connection then writes it.
 */
export async function stageRows(c: DuckDBConnection, source: string): Promise<Stage> {
  // One pass over the files: the rows as the partitions store them (user '' is the anonymous user,
  // empty fields ''). The temporary table keeps the list's and each file's order, so its rowid numbers the rows.
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${CHUNK} AS SELECT created, coalesce(nullif("user", ''), ${sqlString(ANONYMOUS_USER)}) AS "user", ` +
      "coalesce(nxdomain = '1', false) AS nx, coalesce(address, '') AS address, coalesce(host, '') AS host, " +
      "coalesce(blockedhost, '') AS blockedhost, coalesce(reasom, '') AS reason, coalesce(cats, '') AS cats, " +
      `coalesce(blockedcats, '') AS blockedcats, coalesce(source, '') AS source, created // ${HOUR_MS} AS hour, filename FROM ${source}`
  )
  const files = await countsByFile(c)
  let span = 0
  for (const f of files.values()) span += f.rows + f.skipped
  return { files, span, quarters: await quartersOf(c) }
}

/**
 * The stage with only the rows of `sources` (another importer took the other files in between the
 * read and the write). The batch still takes `span` seq numbers.
 */
export async function keepSources(c: DuckDBConnection, stage: Stage, sources: readonly string[]): Promise<Stage> {
  if ([...stage.files.keys()].every((f) => sources.includes(f))) return stage
  const list = sources.length === 0 ? "''" : sources.map(sqlString).join(', ')
  await c.run(`DELETE FROM ${CHUNK} WHERE filename NOT IN (${list})`)
  const files = new Map([...stage.files].filter(([f]) => sources.includes(f)))
  return { files, span: stage.span, quarters: await quartersOf(c) }
}

/** Writes the connection's stage into the raw and aggregate partitions, in the caller's transaction. */
export async function applyStage(
  c: DuckDBConnection,
  time: ReportTime,
  stage: Stage,
  w: SqlImportWindow
): Promise<SqlBatchOutcome> {
  const { files, quarters } = stage
  if (quarters.length === 0) return { files, seq: w.seq }
  await insertRaw(c, w, quarters)
  await insertAggregates(c, w, await daySource(c, time, quarters), daysOf(time, quarters))
  return { files, seq: w.seq + stage.span }
}

/** Drops the connection's stage (and its zone table). */
export async function dropStage(c: DuckDBConnection): Promise<void> {
  await c.run(`DROP TABLE IF EXISTS ${TZ}; DROP TABLE IF EXISTS ${CHUNK}`)
}

/** Rows and skipped records per file. */
async function countsByFile(c: DuckDBConnection): Promise<Map<string, SqlImportOutcome>> {
  const rows = (
    await c.runAndReadAll(`SELECT filename, count(*)::DOUBLE, count(created)::DOUBLE FROM ${CHUNK} GROUP BY filename`)
  ).getRows()
  return new Map(
    rows.map(([f, total, valid]) => [String(f), { rows: Number(valid), skipped: Number(total) - Number(valid) }])
  )
}

/** A quarter-hour the rows fall in (its number since the epoch) and its newest row. */
export interface Quarter {
  q: number
  newest: number
}

/** The quarter-hours of the rows: they give the raw hours, the local days and the UTC offsets, in one scan. */
async function quartersOf(c: DuckDBConnection): Promise<Quarter[]> {
  const rows = (
    await c.runAndReadAll(
      `SELECT created // ${QUARTER_MS}, max(created)::DOUBLE FROM ${CHUNK} WHERE created IS NOT NULL GROUP BY 1 ORDER BY 1`
    )
  ).getRows()
  return rows.map(([q, newest]) => ({ q: Number(q), newest: Number(newest) }))
}

const isUtc = (time: ReportTime): boolean => time.timeZone === 'UTC' || time.timeZone === 'Etc/UTC'

/** The local days of the rows, from their quarter-hours (ReportTime's offsets, as the reports'). */
function daysOf(time: ReportTime, quarters: readonly Quarter[]): number[] {
  const days = new Set<number>()
  for (const { q } of quarters)
    days.add(Math.floor((q * QUARTER_MS + (isUtc(time) ? 0 : time.offsetAt(q * QUARTER_MS))) / DAY_MS))
  return [...days].sort((a, b) => a - b)
}

/**
 * The rows with their local day. UTC needs no table; another zone joins the offsets of the
 * quarter-hours the files cover (ReportTime's, so the days match the reports').
 */
async function daySource(c: DuckDBConnection, time: ReportTime, quarters: readonly Quarter[]): Promise<string> {
  if (isUtc(time)) {
    return `(SELECT rowid AS n, *, created // ${DAY_MS} AS day FROM ${CHUNK} WHERE created IS NOT NULL)`
  }
  await c.run(`CREATE OR REPLACE TEMP TABLE ${TZ} (q BIGINT, off BIGINT)`)
  // Files span minutes: a handful of quarter-hours, inserted as literals (all integers).
  const values = quarters.map(({ q }) => `(${q}, ${time.offsetAt(q * QUARTER_MS)})`)
  for (let i = 0; i < values.length; i += 1000)
    await c.run(`INSERT INTO ${TZ} VALUES ${values.slice(i, i + 1000).join(', ')}`)
  return `(SELECT c.rowid AS n, c.*, (c.created + t.off) // ${DAY_MS} AS day FROM ${CHUNK} c JOIN ${TZ} t ON t.q = c.created // ${QUARTER_MS})`
}

/** The raw rows of the stage into their hour partitions (engine/stats/raw-layout.ts: dictionaries, then rows). */
async function insertRaw(c: DuckDBConnection, w: SqlImportWindow, quarters: readonly Quarter[]): Promise<void> {
  const kept = `created >= ${w.keepRaw}`
  const hours = [...new Set(quarters.filter((q) => q.newest >= w.keepRaw).map((q) => Math.floor(q.q / 4)))]
  const whole = hours.length === 1 && quarters.every((q) => Math.floor(q.q / 4) === hours[0])
  for (const hour of hours) {
    // One hour, every row kept (a file of a few seconds): no filter to evaluate.
    const where =
      whole && quarters[0]!.q * QUARTER_MS >= w.keepRaw ? 'created IS NOT NULL' : `hour = ${hour} AND ${kept}`
    await insertRawHour(c, hour, CHUNK, where)
  }
}

async function insertAggregates(c: DuckDBConnection, w: SqlImportWindow, rows: string, days: number[]): Promise<void> {
  const blocks = `sum(CASE WHEN reason IN (${[...BLOCK_REASONS].map(sqlString).join(', ')}) THEN 1 ELSE 0 END)::BIGINT`
  // Each row counts for its user and for the whole server (ALL_USERS, the console's overview): one
  // scan with two grouping sets, the second one's user being ALL_USERS.
  const u = `CASE WHEN grouping("user") = 1 THEN ${sqlString(ALL_USERS)} ELSE "user" END`
  const kept = days.filter((d) => d >= w.keepDay)
  for (const day of kept) {
    const h = hoursTable(day)
    const n = namesTable(day)
    const ofDay = days.length === 1 ? `FROM ${rows}` : `FROM ${rows} WHERE day = ${day}`
    await c.run(
      `${hoursTableSql(h)}; ${namesTableSql(n)}; ` +
        `INSERT INTO ${h} SELECT ${u}, hour, count(*)::BIGINT, ${blocks} ${ofDay} GROUP BY GROUPING SETS (("user", hour), (hour))`
    )
    await c.run(
      `INSERT INTO ${n} SELECT ${u}, host, count(*)::BIGINT, sum(nx::INTEGER)::BIGINT, ${blocks}, arg_max(cats, n), ${w.chunk} * ${SEQ_PER_CHUNK} + max(n), ` +
        `blockedcats ${ofDay} GROUP BY GROUPING SETS (("user", host, blockedcats), (host, blockedcats))`
    )
  }
  if (kept.length > 0)
    await metaPutMany(
      c,
      kept.map((d) => [`dirty.${d}`, 1])
    )
}
