/*
 * Names the DNS server answers itself and never forwards (engine/judge/local-answers.ts): the browsers'
 * canary `use-application-dns.net` (NXDOMAIN, `proxy.doh-canary`) and DDR (RFC 9462: `_dns.resolver.arpa`
 * SVCB and HTTPS naming the encrypted endpoints, NODATA without them). Asked with dig through the real
 * server; the stub upstream records every question it gets, so "never forwarded" is checked, not assumed.
 */
import { test, type TestContext } from 'node:test'
import { ddrEndpointsFromConfig, type DdrEndpoints } from '../engine/judge/index.js'
import { memoryQueryLogSink } from '../engine/querylog/index.js'
import { dig, digMissing, makeConfig, world, type World } from './testing/harness.js'
import { startDnsServer, type DnsServer } from './server.js'

const ENDPOINTS: DdrEndpoints = {
  serverName: 'dns.example.net',
  dot: [{ port: 853 }],
  doh: [{ port: 8443, path: '/dns-query' }]
}

async function start(
  t: TestContext,
  w: World,
  proxy: Record<string, unknown>,
  ddr?: DdrEndpoints,
  querylog = memoryQueryLogSink()
): Promise<DnsServer> {
  const s = await startDnsServer({
    config: makeConfig(w, { proxy }),
    store: w.store,
    querylog,
    ...(ddr === undefined ? {} : { ddr })
  })
  t.after(() => s.close())
  return s
}

/** dig's answer to `name type` from the server; undefined when dig is missing (the test is then skipped). */
async function ask(t: TestContext, s: DnsServer, name: string, type: string, ...opts: string[]): Promise<string> {
  const out = await dig([`@127.0.0.1`, '-p', String(s.port), name, type, '+tries=1', '+time=5', ...opts])
  if (out === undefined) {
    digMissing(t)
    return ''
  }
  return out
}

const statusOf = (out: string): string => /status: ([A-Z]+)/.exec(out)?.[1] ?? ''
const answerCount = (out: string): number => Number(/ANSWER: (\d+)/.exec(out)?.[1] ?? -1)

test('the canary use-application-dns.net is NXDOMAIN by default, never forwarded, and forwarded when switched off', async (t: TestContext) => {
  const w = await world(t)
  const log = memoryQueryLogSink()
  const s = await start(t, w, {}, undefined, log)
  for (const type of ['A', 'AAAA']) {
    const out = await ask(t, s, 'Use-Application-DNS.net', type)
    t.assert.strictEqual(statusOf(out), 'NXDOMAIN', out)
  }
  t.assert.strictEqual(statusOf(await ask(t, s, 'www.use-application-dns.net', 'A')), 'NOERROR', 'only the name itself')
  t.assert.deepStrictEqual(
    w.stub.seen.filter((q) => q.startsWith('use-application-dns.net')),
    [],
    'the canary never reached the upstream'
  )
  t.assert.deepStrictEqual(
    log.records.slice(0, 2).map((r) => [r.reason, r.nxdomain, r.user]),
    [
      ['canary', true, null],
      ['canary', true, null]
    ]
  )

  const off = await start(t, w, { 'doh-canary': false })
  t.assert.strictEqual(statusOf(await ask(t, off, 'use-application-dns.net', 'A')), 'NOERROR')
  t.assert.ok(w.stub.seen.includes('use-application-dns.net/A'), 'switched off: forwarded like any name')
})

test('without encrypted endpoints, _dns.resolver.arpa SVCB and HTTPS are NODATA, answered here', async (t: TestContext) => {
  const w = await world(t)
  const s = await start(t, w, {})
  for (const type of ['SVCB', 'HTTPS', 'A']) {
    const out = await ask(t, s, '_dns.resolver.arpa', type)
    t.assert.deepStrictEqual([statusOf(out), answerCount(out)], ['NOERROR', 0], out)
  }
  t.assert.strictEqual(statusOf(await ask(t, s, 'other.resolver.arpa', 'A')), 'NXDOMAIN')
  t.assert.deepStrictEqual(
    w.stub.seen.filter((q) => q.includes('resolver.arpa')),
    [],
    'resolver.arpa never reached the upstream'
  )
})

for (const dispatch of ['inline', 'pool'] as const) {
  test(`with endpoints (${dispatch}), _dns.resolver.arpa SVCB and HTTPS name them: alpn, port, dohpath, target`, async (t: TestContext) => {
    const w = await world(t)
    const s = await start(t, w, { dispatch, workers: 1 }, ENDPOINTS)
    for (const [type, opts] of [
      ['SVCB', []],
      ['HTTPS', []],
      ['SVCB', ['+noedns']],
      ['SVCB', ['+tcp']]
    ] as const) {
      const out = await ask(t, s, '_dns.resolver.arpa', type, ...opts)
      t.assert.deepStrictEqual([statusOf(out), answerCount(out)], ['NOERROR', 2], out)
      const records = out
        .split('\n')
        .filter((l) => l.startsWith('_dns.resolver.arpa.') && l.includes(`\t${type}\t`))
        .map((l) => l.split('\t').at(-1))
      t.assert.deepStrictEqual(records, [
        '1 dns.example.net. alpn="dot" port=853',
        '2 dns.example.net. alpn="h2" port=8443 key7="/dns-query{?dns}"'
      ])
    }
    t.assert.deepStrictEqual(
      w.stub.seen.filter((q) => q.includes('resolver.arpa')),
      [],
      '_dns.resolver.arpa never reached the upstream'
    )
  })
}

test("the endpoints come from the encrypted listeners' config keys when they are set, else none", (t: TestContext) => {
  const w = { dir: '/nonexistent' }
  const proxy = makeConfig(w).proxy
  t.assert.strictEqual(ddrEndpointsFromConfig(proxy), null)
  const configured = {
    ...proxy,
    'server-name': 'dns.example.net',
    'dot-listen': ['0.0.0.0:853', '[::]:853'],
    'doh-listen': ['0.0.0.0:443']
  }
  t.assert.deepStrictEqual(ddrEndpointsFromConfig(configured), {
    serverName: 'dns.example.net',
    dot: [{ port: 853 }],
    doh: [{ port: 443, path: '/dns-query' }]
  })
  t.assert.strictEqual(ddrEndpointsFromConfig({ ...configured, 'server-name': undefined }), null)
})
