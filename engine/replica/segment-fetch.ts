/**
 * The api role's half of the segment exchange (engine/replica/segments.ts has the design): every
 * `stats.import-interval`, for each host in `<prefix>stats:hosts`, fetch the segments after this
 * store's mark for that host, in seq order, check each, and apply it with the mark in one transaction.
 * A host whose segment cannot be fetched (down, a bad transfer) is retried on the next run from the
 * same segment; the other hosts go on. Each run also drains the old stats stream (an upgrade from
 * the version that shipped rows through Redis), writes the hourly Parquet files and prunes.
 */
import { createHash } from 'node:crypto'
import { failpoint, stopHere } from '../failpoints.js'
import { mkdir, open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Redis } from 'ioredis'
import type { SegmentApplier, SegmentCounters } from '../stats/index.js'
import {
  startPeriodicJob,
  metaGet,
  metaPut,
  type StatsDb,
  maintainAfterImport,
  applySegments,
  removeStaleSegmentTemps
} from '../stats/index.js'
import type { Logger } from '../log/index.js'
import { whenReady } from './redis.js'
import { segmentFile, type SegmentKeys, type SegmentMeta } from './segments.js'
import { applyStatsStream, type StatsKeys } from './row-stream.js'

export type { SegmentApplier, SegmentCounters } from '../stats/index.js'

const BATCH = 100
/** Segments applied in one transaction, up to this many rows (a bigger segment alone). */
const APPLY_ROWS = 500_000
const FETCH_TIMEOUT_MS = 60_000

export interface ApplierContext {
  readonly redis: Redis
  readonly keys: SegmentKeys
  readonly streamKeys: StatsKeys
  readonly db: StatsDb
  readonly timeZone: string
  /** This api host (its progress in `<prefix>stats:applied`). */
  readonly self: string
  /** Where transfers are written before they are applied (`<stats.db>/incoming`). */
  readonly incoming: string
  readonly counters: SegmentCounters
  readonly logger?: Logger | undefined
}

const markKey = (host: string): string => `segments.applied.${host}`
const gapKey = (host: string): string => `segments.gap.${host}`

/** Test hook (the `replica.segment-fetch.pause` failpoint): stops the process for ever with half a transfer written. */
function pauseMidTransfer(name: string): void {
  if (failpoint('replica.segment-fetch.pause') === '1') stopHere(`PAUSED fetch ${name}`)
}

/** Downloads a segment to a temporary file and checks it against its metadata; returns the path. */
async function fetchSegment(ctx: ApplierContext, name: string, m: SegmentMeta): Promise<string> {
  const file = segmentFile(name.slice(m.host.length + 1))
  const url = `${m.url.replace(/\/$/, '')}/stats/segments/${encodeURIComponent(m.host)}/${encodeURIComponent(file)}`
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${m.token}` },
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS)
  })
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`)
  const body = Buffer.from(await res.arrayBuffer())
  await mkdir(ctx.incoming, { recursive: true })
  const temp = join(ctx.incoming, `.${m.host}--${file}.tmp`)
  const fh = await open(temp, 'w')
  try {
    const half = body.length >> 1
    await fh.write(body, 0, half)
    pauseMidTransfer(name)
    await fh.write(body, half, body.length - half)
    await fh.sync()
  } finally {
    await fh.close()
  }
  ctx.counters.fetched++
  const sha = createHash('sha256').update(body).digest('hex')
  if (body.length !== m.bytes || sha !== m.sha256) {
    await rm(temp, { force: true })
    throw new Error(`${url}: got ${body.length} bytes (sha256 ${sha}), the metadata says ${m.bytes} (${m.sha256})`)
  }
  return temp
}

/** Notes a gap: segments of `host` that retention removed before this store applied them. */
async function recordGap(ctx: ApplierContext, host: string, mark: number, next: number): Promise<void> {
  const missing = next - mark - 1
  ctx.logger?.warn(
    { host, firstMissing: mark + 1, lastMissing: next - 1, segments: missing },
    "statistics gap: segments of this host expired before this host applied them (away longer than stats.segments-retention, or joined late); this host's reports lack their rows. docs/operations-redis.md, 'A statistics gap', says how to restore"
  )
  await ctx.db.write(async (c) => {
    await metaPut(c, gapKey(host), (await metaGet(c, gapKey(host))) + missing)
    await metaPut(c, markKey(host), next - 1)
  })
}

