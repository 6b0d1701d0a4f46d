/**
 * The follower: keeps this host's LMDB store a replica of the shared Redis store (DESIGN.md, Scale).
 * The sync role runs one per host; the DNS server, the block page and the API read only LMDB.
 *
 * States (`state`, reported on /health and /metrics):
 *   starting        not yet talked to Redis
 *   initializing    Redis held no store and this host creates it from its own replica (first start)
 *   bootstrapping   copying a snapshot of Redis into the replica
 *   following       applying change records as they arrive (XREAD BLOCK)
 *   redis-down      Redis does not answer: the replica keeps serving, the loop retries every second
 *   redis-lost      Redis answers but has no store while this replica has one: Redis lost its data.
 *                   Logged loudly every 30 s; the replica is kept (never wiped) and API writes get 503
 *                   until an operator reseeds Redis from the best replica (`filterd redis-seed`).
 *   epoch-mismatch  Redis holds a different store created by another host's first start (not a
 *                   reseed): kept apart the same way, loudly, until an operator decides.
 *
 * Apply: the records of one XREAD (up to 1,000) are applied in one LMDB transaction that bumps the
 * generation and records the last record's id and sequence number (Store.applyReplicated), so a
 * kill mid-apply leaves the previous position and the next start continues from it. Each record's
 * `seq` must follow the replica's by one: a jump means records were trimmed from the stream before
 * this host read them, and the follower bootstraps.
 *
 * Bootstrap: one MULTI reads the epoch, `seq` and the stream's last id (a consistent point, as a
 * write is one Lua script that moves all three); then HSCAN copies the hashes into the cleared
 * replica in batches, and following resumes from that point. HSCAN may see writes made after the
 * point; records after it are replayed over them, and as a record holds final key values (not
 * increments) replaying it over its own effect changes nothing, so the replica ends equal to Redis at
 * the last applied record, with no gap. Until the last batch, `replica.state` is `bootstrapping`:
 * a kill there restarts the bootstrap, and the API refuses writes.
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { pack, unpack } from 'msgpackr'
import type { Logger } from '../log/index.js'
import { POLICY_DBS, type ReplicaPosition, type Store, type StoreOp } from '../store/index.js'
import { connectSharedStore, whenReady, type SharedStoreSettings } from './redis.js'

export type FollowerState = 'starting' | 'initializing' | 'bootstrapping' | 'following' | 'redis-down' | 'redis-lost' | 'epoch-mismatch' | 'stopped'

export const FOLLOWER_STATES: readonly FollowerState[] = ['starting', 'initializing', 'bootstrapping', 'following', 'redis-down', 'redis-lost', 'epoch-mismatch', 'stopped']

export interface FollowerStatus {
  state: FollowerState
  /** The shared store's epoch this replica holds. */
  epoch: string | undefined
  /** Last applied sequence number, and Redis's last one when last seen. */
  appliedSeq: number
  redisSeq: number
  /** Records behind Redis (redisSeq - appliedSeq) when last seen. */
  lagRecords: number
  /** ms between the last applied record's creation in Redis and its apply here. */
  lagMs: number
  /** When the replica was last known to be current (ms), 0 before. */
  currentAt: number
  bootstraps: number
  appliedRecords: number
}

const BATCH_KEYS = 5000
const READ_COUNT = 1000
const BLOCK_MS = 1000
const LOUD_EVERY_MS = 30_000

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

function idTime (id: string): number {
  return Number(id.slice(0, id.indexOf('-')))
}

export interface FollowerOptions {
  readonly logger: Logger
  /** Called after each applied batch (tests, metrics). */
  readonly onApply?: (status: FollowerStatus) => void
}

export class Follower {
  readonly status: FollowerStatus
  private readonly redis: Redis
  private closed = false
  private loop: Promise<void> | undefined
  private lastLoud = 0

  constructor (private readonly store: Store, private readonly settings: SharedStoreSettings, private readonly options: FollowerOptions) {
    // Its own connection: XREAD BLOCK holds it. A command timeout bounds a read hung on a dead peer.
    this.redis = connectSharedStore(settings, { commandTimeout: BLOCK_MS + 4000 })
    const p = store.replicaPosition()
    this.status = {
      state: 'starting',
      epoch: p?.epoch,
      appliedSeq: p?.seq ?? 0,
      redisSeq: 0,
      lagRecords: 0,
      lagMs: 0,
      currentAt: 0,
      bootstraps: 0,
      appliedRecords: 0
    }
  }

