// RPZ out against real consumers: BIND 9.18, Unbound 1.17 and PowerDNS Recursor 4.8 transfer filterd's zones, block what
// filterd blocks, and after a policy write receive a NOTIFY, take an IXFR and block the new name. Then one host at ISP
// shape: the dns role (`proxy.processes: 2`, then `proxy.dispatch: pool`) takes a feed in from BIND while the rpz role
// serves the policy out, and every dns process answers as the three consumers do, before and after a write and a feed update.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startStubResolver } from '../engine/upstream-stub/index.js'
import { releasedPort } from '../engine/testing/ports.js'
import { until } from '../engine/testing/wait.js'
import { BLOCK_IP, rpzWorld, tool, TSIG_NAME, TSIG_SECRET, zoneLines, type RpzWorld } from './testing/world.js'
import { startBind, startPdnsRecursor, startUnbound, type Consumer } from './testing/consumers.js'
import { addUser, world, writeConfigFile, BLOCK_V4 } from '../engine/testing/dns.js'
import { startRole } from '../engine/testing/daemon.js'
import { buildCats } from '../engine/testing/store.js'

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
  // Unbound's SOA probe after a NOTIFY gives up after about 1.5 s, then waits for the refresh (see feedZone).
  const w = await rpzWorld(t, { notify: [unboundPort], refresh: 5 })
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

const FEED = 'feed.rpz'
/** SOA refresh (s) of every zone the consumers follow in the test of one host below (see feedZone). */
const REFRESH = 5

/**
 * The feed BIND serves at `serial`: a trigger of each answer kind, none of filterd's own names. A
 * refresh of 5 s, as `REFRESH` for filterd's zones: a NOTIFY's SOA probe
 * by Unbound gives up after about 1.5 s (100 ms, doubled up to 1 s) and then waits for the refresh, so
 * on a loaded machine a missed probe is caught up within seconds, not an hour.
 */
function feedZone(serial: number, extra = ''): string {
  return (
    `$ORIGIN ${FEED}.\n$TTL 300\n@ IN SOA ns.${FEED}. admin.${FEED}. ${serial} ${REFRESH} 5 86400 60\n  IN NS localhost.\n` +
    `threat.test CNAME .\n*.threat.test CNAME .\npass.threat.test CNAME rpz-passthru.\nnodata.test CNAME *.\n` +
    `local.test A 198.51.100.77\n${extra}`
  )
}

/** What a server answers an A query for `name`: its status and answer data (TTL left out), sorted. */
async function verdict(port: number, name: string): Promise<string> {
  let out: string
  try {
    out = await tool('dig', [
      '@127.0.0.1',
      '-p',
      String(port),
      name,
      'A',
      '+time=2',
      '+tries=1',
      '+noall',
      '+comments',
      '+answer'
    ])
  } catch {
    return 'no answer'
  }
  const status = /status: (\w+)/.exec(out)?.[1] ?? 'no status'
  const answers = out
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith(';'))
    .map((l) => l.split(/\s+/).slice(3).join(' '))
  return [status, ...answers.sort()].join(' ')
}

/** Every name's verdict at each consumer, which `asks` answers of the dns role (its processes take turns) must all equal. */
async function disagreements(
  dnsPort: number,
  peers: readonly Consumer[],
  names: readonly string[],
  asks = 4
): Promise<string[]> {
  const out: string[] = []
  for (const name of names) {
    const theirs = await Promise.all(peers.map(async (c) => verdict(c.port, name)))
    const ours: string[] = []
    for (let i = 0; i < asks; i++) ours.push(await verdict(dnsPort, name))
    const all = new Set([...theirs, ...ours])
    if (all.size > 1) out.push(`${name}: filterd ${JSON.stringify(ours)}, peers ${JSON.stringify(theirs)}`)
  }
  return out
}

// Global lists, category 7 (the user's filter and the rpz role's one category zone), the feed's triggers, and names
// no one blocks; `new.test` and `later.test` are blocked by the write and the feed update.
const NAMES = ['bad.test', 'www.bad.test', 'good.test', 'ads.good.test', 'casino.test', 'www.poker.test', 'adult.test']
const FEED_NAMES = ['threat.test', 'www.threat.test', 'pass.threat.test', 'nodata.test', 'local.test', 'fine.test']
const LATER = ['new.test', 'later.test']