/** Applies `host`'s segments after this store's mark, in order; stops at the first that fails. */
async function applyHost(ctx: ApplierContext, host: string, last: number): Promise<number> {
  let mark = await ctx.db.read((c) => metaGet(c, markKey(host)))
  while (mark < last) {
    const names = await ctx.redis.zrangebyscore(ctx.keys.index(host), mark + 1, '+inf', 'LIMIT', 0, BATCH)
    const metas = names.length === 0 ? [] : await ctx.redis.hmget(ctx.keys.meta, ...names)
    if (names.length > 0 && metas[0] == null) return mark // trimmed between the two reads: the next run
    const first = metas[0] == null ? undefined : (JSON.parse(metas[0]) as SegmentMeta)
    const next = first?.seq ?? last + 1
    if (next > mark + 1) {
      await recordGap(ctx, host, mark, next)
      mark = next - 1
      continue
    }
    const listed: Array<{ name: string; meta: SegmentMeta }> = []
    for (let i = 0; i < names.length; i++) {
      const raw = metas[i]
      if (raw == null) break // trimmed meanwhile: the next run sees the gap
      listed.push({ name: names[i]!, meta: JSON.parse(raw) as SegmentMeta })
    }
    if (listed.length === 0) return mark
    for (let i = 0; i < listed.length;) {
      // Segments up to APPLY_ROWS rows go in one transaction (at least one).
      let j = i + 1
      for (let rows = listed[i]!.meta.rows; j < listed.length && rows + listed[j]!.meta.rows <= APPLY_ROWS; j++)
        rows += listed[j]!.meta.rows
      mark = await fetchAndApply(ctx, host, listed.slice(i, j))
      i = j
    }
    if (listed.length < names.length) return mark
  }
  return mark
}

/**
 * Fetches `batch` (consecutive segments of `host`) and applies it in one transaction with the host's
 * mark; returns the new mark. A fetch that fails stops there: the segments before it are applied,
 * then the error is thrown (the next run starts at the failed one). An apply that fails is retried one
 * segment at a time, so the segments before a bad one still count.
 */
async function fetchAndApply(
  ctx: ApplierContext,
  host: string,
  batch: ReadonlyArray<{ name: string; meta: SegmentMeta }>
): Promise<number> {
  const fetched: Array<{ name: string; path: string; seq: number }> = []
  let failure: Error | undefined
  try {
    for (const { name, meta } of batch) {
      try {
        fetched.push({ name, path: await fetchSegment(ctx, name, meta), seq: meta.seq })
      } catch (err) {
        failure = err as Error
        break
      }
    }
    if (fetched.length > 0) {
      try {
        await applyFetched(ctx, host, fetched)
      } catch (err) {
        if (fetched.length === 1) throw err
        for (const f of fetched) await applyFetched(ctx, host, [f])
      }
    }
  } finally {
    for (const f of fetched) await rm(f.path, { force: true })
  }
  if (failure !== undefined) throw failure
  return fetched[fetched.length - 1]!.seq
}

async function applyFetched(
  ctx: ApplierContext,
  host: string,
  fetched: ReadonlyArray<{ name: string; path: string; seq: number }>
): Promise<void> {
  const outcomes = await applySegments(ctx.db, ctx.timeZone, fetched, {
    alsoInTxn: (c) => metaPut(c, markKey(host), fetched[fetched.length - 1]!.seq)
  })
  for (const r of outcomes) {
    if (r.kind === 'applied') {
      ctx.counters.applied++
      ctx.counters.rows += r.rows
    } else ctx.counters.duplicates++
  }
}

