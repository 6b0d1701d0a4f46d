/*
 * The UDP front on node:dgram: one socket per `proxy.listen` address. Every datagram goes to the
 * dispatcher synchronously with a Peer naming the socket, the client's address and port.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram'
import { once } from 'node:events'
import type { Logger } from '../engine/log/index.js'
import { Peer, type PeerChannel } from './peer.js'

export type QueryHandler = (msg: Buffer, peer: Peer) => void

export class UdpFront implements PeerChannel {
  readonly isStream = false
  readonly port: number
  private readonly socket: Socket
  private closed = false

  private constructor(socket: Socket) {
    this.socket = socket
    this.port = socket.address().port
  }

  /** The receive buffer as the kernel set it (bytes). */
  get receiveBufferSize(): number {
    try {
      return this.socket.getRecvBufferSize()
    } catch {
      return 0
    }
  }

  /**
   * Binds `host:port` (0: a free port) with a receive buffer of `receiveBuffer` bytes (0: the
   * kernel's default, about 208 KiB, which a burst of a few hundred packets overflows; Linux caps
   * the request at net.core.rmem_max); throws the bind error.
   */
  static async bind(
    host: string,
    port: number,
    family: 4 | 6,
    onQuery: QueryHandler,
    logger: Logger,
    receiveBuffer = 0
  ): Promise<UdpFront> {
    const udp = createSocket({
      type: family === 4 ? 'udp4' : 'udp6',
      ipv6Only: family === 6,
      ...(receiveBuffer > 0 ? { recvBufferSize: receiveBuffer } : {})
    })
    try {
      udp.bind(port, host)
      await once(udp, 'listening')
    } catch (err) {
      udp.close()
      throw err
    }
    const front = new UdpFront(udp)
    udp.on('message', (msg: Buffer, rinfo: RemoteInfo) => {
      onQuery(msg, new Peer(front, rinfo.address, rinfo.port))
    })
    udp.on('error', (err) => logger.error({ err }, 'dns udp socket error'))
    return front
  }

  send(peer: Peer, buf: Buffer, len: number, copy: boolean): void {
    if (this.closed) return
    // dgram may queue the buffer: a scratch buffer is copied.
    const out = copy ? Buffer.allocUnsafe(len) : buf
    if (copy) buf.copy(out, 0, 0, len)
    this.socket.send(out, 0, len, peer.port, peer.address)
  }

  skip(_peer: Peer): void {}

  own(msg: Buffer): Buffer {
    return msg
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.socket.close()
  }
}
