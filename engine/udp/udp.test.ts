// The batched UDP addon through its JS face: batches, truncation, zero-length datagrams, ICMP
// errors on connected sockets, SO_REUSEPORT, bind errors, large sends, close.
import { test, type TestContext } from 'node:test'
import { createSocket, type Socket } from 'node:dgram'
import { once } from 'node:events'
import { until } from '../testing/wait.js'
import { query } from '../wire/testing/build.js'
import {
  ECONNREFUSED,
  loadUdpAddon,
  openBatchUdpSocket,
  type BatchUdpSocket,
  type BatchUdpSocketOptions
} from './index.js'

const addon = loadUdpAddon()

function skipWithoutAddon(t: TestContext): boolean {
  if (!(addon instanceof Error)) return false
  if (process.env.CI !== undefined && process.env.CI !== '') throw addon
  t.skip(addon.message)
  return true
}

interface Got {
  len: number
  port: number
  bytes: Buffer
}

function open(
  t: TestContext,
  o: Partial<BatchUdpSocketOptions> & { got?: Got[]; errors?: number[] } = {}
): BatchUdpSocket {
  const got = o.got ?? []
  const errors = o.errors ?? []
  let s: BatchUdpSocket | null = null
  s = openBatchUdpSocket({
    family: 4,
    host: '127.0.0.1',
    port: 0,
    batch: 8,
    slot: 1024,
    ...o,
    onBatch(n) {
      if (n < 0) {
        errors.push(-n)
        return
      }
      for (let i = 0; i < n; i++) {
        const len = s!.rxInfo[2 * i]!
        got.push({
          len,
          port: s!.rxInfo[2 * i + 1]!,
          bytes: len < 0 ? Buffer.alloc(0) : Buffer.from(s!.rxBuf.subarray(i * s!.slot, i * s!.slot + len))
        })
      }
    }
  })
  t.after(() => s.close())
  return s
}

async function client(t: TestContext): Promise<Socket> {
  const c = createSocket('udp4')
  c.bind(0, '127.0.0.1')
  await once(c, 'listening')
  t.after(() => c.close())
  return c
}

test('receives datagrams in batches with their peer, and answers them with one sendmmsg', async (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  const got: Got[] = []
  const s = open(t, { got })
  const c = await client(t)
  const answers: Buffer[] = []
  c.on('message', (m) => answers.push(m))
  for (let i = 0; i < 20; i++) c.send(Buffer.from(`q${i}`), s.port, '127.0.0.1')
  await until('20 datagrams', () => got.length === 20, 3000)
  t.assert.deepStrictEqual(
    got.map((g) => g.bytes.toString()),
    Array.from({ length: 20 }, (_, i) => `q${i}`)
  )
  t.assert.ok(got.every((g) => g.port === c.address().port))
  // Answer all 20 through the send slots (a flush every 8: the batch size) to the client's address.
  for (let i = 0; i < 20; i++) {
    const off = s.nextSlot()
    const n = s.txBuf.write(`a${i}`, off)
    s.txAddr.set([127, 0, 0, 1], 16 * s.txCount)
    s.commit(n, c.address().port)
  }
  await until('20 answers', () => answers.length === 20, 3000)
  t.assert.deepStrictEqual(answers.map(String).sort(), Array.from({ length: 20 }, (_, i) => `a${i}`).sort())
  t.assert.strictEqual(s.sendDrops, 0)
})

test('the batches several sockets read in one event-loop turn come in one crossing, and what they queue leaves in one sendmmsg', async (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  const c = await client(t)
  const answers: string[] = []
  c.on('message', (m) => answers.push(String(m)))
  // One reply socket shared by three listeners, as a front process's listener is shared by its resolvers' sockets.
  const reply = open(t)
  const seen: number[] = []
  const listeners: BatchUdpSocket[] = []
  for (let k = 0; k < 3; k++) {
    const s = openBatchUdpSocket({
      family: 4,
      host: '127.0.0.1',
      port: 0,
      batch: 8,
      slot: 1024,
      onBatch(n) {
        seen.push(n)
        for (let i = 0; i < n; i++) {
          const len = s.rxInfo[2 * i]!
          const off = reply.nextSlot()
          s.rxBuf.copy(reply.txBuf, off, i * s.slot, i * s.slot + len)
          reply.txAddr.set([127, 0, 0, 1], 16 * reply.txCount)
          reply.commit(len, c.address().port)
        }
      }
    })
    t.after(() => s.close())
    listeners.push(s)
  }
  const sender = open(t)
  const to = Buffer.from([127, 0, 0, 1])
  // Sent in one synchronous run, so all three sockets are readable when the loop next polls.
  listeners.forEach((s, k) => {
    const q = Buffer.from(`q${k}`)
    sender.sendOne(q, q.length, to, s.port)
  })
  t.assert.strictEqual(sender.sendDrops, 0)
  await until('3 answers', () => answers.length === 3, 3000)
  t.assert.deepStrictEqual(answers.sort(), ['q0', 'q1', 'q2'])
  t.assert.deepStrictEqual(seen, [1, 1, 1])
  // Delivered socket by socket, each batch's end would flush: three sendmmsg calls.
  t.assert.strictEqual(reply.sendBatches, 1)
})

