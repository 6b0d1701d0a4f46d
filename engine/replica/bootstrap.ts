/**
 * One bootstrap of a replica from the shared store (the protocol: engine/replica/follower.ts's file
 * comment), in its four phases:
 *
 *   snapshot point  one MULTI reads the epoch, `seq` and the stream's last id: the point S
 *   copy            HSCAN copies the hashes into the replica in place, batch by batch; keys written
 *                   after S (version > S) are noted with their version, and the newest one, M
 *   sweep           the keys the replica holds that Redis does not (deleted, or from another store)
 *                   are removed; a tombstone newer than S is noted like a copied key
 *   replay          the records S+1..M, skipping each key change not newer than the one copied
 *
 * Only then is the replica complete (`following`, at M or later). Until then `replica.state` is
 * `bootstrapping`, so a kill restarts the bootstrap and the API refuses writes; the batches need no
 * fsync of their own. A bootstrap that finds records S+1..M trimmed, or tombstones newer than S
 * dropped, stops; the follower's next step starts it over.
 */
import type { Redis } from 'ioredis'
import type { Logger } from '../log/index.js'
import { POLICY_DBS, type PolicyDb, type ReplicaPosition, type ReplicaStore, type StoreOp } from '../store/index.js'
import type { FollowerStatus } from './follower.js'
import { parseRecord, parseStored, tombstoneVersion, type SharedStoreSettings } from './redis.js'

export const BATCH_KEYS = 5000
const READ_COUNT = 1000

const tagOf = (db: string, key: string): string => `${db}\0${key}`

export interface BootstrapContext {
  readonly redis: Redis
  readonly settings: SharedStoreSettings
  readonly store: ReplicaStore
  /** The follower's status: the counters move as the bootstrap writes. */
  readonly status: FollowerStatus
  readonly logger: Logger
  /** Whether the follower was closed meanwhile (the bootstrap then stops where it is). */
  readonly closed: () => boolean
}

export class Bootstrap {
  /** Keys copied at a version after the snapshot point (changed during the copy): their newest version. */
  private readonly newer = new Map<string, number>()
  /** The newest version copied (M): the replay goes at least that far. */
  private top = 0
  private keysCopied = 0
  private copies: StoreOp[] = []
  private changes: StoreOp[] = []

  private constructor(
    private readonly ctx: BootstrapContext,
    private readonly point: ReplicaPosition
  ) {
    this.top = point.seq
  }

  /** Replaces the replica with a snapshot of Redis, in place; returns once complete or stopped. */
  static async run(ctx: BootstrapContext): Promise<void> {
    ctx.status.state = 'bootstrapping'
    const started = Date.now()
    const point = await snapshotPoint(ctx)
    if (point === undefined) return // emptied meanwhile: the next step reports it
    ctx.logger.info(
      { epoch: point.epoch, seq: point.seq, redis: ctx.settings.where },
      'bootstrapping this replica from the shared store'
    )
    // In place: the replica keeps serving DNS what it holds while the copy overwrites it; keys
    // Redis no longer has are swept after the copy. Until the end, no position (a kill restarts).
    const heldAny = POLICY_DBS.some((db) => ctx.store.policyKeys(db, undefined, 1).length > 0)
    await ctx.store.startBootstrap()
    const b = new Bootstrap(ctx, point)
    if (!(await b.copy())) return
    if (heldAny && !(await b.sweep())) return
    if (!(await b.tombstonesKept())) return
    const position = await b.replay()
    if (position === undefined) return
    await ctx.store.completeReplica(position)
    ctx.status.bootstraps++
    ctx.status.epoch = point.epoch
    ctx.status.appliedSeq = position.seq
    ctx.logger.info(
      { keys: b.keysCopied, ms: Date.now() - started, seq: position.seq, snapshot: point.seq },
      'bootstrap done; following the stream'
    )
  }

  /** HSCAN of every hash into the replica; false if the follower closed meanwhile. */
  private async copy(): Promise<boolean> {
    const {
      redis,
      settings: { keys }
    } = this.ctx
    for (const db of POLICY_DBS) {
      let cursor = '0'
      do {
        const [next, flat] = await redis.hscanBuffer(keys.hash[db], cursor, 'COUNT', BATCH_KEYS)
        cursor = next.toString()
        this.take(db, flat)
        if (this.copies.length + this.changes.length >= BATCH_KEYS) await this.flush()
        if (this.ctx.closed()) return false
      } while (cursor !== '0')
    }
    await this.flush()
    return true
  }

