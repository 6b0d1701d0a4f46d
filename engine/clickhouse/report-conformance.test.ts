/**
 * The reports read from ClickHouse (engine/clickhouse/reports.ts) against the DuckDB store's
 * (engine/stats/reports.ts): the same generated rows go into a DuckDB store through the importer and into
 * a real clickhouse-server through the sink, and every report must answer the same, for users, the
 * anonymous addresses, the whole server's totals, ranges of one and several days, in UTC and in a time zone
 * whose local days cross UTC dates (engine/clickhouse/testing/conformance.ts).
 */
import { test, type TestContext } from 'node:test'
import { ALL_USERS } from '../querylog/index.js'
import { parseDay, pruneStats } from '../stats/index.js'
import { NOW } from '../testing/stats/fixtures.js'
import type { ClickHouseSettings } from './client.js'
import { dropExpired } from './retention.js'
import { RANGES, conform, loadStores } from './testing/conformance.js'
import { skipWithoutClickHouse, startClickHouse } from './testing/server.js'

test(
  'the reports read from ClickHouse answer as the DuckDB store does, in UTC and in Europe/Berlin',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const settings = (database: string): ClickHouseSettings => ({
      url: server.url,
      user: 'default',
      password: '',
      database
    })
    const utc = await loadStores(t, settings('conform_utc'), 'UTC')
    const berlin = await loadStores(t, settings('conform_berlin'), 'Europe/Berlin')
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
    const stores = await loadStores(
      t,
      { url: server.url, user: 'default', password: '', database: 'conform_retention' },
      'UTC'
    )
    // Three months and a day after 2024-05-13: the first day kept (what the routes accept) is 2024-05-14.
    const later = Date.parse('2024-08-14T12:00:00Z')
    const { duck, click, time } = stores
    t.assert.deepStrictEqual(
      click.retention,
      duck.retention,
      'the same retention, which the routes check ranges against'
    )
    t.assert.strictEqual(time.aggregateRetentionStart(later, click.retention.months), parseDay('2024-05-14'))
    t.assert.ok(
      (await dropExpired(stores.store, time, click.retention, later)).length > 0,
      'ClickHouse dropped partitions'
    )
    t.assert.ok((await pruneStats(stores.db, 'UTC', later)) > 0, 'DuckDB dropped partitions')
    await conform(t, stores)
    const [from] = RANGES[1]!
    t.assert.strictEqual(
      (await click.activityByDay(ALL_USERS, from, from)).datasets[0]!.data[0],
      0,
      'the day before retention is gone'
    )
  }
)
