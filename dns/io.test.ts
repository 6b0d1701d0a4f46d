// proxy.io: the fallback to node:dgram, the native front processes on SO_REUSEPORT, and bad
// datagrams on both UDP I/O paths.
import { test, type TestContext } from 'node:test'
import { createSocket, type Socket } from 'node:dgram'
import { once } from 'node:events'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import dnsPacket from 'dns-packet'
import { CATEGORY } from '../engine/categories/index.js'
import { FILTERD, startFailureLine, startRole } from '../engine/testing/daemon.js'
import { until } from '../engine/testing/wait.js'
import { releasedPort } from '../engine/testing/ports.js'
import { childrenRunning } from '../engine/testing/processes.js'
import { metricsDir, readSnapshots } from '../engine/metrics/index.js'
import { DnsMetrics, type DnsSnapshot } from './metrics.js'
import { loadUdpAddon, openBatchUdpSocket } from '../engine/udp/index.js'
import { NativeUdpFront, type BatchSink } from './native-udp-front.js'
import {
  BLOCK_V4,
  addUser,
  ask,
  firstA,
  makeConfig,
  query,
  rawQuery,
  server,
  sleep,
  udpAsk,
  world,
  writeConfigFile,
  type World
} from './testing/harness.js'

const MISSING_ADDON = { FILTERD_UDP_ADDON: '/nonexistent/filterd_udp.node' }
const cats = { 'casino.example': [CATEGORY.GAMBLING] }
const STEERED_PROCESSES = 2

function nativeMissing(t: TestContext): boolean {
  const addon = loadUdpAddon()
  if (!(addon instanceof Error)) return false
  if (process.env.CI !== undefined && process.env.CI !== '') throw addon
  t.skip(addon.message)
  return true
}

test('proxy.io auto without the addon: node:dgram, one JSON warning line, the startup line and the metrics say so', async (t: TestContext) => {
  const w = await world(t, { cats })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  const port = await releasedPort()
  const file = writeConfigFile(w, { listen: [`127.0.0.1:${port}`], proxy: { io: 'auto', 'log-level': 'info' } })
  const child = await startRole(t, 'dns', file, MISSING_ADDON)
  t.assert.strictEqual(firstA(await ask(port, 'casino.example', 'A')), BLOCK_V4)
  const warnings = child.logs.filter((l) => l.level === 40)
  t.assert.strictEqual(warnings.length, 1, JSON.stringify(child.logs))
  t.assert.match(String(warnings[0]!.msg), /proxy\.io auto: using node:dgram/)
  t.assert.strictEqual(warnings[0]!.io, 'dgram')
  t.assert.match(String(warnings[0]!.reason), /native UDP addon did not load/)
  const started = child.logs.find((l) => l.msg === 'dns started') as { endpoints?: string[] } | undefined
  t.assert.match(String(started?.endpoints?.[0]), /\(udp io dgram\)$/)
  // The metrics snapshot is written on a timer: wait for the first one.
  const dir = metricsDir(makeConfig(w))
  await until('the condition', async () => (await readSnapshots(dir)).size > 0, 15_000)
  const snaps = await readSnapshots(dir)
  t.assert.deepStrictEqual(
    [...snaps.values()].map((s) => s.io),
    ['dgram']
  )
  await child.stop()
})

test('proxy.udp-steering address on node:dgram warns that it does not steer, and the processes still answer', async (t: TestContext) => {
  const w = await world(t, { cats })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  const port = await releasedPort()
  const file = writeConfigFile(w, {
    listen: [`127.0.0.1:${port}`],
    proxy: { io: 'dgram', processes: 2, 'udp-steering': 'address', 'log-level': 'info' }
  })
  const child = await startRole(t, 'dns', file)
  t.assert.strictEqual(firstA(await ask(port, 'casino.example', 'A')), BLOCK_V4)
  const steering = child.logs.filter(
    (l) => l.level === 40 && /udp-steering address needs the native/.test(String(l.msg))
  )
  t.assert.ok(steering.length > 0, JSON.stringify(child.logs))
  const started = child.logs.find((l) => l.msg === 'dns started') as { endpoints?: string[] } | undefined
  t.assert.doesNotMatch(String(started?.endpoints?.[0]), /steered/)
  await child.stop()
})

