/**
 * The one client-address rule (client-address.ts) that the front door and the api role share, the Host
 * reading (host.ts), and the api section compiled once by the config loader (api-network.ts).
 */
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { parseConfig } from '../features.js'
import { makeTempDir } from '../testing/temp.js'
import { apiNetwork, compileApiNetwork, serializedOrigin } from './api-network.js'
import { clientAddress, compileAddressSet, LOOPBACK, type AddressedRequest } from './client-address.js'
import { hostName, isLoopbackName } from './host.js'

function request(remoteAddress: string, headers: Record<string, string> = {}): AddressedRequest {
  return { remoteAddress, header: (n: string) => headers[n.toLowerCase()] }
}

test('the peer is the client unless it is trusted; then X-Forwarded-For is walked from the right past trusted hops', (t: TestContext) => {
  const rule = { trusted: compileAddressSet(['10.0.0.0/8', '2001:db8::1']) }
  t.assert.strictEqual(clientAddress(request('192.0.2.1', { 'x-forwarded-for': '198.51.100.7' }), rule), '192.0.2.1')
  t.assert.strictEqual(clientAddress(request('10.1.1.1'), rule), '10.1.1.1')
  t.assert.strictEqual(
    clientAddress(request('10.1.1.1', { 'x-forwarded-for': '203.0.113.9, 192.0.2.7, 10.2.2.2' }), rule),
    '192.0.2.7'
  )
  t.assert.strictEqual(
    clientAddress(request('2001:db8::1', { 'x-forwarded-for': '2001:DB8::0:7' }), rule),
    '2001:db8::7'
  )
  t.assert.strictEqual(
    clientAddress(request('10.1.1.1', { 'x-forwarded-for': '10.3.3.3, 10.2.2.2' }), rule),
    '10.3.3.3',
    'all trusted: the leftmost'
  )
  t.assert.strictEqual(
    clientAddress(request('10.1.1.1', { 'x-forwarded-for': '192.0.2.7, garbage' }), rule),
    'garbage',
    'garbage ends the walk and is judged as is'
  )
  t.assert.strictEqual(
    clientAddress(request('10.1.1.1', { 'x-filterd-client': '192.0.2.5' }), rule),
    '10.1.1.1',
    'no relay header unless the rule names one'
  )
})

test('a relay header named by the rule is read first, from a trusted peer only', (t: TestContext) => {
  const rule = { trusted: LOOPBACK, relayHeader: 'x-filterd-client' }
  t.assert.strictEqual(
    clientAddress(request('127.0.0.1', { 'x-filterd-client': ' 192.0.2.5 ', 'x-forwarded-for': '198.51.100.1' }), rule),
    '192.0.2.5'
  )
  t.assert.strictEqual(clientAddress(request('::1', { 'x-forwarded-for': '198.51.100.1, ::1' }), rule), '198.51.100.1')
  t.assert.strictEqual(clientAddress(request('192.0.2.9', { 'x-filterd-client': '127.0.0.1' }), rule), '192.0.2.9')
  t.assert.ok(
    LOOPBACK.has('127.3.2.1') &&
      LOOPBACK.has('::1') &&
      LOOPBACK.has('::ffff:127.0.0.1') &&
      !LOOPBACK.has('::2') &&
      !LOOPBACK.has('x')
  )
})

test('trusted proxies must be addresses or prefixes: the bad entry is named', (t: TestContext) => {
  t.assert.throws(
    () => compileAddressSet(['10.0.0.0/8', '10.0.0.1/8']),
    /^Error: \[1\]: "10\.0\.0\.1\/8" is not an address or prefix$/
  )
})

test('Host names are read bare and lower case; loopback names are localhost, names under it and loopback addresses', (t: TestContext) => {
  t.assert.deepStrictEqual(
    ['Api.Example.', 'api.example:8080', '[::1]:80', ' LOCALHOST ', '127.0.0.1:9'].map(hostName),
    ['api.example', 'api.example', '::1', 'localhost', '127.0.0.1']
  )
  for (const name of ['localhost', 'console.localhost', '127.0.0.1', '127.200.1.1', '::1'])
    t.assert.strictEqual(isLoopbackName(name), true, name)
  for (const name of ['', 'localhost.example', 'evil.example', '10.0.0.1', '::2', 'notlocalhost'])
    t.assert.strictEqual(isLoopbackName(name), false, name)
})

test('allowed origins are origins as browsers send them; anything else is refused', (t: TestContext) => {
  t.assert.strictEqual(serializedOrigin('HTTPS://Console.Example:443'), 'https://console.example')
  t.assert.strictEqual(serializedOrigin('http://127.0.0.1:8080'), 'http://127.0.0.1:8080')
  t.assert.strictEqual(serializedOrigin('http://x.example/'), 'http://x.example')
  for (const bad of [
    'null',
    'ftp://x.example',
    'http://x.example/ui',
    'http://u:p@x.example',
    'http://x.example?q',
    'x.example',
    ''
  ]) {
    t.assert.strictEqual(serializedOrigin(bad), undefined, bad)
  }
})

test('the loader compiles api.access, trusted-proxies and allowed-origins once and keeps the result; bad entries stop it with their key', (t: TestContext) => {
  const { dir, cleanup } = makeTempDir('filterd-net-')
  t.after(cleanup)
  const config = parseConfig(
    'api:\n  host: API.isp.example\n  trusted-proxies: [10.0.0.0/8]\n  allowed-origins: https://console.isp.example\n',
    join(dir, 'f.yaml')
  )
  const network = apiNetwork(config.api)
  t.assert.strictEqual(apiNetwork(config.api), network, 'the same object every time: compiled once')
  t.assert.strictEqual(network.apiHost, 'api.isp.example')
  t.assert.ok(network.trustedProxies.has('10.9.9.9') && !network.trustedProxies.has('192.0.2.1'))
  t.assert.ok(network.access.allows('127.0.0.1') && !network.access.allows('192.0.2.1'))
  t.assert.deepStrictEqual([...network.allowedOrigins], ['https://console.isp.example'])
  t.assert.throws(
    () =>
      parseConfig(
        'api:\n  access: ["allow 10.0.0.1/8"]\n  trusted-proxies: [x]\n  allowed-origins: [http://ok.example, "http://x.example/path"]\n',
        join(dir, 'f.yaml')
      ),
    (err: Error) =>
      /api\.access: rule 0: "10\.0\.0\.1\/8"/.test(err.message) &&
      /api\.trusted-proxies\[0\]: "x" is not an address or prefix/.test(err.message) &&
      /api\.allowed-origins\[1\]: "http:\/\/x\.example\/path" is not an origin/.test(err.message)
  )
  const bare = { access: ['deny all'], 'trusted-proxies': [], 'allowed-origins': [], host: 'a.example' }
  t.assert.deepStrictEqual(compileApiNetwork(bare).problems, [])
  t.assert.strictEqual(
    apiNetwork(bare),
    apiNetwork(bare),
    'a section made without the loader is compiled on first use and kept'
  )
})
