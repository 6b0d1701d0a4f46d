/**
 * The store as a replica of the shared Redis store (engine/replica): the narrow interface the
 * follower, the bootstrap and `filterd redis-seed` use (`ReplicaStore`, which `Store` implements), and
 * its LMDB side (`LmdbReplica`): each kind of apply one method, each one LMDB transaction that also
 * bumps the generation, so readers notice it.
 *
 * What `meta` holds for a replica:
 *   replica             the last applied position (epoch, stream id, seq); none while bootstrapping
 *   replica.state       'bootstrapping', 'following' or 'redis-behind' (what the API's writes check)
 *   replica.follows     the mark that this store follows a shared store ({ redis, since }), written
 *                       by the follower before it creates or copies anything. Every writer that does
 *                       not go through Redis refuses policy writes to a marked store
 *                       (ENGINE_STORE_FOLLOWS_REDIS): a role or command started without
 *                       `common.redis-ip` would otherwise change this host alone, silently.
 *   replica.generation  the generation the last legitimate write left (an apply, or a meta-only write
 *                       of this host): a generation that differs was bumped by a writer behind the
 *                       replica's back, which the sync role reports (/health, /metrics) until a
 *                       bootstrap makes the replica Redis's state again.
 * `filterd redis-seed --detach` removes all four (turning Redis off, or before a repair bootstrap).
 */
import { isDeepStrictEqual } from 'node:util'
import type { Database, RootDatabase } from 'lmdb'
import { EngineError } from '../errors.js'
import type { DbName, PolicyDb, ReplicaPosition, StoreOp } from './types.js'
import { commitFailure } from './commit-failure.js'
import { globalEntry, journalGeneration, TouchRecorder } from './journal.js'

export const META_POSITION = 'replica'
export const META_STATE = 'replica.state'
export const META_FOLLOWS = 'replica.follows'
const META_GENERATION = 'replica.generation'

/** The follower's mark (`replica.follows`). */
export interface FollowerMark {
  /** Where the shared store was (`host:port` or the Sentinel set) when this store began following it. */
  readonly redis: string
  readonly since: string
}

/** The narrow view of the store that keeps it a replica (engine/replica); `Store` implements it. */
export interface ReplicaStore {
  generation(): number
  /** The follower's last applied position, or undefined before the first bootstrap (and during one). */
  replicaPosition(): ReplicaPosition | undefined
  /** `replica.state` as the follower last recorded it. */
  replicaState(): string | undefined
  /** Whether a writer bumped the generation without going through the stream (see the file comment). */
  foreignGeneration(): boolean
  /** Up to `limit` keys of a policy database after `after` (all from the start without it), in order. */
  policyKeys(db: PolicyDb, after: string | undefined, limit: number): string[]
  /** The same with their values (the audit compares them with Redis). */
  policyEntries(db: PolicyDb, after: string | undefined, limit: number): Array<{ key: string; value: unknown }>
  /** Every key and value of one policy database (a seed of the shared store from this replica). */
  entries(db: PolicyDb): Iterable<{ key: string; value: unknown }>
  /** Marks the store as following `redis` (kept if marked already). Durable. */
  markFollower(redis: string): Promise<void>
  /** Applies stream records and records their position, in one transaction (not waiting for the fsync). */
  applyRecords(ops: readonly StoreOp[], position: ReplicaPosition): Promise<void>
  /** Forgets the position and says `bootstrapping` (a kill from here restarts the bootstrap). Durable. */
  startBootstrap(): Promise<void>
  /**
   * A bootstrap's copy batch: `copies` (keys unchanged since the snapshot) written only where the
   * replica holds another value, then `changes` written over. Resolves to the copies skipped.
   */
  copySnapshot(copies: readonly StoreOp[], changes: readonly StoreOp[]): Promise<number>
  /** A bootstrap's sweep or replay batch (no position yet). */
  applyBootstrap(ops: readonly StoreOp[]): Promise<void>
  /** The replica holds Redis's state whole at `position`: `following` from there. Durable. */
  completeReplica(position: ReplicaPosition): Promise<void>
  /** Redis lost records this replica applied: stop following (kept across restarts). Durable. */
  stopFollowing(state: 'redis-behind'): Promise<void>
}

/** Whether the store follows a shared store: marked, or holding a follower's position or state (older stores). */
export function followsSharedStore(meta: Database): boolean {
  return (
    meta.get(META_FOLLOWS) !== undefined || meta.get(META_POSITION) !== undefined || meta.get(META_STATE) !== undefined
  )
}

export function generationOf(meta: Database): number {
  const g: unknown = meta.get('generation')
  return typeof g === 'number' ? g : 0
}

/**
 * Bumps the generation inside a write transaction, journaling what the write touched (`touched`;
 * none: global, engine/store/journal.ts). `audit`: 'none' for a store that follows nothing;
 * 'keep' for a legitimate write of a replica, which moves `replica.generation` along only where it
 * was in step (a foreign bump stays visible); 'reset' once the replica holds Redis's state whole.
 */
export function bumpGeneration(meta: Database, audit: 'none' | 'keep' | 'reset', touched?: TouchRecorder): void {
  const g = generationOf(meta)
  meta.putSync('generation', g + 1)
  journalGeneration(meta, g + 1, touched === undefined ? globalEntry() : touched.entry())
  if (audit === 'none') return
  const held: unknown = meta.get(META_GENERATION)
  if (audit === 'reset' || held === undefined || held === g) meta.putSync(META_GENERATION, g + 1)
}

