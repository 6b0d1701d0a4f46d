/**
 * The importer: loads every closed CSV file of `stats.dir` into the statistics store (engine/stats/db.ts)
 * exactly once, then drops the partitions retention no longer keeps and compacts the days it wrote.
 *
 * Exactly once: a file is imported in chunks (`CHUNK_ROWS` rows). Each chunk's effects (raw rows,
 * partial aggregates) and the file's progress record (`files[name] = {offset, rows, done}`) are
 * written in one DuckDB transaction, which first checks that the recorded offset is the one this
 * chunk starts at. A crash or SIGKILL before the commit leaves neither the rows nor the progress; a
 * crash after it leaves both, and the next run continues from the recorded offset. Two importers
 * running at once in the writer process cannot both apply a chunk: writes are serialised and the
 * second one's check fails inside its own transaction, so it moves on from the other's offset.
 * A file is deleted once its progress says `done`; a leftover done file is deleted on the next run.
 *
 * Chunks keep each write transaction short (the api role serves reports from the same process) and
 * bound the memory an import holds, whatever `stats.max-file-size` is.
 */
import { failpoint, failpointNumber, stopHere } from '../failpoints.js'
import { readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { Config } from '../config/index.js'
import type { Logger } from '../log/index.js'
import { watchClosedFiles, type ClosedFileWatch, CLOSED_RE, recoverStaleParts } from '../querylog/index.js'
import { intakeCsvFile } from './csv-intake.js'
import {
  metaGet,
  openStatsDb,
  metaPutMany,
  progressOfMany,
  putProgressMany,
  retentionOf,
  type ImportProgress,
  type StatsDb
} from './db.js'
import { applyStage, dropStage, keepSources, readCsvSql, stageRows, type Stage } from './import-sql.js'
import { armLiveBoost } from './live-boost.js'
import { startPeriodicJob } from './periodic.js'
import { maintainAfterImport } from './maintenance.js'
import { transaction } from './transaction.js'
import { HOUR_MS, ReportTime, type StatsRetention } from './time.js'
import { CHUNK_ROWS, type Ctx } from './import-context.js'
import { continueFile } from './legacy/chunk-path.js'

/**
 * Closed files imported in one transaction, up to this many bytes of CSV (at least one file). A
 * bigger transaction makes DuckDB write its data straight into the database at the commit (a
 * checkpoint) instead of into the write-ahead log, and a checkpoint that meets a full disk
 * invalidates the open database until a restart (measured; engine/stats/full-disk.test.ts meets a
 * full disk with three 20,000-row files of 1.4 MB: 40,000 rows in one transaction stayed on the
 * write-ahead-log path, 60,000 did not). 2 MiB of CSV is about 30,000 rows: the batch takes in the
 * small files of a quiet host together; a busy host's 3-second file (60,000 rows at 20,000 q/s) is a batch alone.
 */
const BATCH_BYTES = 2 * 1024 * 1024

export interface ImportOptions {
  /** Clock (ms) for retention; default `Date.now`. */
  now?: () => number
  logger?: Logger
  /** Rows per transaction; default the `stats.import.chunk-rows` failpoint or 20,000. */
  chunkRows?: number
  /**
   * Test hook: called inside each chunk's transaction (`'in-txn'`, before the commit) and after it
   * (`'after-commit'`) with the rows this importer has applied so far. Defaults to the hook that
   * the `stats.import.pause` failpoint (`<phase>:<rows>`) describes, which stops the process for
   * ever (so a test can SIGKILL it there); unset, it does nothing.
   */
  onChunk?: (phase: 'in-txn' | 'after-commit', rowsSoFar: number) => void
  /**
   * Closed files read in one transaction, up to this many bytes (a larger file alone); default
   * the `stats.import.batch-bytes` failpoint or 2 MiB.
   */
  batchBytes?: number
  /** `stats.parquet-dir`: write the raw hours that are over as Parquet files there (engine/stats/parquet.ts). */
  parquetDir?: string | undefined
  /**
   * Read a batch's files while the batch before it writes (default true); false: one batch at a time
   * (the bench compares both).
   */
  pipeline?: boolean
  /** Unsorted rows from which a raw hour is sorted by user (engine/stats/raw-sort.ts); tests lower it. */
  rawSortMinRows?: number
  /** Warnings already logged: an importer passes the same set to each run, so a file is warned about once. */
  warned?: Set<string>
}

export interface ImportResult {
  /** Files finished by this run. */
  files: number
  rows: number
  skipped: number
  /** Partitions dropped by retention. */
  pruned: number
}

function pauseHookFromFailpoint(): ImportOptions['onChunk'] {
  const spec = failpoint('stats.import.pause')
  if (spec === undefined || spec === '') return undefined
  const [phase, n] = spec.split(':')
  const limit = Number(n)
  return (p, rows) => {
    if (p !== phase || rows < limit) return
    stopHere(`PAUSED ${p} ${rows}`)
  }
}

/** Imports every closed file in `dir` (oldest name first), then prunes. */
export async function importClosedFiles(
  db: StatsDb,
  dir: string,
  timeZone: string,
  options: ImportOptions = {}
): Promise<ImportResult> {
  const ctx: Ctx = {
    db,
    time: new ReportTime(timeZone),
    now: options.now ?? Date.now,
    chunkRows: options.chunkRows ?? (failpointNumber('stats.import.chunk-rows') || CHUNK_ROWS),
    onChunk: options.onChunk ?? pauseHookFromFailpoint(),
    logger: options.logger,
    warned: options.warned ?? new Set(),
    rowsSoFar: 0
  }
  for (const name of await recoverStaleParts(dir))
    ctx.logger?.warn(
      { file: name, pid: Number(CLOSED_RE.exec(name)?.[2]) },
      'statistics file of a DNS process that is gone (a crash, kill -9) closed for import: its rows are imported and a half-written last row is skipped; ' +
        'the rows it had not yet written (its last flush: at most 64 KiB of rows or 1 s of queries) are lost and cannot be counted'
    )
  let names: string[]
  try {
    names = (await readdir(dir)).filter((n) => CLOSED_RE.test(n)).sort()
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') names = []
    else throw err
  }
  const result: ImportResult = { files: 0, rows: 0, skipped: 0, pruned: 0 }
  const count = (name: string, r: { rows: number; skipped: number } | undefined): void => {
    if (r === undefined) return
    result.files++
    result.rows += r.rows
    result.skipped += r.skipped
    options.logger?.debug({ file: name, rows: r.rows, skipped: r.skipped }, 'statistics file imported')
  }
  const ledger = await db.read((c) => progressOfMany(c, names))
  const batchBytes = options.batchBytes ?? (failpointNumber('stats.import.batch-bytes') || BATCH_BYTES)
  const pipeline = batchPipeline(ctx, dir, count, options.pipeline ?? true)
  let batch: Array<{ name: string; size: number }> = []
  let bytes = 0
  const flush = async (): Promise<void> => {
    if (batch.length > 0) await pipeline.add(batch)
    batch = []
    bytes = 0
  }
  try {
    for (const name of names) {
      const p = ledger.get(name)
      if (p?.done === true) await rm(join(dir, name), { force: true })
      else if ((p?.offset ?? 0) > 0) {
        // A file an older importer left half-imported (chunks from an offset): the JS path continues it.
        await flush()
        await pipeline.drain()
        count(name, await continueFile(ctx, dir, name, p!.offset))
      } else {
        const size = await sizeOf(join(dir, name))
        if (size === undefined) continue // another importer finished and removed it
        if (batch.length > 0 && bytes + size > batchBytes) await flush()
        batch.push({ name, size })
        bytes += size
      }
    }
    await flush()
  } finally {
    await pipeline.drain()
  }
  result.pruned = await maintainAfterImport(db, timeZone, ctx.now, {
    parquetDir: options.parquetDir,
    logger: options.logger,
    rawSortMinRows: options.rawSortMinRows
  })
  return result
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined
    throw err
  }
}

