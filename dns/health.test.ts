/**
 * The DNS role's /health (`proxy.metrics-listen`) and `filterd status` tell the truth about the
 * resolvers of `dnscache.forward`, over real sockets: every resolver down (a closed port, a resolver
 * that never answers) is unhealthy (503, naming why, status exits 1); one down of two is degraded
 * (200, listed, status exits 0).
 */
import { test, type TestContext } from 'node:test'
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import { ask, rcode, world, writeConfigFile } from '../engine/testing/dns.js'
import { runCli, startRole } from '../engine/testing/daemon.js'
import { releasedPort } from '../engine/testing/ports.js'
import { fetchJson, until } from '../engine/testing/wait.js'

/** A UDP socket that reads every query and answers none: a resolver that is there but dead. */
async function silentResolver(t: TestContext): Promise<number> {
  const sock = createSocket('udp4')
  sock.on('message', () => {})
  sock.bind(0, '127.0.0.1')
  await once(sock, 'listening')
  t.after(() => sock.close())
  return sock.address().port
}

interface Health {
  ok: boolean
  state: string
  degraded: Array<{ what: string; why: string; warning?: boolean }>
}

test('every resolver down: /health answers 503 naming each and why, and filterd status exits 1', async (t: TestContext) => {
  const w = await world(t)
  const closed = await releasedPort()
  const silent = await silentResolver(t)
  const metrics = await releasedPort()
  const file = writeConfigFile(w, {
    forward: [`127.0.0.1:${closed}`, `127.0.0.1:${silent}`],
    proxy: { 'metrics-listen': `127.0.0.1:${metrics}` }
  })
  const dns = await startRole(t, 'dns', file)
  const url = `http://127.0.0.1:${metrics}/health`
  t.assert.strictEqual((await fetchJson(url)).status, 200, 'no resolver has failed a try yet')

  t.assert.strictEqual(rcode(await ask(dns.port, 'forwarded.example')), 'SERVFAIL')
  let health: { status: number; body: Health } = await fetchJson(url)
  await until('/health to say the resolvers are down', async () => (health = await fetchJson(url)).status === 503)
  t.assert.strictEqual(health.body.ok, false)
  t.assert.strictEqual(health.body.degraded.length, 1, JSON.stringify(health.body))
  const [problem] = health.body.degraded
  t.assert.strictEqual(problem!.what, 'resolvers')
  t.assert.match(problem!.why, /every resolver of dnscache\.forward is down/)
  t.assert.match(problem!.why, new RegExp(`127\\.0\\.0\\.1:${closed}: ICMP port unreachable`))
  t.assert.match(problem!.why, new RegExp(`127\\.0\\.0\\.1:${silent}: no answer within \\d+ ms`))

  const status = await runCli(['status', '--config', file])
  t.assert.strictEqual(status.code, 1, status.stdout)
  t.assert.match(status.stdout, /^dns +pid \d+ .*health DEGRADED/m)
  t.assert.match(status.stdout, /degraded: resolvers: every resolver of dnscache\.forward is down/)
})

test('one resolver of two down: /health answers 200, degraded, listing it, and filterd status exits 0', async (t: TestContext) => {
  const w = await world(t)
  const closed = await releasedPort()
  const metrics = await releasedPort()
  const file = writeConfigFile(w, {
    // The closed port first: the first query tries it, finds it down and fails over to the stub.
    forward: [`127.0.0.1:${closed}`, `127.0.0.1:${w.stub.port}`],
    proxy: { 'metrics-listen': `127.0.0.1:${metrics}` }
  })
  const dns = await startRole(t, 'dns', file)
  const url = `http://127.0.0.1:${metrics}/health`
  t.assert.notStrictEqual(rcode(await ask(dns.port, 'forwarded.example')), 'SERVFAIL')
  let health: { status: number; body: Health } = await fetchJson(url)
  await until('/health to list the down resolver', async () => {
    health = await fetchJson(url)
    return health.body.degraded.length > 0
  })
  t.assert.strictEqual(health.status, 200)
  t.assert.strictEqual(health.body.ok, true)
  t.assert.strictEqual(health.body.state, 'degraded')
  t.assert.deepStrictEqual(health.body.degraded, [
    { what: `resolver 127.0.0.1:${closed}`, why: 'ICMP port unreachable: nothing listens there', warning: true }
  ])

  const status = await runCli(['status', '--config', file])
  t.assert.strictEqual(status.code, 0, status.stdout)
  t.assert.match(status.stdout, /^dns +pid \d+ .*health degraded/m)
  t.assert.match(status.stdout, new RegExp(`degraded: resolver 127\\.0\\.0\\.1:${closed}: ICMP port unreachable`))
})

test('proxy.processes 2: every resolver down, as the front processes publish it, is unhealthy (503)', async (t: TestContext) => {
  const w = await world(t)
  const closed = await releasedPort()
  const metrics = await releasedPort()
  // A fixed port: with port 0 each front process would bind one of its own, and one would get every query.
  const file = writeConfigFile(w, {
    listen: [`127.0.0.1:${await releasedPort()}`],
    forward: [`127.0.0.1:${closed}`],
    proxy: { 'metrics-listen': `127.0.0.1:${metrics}`, processes: 2 }
  })
  const dns = await startRole(t, 'dns', file)
  const url = `http://127.0.0.1:${metrics}/health`
  let health: { status: number; body: Health } = await fetchJson(url)
  t.assert.strictEqual(health.status, 200)
  // Each query reaches one of the two processes; they publish their resolvers' state every 5 s.
  await until(
    '/health to say the resolver is down in both processes',
    async () => {
      await ask(dns.port, 'forwarded.example').catch(() => undefined)
      health = await fetchJson(url)
      return health.status === 503
    },
    60_000,
    200
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}: ${JSON.stringify(health)}`)
  })
  t.assert.deepStrictEqual(
    health.body.degraded.map((p) => p.what),
    ['resolvers']
  )
  t.assert.match(health.body.degraded[0]!.why, new RegExp(`127\\.0\\.0\\.1:${closed}: ICMP port unreachable`))
})
