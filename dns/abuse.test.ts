// Abuse of the DNS port over TCP, against the real daemon (`filterd dns` as a child process):
// a pipelining client that never reads (server memory must stay bounded), and slowloris (a byte
// now and then must not hold a connection slot).
import { test, type TestContext } from 'node:test'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import dnsPacket from 'dns-packet'
import { CATEGORY } from '../engine/categories/index.js'
import { startRole } from '../engine/testing/daemon.js'
import { releasedPort } from '../engine/testing/ports.js'
import {
  BLOCK_V4,
  addUser,
  firstA,
  framed,
  sleep,
  udpAsk,
  world,
  writeConfigFile,
  type ConfigOptions
} from './testing/harness.js'
import { validQuery } from './testing/fuzz.js'

const cats = { 'casino.example': [CATEGORY.GAMBLING] }

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m === null ? -1 : Number(m[1]) / 1024
}

async function daemon(
  t: TestContext,
  proxy: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {}
): Promise<{ port: number; pid: number; stop: () => Promise<void> }> {
  const w = await world(t, { cats })
  await addUser(w.store, { name: 'abuser', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  const port = await releasedPort()
  const o: ConfigOptions = { listen: [`127.0.0.1:${port}`], proxy: { log: '-', ...proxy } }
  const child = await startRole(t, 'dns', writeConfigFile(w, o), env)
  // Stopped by the test itself: the temp folder's cleanup runs before startRole's, and a running
  // daemon may still be writing statistics into it.
  return { port, pid: child.proc.pid!, stop: child.stop }
}

async function tcpConnect(t: TestContext, port: number): Promise<Socket> {
  const sock = connect({ host: '127.0.0.1', port })
  t.after(() => sock.destroy())
  sock.on('error', () => {})
  await once(sock, 'connect')
  return sock
}

test("a TCP client that pipelines queries and never reads the answers cannot grow the server's memory; its connection is closed once idle", async (t: TestContext) => {
  // RSS also counts garbage not yet collected, and V8 sizes its young generation by version (Node 24's
  // holds far more than Node 20's): a small one makes RSS follow what the server keeps.
  const { port, pid, stop } = await daemon(t, { 'tcp-idle-timeout': 6000 }, { NODE_OPTIONS: '--max-semi-space-size=2' })
  // Warm up (the first answers allocate the server's steady-state buffers), then the baseline.
  t.assert.strictEqual(firstA(dnsPacket.decode(await udpAsk(port, validQuery(1, 'www.casino.example')))), BLOCK_V4)
  await sleep(300)
  const before = rssMiB(pid)
  // 3 connections × 400,000 pipelined queries (each answered locally, with an EDE: ~100 bytes), none
  // read: about 120 MB of answers, far more than the kernel's socket buffers hold, if the server took
  // them all. It must stop reading instead: the clients' own queries then stay unsent.
  const batch = Buffer.concat(
    Array.from({ length: 1000 }, (_, i) => framed(validQuery(i, `n${i}.casino.example`, 1, true)))
  )
  const conns: Socket[] = []
  for (let c = 0; c < 3; c++) {
    const sock = await tcpConnect(t, port)
    sock.pause() // never read
    for (let i = 0; i < 400; i++) sock.write(batch)
    conns.push(sock)
  }
  let peak = 0
  for (let i = 0; i < 20; i++) {
    await sleep(150)
    peak = Math.max(peak, rssMiB(pid))
  }
  const unsent = conns.map((s) => s.writableLength)
  // The server keeps answering everyone else meanwhile.
  t.assert.strictEqual(
    firstA(dnsPacket.decode(await udpAsk(port, validQuery(2, 'www.casino.example'), '127.0.0.1', 10000))),
    BLOCK_V4
  )
  t.diagnostic(
    `server RSS ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB with 3 non-reading pipelining clients; their unsent query bytes: ${unsent.join(', ')}`
  )
  // (One connection's 20 MB can mostly fit in the kernel's buffers once they have grown: the sum says
  // that the server stopped reading.)
  t.assert.ok(unsent.reduce((a, b) => a + b, 0) > 0, 'the server stopped reading from the non-reading clients')
  // Seen here: 60-90 MiB of growth (the heap of the answers it did write, and allocator slack); a server
  // that takes every query grows by 250+ MiB within this window (8 such clients: 153 MB → 1.41 GB).
  t.assert.ok(
    peak - before < 150,
    `server RSS grew by ${(peak - before).toFixed(0)} MiB (${before.toFixed(0)} → ${peak.toFixed(0)} MiB)`
  )
  // Stuck answers for the whole idle timeout: the connections are closed. (Generous: on a loaded
  // machine the server may still be working through what the kernel buffered for a while.)
  const closed = await Promise.race([
    Promise.all(conns.map(async (s) => await new Promise((resolve) => s.once('close', resolve)))).then(() => true),
    sleep(45000).then(() => false)
  ])
  t.assert.ok(closed, 'the non-reading connections were closed after tcp-idle-timeout')
  await stop()
})

test('slowloris: connections that send a byte now and then are closed at tcp-message-timeout, and new clients get in', async (t: TestContext) => {
  const { port, stop } = await daemon(t, {
    'tcp-max-connections': 20,
    'tcp-message-timeout': 1000,
    'tcp-idle-timeout': 10000
  })
  const query = framed(validQuery(7, 'www.casino.example'))
  const slow: Socket[] = []
  for (let i = 0; i < 20; i++) slow.push(await tcpConnect(t, port))
  const closedAt: number[] = []
  const started = Date.now()
  for (const s of slow) s.on('close', () => closedAt.push(Date.now() - started))
  // Each sends its query one byte every 250 ms (it would take 9 s): the idle timeout (10 s) never fires
  // on activity, only the message deadline can close them.
  let k = 0
  const drip = setInterval(() => {
    if (k < query.length) for (const s of slow) if (!s.destroyed) s.write(query.subarray(k, k + 1))
    k++
  }, 250)
  t.after(() => clearInterval(drip))
  await Promise.race([
    Promise.all(slow.map(async (s) => await new Promise((resolve) => s.once('close', resolve)))),
    sleep(5000)
  ])
  clearInterval(drip)
  t.diagnostic(`closed at ${closedAt.join(',')}`)
  t.assert.strictEqual(closedAt.length, 20, `slow connections closed by the server: ${closedAt.length} of 20`)
  t.assert.ok(Math.max(...closedAt) < 4000, `closed after ${Math.max(...closedAt)} ms`)
  // A slot is free again: a real client connects and is answered.
  const c = await tcpConnect(t, port)
  const answer = new Promise<Buffer>((resolve) => {
    let buf = Buffer.alloc(0)
    c.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d])
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)))
    })
  })
  c.write(query)
  t.assert.strictEqual(firstA(dnsPacket.decode(await answer)), BLOCK_V4)
  c.destroy()
  await stop()
})
