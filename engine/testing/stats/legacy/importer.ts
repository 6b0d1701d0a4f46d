/**
 * The importer: loads every closed CSV file of `stats.dir` into the statistics environment exactly
 * once, then prunes what retention no longer keeps.
 *
 * Exactly once: a file is imported in chunks (`CHUNK_ROWS` rows). Each chunk's effects (aggregate
 * increments, raw rows) and the file's progress record (`files[name] = {offset, rows, done}`) are
 * written in one LMDB transaction, which first checks that the recorded offset is the one this
 * chunk starts at. A crash or SIGKILL before the commit leaves neither the rows nor the progress; a
 * crash after it leaves both, and the next run continues from the recorded offset. Two importers
 * running at once (the api role's timer and `filterd stats-import`) cannot both apply a chunk: the
 * second one's check fails inside its own write transaction and it moves on from the other's offset.
 * A file is deleted once its progress says `done`; a leftover done file is deleted on the next run.
 *
 * Chunks keep each write transaction short (the api role serves reports from the same process) and
 * bound the memory an import holds, whatever `stats.max-file-size` is.
 */
import { open, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from '../../../log/index.js'
import { decodeRow, parseRecords } from '../../../querylog/csv.js'
import type { ImportProgress } from '../../../stats/db.js'
import { type DomainValue, type Pair, type RawValue, type LegacyStatsDb } from '../../../stats/legacy/lmdb.js'
import { ALL_USERS, ANONYMOUS_USER, BLOCK_REASONS, CLOSED_RE, recoverStaleParts } from '../../../querylog/files.js'
import { HOUR_MS, RAW_RETENTION_MS, ReportTime } from '../../../stats/time.js'

const CHUNK_ROWS = 20_000
const READ_BYTES = 4 * 1024 * 1024
/** Progress records of finished files are kept as long as aggregates (then the file is long gone). */
const FILES_RETENTION_MS = 100 * 86_400_000
const PRUNE_BATCH = 10_000

export interface ImportOptions {
  /** Clock (ms) for retention; default `Date.now`. */
  now?: () => number
  logger?: Logger
  /** Rows per transaction; default 20,000. */
  chunkRows?: number
  /**
   * Test hook: called inside each chunk's transaction (`'in-txn'`, before the commit) and after it
   * (`'after-commit'`) with the rows this importer has applied so far; unset, nothing.
   */
  onChunk?: (phase: 'in-txn' | 'after-commit', rowsSoFar: number) => void
}

export interface ImportResult {
  /** Files finished by this run. */
  files: number
  rows: number
  skipped: number
  /** Keys removed by retention. */
  pruned: number
}

interface Ctx {
  readonly db: LegacyStatsDb
  readonly time: ReportTime
  readonly now: () => number
  readonly chunkRows: number
  readonly onChunk: ((phase: 'in-txn' | 'after-commit', rowsSoFar: number) => void) | undefined
  rowsSoFar: number
}

/** Imports every closed file in `dir` (oldest name first), then prunes. */
export async function importClosedFiles(
  db: LegacyStatsDb,
  dir: string,
  timeZone: string,
  options: ImportOptions = {}
): Promise<ImportResult> {
  const ctx: Ctx = {
    db,
    time: new ReportTime(timeZone),
    now: options.now ?? Date.now,
    chunkRows: options.chunkRows ?? CHUNK_ROWS,
    onChunk: options.onChunk,
    rowsSoFar: 0
  }
  await recoverStaleParts(dir)
  let names: string[]
  try {
    names = (await readdir(dir)).filter((n) => CLOSED_RE.test(n)).sort()
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') names = []
    else throw err
  }
  const result: ImportResult = { files: 0, rows: 0, skipped: 0, pruned: 0 }
  for (const name of names) {
    const r = await importFile(ctx, dir, name)
    if (r === undefined) continue
    result.files++
    result.rows += r.rows
    result.skipped += r.skipped
    options.logger?.debug({ file: name, rows: r.rows, skipped: r.skipped }, 'statistics file imported')
  }
  result.pruned = await pruneStats(db, timeZone, ctx.now())
  return result
}

/** Imports one closed file from where its progress record says; `undefined` when it was already done. */
async function importFile(ctx: Ctx, dir: string, name: string): Promise<{ rows: number; skipped: number } | undefined> {
  const path = join(dir, name)
  const first = ctx.db.files.get(name)
  if (first?.done === true) {
    await rm(path, { force: true })
    return undefined
  }
  let rows = 0
  let skipped = 0
  let offset = first?.offset ?? 0
  const fh = await open(path, 'r')
  try {
    const size = (await fh.stat()).size
    let buf = Buffer.allocUnsafe(Math.min(READ_BYTES, Math.max(size, 1)))
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, offset)
      const atEof = offset + bytesRead >= size
      const text = buf.toString('latin1', 0, bytesRead)
      const records: string[][] = []
      const end = parseRecords(text, 0, ctx.chunkRows, records)
      if (records.length === 0 && !atEof) {
        buf = Buffer.allocUnsafe(buf.length * 2) // one record longer than the buffer
        continue
      }
      let newOffset = offset + end
      let chunkSkipped = 0
      if (records.length === 0 && newOffset < size) {
        // A crashed writer's half-written last line: nothing after it will ever complete it.
        newOffset = size
        chunkSkipped++
      }
      const done = newOffset >= size
      const applied = await applyChunk(ctx, name, offset, newOffset, done, records, chunkSkipped)
      if (applied.kind === 'moved') {
        // Another importer got there first; continue from its progress.
        if (applied.progress.done) break
        offset = applied.progress.offset
        continue
      }
      rows += applied.rows
      skipped += applied.skipped
      ctx.onChunk?.('after-commit', ctx.rowsSoFar)
      offset = newOffset
      if (done) break
    }
  } finally {
    await fh.close()
  }
  await rm(path, { force: true })
  return { rows, skipped }
}

