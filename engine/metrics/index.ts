/**
 * Operational metrics (Prometheus text format at `/metrics` on the api listener).
 *
 * The path: DNS counters live in the DNS processes, and /metrics is served by the api process.
 * Each DNS process counts into a `DnsMetrics` (plain numbers in a Float64Array: an increment is a
 * store, no allocation, no label lookup), and `startMetricsPublisher` writes a small JSON snapshot
 * of it every 5 seconds to `<folder of proxy.pid>/metrics-<id>/dns-<index>.json` (written to a
 * temporary name and renamed, so a reader never sees half a file; `metricsDir` says why there). The api role's `/metrics` handler, and the DNS
 * role's own `proxy.metrics-listen` listener, read every snapshot and expose them through prom-client
 * with a `process` label (`dns-<index>`: the front process's index, 0 .. proxy.processes-1, so the
 * label is the same after a restart; never a pid), plus what they can read themselves. A snapshot
 * older than five minutes (a process that died without cleaning up) is left out; a process that
 * closes removes its own. Counters restart at 0 with a restarted process under the same label,
 * which Prometheus's `rate()` reads as a counter reset.
 *
 * Exposed metrics:
 *   filterd_dns_queries_total{process}                      queries answered or dropped
 *   filterd_dns_answers_total{process,verdict,rcode}        by verdict action and answer RCODE name (NOERROR, NXDOMAIN, …)
 *   filterd_dns_upstream_latency_ms{process,le}             histogram of upstream round trips
 *   filterd_dns_upstream_timeouts_total{process}            upstream tries that got no answer in their share of the budget
 *   filterd_dns_upstream_pending{process}                   forwarded client queries waiting for an upstream answer
 *   filterd_dns_upstream_withdrawn_total{process}           forwarded queries dropped because their client went away first
 *   filterd_dns_resolver_up{process,resolver}               1 while the forwarder counts the resolver up, else 0
 *   filterd_dns_resolver_queries_total{process,resolver}    tries sent to it (users' queries, not health probes)
 *   filterd_dns_resolver_timeouts_total{process,resolver}   its tries that got no answer in their share
 *   filterd_dns_resolver_errors_total{process,resolver,error}  REFUSED, SERVFAIL, NOTIMP answers (each failed over) and network errors
 *   filterd_dns_resolver_latency_ms{process,resolver,le}    histogram of its answers' round trips
 *   filterd_dns_pool_queue_depth{process}                   last value set
 *   filterd_dns_udp_io{process,path}                        1 for the UDP I/O path in use (native, dgram)
 *   filterd_dns_udp_oversized_total{process}                datagrams larger than a receive slot, dropped (native I/O)
 *   filterd_dns_udp_send_drops_total{process}               answers the kernel did not take (native I/O)
 *   filterd_dns_dnstap_frames_total{process}                dnstap frames handed to the collector (proxy.dnstap)
 *   filterd_dns_dnstap_dropped_total{process}               dnstap frames dropped: queue full, collector slow or away
 *   filterd_dns_udp_truncated_total{process}                upstream answers larger than the client's UDP size, sent truncated (TC)
 *   filterd_dns_tcp_refused_total{process,reason}           TCP connections closed on accept: per-source cap, table full
 *   filterd_dns_tcp_evicted_total{process,reason}           TCP connections closed early to make room: idle, slow (unfinished message)
 *   filterd_stats_rows_written_total{process}, filterd_stats_rows_dropped_total{process}
 *   filterd_metrics_snapshot_age_seconds{process}
 *   filterd_store_generation                                 the policy generation the api sees
 *   filterd_rpz_feed_*{process,zone}                         the RPZ feeds taken in (serial, records, last success, errors, unsupported triggers)
 *   filterd_api_* (prom-client's default process metrics of the api process)
 */
import type { CertificateExpiry } from '../tls/expiry.js'
import { mkdir, readFile, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { dirname, join, resolve } from 'node:path'
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import type { Config } from '../config/types.js'
import type { HttpServer } from '../http/index.js'

/** Verdict actions with their own slot (engine/policy `Action`, plus what the front decides itself). */
export const VERDICTS = ['forward', 'block', 'safesearch', 'safevideo', 'malformed', 'drop', 'other'] as const
export type VerdictLabel = (typeof VERDICTS)[number]
/** RCODEs 0..15 get a slot each; anything else counts as 16 ("other"). */
const RCODES = 17
/** Upper bounds (ms) of the upstream latency buckets. */
export const UPSTREAM_BUCKETS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] as const

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

