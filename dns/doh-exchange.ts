/*
 * One DoH request (RFC 8484) from its arrival to its answer: the route and method, the query out
 * of the GET parameter or the POST body, the client's address and ID, and the answer (or the HTTP
 * error) back. The exchange is the query's PeerChannel: the dispatcher answers it exactly as it
 * answers a TCP query (`isStream`: no UDP size limit, forwarded answers relayed whole).
 * docs/dns.md, "DNS over HTTPS".
 */
import { performance } from 'node:perf_hooks'
import { clientAddress, type AddressSet } from '../engine/net/index.js'
import { smallestTtl } from '../engine/wire/index.js'
import { checkedClientId } from './client-id.js'
import { Peer, type PeerChannel, type Withdraw } from './peer.js'
import type { TransportCounters } from './transport-counters.js'
import type { QueryHandler } from './udp-front.js'
import type { PendingQuery } from './upstream.js'

/** The path of RFC 8484's examples, which every client defaults to; `/dns-query/{client-id}` too. */
export const DOH_PATH = '/dns-query'
const DNS_MESSAGE = 'application/dns-message'
/** Unpadded base64url (RFC 8484 §4.1). */
const BASE64URL = /^[A-Za-z0-9_-]+$/
/** A DNS header. */
const MIN_QUERY = 12

/** What an exchange reads of a request: node:http's IncomingMessage and an HTTP/2 stream (./h2/stream.ts) both have it. */
export interface DohRequest {
  readonly method?: string
  readonly url?: string
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  readonly socket: { readonly remoteAddress?: string; readonly remotePort?: number }
  on(event: 'data', fn: (chunk: Buffer) => void): unknown
  on(event: 'end', fn: () => void): unknown
  /** The content-length as already parsed (an HTTP/2 stream: -1 for none), else it is read from the headers. */
  readonly contentLength?: number
  /** One header's value without the `headers` record (an HTTP/2 stream has it; else `headers` is read). */
  header?(name: string): string | undefined
  /** The body, its end and the close told to `l`'s methods (an HTTP/2 stream): no closure per request. */
  listen?(l: DohListener): void
}

/** What a request told through `listen` calls (the exchange). */
export interface DohListener {
  bodyChunk(chunk: Buffer): void
  bodyEnd(): void
  streamClosed(): void
}

/** What an exchange writes: node:http's ServerResponse and an HTTP/2 stream (./h2/stream.ts) both have it. */
export interface DohResponse {
  writeHead(status: number, headers: Record<string, string | number>): unknown
  end(body?: Buffer | string): unknown
  on(event: 'close', fn: () => void): unknown
  /** end(body) copies the body before it returns (else the exchange gives it a copy of its own). */
  readonly copiesBody?: boolean
  /**
   * A 200 DNS answer, the first `len` bytes of `buf` (used before it returns) with max-age `ttl`:
   * the same response as writeHead and end would make, without their header record (an HTTP/2 stream).
   */
  answer?(buf: Buffer, len: number, ttl: number): void
}

/** One HTTP/2 connection's queries in flight (its reset streams' too) and its resets. */
export interface DohSession {
  inflight: number
  /** The client's address when its connection is not from a trusted proxy (read once per connection), else null. */
  readonly direct: string | null
  /** Whether the client's source (over all its connections) may have another query in flight (503 if not). */
  mayAsk?(): boolean
}

/** What every exchange of one listener kind shares (made once per front, not per request). */
export interface DohExchangeOptions {
  counters: TransportCounters
  trusted: AddressSet
  maxFrame: number
  /** Queries in flight per HTTP/2 connection at most, reset streams' included (503 past it). */
  maxInflight: number
  onQuery: QueryHandler
  /** The requests whose body is still arriving, each failed (408) past `tcp-message-timeout`. */
  deadlines: BodyDeadlines
}

/**
 * The deadline of every request body still arriving, with one timer for all of them rather than
 * one per request (a timer set and cleared per query was a visible share of DoH's CPU). The
 * timeout is the same for all, so insertion order is deadline order: a sweep fails the expired
 * ones at the front of the set and stops at the first that is not. A request may be failed up to
 * one sweep period (a quarter of the timeout) late.
 *
 * A body nearly always arrives in the same read as its request's headers (HTTP/2 sends HEADERS and
 * DATA together): a request is first only noted in a list, and the ones whose body is still awaited
 * when the event-loop turn ends (setImmediate) get their deadline then, from that moment. The rest
 * never cost a map entry and its deletion.
 */
