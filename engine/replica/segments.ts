/**
 * Statistics of a fleet with no query row in Redis. Each host turns its own closed
 * CSV files into segments (Parquet, engine/stats/segment.ts), keeps them in `stats.segments-dir` for
 * `stats.segments-retention` seconds and serves them over its sync listener; Redis holds only
 * metadata; every api host fetches the segments it has not applied and applies each one through the
 * importer's ledger. docs/operations-redis.md, "Statistics across hosts", is the operator's account.
 *
 * Redis keys (`<prefix>` is common.redis-prefix):
 *   <prefix>stats:segments           hash  `<host>/<file>` → JSON {host, seq, rows, bytes, sha256, url, token, at}
 *   <prefix>stats:segments:<host>    zset  `<host>/<file>` scored by its seq (1, 2, ... per host)
 *   <prefix>stats:hosts              hash  host → its last seq
 *   <prefix>stats:applied            hash  api host → JSON {host: last seq applied} (progress, for operators)
 * A segment registers once (a Lua script refuses a name already there), so two producers of one host's
 * files (two sync processes) give one seq.
 *
 * Exactly once: the ledger key of a segment is `<host>/<file>`, as the CSV file's was; the rows, the
 * ledger row and the fetcher's mark (`segments.applied.<host>` in the store's meta table) are written
 * in one DuckDB transaction. A segment fetched twice (registered again, a mark lost) finds its ledger
 * row and adds nothing. A transfer is written to a dot-named temporary file, checked (size, SHA-256)
 * and only then applied; a transfer killed midway leaves the temporary file, removed by the next run,
 * and the segment is fetched again.
 *
 * A gap: an api host that was away longer than the retention (or joins late) finds a host's oldest
 * segment in Redis above its mark + 1. It logs the gap, adds it to `segments.gap.<host>` (/health and
 * /metrics of the api role say so) and goes on from there; docs/operations-redis.md says how to restore.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Redis, Result } from 'ioredis'
import { errorBody, type HttpServer } from '../http/index.js'
import type { Logger } from '../log/index.js'
import { CLOSED_RE, recoverStaleParts, watchClosedFiles, type ClosedFileWatch } from '../querylog/index.js'
import { startPeriodicJob, removeStaleSegmentTemps, type SegmentFacts, type SegmentWriter } from '../stats/index.js'
import { whenReady } from './redis.js'
import { shipFile, type StatsKeys } from './row-stream.js'

export interface SegmentKeys {
  readonly meta: string
  readonly hosts: string
  readonly applied: string
  /** The channel on which a registration is announced (the host's name), so report hosts apply it at once. */
  readonly registered: string
  index(host: string): string
}

export function segmentKeys(prefix: string): SegmentKeys {
  return {
    meta: `${prefix}stats:segments`,
    hosts: `${prefix}stats:hosts`,
    applied: `${prefix}stats:applied`,
    registered: `${prefix}stats:segment-registered`,
    index: (host) => `${prefix}stats:segments:${host}`
  }
}

export interface SegmentMeta extends SegmentFacts {
  host: string
  seq: number
  /** Where to GET it. */
  url: string
  /** Bearer token the serving host checks (an HMAC of the name with that host's secret). */
  token: string
  /** When it was registered (ms). */
  at: number
}

