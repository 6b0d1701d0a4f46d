/*
 * The TCP front (RFC 7766) on node:net: length-framed messages, many per connection, each
 * answered as soon as its answer is ready (so out of order when upstream latencies differ); a
 * per-process connection table (./tcp-slots.ts: `tcp-max-connections`, `tcp-max-per-source` per
 * IPv4 address or IPv6 /64, the oldest idle connection closed to make room when it is full, an
 * idle timeout that shortens as it fills); a frame-size cap (a larger announced length closes the connection: the stream cannot be
 * resynchronised).
 *
 * What one client may cost is bounded, whatever it does:
 * - Back-pressure. A query counts against the connection's in-flight cap (MAX_TCP_INFLIGHT) until
 *   its answer is handed to the socket, and the answers the socket holds because the client does
 *   not read count too: past MAX_TCP_BUFFERED bytes waiting to be written, or MAX_TCP_INFLIGHT
 *   queries in flight, the connection stops reading (frames already received wait in its reader),
 *   and reading resumes on 'drain'. A pipelining client that never reads therefore holds at most
 *   about MAX_TCP_BUFFERED + one read chunk + MAX_TCP_INFLIGHT forwarded queries, and the kernel's
 *   socket buffers; its connection is then idle (nothing moves) and closed by the idle timeout.
 * - Deadlines not reset by each byte (slowloris). A message that has begun must be complete
 *   within `tcp-message-timeout`; a connection with nothing in flight, nothing to write and no
 *   partial message is closed `tcp-idle-timeout` after its last complete message or answer. A
 *   client dribbling one byte every few seconds is closed at the message deadline.
 * - A share of the event loop. One read can carry a thousand pipelined frames; answered one after
 *   another they would hold the loop for milliseconds while every UDP client waits. The connections
 *   of a front take at most TCP_FRAMES_PER_TURN frames between them per event-loop turn; one that
 *   finds the turn's budget spent pauses and goes on in a later turn (setImmediate, after the
 *   turn's other I/O), in the order they ran out, so a thousand busy connections cannot add up
 *   to a long turn either.
 * Answers of one event-loop turn are corked into one write (one system call for a pipelined batch).
 *
 * Each connection is one Peer (and its own PeerChannel); every query read from it goes to the
 * dispatcher with that Peer.
 *
 * DNS over TLS (RFC 7858) is this same front over TLS sockets (`secure`, ./dot-front.ts): a DoT front
 * is a TcpFront of its own (its own table, budget and counters), whose listeners hand it each
 * connection once its handshake is done, with the client ID its server name carries.
 */
import { createServer, type Server, type Socket } from 'node:net'
import { once } from 'node:events'
import type { Logger } from '../engine/log/index.js'
import { FrameReader, frame } from '../engine/wire/index.js'
import { Peer, type PeerChannel } from './peer.js'
import type { QueryHandler } from './udp-front.js'
import { SlotDeadlines, TcpSlots, type SlotHolder } from './tcp-slots.js'
import type { TcpSlotCounts } from '../engine/metrics/index.js'
import { createDotServer, type DotListenerOptions } from './dot-front.js'
import type { TransportCounters } from './transport-counters.js'

/** Largest TCP query frame accepted by default; real queries are < 600 bytes. */
export const MAX_TCP_QUERY_FRAME = 4096
/** Queries one TCP connection may have in flight before we stop reading from it. */
export const MAX_TCP_INFLIGHT = 64
/** Answer bytes waiting for a slow reader before we stop reading its queries. */
export const MAX_TCP_BUFFERED = 64 * 1024
/** Frames the TCP connections of one front may take between them per event-loop turn. */
export const TCP_FRAMES_PER_TURN = 64
export interface TcpFrontOptions {
  maxConnections: number
  /** Connections per IPv4 address or IPv6 /64 at most (default: maxConnections, no cap of its own). */
  maxPerSource?: number
  idleTimeoutMs: number
  /** A message that has begun must be complete within this (slowloris). */
  messageTimeoutMs: number
  maxFrame: number
  logger: Logger
  onQuery: QueryHandler
  /** DNS over TLS: the listeners are TLS servers (./dot-front.ts). */
  secure?: Omit<DotListenerOptions, 'counters' | 'logger'>
  /** Connections and queries of this front, for /metrics (the DoT front's). */
  counters?: TransportCounters
}

/** The frames left for this event-loop turn, and the connections waiting for the next one. */
class TurnBudget {
  left = TCP_FRAMES_PER_TURN
  private waiting: TcpConnection[] = []
  private scheduled = false

  /** `c` found the budget spent: it goes on in a later turn. */
  wait(c: TcpConnection): void {
    this.waiting.push(c)
    this.schedule()
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(this.nextTurn)
  }

