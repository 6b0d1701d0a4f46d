/**
 * The write path of a host sharing one Redis (`common.redis-ip`): the api role hands each request's
 * physical key changes (recorded by `Store.write`, engine/store) to `createRemoteCommit`, which
 *
 *   1. runs one Lua script in Redis that checks the store's epoch is the one this host replicates,
 *      increments `seq`, applies the changes to the `h:<db>` hashes (each value tagged with that
 *      `seq` as its version, a deleted key leaving a tombstone), and appends the change record
 *      to the stream (XADD … MAXLEN ~ redis-stream-length): all or nothing, as Redis runs a script
 *      atomically;
 *   2. resolves once this host's follower (the sync role) has applied that record to the local
 *      LMDB, so the API's answer and the next request on this host read their own write.
 *
 * Concurrent writes from several API hosts are ordered by Redis; each record holds the final
 * values of the keys a request changed, so the last request to reach Redis wins key by key and
 * every host applies the records in the same order and ends in the same state.
 */
import type { Redis, Result } from 'ioredis'
import { pack } from 'msgpackr'
import { EngineError } from '../errors.js'
import { POLICY_DBS, type RemoteCommit, type Store, type StoreOp } from '../store/index.js'
import { whenReady, type SharedStoreSettings } from './redis.js'

/** Why a write did not reach the shared store; the API answers 503 (nothing was written). */
export class SharedStoreUnavailable extends EngineError {
  constructor (message: string, cause?: unknown) {
    super('ENGINE_SHARED_STORE_UNAVAILABLE', message, cause === undefined ? undefined : { cause })
  }
}

// KEYS: epoch, seq, changes, tombs, tombfloor, h:users, h:ips, h:lists, h:settings, h:clients
// ARGV: epoch, maxlen, packed record, n, then n × (db index, key, 'p'|'d', value)
// Each key's hash value carries the record's seq as its version (engine/replica/redis.ts); a delete
// leaves a tombstone, dropped once older than the records the stream keeps (MAXLEN ~ keeps at least
// maxlen), and `tombfloor` says up to where tombstones were dropped.
const COMMIT_LUA = `
local e = redis.call('GET', KEYS[1])
if e ~= ARGV[1] then return redis.error_reply('FILTERD_EPOCH ' .. tostring(e)) end
local seq = redis.call('INCR', KEYS[2])
local v = tostring(seq) .. ':'
local n = tonumber(ARGV[4])
local i = 5
for _ = 1, n do
  local h = KEYS[5 + tonumber(ARGV[i])]
  local member = ARGV[i] .. ':' .. ARGV[i + 1]
  if ARGV[i + 2] == 'p' then
    redis.call('HSET', h, ARGV[i + 1], v .. ARGV[i + 3])
    redis.call('ZREM', KEYS[4], member)
  else
    redis.call('HSET', h, ARGV[i + 1], v)
    redis.call('ZADD', KEYS[4], seq, member)
  end
  i = i + 4
end
local id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[2], '*', 'seq', seq, 'ops', ARGV[3])
local floor = seq - tonumber(ARGV[2])
if floor > 0 then
  local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', floor, 'LIMIT', 0, 64)
  for _, m in ipairs(old) do
    local c = string.find(m, ':', 1, true)
    redis.call('HDEL', KEYS[5 + tonumber(string.sub(m, 1, c - 1))], string.sub(m, c + 1))
    redis.call('ZREM', KEYS[4], m)
  end
  if #old > 0 then redis.call('SET', KEYS[5], floor) end
end
return {id, seq}
`

const DB_INDEX = new Map(POLICY_DBS.map((db, i) => [db, i + 1]))

declare module 'ioredis' {
  interface RedisCommander<Context> {
    filterdCommit (...args: Array<string | Buffer | number>): Result<[string, number], Context>
  }
}

export function defineCommitScript (redis: Redis): void {
  if (typeof (redis as unknown as { filterdCommit?: unknown }).filterdCommit === 'function') return
  redis.defineCommand('filterdCommit', { numberOfKeys: 5 + POLICY_DBS.length, lua: COMMIT_LUA })
}

export interface RemoteCommitOptions {
  /** ms to wait for the local replica to apply the write before answering anyway. */
  readonly applyTimeoutMs: number
  readonly onSlowApply?: (seq: number) => void
}

/** Sends one request's changes to Redis; the returned record id and sequence number. */
export async function commitToSharedStore (redis: Redis, settings: SharedStoreSettings, epoch: string, ops: readonly StoreOp[]): Promise<{ id: string, seq: number }> {
  const { keys } = settings
  defineCommitScript(redis)
  const args: Array<string | Buffer | number> = [keys.epoch, keys.seq, keys.changes, keys.tombs, keys.tombfloor, ...POLICY_DBS.map((db) => keys.hash[db])]
  args.push(epoch, settings.streamLength, pack(ops), ops.length)
  for (const [db, key, value] of ops) {
    if (value === undefined || value === null) args.push(DB_INDEX.get(db)!, key, 'd', '')
    else args.push(DB_INDEX.get(db)!, key, 'p', pack(value))
  }
  let reply: [string, number]
  try {
    await whenReady(redis, 1000)
    reply = await redis.filterdCommit(...args)
  } catch (err) {
    const msg = (err as Error).message
    if (msg.includes('FILTERD_EPOCH')) {
      throw new SharedStoreUnavailable(`the shared store at ${settings.where} is not the one this host replicates (${msg.includes('false') ? 'Redis lost its data' : 'epoch changed'}); nothing was written`, err)
    }
    throw new SharedStoreUnavailable(`the shared store at ${settings.where} is unavailable: ${msg}; nothing was written`, err)
  }
  return { id: String(reply[0]), seq: Number(reply[1]) }
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** The `RemoteCommit` the api role installs with `store.useRemoteCommit` (engine/store). */
export function createRemoteCommit (redis: Redis, settings: SharedStoreSettings, store: Store, options: RemoteCommitOptions): RemoteCommit {
  defineCommitScript(redis)
  return async (ops) => {
    const position = store.replicaPosition()
    if (position === undefined || store.replicaState() !== 'following') {
      throw new SharedStoreUnavailable('this host has no complete replica of the shared store yet (is the sync role running?); nothing was written')
    }
    const { seq } = await commitToSharedStore(redis, settings, position.epoch, ops)
    const deadline = Date.now() + options.applyTimeoutMs
    // Read-your-writes: the follower applies the record within milliseconds when it runs.
    while ((store.replicaPosition()?.seq ?? 0) < seq) {
      if (Date.now() >= deadline) { options.onSlowApply?.(seq); return }
      await sleep(1)
    }
  }
}