test('sends queued outside a batch callback leave once per event-loop turn, and close sends what is queued', async (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  const s = open(t)
  const c = await client(t)
  const answers: string[] = []
  c.on('message', (m) => answers.push(String(m)))
  const queue = (text: string): void => {
    const n = s.txBuf.write(text, s.nextSlot())
    s.txAddr.set([127, 0, 0, 1], 16 * s.txCount)
    s.commit(n, c.address().port)
  }
  // Three callbacks of one turn (as HTTP/2 hands each stream's query to its own): one system call.
  await new Promise<void>((resolve) =>
    setTimeout(() => {
      queue('a')
      process.nextTick(() => queue('b'))
      queueMicrotask(() => {
        queue('c')
        resolve()
      })
    }, 0)
  )
  await until('3 answers', () => answers.length === 3, 3000)
  t.assert.strictEqual(s.sendBatches, 1)
  queue('d')
  s.close()
  await until('the answer queued before close', () => answers.length === 4, 3000)
  t.assert.deepStrictEqual(answers.sort(), ['a', 'b', 'c', 'd'])
})

test('a zero-length datagram arrives with length 0, one larger than the slot with length -1, and reading goes on', async (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  const got: Got[] = []
  const s = open(t, { got, slot: 512 })
  const c = await client(t)
  c.send(Buffer.alloc(0), s.port, '127.0.0.1')
  c.send(Buffer.alloc(9000, 7), s.port, '127.0.0.1')
  c.send(Buffer.alloc(60000, 1), s.port, '127.0.0.1')
  c.send(Buffer.from('after'), s.port, '127.0.0.1')
  await until('4 datagrams', () => got.length === 4, 3000)
  t.assert.deepStrictEqual(
    got.map((g) => g.len),
    [0, -1, -1, 5]
  )
  t.assert.strictEqual(got[3]!.bytes.toString(), 'after')
})

test("a connected socket reports the peer's ICMP port unreachable as -ECONNREFUSED and keeps working", async (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  // A port nothing listens on: bind one, note it, close it.
  const gone = createSocket('udp4')
  gone.bind(0, '127.0.0.1')
  await once(gone, 'listening')
  const deadPort = gone.address().port
  gone.close()
  const errors: number[] = []
  const s = open(t, { errors, connect: { host: '127.0.0.1', port: deadPort } })
  for (let round = 0; round < 3; round++) {
    s.txBuf.write('x', s.nextSlot())
    s.commit(1, 0)
    // Each error wakes the poll again (libuv stops a poll on POLLERR; the addon restarts it).
    await until(`ICMP error ${round + 1}`, () => errors.length > round, 3000)
  }
  t.assert.ok(
    errors.every((e) => e === ECONNREFUSED),
    `errors: ${errors.join(',')}`
  )
  // Big datagrams take the one-off path and hit the same refusal without throwing.
  s.sendOne(Buffer.alloc(3000), 3000, null, 0)
})

test('SO_REUSEPORT lets several sockets share a port; without it the second bind fails with EADDRINUSE', async (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  const a = open(t, { reusePort: true })
  const b = open(t, { reusePort: true, port: a.port })
  t.assert.strictEqual(b.port, a.port)
  const plain = open(t)
  t.assert.throws(
    () => open(t, { port: plain.port }),
    (err: Error & { code?: string }) => err.code === 'EADDRINUSE'
  )
})

interface Datagram {
  readonly from: string
  readonly data: Buffer | string
}

