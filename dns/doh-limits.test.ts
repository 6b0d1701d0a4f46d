// What one source may hold of the DoH front (./doh-front.ts), on real TLS sockets from several
// loopback addresses (127/8 is all loopback): the per-source cap and the eviction of idle
// connections (one address keeping the whole table alive with PINGs leaves room for another), the
// deadlines of a preface, a frame and a header block once begun (not renewed by each byte), PINGs
// that are not activity, and the reset budget of a source across its connections.
import { test, type TestContext } from 'node:test'
import { once } from 'node:events'
import { connect as http2Connect, constants as h2c, type ClientHttp2Session } from 'node:http2'
import { connect as netConnect } from 'node:net'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import { silentLogger } from '../engine/log/index.js'
import { compileAddressSet } from '../engine/net/client-address.js'
import { query } from '../engine/testing/dns.js'
import { tempDir } from '../engine/testing/temp.js'
import { writeTestCertificate } from '../engine/testing/tls.js'
import { until } from '../engine/testing/wait.js'
import { CertificateSource } from '../engine/tls/certificates.js'
import {
  DohFront,
  RESET_LIMIT,
  SOURCE_INFLIGHT_CONNECTIONS,
  SOURCE_RESET_BURST,
  SOURCE_RESETS_PER_SECOND,
  type DohFrontOptions
} from './doh-front.js'
import { dohPost, rapidReset } from './testing/encrypted.js'
import { TransportCounters } from './transport-counters.js'
import type { QueryHandler } from './udp-front.js'

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')
/** An empty SETTINGS frame. */
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])

interface Front {
  port: number
  counters: TransportCounters
  /** Queries that reached the dispatcher. */
  asked: () => number
}

// A DoH front over TLS on 127.0.0.1, its queries answered by `onQuery` (by default at once, echoed).
async function startFront(
  t: TestContext,
  o: Partial<DohFrontOptions>,
  onQuery: QueryHandler = (msg, peer) => peer.channel.send(peer, msg, msg.length, true)
): Promise<Front> {
  const { cert, key } = writeTestCertificate(tempDir(t), 'dns.test')
  const certificates = new CertificateSource({ cert, key }, silentLogger())
  const counters = new TransportCounters('doh')
  let asked = 0
  const front = new DohFront({
    certificates,
    maxStreams: 100,
    maxConnections: 20,
    maxPerSource: 20,
    idleTimeoutMs: 60_000,
    messageTimeoutMs: 10_000,
    maxFrame: 4096,
    trusted: compileAddressSet([]),
    logger: silentLogger(),
    onQuery: (msg, peer) => {
      asked++
      onQuery(msg, peer)
    },
    counters,
    httpCounters: new TransportCounters('doh-http'),
    ...o
  })
  t.after(async () => {
    await front.close()
    certificates.close()
  })
  return { port: await front.listenTls('127.0.0.1', 0, 4), counters, asked: () => asked }
}

/** An HTTP/2 session to `port` from the loopback address `from` (over `sock` when given). */
function session(port: number, from: string, sock = tlsFrom(port, from)): ClientHttp2Session {
  const s = http2Connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, createConnection: () => sock })
  s.on('error', () => {})
  return s
}

/** A TLS connection (ALPN h2) to 127.0.0.1:`port` from the loopback address `from`. */
function tlsFrom(port: number, from: string): TLSSocket {
  const raw = netConnect({ host: '127.0.0.1', port, localAddress: from })
  return tlsConnect({ socket: raw, rejectUnauthorized: false, ALPNProtocols: ['h2'], servername: 'dns.test' })
}

/** A raw TLS connection (ALPN h2) to `port` from `from`, its handshake done; `isClosed` says when it closed. */
async function rawH2(
  t: TestContext,
  port: number,
  from: string
): Promise<{ sock: TLSSocket; isClosed: () => boolean }> {
  const sock = tlsFrom(port, from)
  sock.on('error', () => {})
  sock.on('data', () => {})
  t.after(() => sock.destroy())
  let closed = false
  sock.on('close', () => (closed = true))
  await once(sock, 'secureConnect')
  return { sock, isClosed: () => closed }
}

