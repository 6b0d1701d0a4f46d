/** The shared store's settings from the config file (`common.redis-*`). */
import { test, type TestContext } from 'node:test'
import { parseConfig } from '../features.js'
import { sharedStoreSettings } from './redis.js'

const parse = (common: Record<string, unknown>): ReturnType<typeof parseConfig> =>
  parseConfig(JSON.stringify({ common }), '/tmp/filterd-settings-test.yaml')

test('no common.redis-ip: one host, no shared store', (t: TestContext) => {
  t.assert.strictEqual(sharedStoreSettings(parse({})), undefined)
})

test('redis-ip and redis-port name the server; the prefix and stream length have defaults', (t: TestContext) => {
  const s = sharedStoreSettings(parse({ 'redis-ip': '10.0.0.5', 'redis-port': 6380 }))!
  t.assert.strictEqual(s.where, '10.0.0.5:6380')
  t.assert.strictEqual(s.options.host, '10.0.0.5')
  t.assert.strictEqual(s.options.port, 6380)
  t.assert.strictEqual(s.keys.changes, 'filterd:changes')
  t.assert.strictEqual(s.keys.hash.users, 'filterd:h:users')
  t.assert.strictEqual(s.streamLength, 100_000)
  t.assert.strictEqual(s.options.enableOfflineQueue, false, 'writes fail at once while Redis is away')
})

test('Sentinels replace the address with the master name', (t: TestContext) => {
  const s = sharedStoreSettings(
    parse({
      'redis-ip': '10.0.0.5',
      'redis-sentinels': ['10.0.0.7:26379', '10.0.0.8:26379'],
      'redis-master-name': 'policy',
      'redis-password': 'pw'
    })
  )!
  t.assert.deepStrictEqual(s.options.sentinels, [
    { host: '10.0.0.7', port: 26379 },
    { host: '10.0.0.8', port: 26379 }
  ])
  t.assert.strictEqual(s.options.name, 'policy')
  t.assert.strictEqual(s.options.password, 'pw')
})

test('Sentinels alone (no redis-ip) name the shared store too', (t: TestContext) => {
  const s = sharedStoreSettings(parse({ 'redis-sentinels': ['10.0.0.7:26379'] }))
  t.assert.ok(s !== undefined, 'a shared store')
  t.assert.deepStrictEqual(s.options.sentinels, [{ host: '10.0.0.7', port: 26379 }])
  t.assert.strictEqual(s.options.name, 'filterd')
  t.assert.match(s.where, /sentinel filterd via 10\.0\.0\.7:26379/)
})

test('bad keys stop the start with a message naming them', (t: TestContext) => {
  t.assert.throws(() => parse({ 'redis-port': 6379 }), /common\.redis-port: needs common\.redis-ip/)
  t.assert.throws(() => parse({ 'redis-ip': 'redis.local' }), /common\.redis-ip/)
  t.assert.throws(() => parse({ 'redis-ip': '10.0.0.5', 'redis-sentinels': ['nohost'] }), /redis-sentinels/)
  t.assert.throws(() => parse({ 'redis-ip': '10.0.0.5', 'redis-stream-length': 10 }), /redis-stream-length/)
})
