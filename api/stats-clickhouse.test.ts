// With stats.store: clickhouse the api role's reports read ClickHouse: rows the sink put there (as every
// host's sync role does) answer the report routes and the overview, though the api host's DuckDB store
// never saw them.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { migrateClickHouse, openClickHouse } from '../engine/clickhouse/index.js'
import { createClickHouseSink } from '../engine/clickhouse/sink.js'
import { skipWithoutClickHouse, startClickHouse } from '../engine/clickhouse/testing/server.js'
import { CSV_HEADER, closedName, formatRow } from '../engine/querylog/index.js'
import { ReportTime, formatDay } from '../engine/stats/index.js'
import { startRole } from '../engine/testing/daemon.js'
import { tempDir } from '../engine/testing/temp.js'
import { fetchJson } from '../engine/testing/wait.js'
import { writeApiRoleConfig } from './testing/fixtures.js'

test(
  'the api role answers the reports and the overview from ClickHouse with stats.store: clickhouse',
  { skip: skipWithoutClickHouse(), timeout: 300_000 },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const root = tempDir(t, 'filterd-chapi-')
    const spool = join(root, 'spool')
    mkdirSync(spool)
    const now = Date.now()
    let text = CSV_HEADER
    for (let i = 0; i < 30; i++)
      text += formatRow(
        now - 60_000 + i,
        false,
        '192.0.2.1',
        `q${i % 3}.example`,
        '',
        i % 5 === 0 ? 'global-blacklist' : 'none',
        [],
        [],
        ''
      )
    writeFileSync(join(spool, closedName(now, 4242, 'a')), text)
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'fleet' })
    t.after(() => ch.close())
    await migrateClickHouse(ch)
    const quiet = (): void => {}
    const sink = createClickHouseSink(ch, {
      dir: spool,
      host: 'dns-a',
      time: new ReportTime('UTC'),
      batchRows: 1000,
      spoolMaxBytes: 1 << 30,
      log: { info: quiet, warn: quiet, error: quiet }
    })
    t.assert.strictEqual(await sink.sendClosed(), 30)
    const file = writeApiRoleConfig(root, {
      logLevel: 'info',
      stats: ['  store: clickhouse', '  clickhouse:', `    url: ${server.url}`, '    database: fleet']
    })
    const api = await startRole(t, 'api', file)
    const day = formatDay(new ReportTime('UTC').dayOf(now))
    const range = `from=${day}&to=${day}`
    const days = (await fetchJson(`${api.url}/users/*anonymous*/stat/activity/day?${range}`)).body as {
      datasets: Array<{ data: number[] }>
    }
    t.assert.deepStrictEqual(
      days.datasets.map((d) => d.data),
      [[30], [6]]
    )
    const top = (await fetchJson(`${api.url}/users/*anonymous*/stat/domains/all?${range}`)).body as { labels: string[] }
    t.assert.deepStrictEqual(top.labels, ['q0.example', 'q1.example', 'q2.example'])
    const raw = (await fetchJson(`${api.url}/users/*anonymous*/stat/raw`)).body as { data: unknown[] }
    t.assert.strictEqual(raw.data.length, 30)
    const overview = (await fetchJson(`${api.url}/stats/overview?${range}`)).body as {
      totals: { requests: number; blocks: number }
    }
    t.assert.deepStrictEqual(overview.totals, { requests: 30, blocks: 6 })
    await api.stop()
  }
)
