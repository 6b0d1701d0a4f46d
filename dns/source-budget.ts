/*
 * What one source (an IPv4 address or an IPv6 /64, counted as the connection table counts it,
 * ./tcp-slots.ts sourceKey) may cost the DoH front across all its connections: a per-connection
 * limit alone is voided by reconnecting.
 *
 * - Resets: each stream the client resets before its answer adds one to the source's count, which
 *   leaks away at `resetsPerSecond` (LeakyCount, which the front also keeps per connection); past `resetBurst` the source is calmed (its connection gets
 *   GOAWAY, a new one is closed on accept) until the score has leaked back under it. A client that
 *   cancels a query now and then never gets near the burst; one that reconnects and resets in a
 *   loop gets about `resetBurst`, then `resetsPerSecond`.
 * - Queries in flight: the source's forwarded queries not yet answered, its reset streams' ones
 *   included until they leave the dispatcher (a forwarded one is withdrawn at the reset), at most `maxInflight` (its further requests get 503), so resetting streams cannot
 *   pile up upstream work and memory.
 */
import { sourceKey } from './tcp-slots.js'

export interface SourceBudgetOptions {
  /** Reset streams a source may have in hand before it is calmed. */
  resetBurst: number
  /** Reset streams forgiven per second. */
  resetsPerSecond: number
  /** Queries in flight per source at most. */
  maxInflight: number
}

/** A count that leaks away at a steady rate (a leaky bucket): the resets still held against a client. */
export class LeakyCount {
  private readonly perSecond: number
  /** The count as of `at` (Date.now()). */
  private count = 0
  private at = 0

  constructor(perSecond: number) {
    this.perSecond = perSecond
  }

  /** Adds one at `now`; the count then. */
  add(now: number): number {
    this.count = this.valueAt(now) + 1
    this.at = now
    return this.count
  }

  valueAt(now: number): number {
    return Math.max(0, this.count - ((now - this.at) * this.perSecond) / 1000)
  }
}

/** One source's account, held by each of its connections while they are open. */
export class SourceAccount {
  readonly key: string
  /** Open connections holding the account. */
  connections = 0
  /** Queries of the source in flight. */
  inflight = 0
  readonly resets: LeakyCount

  constructor(key: string, resetsPerSecond: number) {
    this.key = key
    this.resets = new LeakyCount(resetsPerSecond)
  }
}

export class SourceBudget {
  private readonly o: SourceBudgetOptions
  private readonly accounts = new Map<string, SourceAccount>()

  constructor(o: SourceBudgetOptions) {
    this.o = o
  }

  /** Sources with an account (connections, queries in flight or an unforgiven score). */
  get size(): number {
    return this.accounts.size
  }

  /** The account of `address`'s source, taken by a new connection (give it back with leave()). */
  join(address: string): SourceAccount {
    const key = sourceKey(address)
    let a = this.accounts.get(key)
    if (a === undefined) {
      a = new SourceAccount(key, this.o.resetsPerSecond)
      this.accounts.set(key, a)
    }
    a.connections++
    return a
  }

  leave(a: SourceAccount, now: number): void {
    a.connections--
    this.drop(a, now)
  }

  /** One stream of the source reset before its answer: true when the source is now calmed. */
  reset(a: SourceAccount, now: number): boolean {
    return a.resets.add(now) > this.o.resetBurst
  }

  /** The source of `address` has reset more streams than its budget allows (a new connection is refused). */
  isCalmed(address: string, now: number): boolean {
    const a = this.accounts.get(sourceKey(address))
    return a !== undefined && a.resets.valueAt(now) > this.o.resetBurst
  }

  /** Another query of the source may go upstream. */
  mayAsk(a: SourceAccount): boolean {
    return a.inflight < this.o.maxInflight
  }

  /** A query of the source left the dispatcher (answered or dropped). */
  answered(a: SourceAccount, now: number): void {
    a.inflight--
    if (a.connections <= 0) this.drop(a, now)
  }

  /** Forgets the sources with nothing left to account for (called now and then). */
  sweep(now: number): void {
    for (const a of this.accounts.values()) this.drop(a, now)
  }

  private drop(a: SourceAccount, now: number): void {
    if (a.connections <= 0 && a.inflight <= 0 && a.resets.valueAt(now) === 0) this.accounts.delete(a.key)
  }
}
