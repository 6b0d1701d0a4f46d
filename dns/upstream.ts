/*
 * Forwarding to the operator's resolvers (`dnscache.forward`).
 *
 * Spoofing defences (RFC 5452): every forwarded query gets a fresh random ID from `crypto`
 * (drawn from a pre-filled random buffer, refilled when used up, so the hot path makes no
 * syscall), and leaves from one of a small pool of UDP sockets bound to random ports; each
 * resolver has a pool of its own, and its sockets are connected to it, so the kernel drops
 * datagrams from any other source before they reach us and caches the route (a connected send
 * also skips dgram's per-send address lookup: a few µs per query on the hot path). One socket of
 * each pool is replaced every `rotateMs`, the retired one kept open until its queries are
 * answered or timed out. An answer is accepted only from the resolver the query went to, on the
 * socket it left from, with its ID and its question (name case-insensitively, type, class). The
 * client's ID is then written back and the bytes relayed otherwise unchanged (TC answers too).
 *
 * Timeouts and failover, the way dnsdist and Unbound do it: the client's budget is `timeoutMs`.
 * It is split into `attempts` tries (one per resolver, at most 3) of `timeoutMs / attempts`
 * each; a try that gets no answer in its share is sent again, with a fresh ID, to the next
 * resolver, so a dead resolver costs a client one share of latency and never a SERVFAIL while
 * another one answers. Only when the whole budget is spent does the client get SERVFAIL.
 * A resolver that let a try time out (or refused it: ICMP port unreachable, TCP reset) is marked
 * down: users' queries go to the first resolver that is up (to a down one only when all are
 * down). A down resolver is probed in the background, every `probeMs`, with a query of our own
 * (`. NS`); the first answer (any RCODE) marks it up again. So no user query is spent finding
 * out whether a resolver came back. Tries are queued in sending order and all share one
 * per-try timeout, so one coarse sweep timer pops the expired ones from the head of the queue:
 * no timer per query.

 * TCP clients are forwarded over TCP, one short connection per query (TCP is the rare path:
 * truncated answers, zone-sized records), framed as RFC 7766 says.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { connect, type Socket as TcpSocket } from 'node:net'
import { randomFillSync, randomInt } from 'node:crypto'
import type { Peer } from './peer.js'
import type { Logger } from '../engine/log/index.js'
import { ECONNREFUSED, openBatchUdpSocket, type BatchUdpSocket } from '../engine/udp/index.js'
import { FrameReader, QueryScratch, QUERY_OK, frame, questionMatches, readId, readQuery, setId } from '../engine/wire/index.js'

export interface ResolverAddress {
  readonly host: string
  readonly port: number
  readonly family: 4 | 6
}

class Resolver {
  readonly host: string
  readonly port: number
  readonly family: 4 | 6
  /** False from a try that timed out or was refused until an answer (a probe's or a user's). */
  up = true
  /** A background probe is waiting for its answer. */
  probing = false
  /** Why its sockets could not be opened ('' when they could): no route to it, say. */
  unreachable = ''
  /** Its sockets are being opened again in the background. */
  opening = false
  /** UDP sockets connected to this resolver: the live pool, and retired ones still awaited. */
  readonly pool: OutSocket[] = []
  readonly retired = new Set<OutSocket>()
  constructor (a: ResolverAddress) {
    this.host = a.host
    this.port = a.port
    this.family = a.family
  }
}

/** One connected upstream socket: node:dgram, or the native batched I/O (`proxy.io`). */
interface OutTransport {
  /** Queries sent since the last flush are still waiting to leave together (native batches). */
  batching (): boolean
  send (query: Buffer): void
  close (): void
}

class DgramOut implements OutTransport {
  readonly sock: UdpSocket
  constructor (sock: UdpSocket) { this.sock = sock }
  batching (): boolean { return false }
  send (query: Buffer): void { this.sock.send(query) }
  close (): void { this.sock.close() }
}

class NativeOut implements OutTransport {
  sock: BatchUdpSocket | null = null
  batching (): boolean { return this.sock!.txCount > 0 }
  send (query: Buffer): void {
    const s = this.sock!   // set right after opening
    if (query.length > s.slot) { s.sendOne(query, query.length, null, 0); return }
    query.copy(s.txBuf, s.nextSlot())
    s.commit(query.length, 0)
  }

  close (): void { this.sock?.close() }
}

