/**
 * What abusive DoT and DoH clients may cost, with the server's memory measured (its own process:
 * `filterd dns` as a child, its resident size read from /proc) and its per-transport counters read
 * from its own /metrics (proxy.metrics-listen): handshakes that never finish, thousands of idle
 * DoT connections, HTTP/2 rapid reset and too many streams, oversized and slow bodies.
 */
import { test, type TestContext } from 'node:test'
import { readFileSync, readdirSync } from 'node:fs'
import { connect } from 'node:net'
import { once } from 'node:events'
import { startRole, type Child } from '../engine/testing/daemon.js'
import { query, writeConfigFile } from '../engine/testing/dns.js'
import { releasedPort } from '../engine/testing/ports.js'
import { until } from '../engine/testing/wait.js'
import { RESET_LIMIT } from './doh-front.js'
import {
  dohPost,
  dotConnect,
  encryptedWorld,
  h2,
  rapidReset,
  SERVER_NAME,
  type DotClient
} from './testing/encrypted.js'

/** The resident memory of a process, bytes. */
function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(m?.[1] ?? 0) * 1024
}

function fds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length
}

interface Daemon {
  dns: Child
  pid: number
  dot: number
  doh: number
  /** The value of one metric line of the daemon's /metrics (0 when absent). */
  metric(line: string): Promise<number>
}

async function daemon(t: TestContext, proxy: Record<string, unknown>, silent = false): Promise<Daemon> {
  // node:test runs after-hooks in the order they were registered: this one, registered before the
  // world's, stops the daemon before its folder is removed (else it may still be writing into it).
  const started: { stop?: () => Promise<void> } = {}
  t.after(async () => {
    await started.stop?.()
  })
  const w = await encryptedWorld(t)
  w.stub.silent = silent
  const [dot, doh, metricsPort] = [await releasedPort(), await releasedPort(), await releasedPort()]
  const file = writeConfigFile(w, {
    proxy: {
      'dot-listen': [`127.0.0.1:${dot}`],
      'doh-listen': [`127.0.0.1:${doh}`],
      'tls-cert': w.cert,
      'tls-key': w.key,
      'server-name': SERVER_NAME,
      'metrics-listen': `127.0.0.1:${metricsPort}`,
      ...proxy
    }
  })
  const dns = await startRole(t, 'dns', file)
  started.stop = dns.stop
  const metric = async (line: string): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    const found = text.split('\n').find((l) => l.startsWith(line + ' '))
    return found === undefined ? 0 : Number(found.slice(line.length + 1))
  }
  return { dns, pid: dns.proc.pid!, dot, doh, metric }
}

const MB = 1024 * 1024

test('TLS handshakes that never finish are capped, timed out and counted; memory and descriptors stay bounded', async (t: TestContext) => {
  const d = await daemon(t, { 'tcp-max-connections': 200, 'tcp-max-per-source': 1000, 'tcp-message-timeout': 1000 })
  const before = rss(d.pid)
  // 400 connections that send nothing, and 100 that send half a ClientHello.
  const socks = await Promise.all(
    Array.from({ length: 500 }, async (_, i) => {
      const s = connect(d.dot, '127.0.0.1')
      s.on('error', () => {})
      await once(s, 'connect')
      if (i >= 400) s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc]))
      return s
    })
  )
  const peak = rss(d.pid)
  t.assert.ok(fds(d.pid) < 200 + 100, `descriptors held: ${fds(d.pid)}`)
  await until(
    'every half-open connection closed by the server',
    () => socks.every((s) => s.destroyed || s.readableEnded),
    30_000,
    50
  )
  for (const s of socks) s.destroy()
  t.diagnostic(`RSS ${(before / MB).toFixed(1)} MB before, ${(peak / MB).toFixed(1)} MB with 500 half-open handshakes`)
  t.assert.ok(peak - before < 64 * MB, `RSS grew by ${((peak - before) / MB).toFixed(1)} MB`)
  await until(
    'the counters on /metrics',
    async () =>
      (await d.metric('filterd_dns_transport_refused_total{process="dns-0",transport="dot"}')) >= 250 &&
      (await d.metric('filterd_dns_transport_handshake_failures_total{process="dns-0",transport="dot"}')) >= 150,
    30_000,
    500
  )
  // And it still serves.
  const c = await dotConnect(d.dot)
  c.send([query('casino.example', 'A', { id: 5 })])
  t.assert.strictEqual((await c.until(1))[0]!.id, 5)
  c.close()
})

