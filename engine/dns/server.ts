/*
 * The filtering DNS server of one front process (DESIGN.md, "Shape"; docs/dns.md).
 *
 * UDP: one socket per `proxy.listen` address. The message handler runs synchronously: parse,
 * judge, answer or hand to the forwarder, with no promise, closure or async frame on the way
 * (STYLE.md E.3). A blocked name's answer is the query patched in place; a forwarded query is the
 * client's own Buffer with the ID rewritten.
 *
 * TCP (RFC 7766): length-framed messages, many per connection, each answered as soon as its
 * answer is ready (so out of order when upstream latencies differ); an idle timeout that only
 * closes a connection with nothing in flight; a per-process connection cap
 * (`tcp-max-connections`, excess connections are closed on accept); a frame-size cap (a larger
 * announced length closes the connection: the stream cannot be resynchronised); and at most
 * kMaxTcpInflight queries in flight per connection (reading pauses until answers drain).
 *
 * Dispatch: `inline` judges on this thread; `pool` collects the packets of one event-loop turn
 * (or `batch-size`) into one Piscina task (engine/pool). Both paths share `act()` afterwards.
 */
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram'
import { createServer, type Server, type Socket as TcpSocket } from 'node:net'
import { once } from 'node:events'
import type { Config } from '../config/types.js'
import { formatHostPort, parseHostPort } from '../config/address.js'
import { EngineError } from '../errors.js'
import { silentLogger, type Logger } from '../log/index.js'
import { createPolicy, type Policy, type SafeHosts } from '../policy/index.js'
import { DnsMetrics } from '../metrics/index.js'
import { JudgePool, type BatchOutput } from '../pool/index.js'
import { noopQueryLogSink, type QueryLogRecord, type QueryLogSink } from '../querylog/index.js'
import { configuredStoreOptions, openConfiguredStore, type Store } from '../store/index.js'
import {
  EDE_NO_REACHABLE_AUTHORITY, FrameReader, QCLASS_IN, QTYPE_A, QTYPE_AAAA, QUERY_OK, QueryScratch,
  RCODE_NXDOMAIN, RCODE_SERVFAIL, compileEdeText, decodeAddresses, frame, kAnswerBufferSize, rcodeOf,
  readId, readQuery, setId, writeCnameAnswer, writeErrorAnswer
} from '../wire/index.js'
import { JUDGE_ANSWER, JUDGE_FORWARD, JUDGE_SAFEVIDEO, Judge, compileBlockAnswers } from './judge.js'
import { buildRecord } from './record.js'
import { Forwarder, PendingQuery } from './upstream.js'

/** Largest TCP query frame accepted by default; real queries are < 600 bytes. */
export const kMaxTcpQueryFrame = 4096
/** Queries one TCP connection may have in flight before we stop reading from it. */
export const kMaxTcpInflight = 64

export interface DnsServerOptions {
  config: Readonly<Config>
  logger?: Logger
  /** Statistics sink; defaults to the no-op sink (statistics off). */
  querylog?: QueryLogSink
  /** An open store to share (tests); by default `common.db` is opened read-only. */
  store?: Store
  safeHosts?: SafeHosts
  /** Largest TCP frame accepted (default kMaxTcpQueryFrame). */
  tcpMaxFrame?: number
  /** Operational counters (engine/metrics); by default a private set nobody publishes. */
  metrics?: DnsMetrics
}

/** One bound `proxy.listen` address. With port 0, UDP and TCP get the same free port. */
export interface DnsListener {
  readonly host: string
  readonly family: 4 | 6
  readonly port: number
}

export interface DnsServer {
  readonly listeners: readonly DnsListener[]
  /** Port of the first listener (UDP and TCP). */
  readonly port: number
  readonly endpoints: readonly string[]
  readonly dispatch: 'inline' | 'pool'
  close (): Promise<void>
}

class TcpClient {
  readonly sock: TcpSocket
  readonly reader: FrameReader
  inflight = 0
  closed = false
  constructor (sock: TcpSocket, maxFrame: number) {
    this.sock = sock
    this.reader = new FrameReader(maxFrame)
  }
}

class BatchItem {
  readonly msg: Buffer
  readonly socket: UdpSocket | null
  readonly port: number
  readonly address: string
  readonly conn: TcpClient | null
  readonly time: number
  constructor (msg: Buffer, socket: UdpSocket | null, port: number, address: string, conn: TcpClient | null, time: number) {
    this.msg = msg
    this.socket = socket
    this.port = port
    this.address = address
    this.conn = conn
    this.time = time
  }
}

