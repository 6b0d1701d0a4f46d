/**
 * The conformance suite both implementations run (hono's `common.case.test.ts` pattern): `http-uws.test.ts`
 * and `http-node.test.ts` each call `runHttpSuite`. Named `.case.ts` so `node --test dist/` does not run it on
 * its own. Where exact bytes matter (HEAD, Connection, repeated headers) the tests speak HTTP over a raw
 * socket; elsewhere they use fetch. No test waits on a clock: every wait is for a socket event.
 */
import { describe, test, type TestContext } from 'node:test'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { hasOpenssl, OPENSSL_MISSING, writeTestCertificate } from './tls.js'
import { request as httpsRequest } from 'node:https'
import {
  createHttpServer,
  HttpError,
  type HttpRequest,
  type HttpServer,
  type HttpServerOptions,
  type HttpImpl
} from '../http/index.js'
import { tempDir } from './temp.js'
import { releasedPort } from './ports.js'

// A safety net so a server that never answers fails the test instead of hanging the run; no assertion
// depends on it. It covers the whole suite (about 35 tests), so it allows for a loaded machine.
const SAFETY = { timeout: 60_000 }

interface Started {
  server: HttpServer
  port: number
  base: string
}

async function start(
  t: TestContext,
  impl: HttpImpl,
  setup: (s: HttpServer) => void,
  options: HttpServerOptions = {},
  host = '127.0.0.1'
): Promise<Started> {
  const server = createHttpServer({ ...options, impl })
  t.after(() => server.close())
  setup(server)
  const { port } = await server.listen(host, 0)
  const h = host.includes(':') ? `[${host === '::' ? '::1' : host}]` : host === '0.0.0.0' ? '127.0.0.1' : host
  return { server, port, base: `http://${h}:${port}` }
}

interface RawResponse {
  status: number
  /** Header lines in wire order, names lower-cased. */
  headers: Array<[string, string]>
  body: Buffer
}

/** A minimal HTTP/1.1 client over one socket, reading responses framed by Content-Length. */
class RawClient {
  readonly socket: Socket
  readonly closed: Promise<void>
  #buf = Buffer.alloc(0)
  #wake: (() => void) | undefined = undefined
  #ended = false

  private constructor(socket: Socket) {
    this.socket = socket
    socket.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d])
      this.#wake?.()
    })
    // The server may reset a connection it closes early (413); that is the end of the stream here too.
    socket.on('error', () => {})
    // Not events.once: that rejects on 'error', and a reset is an expected way for these connections to end.
    this.closed = new Promise((resolve) => {
      socket.once('close', () => {
        this.#ended = true
        this.#wake?.()
        resolve()
      })
    })
  }

  static async open(port: number, host = '127.0.0.1'): Promise<RawClient> {
    const socket = connect(port, host)
    await once(socket, 'connect')
    return new RawClient(socket)
  }

  write(data: string | Buffer): void {
    this.socket.write(data)
  }

  /** The next response; `head` says it answers a HEAD (no body follows whatever Content-Length says). */
  async next(head = false): Promise<RawResponse> {
    for (;;) {
      const r = this.#parse(head)
      if (r !== undefined) return r
      if (this.#ended) throw new Error(`connection closed with ${this.#buf.length} unparsed bytes`)
      await new Promise<void>((resolve) => {
        this.#wake = resolve
      })
      this.#wake = undefined
    }
  }

  /** Bytes received but not yet consumed by `next()`. */
  get leftover(): Buffer {
    return this.#buf
  }

  #parse(head: boolean): RawResponse | undefined {
    const end = this.#buf.indexOf('\r\n\r\n')
    if (end === -1) return undefined
    const lines = this.#buf.subarray(0, end).toString('latin1').split('\r\n')
    const status = Number(lines[0]!.split(' ')[1])
    const headers: Array<[string, string]> = lines.slice(1).map((l) => {
      const i = l.indexOf(':')
      return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()]
    })
    const cl = headers.find(([k]) => k === 'content-length')
    const len = head || status === 204 || status === 304 || cl === undefined ? 0 : Number(cl[1])
    if (this.#buf.length < end + 4 + len) return undefined
    const body = Buffer.from(this.#buf.subarray(end + 4, end + 4 + len))
    this.#buf = this.#buf.subarray(end + 4 + len)
    return { status, headers, body }
  }

  destroy(): void {
    this.socket.destroy()
  }
}

function values(r: RawResponse, name: string): string[] {
  return r.headers.filter(([k]) => k === name).map(([, v]) => v)
}