export class BodyDeadlines {
  private readonly timeoutMs: number
  private readonly waiting = new Map<DohExchange, number>()
  /** Added in this event-loop turn, not yet in `waiting`. */
  private readonly recent: DohExchange[] = []
  private timer: NodeJS.Timeout | null = null

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs
  }

  add(x: DohExchange): void {
    if (this.recent.push(x) === 1) setImmediate(this.settle)
  }

  delete(x: DohExchange): void {
    if (this.waiting.size > 0) this.waiting.delete(x)
  }

  // The requests of the turn that still await their body get their deadline.
  private readonly settle = (): void => {
    const now = performance.now()
    for (const x of this.recent) if (x.awaitsBody()) this.waiting.set(x, now + this.timeoutMs)
    this.recent.length = 0
    if (this.waiting.size > 0) this.timer ??= setInterval(() => this.sweep(), Math.max(10, this.timeoutMs / 4)).unref()
  }

  private sweep(): void {
    const now = performance.now()
    for (const [x, deadline] of this.waiting) {
      if (deadline > now) break
      this.waiting.delete(x)
      x.timedOut()
    }
    if (this.waiting.size === 0 && this.timer !== null) {
      clearInterval(this.timer)
      this.timer = null
    }
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
    this.waiting.clear()
    this.recent.length = 0
  }
}

/** `max-age=N` for the TTLs most answers have, made once. */
const MAX_AGE: string[] = Array.from({ length: 3601 }, (_, ttl) => `max-age=${ttl}`)
const maxAge = (ttl: number): string => MAX_AGE[ttl] ?? `max-age=${Math.max(0, ttl)}`

const REASONS: Record<number, string> = {
  400: 'bad request: expected /dns-query?dns=<base64url DNS query> or a POST of application/dns-message',
  404: 'not found: DNS over HTTPS is served at /dns-query and /dns-query/{client-id}',
  405: 'method not allowed: GET or POST',
  408: 'the request body did not arrive in time',
  413: 'the DNS query is too large',
  415: 'unsupported media type: POST a body of application/dns-message',
  503: 'too many queries in flight on this connection, or from this address'
}

export class DohExchange implements PeerChannel, DohListener {
  readonly isStream = true
  private readonly req: DohRequest
  private readonly res: DohResponse
  private readonly o: DohExchangeOptions
  /** The HTTP/2 connection, or null (HTTP/1.1). */
  private readonly session: DohSession | null
  /** The client a trusted proxy's PROXY v2 header named, or null. */
  private readonly proxied: { address: string; port: number } | null
  /** A response was written (the answer or an error). */
  private responded = false
  /** The stream or connection closed. */
  private closed = false
  /** The query is with the dispatcher. */
  private asked = false
  private clientId: string | null = null
  /** The POST body so far: its first chunk, or all of them when it came in several. */
  private body: Buffer | Buffer[] | null = null
  private bodySize = 0
  /** A POST whose body is read (a GET's stream end is no body). */
  private readingBody = false
  /** The query as forwarded upstream, until its answer, and how to withdraw it if the client goes first. */
  private upstream: PendingQuery | null = null
  private withdraw: Withdraw | null = null

  constructor(
    req: DohRequest,
    res: DohResponse,
    o: DohExchangeOptions,
    session: DohSession | null,
    proxied: { address: string; port: number } | null
  ) {
    this.req = req
    this.res = res
    this.o = o
    this.session = session
    this.proxied = proxied
  }

  start(): void {
    // An HTTP/2 stream calls this exchange's methods; node:http's objects get one closure per event.
    if (this.req.listen !== undefined) this.req.listen(this)
    else this.res.on('close', () => this.streamClosed())
    const url = this.req.url ?? ''
    const q = url.indexOf('?')
    const path = q < 0 ? url : url.slice(0, q)
    if (path !== DOH_PATH) {
      if (!path.startsWith(DOH_PATH + '/')) return this.fail(404)
      this.clientId = checkedClientId(path.slice(DOH_PATH.length + 1))
      if (this.clientId === null) return this.fail(400, 'bad request: a client ID is letters, digits and hyphens')
    }
    if (this.req.method === 'GET') return this.get(q < 0 ? '' : url.slice(q + 1))
    if (this.req.method === 'POST') return this.post()
    this.fail(405)
  }

  private get(search: string): void {
    const dns = new URLSearchParams(search).get('dns')
    if (dns === null || !BASE64URL.test(dns)) return this.fail(400)
    if (Math.floor((dns.length * 3) / 4) > this.o.maxFrame) return this.fail(413)
    this.ask(Buffer.from(dns, 'base64url'))
  }

  private post(): void {
    const type = header(this.req, 'content-type')
    // Every client sends exactly the RFC's type: checked first, without the split and case folding.
    if (type !== DNS_MESSAGE && type?.split(';')[0]!.trim().toLowerCase() !== DNS_MESSAGE) return this.fail(415)
    const declared = this.req.contentLength ?? Number(header(this.req, 'content-length') ?? '0')
    if (declared > this.o.maxFrame) return this.fail(413)
    this.o.deadlines.add(this)
    this.readingBody = true
    if (this.req.listen !== undefined) return
    this.req.on('data', (chunk: Buffer) => this.bodyChunk(chunk))
    this.req.on('end', () => this.bodyEnd())
  }

