/*
 * DNS over HTTPS (RFC 8484): `proxy.doh-listen` (over node:tls: HTTP/2 with ALPN h2, served by our own
 * small HTTP/2 server in ./h2/, and HTTP/1.1 on node:http) and `proxy.doh-http-listen` (plain
 * HTTP/1.1 on node:http, for a TLS-terminating proxy in front). Every query becomes a Peer for the
 * same dispatcher as port 53's, with the client's address and the client ID of the path.
 *
 * The exchange (./doh-exchange.ts): GET `/dns-query?dns=` (unpadded base64url) or POST
 * `application/dns-message` to `/dns-query` or `/dns-query/{client-id}`; 200 with the answer
 * (its ID the query's, since the dispatcher restores the client's ID) and `Cache-Control: max-age`
 * of the answer's smallest TTL; 400 a malformed request, 404 another path, 405 another method,
 * 413 a query over the frame cap, 415 a POST of another type.
 *
 * The client's address: the socket's peer, unless the peer is one of `doh-trusted-proxies`; from
 * those, a PROXY protocol v2 header (plain HTTP only: it comes before the HTTP bytes), else
 * X-Forwarded-For read by the one rule of engine/net/client-address.ts.
 *
 * What one client may cost:
 * - TLS handshakes in progress capped and timed as DoT's (./dot-front.ts guardTlsServer).
 * - The TLS connections are held in the connection table of the DoT and TCP fronts (./tcp-slots.ts):
 *   at most `tcp-max-per-source` per IPv4 address or IPv6 /64 (a trusted proxy excepted), at most
 *   `tcp-max-connections` in all, and a full table makes room by closing the oldest idle
 *   connection (else the oldest unfinished preface, frame or header block). Idle, for HTTP/2, is
 *   no request stream open and none since the idle timeout in force (PING and SETTINGS are not
 *   activity); for HTTP/1.1, no request in progress. The preface and first SETTINGS, a frame once
 *   begun, and a header block once begun must each be whole within `tcp-message-timeout`. The
 *   plain HTTP listeners (behind a proxy) keep `tcp-max-connections` and node:http's timeouts.
 * - Per source, across its connections (./source-budget.ts): streams reset before their answer
 *   (past SOURCE_RESET_BURST, forgiven at SOURCE_RESETS_PER_SECOND, the source's connection gets
 *   GOAWAY and new ones are closed on accept) and queries in flight (503 past
 *   SOURCE_INFLIGHT_CONNECTIONS connections' worth).
 * - HTTP/2: at most `doh-max-streams` streams open at once per connection (the SETTINGS the client
 *   must obey; ./h2/connection.ts refuses more, and bounds frames, header blocks and flow control),
 *   and at most twice that many queries in flight per connection counting those whose stream the
 *   client reset until they leave the dispatcher (503 past it; a reset stream's forwarded query is
 *   withdrawn from the upstream pending table at once, ./doh-exchange.ts streamClosed). A connection whose client resets more than RESET_LIMIT streams
 *   before their answer (less SOURCE_RESETS_PER_SECOND forgiven per second) gets GOAWAY
 *   (ENHANCE_YOUR_CALM) and is closed: the rapid reset attack (CVE-2023-44487) costs a few hundred
 *   streams, not a loop, and the per-source count (above) keeps reconnecting from starting it over.
 * - Bodies: a declared or received body over the frame cap is refused at once (413), and the whole
 *   request must arrive within `tcp-message-timeout` (slow bodies: 408).
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http'
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net'
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls'
import type { Logger } from '../engine/log/index.js'
import type { AddressSet } from '../engine/net/index.js'
import { PROXY_V2_MAX, readProxyHeader } from '../engine/net/index.js'
import { TLS_MIN_VERSION, type CertificateSource } from '../engine/tls/index.js'
import { guardTlsServer } from './dot-front.js'
import { LeakyCount, SourceBudget, type SourceAccount } from './source-budget.js'
import { SlotDeadlines, TcpSlots, type SlotHolder } from './tcp-slots.js'
import {
  BodyDeadlines,
  DohExchange,
  type DohExchangeOptions,
  type DohRequest,
  type DohResponse,
  type DohSession
} from './doh-exchange.js'
import { H2Connection } from './h2/connection.js'
import { H2Error } from './h2/frames.js'
import type { QueryHandler } from './udp-front.js'
import type { TransportCounters } from './transport-counters.js'

/** Streams one HTTP/2 connection may reset before their answer, less those forgiven, before it is closed (rapid reset). */
export const RESET_LIMIT = 100
/** Streams one source may reset before their answer, across its connections, before it is calmed. */
export const SOURCE_RESET_BURST = 2 * RESET_LIMIT
/** Reset streams forgiven a source, and a connection, per second (a client that cancels now and then is never calmed). */
export const SOURCE_RESETS_PER_SECOND = 10
/** A source's queries in flight at most, in connections' worth (each 2 × `doh-max-streams`). */
export const SOURCE_INFLIGHT_CONNECTIONS = 4
/** How often sources with nothing left to account for are forgotten. */
const SOURCE_SWEEP_MS = 10_000

