import { test, type TestContext } from 'node:test'
import { rateKeyOf } from './server.js'

test('limits IPv6 clients per /64 and IPv4 clients per address', (t: TestContext) => {
  t.assert.strictEqual(rateKeyOf('2001:db8:1:2::5'), rateKeyOf('2001:db8:1:2:ffff::1'))
  t.assert.notStrictEqual(rateKeyOf('2001:db8:1:2::5'), rateKeyOf('2001:db8:1:3::5'))
  t.assert.strictEqual(rateKeyOf('192.0.2.1'), '192.0.2.1')
})
