/*
 * DNS over HTTPS (RFC 8484): `proxy.doh-listen` (HTTP/2 with ALPN h2, and HTTP/1.1, over TLS, on
 * node:http2) and `proxy.doh-http-listen` (plain HTTP/1.1 on node:http, for a TLS-terminating proxy
 * in front). Every query becomes a Peer for the same dispatcher as port 53's, with the client's
 * address and the client ID of the path.
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
 * - TLS handshakes in progress capped and timed as DoT's (./dot-front.ts guardTlsServer);
 *   connections capped at `tcp-max-connections` per front; a connection idle for
 *   `tcp-idle-timeout` is closed.
 * - HTTP/2: at most `doh-max-streams` streams open at once per connection (the SETTINGS the client
 *   must obey; nghttp2 refuses more), and at most twice that many queries in flight per connection
 *   counting those whose stream the client reset (503 past it). A connection whose client resets
 *   more than RESET_LIMIT streams before their answer gets GOAWAY (ENHANCE_YOUR_CALM) and is closed:
 *   the rapid reset attack (CVE-2023-44487) costs a few hundred streams, not a loop.
 * - Bodies: a declared or received body over the frame cap is refused at once (413), and the whole
 *   request must arrive within `tcp-message-timeout` (slow bodies: 408).
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http'
import {
  constants as h2,
  createSecureServer,
  type Http2SecureServer,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream
} from 'node:http2'
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'
import type { Logger } from '../engine/log/index.js'
import type { AddressSet } from '../engine/net/client-address.js'
import { PROXY_V2_MAX, readProxyHeader } from '../engine/net/proxy-protocol.js'
import { TLS_MIN_VERSION, type CertificateSource } from '../engine/tls/certificates.js'
import { guardTlsServer } from './dot-front.js'
import {
  BodyDeadlines,
  DohExchange,
  type DohExchangeOptions,
  type DohRequest,
  type DohResponse,
  type DohSession
} from './doh-exchange.js'
import { StreamExchange, type StreamOwner } from './doh-stream.js'
import type { QueryHandler } from './udp-front.js'
import type { TransportCounters } from './transport-counters.js'

/** Streams one HTTP/2 connection may reset before their answer before it is closed (rapid reset). */
export const RESET_LIMIT = 100

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

/** One HTTP/2 connection, as its streams see it. */
interface SessionState extends DohSession, StreamOwner {
  /** Streams its client reset before their answer. */
  resets: number
  /** GOAWAY sent (too many resets): once per connection. */
  calmed: boolean
}

/** The DoH listeners of one front process. */
export class DohFront {
  private readonly o: DohFrontOptions
  private readonly servers: Array<Http2SecureServer | NetServer> = []
  private readonly sockets = new Set<Socket>()
  private readonly httpSockets = new Set<Socket>()
  /** The address a trusted proxy's PROXY v2 header named, per plain-HTTP connection. */
  private readonly proxied = new WeakMap<Socket, { address: string; port: number }>()
  private readonly sessions = new WeakMap<ServerHttp2Session, SessionState>()
  private readonly http: HttpServer
  private readonly deadlines: BodyDeadlines
  /** What every exchange of the TLS listeners, and of the plain ones, shares. */
  private readonly tlsExchange: DohExchangeOptions
  private readonly httpExchange: DohExchangeOptions
  private closed = false

  constructor(o: DohFrontOptions) {
    this.o = o
    this.deadlines = new BodyDeadlines(o.messageTimeoutMs)
    const shared = {
      trusted: o.trusted,
      maxFrame: o.maxFrame,
      maxInflight: 2 * o.maxStreams,
      onQuery: o.onQuery,
      deadlines: this.deadlines
    }
    this.tlsExchange = { ...shared, counters: o.counters }
    this.httpExchange = { ...shared, counters: o.httpCounters }
    o.counters.open = () => this.sockets.size
    o.httpCounters.open = () => this.httpSockets.size
    this.http = createHttpServer((req, res) =>
      this.exchange(req, res as unknown as DohResponse, this.httpExchange, null, this.proxied.get(req.socket) ?? null)
    )
    this.http.headersTimeout = o.messageTimeoutMs
    this.http.requestTimeout = o.messageTimeoutMs
    this.http.keepAliveTimeout = o.idleTimeoutMs
  }