function get(path: string, extra = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: test\r\n${extra}\r\n`
}

/** Runs every conformance test against one implementation. */
export function runHttpSuite(impl: HttpImpl): void {
  describe(`HTTP adapter conformance (${impl})`, SAFETY, () => {
    test('reports which implementation serves', async (t: TestContext) => {
      const { server } = await start(t, impl, () => {})
      t.assert.strictEqual(server.impl, impl)
    })

    test('routes exact paths, params and wildcards, with trailing slashes significant', async (t: TestContext) => {
      const { base } = await start(t, impl, (s) => {
        s.route('GET', '/users', (_req, res) => {
          res.send('users')
        })
        s.route('GET', '/config/', (_req, res) => {
          res.send('config/')
        })
        s.route('GET', '/users/:id/ip/:ip', (req, res) => {
          res.json(req.params)
        })
        s.route('GET', '/users/:id', (req, res) => {
          res.json(req.params)
        })
        s.route('GET', '/url/*', (req, res) => {
          res.json(req.rawParams)
        })
        s.route('GET', '/files/:id/*', (req, res) => {
          res.json(req.rawParams)
        })
        s.route('GET', '/*', (req, res) => {
          res.send(`fallback ${req.rawParams['*'] ?? ''}`)
        })
      })
      const text = async (p: string): Promise<string> => await (await fetch(base + p)).text()
      t.assert.strictEqual(await text('/users'), 'users')
      t.assert.strictEqual(await text('/users/'), 'fallback users/')
      t.assert.strictEqual(await text('/config/'), 'config/')
      t.assert.strictEqual(await text('/config'), 'fallback config')
      t.assert.deepStrictEqual(JSON.parse(await text('/users/42')), { id: '42' })
      t.assert.deepStrictEqual(JSON.parse(await text('/users/7/ip/10.0.0.1')), { id: '7', ip: '10.0.0.1' })
      t.assert.deepStrictEqual(JSON.parse(await text('/url/a/b/c')), { '*': 'a/b/c' })
      t.assert.deepStrictEqual(JSON.parse(await text('/url/')), { '*': '' })
      t.assert.strictEqual(await text('/url'), 'fallback url')
      t.assert.deepStrictEqual(JSON.parse(await text('/files/7/a/b')), { id: '7', '*': 'a/b' })
      t.assert.strictEqual(await text('/files/7'), 'fallback files/7')
      t.assert.strictEqual(await text('/'), 'fallback ')
    })

    test('percent-decodes params and answers 400 for a malformed escape', async (t: TestContext) => {
      const { base } = await start(t, impl, (s) => {
        s.route('GET', '/users/:id', (req, res) => {
          res.json({ id: req.params.id, raw: req.rawParams.id })
        })
      })
      const ok = await fetch(`${base}/users/a%20b%2Fc`)
      t.assert.deepStrictEqual(await ok.json(), { id: 'a b/c', raw: 'a%20b%2Fc' })
      const bad = await fetch(`${base}/users/%E0%A4%A`)
      t.assert.strictEqual(bad.status, 400)
      t.assert.strictEqual(bad.headers.get('content-type'), 'application/json')
      t.assert.deepStrictEqual(await bad.json(), {
        error: { code: 'HTTP_BAD_ESCAPE', message: 'malformed percent-encoding in path', field: 'id' }
      })
    })

    test('gives the raw path and query exactly as sent to a wildcard route', async (t: TestContext) => {
      const { port } = await start(t, impl, (s) => {
        s.route('GET', '/url/*', (req, res) => {
          res.json({ path: req.path, query: req.query, wild: req.rawParams['*'], q: req.searchParams.get('q') })
        })
      })
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      // `100%` is not valid percent-encoding: reading only the raw forms must still work.
      c.write(get('/url/http%3A%2F%2Fexample.com/a%20b/100%?q=%41%20b&x=%zz'))
      const r = await c.next()
      t.assert.strictEqual(r.status, 200)
      t.assert.deepStrictEqual(JSON.parse(r.body.toString()), {
        path: '/url/http%3A%2F%2Fexample.com/a%20b/100%',
        query: 'q=%41%20b&x=%zz',
        wild: 'http%3A%2F%2Fexample.com/a%20b/100%',
        q: 'A b'
      })
    })

    test('answers an unknown path with 404 JSON, or with the notFound handler', async (t: TestContext) => {
      const { base } = await start(t, impl, (s) => {
        s.route('GET', '/a', (_req, res) => {
          res.send('a')
        })
      })
      const r = await fetch(`${base}/nope`)
      t.assert.strictEqual(r.status, 404)
      t.assert.strictEqual(r.headers.get('content-type'), 'application/json')
      t.assert.deepStrictEqual(await r.json(), { error: { code: 'HTTP_NOT_FOUND', message: 'not found' } })

      const custom = await start(t, impl, () => {}, {
        notFound: (req, res) => {
          res.status(404).header('Content-Type', 'text/html').send(`<p>${req.path}</p>`)
        }
      })
      const r2 = await fetch(`${custom.base}/x`)
      t.assert.strictEqual(r2.status, 404)
      t.assert.strictEqual(r2.headers.get('content-type'), 'text/html')
      t.assert.strictEqual(await r2.text(), '<p>/x</p>')
    })

    test('answers a known path with the wrong method with 405 and Allow', async (t: TestContext) => {
      const { base } = await start(t, impl, (s) => {
        s.route('GET', '/users/:id', (_req, res) => {
          res.send('get')
        })
        s.route(['PUT', 'DELETE'], '/users/:id', (_req, res) => {
          res.send('write')
        })
      })
      const r = await fetch(`${base}/users/1`, { method: 'POST', body: '{}' })
      t.assert.strictEqual(r.status, 405)
      t.assert.strictEqual(r.headers.get('allow'), 'DELETE, GET, HEAD, PUT')
      t.assert.deepStrictEqual(await r.json(), {
        error: { code: 'HTTP_METHOD_NOT_ALLOWED', message: 'method POST not allowed' }
      })
      t.assert.strictEqual(await (await fetch(`${base}/users/1`, { method: 'DELETE' })).text(), 'write')
    })

    test('lets the app shape the 405 answer (text/html, Allow: GET)', async (t: TestContext) => {
      const { base } = await start(
        t,
        impl,
        (s) => {
          s.route('GET', '/', (_req, res) => {
            res.send('home')
          })
        },
        {
          methodNotAllowed: (_req, res, allowed) => {
            res
              .status(405)
              .header('Content-Type', 'text/html')
              .header('Allow', allowed.filter((m) => m !== 'HEAD').join(', '))
              .send('<h1>405</h1>')
          }
        }
      )
      const r = await fetch(`${base}/`, { method: 'POST' })
      t.assert.strictEqual(r.status, 405)
      t.assert.strictEqual(r.headers.get('content-type'), 'text/html')
      t.assert.strictEqual(r.headers.get('allow'), 'GET')
      t.assert.strictEqual(await r.text(), '<h1>405</h1>')
    })

    test('routes any method to a "*" route', async (t: TestContext) => {
      const { base } = await start(t, impl, (s) => {
        s.route('GET', '/x', (_req, res) => {
          res.send('get')
        })
        s.route('*', '/x', (req, res) => {
          res.send(`any ${req.method}`)
        })
      })
      t.assert.strictEqual(await (await fetch(`${base}/x`)).text(), 'get')
      t.assert.strictEqual(await (await fetch(`${base}/x`, { method: 'PATCH' })).text(), 'any PATCH')
    })

    test('answers HEAD through the GET route with headers and Content-Length but no body', async (t: TestContext) => {
      const { port } = await start(t, impl, (s) => {
        s.route('GET', '/page', (_req, res) => {
          res.header('X-Page', '1').send('hello world')
        })
      })
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      c.write(`HEAD /page HTTP/1.1\r\nHost: test\r\n\r\n${get('/page')}`)
      const head = await c.next(true)
      t.assert.strictEqual(head.status, 200)
      t.assert.deepStrictEqual(values(head, 'content-length'), ['11'])
      t.assert.deepStrictEqual(values(head, 'x-page'), ['1'])
      // Had the HEAD answer carried a body, its bytes would sit in front of the second status line.
      const after = await c.next()
      t.assert.strictEqual(after.status, 200)
      t.assert.strictEqual(after.body.toString(), 'hello world')
    })

    test('parses JSON bodies and answers bad JSON with 400 HTTP_BAD_JSON', async (t: TestContext) => {
      const { base } = await start(t, impl, (s) => {
        s.route('POST', '/echo', async (req, res) => {
          res.json({ got: await req.json() }, 201)
        })
      })
      const ok = await fetch(`${base}/echo`, { method: 'POST', body: JSON.stringify({ a: [1, 'ü'] }) })
      t.assert.strictEqual(ok.status, 201)
      t.assert.deepStrictEqual(await ok.json(), { got: { a: [1, 'ü'] } })
      const bad = await fetch(`${base}/echo`, { method: 'POST', body: '{"a":' })
      t.assert.strictEqual(bad.status, 400)
      t.assert.strictEqual(bad.headers.get('content-type'), 'application/json')
      t.assert.deepStrictEqual(await bad.json(), {
        error: { code: 'HTTP_BAD_JSON', message: 'request body is not valid JSON' }
      })
    })

    test('receives chunked and large bodies intact', async (t: TestContext) => {
      const { base, port } = await start(t, impl, (s) => {
        s.route('POST', '/len', async (req, res) => {
          const b = await req.body()
          let sum = 0
          for (const x of b) sum = (sum + x) % 65521
          res.json({ length: b.length, sum })
        })
      })
      const big = Buffer.alloc(900 * 1024)
      for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff
      let sum = 0
      for (const x of big) sum = (sum + x) % 65521
      const r = await fetch(`${base}/len`, { method: 'POST', body: big })
      t.assert.deepStrictEqual(await r.json(), { length: big.length, sum })

      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      c.write(
        'POST /len HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n'
      )
      const chunked = await c.next()
      let s2 = 0
      for (const x of Buffer.from('hello world')) s2 = (s2 + x) % 65521
      t.assert.deepStrictEqual(JSON.parse(chunked.body.toString()), { length: 11, sum: s2 })
    })

    test('answers 413 JSON for a declared Content-Length over the limit without reading it', async (t: TestContext) => {
      let called = 0
      const { port } = await start(
        t,
        impl,
        (s) => {
          s.route('POST', '/up', async (req, res) => {
            called++
            res.send(String((await req.body()).length))
          })
        },
        { bodyLimit: 1000 }
      )
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      c.write('POST /up HTTP/1.1\r\nHost: test\r\nContent-Length: 1001\r\n\r\n')
      const r = await c.next()
      t.assert.strictEqual(r.status, 413)
      t.assert.deepStrictEqual(values(r, 'content-type'), ['application/json'])
      t.assert.deepStrictEqual(values(r, 'connection'), ['close'])
      t.assert.deepStrictEqual(JSON.parse(r.body.toString()), {
        error: { code: 'HTTP_BODY_TOO_LARGE', message: 'request body exceeds 1000 bytes' }
      })
      await c.closed
      t.assert.strictEqual(called, 0)
    })

    test('answers 413 when a chunked body grows past the limit, and a body at the limit passes', async (t: TestContext) => {
      const { port, base } = await start(
        t,
        impl,
        (s) => {
          s.route('POST', '/up', async (req, res) => {
            res.send(String((await req.body()).length))
          })
        },
        { bodyLimit: 1000 }
      )
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      c.write('POST /up HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n')
      c.write(`258\r\n${'a'.repeat(600)}\r\n`)
      c.write(`258\r\n${'a'.repeat(600)}\r\n`)
      const r = await c.next()
      t.assert.strictEqual(r.status, 413)
      t.assert.strictEqual(JSON.parse(r.body.toString()).error.code, 'HTTP_BODY_TOO_LARGE')
      await c.closed
      const ok = await fetch(`${base}/up`, { method: 'POST', body: 'b'.repeat(1000) })
      t.assert.strictEqual(await ok.text(), '1000')
    })

    test('survives a client that disconnects mid-body, and writing after abort is a no-op', async (t: TestContext) => {
      let settle: (v: unknown) => void = () => {}
      const outcome = new Promise((resolve) => {
        settle = resolve
      })
      const { port, base } = await start(t, impl, (s) => {
        s.route('POST', '/up', async (req, res) => {
          try {
            await req.body()
            settle('resolved')
          } catch (err) {
            settle(err instanceof HttpError ? err.code : err)
            res.json({ late: true }) // must not throw or crash the server
            res.status(500).header('X', 'y').send('again')
            t.assert.strictEqual(res.aborted, true)
          }
        })
        s.route('GET', '/alive', (_req, res) => {
          res.send('yes')
        })
      })
      const c = await RawClient.open(port)
      c.write('POST /up HTTP/1.1\r\nHost: test\r\nContent-Length: 100000\r\n\r\n')
      c.write('x'.repeat(1000))
      // Wait until the handler runs (it is awaiting the body) before hanging up.
      await new Promise<void>((resolve) => {
        setImmediate(resolve)
      })
      c.destroy()
      t.assert.strictEqual(await outcome, 'HTTP_CLIENT_ABORTED')
      t.assert.strictEqual(await (await fetch(`${base}/alive`)).text(), 'yes')
    })

    test('reports the IPv4 peer as a dotted quad', async (t: TestContext) => {
      const { base } = await start(t, impl, (s) => {
        s.route('GET', '/ip', (req, res) => {
          res.send(req.remoteAddress)
        })
      })
      t.assert.strictEqual(await (await fetch(`${base}/ip`)).text(), '127.0.0.1')
    })

    test('still reports the peer to a handler that reads it only after an await', async (t: TestContext) => {
      const { base } = await start(t, impl, (s) => {
        s.route('GET', '/later', async (req, res) => {
          await new Promise((resolve) => setImmediate(resolve))
          res.send(req.remoteAddress)
        })
      })
      t.assert.strictEqual(await (await fetch(`${base}/later`)).text(), '127.0.0.1')
    })

    test('joins a repeated header field but keeps the first of a single-valued one, read now or after an await', async (t: TestContext) => {
      const { port } = await start(t, impl, (s) => {
        const show = (req: HttpRequest): Record<string, unknown> => ({
          multi: req.header('X-Multi'),
          auth: req.header('Authorization'),
          cookie: req.headers.cookie,
          all: req.headers['x-multi']
        })
        s.route('GET', '/now', (req, res) => {
          res.json(show(req))
        })
        s.route('GET', '/later', async (req, res) => {
          await new Promise((resolve) => setImmediate(resolve))
          res.json(show(req))
        })
      })
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      const fields =
        'X-Multi: a\r\nAuthorization: one\r\nCookie: x=1\r\nX-Multi: b\r\nAuthorization: two\r\nCookie: y=2\r\n'
      for (const path of ['/now', '/later']) {
        c.write(get(path, fields))
        const r = await c.next()
        t.assert.deepStrictEqual(JSON.parse(r.body.toString()), {
          multi: 'a, b',
          auth: 'one',
          cookie: 'x=1; y=2',
          all: 'a, b'
        })
      }
    })

    test('drops the body of a GET unread and keeps serving the connection', async (t: TestContext) => {
      const { port } = await start(
        t,
        impl,
        (s) => {
          s.route('GET', '/size', async (req, res) => {
            res.send(String((await req.body()).length))
          })
        },
        { bodyLimit: 4 }
      )
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      c.write(`GET /size HTTP/1.1\r\nHost: test\r\nContent-Length: 11\r\n\r\nhello world${get('/size')}`)
      for (let i = 0; i < 2; i++) {
        const r = await c.next()
        t.assert.strictEqual(r.status, 200)
        t.assert.strictEqual(r.body.toString(), '0')
      }
    })

    test('refuses a header name or value with CR or LF instead of splitting the response', async (t: TestContext) => {
      const { port } = await start(t, impl, (s) => {
        s.route('GET', '/value', (_req, res) => {
          res.header('Location', '/x\r\nX-Injected: 1').send('no')
        })
        s.route('GET', '/name', (_req, res) => {
          res.header('X-A\r\nX-Injected', '1').send('no')
        })
      })
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      for (const path of ['/value', '/name']) {
        c.write(get(path))
        const r = await c.next()
        t.assert.strictEqual(r.status, 500)
        t.assert.deepStrictEqual(
          r.headers.filter(([name]) => name.startsWith('x-')),
          []
        )
      }
    })

    test('reports the IPv6 peer compressed when listening on ::1', async (t: TestContext) => {
      const { base } = await start(
        t,
        impl,
        (s) => {
          s.route('GET', '/ip', (req, res) => {
            res.send(req.remoteAddress)
          })
        },
        {},
        '::1'
      )
      t.assert.strictEqual(await (await fetch(`${base}/ip`)).text(), '::1')
    })

    test('reports an IPv4 peer on a dual-stack "::" socket as a dotted quad', async (t: TestContext) => {
      const { port } = await start(
        t,
        impl,
        (s) => {
          s.route('GET', '/ip', (req, res) => {
            res.send(req.remoteAddress)
          })
        },
        {},
        '::'
      )
      t.assert.strictEqual(await (await fetch(`http://127.0.0.1:${port}/ip`)).text(), '127.0.0.1')
      t.assert.strictEqual(await (await fetch(`http://[::1]:${port}/ip`)).text(), '::1')
    })

    test('sends exactly one Connection: keep-alive by default and keeps the connection', async (t: TestContext) => {
      const { port } = await start(t, impl, (s) => {
        s.route('GET', '/', (_req, res) => {
          res.send('x')
        })
      })
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      c.write(get('/') + get('/'))
      const a = await c.next()
      const b = await c.next()
      t.assert.deepStrictEqual(values(a, 'connection'), ['keep-alive'])
      t.assert.deepStrictEqual(values(b, 'connection'), ['keep-alive'])
    })

    test('sends exactly one Connection: close and closes when the request asked for it', async (t: TestContext) => {
      const { port } = await start(t, impl, (s) => {
        s.route('GET', '/', (_req, res) => {
          res.send('x')
        })
      })
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      c.write(get('/', 'Connection: close\r\n'))
      const r = await c.next()
      t.assert.strictEqual(r.body.toString(), 'x')
      t.assert.deepStrictEqual(values(r, 'connection'), ['close'])
      await c.closed
    })

    test('closes after the response when the handler sets Connection: close', async (t: TestContext) => {
      const { port } = await start(t, impl, (s) => {
        s.route('GET', '/', (_req, res) => {
          res.header('Connection', 'close').send('bye')
        })
      })
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      c.write(get('/'))
      const r = await c.next()
      t.assert.deepStrictEqual(values(r, 'connection'), ['close'])
      await c.closed
    })

    test(
      'answers HTTP/1.0 without keep-alive with Connection: close',
      {
        skip: impl === 'uws' ? 'uWS 20.30 does not answer HTTP/1.0 requests at all' : false
      },
      async (t: TestContext) => {
        const { port } = await start(t, impl, (s) => {
          s.route('GET', '/', (_req, res) => {
            res.send('x')
          })
        })
        const c = await RawClient.open(port)
        t.after(() => {
          c.destroy()
        })
        c.write('GET / HTTP/1.0\r\nHost: test\r\n\r\n')
        const r = await c.next()
        t.assert.deepStrictEqual(values(r, 'connection'), ['close'])
        await c.closed
      }
    )

    const UWS_OLD_HTTP =
      impl === 'uws'
        ? 'uWS 20.30 leaves these requests unanswered (engine/http/uws.ts); roles that meet such clients use node:http'
        : false

    test(
      'answers HTTP/1.0 without Host, and keeps the connection when it asks for keep-alive',
      { skip: UWS_OLD_HTTP },
      async (t: TestContext) => {
        const { port } = await start(t, impl, (s) => {
          s.route('GET', '/', (req, res) => {
            res.send(`host=${req.headers.host ?? '-'}`)
          })
        })
        const c = await RawClient.open(port)
        t.after(() => {
          c.destroy()
        })
        c.write('GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')
        const a = await c.next()
        t.assert.strictEqual(a.status, 200)
        t.assert.strictEqual(a.body.toString(), 'host=-')
        t.assert.deepStrictEqual(values(a, 'connection'), ['keep-alive'])
        c.write('GET / HTTP/1.0\r\n\r\n')
        const b = await c.next()
        t.assert.strictEqual(b.status, 200)
        t.assert.deepStrictEqual(values(b, 'connection'), ['close'])
        await c.closed
      }
    )

    test(
      'answers 400 HTTP_BAD_HOST to HTTP/1.1 without Host and to a repeated Host, and closes',
      { skip: UWS_OLD_HTTP },
      async (t: TestContext) => {
        let calls = 0
        const { port } = await start(t, impl, (s) => {
          s.route('GET', '/', (_req, res) => {
            calls++
            res.send('x')
          })
        })
        for (const request of ['GET / HTTP/1.1\r\n\r\n', 'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n']) {
          const c = await RawClient.open(port)
          t.after(() => {
            c.destroy()
          })
          c.write(request)
          const r = await c.next()
          t.assert.strictEqual(r.status, 400)
          t.assert.strictEqual(JSON.parse(r.body.toString()).error.code, 'HTTP_BAD_HOST')
          t.assert.deepStrictEqual(values(r, 'connection'), ['close'])
          await c.closed
        }
        t.assert.strictEqual(calls, 0)
      }
    )

    test(
      'routes an absolute-form request by its path, with its authority as Host',
      { skip: UWS_OLD_HTTP },
      async (t: TestContext) => {
        const { port } = await start(t, impl, (s) => {
          s.route('GET', '/a', (req, res) => {
            res.send(`${req.headers.host ?? '-'} ${req.query}`)
          })
          s.route('GET', '/', (req, res) => {
            res.send(`root ${req.headers.host ?? '-'}`)
          })
        })
        const c = await RawClient.open(port)
        t.after(() => {
          c.destroy()
        })
        c.write('GET http://Proxy.Example:8080/a?q=1 HTTP/1.1\r\nHost: other.example\r\n\r\n')
        const a = await c.next()
        t.assert.strictEqual(a.status, 200)
        t.assert.strictEqual(a.body.toString(), 'Proxy.Example:8080 q=1')
        c.write('GET http://x.example HTTP/1.1\r\nHost: x.example\r\n\r\n')
        const b = await c.next()
        t.assert.strictEqual(b.body.toString(), 'root x.example')
      }
    )

    test('writes repeated headers once each and a custom-serialised JSON string as given', async (t: TestContext) => {
      const { port } = await start(t, impl, (s) => {
        s.route('GET', '/', (_req, res) => {
          const ascii = JSON.stringify({ name: 'Сайт' }).replace(
            /[\u007f-\uffff]/g,
            (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`
          )
          res
            .header('Set-Cookie', 'a=1')
            .header('Set-Cookie', 'b=2')
            .header('Content-Type', 'application/json')
            .send(ascii)
        })
      })
      const c = await RawClient.open(port)
      t.after(() => {
        c.destroy()
      })
      c.write(get('/'))
      const r = await c.next()
      t.assert.deepStrictEqual(values(r, 'set-cookie'), ['a=1', 'b=2'])
      t.assert.deepStrictEqual(values(r, 'content-type'), ['application/json'])
      t.assert.strictEqual(r.body.toString('latin1'), '{"name":"\\u0421\\u0430\\u0439\\u0442"}')
    })

    test('maps a thrown HttpError to its status and JSON body, sync or async', async (t: TestContext) => {
      const errors: unknown[] = []
      const { base } = await start(
        t,
        impl,
        (s) => {
          s.route('GET', '/sync', () => {
            throw new HttpError(409, 'API_CONFLICT', 'user exists', { field: 'login' })
          })
          s.route('GET', '/async', async () => {
            await Promise.resolve()
            throw new HttpError(403, 'API_FORBIDDEN', 'no')
          })
        },
        {
          onError: (err) => {
            errors.push(err)
          }
        }
      )
      const a = await fetch(`${base}/sync`)
      t.assert.strictEqual(a.status, 409)
      t.assert.deepStrictEqual(await a.json(), {
        error: { code: 'API_CONFLICT', message: 'user exists', field: 'login' }
      })
      const b = await fetch(`${base}/async`)
      t.assert.strictEqual(b.status, 403)
      t.assert.deepStrictEqual(await b.json(), { error: { code: 'API_FORBIDDEN', message: 'no' } })
      t.assert.strictEqual(errors.length, 0)
    })

    test('maps any other error to 500 HTTP_INTERNAL and reports it once', async (t: TestContext) => {
      const errors: unknown[] = []
      const boom = new Error('boom')
      const { base } = await start(
        t,
        impl,
        (s) => {
          s.route('GET', '/sync', (_req, res) => {
            res.header('X-Partial', '1')
            throw boom
          })
          s.route('GET', '/async', async () => {
            await Promise.resolve()
            throw boom
          })
          s.route('GET', '/silent', () => {})
        },
        {
          onError: (err) => {
            errors.push(err)
          }
        }
      )
      for (const p of ['/sync', '/async']) {
        const r = await fetch(base + p)
        t.assert.strictEqual(r.status, 500)
        t.assert.strictEqual(r.headers.get('x-partial'), null)
        t.assert.strictEqual(r.headers.get('content-type'), 'application/json')
        t.assert.deepStrictEqual(await r.json(), { error: { code: 'HTTP_INTERNAL', message: 'internal error' } })
      }
      t.assert.deepStrictEqual(errors, [boom, boom])
      const silent = await fetch(`${base}/silent`)
      t.assert.strictEqual(silent.status, 500)
      t.assert.strictEqual(errors.length, 3)
    })

    test('refuses a port another listener of this user holds, with EADDRINUSE: two daemons never share one', async (t: TestContext) => {
      const first = createHttpServer({ impl })
      first.route('GET', '/', (_req, res) => {
        res.send('first')
      })
      // A port asked for by number: uSockets leaves SO_REUSEPORT off for port 0 anyway.
      const port = await releasedPort()
      await first.listen('127.0.0.1', port)
      t.after(() => first.close())
      const second = createHttpServer({ impl })
      second.route('GET', '/', (_req, res) => {
        res.send('second')
      })
      const err = (await second.listen('127.0.0.1', port).then(
        () => undefined,
        (e: unknown) => e
      )) as NodeJS.ErrnoException | undefined
      if (err === undefined) await second.close()
      t.assert.strictEqual(err?.code, 'EADDRINUSE')
      for (let i = 0; i < 8; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } })
        t.assert.strictEqual(await res.text(), 'first')
      }
    })

    test('close() drops open keep-alive connections and stops listening', async (t: TestContext) => {
      const server = createHttpServer({ impl })
      server.route('GET', '/', (_req, res) => {
        res.send('x')
      })
      server.route('GET', '/hang', async (req) => {
        await req.body()
        await new Promise(() => {})
      })
      const { port } = await server.listen('127.0.0.1', 0)
      const idle = await RawClient.open(port)
      idle.write(get('/'))
      t.assert.strictEqual((await idle.next()).status, 200)
      const busy = await RawClient.open(port)
      busy.write(get('/hang'))
      // Whether or not /hang has been read yet, close() must drop both connections.
      await server.close()
      await Promise.all([idle.closed, busy.closed])
      const refused = connect(port, '127.0.0.1')
      const [err] = (await once(refused, 'error')) as [NodeJS.ErrnoException]
      t.assert.strictEqual(err.code, 'ECONNREFUSED')
    })

    test('streams a body: headers and chunks as written, false under backpressure, drain, end, and close on a peer that leaves', async (t: TestContext) => {
      let stalled: { sawFalse: boolean; drained: boolean; closed: boolean; written: number } | undefined
      const { base, port } = await start(t, impl, (s) => {
        s.route('GET', '/tick', (_req, res) => {
          const st = res.header('Content-Type', 'text/event-stream').stream('a\n')
          setTimeout(() => {
            st.write('b\n')
            st.end()
          }, 10)
        })
        s.route('GET', '/flood', (_req, res) => {
          const st = res.stream('start\n')
          const state = { sawFalse: false, drained: false, closed: false, written: 0 }
          stalled = state
          const chunk = 'x'.repeat(16 * 1024) + '\n'
          // Write until the socket is full, then stop: what a well-behaved writer does.
          const pump = (): void => {
            while (!st.closed && state.written < 4096) {
              state.written++
              if (!st.write(chunk)) {
                state.sawFalse = true
                return
              }
            }
          }
          st.onDrain(() => {
            state.drained = true
            pump()
          })
          st.onClose(() => {
            state.closed = true
          })
          setImmediate(pump)
        })
      })
      const r = await fetch(`${base}/tick`)
      t.assert.strictEqual(r.status, 200)
      t.assert.strictEqual(r.headers.get('content-type'), 'text/event-stream')
      t.assert.strictEqual(r.headers.get('content-length'), null)
      t.assert.strictEqual(await r.text(), 'a\nb\n')
      t.assert.strictEqual((await fetch(`${base}/tick`, { method: 'HEAD' })).status, 200)

      // A client that does not read: the writer sees false and stops; reading a bit drains; leaving closes.
      const client = await RawClient.open(port)
      client.socket.pause()
      client.write(get('/flood'))
      for (let i = 0; i < 500 && stalled?.sawFalse !== true; i++)
        await new Promise((resolve) => setTimeout(resolve, 10))
      t.assert.strictEqual(stalled?.sawFalse, true)
      const before = stalled.written
      t.assert.ok(before < 4096, `the writer stopped at ${before} chunks`)
      client.socket.resume()
      for (let i = 0; i < 500 && !stalled.drained; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      t.assert.strictEqual(stalled.drained, true)
      client.socket.destroy()
      for (let i = 0; i < 500 && !stalled.closed; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      t.assert.strictEqual(stalled.closed, true)
    })

    test(
      'serves HTTPS with the given certificate files',
      { skip: hasOpenssl() ? false : OPENSSL_MISSING },
      async (t: TestContext) => {
        const dir = tempDir(t, 'http-tls-')
        const { cert, key } = writeTestCertificate(dir, 'localhost')
        const { port } = await start(
          t,
          impl,
          (s) => {
            s.route('GET', '/', (_req, res) => {
              res.send('secure')
            })
          },
          { tls: { cert, key } }
        )
        const body = await new Promise<string>((resolve, reject) => {
          const req = httpsRequest(
            { host: '127.0.0.1', port, path: '/', rejectUnauthorized: false, agent: false },
            (res) => {
              let s = ''
              res.on('data', (d: Buffer) => {
                s += d.toString()
              })
              res.on('end', () => {
                resolve(s)
              })
            }
          )
          req.on('error', reject)
          req.end()
        })
        t.assert.strictEqual(body, 'secure')
      }
    )
  })
}
