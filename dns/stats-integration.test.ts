import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { fetchJson as getJson } from '../engine/testing/wait.js'
import { silentLogger } from '../engine/log/index.js'
import { addUser, ask, server, sleep, world } from './testing/harness.js'
import { openStatsDb } from '../engine/stats/db.js'
import { ANONYMOUS_USER } from '../engine/querylog/files.js'
import { statsTestEnv } from '../engine/testing/stats/fixtures.js'
import { importClosedFiles } from '../engine/stats/importer.js'
import { activityByDay, rawLastHour, topDomains } from '../engine/stats/reports.js'
import { ReportTime, formatDay } from '../engine/stats/time.js'
import { createCsvQueryLog } from '../engine/querylog/writer.js'

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
  t.assert.deepStrictEqual((await activityByDay(db, 'alice', d, d)).datasets, [
    { label: 'Requests', data: [3] },
    { label: 'Blocks', data: [1] }
  ])
  t.assert.deepStrictEqual((await topDomains(db, 'alice', d, d, 'all')).labels, ['news.example', 'x.ads.example'])
  const raw = await rawLastHour(db, time, 'alice', now + 1)
  t.assert.deepStrictEqual(
    raw.data.map((r) => [r[2], r[3], r[4], r[5]]),
    [
      ['127.0.0.1', 'news.example', '', 'none'],
      ['127.0.0.1', 'x.ads.example', 'ads.example', 'user-blacklist'],
      ['127.0.0.1', 'news.example', '', 'none']
    ]
  )
})

