import { test, type TestContext } from 'node:test'
import { silentLogger } from '../log/index.js'
import { addUser, ask, server, world } from '../dns/testing/harness.js'
import { openStatsDb } from './db.js'
import { statsTestEnv } from './fixtures.js'
import { importClosedFiles } from './importer.js'
import { activityByDay, rawLastHour, topDomains } from './reports.js'
import { ReportTime } from './time.js'
import { createCsvQueryLog } from './writer.js'

test('counts queries answered by the real DNS server in the reports', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const w = await world(t)
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'] }, { black: ['ads.example'] })
  const querylog = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  t.after(() => querylog.close())
  const s = await server(t, w, { querylog })
  await ask(s.port, 'news.example', 'A')
  await ask(s.port, 'x.ads.example', 'A')
  await ask(s.port, 'news.example', 'AAAA')
  t.assert.ok(await querylog.rotateNow())
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  const now = Date.now()
  t.assert.strictEqual((await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => now })).rows, 3)
  const time = new ReportTime('UTC')
  const d = time.dayOf(now)
  t.assert.deepStrictEqual(activityByDay(db, 'alice', d, d).datasets, [{ label: 'Requests', data: [3] }, { label: 'Blocks', data: [1] }])
  t.assert.deepStrictEqual(topDomains(db, 'alice', d, d, 'all').labels, ['news.example', 'x.ads.example'])
  const raw = rawLastHour(db, time, 'alice', now + 1)
  t.assert.deepStrictEqual(raw.data.map((r) => [r[2], r[3], r[4], r[5]]), [
    ['127.0.0.1', 'news.example', '', 'none'],
    ['127.0.0.1', 'x.ads.example', 'ads.example', 'user-blacklist'],
    ['127.0.0.1', 'news.example', '', 'none']
  ])
})
