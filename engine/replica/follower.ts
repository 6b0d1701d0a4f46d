/**
 * The follower: keeps this host's LMDB store a replica of the shared Redis store (docs/contract.md, Several hosts).
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
 *   redis-behind    Redis holds the same store but fewer change records than this replica applied:
 *                   it lost its latest writes (a restart without them under `appendfsync everysec`,
 *                   an older backup restored, a failover to a replica that was behind). New records
 *                   would reuse the lost ones' sequence numbers, so this host stops following: it
 *                   keeps its replica, logs loudly every 30 s, and API writes are refused (the
 *                   state is stored with the replica, so a restart keeps it) until an operator
 *                   reseeds Redis from the best replica (`filterd redis-seed --force`), or has the
 *                   hosts adopt what Redis holds (`filterd redis-seed --adopt`).
 *
 * Apply: the records of one XREAD (up to 1,000) are applied in one LMDB transaction that bumps the
 * generation and records the last record's id and sequence number (ReplicaStore.applyRecords), so a
 * kill mid-apply leaves the previous position and the next start continues from it. Each record's
 * `seq` must follow the replica's by one: a jump means records were trimmed from the stream before
 * this host read them, and the follower bootstraps.
 *
 * Bootstrap, with no gap and no double apply: one MULTI reads the epoch, `seq` and the stream's last
 * id (a consistent point S, as a write is one Lua script that moves all three); then HSCAN copies
 * the hashes into the replica in batches, in place: a replica that fell behind keeps serving what
 * it holds meanwhile (a key is written only where its value differs), and the keys Redis does not
 * hold are swept out after the copy. Every hash value carries its version, the `seq`
 * of the record that last wrote the key (a deleted key leaves a tombstone with its version), so the
 * copy knows which keys changed after S (version > S) and up to which record M it reaches. The
 * bootstrap then replays the records S+1..M itself, skipping each key change whose version is not
 * newer than the one copied: no record is applied twice and no older value overwrites a newer one.
 * A key HSCAN returns twice (a rehash) is written once, or again only at a newer version. The replica is marked
 * complete, at position M or later, only after that. Until then `replica.state` is
 * `bootstrapping`: a kill there restarts the bootstrap, and the API refuses writes. A bootstrap
 * that finds records S+1..M trimmed from the stream, or tombstones newer than S dropped, starts over.
 * The phases are engine/replica/bootstrap.ts.
 *
 * Before anything else the follower marks the store as following (`replica.follows`): from then on a
 * role or command without `common.redis-ip` cannot write policy to it (engine/store/replica.ts). While
 * following, it audits the replica against Redis (engine/replica/audit.ts) and checks that the
 * generation moved only with its applies: a difference is reported as `diverged` on /health and
 * /metrics, and logged loudly, but never repaired silently.
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Logger } from '../log/index.js'
import { POLICY_DBS, type ReplicaPosition, type ReplicaStore, type StoreOp } from '../store/index.js'
import { ReplicaAudit } from './audit.js'
import { BATCH_KEYS, Bootstrap } from './bootstrap.js'
import { connectSharedStore, parseRecord, storedValue, whenReady, type SharedStoreSettings } from './redis.js'

export type FollowerState =
  | 'starting'
  | 'initializing'
  | 'bootstrapping'
  | 'following'
  | 'redis-down'
  | 'redis-lost'
  | 'epoch-mismatch'
  | 'redis-behind'
  | 'stopped'

export const FOLLOWER_STATES: readonly FollowerState[] = [
  'starting',
  'initializing',
  'bootstrapping',
  'following',
  'redis-down',
  'redis-lost',
  'epoch-mismatch',
  'redis-behind',
  'stopped'
]

/** Why a replica does not hold what Redis holds (engine/replica/audit.ts), if it was found so. */
export interface Divergence {
  /** Keys the last audit pass found here that Redis does not hold, or holds with another value. */
  keys: number
  /** A few of them, `<db>/<key>`. */
  examples: readonly string[]
  /** The generation was bumped by a writer that did not go through the stream. */
  foreignGeneration: boolean
}

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
  /** Key changes written to the replica (bootstrap copies and record applies). */
  appliedOps: number
  /** Key changes a bootstrap skipped because the replica already held that version or a newer one. */
  skippedOps: number
  divergence: Divergence
  /** Full audit passes over the replica since start. */
  auditPasses: number
}

/** Whether the replica was found to differ from Redis (see `Divergence`). */
export function diverged(d: Divergence): boolean {
  return d.keys > 0 || d.foreignGeneration
}

