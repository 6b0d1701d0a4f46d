// The rapid-reset guard of the DoH front (./doh-front.ts calm): a connection whose client resets
// more than RESET_LIMIT streams before their answer gets exactly one GOAWAY (ENHANCE_YOUR_CALM),
// however many more resets arrive in the same read, and is closed. The GOAWAY frames are counted
// on the wire: the client speaks cleartext HTTP/2 to a relay here, which speaks TLS to the front
// and reads every frame the server sends.
import { test, type TestContext } from 'node:test'
import { once } from 'node:events'
import { connect as http2Connect } from 'node:http2'
import { rapidReset } from './testing/encrypted.js'
import { createServer, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { silentLogger } from '../engine/log/index.js'
import { compileAddressSet } from '../engine/net/client-address.js'
import { query } from '../engine/testing/dns.js'
import { tempDir } from '../engine/testing/temp.js'
import { writeTestCertificate } from '../engine/testing/tls.js'
import { until } from '../engine/testing/wait.js'
import { CertificateSource } from '../engine/tls/certificates.js'
import { DohFront, RESET_LIMIT } from './doh-front.js'
import { TransportCounters } from './transport-counters.js'

const FRAME_HEADER = 9
const GOAWAY = 0x7

/** Counts the frames of each type in the server-to-client bytes of one HTTP/2 connection. */
class FrameCounter {
  readonly counts = new Map<number, number>()
  private pending = Buffer.alloc(0)

  push(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk])
    while (this.pending.length >= FRAME_HEADER) {
      const length = this.pending.readUIntBE(0, 3)
      if (this.pending.length < FRAME_HEADER + length) return
      const type = this.pending[3]!
      this.counts.set(type, (this.counts.get(type) ?? 0) + 1)
      this.pending = this.pending.subarray(FRAME_HEADER + length)
    }
  }
}

// A DoH front over TLS whose queries are never answered (so every stream the client resets is reset before its answer).
async function silentFront(t: TestContext): Promise<{ port: number; counters: TransportCounters }> {
  const { cert, key } = writeTestCertificate(tempDir(t), 'dns.test')
  const certificates = new CertificateSource({ cert, key }, silentLogger())
  const counters = new TransportCounters('doh')
  const front = new DohFront({
    certificates,
    maxStreams: 100,
    maxConnections: 10,
    maxPerSource: 10,
    idleTimeoutMs: 30_000,
    messageTimeoutMs: 10_000,
    maxFrame: 4096,
    trusted: compileAddressSet([]),
    logger: silentLogger(),
    onQuery: () => {},
    counters,
    httpCounters: new TransportCounters('doh-http')
  })
  t.after(async () => {
    await front.close()
    certificates.close()
  })
  return { port: await front.listenTls('127.0.0.1', 0, 4), counters }
}

// A cleartext port that relays each connection to the front over TLS (ALPN h2), counting the server's frames.
async function countingRelay(
  t: TestContext,
  port: number
): Promise<{ port: number; server: FrameCounter[]; closed: Promise<void>[] }> {
  const server: FrameCounter[] = []
  const closed: Promise<void>[] = []
  const relay = createServer((client: Socket) => {
    const counter = new FrameCounter()
    server.push(counter)
    const tls = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'] })
    // Not once(): it rejects on the 'error' a reset connection emits before its 'close'.
    closed.push(new Promise((resolve) => tls.on('close', () => resolve())))
    client.on('error', () => {})
    tls.on('error', () => {})
    client.on('data', (b: Buffer) => tls.write(b))
    // The server's side is read to its end even after the client went: it may still be writing frames.
    tls.on('data', (b: Buffer) => {
      counter.push(b)
      if (!client.destroyed) client.write(b)
    })
    tls.on('close', () => client.destroy())
  })
  relay.listen(0, '127.0.0.1')
  await once(relay, 'listening')
  t.after(() => relay.close())
  const a = relay.address()
  return { port: typeof a === 'object' && a !== null ? a.port : 0, server, closed }
}

test('DoH rapid reset: one GOAWAY per connection, however many resets pass the limit in one read', async (t: TestContext) => {
  const front = await silentFront(t)
  const relay = await countingRelay(t, front.port)
  const session = http2Connect(`http://127.0.0.1:${relay.port}`)
  session.on('error', () => {})
  t.after(() => session.destroy())
  await once(session, 'connect')
  const msg = query('www.example.org', 'A')
  // Batches of 50 streams, each sent and reset in the same turn: the resets past RESET_LIMIT reach the
  // server together, many in the read that crosses the limit.
  await rapidReset(session, msg, 20 * RESET_LIMIT, 50)
  await until('the relay connected', () => relay.closed.length === 1, 10_000, 20)
  // The server closes the connection after its GOAWAY; every frame it sent has been counted by then.
  await relay.closed[0]
  t.assert.ok(front.counters.resets > RESET_LIMIT, `${front.counters.resets} resets counted`)
  t.assert.strictEqual(relay.server[0]!.counts.get(GOAWAY) ?? 0, 1)
})