// KEYS: meta, hosts, index. ARGV: name, host, JSON without seq, channel. Returns the seq, 0 when already
// registered. The registration is announced on the channel (report hosts wake; their interval is the backstop).
const REGISTER_LUA = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
local seq = redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
local m = cjson.decode(ARGV[3])
m.seq = seq
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(m))
redis.call('ZADD', KEYS[3], seq, ARGV[1])
redis.call('PUBLISH', ARGV[4], ARGV[2])
return seq
`

declare module 'ioredis' {
  interface RedisCommander<Context> {
    filterdRegisterSegment(...args: Array<string | Buffer | number>): Result<number, Context>
  }
}

const HOST_RE = /^[A-Za-z0-9._-]{1,64}$/
const SEGMENT_RE = /^queries-\d{8}T\d{9}Z-\d+-[0-9a-z]+\.parquet$/

/** The segment file of a CSV file name, and back. */
export const segmentFile = (csv: string): string => csv.replace(/\.csv$/, '.parquet')
const csvOfSegment = (file: string): string => file.replace(/\.parquet$/, '.csv')

/** This host's secret for segment tokens, `<segments-dir>/.secret` (made once, mode 0600). */
export async function segmentSecret(segDir: string): Promise<Buffer> {
  const path = join(segDir, '.secret')
  await mkdir(segDir, { recursive: true })
  try {
    await writeFile(path, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 })
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err
  }
  return Buffer.from((await readFile(path, 'utf8')).trim(), 'hex')
}

export function segmentToken(secret: Buffer, name: string): string {
  return createHmac('sha256', secret).update(name).digest('hex')
}

export interface ProducerOptions {
  readonly host: string
  /** stats.dir: the closed CSV files. */
  readonly statsDir: string
  /** stats.segments-dir: `<host>/<file>.parquet` under it. */
  readonly segDir: string
  /** Base URL other hosts fetch this host's segments from (sync.segments-url). */
  readonly url: string
  readonly secret: Buffer
  readonly retentionMs: number
  readonly writer: SegmentWriter
  /** The old stream's keys: a file an older version started shipping is finished that way. */
  readonly streamKeys: StatsKeys
  readonly logger?: Logger
  readonly now?: () => number
}

async function closedFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => CLOSED_RE.test(n)).sort()
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return []
    throw err
  }
}

/** Turns every closed CSV file into a registered segment, deletes the file; returns the rows registered. */
export async function produceSegments(redis: Redis, keys: SegmentKeys, o: ProducerOptions): Promise<number> {
  if (typeof (redis as unknown as { filterdRegisterSegment?: unknown }).filterdRegisterSegment !== 'function')
    redis.defineCommand('filterdRegisterSegment', { numberOfKeys: 3, lua: REGISTER_LUA })
  await whenReady(redis, 1000)
  await recoverStaleParts(o.statsDir)
  const hostDir = join(o.segDir, o.host)
  await removeStaleSegmentTemps(hostDir, o.logger)
  let rows = 0
  for (const file of await closedFiles(o.statsDir)) {
    const name = `${o.host}/${file}`
    const csv = join(o.statsDir, file)
    // Upgrade: a file an older version started shipping through the stream is finished there.
    if (Number((await redis.hget(o.streamKeys.progress, name)) ?? 0) !== 0) {
      await shipFile(redis, o.streamKeys, o.host, o.statsDir, file)
      continue
    }
    const out = join(hostDir, segmentFile(file))
    // A segment written before a crash (renamed, not yet registered) is registered as it is.
    const facts = await stat(out).then(
      () => o.writer.describe(out),
      () => o.writer.write(csv, out)
    )
    if (facts !== undefined) {
      const meta = {
        host: o.host,
        ...facts,
        url: o.url,
        token: segmentToken(o.secret, name),
        at: (o.now ?? Date.now)()
      }
      const seq = await redis.filterdRegisterSegment(
        keys.meta,
        keys.hosts,
        keys.index(o.host),
        name,
        o.host,
        JSON.stringify(meta),
        keys.registered
      )
      if (seq > 0) rows += facts.rows
    }
    await rm(csv, { force: true })
  }
  await trimSegments(redis, keys, o)
  return rows
}

/** Forgets and deletes this host's segments older than the retention, oldest first. */
async function trimSegments(redis: Redis, keys: SegmentKeys, o: ProducerOptions): Promise<void> {
  const oldest = (o.now ?? Date.now)() - o.retentionMs
  for (;;) {
    const names = await redis.zrange(keys.index(o.host), 0, 99)
    if (names.length === 0) return
    const metas = await redis.hmget(keys.meta, ...names)
    const expired: string[] = []
    for (let i = 0; i < names.length; i++) {
      const m = metas[i] === null ? undefined : (JSON.parse(metas[i]!) as SegmentMeta)
      if (m !== undefined && m.at >= oldest) break
      expired.push(names[i]!)
    }
    if (expired.length === 0) return
    await redis
      .multi()
      .hdel(keys.meta, ...expired)
      .zrem(keys.index(o.host), ...expired)
      .exec()
    for (const name of expired)
      await rm(join(o.segDir, o.host, segmentFile(name.slice(o.host.length + 1))), { force: true })
    if (expired.length < names.length) return
  }
}

/**
 * GET /stats/segments/:host/:file on the sync listener: a segment of this host, to the bearer of its
 * token (from the metadata in Redis). 404 `HTTP_NOT_FOUND` once retention removed it, and to a wrong
 * or missing token.
 */
export function serveSegments(http: HttpServer, segDir: string, secret: Buffer): void {
  http.route('GET', '/stats/segments/:host/:file', async (req, res) => {
    const { host, file } = req.params as { host?: string; file?: string }
    const notFound = (): void => {
      res.status(404).header('Content-Type', 'application/json').send(errorBody('HTTP_NOT_FOUND', 'no such segment'))
    }
    if (
      host === undefined ||
      file === undefined ||
      !HOST_RE.test(host) ||
      host === '.' ||
      host === '..' ||
      !SEGMENT_RE.test(file)
    ) {
      notFound()
      return
    }
    const expected = Buffer.from(segmentToken(secret, `${host}/${csvOfSegment(file)}`))
    const given = Buffer.from((req.header('authorization') ?? '').replace(/^Bearer /, ''))
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      notFound() // a wrong token learns nothing, not even that the segment exists
      return
    }
    let body: Buffer
    try {
      body = await readFile(join(segDir, host, file))
    } catch {
      notFound()
      return
    }
    res.header('Content-Type', 'application/vnd.apache.parquet').send(body)
  })
}

export interface SegmentProducer {
  /** Produces now, after any run already going (tests; the timer does it every `stats.import-interval`). */
  produceNow(): Promise<number>
  close(): Promise<void>
}

/**
 * The sync role's half (every host sharing Redis runs it, a DNS-only host included): turns this host's
 * closed files into segments on a timer (the first run at once). Runs never overlap in the process.
 */
export function startSegmentProducer(
  redis: Redis,
  keys: SegmentKeys,
  options: ProducerOptions & { intervalMs: number }
): SegmentProducer {
  // A closed file wakes the producer at once (engine/querylog/import-trigger.ts), the interval is the backstop.
  let watcher: ClosedFileWatch | undefined
  const job = startPeriodicJob(
    async () => {
      watcher ??= watchClosedFiles(options.statsDir, () => job.wake(), options.logger)
      return await produceSegments(redis, keys, options)
    },
    options.intervalMs,
    {
      done(n) {
        if (n > 0) options.logger?.info({ rows: n }, 'statistics segment registered in the shared store')
      },
      failed(err) {
        options.logger?.warn(
          { err: (err as Error).message },
          'statistics segment not registered (shared store unavailable?); retried at the next interval'
        )
      }
    }
  )
  return {
    produceNow: job.runNow,
    async close() {
      await job.close()
      watcher?.close()
      await options.writer.close()
      redis.disconnect()
    }
  }
}
