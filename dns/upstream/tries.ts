/*
 * The tries in flight, in sending order, for their timeouts. All tries get the same share of the
 * budget, so they expire in sending order too, and one coarse sweep timer pops the expired ones
 * from the head of the queue: no timer per query.
 *
 * Each entry is the try's key and serial, numbers only. A query answered in time is gone from its
 * socket's table (or the TCP table), so nothing holds it until its entry expires: it dies young
 * instead of being promoted by the garbage collector with its buffers (about 500 bytes per query
 * at 20k q/s before, bench/results/2026-11-history.md).
 */
import type { PendingQuery } from './pending.js'

export class TryQueue {
  private keys: number[] = []
  private serials: number[] = []
  private expires: number[] = []
  private head = 0
  private serial = 0

  /** Queues `p`'s try in flight (its `key` set), expiring at `expires` (Date.now() scale). */
  push(p: PendingQuery, expires: number): void {
    if (++this.serial > 0x3fffffff) this.serial = 1
    p.trySerial = this.serial
    this.keys.push(p.key)
    this.serials.push(p.trySerial)
    this.expires.push(expires)
  }

  /**
   * Pops the entries expired at `now` and calls `expired` for each whose try is still the one in
   * flight. `find` gives the query a key names (undefined when it is no longer waiting). An entry
   * behind one that has not expired waits for it: after `reconfigure` shortens the share, that is
   * at most the old share's difference.
   */
  sweep(
    now: number,
    find: (key: number) => PendingQuery | undefined,
    expired: (p: PendingQuery, key: number) => void
  ): void {
    const qk = this.keys
    const qs = this.serials
    const qe = this.expires
    while (this.head < qk.length) {
      const i = this.head
      const key = qk[i]! // head < length
      const p = find(key)
      const stale = p === undefined || p.done || p.trySerial !== qs[i]
      if (!stale && qe[i]! > now) break
      this.head++
      if (!stale) expired(p, key)
    }
    if (this.head > 1024 && this.head * 2 > qk.length) {
      this.keys = qk.slice(this.head)
      this.serials = qs.slice(this.head)
      this.expires = qe.slice(this.head)
      this.head = 0
    }
  }

  clear(): void {
    this.keys = []
    this.serials = []
    this.expires = []
    this.head = 0
  }
}
