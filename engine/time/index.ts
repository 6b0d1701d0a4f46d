/**
 * Wall-clock time in an IANA zone: the zone's offset from UTC at an instant, the local calendar date,
 * and the local time as text. The statistics' report days and the schedules' windows both read time
 * through it, so a zone means the same to both.
 *
 * Offsets are found with Intl once per UTC quarter-hour (every zone's offset is a multiple of 15
 * minutes and changes on a quarter-hour) and cached, so a caller pays a Map lookup per instant.
 */
import { EngineError } from '../errors.js'

export const DAY_MS = 86_400_000
export const HOUR_MS = 3_600_000
const QUARTER_MS = 900_000
const CACHE_MAX = 50_000

export class WallTime {
  readonly timeZone: string
  readonly #isUtc: boolean
  readonly #fmt: Intl.DateTimeFormat | null
  #offsets = new Map<number, number>()

  constructor(timeZone = 'UTC') {
    this.timeZone = timeZone
    this.#isUtc = timeZone === 'UTC' || timeZone === 'Etc/UTC'
    try {
      this.#fmt = this.#isUtc
        ? null
        : new Intl.DateTimeFormat('en-US', {
            timeZone,
            hourCycle: 'h23',
            year: 'numeric',
            month: 'numeric',
            day: 'numeric',
            hour: 'numeric',
            minute: 'numeric'
          })
    } catch (err) {
      throw new EngineError('ENGINE_CONFIG_INVALID', `stats.timezone: unknown time zone "${timeZone}"`, { cause: err })
    }
  }

  /** Local time minus UTC at `ms`, in ms. */
  offsetAt(ms: number): number {
    if (this.#fmt === null) return 0
    const q = Math.floor(ms / QUARTER_MS)
    let off = this.#offsets.get(q)
    if (off === undefined) {
      const at = q * QUARTER_MS
      let y = 0
      let mo = 0
      let d = 0
      let h = 0
      let mi = 0
      for (const p of this.#fmt.formatToParts(at)) {
        switch (p.type) {
          case 'year':
            y = Number(p.value)
            break
          case 'month':
            mo = Number(p.value)
            break
          case 'day':
            d = Number(p.value)
            break
          case 'hour':
            h = Number(p.value)
            break
          case 'minute':
            mi = Number(p.value)
            break
          default:
            break
        }
      }
      off = Date.UTC(y, mo - 1, d, h, mi) - at
      if (this.#offsets.size >= CACHE_MAX) this.#offsets = new Map()
      this.#offsets.set(q, off)
    }
    return off
  }

  /** The local calendar date at `ms`, as a day number. */
  dayOf(ms: number): number {
    return Math.floor((ms + this.offsetAt(ms)) / DAY_MS)
  }

  /** `YYYY-MM-DD HH:MM:SS`, local. */
  formatTime(ms: number): string {
    const iso = new Date(ms + this.offsetAt(ms)).toISOString()
    return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`
  }
}
