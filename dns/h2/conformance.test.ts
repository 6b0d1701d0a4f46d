// The rules of RFC 9113 (HTTP/2) the DoH front's server (./connection.ts, ./request-check.ts)
// enforces, each checked with hand-made frames over a real TLS connection: request validation
// (§8.2, §8.3), stream states (§5.1), SETTINGS bounds, and what the server sends on streams it
// closed. The same rules are checked by h2spec in ./h2spec.test.ts when the tool is present.
import { test, type TestContext } from 'node:test'
import { until } from '../../engine/testing/wait.js'
import { dnsPath, fieldBlock, front, GET, getBlock, RawClient } from '../testing/h2-client.js'
import { MAX_SETTINGS_ENTRIES, MAX_SETTINGS_PER_SECOND } from './connection.js'
import { Flag, FrameType, H2Error, MAX_WINDOW, PREFACE, Setting } from './frames.js'

const END = Flag.END_STREAM | Flag.END_HEADERS

function settingsPayload(entries: ReadonlyArray<readonly [number, number]>): Buffer {
  const b = Buffer.alloc(6 * entries.length)
  entries.forEach(([k, v], i) => {
    b.writeUInt16BE(k, 6 * i)
    b.writeUInt32BE(v, 6 * i + 2)
  })
  return b
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n)
  return b
}

test('malformed requests get RST_STREAM(PROTOCOL_ERROR), never reach the exchange, and the connection serves on', async (t: TestContext) => {
  const f = await front(t, { hold: true })
  const path = dnsPath(1)
  const without = (name: string): string[] => {
    const g = GET(path)
    const i = g.indexOf(name)
    g.splice(i, 2)
    return g
  }
  const cases: Array<[string, string[]]> = [
    ['an upper-case field name', [...GET(path), 'X-Upper', 'a']],
    ['an unknown pseudo-header', [...GET(path), ':foo', 'a']],
    ['a response pseudo-header', [...GET(path), ':status', '200']],
    ['a pseudo-header after a regular field', ['accept', '*/*', ...GET(path)]],
    ['a repeated :method', [...GET(path), ':method', 'GET']],
    ['a repeated :path', [':path', '/dns-query', ...GET(path)]],
    ['connection', [...GET(path), 'connection', 'keep-alive']],
    ['keep-alive', [...GET(path), 'keep-alive', 'timeout=5']],
    ['proxy-connection', [...GET(path), 'proxy-connection', 'close']],
    ['transfer-encoding', [...GET(path), 'transfer-encoding', 'chunked']],
    ['upgrade', [...GET(path), 'upgrade', 'h2c']],
    ['te other than trailers', [...GET(path), 'te', 'gzip']],
    ['no :method', without(':method')],
    ['no :scheme', without(':scheme')],
    ['no :path', without(':path')],
    ['an empty :path', [':method', 'GET', ':scheme', 'https', ':path', '']],
    ['a value with a line feed', [...GET(path), 'x-a', 'a\nb']],
    ['a content-length that is not a number', [...GET(path), 'content-length', '1x']],
    ['a content-length of 3 and no body', [...GET(path), 'content-length', '3']]
  ]
  const c = await RawClient.open(f.port)
  let id = 1
  for (const [what, fields] of cases) {
    c.frame(FrameType.HEADERS, END, id, fieldBlock(fields))
    await c.sync()
    t.assert.deepStrictEqual(c.resets(id), [H2Error.PROTOCOL_ERROR], what)
    id += 2
  }
  // A body that is not its content-length: shorter, and longer.
  for (const [length, body] of [
    [10, 4],
    [1, 4]
  ] as const) {
    const post = [':method', 'POST', ':scheme', 'https', ':path', '/dns-query', 'content-length', String(length)]
    c.frame(FrameType.HEADERS, Flag.END_HEADERS, id, fieldBlock([...post, 'content-type', 'application/dns-message']))
    c.frame(FrameType.DATA, Flag.END_STREAM, id, Buffer.alloc(body))
    await c.sync()
    t.assert.deepStrictEqual(c.resets(id), [H2Error.PROTOCOL_ERROR], `content-length ${length}, ${body} octets`)
    id += 2
  }
  t.assert.strictEqual(f.held.length, 0, 'no malformed request reached the exchange')
  // Well formed, te: trailers included: served.
  c.frame(FrameType.HEADERS, END, id, fieldBlock([...GET(path), 'te', 'trailers']))
  await until('the valid request taken', () => f.held.length === 1)
  t.assert.strictEqual(c.frames.filter((x) => x.type === FrameType.GOAWAY).length, 0)
  c.sock.destroy()
})

