/**
 * The sink: one host's closed statistics files (`stats.dir`, written by its dns role) sent to the
 * ClickHouse store in batches (engine/clickhouse/batches.ts), each exactly once.
 *
 * Exactly once from at-least-once: the sink records in a ledger beside the files
 * (`<stats.dir>/clickhouse-sent.json`, written to a temporary name and renamed) the byte offset up to
 * which each file is in ClickHouse. Up to `inFlight` batches are sent beyond it at once (SendWindow),
 * and the offset moves only over those acknowledged in order. A batch after that offset was perhaps
 * sent by a sink that was killed before it could write the ledger, or whose insert failed with an
 * unknown outcome (a timeout, a connection cut after the request): such a batch is *in doubt*, and
 * before sending it the sink asks ClickHouse which batches of the file it has (by identity, one
 * partition). A batch is one part of one partition, so each is there whole (skip it) or not at all
 * (send it, cut before the next one there). There, it may still be missing from an aggregate (a server
 * killed between the query log and a view): ./views.ts gives it the batch. The batches of the next
 * DOUBT_FILES files after a start, and after a failure, are in doubt; the others are sent without asking.
 * On Replicated tables ClickHouse also drops a repeated block by its checksum (`insert_deduplicate`),
 * which the same bytes make the same.
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
import { BATCH_COLUMNS, readBatch, type Batch } from './batches.js'
import { tablesOf } from './schema.js'
import { sqlString, sqlUInt } from './sql.js'
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
  /**
   * Inserts sent at once, beyond the ledger (default 1: the next batch is read and encoded while the
   * server takes the last, so both work at once). More keeps the query log exact, but a server killed
   * with several inserts under way may leave several batches out of a view on the same keys, which
   * ./views.ts cannot tell apart (it repairs one batch missing per key): at most DOUBT_FILES.
   */
  inFlight?: number
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

/** What a sink's passes share: its store, options and counts, and which files are in doubt. */
interface SinkState {
  store: ClickHouseStore
  queries: string
  options: SinkOptions
  counts: SinkCounts
  /**
   * How many of the next files with rows left to send are in doubt. A sink has at most DOUBT_FILES
   * batches sent beyond its ledger on disk, in the order of the files: after a start, and after a
   * failure, what ClickHouse may hold that the ledger does not say lies in the next DOUBT_FILES such files.
   */
  doubtFiles: number
  /** Replicated tables wait for the insert to reach the shard: the sink's ledger may then advance. */
  insertSettings: Record<string, string> | undefined
}

/**
 * The most batches any sink sends beyond its ledger on disk (SinkOptions.inFlight): after a start or a
 * failure, what ClickHouse may hold that the ledger does not say lies in the next DOUBT_FILES files.
 */
const DOUBT_FILES = 3

