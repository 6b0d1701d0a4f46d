/**
 * The DNS front's counters as /metrics shows them: their part of a DNS process's snapshot, and the
 * metrics made of it. The counting itself is the dns role's (dns/metrics.ts); this side is engine
 * code because two roles read it: the api role's /metrics and the dns role's `proxy.metrics-listen`.
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import { pushHistogram, rawHistogram, type HistValue, type MetricsSnapshot, type SnapshotMetrics } from './snapshots.js'

/** Upper bounds (ms) of the upstream latency buckets. */
export const UPSTREAM_BUCKETS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] as const

/** The DNS front's counters in a DNS process's snapshot (dns/metrics.ts writes them). */
export interface DnsCountersSnapshot extends MetricsSnapshot {
  queries: number
  /** [verdict, rcode name ('other' past 15), count], non-zero entries only. */
  answers: Array<[string, string, number]>
  upstream: { buckets: number[]; counts: number[]; sum: number; count: number }
  upstreamTimeouts: number
  poolQueueDepth: number
  /** The UDP I/O path (`proxy.io` resolved): 'native' or 'dgram' ('' before the server started). */
  io?: string
  /** What the native UDP front dropped (`UdpDrops`); absent in a snapshot of an older process. */
  udpOversized?: number
  udpSendDrops?: number
  /** dnstap frames sent and dropped (`DnstapCounts`); absent in a snapshot of an older process. */
  dnstapFrames?: number
  dnstapDropped?: number
  /** Upstream answers sent truncated to the client's UDP size; absent in an older process's snapshot. */
  udpTruncated?: number
  /** Forwarded queries waiting for an answer, and those withdrawn (their client went away); absent in an older process's snapshot. */
  upstreamPending?: number
  /** The policy cache of an inline process: addresses held, snapshots built; absent with a pool and in an older process's snapshot. */
  policyCachedAddresses?: number
  policySnapshotsBuilt?: number
  upstreamWithdrawn?: number
  /** The TCP front's connection accounting (`TcpSlotCounts`); absent in an older process's snapshot. */
  tcpSlots?: TcpSlotCounts
  /** The encrypted transports' counters (`TransportCounts`), one entry each; absent in an older process's snapshot. */
  transports?: TransportCounts[]
  statsRowsWritten: number
  statsRowsDropped: number
  /** The forwarder's resolvers as this process sees them; absent in a snapshot of an older process. */
  resolvers?: ResolverSnapshot[]
}

/** Error kinds counted per resolver: the answers that fail over, and a refused or reset connection. */
export const RESOLVER_ERRORS = ['REFUSED', 'SERVFAIL', 'NOTIMP', 'network'] as const
export type ResolverError = (typeof RESOLVER_ERRORS)[number]

/** One upstream resolver's state and counters, as a snapshot carries them. */
export interface ResolverSnapshot {
  /** `host:port` (`[v6]:port`), the `resolver` label. */
  resolver: string
  up: boolean
  /** Why it is down (absent while up, and in a snapshot of an older process). */
  why?: string
  queries: number
  timeouts: number
  /** By kind, in RESOLVER_ERRORS order. */
  errors: number[]
  latency: { counts: number[]; sum: number; count: number }
}

/** TCP connections refused on accept and closed to make room, by reason (dns/tcp-slots.ts). */
export interface TcpSlotCounts {
  readonly refusedPerSource: number
  readonly refusedFull: number
  readonly evictedIdle: number
  readonly evictedSlow: number
}

export const NO_TCP_SLOTS: TcpSlotCounts = { refusedPerSource: 0, refusedFull: 0, evictedIdle: 0, evictedSlow: 0 }

/** One encrypted DNS transport's counters in one process (dns/transport-counters.ts). */
export interface TransportCounts {
  /** `dot`, `doh` (TLS) or `doh-http` (plain HTTP behind a proxy). */
  readonly transport: string
  readonly open: number
  readonly connections: number
  readonly queries: number
  readonly handshakeFailures: number
  readonly resets: number
  readonly refused: number
  /** Closed at `tcp-message-timeout`, closed or refused for their source's resets (DoH), closed to make room; absent in an older process's snapshot. */
  readonly timedOut?: number
  readonly calmed?: number
  readonly evictedIdle?: number
  readonly evictedSlow?: number
}

