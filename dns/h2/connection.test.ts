// The DoH front's own HTTP/2 server (./connection.ts) against real peers no one here wrote (node:http2's
// client, h2load) and against hand-made frames: many concurrent streams, flow control with a small client
// window, CONTINUATION, a stream past the limit refused, PING, malformed frames answered with GOAWAY, and
// random bytes after the preface that never crash or stall the server.
import { test, type TestContext } from 'node:test'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect as http2Connect } from 'node:http2'
import dnsPacket from 'dns-packet'
import { query } from '../../engine/testing/dns.js'
import { until } from '../../engine/testing/wait.js'
import { dohPost, h2, h2Request, needsTool, run } from '../testing/encrypted.js'
import { answer, dnsPath, front, getBlock, RawClient } from '../testing/h2-client.js'
import { Flag, FrameType, FrameWriter, H2Error } from './frames.js'

test('node:http2 client: 300 concurrent streams on one connection (100 at a time), every answer with its ID', async (t: TestContext) => {
  const f = await front(t)
  const session = h2(t, f.port)
  await once(session, 'remoteSettings')
  const answers = await Promise.all(
    Array.from({ length: 300 }, async (_, i) => await dohPost(session, query('www.example.org', 'A', { id: i })))
  )
  t.assert.deepStrictEqual(
    answers.map((a) => a.status),
    answers.map(() => 200)
  )
  t.assert.deepStrictEqual(
    answers.map((a) => dnsPacket.decode(a.body).id),
    answers.map((_, i) => i)
  )
  t.assert.strictEqual(answers[0]!.headers['cache-control'], 'max-age=60')
  t.assert.strictEqual(f.counters.queries, 300)
})

test("a DNS answer's response headers, read by node:http2: exactly :status, content-type, content-length of the body and max-age of the smallest TTL", async (t: TestContext) => {
  for (const [ttls, records, maxAge] of [
    [[300, 7, 60], 3, 'max-age=7'],
    [[0, 60], 2, 'max-age=0'],
    [[60], 0, 'max-age=0'] // no record: no TTL to keep
  ] as const) {
    const f = await front(t, { records, ttls: [...ttls] })
    const session = h2(t, f.port)
    for (let i = 0; i < 3; i++) {
      const a = await dohPost(session, query('ttl.example', 'A', { id: 40 + i }))
      t.assert.strictEqual(a.status, 200)
      t.assert.deepStrictEqual(Object.keys(a.headers).sort(), [
        ':status',
        'cache-control',
        'content-length',
        'content-type'
      ])
      t.assert.strictEqual(a.headers['content-type'], 'application/dns-message')
      t.assert.strictEqual(a.headers['content-length'], String(a.body.length))
      t.assert.strictEqual(a.headers['cache-control'], maxAge)
      t.assert.strictEqual(dnsPacket.decode(a.body).id, 40 + i)
      t.assert.strictEqual(dnsPacket.decode(a.body).answers!.length, records)
    }
  }
})

test('HTTP/2 from a trusted proxy: the client is the X-Forwarded-For hop, its repeated fields read as one list', async (t: TestContext) => {
  const f = await front(t, { hold: true, trusted: ['127.0.0.1'] })
  const session = h2(t, f.port)
  const msg = query('xff.example', 'A', { id: 9 })
  const headers = {
    ':method': 'POST',
    ':path': '/dns-query',
    'content-type': 'application/dns-message',
    'x-forwarded-for': ['198.51.100.7', '203.0.113.9']
  }
  session.request(headers).end(msg)
  session.request({ ...headers, 'x-forwarded-for': '192.0.2.44' }).end(msg)
  await until('both queries held', () => f.held.length === 2)
  t.assert.deepStrictEqual(f.held.map((h) => h.peer.address).sort(), ['192.0.2.44', '203.0.113.9'])
})

test('flow control: a 1.6 KB answer under a 100-byte stream window arrives whole, in several DATA frames', async (t: TestContext) => {
  const f = await front(t, { records: 100 })
  const session = http2Connect(`https://127.0.0.1:${f.port}`, {
    rejectUnauthorized: false,
    settings: { initialWindowSize: 100 }
  })
  session.on('error', () => {})
  t.after(() => session.destroy())
  const answers = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => await dohPost(session, query('big.example', 'A', { id: i })))
  )
  for (const a of answers) {
    t.assert.strictEqual(a.status, 200)
    t.assert.strictEqual(dnsPacket.decode(a.body).answers!.length, 100)
    t.assert.strictEqual(a.body.length, Number(a.headers['content-length']))
  }
})

