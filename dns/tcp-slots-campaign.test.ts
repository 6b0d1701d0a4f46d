// The TCP slots one address can take, against the real daemon (`filterd dns` as a child process),
// at a size CI can afford: one address holding every connection it can (idle ones, and slowloris
// clients that reconnect as soon as they are closed) must not keep another address out; nor must
// a table filled with idle connections from many addresses. The sizes can be raised for a
// campaign-sized run (docs/reliability.md): FILTERD_TCP_CAMPAIGN="idle,slowloris" (default 1000,100).
import { test, type TestContext } from 'node:test'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import dnsPacket from 'dns-packet'
import { startRole } from '../engine/testing/daemon.js'
import { releasedPort } from '../engine/testing/ports.js'
import { until } from '../engine/testing/wait.js'
import { framed, sleep, world, writeConfigFile } from './testing/harness.js'
import { validQuery } from './testing/fuzz.js'

const [IDLE, SLOWLORIS] = (process.env.FILTERD_TCP_CAMPAIGN ?? '1000,100').split(',').map(Number) as [number, number]
const TRIES = 100

async function daemon(t: TestContext, proxy: Record<string, unknown>): Promise<{ port: number; metricsPort: number }> {
  const w = await world(t)
  const port = await releasedPort()
  const metricsPort = await releasedPort()
  const file = writeConfigFile(w, {
    listen: [`127.0.0.1:${port}`],
    proxy: { 'metrics-listen': `127.0.0.1:${metricsPort}`, ...proxy }
  })
  await startRole(t, 'dns', file)
  return { port, metricsPort }
}

// Opens `n` connections from `from`, 100 at a time; resolves with those the server kept.
async function holdIdle(t: TestContext, port: number, n: number, from: (i: number) => string): Promise<Socket[]> {
  const open: Socket[] = []
  for (let i = 0; i < n; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, n - i) }, async (_, k) => {
        const sock = connect({ host: '127.0.0.1', port, localAddress: from(i + k) })
        t.after(() => sock.destroy())
        sock.on('error', () => {})
        await Promise.race([once(sock, 'connect'), once(sock, 'close')])
        open.push(sock)
      })
    )
  }
  await sleep(300) // the refused ones are closed by now
  return open.filter((s) => !s.destroyed && s.readyState === 'open')
}

// Clients from `from` that connect, send one byte of a query and, once closed, come back.
function slowloris(
  t: TestContext,
  port: number,
  n: number,
  from: string
): { stop: () => void; connects: () => number } {
  let stopped = false
  let connects = 0
  const one = (): void => {
    if (stopped) return
    connects++
    const sock = connect({ host: '127.0.0.1', port, localAddress: from })
    sock.on('error', () => {})
    sock.on('connect', () => sock.write(Buffer.from([0])))
    sock.on('close', () => {
      setTimeout(one, 20)
    })
    t.after(() => sock.destroy())
  }
  for (let i = 0; i < n; i++) one()
  return {
    stop: () => {
      stopped = true
    },
    connects: () => connects
  }
}

// One query over a new TCP connection from `from`: true when its answer came.
async function askOverTcp(port: number, from: string, id: number): Promise<boolean> {
  const sock = connect({ host: '127.0.0.1', port, localAddress: from })
  sock.on('error', () => {})
  try {
    let buf = Buffer.alloc(0)
    const answered = new Promise<boolean>((resolve) => {
      sock.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d])
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0))
          resolve(dnsPacket.decode(buf.subarray(2)).id === id)
      })
      sock.on('close', () => resolve(false))
      setTimeout(() => resolve(false), 5000).unref()
    })
    sock.on('connect', () => sock.write(framed(validQuery(id, `try${id}.example`))))
    return await answered
  } finally {
    sock.destroy()
  }
}

async function metric(metricsPort: number, line: string): Promise<number> {
  let value = -1
  // Snapshots are written every 5 s.
  await until(
    line,
    async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
      const found = text.split('\n').find((l) => l.startsWith(line + ' '))
      value = found === undefined ? -1 : Number(found.slice(line.length + 1))
      return value > 0
    },
    20_000,
    250
  )
  return value
}

test(`one address holding every TCP connection it can (${IDLE} idle, ${SLOWLORIS} slowloris reconnecting) keeps no other address out: ${TRIES} of ${TRIES} served`, async (t: TestContext) => {
  const { port, metricsPort } = await daemon(t, {})
  const held = await holdIdle(t, port, IDLE, () => '127.0.0.2')
  const loris = slowloris(t, port, SLOWLORIS, '127.0.0.2')
  await sleep(500)
  let served = 0
  for (let i = 0; i < TRIES; i++) if (await askOverTcp(port, '127.0.0.3', i + 1)) served++
  loris.stop()
  t.diagnostic(
    `127.0.0.2 kept ${held.length} of ${IDLE} idle connections; ${loris.connects()} slowloris connects; 127.0.0.3 served ${served} of ${TRIES}`
  )
  t.assert.ok(held.length <= 64, `the per-source cap (default 64) holds: ${held.length} kept`)
  t.assert.strictEqual(served, TRIES)
  t.assert.ok(
    (await metric(metricsPort, 'filterd_dns_tcp_refused_total{process="dns-0",reason="per-source"}')) >= IDLE - 64
  )
})

test(`a table full of idle connections from many addresses closes the oldest for a new client: ${TRIES} of ${TRIES} served`, async (t: TestContext) => {
  const max = Math.min(IDLE, 1000)
  // A long idle timeout (a tenth of it at a full table is still a minute): only eviction makes room.
  const { port, metricsPort } = await daemon(t, { 'tcp-max-connections': max, 'tcp-idle-timeout': 600_000 })
  // 50 per address: under the per-source cap, so only the table's size stops them.
  const held = await holdIdle(t, port, max, (i) => `127.0.1.${1 + Math.floor(i / 50)}`)
  t.assert.strictEqual(held.length, max, 'the table is full')
  let served = 0
  for (let i = 0; i < TRIES; i++) if (await askOverTcp(port, '127.0.0.3', i + 1)) served++
  t.diagnostic(`table of ${max} full of idle connections; 127.0.0.3 served ${served} of ${TRIES}`)
  t.assert.strictEqual(served, TRIES)
  t.assert.ok(
    (await metric(metricsPort, 'filterd_dns_tcp_evicted_total{process="dns-0",reason="idle"}')) >= 1,
    'the first new client closed an idle one (the next ones took the slot it left)'
  )
})
