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
 * Timeouts: every query waits `timeoutMs` at most. Queries are queued in sending order and all
 * share one timeout, so one coarse sweep timer pops the expired ones from the head of the queue:
 * no timer per query. A resolver that let a query time out is marked down for `downMs`; later
 * queries go to the next resolver in order that is up (failover), and back once the time passed.
 *
 * TCP clients are forwarded over TCP, one short connection per query (TCP is the rare path:
 * truncated answers, zone-sized records), framed as RFC 7766 says.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { connect, type Socket as TcpSocket } from 'node:net'
import { randomFillSync, randomInt } from 'node:crypto'
import type { Peer } from './peer.js'
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
  downUntil = 0
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
  key = -1
  expires = 0
  done = false
  resolver: Resolver | null = null
  out: OutSocket | null = null
  tcp: TcpSocket | null = null
  constructor (query: Buffer) {
    this.query = query
  }
}

export interface ForwarderOptions {
  resolvers: readonly ResolverAddress[]
  timeoutMs: number
  /** Called once per query: the upstream answer with the client's ID restored, or null on timeout/failure. */
  onAnswer: (p: PendingQuery, response: Buffer | null) => void
  /** UDP sockets per resolver. */
  socketsPerResolver?: number
  rotateMs?: number
  downMs?: number
  /** UDP I/O: node:dgram (default) or the native batched addon (engine/udp). */
  io?: 'native' | 'dgram'
}

const kIdBatch = 4096

export class Forwarder {
  private readonly resolvers: Resolver[]
  private readonly timeoutMs: number
  private readonly downMs: number
  private readonly rotateMs: number
  private readonly poolSize: number
  private readonly io: 'native' | 'dgram'
  private readonly onAnswer: (p: PendingQuery, response: Buffer | null) => void
  private readonly byKey = new Map<number, PendingQuery>()
  private queue: PendingQuery[] = []
  private head = 0
  private readonly tcpPending = new Set<PendingQuery>()
  private readonly ids = new Uint16Array(kIdBatch)
  private idNext = kIdBatch
  private turn = 0
  private serial = 0
  private lastRotate = 0
  private readonly sweeper: NodeJS.Timeout
  private readonly scratch = new QueryScratch()
  private closed = false
  /** Counters (SMI range): answers relayed, timeouts, answers dropped as unmatched. */
  readonly counters = { answered: 0, timeouts: 0, unmatched: 0 }

