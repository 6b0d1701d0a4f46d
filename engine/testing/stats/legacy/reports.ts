/**
 * The statistics reports of the spec (Statistics endpoints), as plain functions over the statistics
 * environment. Every report is for one user id (or ANONYMOUS_USER) and local days `from`..`to`
 * (inclusive day numbers, engine/stats/time.ts); validating the request is the caller's job (the management API's).
 */
import type { LegacyStatsDb } from '../../../stats/legacy/lmdb.js'
import { HOUR_MS, formatDay, type ReportTime } from '../../../stats/time.js'

export interface Dataset {
  label: 'Requests' | 'Blocks' | 'NXdomain'
  data: number[]
}
/** The spec's chart-style object. */
export interface Chart {
  labels: string[]
  datasets: Dataset[]
}

export interface DetailReport extends Chart {
  cats: number[][]
}
export interface Detail {
  timestamps: string[]
  reports: DetailReport[]
}

export const RAW_FIELDS = [
  'created',
  'nxdomain',
  'address',
  'host',
  'blockedhost',
  'reasom',
  'cats',
  'blockedcats'
] as const
export type RawRow = [
  created: string,
  nxdomain: 0 | 1,
  address: string,
  host: string,
  blockedhost: string,
  reasom: string,
  cats: number[],
  blockedcats: number[]
]
export interface RawReport {
  fields: readonly string[]
  data: RawRow[]
}

/** Top domains per report. */
export const TOP_DOMAINS = 100
/** Rows of the raw report at most (the newest of the last hour). */
export const MAX_RAW_ROWS = 10_000

/** Requests and Blocks per hour; every hour of the range is labelled, hours without queries are 0. */
export function activityByHour(db: LegacyStatsDb, time: ReportTime, user: string, from: number, to: number): Chart {
  const hours = time.hoursOfDays(from, to)
  const labels: string[] = []
  const requests: number[] = []
  const blocks: number[] = []
  if (hours.length === 0) return chart(labels, requests, blocks)
  const first = hours[0]!
  const values = new Map<number, [number, number]>()
  for (const { key, value } of db.hour.getRange({ start: [user, first], end: [user, hours[hours.length - 1]! + 1] })) {
    values.set(key[1], value)
  }
  for (const h of hours) {
    const v = values.get(h)
    labels.push(time.hourLabel(h))
    requests.push(v?.[0] ?? 0)
    blocks.push(v?.[1] ?? 0)
  }
  return chart(labels, requests, blocks)
}

/** Requests and Blocks per day; every day of the range is labelled. */
export function activityByDay(db: LegacyStatsDb, user: string, from: number, to: number): Chart {
  const labels: string[] = []
  const requests: number[] = []
  const blocks: number[] = []
  const values = new Map<number, [number, number]>()
  for (const { key, value } of db.day.getRange({ start: [user, from], end: [user, to + 1] })) values.set(key[1], value)
  for (let d = from; d <= to; d++) {
    const v = values.get(d)
    labels.push(formatDay(d))
    requests.push(v?.[0] ?? 0)
    blocks.push(v?.[1] ?? 0)
  }
  return chart(labels, requests, blocks)
}

function chart(labels: string[], requests: number[], blocks: number[]): Chart {
  return {
    labels,
    datasets: [
      { label: 'Requests', data: requests },
      { label: 'Blocks', data: blocks }
    ]
  }
}

/** `www` keeps the names that start with the label `www.`. */
export type DomainFilter = 'all' | 'www'

interface DomainSum {
  host: string
  r: number
  n: number
  b: number
  cats: number[]
}

// Most requested first; ties by name so the cut at 100 is stable.
function byRequests(a: DomainSum, b: DomainSum): number {
  return b.r - a.r || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0)
}

function domainChart(list: DomainSum[]): DetailReport {
  const labels: string[] = []
  const cats: number[][] = []
  const r: number[] = []
  const n: number[] = []
  const b: number[] = []
  for (const d of list) {
    labels.push(d.host)
    cats.push(d.cats)
    r.push(d.r)
    n.push(d.n)
    b.push(d.b)
  }
  return {
    labels,
    cats,
    datasets: [
      { label: 'Requests', data: r },
      { label: 'NXdomain', data: n },
      { label: 'Blocks', data: b }
    ]
  }
}

/** The top 100 domains of the range by Requests, with NXdomain and Blocks. */
export function topDomains(
  db: LegacyStatsDb,
  user: string,
  from: number,
  to: number,
  filter: DomainFilter,
  limit = TOP_DOMAINS
): Chart {
  const sums = new Map<string, DomainSum>()
  for (const { key, value } of db.domain.getRange({ start: [user, from], end: [user, to + 1] })) {
    const host = key[2]
    if (filter === 'www' && !host.startsWith('www.')) continue
    const s = sums.get(host)
    if (s === undefined) sums.set(host, { host, r: value[0], n: value[1], b: value[2], cats: value[3] })
    else {
      s.r += value[0]
      s.n += value[1]
      s.b += value[2]
    }
  }
  const { labels, datasets } = domainChart([...sums.values()].sort(byRequests).slice(0, limit))
  return { labels, datasets }
}

/**
 * Per day of the range (`timestamps`, `YYYY-MM-DD`), that day's top 100 domains with their
 * categories (`cats`, aligned with `labels`) and Requests, NXdomain, Blocks.
 */
export function detail(db: LegacyStatsDb, user: string, from: number, to: number, limit = TOP_DOMAINS): Detail {
  const perDay = new Map<number, DomainSum[]>()
  for (const { key, value } of db.domain.getRange({ start: [user, from], end: [user, to + 1] })) {
    let list = perDay.get(key[1])
    if (list === undefined) perDay.set(key[1], (list = []))
    list.push({ host: key[2], r: value[0], n: value[1], b: value[2], cats: value[3] })
  }
  const timestamps: string[] = []
  const reports: DetailReport[] = []
  for (let d = from; d <= to; d++) {
    timestamps.push(formatDay(d))
    reports.push(domainChart((perDay.get(d) ?? []).sort(byRequests).slice(0, limit)))
  }
  return { timestamps, reports }
}

/** The user's queries of the last hour before `now`, oldest first (at most the newest MAX_RAW_ROWS). */
export function rawLastHour(db: LegacyStatsDb, time: ReportTime, user: string, now: number): RawReport {
  const data: RawRow[] = []
  for (const { value: v } of db.raw.getRange({
    start: [user, Number.MAX_SAFE_INTEGER],
    end: [user, now - HOUR_MS],
    reverse: true,
    limit: MAX_RAW_ROWS
  })) {
    if (v[0] > now) continue
    data.push([time.formatTime(v[0]), v[1], v[2], v[3], v[4], v[5], v[6], v[7]])
  }
  data.reverse()
  return { fields: RAW_FIELDS, data }
}