  start (): void {
    this.loop ??= this.run()
  }

  async close (): Promise<void> {
    this.closed = true
    this.redis.disconnect()
    await this.loop
    this.status.state = 'stopped'
  }

  private async run (): Promise<void> {
    while (!this.closed) {
      try {
        await this.step()
      } catch (err) {
        if (this.closed) break
        if (this.status.state !== 'redis-down') {
          this.options.logger.error({ err: (err as Error).message, redis: this.settings.where }, 'shared store unreachable: DNS keeps answering from the local replica; retrying every second')
        }
        this.status.state = 'redis-down'
        await sleep(1000)
      }
    }
  }

  private loud (message: string, fields: Record<string, unknown>): void {
    const now = Date.now()
    if (now - this.lastLoud < LOUD_EVERY_MS) return
    this.lastLoud = now
    this.options.logger.error({ ...fields, redis: this.settings.where }, message)
  }

  private async step (): Promise<void> {
    const { keys } = this.settings
    await whenReady(this.redis, 1000)
    const epoch = await this.redis.get(keys.epoch)
    const position = this.store.replicaPosition()
    const complete = position !== undefined && this.store.replicaState() === 'following'
    if (epoch === null) {
      if (position === undefined && this.store.replicaState() !== 'bootstrapping') {
        await this.initialize()
        return
      }
      this.status.state = 'redis-lost'
      this.loud('the shared store is EMPTY (Redis lost its data): this host keeps its replica and keeps answering DNS; API writes are refused until Redis is reseeded from the best replica with `filterd redis-seed --config FILE` (docs/operations-redis.md)', { epoch: position?.epoch })
      await sleep(1000)
      return
    }
    if (!complete || position.epoch !== epoch) {
      if (complete && position.epoch !== epoch && !epoch.startsWith('reseed:')) {
        this.status.state = 'epoch-mismatch'
        this.loud('the shared store is not the one this replica came from (another host created a new one): keeping this replica; reseed Redis from the best replica with `filterd redis-seed --config FILE`', { replica: position.epoch, redis: epoch })
        await sleep(1000)
        return
      }
      await this.bootstrap()
      return
    }
    await this.follow(position)
  }

