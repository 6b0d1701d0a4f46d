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
 *                     msgpackr value; the state a bootstrap reads
 *   init              a short lock held by the host that creates the store
 *
 * ioredis is the client (docs/architecture.md says why): it speaks Sentinel itself, returns
 * binary replies as Buffers (`…Buffer` commands), and runs Lua scripts by digest.
 */
import { Redis, type RedisOptions } from 'ioredis'
import type { Config } from '../config/types.js'
import { POLICY_DBS, type PolicyDb } from '../store/index.js'

export interface RedisKeys {
  readonly epoch: string
  readonly seq: string
  readonly changes: string
  readonly init: string
  readonly hash: Readonly<Record<PolicyDb, string>>
}

export function redisKeys (prefix: string): RedisKeys {
  const hash = {} as Record<PolicyDb, string>
  for (const db of POLICY_DBS) hash[db] = `${prefix}h:${db}`
  return { epoch: `${prefix}epoch`, seq: `${prefix}seq`, changes: `${prefix}changes`, init: `${prefix}init`, hash }
}

export interface SharedStoreSettings {
  readonly keys: RedisKeys
  /** Change records kept in the stream (approximate trim); a host further behind bootstraps. */
  readonly streamLength: number
  readonly options: RedisOptions
  /** `host:port` for messages. */
  readonly where: string
}

/** The shared store the config names, or undefined when `common.redis-ip` is not set (one host, LMDB only). */
export function sharedStoreSettings (config: Readonly<Config>): SharedStoreSettings | undefined {
  const c = config.common
  if (c['redis-ip'] === undefined) return undefined
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
  const options: RedisOptions = sentinels.length > 0
    ? {
        ...base,
        sentinels: sentinels.map((s) => { const i = s.lastIndexOf(':'); return { host: s.slice(0, i), port: Number(s.slice(i + 1)) } }),
        name: c['redis-master-name'] ?? 'filterd'
      }
    : { ...base, host: c['redis-ip'], port }
  return {
    keys: redisKeys(c['redis-prefix'] ?? 'filterd:'),
    streamLength: c['redis-stream-length'] ?? 100_000,
    options,
    where: sentinels.length > 0 ? `sentinel ${c['redis-master-name'] ?? 'filterd'} via ${sentinels.join(',')}` : `${c['redis-ip']}:${port}`
  }
}

/** A client for the shared store; connects in the background and reconnects by itself. */
export function connectSharedStore (settings: SharedStoreSettings, extra: RedisOptions = {}): Redis {
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
export async function whenReady (redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return
  await new Promise<void>((resolve) => {
    const done = (): void => { clearTimeout(timer); redis.off('ready', done); resolve() }
    const timer = setTimeout(done, ms)
    redis.on('ready', done)
  })
}
