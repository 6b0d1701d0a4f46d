/**
 * The reports read from ClickHouse (engine/clickhouse/reports.ts) against the DuckDB store's
 * (engine/stats/reports.ts): the same generated rows go into a DuckDB store through the importer and into
 * a real clickhouse-server through the sink, and every report must answer the same, for users, the
 * anonymous addresses, the whole server's totals, ranges of one and several days, in UTC and in a time zone
 * whose local days cross UTC dates.
 *
 * The rows are written in time order, as the DNS server writes them: a name's categories are then "the
 * last seen" alike in both stores (DuckDB: the last in its files, ClickHouse: the latest query).
 */
import { cpSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { ALL_USERS, ANONYMOUS_USER, type QueryLogRecord } from '../querylog/index.js'
import {
  duckdbReports,
  retentionOf,
  importClosedFiles,
  overviewOf,
  parseDay,
  pruneStats,
  ReportTime,
  type DomainSum,
  type ReportSource,
  type StatsDb
} from '../stats/index.js'
import {
  NOW,
  at,
  blocked,
  openTestStatsDb,
  queriesOfDay,
  rec,
  statsTestEnv,
  writeFiles
} from '../testing/stats/fixtures.js'
import { openClickHouse } from './client.js'
import { clickhouseReports } from './reports.js'
import { dropExpired } from './retention.js'
import { migrateClickHouse } from './schema.js'
import { createClickHouseSink } from './sink.js'
import { skipWithoutClickHouse, startClickHouse, type TestClickHouse } from './testing/server.js'

const USERS = ['alice', 'bob', ANONYMOUS_USER, ALL_USERS, 'nobody']
const day = (text: string): number => parseDay(text)!
/** One day, a range crossing days, a range with a day before any row. */
const RANGES: Array<[number, number]> = [
  [day('2024-05-14'), day('2024-05-14')],
  [day('2024-05-13'), day('2024-05-15')],
  [day('2024-05-12'), day('2024-05-14')]
]

/**
 * Three days of queries up to NOW, in time order, the last with its final hour dense for the raw report; and
 * on one day more names than a top list holds, each asked once, so that the cut falls among ties; blocks by
 * one and by two categories, and by a list (no category blocked, though the name has one).
 */
function records(): QueryLogRecord[] {
  const all = [
    rec(NOW - 600_000, '10.0.0.8', 'alice', 'src.example', {
      reason: 'global-blacklist',
      blockedName: 'src.example',
      source: 'list:3'
    }),
    ...Array.from({ length: 20 }, (_, i) =>
      blocked(at('2024-05-15', '09:00') + i * 1000, '10.0.0.6', i % 2 === 0 ? 'bob' : null, `c${i % 4}.example`, [
        2 + (i % 3),
        ...(i % 4 === 0 ? [7] : [])
      ])
    ),
    ...Array.from({ length: 5 }, (_, i) =>
      rec(at('2024-05-14', '22:50') + i * 1000, '10.0.0.7', 'bob', 'listed.example', {
        reason: 'global-blacklist',
        blockedName: 'listed.example',
        cats: [8]
      })
    ),
    ...Array.from({ length: 150 }, (_, i) =>
      rec(at('2024-05-14', '06:00') + i * 1000, '10.0.0.5', 'alice', `t${i}.example`, { cats: [i % 9] })
    ),
    ...queriesOfDay('2024-05-13', 300, 0),
    ...queriesOfDay('2024-05-14', 500, 1),
    ...queriesOfDay('2024-05-15', 900, 2),
    ...queriesOfDay('2024-05-15', 40, 3).map((r, i) => ({ ...r, time: NOW - 3_000_000 + i * 60_000 + 7 }))
  ]
  return all.filter((r) => r.time <= NOW).sort((a, b) => a.time - b.time)
}

interface Stores {
  db: StatsDb
  duck: ReportSource
  click: ReportSource
  time: ReportTime
}

/** The same rows in a DuckDB store (the importer) and in ClickHouse database `database` (the sink). */
async function load(t: TestContext, server: TestClickHouse, timezone: string, database: string): Promise<Stores> {
  const env = statsTestEnv(t, { timezone })
  await writeFiles(env, records(), 4)
  const chDir = join(env.root, 'clickhouse-spool')
  mkdirSync(chDir)
  cpSync(env.config.stats.dir, chDir, { recursive: true })
  const db = openTestStatsDb(t, env)
  await importClosedFiles(db, env.config.stats.dir, timezone, { now: () => NOW })
  const ch = openClickHouse({ url: server.url, user: 'default', password: '', database })
  t.after(() => ch.close())
  await migrateClickHouse(ch)
  const quiet = (): void => {}
  const sink = createClickHouseSink(ch, {
    dir: chDir,
    host: 'dns-a',
    time: new ReportTime(timezone),
    batchRows: 200,
    spoolMaxBytes: 1 << 30,
    log: { info: quiet, warn: quiet, error: quiet }
  })
  t.assert.ok((await sink.sendClosed()) > 0, 'the sink sent the rows')
  return { db, duck: duckdbReports(db), click: clickhouseReports(ch, retentionOf(db)), time: new ReportTime(timezone) }
}

/** Each report of `stores` for every user and range: DuckDB's answer and ClickHouse's are the same. */
async function conform(t: TestContext, { duck, click, time }: Stores): Promise<void> {
  for (const [from, to] of RANGES)
    t.assert.deepStrictEqual(
      await overviewOf(click, time, from, to),
      await overviewOf(duck, time, from, to),
      `overview ${from}..${to} (${time.timeZone})`
    )
  for (const user of USERS) {
    // The raw report at NOW (its hour dense) and half a day before it, with and without the extra field.
    for (const now of [NOW, NOW - 43_200_000])
      for (const extra of [[], ['source']] as const)
        t.assert.deepStrictEqual(
          await click.rawLastHour(time, user, now, extra),
          await duck.rawLastHour(time, user, now, extra),
          `rawLastHour ${user} ${now} ${extra.join()} (${time.timeZone})`
        )
    for (const [from, to] of RANGES) {
      const what = `${user} ${from}..${to} (${time.timeZone})`
      t.assert.deepStrictEqual(
        await click.activityByDay(user, from, to),
        await duck.activityByDay(user, from, to),
        `activityByDay ${what}`
      )
      t.assert.deepStrictEqual(
        await click.activityByHour(time, user, from, to),
        await duck.activityByHour(time, user, from, to),
        `activityByHour ${what}`
      )
      for (const filter of ['all', 'www'] as const)
        t.assert.deepStrictEqual(
          await click.topDomains(user, from, to, filter),
          await duck.topDomains(user, from, to, filter),
          `topDomains ${filter} ${what}`
        )
      t.assert.deepStrictEqual(await click.detail(user, from, to), await duck.detail(user, from, to), `detail ${what}`)
      t.assert.deepStrictEqual(
        await click.blocksByCategory(user, from, to),
        await duck.blocksByCategory(user, from, to),
        `blocksByCategory ${what}`
      )
      const byName = (list: DomainSum[]): DomainSum[] => list.sort((a, b) => (a.host < b.host ? -1 : 1))
      t.assert.deepStrictEqual(
        byName(await click.blockedNames(user, from, to)),
        byName(await duck.blockedNames(user, from, to)),
        `blockedNames ${what}`
      )
    }
  }
}

test(
  'the reports read from ClickHouse answer as the DuckDB store does, in UTC and in Europe/Berlin',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const utc = await load(t, server, 'UTC', 'conform_utc')
    const berlin = await load(t, server, 'Europe/Berlin', 'conform_berlin')
    // Sanity: the answers compared are not empty.
    const days = await utc.duck.activityByDay(ALL_USERS, ...RANGES[1]!)
    t.assert.ok(
      days.datasets[0]!.data.every((n) => n > 0),
      'rows on every day of the range'
    )
    const [from, to] = RANGES[1]!
    const raw = await utc.duck.rawLastHour(utc.time, 'alice', NOW, ['source'])
    t.assert.ok(raw.data.length > 10, 'raw rows in the last hour')
    t.assert.ok(
      raw.data.some((r) => r[8] === 'list:3'),
      'a row with a source'
    )
    t.assert.ok((await utc.duck.blocksByCategory(ALL_USERS, from, to)).size > 1, 'blocks by several categories')
    t.assert.ok((await utc.duck.blockedNames(ALL_USERS, from, to)).length > 1, 'several names blocked')
    t.assert.equal((await utc.duck.topDomains('alice', from, to, 'all')).labels.length, 100, 'a full top list')
    await conform(t, utc)
    await conform(t, berlin)
  }
)

test(
  'after retention the reports read from ClickHouse answer as the DuckDB store does, and both keep the same days',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const stores = await load(t, server, 'UTC', 'conform_retention')
    // Three months and a day after 2024-05-13: the first day kept (what the routes accept) is 2024-05-14.
    const later = Date.parse('2024-08-14T12:00:00Z')
    const { duck, click, time } = stores
    t.assert.deepStrictEqual(
      click.retention,
      duck.retention,
      'the same retention, which the routes check ranges against'
    )
    t.assert.strictEqual(time.aggregateRetentionStart(later, click.retention.months), day('2024-05-14'))
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'conform_retention' })
    t.after(() => ch.close())
    t.assert.ok((await dropExpired(ch, time, click.retention, later)).length > 0, 'ClickHouse dropped partitions')
    t.assert.ok((await pruneStats(stores.db, 'UTC', later)) > 0, 'DuckDB dropped partitions')
    await conform(t, stores)
    t.assert.strictEqual(
      (await click.activityByDay(ALL_USERS, day('2024-05-13'), day('2024-05-13'))).datasets[0]!.data[0],
      0,
      'the day before retention is gone'
    )
  }
)