/** Rows ClickHouse holds of each batch of `name` dated `date`, by the byte offset the batch starts at. */
async function batchesThere(s: SinkState, name: string, date: string): Promise<Map<number, number>> {
  const prefix = `${s.options.host}/${name}@`
  const rows = await s.store.rows(
    `SELECT batch, count() AS c FROM ${s.queries} WHERE date = ${sqlString(date)} ` +
      `AND substring(batch, 1, ${sqlUInt(Buffer.byteLength(prefix))}) = ${sqlString(prefix)} GROUP BY batch`
  )
  const out = new Map<number, number>()
  for (const r of rows) {
    const batch = String(r.batch)
    const start = Number(batch.slice(prefix.length))
    if (batch.startsWith(prefix) && Number.isSafeInteger(start)) out.set(start, Number(r.c))
  }
  return out
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

type Entry =
  | {
      kind: 'batch'
      name: string
      batch: Batch
      state: 'sending' | 'acked' | 'failed'
      /** Settles (never rejects) when the insert has. */
      done: Promise<void>
    }
  | { kind: 'whole'; name: string; path: string }

/**
 * The batches in flight, in the order they were read, and the ledger they move. Inserts complete in any
 * order; a file's ledger entry advances only over the batches before the first one not yet acknowledged
 * (written before more is sent), so what ClickHouse holds beyond the ledger on disk is among the next
 * `inFlight` batches. A failed insert stops the window: no batch is sent after it, those in flight are
 * waited for, and the ledger keeps the prefix acknowledged; the rest is in doubt.
 */
class SendWindow {
  rowsSent = 0
  readonly #queue: Entry[] = []
  #inFlight = 0
  /** The first insert that failed: nothing more is sent. */
  #failure: { error: unknown } | undefined

  constructor(
    private readonly s: SinkState,
    private readonly ledger: Ledger,
    private readonly onWhole: (name: string) => void
  ) {}

  /** Sends `batch` of file `name` (or, `send` false, records it as there), once there is room. */
  async push(name: string, batch: Batch, send: boolean): Promise<void> {
    await this.#collect()
    const most = Math.min(this.s.options.inFlight ?? 1, DOUBT_FILES)
    while (this.#inFlight >= most) await this.#advance()
    const entry: Entry = { kind: 'batch', name, batch, state: 'acked', done: Promise.resolve() }
    if (send && batch.rows > 0) {
      entry.state = 'sending'
      entry.done = this.s.store.insertTabSeparated('queries', BATCH_COLUMNS, batch.tsv, this.s.insertSettings).then(
        () => {
          // Counted when acknowledged (what ClickHouse took), in the ledger once those before it are.
          entry.state = 'acked'
          this.s.counts.batchesSent++
          this.s.counts.rowsSent += batch.rows
          this.rowsSent += batch.rows
        },
        (err: unknown) => {
          entry.state = 'failed'
          this.#failure ??= { error: err }
        }
      )
    }
    this.#queue.push(entry)
    this.#inFlight++
  }

  /** File `name` is read to its end: once its batches are acknowledged it is deleted, then its entry. */
  whole(name: string, path: string): void {
    this.#queue.push({ kind: 'whole', name, path })
  }

  /** Waits for every batch; throws the first failure. */
  async drain(): Promise<void> {
    while (this.#queue.length > 0) await this.#advance()
  }

  /** After a failure: waits for the batches in flight, then records the prefix acknowledged. */
  async settle(): Promise<void> {
    await Promise.all(this.#queue.map((e) => (e.kind === 'batch' ? e.done : Promise.resolve())))
    await this.#collect().catch(() => {})
  }

  async #advance(): Promise<void> {
    const head = this.#queue[0]
    if (head?.kind === 'batch' && head.state === 'sending') await head.done
    await this.#collect()
  }

  /** Moves the ledger over the acknowledged prefix; throws when the batch after it failed. */
  async #collect(): Promise<void> {
    const { counts, options } = this.s
    let moved = false
    for (let head = this.#queue[0]; head !== undefined; head = this.#queue[0]) {
      if (head.kind === 'whole') {
        // Whole: the file goes, then its ledger entry (a kill between the two leaves an entry for no
        // file, removed next pass).
        await rm(head.path, { force: true })
        delete this.ledger[head.name]
        this.onWhole(head.name)
      } else {
        if (head.state !== 'acked') break
        const { batch } = head
        counts.skipped += batch.skipped
        this.ledger[head.name] = batch.end
        this.#inFlight--
      }
      this.#queue.shift()
      moved = true
    }
    if (moved) await writeLedger(options.dir, this.ledger)
    if (this.#failure !== undefined) throw this.#failure.error
  }
}

/**
 * Sends the rest of one file into `window`, batch by batch, pipelined; the window moves the file's ledger
 * entry as batches are acknowledged, and deletes the file once all of it is. In doubt, the batches
 * ClickHouse already has of the file (by identity) are found, not sent, and a batch sent is cut before
 * the next one found, whatever `batch-rows` the sink that sent it had.
 */
async function sendFile(s: SinkState, window: SendWindow, name: string, size: number, ledger: Ledger): Promise<void> {
  const { dir, host, time, batchRows, log } = s.options
  const path = join(dir, name)
  const intake = await intakeCsvFile(path, size, join(dir, `.${name}.clickhouse.tmp`), log)
  if (intake === undefined) return // quarantined
  let text: Buffer
  try {
    text = await readFile(intake.source)
  } finally {
    if (intake.source !== path) await rm(intake.source, { force: true })
  }
  let pos = ledger[name] ?? 0
  const id = (start: number): string => `${host}/${name}@${start}`
  // In doubt: one of the next files with rows to send (one of rows only: the window's files had rows).
  let doubt: boolean | undefined
  const there = new Map<string, Map<number, number>>()
  for (let batch = readBatch(text, pos, batchRows, id, time); batch !== undefined;) {
    if (doubt === undefined && batch.rows > 0) {
      doubt = s.doubtFiles > 0
      if (doubt) s.doubtFiles--
    }
    if (doubt === true && batch.rows > 0) {
      let known = there.get(batch.date)
      if (known === undefined) there.set(batch.date, (known = await batchesThere(s, name, batch.date)))
      const found = known.get(pos)
      if (found !== undefined && found > 0) {
        // Sent before (perhaps with another batch-rows): the rows ClickHouse has are the batch's.
        batch = readBatch(text, pos, found, id, time)!
        s.counts.batchesFound++
        log.info(
          { batch: batch.id, rows: found },
          'statistics batch already in ClickHouse (sent before a restart or a failure): not sent again'
        )
        await completeViewsOf(s, batch)
        await window.push(name, batch, false)
      } else {
        let next = Infinity
        for (const start of known.keys()) if (start > pos && start < next) next = start
        if (next !== Infinity) batch = readBatch(text, pos, batchRows, id, time, next)!
        await window.push(name, batch, true)
      }
    } else await window.push(name, batch, true)
    pos = batch.end
    batch = readBatch(text, pos, batchRows, id, time)
  }
  window.whole(name, path)
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
    doubtFiles: DOUBT_FILES,
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
      const sizes = new Map(files.map((f) => [f.name, f.size]))
      const window = new SendWindow(s, ledger, (name) => {
        counts.spoolFiles--
        counts.spoolBytes -= sizes.get(name) ?? 0
      })
      try {
        for (const f of files) await sendFile(s, window, f.name, f.size, ledger)
        await window.drain()
      } catch (err) {
        // What the window had sent beyond the ledger is in doubt (a timeout may follow a commit), and
        // so is every batch after a failure: the files they are in are looked at next pass.
        await window.settle()
        s.doubtFiles = DOUBT_FILES
        counts.sendErrors++
        throw err
      }
      return window.rowsSent
    }
  }
}