/** What a DNS process publishes. */
export interface MetricsSnapshot {
  v: 1
  /** The process's pid (information only: never a label, since it changes with every restart). */
  pid: number
  updated: number
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
  upstreamWithdrawn?: number
  /** The TCP front's connection accounting (`TcpSlotCounts`); absent in an older process's snapshot. */
  tcpSlots?: TcpSlotCounts
  /** The encrypted transports' counters (`TransportCounts`), one entry each; absent in an older process's snapshot. */
  transports?: TransportCounts[]
  statsRowsWritten: number
  statsRowsDropped: number
  /** The forwarder's resolvers as this process sees them; absent in a snapshot of an older process. */
  resolvers?: ResolverSnapshot[]
  /** The RPZ feeds this process enforces (`rpz-feeds`); absent without feeds or in an older process's snapshot. */
  rpzFeeds?: RpzFeedSnapshot[]
  /** When the DoT and DoH listeners' certificate expires; absent without them or in an older process's snapshot. */
  tlsCerts?: CertificateExpiry[]
}

/** One RPZ feed as a DNS process holds it (engine/rpz/feed-set.ts `FeedReport`). */
export interface RpzFeedSnapshot {
  zone: string
  state: string
  serial: number | null
  records: number | null
  lastSuccess: number | null
  errors: number
  /** NSDNAME, NSIP and response-IP triggers held but not enforced. */
  unsupported: number
  counts: { qname: number; clientIp: number; nsdname: number; nsip: number; responseIp: number } | null
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

/**
 * One resolver's counters, kept by the forwarder (dns/upstream) and read when a snapshot is taken.
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
/** TCP connections refused on accept and closed to make room, by reason (dns/tcp-slots.ts). */
export interface TcpSlotCounts {
  readonly refusedPerSource: number
  readonly refusedFull: number
  readonly evictedIdle: number
  readonly evictedSlow: number
}

const NO_TCP_SLOTS: TcpSlotCounts = { refusedPerSource: 0, refusedFull: 0, evictedIdle: 0, evictedSlow: 0 }

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
  /** Upstream answers larger than the client's UDP size, sent truncated (dns/udp-size.ts). */
  udpTruncated = 0
  /** Forwarded queries dropped because their client went away before the answer (dns/dispatch.ts withdraw). */
  upstreamWithdrawn = 0
  /** Read when a snapshot is taken: the server points it at its forwarder's pending count. */
  upstreamPending: () => number = () => 0
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
  ): MetricsSnapshot {
    const udp = this.udpDrops()
    const tap = this.dnstap()
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

export interface MetricsPublisher {
  /** Writes the snapshot now. */
  publishNow(): Promise<void>
  /** Stops the timer and removes this process's snapshot. */
  close(): Promise<void>
}

export interface MetricsPublisherOptions {
  /** The CSV writer, for its row counters. */
  queryLog?: { readonly writtenRows: number; readonly droppedRows: number }
  /** Default 5000 ms. */
  intervalMs?: number
  /** The front process's index (`process="dns-<index>"`); default 0. */
  index?: number
}

/**
 * The directory snapshots are written to: beside the DNS role's pid file (`/run/filterd` by
 * default, a small tmpfs), not in `stats.dir`, so a full statistics disk (when the counters of
 * dropped rows matter most) cannot stop them. Its name carries a digest of `stats.dir`, the folder
 * the DNS processes and the api role of one installation already share, so two installations (or
 * two tests) with the same pid folder keep their snapshots apart.
 */
export function metricsDir(config: Readonly<Config>): string {
  const id = createHash('sha256').update(resolve(config.stats.dir)).digest('hex').slice(0, 12)
  return join(dirname(config.proxy.pid), `metrics-${id}`)
}

/**
 * Publishes `metrics` every few seconds for the api role's /metrics (one call per DNS process).
 *
 * @example
 * ```ts
 * const metrics = new DnsMetrics()
 * const publisher = startMetricsPublisher(config, metrics, { queryLog })
 * ```
 */
export function startMetricsPublisher(
  config: Readonly<Config>,
  metrics: DnsMetrics,
  options: MetricsPublisherOptions = {}
): MetricsPublisher {
  const dir = metricsDir(config)
  const file = join(dir, `dns-${options.index ?? 0}.json`)
  const tmp = `${file}.tmp`
  let closed = false
  let writing: Promise<void> = Promise.resolve()
  const publishNow = (): Promise<void> => {
    writing = writing
      .then(async () => {
        if (closed) return
        const snap = metrics.snapshot(options.queryLog)
        // Made on each write: a tmpfs such as /run may have been emptied under a running process.
        await mkdir(dir, { recursive: true })
        await writeFile(tmp, JSON.stringify(snap))
        await rename(tmp, file)
      })
      .catch(() => {})
    return writing
  }
  const timer = setInterval(() => {
    void publishNow()
  }, options.intervalMs ?? 5000)
  timer.unref()
  void publishNow()
  return {
    publishNow,
    async close() {
      clearInterval(timer)
      await writing
      closed = true
      await rm(file, { force: true })
      await rm(tmp, { force: true })
      // The last process out removes the folder (another process's snapshot keeps it).
      await rmdir(dir).catch(() => {})
    }
  }
}

/** Reads the fresh snapshots of `dir`, keyed by process label. */
export async function readSnapshots(
  dir: string,
  now = Date.now(),
  maxAgeMs = 300_000
): Promise<Map<string, MetricsSnapshot>> {
  const out = new Map<string, MetricsSnapshot>()
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return out
  }
  for (const name of names.sort()) {
    const m = /^(dns-\d+)\.json$/.exec(name)
    if (m === null) continue
    try {
      const snap = JSON.parse(await readFile(join(dir, name), 'utf8')) as MetricsSnapshot
      if (snap.v !== 1 || now - snap.updated > maxAgeMs) continue
      out.set(m[1]!, snap)
    } catch {
      // Removed between readdir and readFile, or not ours.
    }
  }
  return out
}

