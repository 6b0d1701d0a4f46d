// DNS over TLS (RFC 7858) on real sockets: pipelining with answers out of order, TLS versions, ALPN,
// session resumption, the client ID of the server name, and the filtering of port 53.
import { test, type TestContext } from 'node:test'
import { connect as tlsConnect } from 'node:tls'
import { once } from 'node:events'
import { silentLogger } from '../engine/log/index.js'
import { CertificateSource } from '../engine/tls/certificates.js'
import { BLOCK_V4, firstA, query, tempDir } from '../engine/testing/dns.js'
import { writeTestCertificate } from '../engine/testing/tls.js'
import { TcpFront } from './tcp-front.js'
import { TransportCounters } from './transport-counters.js'
import { dotConnect, encryptedServer, encryptedWorld, SERVER_NAME } from './testing/encrypted.js'
import type { Peer } from './peer.js'

test('100 queries pipelined on one DoT connection are all answered, the slow upstream ones last', async (t: TestContext) => {
  const delays: Record<string, number> = {}
  for (let i = 0; i < 50; i++) delays[`slow${i}.example`] = 400
  const w = await encryptedWorld(t, { delays })
  const s = await encryptedServer(t, w, { 'upstream-timeout': 3000 })
  const c = await dotConnect(s.transports.dot[0]!)
  t.after(() => c.close())
  // 0..49 slow, 50..99 fast (one of them blocked), all in one write.
  const names = Array.from({ length: 100 }, (_, i) =>
    i < 50 ? `slow${i}.example` : i === 99 ? 'casino.example' : `fast${i}.example`
  )
  c.send(names.map((n, i) => query(n, 'A', { id: i })))
  const answers = await c.until(100)
  t.assert.deepStrictEqual(
    answers.map((a) => a.id).sort((a, b) => a! - b!),
    Array.from({ length: 100 }, (_, i) => i)
  )
  const order = answers.map((a) => a.id!)
  t.assert.ok(order[0]! >= 50, `the first answer is a fast one (got ${order[0]})`)
  t.assert.ok(
    order.slice(50).every((id) => id < 50),
    `the last 50 answers are the slow ones: ${order.join(',')}`
  )
  t.assert.strictEqual(firstA(answers.find((a) => a.id === 99)!), BLOCK_V4)
  for (const a of answers) t.assert.strictEqual(a.questions?.[0]?.name, names[a.id!])
})

test('DoT speaks TLS 1.2 and 1.3 with ALPN dot, and resumes sessions', async (t: TestContext) => {
  const w = await encryptedWorld(t)
  const s = await encryptedServer(t, w)
  const port = s.transports.dot[0]!
  for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
    const c = await dotConnect(port, { minVersion: version, maxVersion: version })
    t.assert.strictEqual(c.sock.getProtocol(), version)
    t.assert.strictEqual(c.sock.alpnProtocol, 'dot')
    c.send([query('casino.example', 'A', { id: 1 })])
    t.assert.strictEqual(firstA((await c.until(1))[0]!), BLOCK_V4)
    // The session (a TLS 1.3 ticket comes after the handshake).
    const deadline = Date.now() + 5000
    while (c.session === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    const session = c.session
    t.assert.ok(session !== undefined, `${version}: a session to resume`)
    c.close()
    const again = await dotConnect(port, { minVersion: version, maxVersion: version, session })
    t.assert.ok(again.sock.isSessionReused(), `${version} session resumed`)
    again.send([query('www.example.org', 'A', { id: 2 })])
    t.assert.strictEqual((await again.until(1))[0]!.id, 2)
    again.close()
  }
})

test('TLS 1.1 and older are refused', async (t: TestContext) => {
  const w = await encryptedWorld(t)
  const s = await encryptedServer(t, w)
  const sock = tlsConnect({
    host: '127.0.0.1',
    port: s.transports.dot[0]!,
    rejectUnauthorized: false,
    minVersion: 'TLSv1',
    maxVersion: 'TLSv1.1'
  })
  const [err] = (await once(sock, 'error')) as [Error]
  t.assert.ok(err instanceof Error)
})

test('the client ID is the first label of a server name under proxy.server-name, and nothing else', async (t: TestContext) => {
  const dir = tempDir(t)
  const { cert, key } = writeTestCertificate(dir, SERVER_NAME)
  const seen: Array<string | null> = []
  const counters = new TransportCounters('dot')
  const front = new TcpFront({
    maxConnections: 10,
    idleTimeoutMs: 10_000,
    messageTimeoutMs: 5_000,
    maxFrame: 4096,
    logger: silentLogger(),
    counters,
    onQuery: (msg: Buffer, peer: Peer) => {
      seen.push(peer.clientId)
      peer.channel.send(peer, msg, msg.length, true)
    },
    secure: {
      certificates: new CertificateSource({ cert, key }, silentLogger()),
      serverName: SERVER_NAME,
      handshakeTimeoutMs: 5_000,
      maxHandshakes: 10,
      maxHandshakesPerSource: 10
    }
  })
  t.after(() => front.close())
  const port = await front.listen('127.0.0.1', 0, 4)
  const cases: Array<[string | undefined, string | null]> = [
    [`Kid-7.${SERVER_NAME}`, 'kid-7'],
    [SERVER_NAME, null],
    [`a.b.${SERVER_NAME}`, null],
    ['kid.other.test', null],
    [`bad_id.${SERVER_NAME}`, null],
    [undefined, null]
  ]
  for (const [servername, want] of cases) {
    const c = await dotConnect(port, servername === undefined ? {} : { servername })
    c.send([query('x.example', 'A', { id: 3 })])
    await c.until(1)
    c.close()
    t.assert.strictEqual(seen.at(-1), want, `SNI ${servername}`)
  }
  t.assert.strictEqual(counters.connections, cases.length)
  t.assert.strictEqual(counters.queries, cases.length)
})