/**
 * One TLS connection of the front in the connection table: HTTP/2 (`h2` set) or HTTP/1.1. It is
 * the exchanges' DohSession too, so that its queries in flight count for its source as well.
 */
class DohConnection implements SlotHolder, DohSession {
  readonly sock: TLSSocket
  readonly direct: string | null
  /** The source's account; null for a trusted proxy (its clients are many). */
  readonly source: SourceAccount | null
  h2: H2Connection | null = null
  /** Its streams reset before their answer, less those forgiven. */
  readonly resets = new LeakyCount(SOURCE_RESETS_PER_SECOND)
  /** HTTP/1.1 requests in progress. */
  requests = 0
  /** Date.now() of its accept, its last request begun or answered. */
  lastActive = Date.now()
  /** Date.now() since which its preface, a frame or a header block is unfinished, or 0. */
  partialSince = 0
  closed = false
  /** Its slot and its source's account are given back. */
  released = false
  private queries = 0
  private readonly budget: SourceBudget

  constructor(sock: TLSSocket, direct: string | null, source: SourceAccount | null, budget: SourceBudget) {
    this.sock = sock
    this.direct = direct
    this.source = source
    this.budget = budget
  }

  /** The connection's queries in flight (DohSession), counted for its source too. */
  get inflight(): number {
    return this.queries
  }

  set inflight(n: number) {
    const s = this.source
    if (s !== null) {
      if (n > this.queries) s.inflight += n - this.queries
      else for (let i = n; i < this.queries; i++) this.budget.answered(s, Date.now())
    }
    if (n < this.queries) this.lastActive = Date.now()
    this.queries = n
  }

  mayAsk(): boolean {
    return this.source === null || this.budget.mayAsk(this.source)
  }

  /** A request stream open, or an HTTP/1.1 request in progress. */
  private isBusy(): boolean {
    return this.h2 !== null ? this.h2.openStreams > 0 : this.requests > 0
  }

  isIdle(): boolean {
    if (this.isBusy()) {
      // Activity up to now: a stream that ends between two looks counts as recent.
      this.lastActive = Date.now()
      return false
    }
    return this.partialSince === 0
  }

  isIdleExpired(now: number, idleMs: number): boolean {
    return !this.closed && this.isIdle() && now - this.lastActive > idleMs
  }

  evict(): void {
    this.closed = true
    this.sock.destroy()
  }
}

export interface DohFrontOptions {
  /** The certificate of the TLS listeners (null when only plain HTTP listeners are configured). */
  certificates: CertificateSource | null
  /** `doh-max-streams`. */
  maxStreams: number
  maxConnections: number
  maxPerSource: number
  idleTimeoutMs: number
  messageTimeoutMs: number
  maxFrame: number
  /** `doh-trusted-proxies`. */
  trusted: AddressSet
  logger: Logger
  onQuery: QueryHandler
  /** The TLS listeners' counters (`doh`) and the plain ones' (`doh-http`). */
  counters: TransportCounters
  httpCounters: TransportCounters
}

