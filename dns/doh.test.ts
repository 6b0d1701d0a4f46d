// DNS over HTTPS (RFC 8484) on real sockets: GET and POST, HTTP/2 and HTTP/1.1, the errors, the
// query ID and Cache-Control, the client ID of the path, and the client address behind a proxy.
import { test, type TestContext } from 'node:test'
import { request as httpsRequest } from 'node:https'
import { connect } from 'node:net'
import { once } from 'node:events'
import dnsPacket from 'dns-packet'
import { silentLogger } from '../engine/log/index.js'
import { compileAddressSet } from '../engine/net/client-address.js'
import { proxyHeaderFor } from '../engine/net/proxy-protocol.js'
import { BLOCK_V4, firstA, query } from '../engine/testing/dns.js'
import { DohFront } from './doh-front.js'
import { TransportCounters } from './transport-counters.js'
import { dohPost, encryptedServer, encryptedWorld, h2, h2Request } from './testing/encrypted.js'
import type { Peer } from './peer.js'

test('DoH over HTTP/2: POST and GET, blocked and forwarded, the ID echoed, max-age from the smallest TTL', async (t: TestContext) => {
  const w = await encryptedWorld(t, { records: { 'www.example.org': { a: ['203.0.113.7'] } }, ttl: 77 })
  const s = await encryptedServer(t, w, { ttl: 42 })
  const session = h2(t, s.transports.doh[0]!)
  const post = await dohPost(session, query('casino.example', 'A', { id: 0x1234 }))
  t.assert.strictEqual(post.status, 200)
  t.assert.strictEqual(post.headers['content-type'], 'application/dns-message')
  t.assert.strictEqual(post.headers['cache-control'], 'max-age=42')
  const blocked = dnsPacket.decode(post.body)
  t.assert.strictEqual(blocked.id, 0x1234)
  t.assert.strictEqual(firstA(blocked), BLOCK_V4)
  const q = query('www.example.org', 'A', { id: 0 }).toString('base64url')
  const get = await h2Request(session, { ':method': 'GET', ':path': `/dns-query?dns=${q}` })
  t.assert.strictEqual(get.status, 200)
  t.assert.strictEqual(get.headers['cache-control'], 'max-age=77')
  const forwarded = dnsPacket.decode(get.body)
  t.assert.strictEqual(forwarded.id, 0)
  t.assert.strictEqual(firstA(forwarded), '203.0.113.7')
})

test('DoH errors: 404 another path, 405 another method, 400 bad base64url or a short query, 415 another type, 413 too large', async (t: TestContext) => {
  const w = await encryptedWorld(t)
  const s = await encryptedServer(t, w)
  const session = h2(t, s.transports.doh[0]!)
  const status = async (headers: Record<string, string | number>, body?: Buffer): Promise<number> =>
    (await h2Request(session, headers, body)).status
  const ok = query('casino.example', 'A').toString('base64url')
  t.assert.strictEqual(await status({ ':method': 'GET', ':path': `/resolve?dns=${ok}` }), 404)
  t.assert.strictEqual(await status({ ':method': 'GET', ':path': `/dns-query-x?dns=${ok}` }), 404)
  const put = await h2Request(session, { ':method': 'PUT', ':path': '/dns-query' }, Buffer.alloc(20))
  t.assert.strictEqual(put.status, 405)
  t.assert.strictEqual(put.headers.allow, 'GET, POST')
  t.assert.strictEqual(await status({ ':method': 'GET', ':path': '/dns-query' }), 400)
  t.assert.strictEqual(await status({ ':method': 'GET', ':path': `/dns-query?dns=${ok}==` }), 400)
  t.assert.strictEqual(await status({ ':method': 'GET', ':path': '/dns-query?dns=AAAA' }), 400)
  t.assert.strictEqual(await status({ ':method': 'GET', ':path': `/dns-query/bad_id?dns=${ok}` }), 400)
  const msg = query('casino.example', 'A')
  t.assert.strictEqual(
    await status({ ':method': 'POST', ':path': '/dns-query', 'content-type': 'application/json' }, msg),
    415
  )
  const big = Buffer.alloc(5000)
  msg.copy(big)
  t.assert.strictEqual(
    await status({ ':method': 'POST', ':path': '/dns-query', 'content-type': 'application/dns-message' }, big),
    413
  )
  t.assert.strictEqual(await status({ ':method': 'GET', ':path': `/dns-query?dns=${big.toString('base64url')}` }), 413)
  // The connection still serves.
  t.assert.strictEqual((await dohPost(session, msg)).status, 200)
})

