/**
 * The DNS process's counters (`DnsMetrics`) and each upstream resolver's (`ResolverCounters`): plain
 * numbers in typed arrays, counted per packet, and the snapshot that engine/metrics publishes of them
 * every few seconds for /metrics. What the snapshot's parts mean, and the metrics made of them, the
 * features say themselves (engine/metrics/dns.ts, engine/rpz-feeds/feed-metrics.ts, engine/tls/metrics.ts).
 */
import {
  NO_TCP_SLOTS,
  RESOLVER_ERRORS,
  UPSTREAM_BUCKETS_MS,
  type DnsCountersSnapshot,
  type ResolverError,
  type ResolverSnapshot,
  type TcpSlotCounts,
  type TransportCounts
} from '../engine/metrics/index.js'
import type { RpzFeedSnapshot, RpzFeedsSnapshot } from '../engine/rpz-feeds/index.js'
import type { CertificateExpiry, CertificatesSnapshot } from '../engine/tls/index.js'
/** What a DNS process publishes: its counters, its RPZ feeds and its certificates. */
export type DnsSnapshot = DnsCountersSnapshot & RpzFeedsSnapshot & CertificatesSnapshot

/** Verdict actions with their own slot (engine/policy `Action`, plus what the front decides itself). */
export const VERDICTS = ['forward', 'block', 'safesearch', 'safevideo', 'malformed', 'drop', 'other'] as const
export type VerdictLabel = (typeof VERDICTS)[number]
/** RCODEs 0..15 get a slot each; anything else counts as 16 ("other"). */
const RCODES = 17
const S_QUERIES = 0
const S_TIMEOUTS = 1
const S_QUEUE = 2
const S_UP_SUM = 3
const S_UP_COUNT = 4
const SCALARS = 5

function verdictSlot(action: string): number {
  switch (action) {
    case 'forward':
      return 0
    case 'block':
      return 1
    case 'safesearch':
      return 2
    case 'safevideo':
      return 3
    case 'malformed':
      return 4
    case 'drop':
      return 5
    default:
      return 6
  }
}

/** RCODE names (RFC 1035, RFC 2136, RFC 6891 §9 for 16+ is not in a header): index = value. */
export const RCODE_NAMES = [
  'NOERROR',
  'FORMERR',
  'SERVFAIL',
  'NXDOMAIN',
  'NOTIMP',
  'REFUSED',
  'YXDOMAIN',
  'YXRRSET',
  'NXRRSET',
  'NOTAUTH',
  'NOTZONE',
  'DSOTYPENI',
  'RCODE12',
  'RCODE13',
  'RCODE14',
  'RCODE15'
] as const

/** The label of an RCODE slot: its name, or `other` past 15. */
export function rcodeLabel(r: number): string {
  return RCODE_NAMES[r] ?? 'other'
}

/**
 * One resolver's counters, kept by the forwarder (./upstream) and read when a snapshot is taken.
 * Plain number fields: an increment per try costs nothing measurable.
 */
export class ResolverCounters {
  queries = 0
  timeouts = 0
  readonly errors = new Float64Array(RESOLVER_ERRORS.length)
  readonly latency = new Float64Array(UPSTREAM_BUCKETS_MS.length + 1)
  latencySum = 0
  latencyCount = 0

  observe(ms: number): void {
    let i = 0
    while (i < UPSTREAM_BUCKETS_MS.length && ms > UPSTREAM_BUCKETS_MS[i]!) i++
    this.latency[i]! += 1
    this.latencySum += ms
    this.latencyCount += 1
  }

  countError(kind: ResolverError): void {
    this.errors[RESOLVER_ERRORS.indexOf(kind)]! += 1
  }

  snapshot(resolver: string, up: boolean, why = ''): ResolverSnapshot {
    return {
      resolver,
      up,
      ...(up || why === '' ? {} : { why }),
      queries: this.queries,
      timeouts: this.timeouts,
      errors: [...this.errors],
      latency: { counts: [...this.latency], sum: this.latencySum, count: this.latencyCount }
    }
  }
}

/** What the native UDP front dropped: datagrams larger than a receive slot, answers the kernel did not take. */
export interface UdpDrops {
  readonly oversized: number
  readonly sendDrops: number
}

const NO_UDP_DROPS: UdpDrops = { oversized: 0, sendDrops: 0 }

/** What the dnstap output sent to its collector and dropped (queue full). */
export interface DnstapCounts {
  readonly frames: number
  readonly dropped: number
}

const NO_DNSTAP: DnstapCounts = { frames: 0, dropped: 0 }

/**
 * The DNS process's counters. Every method is a few arithmetic operations on preallocated typed
 * arrays, safe to call per packet.
 */