export interface MetricsRouteContext {
  readonly config: Readonly<Config>
  /** The store whose generation `filterd_store_generation` shows (the DNS role's listener has none). */
  readonly store?: { generation(): number }
  /** Include prom-client's default metrics of this process; default true. */
  readonly defaultMetrics?: boolean
  /** Prefix of those default metrics; default `filterd_api_` (the DNS listener: `filterd_dns_`, as in `filterd_dns_process_cpu_seconds_total`). */
  readonly defaultPrefix?: string
  readonly now?: () => number
}

type HistValue = { metricName: string; labels: Record<string, string | number>; value: number }

// prom-client has no histogram whose buckets can be set from outside, so a histogram read from a
// snapshot is a plain metric object in the shape the registry renders (the same shape its own
// Histogram returns), whose values each scrape replaces.
function rawHistogram(registry: Registry, name: string, help: string): { values: HistValue[] } {
  const holder = { values: [] as HistValue[] }
  registry.registerMetric({
    name,
    help,
    get: async () => ({ name, help, type: 'histogram', aggregator: 'sum', values: holder.values })
  } as never)
  return holder
}

// Appends one histogram's cumulative buckets, sum and count (from per-bucket counts) to `out`.
function pushHistogram(
  out: HistValue[],
  name: string,
  labels: Record<string, string>,
  buckets: readonly number[],
  h: { counts: number[]; sum: number; count: number }
): void {
  let cum = 0
  buckets.forEach((le, i) => {
    cum += h.counts[i] ?? 0
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cum })
  })
  cum += h.counts[buckets.length] ?? 0
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cum })
  out.push({ metricName: `${name}_sum`, labels, value: h.sum })
  out.push({ metricName: `${name}_count`, labels, value: h.count })
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
    pending: gauge('filterd_dns_upstream_pending', 'forwarded client queries waiting for an upstream answer', P),
    withdrawn: counter(
      'filterd_dns_upstream_withdrawn_total',
      'forwarded queries dropped because their client went away before the answer (a reset DoH stream, a closed DoH connection)',
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
    age: gauge('filterd_metrics_snapshot_age_seconds', 'age of the DNS process snapshot', P),
    tlsNotAfter: gauge(
      'filterd_dns_tls_cert_not_after_seconds',
      'unix time at which the certificate served by an encrypted listener (dot, doh) expires',
      ['process', 'listener']
    )
  }
}

type SnapshotMetrics = ReturnType<typeof snapshotMetrics>