const kEdeTimeout = compileEdeText('upstream resolver did not answer')

// A query for `name`/`qtype`, ID 0 (the forwarder sets a random one), RD set.
function buildQuery (name: string, qtype: number): Buffer {
  const labels = name.split('.').filter((l) => l !== '')
  const parts = [Buffer.from([0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])]
  for (const l of labels) parts.push(Buffer.from([l.length]), Buffer.from(l, 'ascii'))
  parts.push(Buffer.from([0, qtype >>> 8, qtype & 0xff, 0, QCLASS_IN]))
  return Buffer.concat(parts)
}

class FrontLoop implements DnsServer {
  readonly listeners: DnsListener[] = []
  readonly endpoints: string[] = []
  readonly dispatch: 'inline' | 'pool'
  private readonly config: Readonly<Config>
  private readonly logger: Logger
  private readonly sink: QueryLogSink
  private readonly metrics: DnsMetrics
  private readonly tcpMaxFrame: number
  private store: Store | null = null
  private ownsStore = false
  private policy: Policy | null = null
  private judge: Judge | null = null
  private pool: JudgePool | null = null
  private forwarder: Forwarder | null = null
  private readonly udpSockets: UdpSocket[] = []
  private readonly tcpServers: Server[] = []
  private readonly tcpClients = new Set<TcpClient>()
  private readonly scratchOut = Buffer.allocUnsafe(kAnswerBufferSize)
  private readonly replyScratch = new QueryScratch()
  private readonly queryTemplates = new Map<string, Buffer>()
  private batch: BatchItem[] = []
  private batchScheduled = false
  private readonly batchSize: number
  private closed = false

  constructor (o: DnsServerOptions) {
    this.config = o.config
    this.logger = o.logger ?? silentLogger()
    this.sink = o.querylog ?? noopQueryLogSink
    this.metrics = o.metrics ?? new DnsMetrics()
    this.tcpMaxFrame = o.tcpMaxFrame ?? kMaxTcpQueryFrame
    this.dispatch = o.config.proxy.dispatch
    this.batchSize = o.config.proxy['batch-size']
  }

  get port (): number {
    return this.listeners[0]?.port ?? 0
  }

  async start (o: DnsServerOptions): Promise<void> {
    const proxy = this.config.proxy
    if (this.dispatch === 'inline') {
      this.store = o.store ?? openConfiguredStore(this.config, { readOnly: true })
      this.ownsStore = o.store === undefined
      this.policy = createPolicy(this.config, this.store, o.safeHosts === undefined ? {} : { safeHosts: o.safeHosts })
      this.judge = new Judge({ policy: this.policy, answers: compileBlockAnswers(proxy), clientSubnet: proxy['client-subnet'], wantCats: this.sink.enabled })
      this.policy.watcher.start()
    } else {
      this.pool = new JudgePool({
        workers: proxy.workers,
        data: {
          dbPath: o.store?.path ?? this.config.common.db,
          storeOptions: configuredStoreOptions(this.config),
          proxy: { ...proxy },
          vendorNames: [...this.config.common['vendor-names']],
          wantStats: this.sink.enabled
        }
      })
    }
    this.forwarder = await Forwarder.create({
      resolvers: this.config.dnscache.forward.map((r) => parseHostPort(r, 53)),
      timeoutMs: proxy['upstream-timeout'],
      onAnswer: (p, response) => this.onUpstream(p, response)
    })
    for (const text of proxy.listen) await this.listen(text)
  }

  private async listen (text: string): Promise<void> {
    const hp = parseHostPort(text, 53)
    for (let attempt = 0; ; attempt++) {
      const udp = createSocket({ type: hp.family === 4 ? 'udp4' : 'udp6', ipv6Only: hp.family === 6 })
      try {
        udp.bind(hp.port, hp.host)
        await once(udp, 'listening')
      } catch (err) {
        udp.close()
        throw new EngineError('ENGINE_LISTEN', `dns: cannot bind UDP ${text}: ${(err as Error).message}`, { cause: err })
      }
      const port = udp.address().port
      const tcp = createServer({ noDelay: true }, (sock) => this.onTcpConnection(sock))
      tcp.maxConnections = this.config.proxy['tcp-max-connections']
      try {
        tcp.listen({ host: hp.host, port, ipv6Only: hp.family === 6 })
        await once(tcp, 'listening')
      } catch (err) {
        udp.close()
        tcp.close()
        // Port 0: the port the kernel gave UDP may be taken for TCP; try another.
        if (hp.port === 0 && attempt < 10) continue
        throw new EngineError('ENGINE_LISTEN', `dns: cannot listen on TCP ${text}: ${(err as Error).message}`, { cause: err })
      }
      udp.on('message', (msg, rinfo) => this.onUdp(udp, msg, rinfo))
      udp.on('error', (err) => this.logger.error({ err }, 'dns udp socket error'))
      tcp.on('error', (err) => this.logger.error({ err }, 'dns tcp server error'))
      this.udpSockets.push(udp)
      this.tcpServers.push(tcp)
      this.listeners.push({ host: hp.host, family: hp.family, port })
      this.endpoints.push(`dns udp+tcp ${formatHostPort({ host: hp.host, port })}`)
      return
    }
  }

