/**
 * RPZ in, end to end: the DNS daemon (a child process) takes RPZ feeds from Knot DNS by TSIG-signed
 * transfer and from zone files, `dig` shows each action enforced, a NOTIFY brings an IXFR whose new
 * record is enforced, and bad input (a wrong TSIG key, a malformed zone file) leaves the previous
 * state enforced with the error on /metrics.
 */
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { dig, digMissing, query, udpSilent, world, writeConfigFile, BLOCK_V4 } from '../engine/testing/dns.js'
import { digged, feedText, knotFeedSection, metricsText, UPSTREAM_A } from './testing/rpz-feeds.js'
import { startRole } from '../engine/testing/daemon.js'
import { releasedPort } from '../engine/testing/ports.js'
import { tempDir } from '../engine/testing/temp.js'
import { until } from '../engine/testing/wait.js'
import { startKnot } from '../engine/testing/knot.js'

test('a feed from Knot by TSIG: every action enforced by the DNS daemon, an update followed by NOTIFY and IXFR', async (t: TestContext) => {
  if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
  const w = await world(t)
  const knotPort = await releasedPort()
  const notifyPort = await releasedPort()
  const metricsPort = await releasedPort()
  const knot = await startKnot(t, tempDir(t, 'filterd-knot-'), knotPort, 'feed.rpz', feedText(20), notifyPort)
  const file = writeConfigFile(w, {
    proxy: { 'metrics-listen': `127.0.0.1:${metricsPort}`, 'log-level': 'info' },
    sections: { 'rpz-feeds': knotFeedSection(knotPort, notifyPort) }
  })
  const dns = await startRole(t, 'dns', file)
  const p = dns.port

  t.assert.deepEqual((await digged(p, ['bad.example', 'A'])).status, 'NXDOMAIN', 'CNAME . is NXDOMAIN')
  t.assert.deepEqual((await digged(p, ['www.bad.example', 'A'])).status, 'NXDOMAIN', 'the *. wildcard')
  const nodata = await digged(p, ['nodata.example', 'A'])
  t.assert.deepEqual([nodata.status, nodata.answers], ['NOERROR', []], 'CNAME *. is NODATA')
  t.assert.deepEqual((await digged(p, ['pass.bad.example', 'A'])).answers, [`A ${UPSTREAM_A}`], 'rpz-passthru.')
  t.assert.ok(await udpSilent(p, query('drop.example', 'A'), 1000), 'rpz-drop. answers nothing')
  const udp = await digged(p, ['+ignore', 'tcp.example', 'A'])
  t.assert.ok(
    udp.flags.split(' ').includes('tc') && udp.answers.length === 0,
    `rpz-tcp-only. over UDP: TC (${udp.flags})`
  )
  t.assert.deepEqual((await digged(p, ['+tcp', 'tcp.example', 'A'])).answers, [`A ${UPSTREAM_A}`], 'over TCP: answered')
  t.assert.deepEqual((await digged(p, ['local.example', 'A'])).answers, ['A 198.51.100.77'], 'local data')
  const walled = await digged(p, ['walled.example', 'A'])
  t.assert.deepEqual(walled.answers, ['CNAME garden.example.', `A ${UPSTREAM_A}`], 'local CNAME, its target resolved')
  t.assert.deepEqual((await digged(p, ['fine.example', 'A'])).answers, [`A ${UPSTREAM_A}`], 'no trigger: forwarded')
  t.assert.deepEqual(
    (await digged(p, ['-b', '127.0.0.2', 'fine.example', 'A'])).status,
    'NXDOMAIN',
    'the CLIENT-IP trigger of 127.0.0.2'
  )

  await knot.update(feedText(21, 'later.example CNAME .\n'))
  await until(
    'the NOTIFY and IXFR reach the daemon',
    async () => (await digged(p, ['later.example', 'A'])).status === 'NXDOMAIN',
    30_000,
    100
  )
  // The rest of the feed is kept, at once: an IXFR is applied whole before any query sees it.
  const rest = (await digged(p, ['www.bad.example', 'A'])).status
  if (rest !== 'NXDOMAIN')
    t.diagnostic(
      `www.bad.example: ${rest}; ${(await metricsText(metricsPort))
        .split('\n')
        .filter((l) => l.includes('rpz_feed'))
        .join(' | ')}`
    )
  t.assert.deepEqual(rest, 'NXDOMAIN', 'the rest of the feed kept (www.bad.example under *.bad.example)')

  let text = ''
  await until(
    'the feed on /metrics',
    async () =>
      (text = await metricsText(metricsPort)).includes('filterd_rpz_feed_serial{process="dns-0",zone="feed.rpz"} 21'),
    20_000,
    200
  )
  const lines = text.split('\n')
  for (const line of [
    'filterd_rpz_feed_unsupported_triggers{process="dns-0",zone="feed.rpz"} 3',
    'filterd_rpz_feed_triggers{process="dns-0",zone="feed.rpz",kind="nsdname"} 1',
    'filterd_rpz_feed_triggers{process="dns-0",zone="feed.rpz",kind="client-ip"} 1',
    'filterd_rpz_feed_state{process="dns-0",zone="feed.rpz",state="ok"} 1',
    'filterd_rpz_feed_errors{process="dns-0",zone="feed.rpz"} 0'
  ])
    t.assert.ok(lines.includes(line), `missing ${line}\n${text}`)
  t.assert.ok(
    dns.logs.some((l) => /3 triggers not enforced \(NSDNAME 1, NSIP 1, response IP 1\)/.test(String(l.msg))),
    'the triggers that are not enforced are logged'
  )
})

