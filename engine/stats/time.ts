/**
 * Report time: days and hour labels in `stats.timezone` (an IANA name, default UTC).
 *
 * Hourly aggregates are keyed by the UTC hour (ms / 3,600,000), so they never collide across a
 * daylight-saving change; a label shows the local wall-clock time at which that hour starts
 * (`HH:30:00` in a half-hour zone). Daily and per-domain aggregates are keyed by the local date,
 * as a day number (days since 1970-01-01 of that calendar date). Changing `stats.timezone` affects
 * rows imported afterwards; aggregates already made keep the zone they were made in.
 *
 * Offsets are found with Intl once per UTC quarter-hour (every zone's offset is a multiple of 15
 * minutes and changes on a quarter-hour) and cached, so the importer pays a Map lookup per row.
 */
import { DAY_MS, HOUR_MS, WallTime } from '../time/index.js'

export { HOUR_MS }

/** A zone's wall time, with the reports' hour labels and the aggregates' retention in it. */
export class ReportTime extends WallTime {
  /** The label of a UTC hour: its local start time, `YYYY-MM-DD HH:MM:SS`. */
  hourLabel(utcHour: number): string {
    return this.formatTime(utcHour * HOUR_MS)
  }

  /** The UTC hours whose local start falls on the days `from`..`to` (inclusive). */
  hoursOfDays(from: number, to: number): number[] {
    // Real offsets lie within ±14 h: scan a little wider and keep the hours that start on those dates.
    const first = Math.floor((from * DAY_MS - 15 * HOUR_MS) / HOUR_MS)
    const last = Math.ceil(((to + 1) * DAY_MS + 15 * HOUR_MS) / HOUR_MS)
    const out: number[] = []
    for (let h = first; h <= last; h++) {
      const d = this.dayOf(h * HOUR_MS)
      if (d >= from && d <= to) out.push(h)
    }
    return out
  }

  /**
   * The first day kept by aggregate retention: the local date `months` calendar months (stats.retention-months,
   * default three) before the local date at `now` (2024-05-31 → 2024-03-02, JavaScript's month overflow).
   */
  aggregateRetentionStart(now: number, months = DEFAULT_RETENTION.months): number {
    const today = new Date(this.dayOf(now) * DAY_MS)
    return Math.floor(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - months, today.getUTCDate()) / DAY_MS)
  }
}

/** `YYYY-MM-DD` of a day number. */
export function formatDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10)
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/

/** The day number of a `YYYY-MM-DD` date, or `undefined` when it is malformed or not a real date. */
export function parseDay(text: string): number | undefined {
  const m = DATE_RE.exec(text)
  if (m === null) return undefined
  const y = Number(m[1])
  const mo = Number(m[2])
  const d = Number(m[3])
  const ms = Date.UTC(y, mo - 1, d)
  const back = new Date(ms)
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined
  return ms / DAY_MS
}

/** Retention of raw rows by default (stats.raw-retention-hours): one day. */
export const RAW_RETENTION_MS = DAY_MS

/** How long the statistics store keeps its data (stats.retention-months, stats.raw-retention-hours). */
export interface StatsRetention {
  /** Calendar months of aggregates. */
  readonly months: number
  /** Milliseconds of raw rows. */
  readonly rawMs: number
}

export const DEFAULT_RETENTION: StatsRetention = Object.freeze({ months: 3, rawMs: RAW_RETENTION_MS })
