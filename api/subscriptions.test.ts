// List subscriptions end to end: the api role (a child process) refreshes a list from a local HTTP
// server, the DNS role (another child) enforces it, checked with dig; a changed list is applied as its
// difference (the name it lost answers again, the new one is blocked); /metrics, the API's checks,
// a config source, and removal.
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startRole } from '../engine/testing/daemon.js'
import { BLOCK_V4, dig, digMissing, tempDir } from '../engine/testing/dns.js'
import { until } from '../engine/testing/wait.js'
import { startStubResolver } from '../engine/upstream-stub/index.js'
import { startListServer } from '../engine/testing/list-server.js'
import { call, writeTaxonomy } from './testing/fixtures.js'

const FORWARDED = '198.51.100.10'

async function aOf(port: number, name: string): Promise<string> {
  const out = await dig([`@127.0.0.1`, '-p', String(port), '+short', '+tries=1', '+time=3', name, 'A'])
  return (out ?? '').trim()
}

interface Sub {
  id: string
  origin: string
  enabled: boolean
  state: { entries: number; lastSuccess: number; errors: number; etag?: string } | null
}

test('a subscribed list is enforced by the DNS server, and a changed list by its difference', async (t: TestContext) => {
  if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
  const dir = tempDir(t, 'filterd-lists-')
  writeTaxonomy(join(dir, 'cats'))
  const stub = await startStubResolver({ tcp: true })
  t.after(async () => {
    await stub.close()
  })
  const lists = await startListServer(t, { kind: 'list', body: 'first.example\nsecond.example\n', etag: '"1"' })
  const file = join(dir, 'filterd.yaml')
  writeFileSync(
    file,
    JSON.stringify({
      dnscache: { forward: [`127.0.0.1:${stub.port}`] },
      proxy: { listen: ['127.0.0.1:0'], 'blockpage-ip': [BLOCK_V4], log: '-', pid: join(dir, 'dns.pid') },
      common: { db: join(dir, 'db'), 'log-level': 'info' },
      datafiles: { path: dir, cats: join(dir, 'cats'), language: 'en' },
      stats: { dir: join(dir, 'stats'), db: join(dir, 'statsdb') },
      api: { listen: '127.0.0.1:0', log: '-', pid: join(dir, 'api.pid') },
      lists: {
        retry: 10,
        sources: [{ id: 'fromconfig', url: lists.url, format: 'domains', target: 'whitelist', enabled: false }]
      }
    })
  )
  const api = await startRole(t, 'api', file)
  const dns = await startRole(t, 'dns', file)
  t.assert.strictEqual(await aOf(dns.port, 'first.example'), FORWARDED)

  const put = await call<Sub>(api.url, 'PUT', '/subscriptions/ads', {
    url: lists.url,
    format: 'domains',
    target: 'blacklist'
  })
  t.assert.strictEqual(put.status, 201)
  t.assert.strictEqual(put.body.origin, 'api')
  // The refresher picks the new source up on its next tick (every 5 s).
  await until('first.example blocked', async () => (await aOf(dns.port, 'www.first.example')) === BLOCK_V4, 30_000, 200)
  t.assert.strictEqual(await aOf(dns.port, 'second.example'), BLOCK_V4)

  lists.mode = { kind: 'list', body: 'second.example\nthird.example\n', etag: '"2"' }
  const refreshed = await call(api.url, 'POST', '/subscriptions/ads/refresh')
  t.assert.deepStrictEqual(refreshed.body, { status: 'changed', entries: 2, added: 1, removed: 1, moved: 0 })
  await until('third.example blocked', async () => (await aOf(dns.port, 'third.example')) === BLOCK_V4, 10_000, 200)
  t.assert.strictEqual(await aOf(dns.port, 'first.example'), FORWARDED)
  t.assert.strictEqual(await aOf(dns.port, 'second.example'), BLOCK_V4)

  const all = await call<Sub[]>(api.url, 'GET', '/subscriptions/')
  t.assert.deepStrictEqual(
    all.body.map((s) => [s.id, s.origin, s.enabled, s.state?.entries ?? null, s.state?.etag ?? null]),
    [
      ['fromconfig', 'config', false, null, null],
      ['ads', 'api', true, 2, '"2"']
    ]
  )
  const metrics = await fetch(`${api.url}/metrics`).then(async (r) => await r.text())
  t.assert.match(metrics, /^filterd_list_entries\{source="ads"\} 2$/m)
  t.assert.match(metrics, /^filterd_list_errors\{source="ads"\} 0$/m)
  t.assert.match(metrics, /^filterd_list_age_seconds\{source="ads"\} \d+$/m)
  t.assert.match(metrics, /^filterd_list_last_success_seconds\{source="ads"\} \d{10}$/m)

  // A failure keeps the last good copy and is counted.
  lists.mode = { kind: 'status', status: 500 }
  t.assert.strictEqual(
    (await call<{ status: string }>(api.url, 'POST', '/subscriptions/ads/refresh')).body.status,
    'failed'
  )
  t.assert.strictEqual(await aOf(dns.port, 'third.example'), BLOCK_V4)
  const after = await fetch(`${api.url}/metrics`).then(async (r) => await r.text())
  t.assert.match(after, /^filterd_list_errors\{source="ads"\} 1$/m)

  t.assert.strictEqual((await call(api.url, 'DELETE', '/subscriptions/ads')).status, 204)
  await until('third.example forwarded', async () => (await aOf(dns.port, 'third.example')) === FORWARDED, 10_000, 200)
  t.assert.strictEqual((await call(api.url, 'GET', '/subscriptions/ads')).status, 404)
})

