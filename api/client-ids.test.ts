/**
 * A user's client IDs over the management API (api/routes/client-ids.ts): the routes, `PUT /users/{id}`,
 * the validation and uniqueness rules, and the mapping the DNS server reads, on one host and through a
 * shared Redis (a second host's replica sees the mapping).
 */
import { after, before, describe, test, type TestContext } from 'node:test'
import { silentLogger } from '../engine/log/index.js'
import { linkStore, linkedHost, testSettings } from '../engine/testing/replica.js'
import { startRedis, type TestRedis } from '../engine/testing/redis.js'
import { until } from '../engine/testing/wait.js'
import { call, errorOf, startApi, type StartedApi } from './testing/fixtures.js'

async function start(t: TestContext): Promise<StartedApi> {
  const s = await startApi({ impl: 'node' })
  t.after(async () => await s.close())
  return s
}

test('client IDs: PUT /users/{id} and the client-ids routes set, add, list and remove them, lower case', async (t: TestContext) => {
  const s = await start(t)
  const put = await call(s.base, 'PUT', '/users/alice', { ip: ['10.0.0.1'], client_ids: ['Kid-Phone', 'tablet'] })
  t.assert.strictEqual(put.status, 200)
  t.assert.deepStrictEqual((put.body as { client_ids: string[] }).client_ids, ['kid-phone', 'tablet'])
  t.assert.deepStrictEqual((await call(s.base, 'GET', '/users/alice/client-ids/')).body, ['kid-phone', 'tablet'])
  t.assert.strictEqual(s.store.userForClientId('kid-phone'), 'alice')
  t.assert.strictEqual(s.store.addressCount(), 1, 'client IDs are not counted as addresses')

  const created = await call(s.base, 'POST', '/users/bob/client-ids/', ['laptop'])
  t.assert.deepStrictEqual([created.status, created.body], [201, ['laptop']])
  const added = await call(s.base, 'POST', '/users/bob/client-ids/', ['PC', 'laptop'])
  t.assert.deepStrictEqual([added.status, added.body], [200, ['laptop', 'pc']])
  const noIds = (await call(s.base, 'PUT', '/users/carol', {})).body as Record<string, unknown>
  t.assert.strictEqual('client_ids' in noIds, false, 'a user without client IDs keeps the User object as it was')

  t.assert.strictEqual((await call(s.base, 'DELETE', '/users/alice/client-ids/TABLET')).status, 204)
  t.assert.strictEqual(s.store.userForClientId('tablet'), undefined)
  const missing = await call(s.base, 'DELETE', '/users/alice/client-ids/tablet')
  t.assert.deepStrictEqual([missing.status, errorOf(missing).code], [404, 'API_ENTRY_NOT_FOUND'])

  const replaced = await call(s.base, 'PUT', '/users/bob/client-ids/', ['tablet'])
  t.assert.deepStrictEqual([replaced.status, replaced.body], [200, ['tablet']])
  t.assert.deepStrictEqual(
    ['laptop', 'pc', 'tablet'].map((c) => s.store.userForClientId(c)),
    [undefined, undefined, 'bob'],
    'IDs a PUT leaves out are unmapped'
  )
  t.assert.strictEqual((await call(s.base, 'DELETE', '/users/bob/client-ids/')).status, 204)
  t.assert.strictEqual(s.store.userForClientId('tablet'), undefined)
  t.assert.strictEqual((await call(s.base, 'DELETE', '/users/alice')).status, 204)
  t.assert.strictEqual(s.store.userForClientId('kid-phone'), undefined, 'deleting the user unmaps its IDs')
})