/** Sends each datagram from a new socket on its `from` address (a new source port) to `host`:`port`. */
async function sendEach(datagrams: readonly Datagram[], host: string, port: number): Promise<void> {
  for (const [k, { from, data }] of datagrams.entries()) {
    // A pause now and then: the receiving sockets are read when the loop is idle, and their default
    // buffers hold about 250 datagrams.
    if (k % 64 === 63) await new Promise((resolve) => setTimeout(resolve, 5))
    const c = createSocket(host.includes(':') ? 'udp6' : 'udp4')
    c.bind(0, from)
    await once(c, 'listening')
    await new Promise<void>((resolve, reject) => c.send(data, port, host, (err) => (err ? reject(err) : resolve())))
    c.close()
  }
}

/** Queries from the relay 127.0.0.1. */
const fromRelay = (datagrams: readonly Buffer[]): Datagram[] => datagrams.map((data) => ({ from: '127.0.0.1', data }))

/** Each of `sources`, `perAddress` times, each datagram carrying its source's address. */
const fromEach = (sources: readonly string[], perAddress: number): Datagram[] =>
  sources.flatMap((from) => Array.from({ length: perAddress }, () => ({ from, data: from })))

/** Which of `sockets` (by number) received datagrams from each source, by the source written in them. */
function receivers(got: readonly Got[][]): Map<string, Set<number>> {
  const by = new Map<string, Set<number>>()
  got.forEach((list, n) => {
    for (const g of list) {
      const from = g.bytes.toString()
      by.set(from, (by.get(from) ?? new Set()).add(n))
    }
  })
  return by
}

/** Two sockets sharing a port, with or without steering by source address; what each receives. */
function pair(t: TestContext, family: 4 | 6, steerSockets: number): { port: number; got: Got[][] } {
  const host = family === 4 ? '127.0.0.1' : '::1'
  const got: Got[][] = [[], []]
  const a = open(t, { family, host, reusePort: true, steerSockets, got: got[0] })
  open(t, { family, host, reusePort: true, steerSockets, port: a.port, got: got[1] })
  return { port: a.port, got }
}

for (const family of [4, 6] as const) {
  test(`IPv${family}: steering by source address sends every datagram of an address to one socket, whatever its port; without it the ports spread`, async (t: TestContext) => {
    if (skipWithoutAddon(t)) return
    const host = family === 4 ? '127.0.0.1' : '::1'
    // Loopback IPv4 has 127/8 to send from; IPv6 only ::1, so one address there.
    const sources = family === 4 ? Array.from({ length: 24 }, (_, i) => `127.0.0.${i + 1}`) : ['::1']
    const perAddress = family === 4 ? 6 : 24
    const steered = pair(t, family, 2)
    await sendEach(fromEach(sources, perAddress), host, steered.port)
    await until(
      'every datagram',
      () => steered.got[0]!.length + steered.got[1]!.length === sources.length * perAddress,
      3000
    )
    const by = receivers(steered.got)
    for (const [from, sockets] of by)
      t.assert.strictEqual(sockets.size, 1, `${from} reached sockets ${[...sockets].join(', ')}`)
    if (family === 4)
      t.assert.ok(
        steered.got.every((g) => g.length > 0),
        'the addresses are spread over both sockets'
      )
    // The kernel's own choice hashes the port too: one address's 24 ports reach both sockets.
    const flow = pair(t, family, 0)
    await sendEach(fromEach([host], 24), host, flow.port)
    await until('every datagram', () => flow.got[0]!.length + flow.got[1]!.length === 24, 3000)
    t.assert.strictEqual(receivers(flow.got).get(host)?.size, 2)
  })
}

/** A query from 127.0.0.1 with an EDNS Client Subnet option (after a padding option when `afterPadding`). */
function ecsQuery(id: number, family: 1 | 2, ip: string, prefix: number, afterPadding = false): Buffer {
  const ecs = { code: 8 as const, family, sourcePrefixLength: prefix, ip }
  const padding = { code: 12 as const, length: 8 }
  return query(`q${id}.example.org`, 'A', { id, edns: { options: afterPadding ? [padding, ecs] : [ecs] } })
}

/** Which socket received the datagram with each query id. */
function socketById(got: readonly Got[][]): Map<number, number> {
  const by = new Map<number, number>()
  got.forEach((list, n) => {
    for (const g of list) by.set(g.bytes.readUInt16BE(0), n)
  })
  return by
}

