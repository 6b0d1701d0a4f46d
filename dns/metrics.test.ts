import { test, type TestContext } from 'node:test'
import { existsSync, readFileSync, writeFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { until } from '../engine/testing/wait.js'
import { CATEGORY } from '../engine/categories/index.js'
import { parseConfig } from '../engine/features.js'
import { addUser, ask, makeConfig, rcode, world, writeConfigFile } from '../engine/testing/dns.js'
import { createHttpServer } from '../engine/http/index.js'
import { metricsDir, registerMetricsRoute, startMetricsPublisher } from '../engine/metrics/index.js'
import { DNS_SNAPSHOT_METRICS } from '../engine/features.js'
import { DnsMetrics, ResolverCounters } from './metrics.js'
import { tempDir } from '../engine/testing/temp.js'

function testConfig(t: TestContext): ReturnType<typeof parseConfig> {
  const root = tempDir(t, 'filterd-metrics-')
  return parseConfig(
    `stats:\n  dir: ${JSON.stringify(join(root, 'csv'))}\n  db: ${JSON.stringify(join(root, 'db'))}\n` +
      `proxy:\n  pid: ${JSON.stringify(join(root, 'dns.pid'))}\n`,
    join(root, 'x.yaml')
  )
}

test('counts queries by verdict and rcode and upstream latency into buckets', (t: TestContext) => {
  const m = new DnsMetrics()
  m.countQuery('forward', 0)
  m.countQuery('forward', 0)
  m.countQuery('block', 0)
  m.countQuery('forward', 3)
  m.countQuery('weird', 99)
  m.observeUpstream(0.5)
  m.observeUpstream(7)
  m.observeUpstream(9000)
  m.countUpstreamTimeout()
  m.setPoolQueueDepth(4)
  t.assert.deepStrictEqual(
    [m.snapshot().udpOversized, m.snapshot().udpSendDrops],
    [0, 0],
    'no native UDP front: nothing dropped'
  )
  m.udpDrops = () => ({ oversized: 5, sendDrops: 6 })
  const s = m.snapshot({ writtenRows: 10, droppedRows: 2 }, 1000)
  t.assert.strictEqual(s.queries, 5)
  t.assert.deepStrictEqual(s.answers, [
    ['forward', 'NOERROR', 2],
    ['forward', 'NXDOMAIN', 1],
    ['block', 'NOERROR', 1],
    ['other', 'other', 1]
  ])
  t.assert.strictEqual(s.upstream.counts[0], 1)
  t.assert.strictEqual(s.upstream.counts[3], 1) // 7 ms: the 10 ms bucket
  t.assert.strictEqual(s.upstream.counts[s.upstream.buckets.length], 1) // past 5 s
  t.assert.strictEqual(s.upstream.sum, 9007.5)
  t.assert.strictEqual(s.upstreamTimeouts, 1)
  t.assert.strictEqual(s.poolQueueDepth, 4)
  t.assert.strictEqual(s.statsRowsDropped, 2)
  t.assert.deepStrictEqual([s.udpOversized, s.udpSendDrops], [5, 6])
})

test("exposes the DNS processes' published counters on /metrics with a process label", async (t: TestContext) => {
  const config = testConfig(t)
  const m = new DnsMetrics()
  m.io = 'native'
  m.udpDrops = () => ({ oversized: 11, sendDrops: 4 })
  m.policyCache = () => ({ addresses: 12, built: 15 })
  m.countQuery('block', 0)
  m.observeUpstream(3)
  m.observeUpstream(30)
  const c = new ResolverCounters()
  c.queries = 9
  c.timeouts = 2
  c.countError('REFUSED')
  c.countError('REFUSED')
  c.countError('network')
  c.observe(4)
  m.resolvers = () => [c.snapshot('192.0.2.53:53', false), new ResolverCounters().snapshot('[2001:db8::53]:53', true)]
  const pub = startMetricsPublisher(config, m, {
    index: 3,
    queryLog: { writtenRows: 7, droppedRows: 3 },
    intervalMs: 3_600_000
  })
  await pub.publishNow()
  // A snapshot of a process that stopped long ago is left out.
  writeFileSync(join(metricsDir(config), 'dns-1.json'), JSON.stringify({ ...m.snapshot(), pid: 1, updated: 0 }))
  const server = createHttpServer({ logger: { warn() {} } })
  registerMetricsRoute(server, {
    config,
    store: { generation: () => 17 },
    defaultMetrics: false,
    parts: DNS_SNAPSHOT_METRICS
  })
  const { port } = await server.listen('127.0.0.1', 0)
  t.after(() => server.close())
  const res = await fetch(`http://127.0.0.1:${port}/metrics`)
  t.assert.strictEqual(res.status, 200)
  t.assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  const text = await res.text()
  for (const line of [
    'filterd_dns_queries_total{process="dns-3"} 1',
    'filterd_dns_answers_total{process="dns-3",verdict="block",rcode="NOERROR"} 1',
    'filterd_dns_upstream_latency_ms_bucket{process="dns-3",le="5"} 1',
    'filterd_dns_upstream_latency_ms_bucket{process="dns-3",le="50"} 2',
    'filterd_dns_upstream_latency_ms_bucket{process="dns-3",le="+Inf"} 2',
    'filterd_dns_upstream_latency_ms_sum{process="dns-3"} 33',
    'filterd_dns_upstream_latency_ms_count{process="dns-3"} 2',
    'filterd_stats_rows_dropped_total{process="dns-3"} 3',
    'filterd_stats_rows_written_total{process="dns-3"} 7',
    'filterd_store_generation 17',
    'filterd_dns_udp_io{process="dns-3",path="native"} 1',
    'filterd_dns_udp_oversized_total{process="dns-3"} 11',
    'filterd_dns_udp_send_drops_total{process="dns-3"} 4',
    'filterd_dns_policy_cached_addresses{process="dns-3"} 12',
    'filterd_dns_policy_snapshots_built_total{process="dns-3"} 15',
    '# TYPE filterd_dns_upstream_latency_ms histogram',
    'filterd_dns_resolver_up{process="dns-3",resolver="192.0.2.53:53"} 0',
    'filterd_dns_resolver_up{process="dns-3",resolver="[2001:db8::53]:53"} 1',
    'filterd_dns_resolver_queries_total{process="dns-3",resolver="192.0.2.53:53"} 9',
    'filterd_dns_resolver_timeouts_total{process="dns-3",resolver="192.0.2.53:53"} 2',
    'filterd_dns_resolver_errors_total{process="dns-3",resolver="192.0.2.53:53",error="REFUSED"} 2',
    'filterd_dns_resolver_errors_total{process="dns-3",resolver="192.0.2.53:53",error="SERVFAIL"} 0',
    'filterd_dns_resolver_errors_total{process="dns-3",resolver="192.0.2.53:53",error="network"} 1',
    'filterd_dns_resolver_latency_ms_bucket{process="dns-3",resolver="192.0.2.53:53",le="2"} 0',
    'filterd_dns_resolver_latency_ms_bucket{process="dns-3",resolver="192.0.2.53:53",le="5"} 1',
    'filterd_dns_resolver_latency_ms_count{process="dns-3",resolver="192.0.2.53:53"} 1',
    '# TYPE filterd_dns_resolver_latency_ms histogram'
  ])
    t.assert.ok(text.split('\n').includes(line), `missing ${line}\n${text}`)
  t.assert.doesNotMatch(text, /dns-1"/)
  await pub.close()
  t.assert.deepStrictEqual(
    readdirSync(metricsDir(config)).filter((n) => n.includes('4242')),
    [],
    'a closed publisher removes its snapshot'
  )
})

test('the DNS daemon counts its queries, answers and upstream timeouts, and the api daemon serves them on /metrics', async (t: TestContext) => {
  const w = await world(t, { cats: { 'casino.example': [CATEGORY.GAMBLING] } })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  const dnsFile = writeConfigFile(w)
  const dns = await startRole(t, 'dns', dnsFile)
  await ask(dns.port, 'casino.example') // blocked
  await ask(dns.port, 'ok.example') // forwarded, NOERROR
  await ask(dns.port, 'nx.invalid') // forwarded, NXDOMAIN (the stub's answer)
  w.stub.silent = true
  t.assert.strictEqual(
    rcode(await ask(dns.port, 'slow.example')),
    'SERVFAIL',
    'no upstream answer within proxy.upstream-timeout'
  )
  w.stub.silent = false
  // The api daemon reads the snapshots from the same stats.dir.
  const doc = JSON.parse(readFileSync(dnsFile, 'utf8')) as Record<string, Record<string, unknown>>
  const apiFile = join(w.dir, 'api.json')
  writeFileSync(
    apiFile,
    JSON.stringify({
      ...doc,
      datafiles: { ...doc.datafiles, cats: CONF },
      api: { listen: '127.0.0.1:0', log: '-', pid: join(w.dir, 'api.pid') }
    })
  )
  const api = await startRole(t, 'api', apiFile)
  // The front process's index, not its pid: the same series after a restart.
  const proc = 'dns-0'
  t.assert.ok(existsSync(join(metricsDir(makeConfig(w)), `${proc}.json`)), 'the snapshot is where docs/metrics.md says')
  // Snapshots are written every 5 s: wait for the one that holds the four queries.
  const queries = `filterd_dns_queries_total{process="${proc}"} 4`
  let text = ''
  await until(
    'the condition',
    async () => {
      text = await (await fetch(`${api.url}/metrics`)).text()
      return text.split('\n').includes(queries)
    },
    15_000
  )
  for (const line of [
    `filterd_dns_answers_total{process="${proc}",verdict="block",rcode="NOERROR"} 1`,
    `filterd_dns_answers_total{process="${proc}",verdict="forward",rcode="NOERROR"} 1`,
    `filterd_dns_answers_total{process="${proc}",verdict="forward",rcode="NXDOMAIN"} 1`,
    `filterd_dns_answers_total{process="${proc}",verdict="forward",rcode="SERVFAIL"} 1`,
    `filterd_dns_upstream_timeouts_total{process="${proc}"} 1`,
    `filterd_dns_upstream_latency_ms_count{process="${proc}"} 2`
  ])
    t.assert.ok(text.split('\n').includes(line), `missing ${line}\n${text}`)
  // A bucket bound such as le="1000" may equal a small pid by chance: only
  // the labels that name something are looked at, and the pid as a whole number.
  const pidIn = new RegExp(`(^|\\D)${dns.proc.pid}(\\D|$)`)
  for (const line of text.split('\n').filter((l) => l.includes('{'))) {
    const named = [...line.matchAll(/(\w+)="([^"]*)"/g)].filter((m) => m[1] !== 'le')
    t.assert.ok(!named.some((m) => pidIn.test(m[2]!)), `a label holds the pid: ${line}`)
  }
})

test("exposes truncated UDP answers and the TCP connection table's refusals and evictions by reason", async (t: TestContext) => {
  const config = testConfig(t)
  const m = new DnsMetrics()
  m.udpTruncated = 9
  m.tcpSlots = () => ({ refusedPerSource: 936, refusedFull: 2, evictedIdle: 5, evictedSlow: 1 })
  const pub = startMetricsPublisher(config, m, { index: 0, intervalMs: 3_600_000 })
  await pub.publishNow()
  t.after(async () => {
    await pub.close()
  })
  const server = createHttpServer({ logger: { warn() {} } })
  registerMetricsRoute(server, { config, defaultMetrics: false, parts: DNS_SNAPSHOT_METRICS })
  const { port } = await server.listen('127.0.0.1', 0)
  t.after(() => server.close())
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  for (const line of [
    'filterd_dns_udp_truncated_total{process="dns-0"} 9',
    'filterd_dns_tcp_refused_total{process="dns-0",reason="per-source"} 936',
    'filterd_dns_tcp_refused_total{process="dns-0",reason="full"} 2',
    'filterd_dns_tcp_evicted_total{process="dns-0",reason="idle"} 5',
    'filterd_dns_tcp_evicted_total{process="dns-0",reason="slow"} 1'
  ])
    t.assert.ok(text.split('\n').includes(line), `missing ${line}\n${text}`)
})