  /** A TLS listener (HTTP/2 and HTTP/1.1) on `host:port`; throws the listen error. */
  async listenTls(host: string, port: number, family: 4 | 6): Promise<number> {
    const certificates = this.o.certificates!
    const ticketKeys = randomBytes(48)
    const server = createSecureServer(
      {
        ...certificates.current.options,
        minVersion: TLS_MIN_VERSION,
        allowHTTP1: true,
        ticketKeys,
        handshakeTimeout: this.o.messageTimeoutMs,
        settings: { maxConcurrentStreams: this.o.maxStreams, enablePush: false },
        maxSessionMemory: 4,
        peerMaxConcurrentStreams: this.o.maxStreams,
        // Node's own rapid-reset limit (CVE-2023-44487), where the node version has it.
        ...{ streamResetBurst: this.o.maxStreams, streamResetRate: 33 }
      },
      // HTTP/1.1 only: HTTP/2 streams are served by the core API below (see serveStreams).
      (req, res) => this.exchange(req, res as unknown as DohResponse, this.tlsExchange, null, null)
    )
    this.serveStreams(server)
    server.maxConnections = this.o.maxConnections
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
    server.on('secureConnection', (sock: TLSSocket) =>
      this.track(sock, this.sockets, this.o.counters, sock.alpnProtocol !== 'h2')
    )
    server.on('session', (session: ServerHttp2Session) => {
      const sock = session.socket
      const remoteAddress = sock.remoteAddress ?? ''
      const state: SessionState = {
        inflight: 0,
        direct: this.o.trusted.has(remoteAddress) ? null : remoteAddress,
        peer: { remoteAddress, remotePort: sock.remotePort },
        resets: 0,
        calmed: false,
        onReset: () => this.onReset(session, state)
      }
      this.sessions.set(session, state)
      session.on('error', () => {})
      // An HTTP/2 session reads its socket itself: its own timer sees its activity.
      session.setTimeout(this.o.idleTimeoutMs, () => session.destroy())
    })
    return await this.bind(server, host, port, family)
  }

  /** A plain HTTP/1.1 listener (behind a TLS-terminating proxy) on `host:port`; throws the listen error. */
  async listenHttp(host: string, port: number, family: 4 | 6): Promise<number> {
    const server = createNetServer({ noDelay: true }, (raw) => this.onPlainConnection(raw))
    server.maxConnections = this.o.maxConnections
    server.on('drop', () => this.o.httpCounters.refused++)
    return await this.bind(server, host, port, family)
  }

  private async bind(
    server: Http2SecureServer | NetServer,
    host: string,
    port: number,
    family: 4 | 6
  ): Promise<number> {
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
  private track(sock: Socket, set: Set<Socket>, counters: TransportCounters, idleTimer = true): void {
    if (this.closed) {
      sock.destroy()
      return
    }
    counters.connections++
    set.add(sock)
    sock.once('close', () => set.delete(sock))
    if (idleTimer) sock.setTimeout(this.o.idleTimeoutMs, () => sock.destroy())
  }

  // HTTP/2 streams through node:http2's core API rather than its compatibility request and response:
  // those wrap every stream in two more streams, a quarter of the server's CPU per query (docs/performance.md).
  // A 'request' listener makes node add its own 'stream' listener (the compatibility layer), which is
  // taken off again here: HTTP/1.1 over the same TLS port still comes as 'request'.
  private serveStreams(server: Http2SecureServer): void {
    for (const listener of server.listeners('stream')) server.off('stream', listener as (...a: unknown[]) => void)
    server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      const state = this.sessions.get(stream.session as ServerHttp2Session)
      if (state === undefined) {
        stream.on('error', () => {})
        stream.close(h2.NGHTTP2_REFUSED_STREAM)
        return
      }
      const exchange = new StreamExchange(stream, headers, state)
      this.exchange(exchange, exchange, this.tlsExchange, state, null)
    })
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

  // A stream the client reset before its answer; past RESET_LIMIT the session is closed.
  private onReset(session: ServerHttp2Session, state: SessionState): void {
    this.o.counters.resets++
    if (++state.resets > RESET_LIMIT) this.calm(session, state)
  }

  // A session that reset too many streams: GOAWAY, then closed. Once: the resets past the limit that
  // arrive in the same read (before the session is destroyed on the next turn) each come here.
  private calm(session: ServerHttp2Session, state: SessionState): void {
    if (state.calmed || session.destroyed || session.closed) return
    state.calmed = true
    this.o.counters.resets++
    const { remoteAddress, remotePort } = session.socket
    this.o.logger.debug({ client: remoteAddress }, 'dns DoH: too many reset streams; closing')
    session.goaway(h2.NGHTTP2_ENHANCE_YOUR_CALM)
    // Destroyed on the next turn, not here: this runs inside a stream's 'close', while nghttp2 may still
    // be delivering the same read's frames, and Node 22 aborts the process (an assertion in
    // StreamBase::CallJSOnreadMethod) when data reaches a stream destroyed under it.
    setImmediate(() => {
      session.destroy()
      // The session lets its socket linger (and its proxy refuses destroy()): close it here.
      for (const sock of this.sockets)
        if (sock.remotePort === remotePort && sock.remoteAddress === remoteAddress) sock.destroy()
    })
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
    for (const s of this.sockets) s.destroy()
    for (const s of this.httpSockets) s.destroy()
    await Promise.all(closing)
  }
}