type ChunkOutcome =
  | { kind: 'applied'; rows: number; skipped: number; progress: ImportProgress }
  | { kind: 'moved'; progress: ImportProgress }

function add(map: Map<string, number[]>, key: string, width: number, i: number): number[] {
  let v = map.get(key)
  if (v === undefined) {
    v = new Array<number>(width).fill(0)
    map.set(key, v)
  }
  v[i]! += 1
  return v
}

async function applyChunk(
  ctx: Ctx,
  name: string,
  from: number,
  to: number,
  done: boolean,
  records: string[][],
  alreadySkipped: number
): Promise<ChunkOutcome> {
  const { db, time } = ctx
  const now = ctx.now()
  const keepDay = time.aggregateRetentionStart(now)
  const keepRaw = now - RAW_RETENTION_MS
  // Sum the chunk in memory first: the transaction then touches each aggregate key once.
  const hours = new Map<string, number[]>()
  const days = new Map<string, number[]>()
  const domains = new Map<string, number[]>()
  const domainCats = new Map<string, number[]>()
  const raws: Array<[string, RawValue]> = []
  let rows = 0
  let skipped = alreadySkipped
  const SEP = '\u0000'
  for (const fields of records) {
    const row = decodeRow(fields)
    if (row === undefined) {
      if (fields[0] !== 'created') skipped++ // the header line is not a row
      continue
    }
    rows++
    const user = row.user === '' ? ANONYMOUS_USER : row.user
    const day = time.dayOf(row.created)
    if (day >= keepDay) {
      const isBlock = BLOCK_REASONS.has(row.reason)
      const hour = Math.floor(row.created / HOUR_MS)
      // Each row counts for its user and for the whole server (ALL_USERS, the console's overview).
      for (const u of [user, ALL_USERS]) {
        const hk = u + SEP + hour
        const dk = u + SEP + day
        const nk = dk + SEP + row.host
        add(hours, hk, 2, 0)
        add(days, dk, 2, 0)
        const dv = add(domains, nk, 3, 0)
        if (isBlock) {
          hours.get(hk)![1]! += 1
          days.get(dk)![1]! += 1
          dv[2]! += 1
        }
        if (row.nxdomain) dv[1]! += 1
        domainCats.set(nk, row.cats)
      }
    }
    if (row.created >= keepRaw) {
      raws.push([
        user,
        [
          row.created,
          row.nxdomain ? 1 : 0,
          row.address,
          row.host,
          row.blockedHost,
          row.reason,
          row.cats,
          row.blockedCats
        ]
      ])
    }
  }
  const outcome = await db.root.transaction((): ChunkOutcome => {
    // Inside a transaction a put applies at once; its promise reports the commit, as the transaction's does.
    const cur = db.files.get(name)
    if ((cur?.offset ?? 0) !== from || cur?.done === true) {
      return { kind: 'moved', progress: cur ?? { offset: 0, rows: 0, skipped: 0, done: false, updated: 0 } }
    }
    for (const [k, v] of hours) {
      const [user, hour] = k.split(SEP) as [string, string]
      const key: [string, number] = [user, Number(hour)]
      const old = db.hour.get(key)
      void db.hour.put(key, old === undefined ? (v as Pair) : [old[0] + v[0]!, old[1] + v[1]!])
    }
    for (const [k, v] of days) {
      const [user, day] = k.split(SEP) as [string, string]
      const key: [string, number] = [user, Number(day)]
      const old = db.day.get(key)
      void db.day.put(key, old === undefined ? (v as Pair) : [old[0] + v[0]!, old[1] + v[1]!])
    }
    for (const [k, v] of domains) {
      const a = k.indexOf(SEP)
      const b = k.indexOf(SEP, a + 1)
      const key: [string, number, string] = [k.slice(0, a), Number(k.slice(a + 1, b)), k.slice(b + 1)]
      const cats = domainCats.get(k) ?? []
      const old = db.domain.get(key)
      const value: DomainValue =
        old === undefined
          ? [v[0]!, v[1]!, v[2]!, cats]
          : [old[0] + v[0]!, old[1] + v[1]!, old[2] + v[2]!, cats.length > 0 ? cats : old[3]]
      void db.domain.put(key, value)
    }
    let seq = db.meta.get('seq') ?? 0
    for (const [user, value] of raws) void db.raw.put([user, value[0], ++seq], value)
    void db.meta.put('seq', seq)
    const progress: ImportProgress = {
      offset: to,
      rows: (cur?.rows ?? 0) + rows,
      skipped: (cur?.skipped ?? 0) + skipped,
      done,
      updated: now
    }
    void db.files.put(name, progress)
    ctx.rowsSoFar += rows
    ctx.onChunk?.('in-txn', ctx.rowsSoFar)
    return { kind: 'applied', rows, skipped, progress }
  })
  return outcome
}