/** Adds one DNS process's snapshot `s` (process `proc`, read at `t`) to the metrics. */
function addSnapshot(m: SnapshotMetrics, proc: string, s: MetricsSnapshot, t: number): void {
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
  m.withdrawn.inc(l, s.upstreamWithdrawn ?? 0)
  const slots = s.tcpSlots ?? NO_TCP_SLOTS
  m.tcpRefused.inc({ process: proc, reason: 'per-source' }, slots.refusedPerSource)
  m.tcpRefused.inc({ process: proc, reason: 'full' }, slots.refusedFull)
  m.tcpEvicted.inc({ process: proc, reason: 'idle' }, slots.evictedIdle)
  m.tcpEvicted.inc({ process: proc, reason: 'slow' }, slots.evictedSlow)
  m.written.inc(l, s.statsRowsWritten)
  m.dropped.inc(l, s.statsRowsDropped)
  m.age.set(l, Math.max(0, (t - s.updated) / 1000))
  for (const c of s.tlsCerts ?? []) m.tlsNotAfter.set({ process: proc, listener: c.listener }, c.notAfter)
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

const FEED_STATES = ['loading', 'ok', 'failing', 'expired'] as const
const TRIGGER_KINDS = [
  ['qname', 'qname'],
  ['clientIp', 'client-ip'],
  ['nsdname', 'nsdname'],
  ['nsip', 'nsip'],
  ['responseIp', 'response-ip']
] as const

/** The RPZ feeds' metrics (`rpz-feeds`), by process and zone, filled from the snapshots. */
function feedMetrics(registry: Registry): { reset: () => void; add: (proc: string, f: RpzFeedSnapshot) => void } {
  const labelNames = ['process', 'zone'] as const
  const gauge = <L extends string>(name: string, help: string, names: readonly L[]) =>
    new Gauge({ name, help, labelNames: names, registers: [registry] })
  const serial = gauge(
    'filterd_rpz_feed_serial',
    'SOA serial of the feed enforced now (absent before its first load)',
    labelNames
  )
  const records = gauge('filterd_rpz_feed_records', 'records of the feed enforced now', labelNames)
  const last = gauge(
    'filterd_rpz_feed_last_success_seconds',
    'unix time of the last good load or transfer; 0 = never',
    labelNames
  )
  const errors = gauge('filterd_rpz_feed_errors', 'failed loads or transfers since the process started', labelNames)
  const unsupported = gauge(
    'filterd_rpz_feed_unsupported_triggers',
    'NSDNAME, NSIP and response-IP triggers of the feed, held but not enforced (a forwarder cannot evaluate them)',
    labelNames
  )
  const triggers = gauge('filterd_rpz_feed_triggers', 'triggers of the feed by kind', ['process', 'zone', 'kind'])
  const state = gauge('filterd_rpz_feed_state', '1 for the state the feed is in: loading, ok, failing, expired', [
    'process',
    'zone',
    'state'
  ])
  const all = [serial, records, last, errors, unsupported, triggers, state]
  return {
    reset() {
      for (const m of all) m.reset()
    },
    add(proc, f) {
      const l = { process: proc, zone: f.zone }
      if (f.serial !== null) serial.set(l, f.serial)
      records.set(l, f.records ?? 0)
      last.set(l, f.lastSuccess === null ? 0 : Math.floor(f.lastSuccess / 1000))
      errors.set(l, f.errors)
      unsupported.set(l, f.unsupported)
      for (const [key, kind] of TRIGGER_KINDS) triggers.set({ ...l, kind }, f.counts?.[key] ?? 0)
      for (const s of FEED_STATES) state.set({ ...l, state: s }, f.state === s ? 1 : 0)
    }
  }
}

/** Mounts `GET /metrics` (Prometheus text format 0.0.4) on `server`; returns its registry. */
export function registerMetricsRoute(server: HttpServer, ctx: MetricsRouteContext): Registry {
  const registry = new Registry()
  const dir = metricsDir(ctx.config)
  const now = ctx.now ?? Date.now
  if (ctx.defaultMetrics !== false)
    collectDefaultMetrics({ register: registry, prefix: ctx.defaultPrefix ?? 'filterd_api_' })
  const metrics = snapshotMetrics(registry)
  const store = ctx.store
  if (store !== undefined) {
    void new Gauge({
      name: 'filterd_store_generation',
      help: 'policy generation of the store',
      registers: [registry],
      collect() {
        this.set(store.generation())
      }
    })
  }
  const histName = 'filterd_dns_upstream_latency_ms'
  const latency = rawHistogram(registry, histName, 'upstream round-trip time in milliseconds')
  const perResolver = resolverMetrics(registry)
  const perTransport = transportMetrics(registry)
  const perFeed = feedMetrics(registry)

  // Scrapes run one at a time: each resets the metrics and fills them from the snapshots it read.
  let chain: Promise<unknown> = Promise.resolve()
  const render = async (): Promise<string> => {
    const t = now()
    const snaps = await readSnapshots(dir, t)
    for (const m of Object.values(metrics)) m.reset()
    perResolver.reset()
    perTransport.reset()
    perFeed.reset()
    const hist: HistValue[] = []
    for (const [proc, s] of snaps) {
      addSnapshot(metrics, proc, s, t)
      pushHistogram(hist, histName, { process: proc }, s.upstream.buckets, s.upstream)
      for (const r of s.resolvers ?? []) perResolver.add(proc, r)
      perTransport.add(proc, s.transports ?? [])
      for (const f of s.rpzFeeds ?? []) perFeed.add(proc, f)
    }
    latency.values = hist
    return await registry.metrics()
  }
  server.route('GET', '/metrics', async (_req, res) => {
    const p = chain.then(render)
    chain = p.catch(() => {})
    res.header('Content-Type', registry.contentType).send(await p)
  })
  return registry
}