  // ---- receiving ------------------------------------------------------------------------------

  private onUdp (socket: UdpSocket, msg: Buffer, rinfo: RemoteInfo): void {
    if (this.judge === null) {
      this.enqueue(new BatchItem(msg, socket, rinfo.port, rinfo.address, null, this.sink.enabled ? Date.now() : 0))
      return
    }
    try {
      const j = this.judge
      const kind = j.judge(msg, rinfo.address, this.scratchOut)
      const rec = kind !== 0 && this.sink.enabled ? buildRecord(j, Date.now()) : null
      this.act(kind, msg, this.scratchOut, j.answerLength, kind === JUDGE_SAFEVIDEO ? j.verdict.target : '', socket, rinfo.port, rinfo.address, null, rec)
    } catch (err) {
      this.lastResort(err, msg, socket, rinfo.port, rinfo.address, null)
    }
  }

  private onTcpConnection (sock: TcpSocket): void {
    if (this.closed) { sock.destroy(); return }
    const c = new TcpClient(sock, this.tcpMaxFrame)
    this.tcpClients.add(c)
    sock.setTimeout(this.config.proxy['tcp-idle-timeout'])
    sock.on('timeout', () => {
      // RFC 7766 §6.2.3: idle means no query outstanding; a slow upstream is not idleness.
      if (c.inflight === 0) sock.destroy()
    })
    sock.on('error', () => {})
    sock.on('close', () => {
      c.closed = true
      this.tcpClients.delete(c)
    })
    sock.on('data', (chunk: Buffer) => {
      c.reader.push(chunk)
      for (let msg = c.reader.read(); msg !== null; msg = c.reader.read()) this.onTcpQuery(c, msg)
      if (c.reader.isOversized) {
        this.logger.debug({ length: c.reader.oversizedLength, client: sock.remoteAddress }, 'dns tcp frame too large; closing')
        sock.destroy()
      } else if (c.inflight >= kMaxTcpInflight) {
        sock.pause()
      }
    })
  }

  private onTcpQuery (c: TcpClient, msg: Buffer): void {
    c.inflight++
    const address = c.sock.remoteAddress ?? ''
    if (this.judge === null) {
      this.enqueue(new BatchItem(msg, null, 0, address, c, this.sink.enabled ? Date.now() : 0))
      return
    }
    try {
      const j = this.judge
      const kind = j.judge(msg, address, this.scratchOut)
      const rec = kind !== 0 && this.sink.enabled ? buildRecord(j, Date.now()) : null
      this.act(kind, msg, this.scratchOut, j.answerLength, kind === JUDGE_SAFEVIDEO ? j.verdict.target : '', null, 0, address, c, rec)
    } catch (err) {
      this.lastResort(err, msg, null, 0, address, c)
    }
  }

  // ---- pool dispatch ---------------------------------------------------------------------------

  private enqueue (item: BatchItem): void {
    this.batch.push(item)
    if (this.batch.length >= this.batchSize) {
      this.flush()
    } else if (!this.batchScheduled) {
      this.batchScheduled = true
      // setImmediate runs after this turn's I/O callbacks: one task per event-loop turn.
      setImmediate(() => { this.batchScheduled = false; this.flush() })
    }
  }

