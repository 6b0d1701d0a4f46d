import { test, type TestContext } from 'node:test'
import { compileAccessRules } from './access.js'
import { cidrContains, formatPeer, ipBytes, normalizeIp, parseCidr, parseIpBytes } from './ip.js'

test('addresses are written in one canonical form: RFC 5952 IPv6, dotted-quad IPv4', (t: TestContext) => {
  t.assert.strictEqual(normalizeIp('2001:0DB8:0000:0000:0001:0000:0000:0001'), '2001:db8::1:0:0:1')
  t.assert.strictEqual(normalizeIp('::'), '::')
  t.assert.strictEqual(normalizeIp('fe80:0:0:0:0:0:0:0'), 'fe80::')
  t.assert.strictEqual(normalizeIp('2001:db8:0:1:1:1:1:1'), '2001:db8:0:1:1:1:1:1')
  t.assert.strictEqual(normalizeIp('::ffff:192.0.2.1'), '192.0.2.1')
  t.assert.strictEqual(normalizeIp('64:ff9b::192.0.2.1'), '64:ff9b::c000:201')
  t.assert.strictEqual(normalizeIp('192.0.2.300'), undefined)
  t.assert.strictEqual(normalizeIp('example.com'), undefined)
})

test('a mapped IPv4 peer keeps 16 bytes when parsed raw and reads as IPv4 for matching', (t: TestContext) => {
  t.assert.strictEqual(parseIpBytes('::ffff:10.0.0.1')?.length, 16)
  t.assert.strictEqual(ipBytes('::ffff:10.0.0.1')?.length, 4)
  t.assert.strictEqual(formatPeer(parseIpBytes('::ffff:10.0.0.1')!), '10.0.0.1')
})

test('prefixes must have zero host bits and contain exactly their addresses', (t: TestContext) => {
  t.assert.strictEqual(parseCidr('10.0.0.5/24'), undefined)
  t.assert.strictEqual(parseCidr('10.0.0.0/33'), undefined)
  const v4 = parseCidr('10.0.0.0/23')!
  t.assert.strictEqual(v4.text, '10.0.0.0/23')
  t.assert.ok(cidrContains(v4, ipBytes('10.0.1.255')!))
  t.assert.ok(!cidrContains(v4, ipBytes('10.0.2.0')!))
  const v6 = parseCidr('2001:DB8:1::/48')!
  t.assert.strictEqual(v6.text, '2001:db8:1::/48')
  t.assert.ok(cidrContains(v6, ipBytes('2001:db8:1:ffff::1')!))
  t.assert.ok(!cidrContains(v6, ipBytes('10.0.0.1')!))
  t.assert.strictEqual(parseCidr('192.0.2.7')?.text, '192.0.2.7')
})

test('prefixes are taken as written: no white space, zone index or leading zero in the length', (t: TestContext) => {
  for (const bad of [
    ' 1.2.3.7',
    '1.2.3.4\n',
    '10.0.0.0/ 8',
    'fe80::1%eth0',
    'fe80::%1/64',
    '1.2.3.4/032',
    '10.0.0.0/08'
  ]) {
    t.assert.strictEqual(parseCidr(bad), undefined, JSON.stringify(bad))
  }
  t.assert.strictEqual(parseCidr('0.0.0.0/0')?.prefix, 0)
  t.assert.strictEqual(parseCidr('fe80::/10')?.text, 'fe80::/10')
})

test('access rules are evaluated from the top and the first match decides; no match denies', (t: TestContext) => {
  const rules = compileAccessRules(['deny 10.0.0.66/32', 'allow 10.0.0.0/8', 'allow ::1/128', 'deny all'])
  t.assert.ok(!rules.allows('10.0.0.66'))
  t.assert.ok(rules.allows('10.0.0.67'))
  t.assert.ok(rules.allows('::1'))
  t.assert.ok(rules.allows('::ffff:10.1.2.3'))
  t.assert.ok(!rules.allows('192.0.2.1'))
  t.assert.ok(!compileAccessRules(['allow 127.0.0.0/8']).allows('192.0.2.1'))
  t.assert.throws(() => compileAccessRules(['permit all']), /rule 0/)
})
