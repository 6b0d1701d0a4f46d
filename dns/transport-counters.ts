/**
 * The counters of one encrypted transport (DoT, DoH) in one front process, read when the metrics
 * snapshot is taken (engine/metrics `TransportCounts`): plain numbers bumped where things happen.
 */
import type { TcpSlotCounts, TransportCounts } from '../engine/metrics/index.js'

export class TransportCounters {
  readonly transport: string
  /** Connections accepted (past the caps and, for TLS, the handshake). */
  connections = 0
  /** Queries taken from clients. */
  queries = 0
  /** TLS handshakes that failed or did not finish in time. */
  handshakeFailures = 0
  /** HTTP/2 streams the client reset before their answer, and sessions ended for resetting too many. */
  resets = 0
  /** Connections closed on accept: a cap on connections or on handshakes in progress. */
  refused = 0
  /** Connections closed because a message (DoT), or a preface, frame or header block (DoH), passed `tcp-message-timeout`. */
  timedOut = 0
  /** DoH connections refused or closed because their source reset too many streams across its connections. */
  calmed = 0
  /** Connections open now (the front points it at its table). */
  open: () => number = () => 0
  /** The table's refusals and evictions (the front points it at its table). */
  slots: () => TcpSlotCounts | null = () => null

  constructor(transport: string) {
    this.transport = transport
  }

  snapshot(): TransportCounts {
    return {
      transport: this.transport,
      open: this.open(),
      connections: this.connections,
      queries: this.queries,
      handshakeFailures: this.handshakeFailures,
      resets: this.resets,
      refused: this.refused,
      timedOut: this.timedOut,
      calmed: this.calmed,
      evictedIdle: this.slots()?.evictedIdle ?? 0,
      evictedSlow: this.slots()?.evictedSlow ?? 0
    }
  }
}