test('proxy.io native without the addon refuses to start with one line naming the key', async (t: TestContext) => {
  const w = await world(t)
  const file = writeConfigFile(w, { proxy: { io: 'native' } })
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [FILTERD, 'dns', '--config', file],
      { env: { ...process.env, ...MISSING_ADDON }, timeout: 30_000 },
      (err, _stdout, stderr) => {
        resolve({ code: (err as { code?: number } | null)?.code ?? 0, stderr })
      }
    )
  })
  t.assert.notStrictEqual(code, 0)
  const line = startFailureLine(stderr)
  t.assert.match(line.err.message, /proxy\.io: native, but the native UDP addon did not load/)
})

test('native I/O: several front processes on one port (SO_REUSEPORT) each receive queries, none is lost or answered twice', async (t: TestContext) => {
  if (nativeMissing(t)) return
  const w = await world(t, { cats })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  const port = await releasedPort()
  const processes = 3
  const file = writeConfigFile(w, { listen: [`127.0.0.1:${port}`], proxy: { io: 'native', processes } })
  const child = await startRole(t, 'dns', file)
  // The kernel picks a socket by the client's address and port: many client sockets, a few queries each.
  const clients = 40
  const perClient = 5
  const answers = new Map<string, number>()
  const sockets: Socket[] = []
  t.after(() => {
    for (const s of sockets) s.close()
  })
  for (let c = 0; c < clients; c++) {
    const s = createSocket('udp4')
    s.bind(0, '127.0.0.1')
    await once(s, 'listening')
    sockets.push(s)
    s.on('message', (m: Buffer) => {
      const p = dnsPacket.decode(m)
      const key = `${c}/${p.id ?? -1}`
      answers.set(key, (answers.get(key) ?? 0) + 1)
    })
  }
  for (let c = 0; c < clients; c++) {
    for (let i = 0; i < perClient; i++) {
      // Blocked (answered by the front) and forwarded (answered through the upstream sockets).
      sockets[c]!.send(
        query(i % 2 === 0 ? `n${c}-${i}.casino.example` : `n${c}-${i}.example.org`, 'A', { id: i + 1 }),
        port,
        '127.0.0.1'
      )
    }
  }
  await until('the condition', () => answers.size === clients * perClient, 20_000)
  await sleep(300) // a duplicate would arrive right after its twin
  t.assert.ok(
    [...answers.values()].every((n) => n === 1),
    'every query answered exactly once'
  )
  // Each process publishes its counters (every 5 s): all received some, and they add up.
  const dir = metricsDir(makeConfig(w))
  await until(
    'the condition',
    async () => {
      const snaps = [...(await readSnapshots<DnsSnapshot>(dir)).values()]
      return snaps.length === processes && snaps.reduce((sum, s) => sum + s.queries, 0) === clients * perClient
    },
    20_000
  )
  const snaps = [...(await readSnapshots<DnsSnapshot>(dir)).values()]
  t.assert.ok(
    snaps.every((s) => s.queries > 0),
    `queries per process: ${snaps.map((s) => s.queries).join(', ')}`
  )
  t.assert.ok(snaps.every((s) => s.io === 'native'))
  await child.stop()
})

