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
 * Concurrent writes from several API hosts are ordered by Redis, and each request is checked against
 * the keys it changes: the request was computed on this host's replica at position `basis`; if
 * another host wrote one of its keys after that (a key's version is the `seq` of the record that
 * last wrote it), the script refuses it, this host waits for its replica to apply Redis's current
 * record, and the request is computed again on the newer replica (at most `MAX_ATTEMPTS` times). So concurrent
 * requests behave as if run one after the other in Redis's order: the last one wins, as a whole
 * request (two hosts moving one user's addresses leave no address mapped to a user that no longer
 * lists it).
 *
 * Redis going back (a restart that lost the last writes, an older backup restored, a failover to a
 * replica that was behind) is refused too: a `basis` above Redis's `seq` means Redis lacks records
 * this host applied, and the write would reuse their sequence numbers (the follower reports it,
 * engine/replica/follower.ts, state `redis-behind`).
 */
import type { Redis, Result } from 'ioredis'
import { pack } from 'msgpackr'
import { EngineError } from '../errors.js'
import { POLICY_DBS, type RemoteCommit, type ReplicaStore, type StoreOp } from '../store/index.js'
import { whenReady, type SharedStoreSettings } from './redis.js'

/** Why a write did not reach the shared store, or may not have; the API answers 503 with the message. */
export class SharedStoreUnavailable extends EngineError {
  constructor(message: string, cause?: unknown) {
    super('ENGINE_SHARED_STORE_UNAVAILABLE', message, cause === undefined ? undefined : { cause })
  }
}

