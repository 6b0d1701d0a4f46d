/**
 * Follows the DNS role's current statistics files (`stats.dir/current-*.csv.part`, engine/stats/files.ts) as
 * they grow: the source of the operator console's live query log. Nothing is added to the DNS hot path; the
 * writer flushes its rows within a second, and this reads them from the file.
 *
 * - Every `pollMs` the folder is listed; each `.part` file is held open by descriptor and read from the byte
 *   after the last complete record. A rotation renames the file under us: the descriptor still reads it, so
 *   its last rows are read to the end and then it is closed; the next `.part` file is read from its start.
 *   Files of every DNS process (a cluster's children) are followed side by side.
 * - Memory is bounded whatever the DNS server does: at most `maxReadBytes` per file per poll, `backlog`
 *   recent rows kept for a client that connects, and a reader that falls more than `maxLagBytes` behind a
 *   file skips ahead (the rows skipped are reported to subscribers as lost, never queued).
 * - Files are read with synchronous calls on the main thread, not on libuv's pool: the api role may run
 *   its pool at nice 19 (`stats.import-priority`, so that statistics work never takes CPU from DNS), and on
 *   a saturated host the live log would then wait for minutes. A poll is a readdir and at most
 *   `maxReadBytes` per file from the page cache: well under a millisecond.
 * - Polling runs only while someone subscribes. On the first subscription the last `tailBytes` of the
 *   current files fill the backlog, so a new client sees recent rows at once.
 */
import { closeSync, fstatSync, openSync, readSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { decodeRow, parseRecords, type StatsRow } from './csv.js'
import { PART_RE } from './files.js'

export interface FollowerOptions {
  /** Default 250 ms. */
  pollMs?: number
  /** Recent rows kept for new subscribers; default 1000. */
  backlog?: number
  /** Bytes read per file per poll at most; default 1 MiB. */
  maxReadBytes?: number
  /** A file whose unread part grows past this is skipped ahead to its last `maxReadBytes`; default 8 MiB. */
  maxLagBytes?: number
  /** Bytes read from the end of the current files on start, for the backlog; default 256 KiB. */
  tailBytes?: number
}

export interface FollowerEvents {
  /** Rows in file order (per DNS process). */
  rows(rows: readonly StatsRow[]): void
  /** The follower could not keep up and skipped about this many bytes of rows. */
  skipped(bytes: number): void
}

interface Followed {
  readonly name: string
  readonly fd: number
  offset: number
}

export class QueryLogFollower {
  readonly #dir: string
  readonly #pollMs: number
  readonly #backlogSize: number
  readonly #maxRead: number
  readonly #maxLag: number
  readonly #tailBytes: number
  readonly #subs = new Set<FollowerEvents>()
  readonly #files = new Map<string, Followed>()
  #backlog: StatsRow[] = []
  #timer: NodeJS.Timeout | undefined = undefined
  #polling: Promise<void> = Promise.resolve()
  #started = false
  #buf: Buffer

  constructor(dir: string, options: FollowerOptions = {}) {
    this.#dir = dir
    this.#pollMs = options.pollMs ?? 250
    this.#backlogSize = options.backlog ?? 1000
    this.#maxRead = options.maxReadBytes ?? 1024 * 1024
    this.#maxLag = options.maxLagBytes ?? 8 * 1024 * 1024
    this.#tailBytes = options.tailBytes ?? 256 * 1024
    this.#buf = Buffer.allocUnsafe(this.#maxRead)
  }

  /** The recent rows, oldest first (at most `backlog`). */
  recent(): readonly StatsRow[] {
    return this.#backlog
  }

  get subscribers(): number {
    return this.#subs.size
  }

  /**
   * Subscribes; polling starts with the first subscriber. Resolves once the backlog holds the rows present
   * when it was called (so `recent()` is current). The returned function unsubscribes.
   */
  async subscribe(events: FollowerEvents): Promise<() => void> {
    this.#subs.add(events)
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => {
        this.#tick()
      }, this.#pollMs)
      this.#timer.unref()
      this.#tick()
    }
    await this.#polling
    return () => {
      this.#subs.delete(events)
      if (this.#subs.size === 0) void this.stop()
    }
  }

  /** Stops polling and closes every file (also when subscribers remain: shutdown). */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#polling
    for (const f of this.#files.values()) closeQuietly(f.fd)
    this.#files.clear()
    this.#started = false
  }

  /** One poll now (tests); waits for it. */
  async pollNow(): Promise<void> {
    this.#tick()
    await this.#polling
  }

  #tick(): void {
    // One poll at a time; a slow disk makes polls rarer, never overlapping.
    this.#polling = this.#polling.then(() => this.#poll()).catch(() => {})
  }

  #poll(): void {
    let names: string[]
    try {
      names = readdirSync(this.#dir)
        .filter((n) => PART_RE.test(n))
        .sort()
    } catch {
      names = []
    }
    const present = new Set(names)
    const first = !this.#started
    this.#started = true
    // A restart reads the files' tails again: the backlog is rebuilt from them, not added to.
    if (first) this.#backlog = []
    for (const name of names) {
      if (this.#files.has(name)) continue
      let fd: number
      try {
        fd = openSync(join(this.#dir, name), 'r')
      } catch {
        continue // renamed between readdir and open: its rows go to the importer, not to the live log
      }
      const offset = first ? Math.max(0, fstatSync(fd).size - this.#tailBytes) : 0
      this.#files.set(name, { name, fd, offset })
    }
    for (const f of [...this.#files.values()]) {
      // A file renamed away (rotated) is read to its end once more, then let go.
      const gone = !present.has(f.name)
      this.#read(f, first)
      if (gone) {
        this.#files.delete(f.name)
        closeQuietly(f.fd)
      }
    }
  }

  #read(f: Followed, resync: boolean): void {
    let size: number
    try {
      size = fstatSync(f.fd).size
    } catch {
      return
    }
    if (size - f.offset > this.#maxLag) {
      const skippedTo = size - this.#maxRead
      this.#emitSkipped(skippedTo - f.offset)
      f.offset = skippedTo
      resync = true
    }
    if (size <= f.offset) return
    const bytesRead = readSync(f.fd, this.#buf, 0, Math.min(this.#maxRead, size - f.offset), f.offset)
    let text = this.#buf.toString('latin1', 0, bytesRead)
    let start = 0
    if (resync && f.offset > 0) {
      // Started in the middle of a record: begin after the next line break.
      const nl = text.indexOf('\n')
      if (nl < 0) return
      start = nl + 1
    }
    const records: string[][] = []
    const end = parseRecords(text, start, Number.MAX_SAFE_INTEGER, records)
    text = ''
    // A full read without one complete record is not a record at all (no row is that long): skip it.
    f.offset += records.length === 0 && bytesRead === this.#maxRead ? bytesRead : end
    const rows: StatsRow[] = []
    for (const r of records) {
      const row = decodeRow(r)
      if (row !== undefined) rows.push(row)
    }
    if (rows.length === 0) return
    const b = this.#backlog
    for (const r of rows) b.push(r)
    if (b.length > this.#backlogSize) this.#backlog = b.slice(b.length - this.#backlogSize)
    for (const s of this.#subs) s.rows(rows)
  }

  #emitSkipped(bytes: number): void {
    for (const s of this.#subs) s.skipped(bytes)
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd)
  } catch {
    // already closed
  }
}
