// RPZ out against real consumers: BIND 9.18, Unbound 1.17 and PowerDNS Recursor 4.8 transfer filterd's zones, block what
// filterd blocks, and after a policy write receive a NOTIFY, take an IXFR and block the new name.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { startStubResolver } from '../engine/upstream-stub/index.js'
import { releasedPort } from '../engine/testing/ports.js'
import { until } from '../engine/testing/wait.js'
import { BLOCK_IP, rpzWorld, tool, TSIG_NAME, TSIG_SECRET, zoneLines, type RpzWorld } from './testing/world.js'
import { startBind, startPdnsRecursor, startUnbound, type Consumer } from './testing/consumers.js'

const ZONES = ['global.rpz.filterd', 'cat-7.rpz.filterd']
const UPSTREAM_IP = '198.51.100.10'

async function answerOf(port: number, name: string): Promise<string> {
  try {
    return (await tool('dig', ['@127.0.0.1', '-p', String(port), name, 'A', '+short', '+time=2', '+tries=1'])).trim()
  } catch {
    return ''
  }
}

async function metric(w: RpzWorld, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${w.httpPort}/metrics`)).text()
  return Number(pattern.exec(text)?.[1] ?? 0)
}

/**
 * The consumer blocks and passes what filterd's policy does, then follows a write by IXFR (after a
 * NOTIFY, when `notified`; PowerDNS Recursor polls the SOA instead).
 */
async function followsFilterd(w: RpzWorld, c: Consumer, notified = true): Promise<void> {
  // Each zone is its own transfer: wait until the consumer holds the global zone and a category zone.
  await until(
    'the consumer transfers the zones',
    async () =>
      (await answerOf(c.port, 'bad.test')) === BLOCK_IP && (await answerOf(c.port, 'casino.test')) === BLOCK_IP,
    60_000,
    200
  ).catch((err: Error) => {
    throw new Error(`${err.message}; its output: ${c.output()}`)
  })
  assert.equal(await answerOf(c.port, 'www.bad.test'), BLOCK_IP, 'a name under a blacklisted one')
  assert.equal(await answerOf(c.port, 'casino.test'), BLOCK_IP, 'category 7')
  assert.equal(await answerOf(c.port, 'www.poker.test'), BLOCK_IP, 'under a category 7 name')
  assert.equal(await answerOf(c.port, 'good.test'), UPSTREAM_IP, 'whitelisted')
  assert.equal(
    await answerOf(c.port, 'ads.good.test'),
    UPSTREAM_IP,
    'blacklisted under a whitelisted name: passed, as filterd does'
  )
  assert.equal(await answerOf(c.port, 'adult.test'), UPSTREAM_IP, 'a category not served')
  assert.equal(await answerOf(c.port, 'new.test'), UPSTREAM_IP)

  const ixfrs = await metric(w, /filterd_rpz_requests_total\{kind="ixfr"\} (\d+)/)
  await w.store.write((wr) => {
    wr.putList(null, 'black', ['bad.test', 'ads.good.test', 'new.test'])
  })
  await until(
    'the consumer blocks the new name',
    async () => (await answerOf(c.port, 'new.test')) === BLOCK_IP,
    60_000,
    100
  )
  assert.ok((await metric(w, /filterd_rpz_requests_total\{kind="ixfr"\} (\d+)/)) > ixfrs, 'by IXFR')
  if (notified)
    assert.ok(
      (await metric(w, /filterd_rpz_notify_total\{outcome="acknowledged"\} (\d+)/)) > 0,
      'the NOTIFY was answered'
    )
}

test('BIND 9 (response-policy, secondary zones with TSIG) enforces filterd policy and follows a write', async (t: TestContext) => {
  const stub = await startStubResolver({ a: UPSTREAM_IP })
  t.after(() => stub.close())
  const bindPort = await releasedPort()
  const w = await rpzWorld(t, { tsig: true, notify: [bindPort] })
  const dir = join(w.dir, 'bind')
  mkdirSync(dir)
  const bind = startBind(t, {
    dir,
    port: bindPort,
    primaryPort: w.dnsPort,
    zones: ZONES,
    forwarder: stub.port,
    tsig: { name: TSIG_NAME, secret: TSIG_SECRET }
  })
  await followsFilterd(w, bind)
  // What BIND holds is what filterd serves, record for record.
  for (const zone of ZONES) {
    const key = ['-y', `hmac-sha256:${TSIG_NAME}:${TSIG_SECRET}`]
    const ours = zoneLines(await tool('kdig', ['@127.0.0.1', '-p', String(w.dnsPort), ...key, zone, 'AXFR']))
    // A zone the write did not change keeps its older serial at BIND until its next refresh (only changed zones are notified).
    const records = (lines: string[]): string[] =>
      zone === ZONES[0] ? lines : lines.filter((l) => !l.includes(' soa '))
    await until(
      `BIND holds ${zone} as filterd serves it`,
      async () => {
        const held = zoneLines(await tool('kdig', ['@127.0.0.1', '-p', String(bindPort), zone, 'AXFR']))
        return records(held).join('\n') === records(ours).join('\n')
      },
      30_000,
      200
    )
  }
})

test('Unbound (rpz: with primary:) enforces filterd policy and follows a write', async (t: TestContext) => {
  const stub = await startStubResolver({ a: UPSTREAM_IP })
  t.after(() => stub.close())
  const unboundPort = await releasedPort()
  const w = await rpzWorld(t, { notify: [unboundPort] })
  const dir = join(w.dir, 'unbound')
  mkdirSync(dir)
  const unbound = startUnbound(t, {
    dir,
    port: unboundPort,
    primaryPort: w.dnsPort,
    zones: ZONES,
    forwarder: stub.port
  })
  await followsFilterd(w, unbound)
})

test('PowerDNS Recursor (rpzPrimary with TSIG) enforces filterd policy and follows a write', async (t: TestContext) => {
  const stub = await startStubResolver({ a: UPSTREAM_IP })
  t.after(() => stub.close())
  const port = await releasedPort()
  const w = await rpzWorld(t, { tsig: true })
  const dir = join(w.dir, 'pdns')
  mkdirSync(dir)
  const pdns = startPdnsRecursor(t, {
    dir,
    port,
    primaryPort: w.dnsPort,
    zones: ZONES,
    forwarder: stub.port,
    tsig: { name: TSIG_NAME, secret: TSIG_SECRET }
  })
  await followsFilterd(w, pdns, false)
})
