import { test, type TestContext } from 'node:test'
import { formatAddressBytes, normalizeAddress } from './address.js'

const v6 = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex, 'hex'))

test('formats binary peer addresses the way policy lookups key them', (t: TestContext) => {
  t.assert.strictEqual(formatAddressBytes(Uint8Array.of(10, 0, 0, 1)), '10.0.0.1')
  t.assert.strictEqual(formatAddressBytes(v6('00000000000000000000ffff7f000001')), '127.0.0.1')
  t.assert.strictEqual(formatAddressBytes(v6('00000000000000000000000000000001')), '::1')
  t.assert.strictEqual(formatAddressBytes(v6('20010db8000000000001000000000001')), '2001:db8::1:0:0:1')
  t.assert.strictEqual(formatAddressBytes(v6('20010db8000100000001000100010001')), '2001:db8:1:0:1:1:1:1')
  t.assert.strictEqual(formatAddressBytes(v6('fe800000000000000000000000000000')), 'fe80::')
  t.assert.strictEqual(formatAddressBytes(v6('00000000000000000000000000000000')), '::')
})

test('normalises textual peer addresses from node sockets', (t: TestContext) => {
  t.assert.strictEqual(normalizeAddress('::ffff:192.0.2.7'), '192.0.2.7')
  t.assert.strictEqual(normalizeAddress('2001:DB8::1'), '2001:db8::1')
  t.assert.strictEqual(normalizeAddress('::ffff:1'), '::ffff:1')
  t.assert.strictEqual(normalizeAddress(undefined), '')
})
