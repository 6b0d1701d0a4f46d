/*
 * The listeners of DNS over TLS (RFC 7858, `proxy.dot-listen`): TLS 1.2 and 1.3 servers with ALPN
 * `dot` that hand each connection, once its handshake is done, to a TcpFront (./tcp-front.ts), which
 * frames, pipelines, answers out of order and holds its connection table exactly as for plain TCP.
 *
 * What this adds is the handshake, and what it may cost:
 * - A handshake must finish within `tcp-message-timeout` (node's handshakeTimeout; a client that
 *   opens a connection and sends nothing, or half a ClientHello, is closed then) and is counted as
 *   a handshake failure, like any handshake that fails.
 * - Handshakes in progress are capped, as connections are: at most `tcp-max-connections` of them
 *   per front, and `tcp-max-per-source` from one IPv4 address or IPv6 /64; a connection past either
 *   is closed on accept (counted as refused), so half-open handshakes cannot pile up.
 * - Session resumption: session tickets (TLS 1.2 and 1.3) under keys made once per listener and
 *   kept across certificate reloads, so a reload does not void the tickets clients hold.
 * - The certificate (engine/tls/certificates.ts) is replaced in place on a reload: new handshakes
 *   get it, open connections keep theirs.
 * The client ID is the first label of the server name the client asked for (./client-id.ts).
 */
import { randomBytes } from 'node:crypto'
import type { Socket } from 'node:net'
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls'
import type { Logger } from '../engine/log/index.js'
import { TLS_MIN_VERSION, type CertificateSource } from '../engine/tls/index.js'
import { clientIdFromServerName } from './client-id.js'
import { sourceKey } from './tcp-slots.js'
import type { TransportCounters } from './transport-counters.js'

/** The ALPN protocol ID of DNS over TLS (RFC 7858 §3.2, IANA). */
export const DOT_ALPN = 'dot'

export interface DotListenerOptions {
  certificates: CertificateSource
  /** `proxy.server-name`, or null (no client IDs from SNI). */
  serverName: string | null
  /** A handshake must be done within this (ms). */
  handshakeTimeoutMs: number
  /** Handshakes in progress at most, per front and per source. */
  maxHandshakes: number
  maxHandshakesPerSource: number
  counters: TransportCounters
  logger: Logger
}

/** The handshakes in progress of one front's listeners, by source (IPv4 address or IPv6 /64). */
class HandshakeTable {
  size = 0
  private readonly bySource = new Map<string, number>()
  constructor(
    private readonly max: number,
    private readonly perSource: number
  ) {}

  /** Takes a place for a handshake from `address`, or returns null when a cap is reached. */
  take(address: string): string | null {
    const key = sourceKey(address)
    const n = this.bySource.get(key) ?? 0
    if (this.size >= this.max || n >= this.perSource) return null
    this.size++
    this.bySource.set(key, n + 1)
    return key
  }

  give(key: string): void {
    this.size--
    const n = (this.bySource.get(key) ?? 1) - 1
    if (n <= 0) this.bySource.delete(key)
    else this.bySource.set(key, n)
  }
}

const tables = new WeakMap<TransportCounters, HandshakeTable>()

/** What guardTlsServer needs: the caps on handshakes in progress, the counters, the certificate. */
export type TlsGuardOptions = Pick<
  DotListenerOptions,
  'certificates' | 'maxHandshakes' | 'maxHandshakesPerSource' | 'counters' | 'logger'
>

/**
 * What every TLS listener of the DNS role does around its handshakes (DoT here, DoH in
 * ./doh-front.ts): caps the handshakes in progress per front (its counters object) and per source,
 * counts failed or timed-out handshakes, and takes a reloaded certificate, keeping `ticketKeys`.
 */
export function guardTlsServer(server: TlsServer, o: TlsGuardOptions, ticketKeys: Buffer, what: string): void {
  let table = tables.get(o.counters)
  if (table === undefined) {
    table = new HandshakeTable(o.maxHandshakes, o.maxHandshakesPerSource)
    tables.set(o.counters, table)
  }
  const handshakes = table
  o.certificates.onChange((c) => server.setSecureContext({ ...c.options, ticketKeys }))
  // The raw connection, before its handshake: the caps on handshakes in progress. Its place is
  // given back when the handshake is done (found by address and port) or the connection closes.
  const inProgress = new Map<string, () => void>()
  server.on('connection', (raw: Socket) => {
    const key = handshakes.take(raw.remoteAddress ?? '')
    if (key === null) {
      o.counters.refused++
      raw.destroy()
      return
    }
    const id = `${raw.remoteAddress ?? ''}|${raw.remotePort ?? 0}`
    const done = (): void => {
      // Off the socket once its place is given back: an idle connection keeps no handshake closure.
      raw.off('close', done)
      if (inProgress.get(id) !== done) return
      inProgress.delete(id)
      handshakes.give(key)
    }
    inProgress.set(id, done)
    raw.once('close', done)
  })
  server.on('secureConnection', (sock: TLSSocket) => {
    inProgress.get(`${sock.remoteAddress ?? ''}|${sock.remotePort ?? 0}`)?.()
  })
  server.on('tlsClientError', (err, sock) => {
    o.counters.handshakeFailures++
    o.logger.debug({ err, client: sock.remoteAddress }, `dns: ${what} handshake failed`)
    sock.destroy()
  })
}

/**
 * A TLS server for one `proxy.dot-listen` address (not yet listening): `onSecure` gets each
 * connection whose handshake is done, with the client ID of its server name.
 */
export function createDotServer(
  o: DotListenerOptions,
  onSecure: (sock: TLSSocket, clientId: string | null) => void
): TlsServer {
  const ticketKeys = randomBytes(48)
  const server = createTlsServer(
    {
      ...o.certificates.current.options,
      minVersion: TLS_MIN_VERSION,
      ALPNProtocols: [DOT_ALPN],
      handshakeTimeout: o.handshakeTimeoutMs,
      ticketKeys,
      noDelay: true
    },
    (sock) => {
      onSecure(sock, clientIdFromServerName(sock.servername, o.serverName))
    }
  )
  guardTlsServer(server, o, ticketKeys, 'DoT')
  return server
}
