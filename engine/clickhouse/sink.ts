/**
 * The sink: one host's closed statistics files (`stats.dir`, written by its dns role) sent to the
 * ClickHouse store in batches (engine/clickhouse/batches.ts), each exactly once.
 *
 * Exactly once from at-least-once: the sink records in a ledger beside the files
 * (`<stats.dir>/clickhouse-sent.json`, written to a temporary name and renamed) the byte offset up to
 * which each file is in ClickHouse. A batch after that offset was perhaps sent by a sink that was killed
 * before it could write the ledger, or whose insert failed with an unknown outcome (a timeout, a
 * connection cut after the request): such a batch is *in doubt*, and before sending it the sink asks
 * ClickHouse how many rows carry its identity. A batch is one part of one partition, so the answer is
 * all of its rows (it is there: skip it) or none (send it). There, it may still be missing from an
 * aggregate (a server killed between the query log and a view): ./views.ts gives it the batch. Every batch after a start, and after a
 * failure, is in doubt; the others are sent without asking. On Replicated tables ClickHouse also
 * drops a repeated block by its checksum (`insert_deduplicate`), which the same bytes make the same.
 *
 * The spool: while ClickHouse does not take rows, closed files stay in `stats.dir`, where the dns role
 * keeps writing them. The sink bounds them at `stats.clickhouse.spool-max-bytes`: past it, the oldest
 * file is deleted, its rows counted as dropped (`filterd_clickhouse_spool_dropped_rows_total`) with
 * one error line. A file sent whole is deleted.
 */
import { readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CLOSED_RE, parseRecords, recoverStaleParts } from '../querylog/index.js'
import { intakeCsvFile, type IntakeLog, type ReportTime } from '../stats/index.js'
import type { ClickHouseStore } from './client.js'
import { readBatch, type Batch } from './batches.js'
import { tablesOf } from './schema.js'
import { sqlString } from './sql.js'
import { completeViews } from './views.js'

export const LEDGER_FILE = 'clickhouse-sent.json'

export interface SinkOptions {
  /** `stats.dir`. */
  dir: string
  /** This host's name in the batches' identities (`common.host-id`, else the host name). */
  host: string
  time: ReportTime
  /** `stats.clickhouse.batch-rows`. */
  batchRows: number
  /** `stats.clickhouse.spool-max-bytes`. */
  spoolMaxBytes: number
  log: IntakeLog & { info(fields: Record<string, unknown>, msg: string): void }
}

/** What the sink has done since it started, and the spool now (the sync role's /metrics). */
export interface SinkCounts {
  rowsSent: number
  batchesSent: number
  /** In-doubt batches found already in ClickHouse (not sent again). */
  batchesFound: number
  /** Aggregate tables given such a batch that a server killed mid-insert had left them without (./views.ts). */
  viewsCompleted: number
  /** Records of sent files that were not rows (headers, damaged records). */
  skipped: number
  sendErrors: number
  spoolFiles: number
  spoolBytes: number
  droppedFiles: number
  droppedRows: number
}

export interface ClickHouseSink {
  readonly counts: SinkCounts
  /** Sends every closed file; returns the rows sent. Throws ENGINE_CLICKHOUSE_UNAVAILABLE when ClickHouse does not take them. */
  sendClosed(): Promise<number>
}

type Ledger = Record<string, number>

async function readLedger(dir: string): Promise<Ledger> {
  try {
    const parsed: unknown = JSON.parse(await readFile(join(dir, LEDGER_FILE), 'utf8'))
    if (typeof parsed !== 'object' || parsed === null) return {}
    const out: Ledger = {}
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'number' && Number.isSafeInteger(v)) out[k] = v
    return out
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw err
  }
}

async function writeLedger(dir: string, ledger: Ledger): Promise<void> {
  const tmp = join(dir, `.${LEDGER_FILE}.tmp`)
  await writeFile(tmp, JSON.stringify(ledger))
  await rename(tmp, join(dir, LEDGER_FILE))
}

