/**
 * The store's write side (engine/store/index.ts keeps the reads), as lmdb-js keeps its write
 * transactions apart from its reads: the `StoreWriter` a request's callback gets, over tables that
 * either write LMDB (a local write) or write it and record each key change (a write whose changes go
 * to the shared store, which the follower then applies: engine/replica).
 *
 * A store that follows a shared store (`replica.follows`, engine/store/replica.ts) takes no policy
 * write from a process without Redis: the local write records what its callback changes and, if
 * that is policy, throws ENGINE_STORE_FOLLOWS_REDIS inside the transaction, so nothing is kept.
 * Meta-only writes (the category database's active version, per host) still commit.
 */
import type { Database, RootDatabase } from 'lmdb'
import { bumpGeneration, followsRedisError, followsSharedStore, META_FOLLOWS, type FollowerMark } from './replica.js'
import {
  API_CLIENT_PREFIX,
  CIDR_PREFIX,
  CLIENT_ID_PREFIX,
  listKey,
  SUBSCRIPTION_PREFIX,
  type DbName,
  type PolicyDb,
  type RemoteCommit,
  type RemoteWrite,
  type ReplicaPosition,
  type StoreOp,
  type StoreWriter,
  type UserRecord
} from './types.js'
import type { Store } from './index.js'
import { commitFailure } from './commit-failure.js'
import { TouchRecorder } from './journal.js'

/** What a writer reads and changes: one LMDB table each, every change optionally recorded. */
interface WriterTables {
  get(db: PolicyDb, key: string): unknown
  put(db: PolicyDb, key: string, value: unknown): void
  remove(db: PolicyDb, key: string): boolean
}

/**
 * The tables of `dbs`; each put and remove pushed onto `recording` when given, and its key noted in
 * `touched` (the change journal, engine/store/journal.ts: what readers' caches must drop).
 */
function lmdbTables(dbs: Record<DbName, Database>, touched: TouchRecorder, recording?: StoreOp[]): WriterTables {
  return {
    get: (db, key): unknown => dbs[db].get(key),
    put: (db, key, value) => {
      recording?.push([db, key, value])
      touched.op(db, key)
      dbs[db].putSync(key, value)
    },
    remove: (db, key) => {
      recording?.push([db, key])
      touched.op(db, key)
      return dbs[db].removeSync(key)
    }
  }
}

const addressKey = (a: string): string => (a.includes('/') ? CIDR_PREFIX + a : a)

type Owner = (key: string) => string | undefined

/** Gives `addresses` to `userId`, taking each from the user that held it; the moves. */
function claimAddresses(
  t: WriterTables,
  owner: Owner,
  userId: string,
  addresses: readonly string[]
): Array<{ address: string; from: string }> {
  const moved: Array<{ address: string; from: string }> = []
  for (const a of addresses) {
    const from = owner(a)
    if (from !== undefined && from !== userId) {
      moved.push({ address: a, from })
      const prev = t.get('users', from) as UserRecord | undefined
      if (prev !== undefined) t.put('users', from, { ...prev, ip: prev.ip.filter((x) => x !== a) })
    }
    t.put('ips', addressKey(a), userId)
  }
  return moved
}

/**
 * Makes `ids` the client IDs of `userId` (those it no longer has are released); an ID another user
 * holds is never moved: nothing changes and the taken ones are returned.
 */
function setClientIds(
  t: WriterTables,
  owner: Owner,
  userId: string,
  ids: readonly string[]
): Array<{ clientId: string; owner: string }> {
  const taken: Array<{ clientId: string; owner: string }> = []
  for (const c of ids) {
    const held = owner(CLIENT_ID_PREFIX + c)
    if (held !== undefined && held !== userId) taken.push({ clientId: c, owner: held })
  }
  if (taken.length > 0) return taken
  const keep = new Set(ids)
  const user = t.get('users', userId) as UserRecord | undefined
  for (const c of user?.client_ids ?? [])
    if (!keep.has(c) && owner(CLIENT_ID_PREFIX + c) === userId) t.remove('ips', CLIENT_ID_PREFIX + c)
  for (const c of ids) t.put('ips', CLIENT_ID_PREFIX + c, userId)
  return taken
}