test('the subscription routes refuse what cannot be', async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-lists-')
  writeTaxonomy(join(dir, 'cats'))
  const file = join(dir, 'filterd.yaml')
  writeFileSync(
    file,
    JSON.stringify({
      common: { db: join(dir, 'db'), 'log-level': 'warn' },
      datafiles: { path: dir, cats: join(dir, 'cats'), language: 'en' },
      stats: { dir: join(dir, 'stats'), db: join(dir, 'statsdb') },
      api: { listen: '127.0.0.1:0', log: '-', pid: join(dir, 'api.pid') },
      lists: {
        refresh: false,
        sources: [{ id: 'cfg', url: 'http://127.0.0.1:9/x', format: 'hosts', target: 'blacklist' }]
      }
    })
  )
  const api = await startRole(t, 'api', file)
  const url = 'http://127.0.0.1:9/list'
  const cases: Array<[string, string, unknown, number, string, string | undefined]> = [
    [
      'PUT',
      '/subscriptions/cfg',
      { url, format: 'hosts', target: 'blacklist' },
      409,
      'API_SUBSCRIPTION_IN_CONFIG',
      'source_id'
    ],
    ['DELETE', '/subscriptions/cfg', undefined, 409, 'API_SUBSCRIPTION_IN_CONFIG', 'source_id'],
    ['PUT', '/subscriptions/Bad!', { url, format: 'hosts', target: 'blacklist' }, 400, 'API_BAD_PARAM', 'source_id'],
    ['PUT', '/subscriptions/x', { url, format: 'csv', target: 'blacklist' }, 422, 'API_INVALID_BODY', 'format'],
    [
      'PUT',
      '/subscriptions/x',
      { url: 'ftp://x/y', format: 'hosts', target: 'blacklist' },
      422,
      'API_INVALID_BODY',
      'url'
    ],
    ['PUT', '/subscriptions/x', { url, format: 'hosts', target: 'category' }, 422, 'API_INVALID_BODY', 'category'],
    [
      'PUT',
      '/subscriptions/x',
      { url, format: 'hosts', target: 'category', category: 999 },
      422,
      'API_UNKNOWN_CATEGORY',
      'category'
    ],
    [
      'PUT',
      '/subscriptions/x',
      { url, format: 'hosts', target: 'whitelist', category: 1 },
      422,
      'API_INVALID_BODY',
      'category'
    ],
    ['GET', '/subscriptions/nope', undefined, 404, 'API_SUBSCRIPTION_NOT_FOUND', 'source_id'],
    ['POST', '/subscriptions/nope/refresh', undefined, 404, 'API_SUBSCRIPTION_NOT_FOUND', 'source_id']
  ]
  for (const [method, path, body, status, code, field] of cases) {
    const r = await call<{ error: { code: string; field?: string } }>(api.url, method, path, body)
    t.assert.strictEqual(r.status, status, `${method} ${path}`)
    t.assert.strictEqual(r.body.error.code, code, `${method} ${path}`)
    t.assert.strictEqual(r.body.error.field, field, `${method} ${path}`)
  }
  const ok = await call<Sub>(api.url, 'PUT', '/subscriptions/cat', {
    url,
    format: 'adblock',
    target: 'category',
    category: 1
  })
  t.assert.strictEqual(ok.status, 201)
  t.assert.strictEqual(
    (await call(api.url, 'PUT', '/subscriptions/cat', { url, format: 'rpz', target: 'blacklist' })).status,
    200
  )
  t.assert.strictEqual((await call<Sub>(api.url, 'GET', '/subscriptions/cat')).body.state, null)
})
