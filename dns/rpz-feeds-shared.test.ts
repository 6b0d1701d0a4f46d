/**
 * RPZ in, one copy per host: the dns role's feed process (a child of its primary, at SCHED_IDLE)
 * transfers each feed from Knot DNS and writes it into the store, and every process that judges reads
 * it there. With `proxy.processes: 2` and with `proxy.dispatch: pool` the feed is enforced and a
 * NOTIFY's IXFR reaches every front process and worker; `filterd all` with `rpz-feeds.notify-listen`
 * starts (one role binds it) and follows a NOTIFY.
 */
import { test, type TestContext } from 'node:test'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { connect, createServer, type AddressInfo } from 'node:net'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { dig, digMissing, world, writeConfigFile } from '../engine/testing/dns.js'
import { FILTERD, startRole } from '../engine/testing/daemon.js'
import { demoConfig, demoPorts } from '../engine/testing/demo-config.js'
import { releasedPort } from '../engine/testing/ports.js'
import { childrenRunning } from '../engine/testing/processes.js'
import { tempDir } from '../engine/testing/temp.js'
import { until } from '../engine/testing/wait.js'
import { startKnot } from '../engine/testing/knot.js'
import { digged, feedText, knotFeedSection, metricsText, UPSTREAM_A } from './testing/rpz-feeds.js'
import { parseTaskStat, SCHED_IDLE } from '../engine/cpu-priority/index.js'

/** Asks `times` times (several front processes or workers each answer some): every answer's status. */
async function statuses(port: number, name: string, times = 8): Promise<string[]> {
  const out: string[] = []
  for (let i = 0; i < times; i++) out.push((await digged(port, [name, 'A'])).status)
  return out
}

for (const [label, proxy, processes] of [
  ['proxy.processes: 2', { processes: 2 }, ['dns-1', 'dns-2']],
  ['proxy.dispatch: pool', { dispatch: 'pool', workers: 2 }, ['dns-0']]
] as const) {
  test(`${label}: a feed from Knot is enforced by every process, and its update by NOTIFY and IXFR`, async (t: TestContext) => {
    if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
    const w = await world(t)
    const knotPort = await releasedPort()
    const notifyPort = await releasedPort()
    const metricsPort = await releasedPort()
    // A port of its own: with port 0 each front process binds another, and dig would ask only the first.
    const dnsPort = await releasedPort()
    const knot = await startKnot(t, tempDir(t, 'filterd-knot-'), knotPort, 'feed.rpz', feedText(20), notifyPort)
    const file = writeConfigFile(w, {
      listen: [`127.0.0.1:${dnsPort}`],
      proxy: { ...proxy, 'metrics-listen': `127.0.0.1:${metricsPort}`, 'log-level': 'info' },
      sections: { 'rpz-feeds': knotFeedSection(knotPort, notifyPort) }
    })
    const dns = await startRole(t, 'dns', file)
    const p = dns.port

    t.assert.deepEqual(new Set(await statuses(p, 'www.bad.example')), new Set(['NXDOMAIN']), 'the *. wildcard')
    t.assert.deepEqual((await digged(p, ['local.example', 'A'])).answers, ['A 198.51.100.77'], 'local data')
    t.assert.deepEqual((await digged(p, ['pass.bad.example', 'A'])).answers, [`A ${UPSTREAM_A}`], 'rpz-passthru.')
    t.assert.deepEqual((await digged(p, ['-b', '127.0.0.2', 'fine.example', 'A'])).status, 'NXDOMAIN', 'CLIENT-IP')
    t.assert.deepEqual((await digged(p, ['fine.example', 'A'])).answers, [`A ${UPSTREAM_A}`], 'no trigger: forwarded')

    await knot.update(feedText(21, 'later.example CNAME .\n'))
    await until(
      'the NOTIFY and IXFR reach the daemon',
      async () => (await digged(p, ['later.example', 'A'])).status === 'NXDOMAIN',
      30_000,
      100
    )
    // Every process enforces the new serial, and the rest of the feed with it.
    await until(
      'every process enforces serial 21',
      async () => (await statuses(p, 'later.example')).every((s) => s === 'NXDOMAIN'),
      10_000,
      100
    )
    t.assert.deepEqual(new Set(await statuses(p, 'www.bad.example')), new Set(['NXDOMAIN']), 'the rest kept')

    let text = ''
    await until(
      'the serial on /metrics for every front process',
      async () => {
        text = await metricsText(metricsPort)
        return processes.every((proc) => text.includes(`filterd_rpz_feed_serial{process="${proc}",zone="feed.rpz"} 21`))
      },
      20_000,
      200
    )
    t.assert.ok(text.includes(`filterd_rpz_feed_state{process="${processes[0]}",zone="feed.rpz",state="ok"} 1`), text)
    // One process transferred it: one log line per serial, from the role's primary.
    const enforcedLines = dns.logs.filter((l) => String(l.msg) === 'rpz feed feed.rpz: serial 21 enforced')
    t.assert.equal(enforcedLines.length, 1, 'one transfer per host')
  })
}

