/**
 * What the statistics reports read, whichever store holds them (`stats.store`): the report functions the
 * api routes call (api/routes/stats.ts, api/routes/overview.ts), over one store. `duckdbReports` reads the
 * DuckDB store (./reports.ts); engine/clickhouse/reports.ts reads ClickHouse. Both give the same answer
 * for the same rows (engine/clickhouse/report-conformance.test.ts), so a route never knows which it has.
 */
import { retentionOf, type StatsDb } from './db.js'
import {
  activityByDay,
  activityByHour,
  blockedNames,
  blocksByCategory,
  detail,
  rawLastHour,
  topDomains,
  type Chart,
  type Detail,
  type DomainFilter,
  type DomainSum,
  type RawExtraField,
  type RawReport
} from './reports.js'
import type { ReportTime, StatsRetention } from './time.js'

export interface ReportSource {
  /** What the store keeps: the routes refuse a range before its first day (api/routes/stats.ts). */
  readonly retention: StatsRetention
  /** Requests and Blocks per hour of local days `from`..`to`; every hour labelled. */
  activityByHour(time: ReportTime, user: string, from: number, to: number): Promise<Chart>
  /** Requests and Blocks per day; every day labelled. */
  activityByDay(user: string, from: number, to: number): Promise<Chart>
  /** The top domains of the range by Requests (ties by name), with NXdomain and Blocks. */
  topDomains(user: string, from: number, to: number, filter: DomainFilter): Promise<Chart>
  /** Per day of the range, that day's top domains with their categories. */
  detail(user: string, from: number, to: number): Promise<Detail>
  /** The user's queries of the hour before `now`, oldest first. */
  rawLastHour(time: ReportTime, user: string, now: number, extra?: readonly RawExtraField[]): Promise<RawReport>
  /** Blocks of the range per category that blocked them. */
  blocksByCategory(user: string, from: number, to: number): Promise<Map<number, number>>
  /** The names blocked in the range: per name the blocks and requests of the days it was blocked on. */
  blockedNames(user: string, from: number, to: number): Promise<DomainSum[]>
}

/** The reports of the DuckDB statistics store. */
export function duckdbReports(db: StatsDb): ReportSource {
  return {
    retention: retentionOf(db),
    activityByHour: (time, user, from, to) => activityByHour(db, time, user, from, to),
    activityByDay: (user, from, to) => activityByDay(db, user, from, to),
    topDomains: (user, from, to, filter) => topDomains(db, user, from, to, filter),
    detail: (user, from, to) => detail(db, user, from, to),
    rawLastHour: (time, user, now, extra) => rawLastHour(db, time, user, now, extra),
    blocksByCategory: (user, from, to) => blocksByCategory(db, user, from, to),
    blockedNames: (user, from, to) => blockedNames(db, user, from, to)
  }
}
