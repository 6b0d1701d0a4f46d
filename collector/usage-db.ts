/**
 * Usage per installation key per day (UTC), in the collector's own LMDB environment
 * (`collector.db`), named database `usage-reports`, key `[installationKey, 'YYYY-MM-DD']`.
 *
 * Two kinds of reports land in the same record:
 * - a local categorization service's counters (JSON): `lookups` (the sum of its per-category
 *   counters), `unknown`, and `categories` (category number → lookups) add up over the day;
 * - an ISP filtering server's form (`key`, `count`): `count` is a gauge (user IP entries), so the
 *   day keeps the latest value and the maximum.
 * Writes are one small transaction per report; the records are read by `filterd collector usage`.
 */
import type { Database, RootDatabase } from 'lmdb'

export const USAGE_DB = 'usage-reports'

export interface UsageRecord {
  key: string
  day: string
  /** Local-service reports received. */
  reports: number
  /** Lookups that returned a category (a lookup with two categories counts once per category). */
  lookups: number
  /** Lookups of names that are not categorized. */
  unknown: number
  categories: Record<string, number>
  /** Filtering-server usage forms received. */
  forms: number
  /** Last `count` a filtering server sent that day, and the largest. */
  count: number
  countMax: number
  lastSeen: string
}

export interface CounterReport {
  counter_cat: readonly number[]
  counter_unknown_cat: readonly number[]
}

export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10)
}

function empty(key: string, day: string): UsageRecord {
  return { key, day, reports: 0, lookups: 0, unknown: 0, categories: {}, forms: 0, count: 0, countMax: 0, lastSeen: '' }
}

export class UsageDb {
  readonly db: Database<UsageRecord, [string, string]>

  constructor(root: RootDatabase) {
    this.db = root.openDB<UsageRecord, [string, string]>({ name: USAGE_DB })
  }

  /** Adds a local service's counters to today's record of `key`. */
  async addCounters(key: string, report: CounterReport, at = new Date()): Promise<void> {
    const day = utcDay(at)
    await this.db.transaction(() => {
      const r = this.db.get([key, day]) ?? empty(key, day)
      r.reports++
      report.counter_cat.forEach((n, cat) => {
        if (n > 0) {
          r.lookups += n
          r.categories[cat] = (r.categories[cat] ?? 0) + n
        }
      })
      for (const n of report.counter_unknown_cat) r.unknown += n
      r.lastSeen = at.toISOString()
      void this.db.put([key, day], r)
    })
  }

  /** Records a filtering server's `count` for today. */
  async addCount(key: string, count: number, at = new Date()): Promise<void> {
    const day = utcDay(at)
    await this.db.transaction(() => {
      const r = this.db.get([key, day]) ?? empty(key, day)
      r.forms++
      r.count = count
      r.countMax = Math.max(r.countMax, count)
      r.lastSeen = at.toISOString()
      void this.db.put([key, day], r)
    })
  }

  /** Records in key then day order, optionally one key and a day range (inclusive). */
  *records(filter: { key?: string; from?: string; to?: string } = {}): Iterable<UsageRecord> {
    const range =
      filter.key === undefined
        ? {}
        : { start: [filter.key, ''] as [string, string], end: [filter.key, '\uffff'] as [string, string] }
    for (const { value } of this.db.getRange(range)) {
      if (filter.from !== undefined && value.day < filter.from) continue
      if (filter.to !== undefined && value.day > filter.to) continue
      yield value
    }
  }
}