  /** Reads and applies the next records; returns after one XREAD (data or a 1 s timeout). */
  private async follow (position: ReplicaPosition): Promise<void> {
    const { keys } = this.settings
    if (this.status.state !== 'following') this.options.logger.info({ seq: position.seq, redis: this.settings.where }, 'following the shared store')
    this.status.state = 'following'
    this.status.epoch = position.epoch
    const reply = await this.redis.xreadBuffer('COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', keys.changes, position.id)
    if (this.closed) return
    if (reply === null || reply.length === 0) {
      const seq = Number(await this.redis.get(keys.seq) ?? 0)
      this.status.redisSeq = seq
      this.status.lagRecords = Math.max(0, seq - position.seq)
      if (seq === position.seq) { this.status.currentAt = Date.now(); this.status.lagMs = 0 }
      if (seq > position.seq) {
        // Records exist after ours but the stream no longer holds them: trimmed past this replica.
        this.options.logger.warn({ applied: position.seq, redis: seq }, 'this replica fell behind the stream\'s retention: bootstrapping')
        await this.bootstrap()
      }
      return
    }
    const entries = reply[0]![1]
    const ops: StoreOp[] = []
    let seq = position.seq
    let id = position.id
    for (const [rawId, fields] of entries) {
      const f = new Map<string, Buffer>()
      for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!.toString(), fields[i + 1]!)
      const s = Number(f.get('seq')?.toString())
      if (s <= seq) continue
      if (s !== seq + 1) {
        this.options.logger.warn({ applied: seq, next: s }, 'change records are missing (trimmed before this host read them): bootstrapping')
        if (ops.length > 0) break
        await this.bootstrap()
        return
      }
      for (const op of unpack(f.get('ops')!) as StoreOp[]) ops.push(op)
      seq = s
      id = rawId.toString()
    }
    if (seq === position.seq) return
    await this.store.applyReplicated(ops, { epoch: position.epoch, id, seq })
    const now = Date.now()
    this.status.appliedRecords += seq - position.seq
    this.status.appliedSeq = seq
    this.status.lagMs = Math.max(0, now - idTime(id))
    this.status.redisSeq = Math.max(this.status.redisSeq, seq)
    this.status.lagRecords = Math.max(0, this.status.redisSeq - seq)
    if (this.status.lagRecords === 0) this.status.currentAt = now
    this.options.onApply?.(this.status)
  }

  /** Replaces the replica with a snapshot of Redis (see the file comment). */
  async bootstrap (): Promise<void> {
    const { keys } = this.settings
    this.status.state = 'bootstrapping'
    const started = Date.now()
    const snap = await this.redis.multi().get(keys.epoch).get(keys.seq).xrevrange(keys.changes, '+', '-', 'COUNT', 1).exec()
    if (snap === null) throw new Error('snapshot transaction aborted')
    for (const [err] of snap) if (err !== null) throw err
    const epoch = snap[0]![1] as string | null
    if (epoch === null) return // emptied meanwhile: the next step reports it
    const seq = Number(snap[1]![1] ?? 0)
    const last = snap[2]![1] as Array<[string, string[]]>
    const id = last.length > 0 ? last[0]![0] : '0-0'
    this.options.logger.info({ epoch, seq, redis: this.settings.where }, 'bootstrapping this replica from the shared store')
    await this.store.applyReplicated([], undefined, { clear: true, state: 'bootstrapping' })
    let keysCopied = 0
    for (const db of POLICY_DBS) {
      let cursor = '0'
      let batch: StoreOp[] = []
      do {
        const [next, flat] = await this.redis.hscanBuffer(keys.hash[db], cursor, 'COUNT', 1000)
        cursor = next.toString()
        for (let i = 0; i + 1 < flat.length; i += 2) batch.push([db, flat[i]!.toString(), unpack(flat[i + 1]!)])
        if (batch.length >= BATCH_KEYS) { await this.store.applyReplicated(batch, undefined); keysCopied += batch.length; batch = [] }
        if (this.closed) return
      } while (cursor !== '0')
      if (batch.length > 0) { await this.store.applyReplicated(batch, undefined); keysCopied += batch.length }
    }
    await this.store.applyReplicated([], { epoch, id, seq }, { state: 'following' })
    this.status.bootstraps++
    this.status.epoch = epoch
    this.status.appliedSeq = seq
    this.options.logger.info({ keys: keysCopied, ms: Date.now() - started, seq }, 'bootstrap done; following the stream from the snapshot')
  }

  /** Redis holds no store and this replica never followed one: create it from this replica. */
  private async initialize (): Promise<void> {
    this.status.state = 'initializing'
    const host = randomUUID()
    const got = await this.redis.set(this.settings.keys.init, host, 'EX', 120, 'NX')
    if (got === null) { await sleep(500); return } // another host creates it; bootstrap from it next
    try {
      const epoch = await seedSharedStore(this.redis, this.settings, this.store, 'init')
      await this.store.applyReplicated([], { epoch, id: '0-0', seq: 0 }, { state: 'following' })
      this.status.epoch = epoch
      this.options.logger.info({ epoch, redis: this.settings.where }, 'created the shared store from this host\'s replica')
    } finally {
      await this.redis.del(this.settings.keys.init)
    }
  }
}

/**
 * Writes this replica's policy into Redis as a new store (`<kind>:<uuid>` epoch): the hashes
 * replaced, `seq` 0, the stream emptied; the epoch is set last, so a host reading Redis meanwhile
 * sees no store. `kind` `reseed` (an operator's `filterd redis-seed`) tells the other hosts to
 * replace their replicas with it; `init` (a first start) does not.
 */
export async function seedSharedStore (redis: Redis, settings: SharedStoreSettings, store: Store, kind: 'init' | 'reseed'): Promise<string> {
  const { keys } = settings
  await redis.del(keys.epoch, keys.changes, keys.seq, ...POLICY_DBS.map((db) => keys.hash[db]))
  for (const db of POLICY_DBS) {
    let args: Array<string | Buffer> = []
    const flush = async (): Promise<void> => { if (args.length > 0) await redis.hset(keys.hash[db], ...args); args = [] }
    for (const { key, value } of store.entries(db)) {
      args.push(key, pack(value))
      if (args.length >= 2 * BATCH_KEYS) await flush()
    }
    await flush()
  }
  const epoch = `${kind}:${randomUUID()}`
  await redis.multi().set(keys.seq, 0).set(keys.epoch, epoch).exec()
  return epoch
}