test(
  'filterd all with rpz-feeds.notify-listen: starts (one role binds it) and follows a NOTIFY',
  { timeout: 240_000 },
  async (t: TestContext) => {
    if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
    const dir = tempDir(t, 'filterd-all-rpz-')
    const ports = await demoPorts()
    const knotPort = await releasedPort()
    const notifyPort = await releasedPort()
    const knot = await startKnot(t, tempDir(t, 'filterd-knot-'), knotPort, 'feed.rpz', feedText(30), notifyPort)
    const config = join(dir, 'demo.yaml')
    // A JSON object is YAML too.
    writeFileSync(
      config,
      `${demoConfig(dir, ports)}\nrpz-feeds: ${JSON.stringify(knotFeedSection(knotPort, notifyPort))}\n`
    )
    const child = spawn(process.execPath, [FILTERD, 'all', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    t.after(async () => {
      if (child.exitCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    })
    const exited = once(child, 'exit')
    while (!out.includes('Stop with Ctrl-C.')) {
      if (child.exitCode !== null) throw new Error(`filterd all exited early:\n${out}`)
      await Promise.race([once(child.stdout, 'data'), exited])
    }
    t.assert.doesNotMatch(out, /address already in use/i)
    t.assert.match(out, new RegExp(`dns rpz notify udp\\+tcp 127\\.0\\.0\\.1:${notifyPort}`))
    t.assert.deepEqual((await digged(ports.dns!, ['www.bad.example', 'A'])).status, 'NXDOMAIN', 'the feed enforced')

    await knot.update(feedText(31, 'later.example CNAME .\n'))
    await until(
      'the NOTIFY and IXFR reach the dns role',
      async () => (await digged(ports.dns!, ['later.example', 'A'])).status === 'NXDOMAIN',
      30_000,
      200
    )
    t.assert.equal(child.exitCode, null, 'filterd all still runs')
  }
)

test('a restart while the primary is away answers at once from the feed in the store, and keeps it after the failed transfer', async (t: TestContext) => {
  if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
  const w = await world(t)
  const knotPort = await releasedPort()
  const notifyPort = await releasedPort()
  const dnsPort = await releasedPort()
  await startKnot(t, tempDir(t, 'filterd-knot-'), knotPort, 'feed.rpz', feedText(40), notifyPort)
  const config = (primaryPort: number): string =>
    writeConfigFile(w, {
      listen: [`127.0.0.1:${dnsPort}`],
      proxy: { processes: 2, 'log-level': 'info' },
      sections: { 'rpz-feeds': knotFeedSection(primaryPort, notifyPort) }
    })
  const first = await startRole(t, 'dns', config(knotPort))
  t.assert.deepEqual(new Set(await statuses(dnsPort, 'www.bad.example')), new Set(['NXDOMAIN']))
  await first.stop()

  // Nothing listens on the primary's port now: the first transfer is refused.
  const dns = await startRole(t, 'dns', config(await releasedPort()))
  t.assert.deepEqual(
    new Set(await statuses(dnsPort, 'www.bad.example')),
    new Set(['NXDOMAIN']),
    'the stored feed, at once'
  )
  await dns.waitForLog((l) => String(l.msg).startsWith('rpz feed feed.rpz: refresh failed'), 'the failed transfer')
  t.assert.deepEqual(new Set(await statuses(dnsPort, 'www.bad.example')), new Set(['NXDOMAIN']), 'kept after it')
  t.assert.deepEqual((await digged(dnsPort, ['fine.example', 'A'])).answers, [`A ${UPSTREAM_A}`])
})

/** The dns role's feed process: its child that runs dns/feed-process.js. */
const feedProcess = (rolePid: number): number | undefined => childrenRunning(rolePid, 'feed-process.js')[0]

const schedOf = (pid: number, tid: number = pid): { policy: number; nice: number } =>
  parseTaskStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'))
const IDLE = { policy: SCHED_IDLE, nice: 19 }
const NORMAL = { policy: 0, nice: 0 }

test('the feeds are followed by a child process at SCHED_IDLE, started again when it dies, while the front answers at normal priority', async (t: TestContext) => {
  if (process.platform !== 'linux') return t.skip('nice values are read from /proc')
  if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
  const w = await world(t)
  const knotPort = await releasedPort()
  const notifyPort = await releasedPort()
  const knot = await startKnot(t, tempDir(t, 'filterd-knot-'), knotPort, 'feed.rpz', feedText(50), notifyPort)
  const file = writeConfigFile(w, {
    proxy: { 'log-level': 'info' },
    sections: { 'rpz-feeds': knotFeedSection(knotPort, notifyPort) }
  })
  const dns = await startRole(t, 'dns', file)
  const p = dns.port
  const rolePid = dns.proc.pid!
  const first = feedProcess(rolePid)
  t.assert.ok(first !== undefined, 'a feed process')
  // chrt (util-linux) makes the SCHED_IDLE call; without it the process falls back to nice 19.
  const chrt = spawnSync('chrt', ['--version']).status === 0
  if (!chrt) t.diagnostic('no chrt here: nice 19 only')
  const expected = chrt ? IDLE : { ...NORMAL, nice: 19 }
  for (const tid of readdirSync(`/proc/${first}/task`).map(Number)) {
    const s = schedOf(first, tid)
    t.assert.deepEqual({ policy: s.policy, nice: s.nice }, expected, `thread ${tid} of the feed process`)
  }
  const front = schedOf(rolePid)
  t.assert.deepEqual({ policy: front.policy, nice: front.nice }, NORMAL, 'the front (one process)')
  t.assert.deepEqual((await digged(p, ['www.bad.example', 'A'])).status, 'NXDOMAIN', 'the feed enforced')

  const enforced = (): number =>
    dns.logs.filter((l) => String(l.msg) === 'rpz feed feed.rpz: serial 50 enforced').length
  const before = enforced()
  process.kill(first, 'SIGKILL')
  t.assert.deepEqual(
    (await digged(p, ['www.bad.example', 'A'])).status,
    'NXDOMAIN',
    'enforced from the store meanwhile'
  )
  await until('another feed process, which transfers the feed again', async () => enforced() > before, 20_000, 100)
  const second = feedProcess(rolePid)
  t.assert.ok(second !== undefined && second !== first, 'a new feed process')
  t.assert.deepEqual({ policy: schedOf(second).policy, nice: schedOf(second).nice }, expected)

  await knot.update(feedText(51, 'later.example CNAME .\n'))
  await until(
    'the NOTIFY to the new feed process, and its IXFR',
    async () => (await digged(p, ['later.example', 'A'])).status === 'NXDOMAIN',
    30_000,
    100
  )
})

test('the first loads, which the starting fronts wait for, run at normal priority; a feed process started again goes to the background before its transfer', async (t: TestContext) => {
  if (process.platform !== 'linux') return t.skip('scheduling policies are read from /proc')
  if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
  if (spawnSync('chrt', ['--version']).status !== 0) return t.skip('no chrt here: nice 19 only')
  const w = await world(t)
  const knotPort = await releasedPort()
  await startKnot(t, tempDir(t, 'filterd-knot-'), knotPort, 'feed.rpz', feedText(50))
  // The feed's primary as the feed process sees it: a TCP relay to Knot that notes, as each transfer's
  // connection comes in, the policy of every thread of the feed process making it.
  const seen: number[][] = []
  let file = ''
  const relay = createServer((socket) => {
    const role = childrenRunning(process.pid, file)[0]
    const feed = role === undefined ? undefined : feedProcess(role)
    seen.push(
      feed === undefined ? [] : readdirSync(`/proc/${feed}/task`).map((tid) => schedOf(feed, Number(tid)).policy)
    )
    const upstream = connect(knotPort, '127.0.0.1')
    socket.pipe(upstream).pipe(socket)
    upstream.on('error', () => socket.destroy())
    socket.on('error', () => upstream.destroy())
  })
  relay.listen(0, '127.0.0.1')
  await once(relay, 'listening')
  t.after(() => relay.close())
  const relayPort = (relay.address() as AddressInfo).port
  file = writeConfigFile(w, { sections: { 'rpz-feeds': knotFeedSection(relayPort, await releasedPort()) } })
  const dns = await startRole(t, 'dns', file)
  t.assert.deepEqual((await digged(dns.port, ['www.bad.example', 'A'])).status, 'NXDOMAIN', 'the feed enforced')
  t.assert.equal(seen.length, 1, 'one transfer')
  t.assert.ok(
    seen[0]!.length > 0 && seen[0]!.every((p) => p === NORMAL.policy),
    `the first: ${JSON.stringify(seen[0])}`
  )
  const first = feedProcess(dns.proc.pid!)!
  for (const tid of readdirSync(`/proc/${first}/task`).map(Number))
    t.assert.equal(schedOf(first, tid).policy, SCHED_IDLE, `thread ${tid}, once ready`)

  process.kill(first, 'SIGKILL')
  await until('the transfer of another feed process', () => seen.length > 1, 20_000, 50)
  t.assert.ok(seen[1]!.length > 0 && seen[1]!.every((p) => p === SCHED_IDLE), `the second: ${JSON.stringify(seen[1])}`)
})

test("a reload's proxy.log-level reaches the feed process", async (t: TestContext) => {
  if ((await dig(['-v']).catch(() => '')) === undefined) return digMissing(t)
  const w = await world(t)
  const zone = join(w.dir, 'f.rpz.zone')
  const write = (serial: number, names: string[]): void =>
    writeFileSync(
      zone,
      `$ORIGIN f.rpz.\n@ 300 SOA ns. admin. ${serial} 60 60 600 60\n` + names.map((n) => `${n} CNAME .\n`).join('')
    )
  write(1, ['one.example'])
  const options = (level: string): Parameters<typeof writeConfigFile>[1] => ({
    proxy: { 'log-level': level },
    sections: { 'rpz-feeds': { 'file-refresh': 1, feeds: [{ zone: 'f.rpz', file: zone }] } }
  })
  const file = writeConfigFile(w, options('warn'))
  const dns = await startRole(t, 'dns', file)
  t.assert.equal((await digged(dns.port, ['one.example', 'A'])).status, 'NXDOMAIN', 'the feed enforced')

  writeConfigFile(w, options('info'))
  dns.proc.kill('SIGHUP')
  await dns.waitForLog((l) => String(l.msg).startsWith('dns: config reloaded'), 'the reload')
  write(2, ['one.example', 'two.example'])
  // Logged at info by the feed process: only once the reload's level reached it.
  await until(
    "the feed process's info line",
    async () => dns.logs.some((l) => l.msg === 'rpz feed f.rpz: serial 2 enforced'),
    20_000,
    100
  )
  t.assert.ok(!dns.logs.some((l) => l.msg === 'rpz feed f.rpz: serial 1 enforced'), 'nothing at info before the reload')
})
