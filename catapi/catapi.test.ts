import { test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { needsUws } from '../engine/testing/uws.js'
import { addClient, basic, get, startHarness } from './testing/harness.js'
import { GENERATION_CHECK_MS } from '../engine/store/index.js'
import { clientRecord } from '../engine/auth/index.js'

const MAX_AGE = 43200

function maxAgeOf(header: unknown): number {
  const m = /(?:^|,\s*)max-age=(\d+)/.exec(String(header))
  return m === null ? Number.NaN : Number(m[1])
}

for (const impl of ['uws', 'node'] as const) {
  const named = (s: string): string => `${s} (${impl})`

  test(
    named('answers 200 with the verdict of the most specific categorized suffix'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      const auth = await addClient(h.store, 'acme', 's3cret')
      const r = await get(h.registered, '/domain/x.ADS.example.com.', { Authorization: auth })
      t.assert.strictEqual(r.status, 200)
      t.assert.strictEqual(r.headers['content-type'], 'application/json')
      t.assert.deepStrictEqual(JSON.parse(r.body), {
        category: [1, 10],
        bad: true,
        category_name: ['Pornography', 'Malware']
      })
      const parent = await get(h.registered, '/domain/www.example.com', { Authorization: auth })
      t.assert.deepStrictEqual(JSON.parse(parent.body), {
        category: [40],
        bad: false,
        category_name: [h.taxonomy.name(40)]
      })
    }
  )

  test(
    named('lets clients cache answers for at most 12 hours and never caches errors'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      const auth = await addClient(h.store, 'acme', 's3cret')
      for (const path of [
        '/domain/example.com',
        '/url/http://example.com/Games',
        '/catgroups',
        '/domain/gone.example'
      ]) {
        const r = await get(h.registered, path, { Authorization: auth })
        const age = maxAgeOf(r.headers['cache-control'])
        t.assert.ok(age > 0 && age <= MAX_AGE, `${path}: ${String(r.headers['cache-control'])}`)
      }
      const unauth = await get(h.registered, '/domain/example.com')
      t.assert.strictEqual(unauth.headers['cache-control'], 'no-store')
    }
  )

  test(
    named('answers 206 Non-Existing Domain when the resolver says NXDOMAIN'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      const r = await get(h.anonymous, '/domain/www.gone.example')
      t.assert.strictEqual(r.status, 206)
      t.assert.deepStrictEqual(JSON.parse(r.body), {
        category: [0],
        bad: false,
        category_name: ['Non-Existing Domain']
      })
      t.assert.ok(h.resolver.seen.includes('www.gone.example/A'))
    }
  )

  test(
    named('answers 404 without a JSON body for names that exist but are not categorized'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      for (const path of [
        '/domain/com',
        '/domain/uncategorized.org',
        '/domain/192.0.2.1',
        '/url/https://uncategorized.org/x?y=1'
      ]) {
        const r = await get(h.anonymous, path)
        t.assert.strictEqual(r.status, 404, path)
        t.assert.strictEqual(r.body, '', path)
        t.assert.notStrictEqual(r.headers['content-type'], 'application/json', path)
      }
    }
  )

  test(
    named('answers 404 not-cacheable, not 206, when no resolver answers'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl, timeoutMs: 100 })
      h.resolver.silent = true
      const r = await get(h.anonymous, '/domain/www.gone.example')
      t.assert.strictEqual(r.status, 404)
      t.assert.strictEqual(r.body, '')
      t.assert.strictEqual(r.headers['cache-control'], 'no-store')
    }
  )

  test(named('answers 400 with a JSON error for malformed names and URLs'), needsUws(impl), async (t: TestContext) => {
    const h = await startHarness(t, { impl })
    const cases: Array<[string, string]> = [
      ['/domain/bad..name', 'CATAPI_BAD_DOMAIN'],
      ['/domain/a%zz.com', 'CATAPI_BAD_DOMAIN'],
      ['/domain/' + 'a'.repeat(64) + '.com', 'CATAPI_BAD_DOMAIN'],
      ['/domain/1.2.3', 'CATAPI_BAD_DOMAIN'],
      ['/domain/', 'CATAPI_BAD_DOMAIN'],
      ['/url/http://', 'CATAPI_BAD_URL'],
      ['/url/http://exa%20mple.com/', 'CATAPI_BAD_URL'],
      ['/url/http://example.com:99999/', 'CATAPI_BAD_URL'],
      ['/url/', 'CATAPI_BAD_URL']
    ]
    for (const [path, code] of cases) {
      const r = await get(h.anonymous, path)
      t.assert.strictEqual(r.status, 400, path)
      t.assert.strictEqual(r.headers['content-type'], 'application/json', path)
      t.assert.strictEqual((JSON.parse(r.body) as { error: { code: string } }).error.code, code, path)
    }
  })

  test(
    named('matches URL entries by longest prefix of path and query, percent-encoding preserved, then the host'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      const cats = async (path: string): Promise<unknown> => {
        const r = await get(h.anonymous, path)
        t.assert.strictEqual(r.status, 200, path)
        return (JSON.parse(r.body) as { category: number[] }).category
      }
      t.assert.deepStrictEqual(await cats('/url/https://www.example.com/Games/Poker/table?id=3'), [21])
      t.assert.deepStrictEqual(await cats('/url/http://user@example.com:8080/Games/chess'), [20])
      t.assert.deepStrictEqual(await cats('/url/http://example.com/q?x=1'), [22])
      t.assert.deepStrictEqual(await cats('/url/http://example.com/q?x=2'), [40])
      t.assert.deepStrictEqual(await cats('/url/http://example.com/a%20b/c.html'), [23])
      t.assert.deepStrictEqual(await cats('/url/http://example.com/games/Poker'), [40])
      t.assert.deepStrictEqual(await cats('/url/https%3A%2F%2Fexample.com%2FGames%2FPoker'), [21])
      const gone = await get(h.anonymous, '/url/https://gone.example/path?q=1')
      t.assert.strictEqual(gone.status, 206)
    }
  )

  test(named('serves the category group list in the spec format'), needsUws(impl), async (t: TestContext) => {
    const h = await startHarness(t, { impl })
    const r = await get(h.anonymous, '/catgroups')
    t.assert.strictEqual(r.status, 200)
    t.assert.deepStrictEqual(JSON.parse(r.body), h.taxonomy.groups)
  })

  test(
    named('writes Russian names as \\uXXXX escapes in JSON that parses back to the same strings'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl, lang: 'ru' })
      const gone = await get(h.anonymous, '/domain/gone.example')
      t.assert.strictEqual(gone.status, 206)
      t.assert.strictEqual(gone.body, '{"category":[0],"bad":false,"category_name":["Non-Existing Domain"]}')
      for (const path of ['/domain/ads.example.com', '/catgroups']) {
        const r = await get(h.anonymous, path)
        t.assert.ok(/^[\x20-\x7e]*$/.test(r.body), `${path}: only printable ASCII`)
        t.assert.match(r.body, /\\u04[0-9a-f]{2}/)
      }
      const r = await get(h.anonymous, '/domain/ads.example.com')
      const v = JSON.parse(r.body) as { category_name: string[] }
      t.assert.deepStrictEqual(v.category_name, [h.taxonomy.name(1), h.taxonomy.name(10)])
      t.assert.match(v.category_name[0]!, /[а-яё]/i)
      const groups = await get(h.anonymous, '/catgroups')
      t.assert.deepStrictEqual(JSON.parse(groups.body), h.taxonomy.groups)
    }
  )

  test(
    named('answers 401 with a Basic challenge and a JSON body for missing or wrong credentials'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      await addClient(h.store, 'acme', 's3cret')
      for (const headers of [
        {} as Record<string, string>,
        { Authorization: basic('acme', 'wrong') },
        { Authorization: basic('nobody', 's3cret') },
        { Authorization: 'Bearer x' }
      ]) {
        for (const path of ['/domain/example.com', '/url/http://example.com/', '/catgroups']) {
          const r = await get(h.registered, path, headers)
          t.assert.strictEqual(r.status, 401)
          t.assert.match(String(r.headers['www-authenticate']), /^Basic realm="[^"]+"/)
          t.assert.strictEqual((JSON.parse(r.body) as { error: { code: string } }).error.code, 'CATAPI_UNAUTHORIZED')
        }
      }
      const ok = await get(h.registered, '/domain/example.com', { Authorization: basic('acme', 's3cret') })
      t.assert.strictEqual(ok.status, 200)
    }
  )

  test(
    named('slows down an address after repeated failed logins but keeps serving verified clients'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl, api: { auth: { failureLimit: 3 } } })
      const good = await addClient(h.store, 'acme', 's3cret')
      t.assert.strictEqual((await get(h.registered, '/catgroups', { Authorization: good })).status, 200)
      for (let i = 0; i < 3; i++) {
        t.assert.strictEqual(
          (await get(h.registered, '/catgroups', { Authorization: basic('acme', `guess${i}`) })).status,
          401
        )
      }
      const throttled = await get(h.registered, '/catgroups', { Authorization: basic('acme', 'guess4') })
      t.assert.strictEqual(throttled.status, 429)
      t.assert.strictEqual(throttled.headers['retry-after'], '60')
      t.assert.strictEqual(throttled.headers['cache-control'], 'no-store')
      t.assert.strictEqual((await get(h.registered, '/catgroups', { Authorization: good })).status, 200)
      h.clock += 60_000
      t.assert.strictEqual(
        (await get(h.registered, '/catgroups', { Authorization: basic('acme', 'guess5') })).status,
        401
      )
    }
  )

  test(
    named('stops accepting a secret within GENERATION_CHECK_MS of a change to the client record in the store'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      const old = await addClient(h.store, 'acme', 'one')
      t.assert.strictEqual((await get(h.registered, '/catgroups', { Authorization: old })).status, 200)
      const fresh = await addClient(h.store, 'acme', 'two')
      await sleep(2 * GENERATION_CHECK_MS)
      t.assert.strictEqual((await get(h.registered, '/catgroups', { Authorization: old })).status, 401)
      t.assert.strictEqual((await get(h.registered, '/catgroups', { Authorization: fresh })).status, 200)
      await h.store.write((w) => {
        w.deleteClient('acme')
      })
      await sleep(2 * GENERATION_CHECK_MS)
      t.assert.strictEqual((await get(h.registered, '/catgroups', { Authorization: fresh })).status, 401)
    }
  )

  test(
    named(
      'answers 429 past 10 anonymous requests a minute with a Retry-After that is exactly when the next one is served'
    ),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      const start = h.clock
      for (let i = 0; i < 10; i++) {
        h.clock = start + i * 1000
        t.assert.strictEqual((await get(h.anonymous, '/domain/example.com')).status, 200)
      }
      h.clock = start + 15_500
      const refused = await get(h.anonymous, '/domain/example.com')
      t.assert.strictEqual(refused.status, 429)
      t.assert.strictEqual(refused.headers['cache-control'], 'no-store')
      t.assert.strictEqual((JSON.parse(refused.body) as { error: { code: string } }).error.code, 'CATAPI_RATE_LIMITED')
      const retryAfter = Number(refused.headers['retry-after'])
      t.assert.strictEqual(retryAfter, 45) // the first request (at start) leaves the window at start + 60 s
      h.clock = start + 15_500 + (retryAfter - 1) * 1000
      t.assert.strictEqual((await get(h.anonymous, '/catgroups')).status, 429)
      h.clock = start + 15_500 + retryAfter * 1000
      t.assert.strictEqual((await get(h.anonymous, '/catgroups')).status, 200)
      // The window slides: the second request (at start + 1 s) frees the next slot one second later.
      const next = await get(h.anonymous, '/catgroups')
      t.assert.strictEqual(next.status, 429)
      t.assert.strictEqual(next.headers['retry-after'], '1')
    }
  )

  test(
    named('limits anonymous access per socket peer address, not per forwarded header'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl, api: { anonLimit: 2 } })
      for (let i = 0; i < 2; i++)
        t.assert.strictEqual((await get(h.anonymous, '/catgroups', {}, '127.0.0.1')).status, 200)
      t.assert.strictEqual(
        (await get(h.anonymous, '/catgroups', { 'X-Forwarded-For': '203.0.113.7' }, '127.0.0.1')).status,
        429
      )
      t.assert.strictEqual((await get(h.anonymous, '/catgroups', {}, '127.0.0.2')).status, 200)
    }
  )

  test(
    named('serves the same endpoints on both listeners and counts only registered use, per client per day'),
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      const a = await addClient(h.store, 'acme', 's1')
      const b = await addClient(h.store, 'beta', 's2')
      for (const path of ['/domain/example.com', '/url/http://example.com/Games', '/catgroups']) {
        const reg = await get(h.registered, path, { Authorization: a })
        const anon = await get(h.anonymous, path)
        t.assert.strictEqual(reg.status, 200)
        t.assert.strictEqual(anon.body, reg.body)
      }
      await get(h.registered, '/domain/nothing.invalid', { Authorization: b })
      h.clock += 86_400_000
      await get(h.registered, '/catgroups', { Authorization: a })
      await h.api.usage.flush()
      const { readUsage } = await import('./usage.js')
      t.assert.deepStrictEqual(readUsage(h.store), [
        { client: 'acme', day: '2024-05-01', requests: 3 },
        { client: 'acme', day: '2024-05-02', requests: 1 },
        { client: 'beta', day: '2024-05-01', requests: 1 }
      ])
      await get(h.registered, '/catgroups', { Authorization: a })
      await h.api.usage.flush()
      t.assert.deepStrictEqual(readUsage(h.store, { client: 'acme', from: '2024-05-02' }), [
        { client: 'acme', day: '2024-05-02', requests: 2 }
      ])
    }
  )
}

test('an unknown client id takes as long to refuse as a known one with a wrong secret (no id enumeration by timing)', async (t: TestContext) => {
  const h = await startHarness(t, { api: { auth: { failureLimit: 1000 } } })
  // The real cost (the default scrypt parameters), as `filterd client add` stores it.
  const record = await clientRecord('acme', 's3cret', new Date().toISOString(), undefined)
  await h.store.write((w) => {
    w.putClient(record)
  })
  const timed = async (id: string, secret: string): Promise<number> => {
    const started = performance.now()
    const r = await get(h.registered, '/catgroups', { Authorization: basic(id, secret) })
    t.assert.strictEqual(r.status, 401)
    return performance.now() - started
  }
  await timed('warmup', 'x') // the decoy record is made on first use
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 7; i++) {
    // alternating, so load on the machine hits both alike
    known.push(await timed('acme', `wrong${i}`))
    unknown.push(await timed(`nobody${i}`, `wrong${i}`))
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
  t.assert.ok(
    median(unknown) >= median(known) / 2,
    `median 401: unknown id ${median(unknown).toFixed(1)} ms, known id with a wrong secret ${median(known).toFixed(1)} ms`
  )
})
