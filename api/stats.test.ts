// The statistics reports over HTTP, on the management API server (api/routes/stats.ts), from records
// imported through the real importer.
import { test, type TestContext } from 'node:test'
import { openStatsDb } from '../engine/stats/index.js'
import { NOW, SCENARIO, statsTestEnv, writeFiles } from '../engine/testing/stats/fixtures.js'
import { importClosedFiles } from '../engine/stats/importer.js'
import { call, startApi } from './testing/fixtures.js'

async function serve(t: TestContext): Promise<string> {
  const env = statsTestEnv(t)
  await writeFiles(env, SCENARIO)
  const statsDb = openStatsDb(env.config.stats.db)
  t.after(() => statsDb.close())
  await importClosedFiles(statsDb, env.config.stats.dir, 'UTC', { now: () => NOW })
  const api = await startApi({ stats: { db: statsDb, timezone: 'UTC', now: () => NOW } })
  t.after(() => api.close())
  // alice and bob exist (created by their first setting, as the billing system would).
  for (const user of ['alice', 'bob'])
    t.assert.strictEqual((await call(api.base, 'POST', `/users/${user}/filter/`, [1])).status, 201)
  return api.base
}

// Reports are read with the fixtures' one request helper, their bodies loosely typed: their shape is what each test checks.

test('serves the five statistics reports of a user over HTTP', async (t: TestContext) => {
  const base = await serve(t)
  const q = '?from=2024-05-14&to=2024-05-15'
  const day = await call<any>(base, 'GET', `/users/alice/stat/activity/day${q}`)
  t.assert.deepStrictEqual(
    { status: day.status, body: day.body },
    {
      status: 200,
      body: {
        labels: ['2024-05-14', '2024-05-15'],
        datasets: [
          { label: 'Requests', data: [1, 6] },
          { label: 'Blocks', data: [0, 1] }
        ]
      }
    }
  )
  const hour = await call<any>(base, 'GET', `/users/alice/stat/activity/hour${q}`)
  t.assert.strictEqual(hour.body.labels.length, 48)
  t.assert.strictEqual(hour.body.labels[34], '2024-05-15 10:00:00')
  t.assert.strictEqual(hour.body.datasets[0].data[34], 3)
  const www = await call<any>(base, 'GET', `/users/alice/stat/domains/www${q}`)
  t.assert.deepStrictEqual(www.body.labels, ['www.news.example'])
  const all = await call<any>(base, 'GET', `/users/alice/stat/domains/all${q}`)
  t.assert.deepStrictEqual(
    all.body.datasets.map((d: { label: string }) => d.label),
    ['Requests', 'NXdomain', 'Blocks']
  )
  const detail = await call<any>(base, 'GET', `/users/alice/stat/detail${q}`)
  t.assert.deepStrictEqual(detail.body.timestamps, ['2024-05-14', '2024-05-15'])
  t.assert.deepStrictEqual(detail.body.reports[1].cats, [[5], [3], [], []])
  const raw = await call<any>(base, 'GET', `/users/alice/stat/raw`)
  t.assert.strictEqual(raw.status, 200)
  t.assert.strictEqual(raw.body.data.length, 3)
  t.assert.deepStrictEqual(raw.body.data[1], ['2024-05-15 12:10:00', 1, '10.0.0.1', 'nx.example', '', 'none', [], []])
})

test("the raw report adds the decision's source after the specification's eight fields when ?with=source asks, and refuses other names", async (t: TestContext) => {
  const base = await serve(t)
  const raw = await call<any>(base, 'GET', `/users/alice/stat/raw?with=source`)
  t.assert.strictEqual(raw.status, 200)
  t.assert.deepStrictEqual(raw.body.fields.slice(7), ['blockedcats', 'source'])
  t.assert.deepStrictEqual(raw.body.data[1], [
    '2024-05-15 12:10:00',
    1,
    '10.0.0.1',
    'nx.example',
    '',
    'none',
    [],
    [],
    ''
  ])
  const bad = await call<any>(base, 'GET', `/users/alice/stat/raw?with=source,client_id`)
  t.assert.strictEqual(bad.status, 400)
  t.assert.strictEqual(bad.body.error.code, 'API_BAD_QUERY')
  t.assert.strictEqual(bad.body.error.field, 'with')
})