const READ_COUNT = 1000
const BLOCK_MS = 1000
const LOUD_EVERY_MS = 30_000
/** At most one audit batch a second, so the audit never holds the stream back for long. */
const AUDIT_EVERY_MS = 1000

const sleep = async (ms: number): Promise<void> => {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

function idTime(id: string): number {
  return Number(id.slice(0, id.indexOf('-')))
}

export interface FollowerOptions {
  readonly logger: Logger
  /** Called after each applied batch (tests, metrics). */
  readonly onApply?: (status: FollowerStatus) => void
  /** Called when a read of the stream found no record, before Redis's `seq` is read (tests). */
  readonly onIdleRead?: () => Promise<void>
}

export class Follower {
  readonly status: FollowerStatus
  private readonly redis: Redis
  private closed = false
  private loop: Promise<void> | undefined
  /** When each loud message was last logged (each its own 30 s). */
  private readonly lastLoud = new Map<string, number>()
  private readonly audit: ReplicaAudit
  private auditedAt = 0

  constructor(
    private readonly store: ReplicaStore,
    private readonly settings: SharedStoreSettings,
    private readonly options: FollowerOptions
  ) {
    // Its own connection: XREAD BLOCK holds it. A command timeout bounds a read hung on a dead peer.
    this.redis = connectSharedStore(settings, { commandTimeout: BLOCK_MS + 4000 })
    this.audit = new ReplicaAudit(this.redis, settings, store)
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
      appliedRecords: 0,
      appliedOps: 0,
      skippedOps: 0,
      divergence: { keys: 0, examples: [], foreignGeneration: false },
      auditPasses: 0
    }
  }

  start(): void {
    this.loop ??= this.run()
  }

  async close(): Promise<void> {
    this.closed = true
    this.redis.disconnect()
    await this.loop
    this.status.state = 'stopped'
  }

  private async run(): Promise<void> {
    // Marked before Redis is even asked: a writer without Redis is refused from here on, so nothing
    // it writes can miss the seed of a first start or the copy of a bootstrap.
    await this.store.markFollower(this.settings.where)
    while (!this.closed) {
      try {
        await this.step()
      } catch (err) {
        if (this.closed) break
        if (this.status.state !== 'redis-down') {
          this.options.logger.error(
            { err: (err as Error).message, redis: this.settings.where },
            'shared store unreachable: DNS keeps answering from the local replica; retrying every second'
          )
        }
        this.status.state = 'redis-down'
        await sleep(1000)
      }
    }
  }

  private loud(message: string, fields: Record<string, unknown>): void {
    const now = Date.now()
    if (now - (this.lastLoud.get(message) ?? 0) < LOUD_EVERY_MS) return
    this.lastLoud.set(message, now)
    this.options.logger.error({ ...fields, redis: this.settings.where }, message)
  }

  private async step(): Promise<void> {
    const { keys } = this.settings
    await whenReady(this.redis, 1000)
    const epoch = await this.redis.get(keys.epoch)
    const position = this.store.replicaPosition()
    const stored = this.store.replicaState()
    // A replica that holds a whole store: following it, or stopped because Redis went back.
    const complete = position !== undefined && (stored === 'following' || stored === 'redis-behind')
    if (epoch === null) {
      if (position === undefined && stored !== 'bootstrapping') {
        await this.initialize()
        return
      }
      this.status.state = 'redis-lost'
      this.loud(
        'the shared store is EMPTY (Redis lost its data): this host keeps its replica and keeps answering DNS; API writes are refused until Redis is reseeded from the best replica with `filterd redis-seed --config FILE` (docs/operations-redis.md)',
        { epoch: position?.epoch }
      )
      await sleep(1000)
      return
    }
    if (!complete || position.epoch !== epoch) {
      if (complete && position.epoch !== epoch && !epoch.startsWith('reseed:')) {
        this.status.state = 'epoch-mismatch'
        this.loud(
          'the shared store is not the one this replica came from (another host created a new one): keeping this replica; reseed Redis from the best replica with `filterd redis-seed --config FILE`',
          { replica: position.epoch, redis: epoch }
        )
        await sleep(1000)
        return
      }
      await this.bootstrap()
      return
    }
    if (stored === 'redis-behind') {
      await this.behind(position)
      return
    }
    await this.follow(position)
    await this.check()
  }

  /** Replaces the replica with a snapshot of Redis (engine/replica/bootstrap.ts). */
  async bootstrap(): Promise<void> {
    await Bootstrap.run({
      redis: this.redis,
      settings: this.settings,
      store: this.store,
      status: this.status,
      logger: this.options.logger,
      closed: () => this.closed
    })
    // A complete bootstrap made the replica Redis's state: what an audit pass found before is gone.
    if (this.store.replicaState() === 'following') {
      this.audit.reset()
      this.status.divergence = { keys: 0, examples: [], foreignGeneration: false }
    }
  }

  /**
   * Whether the replica still holds only what came from the stream: the generation check every
   * step, one audit batch at most every AUDIT_EVERY_MS (see engine/replica/audit.ts).
   */
  private async check(): Promise<void> {
    if (this.status.state !== 'following' || this.closed) return
    const d = this.status.divergence
    d.foreignGeneration = this.store.foreignGeneration()
    const now = Date.now()
    if (now - this.auditedAt >= AUDIT_EVERY_MS) {
      this.auditedAt = now
      const position = this.store.replicaPosition()
      if (position !== undefined) await this.audit.step(position)
      const last = this.audit.last
      if (last !== undefined) {
        d.keys = last.keys
        d.examples = last.examples
      }
      this.status.auditPasses = this.audit.passes
    }
    if (diverged(d)) {
      this.loud(
        'this replica DIVERGED from the shared store: it holds changes that did not come from Redis (a writer without common.redis-ip, or one that wrote LMDB itself); this host filters by a policy the other hosts do not have. It keeps following; repair it with a bootstrap (docs/operations-redis.md, "A replica that diverged")',
        { keys: d.keys, examples: d.examples, foreignGeneration: d.foreignGeneration }
      )
    }
  }

  /**
   * Redis's `seq`, read with its epoch: undefined when Redis no longer holds this replica's store
   * (emptied, or another one), which the next step reports instead of a store that went back.
   */
  private async seqOf(position: ReplicaPosition): Promise<number | undefined> {
    const { keys } = this.settings
    const got = await this.redis.multi().get(keys.epoch).get(keys.seq).exec()
    if (got === null) return undefined
    for (const [err] of got) if (err !== null) throw err
    if (got[0]![1] !== position.epoch) return undefined
    return Number(got[1]![1] ?? 0)
  }

  /**
   * Redis lacks records this replica applied (see `redis-behind` in the file comment): stops here,
   * loudly, keeping the replica; the state is stored so the API refuses writes, across restarts too.
   */
  private async behind(position: ReplicaPosition, seq?: number): Promise<void> {
    // Redis's seq when the caller has not read it; none: Redis no longer holds this store at all.
    const redisSeq = seq ?? (await this.seqOf(position))
    if (redisSeq === undefined) return
    this.status.redisSeq = redisSeq
    this.status.lagRecords = 0
    if (this.store.replicaState() !== 'redis-behind') await this.store.stopFollowing('redis-behind')
    this.status.state = 'redis-behind'
    this.loud(
      'the shared store WENT BACK: Redis holds fewer change records than this replica applied (it lost its latest writes). This host keeps its replica and keeps answering DNS; API writes are refused until an operator reseeds Redis from the best replica (`filterd redis-seed --force`) or adopts what Redis holds (`filterd redis-seed --adopt`), docs/operations-redis.md',
      { applied: position.seq, redis: redisSeq }
    )
    await sleep(1000)
  }

  /** Reads and applies the next records; returns after one XREAD (data or a 1 s timeout). */
  private async follow(position: ReplicaPosition): Promise<void> {
    const { keys } = this.settings
    if (this.status.state !== 'following')
      this.options.logger.info({ seq: position.seq, redis: this.settings.where }, 'following the shared store')
    this.status.state = 'following'
    this.status.epoch = position.epoch
    const reply = await this.redis.xreadBuffer(
      'COUNT',
      READ_COUNT,
      'BLOCK',
      BLOCK_MS,
      'STREAMS',
      keys.changes,
      position.id
    )
    if (this.closed) return
    if (reply === null || reply.length === 0) {
      await this.idle(position)
      return
    }
    const batch = await this.nextRecords(position, reply[0]![1])
    if (batch === undefined || batch.to.seq === position.seq) return
    const { ops, to } = batch
    await this.store.applyRecords(ops, to)
    const now = Date.now()
    this.status.appliedRecords += to.seq - position.seq
    this.status.appliedOps += ops.length
    this.status.appliedSeq = to.seq
    this.status.lagMs = Math.max(0, now - idTime(to.id))
    this.status.redisSeq = Math.max(this.status.redisSeq, to.seq)
    this.status.lagRecords = Math.max(0, this.status.redisSeq - to.seq)
    if (this.status.lagRecords === 0) this.status.currentAt = now
    this.options.onApply?.(this.status)
  }

  /** A read found no record: where Redis is, and whether the stream still holds our next record. */
  private async idle(position: ReplicaPosition): Promise<void> {
    await this.options.onIdleRead?.()
    const seq = await this.seqOf(position)
    if (seq === undefined) return
    if (seq < position.seq) {
      await this.behind(position, seq)
      return
    }
    this.status.redisSeq = seq
    this.status.lagRecords = seq - position.seq
    if (seq === position.seq) {
      this.status.currentAt = Date.now()
      this.status.lagMs = 0
    }
    if (seq > position.seq) {
      // A record committed since the XREAD timed out is read next time; only if the stream no
      // longer holds the one after ours was it trimmed past this replica.
      const next = await this.redis.xrange(this.settings.keys.changes, `(${position.id}`, '+', 'COUNT', 1)
      if (next.length > 0) return
      this.options.logger.warn(
        { applied: position.seq, redis: seq },
        "this replica fell behind the stream's retention: bootstrapping"
      )
      await this.bootstrap()
    }
  }

  /**
   * The records of one read that follow `position` without a gap; undefined when the first one
   * cannot be applied (Redis went back, or records were trimmed: handled here).
   */
  private async nextRecords(
    position: ReplicaPosition,
    entries: Array<[Buffer, Buffer[]]>
  ): Promise<{ ops: StoreOp[]; to: ReplicaPosition } | undefined> {
    const ops: StoreOp[] = []
    let to = position
    for (const [rawId, fields] of entries) {
      const record = parseRecord(fields)
      const s = record.seq
      if (s <= to.seq) {
        // After our position in the stream, a number already applied: Redis went back and reuses it.
        if (ops.length > 0) break
        await this.behind(position)
        return undefined
      }
      if (s !== to.seq + 1) {
        this.options.logger.warn(
          { applied: to.seq, next: s },
          'change records are missing (trimmed before this host read them): bootstrapping'
        )
        if (ops.length > 0) break
        await this.bootstrap()
        return undefined
      }
      for (const op of record.ops) ops.push(op)
      to = { epoch: position.epoch, id: rawId.toString(), seq: s }
    }
    return { ops, to }
  }

  /** Redis holds no store and this replica never followed one: create it from this replica. */
  private async initialize(): Promise<void> {
    this.status.state = 'initializing'
    const host = randomUUID()
    const got = await this.redis.set(this.settings.keys.init, host, 'EX', 120, 'NX')
    if (got === null) {
      await sleep(500)
      return
    } // another host creates it; bootstrap from it next
    try {
      const epoch = await seedSharedStore(this.redis, this.settings, this.store, 'init')
      await this.store.completeReplica({ epoch, id: '0-0', seq: 0 })
      this.status.epoch = epoch
      this.options.logger.info(
        { epoch, redis: this.settings.where },
        "created the shared store from this host's replica"
      )
    } finally {
      await this.redis.del(this.settings.keys.init)
    }
  }
}

