/*
 * The connection table of a stream listener (the DNS TCP front; DoT, when it exists, shares it):
 * who may take a slot, who gives one up under pressure, and how long idleness is allowed.
 *
 * - A per-source cap (`tcp-max-per-source`): one IPv4 address, or one IPv6 /64 (what one host or
 *   one subscriber can hold), takes at most that many slots; a connection past it is closed on
 *   accept. So a single address cannot take the table, however it behaves.
 * - Room under pressure (RFC 7766 §6.2.2: a server may close idle connections when it needs the
 *   resources): when the table (`tcp-max-connections`) is full, a new connection closes the
 *   oldest idle one (nothing asked and unanswered, nothing unread); when none is idle, the one
 *   whose unfinished message began first (slowloris); when every connection waits for answers,
 *   the new one is closed.
 * - An idle timeout that shortens as the table fills: the configured one up to half full, then
 *   linearly down to a tenth of it when full, so idle holders leave faster when slots are scarce.
 *
 * The counts of refused and evicted connections go to /metrics (engine/metrics TcpSlotCounts).
 */
import { parseIPv6Into } from '../engine/wire/index.js'
import type { TcpSlotCounts } from '../engine/metrics/index.js'

/** One connection as the table sees it. */
export interface SlotHolder {
  /** Date.now() of its last complete message read or answer written (or of its accept). */
  readonly lastActive: number
  /** Date.now() when its unfinished message began, or 0. */
  readonly partialSince: number
  /** Nothing asked and unanswered, no unread bytes: it only holds its slot. */
  isIdle(): boolean
  /** Closes it now (the table has already given up its slot). */
  evict(): void
}

export interface TcpSlotOptions {
  /** Connections in the table at most (`tcp-max-connections`). */
  max: number
  /** Connections per IPv4 address or IPv6 /64 at most (`tcp-max-per-source`). */
  perSource: number
  /** The idle timeout of a table at most half full (`tcp-idle-timeout`), ms. */
  idleTimeoutMs: number
}

/** The idle timeout at a full table, as a share of the configured one. */
const FULL_TABLE_IDLE_SHARE = 0.1

/** What a source is counted by: the IPv4 address, or the first 64 bits of an IPv6 address. */
export function sourceKey(address: string): string {
  if (!address.includes(':')) return address
  const dot = address.lastIndexOf('.')
  if (dot >= 0) return address.slice(address.lastIndexOf(':') + 1) // IPv4-mapped (::ffff:a.b.c.d)
  const b = Buffer.alloc(16)
  if (!parseIPv6Into(address, b, 0)) return address
  return b.toString('hex', 0, 8) + '::/64'
}

export class TcpSlots<H extends SlotHolder> {
  private readonly o: TcpSlotOptions
  /** Every holder and its source key, in accept order. */
  private readonly held = new Map<H, string>()
  private readonly perSource = new Map<string, number>()
  private readonly counts = { refusedPerSource: 0, refusedFull: 0, evictedIdle: 0, evictedSlow: 0 }

  constructor(o: TcpSlotOptions) {
    this.o = o
  }

  get size(): number {
    return this.held.size
  }

  /** Refused and evicted connections so far, by reason. */
  get totals(): TcpSlotCounts {
    return { ...this.counts }
  }

  holders(): IterableIterator<H> {
    return this.held.keys()
  }

  /**
   * Gives `holder`, a new connection from `address`, a slot: true, or false when it must be
   * closed (its source holds its cap, or the table is full of busy connections). May evict one
   * connection to make room.
   */
  admit(holder: H, address: string): boolean {
    const key = sourceKey(address)
    const n = this.perSource.get(key) ?? 0
    if (n >= this.o.perSource) {
      this.counts.refusedPerSource++
      return false
    }
    if (this.held.size >= this.o.max && !this.makeRoom()) {
      this.counts.refusedFull++
      return false
    }
    this.held.set(holder, key)
    this.perSource.set(key, n + 1)
    return true
  }

  /** `holder` closed: its slot is free (a second call, or one for an evicted holder, does nothing). */
  release(holder: H): void {
    const key = this.held.get(holder)
    if (key === undefined) return
    this.held.delete(holder)
    const n = (this.perSource.get(key) ?? 1) - 1
    if (n <= 0) this.perSource.delete(key)
    else this.perSource.set(key, n)
  }

  /** The idle timeout for the table as full as it is now, ms. */
  idleTimeoutMs(): number {
    const fill = this.held.size / this.o.max
    if (fill <= 0.5) return this.o.idleTimeoutMs
    const share = 1 - (1 - FULL_TABLE_IDLE_SHARE) * Math.min(1, (fill - 0.5) * 2)
    return Math.max(1, Math.round(this.o.idleTimeoutMs * share))
  }

  // Closes the oldest idle connection, else the one whose unfinished message began first.
  private makeRoom(): boolean {
    let idle: H | null = null
    let slow: H | null = null
    for (const h of this.held.keys()) {
      if (h.isIdle()) {
        if (idle === null || h.lastActive < idle.lastActive) idle = h
      } else if (h.partialSince !== 0 && (slow === null || h.partialSince < slow.partialSince)) {
        slow = h
      }
    }
    const victim = idle ?? slow
    if (victim === null) return false
    if (victim === idle) this.counts.evictedIdle++
    else this.counts.evictedSlow++
    this.release(victim)
    victim.evict()
    return true
  }
}