/** Writes `bytes` one at a time, every `everyMs`, then `more()` over and over, until the socket closes. */
async function trickle(
  sock: TLSSocket,
  bytes: Buffer,
  everyMs: number,
  more: () => Buffer = () => bytes
): Promise<void> {
  let data = bytes
  let at = 0
  while (!sock.destroyed) {
    if (at === data.length) {
      data = more()
      at = 0
    }
    sock.write(data.subarray(at, at + 1))
    at++
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/** One DoH query from a new connection from `from`: served (200) within `ms`, or not. */
async function servedOnce(port: number, from: string, ms: number): Promise<boolean> {
  const s = session(port, from)
  const timer = setTimeout(() => s.destroy(), ms)
  try {
    return (await dohPost(s, query('www.example.org', 'A'))).status === 200
  } catch {
    return false
  } finally {
    clearTimeout(timer)
    s.destroy()
  }
}

test('DoH: one address holding every connection it can, kept alive with PINGs, leaves room: another address is served in 99 of 100 tries', async (t: TestContext) => {
  const max = 20
  const f = await startFront(t, { maxConnections: max, maxPerSource: max })
  // The holder: `max` connections from 127.0.0.1, each pinging every 100 ms, each reopened as soon as it closes.
  let holding = true
  const held = new Set<ClientHttp2Session>()
  const hold = (): void => {
    if (!holding) return
    const s = session(f.port, '127.0.0.1')
    held.add(s)
    const ping = setInterval(() => {
      if (!s.closed && !s.destroyed && s.socket !== undefined && s.socket !== null) s.ping(() => {})
    }, 100)
    s.on('close', () => {
      clearInterval(ping)
      held.delete(s)
      setTimeout(hold, 10)
    })
  }
  t.after(() => {
    holding = false
    for (const s of held) s.destroy()
  })
  for (let i = 0; i < max; i++) hold()
  await until('the holder has the whole table', () => f.counters.open() === max, 30_000, 20)
  let served = 0
  for (let i = 0; i < 100; i++) {
    if (await servedOnce(f.port, '127.0.0.2', 10_000)) served++
    // The holder takes the freed slot back before the next try.
    await until('the holder has the table again', () => f.counters.open() === max, 30_000, 5)
  }
  t.assert.ok(served >= 99, `${served} of 100 served`)
  t.assert.ok((f.counters.slots()?.evictedIdle ?? 0) > 0, 'room made by closing idle connections')
})

test('DoH: one address holds at most tcp-max-per-source connections; another address still connects', async (t: TestContext) => {
  const f = await startFront(t, { maxConnections: 20, maxPerSource: 5 })
  const sessions: ClientHttp2Session[] = []
  t.after(() => {
    for (const s of sessions) s.destroy()
  })
  for (let i = 0; i < 10; i++) sessions.push(session(f.port, '127.0.0.1'))
  await until('the connections past the cap refused', () => f.counters.refused >= 5, 30_000, 20)
  await until('the others open', () => sessions.filter((s) => s.closed || s.destroyed).length === 5, 30_000, 20)
  t.assert.strictEqual(f.counters.open(), 5)
  t.assert.ok(await servedOnce(f.port, '127.0.0.2', 10_000))
})

test('DoH: a preface trickled a byte at a time is closed at tcp-message-timeout', async (t: TestContext) => {
  const f = await startFront(t, { messageTimeoutMs: 1000 })
  const c = await rawH2(t, f.port, '127.0.0.3')
  void trickle(c.sock, Buffer.concat([PREFACE, SETTINGS]), 200)
  await until('the connection closed', c.isClosed, 20_000, 50)
  t.assert.strictEqual(f.counters.timedOut, 1)
})

test('DoH: a HEADERS frame trickled a byte at a time is closed at tcp-message-timeout', async (t: TestContext) => {
  const f = await startFront(t, { messageTimeoutMs: 1000 })
  const c = await rawH2(t, f.port, '127.0.0.3')
  c.sock.write(Buffer.concat([PREFACE, SETTINGS]))
  // HEADERS on stream 1 without END_HEADERS, its 64 octets of block (HPACK literals) sent one by one.
  const headers = Buffer.concat([Buffer.from([0, 0, 64, 1, 0, 0, 0, 0, 1]), Buffer.alloc(64, 0x40)])
  void trickle(c.sock, headers, 200)
  await until('the connection closed', c.isClosed, 20_000, 50)
  t.assert.strictEqual(f.counters.timedOut, 1)
})

test('DoH: a header block kept open by whole CONTINUATION frames is closed at tcp-message-timeout', async (t: TestContext) => {
  const f = await startFront(t, { messageTimeoutMs: 1000 })
  const c = await rawH2(t, f.port, '127.0.0.3')
  // HEADERS (no END_HEADERS), then one CONTINUATION of one octet every 300 ms: each frame whole, the block never.
  c.sock.write(Buffer.concat([PREFACE, SETTINGS, Buffer.from([0, 0, 1, 1, 0, 0, 0, 0, 1, 0x82])]))
  const timer = setInterval(() => c.sock.write(Buffer.from([0, 0, 1, 9, 0, 0, 0, 0, 1, 0x84])), 300)
  t.after(() => clearInterval(timer))
  await until('the connection closed', c.isClosed, 20_000, 50)
  t.assert.strictEqual(f.counters.timedOut, 1, 'closed by the deadline, not by the CONTINUATION cap')
})

test('DoH: a connection that only sends PINGs is idle, and closed at the idle timeout', async (t: TestContext) => {
  const f = await startFront(t, { idleTimeoutMs: 1000 })
  const s = session(f.port, '127.0.0.4')
  t.after(() => s.destroy())
  t.assert.strictEqual((await dohPost(s, query('www.example.org', 'A'))).status, 200)
  const ping = setInterval(() => {
    if (!s.closed && !s.destroyed) s.ping(() => {})
  }, 100)
  t.after(() => clearInterval(ping))
  await until('the pinging connection closed', () => s.closed || s.destroyed, 20_000, 50)
  t.assert.strictEqual(f.counters.timedOut, 0)
})

test('DoH: a client that reconnects and resets streams in a loop is calmed after a bounded number of resets across its connections', async (t: TestContext) => {
  // Queries never answered: every reset stream is reset before its answer, and its query stays in flight.
  const f = await startFront(t, { maxConnections: 50, maxPerSource: 50 }, () => {})
  const msg = query('www.example.org', 'A')
  const started = Date.now()
  let connections = 0
  while (f.counters.calmed < 3 && connections < 40) {
    const s = session(f.port, '127.0.0.5')
    connections++
    try {
      await Promise.race([once(s, 'connect'), once(s, 'close')])
      // Until the server closes the connection (GOAWAY), or 4 × RESET_LIMIT streams.
      await rapidReset(s, msg, 4 * RESET_LIMIT, 50)
    } finally {
      s.destroy()
    }
  }
  const seconds = (Date.now() - started) / 1000
  t.assert.ok(
    f.counters.calmed >= 3,
    `${f.counters.calmed} calmed in ${connections} connections: ${JSON.stringify(f.counters.snapshot())}`
  )
  // The source's budget: the burst, what leaked away meanwhile, and the resets of one read past it.
  const bound = SOURCE_RESET_BURST + SOURCE_RESETS_PER_SECOND * seconds + 100
  t.assert.ok(f.counters.resets <= bound, `${f.counters.resets} resets counted in ${seconds} s (bound ${bound})`)
  t.assert.ok(f.asked() <= SOURCE_INFLIGHT_CONNECTIONS * 2 * 100, `${f.asked()} queries forwarded`)
  // Another address is not calmed: its connection is accepted.
  const before = f.counters.connections
  const other = session(f.port, '127.0.0.6')
  t.after(() => other.destroy())
  await until('a connection from another address accepted', () => f.counters.connections > before, 20_000, 20)
})

test('DoH: a long-lived client that cancels a query now and then is served on, past RESET_LIMIT cancels in all', async (t: TestContext) => {
  // Answers after 110 ms: a query cancelled at once is reset before its answer.
  const f = await startFront(t, {}, (msg, peer) => {
    setTimeout(() => peer.channel.send(peer, msg, msg.length, true), 110)
  })
  const s = session(f.port, '127.0.0.7')
  t.after(() => s.destroy())
  const msg = query('www.example.org', 'A')
  // Each round: one query cancelled, one answered (so at most one cancel per 110 ms, under the rate forgiven).
  const rounds = RESET_LIMIT + 20
  let served = 0
  for (let i = 0; i < rounds; i++) {
    const req = s.request({ ':method': 'POST', ':path': '/dns-query', 'content-type': 'application/dns-message' })
    req.on('error', () => {})
    req.end(msg)
    if (req.pending) await once(req, 'ready')
    req.close(h2c.NGHTTP2_CANCEL)
    if ((await dohPost(s, msg)).status === 200) served++
  }
  t.assert.strictEqual(served, rounds)
  t.assert.ok(f.counters.resets >= RESET_LIMIT, `${f.counters.resets} resets`)
  t.assert.strictEqual(f.counters.calmed, 0)
})