  bodyChunk(chunk: Buffer): void {
    if (this.responded || !this.readingBody) return
    this.bodySize += chunk.length
    if (this.bodySize > this.o.maxFrame) this.fail(413)
    else if (this.body === null) this.body = chunk
    else if (Array.isArray(this.body)) this.body.push(chunk)
    else this.body = [this.body, chunk]
  }

  bodyEnd(): void {
    if (!this.readingBody) return
    this.readingBody = false
    this.o.deadlines.delete(this)
    if (this.responded) return
    const b = this.body
    this.body = null
    this.ask(b === null ? Buffer.alloc(0) : Array.isArray(b) ? Buffer.concat(b) : b)
  }

  /** The body is still awaited: not whole, not answered, the stream not closed (BodyDeadlines). */
  awaitsBody(): boolean {
    return this.readingBody && !this.responded && !this.closed
  }

  /** The body did not arrive within `tcp-message-timeout` (BodyDeadlines). */
  timedOut(): void {
    this.fail(408)
  }

  private ask(msg: Buffer): void {
    if (msg.length < MIN_QUERY) return this.fail(400)
    const s = this.session
    if (s !== null) {
      if (s.inflight >= this.o.maxInflight || s.mayAsk?.() === false) return this.fail(503)
      s.inflight++
    }
    this.asked = true
    this.o.counters.queries++
    const address =
      this.proxied?.address ?? s?.direct ?? clientAddress(requestView(this.req), { trusted: this.o.trusted })
    const port = this.proxied?.port ?? this.req.socket.remotePort ?? 0
    this.o.onQuery(msg, new Peer(this, address, port, -1, this.clientId))
  }

  send(_peer: Peer, buf: Buffer, len: number, _copy: boolean): void {
    this.done()
    if (this.closed || this.responded) return
    this.responded = true
    const ttl = smallestTtl(buf, len)
    if (this.res.answer !== undefined) return this.res.answer(buf, len, ttl)
    // buf is the dispatcher's scratch or, forwarded, the upstream socket's receive area (native I/O), both
    // reused before node:http writes the body (it keeps a reference): copied unless the response copies it.
    const body = this.res.copiesBody === true ? buf.subarray(0, len) : Buffer.from(buf.subarray(0, len))
    this.res.writeHead(200, { 'content-type': DNS_MESSAGE, 'content-length': len, 'cache-control': maxAge(ttl) })
    this.res.end(body)
  }

  // The dispatcher dropped the query (malformed beyond an answer, or over the rate limit with `drop`).
  skip(_peer: Peer): void {
    this.done()
    this.fail(400, 'bad request: no DNS answer to this query')
  }

  own(msg: Buffer): Buffer {
    return msg
  }

  forwarding(p: PendingQuery, withdraw: Withdraw): boolean {
    if (this.closed) {
      this.done()
      return false
    }
    this.upstream = p
    this.withdraw = withdraw
    return true
  }

  // The query left the dispatcher: its place among the connection's queries in flight is free.
  private done(): void {
    this.upstream = null
    if (!this.asked) return
    this.asked = false
    if (this.session !== null) this.session.inflight--
  }

  private fail(status: number, text = REASONS[status] ?? ''): void {
    this.o.deadlines.delete(this)
    if (this.responded || this.closed) return
    this.responded = true
    const headers: Record<string, string | number> = {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(text + '\n')
    }
    if (status === 405) headers.allow = 'GET, POST'
    // A body left unread (413, 408) would be parsed as the next request over HTTP/1.1.
    if ((status === 413 || status === 408) && this.session === null) headers.connection = 'close'
    this.res.writeHead(status, headers)
    this.res.end(text + '\n')
  }

  /** The stream (HTTP/2) or connection (HTTP/1.1) closed: nothing more is written (resets are the front's count). */
  streamClosed(): void {
    this.closed = true
    this.o.deadlines.delete(this)
    // Reset (or its connection closed) before the answer: its upstream query leaves the pending
    // table now, and its place among the connection's queries in flight is free.
    const p = this.upstream
    if (p !== null) {
      this.withdraw!(p) // set with upstream
      this.done()
    }
  }
}

function header(req: DohRequest, name: string): string | undefined {
  if (req.header !== undefined) return req.header(name)
  const v = req.headers[name]
  return Array.isArray(v) ? v.join(',') : v
}

// The request as engine/net/client-address.ts reads it.
function requestView(req: DohRequest): { remoteAddress: string; header(name: string): string | undefined } {
  return { remoteAddress: req.socket.remoteAddress ?? '', header: (name) => header(req, name) }
}
