// A statistics store that cannot be opened costs the reports only: the api role starts, serves the
// policy API, names the store on /health, and answers every report 503 API_STATS_UNAVAILABLE with the
// reason; the file moved aside, it opens a new store by itself and the reports work, without a restart.
import { test, type TestContext } from 'node:test'
import { mkdirSync, openSync, renameSync, writeFileSync, writeSync, closeSync } from 'node:fs'
import { join } from 'node:path'
import { startRole } from '../engine/testing/daemon.js'
import { tempDir } from '../engine/testing/temp.js'
import { until } from '../engine/testing/wait.js'
import { writeApiRoleConfig } from './testing/fixtures.js'
import { failpointEnv } from '../engine/failpoints.js'

const JSON_TYPE = { 'content-type': 'application/json' }
const today = new Date().toISOString().slice(0, 10)
const RANGE = `from=${today}&to=${today}`

test('a damaged stats.duckdb: the api role serves the policy API, /health names the store, reports answer 503 API_STATS_UNAVAILABLE; moved aside, reports work again', async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-stats-damaged-')
  // Garbage where DuckDB's header is: the file exists but is no database.
  mkdirSync(join(dir, 'statsdb'))
  const damaged = join(dir, 'statsdb', 'stats.duckdb')
  writeFileSync(damaged, Buffer.alloc(64 * 1024))
  const fd = openSync(damaged, 'r+')
  writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 0)
  closeSync(fd)
  const file = writeApiRoleConfig(dir, { logLevel: 'info' })
  const api = await startRole(t, 'api', file, failpointEnv({ 'stats.reopen-ms': '200' }))
  await api.waitForLog((l) => /statistics store is unavailable/.test(l.msg ?? ''))

  const put = await fetch(`${api.url}/users/alice`, {
    method: 'PUT',
    headers: JSON_TYPE,
    body: JSON.stringify({ filter: [40] })
  })
  t.assert.strictEqual(put.status, 200, await put.text())
  const alice = await fetch(`${api.url}/users/alice`)
  t.assert.strictEqual(alice.status, 200)
  await alice.arrayBuffer()

  const health = (await (await fetch(`${api.url}/health`)).json()) as {
    ok: boolean
    degraded: Array<{ what: string; why: string }>
  }
  t.assert.strictEqual(health.ok, false)
  const problem = health.degraded.find((d) => d.what === 'stats-store')
  t.assert.ok(problem !== undefined, JSON.stringify(health))
  t.assert.match(problem.why, /stats\.duckdb.*not a valid DuckDB database file/)

  for (const path of [`/users/alice/stat/activity/day?${RANGE}`, `/stats/overview?${RANGE}`]) {
    const res = await fetch(api.url + path)
    const body = (await res.json()) as { error?: { code?: string; message?: string } }
    t.assert.strictEqual(res.status, 503, `${path}: ${JSON.stringify(body)}`)
    t.assert.strictEqual(body.error?.code, 'API_STATS_UNAVAILABLE')
    t.assert.match(body.error?.message ?? '', /not a valid DuckDB database file/)
  }
  t.assert.strictEqual(api.proc.exitCode, null)

  // The recovery docs/backup.md gives (no backup at hand): move the file aside; the role starts an empty store.
  renameSync(damaged, `${damaged}.damaged`)
  await api.waitForLog((l) => l.msg === 'the statistics store is open again')
  await until(
    'a report answered',
    async () => (await fetch(`${api.url}/users/alice/stat/activity/day?${RANGE}`)).status === 200,
    30_000
  )
  const healed = (await (await fetch(`${api.url}/health`)).json()) as { degraded: Array<{ what: string }> }
  t.assert.ok(!healed.degraded.some((d) => d.what === 'stats-store'))
})
