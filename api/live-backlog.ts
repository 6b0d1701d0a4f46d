/**
 * The live query log's backlog (api/live-log.ts): the newest rows, in time order, that a client gets
 * before the rows as they come.
 *
 * Two things make the follower's own order unfit for it. Each DNS process (`proxy.processes`) writes its
 * own file and the follower reads one file after the other, so rows arrive in blocks, one per process;
 * `Backlog` merges every block into its place by time. And the follower reads only the current files: right
 * after a rotation they hold a few rows, so on start the backlog also reads the files closed in the last
 * minutes that the importer has not taken yet (`readClosedTails`).
 */
import { closeSync, fstatSync, openSync, readSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { decodeRow, parseRecords, type StatsRow, CLOSED_RE } from '../engine/querylog/index.js'
/** Closed files read on start at most (newest first): bounds the work whatever the folder holds. */
const MAX_CLOSED_FILES = 64

function byTime(a: StatsRow, b: StatsRow): number {
  return a.created - b.created
}

function sortedByTime(rows: readonly StatsRow[]): boolean {
  for (let i = 1; i < rows.length; i++) if (rows[i - 1]!.created > rows[i]!.created) return false
  return true
}

/** The newest `size` rows seen, oldest first; rows of equal time keep the order they came in. */
export class Backlog {
  readonly #size: number
  #rows: StatsRow[] = []

  constructor(size: number) {
    this.#size = size
  }

  get rows(): readonly StatsRow[] {
    return this.#rows
  }

  clear(): void {
    this.#rows = []
  }

  add(rows: readonly StatsRow[]): void {
    if (rows.length === 0) return
    const batch = sortedByTime(rows) ? rows : [...rows].sort(byTime)
    const b = this.#rows
    // Only the rows newer than the batch's first need merging: find where they start.
    let lo = 0
    let hi = b.length
    const first = batch[0]!.created
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (b[mid]!.created <= first) lo = mid + 1
      else hi = mid
    }
    const later = b.splice(lo)
    let i = 0
    let j = 0
    while (i < later.length && j < batch.length)
      b.push(later[i]!.created <= batch[j]!.created ? later[i++]! : batch[j++]!)
    while (i < later.length) b.push(later[i++]!)
    while (j < batch.length) b.push(batch[j++]!)
    if (b.length > this.#size) this.#rows = b.slice(b.length - this.#size)
  }
}

/** `20240131T235959123Z` (engine/querylog/files.ts fileStamp) as ms. */
function stampMs(stamp: string): number {
  const n = (from: number, len: number): number => Number(stamp.slice(from, from + len))
  return Date.UTC(n(0, 4), n(4, 2) - 1, n(6, 2), n(9, 2), n(11, 2), n(13, 2), n(15, 3))
}

/**
 * The last rows (at most `tailBytes` of each file) of the closed statistics files in `dir` closed at
 * `since` or later, in no particular order. A file the importer deletes while it is read is left out.
 * Read on the main thread, as the follower reads (engine/querylog/follow.ts): libuv's pool may be at nice 19.
 */
export function readClosedTails(dir: string, since: number, tailBytes: number): StatsRow[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  const recent = names
    .map((name) => ({ name, closedAt: CLOSED_RE.exec(name)?.[1] }))
    .filter((f): f is { name: string; closedAt: string } => f.closedAt !== undefined && stampMs(f.closedAt) >= since)
    .sort((a, b) => (a.closedAt < b.closedAt ? 1 : -1))
    .slice(0, MAX_CLOSED_FILES)
  const rows: StatsRow[] = []
  for (const f of recent) {
    try {
      readTail(join(dir, f.name), tailBytes, rows)
    } catch {
      // imported and deleted meanwhile: its rows are in the statistics, no longer in the folder
    }
  }
  return rows
}

function readTail(path: string, tailBytes: number, out: StatsRow[]): void {
  const fd = openSync(path, 'r')
  try {
    const size = fstatSync(fd).size
    const from = Math.max(0, size - tailBytes)
    const buf = Buffer.allocUnsafe(size - from)
    const bytesRead = readSync(fd, buf, 0, buf.length, from)
    const text = buf.toString('latin1', 0, bytesRead)
    // Started in the middle of a record: begin after the next line break.
    const start = from > 0 ? text.indexOf('\n') + 1 : 0
    if (from > 0 && start === 0) return
    const records: string[][] = []
    parseRecords(text, start, Number.MAX_SAFE_INTEGER, records)
    for (const r of records) {
      const row = decodeRow(r)
      if (row !== undefined) out.push(row)
    }
  } finally {
    closeSync(fd)
  }
}