test('stream states: WINDOW_UPDATE on an idle stream, self-dependency, a short GOAWAY, no SETTINGS after the preface, an unused lower stream ID end the connection', async (t: TestContext) => {
  const f = await front(t)
  const cases: Array<[string, (c: RawClient) => void, number]> = [
    [
      'WINDOW_UPDATE on an idle stream',
      (c) => c.frame(FrameType.WINDOW_UPDATE, 0, 7, u32(100)),
      H2Error.PROTOCOL_ERROR
    ],
    [
      'PRIORITY depending on its own stream',
      (c) => c.frame(FrameType.PRIORITY, 0, 3, Buffer.from([0, 0, 0, 3, 16])),
      H2Error.PROTOCOL_ERROR
    ],
    [
      'HEADERS depending on its own stream',
      (c) =>
        c.frame(
          FrameType.HEADERS,
          END | Flag.PRIORITY,
          1,
          Buffer.concat([Buffer.from([0, 0, 0, 1, 16]), getBlock(dnsPath(1))])
        ),
      H2Error.PROTOCOL_ERROR
    ],
    ['GOAWAY of 4 octets', (c) => c.frame(FrameType.GOAWAY, 0, 0, u32(0)), H2Error.FRAME_SIZE_ERROR],
    [
      'HEADERS on a lower stream ID never used',
      (c) => {
        c.frame(FrameType.HEADERS, END, 5, getBlock(dnsPath(5)))
        c.frame(FrameType.HEADERS, END, 3, getBlock(dnsPath(3)))
      },
      H2Error.PROTOCOL_ERROR
    ],
    [
      'HEADERS again on a stream closed after use',
      (c) => {
        c.frame(FrameType.HEADERS, END, 1, getBlock(dnsPath(1)))
        c.frame(FrameType.HEADERS, END, 3, getBlock(dnsPath(3)))
        c.frame(FrameType.HEADERS, END, 1, getBlock(dnsPath(1)))
      },
      H2Error.STREAM_CLOSED
    ],
    [
      'DATA with padding longer than itself on a closed stream',
      (c) => {
        c.frame(FrameType.HEADERS, END, 1, getBlock(dnsPath(1)))
        c.frame(FrameType.DATA, Flag.PADDED, 1, Buffer.from([9, 0]))
      },
      H2Error.PROTOCOL_ERROR
    ]
  ]
  for (const [what, send, code] of cases) {
    const c = await RawClient.open(f.port)
    send(c)
    t.assert.strictEqual(await c.goawayCode(), code, what)
    await until(`${what}: closed`, () => c.closed, 10_000, 10)
  }
  // The preface followed by anything but SETTINGS.
  const c = await RawClient.open(f.port, false)
  c.sock.write(PREFACE)
  c.frame(FrameType.PING, 0, 0, Buffer.alloc(8))
  t.assert.strictEqual(await c.goawayCode(), H2Error.PROTOCOL_ERROR, 'PING before SETTINGS')
})

test('stream errors that leave the connection open: DATA on a closed stream (STREAM_CLOSED), HEADERS on a half-closed (remote) stream (STREAM_CLOSED)', async (t: TestContext) => {
  const f = await front(t, { hold: true })
  const c = await RawClient.open(f.port)
  // Stream 1 ended by the client and still waiting for its answer: half-closed (remote).
  c.frame(FrameType.HEADERS, END, 1, getBlock(dnsPath(1)))
  await until('the query held', () => f.held.length === 1)
  c.frame(FrameType.HEADERS, END, 1, getBlock(dnsPath(1)))
  await c.sync()
  t.assert.deepStrictEqual(c.resets(1), [H2Error.STREAM_CLOSED])
  // Stream 3 reset by the client, then DATA on it.
  c.frame(FrameType.HEADERS, Flag.END_HEADERS, 3, getBlock(dnsPath(3)))
  c.frame(FrameType.RST_STREAM, 0, 3, u32(H2Error.CANCEL))
  c.frame(FrameType.DATA, Flag.END_STREAM, 3, Buffer.alloc(4))
  await c.sync()
  t.assert.deepStrictEqual(c.resets(3), [H2Error.STREAM_CLOSED])
  t.assert.strictEqual(c.frames.filter((x) => x.type === FrameType.GOAWAY).length, 0)
  c.sock.destroy()
})