test('a wrong TSIG key enforces nothing and says so on /metrics; the daemon still answers', async (t: TestContext) => {
  if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
  const w = await world(t)
  const knotPort = await releasedPort()
  const metricsPort = await releasedPort()
  await startKnot(t, tempDir(t, 'filterd-knot-'), knotPort, 'feed.rpz', feedText(5))
  const file = writeConfigFile(w, {
    proxy: { 'metrics-listen': `127.0.0.1:${metricsPort}`, 'log-level': 'info' },
    sections: {
      'rpz-feeds': {
        feeds: [
          {
            zone: 'feed.rpz',
            primary: `127.0.0.1:${knotPort}`,
            'tsig-key': { name: 'feed-key', secret: Buffer.alloc(32, 1).toString('base64') }
          }
        ]
      }
    }
  })
  const dns = await startRole(t, 'dns', file)
  t.assert.deepEqual((await digged(dns.port, ['bad.example', 'A'])).answers, [`A ${UPSTREAM_A}`])
  let text = ''
  await until(
    'the failure on /metrics',
    async () =>
      (text = await metricsText(metricsPort)).includes('filterd_rpz_feed_errors{process="dns-0",zone="feed.rpz"} 1'),
    20_000,
    200
  )
  t.assert.ok(text.includes('filterd_rpz_feed_state{process="dns-0",zone="feed.rpz",state="failing"} 1'), text)
  t.assert.ok(
    dns.logs.some((l) => String(l.msg).startsWith('rpz feed feed.rpz: refresh failed')),
    'the failure is logged'
  )
})

test('zone-file feeds: the first zone wins, an override with a category gets the block answer, a malformed reload keeps the last good copy', async (t: TestContext) => {
  if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
  const w = await world(t)
  const metricsPort = await releasedPort()
  const first = join(w.dir, 'first.rpz.zone')
  const second = join(w.dir, 'second.rpz.zone')
  const soa = (origin: string, serial: number): string =>
    `$ORIGIN ${origin}.\n@ 300 SOA ns. admin. ${serial} 60 60 600 60\n`
  writeFileSync(first, soa('first.rpz', 1) + 'x.example CNAME rpz-passthru.\n')
  writeFileSync(second, soa('second.rpz', 1) + 'x.example CNAME .\ny.example CNAME .\n')
  const file = writeConfigFile(w, {
    proxy: { 'metrics-listen': `127.0.0.1:${metricsPort}`, 'log-level': 'info' },
    sections: {
      'rpz-feeds': {
        'file-refresh': 1,
        feeds: [
          { zone: 'first.rpz', file: first },
          { zone: 'second.rpz', file: second, action: 'block', category: 7 }
        ]
      }
    }
  })
  const dns = await startRole(t, 'dns', file)
  const p = dns.port
  t.assert.deepEqual((await digged(p, ['x.example', 'A'])).answers, [`A ${UPSTREAM_A}`], 'the first zone passes it')
  t.assert.deepEqual((await digged(p, ['y.example', 'A'])).answers, [`A ${BLOCK_V4}`], "filterd's block answer")

  writeFileSync(second, soa('second.rpz', 2) + 'y.example CNAME .\nz.example BOGUS x\n')
  let text = ''
  await until(
    'the malformed copy refused, on /metrics',
    async () => (text = await metricsText(metricsPort)).includes('zone="second.rpz",state="failing"} 1'),
    20_000,
    200
  )
  t.assert.ok(text.includes('filterd_rpz_feed_serial{process="dns-0",zone="second.rpz"} 1'), text)
  t.assert.deepEqual((await digged(p, ['y.example', 'A'])).answers, [`A ${BLOCK_V4}`], 'the last good copy enforced')
  t.assert.deepEqual((await digged(p, ['z.example', 'A'])).answers, [`A ${UPSTREAM_A}`], 'nothing of the bad copy')

  writeFileSync(second, soa('second.rpz', 3) + 'z.example CNAME .\n')
  await until(
    'the fixed file enforced',
    async () => (await digged(p, ['z.example', 'A'])).answers[0] === `A ${BLOCK_V4}`,
    20_000,
    200
  )
  t.assert.deepEqual((await digged(p, ['y.example', 'A'])).answers, [`A ${UPSTREAM_A}`], 'a removed trigger is gone')
})