  private flush (): void {
    const items = this.batch
    if (items.length === 0 || this.pool === null) return
    this.batch = []
    let total = 0
    for (const it of items) total += it.msg.length
    const bytes = new ArrayBuffer(total)
    const view = Buffer.from(bytes)
    const spans = new Uint32Array(2 * items.length)
    const sources: string[] = new Array<string>(items.length)
    let off = 0
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!   // i < length
      it.msg.copy(view, off)
      spans[2 * i] = off
      spans[2 * i + 1] = it.msg.length
      sources[i] = it.address
      off += it.msg.length
    }
    this.metrics.setPoolQueueDepth(this.pool.queueSize)
    this.pool.run({ bytes, spans, sources }).then(
      (out) => this.onBatch(items, out),
      (err: unknown) => this.onBatch(items, null, err)
    )
  }

  private onBatch (items: BatchItem[], out: BatchOutput | null, err?: unknown): void {
    if (this.closed) return
    if (out === null || out.error !== null) {
      this.logger.error({ err: err ?? out?.error }, 'dns pool task failed')
      for (const it of items) this.lastResort(err ?? out?.error, it.msg, it.socket, it.port, it.address, it.conn)
      return
    }
    const answers = Buffer.from(out.bytes)
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!                // i < items.length == out.kinds.length
      const kind = out.kinds[i]!
      let answer = this.scratchOut
      let len = 0
      if (kind === JUDGE_ANSWER) {
        len = out.spans[2 * i + 1]!
        const start = out.spans[2 * i]!
        answer = answers.subarray(start, start + len)
      }
      const rec = out.records?.[i] ?? null
      if (rec !== null) rec.time = it.time
      try {
        this.act(kind, it.msg, answer, len, out.targets[i] ?? '', it.socket, it.port, it.address, it.conn, rec)
      } catch (e) {
        this.lastResort(e, it.msg, it.socket, it.port, it.address, it.conn)
      }
    }
  }

  // ---- acting on a decision --------------------------------------------------------------------

  private act (
    kind: number, msg: Buffer, answer: Buffer, answerLength: number, target: string,
    socket: UdpSocket | null, port: number, address: string, conn: TcpClient | null, rec: QueryLogRecord | null
  ): void {
    switch (kind) {
      case JUDGE_ANSWER: {
        // A local answer: an error answer to a bad query, or a block (safe search answers the same way).
        const rcode = answerLength >= 4 ? answer[3]! & 0x0f : RCODE_SERVFAIL
        this.metrics.countQuery(rcode !== 0 ? 'malformed' : rec?.reason === 'safesearch' ? 'safesearch' : 'block', rcode)
        this.reply(answer, answerLength, socket, port, address, conn, true)
        if (rec !== null) this.sink.write(rec)
        return
      }
      case JUDGE_FORWARD: {
        const p = new PendingQuery(msg)
        p.started = performance.now()
        p.clientId = readId(msg)
        p.socket = socket
        p.port = port
        p.address = address
        p.conn = conn
        p.record = rec
        if (conn === null) this.forwarder!.forwardUdp(p)   // forwarder is set before listening
        else this.forwarder!.forwardTcp(p)
        return
      }
      case JUDGE_SAFEVIDEO:
        this.safeVideo(msg, target, socket, port, address, conn, rec)
        return
      default:
        this.metrics.countQuery('drop', -1)
        if (conn !== null) this.done(conn)
    }
  }

  // Safe video: a CNAME to the restricted host, plus its addresses asked from upstream.
  private safeVideo (msg: Buffer, target: string, socket: UdpSocket | null, port: number, address: string, conn: TcpClient | null, rec: QueryLogRecord | null): void {
    const q = this.replyScratch
    readQuery(msg, q)
    if (q.qclass !== QCLASS_IN || (q.qtype !== QTYPE_A && q.qtype !== QTYPE_AAAA)) {
      const len = writeCnameAnswer(msg, q, target, [], this.scratchOut)
      this.reply(this.scratchOut, len, socket, port, address, conn, true)
      if (rec !== null) this.sink.write(rec)
      return
    }
    const cacheKey = `${target}/${q.qtype}`
    let template = this.queryTemplates.get(cacheKey)
    if (template === undefined) {
      template = buildQuery(target, q.qtype)
      this.queryTemplates.set(cacheKey, template)
    }
    const p = new PendingQuery(Buffer.from(template))
    p.started = performance.now()
    p.original = msg
    p.target = target
    p.clientId = q.id
    p.socket = socket
    p.port = port
    p.address = address
    p.conn = conn
    p.record = rec
    this.forwarder!.forwardUdp(p)
  }

  private onUpstream (p: PendingQuery, response: Buffer | null): void {
    if (this.closed) return
    const conn = p.conn as TcpClient | null
    const rec = p.record as QueryLogRecord | null
    let rcode: number
    if (response === null) this.metrics.countUpstreamTimeout()
    else this.metrics.observeUpstream(performance.now() - p.started)
    if (p.original !== null) {
      const decoded = response === null ? undefined : decodeAddresses(response)
      const q = this.replyScratch
      readQuery(p.original, q)
      if (decoded === undefined) {
        rcode = RCODE_SERVFAIL
        const len = writeErrorAnswer(p.original, q, RCODE_SERVFAIL, this.scratchOut, EDE_NO_REACHABLE_AUTHORITY, kEdeTimeout)
        this.reply(this.scratchOut, len, p.socket, p.port, p.address, conn, true)
      } else {
        rcode = 0
        const len = writeCnameAnswer(p.original, q, p.target, decoded.records, this.scratchOut, conn === null ? {} : { maxSize: kAnswerBufferSize })
        this.reply(this.scratchOut, len, p.socket, p.port, p.address, conn, true)
      }
    } else if (response === null) {
      rcode = RCODE_SERVFAIL
      setId(p.query, p.clientId)
      const q = this.replyScratch
      const ok = readQuery(p.query, q) === QUERY_OK
      const len = writeErrorAnswer(p.query, ok ? q : null, RCODE_SERVFAIL, this.scratchOut, EDE_NO_REACHABLE_AUTHORITY, kEdeTimeout)
      this.reply(this.scratchOut, len, p.socket, p.port, p.address, conn, true)
    } else {
      rcode = rcodeOf(response)
      this.reply(response, response.length, p.socket, p.port, p.address, conn, false)
    }
    this.metrics.countQuery(p.original !== null ? 'safevideo' : 'forward', rcode)
    if (rec !== null) {
      rec.rcode = rcode
      rec.nxdomain = rcode === RCODE_NXDOMAIN
      this.sink.write(rec)
    }
  }

  // `copy`: `buf` is scratch reused by the next query, so UDP sends a copy (dgram may queue it).
  private reply (buf: Buffer, len: number, socket: UdpSocket | null, port: number, address: string, conn: TcpClient | null, copy: boolean): void {
    if (conn !== null) {
      if (!conn.closed) conn.sock.write(frame(buf, len))
      this.done(conn)
      return
    }
    if (socket === null || this.closed) return
    const out = copy ? Buffer.allocUnsafe(len) : buf
    if (copy) buf.copy(out, 0, 0, len)
    socket.send(out, 0, len, port, address)
  }

  private done (conn: TcpClient): void {
    conn.inflight--
    if (conn.inflight < kMaxTcpInflight && conn.sock.isPaused() && !conn.closed) conn.sock.resume()
  }

  // The one last-resort catch of the front loop: count, log, answer SERVFAIL.
  private lastResort (err: unknown, msg: Buffer, socket: UdpSocket | null, port: number, address: string, conn: TcpClient | null): void {
    this.logger.error({ err }, 'dns: unexpected error while answering; sent SERVFAIL')
    try {
      const q = this.replyScratch
      const ok = readQuery(msg, q) === QUERY_OK
      const len = writeErrorAnswer(msg, ok ? q : null, RCODE_SERVFAIL, this.scratchOut)
      this.reply(this.scratchOut, len, socket, port, address, conn, true)
    } catch {
      if (conn !== null) this.done(conn)
    }
  }

  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.policy?.watcher.stop()
    for (const s of this.udpSockets) s.close()
    const closing = this.tcpServers.map(async (s) => await new Promise<void>((resolve) => s.close(() => resolve())))
    for (const c of this.tcpClients) c.sock.destroy()
    await Promise.all(closing)
    this.forwarder?.close()
    await this.pool?.close()
    if (this.ownsStore) await this.store?.close()
    await this.sink.close?.()
  }
}

/**
 * Starts the filtering DNS server of one process: UDP and TCP listeners on every
 * `proxy.listen` address, the policy (inline, or a Piscina pool for `dispatch: pool`) and the
 * forwarder. Port 0 in a listen address binds a free port, the same for UDP and TCP.
 *
 * @example
 * const server = await startDnsServer({ config, store, querylog: memoryQueryLogSink() })
 * console.log(server.port)   // query 127.0.0.1:server.port over UDP or TCP
 * await server.close()
 */
export async function startDnsServer (options: DnsServerOptions): Promise<DnsServer> {
  const server = new FrontLoop(options)
  try {
    await server.start(options)
  } catch (err) {
    await server.close()
    throw err
  }
  return server
}