test('frames on a stream the server reset are ignored: late DATA and trailers end nothing (RFC 9113 §5.4.2)', async (t: TestContext) => {
  const f = await front(t)
  const c = await RawClient.open(f.port)
  // Declared too large: 413 at once, and RST_STREAM(NO_ERROR) to stop the body.
  const post = [':method', 'POST', ':scheme', 'https', ':path', '/dns-query', 'content-type', 'application/dns-message']
  c.frame(FrameType.HEADERS, Flag.END_HEADERS, 1, fieldBlock([...post, 'content-length', '100000']))
  await c.sync()
  t.assert.deepStrictEqual(c.resets(1), [H2Error.NO_ERROR])
  c.frame(FrameType.DATA, 0, 1, Buffer.alloc(100))
  c.frame(FrameType.HEADERS, END, 1, fieldBlock(['x-trailer', 'a']))
  await c.sync()
  t.assert.deepStrictEqual(c.resets(1), [H2Error.NO_ERROR], 'nothing more on stream 1')
  t.assert.strictEqual(c.frames.filter((x) => x.type === FrameType.GOAWAY).length, 0)
  c.frame(FrameType.HEADERS, END, 3, getBlock(dnsPath(3)))
  await c.frameOf(FrameType.DATA, 3)
  c.sock.destroy()
})

test('an answer given at once is the last frame on its stream: no RST_STREAM after it', async (t: TestContext) => {
  const f = await front(t)
  const c = await RawClient.open(f.port)
  // A DNS answer (the front answers in the same turn), a 404 and a 400, each to a request ended by its HEADERS.
  c.frame(FrameType.HEADERS, END, 1, getBlock(dnsPath(1)))
  c.frame(FrameType.HEADERS, END, 3, getBlock('/resolve'))
  c.frame(FrameType.HEADERS, END, 5, getBlock('/dns-query?dns=AAAA'))
  // A GET not ended by its HEADERS, answered at once: the stream waits for the client's end, quietly.
  c.frame(FrameType.HEADERS, Flag.END_HEADERS, 7, getBlock(dnsPath(7)))
  for (const id of [1, 3, 5, 7]) await c.frameOf(FrameType.DATA, id)
  c.frame(FrameType.DATA, Flag.END_STREAM, 7, Buffer.alloc(0))
  await c.sync()
  for (const id of [1, 3, 5, 7]) t.assert.deepStrictEqual(c.resets(id), [], `stream ${id}`)
  const ends = c.frames.filter((x) => x.type === FrameType.DATA && (x.flags & Flag.END_STREAM) !== 0).map((x) => x.id)
  t.assert.deepStrictEqual(ends, [1, 3, 5, 7])
  c.sock.destroy()
})

test(`SETTINGS: more than ${MAX_SETTINGS_ENTRIES} entries, or more than ${MAX_SETTINGS_PER_SECOND} frames a second, get GOAWAY (ENHANCE_YOUR_CALM)`, async (t: TestContext) => {
  const f = await front(t)
  const entries = (n: number): Array<[number, number]> =>
    Array.from({ length: n }, (_, i) => [Setting.INITIAL_WINDOW_SIZE, 65535 + i] as [number, number])
  const ok = await RawClient.open(f.port)
  ok.frame(FrameType.SETTINGS, 0, 0, settingsPayload(entries(MAX_SETTINGS_ENTRIES)))
  await ok.sync()
  t.assert.strictEqual(
    ok.frames.filter((x) => x.type === FrameType.GOAWAY).length,
    0,
    `${MAX_SETTINGS_ENTRIES} entries`
  )
  ok.sock.destroy()
  const many = await RawClient.open(f.port)
  many.frame(FrameType.SETTINGS, 0, 0, settingsPayload(entries(MAX_SETTINGS_ENTRIES + 1)))
  t.assert.strictEqual(await many.goawayCode(), H2Error.ENHANCE_YOUR_CALM, 'one entry too many')
  const flood = await RawClient.open(f.port)
  for (let i = 0; i < 2 * MAX_SETTINGS_PER_SECOND && !flood.closed; i++)
    flood.frame(FrameType.SETTINGS, 0, 0, Buffer.alloc(0))
  t.assert.strictEqual(await flood.goawayCode(), H2Error.ENHANCE_YOUR_CALM, 'a flood of SETTINGS')
})

test('an INITIAL_WINDOW_SIZE change that pushes an open stream past 2^31-1 is a FLOW_CONTROL_ERROR', async (t: TestContext) => {
  const f = await front(t, { hold: true })
  const c = await RawClient.open(f.port)
  c.frame(FrameType.HEADERS, END, 1, getBlock(dnsPath(1)))
  await until('the query held', () => f.held.length === 1)
  // The stream's window raised to the maximum, then every stream's initial window by one.
  c.frame(FrameType.WINDOW_UPDATE, 0, 1, u32(MAX_WINDOW - 65535))
  await c.sync()
  t.assert.deepStrictEqual(c.resets(1), [])
  c.frame(FrameType.SETTINGS, 0, 0, settingsPayload([[Setting.INITIAL_WINDOW_SIZE, 65536]]))
  t.assert.strictEqual(await c.goawayCode(), H2Error.FLOW_CONTROL_ERROR)
})
