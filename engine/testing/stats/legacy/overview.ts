/**
 * The whole server's statistics for the operator console's overview, from the totals the importer keeps
 * under ALL_USERS: requests and blocks per hour and per day, the most blocked names and the categories of
 * the blocked names, and anonymous addresses against users. One call, so the overview loads in one request.
 */
import type { LegacyStatsDb } from '../../../stats/legacy/lmdb.js'
import { ALL_USERS, ANONYMOUS_USER } from '../../../querylog/files.js'
import { activityByDay, activityByHour, type Chart } from './reports.js'
import type { ReportTime } from '../../../stats/time.js'

export interface Overview {
  hours: Chart
  days: Chart
  totals: { requests: number; blocks: number }
  anonymous: { requests: number; blocks: number }
  users: { requests: number; blocks: number }
  /** Most blocked names of the range: name, blocks, requests, categories. */
  topBlocked: Array<{ domain: string; blocks: number; requests: number; cats: number[] }>
  /** Blocks per category of the blocked names (a name in two categories counts for both). */
  topCategories: Array<{ category: number; blocks: number }>
}

function sum(chart: Chart): { requests: number; blocks: number } {
  const total = (label: string): number =>
    (chart.datasets.find((d) => d.label === label)?.data ?? []).reduce((a, b) => a + b, 0)
  return { requests: total('Requests'), blocks: total('Blocks') }
}

export function overview(db: LegacyStatsDb, time: ReportTime, from: number, to: number, top = 20): Overview {
  const days = activityByDay(db, ALL_USERS, from, to)
  const anonDays = activityByDay(db, ANONYMOUS_USER, from, to)
  const totals = sum(days)
  const anonymous = sum(anonDays)
  const blockedNames = new Map<string, { domain: string; blocks: number; requests: number; cats: number[] }>()
  for (const { key, value } of db.domain.getRange({ start: [ALL_USERS, from], end: [ALL_USERS, to + 1] })) {
    if (value[2] === 0) continue
    const host = key[2]
    const d = blockedNames.get(host)
    if (d === undefined) blockedNames.set(host, { domain: host, blocks: value[2], requests: value[0], cats: value[3] })
    else {
      d.blocks += value[2]
      d.requests += value[0]
    }
  }
  const byCat = new Map<number, number>()
  for (const d of blockedNames.values()) for (const c of d.cats) byCat.set(c, (byCat.get(c) ?? 0) + d.blocks)
  return {
    hours: activityByHour(db, time, ALL_USERS, from, to),
    days,
    totals,
    anonymous,
    users: { requests: totals.requests - anonymous.requests, blocks: totals.blocks - anonymous.blocks },
    topBlocked: [...blockedNames.values()]
      .sort((a, b) => b.blocks - a.blocks || (a.domain < b.domain ? -1 : 1))
      .slice(0, top),
    topCategories: [...byCat]
      .map(([category, blocks]) => ({ category, blocks }))
      .sort((a, b) => b.blocks - a.blocks || a.category - b.category)
      .slice(0, top)
  }
}
