/**
 * A sliding-window rate limiter: at most `limit` events per `windowMs` per key, the anonymous
 * listener's "10 requests per minute" and the registered listener's failed-login brake.
 *
 * Sliding log, not fixed window: each key keeps the times of its last `limit` accepted events (10
 * numbers for the anonymous limit). An event is accepted when fewer than `limit` of them fall in
 * the last `windowMs`; otherwise it is refused and not recorded, and the key becomes free again
 * exactly when its oldest recorded event leaves the window. That is what `Retry-After` reports, so
 * a client that waits that long is served, and a client can never get 2×limit through by timing
 * requests around a fixed window's boundary. Memory is bounded by `sweep()`, which forgets keys
 * with nothing left in the window.
 */

export interface LimitDecision {
  readonly allowed: boolean
  /** When refused: milliseconds until the next event would be accepted (> 0). 0 when allowed. */
  readonly retryAfterMs: number
}

const ALLOWED: LimitDecision = Object.freeze({ allowed: true, retryAfterMs: 0 })

export class SlidingWindowLimiter {
  readonly limit: number
  readonly windowMs: number
  readonly #log = new Map<string, number[]>()

  constructor(limit: number, windowMs: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer')
    this.limit = limit
    this.windowMs = windowMs
  }

  /** Records an event for `key` at `now` if the limit allows it. */
  take(key: string, now: number): LimitDecision {
    const times = this.#prune(key, now)
    if (times === undefined) {
      this.#log.set(key, [now])
      return ALLOWED
    }
    if (times.length < this.limit) {
      times.push(now)
      return ALLOWED
    }
    return { allowed: false, retryAfterMs: times[0]! + this.windowMs - now }
  }

  /** Records an event without refusing it (counting failures); only the last `limit` are kept. */
  record(key: string, now: number): void {
    const times = this.#prune(key, now)
    if (times === undefined) this.#log.set(key, [now])
    else {
      times.push(now)
      if (times.length > this.limit) times.shift()
    }
  }

  /** Like `take` but without recording: would an event be accepted now? */
  check(key: string, now: number): LimitDecision {
    const times = this.#prune(key, now)
    if (times === undefined || times.length < this.limit) return ALLOWED
    return { allowed: false, retryAfterMs: times[0]! + this.windowMs - now }
  }

  /** Forgets keys with no event inside the window. */
  sweep(now: number): void {
    const cutoff = now - this.windowMs
    for (const [key, times] of this.#log) {
      if (times.length === 0 || times[times.length - 1]! <= cutoff) this.#log.delete(key)
    }
  }

  /** Keys currently tracked (for tests and metrics). */
  get size(): number {
    return this.#log.size
  }

  // Drops events that left the window; the log is in time order, so only its head can expire.
  #prune(key: string, now: number): number[] | undefined {
    const times = this.#log.get(key)
    if (times === undefined) return undefined
    const cutoff = now - this.windowMs
    let drop = 0
    while (drop < times.length && times[drop]! <= cutoff) drop++
    if (drop > 0) times.splice(0, drop)
    return times
  }
}

/** `Retry-After` in whole seconds, rounded up so that waiting that long is always enough (RFC 9110 §10.2.3). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000))
}
