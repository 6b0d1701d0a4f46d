/**
 * Statistics reports: a user's daily (activity by day), detail and raw (last hour) reports through each
 * ReportSource (engine/stats/report-source.ts: DuckDB's store, engine/clickhouse/reports.ts) over the same
 * rows (bench/stats/clickhouse-load.ts: one host's files, imported and sent), for the same users, the calls
 * of both stores interleaved so that a busy moment of the machine falls on both. The goal: p99 at most
 * 100 ms at 100 M rows.
 *
 *   node dist/bench/stats/clickhouse-reports.js [--rows=1000000] [--users=10000] [--days=7] [--runs=200] [--sample-users=50] [--chunk-rows=2000000] [--file-rows=500000] [--batch-rows=250000]
 *
 * Before the timing both stores are brought to where the product keeps them: DuckDB's maintenance
 * (engine/stats/maintenance.ts: finished days folded into week tables, raw hours past retention dropped),
 * ClickHouse's retention (engine/clickhouse/retention.ts) and its background merges waited for.
 */
import { isDeepStrictEqual } from 'node:util'
import { dropExpired } from '../../engine/clickhouse/retention.js'
import { clickhouseReports } from '../../engine/clickhouse/reports.js'
import { duckdbReports, ReportTime, type ReportSource } from '../../engine/stats/index.js'
import { retentionOf } from '../../engine/stats/db.js'
import { pruneStats } from '../../engine/stats/maintenance.js'
import { HOUR_MS } from '../../engine/time/index.js'
import { loadAverage, loadBoth, numberArg, rate } from './clickhouse-load.js'

const RUNS = numberArg('runs', 200)
const SAMPLE_USERS = numberArg('sample-users', 50)
const o = {
  rows: numberArg('rows', 1_000_000),
  users: numberArg('users', 10_000),
  days: numberArg('days', 7),
  // On an hour's boundary plus 30 minutes: the last hour's raw rows span two raw hours, as they mostly do.
  now: Math.floor(Date.now() / HOUR_MS) * HOUR_MS - HOUR_MS / 2,
  chunkRows: numberArg('chunk-rows', 2_000_000),
  fileRows: numberArg('file-rows', 500_000),
  batchRows: numberArg('batch-rows', 250_000)
}
console.log(
  `clickhouse-reports: ${JSON.stringify({ ...o, runs: RUNS, sampleUsers: SAMPLE_USERS })}; node ${process.version}`
)
console.log(`load average ${loadAverage()}`)
const time = new ReportTime('UTC')
const loaded = await loadBoth(o)

/** The `n`-th of `SAMPLE_USERS` users spread over the population (rows.ts: user`u`, every 20th anonymous). */
function sampleUser(n: number): string {
  let u = 1 + Math.floor((n * o.users) / SAMPLE_USERS)
  if (u % 20 === 0) u++
  return `user${u % o.users}`
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!
}

try {
  console.log(
    `loaded: DuckDB ${loaded.duckRows} rows (${rate(loaded.duckRows, loaded.duckMs)} rows/s), ClickHouse ${loaded.clickRows} rows (${rate(loaded.clickRows, loaded.clickMs)} rows/s)`
  )
  const tm = performance.now()
  await pruneStats(loaded.duck, 'UTC', o.now)
  // The same retention in both (the defaults: stats.retention-months, stats.raw-retention-hours).
  const dropped = await dropExpired(loaded.click, time, retentionOf(loaded.duck), o.now)
  // Merges: the parts of the inserts merged as they would be on a server that has been running.
  for (let i = 0; i < 600; i++) {
    const [m] = await loaded.click.rows('SELECT count() AS c FROM system.merges')
    if (Number(m?.c) === 0) break
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
  const [parts] = await loaded.click.rows(
    "SELECT count() AS c FROM system.parts WHERE active AND database = 'filterd' AND table = 'queries'"
  )
  console.log(
    `settled in ${((performance.now() - tm) / 1000).toFixed(1)} s: DuckDB maintenance; ClickHouse retention dropped ${dropped.length} partitions, the query log in ${String(parts?.c)} parts`
  )
  const duck = duckdbReports(loaded.duck)
  const click = clickhouseReports(loaded.click, retentionOf(loaded.duck))
  const today = time.dayOf(o.now)
  const from = today - o.days + 1
  const reports: Array<[string, (s: ReportSource, user: string) => Promise<unknown>]> = [
    [`daily, ${o.days} days`, (s, u) => s.activityByDay(u, from, today)],
    [`detail, ${o.days} days`, (s, u) => s.detail(u, from, today)],
    ['raw, last hour', (s, u) => s.rawLastHour(time, u, o.now)]
  ]
  let differ = 0
  for (const [name, call] of reports) {
    // A warm-up call per user and store, which also compares the answers (the same rows: the same answers).
    for (let n = 0; n < SAMPLE_USERS; n++) {
      const user = sampleUser(n)
      if (!isDeepStrictEqual(await call(duck, user), await call(click, user))) differ++
    }
    const ms: Record<'duck' | 'click', number[]> = { duck: [], click: [] }
    for (let i = 0; i < RUNS; i++) {
      const user = sampleUser(i % SAMPLE_USERS)
      // Alternate which store goes first.
      const order: Array<['duck' | 'click', ReportSource]> =
        i % 2 === 0
          ? [
              ['duck', duck],
              ['click', click]
            ]
          : [
              ['click', click],
              ['duck', duck]
            ]
      for (const [k, s] of order) {
        const t = performance.now()
        await call(s, user)
        ms[k].push(performance.now() - t)
      }
    }
    const line = (k: 'duck' | 'click'): string => {
      const s = ms[k].sort((a, b) => a - b)
      return `p50 ${percentile(s, 0.5).toFixed(1)} ms, p99 ${percentile(s, 0.99).toFixed(1)} ms`
    }
    const p99 = (k: 'duck' | 'click'): number => percentile(ms[k], 0.99)
    console.log(
      `${name.padEnd(16)} DuckDB ${line('duck')} | ClickHouse ${line('click')} | p99 ClickHouse/DuckDB ${(p99('click') / p99('duck')).toFixed(2)}`
    )
  }
  console.log(
    `answers compared for ${SAMPLE_USERS} users x ${reports.length} reports: ${differ === 0 ? 'all the same' : `${differ} differ`}; load ${loadAverage()}`
  )
} finally {
  await loaded.close()
}
