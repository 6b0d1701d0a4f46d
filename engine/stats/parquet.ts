/**
 * The raw query log out to Parquet (`stats.parquet-dir`): one file per UTC hour,
 * `queries-YYYY-MM-DDTHH.parquet`, that ClickHouse (`file()`, `s3()`), Spark, Trino or DuckDB read
 * directly (docs/statistics.md has a ClickHouse recipe).
 *
 * An hour is written once it has been over for `PARQUET_DELAY_MS`, after an import run: by then every
 * CSV file holding its rows has been closed (every `stats.rotate` seconds) and imported. Raw rows are
 * kept a day, so an importer stopped for less than a day loses no hour; rows of an hour that arrive
 * after its file was written (an importer stopped longer than `PARQUET_DELAY_MS` and restarted) are in
 * the reports but not in the file.
 *
 * A reader never sees a half-written file: DuckDB writes `.queries-...parquet.tmp` (a dot name no
 * `*.parquet` glob matches), the file is flushed to disk, then renamed into place. A crash mid-write
 * leaves only the temporary file, removed (with a log line) by the next run, which writes the hour again.
 */
import { open, readdir, rename, rm, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from '../log/index.js'
import { TABLES_SQL, partitionsAmong, type StatsDb } from './db.js'
import { rawHourSources } from './raw-layout.js'
import { HOUR_MS } from './time.js'

/** How long after its end an hour is written (its last CSV file closed and imported). */
const PARQUET_DELAY_MS = 5 * 60_000

const FILE_RE = /^queries-(\d{4}-\d{2}-\d{2}T\d{2})\.parquet$/
const TEMP_RE = /^\.queries-.*\.parquet\.tmp$/

/** `queries-2024-05-15T10.parquet` for the UTC hour number `hour` (ms / HOUR_MS). */
function parquetName(hour: number): string {
  return `queries-${new Date(hour * HOUR_MS).toISOString().slice(0, 13)}.parquet`
}

/**
 * The columns, in this order and with these types: `created` TIMESTAMP adjusted to UTC (microseconds;
 * an instant, whatever the session's time zone), `user`
 * (the user id at the time of the query, `*anonymous*` for addresses of no user), `nxdomain` BOOLEAN,
 * then the strings of the CSV row (`cats` and `blockedcats` space-separated category numbers), and `source`
 * (the reason's detail: `list:<id>`, `rpz:<zone>`, '' for none). The
 * store's ids of users and names (engine/stats/raw-layout.ts) are resolved: the file holds the strings.
 * Rows are in time order; queries of the same millisecond by user, then in the order they were imported
 * (the same file whether or not the hour was sorted by user before it was written).
 */
const SELECT =
  'SELECT make_timestamptz(created * 1000) AS created, "user", nxdomain, address, host, blockedhost, reason, cats, blockedcats, source'

function sqlPath(path: string): string {
  return `'${path.replaceAll("'", "''")}'`
}

async function removeStaleTemps(dir: string, names: readonly string[], logger: Logger | undefined): Promise<void> {
  for (const name of names) {
    if (!TEMP_RE.test(name)) continue
    logger?.warn(
      { file: join(dir, name) },
      'removing a half-written Parquet file (an export stopped mid-write); its hour is written again'
    )
    await rm(join(dir, name), { force: true })
  }
}

/** Flushes a written file to disk, so the rename never exposes a name whose data is not there yet. */
async function syncFile(path: string): Promise<void> {
  const fh = await open(path, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/**
 * Writes every raw hour that is over (by `PARQUET_DELAY_MS`) and has no file yet into `dir`; returns
 * the names written. A failed hour (a full disk) is logged and its temporary file removed; it is tried
 * again on the next run, and the import itself is not affected.
 */
export async function exportParquetHours(db: StatsDb, dir: string, now: number, logger?: Logger): Promise<string[]> {
  await mkdir(dir, { recursive: true })
  const present = await readdir(dir)
  await removeStaleTemps(dir, present, logger)
  const done = new Set(present.filter((n) => FILE_RE.test(n)))
  const tables = new Set(
    await db.read(async (c) => (await c.runAndReadAll(TABLES_SQL)).getRows().map((r) => String(r[0])))
  )
  const hours = partitionsAmong(tables).raw.filter(
    (h) => (h + 1) * HOUR_MS + PARQUET_DELAY_MS <= now && !done.has(parquetName(h))
  )
  const written: string[] = []
  for (const hour of hours) {
    const name = parquetName(hour)
    const temp = join(dir, `.${name}.tmp`)
    try {
      await db.read((c) =>
        c.run(
          `COPY (${SELECT} FROM (${rawHourSources(tables, hour).join(' UNION ALL ')}) ORDER BY created, "user", layout, ord) ` +
            `TO ${sqlPath(temp)} (FORMAT parquet)`
        )
      )
      await syncFile(temp)
      await rename(temp, join(dir, name))
      written.push(name)
    } catch (err) {
      await rm(temp, { force: true })
      logger?.error(
        { err, file: join(dir, name) },
        'Parquet export of the raw log failed; the hour is tried again on the next import'
      )
    }
  }
  return written
}
