/**
 * The statistics reports read from ClickHouse (`stats.store: clickhouse`): engine/stats's ReportSource over
 * the aggregates the materialized views keep (engine/clickhouse/schema.ts): per hour and day from `hours`,
 * per name from `names`, blocks per category from `blockcats`, the raw report from the query log `queries`.
 * Each query sums with GROUP BY, so rows of parts the engines have not merged yet count once all the same.
 * The answers are the DuckDB store's for the same rows (report-conformance.test.ts), down to the labels,
 * the order and the ties. Values go into the SQL through sql.ts only (ClickHouse 18.16 has no query
 * parameters); days are compared as dates (`'YYYY-MM-DD'`), the partition key's own type.
 */
import {
  MAX_RAW_ROWS,
  RAW_FIELDS,
  TOP_DOMAINS,
  activityChart,
  catsOf,
  domainChart,
  formatDay,
  parseDay,
  type Detail,
  type DetailReport,
  type DomainFilter,
  type DomainSum,
  type RawRow,
  type ReportSource,
  type StatsRetention
} from '../stats/index.js'
import { HOUR_MS } from '../time/index.js'
import type { ClickHouseStore } from './client.js'
import { tablesOf } from './schema.js'
import { sqlString, sqlUInt } from './sql.js'

/** `d BETWEEN '<from>' AND '<to>'`: local days `from`..`to`. */
function daysSql(from: number, to: number): string {
  return `d BETWEEN ${sqlString(formatDay(from))} AND ${sqlString(formatDay(to))}`
}

function dayOf(value: unknown): number {
  const d = parseDay(String(value))
  if (d === undefined) throw new Error(`ClickHouse answered a day that is not a date: ${String(value)}`)
  return d
}

function domainSum(row: Record<string, unknown>, day: number): DomainSum {
  return { day, host: String(row.host), r: Number(row.r), n: Number(row.n), b: Number(row.b), cats: catsOf(row.c) }
}

/**
 * The reports of `ReportSource`, read from ClickHouse.
 * one piece: an object of the seven report queries, each a few lines, that share the store's table
 * names and the per-day sums of a user's names; apart they would each take both as arguments.
 */