test('thousands of idle DoT connections: held open, memory per connection measured, the server still answers', async (t: TestContext) => {
  const n = 2000
  const d = await daemon(t, { 'tcp-max-connections': 5000, 'tcp-max-per-source': 5000, 'tcp-idle-timeout': 120_000 })
  const before = rss(d.pid)
  const clients: DotClient[] = []
  for (let i = 0; i < n; i += 100)
    clients.push(...(await Promise.all(Array.from({ length: 100 }, async () => await dotConnect(d.dot)))))
  t.after(() => {
    for (const c of clients) c.close()
  })
  await until(
    'the open connections on /metrics',
    async () => (await d.metric('filterd_dns_transport_connections{process="dns-0",transport="dot"}')) === n,
    30_000,
    500
  )
  const held = rss(d.pid)
  const perConnection = (held - before) / n
  t.diagnostic(
    `${n} idle DoT connections: RSS ${(before / MB).toFixed(1)} -> ${(held / MB).toFixed(1)} MB, ${(perConnection / 1024).toFixed(1)} KiB each`
  )
  t.assert.ok(perConnection < 100 * 1024, `${(perConnection / 1024).toFixed(1)} KiB per idle connection`)
  t.assert.ok(clients.every((c) => !c.sock.destroyed))
  const c = await dotConnect(d.dot)
  c.send([query('casino.example', 'A', { id: 6 })])
  t.assert.strictEqual((await c.until(1))[0]!.id, 6)
  c.close()
})

test('HTTP/2 rapid reset: a client that resets its streams is disconnected, resets counted, memory bounded', async (t: TestContext) => {
  const d = await daemon(t, { 'upstream-timeout': 5000 }, true)
  const before = rss(d.pid)
  const session = h2(t, d.doh)
  await once(session, 'connect')
  const msg = query('www.example.org', 'A')
  const sent = await rapidReset(session, msg, 5000, 10)
  // The server's side: the resets counted, past RESET_LIMIT the connection closed (no DoH connection open).
  await until(
    'resets on /metrics, and the connection closed',
    async () =>
      (await d.metric('filterd_dns_transport_resets_total{process="dns-0",transport="doh"}')) > RESET_LIMIT &&
      (await d.metric('filterd_dns_transport_connections{process="dns-0",transport="doh"}')) === 0,
    30_000,
    500
  )
  const after = rss(d.pid)
  t.diagnostic(`${sent} streams opened and reset; RSS ${(before / MB).toFixed(1)} -> ${(after / MB).toFixed(1)} MB`)
  t.assert.ok(after - before < 64 * MB)
})

test('HTTP/2: no more streams in flight than doh-max-streams; oversized and slow bodies are refused', async (t: TestContext) => {
  const d = await daemon(t, { 'doh-max-streams': 20, 'upstream-timeout': 4000, 'tcp-message-timeout': 1000 }, true)
  const session = h2(t, d.doh)
  const msg = query('www.example.org', 'A')
  // 100 queries at once to a silent upstream: at most 20 streams are open, so the rest wait.
  const pending = Array.from({ length: 100 }, async () => await dohPost(session, msg).catch(() => undefined))
  await until(
    'queries taken',
    async () => (await d.metric('filterd_dns_transport_queries_total{process="dns-0",transport="doh"}')) >= 20,
    30_000,
    500
  )
  t.assert.strictEqual(
    await d.metric('filterd_dns_transport_queries_total{process="dns-0",transport="doh"}'),
    20,
    'only doh-max-streams queries in flight'
  )
  // Oversized: refused on its declared length, before any body.
  const other = h2(t, d.doh)
  const big = other.request(
    {
      ':method': 'POST',
      ':path': '/dns-query',
      'content-type': 'application/dns-message',
      'content-length': 1_000_000
    },
    { endStream: false }
  )
  big.on('error', () => {})
  const [bigHeaders] = (await once(big, 'response')) as [Record<string, unknown>]
  t.assert.strictEqual(bigHeaders[':status'], 413)
  big.destroy()
  // Slow: a body that never ends gets 408 at the message deadline.
  const slow = other.request({ ':method': 'POST', ':path': '/dns-query', 'content-type': 'application/dns-message' })
  slow.on('error', () => {})
  slow.write(msg.subarray(0, 4))
  const [headers] = (await once(slow, 'response')) as [Record<string, unknown>]
  t.assert.strictEqual(headers[':status'], 408)
  slow.destroy()
  await Promise.all(pending)
})