// The per-resolver series (dnsdist's `dnsdist_server_*`), labelled by process and resolver address.
function resolverMetrics(registry: Registry): { reset: () => void; add: (proc: string, r: ResolverSnapshot) => void } {
  const pr = ['process', 'resolver'] as const
  const up = new Gauge({
    name: 'filterd_dns_resolver_up',
    help: 'upstream resolver state as the forwarder sees it: 1 up, 0 down',
    labelNames: pr,
    registers: [registry]
  })
  const queries = new Counter({
    name: 'filterd_dns_resolver_queries_total',
    help: 'tries sent to the upstream resolver (health probes not counted)',
    labelNames: pr,
    registers: [registry]
  })
  const timeouts = new Counter({
    name: 'filterd_dns_resolver_timeouts_total',
    help: 'tries the upstream resolver did not answer in their share of the budget',
    labelNames: pr,
    registers: [registry]
  })
  const errors = new Counter({
    name: 'filterd_dns_resolver_errors_total',
    help: 'REFUSED, SERVFAIL and NOTIMP answers (each failed over to the next resolver) and network errors',
    labelNames: ['process', 'resolver', 'error'] as const,
    registers: [registry]
  })
  const histName = 'filterd_dns_resolver_latency_ms'
  const latency = rawHistogram(registry, histName, 'upstream resolver round-trip time in milliseconds')
  return {
    reset() {
      for (const m of [up, queries, timeouts, errors]) m.reset()
      latency.values = []
    },
    add(proc, r) {
      const l = { process: proc, resolver: r.resolver }
      up.set(l, r.up ? 1 : 0)
      queries.inc(l, r.queries)
      timeouts.inc(l, r.timeouts)
      RESOLVER_ERRORS.forEach((error, i) => errors.inc({ ...l, error }, r.errors[i] ?? 0))
      pushHistogram(latency.values, histName, l, UPSTREAM_BUCKETS_MS, r.latency)
    }
  }
}

/** The metrics filled from the DNS processes' snapshots, registered on `registry`. */
function snapshotMetrics(registry: Registry) {
  const P = ['process'] as const
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter({ name, help, labelNames, registers: [registry] })
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Gauge({ name, help, labelNames, registers: [registry] })
  return {
    queries: counter('filterd_dns_queries_total', 'DNS queries received', P),
    answers: counter('filterd_dns_answers_total', 'DNS queries by verdict action and answer RCODE', [
      'process',
      'verdict',
      'rcode'
    ]),
    timeouts: counter(
      'filterd_dns_upstream_timeouts_total',
      'upstream tries that got no answer in their share of the budget (each failed over or, at the end of the budget, SERVFAIL)',
      P
    ),
    queue: gauge('filterd_dns_pool_queue_depth', 'tasks waiting in the worker pool', P),
    written: counter('filterd_stats_rows_written_total', 'statistics rows written to CSV', P),
    dropped: counter('filterd_stats_rows_dropped_total', 'statistics rows dropped (disk full or slow)', P),
    io: gauge('filterd_dns_udp_io', 'UDP I/O path of the DNS process (proxy.io): 1 for the one in use', [
      'process',
      'path'
    ]),
    oversized: counter(
      'filterd_dns_udp_oversized_total',
      'UDP datagrams larger than a receive slot, dropped unread (native I/O)',
      P
    ),
    sendDrops: counter(
      'filterd_dns_udp_send_drops_total',
      'UDP answers the kernel did not take, send queue full (native I/O)',
      P
    ),
    tapFrames: counter('filterd_dns_dnstap_frames_total', 'dnstap frames handed to the collector (proxy.dnstap)', P),
    tapDropped: counter(
      'filterd_dns_dnstap_dropped_total',
      'dnstap frames dropped, queue full: the collector was slow or away (proxy.dnstap)',
      P
    ),
    pending: gauge('filterd_dns_upstream_pending', 'forwarded client queries waiting for an upstream answer', P),
    cached: gauge(
      'filterd_dns_policy_cached_addresses',
      'client addresses (and client IDs) whose policy the process holds cached (proxy.policy-cache-addresses is the most)',
      P
    ),
    built: counter(
      'filterd_dns_policy_snapshots_built_total',
      'policies built for an address not in the cache, or dropped from it by a write or to make room',
      P
    ),
    withdrawn: counter(
      'filterd_dns_upstream_withdrawn_total',
      'forwarded queries dropped because their client went away before the answer (a reset DoH stream, a closed DoH connection)',
      P
    ),
    truncated: counter(
      'filterd_dns_udp_truncated_total',
      "upstream answers larger than the client's UDP size, sent truncated with TC",
      P
    ),
    tcpRefused: counter(
      'filterd_dns_tcp_refused_total',
      'TCP client connections closed on accept: per-source (the address or /64 holds its cap) or full (no idle connection to close)',
      ['process', 'reason']
    ),
    tcpEvicted: counter(
      'filterd_dns_tcp_evicted_total',
      'TCP client connections closed to make room for a new one: idle, or slow (an unfinished message)',
      ['process', 'reason']
    ),
    age: gauge('filterd_metrics_snapshot_age_seconds', 'age of the DNS process snapshot', P)
  }
}

type CounterMetrics = ReturnType<typeof snapshotMetrics>