  private readonly nextTurn = (): void => {
    this.scheduled = false
    this.left = TCP_FRAMES_PER_TURN
    const list = this.waiting
    this.waiting = []
    let i = 0
    while (i < list.length && this.left > 0) list[i++]!.continueTurn() // i < length
    if (i < list.length) {
      // Those not reached go first next time, before the ones that ran out again in this turn.
      this.waiting = list.slice(i).concat(this.waiting)
      this.schedule()
    }
  }
}

class TcpConnection implements PeerChannel, SlotHolder {
  readonly isStream = true
  readonly sock: Socket
  readonly reader: FrameReader
  readonly peer: Peer
  private readonly onQuery: QueryHandler
  inflight = 0
  closed = false
  /** Date.now() of the last complete message read or answer written. */
  lastActive: number
  /** Date.now() when the unfinished message in the reader began, or 0. */
  partialSince = 0
  /** The front's connections with an unfinished message (partialSince set), for the message deadlines. */
  private readonly partial: Set<TcpConnection>
  /** Paused until the turn budget has frames for it again (TurnBudget calls continueTurn). */
  yielding = false
  /** Inside pump(): an answer given synchronously frees its slot without starting another pump. */
  private pumping = false
  /** The front's frames-per-turn budget, shared by its connections. */
  private readonly budget: TurnBudget
  /** Closes the connection at a frame over the size cap (the front logs it). */
  private readonly tooLarge: (c: TcpConnection) => void
  private corked = false
  private readonly uncork = (): void => {
    this.corked = false
    this.sock.uncork()
  }

  constructor(
    sock: Socket,
    maxFrame: number,
    onQuery: QueryHandler,
    budget: TurnBudget,
    tooLarge: (c: TcpConnection) => void,
    clientId: string | null,
    partial: Set<TcpConnection>
  ) {
    this.partial = partial
    this.budget = budget
    this.tooLarge = tooLarge
    this.sock = sock
    this.reader = new FrameReader(maxFrame)
    this.peer = new Peer(this, sock.remoteAddress ?? '', sock.remotePort ?? 0, -1, clientId)
    this.onQuery = onQuery
    this.lastActive = Date.now()
  }

  send(_peer: Peer, buf: Buffer, len: number, _copy: boolean): void {
    if (!this.closed) {
      if (!this.corked) {
        this.corked = true
        this.sock.cork()
        process.nextTick(this.uncork)
      }
      this.sock.write(frame(buf, len))
      this.lastActive = Date.now()
    }
    this.skip(_peer)
  }

  own(msg: Buffer): Buffer {
    return msg
  }

  // One query of this connection is done (answered or not): free its in-flight slot.
  skip(_peer: Peer): void {
    this.inflight--
    if (this.sock.isPaused() && !this.closed && !this.yielding && !this.pumping && this.canRead()) this.resume()
  }

  /** Nothing in flight, no unread bytes (for the table: it only holds its slot). */
  isIdle(): boolean {
    return this.inflight <= 0 && this.reader.bufferedBytes === 0
  }

  evict(): void {
    this.closed = true
    this.sock.destroy()
  }

  /** Whether another query may be taken: in-flight and buffered-answer caps. */
  canRead(): boolean {
    return this.inflight < MAX_TCP_INFLIGHT && this.sock.writableLength <= MAX_TCP_BUFFERED
  }

  // Takes the frames already received, while the caps allow; the rest wait in the reader.
  // A message's deadline starts with its first byte: partialSince is cleared by each complete
  // message and set when bytes of the next one wait (not when whole frames wait for our caps).
  pump(): void {
    this.pumping = true
    try {
      this.take()
    } finally {
      this.pumping = false
    }
  }

  private take(): void {
    while (!this.closed && !this.yielding && this.canRead()) {
      if (this.budget.left <= 0) {
        if (this.reader.bufferedBytes > 0) this.yieldTurn()
        break
      }
      const msg = this.reader.read()
      if (msg === null) {
        // The stream cannot be resynchronised after a frame over the cap (found in whichever turn reaches it).
        if (this.reader.isOversized) this.tooLarge(this)
        break
      }
      this.budget.left--
      this.inflight++
      this.lastActive = Date.now()
      this.partialSince = 0
      this.onQuery(msg, this.peer)
    }
    if (this.reader.bufferedBytes === 0 || !this.canRead() || this.yielding) this.partialSince = 0
    else if (this.partialSince === 0) this.partialSince = Date.now()
    if (this.partialSince === 0) this.partial.delete(this)
    else this.partial.add(this)
  }

  private yieldTurn(): void {
    this.yielding = true
    this.sock.pause()
    this.budget.wait(this)
  }

  /** The budget has frames again. */
  continueTurn(): void {
    this.yielding = false
    if (!this.closed && this.canRead()) this.resume()
  }