test('steering with client subnets: a query goes by its ECS address (IPv4 /32, IPv6 /64, after another option too), else by its source', async (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  const got: Got[][] = [[], []]
  const a = open(t, { reusePort: true, steerSockets: 2, steerClientSubnet: true, got: got[0] })
  open(t, { reusePort: true, steerSockets: 2, steerClientSubnet: true, port: a.port, got: got[1] })
  // Query id: 1000 * group + 10 * address + repeat. Each group's addresses ask 4 times, each from its own port.
  const groups: Array<(i: number, id: number) => Buffer> = [
    (i, id) => ecsQuery(id, 1, `10.0.0.${i + 1}`, 32),
    (i, id) => ecsQuery(id, 2, `2001:db8:${i + 1}::`, 64),
    (i, id) => ecsQuery(id, 1, `10.0.0.${i + 1}`, 32, true),
    // A /24 names no subscriber, and a query without ECS has none: both by the source, 127.0.0.1.
    (i, id) => ecsQuery(id, 1, `10.0.${i + 1}.0`, 24),
    (_i, id) => query(`q${id}.example.org`, 'A', { id })
  ]
  const datagrams: Buffer[] = []
  groups.forEach((make, g) => {
    for (let i = 0; i < 20; i++) for (let r = 0; r < 4; r++) datagrams.push(make(i, 1000 * g + 10 * i + r))
  })
  await sendEach(fromRelay(datagrams), '127.0.0.1', a.port)
  await until('every datagram', () => got[0]!.length + got[1]!.length === datagrams.length, 10_000)
  const by = socketById(got)
  const socketsOf = (g: number, i: number): Set<number> =>
    new Set([0, 1, 2, 3].map((r) => by.get(1000 * g + 10 * i + r)!))
  for (const g of [0, 1, 2]) {
    const spread = new Set<number>()
    for (let i = 0; i < 20; i++) {
      const sockets = socketsOf(g, i)
      t.assert.strictEqual(sockets.size, 1, `group ${g}, address ${i}: sockets ${[...sockets].join(', ')}`)
      spread.add([...sockets][0]!)
    }
    t.assert.strictEqual(spread.size, 2, `group ${g}: 20 client subnets spread over both sockets`)
  }
  // The same ECS address after another option reaches the socket it reaches alone.
  for (let i = 0; i < 20; i++) t.assert.deepStrictEqual(socketsOf(2, i), socketsOf(0, i))
  const bySource = new Set<number>()
  for (const g of [3, 4]) for (let i = 0; i < 20; i++) for (const s of socketsOf(g, i)) bySource.add(s)
  t.assert.strictEqual(bySource.size, 1, 'queries steered by the one source address reach one socket')
  // Truncated and malformed datagrams are steered by their source too (never to a fixed socket): every
  // cut of an ECS query, from 3 bytes to one short of the whole.
  const whole = ecsQuery(4242, 2, '2001:db8:99::', 64, true)
  const source = [...bySource][0]!
  const before = got[source]!.length
  const cuts = Array.from({ length: whole.length - 3 }, (_, k) => whole.subarray(0, k + 3))
  await sendEach(fromRelay(cuts), '127.0.0.1', a.port)
  await until('the cut datagrams', () => got[source]!.length - before === cuts.length, 10_000)
  t.assert.strictEqual(got[0]!.length + got[1]!.length, datagrams.length + cuts.length)
})

test('sendOne sends a datagram larger than a slot', async (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  const s = open(t, { slot: 512 })
  const c = await client(t)
  const big = Buffer.alloc(5000, 9)
  const received = once(c, 'message') as Promise<[Buffer]>
  s.sendOne(big, big.length, Buffer.from([127, 0, 0, 1]), c.address().port)
  const [m] = await received
  t.assert.strictEqual(m.length, 5000)
})

test('after close no batch is delivered and sends are ignored', async (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  const got: Got[] = []
  const s = open(t, { got })
  const port = s.port
  s.close()
  s.close()
  const c = await client(t)
  c.send(Buffer.from('late'), port, '127.0.0.1')
  s.txBuf.write('x', s.nextSlot())
  s.commit(1, port)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.assert.strictEqual(got.length, 0)
})

test('bad options are refused with an error, not a crash', (t: TestContext) => {
  if (skipWithoutAddon(t)) return
  t.assert.throws(() => open(t, { batch: 0 }), /bad family, batch, slot or port/)
  t.assert.throws(() => open(t, { host: 'not-an-address' }), /bad host address/)
  t.assert.throws(() => open(t, { steerSockets: 2 }), /bad receiveBuffer or steerSockets/)
})
