/*
 * Upstream visibility: a resolver going down and coming back is one log line
 * each (which, up or down, why), and the dns role's /metrics shows its state and timeouts.
 */
import { test, type TestContext } from 'node:test'
import { startStubResolver, type StubResolver } from '../engine/upstream-stub/index.js'
import { startRole, type LogLine } from '../engine/testing/daemon.js'
import { until } from '../engine/testing/wait.js'
import { releasedPort } from '../engine/testing/ports.js'
import { ask, firstA, rcode, world, writeConfigFile } from './testing/harness.js'

async function scrape(port: number): Promise<string[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`)
  return res.status === 200 ? (await res.text()).split('\n') : []
}

/** The value of the sample `name{labels}` ('' when absent). */
function sample(lines: string[], series: string): string {
  return lines.find((l) => l.startsWith(series + ' '))?.slice(series.length + 1) ?? ''
}

test('stopping the first forwarder: a down line in the log, state 0 and timeouts on /metrics; starting it again: an up line', async (t: TestContext) => {
  const w = await world(t, { stub: { a: '203.0.113.2' } })
  let first: StubResolver = await startStubResolver({ a: '203.0.113.1' })
  t.after(() => first.close())
  const metricsPort = await releasedPort()
  const file = writeConfigFile(w, {
    forward: [`127.0.0.1:${first.port}`, `127.0.0.1:${w.stub.port}`],
    proxy: { 'metrics-listen': `127.0.0.1:${metricsPort}`, 'log-level': 'info', 'upstream-timeout': 1000 }
  })
  const dns = await startRole(t, 'dns', file)
  const label = `127.0.0.1:${first.port}`
  const isState =
    (state: string) =>
    (l: LogLine): boolean =>
      l.resolver === label && l.state === state
  t.assert.strictEqual(firstA(await ask(dns.port, 'before.example')), '203.0.113.1')

  await first.close()
  for (let i = 0; i < 5; i++) {
    const a = await ask(dns.port, `during${i}.example`)
    t.assert.strictEqual(rcode(a), 'NOERROR')
    t.assert.strictEqual(firstA(a), '203.0.113.2', 'failed over to the second forwarder')
  }
  const down = await dns.waitForLog(isState('down'))
  t.assert.ok(typeof down.why === 'string' && down.why !== '', `the down line says why: ${JSON.stringify(down)}`)
  t.assert.match(String(down.msg), new RegExp(`resolver ${label} is down`))
  let lines: string[] = []
  const r = `process="dns-0",resolver="${label}"`
  await until(
    'the metrics snapshot showing the resolver down',
    async () => {
      lines = await scrape(metricsPort)
      return sample(lines, `filterd_dns_resolver_up{${r}}`) === '0'
    },
    20_000,
    200
  )
  t.diagnostic(
    lines
      .filter((l) => l.startsWith('filterd_dns_resolver_') || l.startsWith('filterd_dns_upstream_timeouts'))
      .join('\n')
  )
  t.assert.ok(
    Number(sample(lines, 'filterd_dns_upstream_timeouts_total{process="dns-0"}')) > 0,
    'filterd_dns_upstream_timeouts_total counts the tries that timed out'
  )
  t.assert.ok(Number(sample(lines, `filterd_dns_resolver_timeouts_total{${r}}`)) > 0)
  t.assert.ok(Number(sample(lines, `filterd_dns_resolver_queries_total{${r}}`)) >= 2)
  t.assert.strictEqual(
    sample(lines, `filterd_dns_resolver_up{process="dns-0",resolver="127.0.0.1:${w.stub.port}"}`),
    '1'
  )
  t.assert.ok(
    Number(
      sample(lines, `filterd_dns_resolver_latency_ms_count{process="dns-0",resolver="127.0.0.1:${w.stub.port}"}`)
    ) >= 5
  )

  // Back on the same port: the background probe's answer marks it up.
  first = await startStubResolver({ a: '203.0.113.1', port: first.port })
  const up = await dns.waitForLog(isState('up'))
  t.assert.match(String(up.msg), new RegExp(`resolver ${label} is up`))
  t.assert.strictEqual(firstA(await ask(dns.port, 'after.example')), '203.0.113.1', "users' queries go to it again")
  t.assert.strictEqual(dns.logs.filter(isState('down')).length, 1, 'one line per change')
})