/** A closed file of a batch: where its complete records end, and what DuckDB reads (a copy without its damaged records). */
interface BatchFile {
  name: string
  path: string
  size: number
  /** The byte offset after its last line break. */
  end: number
  source: string
  /** Records skipped before DuckDB reads the file: a cut last record, damaged records (engine/stats/csv-check.ts). */
  cut: number
}

/**
 * Checks a closed file before DuckDB reads it (engine/stats/csv-intake.ts): `undefined` when it was
 * moved to `quarantine/`. Warnings about it are logged once per importer.
 */
async function prepareFile(ctx: Ctx, dir: string, name: string, size: number): Promise<BatchFile | undefined> {
  const path = join(dir, name)
  const r = await intakeCsvFile(path, size, join(dir, `.${name}.complete`), {
    warn: (fields, msg) => warnOnce(ctx, name, fields, msg),
    error: (fields, msg) => ctx.logger?.error(fields, msg)
  })
  return r === undefined ? undefined : { name, path, size, ...r }
}

/** Logs a warning about a file once per importer: a file that stays (its import failed) is tried again every interval. */
function warnOnce(ctx: Ctx, name: string, fields: Record<string, unknown>, msg: string): void {
  const key = `${name}\n${msg}`
  if (ctx.warned.has(key)) return
  if (ctx.warned.size >= 10_000) ctx.warned.clear() // bounded; a repeat after that is harmless
  ctx.warned.add(key)
  ctx.logger?.warn(fields, msg)
}

