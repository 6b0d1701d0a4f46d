/**
 * What the two implementations share: the request and response objects handlers see, body collection with a
 * hard limit, and dispatch (route → handler → error mapping). Each implementation only translates its native
 * request into a `Request` and provides a `Transport` that writes one finished response.
 *
 * The response is written in one go at `send()`: status, headers and body are kept in JS until then. That is
 * what uWS wants anyway (it formats a response linearly and must be corked after an await), it lets both
 * implementations own `Content-Length` and `Connection`, and it makes "write after abort" a flag check.
 */
import { STATUS_CODES } from 'node:http'
import { HttpError, INTERNAL_ERROR_BODY, errorBody } from './errors.js'
import type { Router } from './router.js'

/** A request as handlers see it; everything is copied out of the native request before the handler runs. */
export interface HttpRequest {
  /** Upper case, as sent (`GET`, `POST`, …). */
  readonly method: string
  /** Raw path as sent, percent-encoding preserved, without the query. */
  readonly path: string
  /** Raw query string without the `?` (`''` when absent). */
  readonly query: string
  /** The query parsed as `application/x-www-form-urlencoded` (built on first access). */
  readonly searchParams: URLSearchParams
  /** Route params, percent-decoded on first access; a malformed escape throws HttpError 400 `HTTP_BAD_ESCAPE`. */
  readonly params: Readonly<Record<string, string>>
  /** Route params exactly as they appear in the path; `'*'` holds the wildcard's remainder. */
  readonly rawParams: Readonly<Record<string, string>>
  /**
   * Header names lower case. A field sent more than once is joined with `', '`, except the
   * single-valued fields of SINGLE_VALUED_HEADERS, which keep their first value (node's rule).
   */
  readonly headers: Readonly<Record<string, string>>
  /**
   * Peer address: dotted quad for IPv4 (also IPv4-mapped), compressed lower-case IPv6.
   * `query`, `headers`, `header()` and `remoteAddress` are read from the socket on first use: read them
   * before sending the response (any time in a handler that awaits first). On uWS a read after a
   * response was sent synchronously throws.
   */
  readonly remoteAddress: string
  /** Case-insensitive header lookup, same values as `headers`; `undefined` when absent. */
  header(name: string): string | undefined
  /** The whole body; rejects with HttpError 413 past `bodyLimit`, 400 `HTTP_CLIENT_ABORTED` if the peer left. */
  body(): Promise<Buffer>
  /** The body parsed as JSON; rejects with HttpError 400 `HTTP_BAD_JSON` when it does not parse. */
  json(): Promise<unknown>
}

/** The response; nothing is written until `send()`/`json()`, and every call after that (or after abort) is a no-op. */
export interface HttpResponse {
  /** True once the peer has gone; writing is then a no-op. */
  readonly aborted: boolean
  /** True once a response has been handed to the socket. */
  readonly sent: boolean
  /** The status set so far (200 until `status()` or `json(…, status)` says otherwise); final once `sent`. */
  readonly statusCode: number
  status(code: number): this
  /**
   * Adds a header (repeat the name for several values). `Content-Length` is computed and ignored here;
   * `Connection: close` asks for the connection to be closed after this response.
   */
  header(name: string, value: string): this
  /** Sends the response; `Content-Type` defaults to text/plain for strings, application/octet-stream for Buffers. */
  send(body?: string | Buffer): void
  /** Sends `JSON.stringify(value)` as `application/json`. */
  json(value: unknown, status?: number): void
  /**
   * Starts a streamed answer (Server-Sent Events and the like): status and headers now, without
   * `Content-Length`, with `first` as the first body chunk; the body continues through the stream.
   * For HEAD only the headers are sent and the stream comes back closed.
   */
  stream(first: string): HttpStream
}

/**
 * A body written piece by piece. Bounded memory is the writer's job: `write` answers false once the
 * socket's send buffer is full (the chunk is still queued by the transport, once); write more only
 * after `onDrain`, or drop what you would have written.
 */
export interface HttpStream {
  /** True once the peer left or `end()` was called; writes are then no-ops. */
  readonly closed: boolean
  write(chunk: string): boolean
  /** Called each time the socket has sent what was queued, after a write answered false. */
  onDrain(cb: () => void): void
  /** Called once when the peer goes away (not after our own `end()`). */
  onClose(cb: () => void): void
  end(): void
}