test('CONTINUATION: a header block over HEADERS and two CONTINUATION frames is one request', async (t: TestContext) => {
  const f = await front(t)
  const c = await RawClient.open(f.port)
  const block = getBlock(dnsPath(7), 3000)
  c.frame(FrameType.HEADERS, Flag.END_STREAM, 1, block.subarray(0, 1000))
  c.frame(FrameType.CONTINUATION, 0, 1, block.subarray(1000, 2000))
  c.frame(FrameType.CONTINUATION, Flag.END_HEADERS, 1, block.subarray(2000))
  const headers = await c.frameOf(FrameType.HEADERS, 1)
  t.assert.strictEqual(headers.payload[0], 0x88, ':status 200')
  const data = await c.frameOf(FrameType.DATA, 1)
  t.assert.strictEqual(dnsPacket.decode(data.payload).id, 7)
  t.assert.strictEqual(data.flags & Flag.END_STREAM, Flag.END_STREAM)
  c.sock.destroy()
})

test('CONTINUATION flood: endless empty CONTINUATION frames end in GOAWAY (ENHANCE_YOUR_CALM)', async (t: TestContext) => {
  const f = await front(t)
  const c = await RawClient.open(f.port)
  c.frame(FrameType.HEADERS, Flag.END_STREAM, 1, getBlock(dnsPath(1)).subarray(0, 5))
  for (let i = 0; i < 1000 && !c.closed; i++) c.frame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(0))
  t.assert.strictEqual(await c.goawayCode(), H2Error.ENHANCE_YOUR_CALM)
  await until('closed', () => c.closed, 10_000, 10)
})

test('a stream past SETTINGS_MAX_CONCURRENT_STREAMS is refused (REFUSED_STREAM); the others are served', async (t: TestContext) => {
  const f = await front(t, { maxStreams: 2, hold: true })
  const c = await RawClient.open(f.port)
  const settings = await c.frameOf(FrameType.SETTINGS)
  t.assert.deepStrictEqual([settings.payload.readUInt16BE(0), settings.payload.readUInt32BE(2)], [3, 2])
  for (const id of [1, 3, 5]) c.frame(FrameType.HEADERS, Flag.END_STREAM | Flag.END_HEADERS, id, getBlock(dnsPath(id)))
  const rst = await c.frameOf(FrameType.RST_STREAM, 5)
  t.assert.strictEqual(rst.payload.readUInt32BE(0), H2Error.REFUSED_STREAM)
  await until('two queries held', () => f.held.length === 2, 10_000, 10)
  for (const h of f.held) h.peer.channel.send(h.peer, answer(h.msg, 1), answer(h.msg, 1).length, true)
  await c.frameOf(FrameType.DATA, 1)
  await c.frameOf(FrameType.DATA, 3)
  c.sock.destroy()
})