type BatchOutcome = Map<string, { rows: number; skipped: number } | undefined>

/** A pipeline's failure as its batches see it: recorded by the failing write itself, before the next write runs. */
interface BatchGate {
  abandoned(): boolean
  fail(err: unknown): void
}

interface BatchPipeline {
  /** Starts a batch; returns once the batch before it is written (at most two batches in flight). */
  add(list: ReadonlyArray<{ name: string; size: number }>): Promise<void>
  /** Waits for every batch started; throws the first failure. */
  drain(): Promise<void>
}

/**
 * Batches one after the other, each batch's files read (DuckDB's `read_csv` into a stage on a
 * connection of its own, the largest part of an import) while the batch before it writes: the two
 * use different cores when files queue up. Writes stay one at a time and in order (a batch queues its
 * write before the next one starts reading). After a failure, the batches behind it write nothing
 * (their files stay for the next run), and `drain` throws the failure. `overlap` false: one batch at a time.
 */
function batchPipeline(
  ctx: Ctx,
  dir: string,
  count: (name: string, r: { rows: number; skipped: number } | undefined) => void,
  overlap: boolean
): BatchPipeline {
  let staged: Promise<void> = Promise.resolve()
  let done: Promise<void> = Promise.resolve()
  let failure: { err: unknown } | undefined
  return {
    async add(list) {
      await staged // one stage at a time, in order
      if (failure !== undefined) return // drain throws it
      const before = done
      let markStaged!: () => void
      staged = new Promise((resolve) => (markStaged = resolve))
      const gate: BatchGate = {
        abandoned: () => failure !== undefined,
        fail: (err) => (failure ??= { err })
      }
      done = importBatch(ctx, dir, list, markStaged, gate).then(
        (out) => {
          for (const [name, r] of out) count(name, r)
        },
        (err: unknown) => {
          markStaged()
          failure ??= { err }
        }
      )
      await (overlap ? before : done)
    },
    async drain() {
      await done
      if (failure !== undefined) throw failure.err
    }
  }
}

/**
 * Imports whole files in one transaction with their ledger rows, DuckDB reading the CSV itself
 * (engine/stats/import-sql.ts): one `read_csv` of the list, so a batch of small files pays the fixed
 * cost of an import once. The files are read into a stage on a connection of their own (outside the
 * write queue: `staged` is called once the write is queued), then written on that connection in the
 * write queue (`StatsDb.writeOn`). Files another importer took in meanwhile are left out
 * (`undefined`); once a batch's write has failed (`gate`), the writes queued behind it write nothing.
 */
