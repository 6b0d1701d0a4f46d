/**
 * The management API's authorization (auth.ts) beyond the shared suite (api.case.ts): which address a
 * request is judged by, and the brake on repeated wrong credentials.
 */
import { test, type TestContext } from 'node:test'
import { fakeRequest } from '../engine/testing/http.js'
import { isLoopbackAddress } from '../engine/net/ip.js'
import { sourceAddress } from './auth.js'
import { rawExchange } from '../engine/testing/http.js'
import { addApiClient, call, errorOf, relayedFrom, startApi } from './testing/fixtures.js'

test('loopback is 127.0.0.0/8 and ::1, an IPv4-mapped loopback included, and nothing else', (t: TestContext) => {
  for (const a of ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1'])
    t.assert.strictEqual(isLoopbackAddress(a), true, a)
  for (const a of ['128.0.0.1', '10.0.0.1', '::2', '::', '0.0.0.0', '::ffff:10.0.0.1', 'garbage', ''])
    t.assert.strictEqual(isLoopbackAddress(a), false, a)
})

test('the relayed client address is believed from a loopback peer only', (t: TestContext) => {
  t.assert.strictEqual(sourceAddress(fakeRequest('127.0.0.1')), '127.0.0.1')
  t.assert.strictEqual(sourceAddress(fakeRequest('127.0.0.1', { 'x-filterd-client': '192.0.2.10' })), '192.0.2.10')
  t.assert.strictEqual(sourceAddress(fakeRequest('::1', { 'x-filterd-client': '2001:DB8::7' })), '2001:db8::7')
  // Another proxy on this host: the address it saw is the rightmost X-Forwarded-For entry.
  t.assert.strictEqual(
    sourceAddress(fakeRequest('127.0.0.1', { 'x-forwarded-for': '127.0.0.1, 203.0.113.5' })),
    '203.0.113.5'
  )
  t.assert.strictEqual(
    sourceAddress(fakeRequest('127.0.0.1', { 'x-filterd-client': '192.0.2.10', 'x-forwarded-for': '127.0.0.1' })),
    '192.0.2.10'
  )
  // The same walk as the front door's (engine/net/client-address.ts): loopback hops are skipped, so a client
  // that writes 127.0.0.1 at the right of its own X-Forwarded-For, relayed by a proxy on this host, is not local.
  t.assert.strictEqual(
    sourceAddress(fakeRequest('127.0.0.1', { 'x-forwarded-for': '203.0.113.5, 127.0.0.1' })),
    '203.0.113.5'
  )
  t.assert.strictEqual(sourceAddress(fakeRequest('127.0.0.1', { 'x-forwarded-for': '127.0.0.1' })), '127.0.0.1')
  // From anywhere else neither header counts: a caller cannot claim to be loopback.
  t.assert.strictEqual(
    sourceAddress(fakeRequest('192.0.2.50', { 'x-filterd-client': '127.0.0.1', 'x-forwarded-for': '127.0.0.1' })),
    '192.0.2.50'
  )
})

test('after 10 wrong credentials in a minute an address gets 429 with Retry-After, while a client already verified keeps working', async (t: TestContext) => {
  const s = await startApi({ impl: 'node' })
  t.after(() => s.close())
  const client = await addApiClient(s.store, 'billing')
  t.assert.strictEqual(
    (await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: client.bearer })))
      .status,
    200
  )
  for (let i = 0; i < 10; i++) {
    const r = await call(
      s.base,
      'GET',
      '/config/',
      undefined,
      relayedFrom('192.0.2.10', { authorization: `Bearer billing.wrong${i}` })
    )
    t.assert.strictEqual(r.status, 401, `attempt ${i}`)
  }
  const braked = await call(
    s.base,
    'GET',
    '/config/',
    undefined,
    relayedFrom('192.0.2.10', { authorization: 'Bearer billing.wrong-again' })
  )
  t.assert.strictEqual(braked.status, 429)
  t.assert.strictEqual(errorOf(braked).code, 'API_AUTH_THROTTLED')
  t.assert.ok(Number(braked.headers.get('retry-after')) >= 1)
  // The brake is per address, and a header verified before is still accepted from the braked one.
  t.assert.strictEqual(
    (await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: client.bearer })))
      .status,
    200
  )
  t.assert.strictEqual(
    (
      await call(
        s.base,
        'GET',
        '/config/',
        undefined,
        relayedFrom('192.0.2.11', { authorization: 'Bearer billing.wrong' })
      )
    ).status,
    401
  )
})

test('HTTP Basic and Bearer credentials with a control character or non-canonical base64 get 401, over a socket', async (t: TestContext) => {
  const s = await startApi({ impl: 'node' })
  t.after(() => s.close())
  const client = await addApiClient(s.store, 'billing')
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64')
  const refused = [
    `Basic ${b64(`billing:${client.secret}\0`)}`,
    `Basic ${b64(`billing:${client.secret}`)}!!`,
    `Basic ${b64(`billing:${client.secret}\u0001`)}`,
    `Basic ${b64(`billing\t:${client.secret}`)}`
  ]
  for (const authorization of refused) {
    const r = await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization }))
    t.assert.deepStrictEqual([r.status, errorOf(r).code], [401, 'API_UNAUTHORIZED'], authorization)
  }
  // A NUL written in the header itself never reaches the API: the HTTP parser refuses the request.
  t.assert.match(
    await rawExchange(
      s.port,
      `GET /config/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filterd-Client: 192.0.2.10\r\nAuthorization: ${client.bearer}\0\r\nConnection: close\r\n\r\n`
    ),
    /^HTTP\/1\.1 400/
  )
  t.assert.strictEqual(
    (await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: client.basic })))
      .status,
    200
  )
  t.assert.strictEqual(
    (await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: client.bearer })))
      .status,
    200
  )
})