/** One pass over every host; returns the marks (host → last seq applied). */
export async function applySegmentsOnce(ctx: ApplierContext): Promise<Record<string, number>> {
  await whenReady(ctx.redis, 1000)
  await removeStaleSegmentTemps(ctx.incoming, ctx.logger)
  // An upgrade: chunks an older version shipped through the stream are applied as before.
  if ((await ctx.redis.exists(ctx.streamKeys.stream)) === 1)
    await applyStatsStream(ctx.redis, ctx.streamKeys, ctx.db, ctx.timeZone, 1)
  const hosts = await ctx.redis.hgetall(ctx.keys.hosts)
  const marks: Record<string, number> = {}
  for (const [host, last] of Object.entries(hosts)) {
    try {
      marks[host] = await applyHost(ctx, host, Number(last))
    } catch (err) {
      ctx.counters.failed++
      ctx.logger?.warn(
        { host, err: (err as Error).message },
        "a statistics segment could not be fetched or applied; that host's segments are tried again at the next interval"
      )
      marks[host] = await ctx.db.read((c) => metaGet(c, markKey(host)))
    }
  }
  await ctx.redis.hset(ctx.keys.applied, ctx.self, JSON.stringify(marks))
  return marks
}

/** Segments lost to retention before this store applied them, per host (`segments.gap.<host>`). */
export async function segmentGaps(db: StatsDb): Promise<Record<string, number>> {
  return await db.read(async (c) => {
    const rows = (await c.runAndReadAll("SELECT key, value FROM meta WHERE key LIKE 'segments.gap.%'")).getRows()
    return Object.fromEntries(rows.map(([k, v]) => [String(k).slice('segments.gap.'.length), Number(v)]))
  })
}

/**
 * Applies every host's segments every `intervalMs` (the first pass at once), and every `pruneEveryMs`
 * writes the hours that are over as Parquet (`parquetDir`) and prunes, as the single host's importer.
 */
export function startSegmentApplier(
  ctx: Omit<ApplierContext, 'counters'>,
  options: { intervalMs: number; pruneEveryMs?: number; parquetDir?: string | undefined; now?: () => number }
): SegmentApplier {
  const counters: SegmentCounters = { fetched: 0, applied: 0, duplicates: 0, failed: 0, rows: 0 }
  const full: ApplierContext = { ...ctx, counters }
  const now = options.now ?? Date.now
  let prunedAt = -Infinity
  let gaps: Record<string, number> = {}
  const pass = async (): Promise<Record<string, number>> => {
    const marks = await applySegmentsOnce(full)
    gaps = await segmentGaps(ctx.db)
    if (now() - prunedAt >= (options.pruneEveryMs ?? 300_000)) {
      prunedAt = now()
      // The store's maintenance (engine/stats/maintenance.ts) but the steps beside the writer.
      const n = await maintainAfterImport(ctx.db, ctx.timeZone, () => prunedAt, {
        parquetDir: options.parquetDir,
        logger: ctx.logger,
        beside: false
      })
      if (n > 0) ctx.logger?.info({ pruned: n }, 'statistics pruned')
    }
    return marks
  }
  const job = startPeriodicJob(pass, options.intervalMs, {
    done() {},
    failed(err) {
      ctx.logger?.warn(
        { err: (err as Error).message },
        'statistics segments not applied (shared store unavailable); retried at the next interval'
      )
    }
  })
  // A segment registered by any host wakes the pass at once; the interval is the backstop (a lost
  // announcement, a reconnection).
  // The shared store's connections have no offline queue: subscribe once connected (again after each
  // reconnection, which SUBSCRIBE allows).
  const announcements = ctx.redis.duplicate()
  announcements.on('error', () => {})
  announcements.on('message', () => job.wake())
  announcements.on('ready', () => {
    announcements.subscribe(ctx.keys.registered).catch((err: unknown) => {
      ctx.logger?.warn({ err: (err as Error).message }, 'segment announcements not followed; applied every interval')
    })
  })
  announcements.connect().catch(() => {})
  return {
    counters,
    get gaps() {
      return gaps
    },
    applyNow: job.runNow,
    async close() {
      announcements.disconnect()
      await job.close()
      ctx.redis.disconnect()
    }
  }
}
