/**
 * The statistics directory (`stats.dir`) and the protocol its writers and importers share.
 *
 *   current-<pid>-<openedAtMs>.csv.part   the file one DNS process is appending to
 *   queries-<UTC stamp>-<pid>-<seq>.csv   a closed file, ready for the importer (renamed atomically)
 *   rotate.request                        "close your current file": holds a time in ms
 *
 * The importer only ever reads closed files, so a half-written row is never imported. A writer
 * closes its file every `stats.rotate` seconds, when it reaches `stats.max-file-size`, on
 * `rotateNow()` (SIGUSR1 in the DNS role), and when it sees a `rotate.request` newer than the time
 * its current file was opened (it checks once a second). The time in the `.part` name lets
 * `filterd stats-import` wait until every writer has closed what it had at the time of the request,
 * without knowing the processes: files of a cluster's children are found by name. A `.part` file
 * whose process is gone (a crash) is renamed to a closed name by the next writer or importer; its
 * last, possibly half-written, line is skipped by the importer.
 */
import { readdir, rename, writeFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { join } from 'node:path'

/**
 * The user name under which statistics of addresses that belong to no user are kept. User ids
 * match [A-Za-z0-9_-]{1,32}, so no real user can take it. In a URL: `/users/%2Aanonymous%2A/stat/…`
 * (the asterisks may also be sent unencoded).
 */
export const ANONYMOUS_USER = '*anonymous*'

/**
 * The name under which the importer also keeps the whole server's totals (hour, day and domain
 * aggregates, no raw rows): the operator console's overview. Like ANONYMOUS_USER, no user id can take it.
 */
export const ALL_USERS = '*all*'

/** Policy reasons counted as Blocks (the answer was the block page). */
export const BLOCK_REASONS: ReadonlySet<string> = new Set([
  'global-blacklist',
  'global-allow-only',
  'user-blacklist',
  'user-allow-only',
  'category',
  // An RPZ feed's rewrite (a passthru is no verdict of the feed's: the user's steps decide it).
  'rpz',
  'schedule-blacklist',
  'schedule-allow-only',
  'schedule-category'
])

export const CONTROL_FILE = 'rotate.request'
export const PART_RE = /^current-(\d+)-(\d+)\.csv\.part$/
export const CLOSED_RE = /^queries-(\d{8}T\d{9}Z)-(\d+)-([0-9a-z]+)\.csv$/

/** `20240131T235959123Z`: sortable, no characters that need quoting in a shell. */
export function fileStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:.]/g, '')
}

export function partName(pid: number, openedAt: number): string {
  return `current-${pid}-${openedAt}.csv.part`
}

export function closedName(closedAt: number, pid: number, seq: string): string {
  return `queries-${fileStamp(closedAt)}-${pid}-${seq}.csv`
}

/** The close time (ms) that a closed file's name carries (`queries-20240131T235959123Z-...`). */
export function closedAtOf(name: string): number | undefined {
  const m = CLOSED_RE.exec(name)
  if (m === null) return undefined
  const s = m[1]!
  return Date.UTC(
    +s.slice(0, 4),
    +s.slice(4, 6) - 1,
    +s.slice(6, 8),
    +s.slice(9, 11),
    +s.slice(11, 13),
    +s.slice(13, 15),
    +s.slice(15, 18)
  )
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'
  }
}

/**
 * Renames `.part` files left by processes that are gone to closed names, so they get imported.
 * `ownPid` marks the caller's pid as gone too: a writer calls this before it opens its first file,
 * when any file bearing its own pid is a previous process's (containers reuse pids).
 */
export async function recoverStaleParts(dir: string, ownPid?: number): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return []
  }
  const out: string[] = []
  for (const name of names) {
    const m = PART_RE.exec(name)
    if (m === null) continue
    const pid = Number(m[1])
    if (pid !== ownPid && isAlive(pid)) continue
    const target = closedName(Number(m[2]), pid, 'r' + m[2])
    try {
      await rename(join(dir, name), join(dir, target))
      out.push(target)
    } catch {
      // Another importer or writer recovered it first.
    }
  }
  return out
}

/** Writes the rotation request; returns its time. */
export async function writeRotationRequest(dir: string, now = Date.now()): Promise<number> {
  const tmp = join(dir, `${CONTROL_FILE}.${process.pid}.tmp`)
  await writeFile(tmp, `${now}\n`)
  await rename(tmp, join(dir, CONTROL_FILE))
  return now
}

/** The `.part` files opened at or before `time`, i.e. those a rotation request at `time` still waits for. */
export async function partsOpenedBy(dir: string, time: number): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return []
  }
  return names.filter((n) => {
    const m = PART_RE.exec(n)
    return m !== null && Number(m[2]) <= time && isAlive(Number(m[1]))
  })
}

/**
 * Asks the DNS writers to close their current files (a rotation request) and waits until they have,
 * for at most `waitMs`. Answers the files still open then (empty when every writer closed its own).
 */
export async function closeCurrentParts(dir: string, waitMs: number): Promise<string[]> {
  const at = await writeRotationRequest(dir)
  const deadline = Date.now() + waitMs
  let open = await partsOpenedBy(dir, at)
  while (open.length > 0 && Date.now() < deadline) {
    await sleep(50)
    open = await partsOpenedBy(dir, at)
  }
  return open
}
