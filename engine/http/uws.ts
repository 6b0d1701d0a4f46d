/**
 * The uWebSockets.js implementation. uWS is fast because it hands us a stack-allocated request that dies when
 * the callback returns and a response that dies on end/abort; this file is where that lifetime is respected:
 * `req` is read only during the callback (lazily, and whatever an awaiting handler may still need is copied
 * before the callback returns), `onData` is attached before the handler runs and `onAborted` before the
 * callback returns whenever the answer is not written yet, and writes after an await go through `res.cork`.
 *
 * Behaviour of this build (@trufflesuite/uws-js-unofficial 20.30.0) that shaped the code, all checked on the
 * wire:
 * - uWS adds `Date` and `uWebSockets: 20` to every response and computes `Content-Length` itself in `end()`.
 * - It writes no `Connection` header on its own; it closes after the response when the request said
 *   `Connection: close`; `end(body, true)` closes *and* writes `Connection: close` itself. So we write
 *   `Connection` ourselves except when we pass `closeConnection`, to never send it twice.
 * - `end()` writes the body even for HEAD; HEAD must use `endWithoutBody()`. `endWithoutBody` with any argument
 *   (`reportedContentLength`, `closeConnection`) aborts the process ("Returning from a request handler without
 *   responding"), so we write `Content-Length` by hand and call it with none.
 * - `getMethod()` and even `getCaseSensitiveMethod()` return lower case; `getQuery()` returns `undefined`
 *   (not `''`) when there is no `?`.
 * - `getRemoteAddressAsText()` prints IPv6 uncompressed and IPv4-mapped as hex; we format the binary form.
 * - `onData` fires `(empty, true)` for a request without a body, and chunked request bodies are supported.
 * - HTTP/1.0 requests (with or without `Host`) and HTTP/1.1 requests without `Host` get no response, and the
 *   connection stays open until the client closes its side or uWS's HTTP idle timeout (compiled in, about
 *   10 s) closes it; lower-case or unknown methods are closed at once, unanswered. node answers them all.
 *   No App option changes this; `common.http-server: node` is the way out (docs/local.md, "Old HTTP clients").
 *   `app.close()` closes every connection and fires `onAborted`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type * as Uws from 'uWebSockets.js'
import { formatAddressBytes } from './address.js'
import {
  BodyCollector,
  Request,
  Response,
  abortedError,
  addHeaderField,
  answerTooLarge,
  dispatch,
  statusLine,
  type DispatchOptions,
  type RequestSource,
  type Transport,
  type TransportStream
} from './core.js'

export type UwsModule = typeof Uws

/**
 * uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT. By default uSockets sets SO_REUSEPORT on every listener with
 * a port, so a second daemon of the same user on that port binds too and the kernel splits the
 * connections between them, silently; with it, the second gets EADDRINUSE, as with node:http.
 */
const EXCLUSIVE_PORT = 1
type ListenWithOptions = (
  host: string,
  port: number,
  options: number,
  cb: (listenSocket: Uws.us_listen_socket | false) => void
) => Uws.TemplatedApp

/**
 * Loads the native uWS addon, or throws. The package's own entry point falls back to a slow JS
 * re-implementation with two console warnings when the addon does not load; we want to make that choice
 * ourselves (node:http, one warning), so the binary is required directly when the package layout is known.
 */
