/*
 * The UDP front on the native batched I/O (engine/udp, `proxy.io: native`): one socket per
 * `proxy.listen` address and front process, bound with SO_REUSEPORT, so every front process of
 * `proxy.processes` has its own socket and the kernel spreads datagrams across them. One JS call
 * per batch of up to BATCH datagrams; each query is a view into the receive area (copied only
 * when it must outlive the batch: forwarding, the pool), and answers are copied into send slots
 * that leave in one sendmmsg after the batch.
 */
import { formatIPv6, parseIPv4Into, parseIPv6Into } from '../engine/wire/index.js'
import { openBatchUdpSocket, type BatchUdpSocket } from '../engine/udp/index.js'
import { Peer, type PeerChannel } from './peer.js'
import { Ipv4Names } from './ipv4-names.js'
import type { QueryHandler } from './udp-front.js'

/** What the front tells the dispatcher besides each query. */
export interface BatchSink {
  readonly submit: QueryHandler
  /** Every query of the batch was submitted; the receive area is about to be reused. */
  endBatch(): void
}

export interface NativeUdpFrontOptions {
  /** Bytes of kernel receive buffer (0 or absent: the kernel default). */
  readonly receiveBuffer?: number
  /** The front processes sharing the port, when each client address is to reach one of them (`proxy.udp-steering: address`). */
  readonly steerSockets?: number
  /** Steer by the query's EDNS Client Subnet address when it has one (`proxy.client-subnet`). */
  readonly steerClientSubnet?: boolean
}

/** Datagrams per recvmmsg/sendmmsg. */
export const BATCH = 64
/** Receive slot: a larger query is dropped (as the TCP front's 4096-byte frame cap). */
export const QUERY_SLOT = 4096
export class NativeUdpFront implements PeerChannel {
  readonly isStream = false
  readonly port: number
  /** The receive buffer the kernel granted, in bytes. */
  readonly receiveBufferSize: number
  /** Each client address reaches one front process (`proxy.udp-steering: address`). */
  readonly steered: boolean
  /** Datagrams larger than a slot, dropped (in the DNS metrics: `filterd_dns_udp_oversized_total`). */
  oversized = 0
  private readonly sock: BatchUdpSocket
  private readonly onQuery: QueryHandler
  private readonly sink: BatchSink
  private readonly names = new Ipv4Names()
  private readonly addrScratch = Buffer.alloc(16)

  private constructor(host: string, port: number, family: 4 | 6, sink: BatchSink, o: NativeUdpFrontOptions) {
    this.sink = sink
    // Steering needs the shared port, and a group of more than one process.
    this.steered = port !== 0 && (o.steerSockets ?? 0) >= 2
    this.onQuery = sink.submit
    this.sock = openBatchUdpSocket({
      family,
      host,
      port,
      // Only a configured port is shared by the front processes. On a free port (0) SO_REUSEPORT
      // would let the kernel hand out a port another reuse-port socket of this user already holds
      // (seen here: about 1 in 70 binds with 1,000 sockets open), so two servers would split each
      // other's queries.
      reusePort: port !== 0,
      steerSockets: this.steered ? o.steerSockets : 0,
      steerClientSubnet: o.steerClientSubnet ?? false,
      receiveBuffer: o.receiveBuffer ?? 0,
      batch: BATCH,
      slot: QUERY_SLOT,
      onBatch: this.onBatch
    })
    this.port = this.sock.port
    this.receiveBufferSize = this.sock.receiveBufferSize
  }

  /** Binds `host:port` with SO_REUSEPORT (0: a free port of its own, not shared); throws the bind error. */
  static bind(
    host: string,
    port: number,
    family: 4 | 6,
    sink: BatchSink,
    o: NativeUdpFrontOptions = {}
  ): NativeUdpFront {
    return new NativeUdpFront(host, port, family, sink, o)
  }

  /** Datagrams the kernel did not take, send queue full (in the DNS metrics: `filterd_dns_udp_send_drops_total`). */
  get sendDrops(): number {
    return this.sock.sendDrops
  }

  private readonly onBatch = (count: number): void => {
    // A listener's socket error (an ICMP error for an answer we sent) concerns nobody waiting.
    if (count <= 0) return
    const s = this.sock
    const info = s.rxInfo
    const addr = s.rxAddr
    const slot = s.slot
    const v4 = s.family === 4
    for (let i = 0; i < count; i++) {
      const len = info[2 * i]!
      if (len < 0) {
        this.oversized++
        continue
      }
      const off = i * slot
      const msg = s.rxBuf.subarray(off, off + len)
      let peer: Peer
      if (v4) {
        const a = 16 * i
        const ip4 = ((addr[a]! << 24) | (addr[a + 1]! << 16) | (addr[a + 2]! << 8) | addr[a + 3]!) >>> 0
        peer = new Peer(this, this.names.nameOf(ip4), info[2 * i + 1]!, ip4)
      } else {
        peer = new Peer(this, formatIPv6(Buffer.from(addr.buffer, addr.byteOffset + 16 * i, 16), 0), info[2 * i + 1]!)
      }
      this.onQuery(msg, peer)
    }
    this.sink.endBatch()
  }

  send(peer: Peer, buf: Buffer, len: number, _copy: boolean): void {
    const s = this.sock
    if (len > s.slot) {
      s.sendOne(buf, len, this.addressBytes(peer), peer.port)
      return
    }
    const off = s.nextSlot()
    buf.copy(s.txBuf, off, 0, len)
    const a = 16 * s.txCount
    if (peer.ip4 >= 0) {
      const ip4 = peer.ip4
      s.txAddr[a] = ip4 >>> 24
      s.txAddr[a + 1] = (ip4 >>> 16) & 255
      s.txAddr[a + 2] = (ip4 >>> 8) & 255
      s.txAddr[a + 3] = ip4 & 255
    } else {
      s.txAddr.set(this.addressBytes(peer), a)
    }
    s.commit(len, peer.port)
  }

  private addressBytes(peer: Peer): Buffer {
    const b = this.addrScratch
    if (peer.ip4 >= 0) b.writeUInt32BE(peer.ip4, 0)
    else if (!parseIPv6Into(peer.address, b, 0)) parseIPv4Into(peer.address, b, 0)
    return b
  }

  skip(_peer: Peer): void {}

  // The query lives in the receive area, which the next batch overwrites.
  own(msg: Buffer): Buffer {
    return Buffer.from(msg)
  }

  close(): void {
    this.sock.close()
  }
}