/** The DoH listeners of one front process. */
export class DohFront {
  private readonly o: DohFrontOptions
  private readonly servers: Array<TlsServer | NetServer> = []
  /** The TLS connections (handshake done): the connection table and its deadlines. */
  private readonly slots: TcpSlots<DohConnection>
  private readonly slotDeadlines: SlotDeadlines<DohConnection>
  /** The HTTP/1.1 ones among them, by socket. */
  private readonly http1 = new WeakMap<Socket, DohConnection>()
  private readonly sources: SourceBudget
  private readonly sourceSweep: NodeJS.Timeout
  private readonly httpSockets = new Set<Socket>()
  /** The address a trusted proxy's PROXY v2 header named, per plain-HTTP connection. */
  private readonly proxied = new WeakMap<Socket, { address: string; port: number }>()
  /** node:http for the plain listeners, and for the TLS ones' HTTP/1.1 connections. */
  private readonly http: HttpServer
  private readonly tlsHttp: HttpServer
  private readonly deadlines: BodyDeadlines
  /** What every exchange of the TLS listeners, and of the plain ones, shares. */
  private readonly tlsExchange: DohExchangeOptions
  private readonly httpExchange: DohExchangeOptions
  private closed = false

  constructor(o: DohFrontOptions) {
    this.o = o
    this.deadlines = new BodyDeadlines(o.messageTimeoutMs)
    this.slots = new TcpSlots({ max: o.maxConnections, perSource: o.maxPerSource, idleTimeoutMs: o.idleTimeoutMs })
    this.slotDeadlines = new SlotDeadlines(this.slots, {
      messageTimeoutMs: o.messageTimeoutMs,
      idleTimeoutMs: o.idleTimeoutMs,
      isIdleExpired: (c, now, idleMs) => c.isIdleExpired(now, idleMs),
      expire: (c, why) => {
        if (c.closed) return
        if (why === 'message') this.o.counters.timedOut++
        c.evict()
      }
    })
    this.sources = new SourceBudget({
      resetBurst: SOURCE_RESET_BURST,
      resetsPerSecond: SOURCE_RESETS_PER_SECOND,
      maxInflight: SOURCE_INFLIGHT_CONNECTIONS * 2 * o.maxStreams
    })
    this.sourceSweep = setInterval(() => this.sources.sweep(Date.now()), SOURCE_SWEEP_MS)
    this.sourceSweep.unref()
    const shared = {
      trusted: o.trusted,
      maxFrame: o.maxFrame,
      maxInflight: 2 * o.maxStreams,
      onQuery: o.onQuery,
      deadlines: this.deadlines
    }
    this.tlsExchange = { ...shared, counters: o.counters }
    this.httpExchange = { ...shared, counters: o.httpCounters }
    o.counters.open = () => this.slots.size
    o.counters.slots = () => this.slots.totals
    o.httpCounters.open = () => this.httpSockets.size
    this.http = this.httpServer((req, res) =>
      this.exchange(req, res, this.httpExchange, null, this.proxied.get(req.socket) ?? null)
    )
    this.tlsHttp = this.httpServer((req, res) => this.http1Exchange(req, res))
  }

  // An HTTP/1.1 request over TLS: its connection is busy (not idle) until the response closes.
  private http1Exchange(req: IncomingMessage, res: DohResponse): void {
    const c = this.http1.get(req.socket)
    if (c !== undefined) {
      c.requests++
      c.lastActive = Date.now()
      res.on('close', () => {
        c.requests--
        c.lastActive = Date.now()
      })
    }
    this.exchange(req, res, this.tlsExchange, null, null)
  }

  private httpServer(serve: (req: IncomingMessage, res: DohResponse) => void): HttpServer {
    // node:http's ServerResponse is a DohResponse (writeHead, end, 'close').
    const http = createHttpServer((req, res) => serve(req, res as unknown as DohResponse))
    http.headersTimeout = this.o.messageTimeoutMs
    http.requestTimeout = this.o.messageTimeoutMs
    http.keepAliveTimeout = this.o.idleTimeoutMs
    return http
  }