export function loadUwsNative(): UwsModule {
  const require = createRequire(import.meta.url)
  const pkgDir = dirname(require.resolve('uWebSockets.js/package.json'))
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`
  // trufflesuite keeps binaries in binaries/, the official package at its root.
  let knownLayout = false
  for (const dir of [join(pkgDir, 'binaries'), pkgDir]) {
    const candidate = join(dir, file)
    if (existsSync(candidate)) return require(candidate) as UwsModule
    if (existsSync(dir) && readdirSync(dir).some((f) => /^uws_.*\.node$/.test(f))) knownLayout = true
  }
  // The package ships binaries for some Node ABIs only (20.30: 93, 108 and 115, i.e. Node 16, 18 and 20; none
  // for Node 22's 127 or Node 24's 137). Say so in one line instead of letting its entry point print a stack
  // and load its slow JS stand-in.
  if (knownLayout) {
    throw new Error(
      `no ${file} in uWebSockets.js ${readPackageVersion(pkgDir)} (no build for Node ${process.versions.node}, ABI ${process.versions.modules})`
    )
  }
  const mod = require('uWebSockets.js') as UwsModule
  if (typeof mod.App !== 'function' || !Function.prototype.toString.call(mod.App).includes('[native code]')) {
    throw new Error('uWebSockets.js loaded without its native addon')
  }
  return mod
}

function readPackageVersion(dir: string): string {
  try {
    const v = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version
    return typeof v === 'string' ? v : '(unknown version)'
  } catch {
    return '(unknown version)'
  }
}

export interface UwsServerConfig extends DispatchOptions {
  readonly tls: { cert: string; key: string } | undefined
}

// uWS reports the method in lower case; upper-casing the common ones by table saves a string per request.
const METHODS: Readonly<Record<string, string>> = {
  get: 'GET',
  head: 'HEAD',
  post: 'POST',
  put: 'PUT',
  delete: 'DELETE',
  patch: 'PATCH',
  options: 'OPTIONS'
}

// uWS converts every JS string it is given to UTF-8 (a length scan, a copy); bytes it takes as they are.
const CONNECTION = Buffer.from('Connection')
const KEEP_ALIVE = Buffer.from('keep-alive')
const CLOSE = Buffer.from('close')

/**
 * Header names and values as bytes, for the ones that repeat (`Content-Type`, `application/json`,
 * `Cache-Control`…): converted once. Bounded, since values can be dynamic; past the bound a string
 * is handed to uWS as it is.
 */
const encodedHeaders = new Map<string, Buffer>()
const MAX_ENCODED_HEADERS = 1024
function headerBytes(s: string): string | Buffer {
  let b = encodedHeaders.get(s)
  if (b === undefined) {
    if (encodedHeaders.size >= MAX_ENCODED_HEADERS || s.length > 128) return s
    b = Buffer.from(s)
    encodedHeaders.set(s, b)
  }
  return b
}

/**
 * One exchange: the native request and response while they live, as the transport that writes the
 * answer and the source a Request reads its headers and peer from. The request is only valid during
 * the route callback, the response until it is written or aborted: Request.settle() copies what is
 * left before the callback returns, so the reads below only happen while both are alive.
 */
class UwsExchange implements Transport, RequestSource {
  readonly res: Uws.HttpResponse
  readonly req: Uws.HttpRequest
  /** True while the route callback runs: uWS has corked the socket for us then. */
  inCallback = true

  constructor(res: Uws.HttpResponse, req: Uws.HttpRequest) {
    this.res = res
    this.req = req
  }

  rawQuery(): string {
    this.#checkAlive()
    return this.req.getQuery() ?? ''
  }

  peerAddress(): string {
    this.#checkAlive()
    return formatAddressBytes(new Uint8Array(this.res.getRemoteAddress()))
  }

  allHeaders(): Record<string, string> {
    this.#checkAlive()
    const headers: Record<string, string> = {}
    this.req.forEach((k, v) => {
      addHeaderField(headers, k, v)
    })
    return headers
  }

  firstHeader(name: string): string | undefined {
    this.#checkAlive()
    // uWS answers '' for an absent field; a present but empty one reads the same, which no caller
    // of a single-valued field needs to tell apart.
    const v = this.req.getHeader(name)
    return v === '' ? undefined : v
  }

  // Only a handler that answered at once and reads the request in a later tick gets here after the
  // callback: uWS has reused the request's memory by then, so refuse clearly instead of reading it.
  #checkAlive(): void {
    if (!this.inCallback) throw new Error('request headers and peer address must be read before the response is sent')
  }

  write(r: Response, body: string | Buffer): void {
    if (this.inCallback) {
      this.#write(r, body)
    } else {
      this.res.cork(() => {
        this.#write(r, body)
      })
    }
  }

  openStream(r: Response, first: string, onDrain: () => void): TransportStream {
    const res = this.res
    // In a later tick every native call must be corked, or uWS sends each piece as its own packet.
    const corked = <T>(fn: () => T): T => {
      if (this.inCallback) return fn()
      let out: T
      res.cork(() => {
        out = fn()
      })
      return out!
    }
    corked(() => {
      if (r.statusCode !== 200) res.writeStatus(statusLine(r.statusCode))
      const h = r.headerList
      for (let i = 0; i < h.length; i += 2) res.writeHeader(headerBytes(h[i]!), headerBytes(h[i + 1]!))
      res.writeHeader(CONNECTION, r.keepAlive ? KEEP_ALIVE : CLOSE)
      // write() switches uWS to chunked encoding; a write that answers false is still queued by uWS.
      res.write(first)
    })
    res.onWritable(() => {
      onDrain()
      return true
    })
    return {
      write: (chunk) => corked(() => res.write(chunk)),
      end: () => {
        corked(() => res.end())
      }
    }
  }

  #write(r: Response, body: string | Buffer): void {
    const res = this.res
    const code = r.statusCode
    // uWS writes `200 OK` itself when no status was written.
    if (code !== 200) res.writeStatus(statusLine(code))
    const h = r.headerList
    for (let i = 0; i < h.length; i += 2) res.writeHeader(headerBytes(h[i]!), headerBytes(h[i + 1]!))
    // Passing closeConnection makes uWS write `Connection: close` itself; only do that when we (not the peer)
    // decided to close, since uWS already closes when the request asked for it.
    const uwsCloses = r.closeRequested
    if (!uwsCloses) res.writeHeader(CONNECTION, r.keepAlive ? KEEP_ALIVE : CLOSE)
    if (code === 204 || code === 304 || (code >= 100 && code < 200)) {
      res.endWithoutBody() // RFC 9110 §8.6: no Content-Length on 1xx/204; 304 keeps none here either
    } else if (r.isHead) {
      // With `closeRequested` the header was skipped above and endWithoutBody cannot close (see top); the peer
      // still learns it from this header.
      if (uwsCloses) res.writeHeader('Connection', 'close')
      res.writeHeader('Content-Length', String(r.bodyLength))
      res.endWithoutBody()
    } else {
      res.end(body, uwsCloses)
    }
  }
}

export class UwsServer {
  readonly impl = 'uws' as const
  readonly #uws: UwsModule
  readonly #app: Uws.TemplatedApp
  readonly #cfg: UwsServerConfig
  #listenSocket: Uws.us_listen_socket | undefined = undefined

  constructor(uws: UwsModule, cfg: UwsServerConfig) {
    this.#uws = uws
    this.#cfg = cfg
    this.#app =
      cfg.tls === undefined ? uws.App() : uws.SSLApp({ cert_file_name: cfg.tls.cert, key_file_name: cfg.tls.key })
    // GET, the method of nearly every request, gets its own registration so its method is known
    // without asking the addon; everything else arrives through any().
    this.#app.get('/*', (res, req) => {
      this.#onRequest(res, req, 'GET')
    })
    this.#app.any('/*', (res, req) => {
      this.#onRequest(res, req, undefined)
    })
  }

  #onRequest(ures: Uws.HttpResponse, ureq: Uws.HttpRequest, knownMethod: string | undefined): void {
    const cfg = this.#cfg
    const exchange = new UwsExchange(ures, ureq)
    let method = knownMethod
    if (method === undefined) {
      const rawMethod = ureq.getMethod()
      method = METHODS[rawMethod] ?? rawMethod.toUpperCase()
    }
    const path = ureq.getUrl()
    // Only what the adapter itself needs is read here (each read is a call into the addon); the
    // query, headers and peer a handler asks for go through the exchange (Request is lazy), and
    // whatever it may still read after an await is copied by settle().
    const connection = ureq.getHeader('connection')
    const keepAlive = connection === '' || !/\bclose\b/i.test(connection)
    const isHead = method === 'HEAD'
    const res = new Response(exchange, isHead, keepAlive)
    const limit = cfg.bodyLimit

    // GET and HEAD bodies are not read: they have no defined meaning (RFC 9110 §9.3.1) and no route
    // uses one; uWS still consumes and drops their bytes. Others announce a body by Content-Length
    // (not 0) or Transfer-Encoding; a request without one shares the finished empty body.
    let collector = BodyCollector.EMPTY
    if (method !== 'GET' && !isHead) {
      const declared = ureq.getHeader('content-length')
      if (declared !== '' && Number(declared) > limit) {
        answerTooLarge(res, limit)
        exchange.inCallback = false
        return
      }
      if ((declared !== '' && declared !== '0') || ureq.getHeader('transfer-encoding') !== '') {
        const reading = new BodyCollector(limit, () => {
          answerTooLarge(res, limit)
        })
        ures.onData((chunk, isLast) => {
          reading.push(new Uint8Array(chunk), true)
          if (isLast) reading.end()
        })
        collector = reading
      }
    }
    const req = new Request(method, path, exchange, collector)

    dispatch(cfg, req, res)
    // Answered already (the usual case for a lookup): the native response is finished and nothing
    // needs it. Otherwise the handler awaits (a body, a resolver): what it may still read is copied
    // while the request lives, and uWS needs onAborted before we return (it terminates the process
    // otherwise).
    const answered = res.sent && !res.streaming
    if (!answered) req.settle()
    exchange.inCallback = false
    if (answered) return
    ures.onAborted(() => {
      res.aborted = true
      collector.fail(abortedError())
    })
  }

  listen(host: string, port: number): Promise<{ port: number }> {
    return new Promise((resolve, reject) => {
      // The typings know the options only without a host; the addon reads the numbers in any position.
      const listen = this.#app.listen.bind(this.#app) as unknown as ListenWithOptions
      listen(host, port, EXCLUSIVE_PORT, (ls) => {
        if (ls === false) {
          // uWS says only "false": ask node:net for the errno (EADDRINUSE, EACCES, ...), so the
          // caller reports the address and the reason as it does for node:http.
          void bindError(host, port).then(reject)
          return
        }
        this.#listenSocket = ls
        resolve({ port: this.#uws.us_socket_local_port(ls) })
      })
    })
  }

  close(): Promise<void> {
    if (this.#listenSocket !== undefined) {
      this.#uws.us_listen_socket_close(this.#listenSocket)
      this.#listenSocket = undefined
    }
    // app.close() (not in the typings) also closes open connections, firing onAborted for requests in flight.
    const app = this.#app as Uws.TemplatedApp & { close?: () => void }
    if (typeof app.close === 'function') app.close()
    return Promise.resolve()
  }
}

/**
 * Why `host:port` cannot be bound, for a uWS listen that failed without saying: node:net's errno error
 * (with `code`, `address` and `port`), or, when node:net can bind it after all, a plain error naming it.
 */
function bindError(host: string, port: number): Promise<Error> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', (err) => {
      resolve(err)
    })
    probe.listen({ host, port, exclusive: true }, () => {
      probe.close()
      resolve(
        Object.assign(
          new Error(
            `cannot listen on ${host} port ${port} (uWebSockets.js gives no reason; the address is free to node:net)`
          ),
          { address: host, port }
        )
      )
    })
  })
}
