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
 * generation and records the last record's id and sequence number (Store.applyReplicated), so a
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
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { unpack } from 'msgpackr'
import type { Logger } from '../log/index.js'
import { POLICY_DBS, type ReplicaPosition, type Store, type StoreOp } from '../store/index.js'
import { connectSharedStore, parseStored, storedValue, tombstoneVersion, whenReady, type SharedStoreSettings } from './redis.js'

export type FollowerState = 'starting' | 'initializing' | 'bootstrapping' | 'following' | 'redis-down' | 'redis-lost' | 'epoch-mismatch' | 'redis-behind' | 'stopped'

export const FOLLOWER_STATES: readonly FollowerState[] = ['starting', 'initializing', 'bootstrapping', 'following', 'redis-down', 'redis-lost', 'epoch-mismatch', 'redis-behind', 'stopped']

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
}

const BATCH_KEYS = 5000
const READ_COUNT = 1000
const BLOCK_MS = 1000
const LOUD_EVERY_MS = 30_000

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

function idTime (id: string): number {
  return Number(id.slice(0, id.indexOf('-')))
}

/** A change record of the stream: its sequence number and key changes. */
function parseRecord (fields: Buffer[]): { seq: number, ops: StoreOp[] } {
  const f = new Map<string, Buffer>()
  for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!.toString(), fields[i + 1]!)
  return { seq: Number(f.get('seq')?.toString()), ops: unpack(f.get('ops')!) as StoreOp[] }
}

