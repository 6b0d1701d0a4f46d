/*
 * The upstream UDP sockets and their pending table (RFC 5452 defences, see ../upstream.ts).
 *
 * Each resolver has a pool of sockets bound to random ports and connected to it, so the kernel
 * drops datagrams from any other source and caches the route. Every socket has its table of
 * waiting tries by ID (65536 slots), and every open socket is registered by serial, so a try's key
 * (serial × 65536 + ID) finds it again. IDs come from `crypto`, drawn from a pre-filled buffer
 * (no syscall on the hot path). One socket of each pool is replaced every `rotateMs`; the retired
 * one stays open until its tries are answered or timed out.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { randomFillSync, randomInt } from 'node:crypto'
import { ECONNREFUSED, openBatchUdpSocket, type BatchUdpSocket } from '../../engine/udp/index.js'
import { setId } from '../../engine/wire/index.js'
import type { PendingQuery } from './pending.js'
import type { HealthLogger, Resolver } from './resolver.js'

/** One connected upstream socket: node:dgram, or the native batched I/O (`proxy.io`). */
interface OutTransport {
  /** Queries sent since the last flush are still waiting to leave together (native batches). */
  batching(): boolean
  send(query: Buffer): void
  close(): void
}

class DgramOut implements OutTransport {
  readonly sock: UdpSocket
  constructor(sock: UdpSocket) {
    this.sock = sock
  }
  batching(): boolean {
    return false
  }
  send(query: Buffer): void {
    this.sock.send(query)
  }
  close(): void {
    this.sock.close()
  }
}

class NativeOut implements OutTransport {
  sock: BatchUdpSocket | null = null
  batching(): boolean {
    return this.sock!.txCount > 0
  }
  send(query: Buffer): void {
    const s = this.sock! // set right after opening
    if (query.length > s.slot) {
      s.sendOne(query, query.length, null, 0)
      return
    }
    query.copy(s.txBuf, s.nextSlot())
    s.commit(query.length, 0)
  }

  close(): void {
    this.sock?.close()
  }
}

export class OutSocket {
  readonly sock: OutTransport
  readonly serial: number
  readonly born: number
  pending = 0
  /**
   * The try waiting for an answer with each ID, by ID: an answer finds its query with one index,
   * where a Map keyed by socket and ID cost a hash, an entry and its deletion per query.
   */
  readonly waiting = new Array<PendingQuery | undefined>(65536)
  constructor(sock: OutTransport, serial: number, born: number) {
    this.sock = sock
    this.serial = serial
    this.born = born
  }
}

/** Answers per recvmmsg on a native upstream socket. */
const UPSTREAM_BATCH = 32
/** A UDP answer can be as large as the client's EDNS size allows: the slot takes the largest. */
const UPSTREAM_SLOT = 65536
/** SO_RCVBUF of each upstream socket (the kernel caps it at net.core.rmem_max). */
const UPSTREAM_RECEIVE_BUFFER = 4 << 20
const ID_BATCH = 4096
/** Random ports tried before the kernel picks one. */
const PORT_ATTEMPTS = 8

export interface SocketPoolOptions {
  io: 'native' | 'dgram'
  /** UDP sockets per resolver. */
  size: number
  /** A datagram on `out` (from `fromAddress`:`fromPort`); the pool has not looked inside. */
  onDatagram: (out: OutSocket, msg: Buffer, fromPort: number, fromAddress: string) => void
  /** The kernel reported the resolver's ICMP port unreachable on one of its sockets. */
  onUnreachable: (r: Resolver) => void
  logger: HealthLogger | null
}

export class SocketPool {
  /** Every open upstream socket by serial. */
  private readonly bySerial = new Map<number, OutSocket>()
  private readonly ids = new Uint16Array(ID_BATCH)
  private idNext = ID_BATCH
  private turn = 0
  private serial = 0
  private readonly o: SocketPoolOptions

  constructor(o: SocketPoolOptions) {
    this.o = o
  }

  /** The socket a UDP try's key names (undefined once it closed). */
  socket(key: number): OutSocket | undefined {
    return this.bySerial.get(Math.floor(key / 65536))
  }

  // Opens the resolver's sockets. A resolver they cannot be opened for (no route to it yet, an
  // address family this host lacks) does not stop the start: it is down with no sockets, queries go
  // to the others, and the background probe calls this again (the network may come up after the
  // DNS server does).
  async fill(r: Resolver): Promise<void> {
    const log = this.o.logger
    try {
      while (r.pool.length < this.o.size) r.pool.push(await this.open(r))
      if (r.unreachable !== '') log?.info({ resolver: r.label }, 'dns: resolver reachable again')
      r.unreachable = ''
    } catch (err) {
      const why = (err as Error).message
      // One line: this warning is also the resolver's down line.
      if (r.unreachable !== why)
        log?.warn(
          { resolver: r.label, state: 'down', why: `cannot open a socket to it: ${why}`, err: why },
          'dns: cannot open a socket to this resolver; it stays down and is tried again in the background'
        )
      r.down(`cannot open a socket to it: ${why}`, true)
      r.unreachable = why
    }
  }

  nextId(): number {
    if (this.idNext >= ID_BATCH) {
      randomFillSync(this.ids)
      this.idNext = 0
    }
    return this.ids[this.idNext++]! // idNext < ID_BATCH
  }