// KEYS: epoch, seq, changes, tombs, tombfloor, h:users, h:ips, h:lists, h:settings, h:clients
// ARGV: epoch, maxlen, packed record, n, basis (-1: unchecked), then n × (db index, key, 'p'|'d', value)
// Each key's hash value carries the record's seq as its version (engine/replica/redis.ts); a delete
// leaves a tombstone, dropped once older than the records the stream keeps (MAXLEN ~ keeps at least
// maxlen), and `tombfloor` says up to where tombstones were dropped: a basis below it may miss a
// deletion's version, so it is refused as a conflict. A conflict answers Redis's current `seq`.
const COMMIT_LUA = `
local e = redis.call('GET', KEYS[1])
if e ~= ARGV[1] then return redis.error_reply('FILTERD_EPOCH ' .. tostring(e)) end
local n = tonumber(ARGV[4])
local basis = tonumber(ARGV[5])
if basis >= 0 then
  local cur = tonumber(redis.call('GET', KEYS[2]) or '0')
  if cur < basis then return redis.error_reply('FILTERD_BEHIND ' .. cur) end
  local conflict = tonumber(redis.call('GET', KEYS[5]) or '0') > basis
  local j = 6
  for _ = 1, n do
    if conflict then break end
    local old = redis.call('HGET', KEYS[5 + tonumber(ARGV[j])], ARGV[j + 1])
    if old then
      local c = string.find(old, ':', 1, true)
      conflict = (c and tonumber(string.sub(old, 1, c - 1)) or 0) > basis
    end
    j = j + 4
  end
  if conflict then return redis.error_reply('FILTERD_CONFLICT ' .. cur) end
end
local seq = redis.call('INCR', KEYS[2])
local v = tostring(seq) .. ':'
local i = 6
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
    filterdCommit(...args: Array<string | Buffer | number>): Result<[string, number], Context>
  }
}

export function defineCommitScript(redis: Redis): void {
  if (typeof (redis as unknown as { filterdCommit?: unknown }).filterdCommit === 'function') return
  redis.defineCommand('filterdCommit', { numberOfKeys: 5 + POLICY_DBS.length, lua: COMMIT_LUA })
}

export interface RemoteCommitOptions {
  /** ms to wait for the local replica to apply the write before answering anyway. */
  readonly applyTimeoutMs: number
  readonly onSlowApply?: (seq: number) => void
}

/**
 * How many times a request is computed again after conflicts before the API answers 503. Each
 * retry after the first waits a random 0–2^n ms (at most 64), so two hosts hammering one key do not
 * keep meeting in the same round. 10 was too few: twenty writes to one user racing from two hosts
 * starved one of them on a loaded 2-core machine (each round lets one request through); 20 rounds
 * cost at most about 1.5 s before the 503.
 */
const MAX_ATTEMPTS = 20

/**
 * Another host wrote one of the request's keys after the replica position it was computed on;
 * `current` is Redis's last record then, which the replica applies before the request is computed
 * again (not only the conflicting record: the others a busy key had meanwhile would conflict next).
 */
interface WriteConflict {
  readonly conflict: number
}

/**
 * Sends one request's changes to Redis; the returned record id and sequence number. `basis` is the
 * replica position the changes were computed on (see the file comment); without it the changes are
 * written unchecked (tests and tools that write Redis directly).
 */
export async function commitToSharedStore(
  redis: Redis,
  settings: SharedStoreSettings,
  epoch: string,
  ops: readonly StoreOp[],
  basis?: number
): Promise<{ id: string; seq: number }> {
  const r = await sendCommit(redis, settings, epoch, ops, basis)
  if ('conflict' in r)
    throw new SharedStoreUnavailable(
      `another host changed the keys of this request (Redis at record ${r.conflict}); nothing was written`
    )
  return r
}

/** `commitToSharedStore`, a conflict answered rather than thrown (the remote commit computes the request again). */
async function sendCommit(
  redis: Redis,
  settings: SharedStoreSettings,
  epoch: string,
  ops: readonly StoreOp[],
  basis?: number
): Promise<{ id: string; seq: number } | WriteConflict> {
  const { keys } = settings
  defineCommitScript(redis)
  const args: Array<string | Buffer | number> = [
    keys.epoch,
    keys.seq,
    keys.changes,
    keys.tombs,
    keys.tombfloor,
    ...POLICY_DBS.map((db) => keys.hash[db])
  ]
  args.push(epoch, settings.streamLength, pack(ops), ops.length, basis ?? -1)
  for (const [db, key, value] of ops) {
    if (value === undefined || value === null) args.push(DB_INDEX.get(db)!, key, 'd', '')
    else args.push(DB_INDEX.get(db)!, key, 'p', pack(value))
  }
  await whenReady(redis, 1000)
  // Whether the command may have reached Redis: after a timeout or a connection lost while it was
  // in flight, Redis may have run the script (then every host applies it), so the 503 says so.
  const sent = redis.status === 'ready'
  let reply: [string, number]
  try {
    reply = await redis.filterdCommit(...args)
  } catch (err) {
    const msg = (err as Error).message
    if (msg.startsWith('FILTERD_CONFLICT ')) return { conflict: Number(msg.slice('FILTERD_CONFLICT '.length)) }
    throw refusal(settings, err, msg, sent, basis)
  }
  return { id: String(reply[0]), seq: Number(reply[1]) }
}

/** Why Redis did not take a commit, in the operator's words. */
function refusal(
  settings: SharedStoreSettings,
  err: unknown,
  msg: string,
  sent: boolean,
  basis: number | undefined
): SharedStoreUnavailable {
  if (msg.includes('FILTERD_EPOCH')) {
    return new SharedStoreUnavailable(
      `the shared store at ${settings.where} is not the one this host replicates (${msg.includes('false') ? 'Redis lost its data' : 'epoch changed'}); nothing was written`,
      err
    )
  }
  if (msg.startsWith('FILTERD_BEHIND ')) {
    return new SharedStoreUnavailable(
      `the shared store at ${settings.where} holds fewer change records (${msg.slice('FILTERD_BEHIND '.length)}) than this host applied (${basis}): Redis lost its latest writes (docs/operations-redis.md, "Redis went back"); nothing was written`,
      err
    )
  }
  // Redis's own error reply (the script refused or never ran), or never sent: nothing was written.
  if (!sent || (err as Error).name === 'ReplyError') {
    return new SharedStoreUnavailable(
      `the shared store at ${settings.where} is unavailable: ${msg}; nothing was written`,
      err
    )
  }
  return new SharedStoreUnavailable(
    `the shared store at ${settings.where} did not answer: ${msg}; the write may or may not have been made (if it was, every host applies it: read it back before writing again)`,
    err
  )
}

const sleep = async (ms: number): Promise<void> => {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/** Waits (at most `ms`) for this host's replica to hold record `seq`; false on timeout. */
async function replicaReaches(store: ReplicaStore, seq: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while ((store.replicaPosition()?.seq ?? 0) < seq) {
    if (Date.now() >= deadline) return false
    await sleep(1)
  }
  return true
}

/** The `RemoteCommit` the api role installs with `store.useRemoteCommit` (engine/store). */
export function createRemoteCommit(
  redis: Redis,
  settings: SharedStoreSettings,
  store: ReplicaStore,
  options: RemoteCommitOptions
): RemoteCommit {
  defineCommitScript(redis)
  return async (first, again) => {
    let write = first
    for (let attempt = 1; ; attempt++) {
      const position = store.replicaPosition()
      const state = store.replicaState()
      if (state === 'redis-behind') {
        throw new SharedStoreUnavailable(
          "Redis lost change records this host had applied (state redis-behind): writes wait for an operator's `filterd redis-seed --force` or `--adopt` (docs/operations-redis.md); nothing was written"
        )
      }
      if (position === undefined || state !== 'following') {
        throw new SharedStoreUnavailable(
          `this host's replica is not following the shared store (state ${state ?? 'none'}: is the sync role running? see its /health); nothing was written`
        )
      }
      const r = await sendCommit(redis, settings, position.epoch, write.ops, write.basis)
      if ('seq' in r) {
        // Read-your-writes: the follower applies the record within milliseconds when it runs.
        if (!(await replicaReaches(store, r.seq, options.applyTimeoutMs))) options.onSlowApply?.(r.seq)
        return
      }
      if (attempt >= MAX_ATTEMPTS) {
        throw new SharedStoreUnavailable(
          `other hosts changed the keys of this request ${attempt} times while it was computed; nothing was written`
        )
      }
      if (attempt > 1) await sleep(Math.random() * Math.min(64, 2 ** attempt))
      if (!(await replicaReaches(store, r.conflict, options.applyTimeoutMs))) {
        throw new SharedStoreUnavailable(
          `this host's replica did not apply record ${r.conflict} within ${options.applyTimeoutMs} ms (is the sync role running?); nothing was written`
        )
      }
      write = again()
      if (write.ops.length === 0) return
    }
  }
}