  /** A TLS listener (HTTP/2 and HTTP/1.1) on `host:port`; throws the listen error. */
  async listenTls(host: string, port: number, family: 4 | 6): Promise<number> {
    const certificates = this.o.certificates!
    const ticketKeys = randomBytes(48)
    const server = createTlsServer(
      {
        ...certificates.current.options,
        minVersion: TLS_MIN_VERSION,
        ALPNProtocols: ['h2', 'http/1.1'],
        ticketKeys,
        handshakeTimeout: this.o.messageTimeoutMs,
        noDelay: true
      },
      (sock) => this.onSecure(sock)
    )
    // No server.maxConnections: a full table makes room for a new connection once its handshake is done.
    guardTlsServer(
      server,
      {
        certificates,
        maxHandshakes: this.o.maxConnections,
        maxHandshakesPerSource: this.o.maxPerSource,
        counters: this.o.counters,
        logger: this.o.logger
      },
      ticketKeys,
      'DoH'
    )
    server.on('drop', () => this.o.counters.refused++)
    return await this.bind(server, host, port, family)
  }

  // A TLS connection whose handshake is done: refused when its source is calmed or holds its cap (or
  // the table is full of busy connections), else HTTP/2 (ALPN h2) is served by ./h2/connection.ts,
  // anything else (ALPN http/1.1, or none) by node:http.
  private onSecure(sock: TLSSocket): void {
    sock.on('error', () => {})
    const address = sock.remoteAddress ?? ''
    const trusted = this.o.trusted.has(address)
    if (this.closed || (!trusted && this.sources.isCalmed(address, Date.now()))) {
      if (!this.closed) this.o.counters.calmed++
      sock.destroy()
      return
    }
    const c = new DohConnection(
      sock,
      trusted ? null : address,
      trusted ? null : this.sources.join(address),
      this.sources
    )
    // A trusted proxy speaks for many clients: its connections are not capped per source.
    if (!this.slots.admit(c, trusted ? `${address}|${sock.remotePort ?? 0}` : address)) {
      this.o.logger.debug({ client: address }, 'dns DoH connection refused: per-source cap or table full')
      this.o.counters.refused++
      this.closeConnection(c)
      sock.destroy()
      return
    }
    this.o.counters.connections++
    sock.once('close', () => this.closeConnection(c))
    if (sock.alpnProtocol !== 'h2') {
      this.http1.set(sock, c)
      this.tlsHttp.emit('connection', sock)
      return
    }
    c.h2 = new H2Connection(
      sock,
      {
        maxStreams: this.o.maxStreams,
        onStream: (_conn, stream) => {
          c.lastActive = Date.now()
          this.exchange(stream, stream, this.tlsExchange, c, null)
        },
        onReset: (conn) => this.onReset(c, conn),
        afterRead: (n) => this.afterRead(c, c.h2!, n)
      },
      c.direct
    )
    // What the connection's reader leaves unfinished has a deadline (the preface's from now).
    c.partialSince = c.lastActive
    this.slotDeadlines.partial.add(c)
  }

  // The message deadline of an HTTP/2 connection after a read. The preface (to the client's first
  // SETTINGS) and a header block run from their start to their end, whatever frames come between;
  // any other unfinished frame, from its first byte: when it began in this read, the one before
  // it was finished.
  private afterRead(c: DohConnection, h2: H2Connection, chunkLength: number): void {
    const spans = h2.isAwaitingPreface || h2.isInHeaderBlock
    const unread = h2.unfinishedBytes
    if (!spans && unread === 0) {
      if (c.partialSince !== 0) {
        c.partialSince = 0
        this.slotDeadlines.partial.delete(c)
      }
      return
    }
    if (c.partialSince === 0 || (!spans && unread <= chunkLength)) {
      c.partialSince = Date.now()
      this.slotDeadlines.partial.add(c)
    }
  }

  private closeConnection(c: DohConnection): void {
    c.closed = true
    if (c.released) return
    c.released = true
    if (c.source !== null) this.sources.leave(c.source, Date.now())
    this.slots.release(c)
    this.slotDeadlines.partial.delete(c)
  }