const tagOf = (db: string, key: string): string => `${db}\0${key}`

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
      appliedRecords: 0,
      appliedOps: 0,
      skippedOps: 0
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
    if (now - (this.lastLoud.get(message) ?? 0) < LOUD_EVERY_MS) return
    this.lastLoud.set(message, now)
    this.options.logger.error({ ...fields, redis: this.settings.where }, message)
  }

  private async step (): Promise<void> {
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
    if (stored === 'redis-behind') {
      await this.behind(position)
      return
    }
    await this.follow(position)
  }

  /**
   * Redis lacks records this replica applied (see `redis-behind` in the file comment): stops here,
   * loudly, keeping the replica; the state is stored so the API refuses writes, across restarts too.
   */
  /**
   * Redis's `seq`, read with its epoch: undefined when Redis no longer holds this replica's store
   * (emptied, or another one), which the next step reports instead of a store that went back.
   */
  private async seqOf (position: ReplicaPosition): Promise<number | undefined> {
    const { keys } = this.settings
    const got = await this.redis.multi().get(keys.epoch).get(keys.seq).exec()
    if (got === null) return undefined
    for (const [err] of got) if (err !== null) throw err
    if (got[0]![1] !== position.epoch) return undefined
    return Number(got[1]![1] ?? 0)
  }

  private async behind (position: ReplicaPosition, seq?: number): Promise<void> {
    // Redis's seq when the caller has not read it; none: Redis no longer holds this store at all.
    const redisSeq = seq ?? await this.seqOf(position)
    if (redisSeq === undefined) return
    this.status.redisSeq = redisSeq
    this.status.lagRecords = 0
    if (this.store.replicaState() !== 'redis-behind') {
      await this.store.applyReplicated([], undefined, { state: 'redis-behind' })
    }
    this.status.state = 'redis-behind'
    this.loud('the shared store WENT BACK: Redis holds fewer change records than this replica applied (it lost its latest writes). This host keeps its replica and keeps answering DNS; API writes are refused until an operator reseeds Redis from the best replica (`filterd redis-seed --force`) or adopts what Redis holds (`filterd redis-seed --adopt`), docs/operations-redis.md', { applied: position.seq, redis: redisSeq })
    await sleep(1000)
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
      await this.options.onIdleRead?.()
      const seq = await this.seqOf(position)
      if (seq === undefined) return
      if (seq < position.seq) { await this.behind(position, seq); return }
      this.status.redisSeq = seq
      this.status.lagRecords = seq - position.seq
      if (seq === position.seq) { this.status.currentAt = Date.now(); this.status.lagMs = 0 }
      if (seq > position.seq) {
        // A record committed since the XREAD timed out is read next time; only if the stream no
        // longer holds the one after ours was it trimmed past this replica.
        const next = await this.redis.xrange(keys.changes, `(${position.id}`, '+', 'COUNT', 1)
        if (next.length > 0) return
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
      const record = parseRecord(fields)
      const s = record.seq
      if (s <= seq) {
        // After our position in the stream, a number already applied: Redis went back and reuses it.
        if (ops.length > 0) break
        await this.behind(position)
        return
      }
      if (s !== seq + 1) {
        this.options.logger.warn({ applied: seq, next: s }, 'change records are missing (trimmed before this host read them): bootstrapping')
        if (ops.length > 0) break
        await this.bootstrap()
        return
      }
      for (const op of record.ops) ops.push(op)
      seq = s
      id = rawId.toString()
    }
    if (seq === position.seq) return
    // Not waiting for the fsync: the records and their position commit together, so a crash loses
    // at most the last few applied batches with their position, and they are read again from Redis.
    await this.store.applyReplicated(ops, { epoch: position.epoch, id, seq }, { durable: false })
    const now = Date.now()
    this.status.appliedRecords += seq - position.seq
    this.status.appliedOps += ops.length
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
    // In place: the replica keeps serving DNS what it holds while the copy overwrites it; keys
    // Redis no longer has are swept after the copy. Until the end, no position (a kill restarts).
    const heldAny = POLICY_DBS.some((db) => this.store.policyKeys(db, undefined, 1).length > 0)
    await this.store.applyReplicated([], undefined, { forget: true, state: 'bootstrapping' })
    // Keys copied at a version after the snapshot point `seq` (changed during the copy): the
    // replay below skips their older changes. Keys at or before it cannot meet an older record.
    const newer = new Map<string, number>()
    let top = seq
    let keysCopied = 0
    // Keys unchanged since the snapshot, written only where the replica holds another value (HSCAN
    // may return a key twice; a replica bootstrapped in place holds most of them already), and keys
    // changed after it, written over (their newest version, as checked against `newer`).
    let copies: StoreOp[] = []
    let changes: StoreOp[] = []
    const flush = async (): Promise<void> => {
      if (copies.length + changes.length === 0) return
      const skipped = await this.store.applyReplicated(changes, undefined, { durable: false, copies })
      const written = copies.length + changes.length - skipped
      keysCopied += written
      this.status.appliedOps += written
      this.status.skippedOps += skipped
      copies = []
      changes = []
    }
    for (const db of POLICY_DBS) {
      let cursor = '0'
      do {
        const [next, flat] = await this.redis.hscanBuffer(keys.hash[db], cursor, 'COUNT', BATCH_KEYS)
        cursor = next.toString()
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const key = flat[i]!.toString()
          const { version, value } = parseStored(flat[i + 1]!)
          if (version > seq) {
            const tag = tagOf(db, key)
            const held = newer.get(tag)
            if (held !== undefined && held >= version) { this.status.skippedOps++; continue }
            newer.set(tag, version)
            if (version > top) top = version
            changes.push(value === undefined ? [db, key] : [db, key, value])
          } else if (value !== undefined) {
            // Unchanged since the snapshot (a tombstone: absent).
            copies.push([db, key, value])
          }
        }
        if (copies.length + changes.length >= BATCH_KEYS) await flush()
        if (this.closed) return
      } while (cursor !== '0')
    }
    await flush()
    // The sweep: keys this replica holds that Redis does not (deleted, or from another store).
    for (const db of heldAny ? POLICY_DBS : []) {
      let after: string | undefined
      for (;;) {
        const held = this.store.policyKeys(db, after, BATCH_KEYS)
        if (held.length === 0) break
        after = held[held.length - 1]
        const stored = await this.redis.hmgetBuffer(keys.hash[db], ...held)
        const gone: StoreOp[] = []
        held.forEach((key, i) => {
          const raw = stored[i]
          // Absent: deleted at or before the snapshot (a later deletion leaves a tombstone), or never there.
          if (raw === null || raw === undefined) { gone.push([db, key]); return }
          const version = tombstoneVersion(raw)
          if (version === undefined) return
          // A tombstone: deleted at `version`; records up to it are older than this state, skipped.
          gone.push([db, key])
          if (version > seq) {
            const tag = tagOf(db, key)
            newer.set(tag, Math.max(newer.get(tag) ?? 0, version))
            if (version > top) top = version
          }
        })
        if (gone.length > 0) {
          await this.store.applyReplicated(gone, undefined, { durable: false })
          this.status.appliedOps += gone.length
        }
        if (this.closed) return
      }
    }
    const floor = Number(await this.redis.get(keys.tombfloor) ?? 0)
    if (floor > seq) {
      this.options.logger.warn({ seq, floor }, 'deletions made during the bootstrap were already forgotten by Redis (a long bootstrap under many writes): starting it again')
      return
    }
    // Replays the records after the snapshot up to the newest version copied (at least).
    let position = { epoch, id, seq }
    while (position.seq < top) {
      const reply = await this.redis.xreadBuffer('COUNT', READ_COUNT, 'STREAMS', keys.changes, position.id)
      if (this.closed) return
      const entries = reply?.[0]?.[1] ?? []
      const ops: StoreOp[] = []
      let at = position
      for (const [rawId, fields] of entries) {
        const record = parseRecord(fields)
        if (record.seq <= at.seq) continue
        if (record.seq !== at.seq + 1) break
        for (const op of record.ops) {
          const tag = tagOf(op[0], op[1])
          const held = newer.get(tag)
          if (held !== undefined && held >= record.seq) { this.status.skippedOps++; continue }
          if (held !== undefined) newer.set(tag, record.seq)
          ops.push(op)
        }
        at = { epoch, id: rawId.toString(), seq: record.seq }
      }
      if (at.seq === position.seq) {
        this.options.logger.warn({ seq: position.seq, needed: top }, 'the change records after the snapshot were trimmed from the stream during the bootstrap: starting it again')
        return
      }
      await this.store.applyReplicated(ops, undefined, { durable: false })
      this.status.appliedOps += ops.length
      this.status.appliedRecords += at.seq - position.seq
      position = at
    }
    // The batches need no fsync of their own: until this last, durable transaction the replica
    // says `bootstrapping`, and a crash before it restarts the bootstrap.
    await this.store.applyReplicated([], position, { state: 'following' })
    this.status.bootstraps++
    this.status.epoch = epoch
    this.status.appliedSeq = position.seq
    this.options.logger.info({ keys: keysCopied, ms: Date.now() - started, seq: position.seq, snapshot: seq }, 'bootstrap done; following the stream')
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
 * replaced (every key at version 0), `seq` 0, the stream emptied; the epoch is set last, so a host reading Redis meanwhile
 * sees no store. `kind` `reseed` (an operator's `filterd redis-seed`) tells the other hosts to
 * replace their replicas with it; `init` (a first start) does not.
 */
export async function seedSharedStore (redis: Redis, settings: SharedStoreSettings, store: Store, kind: 'init' | 'reseed'): Promise<string> {
  const { keys } = settings
  await redis.del(keys.epoch, keys.changes, keys.seq, keys.tombs, keys.tombfloor, ...POLICY_DBS.map((db) => keys.hash[db]))
  for (const db of POLICY_DBS) {
    let args: Array<string | Buffer> = []
    const flush = async (): Promise<void> => { if (args.length > 0) await redis.hset(keys.hash[db], ...args); args = [] }
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
export async function adoptSharedStore (redis: Redis, settings: SharedStoreSettings): Promise<string> {
  const epoch = `reseed:${randomUUID()}`
  await redis.set(settings.keys.epoch, epoch)
  return epoch
}
