/**
 * The counters of one encrypted transport (DoT, DoH) in one front process, read when the metrics
 * snapshot is taken (engine/metrics `TransportCounts`): plain numbers bumped where things happen.
 */
import type { TransportCounts } from '../engine/metrics/index.js'

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
  /** Connections open now (the front points it at its table). */
  open: () => number = () => 0

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
      refused: this.refused
    }
  }
}