/**
 * Writes this replica's policy into Redis as a new store (`<kind>:<uuid>` epoch): the hashes
 * replaced (every key at version 0), `seq` 0, the stream emptied; the epoch is set last, so a host reading Redis meanwhile
 * sees no store. `kind` `reseed` (an operator's `filterd redis-seed`) tells the other hosts to
 * replace their replicas with it; `init` (a first start) does not.
 */
export async function seedSharedStore(
  redis: Redis,
  settings: SharedStoreSettings,
  store: ReplicaStore,
  kind: 'init' | 'reseed'
): Promise<string> {
  const { keys } = settings
  await redis.del(
    keys.epoch,
    keys.changes,
    keys.seq,
    keys.tombs,
    keys.tombfloor,
    ...POLICY_DBS.map((db) => keys.hash[db])
  )
  for (const db of POLICY_DBS) {
    let args: Array<string | Buffer> = []
    const flush = async (): Promise<void> => {
      if (args.length > 0) await redis.hset(keys.hash[db], ...args)
      args = []
    }
    for (const { key, value } of store.entries(db)) {
      args.push(key, storedValue(0, value))
      if (args.length >= 2 * BATCH_KEYS) await flush()
    }
    await flush()
  }
  const epoch = `${kind}:${randomUUID()}`
  await redis.multi().set(keys.seq, 0).set(keys.epoch, epoch).exec()
  return epoch
}

/**
 * Keeps what Redis holds and names it a new store (`reseed:<uuid>` epoch): every host bootstraps
 * from it, dropping what its replica holds beyond it (`filterd redis-seed --adopt`, after Redis
 * went back).
 */
export async function adoptSharedStore(redis: Redis, settings: SharedStoreSettings): Promise<string> {
  const epoch = `reseed:${randomUUID()}`
  await redis.set(settings.keys.epoch, epoch)
  return epoch
}