  /**
   * Puts `p`'s next try on one of `r`'s sockets with a fresh random ID (written into `p.query`)
   * and sends it. False when no free ID was found (the socket is saturated).
   */
  send(p: PendingQuery, r: Resolver): boolean {
    const pool = r.pool
    let out = pool[this.turn % pool.length]! // the caller picks a resolver with sockets
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
    if (id < 0) return false
    setId(p.query, id)
    p.key = out.serial * 65536 + id
    p.out = out
    out.pending++
    out.waiting[id] = p
    out.sock.send(p.query)
    return true
  }

  /** Takes `p` out of its socket's table (its try was answered or expired). */
  release(p: PendingQuery): void {
    const out = p.out
    if (out === null || p.key < 0) return
    const id = p.key % 65536
    // Its slot may be another query's already (a withdrawn query whose try had been answered).
    if (out.waiting[id] !== p) return
    out.waiting[id] = undefined
    out.pending--
  }

  // Binds to a random port (crypto), falling back to a kernel-chosen one after a few collisions,
  // and connects to the resolver.
  private async open(r: Resolver): Promise<OutSocket> {
    if (this.o.io === 'native') return this.openNative(r)
    for (let attempt = 0; ; attempt++) {
      const sock = createSocket(r.family === 4 ? 'udp4' : 'udp6')
      const port = attempt < PORT_ATTEMPTS ? randomInt(1024, 65536) : 0
      try {
        await bindAndConnect(sock, port, r)
      } catch (err) {
        sock.close()
        // Another random port after a bind collision; a connect failure is the resolver's, not the port's.
        if (attempt < PORT_ATTEMPTS && (err as { connecting?: boolean }).connecting !== true) continue
        throw err
      }
      const out = this.register(new OutSocket(new DgramOut(sock), ++this.serial, Date.now()))
      sock.on('message', (msg, rinfo) => this.o.onDatagram(out, msg, rinfo.port, rinfo.address))
      // On a connected socket the kernel reports the resolver's ICMP port-unreachable as
      // ECONNREFUSED: nothing listens there.
      sock.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED') this.o.onUnreachable(r)
      })
      return out
    }
  }

  // The native twin of open: one batch of answers per JS call; an ICMP error arrives as a negative
  // count (-errno). The connected socket only receives the resolver's datagrams, so the source
  // check is the port.
  private openNative(r: Resolver): OutSocket {
    const t = new NativeOut()
    const out = new OutSocket(t, ++this.serial, Date.now())
    const onBatch = (count: number): void => {
      if (count < 0) {
        if (count === -ECONNREFUSED) this.o.onUnreachable(r)
        return
      }
      const s = t.sock! // batches only come after open returned
      for (let i = 0; i < count; i++) {
        const len = s.rxInfo[2 * i]!
        if (len < 0) continue
        const off = i * s.slot
        this.o.onDatagram(out, s.rxBuf.subarray(off, off + len), s.rxInfo[2 * i + 1]!, r.host)
      }
    }
    for (let attempt = 0; ; attempt++) {
      const port = attempt < PORT_ATTEMPTS ? randomInt(1024, 65536) : 0
      try {
        t.sock = openBatchUdpSocket({
          family: r.family,
          host: r.family === 4 ? '0.0.0.0' : '::',
          port,
          connect: { host: r.host, port: r.port },
          // Answers to a burst of forwarded queries arrive as a burst too.
          receiveBuffer: UPSTREAM_RECEIVE_BUFFER,
          batch: UPSTREAM_BATCH,
          slot: UPSTREAM_SLOT,
          onBatch
        })
        return this.register(out)
      } catch (err) {
        if (attempt < PORT_ATTEMPTS && (err as { code?: string }).code === 'EADDRINUSE') continue
        throw err
      }
    }
  }

  private register(out: OutSocket): OutSocket {
    this.bySerial.set(out.serial, out)
    return out
  }

  private drop(out: OutSocket): void {
    this.bySerial.delete(out.serial)
    out.sock.close()
  }

  /** Replaces the oldest socket of `r`'s pool by one on a new random port. */
  rotate(r: Resolver, isClosed: () => boolean): void {
    const pool = r.pool
    if (pool.length === 0) return // unreachable: the probe opens its sockets again
    this.open(r).then(
      (fresh) => {
        if (isClosed() || r.removed) {
          this.drop(fresh)
          return
        }
        let oldest = 0
        for (let i = 1; i < pool.length; i++) if (pool[i]!.born < pool[oldest]!.born) oldest = i
        r.retired.add(pool[oldest]!)
        pool[oldest] = fresh
      },
      () => {}
    )
  }

  /** Retires every socket of `r` (taken out of the list): each closes once its tries are done. */
  retireAll(r: Resolver): void {
    for (const s of r.pool) r.retired.add(s)
    r.pool.length = 0
  }

  /** Closes `r`'s retired sockets whose tries are all done (or that are very old). */
  reap(r: Resolver, now: number, maxAgeMs: number): void {
    for (const s of r.retired) {
      if (s.pending <= 0 || now - s.born > maxAgeMs) {
        r.retired.delete(s)
        this.drop(s)
      }
    }
  }

  /** Every try still waiting on a socket. */
  waiting(): PendingQuery[] {
    const out: PendingQuery[] = []
    for (const s of this.bySerial.values()) for (const p of s.waiting) if (p !== undefined) out.push(p)
    return out
  }

  /** Closes every socket. */
  close(resolvers: Iterable<Resolver>): void {
    for (const r of resolvers) {
      r.pool.length = 0
      r.retired.clear()
    }
    for (const s of this.bySerial.values()) s.sock.close()
    this.bySerial.clear()
  }
}

async function bindAndConnect(sock: UdpSocket, port: number, r: Resolver): Promise<void> {
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
}