export function clickhouseReports(store: ClickHouseStore, retention: StatsRetention): ReportSource {
  const t = tablesOf(store)
  /**
   * Per local day and name of `user`, the sums (d, host, r, n, b) and the name's categories that day (c:
   * the last non-empty ones, as the view keeps them).
   */
  const perDay = (user: string, from: number, to: number, where = '', having = ''): string =>
    `SELECT d, host, countMerge(requests) AS r, sumMerge(nxdomain) AS n, sumMerge(blocks) AS b, argMaxMerge(cats) AS c ` +
    `FROM ${t.names} WHERE uid = ${sqlString(user)} AND ${daysSql(from, to)}${where} GROUP BY d, host${having}`

  return {
    retention,
    async activityByHour(time, user, from, to) {
      const hours = time.hoursOfDays(from, to)
      if (hours.length === 0) return activityChart([], [], [])
      // An hour that straddles local midnight has rows in two days: read one day either side.
      const found = await store.rows(
        `SELECT hour, sum(requests) AS r, sum(blocks) AS b FROM ${t.hours} WHERE uid = ${sqlString(user)} ` +
          `AND ${daysSql(from - 1, to + 1)} AND hour BETWEEN ${sqlUInt(hours[0]!)} AND ${sqlUInt(hours[hours.length - 1]!)} GROUP BY hour`
      )
      const values = new Map(found.map((r) => [Number(r.hour), [Number(r.r), Number(r.b)]]))
      return activityChart(
        hours.map((h) => time.hourLabel(h)),
        hours.map((h) => values.get(h)?.[0] ?? 0),
        hours.map((h) => values.get(h)?.[1] ?? 0)
      )
    },

    async activityByDay(user, from, to) {
      const found = await store.rows(
        `SELECT toString(d) AS day, sum(requests) AS r, sum(blocks) AS b FROM ${t.hours} ` +
          `WHERE uid = ${sqlString(user)} AND ${daysSql(from, to)} GROUP BY d`
      )
      const values = new Map(found.map((r) => [dayOf(r.day), [Number(r.r), Number(r.b)]]))
      const days: number[] = []
      for (let d = from; d <= to; d++) days.push(d)
      return activityChart(
        days.map(formatDay),
        days.map((d) => values.get(d)?.[0] ?? 0),
        days.map((d) => values.get(d)?.[1] ?? 0)
      )
    },

    async topDomains(user, from, to, filter: DomainFilter) {
      const www = filter === 'www' ? ` AND substring(host, 1, 4) = 'www.'` : ''
      // Most requested first; ties by name. A name's categories: those of its first day in the range.
      const found = await store.rows(
        `SELECT host, sum(r) AS r, sum(n) AS n, sum(b) AS b, argMin(c, d) AS c FROM (${perDay(user, from, to, www)}) ` +
          `GROUP BY host ORDER BY r DESC, host LIMIT ${sqlUInt(TOP_DOMAINS)}`
      )
      const { labels, datasets } = domainChart(found.map((r) => domainSum(r, 0)))
      return { labels, datasets }
    },

    async detail(user, from, to): Promise<Detail> {
      const found = await store.rows(
        `SELECT toString(d) AS day, host, r, n, b, c FROM (${perDay(user, from, to)}) ` +
          `ORDER BY d, r DESC, host LIMIT ${sqlUInt(TOP_DOMAINS)} BY d`
      )
      const byDay = new Map<number, DomainSum[]>()
      for (const row of found) {
        const s = domainSum(row, dayOf(row.day))
        let list = byDay.get(s.day)
        if (list === undefined) byDay.set(s.day, (list = []))
        list.push(s)
      }
      const timestamps: string[] = []
      const reports: DetailReport[] = []
      for (let d = from; d <= to; d++) {
        timestamps.push(formatDay(d))
        reports.push(domainChart(byDay.get(d) ?? []))
      }
      return { timestamps, reports }
    },

    async rawLastHour(time, user, now, extra = []) {
      const found = await store.rows(
        `SELECT created, nxdomain, address, host, blockedhost, reason, cats, blockedcats, source FROM ${t.queries} ` +
          `WHERE user = ${sqlString(user)} AND created BETWEEN ${sqlUInt(Math.max(0, now - HOUR_MS))} AND ${sqlUInt(now)} ` +
          `ORDER BY created DESC, n DESC LIMIT ${sqlUInt(MAX_RAW_ROWS)}`
      )
      const withSource = extra.includes('source')
      const data: RawRow[] = found.map((v) => {
        const row: RawRow = [
          time.formatTime(Number(v.created)),
          Number(v.nxdomain) === 1 ? 1 : 0,
          String(v.address),
          String(v.host),
          String(v.blockedhost),
          String(v.reason),
          catsOf(v.cats),
          catsOf(v.blockedcats)
        ]
        if (withSource) row.push(String(v.source))
        return row
      })
      data.reverse()
      return { fields: withSource ? [...RAW_FIELDS, 'source'] : RAW_FIELDS, data }
    },

    async blocksByCategory(user, from, to) {
      const found = await store.rows(
        `SELECT blockedcats, sum(blocks) AS b FROM ${t.blockcats} WHERE uid = ${sqlString(user)} AND ${daysSql(from, to)} GROUP BY blockedcats`
      )
      const out = new Map<number, number>()
      for (const r of found) for (const c of catsOf(r.blockedcats)) out.set(c, (out.get(c) ?? 0) + Number(r.b))
      return out
    },

    async blockedNames(user, from, to) {
      const found = await store.rows(
        `SELECT host, sum(r) AS r, 0 AS n, sum(b) AS b, argMin(c, d) AS c FROM (${perDay(user, from, to, '', ' HAVING b > 0')}) GROUP BY host`
      )
      return found.map((r) => domainSum(r, 0))
    }
  }
}