  /**
   * Sorts one HSCAN reply: keys unchanged since the snapshot are copies (written only where the
   * replica holds another value: HSCAN may return a key twice, and a replica bootstrapped in place
   * holds most of them already); keys changed after it are changes, written over at their newest
   * version (a key seen again at an older one is skipped).
   */
  private take(db: PolicyDb, flat: Buffer[]): void {
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const key = flat[i]!.toString()
      const { version, value } = parseStored(flat[i + 1]!)
      if (version > this.point.seq) {
        const tag = tagOf(db, key)
        const held = this.newer.get(tag)
        if (held !== undefined && held >= version) {
          this.ctx.status.skippedOps++
          continue
        }
        this.newer.set(tag, version)
        if (version > this.top) this.top = version
        this.changes.push(value === undefined ? [db, key] : [db, key, value])
      } else if (value !== undefined) {
        // Unchanged since the snapshot (a tombstone: absent).
        this.copies.push([db, key, value])
      }
    }
  }

  private async flush(): Promise<void> {
    if (this.copies.length + this.changes.length === 0) return
    const skipped = await this.ctx.store.copySnapshot(this.copies, this.changes)
    const written = this.copies.length + this.changes.length - skipped
    this.keysCopied += written
    this.ctx.status.appliedOps += written
    this.ctx.status.skippedOps += skipped
    this.copies = []
    this.changes = []
  }

  /** Removes the keys this replica holds that Redis does not; false if the follower closed meanwhile. */
  private async sweep(): Promise<boolean> {
    const {
      redis,
      store,
      settings: { keys }
    } = this.ctx
    for (const db of POLICY_DBS) {
      let after: string | undefined
      for (;;) {
        const held = store.policyKeys(db, after, BATCH_KEYS)
        if (held.length === 0) break
        after = held[held.length - 1]
        const gone = this.absent(db, held, await redis.hmgetBuffer(keys.hash[db], ...held))
        if (gone.length > 0) {
          await store.applyBootstrap(gone)
          this.ctx.status.appliedOps += gone.length
        }
        if (this.ctx.closed()) return false
      }
    }
    return true
  }

  /** The deletions for the held keys Redis lacks or holds as tombstones (`stored`: HMGET's reply). */
  private absent(db: PolicyDb, held: string[], stored: Array<Buffer | null>): StoreOp[] {
    const gone: StoreOp[] = []
    held.forEach((key, i) => {
      const raw = stored[i]
      // Absent: deleted at or before the snapshot (a later deletion leaves a tombstone), or never there.
      if (raw === null || raw === undefined) {
        gone.push([db, key])
        return
      }
      const version = tombstoneVersion(raw)
      if (version === undefined) return
      // A tombstone: deleted at `version`; records up to it are older than this state, skipped.
      gone.push([db, key])
      if (version > this.point.seq) {
        const tag = tagOf(db, key)
        this.newer.set(tag, Math.max(this.newer.get(tag) ?? 0, version))
        if (version > this.top) this.top = version
      }
    })
    return gone
  }

  /** False when Redis dropped tombstones newer than the snapshot: a deletion may have been missed. */
  private async tombstonesKept(): Promise<boolean> {
    const floor = Number((await this.ctx.redis.get(this.ctx.settings.keys.tombfloor)) ?? 0)
    if (floor <= this.point.seq) return true
    this.ctx.logger.warn(
      { seq: this.point.seq, floor },
      'deletions made during the bootstrap were already forgotten by Redis (a long bootstrap under many writes): starting it again'
    )
    return false
  }

  /** Replays the records after the snapshot up to the newest version copied (at least); the position reached. */
  private async replay(): Promise<ReplicaPosition | undefined> {
    const {
      redis,
      settings: { keys }
    } = this.ctx
    let position = this.point
    while (position.seq < this.top) {
      const reply = await redis.xreadBuffer('COUNT', READ_COUNT, 'STREAMS', keys.changes, position.id)
      if (this.ctx.closed()) return undefined
      const { ops, at } = this.replayable(reply?.[0]?.[1] ?? [], position)
      if (at.seq === position.seq) {
        this.ctx.logger.warn(
          { seq: position.seq, needed: this.top },
          'the change records after the snapshot were trimmed from the stream during the bootstrap: starting it again'
        )
        return undefined
      }
      await this.ctx.store.applyBootstrap(ops)
      this.ctx.status.appliedOps += ops.length
      this.ctx.status.appliedRecords += at.seq - position.seq
      position = at
    }
    return position
  }

  /** The key changes of `entries` that follow `from` without a gap and are newer than what was copied. */
  private replayable(
    entries: Array<[Buffer, Buffer[]]>,
    from: ReplicaPosition
  ): { ops: StoreOp[]; at: ReplicaPosition } {
    const ops: StoreOp[] = []
    let at = from
    for (const [rawId, fields] of entries) {
      const record = parseRecord(fields)
      if (record.seq <= at.seq) continue
      if (record.seq !== at.seq + 1) break
      for (const op of record.ops) {
        const tag = tagOf(op[0], op[1])
        const held = this.newer.get(tag)
        if (held !== undefined && held >= record.seq) {
          this.ctx.status.skippedOps++
          continue
        }
        if (held !== undefined) this.newer.set(tag, record.seq)
        ops.push(op)
      }
      at = { epoch: from.epoch, id: rawId.toString(), seq: record.seq }
    }
    return { ops, at }
  }
}

/** The consistent point S: the epoch, `seq` and the stream's last id, read in one MULTI. */
async function snapshotPoint(ctx: BootstrapContext): Promise<ReplicaPosition | undefined> {
  const { keys } = ctx.settings
  const snap = await ctx.redis
    .multi()
    .get(keys.epoch)
    .get(keys.seq)
    .xrevrange(keys.changes, '+', '-', 'COUNT', 1)
    .exec()
  if (snap === null) throw new Error('snapshot transaction aborted')
  for (const [err] of snap) if (err !== null) throw err
  const epoch = snap[0]![1] as string | null
  if (epoch === null) return undefined
  const last = snap[2]![1] as Array<[string, string[]]>
  return { epoch, seq: Number(snap[1]![1] ?? 0), id: last.length > 0 ? last[0]![0] : '0-0' }
}
