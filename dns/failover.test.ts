/*
 * Failover on error answers: a REFUSED, SERVFAIL or NOTIMP from one forwarder
 * is asked again of the next one within the same budget; when every forwarder says so the client
 * gets the last answer; NXDOMAIN is an answer and never fails over. On both UDP I/O paths.
 */
import { test, type TestContext } from 'node:test'
import type { ResolverSnapshot } from '../engine/metrics/index.js'
import { DnsMetrics } from './metrics.js'
import { startStubResolver } from '../engine/upstream-stub/index.js'
import { loadUdpAddon } from '../engine/udp/index.js'
import { RCODE_NOTIMP, RCODE_REFUSED, RCODE_SERVFAIL } from '../engine/wire/index.js'
import { ask, dig, digMissing, firstA, rcode, server, world } from './testing/harness.js'
import { startRcodeStub } from './testing/rcode-stub.js'

const HEALTHY_A = '203.0.113.2'
const paths: Array<'dgram' | 'native'> = loadUdpAddon() instanceof Error ? ['dgram'] : ['dgram', 'native']

/** `status` and the first A record of `dig @127.0.0.1 -p port name A`. */
async function digA(t: TestContext, port: number, name: string): Promise<{ status: string; a: string } | undefined> {
  const out = await dig(['@127.0.0.1', '-p', String(port), '+tries=1', '+time=5', name, 'A'])
  if (out === undefined) {
    digMissing(t)
    return undefined
  }
  const status = /status: (\w+)/.exec(out)?.[1] ?? '?'
  const a = new RegExp(`^${name.replace(/\./g, '\\.')}\\.\\s+\\d+\\s+IN\\s+A\\s+(\\S+)`, 'm').exec(out)?.[1] ?? ''
  return { status, a }
}

function resolverOf(m: DnsMetrics, port: number): ResolverSnapshot {
  const r = m.snapshot().resolvers?.find((x) => x.resolver === `127.0.0.1:${port}`)
  if (r === undefined) throw new Error(`no metrics for resolver 127.0.0.1:${port}`)
  return r
}

for (const io of paths) {
  for (const [name, code] of [
    ['REFUSED', RCODE_REFUSED],
    ['SERVFAIL', RCODE_SERVFAIL],
    ['NOTIMP', RCODE_NOTIMP]
  ] as const) {
    test(`${io}: a first forwarder answering ${name} to everything: clients get the second one's answer, and the first is counted and marked down`, async (t: TestContext) => {
      const w = await world(t, { stub: { a: HEALTHY_A } })
      const bad = await startRcodeStub(t, code)
      const metrics = new DnsMetrics()
      const s = await server(t, w, {
        forward: [`127.0.0.1:${bad.port}`, `127.0.0.1:${w.stub.port}`],
        proxy: { io, 'upstream-timeout': 3000 },
        metrics
      })
      for (let i = 0; i < 3; i++) {
        const d = await digA(t, s.port, `dig${i}.example`)
        if (d === undefined) return
        t.assert.deepStrictEqual(d, { status: 'NOERROR', a: HEALTHY_A }, `dig${i}.example`)
      }
      for (let i = 0; i < 20; i++) {
        const a = await ask(s.port, `q${i}.example`, 'A')
        t.assert.strictEqual(rcode(a), 'NOERROR')
        t.assert.strictEqual(firstA(a), HEALTHY_A)
      }
      for (const n of ['dig0.example/A', 'dig2.example/A', 'q0.example/A', 'q19.example/A'])
        t.assert.ok(w.stub.seen.includes(n), `the second forwarder received ${n}`)
      const first = resolverOf(metrics, bad.port)
      const second = resolverOf(metrics, w.stub.port)
      t.diagnostic(
        `${name}: users' queries that reached the first forwarder ${bad.users()} of 23; its metrics ${JSON.stringify(first)}`
      )
      // Three error answers in a row mark it down: later queries go straight to the second.
      t.assert.strictEqual(bad.users(), 3)
      t.assert.strictEqual(first.up, false)
      t.assert.strictEqual(first.errors[['REFUSED', 'SERVFAIL', 'NOTIMP'].indexOf(name)], 3)
      t.assert.strictEqual(second.up, true)
      t.assert.strictEqual(second.queries, 23)
    })
  }

  test(`${io}: every forwarder answering an error: the client gets the last answer, after asking each`, async (t: TestContext) => {
    const w = await world(t)
    const servfail = await startRcodeStub(t, RCODE_SERVFAIL)
    const refused = await startRcodeStub(t, RCODE_REFUSED)
    const s = await server(t, w, {
      forward: [`127.0.0.1:${servfail.port}`, `127.0.0.1:${refused.port}`],
      proxy: { io, 'upstream-timeout': 3000 }
    })
    const d = await digA(t, s.port, 'nobody.example')
    if (d === undefined) return
    t.assert.strictEqual(d.status, 'REFUSED', "the second (last) forwarder's answer")
    t.assert.strictEqual(servfail.users(), 1)
    t.assert.strictEqual(refused.users(), 1)
  })

  test(`${io}: NXDOMAIN is relayed and never fails over`, async (t: TestContext) => {
    const w = await world(t)
    const second = await startStubResolver({})
    t.after(() => second.close())
    const s = await server(t, w, { forward: [`127.0.0.1:${w.stub.port}`, `127.0.0.1:${second.port}`], proxy: { io } })
    for (let i = 0; i < 5; i++) t.assert.strictEqual(rcode(await ask(s.port, `gone${i}.invalid`, 'A')), 'NXDOMAIN')
    t.assert.strictEqual(w.stub.seen.filter((q) => q.startsWith('gone')).length, 5)
    t.assert.deepStrictEqual(second.seen, [], 'the second forwarder was never asked')
  })
}

test('campaign figure: 1,000 queries with the first forwarder answering REFUSED to everything', async (t: TestContext) => {
  const w = await world(t, { stub: { a: HEALTHY_A } })
  const bad = await startRcodeStub(t, RCODE_REFUSED)
  const s = await server(t, w, {
    forward: [`127.0.0.1:${bad.port}`, `127.0.0.1:${w.stub.port}`],
    proxy: { io: 'dgram', 'upstream-timeout': 3000 }
  })
  const outcomes = new Map<string, number>()
  // 20 waves of 50 concurrent queries: the first wave meets the refusing forwarder.
  for (let wave = 0; wave < 20; wave++) {
    const answers = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => await ask(s.port, `c${wave}-${i}.example`, 'A'))
    )
    for (const a of answers) {
      const k = `${rcode(a) ?? '?'} ${firstA(a) ?? '-'}`
      outcomes.set(k, (outcomes.get(k) ?? 0) + 1)
    }
  }
  t.diagnostic(
    `first forwarder REFUSED: ${JSON.stringify([...outcomes])} of 1000; users' queries that reached it: ${bad.users()}; that reached the second: ${w.stub.seen.filter((q) => q.startsWith('c')).length}`
  )
  t.assert.deepStrictEqual([...outcomes], [[`NOERROR ${HEALTHY_A}`, 1000]])
})