test('DoH over HTTP/1.1 with TLS (ALPN http/1.1)', async (t: TestContext) => {
  const w = await encryptedWorld(t)
  const s = await encryptedServer(t, w)
  const msg = query('casino.example', 'A', { id: 99 })
  const options: import('node:https').RequestOptions & { ALPNProtocols: string[] } = {
    host: '127.0.0.1',
    port: s.transports.doh[0]!,
    path: '/dns-query',
    method: 'POST',
    rejectUnauthorized: false,
    ALPNProtocols: ['http/1.1'],
    agent: false,
    headers: { 'content-type': 'application/dns-message', 'content-length': msg.length }
  }
  const req = httpsRequest(options)
  req.end(msg)
  const [res] = (await once(req, 'response')) as [import('node:http').IncomingMessage]
  const alpn = (res.socket as import('node:tls').TLSSocket).alpnProtocol
  const chunks: Buffer[] = []
  for await (const c of res) chunks.push(c as Buffer)
  t.assert.strictEqual(res.statusCode, 200)
  t.assert.strictEqual(alpn, 'http/1.1')
  t.assert.strictEqual(firstA(dnsPacket.decode(Buffer.concat(chunks))), BLOCK_V4)
})

// A DohFront whose queries are answered at once by echoing them, noting each Peer.
async function echoFront(
  t: TestContext,
  trusted: string[]
): Promise<{ port: number; peers: Peer[]; counters: TransportCounters }> {
  const peers: Peer[] = []
  const counters = new TransportCounters('doh-http')
  const front = new DohFront({
    certificates: null,
    maxStreams: 10,
    maxConnections: 10,
    maxPerSource: 10,
    idleTimeoutMs: 10_000,
    messageTimeoutMs: 5_000,
    maxFrame: 4096,
    trusted: compileAddressSet(trusted),
    logger: silentLogger(),
    onQuery: (msg, peer) => {
      peers.push(peer)
      peer.channel.send(peer, msg, msg.length, true)
    },
    counters: new TransportCounters('doh'),
    httpCounters: counters
  })
  t.after(() => front.close())
  return { port: await front.listenHttp('127.0.0.1', 0, 4), peers, counters }
}

// One raw HTTP/1.1 POST (optionally after `preface`), the status line's code.
async function rawPost(port: number, path: string, headers: string[], preface?: Buffer): Promise<number> {
  const sock = connect(port, '127.0.0.1')
  await once(sock, 'connect')
  const msg = query('x.example', 'A')
  const head = [
    `POST ${path} HTTP/1.1`,
    'Host: dns',
    'Content-Type: application/dns-message',
    `Content-Length: ${msg.length}`,
    'Connection: close',
    ...headers,
    '',
    ''
  ].join('\r\n')
  sock.end(Buffer.concat([preface ?? Buffer.alloc(0), Buffer.from(head), msg]))
  const chunks: Buffer[] = []
  for await (const c of sock) chunks.push(c as Buffer)
  return Number(/^HTTP\/1\.1 (\d+)/.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? 0)
}

test('plain-HTTP DoH: the client ID of the path, X-Forwarded-For and PROXY v2 believed only from a trusted proxy', async (t: TestContext) => {
  const trusting = await echoFront(t, ['127.0.0.1'])
  t.assert.strictEqual(await rawPost(trusting.port, '/dns-query/Kid1', ['X-Forwarded-For: 198.51.100.7']), 200)
  t.assert.strictEqual(trusting.peers.at(-1)!.clientId, 'kid1')
  t.assert.strictEqual(trusting.peers.at(-1)!.address, '198.51.100.7')
  t.assert.strictEqual(await rawPost(trusting.port, '/dns-query', [], proxyHeaderFor('203.0.113.9', 4242)), 200)
  t.assert.strictEqual(trusting.peers.at(-1)!.address, '203.0.113.9')
  t.assert.strictEqual(trusting.peers.at(-1)!.port, 4242)
  t.assert.strictEqual(trusting.peers.at(-1)!.clientId, null)
  t.assert.strictEqual(await rawPost(trusting.port, '/dns-query', [], proxyHeaderFor('2001:db8::5', 53)), 200)
  t.assert.strictEqual(trusting.peers.at(-1)!.address, '2001:db8::5')

  const wary = await echoFront(t, ['192.0.2.0/24'])
  t.assert.strictEqual(await rawPost(wary.port, '/dns-query', ['X-Forwarded-For: 198.51.100.7']), 200)
  t.assert.strictEqual(wary.peers.at(-1)!.address, '127.0.0.1')
  // An untrusted peer's PROXY header is not read as one: its bytes are a bad HTTP request.
  t.assert.notStrictEqual(await rawPost(wary.port, '/dns-query', [], proxyHeaderFor('203.0.113.9', 1)), 200)
  t.assert.strictEqual(wary.peers.length, 1)
  t.assert.strictEqual(wary.counters.queries, 1)
})