test('PING is answered with a PING ACK of the same payload; SETTINGS is acknowledged', async (t: TestContext) => {
  const f = await front(t)
  const c = await RawClient.open(f.port)
  const ack = await c.frameOf(FrameType.SETTINGS)
  t.assert.ok(ack !== undefined)
  await until(
    'SETTINGS ACK',
    () => c.frames.some((x) => x.type === FrameType.SETTINGS && x.flags === Flag.ACK),
    10_000,
    10
  )
  c.frame(FrameType.PING, 0, 0, Buffer.from('pingpong'))
  const pong = await c.frameOf(FrameType.PING)
  t.assert.strictEqual(pong.flags, Flag.ACK)
  t.assert.strictEqual(pong.payload.toString(), 'pingpong')
  // A frame trickled one byte per TLS record is read whole.
  const w = new FrameWriter()
  w.header(8, FrameType.PING, 0, 0)
  w.reserve(8).write('trickled', w.length, 'latin1')
  w.advance(8)
  for (const byte of w.take()) {
    c.sock.write(Buffer.from([byte]))
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  await until(
    'the trickled PING answered',
    () => c.frames.some((x) => x.type === FrameType.PING && x.payload.toString() === 'trickled'),
    10_000,
    10
  )
  c.sock.destroy()
})

test('malformed frames get GOAWAY with their error and the connection closed; the server serves on', async (t: TestContext) => {
  const f = await front(t)
  const cases: Array<[string, (c: RawClient) => void, number]> = [
    ['SETTINGS of 5 bytes', (c) => c.frame(FrameType.SETTINGS, 0, 0, Buffer.alloc(5)), H2Error.FRAME_SIZE_ERROR],
    [
      'HEADERS on an even stream',
      (c) => c.frame(FrameType.HEADERS, 0x5, 2, getBlock('/dns-query')),
      H2Error.PROTOCOL_ERROR
    ],
    ['a frame over 16384 bytes', (c) => c.frame(FrameType.DATA, 0, 1, Buffer.alloc(20000)), H2Error.FRAME_SIZE_ERROR],
    [
      'a header block HPACK cannot decode',
      (c) => c.frame(FrameType.HEADERS, 0x5, 1, Buffer.from([0xbf])),
      H2Error.COMPRESSION_ERROR
    ],
    [
      'WINDOW_UPDATE of 0 on the connection',
      (c) => c.frame(FrameType.WINDOW_UPDATE, 0, 0, Buffer.alloc(4)),
      H2Error.PROTOCOL_ERROR
    ],
    [
      'PUSH_PROMISE from a client',
      (c) => c.frame(FrameType.PUSH_PROMISE, 0x4, 1, Buffer.alloc(4)),
      H2Error.PROTOCOL_ERROR
    ],
    ['DATA on an idle stream', (c) => c.frame(FrameType.DATA, 0, 9, Buffer.alloc(4)), H2Error.PROTOCOL_ERROR]
  ]
  for (const [what, send, code] of cases) {
    const c = await RawClient.open(f.port)
    send(c)
    t.assert.strictEqual(await c.goawayCode(), code, what)
    await until(`${what}: closed`, () => c.closed, 10_000, 10)
  }
  const bad = await RawClient.open(f.port, false)
  bad.sock.write('GET / HTTP/1.1\r\n\r\n')
  t.assert.strictEqual(await bad.goawayCode(), H2Error.PROTOCOL_ERROR, 'no preface')
  const session = h2(t, f.port)
  t.assert.strictEqual((await dohPost(session, query('www.example.org', 'A'))).status, 200)
})

test('h2load -m 100: a real client gets 200 to every request', async (t: TestContext) => {
  if (!(await needsTool(t, 'h2load', 'nghttp2-client'))) return
  const f = await front(t, { maxStreams: 100 })
  const body = join(f.dir, 'q.bin')
  writeFileSync(body, query('www.example.org', 'A'))
  const r = await run(
    'h2load',
    [
      '-n',
      '5000',
      '-c',
      '4',
      '-m',
      '100',
      '-d',
      body,
      '-H',
      'content-type: application/dns-message',
      `https://127.0.0.1:${f.port}/dns-query`
    ],
    120_000
  )
  t.assert.ok(r !== undefined && r.code === 0, r?.out)
  t.assert.match(r.out, /requests: 5000 total, 5000 started, 5000 done, 5000 succeeded, 0 failed/)
  t.assert.match(r.out, /status codes: 5000 2xx/)
})

test('random bytes after the preface never crash or stall the server', async (t: TestContext) => {
  const f = await front(t, { idleMs: 3000 })
  const clients: RawClient[] = []
  for (let i = 0; i < 200; i++) {
    const c = await RawClient.open(f.port)
    // Now and then a valid request first, so the garbage lands mid-connection.
    if (i % 4 === 0) c.frame(FrameType.HEADERS, Flag.END_STREAM | Flag.END_HEADERS, 1, getBlock(dnsPath(i)))
    c.sock.write(randomBytes(1 + (i % 7) * 500))
    clients.push(c)
  }
  // Each connection ends: a GOAWAY for garbage, or the idle timeout for a frame that never completes.
  await until('every connection closed', () => clients.every((c) => c.closed), 30_000, 50)
  const session = h2(t, f.port)
  t.assert.strictEqual((await dohPost(session, query('www.example.org', 'A'))).status, 200)
  const get = await h2Request(session, { ':method': 'GET', ':path': dnsPath(3) })
  t.assert.strictEqual(get.status, 200)
})
