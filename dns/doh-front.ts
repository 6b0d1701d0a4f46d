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
 * - TLS handshakes in progress capped and timed as DoT's (./dot-front.ts guardTlsServer);
 *   connections capped at `tcp-max-connections` per front; a connection idle for
 *   `tcp-idle-timeout` is closed.
 * - HTTP/2: at most `doh-max-streams` streams open at once per connection (the SETTINGS the client
 *   must obey; ./h2/connection.ts refuses more, and bounds frames, header blocks and flow control),
 *   and at most twice that many queries in flight per connection counting those whose stream the
 *   client reset (503 past it). A connection whose client resets more than RESET_LIMIT streams
 *   before their answer gets GOAWAY (ENHANCE_YOUR_CALM) and is closed: the rapid reset attack
 *   (CVE-2023-44487) costs a few hundred streams, not a loop.
 * - Bodies: a declared or received body over the frame cap is refused at once (413), and the whole
 *   request must arrive within `tcp-message-timeout` (slow bodies: 408).
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http'
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net'
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls'
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
import { H2Connection, type H2ConnectionOptions } from './h2/connection.js'
import { H2Error } from './h2/frames.js'
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

/** The DoH listeners of one front process. */
export class DohFront {
  private readonly o: DohFrontOptions
  private readonly servers: Array<TlsServer | NetServer> = []
  private readonly sockets = new Set<Socket>()
  private readonly httpSockets = new Set<Socket>()
  /** The address a trusted proxy's PROXY v2 header named, per plain-HTTP connection. */
  private readonly proxied = new WeakMap<Socket, { address: string; port: number }>()
  /** node:http for the plain listeners, and for the TLS ones' HTTP/1.1 connections. */
  private readonly http: HttpServer
  private readonly tlsHttp: HttpServer
  /** What every HTTP/2 connection of the TLS listeners shares. */
  private readonly h2: H2ConnectionOptions
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
    this.http = this.httpServer((req, res) =>
      this.exchange(req, res, this.httpExchange, null, this.proxied.get(req.socket) ?? null)
    )
    this.tlsHttp = this.httpServer((req, res) => this.exchange(req, res, this.tlsExchange, null, null))
    this.h2 = {
      maxStreams: o.maxStreams,
      onStream: (conn, stream) => this.exchange(stream, stream, this.tlsExchange, conn, null),
      onReset: (conn) => this.onReset(conn)
    }
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
    return await this.bind(server, host, port, family)
  }

  // A TLS connection whose handshake is done: HTTP/2 (ALPN h2) is served by ./h2/connection.ts, anything
  // else (ALPN http/1.1, or none) by node:http.
  private onSecure(sock: TLSSocket): void {
    sock.on('error', () => {})
    this.track(sock, this.sockets, this.o.counters)
    if (sock.destroyed) return
    if (sock.alpnProtocol !== 'h2') {
      this.tlsHttp.emit('connection', sock)
      return
    }
    const remoteAddress = sock.remoteAddress ?? ''
    new H2Connection(sock, this.h2, this.o.trusted.has(remoteAddress) ? null : remoteAddress)
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

  // A stream the client reset before its answer; past RESET_LIMIT the connection gets GOAWAY
  // (ENHANCE_YOUR_CALM) and is closed: once, since nothing more is read from it after that.
  private onReset(conn: H2Connection): void {
    this.o.counters.resets++
    if (conn.resets <= RESET_LIMIT) return
    this.o.counters.resets++
    this.o.logger.debug({ client: conn.peer.remoteAddress }, 'dns DoH: too many reset streams; closing')
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
    for (const s of this.sockets) s.destroy()
    for (const s of this.httpSockets) s.destroy()
    await Promise.all(closing)
  }
}
