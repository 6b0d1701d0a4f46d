/**
 * A schedule compiled into boundaries: `ScheduleState.at(now)` says whether a window is open at `now`,
 * which one, and the next instant the answer changes. Date arithmetic happens only here, when a
 * boundary is reached (engine/schedule/clock-switch.ts), never per query: between boundaries the
 * policy reads the precomputed `open` flag.
 */
import type { ReportTime } from '../stats/time.js'
import { DAYS, type ScheduleWindow } from './types.js'
import { DAY_MS, localDay, wallToUtc, zoneOf } from './zone.js'

/** A window in minutes of its local day: `to` > `from`, up to 2 × 1440 across midnight. */
export interface WindowMinutes {
  /** Weekdays, 0 = Monday. */
  readonly days: readonly number[]
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
  return { days: w.days.map((d) => DAYS.indexOf(d)), from, to }
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
  readonly timeZone: string
  readonly windows: readonly WindowMinutes[]
  private readonly zone: ReportTime

  constructor(timeZone: string, windows: readonly ScheduleWindow[]) {
    this.timeZone = timeZone
    this.zone = zoneOf(timeZone)
    this.windows = windows.map(windowMinutes)
  }

  /** The state at `now`: one pass over the windows of the days around it (tens of Intl reads at most, cached). */
  at(now: number): ScheduleAt {
    const { list, merged } = this.intervalsAround(now)
    for (const iv of merged) {
      if (iv.start <= now && now < iv.end) {
        // The window named is the one holding `now`, not the first of a run of adjacent ones.
        const own = list.find((w) => w.start <= now && now < w.end) ?? iv
        return { open: true, window: own.window, next: iv.end, since: iv.start }
      }
      if (iv.start > now) {
        const prev = merged[merged.indexOf(iv) - 1]
        return { open: false, window: -1, next: iv.start, since: prev?.end ?? now }
      }
    }
    // Unreachable for a valid schedule (a window recurs every week); stay closed and look again in a day.
    return { open: false, window: -1, next: now + DAY_MS, since: now }
  }

  /** The windows' UTC intervals from two days before `now` to nine after, sorted, adjacent ones merged. */
  private intervalsAround(now: number): { list: Interval[]; merged: Interval[] } {
    const today = localDay(this.zone, now)
    const list: Interval[] = []
    for (let k = -DAYS_BEFORE; k <= DAYS_AFTER; k++) {
      const day = today.day + k
      const weekday = (((today.weekday + k) % 7) + 7) % 7
      this.windows.forEach((w, index) => {
        if (!w.days.includes(weekday)) return
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
