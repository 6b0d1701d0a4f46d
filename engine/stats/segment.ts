/**
 * Segments: a closed CSV file of one host as a compressed columnar file (Parquet, zstd), the unit the
 * hosts of a fleet exchange instead of query rows through Redis (engine/replica/segments.ts,
 * docs/operations-redis.md "Statistics across hosts").
 *
 * A segment holds the CSV's columns as DuckDB's CSV reader types them (import-sql.ts, COLUMNS), so
 * applying it is the CSV import itself with `read_parquet` as the source (`importRows`): the same
 * partitions, partials and ledger, in one transaction (several segments of a host in one, `applySegments`).
 *
 * Writing: DuckDB `COPY ... TO` a dot-named temporary file in the segment's folder, fsync, rename; a
 * crash leaves only the temporary file, removed by `removeStaleSegmentTemps`. The producer is the
 * sync role, which does not hold the statistics store (the api role is its one writer), so it writes
 * with an in-memory DuckDB of its own.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import type { Logger } from '../log/index.js'
import {
  instanceSettings,
  metaGet,
  metaPutMany,
  progressOfMany,
  putProgressMany,
  retentionOf,
  type StatsDb
} from './db.js'
import { importRows, readCsvSql, readParquetSql, sqlString, type SqlBatchOutcome } from './import-sql.js'
import { intakeCsvFile } from './csv-intake.js'
import { ReportTime } from './time.js'
import { transaction } from './transaction.js'

/** What the metadata says of a segment, and what a fetcher checks. */
export interface SegmentFacts {
  /** Rows (records with a `created`) in it. */
  rows: number
  bytes: number
  /** Hex SHA-256 of the file. */
  sha256: string
}

const TEMP_RE = /^\..*\.tmp$/

/** SHA-256 of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

async function syncFile(path: string): Promise<void> {
  const fh = await open(path, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

export interface SegmentWriter {
  /**
   * Writes the closed CSV file `csv` as the segment `out`; `undefined` when it holds no row (nothing
   * written). A last line cut mid-record (a crashed writer) is left out, with a warning.
   */
  write(csv: string, out: string): Promise<SegmentFacts | undefined>
  /** The facts of a segment already written (a producer that stopped before registering it). */
  describe(path: string): Promise<SegmentFacts>
  close(): Promise<void>
}

/** A segment writer over an in-memory DuckDB (`memoryLimit`, `threads` as stats.duckdb-*). */
export function openSegmentWriter(
  options: { memoryLimit?: string; threads?: number; logger?: Logger } = {}
): SegmentWriter {
  let conn: Promise<{ instance: DuckDBInstance; c: DuckDBConnection }> | undefined
  const connect = async (): Promise<DuckDBConnection> => {
    conn ??= (async () => {
      const instance = await DuckDBInstance.create(':memory:', instanceSettings(options))
      return { instance, c: await instance.connect() }
    })()
    return (await conn).c
  }
  const countRows = async (c: DuckDBConnection, path: string): Promise<number> =>
    Number(
      (await c.runAndReadAll(`SELECT count(created)::DOUBLE FROM read_parquet(${sqlString(path)})`)).getRows()[0]![0]
    )
  return {
    async write(csv, out) {
      const c = await connect()
      const size = (await stat(csv)).size
      const dir = dirname(out)
      await mkdir(dir, { recursive: true })
      const temp = join(dir, `.${basename(out)}.${process.pid}.tmp`)
      // Checked as the importer checks a file (engine/stats/csv-intake.ts): damaged records and a cut
      // last row are left out of the segment, a file that is not ours goes to quarantine/ (and the
      // caller's removal of the CSV finds nothing).
      const log = {
        warn: (f: Record<string, unknown>, m: string) => options.logger?.warn(f, m),
        error: (f: Record<string, unknown>, m: string) => options.logger?.error(f, m)
      }
      const intake = await intakeCsvFile(csv, size, `${temp}.csv`, log)
      if (intake === undefined || intake.end === 0) return undefined
      const source = intake.source
      try {
        await c.run(
          `COPY (SELECT * FROM ${readCsvSql(source)}) TO ${sqlString(temp)} (FORMAT parquet, COMPRESSION zstd)`
        )
        const rows = await countRows(c, temp)
        if (rows === 0) return undefined
        await syncFile(temp)
        await rename(temp, out)
        return { rows, bytes: (await stat(out)).size, sha256: await sha256File(out) }
      } finally {
        await rm(temp, { force: true })
        if (source !== csv) await rm(source, { force: true })
      }
    },
    async describe(path) {
      const c = await connect()
      return { rows: await countRows(c, path), bytes: (await stat(path)).size, sha256: await sha256File(path) }
    },
    async close() {
      if (conn === undefined) return
      const { instance, c } = await conn
      c.closeSync()
      instance.closeSync()
    }
  }
}

