// Live numbers: a query answered by the real DNS server reaches the api role's
// reports within seconds, with the default intervals: the query log closes its file every
// stats.rotate (3 s) and the api role, the statistics store's one writer, takes closed files in every
// stats.import-interval (2 s). No import is asked for: the test only waits (generously, for a loaded machine).
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { fetchJson as getJson, until } from '../engine/testing/wait.js'
import { silentLogger } from '../engine/log/index.js'
import { addUser, ask, server, world } from '../dns/testing/harness.js'
import { statsTestEnv } from '../engine/testing/stats/fixtures.js'
import { ReportTime, formatDay } from '../engine/stats/time.js'
import { createCsvQueryLog } from '../engine/querylog/writer.js'

test('a query reaches the reports and the overview by itself, within seconds', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const w = await world(t)
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'] }, { black: ['ads.example'] })
  const file = join(w.dir, 'api.yaml')
  writeFileSync(
    file,
    [
      'datafiles:',
      `  cats: ${CONF}`,
      '  language: en',
      'common:',
      `  db: ${join(w.dir, 'db')}`,
      'stats:',
      `  dir: ${env.config.stats.dir}`,
      `  db: ${env.config.stats.db}`,
      'api:',
      '  listen: 127.0.0.1:0',
      '  log: "-"',
      `  pid: ${join(w.dir, 'api.pid')}`
    ].join('\n')
  )
  const api = await startRole(t, 'api', file)
  // The DNS server's query log with its own timers, as the dns role runs it (stats.rotate: 3 s by default).
  t.assert.strictEqual(env.config.stats.rotate, 3)
  const querylog = createCsvQueryLog(env.config, silentLogger())
  t.after(() => querylog.close())
  const s = await server(t, w, { querylog })
  const day = formatDay(new ReportTime('UTC').dayOf(Date.now()))
  const domains = async (): Promise<{ labels: string[] }> =>
    (await getJson(`${api.url}/users/alice/stat/domains/all?from=${day}&to=${day}`)).body as { labels: string[] }
  t.assert.deepStrictEqual((await domains()).labels, [])
  await ask(s.port, 'live.example', 'A')
  await ask(s.port, 'x.ads.example', 'A')
  await until('the queries in the report', async () => (await domains()).labels.length === 2, 60_000, 250)
  t.assert.deepStrictEqual((await domains()).labels, ['live.example', 'x.ads.example'])
  const overview = (await getJson(`${api.url}/stats/overview?from=${day}&to=${day}`)).body as {
    totals: { requests: number; blocks: number }
  }
  t.assert.deepStrictEqual(overview.totals, { requests: 2, blocks: 1 })
  // Stop the DNS server before the store the world's teardown closes (its timers read the store).
  await s.close()
  await querylog.close()
})