async function closedFiles(dir: string): Promise<Array<{ name: string; size: number }>> {
  const names = (await readdir(dir)).filter((n) => CLOSED_RE.test(n)).sort()
  const out: Array<{ name: string; size: number }> = []
  for (const name of names) {
    try {
      out.push({ name, size: (await stat(join(dir, name))).size })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
  }
  return out
}

/** Records in a file (the rows a dropped file held, for the count). */
async function recordsIn(path: string): Promise<number> {
  const text = await readFile(path, 'latin1')
  const out: string[][] = []
  parseRecords(text, 0, Infinity, out)
  return Math.max(0, out.length - 1)
}

/** What a sink's passes share: its store, options and counts, and whether the next batch is in doubt. */
interface SinkState {
  store: ClickHouseStore
  queries: string
  options: SinkOptions
  counts: SinkCounts
  /** Until a pass has sent a batch without failing, the next batch of every file is in doubt. */
  doubt: boolean
  /** Replicated tables wait for the insert to reach the shard: the sink's ledger may then advance. */
  insertSettings: Record<string, string> | undefined
}

/** Rows in ClickHouse under the batch's identity (one partition: one date). */
async function rowsOf(s: SinkState, b: Batch): Promise<number> {
  const [r] = await s.store.rows(
    `SELECT count() AS c FROM ${s.queries} WHERE date = ${sqlString(b.date)} AND batch = ${sqlString(b.id)}`
  )
  return Number(r?.c ?? 0)
}

/** Deletes the oldest files while the spool is over its bound (the newest file always stays). */
async function dropOldest(s: SinkState, files: Array<{ name: string; size: number }>): Promise<void> {
  const { dir, spoolMaxBytes, log } = s.options
  let total = files.reduce((n, f) => n + f.size, 0)
  while (total > spoolMaxBytes && files.length > 1) {
    const f = files.shift()!
    const path = join(dir, f.name)
    const rows = await recordsIn(path).catch(() => 0)
    await rm(path, { force: true })
    total -= f.size
    s.counts.droppedFiles++
    s.counts.droppedRows += rows
    log.error(
      { file: f.name, rows, spoolMaxBytes },
      'ClickHouse spool full: the oldest statistics file is dropped, its rows are lost (stats.clickhouse.spool-max-bytes)'
    )
  }
}

const UNSETTLED_TRIES = 5
const UNSETTLED_WAIT_MS = 1000

/**
 * A batch found in doubt in the query log may be missing from a view (./views.ts): given it there. A view
 * whose count another host's insert under way unsettles is asked again a few times, then told.
 */
async function completeViewsOf(s: SinkState, batch: Batch): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const { repaired, unsettled } = await completeViews(s.store, batch.date, batch.id)
    s.counts.viewsCompleted += repaired.length
    if (repaired.length > 0)
      s.options.log.warn(
        { batch: batch.id, views: repaired },
        'statistics batch found in ClickHouse without some of its aggregates (the server stopped mid-insert): given them'
      )
    if (unsettled.length === 0) return
    if (attempt === UNSETTLED_TRIES) {
      s.options.log.error(
        { batch: batch.id, views: unsettled },
        'statistics batch found in ClickHouse: whether these aggregates count it is unsettled (other inserts on the same keys), left as they are'
      )
      return
    }
    await new Promise((resolve) => setTimeout(resolve, UNSETTLED_WAIT_MS))
  }
}

/** Sends the rest of one file, batch by batch, moving its ledger entry after each; returns the rows sent. */
async function sendFile(s: SinkState, name: string, size: number, ledger: Ledger): Promise<number> {
  const { dir, host, time, batchRows, log } = s.options
  const path = join(dir, name)
  const intake = await intakeCsvFile(path, size, join(dir, `.${name}.clickhouse.tmp`), log)
  if (intake === undefined) return 0 // quarantined
  let sent = 0
  try {
    const text = await readFile(intake.source, 'latin1')
    let pos = ledger[name] ?? 0
    const id = (start: number): string => `${host}/${name}@${start}`
    for (
      let batch = readBatch(text, pos, batchRows, id, time);
      batch !== undefined;
      batch = readBatch(text, pos, batchRows, id, time)
    ) {
      const there = batch.rows.length > 0 && s.doubt ? await rowsOf(s, batch) : 0
      if (there > 0) {
        // Sent before (perhaps with another batch-rows): the rows ClickHouse has are the batch's.
        batch = readBatch(text, pos, there, id, time)!
        s.counts.batchesFound++
        log.info(
          { batch: batch.id, rows: there },
          'statistics batch already in ClickHouse (sent before a restart or a failure): not sent again'
        )
        await completeViewsOf(s, batch)
      } else if (batch.rows.length > 0) {
        await s.store.insert('queries', batch.rows, s.insertSettings)
        s.counts.batchesSent++
        s.counts.rowsSent += batch.rows.length
        sent += batch.rows.length
        s.doubt = false
      }
      s.counts.skipped += batch.skipped
      pos = batch.end
      ledger[name] = pos
      await writeLedger(dir, ledger)
    }
  } finally {
    if (intake.source !== path) await rm(intake.source, { force: true })
  }
  // Whole: the file goes, then its ledger entry (a kill between the two leaves an entry for no file, removed next pass).
  await rm(path, { force: true })
  delete ledger[name]
  await writeLedger(dir, ledger)
  return sent
}

export function createClickHouseSink(store: ClickHouseStore, options: SinkOptions): ClickHouseSink {
  const counts: SinkCounts = {
    rowsSent: 0,
    batchesSent: 0,
    batchesFound: 0,
    viewsCompleted: 0,
    skipped: 0,
    sendErrors: 0,
    spoolFiles: 0,
    spoolBytes: 0,
    droppedFiles: 0,
    droppedRows: 0
  }
  const s: SinkState = {
    store,
    queries: tablesOf(store).queries,
    options,
    counts,
    doubt: true,
    insertSettings: store.settings.cluster === undefined ? undefined : { insert_distributed_sync: '1' }
  }
  return {
    counts,
    async sendClosed() {
      const { dir } = options
      await recoverStaleParts(dir)
      const files = await closedFiles(dir)
      await dropOldest(s, files)
      counts.spoolFiles = files.length
      counts.spoolBytes = files.reduce((n, f) => n + f.size, 0)
      const ledger = await readLedger(dir)
      for (const name of Object.keys(ledger)) if (!files.some((f) => f.name === name)) delete ledger[name]
      let sent = 0
      try {
        for (const f of files) {
          sent += await sendFile(s, f.name, f.size, ledger)
          counts.spoolFiles--
          counts.spoolBytes -= f.size
        }
      } catch (err) {
        // The outcome of the last insert is unknown (a timeout may follow a commit): its batch is in doubt.
        s.doubt = true
        counts.sendErrors++
        throw err
      }
      return sent
    }
  }
}