/** Adds one DNS process's snapshot `s` (process `proc`, read at `t`) to the metrics. */
function addSnapshot(m: CounterMetrics, proc: string, s: DnsCountersSnapshot, t: number): void {
  const l = { process: proc }
  m.queries.inc(l, s.queries)
  for (const [verdict, rcode, n] of s.answers) m.answers.inc({ process: proc, verdict, rcode }, n)
  m.timeouts.inc(l, s.upstreamTimeouts)
  m.queue.set(l, s.poolQueueDepth)
  if (typeof s.io === 'string' && s.io !== '') m.io.set({ process: proc, path: s.io }, 1)
  m.oversized.inc(l, s.udpOversized ?? 0)
  m.sendDrops.inc(l, s.udpSendDrops ?? 0)
  m.tapFrames.inc(l, s.dnstapFrames ?? 0)
  m.tapDropped.inc(l, s.dnstapDropped ?? 0)
  m.truncated.inc(l, s.udpTruncated ?? 0)
  m.pending.set(l, s.upstreamPending ?? 0)
  if (s.policyCachedAddresses !== undefined) m.cached.set(l, s.policyCachedAddresses)
  m.built.inc(l, s.policySnapshotsBuilt ?? 0)
  m.withdrawn.inc(l, s.upstreamWithdrawn ?? 0)
  const slots = s.tcpSlots ?? NO_TCP_SLOTS
  m.tcpRefused.inc({ process: proc, reason: 'per-source' }, slots.refusedPerSource)
  m.tcpRefused.inc({ process: proc, reason: 'full' }, slots.refusedFull)
  m.tcpEvicted.inc({ process: proc, reason: 'idle' }, slots.evictedIdle)
  m.tcpEvicted.inc({ process: proc, reason: 'slow' }, slots.evictedSlow)
  m.written.inc(l, s.statsRowsWritten)
  m.dropped.inc(l, s.statsRowsDropped)
  m.age.set(l, Math.max(0, (t - s.updated) / 1000))
}

/** The encrypted transports' metrics (DoT, DoH), by process and transport, filled from the snapshots. */
function transportMetrics(registry: Registry): {
  reset: () => void
  add: (proc: string, list: readonly TransportCounts[]) => void
} {
  const labelNames = ['process', 'transport'] as const
  const counter = (name: string, help: string) => new Counter({ name, help, labelNames, registers: [registry] })
  const open = new Gauge({
    name: 'filterd_dns_transport_connections',
    help: 'client connections open now on an encrypted transport',
    labelNames,
    registers: [registry]
  })
  const connections = counter(
    'filterd_dns_transport_connections_total',
    'client connections accepted on an encrypted transport (TLS: handshake done)'
  )
  const queries = counter('filterd_dns_transport_queries_total', 'DNS queries received on an encrypted transport')
  const failures = counter(
    'filterd_dns_transport_handshake_failures_total',
    'TLS handshakes that failed or did not finish within tcp-message-timeout'
  )
  const resets = counter(
    'filterd_dns_transport_resets_total',
    'HTTP/2 streams the client reset before their answer, and sessions closed for resetting too many (rapid reset)'
  )
  const refused = counter(
    'filterd_dns_transport_refused_total',
    'connections closed on accept: too many connections or handshakes in progress, in all or from one source'
  )
  const timedOut = counter(
    'filterd_dns_transport_timed_out_total',
    'connections closed because a message (DoT), or the preface, a frame or a header block (DoH), took longer than tcp-message-timeout'
  )
  const calmed = counter(
    'filterd_dns_transport_calmed_total',
    'DoH connections refused on accept or closed with GOAWAY because their source (IPv4 address or IPv6 /64) reset too many streams across its connections'
  )
  const evicted = new Counter({
    name: 'filterd_dns_transport_evicted_total',
    help: 'connections closed to make room for a new one in a full table: idle, or slow (an unfinished message)',
    labelNames: ['process', 'transport', 'reason'],
    registers: [registry]
  })
  return {
    reset() {
      for (const m of [open, connections, queries, failures, resets, refused, timedOut, calmed, evicted]) m.reset()
    },
    add(proc, list) {
      for (const t of list) {
        const l = { process: proc, transport: t.transport }
        open.set(l, t.open)
        connections.inc(l, t.connections)
        queries.inc(l, t.queries)
        failures.inc(l, t.handshakeFailures)
        resets.inc(l, t.resets)
        refused.inc(l, t.refused)
        timedOut.inc(l, t.timedOut ?? 0)
        calmed.inc(l, t.calmed ?? 0)
        evicted.inc({ ...l, reason: 'idle' }, t.evictedIdle ?? 0)
        evicted.inc({ ...l, reason: 'slow' }, t.evictedSlow ?? 0)
      }
    }
  }
}

/** The DNS front's counters, the upstream latency histogram, each resolver's and each encrypted transport's series. */
export const dnsCounterMetrics: SnapshotMetrics = (registry) => {
  const metrics = snapshotMetrics(registry)
  const histName = 'filterd_dns_upstream_latency_ms'
  const latency = rawHistogram(registry, histName, 'upstream round-trip time in milliseconds')
  const perResolver = resolverMetrics(registry)
  const perTransport = transportMetrics(registry)
  let hist: HistValue[] = []
  return {
    reset() {
      for (const m of Object.values(metrics)) m.reset()
      perResolver.reset()
      perTransport.reset()
      hist = []
    },
    add(proc, snapshot, t) {
      const s = snapshot as DnsCountersSnapshot
      addSnapshot(metrics, proc, s, t)
      pushHistogram(hist, histName, { process: proc }, s.upstream.buckets, s.upstream)
      for (const r of s.resolvers ?? []) perResolver.add(proc, r)
      perTransport.add(proc, s.transports ?? [])
    },
    done() {
      latency.values = hist
    }
  }
}
