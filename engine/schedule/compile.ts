/**
 * A schedule compiled into boundaries: `at(now)` says whether a window is open at `now`, which one, and
 * the next instant the answer changes; `timeline(now)` lays out the states after each of the next
 * boundaries too. Date arithmetic happens only here, when a schedule is first used and, in the
 * background, when its precomputed states run low (engine/schedule/board.ts), never per query and
 * never at a boundary: the board steps to the next precomputed state.
 */
import type { WallTime } from '../time/index.js'
import { DAYS, type ScheduleWindow } from './types.js'
import { DAY_MS, localDay, wallToUtc, zoneOf } from './zone.js'

/** A window in minutes of its local day: `to` > `from`, up to 2 × 1440 across midnight. */
export interface WindowMinutes {
  /** Weekdays, bit 0 = Monday: a number rather than an array per window of 100,000 distinct schedules. */
  readonly days: number
  readonly from: number
  readonly to: number
}

/** `HH:MM` → minutes, `24:00` → 1440; `undefined` when malformed or out of range. */
export function parseClock(text: string, allowEndOfDay: boolean): number | undefined {
  const m = /^(\d{2}):(\d{2})$/.exec(text)
  if (m === null) return undefined
  const h = Number(m[1])
  const min = Number(m[2])
  if (h === 24 && min === 0 && allowEndOfDay) return 1440
  if (h > 23 || min > 59) return undefined
  return h * 60 + min
}

/** The minutes of a validated window (engine/schedule/validate.ts has checked it). */
export function windowMinutes(w: ScheduleWindow): WindowMinutes {
  const from = parseClock(w.from, false) ?? 0
  let to = parseClock(w.to, true) ?? 0
  if (to <= from) to += 1440
  let days = 0
  for (const d of w.days) days |= 1 << DAYS.indexOf(d)
  return { days, from, to }
}

interface Interval {
  start: number
  end: number
  window: number
}

/** Days before and after `now` whose windows are laid out: a window starts at most a day earlier,
 * and every window recurs within a week, so the next start always lies in the range. */
const DAYS_BEFORE = 2
const DAYS_AFTER = 9
/** Days laid out ahead for a timeline: two whole weeks, so even a weekly window has a boundary after its next close. */
const TIMELINE_DAYS_AFTER = 16

/** A compiled schedule's state at one instant. */
export interface ScheduleAt {
  readonly open: boolean
  /** Index of the open window in the rule's list, -1 when closed. */
  readonly window: number
  /** When `open` changes next (UTC ms); adjacent windows count as one. */
  readonly next: number
  /** When the current state began, as far as laid out (UTC ms). */
  readonly since: number
}

export class CompiledSchedule {
  readonly windows: readonly WindowMinutes[]
  private readonly zone: WallTime

  constructor(timeZone: string, windows: readonly ScheduleWindow[]) {
    this.zone = zoneOf(timeZone)
    this.windows = windows.map(windowMinutes)
  }

  /** The zone's name: the one string of every schedule in that zone (engine/schedule/zone.ts caches them). */
  get timeZone(): string {
    return this.zone.timeZone
  }

  /** The state at `now`: one pass over the windows of the days around it (tens of Intl reads at most, cached). */
  at(now: number): ScheduleAt {
    const { list, merged } = this.intervalsAround(now, DAYS_AFTER)
    return stateIn(list, merged, now) ?? { open: false, window: -1, next: now + DAY_MS, since: now }
  }

  /**
   * The state at `now` followed by the state after each of the next boundaries, as far as one layout of
   * the windows (two weeks ahead) determines them: at least two boundaries for any valid schedule. The
   * board steps through it at boundaries, so a switch does no date arithmetic (engine/schedule/board.ts).
   * At most `limit` states (the board keeps only a few of them).
   */
  timeline(now: number, limit = Number.POSITIVE_INFINITY): ScheduleAt[] {
    const { list, merged } = this.intervalsAround(now, TIMELINE_DAYS_AFTER)
    const first = stateIn(list, merged, now) ?? { open: false, window: -1, next: now + DAY_MS, since: now }
    const states = [first]
    // The last interval's end could still merge with a window of a day not laid out: stop before it starts.
    const lastStart = merged[merged.length - 1]?.start ?? Number.NEGATIVE_INFINITY
    let s = first
    while (s.next < lastStart && states.length < limit) {
      const n = stateIn(list, merged, s.next)
      if (n === undefined) break
      states.push(n)
      s = n
    }
    return states
  }

  /** The windows' UTC intervals from two days before `now` to `daysAfter` after, sorted, adjacent ones merged. */
  private intervalsAround(now: number, daysAfter: number): { list: Interval[]; merged: Interval[] } {
    const today = localDay(this.zone, now)
    const list: Interval[] = []
    for (let k = -DAYS_BEFORE; k <= daysAfter; k++) {
      const day = today.day + k
      const weekday = (((today.weekday + k) % 7) + 7) % 7
      this.windows.forEach((w, index) => {
        if ((w.days & (1 << weekday)) === 0) return
        const start = wallToUtc(this.zone, day, w.from)
        const end = wallToUtc(this.zone, day + Math.floor(w.to / 1440), w.to % 1440)
        // A window wholly inside a skipped hour is empty that day.
        if (end > start) list.push({ start, end, window: index })
      })
    }
    list.sort((a, b) => a.start - b.start)
    const merged: Interval[] = []
    for (const iv of list) {
      const last = merged[merged.length - 1]
      if (last !== undefined && iv.start <= last.end) {
        if (iv.end > last.end) last.end = iv.end
      } else merged.push({ ...iv })
    }
    return { list, merged }
  }
}

/** The state at `now` among laid-out intervals, undefined when `now` is past the last one. */
function stateIn(list: readonly Interval[], merged: readonly Interval[], now: number): ScheduleAt | undefined {
  for (let i = 0; i < merged.length; i++) {
    const iv = merged[i]!
    if (iv.start <= now && now < iv.end) {
      // The window named is the one holding `now`, not the first of a run of adjacent ones.
      const own = list.find((w) => w.start <= now && now < w.end) ?? iv
      return { open: true, window: own.window, next: iv.end, since: iv.start }
    }
    if (iv.start > now) return { open: false, window: -1, next: iv.start, since: merged[i - 1]?.end ?? now }
  }
  return undefined
}