  private constructor (o: ForwarderOptions) {
    if (o.resolvers.length === 0) throw new Error('dnscache.forward names no resolver')
    this.resolvers = o.resolvers.map((r) => new Resolver(r))
    this.timeoutMs = o.timeoutMs
    this.downMs = o.downMs ?? Math.max(5000, 2 * o.timeoutMs)
    this.rotateMs = o.rotateMs ?? 15_000
    this.poolSize = o.socketsPerResolver ?? 4
    this.io = o.io ?? 'dgram'
    this.onAnswer = o.onAnswer
    this.lastRotate = Date.now()
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(100, o.timeoutMs >> 2)))
    this.sweeper.unref()
  }

  static async create (o: ForwarderOptions): Promise<Forwarder> {
    const f = new Forwarder(o)
    for (const r of f.resolvers) {
      for (let i = 0; i < f.poolSize; i++) r.pool.push(await f.openSocket(r))
    }
    return f
  }

  /** Queries waiting for an answer. */
  get pendingCount (): number {
    return this.byKey.size + this.tcpPending.size
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
            sock.connect(r.port, r.host, () => { sock.off('error', reject); resolve() })
          })
        })
      } catch (err) {
        sock.close()
        if (attempt < 8) continue
        throw err
      }
      const out = new OutSocket(new DgramOut(sock), ++this.serial, Date.now())
      sock.on('message', (msg, rinfo) => this.onUdpAnswer(out, msg, rinfo.port, rinfo.address))
      // On a connected socket the kernel reports the resolver's ICMP port-unreachable as
      // ECONNREFUSED: nothing listens there, so fail over now rather than after a timeout.
      sock.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED') r.downUntil = Date.now() + this.downMs
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
        if (count === -ECONNREFUSED) r.downUntil = Date.now() + this.downMs
        return
      }
      const s = t.sock!   // batches only come after open returned
      for (let i = 0; i < count; i++) {
        const len = s.rxInfo[2 * i]!
        if (len < 0) { this.counters.unmatched++; continue }
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
          batch: kUpstreamBatch,
          slot: kUpstreamSlot,
          onBatch
        })
        return out
      } catch (err) {
        if (attempt < 8 && (err as { code?: string }).code === 'EADDRINUSE') continue
        throw err
      }
    }
  }

  private pickResolver (now: number): Resolver {
    let best: Resolver | null = null
    for (const r of this.resolvers) {
      if (r.downUntil <= now) return r
      if (best === null || r.downUntil < best.downUntil) best = r
    }
    return best!   // resolvers is non-empty
  }

  /** Sends `p.query` upstream over UDP; `p.clientId` must be set. */
  forwardUdp (p: PendingQuery): void {
    const now = Date.now()
    const r = this.pickResolver(now)
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
    let key = -1
    for (let tries = 0; tries < 16; tries++) {
      const id = this.nextId()
      const k = out.serial * 65536 + id
      if (!this.byKey.has(k)) { key = k; setId(p.query, id); break }
    }
    if (key < 0) { this.onAnswer(p, null); return }   // 16 ID collisions: the socket is saturated
    p.key = key
    p.resolver = r
    p.out = out
    p.expires = now + this.timeoutMs
    out.pending++
    this.byKey.set(key, p)
    this.queue.push(p)
    out.sock.send(p.query)
  }

  private onUdpAnswer (out: OutSocket, msg: Buffer, fromPort: number, fromAddress: string): void {
    const id = readId(msg)
    if (id < 0) return
    const p = this.byKey.get(out.serial * 65536 + id)
    const r = p?.resolver
    if (p === undefined || r == null || fromPort !== r.port || fromAddress !== r.host || !this.matches(p, msg)) {
      this.counters.unmatched++
      return
    }
    this.byKey.delete(p.key)
    out.pending--
    this.finish(p, msg)
  }

  // The answer's question must be the one we asked (RFC 5452 §9.1). The query was validated
  // when it arrived, so re-reading it cannot fail; it costs about 0.15 µs.
  private matches (p: PendingQuery, response: Buffer): boolean {
    return readQuery(p.query, this.scratch) === QUERY_OK && questionMatches(response, this.scratch)
  }

  private finish (p: PendingQuery, response: Buffer | null): void {
    p.done = true
    if (response !== null) {
      const r = p.resolver
      if (r !== null) r.downUntil = 0
      setId(response, p.clientId)
      this.counters.answered++
    }
    this.onAnswer(p, response)
  }

  /** Sends `p.query` upstream over TCP (one connection per query). */
  forwardTcp (p: PendingQuery): void {
    const now = Date.now()
    const r = this.pickResolver(now)
    setId(p.query, this.nextId())
    p.resolver = r
    p.expires = now + this.timeoutMs
    this.tcpPending.add(p)
    this.queue.push(p)
    const sock = connect({ host: r.host, port: r.port, family: r.family })
    p.tcp = sock
    const reader = new FrameReader()
    sock.setNoDelay(true)
    sock.on('connect', () => sock.write(frame(p.query)))
    sock.on('data', (chunk: Buffer) => {
      reader.push(chunk)
      for (let m = reader.read(); m !== null; m = reader.read()) {
        if (p.done || readId(m) !== readId(p.query) || !this.matches(p, m)) continue
        this.tcpPending.delete(p)
        sock.destroy()
        this.finish(p, m)
        return
      }
    })
    const fail = (): void => {
      if (p.done) return
      this.tcpPending.delete(p)
      // A refused or reset connection counts as an unanswered query: fail over, answer SERVFAIL.
      r.downUntil = Date.now() + this.downMs
      this.finish(p, null)
    }
    sock.on('error', fail)
    sock.on('close', fail)
  }

  private sweep (): void {
    const now = Date.now()
    const q = this.queue
    while (this.head < q.length) {
      const p = q[this.head]!   // head < length
      if (!p.done && p.expires > now) break
      this.head++
      if (p.done) continue
      this.counters.timeouts++
      if (p.resolver !== null) p.resolver.downUntil = now + this.downMs
      if (p.tcp !== null) {
        this.tcpPending.delete(p)
        p.tcp.destroy()
      } else {
        this.byKey.delete(p.key)
        if (p.out !== null) p.out.pending--
      }
      this.finish(p, null)
    }
    if (this.head > 1024 && this.head * 2 > q.length) {
      this.queue = q.slice(this.head)
      this.head = 0
    }
    if (now - this.lastRotate >= this.rotateMs) {
      this.lastRotate = now
      this.rotate()
    }
    for (const r of this.resolvers) {
      for (const s of r.retired) {
        if (s.pending <= 0 || now - s.born > this.rotateMs * 16) {
          r.retired.delete(s)
          s.sock.close()
        }
      }
    }
  }

  // Replaces the oldest socket of each pool by one on a new random port.
  private rotate (): void {
    for (const r of this.resolvers) {
      const pool = r.pool
      this.openSocket(r).then((fresh) => {
        if (this.closed) { fresh.sock.close(); return }
        let oldest = 0
        for (let i = 1; i < pool.length; i++) if (pool[i]!.born < pool[oldest]!.born) oldest = i
        const old = pool[oldest]!
        pool[oldest] = fresh
        old.retired = true
        r.retired.add(old)
      }, () => {})
    }
  }

  /** Fails every waiting query (onAnswer with null) and closes the sockets. */
  close (): void {
    if (this.closed) return
    this.closed = true
    clearInterval(this.sweeper)
    for (let i = this.head; i < this.queue.length; i++) {
      const p = this.queue[i]!
      if (p.done) continue
      p.tcp?.destroy()
      this.finish(p, null)
    }
    this.queue = []
    this.byKey.clear()
    this.tcpPending.clear()
    for (const r of this.resolvers) {
      for (const s of r.pool) s.sock.close()
      for (const s of r.retired) s.sock.close()
      r.pool.length = 0
      r.retired.clear()
    }
  }
}