test('serves the anonymous addresses under the reserved name, encoded or not', async (t: TestContext) => {
  const base = await serve(t)
  for (const name of ['%2Aanonymous%2A', '*anonymous*']) {
    const r = await call<any>(base, 'GET', `/users/${name}/stat/activity/day?from=2024-05-15&to=2024-05-15`)
    t.assert.deepStrictEqual(r.body.datasets, [
      { label: 'Requests', data: [2] },
      { label: 'Blocks', data: [1] }
    ])
  }
})

test('refuses bad users, dates and filters with the API error body', async (t: TestContext) => {
  const base = await serve(t)
  const cases: Array<[string, number, string, string]> = [
    ['/users/nobody/stat/activity/day?from=2024-05-15&to=2024-05-15', 404, 'API_USER_NOT_FOUND', 'user_id'],
    ['/users/bad%20id/stat/raw', 400, 'API_BAD_USER_ID', 'user_id'],
    ['/users/alice/stat/activity/day?to=2024-05-15', 400, 'API_BAD_QUERY', 'from'],
    ['/users/alice/stat/activity/day?from=2024-5-15&to=2024-05-15', 400, 'API_BAD_QUERY', 'from'],
    ['/users/alice/stat/activity/hour?from=2024-05-15&to=2024-02-30', 400, 'API_BAD_QUERY', 'to'],
    ['/users/alice/stat/detail?from=2024-05-15&to=2024-05-14', 400, 'API_BAD_QUERY', 'from'],
    ['/users/alice/stat/domains/all?from=2024-02-14&to=2024-05-14', 400, 'API_BAD_QUERY', 'from'],
    ['/users/alice/stat/domains/all?from=2024-05-14&to=2024-05-16', 400, 'API_BAD_QUERY', 'to'],
    ['/users/alice/stat/domains/some?from=2024-05-14&to=2024-05-15', 400, 'API_BAD_PARAM', 'filter']
  ]
  for (const [path, status, code, field] of cases) {
    const r = await call<any>(base, 'GET', path)
    t.assert.strictEqual(r.status, status, path)
    t.assert.strictEqual(r.body.error.code, code, path)
    t.assert.strictEqual(r.body.error.field, field, path)
  }
  // The first day kept is three calendar months back.
  t.assert.strictEqual(
    (await call<any>(base, 'GET', `/users/alice/stat/activity/day?from=2024-02-15&to=2024-02-15`)).status,
    200
  )
})

test('answers with or without the trailing slash, like every API route', async (t: TestContext) => {
  const base = await serve(t)
  for (const path of [
    '/users/alice/stat/raw',
    '/users/alice/stat/raw/',
    '/users/alice/stat/activity/day/?from=2024-05-15&to=2024-05-15'
  ]) {
    t.assert.strictEqual((await call<any>(base, 'GET', path)).status, 200, path)
  }
})

test("serves the whole server's overview: totals, anonymous against users, top blocked names and categories", async (t: TestContext) => {
  const base = await serve(t)
  const o = await call<any>(base, 'GET', `/stats/overview?from=2024-05-14&to=2024-05-15`)
  t.assert.strictEqual(o.status, 200)
  t.assert.deepStrictEqual(o.body.days, {
    labels: ['2024-05-14', '2024-05-15'],
    datasets: [
      { label: 'Requests', data: [1, 9] },
      { label: 'Blocks', data: [0, 2] }
    ]
  })
  t.assert.strictEqual(o.body.hours.labels.length, 48)
  t.assert.strictEqual(o.body.hours.datasets[0].data[34], 3)
  t.assert.deepStrictEqual(
    [o.body.totals, o.body.anonymous, o.body.users],
    [
      { requests: 10, blocks: 2 },
      { requests: 2, blocks: 1 },
      { requests: 8, blocks: 1 }
    ]
  )
  t.assert.deepStrictEqual(o.body.topBlocked, [
    { domain: 'ads.example', blocks: 1, requests: 1, cats: [3] },
    { domain: 'x.example', blocks: 1, requests: 2, cats: [] }
  ])
  t.assert.deepStrictEqual(o.body.topCategories, [{ category: 3, blocks: 1 }])
  // The per-user reports are unchanged by the totals kept beside them.
  const alice = await call<any>(base, 'GET', `/users/alice/stat/activity/day?from=2024-05-14&to=2024-05-15`)
  t.assert.deepStrictEqual(alice.body.datasets[0].data, [1, 6])
  t.assert.strictEqual((await call<any>(base, 'GET', `/stats/overview?from=2024-05-15`)).status, 400)
})