/** The writer a `Store.write` callback gets. */
function createWriter(store: Store, t: WriterTables, meta: Database, touched: TouchRecorder): StoreWriter {
  const owner = (a: string): string | undefined => t.get('ips', addressKey(a)) as string | undefined
  return {
    store,
    putUser(user) {
      t.put('users', user.name, user)
    },
    deleteUser(id) {
      const user = t.get('users', id) as UserRecord | undefined
      if (user === undefined) return false
      for (const a of user.ip) if (owner(a) === id) t.remove('ips', addressKey(a))
      for (const c of user.client_ids ?? [])
        if (owner(CLIENT_ID_PREFIX + c) === id) t.remove('ips', CLIENT_ID_PREFIX + c)
      t.remove('lists', listKey(id, 'black'))
      t.remove('lists', listKey(id, 'white'))
      t.remove('users', id)
      return true
    },
    claimAddresses(userId, addresses) {
      return claimAddresses(t, owner, userId, addresses)
    },
    releaseAddresses(userId, addresses) {
      for (const a of addresses) if (owner(a) === userId) t.remove('ips', addressKey(a))
    },
    setClientIds(userId, ids) {
      return setClientIds(t, owner, userId, ids)
    },
    putList(scope, kind, entries) {
      if (entries.length === 0) t.remove('lists', listKey(scope, kind))
      else t.put('lists', listKey(scope, kind), [...entries])
    },
    putSubscriptionValue(key, value) {
      if (!key.startsWith(SUBSCRIPTION_PREFIX)) throw new Error('a list subscription key starts with sub:')
      if (value === undefined) t.remove('lists', key)
      else t.put('lists', key, value)
    },
    putServerDefaults(value) {
      t.put('settings', 'config', value)
    },
    putUserDefaults(value) {
      t.put('settings', 'userconfig', value)
    },
    putClient(client) {
      if (client.id.includes(':')) throw new Error('a categorization API client id holds no ":"')
      t.put('clients', client.id, client)
    },
    deleteClient(id) {
      return !id.includes(':') && t.remove('clients', id)
    },
    putApiClient(client) {
      t.put('clients', API_CLIENT_PREFIX + client.id, client)
    },
    deleteApiClient(id) {
      return t.remove('clients', API_CLIENT_PREFIX + id)
    },
    putMeta(key, value, reach = 'every-snapshot') {
      if (key === 'generation') throw new Error('the generation is bumped by write() itself')
      touched.meta(reach)
      meta.putSync(key, value)
    }
  }
}

/** What the write paths need of a store. */
export interface WriteTarget {
  readonly store: Store
  readonly path: string
  readonly root: RootDatabase
  readonly dbs: Record<DbName, Database>
}

/**
 * A write committed here: `fn` in one transaction that bumps the generation, resolved once durable.
 * A child transaction, so that a throw from `fn` rolls back what it already wrote (a plain async
 * transaction commits the puts made before the throw). Refused for policy on a store that follows Redis.
 */
export async function writeLocal<T>(target: WriteTarget, fn: (w: StoreWriter) => T): Promise<T> {
  const { dbs } = target
  try {
    const result = await target.root.childTransaction(() => {
      // Read inside the write transaction: a follower that marks the store first is seen here.
      const follows = followsSharedStore(dbs.meta)
      const recorded: StoreOp[] = []
      const touched = new TouchRecorder()
      const r = fn(
        createWriter(target.store, lmdbTables(dbs, touched, follows ? recorded : undefined), dbs.meta, touched)
      )
      if (recorded.length > 0)
        throw followsRedisError(target.path, dbs.meta.get(META_FOLLOWS) as FollowerMark | undefined)
      bumpGeneration(dbs.meta, follows ? 'keep' : 'none', touched)
      return r
    })
    await target.root.flushed
    return result
  } catch (err) {
    throw await commitFailure(target.path, err)
  }
}

/** Thrown to roll back the recording transaction of a remote write (never seen outside). */
const ROLLBACK = new Error('rollback')

/**
 * A write whose policy changes go to `commit` (the shared store), not here: `fn` runs on the replica
 * in a write transaction that is rolled back (the replica changes only when the follower applies the
 * shared store's record), recording its key changes and the replica position it read. A request
 * that changes no policy (meta only) commits here. Remote writes run concurrently, each computed on
 * the replica as it is when it starts: two that change the same key are ordered by the shared
 * store's conflict check (engine/replica/commit.ts), as two hosts' writes are.
 */
export async function writeRemote<T>(target: WriteTarget, fn: (w: StoreWriter) => T, commit: RemoteCommit): Promise<T> {
  const { dbs } = target
  let result: T | undefined
  const attempt = (): RemoteWrite => {
    const ops: StoreOp[] = []
    let basis = 0
    try {
      target.root.transactionSync(() => {
        basis = (dbs.meta.get('replica') as ReplicaPosition | undefined)?.seq ?? 0
        // The policy changes are journaled when the follower applies them (engine/store/replica.ts).
        const touched = new TouchRecorder()
        result = fn(createWriter(target.store, lmdbTables(dbs, touched, ops), dbs.meta, touched))
        if (ops.length > 0) throw ROLLBACK
        bumpGeneration(dbs.meta, followsSharedStore(dbs.meta) ? 'keep' : 'none', touched)
      })
    } catch (err) {
      if (err !== ROLLBACK) throw err
    }
    return { ops, basis }
  }
  const first = attempt()
  if (first.ops.length > 0) await commit(first, attempt)
  else await target.root.flushed
  return result as T
}