test('native I/O, proxy.udp-steering address: each client address reaches one front process, whatever its source ports, so each caches only its share', async (t: TestContext) => {
  if (nativeMissing(t)) return
  const { w, port, child } = await startSteered(t, { 'log-level': 'info' })
  const started = child.logs.find((l) => l.msg === 'dns started') as { endpoints?: string[] } | undefined
  t.assert.match(String(started?.endpoints?.[0]), /\(udp io native, steered by address\)/)
  // 16 addresses of 127/8, each asking from 6 source ports: by address and port (the kernel's
  // choice) most addresses would reach both processes and be cached twice.
  const addresses = Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 2}`)
  for (const from of addresses) for (let i = 0; i < 6; i++) await askFrom(t, from, port, `n${i}.casino.example`)
  await assertCachedOnce(t, w, STEERED_PROCESSES, addresses.length)
  // A front process killed: its socket leaves the group, and the addresses steered to it are answered
  // by the other (the kernel's own choice) until it is back; none goes unanswered.
  const fronts = childrenRunning(child.proc.pid!, 'cluster-worker.js')
  t.assert.strictEqual(fronts.length, STEERED_PROCESSES)
  process.kill(fronts[0]!, 'SIGKILL')
  // Its socket leaves the group when the exit closes it, a moment after its command line is gone.
  await until('the killed process has closed its socket', () => udpSocketsOn(port) === STEERED_PROCESSES - 1, 5000)
  for (const from of addresses) await askFrom(t, from, port, 'after.casino.example')
  await until(
    'the process is back',
    () => childrenRunning(child.proc.pid!, 'cluster-worker.js').length === STEERED_PROCESSES,
    10_000
  )
  for (const from of addresses) await askFrom(t, from, port, 'back.casino.example')
  await child.stop()
})

test('native I/O, proxy.udp-steering address with proxy.client-subnet: each EDNS Client Subnet address reaches one front process, though every query comes from one relay', async (t: TestContext) => {
  if (nativeMissing(t)) return
  const { w, port, child } = await startSteered(t, { 'client-subnet': true })
  // One relay, 127.0.0.1, asking for 16 subscribers (their /32 in ECS), 6 source ports each.
  const subscribers = Array.from({ length: 16 }, (_, i) => `10.9.0.${i + 1}`)
  for (const ecs of subscribers)
    for (let i = 0; i < 6; i++) await askFrom(t, '127.0.0.1', port, `n${i}.casino.example`, ecs)
  await assertCachedOnce(t, w, STEERED_PROCESSES, subscribers.length)
  await child.stop()
})

/** Two front processes steered by address (native I/O), with `proxy` added to their config. */
async function startSteered(
  t: TestContext,
  proxy: Record<string, unknown>
): Promise<{ w: World; port: number; child: Awaited<ReturnType<typeof startRole>> }> {
  const w = await world(t, { cats })
  const port = await releasedPort()
  const file = writeConfigFile(w, {
    listen: [`127.0.0.1:${port}`],
    proxy: { io: 'native', processes: STEERED_PROCESSES, 'udp-steering': 'address', ...proxy }
  })
  return { w, port, child: await startRole(t, 'dns', file) }
}

/** That the processes cache `clients` addresses in all, each in one process, and every process some. */
async function assertCachedOnce(t: TestContext, w: World, processes: number, clients: number): Promise<void> {
  const perProcess = await cachedPerProcess(w, processes)
  t.assert.strictEqual(
    perProcess.reduce((sum, n) => sum + n, 0),
    clients,
    `addresses cached per process: ${perProcess.join(', ')}`
  )
  t.assert.ok(
    perProcess.every((n) => n > 0),
    `every process serves some: ${perProcess.join(', ')}`
  )
}

/** Each DNS process's cached addresses, from the metrics snapshots written after this call (every 5 s). */
async function cachedPerProcess(w: World, processes: number): Promise<number[]> {
  const since = Date.now()
  const dir = metricsDir(makeConfig(w))
  const cached = async (): Promise<number[]> =>
    [...(await readSnapshots<DnsSnapshot>(dir)).values()]
      .filter((s) => s.updated > since)
      .map((s) => s.policyCachedAddresses ?? 0)
  await until('every process publishes its cache', async () => (await cached()).length === processes, 20_000)
  return cached()
}

/**
 * Asks `name` from a new socket on `from` (a new source port), with `ecs` as a /32 EDNS Client Subnet
 * when given; fails after 2 s without an answer.
 */
async function askFrom(t: TestContext, from: string, port: number, name: string, ecs?: string): Promise<void> {
  const s = createSocket('udp4')
  t.after(() => s.close())
  s.bind(0, from)
  await once(s, 'listening')
  const answered = once(s, 'message', { signal: AbortSignal.timeout(2000) })
  const edns =
    ecs === undefined ? {} : { edns: { options: [{ code: 8 as const, family: 1, sourcePrefixLength: 32, ip: ecs }] } }
  s.send(query(name, 'A', edns), port, '127.0.0.1')
  await answered.catch((err: unknown) => {
    throw new Error(`no answer to ${name} from ${from}`, { cause: err })
  })
}

/** The UDP sockets bound to `port` on this host (/proc/net/udp: local address `ADDR:PORT` in hex). */
function udpSocketsOn(port: number): number {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  return readFileSync('/proc/net/udp', 'utf8')
    .split('\n')
    .slice(1)
    .filter((line) => line.trim().split(/\s+/)[1]?.endsWith(hex) === true).length
}

for (const io of ['native', 'dgram'] as const) {
  test(`${io} I/O: malformed, zero-length and oversized datagrams never stop the front`, async (t: TestContext) => {
    if (io === 'native' && nativeMissing(t)) return
    const w = await world(t, { cats })
    await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
    const metrics = new DnsMetrics()
    const s = await server(t, w, { proxy: { io }, metrics })
    t.assert.strictEqual(s.io, io)
    const c = createSocket('udp4')
    t.after(() => c.close())
    const junk = [
      Buffer.alloc(0),
      Buffer.from([1, 2, 3]),
      Buffer.alloc(12, 0xff),
      rawQuery([Buffer.alloc(70, 0x61), 'example']), // a label longer than 63
      Buffer.concat([query('casino.example', 'A'), Buffer.alloc(20)]),
      Buffer.alloc(9000, 0x41),
      Buffer.alloc(65000, 0)
    ]
    for (let round = 0; round < 20; round++) for (const b of junk) c.send(b, s.port, '127.0.0.1')
    await sleep(200)
    t.assert.strictEqual(firstA(await ask(s.port, 'casino.example', 'A')), BLOCK_V4)
    t.assert.strictEqual(firstA(await ask(s.port, 'fine.example', 'A')), '198.51.100.10')
    // A query as large as the slot allows is still read (and refused as malformed: trailing bytes).
    const answer = dnsPacket.decode(
      await udpAsk(s.port, Buffer.concat([query('x.example', 'A', { id: 9 }), Buffer.alloc(4000)]))
    )
    t.assert.strictEqual(answer.id, 9)
    // The native front drops a datagram larger than its slot unread and counts it for /metrics.
    const { udpOversized } = metrics.snapshot()
    if (io === 'native') t.assert.ok(udpOversized! > 0, 'oversized datagrams counted')
    else t.assert.strictEqual(udpOversized, 0)
  })
}

test('native front: a free port (0) is its own, not shared by SO_REUSEPORT; a configured port is shared by the front processes', async (t: TestContext) => {
  if (nativeMissing(t)) return
  const sink: BatchSink = { submit: () => undefined, endBatch: () => undefined }
  const free = NativeUdpFront.bind('127.0.0.1', 0, 4, sink)
  t.after(() => free.close())
  // With SO_REUSEPORT on both, this bind would succeed, and the kernel would split datagrams
  // between two servers: the kernel can also give a free port already held that way.
  let shared: string
  try {
    const other = openBatchUdpSocket({
      family: 4,
      host: '127.0.0.1',
      port: free.port,
      reusePort: true,
      batch: 1,
      slot: 512,
      onBatch: () => undefined
    })
    other.close()
    shared = 'bound beside the front'
  } catch (err) {
    shared = (err as Error & { code?: string }).code ?? String(err)
  }
  t.assert.strictEqual(shared, 'EADDRINUSE')
  const port = await releasedPort()
  const a = NativeUdpFront.bind('127.0.0.1', port, 4, sink)
  t.after(() => a.close())
  const b = NativeUdpFront.bind('127.0.0.1', port, 4, sink)
  t.after(() => b.close())
  t.assert.strictEqual(b.port, a.port)
})
