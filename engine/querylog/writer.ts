/**
 * The DNS role's statistics writer: one CSV row per query (engine/querylog/csv.ts), appended to an
 * in-memory chunk on the packet path and written to disk asynchronously.
 *
 * Trade-offs:
 * - `write()` encodes the row's bytes straight into a 64 KiB chunk (no string per row, so nothing
 *   per query is left for the garbage collector); no promise, no syscall. A flush runs on the next
 *   tick once `FLUSH_BYTES` are pending, and once a second otherwise.
 * - Memory is capped: rows waiting for the disk (pending plus the write in flight) may hold
 *   `maxPendingBytes` (8 MiB, about 80,000 rows). Past that, rows are dropped and counted in
 *   `droppedRows` instead of queued without bound: a full or stalled disk costs statistics, never
 *   DNS answers or memory. A failed write drops its rows the same way and logs once per minute.
 *   Every row is counted once, written or dropped: a write a full disk takes only part of is cut
 *   back after its last whole row (the rest count as dropped), and a file whose header the disk
 *   refused is removed, so a long outage leaves at most the one open `.part` file per process.
 * - Flushes and rotations run one at a time on a promise chain, so a rotation closes the file
 *   after every row accepted before it, and rows accepted during it go to the next file.
 * - The file is created on the first row after a rotation: an idle server leaves no empty files.
 */
