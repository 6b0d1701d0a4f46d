/**
 * Statistics of several hosts, exactly once (issue #16, point 4). Each host's DNS servers write their
 * own CSV files (engine/stats/writer.ts); with Redis configured, the sync role of that host (which
 * every host sharing Redis runs, a DNS-only host included) ships the closed files to a Redis Stream
 * instead of importing them locally, and every host's api role (the role that serves reports)
 * applies the stream to its own statistics store, so each host's reports hold every host's
 * queries (a user's queries on hosts B and C are summed, whatever host serves the report). Only the
 * sync role ships: a host running sync and api ships from one place.
 *
 * Exactly once, twice over:
 *   shipping   a chunk of `<host>/<file>` is appended by a Lua script only when the file's progress in
 *              Redis (hash `stats:progress`) is the chunk's start offset, and the progress moves in the
 *              same script; a crash between reading and shipping re-reads from the recorded offset,
 *              and a second shipper of the same host finds the offset moved. A file is deleted once its
 *              progress says done.
 *   applying   each chunk goes through the importer's own ledger (engine/stats applyRecords): it is
 *              applied in the statistics store's transaction (DuckDB) that moves the ledger's offset for
 *              `<host>/<file>`, only when that offset is the chunk's start; a chunk read twice is applied once.
 * The stream keeps `STATS_STREAM_LENGTH` chunks; a host whose api role was down longer than that, or
 * that joins late, misses the chunks trimmed before it read them (its reports lack them; the other
 * hosts' do not).
 */
import { open, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Redis, Result } from 'ioredis'
import { pack, unpack } from 'msgpackr'
import type { Logger } from '../log/index.js'
import { parseRecords } from '../stats/csv.js'
import { metaGet, metaPut, type StatsDb } from '../stats/db.js'
import { CLOSED_RE, recoverStaleParts } from '../stats/files.js'
import { applyRecords, pruneStats } from '../stats/importer.js'
import { exportParquetHours } from '../stats/parquet.js'
import { whenReady } from './redis.js'

const CHUNK_ROWS = 5000
const READ_BYTES = 1024 * 1024
export const STATS_STREAM_LENGTH = 20_000

export interface StatsKeys {
  readonly stream: string
  readonly progress: string
}

export function statsKeys(prefix: string): StatsKeys {
  return { stream: `${prefix}stats`, progress: `${prefix}stats:progress` }
}

// KEYS: progress, stream. ARGV: name, from, to, done (0|1), packed records, maxlen
const SHIP_LUA = `
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if cur ~= tonumber(ARGV[2]) then return cur end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'name', ARGV[1], 'from', ARGV[2], 'to', ARGV[3], 'done', ARGV[4], 'rows', ARGV[5])
if ARGV[4] == '1' then redis.call('HSET', KEYS[1], ARGV[1], -1) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
return -2
`

declare module 'ioredis' {
  interface RedisCommander<Context> {
    filterdShipStats(...args: Array<string | Buffer | number>): Result<number, Context>
  }
}

/** Ships every closed CSV file of `dir` to the stats stream; returns the records shipped. */
export async function shipClosedFiles(redis: Redis, keys: StatsKeys, host: string, dir: string): Promise<number> {
  if (typeof (redis as unknown as { filterdShipStats?: unknown }).filterdShipStats !== 'function') {
    redis.defineCommand('filterdShipStats', { numberOfKeys: 2, lua: SHIP_LUA })
  }
  await whenReady(redis, 1000)
  await recoverStaleParts(dir)
  let names: string[]
  try {
    names = (await readdir(dir)).filter((n) => CLOSED_RE.test(n)).sort()
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return 0
    throw err
  }
  let shipped = 0
  for (const file of names) {
    const name = `${host}/${file}`
    const path = join(dir, file)
    let offset = Number((await redis.hget(keys.progress, name)) ?? 0)
    if (offset >= 0) {
      const fh = await open(path, 'r')
      try {
        const size = (await fh.stat()).size
        let buf = Buffer.allocUnsafe(Math.min(READ_BYTES, Math.max(size, 1)))
        while (offset >= 0) {
          const { bytesRead } = await fh.read(buf, 0, buf.length, offset)
          const atEof = offset + bytesRead >= size
          const records: string[][] = []
          const end = parseRecords(buf.toString('latin1', 0, bytesRead), 0, CHUNK_ROWS, records)
          if (records.length === 0 && !atEof) {
            buf = Buffer.allocUnsafe(buf.length * 2)
            continue
          }
          let to = offset + end
          if (records.length === 0 && to < size) to = size // a crashed writer's half line
          const done = to >= size
          const r = await redis.filterdShipStats(
            keys.progress,
            keys.stream,
            name,
            offset,
            to,
            done ? 1 : 0,
            pack(records),
            STATS_STREAM_LENGTH
          )
          if (r === -2) {
            shipped += records.length
            offset = done ? -1 : to
          } else offset = r
        }
      } finally {
        await fh.close()
      }
    }
    await rm(path, { force: true })
  }
  return shipped
}