/** Removes temporary files a crashed writer or fetcher left in `dir` (not recursive); returns their names. */
export async function removeStaleSegmentTemps(dir: string, logger?: Logger): Promise<string[]> {
  let names: string[]
  try {
    names = (await readdir(dir)).filter((n) => TEMP_RE.test(n))
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return []
    throw err
  }
  for (const n of names) {
    logger?.warn(
      { file: join(dir, n) },
      'removing a half-written segment (a transfer or write stopped midway); it is fetched or written again'
    )
    await rm(join(dir, n), { force: true })
  }
  return names
}

export type SegmentOutcome = { kind: 'applied'; rows: number } | { kind: 'duplicate' }

/**
 * Applies the segment `path` under the ledger name `name` (`<host-id>/<file>`) exactly once: its rows
 * and aggregates, the ledger row and whatever `alsoInTxn` writes (the fetcher's progress mark) in one
 * transaction. A segment whose name the ledger already holds as done adds nothing (`duplicate`); its
 * `alsoInTxn` still runs, so the progress mark moves past it.
 */
export async function applySegment(
  db: StatsDb,
  timeZone: string,
  name: string,
  path: string,
  options: { now?: number; alsoInTxn?: (c: DuckDBConnection) => Promise<void> } = {}
): Promise<SegmentOutcome> {
  return (await applySegments(db, timeZone, [{ name, path }], options))[0]!
}

/**
 * `applySegment` for several segments in one transaction: one `read_parquet` of the list (in list
 * order, so raw rows are numbered as if applied one by one), one ledger row each. A batch shares the
 * fixed cost of an apply (the transaction, some ten statements, the commit).
 */
export async function applySegments(
  db: StatsDb,
  timeZone: string,
  segments: ReadonlyArray<{ name: string; path: string }>,
  options: { now?: number; alsoInTxn?: (c: DuckDBConnection) => Promise<void> } = {}
): Promise<SegmentOutcome[]> {
  const time = new ReportTime(timeZone)
  const now = options.now ?? Date.now()
  const bytes = await Promise.all(segments.map(async (s) => (await stat(s.path)).size))
  return await db.write(async (c): Promise<SegmentOutcome[]> => {
    return await transaction(c, async () => {
      const ledger = await progressOfMany(
        c,
        segments.map((s) => s.name)
      )
      // A name listed twice is applied once (the first).
      const todo = segments.filter(
        (s, i) => ledger.get(s.name)?.done !== true && segments.findIndex((o) => o.name === s.name) === i
      )
      let r: SqlBatchOutcome | undefined
      if (todo.length > 0) {
        const chunk = (await metaGet(c, 'chunk')) + 1
        r = await importRows(c, time, readParquetSql(todo.map((s) => s.path)), {
          keepDay: time.aggregateRetentionStart(now, retentionOf(db).months),
          keepRaw: now - retentionOf(db).rawMs,
          seq: await metaGet(c, 'seq'),
          chunk
        })
        await metaPutMany(c, [
          ['seq', r.seq],
          ['chunk', chunk]
        ])
        await putProgressMany(
          c,
          todo.map((s) => {
            const n = r!.files.get(s.path) ?? { rows: 0, skipped: 0 }
            return [
              s.name,
              { offset: bytes[segments.indexOf(s)]!, rows: n.rows, skipped: n.skipped, done: true, updated: now }
            ]
          })
        )
      }
      await options.alsoInTxn?.(c)
      return segments.map((s): SegmentOutcome =>
        todo.includes(s) ? { kind: 'applied', rows: r!.files.get(s.path)?.rows ?? 0 } : { kind: 'duplicate' }
      )
    })
  })
}