test('client IDs: a POST without a body adds one new random ID, stored like a given one', async (t: TestContext) => {
  const s = await start(t)
  const first = await call<string[]>(s.base, 'POST', '/users/dave/client-ids/')
  t.assert.strictEqual(first.status, 201, first.text)
  t.assert.strictEqual(first.body.length, 1)
  const made = first.body[0]!
  t.assert.match(made, /^[a-z2-7]{20}$/)
  t.assert.strictEqual(s.store.userForClientId(made), 'dave')
  await call(s.base, 'POST', '/users/dave/client-ids/', ['tablet'])
  const second = await call<string[]>(s.base, 'POST', '/users/dave/client-ids/')
  t.assert.strictEqual(second.status, 200)
  t.assert.strictEqual(second.body.length, 3)
  t.assert.deepStrictEqual(second.body.slice(0, 2), [made, 'tablet'])
  t.assert.notStrictEqual(second.body[2], made, 'each call makes a new ID, last in the answer')
  t.assert.strictEqual(s.store.userForClientId(second.body[2]!), 'dave')
  // A page of another site cannot send it unasked: a browser's cross-site write is refused.
  const crossSite = await fetch(`${s.base}/users/dave/client-ids/`, {
    method: 'POST',
    headers: { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' }
  })
  t.assert.strictEqual(crossSite.status, 403)
})

test('client IDs: one DNS label each (422 naming the element), and never taken from another user (409)', async (t: TestContext) => {
  const s = await start(t)
  await call(s.base, 'PUT', '/users/alice/client-ids/', ['phone'])
  for (const [body, field] of [
    [['ok', '-bad'], '[1]'],
    [['a.b'], '[0]'],
    [['x'.repeat(64)], '[0]'],
    [[''], '[0]'],
    [['bad-'], '[0]'],
    [['ünï'], '[0]']
  ] as const) {
    const r = await call(s.base, 'PUT', '/users/bob/client-ids/', body)
    t.assert.deepStrictEqual([r.status, errorOf(r).code, errorOf(r).field], [422, 'API_INVALID_CLIENT_ID', field])
  }
  t.assert.strictEqual((await call(s.base, 'PUT', '/users/bob/client-ids/', ['x'.repeat(63)])).status, 200)
  const taken = await call(s.base, 'PUT', '/users/bob/client-ids/', ['tv', 'PHONE'])
  t.assert.deepStrictEqual(
    [taken.status, errorOf(taken).code, errorOf(taken).field],
    [409, 'API_CLIENT_ID_TAKEN', '[1]']
  )
  t.assert.match(errorOf(taken).message, /belongs to user alice/)
  const viaUser = await call(s.base, 'PUT', '/users/carol', { client_ids: ['phone'] })
  t.assert.deepStrictEqual(
    [viaUser.status, errorOf(viaUser).code, errorOf(viaUser).field],
    [409, 'API_CLIENT_ID_TAKEN', 'client_ids[0]']
  )
  t.assert.strictEqual((await call(s.base, 'HEAD', '/users/carol')).status, 404, 'the refused PUT created nobody')
  t.assert.strictEqual(s.store.userForClientId('phone'), 'alice')
  t.assert.strictEqual(s.store.userForClientId('tv'), undefined, 'a refused request maps nothing')
})

describe('client IDs through a shared Redis', () => {
  let redis: TestRedis | undefined
  before(async () => {
    redis = await startRedis()
  })
  after(async () => {
    await redis?.stop()
  })

  test("an API write on one host is another host's mapping, and a removal reaches it too", async (t: TestContext) => {
    const settings = testSettings(redis!.host, redis!.port)
    const s = await start(t)
    const link = await linkStore(s.store, settings, silentLogger())
    t.after(async () => await link.close())
    const other = await linkedHost(t, settings)
    t.assert.strictEqual((await call(s.base, 'PUT', '/users/alice', { client_ids: ['phone'] })).status, 200)
    await until('the other host to map the ID', () => other.store.userForClientId('phone') === 'alice')
    t.assert.deepStrictEqual(other.store.getUser('alice')?.client_ids, ['phone'])
    const taken = await call(s.base, 'PUT', '/users/bob/client-ids/', ['phone'])
    t.assert.strictEqual(taken.status, 409)
    t.assert.strictEqual((await call(s.base, 'DELETE', '/users/alice/client-ids/phone')).status, 204)
    await until('the other host to unmap the ID', () => other.store.userForClientId('phone') === undefined)
  })
})