/** The error of a policy write that does not go through Redis to a store that follows it. */
export function followsRedisError(path: string, mark: FollowerMark | undefined): EngineError {
  const where =
    mark === undefined ? 'a shared Redis store' : `the shared Redis store at ${mark.redis} (since ${mark.since})`
  return new EngineError(
    'ENGINE_STORE_FOLLOWS_REDIS',
    `the store at ${path} is a replica of ${where}: policy writes must go through Redis, ` +
      'and this process has no common.redis-ip (or common.redis-sentinels) in its config. Set common.redis-ip in the config and restart ' +
      'it (docs/operations-redis.md), or turn Redis off for this host with `filterd redis-seed --detach`; nothing was written'
  )
}

/** The LMDB side of `ReplicaStore`: each apply one transaction (a child one, so a throw midway rolls it back). */
export class LmdbReplica {
  constructor(
    private readonly root: RootDatabase,
    private readonly dbs: Record<DbName, Database>,
    private readonly path: string
  ) {}

  foreignGeneration(): boolean {
    const held: unknown = this.dbs.meta.get(META_GENERATION)
    return held !== undefined && held !== generationOf(this.dbs.meta)
  }

  policyEntries(db: PolicyDb, after: string | undefined, limit: number): Array<{ key: string; value: unknown }> {
    const out: Array<{ key: string; value: unknown }> = []
    for (const { key, value } of this.dbs[db].getRange(
      after === undefined ? { limit } : { start: after, limit: limit + 1 }
    )) {
      if (key === after) continue
      out.push({ key: key as string, value })
      if (out.length >= limit) break
    }
    return out
  }

  async markFollower(redis: string): Promise<void> {
    if (this.dbs.meta.get(META_FOLLOWS) !== undefined) return
    const mark: FollowerMark = { redis, since: new Date().toISOString() }
    await this.apply(true, (meta) => {
      meta.putSync(META_FOLLOWS, mark)
      bumpGeneration(meta, 'reset')
    })
  }

  async applyRecords(ops: readonly StoreOp[], position: ReplicaPosition): Promise<void> {
    // Not waiting for the fsync: the records and their position commit together, so a crash loses
    // at most the last few applied batches with their position, and they are read again from Redis.
    await this.apply(false, (meta) => {
      bumpGeneration(meta, 'keep', this.put(ops))
      meta.putSync(META_POSITION, position)
    })
  }

  async startBootstrap(): Promise<void> {
    await this.apply(true, (meta) => {
      meta.removeSync(META_POSITION)
      bumpGeneration(meta, 'keep')
      meta.putSync(META_STATE, 'bootstrapping')
    })
  }

  async copySnapshot(copies: readonly StoreOp[], changes: readonly StoreOp[]): Promise<number> {
    let skipped = 0
    await this.apply(false, (meta) => {
      // HSCAN may return a key twice, and a replica bootstrapped in place holds most keys already.
      const touched = new TouchRecorder()
      for (const [db, key, value] of copies) {
        const d = this.dbs[db]
        if (isDeepStrictEqual(d.get(key), value)) skipped++
        else {
          d.putSync(key, value)
          touched.op(db, key)
        }
      }
      this.put(changes, touched)
      bumpGeneration(meta, 'keep', touched)
    })
    return skipped
  }

  async applyBootstrap(ops: readonly StoreOp[]): Promise<void> {
    await this.apply(false, (meta) => {
      bumpGeneration(meta, 'keep', this.put(ops))
    })
  }

  async completeReplica(position: ReplicaPosition): Promise<void> {
    await this.apply(true, (meta) => {
      bumpGeneration(meta, 'reset')
      meta.putSync(META_POSITION, position)
      meta.putSync(META_STATE, 'following')
    })
  }

  async stopFollowing(state: 'redis-behind'): Promise<void> {
    await this.apply(true, (meta) => {
      bumpGeneration(meta, 'keep')
      meta.putSync(META_STATE, state)
    })
  }

  /** Forgets every trace of a shared store: the store is this host's own again (`filterd redis-seed --detach`). */
  async detach(): Promise<boolean> {
    const { meta } = this.dbs
    if (!followsSharedStore(meta) && meta.get(META_GENERATION) === undefined) return false
    await this.apply(true, () => {
      for (const key of [META_FOLLOWS, META_POSITION, META_STATE, META_GENERATION]) meta.removeSync(key)
      bumpGeneration(meta, 'none')
    })
    return true
  }

  /** Applies `ops`, recording each key in `touched` (a new recorder when not given), which it returns. */
  private put(ops: readonly StoreOp[], touched = new TouchRecorder()): TouchRecorder {
    for (const [db, key, value] of ops) {
      const d = this.dbs[db]
      touched.op(db, key)
      if (value === undefined || value === null) d.removeSync(key)
      else d.putSync(key, value)
    }
    return touched
  }

  private async apply(durable: boolean, fn: (meta: Database) => void): Promise<void> {
    try {
      await this.root.childTransaction(() => {
        fn(this.dbs.meta)
      })
      if (durable) await this.root.flushed
    } catch (err) {
      throw await commitFailure(this.path, err)
    }
  }
}
