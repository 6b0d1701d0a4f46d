/**
 * Wall time in an IANA zone to UTC and back, by Intl (engine/time's cached offsets). The two
 * daylight-saving cases are decided here, once, for every schedule:
 * - a wall time that does not exist (the hour skipped in spring) means the end of the gap, the instant
 *   the clocks jump;
 * - a wall time that occurs twice (the hour repeated in autumn) means its first occurrence, so a window
 *   that starts in it starts once.
 */
import { WallTime } from '../time/index.js'

export const DAY_MS = 86_400_000
const MINUTE_MS = 60_000
// Every zone's offset is a multiple of 15 minutes and changes on a quarter hour (as the offset cache assumes).
const QUARTER_MS = 900_000

const zones = new Map<string, WallTime>()

/** Whether Intl knows the zone `name`. */
export function isTimeZone(name: string): boolean {
  if (name === '') return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name })
    return true
  } catch {
    return false
  }
}

/** The offsets of a known zone, cached per zone name. */
export function zoneOf(name: string): WallTime {
  let z = zones.get(name)
  if (z === undefined) {
    z = new WallTime(name)
    zones.set(name, z)
  }
  return z
}

/** The local calendar day at `ms`: days since 1970-01-01 of that date, and its weekday (0 = Monday). */
export function localDay(zone: WallTime, ms: number): { day: number; weekday: number } {
  const day = zone.dayOf(ms)
  // 1970-01-01 was a Thursday (3 when Monday is 0).
  return { day, weekday: (((day + 3) % 7) + 7) % 7 }
}

/** The UTC instant of `minute` minutes after the start of local day `day` (see the module's DST rules). */
export function wallToUtc(zone: WallTime, day: number, minute: number): number {
  const wall = day * DAY_MS + minute * MINUTE_MS
  const before = zone.offsetAt(wall - DAY_MS)
  const after = zone.offsetAt(wall + DAY_MS)
  let best = Number.POSITIVE_INFINITY
  for (const off of before === after ? [before] : [before, after]) {
    const t = wall - off
    if (zone.offsetAt(t) === off && t < best) best = t
  }
  if (best !== Number.POSITIVE_INFINITY) return best
  return gapEnd(zone, wall - after, wall - before, after)
}

/** The first quarter hour in [lo, hi] whose offset is `after`: when a skipped hour ends. */
function gapEnd(zone: WallTime, lo: number, hi: number, after: number): number {
  let a = Math.floor(lo / QUARTER_MS)
  let b = Math.ceil(hi / QUARTER_MS)
  while (a < b) {
    const mid = Math.floor((a + b) / 2)
    if (zone.offsetAt(mid * QUARTER_MS) === after) b = mid
    else a = mid + 1
  }
  return a * QUARTER_MS
}

/** `HH:MM` local time at `ms` in `zone`. */
export function formatWall(zone: WallTime, ms: number): string {
  return new Date(ms + zone.offsetAt(ms)).toISOString().slice(11, 16)
}