for (const [label, proxy, fronts] of [
  ['proxy.processes: 2', { processes: 2 }, ['dns-1', 'dns-2']],
  ['proxy.dispatch: pool', { dispatch: 'pool', workers: 2 }, ['dns-0']]
] as const) {
  test(
    `${label}: the dns role takes a feed from BIND, the rpz role serves the policy out, and every dns process answers as BIND, Unbound and PowerDNS Recursor do, also after a write and a feed update`,
    { timeout: 300_000 },
    async (t: TestContext) => {
      const w = await world(t, { stub: { a: UPSTREAM_IP } })
      await buildCats(w.store, { 'casino.test': [7], 'poker.test': [7], 'adult.test': [12] })
      await w.store.write((wr) => {
        wr.putList(null, 'black', ['bad.test', 'ads.good.test'])
        wr.putList(null, 'white', ['good.test'])
      })
      // The dns role's clients (127/8) block category 7, as a consumer that loads cat-7 blocks it for everyone.
      await addUser(w.store, { name: 'loopback', ip: ['127.0.0.0/8'], filter: [7] })
      const bindPort = await releasedPort()
      const unboundPort = await releasedPort()
      const pdnsPort = await releasedPort()
      const rpzPort = await releasedPort()
      const notifyPort = await releasedPort()
      const metricsPort = await releasedPort()
      const dnsPort = await releasedPort()
      const bindDir = join(w.dir, 'bind')
      mkdirSync(bindDir)
      const feedFile = join(bindDir, `${FEED}.db`)
      writeFileSync(feedFile, feedZone(1))
      const file = writeConfigFile(w, {
        // A port of its own: with port 0 each front process would bind another.
        listen: [`127.0.0.1:${dnsPort}`],
        blockpage: [BLOCK_V4],
        proxy: { ...proxy, 'metrics-listen': `127.0.0.1:${metricsPort}` },
        sections: {
          rpz: {
            enabled: true,
            listen: `127.0.0.1:${rpzPort}`,
            log: '-',
            pid: join(w.dir, 'rpz.pid'),
            refresh: REFRESH,
            categories: [7],
            'transfer-access': ['allow 127.0.0.0/8'],
            notify: [`127.0.0.1:${bindPort}`, `127.0.0.1:${unboundPort}`]
          },
          'rpz-feeds': {
            'notify-listen': `127.0.0.1:${notifyPort}`,
            feeds: [{ zone: FEED, primary: `127.0.0.1:${bindPort}` }]
          }
        }
      })
      await startRole(t, 'rpz', file)
      // Zone order as filterd's policy steps: global lists, the feed, categories (docs/rpz.md).
      const bind = startBind(t, {
        dir: bindDir,
        port: bindPort,
        primaryPort: rpzPort,
        zones: ZONES,
        forwarder: w.stub.port,
        primary: { zone: FEED, file: feedFile, notify: [notifyPort, unboundPort], index: 1 }
      })
      await until(
        'BIND serves the feed',
        async () => (await verdict(bindPort, 'threat.test')) === 'NXDOMAIN',
        60_000,
        200
      )
      const dns = await startRole(t, 'dns', file)
      const peerOptions = (name: string, port: number): Parameters<typeof startUnbound>[1] => {
        const dir = join(w.dir, name)
        mkdirSync(dir)
        return {
          dir,
          port,
          primaryPort: rpzPort,
          zones: ZONES,
          forwarder: w.stub.port,
          foreign: [{ zone: FEED, port: bindPort, index: 1 }]
        }
      }
      const unbound = startUnbound(t, peerOptions('unbound', unboundPort))
      const pdns = startPdnsRecursor(t, peerOptions('pdns', pdnsPort))
      const peers = [bind, unbound, pdns]
      const all = [...NAMES, ...FEED_NAMES, ...LATER]

      // Each peer holds its three zones once it blocks a name of each; then every name agrees.
      for (const c of peers)
        await until(
          'the consumer transfers the zones',
          async () =>
            (await verdict(c.port, 'bad.test')) === `NOERROR A ${BLOCK_V4}` &&
            (await verdict(c.port, 'casino.test')) === `NOERROR A ${BLOCK_V4}` &&
            (await verdict(c.port, 'threat.test')) === 'NXDOMAIN',
          60_000,
          200
        ).catch((err: Error) => {
          throw new Error(`${err.message}; its output: ${c.output()}`)
        })
      assert.equal(await verdict(dns.port, 'threat.test'), 'NXDOMAIN', 'the dns role enforces the feed')
      assert.deepEqual(await disagreements(dns.port, peers, all), [])
      assert.equal(await verdict(dns.port, 'www.threat.test'), 'NXDOMAIN')
      assert.equal(await verdict(dns.port, 'casino.test'), `NOERROR A ${BLOCK_V4}`)
      assert.equal(await verdict(dns.port, 'local.test'), 'NOERROR A 198.51.100.77')
      assert.equal(await verdict(dns.port, 'nodata.test'), 'NOERROR')
      assert.equal(await verdict(dns.port, 'new.test'), `NOERROR A ${UPSTREAM_IP}`)

      // A policy write (RPZ out: NOTIFY and IXFR to the peers; the store to every dns process) and a feed update
      // (BIND reloads, NOTIFYs filterd and Unbound; PowerDNS Recursor polls).
      await w.store.write((wr) => {
        wr.putList(null, 'black', ['bad.test', 'ads.good.test', 'new.test'])
      })
      writeFileSync(feedFile, feedZone(2, 'later.test CNAME .\n'))
      bind.proc.kill('SIGHUP')
      // Which server answered what last, for the failure's message: one that falls behind is named.
      let behind = ''
      await until(
        'every server blocks the written name and the feed update',
        async () => {
          const servers = [
            ['BIND', bind],
            ['Unbound', unbound],
            ['PowerDNS Recursor', pdns],
            ['filterd', dns]
          ] as const
          const wanted = [
            ['new.test', `NOERROR A ${BLOCK_V4}`],
            ['later.test', 'NXDOMAIN']
          ] as const
          for (const [who, c] of servers)
            for (const [name, want] of wanted) {
              const got = await verdict(c.port, name)
              if (got !== want) {
                behind = `${who} answers ${name} with ${got}`
                return false
              }
            }
          return true
        },
        60_000,
        200
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ${behind}; filterd's stderr: ${dns.stderr}`)
      })
      assert.deepEqual(await disagreements(dns.port, peers, all), [])

      // Every front process answered some of them (the kernel spreads source ports over the SO_REUSEPORT sockets).
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
      for (const proc of fronts) {
        const counted = Number(
          new RegExp(`filterd_dns_queries_total\\{process="${proc}"\\} (\\d+)`).exec(text)?.[1] ?? 0
        )
        assert.ok(
          counted > 0,
          `${proc} answered: ${text
            .split('\n')
            .filter((l) => l.startsWith('filterd_dns_queries_total'))
            .join('; ')}`
        )
      }
    }
  )
}
