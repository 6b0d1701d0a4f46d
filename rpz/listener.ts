/**
 * The rpz role's DNS sockets: TCP (transfers; several requests per connection, answers written in
 * order with back-pressure so a large AXFR never piles up in memory) and UDP (SOA probes).
 *
 * What one connection may hold is bounded: at most `maxConnections` at once (the next is closed on
 * accept and counted; a secondary retries at its SOA retry), a connection idle for `idleMs` (no byte
 * read or written: also a client that asked for an AXFR and stopped reading) is closed, a request
 * must arrive whole within `messageMs` of its first byte (a slow client cannot hold a connection by
 * trickling), and requests queued behind a transfer may hold at most MAX_PENDING_BYTES.
 */
import { createServer, type Server, type Socket } from 'node:net'
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { once } from 'node:events'
import { FrameReader, frame } from '../engine/wire/index.js'
import { answer, type AnswerContext } from './answer.js'

/** Request bytes a connection may have waiting while its answers are written (a few dozen queries). */
const MAX_PENDING_BYTES = 64 * 1024

export interface ListenerLimits {
  maxConnections: number
  idleMs: number
  messageMs: number
  /** Called for each connection closed on accept because `maxConnections` were open. */
  onDropped(): void
}

export interface ListenerStats {
  connections: number
  /** Answer bytes written to sockets and not yet taken by the kernel, over every connection. */
  queuedBytes: number
}

export interface DnsListener {
  port: number
  stats(): ListenerStats
  close(): Promise<void>
}

function peerOf(address: string | undefined): string {
  const a = address ?? ''
  return a.startsWith('::ffff:') ? a.slice(7) : a
}

/** Closes the socket when a request started and is not whole within `ms` (not renewed by each byte). */
function messageDeadline(socket: Socket, ms: number): { update(pending: number): void; clear(): void } {
  let timer: NodeJS.Timeout | undefined
  const clear = (): void => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
  }
  return {
    update(pending) {
      if (pending === 0) clear()
      else timer ??= setTimeout(() => socket.destroy(), ms)
    },
    clear
  }
}

function serveConnection(
  socket: Socket,
  ctx: AnswerContext,
  limits: ListenerLimits,
  onError: (err: Error) => void
): void {
  const reader = new FrameReader()
  const peer = peerOf(socket.remoteAddress)
  const deadline = messageDeadline(socket, limits.messageMs)
  socket.setTimeout(limits.idleMs, () => socket.destroy())
  let busy = false
  const drainRequests = async (): Promise<void> => {
    if (busy) return
    busy = true
    try {
      for (let raw = reader.read(); raw !== null; raw = reader.read()) {
        deadline.clear()
        for (const msg of answer({ raw: Buffer.from(raw), peer, tcp: true }, ctx)) {
          if (socket.destroyed) return
          if (!socket.write(frame(msg))) await once(socket, 'drain')
        }
      }
      if (reader.isOversized) socket.destroy()
    } finally {
      busy = false
      // What is left is the start of the next request: it must be whole in time (the clock does not
      // run while a transfer is written, as the client may wait for it before sending more).
      if (!socket.destroyed) deadline.update(reader.bufferedBytes)
    }
  }
  socket.on('data', (chunk) => {
    reader.push(chunk)
    if (reader.bufferedBytes > MAX_PENDING_BYTES) {
      socket.destroy()
      return
    }
    drainRequests().catch((err: unknown) => {
      onError(err as Error)
      socket.destroy()
    })
  })
  socket.on('error', () => socket.destroy())
  socket.on('close', () => deadline.clear())
}

/** Listens on `host:port` over TCP and UDP (the same port; 0 picks one free for both). */
export async function listenDns(
  host: string,
  port: number,
  ctx: AnswerContext,
  limits: ListenerLimits,
  onError: (err: Error) => void
): Promise<DnsListener> {
  const open = new Set<Socket>()
  const tcp: Server = createServer((socket) => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
    serveConnection(socket, ctx, limits, onError)
  })
  // Node closes a connection past maxConnections on accept and emits 'drop' for it.
  tcp.maxConnections = limits.maxConnections
  tcp.on('drop', () => limits.onDropped())
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
    stats() {
      let queuedBytes = 0
      for (const s of open) queuedBytes += s.writableLength
      return { connections: open.size, queuedBytes }
    },
    async close() {
      udp.close()
      for (const s of open) s.destroy()
      tcp.close()
      await once(tcp, 'close').catch(() => {})
    }
  }
}
