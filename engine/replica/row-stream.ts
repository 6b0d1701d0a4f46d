/**
 * The OLD path of statistics between hosts, kept only to drain it during an upgrade: now
 * hosts exchange segments and Redis holds metadata only (engine/replica/segments.ts). What stays: the
 * sync role finishes, chunk by chunk as before, a file an older version had started shipping
 * (`shipFile`), and the api role applies the chunks still in the stream (`applyStatsStream`); no new
 * file takes this path. The old design, for those chunks:
 *
 * Statistics of several hosts, exactly once. Each host's DNS servers write their
 * own CSV files (engine/querylog/writer.ts); with Redis configured, the sync role of that host (which
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
import { parseRecords, CLOSED_RE, recoverStaleParts } from '../querylog/index.js'
import { metaGet, metaPut, type StatsDb, applyRecords } from '../stats/index.js'
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

function defineShipScript(redis: Redis): void {
  if (typeof (redis as unknown as { filterdShipStats?: unknown }).filterdShipStats !== 'function') {
    redis.defineCommand('filterdShipStats', { numberOfKeys: 2, lua: SHIP_LUA })
  }
}

/** Ships every closed CSV file of `dir` to the stats stream; returns the records shipped. */
export async function shipClosedFiles(redis: Redis, keys: StatsKeys, host: string, dir: string): Promise<number> {
  defineShipScript(redis)
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
  for (const file of names) shipped += await shipFile(redis, keys, host, dir, file)
  return shipped
}

/**
 * Ships the rest of one closed file from the offset its progress in Redis records, then deletes it.
 * Since segments (engine/replica/segments.ts) only a file an older version had started shipping
 * goes this way, during an upgrade.
 */
export async function shipFile(
  redis: Redis,
  keys: StatsKeys,
  host: string,
  dir: string,
  file: string
): Promise<number> {
  defineShipScript(redis)
  const name = `${host}/${file}`
  const path = join(dir, file)
  let shipped = 0
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
