import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { openClickHouse } from './client.js'
import { ReportTime } from '../stats/index.js'
import { dropExpired } from './retention.js'
import { SCHEMA_VERSION, migrateClickHouse, schemaVersion, tablesOf } from './schema.js'
import { skipWithoutClickHouse, startClickHouse } from './testing/server.js'

test(
  'the schema is made once, at its version, and its views count each row for its user and for everyone',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'filterd_test' })
    t.after(() => ch.close())
    assert.equal(await schemaVersion(ch), 0)
    assert.deepEqual(await migrateClickHouse(ch), [1, 2])
    assert.equal(await schemaVersion(ch), SCHEMA_VERSION)
    // Run again (a second api host starting, stats-migrate after a start): nothing applied twice.
    assert.deepEqual(await migrateClickHouse(ch), [])
    const tables = (
      await ch.rows("SELECT name, engine FROM system.tables WHERE database = 'filterd_test' ORDER BY name")
    ).map((r) => `${String(r.name)}:${String(r.engine)}`)
    assert.deepEqual(tables, [
      'blockcats:SummingMergeTree',
      'blockcats_mv:MaterializedView',
      'hours:SummingMergeTree',
      'hours_mv:MaterializedView',
      'names:AggregatingMergeTree',
      'names_mv:MaterializedView',
      'queries:MergeTree',
      'schema_versions:TinyLog'
    ])
    const [key] = await ch
      .rows("SELECT partition_key, sorting_key FROM system.tables WHERE database = 'filterd_test' AND name = 'queries'")
      .catch(
        // 18.16's system.tables has no partition_key: the engine_full text says the same.
        async () =>
          await ch.rows(
            "SELECT engine_full AS partition_key, engine_full AS sorting_key FROM system.tables WHERE database = 'filterd_test' AND name = 'queries'"
          )
      )
    assert.match(String(key?.partition_key), /date/)
    assert.match(String(key?.sorting_key), /user, created/)
    const t2 = tablesOf(ch)
    await ch.insert('queries', [
      {
        date: '2024-05-15',
        created: 1715774400000,
        hour: 476604,
        day: 19858,
        user: 'alice',
        nxdomain: 0,
        address: '10.0.0.1',
        host: 'a.example',
        blockedhost: 'a.example',
        reason: 'category',
        cats: '3',
        blockedcats: '3',
        client_id: '',
        source: '',
        blocked: 1,
        batch: 'b',
        n: 0
      },
      {
        date: '2024-05-15',
        created: 1715774401000,
        hour: 476604,
        day: 19858,
        user: 'alice',
        nxdomain: 1,
        address: '10.0.0.1',
        host: 'a.example',
        blockedhost: '',
        reason: '',
        cats: '',
        blockedcats: '',
        client_id: '',
        source: '',
        blocked: 0,
        batch: 'b',
        n: 1
      }
    ])
    const hours = await ch.rows(
      `SELECT uid, hour, sum(requests) AS r, sum(blocks) AS b FROM ${t2.hours} GROUP BY uid, hour ORDER BY uid`
    )
    assert.deepEqual(
      hours.map((r) => [r.uid, Number(r.hour), Number(r.r), Number(r.b)]),
      [
        ['*all*', 476604, 2, 1],
        ['alice', 476604, 2, 1]
      ]
    )
    const names = await ch.rows(
      `SELECT uid, host, countMerge(requests) AS r, sumMerge(nxdomain) AS n, sumMerge(blocks) AS b, argMaxMerge(cats) AS c FROM ${t2.names} GROUP BY uid, host ORDER BY uid`
    )
    assert.deepEqual(
      names.map((r) => [r.uid, r.host, Number(r.r), Number(r.n), Number(r.b), r.c]),
      [
        ['*all*', 'a.example', 2, 1, 1, '3'],
        ['alice', 'a.example', 2, 1, 1, '3']
      ]
    )
    // Blocks per blocking categories: the block counted, the row not blocked not.
    const cats = await ch.rows(
      `SELECT uid, blockedcats, sum(blocks) AS b FROM ${t2.blockcats} GROUP BY uid, blockedcats ORDER BY uid`
    )
    assert.deepEqual(
      cats.map((r) => [r.uid, r.blockedcats, Number(r.b)]),
      [
        ['*all*', '3', 1],
        ['alice', '3', 1]
      ]
    )
  }
)

test(
  'retention drops whole days: raw rows past raw-retention-hours, aggregates past retention-months',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'ret' })
    t.after(() => ch.close())
    await migrateClickHouse(ch)
    const row = (date: string): Record<string, string | number> => {
      const created = Date.parse(`${date}T12:00:00Z`)
      return {
        date,
        created,
        hour: Math.floor(created / 3_600_000),
        day: Math.floor(created / 86_400_000),
        user: 'u',
        nxdomain: 0,
        address: '',
        host: 'h',
        blockedhost: '',
        reason: '',
        cats: '',
        // The oldest day blocked by category 4: its blocks per category go with it.
        blockedcats: date === '2024-01-10' ? '4' : '',
        client_id: '',
        source: '',
        blocked: date === '2024-01-10' ? 1 : 0,
        batch: date,
        n: 0
      }
    }
    for (const d of ['2024-01-10', '2024-05-13', '2024-05-14', '2024-05-15']) await ch.insert('queries', [row(d)])
    const now = Date.parse('2024-05-15T12:30:00Z')
    const dropped = await dropExpired(ch, new ReportTime('UTC'), { months: 3, rawMs: 24 * 3_600_000 }, now)
    // Raw: 2024-05-14 ends 12.5 h before now, within a day: kept. Aggregates: from 2024-02-15 on.
    assert.deepEqual(dropped, [
      'blockcats:2024-01-10',
      'hours:2024-01-10',
      'names:2024-01-10',
      'queries:2024-01-10',
      'queries:2024-05-13'
    ])
    const left = await ch.rows('SELECT DISTINCT toString(date) AS d FROM ret.queries ORDER BY d')
    assert.deepEqual(
      left.map((r) => r.d),
      ['2024-05-14', '2024-05-15']
    )
    const [h] = await ch.rows("SELECT count() AS c FROM ret.hours WHERE d = toDate('2024-01-10')")
    assert.equal(Number(h?.c), 0)
    assert.deepEqual(await dropExpired(ch, new ReportTime('UTC'), { months: 3, rawMs: 24 * 3_600_000 }, now), [])
  }
)
