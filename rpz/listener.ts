/**
 * The rpz role's DNS sockets: TCP (transfers; several requests per connection, answers written in
 * order with back-pressure so a large AXFR never piles up in memory) and UDP (SOA probes).
 */
import { createServer, type Server, type Socket } from 'node:net'
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { once } from 'node:events'
import { FrameReader, frame } from '../engine/wire/tcp-frame.js'
import { answer, type AnswerContext } from './answer.js'

/** An idle TCP connection is closed after this (RFC 7766 6.2.3 suggests seconds, not minutes). */
const TCP_IDLE_MS = 30_000

export interface DnsListener {
  port: number
  close(): Promise<void>
}

function peerOf(address: string | undefined): string {
  const a = address ?? ''
  return a.startsWith('::ffff:') ? a.slice(7) : a
}

async function serveConnection(socket: Socket, ctx: AnswerContext, onError: (err: Error) => void): Promise<void> {
  const reader = new FrameReader()
  const peer = peerOf(socket.remoteAddress)
  socket.setTimeout(TCP_IDLE_MS, () => socket.destroy())
  let busy = false
  const drainRequests = async (): Promise<void> => {
    if (busy) return
    busy = true
    try {
      for (let raw = reader.read(); raw !== null; raw = reader.read()) {
        for (const msg of answer({ raw: Buffer.from(raw), peer, tcp: true }, ctx)) {
          if (socket.destroyed) return
          if (!socket.write(frame(msg))) await once(socket, 'drain')
        }
      }
      if (reader.isOversized) socket.destroy()
    } finally {
      busy = false
    }
  }
  socket.on('data', (chunk) => {
    reader.push(chunk)
    drainRequests().catch((err: unknown) => {
      onError(err as Error)
      socket.destroy()
    })
  })
  socket.on('error', () => socket.destroy())
}

/** Listens on `host:port` over TCP and UDP (the same port; 0 picks one free for both). */
export async function listenDns(
  host: string,
  port: number,
  ctx: AnswerContext,
  onError: (err: Error) => void
): Promise<DnsListener> {
  const tcp: Server = createServer((socket) => {
    void serveConnection(socket, ctx, onError)
  })
  tcp.listen(port, host)
  await once(tcp, 'listening')
  const bound = (tcp.address() as { port: number }).port
  const udp: UdpSocket = createSocket(host.includes(':') ? 'udp6' : 'udp4')
  udp.on('message', (raw, rinfo) => {
    try {
      for (const msg of answer({ raw, peer: peerOf(rinfo.address), tcp: false }, ctx))
        udp.send(msg, rinfo.port, rinfo.address)
    } catch (err) {
      onError(err as Error)
    }
  })
  udp.on('error', onError)
  udp.bind(bound, host)
  await once(udp, 'listening')
  return {
    port: bound,
    async close() {
      udp.close()
      tcp.close()
      await once(tcp, 'close').catch(() => {})
    }
  }
}