/** The native side of a streamed answer. */
export interface TransportStream {
  write(chunk: string): boolean
  end(): void
}

export type Handler = (req: HttpRequest, res: HttpResponse) => void | Promise<void>
export type MethodNotAllowedHandler = (
  req: HttpRequest,
  res: HttpResponse,
  allowed: readonly string[]
) => void | Promise<void>
export type ErrorHook = (err: unknown, req: HttpRequest) => void

export interface DispatchOptions {
  readonly router: Router<Handler>
  readonly bodyLimit: number
  readonly notFound: Handler | undefined
  readonly methodNotAllowed: MethodNotAllowedHandler | undefined
  readonly onError: ErrorHook | undefined
}

/** Writes one finished response to the native socket. Called at most once per request, never after abort. */
export interface Transport {
  write(res: Response, body: string | Buffer): void
  /** Writes status, headers and `first`, leaving the body open; `onDrain` runs when a full buffer empties. */
  openStream(res: Response, first: string, onDrain: () => void): TransportStream
}

const JSON_TYPE = 'application/json'

const statusLines = new Map<number, string>()
/** `200 OK`: uWS wants the reason phrase with the code. */
export function statusLine(code: number): string {
  let line = statusLines.get(code)
  if (line === undefined) {
    line = `${code} ${STATUS_CODES[code] ?? 'Unknown'}`
    statusLines.set(code, line)
  }
  return line
}

/**
 * Fields whose duplicates are dropped, keeping the first value, rather than joined: node's http
 * module does this (IncomingMessage.headers), and the uWS implementation follows the same rule so
 * handlers see one behaviour. For these a lookup can ask the native request for one field.
 * `x-filterd-client` is filterd's own (the front door's relayed client address, engine/net/access.ts):
 * one address by definition, and the management API reads it on every request from loopback, where
 * a lookup of a joined field would read every header from uWS.
 */
export const SINGLE_VALUED_HEADERS: ReadonlySet<string> = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
  'x-filterd-client'
])

/** Adds one received field to a header record by the rule above (cookies join with `; `, RFC 6265 §5.4). */
export function addHeaderField(headers: Record<string, string>, name: string, value: string): void {
  const prev = headers[name]
  if (prev === undefined) headers[name] = value
  else if (!SINGLE_VALUED_HEADERS.has(name)) headers[name] = `${prev}${name === 'cookie' ? '; ' : ', '}${value}`
}

/**
 * What a request reads from the native side only when a handler asks. On uWS the peer address costs
 * a `getpeername` system call and every header a call back into JS, which most requests of an
 * authenticated lookup API never need.
 */
export interface RequestSource {
  /** The raw query string without the `?` (`''` when absent). */
  rawQuery(): string
  peerAddress(): string
  /** Every header, by the rule of SINGLE_VALUED_HEADERS. */
  allHeaders(): Record<string, string>
  /** The first value of one field (lower-case name), or undefined. */
  firstHeader(name: string): string | undefined
}

export class Request implements HttpRequest {
  readonly method: string
  readonly path: string
  rawParams: Record<string, string> = {}
  /** Set by the implementation: the collector fed by the socket. */
  readonly bodyCollector: BodyCollector
  /** Where the headers and the peer address still come from, until `settle()`. */
  #source: RequestSource | undefined
  #query: string | undefined
  #headers: Record<string, string> | undefined
  #remoteAddress: string | undefined
  #params: Record<string, string> | undefined = undefined
  #searchParams: URLSearchParams | undefined = undefined

  /** `source` (read lazily) or the query, headers and peer already read. */
  constructor(
    method: string,
    path: string,
    from: RequestSource | { query: string; headers: Record<string, string>; remote: string },
    bodyCollector: BodyCollector
  ) {
    this.method = method
    this.path = path
    if ('peerAddress' in from) {
      this.#source = from
    } else {
      this.#query = from.query
      this.#headers = from.headers
      this.#remoteAddress = from.remote
    }
    this.bodyCollector = bodyCollector
  }