  resume(): void {
    this.pump()
    if (this.canRead() && !this.yielding) this.sock.resume()
  }
}

/** The TCP listeners of one front process and their connections. */
export class TcpFront {
  private readonly o: TcpFrontOptions
  private readonly servers: Server[] = []
  private readonly slots: TcpSlots<TcpConnection>
  private readonly budget = new TurnBudget()
  // The dispatcher's handler, counting the queries of a front that has counters.
  private readonly onQuery: QueryHandler = (msg, peer) => {
    if (this.counters !== null) this.counters.queries++
    this.o.onQuery(msg, peer)
  }
  private readonly tooLarge = (c: TcpConnection): void => {
    this.o.logger.debug(
      { length: c.reader.oversizedLength, client: c.sock.remoteAddress },
      'dns tcp frame too large; closing'
    )
    c.closed = true
    c.sock.destroy()
  }
  /** The message and idle deadlines; its `partial` holds the connections with an unfinished message. */
  private readonly deadlines: SlotDeadlines<TcpConnection>
  private closed = false
  private readonly counters: TransportCounters | null

  constructor(o: TcpFrontOptions) {
    this.o = o
    this.slots = new TcpSlots({
      max: o.maxConnections,
      perSource: o.maxPerSource ?? o.maxConnections,
      idleTimeoutMs: o.idleTimeoutMs
    })
    this.deadlines = new SlotDeadlines(this.slots, {
      messageTimeoutMs: o.messageTimeoutMs,
      idleTimeoutMs: o.idleTimeoutMs,
      // RFC 7766 §6.2.3: idle means no query outstanding (a slow upstream is not idleness), or
      // answers that the client has not read for the whole idle time.
      isIdleExpired: (c, now, idleMs) =>
        !c.closed && now - c.lastActive > idleMs && (c.inflight === 0 || c.sock.writableLength > 0),
      expire: (c, why) => {
        if (c.closed) return
        if (why === 'message' && this.counters !== null) this.counters.timedOut++
        c.sock.destroy()
      }
    })
    this.counters = o.counters ?? null
    if (this.counters !== null) {
      this.counters.open = () => this.slots.size
      this.counters.slots = () => this.slots.totals
    }
  }

  /** Listens on `host:port` and returns the port bound; throws the listen error (the server is not kept). */
  async listen(host: string, port: number, family: 4 | 6): Promise<number> {
    const tcp =
      this.o.secure === undefined
        ? createServer({ noDelay: true }, (sock) => this.onConnection(sock, null))
        : createDotServer({ ...this.o.secure, counters: this.o.counters!, logger: this.o.logger }, (sock, clientId) =>
            this.onConnection(sock, clientId)
          )
    try {
      tcp.listen({ host, port, ipv6Only: family === 6 })
      await once(tcp, 'listening')
    } catch (err) {
      tcp.close()
      throw err
    }
    tcp.on('error', (err) => this.o.logger.error({ err }, 'dns tcp server error'))
    this.servers.push(tcp)
    const bound = tcp.address()
    return typeof bound === 'object' && bound !== null ? bound.port : port
  }

  private onConnection(sock: Socket, clientId: string | null): void {
    if (this.closed) {
      sock.destroy()
      return
    }
    const c = new TcpConnection(
      sock,
      this.o.maxFrame,
      this.onQuery,
      this.budget,
      this.tooLarge,
      clientId,
      this.deadlines.partial
    )
    sock.on('error', () => {})
    if (!this.slots.admit(c, sock.remoteAddress ?? '')) {
      this.o.logger.debug({ client: sock.remoteAddress }, 'dns tcp connection refused: per-source cap or table full')
      c.closed = true
      if (this.counters !== null) this.counters.refused++
      sock.destroy()
      return
    }
    if (this.counters !== null) this.counters.connections++
    sock.on('close', () => {
      c.closed = true
      this.deadlines.partial.delete(c)
      this.slots.release(c)
    })
    sock.on('drain', () => {
      c.lastActive = Date.now()
      if (sock.isPaused() && !c.closed && !c.yielding && c.canRead()) c.resume()
    })
    sock.on('data', (chunk: Buffer) => {
      c.reader.push(chunk)
      c.pump()
      if (!c.closed && !c.canRead()) sock.pause()
    })
  }

  /** Connections refused and evicted so far, by reason (for /metrics). */
  get slotCounts(): TcpSlotCounts {
    return this.slots.totals
  }

  /** Open client connections. */
  get connectionCount(): number {
    return this.slots.size
  }

  async close(): Promise<void> {
    this.closed = true
    this.deadlines.close()
    const closing = this.servers.map(async (s) => await new Promise<void>((resolve) => s.close(() => resolve())))
    for (const c of this.slots.holders()) c.sock.destroy()
    await Promise.all(closing)
  }
}