  /** A plain HTTP/1.1 listener (behind a TLS-terminating proxy) on `host:port`; throws the listen error. */
  async listenHttp(host: string, port: number, family: 4 | 6): Promise<number> {
    const server = createNetServer({ noDelay: true }, (raw) => this.onPlainConnection(raw))
    server.maxConnections = this.o.maxConnections
    server.on('drop', () => this.o.httpCounters.refused++)
    return await this.bind(server, host, port, family)
  }

  private async bind(server: TlsServer | NetServer, host: string, port: number, family: 4 | 6): Promise<number> {
    try {
      server.listen({ host, port, ipv6Only: family === 6 })
      await once(server, 'listening')
    } catch (err) {
      server.close()
      throw err
    }
    server.on('error', (err) => this.o.logger.error({ err }, 'dns DoH server error'))
    this.servers.push(server)
    const a = server.address()
    return typeof a === 'object' && a !== null ? a.port : port
  }

  // Counts and follows one connection: its idle timeout, its place in the open set.
  private track(sock: Socket, set: Set<Socket>, counters: TransportCounters): void {
    if (this.closed) {
      sock.destroy()
      return
    }
    counters.connections++
    set.add(sock)
    sock.once('close', () => set.delete(sock))
    sock.setTimeout(this.o.idleTimeoutMs, () => sock.destroy())
  }

  private exchange(
    req: DohRequest | IncomingMessage,
    res: DohResponse,
    shared: DohExchangeOptions,
    session: DohSession | null,
    proxied: { address: string; port: number } | null
  ): void {
    new DohExchange(req, res, shared, session, proxied).start()
  }

  // A stream the client reset before its answer; past RESET_LIMIT on the connection (less those
  // forgiven: a long-lived connection that cancels now and then is not closed), or past its
  // source's budget across its connections, the connection gets GOAWAY (ENHANCE_YOUR_CALM) and is
  // closed: once, since nothing more is read from it after that.
  private onReset(c: DohConnection, conn: H2Connection): void {
    this.o.counters.resets++
    const now = Date.now()
    const calmed = c.source !== null && this.sources.reset(c.source, now)
    if (c.resets.add(now) <= RESET_LIMIT && !calmed) return
    if (calmed) this.o.counters.calmed++
    else this.o.counters.resets++
    this.o.logger.debug({ client: conn.peer.remoteAddress, calmed }, 'dns DoH: too many reset streams; closing')
    conn.goaway(H2Error.ENHANCE_YOUR_CALM)
  }

  // A plain connection: from a trusted proxy, a PROXY v2 header may come first (read within the
  // message deadline, at most PROXY_V2_MAX bytes); then it is node:http's.
  private onPlainConnection(raw: Socket): void {
    raw.on('error', () => {})
    this.track(raw, this.httpSockets, this.o.httpCounters)
    if (!this.o.trusted.has(raw.remoteAddress ?? '')) {
      this.http.emit('connection', raw)
      return
    }
    let head = Buffer.alloc(0)
    const deadline = setTimeout(() => raw.destroy(), this.o.messageTimeoutMs)
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk])
      const h = readProxyHeader(head)
      if (h.kind === 'partial' && head.length <= PROXY_V2_MAX) return
      raw.off('data', onData)
      clearTimeout(deadline)
      if (h.kind === 'invalid' || h.kind === 'partial') {
        raw.destroy()
        return
      }
      raw.pause()
      let rest = head
      if (h.kind === 'header') {
        if (h.address !== null) this.proxied.set(raw, { address: h.address, port: h.port })
        rest = head.subarray(h.length)
      }
      if (rest.length > 0) raw.unshift(rest)
      this.http.emit('connection', raw)
      raw.resume()
    }
    raw.on('data', onData)
  }

  async close(): Promise<void> {
    this.closed = true
    this.deadlines.close()
    const closing = this.servers.map(async (s) => await new Promise<void>((resolve) => s.close(() => resolve())))
    this.slotDeadlines.close()
    clearInterval(this.sourceSweep)
    for (const c of [...this.slots.holders()]) c.sock.destroy()
    for (const s of this.httpSockets) s.destroy()
    await Promise.all(closing)
  }
}