type AnyKey = Array<string | number>

/**
 * Collects keys below `cutoff` in their second element, user by user: one range scan per user
 * instead of a scan of the whole database.
 */
function oldKeys(db: LegacyStatsDb['hour'] | LegacyStatsDb['domain'] | LegacyStatsDb['raw'], cutoff: number): AnyKey[] {
  const out: AnyKey[] = []
  const anyDb = db as unknown as { getKeys(o: { start?: AnyKey; end?: AnyKey; limit?: number }): Iterable<AnyKey> }
  let start: AnyKey | undefined
  for (;;) {
    let user: string | undefined
    for (const k of anyDb.getKeys(start === undefined ? { limit: 1 } : { start, limit: 1 })) user = k[0] as string
    if (user === undefined) break
    for (const k of anyDb.getKeys({ start: [user], end: [user, cutoff] })) out.push(k)
    start = [user, Number.MAX_SAFE_INTEGER]
  }
  return out
}

/** Removes raw rows older than a day, aggregates older than three months, and old progress records. */
export async function pruneStats(db: LegacyStatsDb, timeZone: string, now: number): Promise<number> {
  const time = new ReportTime(timeZone)
  const keepDay = time.aggregateRetentionStart(now)
  const work: Array<[{ remove(k: never): unknown }, AnyKey[]]> = [
    [db.raw, oldKeys(db.raw, now - RAW_RETENTION_MS)],
    // A day of slack on hours: an hour is reported by its local date, which may be a day off UTC's.
    [db.hour, oldKeys(db.hour, (keepDay - 1) * 24)],
    [db.day, oldKeys(db.day, keepDay)],
    [db.domain, oldKeys(db.domain, keepDay)]
  ]
  const oldFiles: string[] = []
  for (const { key, value } of db.files.getRange()) {
    if (value.done && value.updated < now - FILES_RETENTION_MS) oldFiles.push(key)
  }
  work.push([db.files, oldFiles as never])
  let n = 0
  for (const [target, keys] of work) {
    for (let i = 0; i < keys.length; i += PRUNE_BATCH) {
      const batch = keys.slice(i, i + PRUNE_BATCH)
      await db.root.transaction(() => {
        for (const k of batch) target.remove(k as never)
      })
      n += batch.length
    }
  }
  return n
}
