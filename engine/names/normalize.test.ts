import { test, type TestContext } from 'node:test'
import { normalizeDomain, normalizeUrlEntry, normalizeLookupUrl, suffixesOf } from './normalize.js'

test('lower-cases a name and drops the trailing root dot', (t: TestContext) => {
  t.assert.strictEqual(normalizeDomain('WWW.Example.COM.'), 'www.example.com')
})

test('gives the same key for an IDN in Unicode and in punycode', (t: TestContext) => {
  t.assert.strictEqual(normalizeDomain('кремль.рф'), 'xn--e1ajeds9e.xn--p1ai')
  t.assert.strictEqual(normalizeDomain('Кремль.РФ.'), 'xn--e1ajeds9e.xn--p1ai')
  t.assert.strictEqual(normalizeDomain('xn--e1ajeds9e.xn--p1ai'), 'xn--e1ajeds9e.xn--p1ai')
  t.assert.strictEqual(normalizeDomain('XN--E1AJEDS9E.XN--P1AI'), 'xn--e1ajeds9e.xn--p1ai')
})

test('accepts underscores and edge hyphens that occur in real data', (t: TestContext) => {
  t.assert.strictEqual(normalizeDomain('_dmarc.example.com'), '_dmarc.example.com')
  t.assert.strictEqual(normalizeDomain('w-w-i-s-.com'), 'w-w-i-s-.com')
})

test('accepts a bare IPv4 address as-is and rejects other all-digit top labels', (t: TestContext) => {
  t.assert.strictEqual(normalizeDomain('192.0.2.10'), '192.0.2.10')
  t.assert.strictEqual(normalizeDomain('999.0.2.10'), undefined)
  t.assert.strictEqual(normalizeDomain('1.2.3'), undefined)
  t.assert.strictEqual(normalizeDomain('010.0.0.1'), undefined)
  t.assert.strictEqual(normalizeDomain('example.123'), undefined)
  t.assert.strictEqual(normalizeDomain('123.example'), '123.example')
})

test('rejects empty labels, bad characters and over-long names', (t: TestContext) => {
  for (const bad of [
    '',
    '.',
    'a..b',
    '.a.b',
    'a b.com',
    'exa*mple.com',
    '*.example.com',
    'a/b',
    'host:80',
    'x'.repeat(64) + '.com',
    Array(130).fill('a').join('.'),
    'ex@mple.com'
  ]) {
    t.assert.strictEqual(normalizeDomain(bad), undefined, bad)
  }
  t.assert.strictEqual(normalizeDomain('x'.repeat(63) + '.com'), 'x'.repeat(63) + '.com')
  const max = Array(127).fill('a').join('.')
  t.assert.strictEqual(max.length, 253)
  t.assert.strictEqual(normalizeDomain(max), max)
})

test('refuses a label that claims to be punycode (xn--) but does not decode to a Unicode label', (t: TestContext) => {
  for (const bad of ['xn--', 'xn--zz.example', 'www.xn--abc-.example', 'XN--.example'])
    t.assert.strictEqual(normalizeDomain(bad), undefined, bad)
  t.assert.strictEqual(normalizeDomain('XN--E1AJEDS9E.xn--p1ai'), 'xn--e1ajeds9e.xn--p1ai')
  t.assert.strictEqual(normalizeDomain('xn--ls8h.example'), 'xn--ls8h.example')
})

test('lists suffixes most specific first, and only the address itself for IPv4', (t: TestContext) => {
  t.assert.deepStrictEqual(suffixesOf('a.b.example.com'), ['a.b.example.com', 'b.example.com', 'example.com', 'com'])
  t.assert.deepStrictEqual(suffixesOf('com'), ['com'])
  t.assert.deepStrictEqual(suffixesOf('192.0.2.1'), ['192.0.2.1'])
})

test('normalises a URL entry host but keeps the path byte-exact', (t: TestContext) => {
  t.assert.deepStrictEqual(normalizeUrlEntry('Example.COM/Some/PATH?x=Y'), {
    host: 'example.com',
    path: '/Some/PATH?x=Y',
    key: 'example.com/Some/PATH?x=Y'
  })
  t.assert.deepStrictEqual(normalizeUrlEntry('https://кремль.рф/News'), {
    host: 'xn--e1ajeds9e.xn--p1ai',
    path: '/News',
    key: 'xn--e1ajeds9e.xn--p1ai/News'
  })
  t.assert.strictEqual(normalizeUrlEntry('example.com'), undefined)
  t.assert.strictEqual(normalizeUrlEntry('/path'), undefined)
  t.assert.strictEqual(normalizeUrlEntry('bad_host!/path'), undefined)
})

test('reduces an API URL to host plus path and query for prefix matching', (t: TestContext) => {
  t.assert.deepStrictEqual(normalizeLookupUrl('https://user:pw@WWW.Example.com:8443/A/b?Q=1#frag'), {
    host: 'www.example.com',
    pathAndQuery: '/A/b?Q=1',
    key: 'www.example.com/A/b?Q=1'
  })
  t.assert.deepStrictEqual(normalizeLookupUrl('http://example.com'), {
    host: 'example.com',
    pathAndQuery: '/',
    key: 'example.com/'
  })
  t.assert.deepStrictEqual(normalizeLookupUrl('example.com?q=1'), {
    host: 'example.com',
    pathAndQuery: '/?q=1',
    key: 'example.com/?q=1'
  })
  t.assert.strictEqual(normalizeLookupUrl('http://[::1]/x'), undefined)
  t.assert.strictEqual(normalizeLookupUrl('http://example.com:http/x'), undefined)
})