class OutSocket {
  readonly sock: OutTransport
  readonly serial: number
  readonly born: number
  pending = 0
  /**
   * The try waiting for an answer with each ID, by ID: an answer finds its query with one index,
   * where a Map keyed by socket and ID cost a hash, an entry and its deletion per query.
   */
  readonly waiting = new Array<PendingQuery | undefined>(65536)
  retired = false
  constructor (sock: OutTransport, serial: number, born: number) {
    this.sock = sock
    this.serial = serial
    this.born = born
  }
}

/** Answers per recvmmsg on a native upstream socket. */
const kUpstreamBatch = 32
/** A UDP answer can be as large as the client's EDNS size allows: the slot takes the largest. */
const kUpstreamSlot = 65536
/** SO_RCVBUF of each upstream socket (the kernel caps it at net.core.rmem_max). */
const kUpstreamReceiveBuffer = 4 << 20

/** Who is waiting for the answer: the front fills these, the forwarder carries them. */
export class PendingQuery {
  /** The query as sent upstream (its ID is ours, not the client's). */
  query: Buffer
  clientId = 0
  /** Who asked, and how the answer goes back. */
  peer: Peer | null = null
  /** For safe video: the client's own query (the forwarded one asks for the target). */
  original: Buffer | null = null
  /** Safe-video target asked for ('' for a relayed query). */
  target = ''
  /** Statistics record to complete, or null. */
  record: unknown = null
  /** performance.now() when the front handed it over (upstream latency metric). */
  started = 0
  // Forwarder bookkeeping.
  /** Key of the try in flight: its socket's serial × 65536 + ID (UDP, >= 0), or in tcpByKey (TCP, < 0). */
  key = -1
  /** Serial of the try in flight: an expiry entry with another serial is stale. */
  trySerial = 0
  /** Date.now() when the client's budget is spent. */
  deadline = 0
  /** Tries sent so far; the queue entry of an earlier try is stale. */
  tries = 0
  done = false
  /** A background probe of `resolver` (no client waits for it). */
  probe = false
  viaTcp = false
  /** The client asked over TCP: a truncated UDP answer is asked again over TCP, not relayed. */
  streamClient = false
  resolver: Resolver | null = null
  out: OutSocket | null = null
  tcp: TcpSocket | null = null
  constructor (query: Buffer) {
    this.query = query
  }
}

export interface ForwarderOptions {
  resolvers: readonly ResolverAddress[]
  /** The client's whole budget: SERVFAIL when no resolver answered within it. */
  timeoutMs: number
  /** Called once per query: the upstream answer with the client's ID restored, or null on timeout/failure. */
  onAnswer: (p: PendingQuery, response: Buffer | null) => void
  /** UDP sockets per resolver. */
  socketsPerResolver?: number
  rotateMs?: number
  /** How often a down resolver is probed (default 500 ms). */
  probeMs?: number
  /** UDP I/O: node:dgram (default) or the native batched addon (engine/udp). */
  io?: 'native' | 'dgram'
  /** Where a resolver that cannot be reached at all (no route) is reported. */
  logger?: Pick<Logger, 'warn' | 'info'>
}

const kIdBatch = 4096
/** Tries per client query at most (one per resolver): dnsdist and Unbound settle on a few. */
const kMaxTries = 3
// `. NS`, RD set: every recursive resolver answers it from its cache.
const kProbeQuery = Buffer.from([0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1])

export class Forwarder {
  private readonly resolvers: Resolver[]
  private readonly timeoutMs: number
  private tryMs: number
  private maxTries: number
  private readonly probeMs: number
  private readonly rotateMs: number
  private readonly poolSize: number
  private readonly io: 'native' | 'dgram'
  private readonly onAnswer: (p: PendingQuery, response: Buffer | null) => void
  /** Every open upstream socket by serial (a UDP try's key is its socket's serial × 65536 + ID). */
  private readonly bySerial = new Map<number, OutSocket>()
  // The tries in sending order (all expire tryMs after they were sent): each entry is the try's key
  // and serial, numbers only. A query answered in time is gone from its socket's `waiting` (or from
  // tcpByKey), so nothing holds it until its entry expires: it dies young instead of being promoted
  // by the garbage collector with its buffers (about 500 bytes per query at 20k q/s before,
  // docs/performance.md).
  private queueKey: number[] = []
  private queueSerial: number[] = []
  private queueExpires: number[] = []
  private head = 0
  private trySerial = 0
  private readonly tcpByKey = new Map<number, PendingQuery>()
  private tcpKey = 0
  private readonly ids = new Uint16Array(kIdBatch)
  private idNext = kIdBatch
  private turn = 0
  private serial = 0
  private lastRotate = 0
  private lastProbe = 0
  private readonly sweeper: NodeJS.Timeout
  private readonly scratch = new QueryScratch()
  private closed = false
  private logger: Pick<Logger, 'warn' | 'info'> | null = null

