// The api role with stats.store: clickhouse makes the ClickHouse schema at start. ClickHouse away then
// does not stop it: the role starts, serves the policy API, names ClickHouse on /health and answers the
// reports 503 API_STATS_UNAVAILABLE; it tries the migration again with backoff, and once ClickHouse
// answers the schema is made and the reports work, without a restart.
import { test, type TestContext } from 'node:test'
import { SCHEMA_VERSION, openClickHouse, schemaVersion } from '../engine/clickhouse/index.js'
import { skipWithoutClickHouse, startClickHouse } from '../engine/clickhouse/testing/server.js'
import { failpointEnv } from '../engine/failpoints.js'
import { startRole } from '../engine/testing/daemon.js'
import { tempDir } from '../engine/testing/temp.js'
import { fetchJson, until } from '../engine/testing/wait.js'
import { writeApiRoleConfig } from './testing/fixtures.js'

test(
  'the api role makes the ClickHouse schema at start, and while ClickHouse is away serves all but the reports (503) and tries again',
  { skip: skipWithoutClickHouse(), timeout: 300_000 },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    await server.kill()
    const root = tempDir(t, 'filterd-chstart-')
    const file = writeApiRoleConfig(root, {
      logLevel: 'info',
      stats: ['  store: clickhouse', '  clickhouse:', `    url: ${server.url}`, '    database: fleet']
    })
    const api = await startRole(t, 'api', file, failpointEnv({ 'stats.reopen-ms': '200' }))
    const error = await api.waitForLog((l) => /ClickHouse statistics store unavailable/.test(l.msg ?? ''))
    t.assert.match(String(error.reason), /schema cannot be made: ClickHouse at http:\/\/127\.0\.0\.1:\d+/)

    const put = await fetchJson(`${api.url}/users/alice`, 'PUT', { filter: [40] })
    t.assert.strictEqual(put.status, 200, JSON.stringify(put.body))
    const health = await fetchJson(`${api.url}/health`)
    t.assert.strictEqual(health.status, 503)
    const problem = (health.body as { degraded: Array<{ what: string; why: string }> }).degraded.find(
      (d) => d.what === 'clickhouse'
    )
    t.assert.match(problem?.why ?? '', /schema cannot be made/, JSON.stringify(health.body))
    const day = new Date().toISOString().slice(0, 10)
    for (const path of [
      `/users/alice/stat/activity/day?from=${day}&to=${day}`,
      `/stats/overview?from=${day}&to=${day}`
    ]) {
      const res = await fetchJson(api.url + path)
      t.assert.strictEqual(res.status, 503, `${path}: ${JSON.stringify(res.body)}`)
      t.assert.strictEqual((res.body as { error: { code: string } }).error.code, 'API_STATS_UNAVAILABLE')
    }

    await server.start()
    await api.waitForLog((l) => l.msg === 'ClickHouse statistics schema migrated')
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'fleet' })
    t.after(() => ch.close())
    t.assert.strictEqual(await schemaVersion(ch), SCHEMA_VERSION)
    await until(
      '/health without ClickHouse',
      async () => (await fetchJson(`${api.url}/health`)).status === 200,
      30_000,
      100
    )
    const days = await fetchJson(`${api.url}/users/alice/stat/activity/day?from=${day}&to=${day}`)
    t.assert.strictEqual(days.status, 200, JSON.stringify(days.body))
    t.assert.strictEqual(api.proc.exitCode, null)

    // Stopped after the start: the reports answer 503 and /health says so until a report works again.
    await server.kill()
    const away = await fetchJson(`${api.url}/stats/overview?from=${day}&to=${day}`)
    t.assert.strictEqual(away.status, 503, JSON.stringify(away.body))
    t.assert.strictEqual((await fetchJson(`${api.url}/health`)).status, 503)
    await server.start()
    t.assert.strictEqual((await fetchJson(`${api.url}/stats/overview?from=${day}&to=${day}`)).status, 200)
    t.assert.strictEqual((await fetchJson(`${api.url}/health`)).status, 200)
    await api.stop()
  }
)