const POS_MS = 'redis.stats.ms'
const POS_SEQ = 'redis.stats.seq'

/** Applies new chunks of the stats stream to `db`; resolves after one XREAD (data or `blockMs`). */
export async function applyStatsStream(
  redis: Redis,
  keys: StatsKeys,
  db: StatsDb,
  timeZone: string,
  blockMs: number
): Promise<number> {
  await whenReady(redis, 1000)
  const from = await db.read(async (c) => `${await metaGet(c, POS_MS)}-${await metaGet(c, POS_SEQ)}`)
  const reply = await redis.xreadBuffer('COUNT', 100, 'BLOCK', blockMs, 'STREAMS', keys.stream, from)
  if (reply === null || reply.length === 0) return 0
  let applied = 0
  let last = from
  for (const [rawId, fields] of reply[0]![1]) {
    const f = new Map<string, Buffer>()
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!.toString(), fields[i + 1]!)
    const records = unpack(f.get('rows')!) as string[][]
    const ok = await applyRecords(
      db,
      timeZone,
      f.get('name')!.toString(),
      Number(f.get('from')),
      Number(f.get('to')),
      f.get('done')!.toString() === '1',
      records
    )
    if (ok) applied += records.length
    last = rawId.toString()
  }
  // The position only saves re-reading: the ledger already refuses a chunk applied before.
  const [ms, seq] = last.split('-').map(Number) as [number, number]
  await db.write(async (c) => {
    await metaPut(c, POS_MS, ms)
    await metaPut(c, POS_SEQ, seq)
  })
  return applied
}

export interface StatsShipper {
  /** Ships this host's closed files now, after any shipping already running (tests; the timer does it every `stats.import-interval`). */
  shipNow(): Promise<number>
  close(): Promise<void>
}

/**
 * The sync role's half (every host sharing Redis runs it, whatever else it runs): ships this host's
 * closed files on a timer (the first run at once). Runs never overlap within the process; a second
 * shipper of the same files (another process) is harmless, the ship script refusing a moved offset.
 */
export function startStatsShipper(
  redis: Redis,
  keys: StatsKeys,
  host: string,
  dir: string,
  intervalMs: number,
  logger: Logger
): StatsShipper {
  let closed = false
  let chain: Promise<unknown> = Promise.resolve()
  const shipNow = (): Promise<number> => {
    const p = chain.then(() => shipClosedFiles(redis, keys, host, dir))
    chain = p.catch(() => {})
    return p
  }
  const tick = (): void => {
    if (closed) return
    shipNow().then(
      (n) => {
        if (n > 0) logger.info({ rows: n }, 'statistics shipped to the shared store')
      },
      (err: unknown) => {
        logger.warn(
          { err: (err as Error).message },
          'statistics not shipped (shared store unavailable); retried at the next interval'
        )
      }
    )
  }
  const timer = intervalMs > 0 ? setInterval(tick, intervalMs) : undefined
  timer?.unref()
  if (intervalMs > 0) setImmediate(tick)
  return {
    shipNow,
    async close() {
      closed = true
      clearInterval(timer)
      await chain
      redis.disconnect()
    }
  }
}

export interface StatsApplier {
  close(): Promise<void>
}

/**
 * The api role's half (the role that serves reports): applies every host's chunks, continuously, and
 * every `pruneEveryMs` (the first time at once) writes the raw hours that are over as Parquet files
 * (`parquetDir`) and removes what retention no longer keeps, as the local importer does after each
 * import on a single host.
 */
export function startStatsApplier(
  applier: Redis,
  keys: StatsKeys,
  db: StatsDb,
  timeZone: string,
  options: { pruneEveryMs?: number; now?: () => number; logger?: Logger; parquetDir?: string | undefined } = {}
): StatsApplier {
  const pruneEveryMs = options.pruneEveryMs ?? 300_000
  const now = options.now ?? Date.now
  let closed = false
  let prunedAt = -Infinity
  const loop = (async () => {
    while (!closed) {
      try {
        if (now() - prunedAt >= pruneEveryMs) {
          prunedAt = now()
          // Every host's rows of an hour that is over, as Parquet (stats.parquet-dir), before retention drops them.
          if (options.parquetDir !== undefined)
            await exportParquetHours(db, options.parquetDir, prunedAt, options.logger)
          const n = await pruneStats(db, timeZone, prunedAt)
          if (n > 0) options.logger?.info({ pruned: n }, 'statistics pruned')
        }
        await applyStatsStream(applier, keys, db, timeZone, Math.min(1000, pruneEveryMs))
      } catch {
        // Redis away: the next read retries; the shipped chunks wait in the stream.
        if (closed) break
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    }
  })()
  return {
    async close() {
      closed = true
      applier.disconnect()
      await loop
    }
  }
}