  private constructor (o: ForwarderOptions) {
    if (o.resolvers.length === 0) throw new Error('dnscache.forward names no resolver')
    this.resolvers = o.resolvers.map((r) => new Resolver(r))
    this.timeoutMs = o.timeoutMs
    this.maxTries = Math.min(kMaxTries, this.resolvers.length)
    // The sweep notices an expired try up to one interval late, so a try's timeout is its share
    // of the budget minus that interval: all tries together end within `timeoutMs`.
    const share = Math.floor(o.timeoutMs / this.maxTries)
    const sweepMs = Math.max(10, Math.min(50, share >> 3))
    this.tryMs = Math.max(5, share - sweepMs)
    this.probeMs = o.probeMs ?? 500
    this.rotateMs = o.rotateMs ?? 15_000
    this.poolSize = o.socketsPerResolver ?? 4
    this.io = o.io ?? 'dgram'
    this.onAnswer = o.onAnswer
    this.lastRotate = Date.now()
    this.sweeper = setInterval(() => this.sweep(), sweepMs)
    this.sweeper.unref()
  }

  static async create (o: ForwarderOptions): Promise<Forwarder> {
    const f = new Forwarder(o)
    f.logger = o.logger ?? null
    for (const r of f.resolvers) await f.fillPool(r)
    return f
  }

  // Opens the resolver's sockets. A resolver they cannot be opened for (no route to it yet, an
  // address family this host lacks) does not stop the start: it is down with no sockets, queries go
  // to the others, and the background probe opens them again every probeMs (the network may come up
  // after the DNS server does).
  private async fillPool (r: Resolver): Promise<void> {
    try {
      while (r.pool.length < this.poolSize) r.pool.push(await this.openSocket(r))
      if (r.unreachable !== '') this.logger?.info({ resolver: `${r.host}:${r.port}` }, 'dns: resolver reachable again')
      r.unreachable = ''
    } catch (err) {
      r.up = false
      const why = (err as Error).message
      if (r.unreachable !== why) this.logger?.warn({ resolver: `${r.host}:${r.port}`, err: why }, 'dns: cannot open a socket to this resolver; it stays down and is tried again in the background')
      r.unreachable = why
    }
  }

  private nextId (): number {
    if (this.idNext >= kIdBatch) {
      randomFillSync(this.ids)
      this.idNext = 0
    }
    return this.ids[this.idNext++]!   // idNext < kIdBatch
  }

