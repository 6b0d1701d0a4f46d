/**
 * The report conformance of the ClickHouse store (not a test): the same generated rows go into a DuckDB
 * store through the importer and into a real clickhouse-server through the sink, and `conform` asks every
 * report of both, for users, the anonymous addresses, the whole server's totals, ranges of one and
 * several days, and compares the answers. Used by report-conformance.test.ts (plain MergeTree tables)
 * and cluster.test.ts (Replicated tables read through Distributed ones).
 *
 * The rows are written in time order, as the DNS server writes them: a name's categories are then "the
 * last seen" alike in both stores (DuckDB: the last in its files, ClickHouse: the latest query).
 */
import { cpSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { ALL_USERS, ANONYMOUS_USER, type QueryLogRecord } from '../../querylog/index.js'
import {
  duckdbReports,
  importClosedFiles,
  overviewOf,
  parseDay,
  ReportTime,
  retentionOf,
  type DomainSum,
  type ReportSource,
  type StatsDb
} from '../../stats/index.js'
import {
  NOW,
  at,
  blocked,
  openTestStatsDb,
  queriesOfDay,
  rec,
  statsTestEnv,
  writeFiles
} from '../../testing/stats/fixtures.js'
import { openClickHouse, type ClickHouseSettings, type ClickHouseStore } from '../client.js'
import { clickhouseReports } from '../reports.js'
import { migrateClickHouse } from '../schema.js'
import { createClickHouseSink, type SinkCounts } from '../sink.js'

const USERS = ['alice', 'bob', ANONYMOUS_USER, ALL_USERS, 'nobody']
const day = (text: string): number => parseDay(text)!
/** The host name of the sink's batches. */
export const CONFORMANCE_HOST = 'dns-a'
/** One day, a range crossing days, a range with a day before any row. */
export const RANGES: Array<[number, number]> = [
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

export interface Stores {
  /** The DuckDB store the rows went into. */
  db: StatsDb
  duck: ReportSource
  click: ReportSource
  time: ReportTime
  /** The ClickHouse store the rows went into (closed by the test's end). */
  store: ClickHouseStore
  /** What the sink did. */
  sent: SinkCounts
}

/**
 * The same rows in a DuckDB store (the importer) and in the ClickHouse store of `settings` (the sink, which
 * makes the schema first). `beforeSink` runs once the schema is made and the sink's files are in `dir`.
 */
export async function loadStores(
  t: TestContext,
  settings: ClickHouseSettings,
  timezone: string,
  beforeSink?: (store: ClickHouseStore, dir: string, time: ReportTime) => Promise<void>
): Promise<Stores> {
  const env = statsTestEnv(t, { timezone })
  await writeFiles(env, records(), 4)
  const chDir = join(env.root, 'clickhouse-spool')
  mkdirSync(chDir)
  cpSync(env.config.stats.dir, chDir, { recursive: true })
  const db = openTestStatsDb(t, env)
  await importClosedFiles(db, env.config.stats.dir, timezone, { now: () => NOW })
  const store = openClickHouse(settings)
  t.after(() => store.close())
  await migrateClickHouse(store)
  const time = new ReportTime(timezone)
  await beforeSink?.(store, chDir, time)
  const quiet = (): void => {}
  const sink = createClickHouseSink(store, {
    dir: chDir,
    host: CONFORMANCE_HOST,
    time,
    batchRows: 200,
    spoolMaxBytes: 1 << 30,
    log: { info: quiet, warn: quiet, error: quiet }
  })
  t.assert.ok((await sink.sendClosed()) > 0, 'the sink sent the rows')
  return {
    db,
    duck: duckdbReports(db),
    click: clickhouseReports(store, retentionOf(db)),
    time,
    store,
    sent: sink.counts
  }
}

/** Each report of `stores` for every user and range: DuckDB's answer and ClickHouse's are the same. */
export async function conform(t: TestContext, { duck, click, time }: Stores): Promise<void> {
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
