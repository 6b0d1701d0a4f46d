/**
 * The connection to the shared store (`common.redis-*`) and the names of its keys.
 *
 * Layout under `common.redis-prefix` (default `filterd:`):
 *   epoch             `<kind>:<random id>`: which store this is; `kind` is `init` (created by the
 *                     first host) or `reseed` (re-created by an operator from a host's replica)
 *   seq               sequence number of the last change record
 *   changes           the Stream of change records: fields `seq` and `ops` (msgpackr array of
 *                     [db, key, value?], the physical key changes of one API request)
 *   h:<db>            one hash per policy database (users, ips, lists, settings, clients): key →
 *                     `<version>:<msgpackr value>`, where the version is the `seq` of the record
 *                     that last wrote the key (0: seeded); a deleted key keeps a tombstone
 *                     `<version>:` (empty value) while a bootstrap may still need it. The state a
 *                     bootstrap reads; the versions let it skip records it already copied.
 *   tombs             sorted set of the tombstones (`<db index>:<key>`, score: version); the commit
 *                     script drops those older than the records the stream is sure to keep
 *   tombfloor         the highest version of a dropped tombstone: a bootstrap whose snapshot is
 *                     older may have missed a deletion, and starts again
 *   init              a short lock held by the host that creates the store
 *   usage-report      the claim of the host sending this period's vendor usage report
 *                     (engine/replica/claim.ts, api/usage-report.ts)
 *
 * ioredis is the client (docs/architecture.md says why): it speaks Sentinel itself, returns
 * binary replies as Buffers (`…Buffer` commands), and runs Lua scripts by digest.
 */
import { Redis, type RedisOptions } from 'ioredis'
import { pack, unpack } from 'msgpackr'
import { sharesRedis } from '../config/index.js'
import type { Config } from '../config/index.js'
import { POLICY_DBS, type PolicyDb, type StoreOp } from '../store/index.js'

export interface RedisKeys {
  readonly epoch: string
  readonly seq: string
  readonly changes: string
  readonly init: string
  readonly tombs: string
  readonly tombfloor: string
  readonly usageReport: string
  readonly hash: Readonly<Record<PolicyDb, string>>
}

export function redisKeys(prefix: string): RedisKeys {
  const hash = {} as Record<PolicyDb, string>
  for (const db of POLICY_DBS) hash[db] = `${prefix}h:${db}`
  return {
    epoch: `${prefix}epoch`,
    seq: `${prefix}seq`,
    changes: `${prefix}changes`,
    init: `${prefix}init`,
    tombs: `${prefix}tombs`,
    tombfloor: `${prefix}tombfloor`,
    usageReport: `${prefix}usage-report`,
    hash
  }
}

export interface SharedStoreSettings {
  readonly keys: RedisKeys
  /** Change records kept in the stream (approximate trim); a host further behind bootstraps. */
  readonly streamLength: number
  readonly options: RedisOptions
  /** `host:port` for messages. */
  readonly where: string
}

/**
 * The shared store the config names, or undefined when neither `common.redis-ip` nor
 * `common.redis-sentinels` is set (one host, LMDB only).
 */
export function sharedStoreSettings(config: Readonly<Config>): SharedStoreSettings | undefined {
  const c = config.common
  if (!sharesRedis(config)) return undefined
  const port = c['redis-port'] ?? 6379
  const base: RedisOptions = {
    // Fail fast while Redis is away: an API write answers 503 instead of waiting in a queue, and the
    // follower's loop retries by itself.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(50 * times, 1000),
    lazyConnect: true,
    ...(c['redis-password'] !== undefined ? { password: c['redis-password'] } : {})
  }
  const sentinels = c['redis-sentinels'] ?? []
  const options: RedisOptions =
    sentinels.length > 0
      ? {
          ...base,
          sentinels: sentinels.map((s) => {
            const i = s.lastIndexOf(':')
            return { host: s.slice(0, i), port: Number(s.slice(i + 1)) }
          }),
          name: c['redis-master-name'] ?? 'filterd',
          // Reconnect to the new master as soon as a Sentinel announces a failover (+switch-master),
          // and on a READONLY reply (this connection still reaches a demoted master): that write was
          // refused whole (503), and the next one goes to the master the Sentinels name.
          failoverDetector: true,
          reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 1 : false)
        }
      : { ...base, host: c['redis-ip'], port }
  return {
    keys: redisKeys(c['redis-prefix'] ?? 'filterd:'),
    streamLength: c['redis-stream-length'] ?? 100_000,
    options,
    where:
      sentinels.length > 0
        ? `sentinel ${c['redis-master-name'] ?? 'filterd'} via ${sentinels.join(',')}`
        : `${c['redis-ip']}:${port}`
  }
}

/** A client for the shared store; connects in the background and reconnects by itself. */
export function connectSharedStore(settings: SharedStoreSettings, extra: RedisOptions = {}): Redis {
  const redis = new Redis({ ...settings.options, ...extra })
  // Errors are reported by the commands that fail; an 'error' listener keeps ioredis from printing them.
  redis.on('error', () => {})
  redis.connect().catch(() => {})
  return redis
}

/**
 * Waits (at most `ms`) for the connection to be usable: without the offline queue a command sent
 * while (re)connecting fails at once, and a short wait covers a connection being set up.
 */
export async function whenReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      redis.off('ready', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    redis.on('ready', done)
  })
}

/** A value of an `h:<db>` hash: the version and the value, `undefined` for a tombstone (a deleted key). */
export interface StoredValue {
  readonly version: number
  readonly value: unknown
}

const COLON = 0x3a

/**
 * Reads an `h:<db>` value. A value without the `<digits>:` prefix is one written before versions
 * (filterd 0.1.0) and counts as version 0: no msgpack value starts with digits then `:`, as a digit
 * byte is a whole one-byte value (a positive fixint).
 */
export function parseStored(raw: Buffer): StoredValue {
  let i = 0
  let version = 0
  while (i < raw.length && raw[i]! >= 0x30 && raw[i]! <= 0x39) version = version * 10 + raw[i++]! - 0x30
  if (i === 0 || i >= raw.length || raw[i] !== COLON) return { version: 0, value: unpack(raw) }
  return { version, value: i + 1 === raw.length ? undefined : unpack(raw.subarray(i + 1)) }
}

/** The version of an `h:<db>` value if it is a tombstone (`<digits>:` alone), else undefined; no decoding. */
export function tombstoneVersion(raw: Buffer): number | undefined {
  if (raw.length < 2 || raw[raw.length - 1] !== COLON) return undefined
  let version = 0
  for (let i = 0; i < raw.length - 1; i++) {
    const c = raw[i]!
    if (c < 0x30 || c > 0x39) return undefined
    version = version * 10 + c - 0x30
  }
  return version
}

/** The `h:<db>` value of `value` at `version` (the seed writes version 0). */
export function storedValue(version: number, value: unknown): Buffer {
  return Buffer.concat([Buffer.from(`${version}:`, 'latin1'), pack(value)])
}

/** A change record of the stream (fields `seq` and `ops`): its sequence number and key changes. */
export function parseRecord(fields: Buffer[]): { seq: number; ops: StoreOp[] } {
  const f = new Map<string, Buffer>()
  for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!.toString(), fields[i + 1]!)
  return { seq: Number(f.get('seq')?.toString()), ops: unpack(f.get('ops')!) as StoreOp[] }
}
