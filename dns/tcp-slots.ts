/*
 * The connection table of a stream listener (the DNS TCP and DoT fronts, ./tcp-front.ts, and the
 * DoH front's TLS connections, ./doh-front.ts): who may take a slot, who gives one up under
 * pressure, and how long idleness and an unfinished message are allowed (SlotDeadlines).
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
 * - Deadlines not renewed by each byte (SlotDeadlines): a message begun must be whole within the
 *   message timeout, and an idle connection is closed after the idle timeout in force; one timer
 *   per table, not one per connection. What a message and idleness are is the front's to say.
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

/** How often the message deadlines are checked, at most. */
const SWEEP_MS = 250
/** The whole table is walked for idle deadlines at most this often (and at a tenth of the idle timeout). */
const IDLE_SWEEP_MAX_MS = 1000

/**
 * Sweep ticks of `tickMs` between two walks of the whole connection table for idle deadlines: about
 * a tenth of the idle timeout in force, at most IDLE_SWEEP_MAX_MS. The message deadlines are checked
 * every tick, but only on the connections with an unfinished message; so 10,000 idle connections
 * cost one walk a second, not four (bench/results/2026-11-history.md, "UDP beside 10,000 idle DoT connections, by
 * server CPU").
 */
export function idleSweepTicks(tickMs: number, idleTimeoutMs: number): number {
  return Math.max(1, Math.floor(Math.min(IDLE_SWEEP_MAX_MS, idleTimeoutMs / 10) / tickMs))
}

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
    // Read again: the connection closed to make room may have been this source's own.
    this.perSource.set(key, (this.perSource.get(key) ?? 0) + 1)
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

export interface SlotDeadlineOptions<H> {
  /** A message that has begun must be whole within this (slowloris), ms. */
  messageTimeoutMs: number
  /** The configured idle timeout (the table shortens it as it fills), ms. */
  idleTimeoutMs: number
  /** `h` has been idle for more than `idleMs` at `now` and may be closed. */
  isIdleExpired(h: H, now: number, idleMs: number): boolean
  /** Closes `h`: its unfinished message passed its deadline ('message'), or its idle time ('idle'). */
  expire(h: H, why: 'message' | 'idle'): void
}

/**
 * The deadlines of one table, one timer for all its connections (no per-connection timer to reset
 * per byte): the message deadlines every tick, on the holders in `partial` (the front keeps there
 * those with partialSince set); the idle deadlines on a walk of the whole table every
 * idleSweepTicks() ticks, with the idle timeout the table's fill allows.
 */
export class SlotDeadlines<H extends SlotHolder> {
  /** Holders with an unfinished message: the only ones the message deadline can close. */
  readonly partial = new Set<H>()
  private readonly slots: TcpSlots<H>
  private readonly o: SlotDeadlineOptions<H>
  private readonly timer: NodeJS.Timeout
  /** The sweep's period, and the ticks since the last walk of the whole table. */
  private readonly tickMs: number
  private ticks = 0

  constructor(slots: TcpSlots<H>, o: SlotDeadlineOptions<H>) {
    this.slots = slots
    this.o = o
    this.tickMs = Math.max(1, Math.min(SWEEP_MS, o.messageTimeoutMs >> 1, o.idleTimeoutMs >> 1))
    this.timer = setInterval(() => this.sweep(), this.tickMs)
    this.timer.unref()
  }

  private sweep(): void {
    const now = Date.now()
    for (const h of this.partial) {
      if (h.partialSince !== 0 && now - h.partialSince > this.o.messageTimeoutMs) this.o.expire(h, 'message')
    }
    const idleMs = this.slots.idleTimeoutMs() // shorter as the table fills
    if (++this.ticks < idleSweepTicks(this.tickMs, idleMs)) return
    this.ticks = 0
    for (const h of this.slots.holders()) if (this.o.isIdleExpired(h, now, idleMs)) this.o.expire(h, 'idle')
  }

  close(): void {
    clearInterval(this.timer)
    this.partial.clear()
  }
}
