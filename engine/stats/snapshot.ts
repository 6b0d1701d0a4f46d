/**
 * A consistent copy of the statistics store for `filterd backup` (docs/backup.md).
 *
 * DuckDB lets one process open its file; while the api role runs, that process is the api role, so
 * the copy is made by it: `filterd backup` writes a request file into `stats.db`
 * (`snapshot.request`) and the api role, which looks for one every half second, makes the copy into
 * `stats.db/snapshot-<id>/` (its own folder: under systemd the api role may write only its state
 * directory, not the backup's) and answers in `snapshot.<id>.done`; the backup moves the copy into
 * the backup folder. With no role running, the backup opens the store itself and makes the same copy.
 *
 * The copy: on the writer's queue (no import or compaction commits meanwhile), a CHECKPOINT folds
 * the write-ahead log into the file, then the file (and the log, if a report's open transaction kept
 * the checkpoint from running) is copied. Every import committed before the request is in it; an
 * import of a file that the backup also copied as CSV is recorded in the copy's ledger, so a restore
 * imports that file's rows once.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { copyFile, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { Logger } from '../log/index.js'
import { DB_FILE, openStatsDb, type StatsDb } from './db.js'

export const SNAPSHOT_REQUEST = 'snapshot.request'
const POLL_MS = 500
/** A copy no backup took away within this long (a backup killed while waiting) is removed. */
const STALE_MS = 10 * 60_000

interface SnapshotRequest {
  id: string
}
interface SnapshotAnswer {
  ok: boolean
  error?: string
  files?: string[]
}

/** Copies the store into the folder `target` (created); returns the names of the files copied. */
export async function copyStatsDb(db: StatsDb, target: string): Promise<string[]> {
  return await db.write(async (c) => {
    try {
      await c.run('CHECKPOINT')
    } catch {
      /* a report's open transaction: the log is copied with the file */
    }
    mkdirSync(target, { recursive: true })
    const copied = [DB_FILE]
    await copyFile(db.file, join(target, DB_FILE))
    const wal = `${db.file}.wal`
    if (existsSync(wal)) {
      await copyFile(wal, join(target, basename(wal)))
      copied.push(basename(wal))
    }
    return copied
  })
}

/** Answers snapshot requests in `db.path` every half second (the api role, the store's writer). */
export function startSnapshotResponder(db: StatsDb, logger: Logger): { close: () => Promise<void> } {
  const request = join(db.path, SNAPSHOT_REQUEST)
  let running: Promise<void> = Promise.resolve()
  let closed = false
  const answer = async (): Promise<void> => {
    let req: SnapshotRequest
    try {
      req = JSON.parse(await readFile(request, 'utf8')) as SnapshotRequest
    } catch {
      return // none (or half-written: the writer renames it in whole, so this is a leftover)
    }
    await rm(request, { force: true })
    if (typeof req.id !== 'string' || !/^[0-9a-f]{16}$/.test(req.id)) return
    await removeStaleCopies(db.path)
    const target = join(db.path, `snapshot-${req.id}`)
    let out: SnapshotAnswer
    try {
      out = { ok: true, files: await copyStatsDb(db, target) }
      logger.info({ target }, 'statistics store copied for a backup')
    } catch (err) {
      out = { ok: false, error: (err as Error).message }
      logger.error({ err, target }, 'statistics store copy for a backup failed')
    }
    const done = join(db.path, `snapshot.${req.id}.done`)
    await writeFile(`${done}.tmp`, JSON.stringify(out))
    await rename(`${done}.tmp`, done)
  }
  const timer = setInterval(() => {
    if (closed) return
    running = running.then(answer).catch((err: unknown) => {
      logger.error({ err }, 'statistics snapshot request failed')
    })
  }, POLL_MS)
  timer.unref()
  return {
    async close() {
      closed = true
      clearInterval(timer)
      await running
    }
  }
}

async function removeStaleCopies(path: string): Promise<void> {
  for (const name of await readdir(path)) {
    if (!/^snapshot-[0-9a-f]{16}$/.test(name)) continue
    try {
      if (Date.now() - (await stat(join(path, name))).mtimeMs > STALE_MS)
        await rm(join(path, name), { recursive: true, force: true })
    } catch {
      /* taken away meanwhile */
    }
  }
}

/** Asks the store's writer (the api role) for a copy into `target`; rejects after `waitMs` with no answer. */
export async function requestSnapshot(statsDbPath: string, target: string, waitMs: number): Promise<string[]> {
  const id = randomBytes(8).toString('hex')
  const request = join(statsDbPath, SNAPSHOT_REQUEST)
  const done = join(statsDbPath, `snapshot.${id}.done`)
  const staging = join(statsDbPath, `snapshot-${id}`)
  await writeFile(`${request}.${id}.tmp`, JSON.stringify({ id } satisfies SnapshotRequest))
  await rename(`${request}.${id}.tmp`, request)
  const deadline = Date.now() + waitMs
  try {
    while (Date.now() < deadline) {
      let text: string | undefined
      try {
        text = await readFile(done, 'utf8')
      } catch {
        /* not yet */
      }
      if (text !== undefined) {
        const a = JSON.parse(text) as SnapshotAnswer
        if (!a.ok) throw new Error(`the api role could not copy the statistics store: ${a.error ?? 'unknown error'}`)
        const files = a.files ?? []
        mkdirSync(target, { recursive: true })
        for (const f of files) await copyFile(join(staging, basename(f)), join(target, basename(f)))
        return files
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(
      `${statsDbPath} (stats.db) is open by another process, and no api role answered the copy request within ${waitMs} ms`
    )
  } finally {
    await rm(done, { force: true })
    await rm(staging, { recursive: true, force: true })
    await rm(request, { force: true }).catch(() => {})
  }
}

/**
 * A copy of the store at `statsDbPath` into `target`: made here when no process holds the store,
 * by the api role otherwise. `undefined` when there is no store.
 */
export async function snapshotStatsDb(
  statsDbPath: string,
  target: string,
  waitMs: number
): Promise<string[] | undefined> {
  if (!existsSync(join(statsDbPath, DB_FILE))) return undefined
  const db = openStatsDb(statsDbPath, { threads: 1 })
  try {
    await db.ready
  } catch {
    await db.close()
    return await requestSnapshot(statsDbPath, target, waitMs) // the writer holds it
  }
  try {
    return await copyStatsDb(db, target)
  } finally {
    await db.close()
  }
}
