/**
 * The whole server's statistics for the operator console's overview, from the totals the importer keeps
 * under ALL_USERS: requests and blocks per hour and per day, the most blocked names and the categories that
 * blocked, and anonymous addresses against users. One call, so the overview loads in one request.
 */
import type { StatsDb } from './db.js'
import { ALL_USERS, ANONYMOUS_USER } from '../querylog/index.js'
import type { Chart } from './reports.js'
import { duckdbReports, type ReportSource } from './report-source.js'
import type { ReportTime } from './time.js'

export interface Overview {
  hours: Chart
  days: Chart
  totals: { requests: number; blocks: number }
  anonymous: { requests: number; blocks: number }
  users: { requests: number; blocks: number }
  /** Most blocked names of the range: name, blocks, requests, categories. */
  topBlocked: Array<{ domain: string; blocks: number; requests: number; cats: number[] }>
  /**
   * Blocks per category that blocked them (the rows' blockedcats): a block by a list counts for no
   * category, one by two of the name's categories for both (history imported before: the name's categories).
   */
  topCategories: Array<{ category: number; blocks: number }>
}

function sum(chart: Chart): { requests: number; blocks: number } {
  const total = (label: string): number =>
    (chart.datasets.find((d) => d.label === label)?.data ?? []).reduce((a, b) => a + b, 0)
  return { requests: total('Requests'), blocks: total('Blocks') }
}

/** The overview of the DuckDB store. */
export async function overview(db: StatsDb, time: ReportTime, from: number, to: number, top = 20): Promise<Overview> {
  return await overviewOf(duckdbReports(db), time, from, to, top)
}

/** The overview from the reports of either store. */
export async function overviewOf(
  reports: ReportSource,
  time: ReportTime,
  from: number,
  to: number,
  top = 20
): Promise<Overview> {
  const [days, anonDays, hours, blocked, byCat] = await Promise.all([
    reports.activityByDay(ALL_USERS, from, to),
    reports.activityByDay(ANONYMOUS_USER, from, to),
    reports.activityByHour(time, ALL_USERS, from, to),
    reports.blockedNames(ALL_USERS, from, to),
    reports.blocksByCategory(ALL_USERS, from, to)
  ])
  const totals = sum(days)
  const anonymous = sum(anonDays)
  const names = blocked.map((d) => ({ domain: d.host, blocks: d.b, requests: d.r, cats: d.cats }))
  return {
    hours,
    days,
    totals,
    anonymous,
    users: { requests: totals.requests - anonymous.requests, blocks: totals.blocks - anonymous.blocks },
    topBlocked: names.sort((a, b) => b.blocks - a.blocks || (a.domain < b.domain ? -1 : 1)).slice(0, top),
    topCategories: [...byCat]
      .map(([category, blocks]) => ({ category, blocks }))
      .sort((a, b) => b.blocks - a.blocks || a.category - b.category)
      .slice(0, top)
  }
}