async function importBatch(
  ctx: Ctx,
  dir: string,
  list: ReadonlyArray<{ name: string; size: number }>,
  staged: () => void,
  gate: BatchGate
): Promise<BatchOutcome> {
  const files: BatchFile[] = []
  try {
    for (const f of list) {
      const file = await prepareFile(ctx, dir, f.name, f.size)
      if (file !== undefined) files.push(file)
    }
    const read = files.filter((f) => f.end > 0)
    const out = await ctx.db.background(async (c) => {
      try {
        const stage =
          read.length === 0
            ? undefined
            : await stageRows(
                c,
                readCsvSql(
                  read.map((f) => f.source),
                  true
                )
              )
        const write = ctx.db.writeOn(c, async (w): Promise<BatchOutcome> => {
          if (gate.abandoned()) return new Map()
          try {
            return await applyBatch(ctx, w, files, stage)
          } catch (err) {
            gate.fail(err)
            throw err
          }
        })
        staged()
        return await write
      } finally {
        await dropStage(c).catch(() => {}) // the connection is closed next anyway
      }
    })
    if (out.size > 0) ctx.onChunk?.('after-commit', ctx.rowsSoFar)
    for (const f of files) if (out.has(f.name)) await rm(f.path, { force: true }) // applied, or done by another
    return out
  } finally {
    staged()
    for (const f of files) if (f.source !== f.path) await rm(f.source, { force: true })
  }
}

/** The batch's transaction: its ledger check, rows (from the connection's stage), aggregates, counters and ledger rows; commits. */
async function applyBatch(
  ctx: Ctx,
  c: DuckDBConnection,
  files: readonly BatchFile[],
  stage: Stage | undefined
): Promise<BatchOutcome> {
  const out: BatchOutcome = new Map()
  return await transaction(c, async () => {
    const ledger = await progressOfMany(
      c,
      files.map((f) => f.name)
    )
    // Taken in by another importer first (or being continued from an offset): not counted here, and
    // removed only when done.
    for (const [name, p] of ledger) if (p.offset !== 0 || p.done) out.set(name, undefined)
    const todo = files.filter((f) => !out.has(f.name))
    for (const [name, p] of ledger) if (!p.done) out.delete(name)
    const time = ctx.now()
    const chunk = (await metaGet(c, 'chunk')) + 1
    let seq = await metaGet(c, 'seq')
    const kept = retentionOf(ctx.db)
    const window = {
      keepDay: ctx.time.aggregateRetentionStart(time, kept.months),
      keepRaw: time - kept.rawMs,
      seq,
      chunk
    }
    // Files another importer took in since the read: their rows leave the stage (nothing to write when none is left).
    const sources = todo.map((f) => f.source)
    const r =
      stage === undefined || todo.length === 0
        ? undefined
        : await applyStage(c, ctx.time, await keepSources(c, stage, sources), window)
    seq = r?.seq ?? seq
    await metaPutMany(c, [
      ['seq', seq],
      ['chunk', chunk]
    ])
    const records: Array<[string, ImportProgress]> = todo.map((f) => {
      const n = r?.files.get(f.source) ?? { rows: 0, skipped: 0 }
      out.set(f.name, { rows: n.rows, skipped: n.skipped + f.cut })
      ctx.rowsSoFar += n.rows
      return [f.name, { offset: f.size, rows: n.rows, skipped: n.skipped + f.cut, done: true, updated: time }]
    })
    await putProgressMany(c, records)
    ctx.onChunk?.('in-txn', ctx.rowsSoFar)
    return out
  })
}

export interface StatsImporter {
  readonly statsDb: StatsDb
  /** Imports now (after any import already running); the timer keeps its schedule. */
  importNow(): Promise<ImportResult>
  /** Stops the timer, waits for a running import, and closes the store if it opened it. */
  close(): Promise<void>
  /** The timer's last import (when, and what it did or why it failed), for /health and `filterd status`. */
  readonly last: LastImport | undefined
}

