/**
 * The schedules one policy generation uses, each compiled once however many users share it, with its
 * state at the current instant precomputed. A timer set at the nearest boundary switches the states
 * (date arithmetic for the schedules whose boundary passed, nothing else) and bumps `epoch`; a snapshot
 * built for an older epoch recomputes its open rules on its next query (engine/policy/scheduled.ts).
 * A query reads the clock once and compares it with the nearest boundary, so a timer that fires late
 * (a busy event loop) never lets a query see the wrong side of a boundary.
 */
import { CompiledSchedule } from './compile.js'
import type { Clock } from './clock.js'
import type { ScheduleWindow } from './types.js'

/** One distinct schedule (zone and windows) and its state now. */
export class ScheduleEntry {
  readonly schedule: CompiledSchedule
  open = false
  /** Index of the open window, -1 when closed. */
  window = -1
  /** The next boundary (UTC ms). */
  next = 0
  /** When the current state began, and when it was computed (a clock set back recomputes). */
  since = 0
  computedAt = 0

  constructor(schedule: CompiledSchedule, now: number) {
    this.schedule = schedule
    this.update(now)
  }

  update(now: number): void {
    const s = this.schedule.at(now)
    this.open = s.open
    this.window = s.window
    this.next = s.next
    this.since = s.since
    this.computedAt = now
  }
}

// setTimeout's longest delay; a boundary further away re-arms when it fires.
const MAX_DELAY_MS = 2_147_483_647

export class ScheduleBoard {
  readonly clock: Clock
  /** Moves whenever any entry's state is recomputed. */
  epoch = 0
  /** The nearest boundary of every entry, and the earliest instant they were computed at. */
  next = Number.POSITIVE_INFINITY
  private computedAt = Number.NEGATIVE_INFINITY
  private readonly entries = new Map<string, ScheduleEntry>()
  private timer: NodeJS.Timeout | undefined = undefined
  private readonly onSwitch: (() => void) | undefined

  constructor(clock: Clock, onSwitch?: () => void) {
    this.clock = clock
    this.onSwitch = onSwitch
  }

  /** The entry for a zone and windows (validated), compiled on first use. */
  entry(timeZone: string, windows: readonly ScheduleWindow[]): ScheduleEntry {
    const key = `${timeZone}|${JSON.stringify(windows)}`
    let e = this.entries.get(key)
    if (e === undefined) {
      const now = this.clock()
      e = new ScheduleEntry(new CompiledSchedule(timeZone, windows), now)
      this.entries.set(key, e)
      if (this.entries.size === 1) this.computedAt = now
      else this.computedAt = Math.min(this.computedAt, now)
      if (e.next < this.next) {
        this.next = e.next
        this.arm(now)
      }
    }
    return e
  }

  get size(): number {
    return this.entries.size
  }

  /** The clock now, after switching every entry whose boundary it has reached. One clock read. */
  now(): number {
    const now = this.clock()
    if (now >= this.next || now < this.computedAt) this.advance(now)
    return now
  }

  /** Switches the entries whose boundary `now` has reached (all of them when the clock went back). */
  advance(now: number): void {
    const back = now < this.computedAt
    let next = Number.POSITIVE_INFINITY
    let computedAt = now
    for (const e of this.entries.values()) {
      if (back || now >= e.next || now < e.computedAt) e.update(now)
      if (e.next < next) next = e.next
      if (e.computedAt < computedAt) computedAt = e.computedAt
    }
    this.next = next
    this.computedAt = computedAt
    this.epoch++
    this.arm(now)
    this.onSwitch?.()
  }

  /** Forgets every schedule (the policy's generation moved) and the timer. */
  clear(): void {
    this.entries.clear()
    this.next = Number.POSITIVE_INFINITY
    this.computedAt = Number.NEGATIVE_INFINITY
    this.epoch++
    this.stop()
  }

  stop(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private arm(now: number): void {
    this.stop()
    if (this.next === Number.POSITIVE_INFINITY) return
    const delay = Math.min(Math.max(this.next - now, 0), MAX_DELAY_MS)
    this.timer = setTimeout(() => {
      this.timer = undefined
      const t = this.clock()
      // A test clock may not have reached the boundary when real time has: wait again.
      if (t >= this.next || t < this.computedAt) this.advance(t)
      else this.arm(t)
    }, delay).unref()
  }
}