import { open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../config/index.js'
import type { Logger } from '../log/index.js'
import type { QueryLogRecord } from './index.js'
import { CSV_HEADER, encodeRow, rowBound } from './csv.js'
import { CONTROL_FILE, closedName, partName, recoverStaleParts } from './files.js'

/** The sink the DNS server is given (structurally an engine/querylog `QueryLogSink`). */
export interface CsvQueryLog {
  readonly enabled: boolean
  write(rec: QueryLogRecord): void
  /**
   * Writes every row accepted so far, closes the current file and renames it to its closed name.
   * Resolves with the closed file's path, or `undefined` when there was no row to close.
   */
  rotateNow(): Promise<string | undefined>
  /** Writes every row accepted so far to the current file (no rotation). */
  flush(): Promise<void>
  /** Rows dropped since start: the pending cap was reached or the disk refused a write. */
  readonly droppedRows: number
  /** Rows handed to the disk since start. */
  readonly writtenRows: number
  /** Flushes, closes the current file (renamed like a rotation) and stops the timers. */
  close(): Promise<void>
}

/** An open statistics file, as the writer uses it. */
export interface CsvFile {
  /** Appends `data`; resolves with the bytes the disk took, which a full disk makes fewer than asked. */
  write(data: Buffer): Promise<number>
  /** Cuts the file to `size` bytes (drops a row a full disk cut short). */
  truncate(size: number): Promise<void>
  close(): Promise<void>
}

/** The file operations the writer uses; tests inject a stalled or failing disk. */
export interface CsvFileIo {
  open(path: string): Promise<CsvFile>
  rename(from: string, to: string): Promise<void>
  unlink(path: string): Promise<void>
}

export interface CsvQueryLogOptions {
  /** Clock (ms); default `Date.now`. */
  now?: () => number
  io?: CsvFileIo
  /** Default 8 MiB. */
  maxPendingBytes?: number
  /** Default the process id; names the files. */
  pid?: number
  /** Default 1000 ms; 0 disables the periodic flush (tests call rotateNow). */
  flushIntervalMs?: number
  /** How often the rotation request file is checked; default 1000 ms, 0 = never. */
  controlPollMs?: number
}

const FLUSH_BYTES = 64 * 1024
/** A chunk rows are encoded into; a row larger than this gets a chunk of its own size. */
const CHUNK_BYTES = 64 * 1024
const MAX_PENDING_BYTES = 8 * 1024 * 1024
const ERROR_LOG_INTERVAL_MS = 60_000

const defaultIo: CsvFileIo = {
  async open(path) {
    const fh: FileHandle = await open(path, 'a')
    return {
      write: async (data: Buffer) => (await fh.write(data)).bytesWritten,
      truncate: (size: number) => fh.truncate(size),
      close: () => fh.close()
    }
  },
  rename,
  unlink
}

const disabledLog: CsvQueryLog = Object.freeze({
  enabled: false,
  write(_rec: QueryLogRecord): void {},
  rotateNow: async (): Promise<string | undefined> => undefined,
  flush: async (): Promise<void> => {},
  droppedRows: 0,
  writtenRows: 0,
  close: async (): Promise<void> => {}
})

/**
 * Creates the CSV statistics sink of one DNS process; `enabled` is false (and nothing is written)
 * when `stats.enabled` is off.
 *
 * @example
 * ```ts
 * const queryLog = createCsvQueryLog(config, logger)
 * process.on('SIGUSR1', () => { void queryLog.rotateNow() })
 * ```
 */
export function createCsvQueryLog(
  config: Readonly<Config>,
  logger: Logger,
  options: CsvQueryLogOptions = {}
): CsvQueryLog {
  if (!config.stats.enabled) return disabledLog
  return new CsvWriter(config, logger, options)
}

/**
 * The same writer as a `QueryLogSinkFactory` (engine/querylog): the DNS role's `querylogModule`
 * can name this module, and each cluster child creates its own writer (its own files).
 */
export function createQueryLogSink(ctx: { readonly config: Readonly<Config>; readonly logger: Logger }): CsvQueryLog {
  return createCsvQueryLog(ctx.config, ctx.logger)
}

class CsvWriter implements CsvQueryLog {
  readonly enabled = true
  droppedRows = 0
  writtenRows = 0
  readonly #dir: string
  readonly #maxFileSize: number
  readonly #maxPending: number
  readonly #now: () => number
  readonly #io: CsvFileIo
  readonly #pid: number
  readonly #logger: Logger
  /** Full chunks waiting for the disk, then `#chunk` up to `#chunkUsed`. */
  #chunks: Buffer[] = []
  #chunk: Buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES)
  #chunkUsed = 0
  /** Bytes in `#chunks` and `#chunk`. */
  #chunkBytes = 0
  #rowsPending = 0
  #inFlightBytes = 0
  #file: Awaited<ReturnType<CsvFileIo['open']>> | null = null
  #filePath = ''
  #openedAt = 0
  #fileBytes = 0
  #seq = 0
  #lock: Promise<unknown>
  #flushQueued = false
  #closed = false
  #lastErrorLog = -Infinity
  /** A short write left part of a row at the end of the current file (its cut failed): close it. */
  #cutRowLeft = false
  readonly #timers: NodeJS.Timeout[] = []

  constructor(config: Readonly<Config>, logger: Logger, options: CsvQueryLogOptions) {
    this.#dir = config.stats.dir
    this.#maxFileSize = config.stats['max-file-size']
    this.#maxPending = options.maxPendingBytes ?? MAX_PENDING_BYTES
    this.#now = options.now ?? Date.now
    this.#io = options.io ?? defaultIo
    this.#pid = options.pid ?? process.pid
    this.#logger = logger
    mkdirSync(this.#dir, { recursive: true })
    // Files a previous process with our pid left behind are closed before we open ours.
    this.#lock = recoverStaleParts(this.#dir, this.#pid).catch(() => [])
    const flushMs = options.flushIntervalMs ?? 1000
    if (flushMs > 0)
      this.#every(flushMs, () => {
        this.#scheduleFlush()
      })
    this.#every(config.stats.rotate * 1000, () => {
      this.rotateNow().catch(() => {})
    })
    const pollMs = options.controlPollMs ?? 1000
    if (pollMs > 0)
      this.#every(pollMs, () => {
        this.#checkRequest().catch(() => {})
      })
  }

  #every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms)
    t.unref()
    this.#timers.push(t)
  }

  write(rec: QueryLogRecord): void {
    if (this.#closed) return
    const clientId = rec.clientId ?? null
    const bound = rowBound(
      rec.address,
      rec.name,
      rec.blockedName,
      rec.reason,
      rec.cats,
      rec.blockedCats,
      rec.user,
      clientId,
      rec.source
    )
    if (this.#chunk.length - this.#chunkUsed < bound) this.#nextChunk(bound)
    const start = this.#chunkUsed
    const end = encodeRow(
      this.#chunk,
      start,
      rec.time,
      rec.nxdomain,
      rec.address,
      rec.name,
      rec.blockedName,
      rec.reason,
      rec.cats,
      rec.blockedCats,
      rec.user,
      clientId,
      rec.source
    )
    const size = end - start
    // Over the cap the row is not kept: its bytes stay past `#chunkUsed`, to be overwritten.
    if (this.#chunkBytes + this.#inFlightBytes + size > this.#maxPending) {
      this.droppedRows++
      return
    }
    this.#chunkUsed = end
    this.#chunkBytes += size
    this.#rowsPending++
    // The first row after a rotation opens the next file at once: `filterd stats-import` finds the
    // rows to wait for by their open `.part` file, so rows must not sit in memory without one.
    if (this.#chunkBytes >= FLUSH_BYTES || this.#file === null) this.#scheduleFlush()
  }

  // The current chunk is full: it joins the queue and a new one (at least `bound` bytes) takes its place.
  #nextChunk(bound: number): void {
    if (this.#chunkUsed > 0) this.#chunks.push(this.#chunk.subarray(0, this.#chunkUsed))
    this.#chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, bound))
    this.#chunkUsed = 0
  }

  rotateNow(): Promise<string | undefined> {
    return this.#run(async () => {
      await this.#flush()
      return await this.#closeFile()
    })
  }

  flush(): Promise<void> {
    return this.#run(() => this.#flush())
  }

  async close(): Promise<void> {
    if (this.#closed) return
    for (const t of this.#timers) clearInterval(t)
    await this.rotateNow()
    this.#closed = true
  }

  #run<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.#lock.then(fn)
    this.#lock = p.catch(() => {})
    return p
  }

  #scheduleFlush(): void {
    if (this.#flushQueued || this.#chunkBytes === 0) return
    this.#flushQueued = true
    this.#run(async () => {
      this.#flushQueued = false
      await this.#flush()
    }).catch(() => {})
  }

  async #checkRequest(): Promise<void> {
    if (this.#file === null && this.#chunkBytes === 0) return
    let requested: number
    try {
      requested = Number((await readFile(join(this.#dir, CONTROL_FILE), 'utf8')).trim())
    } catch {
      return
    }
    // Rows not yet in a file count as written before the request too.
    if (Number.isFinite(requested) && (this.#file === null || requested >= this.#openedAt)) await this.rotateNow()
  }

  // Runs under the lock.
  async #flush(): Promise<void> {
    if (this.#chunkBytes === 0) return
    this.#nextChunk(0)
    const chunks = this.#chunks
    this.#chunks = []
    const rows = this.#rowsPending
    this.#rowsPending = 0
    this.#inFlightBytes = this.#chunkBytes
    this.#chunkBytes = 0
    let kept = 0
    let failure: unknown = undefined
    try {
      if (this.#file === null) await this.#openFile()
      const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) // chunks holds at least the last one
      ;({ rows: kept, err: failure } = await this.#append(buf, rows))
    } catch (err) {
      failure = err
    } finally {
      this.#inFlightBytes = 0
    }
    // Every row handed to this flush is counted once: written (whole in the file) or dropped.
    this.writtenRows += kept
    if (failure !== undefined) {
      this.droppedRows += rows - kept
      const now = this.#now()
      if (now - this.#lastErrorLog >= ERROR_LOG_INTERVAL_MS) {
        this.#lastErrorLog = now
        this.#logger.error(
          { err: failure, dropped: this.droppedRows },
          'statistics rows dropped: cannot write the CSV file'
        )
      }
    }
    if (this.#fileBytes >= this.#maxFileSize || this.#cutRowLeft) await this.#closeFile()
  }

  /**
   * Appends `buf` (`rows` whole rows) to the current file; answers how many rows are now whole in it,
   * and the error when not all are. A full disk takes part of a write (a short write), then refuses
   * the rest: the file is cut back after the last whole row it took, so the next write's rows never
   * follow half a row (one damaged line for two rows), and the rows after the cut count as dropped.
   */
  async #append(buf: Buffer, rows: number): Promise<{ rows: number; err: unknown }> {
    const file = this.#file!
    let done = 0
    try {
      while (done < buf.length) {
        const n = await file.write(done === 0 ? buf : buf.subarray(done))
        if (n <= 0) throw new Error('the disk took no byte of the write')
        done += n
      }
      this.#fileBytes += done
      return { rows, err: undefined }
    } catch (err) {
      const whole = wholeRows(buf, done)
      if (whole.end < done) {
        try {
          await file.truncate(this.#fileBytes + whole.end)
        } catch {
          // The cut row stays: the file is closed after this flush, so that row ends it, where the
          // importer skips (and counts) a truncated line; this writer counts it dropped.
          this.#cutRowLeft = true
        }
      }
      this.#fileBytes += whole.end
      return { rows: whole.rows, err }
    }
  }

  async #openFile(): Promise<void> {
    let openedAt = this.#now()
    if (openedAt <= this.#openedAt) openedAt = this.#openedAt + 1 // names stay unique within a process
    const path = join(this.#dir, partName(this.#pid, openedAt))
    const file = await this.#io.open(path)
    const header = Buffer.from(CSV_HEADER)
    try {
      if ((await file.write(header)) !== header.length) throw new Error('the disk took part of the CSV header')
    } catch (err) {
      // A full disk creates the file and refuses its header: remove it, or every failed flush of a
      // long outage would leave one more empty `.part` file behind (hundreds a second).
      await file.close().catch(() => {})
      await this.#io.unlink(path).catch(() => {})
      throw err
    }
    this.#file = file
    this.#filePath = path
    this.#openedAt = openedAt
    this.#fileBytes = header.length
  }

  // Runs under the lock.
  async #closeFile(): Promise<string | undefined> {
    const file = this.#file
    if (file === null) return undefined
    this.#file = null
    this.#cutRowLeft = false
    const seq = (this.#seq++).toString(36)
    const target = join(this.#dir, closedName(this.#now(), this.#pid, seq))
    try {
      await file.close()
      await this.#io.rename(this.#filePath, target)
      return target
    } catch (err) {
      this.#logger.error({ err, file: this.#filePath }, 'cannot close the statistics file')
      return undefined
    }
  }
}

/**
 * The whole rows among the first `len` bytes of `buf` (CSV rows, each ending in a line feed outside
 * quotes): how many, and the offset just after the last one.
 */
function wholeRows(buf: Buffer, len: number): { rows: number; end: number } {
  let rows = 0
  let end = 0
  let quoted = false
  for (let i = 0; i < len; i++) {
    const c = buf[i]! // i < len <= buf.length
    if (c === 0x22) quoted = !quoted
    else if (c === 0x0a && !quoted) {
      rows++
      end = i + 1
    }
  }
  return { rows, end }
}