test("sums a user's addresses, keeps anonymous addresses apart, and counts a moved address under its owner at query time", async (t: TestContext) => {
  const env = statsTestEnv(t)
  const w = await world(t)
  await w.store.write((wr) => wr.putList(null, 'black', ['evil.example']))
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1', '127.0.0.2', '127.0.0.3'] }, { black: ['ads.example'] })
  await addUser(w.store, { name: 'bob', ip: ['127.0.0.4'] })
  const querylog = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  t.after(() => querylog.close())
  const s = await server(t, w, { querylog })
  const from = async (address: string, name: string): Promise<void> => {
    await ask(s.port, name, 'A', { from: address })
  }
  // alice, from three addresses.
  await from('127.0.0.1', 'www.news.example')
  await from('127.0.0.2', 'www.news.example')
  await from('127.0.0.2', 'x.ads.example')
  await from('127.0.0.3', 'moved.example')
  // bob.
  await from('127.0.0.4', 'www.bob.example')
  // No user: the server defaults, reported under the reserved name. The stub answers .invalid NXDOMAIN.
  await from('127.0.0.5', 'anon.example')
  await from('127.0.0.6', 'anon.example')
  await from('127.0.0.5', 'evil.example')
  await from('127.0.0.6', 'nx.invalid')
  // The billing system gives 127.0.0.3 to bob; the server reads the new generation within GENERATION_CHECK_MS (10 ms).
  await w.store.write((wr) => {
    wr.putUser({ ...w.store.getUser('bob')!, ip: ['127.0.0.4', '127.0.0.3'] })
    wr.claimAddresses('bob', ['127.0.0.3'])
  })
  await sleep(100)
  await from('127.0.0.3', 'moved.example')
  t.assert.ok(await querylog.rotateNow())

  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  const now = Date.now()
  t.assert.strictEqual((await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => now })).rows, 10)
  const time = new ReportTime('UTC')
  const d = time.dayOf(now)
  const domains = async (user: string, filter: 'all' | 'www'): Promise<unknown> =>
    await topDomains(db, user, d, d, filter)

  t.assert.deepStrictEqual((await activityByDay(db, 'alice', d, d)).datasets, [
    { label: 'Requests', data: [4] },
    { label: 'Blocks', data: [1] }
  ])
  t.assert.deepStrictEqual(await domains('alice', 'all'), {
    labels: ['www.news.example', 'moved.example', 'x.ads.example'],
    datasets: [
      { label: 'Requests', data: [2, 1, 1] },
      { label: 'NXdomain', data: [0, 0, 0] },
      { label: 'Blocks', data: [0, 0, 1] }
    ]
  })
  t.assert.deepStrictEqual(await domains('alice', 'www'), {
    labels: ['www.news.example'],
    datasets: [
      { label: 'Requests', data: [2] },
      { label: 'NXdomain', data: [0] },
      { label: 'Blocks', data: [0] }
    ]
  })
  t.assert.deepStrictEqual((await activityByDay(db, 'bob', d, d)).datasets, [
    { label: 'Requests', data: [2] },
    { label: 'Blocks', data: [0] }
  ])
  t.assert.deepStrictEqual(await domains('bob', 'all'), {
    labels: ['moved.example', 'www.bob.example'],
    datasets: [
      { label: 'Requests', data: [1, 1] },
      { label: 'NXdomain', data: [0, 0] },
      { label: 'Blocks', data: [0, 0] }
    ]
  })
  t.assert.deepStrictEqual((await activityByDay(db, ANONYMOUS_USER, d, d)).datasets, [
    { label: 'Requests', data: [4] },
    { label: 'Blocks', data: [1] }
  ])
  t.assert.deepStrictEqual(await domains(ANONYMOUS_USER, 'all'), {
    labels: ['anon.example', 'evil.example', 'nx.invalid'],
    datasets: [
      { label: 'Requests', data: [2, 1, 1] },
      { label: 'NXdomain', data: [0, 0, 1] },
      { label: 'Blocks', data: [0, 1, 0] }
    ]
  })
  t.assert.deepStrictEqual(await domains(ANONYMOUS_USER, 'www'), {
    labels: [],
    datasets: [
      { label: 'Requests', data: [] },
      { label: 'NXdomain', data: [] },
      { label: 'Blocks', data: [] }
    ]
  })
  const rows = async (user: string): Promise<string[][]> =>
    (await rawLastHour(db, time, user, now + 1)).data.map((r) => [r[2], r[3]])
  t.assert.deepStrictEqual(await rows('alice'), [
    ['127.0.0.1', 'www.news.example'],
    ['127.0.0.2', 'www.news.example'],
    ['127.0.0.2', 'x.ads.example'],
    ['127.0.0.3', 'moved.example']
  ])
  t.assert.deepStrictEqual(await rows('bob'), [
    ['127.0.0.4', 'www.bob.example'],
    ['127.0.0.3', 'moved.example']
  ])

  // The same reports over HTTP from the real api role, on the store and statistics the test wrote.
  // Its import timer finds nothing left: the files above are imported and gone. The statistics
  // store has one writer process: the test closes it before the api role opens it.
  const [aliceWww, anonAll] = [await domains('alice', 'www'), await domains(ANONYMOUS_USER, 'all')]
  await db.close()
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
      '  import-interval: 86400',
      'api:',
      '  listen: 127.0.0.1:0',
      '  log: "-"',
      `  pid: ${join(w.dir, 'api.pid')}`
    ].join('\n')
  )
  const api = await startRole(t, 'api', file)
  const day = formatDay(d)
  t.assert.deepStrictEqual(await getJson(`${api.url}/users/alice/stat/domains/www?from=${day}&to=${day}`), {
    status: 200,
    body: aliceWww
  })
  t.assert.deepStrictEqual(await getJson(`${api.url}/users/bob/stat/activity/day?from=${day}&to=${day}`), {
    status: 200,
    body: {
      labels: [day],
      datasets: [
        { label: 'Requests', data: [2] },
        { label: 'Blocks', data: [0] }
      ]
    }
  })
  t.assert.deepStrictEqual(
    await getJson(`${api.url}/users/${encodeURIComponent(ANONYMOUS_USER)}/stat/domains/all?from=${day}&to=${day}`),
    { status: 200, body: anonAll }
  )
})
