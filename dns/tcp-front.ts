/*
 * The TCP front (RFC 7766) on node:net: length-framed messages, many per connection, each
 * answered as soon as its answer is ready (so out of order when upstream latencies differ); an
 * idle timeout that only closes a connection with nothing in flight; a per-process connection cap
 * (`tcp-max-connections`, excess connections are closed on accept); a frame-size cap (a larger
 * announced length closes the connection: the stream cannot be resynchronised); and at most
 * kMaxTcpInflight queries in flight per connection (reading pauses until answers drain).
 *
 * Each connection is one Peer (and its own PeerChannel); every query read from it goes to the
 * dispatcher with that Peer.
 */
import { createServer, type Server, type Socket } from 'node:net'
import { once } from 'node:events'
import type { Logger } from '../engine/log/index.js'
import { FrameReader, frame } from '../engine/wire/index.js'
import { Peer, type PeerChannel } from './peer.js'
import type { QueryHandler } from './udp-front.js'

/** Largest TCP query frame accepted by default; real queries are < 600 bytes. */
export const kMaxTcpQueryFrame = 4096
/** Queries one TCP connection may have in flight before we stop reading from it. */
export const kMaxTcpInflight = 64

export interface TcpFrontOptions {
  maxConnections: number
  idleTimeoutMs: number
  maxFrame: number
  logger: Logger
  onQuery: QueryHandler
  /** Counts accepted connections. */
  onConnection: () => void
}

class TcpConnection implements PeerChannel {
  readonly isStream = true
  readonly sock: Socket
  readonly reader: FrameReader
  readonly peer: Peer
  inflight = 0
  closed = false
  constructor (sock: Socket, maxFrame: number) {
    this.sock = sock
    this.reader = new FrameReader(maxFrame)
    this.peer = new Peer(this, sock.remoteAddress ?? '', sock.remotePort ?? 0)
  }

  send (_peer: Peer, buf: Buffer, len: number, _copy: boolean): void {
    if (!this.closed) this.sock.write(frame(buf, len))
    this.skip(_peer)
  }

  own (msg: Buffer): Buffer { return msg }

  // One query of this connection is done (answered or not): free its in-flight slot.
  skip (_peer: Peer): void {
    this.inflight--
    if (this.inflight < kMaxTcpInflight && this.sock.isPaused() && !this.closed) this.sock.resume()
  }
}

/** The TCP listeners of one front process and their connections. */
export class TcpFront {
  private readonly o: TcpFrontOptions
  private readonly servers: Server[] = []
  private readonly connections = new Set<TcpConnection>()
  private closed = false

  constructor (o: TcpFrontOptions) {
    this.o = o
  }

  /** Listens on `host:port`; throws the listen error (the server is not kept). */
  async listen (host: string, port: number, family: 4 | 6): Promise<void> {
    const tcp = createServer({ noDelay: true }, (sock) => this.onConnection(sock))
    tcp.maxConnections = this.o.maxConnections
    try {
      tcp.listen({ host, port, ipv6Only: family === 6 })
      await once(tcp, 'listening')
    } catch (err) {
      tcp.close()
      throw err
    }
    tcp.on('error', (err) => this.o.logger.error({ err }, 'dns tcp server error'))
    this.servers.push(tcp)
  }

  private onConnection (sock: Socket): void {
    if (this.closed) { sock.destroy(); return }
    const c = new TcpConnection(sock, this.o.maxFrame)
    this.connections.add(c)
    this.o.onConnection()
    sock.setTimeout(this.o.idleTimeoutMs)
    sock.on('timeout', () => {
      // RFC 7766 §6.2.3: idle means no query outstanding; a slow upstream is not idleness.
      if (c.inflight === 0) sock.destroy()
    })
    sock.on('error', () => {})
    sock.on('close', () => {
      c.closed = true
      this.connections.delete(c)
    })
    sock.on('data', (chunk: Buffer) => {
      c.reader.push(chunk)
      for (let msg = c.reader.read(); msg !== null; msg = c.reader.read()) {
        c.inflight++
        this.o.onQuery(msg, c.peer)
      }
      if (c.reader.isOversized) {
        this.o.logger.debug({ length: c.reader.oversizedLength, client: sock.remoteAddress }, 'dns tcp frame too large; closing')
        sock.destroy()
      } else if (c.inflight >= kMaxTcpInflight) {
        sock.pause()
      }
    })
  }

  async close (): Promise<void> {
    this.closed = true
    const closing = this.servers.map(async (s) => await new Promise<void>((resolve) => s.close(() => resolve())))
    for (const c of this.connections) c.sock.destroy()
    await Promise.all(closing)
  }
}
