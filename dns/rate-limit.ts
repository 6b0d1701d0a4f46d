/*
 * Per-client query rate limit (`proxy.rate-limit`, off by default): a token bucket per client
 * address, or per prefix (`rate-limit-prefix-v4`, `-v6`: a /56 is one IPv6 subscriber), refilled
 * at `rate` tokens a second with a burst of one second's worth. What happens to a query over the
 * limit (REFUSED or silence) is the dispatcher's choice.
 *
 * Memory is bounded: buckets that are full again (their client went quiet) are swept every
 * second, and past MAX_BUCKETS clients the table is cleared (every client starts with a full
 * bucket again: under a spoofed-source flood, limiting less beats growing without bound).
 */
import { ipBytes } from '../engine/net/index.js'

const MAX_BUCKETS = 200_000

class Bucket {
  tokens: number
  last: number
  constructor(tokens: number, last: number) {
    this.tokens = tokens
    this.last = last
  }
}

export class RateLimiter {
  private readonly rate: number
  private readonly prefix4: number
  private readonly prefix6: number
  private buckets = new Map<string, Bucket>()
  private readonly sweeper: NodeJS.Timeout
  /** Queries over the limit. */
  limited = 0

  constructor(rate: number, prefix4: number, prefix6: number) {
    this.rate = rate
    this.prefix4 = prefix4
    this.prefix6 = prefix6
    this.sweeper = setInterval(() => this.sweep(), 1000)
    this.sweeper.unref()
  }

  // The bucket's key: the address itself for a full-length prefix (the common case: no parsing).
  private keyOf(address: string): string {
    const v6 = address.includes(':')
    const prefix = v6 ? this.prefix6 : this.prefix4
    if (prefix === (v6 ? 128 : 32)) return address
    const b = ipBytes(address)
    if (b === undefined) return address
    const bits = b.length === 4 ? Math.min(prefix, 32) : prefix
    const out = Buffer.from(b)
    for (let i = 0; i < out.length; i++) {
      const keep = Math.max(0, Math.min(8, bits - 8 * i))
      out[i] = out[i]! & ((0xff << (8 - keep)) & 0xff)
    }
    return out.toString('hex')
  }

  /** Takes one token for `address`; false when its bucket is empty. */
  allow(address: string, now: number): boolean {
    const key = this.keyOf(address)
    let b = this.buckets.get(key)
    if (b === undefined) {
      if (this.buckets.size >= MAX_BUCKETS) this.buckets = new Map()
      b = new Bucket(this.rate, now)
      this.buckets.set(key, b)
    } else {
      b.tokens = Math.min(this.rate, b.tokens + ((now - b.last) * this.rate) / 1000)
      b.last = now
    }
    if (b.tokens >= 1) {
      b.tokens -= 1
      return true
    }
    this.limited++
    return false
  }

  private sweep(): void {
    const now = Date.now()
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((now - b.last) * this.rate) / 1000 >= this.rate) this.buckets.delete(k)
    }
  }

  close(): void {
    clearInterval(this.sweeper)
  }
}
