/**
 * The replica's audit: does this host's LMDB replica hold what Redis holds? A replica changes only
 * through the follower, so a difference means a writer went behind Redis's back (a role or command
 * of an older filterd, or a tool writing LMDB itself): this host then filters by a policy the other
 * hosts do not have, which nothing else would notice. The sync role reports it on /health (not ok)
 * and /metrics, and logs it loudly; the replica is not repaired silently, as that would drop writes
 * an operator believes were made (docs/operations-redis.md, "A replica that diverged").
 *
 * The follower runs one batch (up to AUDIT_BATCH keys) at a time between stream reads, at most one a
 * second, walking the policy databases in key order; each full pass publishes what it found. A batch
 * holds the follower up while it runs (on a 2-core machine under a load of 30 to 40, a batch of
 * 5,000 users took 0.5 to 0.7 s, one of 1,000 users 35 to 130 ms), so a pass is slow (about 17
 * minutes over 1,000,000 keys) and applying the stream is not. The
 * replica does not move during a batch (only the follower applies to it), so at its position P:
 *   - a key Redis holds at a version after P changed since: not compared;
 *   - a key Redis holds at P or before must hold the same value here;
 *   - a key Redis holds as a tombstone at P or before must be absent here;
 *   - a key Redis does not hold at all must be absent here, unless Redis dropped tombstones newer
 *     than P (then this replica is behind and a bootstrap follows anyway).
 * Keys Redis holds that the replica lacks are not looked for (a HSCAN of Redis per pass).
 */
import { isDeepStrictEqual } from 'node:util'
import type { Redis } from 'ioredis'
import { POLICY_DBS, type ReplicaPosition, type ReplicaStore } from '../store/index.js'
import { parseStored, type SharedStoreSettings } from './redis.js'

/** What the last full pass found. */
export interface AuditResult {
  /** Keys the replica holds that Redis does not hold, or holds with another value. */
  readonly keys: number
  /** A few of them, as `<db>/<key>`. */
  readonly examples: readonly string[]
}

const EXAMPLES = 5
/** Keys compared per batch. */
const AUDIT_BATCH = 1000

export class ReplicaAudit {
  /** The last completed pass; undefined before the first. */
  last: AuditResult | undefined
  passes = 0
  private db = 0
  private after: string | undefined
  private found = 0
  private examples: string[] = []

  constructor(
    private readonly redis: Redis,
    private readonly settings: SharedStoreSettings,
    private readonly store: ReplicaStore
  ) {}

  /** Starts a new pass, forgetting what the last one found (after a bootstrap made the replica Redis's state). */
  reset(): void {
    this.last = undefined
    this.db = 0
    this.after = undefined
    this.found = 0
    this.examples = []
  }

  /** Checks the next batch of keys against Redis, the replica being at `position`. */
  async step(position: ReplicaPosition): Promise<void> {
    let db = POLICY_DBS[this.db]!
    let held = this.store.policyEntries(db, this.after, AUDIT_BATCH)
    while (held.length === 0) {
      if (this.nextDb()) return
      db = POLICY_DBS[this.db]!
      held = this.store.policyEntries(db, undefined, AUDIT_BATCH)
    }
    this.after = held[held.length - 1]!.key
    const { keys } = this.settings
    const got = await this.redis
      .multi()
      .get(keys.tombfloor)
      .hmgetBuffer(keys.hash[db], ...held.map((e) => e.key))
      .exec()
    if (got === null) throw new Error('audit transaction aborted')
    for (const [err] of got) if (err !== null) throw err
    const floor = Number(got[0]![1] ?? 0)
    const stored = got[1]![1] as Array<Buffer | null>
    held.forEach(({ key, value }, i) => {
      const raw = stored[i]
      if (raw === null || raw === undefined) {
        if (floor <= position.seq) this.note(db, key)
        return
      }
      const s = parseStored(raw)
      if (s.version > position.seq) return
      if (s.value === undefined || !isDeepStrictEqual(s.value, value)) this.note(db, key)
    })
  }

  private note(db: string, key: string): void {
    this.found++
    if (this.examples.length < EXAMPLES) this.examples.push(`${db}/${key}`)
  }

  /** Moves on to the next database; true when that ended a pass. */
  private nextDb(): boolean {
    this.after = undefined
    if (++this.db < POLICY_DBS.length) return false
    this.last = { keys: this.found, examples: this.examples }
    this.passes++
    this.db = 0
    this.found = 0
    this.examples = []
    return true
  }
}
