// The list formats of a subscription: each reads its entries, skips comments and blank lines, takes
// CRLF, and counts the lines it cannot read instead of failing.
import { test, type TestContext } from 'node:test'
import { parseList } from './parse.js'

const sorted = (s: Set<string>): string[] => [...s].sort()

test('hosts: address and names, self names left out, comments, CRLF, invalid lines counted', (t: TestContext) => {
  const body = [
    '# a hosts file',
    '127.0.0.1 localhost',
    '::1 ip6-localhost ip6-loopback',
    '',
    '0.0.0.0 Ads.Example.com tracker.example.net # two names',
    '0.0.0.0\tКремль.рф',
    'not-an-address bad.example',
    '0.0.0.0 bad_name!.example',
    '0.0.0.0 0.0.0.0',
    '   '
  ].join('\r\n')
  const r = parseList(body, 'hosts')
  t.assert.deepStrictEqual(sorted(r.entries), ['ads.example.com', 'tracker.example.net', 'xn--e1ajeds9e.xn--p1ai'])
  t.assert.strictEqual(r.invalid, 2)
  // The self lines and the 0.0.0.0 line map nothing to block.
  t.assert.strictEqual(r.skipped, 3)
  t.assert.strictEqual(r.lines, 7)
})

test('domains: one name a line, a wildcard read as the name, a single label or an address invalid', (t: TestContext) => {
  const r = parseList(
    '# list\nexample.com\n*.wild.example\nsub.example.org # note\n\ncom\n10.0.0.1\nbad name.example\n',
    'domains'
  )
  t.assert.deepStrictEqual(sorted(r.entries), ['example.com', 'sub.example.org', 'wild.example'])
  t.assert.strictEqual(r.invalid, 3)
  t.assert.strictEqual(r.lines, 6)
})

test('adblock: ||name^ rules; exceptions, modifiers and cosmetic rules skipped; garbage invalid', (t: TestContext) => {
  const body = [
    '[Adblock Plus 2.0]',
    '! Title: test',
    '||ads.example.com^',
    '||Tracker.Example.NET^$important',
    '||cdn.example.org^|',
    '@@||good.example.com^',
    '||thirdparty.example^$third-party',
    'example.com##.banner',
    '/banner/*',
    '||bad..example^',
    'plain.example.info',
    '<html>'
  ].join('\n')
  const r = parseList(body, 'adblock')
  t.assert.deepStrictEqual(sorted(r.entries), [
    'ads.example.com',
    'cdn.example.org',
    'plain.example.info',
    'tracker.example.net'
  ])
  t.assert.strictEqual(r.skipped, 4)
  t.assert.strictEqual(r.invalid, 2)
})

test('rpz: QNAME lines with CNAME . (relative and full names, wildcards); other actions skipped', (t: TestContext) => {
  const body = [
    '$TTL 300',
    '$ORIGIN rpz.example.',
    '@ IN SOA ns.rpz.example. admin.rpz.example. (',
    '   1 3600 600 86400 300 )',
    '  IN NS ns.rpz.example.',
    'bad.example CNAME .',
    '*.bad.example CNAME .',
    'Evil.Example.Net 300 IN CNAME . ; full line',
    'full.example.org.rpz.example. CNAME .',
    'elsewhere.example.org. CNAME .',
    'ok.example CNAME rpz-passthru.',
    'nodata.example CNAME *.',
    'local.example A 192.0.2.1',
    'broken'
  ].join('\r\n')
  const r = parseList(body, 'rpz')
  t.assert.deepStrictEqual(sorted(r.entries), ['bad.example', 'evil.example.net', 'full.example.org'])
  // The SOA and NS lines, passthru, CNAME *. and local data.
  t.assert.strictEqual(r.skipped, 6)
  // A full name outside the origin, and a line with no type.
  t.assert.strictEqual(r.invalid, 2)
})

test('an empty body holds nothing and nothing invalid', (t: TestContext) => {
  for (const f of ['hosts', 'domains', 'adblock', 'rpz'] as const) {
    const r = parseList('', f)
    t.assert.strictEqual(r.entries.size, 0)
    t.assert.strictEqual(r.lines, 0)
    t.assert.strictEqual(r.invalid, 0)
  }
})