export type LastImport = { at: string; files: number; rows: number } | { at: string; error: string }

export interface StatsImporterOptions extends ImportOptions {
  /** A store the api role already opened for the report routes; otherwise `stats.db` is opened. */
  statsDb?: StatsDb
  /** Default `stats.import-interval` seconds; 0 = no timer. */
  intervalMs?: number
}

/**
 * Starts the api role's import timer (`stats.import-interval`, 2 seconds by default, so a query
 * reaches the reports within seconds; the first import runs at once). Imports never overlap; failures are logged and retried on the next tick.
 *
 * @example
 * ```ts
 * const statsDb = openStatsDb(config.stats.db, statsDbOptions(config))
 * const api = createApiServer({ ..., stats: { db: statsDb, timezone: config.stats.timezone } })
 * const importer = startStatsImporter(config, logger, { statsDb })
 * // on shutdown: await importer.close(); await statsDb.close()
 * ```
 */
export function startStatsImporter(
  config: Readonly<Config>,
  logger: Logger,
  options: StatsImporterOptions = {}
): StatsImporter {
  const owned = options.statsDb === undefined
  const statsDb = options.statsDb ?? openStatsDb(config.stats.db, statsDbOptions(config))
  const importOptions: ImportOptions = {
    parquetDir: config.stats['parquet-dir'],
    warned: new Set(),
    ...options,
    logger
  }
  let last: LastImport | undefined
  const intervalMs = options.intervalMs ?? config.stats['import-interval'] * 1000
  // A closed file wakes the import at once (./import-trigger.ts); the interval is the backstop. The watch
  // starts with the first run and is tried again on each until the DNS role has made the folder.
  let watcher: ClosedFileWatch | undefined
  const boost = liveBoost(statsDb, logger)
  const boostAfterMs = config.stats['live-boost-after'] * 1000
  const job = startPeriodicJob(
    async () => {
      if (intervalMs > 0) watcher ??= watchClosedFiles(config.stats.dir, () => job.wake(), logger)
      const endBoost = armLiveBoost(config.stats.dir, boostAfterMs, boost)
      try {
        return await importClosedFiles(statsDb, config.stats.dir, config.stats.timezone, importOptions)
      } finally {
        endBoost()
      }
    },
    intervalMs,
    {
      done(r) {
        last = { at: new Date().toISOString(), files: r.files, rows: r.rows }
        if (r.files > 0 || r.pruned > 0) logger.info(r, 'statistics imported')
      },
      failed(err) {
        last = { at: new Date().toISOString(), error: (err as Error).message }
        logger.error({ err }, 'statistics import failed')
      }
    }
  )
  return {
    statsDb,
    importNow: job.runNow,
    get last() {
      return last
    },
    async close() {
      await job.close()
      watcher?.close()
      if (owned) await statsDb.close()
    }
  }
}

/** The lift of a late live file's import (./live-boost.ts), with the kernel's refusal told once. */
function liveBoost(statsDb: StatsDb, logger: Logger): (on: boolean) => void {
  return (on) => {
    const refused = statsDb.boost(on)
    if (on) logger.debug('statistics: a live file waited past stats.live-boost-after; its import runs at nice 0')
    if (refused !== undefined)
      logger.warn(
        { err: refused },
        'statistics: cannot lift the import of a late live file to nice 0 (stats.live-boost-after needs CAP_SYS_NICE or LimitNICE=20); it stays in the background'
      )
  }
}

/** DuckDB's bounds from the config (stats.duckdb-memory, stats.duckdb-threads). */
export function statsDbOptions(config: Readonly<Config>): {
  memoryLimit: string
  threads: number
  retention: StatsRetention
} {
  return {
    memoryLimit: config.stats['duckdb-memory'],
    threads: config.stats['duckdb-threads'],
    retention: { months: config.stats['retention-months'], rawMs: config.stats['raw-retention-hours'] * HOUR_MS }
  }
}