  // Binds to a random port (crypto), falling back to a kernel-chosen one after a few collisions,
  // and connects to the resolver.
  private async openSocket (r: Resolver): Promise<OutSocket> {
    if (this.io === 'native') return this.openNative(r)
    for (let attempt = 0; ; attempt++) {
      const sock = createSocket(r.family === 4 ? 'udp4' : 'udp6')
      const port = attempt < 8 ? randomInt(1024, 65536) : 0
      try {
        await new Promise<void>((resolve, reject) => {
          sock.once('error', reject)
          sock.bind(port, r.family === 4 ? '0.0.0.0' : '::', () => {
            // A failed connect (no route to the resolver) comes to this callback, not as 'error'.
            sock.connect(r.port, r.host, (err?: Error | null) => {
              sock.off('error', reject)
              if (err != null) reject(Object.assign(err, { connecting: true }))
              else resolve()
            })
          })
        })
      } catch (err) {
        sock.close()
        // Another random port after a bind collision; a connect failure is the resolver's, not the port's.
        if (attempt < 8 && (err as { connecting?: boolean }).connecting !== true) continue
        throw err
      }
      const out = this.register(new OutSocket(new DgramOut(sock), ++this.serial, Date.now()))
      sock.on('message', (msg, rinfo) => this.onUdpAnswer(out, msg, rinfo.port, rinfo.address))
      // On a connected socket the kernel reports the resolver's ICMP port-unreachable as
      // ECONNREFUSED: nothing listens there, so mark it down now; its tries go on to the next
      // resolver when their share of the budget is spent.
      sock.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED') r.up = false
      })
      return out
    }
  }

  // The native twin of openSocket: one batch of answers per JS call; an ICMP error arrives as a
  // negative count (-errno) and marks the resolver down like dgram's ECONNREFUSED event. The
  // connected socket only receives the resolver's datagrams, so the source check is the port.
  private openNative (r: Resolver): OutSocket {
    const t = new NativeOut()
    const out = new OutSocket(t, ++this.serial, Date.now())
    const onBatch = (count: number): void => {
      if (count < 0) {
        if (count === -ECONNREFUSED) r.up = false
        return
      }
      const s = t.sock!   // batches only come after open returned
      for (let i = 0; i < count; i++) {
        const len = s.rxInfo[2 * i]!
        if (len < 0) continue
        const off = i * s.slot
        this.onUdpAnswer(out, s.rxBuf.subarray(off, off + len), s.rxInfo[2 * i + 1]!, r.host)
      }
    }
    for (let attempt = 0; ; attempt++) {
      const port = attempt < 8 ? randomInt(1024, 65536) : 0
      try {
        t.sock = openBatchUdpSocket({
          family: r.family,
          host: r.family === 4 ? '0.0.0.0' : '::',
          port,
          connect: { host: r.host, port: r.port },
          // Answers to a burst of forwarded queries arrive as a burst too.
          receiveBuffer: kUpstreamReceiveBuffer,
          batch: kUpstreamBatch,
          slot: kUpstreamSlot,
          onBatch
        })
        return this.register(out)
      } catch (err) {
        if (attempt < 8 && (err as { code?: string }).code === 'EADDRINUSE') continue
        throw err
      }
    }
  }

  // The first resolver that is up, never `avoid` (the one the last try went to) when there is
  // another; when none is up, the next one after `avoid` in the list (or the first). Only
  // resolvers with sockets count; null when none has any (every one unreachable).
  private pickResolver (avoid: Resolver | null): Resolver | null {
    const list = this.resolvers
    for (const r of list) if (r.up && r !== avoid && r.pool.length > 0) return r
    const start = avoid === null ? 0 : list.indexOf(avoid) + 1
    for (let i = 0; i < list.length; i++) {
      const r = list[(start + i) % list.length]!
      if (r.pool.length > 0) return r
    }
    return null
  }

  private enqueue (p: PendingQuery, expires: number): void {
    if (++this.trySerial > 0x3fffffff) this.trySerial = 1
    p.trySerial = this.trySerial
    this.queueKey.push(p.key)
    this.queueSerial.push(p.trySerial)
    this.queueExpires.push(expires)
  }

  /** Sends `p.query` upstream over UDP; `p.clientId` must be set. */
  forwardUdp (p: PendingQuery): void {
    const now = Date.now()
    p.deadline = now + this.timeoutMs
    p.viaTcp = false
    const r = this.pickResolver(null)
    if (r === null) this.finish(p, null)
    else this.sendUdp(p, r, now)
  }

  private sendUdp (p: PendingQuery, r: Resolver, now: number): void {
    const pool = r.pool
    let out = pool[this.turn % pool.length]!   // every resolver's pool is non-empty
    // dgram: the next socket for every query. Native: the queries of one batch stay on one socket
    // until it is flushed, so they leave in one sendmmsg (and their answers come back in one
    // batch); the next batch takes the next socket. IDs stay random per query either way.
    if (!out.sock.batching()) {
      this.turn++
      if (this.turn >= 0x3fffffff) this.turn = 0
      out = pool[this.turn % pool.length]!
    }
    let id = -1
    for (let tries = 0; tries < 16 && id < 0; tries++) {
      const candidate = this.nextId()
      if (out.waiting[candidate] === undefined) id = candidate
    }
    if (id < 0) { this.finish(p, null); return }   // 16 ID collisions: the socket is saturated
    setId(p.query, id)
    p.key = out.serial * 65536 + id
    p.resolver = r
    p.out = out
    p.tries++
    out.pending++
    out.waiting[id] = p
    this.enqueue(p, now + this.tryMs)
    out.sock.send(p.query)
  }

  private onUdpAnswer (out: OutSocket, msg: Buffer, fromPort: number, fromAddress: string): void {
    const id = readId(msg)
    if (id < 0) return
    const p = out.waiting[id]
    const r = p?.resolver
    if (p === undefined || r == null || fromPort !== r.port || fromAddress !== r.host || !this.matches(p, msg)) {
      return
    }
    out.waiting[id] = undefined
    out.pending--
    if (p.streamClient && (msg[2]! & 0x02) !== 0) {
      // TC: the answer does not fit a datagram, and this client can take it over TCP.
      p.viaTcp = true
      this.sendTcp(p, r)
      return
    }
    this.finish(p, msg)
  }

  // The answer's question must be the one we asked (RFC 5452 §9.1). The query was validated
  // when it arrived, so re-reading it cannot fail; it costs about 0.15 µs.
  private matches (p: PendingQuery, response: Buffer): boolean {
    return readQuery(p.query, this.scratch) === QUERY_OK && questionMatches(response, this.scratch)
  }

  private finish (p: PendingQuery, response: Buffer | null): void {
    p.done = true
    const r = p.resolver
    if (response !== null && r !== null) r.up = true
    if (p.probe) {
      if (r !== null) r.probing = false
      return
    }
    if (response !== null) {
      setId(response, p.clientId)
    }
    this.onAnswer(p, response)
  }

  // A try failed (no answer in its share, or refused): the resolver is down; send the query
  // again to the next resolver while the client's budget allows another full share, else fail.
  private retryOrFail (p: PendingQuery, now: number): void {
    const r = p.resolver
    if (r !== null) r.up = false
    if (p.probe || p.tries >= this.maxTries || now + (this.tryMs >> 1) > p.deadline) {
      this.finish(p, null)
      return
    }
    const next = this.pickResolver(r)
    if (next === null) this.finish(p, null)
    else if (p.viaTcp) this.sendTcp(p, next)
    else this.sendUdp(p, next, now)
  }

  /**
   * A TCP client's query: asked over UDP like any other, and again over TCP (one connection per
   * try) only when the answer comes back truncated, as a recursive resolver forwarding does. A
   * connection per query would make every pipelined TCP client query a TCP handshake with the
   * operator's resolver: slow for us, and a way for one client to open connections by the
   * thousand. A try that times out goes to the next resolver on the transport it was on.
   */
  forwardTcp (p: PendingQuery): void {
    p.streamClient = true
    this.forwardUdp(p)
  }

  private sendTcp (p: PendingQuery, r: Resolver): void {
    const now = Date.now()
    setId(p.query, this.nextId())
    p.resolver = r
    p.tries++
    const attempt = p.tries
    if (--this.tcpKey < -0x3fffffff) this.tcpKey = -1
    p.key = this.tcpKey
    this.tcpByKey.set(p.key, p)
    this.enqueue(p, now + this.tryMs)
    const sock = connect({ host: r.host, port: r.port, family: r.family })
    p.tcp = sock
    const reader = new FrameReader()
    sock.setNoDelay(true)
    sock.on('connect', () => sock.write(frame(p.query)))
    sock.on('data', (chunk: Buffer) => {
      reader.push(chunk)
      for (let m = reader.read(); m !== null; m = reader.read()) {
        if (p.done || p.tries !== attempt || readId(m) !== readId(p.query) || !this.matches(p, m)) continue
        this.tcpByKey.delete(p.key)
        sock.destroy()
        this.finish(p, m)
        return
      }
    })
    const fail = (): void => {
      if (p.done || p.tries !== attempt) return
      this.tcpByKey.delete(p.key)
      sock.destroy()
      // A refused or reset connection counts as an unanswered try: on to the next resolver now.
      this.retryOrFail(p, Date.now())
    }
    sock.on('error', fail)
    sock.on('close', fail)
  }

  private sweep (): void {
    const now = Date.now()
    const qk = this.queueKey
    const qs = this.queueSerial
    const qe = this.queueExpires
    while (this.head < qk.length) {
      const i = this.head
      const key = qk[i]!   // head < length
      const p = key < 0 ? this.tcpByKey.get(key) : this.bySerial.get(Math.floor(key / 65536))?.waiting[key % 65536]
      const stale = p === undefined || p.done || p.trySerial !== qs[i]
      if (!stale && qe[i]! > now) break
      this.head++
      if (stale) continue
      if (key < 0) {
        this.tcpByKey.delete(key)
        const sock = p.tcp
        p.tcp = null
        sock?.destroy()
      } else if (p.out !== null) {
        p.out.waiting[key % 65536] = undefined
        p.out.pending--
      }
      this.retryOrFail(p, now)
    }
    if (this.head > 1024 && this.head * 2 > qk.length) {
      this.queueKey = qk.slice(this.head)
      this.queueSerial = qs.slice(this.head)
      this.queueExpires = qe.slice(this.head)
      this.head = 0
    }
    if (now - this.lastProbe >= this.probeMs) {
      this.lastProbe = now
      this.probe(now)
    }
    if (now - this.lastRotate >= this.rotateMs) {
      this.lastRotate = now
      this.rotate()
    }
    for (const r of this.resolvers) {
      for (const s of r.retired) {
        if (s.pending <= 0 || now - s.born > this.rotateMs * 16) {
          r.retired.delete(s)
          this.bySerial.delete(s.serial)
          s.sock.close()
        }
      }
    }
  }

  private register (out: OutSocket): OutSocket {
    this.bySerial.set(out.serial, out)
    return out
  }

  // One probe at a time per down resolver, over UDP, answered (any RCODE) or timed out after a try's share.
  private probe (now: number): void {
    for (const r of this.resolvers) {
      if (r.pool.length === 0) {
        if (!r.opening && !this.closed) {
          r.opening = true
          void this.fillPool(r).finally(() => { r.opening = false })
        }
        continue
      }
      if (r.up || r.probing) continue
      r.probing = true
      const p = new PendingQuery(Buffer.from(kProbeQuery))
      p.probe = true
      p.deadline = now + this.tryMs
      this.sendUdp(p, r, now)
    }
  }

  // Replaces the oldest socket of each pool by one on a new random port.
  private rotate (): void {
    for (const r of this.resolvers) {
      const pool = r.pool
      if (pool.length === 0) continue   // unreachable: the probe opens its sockets again
      this.openSocket(r).then((fresh) => {
        if (this.closed) { this.bySerial.delete(fresh.serial); fresh.sock.close(); return }
        let oldest = 0
        for (let i = 1; i < pool.length; i++) if (pool[i]!.born < pool[oldest]!.born) oldest = i
        const old = pool[oldest]!
        pool[oldest] = fresh
        old.retired = true
        r.retired.add(old)
      }, () => {})
    }
  }

  // reconfigure: merged with h29up
  /**
   * Replaces the resolver list (a config reload of `dnscache.forward`): a resolver kept keeps its
   * sockets and state; a new one gets its pool; a removed one's sockets close once its tries in
   * flight have timed out (they fail over to the new list like any timeout).
   */
  async reconfigure (addresses: readonly ResolverAddress[]): Promise<void> {
    if (addresses.length === 0) throw new Error('dnscache.forward names no resolver')
    const name = (a: ResolverAddress): string => `${a.host}|${a.port}`
    const old = new Map(this.resolvers.map((r) => [name(r), r]))
    const next = addresses.map((a) => old.get(name(a)) ?? new Resolver(a))
    for (const r of next) if (!old.has(name(r))) await this.fillPool(r)
    for (const r of this.resolvers) {
      if (next.includes(r)) continue
      const socks = [...r.pool, ...r.retired]
      r.pool.length = 0
      r.retired.clear()
      setTimeout(() => { for (const s of socks) { this.bySerial.delete(s.serial); s.sock.close() } }, this.timeoutMs).unref()
    }
    this.resolvers.splice(0, this.resolvers.length, ...next)
    this.maxTries = Math.min(kMaxTries, next.length)
    this.tryMs = Math.max(5, Math.floor(this.timeoutMs / this.maxTries) - Math.max(10, Math.min(50, Math.floor(this.timeoutMs / this.maxTries) >> 3)))
  }

  /** Fails every waiting query (onAnswer with null) and closes the sockets. */
  close (): void {
    if (this.closed) return
    this.closed = true
    clearInterval(this.sweeper)
    const waiting = [...this.tcpByKey.values()]
    for (const out of this.bySerial.values()) for (const p of out.waiting) if (p !== undefined) waiting.push(p)
    this.bySerial.clear()
    this.tcpByKey.clear()
    for (const p of waiting) {
      if (p.done) continue
      p.tcp?.destroy()
      this.finish(p, null)
    }
    this.queueKey = []
    this.queueSerial = []
    this.queueExpires = []
    for (const r of this.resolvers) {
      for (const s of r.pool) s.sock.close()
      for (const s of r.retired) s.sock.close()
      r.pool.length = 0
      r.retired.clear()
    }
  }
}
