/**
 * `proxy.metrics-listen`: the DNS role serves /metrics itself, so a host running only `filterd dns`
 * is observable. Labels: the front process's index (never a pid) and named rcodes.
 */
import { test, type TestContext } from 'node:test'
import { CATEGORY } from '../engine/categories/index.js'
import { addUser, ask, world, writeConfigFile } from '../engine/testing/dns.js'
import { startRole } from '../engine/testing/daemon.js'
import { until } from '../engine/testing/wait.js'
import { releasedPort } from '../engine/testing/ports.js'

test('filterd dns with proxy.metrics-listen serves its counters on /metrics, labelled by process index and rcode name', async (t: TestContext) => {
  const w = await world(t, { cats: { 'casino.example': [CATEGORY.GAMBLING] } })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  const port = await releasedPort()
  const file = writeConfigFile(w, { proxy: { 'metrics-listen': `127.0.0.1:${port}` } })
  const dns = await startRole(t, 'dns', file)
  await ask(dns.port, 'casino.example') // blocked
  await ask(dns.port, 'nx.invalid') // forwarded, NXDOMAIN from the stub
  let text = ''
  // Snapshots are written every 5 s.
  await until(
    'the condition',
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`)
      text = await res.text()
      if (res.status !== 200) return false
      return text.split('\n').includes('filterd_dns_queries_total{process="dns-0"} 2')
    },
    20_000
  )
  const lines = text.split('\n')
  for (const line of [
    'filterd_dns_answers_total{process="dns-0",verdict="block",rcode="NOERROR"} 1',
    'filterd_dns_answers_total{process="dns-0",verdict="forward",rcode="NXDOMAIN"} 1',
    // Both queries came from alice's one address: one policy built, one address cached.
    'filterd_dns_policy_cached_addresses{process="dns-0"} 1',
    'filterd_dns_policy_snapshots_built_total{process="dns-0"} 1'
  ])
    t.assert.ok(lines.includes(line), `missing ${line}\n${text}`)
  t.assert.ok(
    lines.some((l) => l.startsWith('filterd_dns_process_resident_memory_bytes')),
    "the DNS process's own default metrics"
  )
  // Labels only, and not bucket bounds: a value (bytes, seconds) or an
  // le="1000" may hold the pid's digits by chance.
  const labelValues = [...text.matchAll(/\{([^}]*)\}/g)].flatMap((m) =>
    [...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].filter((v) => v[1] !== 'le').map((v) => v[2]!)
  )
  t.assert.ok(labelValues.includes('dns-0'), 'the labels were read')
  const pidIn = new RegExp(`(^|\\D)${dns.proc.pid}(\\D|$)`)
  t.assert.ok(!labelValues.some((v) => pidIn.test(v)), 'no label holds the pid')
  t.assert.strictEqual((await fetch(`http://127.0.0.1:${port}/`)).status, 404)
})
