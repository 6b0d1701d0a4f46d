// GET /check/{domain}?ip= and GET /users/{user_id}/check/{domain}: every policy step, explained by the
// server's own Policy (the DNS server's code), on a real store and category database.
import { test, type TestContext } from 'node:test'
import { buildCats } from '../engine/testing/store.js'
import { call, errorOf, startApi, type StartedApi } from './testing/fixtures.js'

async function serve(t: TestContext): Promise<StartedApi> {
  const api = await startApi()
  t.after(() => api.close())
  await buildCats(api.store, { 'porn.example': [1, 40], 'dating.example': [41], 'www.google.com': [40] })
  return api
}

async function check(api: StartedApi, path: string): Promise<Record<string, unknown>> {
  const r = await call(api.base, 'GET', path)
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`)
  return r.body as Record<string, unknown>
}

function pick(a: Record<string, unknown>): unknown[] {
  return [a.user, a.action, a.step, a.matched]
}

test('check by address: each policy step with the entry that decided', async (t: TestContext) => {
  const api = await serve(t)
  const put = (path: string, body: unknown): Promise<unknown> => call(api.base, 'PUT', path, body)
  await put('/users/kid', {
    ip: ['10.0.0.1'],
    filter: [41],
    whitelist: ['ok.porn.example'],
    blacklist: ['games.example'],
    safesearch: 'on',
    safeyoutube: 'on'
  })
  await put('/users/off', { ip: ['10.0.0.2'], status: 'disabled' })
  await put('/users/strict', { ip: ['10.9.0.0/16'], blacklist: ['-'], whitelist: ['school.example'] })
  await put('/blacklist/', ['evil.example', 'global-black.example'])
  await put('/whitelist/', ['global-white.example'])
  await put('/config/', { filter: [1] })

  const at = (name: string, ip: string): Promise<Record<string, unknown>> => check(api, `/check/${name}?ip=${ip}`)
  t.assert.deepStrictEqual(pick(await at('upd.kaspersky-labs.com', '10.0.0.1')), [
    'kid',
    'forward',
    'builtin-whitelist',
    'kaspersky-labs.com'
  ])
  t.assert.deepStrictEqual(pick(await at('a.global-white.example', '10.0.0.1')), [
    'kid',
    'forward',
    'global-whitelist',
    'global-white.example'
  ])
  t.assert.deepStrictEqual(pick(await at('x.evil.example', '10.0.0.2')), [
    'off',
    'block',
    'global-blacklist',
    'evil.example'
  ])
  t.assert.deepStrictEqual(pick(await at('porn.example', '10.0.0.2')), ['off', 'forward', 'user-disabled', null])
  t.assert.deepStrictEqual(pick(await at('ok.porn.example', '10.0.0.1')), [
    'kid',
    'forward',
    'user-whitelist',
    'ok.porn.example'
  ])
  t.assert.deepStrictEqual(pick(await at('games.example', '10.0.0.1')), [
    'kid',
    'block',
    'user-blacklist',
    'games.example'
  ])
  t.assert.deepStrictEqual(pick(await at('other.example', '10.9.3.4')), ['strict', 'block', 'user-allow-only', '-'])
  t.assert.deepStrictEqual(pick(await at('school.example', '10.9.3.4')), [
    'strict',
    'forward',
    'user-whitelist',
    'school.example'
  ])
  const search = await at('www.google.com', '10.0.0.1')
  t.assert.deepStrictEqual(pick(search), ['kid', 'safesearch', 'safesearch', 'www.google.com'])
  t.assert.deepStrictEqual(search.categories, [40])
  const video = await at('www.youtube.com', '10.0.0.1')
  t.assert.deepStrictEqual([video.action, video.step], ['safevideo', 'safevideo'])
  t.assert.match(String(video.target), /youtube/)
  const cat = await at('www.dating.example', '10.0.0.1')
  t.assert.deepStrictEqual(cat, {
    domain: 'www.dating.example',
    address: '10.0.0.1',
    user: 'kid',
    action: 'block',
    step: 'category',
    matched: 'dating.example',
    categories: [41],
    blockedCategories: [41],
    site: { domain: 'dating.example', categories: [41] },
    target: null,
    schedule: null,
    changesAt: null
  })
  // Anonymous: the server defaults of /config/.
  const anon = await at('porn.example', '192.0.2.7')
  t.assert.deepStrictEqual([...pick(anon), anon.blockedCategories], [null, 'block', 'category', 'porn.example', [1]])
  const fwd = await at('unknown.example', '192.0.2.7')
  t.assert.deepStrictEqual([...pick(fwd), fwd.site, fwd.categories], [null, 'forward', 'none', null, null, []])
  // Allow-only in the global blacklist beats every user.
  await call(api.base, 'POST', '/blacklist/', ['-'])
  t.assert.deepStrictEqual(pick(await at('dating.example', '10.0.0.2')), ['off', 'block', 'global-allow-only', '-'])
  t.assert.deepStrictEqual(pick(await at('global-white.example', '10.0.0.2')), [
    'off',
    'forward',
    'global-whitelist',
    'global-white.example'
  ])
})

test("check by user: the user's settings whatever its addresses, and the answer follows API writes at once", async (t: TestContext) => {
  const api = await serve(t)
  await call(api.base, 'PUT', '/users/nobody-connected', { filter: [1] })
  const a = await check(api, '/users/nobody-connected/check/Porn.Example.')
  t.assert.deepStrictEqual(
    [a.domain, a.address, ...pick(a), a.blockedCategories],
    ['porn.example', null, 'nobody-connected', 'block', 'category', 'porn.example', [1]]
  )
  await call(api.base, 'POST', '/users/nobody-connected/whitelist/', ['porn.example'])
  t.assert.deepStrictEqual(pick(await check(api, '/users/nobody-connected/check/porn.example')), [
    'nobody-connected',
    'forward',
    'user-whitelist',
    'porn.example'
  ])
  await call(api.base, 'POST', '/users/nobody-connected/ip/', ['10.1.1.1'])
  await call(api.base, 'POST', '/users/nobody-connected/status/disabled')
  t.assert.deepStrictEqual(pick(await check(api, '/check/porn.example?ip=10.1.1.1')), [
    'nobody-connected',
    'forward',
    'user-disabled',
    null
  ])
})

test('check refuses a bad domain, address or user with the API error body', async (t: TestContext) => {
  const api = await serve(t)
  const cases: Array<[string, number, string, string]> = [
    ['/check/porn.example', 400, 'API_BAD_QUERY', 'ip'],
    ['/check/porn.example?ip=10.0.0.300', 400, 'API_BAD_QUERY', 'ip'],
    ['/check/porn.example?ip=10.0.0.0%2F8', 400, 'API_BAD_QUERY', 'ip'],
    ['/check/bad_name!?ip=10.0.0.1', 400, 'API_BAD_PARAM', 'domain'],
    ['/users/ghost/check/porn.example', 404, 'API_USER_NOT_FOUND', 'user_id'],
    ['/users/bad%20id/check/porn.example', 400, 'API_BAD_USER_ID', 'user_id']
  ]
  for (const [path, status, code, field] of cases) {
    const r = await call(api.base, 'GET', path)
    t.assert.strictEqual(r.status, status, path)
    t.assert.deepStrictEqual([errorOf(r).code, errorOf(r).field], [code, field], path)
  }
  t.assert.strictEqual((await call(api.base, 'GET', '/check/porn.example/?ip=::1')).status, 200)
})

test('check by client ID: its user whatever ip says; an unknown ID refused, or anonymous as proxy.unknown-client-id says', async (t: TestContext) => {
  const api = await serve(t)
  await call(api.base, 'PUT', '/users/kid', { client_ids: ['Kid-Phone'], filter: [41] })
  await call(api.base, 'PUT', '/users/other', { ip: ['10.0.0.5'] })
  await call(api.base, 'PUT', '/config/', { filter: [41] })
  const byId = await check(api, '/check/dating.example?client-id=KID-PHONE&ip=10.0.0.5')
  t.assert.deepStrictEqual(
    [byId.clientId, byId.address, ...pick(byId)],
    ['kid-phone', '10.0.0.5', 'kid', 'block', 'category', 'dating.example']
  )
  const idOnly = await check(api, '/check/open.example?client-id=kid-phone')
  t.assert.deepStrictEqual([idOnly.address, ...pick(idOnly)], [null, 'kid', 'forward', 'none', null])
  const unknown = await check(api, '/check/dating.example?client-id=stranger&ip=10.0.0.5')
  t.assert.deepStrictEqual(
    [unknown.clientId, ...pick(unknown), unknown.categories],
    ['stranger', null, 'refuse', 'unknown-client-id', null, [41]]
  )
  const noId = await check(api, '/check/dating.example?ip=10.0.0.5')
  t.assert.strictEqual('clientId' in noId, false, 'without ?client-id= the answer is as it was')
  for (const [query, field] of [
    ['?client-id=bad.id', 'client-id'],
    ['?client-id=', 'client-id'],
    ['', 'ip']
  ] as const) {
    const r = await call(api.base, 'GET', `/check/dating.example${query}`)
    t.assert.deepStrictEqual([r.status, errorOf(r).code, errorOf(r).field], [400, 'API_BAD_QUERY', field], query)
  }

  const anon = await startApi({ configYaml: 'proxy:\n  unknown-client-id: anonymous' })
  t.after(() => anon.close())
  await buildCats(anon.store, { 'dating.example': [41] })
  await call(anon.base, 'PUT', '/config/', { filter: [41] })
  const a = await check(anon, '/check/dating.example?client-id=stranger')
  t.assert.deepStrictEqual([a.clientId, ...pick(a)], ['stranger', null, 'block', 'category', 'dating.example'])
})