export class DnsMetrics {
  readonly scalars = new Float64Array(SCALARS)
  readonly answers = new Float64Array(VERDICTS.length * RCODES)
  readonly upstreamBuckets = new Float64Array(UPSTREAM_BUCKETS_MS.length + 1)
  /** The UDP I/O path in use, set by the server when it starts. */
  io = ''
  /**
   * Read when a snapshot is taken, not per packet: the server points it at its native UDP fronts'
   * own counters (the dgram path drops nothing itself).
   */
  udpDrops: () => UdpDrops = () => NO_UDP_DROPS
  /** Read when a snapshot is taken: the server points it at its dnstap output's counters. */
  dnstap: () => DnstapCounts = () => NO_DNSTAP
  /** Read when a snapshot is taken: the server points it at its TCP front's connection accounting. */
  tcpSlots: () => TcpSlotCounts = () => NO_TCP_SLOTS
  /** Read when a snapshot is taken: the server points it at its encrypted transports' counters. */
  transports: () => TransportCounts[] = () => []
  /** Upstream answers larger than the client's UDP size, sent truncated (./udp-size.ts). */
  udpTruncated = 0
  /** Forwarded queries dropped because their client went away before the answer (./dispatch.ts withdraw). */
  upstreamWithdrawn = 0
  /** Read when a snapshot is taken: the server points it at its forwarder's pending count. */
  upstreamPending: () => number = () => 0
  /** This process's policy cache (inline dispatch; a pool's workers keep their own): addresses held and snapshots built. */
  policyCache: () => { addresses: number; built: number } | null = () => null
  /** Read when a snapshot is taken: the server points it at its forwarder's resolvers. */
  resolvers: () => ResolverSnapshot[] = () => []
  /** Read when a snapshot is taken: the server points it at its RPZ feeds. */
  rpzFeeds: () => RpzFeedSnapshot[] = () => []
  /** Read when a snapshot is taken and by /health: the server points it at its encrypted listeners' certificate. */
  tlsCerts: () => CertificateExpiry[] = () => []

  /** Counts one query and its answer: `verdictAction` is the policy Action or 'malformed'/'drop'. */
  countQuery(verdictAction: string, rcode: number): void {
    this.scalars[S_QUERIES]! += 1
    const r = rcode >= 0 && rcode < 16 ? rcode | 0 : 16
    this.answers[verdictSlot(verdictAction) * RCODES + r]! += 1
  }

  /** Records one upstream round trip of `ms` milliseconds. */
  observeUpstream(ms: number): void {
    let i = 0
    while (i < UPSTREAM_BUCKETS_MS.length && ms > UPSTREAM_BUCKETS_MS[i]!) i++
    this.upstreamBuckets[i]! += 1
    this.scalars[S_UP_SUM]! += ms
    this.scalars[S_UP_COUNT]! += 1
  }

  countUpstreamTimeout(): void {
    this.scalars[S_TIMEOUTS]! += 1
  }

  setPoolQueueDepth(n: number): void {
    this.scalars[S_QUEUE] = n
  }

  /** A JSON-ready copy; `statsRows` comes from the CSV writer (`writtenRows`, `droppedRows`). */
  snapshot(
    statsRows: { writtenRows: number; droppedRows: number } = { writtenRows: 0, droppedRows: 0 },
    now = Date.now()
  ): DnsSnapshot {
    const udp = this.udpDrops()
    const tap = this.dnstap()
    const cache = this.policyCache()
    const answers: Array<[string, string, number]> = []
    for (let v = 0; v < VERDICTS.length; v++) {
      for (let r = 0; r < RCODES; r++) {
        const n = this.answers[v * RCODES + r]!
        if (n > 0) answers.push([VERDICTS[v]!, rcodeLabel(r), n])
      }
    }
    return {
      v: 1,
      pid: process.pid,
      updated: now,
      queries: this.scalars[S_QUERIES]!,
      answers,
      upstream: {
        buckets: [...UPSTREAM_BUCKETS_MS],
        counts: [...this.upstreamBuckets],
        sum: this.scalars[S_UP_SUM]!,
        count: this.scalars[S_UP_COUNT]!
      },
      upstreamTimeouts: this.scalars[S_TIMEOUTS]!,
      poolQueueDepth: this.scalars[S_QUEUE]!,
      io: this.io,
      udpOversized: udp.oversized,
      udpSendDrops: udp.sendDrops,
      dnstapFrames: tap.frames,
      dnstapDropped: tap.dropped,
      udpTruncated: this.udpTruncated,
      upstreamPending: this.upstreamPending(),
      ...(cache === null ? {} : { policyCachedAddresses: cache.addresses, policySnapshotsBuilt: cache.built }),
      upstreamWithdrawn: this.upstreamWithdrawn,
      tcpSlots: { ...this.tcpSlots() },
      transports: this.transports(),
      statsRowsWritten: statsRows.writtenRows,
      statsRowsDropped: statsRows.droppedRows,
      resolvers: this.resolvers(),
      rpzFeeds: this.rpzFeeds(),
      tlsCerts: this.tlsCerts()
    }
  }
}
