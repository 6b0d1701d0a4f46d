/**
 * The rpz listener's bounds, against the role as a child process: the connection cap, the idle and
 * per-request timeouts, and that clients who stop reading their AXFR hold a bounded amount of memory.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { buildCats } from '../engine/testing/store.js'
import { until } from '../engine/testing/wait.js'
import { MessageWriter, TYPE_AXFR, CLASS_IN } from '../engine/rpz-zones/message.js'
import { rpzWorld, tool } from './testing/world.js'

const G = 'global.rpz.filterd'

async function metric(httpPort: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text()
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text)
  return m === null ? NaN : Number(m[1])
}

interface Client {
  socket: Socket
  closed: boolean
}

async function openClient(t: TestContext, port: number): Promise<Client> {
  const socket = connect(port, '127.0.0.1')
  const client = { socket, closed: false }
  socket.on('close', () => (client.closed = true))
  socket.on('error', () => {})
  t.after(() => socket.destroy())
  await once(socket, 'connect')
  return client
}

function axfrQuery(zone: string): Buffer {
  const w = new MessageWriter({ id: 7, qr: false, opcode: 0, aa: false, rcode: 0 }, 512)
  w.question({ name: zone, type: TYPE_AXFR, class: CLASS_IN })
  const msg = w.finish()
  const framed = Buffer.alloc(2 + msg.length)
  framed.writeUInt16BE(msg.length)
  msg.copy(framed, 2)
  return framed
}

test('past rpz.tcp-max-connections a connection is closed on accept and counted; idle ones are closed', async (t) => {
  const w = await rpzWorld(t, { extra: '  tcp-max-connections: 4\n  tcp-idle-timeout: 4000\n' })
  const clients: Client[] = []
  for (let i = 0; i < 12; i++) clients.push(await openClient(t, w.dnsPort))
  await until('the 8 past the cap closed', () => clients.filter((c) => c.closed).length === 8)
  assert.deepEqual(clients.map((c) => c.closed).slice(0, 4), [false, false, false, false], 'the first four are served')
  assert.equal(await metric(w.httpPort, 'filterd_rpz_tcp_dropped_total'), 8)
  assert.equal(await metric(w.httpPort, 'filterd_rpz_tcp_connections'), 4)
  await until('the idle connections closed by the server', () => clients.every((c) => c.closed))
  await until('the table empty', async () => (await metric(w.httpPort, 'filterd_rpz_tcp_connections')) === 0)
  assert.match(await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), G, 'AXFR']), /bad\.test/)
})

test('a request must arrive whole within rpz.tcp-message-timeout of its first byte, however it trickles', async (t) => {
  const w = await rpzWorld(t, { extra: '  tcp-idle-timeout: 60000\n  tcp-message-timeout: 500\n' })
  const silent = await openClient(t, w.dnsPort)
  const query = axfrQuery(G)
  silent.socket.write(query.subarray(0, 5)) // the start of a request, then nothing
  const trickler = await openClient(t, w.dnsPort)
  let sent = 0
  const timer = setInterval(() => {
    if (trickler.closed || sent >= query.length) return
    trickler.socket.write(query.subarray(sent, sent + 1))
    sent++
  }, 100)
  t.after(() => clearInterval(timer))
  const quiet = await openClient(t, w.dnsPort) // sent nothing: only the (long) idle timeout applies
  await until('both slow clients closed', () => silent.closed && trickler.closed)
  assert.ok(sent < query.length, `the trickler was closed before its request was whole (${sent}/${query.length})`)
  assert.equal(quiet.closed, false, 'a connection that has not started a request waits for the idle timeout')
  const answered = await openClient(t, w.dnsPort)
  const data: Buffer[] = []
  answered.socket.on('data', (d: Buffer) => data.push(d))
  answered.socket.write(query)
  await until('a whole request answered', () => Buffer.concat(data).includes(Buffer.from('bad')))
})

test('clients that stop reading an AXFR hold a bounded amount of memory, and are closed when idle', async (t) => {
  const w = await rpzWorld(t, { extra: '  tcp-idle-timeout: 3000\n' })
  const names: Record<string, number[]> = {}
  for (let i = 0; i < 100_000; i++) names[`site-number-${i}.example`] = [20]
  await buildCats(w.store, names)
  await until('the 100,000-name zone served', async () => {
    const text = await (await fetch(`http://127.0.0.1:${w.httpPort}/zones`)).text()
    return text.includes('cat-20.rpz.filterd')
  })
  const readers: Client[] = []
  for (let i = 0; i < 5; i++) {
    const c = await openClient(t, w.dnsPort)
    c.socket.pause() // never reads: the kernel buffers fill, then the server must stop writing
    c.socket.write(axfrQuery('cat-20.rpz.filterd'))
    readers.push(c)
  }
  // The zone is about 8 MB per transfer, more than both kernels' socket buffers hold on loopback.
  await until('the transfers blocked on back-pressure', async () => {
    return (await metric(w.httpPort, 'filterd_rpz_tcp_queued_bytes')) > 0
  })
  const queued = await metric(w.httpPort, 'filterd_rpz_tcp_queued_bytes')
  assert.ok(queued <= 5 * 128 * 1024, `${queued} bytes queued in the process for 5 stalled transfers`)
  assert.equal(await metric(w.httpPort, 'filterd_rpz_tcp_connections'), 5)
  await until(
    'the stalled readers closed by the idle timeout',
    async () => (await metric(w.httpPort, 'filterd_rpz_tcp_connections')) === 0
  )
  assert.equal(await metric(w.httpPort, 'filterd_rpz_tcp_queued_bytes'), 0)
  for (const c of readers) c.socket.resume()
  await until('the clients see the close', () => readers.every((c) => c.closed))
})