  get query(): string {
    return (this.#query ??= this.#source!.rawQuery())
  }

  get headers(): Readonly<Record<string, string>> {
    return (this.#headers ??= this.#source!.allHeaders())
  }

  get remoteAddress(): string {
    return (this.#remoteAddress ??= this.#source!.peerAddress())
  }

  /**
   * Copies what a handler may still read (headers, peer address) out of the native request: the
   * implementation calls this before that request dies, when the handler did not answer at once.
   */
  settle(): void {
    if (this.#source === undefined) return
    void this.query
    void this.headers
    void this.remoteAddress
    this.#source = undefined
  }

  get searchParams(): URLSearchParams {
    return (this.#searchParams ??= new URLSearchParams(this.query))
  }

  // Decoded lazily so a route that reads only the raw path (the categorization API's `/url/*`) never fails on
  // a URL that is not valid percent-encoding.
  get params(): Readonly<Record<string, string>> {
    if (this.#params !== undefined) return this.#params
    const out: Record<string, string> = {}
    for (const [k, v] of Object.entries(this.rawParams)) {
      try {
        out[k] = v.includes('%') ? decodeURIComponent(v) : v
      } catch (err) {
        throw new HttpError(400, 'HTTP_BAD_ESCAPE', 'malformed percent-encoding in path', { field: k, cause: err })
      }
    }
    this.#params = out
    return out
  }

  header(name: string): string | undefined {
    const lower = name.toLowerCase()
    // A single-valued field needs only its first value: no need to read every header for it.
    if (this.#headers === undefined && SINGLE_VALUED_HEADERS.has(lower)) return this.#source!.firstHeader(lower)
    return this.headers[lower]
  }

  body(): Promise<Buffer> {
    return this.bodyCollector.promise()
  }

  async json(): Promise<unknown> {
    const buf = await this.body()
    try {
      return JSON.parse(buf.toString('utf8'))
    } catch (err) {
      throw new HttpError(400, 'HTTP_BAD_JSON', 'request body is not valid JSON', { cause: err })
    }
  }
}

const LINE_BREAK = /[\r\n]/
/** Header names as handlers spell them → lower case. */
const KNOWN_HEADER_NAMES = new Map<string, string>(
  [
    'Content-Type',
    'Cache-Control',
    'Content-Length',
    'Connection',
    'Location',
    'Retry-After',
    'WWW-Authenticate',
    'Allow',
    'ETag',
    'Vary'
  ].flatMap(
    (n) =>
      [
        [n, n.toLowerCase()],
        [n.toLowerCase(), n.toLowerCase()]
      ] as Array<[string, string]>
  )
)

export class Response implements HttpResponse {
  sent = false
  /** True while a streamed answer is open: the implementation must keep watching for the peer leaving. */
  streaming = false
  #aborted = false
  #abortListeners: Array<() => void> | undefined = undefined
  statusCode = 200
  /** Flat name, value list in call order, Content-Length and Connection left out. */
  readonly headerList: string[] = []
  hasContentType = false
  /** Whether the connection stays open after this response; the implementation sets the initial value. */
  keepAlive: boolean
  /** True when the adapter (not the peer) decided to close, e.g. after a 413 with body left unread. */
  closeRequested = false
  readonly isHead: boolean
  #body: string | Buffer = ''
  readonly #transport: Transport

  constructor(transport: Transport, isHead: boolean, keepAlive: boolean) {
    this.#transport = transport
    this.isHead = isHead
    this.keepAlive = keepAlive
  }

  get aborted(): boolean {
    return this.#aborted
  }

  /** Set by the implementation when the peer has gone; tells a stream's `onClose` listeners. */
  set aborted(value: boolean) {
    if (!value || this.#aborted) return
    this.#aborted = true
    const ls = this.#abortListeners
    this.#abortListeners = undefined
    if (ls !== undefined) for (const l of ls) l()
  }

  stream(first: string): HttpStream {
    if (this.sent || this.aborted) return CLOSED_STREAM
    if (this.isHead) {
      this.send('')
      return CLOSED_STREAM
    }
    this.sent = true
    this.streaming = true
    const drains: Array<() => void> = []
    const native = this.#transport.openStream(this, first, () => {
      for (const d of drains) d()
    })
    let ended = false
    // Arrow functions keep this response as `this` inside the stream object's methods.
    const isClosed = (): boolean => ended || this.aborted
    const onAbort = (cb: () => void): void => {
      if (this.aborted) return
      ;(this.#abortListeners ??= []).push(cb)
    }
    const finish = (): void => {
      if (isClosed()) return
      ended = true
      this.streaming = false
      native.end()
    }
    return {
      get closed() {
        return isClosed()
      },
      write: (chunk) => (isClosed() ? false : native.write(chunk)),
      onDrain: (cb) => {
        drains.push(cb)
      },
      onClose: onAbort,
      end: finish
    }
  }

  /** Bytes of the body sent, for Content-Length (computed on demand: uWS counts them itself). */
  get bodyLength(): number {
    const b = this.#body
    return typeof b === 'string' ? Buffer.byteLength(b) : b.length
  }

  status(code: number): this {
    if (!this.sent) this.statusCode = code
    return this
  }

  header(name: string, value: string): this {
    if (this.sent) return this
    // uWS writes header bytes verbatim, so a CR/LF here would split the response; node throws, so do we.
    // Names handlers use every request are known good and need neither the check nor lower-casing.
    let lower = KNOWN_HEADER_NAMES.get(name)
    if (lower === undefined) {
      if (LINE_BREAK.test(name)) throw new TypeError(`invalid header ${name}`)
      lower = name.toLowerCase()
    }
    if (LINE_BREAK.test(value)) throw new TypeError(`invalid header ${name}`)
    if (lower === 'content-length') return this
    if (lower === 'connection') {
      if (/\bclose\b/i.test(value)) this.#close()
      return this
    }
    if (lower === 'content-type') this.hasContentType = true
    this.headerList.push(name, value)
    return this
  }

  send(body?: string | Buffer): void {
    if (this.sent || this.aborted) return
    const payload = body ?? ''
    if (!this.hasContentType && body !== undefined) {
      this.headerList.push(
        'Content-Type',
        typeof payload === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream'
      )
    }
    this.sent = true
    this.#body = payload
    this.#transport.write(this, payload)
  }

  json(value: unknown, status?: number): void {
    if (this.sent || this.aborted) return
    if (status !== undefined) this.statusCode = status
    // RFC 8259 §11: JSON has no charset parameter (it is UTF-8), so plain application/json.
    if (!this.hasContentType) this.headerList.push('Content-Type', JSON_TYPE)
    this.hasContentType = true
    this.send(JSON.stringify(value))
  }

  /** Answers an error as JSON, replacing any status and headers the handler had set. */
  sendError(status: number, body: string, extra?: readonly string[]): void {
    if (this.sent || this.aborted) return
    this.statusCode = status
    this.headerList.length = 0
    if (extra !== undefined) this.headerList.push(...extra)
    this.headerList.push('Content-Type', JSON_TYPE)
    this.hasContentType = true
    this.send(body)
  }

  /** Marks the connection to be closed once this response is written. */
  closeAfter(): void {
    this.#close()
  }

  #close(): void {
    if (this.keepAlive) this.closeRequested = true
    this.keepAlive = false
  }
}

const CLOSED_STREAM: HttpStream = Object.freeze({
  closed: true,
  write: () => false,
  onDrain: () => {},
  onClose: () => {},
  end: () => {}
})

type Waiter = [resolve: (b: Buffer) => void, reject: (e: unknown) => void]

/**
 * Collects a request body up to `limit` bytes. It is fed eagerly from the socket (uWS only delivers data to
 * an `onData` attached during the request callback), holds at most `limit` bytes, and on overflow drops what
 * it has and calls `onOverflow` once so the request can be answered with 413 right away.
 */
export class BodyCollector {
  #chunks: Buffer[] = []
  #size = 0
  #state: 'reading' | 'done' | 'failed' = 'reading'
  #result: Buffer | undefined = undefined
  #error: unknown = undefined
  #waiters: Waiter[] | undefined = undefined
  readonly #limit: number
  readonly #onOverflow: () => void

  constructor(limit: number, onOverflow: () => void) {
    this.#limit = limit
    this.#onOverflow = onOverflow
  }

  /**
   * The finished empty body, shared by every request that carries none (most GETs): it never changes
   * state again, so one instance serves them all and saves two allocations per request.
   */
  static readonly EMPTY: BodyCollector = (() => {
    const c = new BodyCollector(0, () => {})
    c.end()
    return c
  })()

  /** Feeds a chunk; the chunk is copied when `borrowed` (uWS neuters its ArrayBuffer after the callback). */
  push(chunk: Uint8Array, borrowed: boolean): void {
    if (this.#state !== 'reading' || chunk.byteLength === 0) return
    this.#size += chunk.byteLength
    if (this.#size > this.#limit) {
      this.#chunks = []
      this.fail(tooLarge(this.#limit))
      this.#onOverflow()
      return
    }
    this.#chunks.push(borrowed ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
  }

  end(): void {
    if (this.#state !== 'reading') return
    this.#state = 'done'
    this.#result = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#size)
    this.#chunks = []
    const ws = this.#waiters
    this.#waiters = undefined
    if (ws !== undefined) for (const [resolve] of ws) resolve(this.#result)
  }

  fail(err: unknown): void {
    if (this.#state !== 'reading') return
    this.#state = 'failed'
    this.#error = err
    this.#chunks = []
    const ws = this.#waiters
    this.#waiters = undefined
    if (ws !== undefined) for (const [, reject] of ws) reject(err)
  }

  promise(): Promise<Buffer> {
    if (this.#state === 'done') return Promise.resolve(this.#result!)
    if (this.#state === 'failed') return Promise.reject(this.#error)
    return new Promise((resolve, reject) => {
      ;(this.#waiters ??= []).push([resolve, reject])
    })
  }
}

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'HTTP_BODY_TOO_LARGE', `request body exceeds ${limit} bytes`)
}

export function abortedError(): HttpError {
  return new HttpError(400, 'HTTP_CLIENT_ABORTED', 'client closed the connection')
}

/** Answers a body that went past the limit: 413, and close, since the rest of the body will not be read. */
export function answerTooLarge(res: Response, limit: number): void {
  res.closeAfter()
  const err = tooLarge(limit)
  res.sendError(err.status, err.toBody())
}

/**
 * Routes one request and runs its handler. Synchronous handlers stay synchronous: no promise is created unless
 * the handler returns one (docs/conventions.md, "Hot paths" 3: sync stays sync).
 */
export function dispatch(opts: DispatchOptions, req: Request, res: Response): void {
  const m = opts.router.find(req.method, req.path)
  let result: void | Promise<void>
  try {
    if (m.kind === 'found') {
      req.rawParams = m.rawParams
      result = m.handler(req, res)
    } else if (m.kind === 'method') {
      if (opts.methodNotAllowed !== undefined) {
        result = opts.methodNotAllowed(req, res, m.allowed)
      } else {
        res.sendError(405, errorBody('HTTP_METHOD_NOT_ALLOWED', `method ${req.method} not allowed`), [
          'Allow',
          m.allowed.join(', ')
        ])
        return
      }
    } else if (opts.notFound !== undefined) {
      result = opts.notFound(req, res)
    } else {
      res.sendError(404, errorBody('HTTP_NOT_FOUND', 'not found'))
      return
    }
  } catch (err) {
    handleError(opts, req, res, err)
    return
  }
  if (result !== undefined && typeof (result as Partial<Promise<void>>).then === 'function') {
    result.then(
      () => {
        finish(opts, req, res)
      },
      (err: unknown) => {
        handleError(opts, req, res, err)
      }
    )
  } else {
    finish(opts, req, res)
  }
}

// A handler that returns without answering would leave the connection hanging (and uWS would keep its
// response forever): treat it as a bug.
function finish(opts: DispatchOptions, req: Request, res: Response): void {
  if (!res.sent && !res.aborted)
    handleError(opts, req, res, new Error(`handler for ${req.method} ${req.path} returned without responding`))
}

function handleError(opts: DispatchOptions, req: Request, res: Response, err: unknown): void {
  if (err instanceof HttpError) {
    // A body-limit or abort error surfacing from body() was already answered (or cannot be); nothing to log.
    res.sendError(err.status, err.toBody(), err.headers)
    return
  }
  if (opts.onError !== undefined) {
    try {
      opts.onError(err, req)
    } catch {
      // The logging hook failing must not take the response down with it.
    }
  }
  res.sendError(500, INTERNAL_ERROR_BODY)
}
