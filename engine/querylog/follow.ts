/**
 * Follows the DNS role's current statistics files (`stats.dir/current-*.csv.part`, engine/querylog/files.ts) as
 * they grow: the source of the operator console's live query log. Nothing is added to the DNS hot path; the
 * writer flushes its rows within a second, and this reads them from the file.
 *
 * - The folder is listed when a file is created or renamed in it (inotify, through the watch the importer
 *   uses too), and every `pollMs` for the appends and as the backstop of the watch; each `.part` file is held open by descriptor and read from the byte
 *   after the last complete record. A rotation renames the file under us: the descriptor still reads it, so
 *   its last rows are read to the end and then it is closed; the next `.part` file is read from its start.
 *   Files of every DNS process (a cluster's children) are followed side by side.
 * - A file can be opened and closed between two polls: the writer opens it at the first row after a quiet
 *   spell, and its rotation timer may fire a moment later. The watch opens a new `.part` file as it is
 *   created, and a descriptor held reads the rows even after the importer, woken by the same rename,
 *   has deleted the closed file. Where the watch is late or missing, every closed file that appears
 *   after the first poll is read too, unless its inode is one this follower followed (those rows were
 *   read through the descriptor). Without both, a lone query after a pause sometimes never reached the
 *   live log.
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
import { CLOSED_RE, PART_RE } from './files.js'
import { watchFileNames, type ClosedFileWatch } from './import-trigger.js'

/** New closed files read in one poll at most; the rest are reported as skipped. */
const MAX_NEW_CLOSED = 16
/** Polls a let-go file's inode is remembered for (its closed name may show up a poll late). */
const LET_GO_POLLS = 4

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
  readonly ino: number
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
  /** Closed file names present at the last poll (read or not): a name not here is new. */
  #closedSeen = new Set<string>()
  /** Inodes of followed files let go, with the poll number they were let go at. */
  readonly #letGo = new Map<number, number>()
  #polls = 0
  #backlog: StatsRow[] = []
  #timer: NodeJS.Timeout | undefined = undefined
  #watch: ClosedFileWatch | undefined = undefined
  #wakeQueued = false
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

  /** The `.part` files held open now, by name. */
  get following(): string[] {
    return [...this.#files.keys()]
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
    this.#watch?.close()
    this.#watch = undefined
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

  // A file created or renamed: one poll soon, however many events came meanwhile.
  #wake(): void {
    if (this.#wakeQueued || this.#timer === undefined) return
    this.#wakeQueued = true
    this.#polling = this.#polling
      .then(() => {
        this.#wakeQueued = false
        if (this.#timer !== undefined) this.#poll()
      })
      .catch(() => {})
  }

  #poll(): void {
    // Tried on each poll until the DNS role has made the folder; without a watch, polling alone.
    if (this.#timer !== undefined)
      this.#watch ??= watchFileNames(
        this.#dir,
        (event, name) => event === 'rename' && (PART_RE.test(name) || CLOSED_RE.test(name)),
        () => {
          this.#wake()
        },
        undefined,
        'the live log polls it alone'
      )
    let listed: string[]
    try {
      listed = readdirSync(this.#dir)
    } catch {
      listed = []
    }
    const names = listed.filter((n) => PART_RE.test(n)).sort()
    const present = new Set(names)
    const first = !this.#started
    this.#started = true
    this.#polls++
    // A restart reads the files' tails again: the backlog is rebuilt from them, not added to.
    if (first) {
      this.#backlog = []
      this.#closedSeen.clear()
      this.#letGo.clear()
    }
    for (const name of names) {
      if (this.#files.has(name)) continue
      let fd: number
      let size: number
      let ino: number
      try {
        fd = openSync(join(this.#dir, name), 'r')
      } catch {
        continue // renamed between readdir and open: read below, or next poll, as a new closed file
      }
      try {
        ;({ size, ino } = fstatSync(fd))
      } catch {
        closeQuietly(fd)
        continue
      }
      const offset = first ? Math.max(0, size - this.#tailBytes) : 0
      this.#files.set(name, { name, fd, ino, offset })
    }
    for (const f of [...this.#files.values()]) {
      // A file renamed away (rotated) is read to its end once more, then let go.
      const gone = !present.has(f.name)
      this.#read(f, first)
      if (gone) {
        this.#files.delete(f.name)
        this.#letGo.set(f.ino, this.#polls)
        closeQuietly(f.fd)
      }
    }
    this.#readNewClosed(
      listed.filter((n) => CLOSED_RE.test(n)),
      first
    )
    for (const [ino, at] of this.#letGo) if (this.#polls - at >= LET_GO_POLLS) this.#letGo.delete(ino)
  }

  /**
   * Reads the closed files that appeared since the last poll and were never followed as `.part` files.
   * On the first poll they are only noted: the files closed before the follower started are the backlog's
   * business (api/live-backlog.ts), not new rows.
   */
  #readNewClosed(closed: readonly string[], first: boolean): void {
    const seen = this.#closedSeen
    this.#closedSeen = new Set(closed)
    if (first) return
    let read = 0
    for (const name of closed) {
      if (seen.has(name)) continue
      let fd: number
      try {
        fd = openSync(join(this.#dir, name), 'r')
      } catch {
        continue // imported and deleted meanwhile: its rows are in the statistics
      }
      try {
        const { ino, size } = fstatSync(fd)
        if (this.#letGo.has(ino) || this.#isFollowed(ino)) continue
        if (read >= MAX_NEW_CLOSED) {
          this.#emitSkipped(size)
          continue
        }
        read++
        this.#read({ name, fd, ino, offset: 0 }, false)
      } catch {
        // gone while read: as above
      } finally {
        closeQuietly(fd)
      }
    }
  }

  #isFollowed(ino: number): boolean {
    for (const f of this.#files.values()) if (f.ino === ino) return true
    return false
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
