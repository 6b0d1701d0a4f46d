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
 *   filterd_dns_upstream_pending{process}                   forwarded client queries waiting for an upstream answer
 *   filterd_dns_upstream_withdrawn_total{process}           forwarded queries dropped because their client went away first
 *   filterd_dns_udp_truncated_total{process}                upstream answers larger than the client's UDP size, sent truncated (TC)
 *   filterd_dns_tcp_refused_total{process,reason}           TCP connections closed on accept: per-source cap, table full
 *   filterd_dns_tcp_evicted_total{process,reason}           TCP connections closed early to make room: idle, slow (unfinished message)
 *   filterd_stats_rows_written_total{process}, filterd_stats_rows_dropped_total{process}
 *   filterd_metrics_snapshot_age_seconds{process}
 *   filterd_store_generation                                 the policy generation the api sees
 *   filterd_rpz_feed_*{process,zone}                         the RPZ feeds taken in (serial, records, last success, errors, unsupported triggers)
 *   filterd_api_* (prom-client's default process metrics of the api process)
 *
 * This module is the hub only: the snapshot's head (`v`, `pid`, `updated`), its publisher and
 * reader, and the route. What a snapshot carries, and the metrics made of it, each feature says
 * itself as a `SnapshotMetrics` (the DNS front's counters in ./dns.ts, the RPZ feeds in
 * engine/rpz-feeds/feed-metrics.ts, the certificates in engine/tls/metrics.ts); the roles that serve
 * /metrics hand the route their list (engine/features.ts, `DNS_SNAPSHOT_METRICS`), and the DNS
 * process's counters themselves live in the dns role (dns/metrics.ts).
 */
import { mkdir, readFile, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { dirname, join, resolve } from 'node:path'
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import type { Config } from '../config/index.js'
import type { HttpServer } from '../http/index.js'

/**
 * What every snapshot holds; each feature's part is a key of its own beside these (the DNS front's
 * counters, `rpzFeeds`, `tlsCerts`, ...), which the feature reads back itself.
 */
export interface MetricsSnapshot {
  v: 1
  /** The process's pid (information only: never a label, since it changes with every restart). */
  pid: number
  updated: number
  readonly [part: string]: unknown
}

/** What a publisher writes: the process's snapshot, its statistics rows given (`queryLog`). */
export interface SnapshotSource {
  snapshot(statsRows?: { writtenRows: number; droppedRows: number }): MetricsSnapshot
}

/**
 * One feature's metrics made of the DNS processes' snapshots: registers them on a /metrics registry,
 * and says how a scrape fills them: `reset`, then `add` for each process's snapshot (`process` is
 * its label, `now` the scrape's time), then `done` when all were added.
 */
export type SnapshotMetrics = (registry: Registry) => {
  reset(): void
  add(process: string, snapshot: Readonly<MetricsSnapshot>, now: number): void
  done?(): void
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
  metrics: SnapshotSource,
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

/**
 * Reads the fresh snapshots of `dir`, keyed by process label. `S` is the shape the caller knows the
 * publishing processes write (a DNS process: dns/metrics.ts `DnsSnapshot`); only the head is checked.
 */
export async function readSnapshots<S extends MetricsSnapshot = MetricsSnapshot>(
  dir: string,
  now = Date.now(),
  maxAgeMs = 300_000
): Promise<Map<string, S>> {
  const out = new Map<string, S>()
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
      const snap = JSON.parse(await readFile(join(dir, name), 'utf8')) as S
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
  /** The features whose part of each snapshot the route shows (engine/features.ts, `DNS_SNAPSHOT_METRICS`). */
  readonly parts?: readonly SnapshotMetrics[]
}

export type HistValue = { metricName: string; labels: Record<string, string | number>; value: number }

// prom-client has no histogram whose buckets can be set from outside, so a histogram read from a
// snapshot is a plain metric object in the shape the registry renders (the same shape its own
// Histogram returns), whose values each scrape replaces.
export function rawHistogram(registry: Registry, name: string, help: string): { values: HistValue[] } {
  const holder = { values: [] as HistValue[] }
  registry.registerMetric({
    name,
    help,
    get: async () => ({ name, help, type: 'histogram', aggregator: 'sum', values: holder.values })
  } as never)
  return holder
}

// Appends one histogram's cumulative buckets, sum and count (from per-bucket counts) to `out`.
export function pushHistogram(
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

/** Mounts `GET /metrics` (Prometheus text format 0.0.4) on `server`; returns its registry. */
export function registerMetricsRoute(server: HttpServer, ctx: MetricsRouteContext): Registry {
  const registry = new Registry()
  const dir = metricsDir(ctx.config)
  const now = ctx.now ?? Date.now
  if (ctx.defaultMetrics !== false)
    collectDefaultMetrics({ register: registry, prefix: ctx.defaultPrefix ?? 'filterd_api_' })
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
  const parts = (ctx.parts ?? []).map((register) => register(registry))

  // Scrapes run one at a time: each resets the metrics and fills them from the snapshots it read.
  let chain: Promise<unknown> = Promise.resolve()
  const render = async (): Promise<string> => {
    const t = now()
    const snaps = await readSnapshots(dir, t)
    for (const part of parts) part.reset()
    for (const [proc, s] of snaps) for (const part of parts) part.add(proc, s, t)
    for (const part of parts) part.done?.()
    return await registry.metrics()
  }
  server.route('GET', '/metrics', async (_req, res) => {
    const p = chain.then(render)
    chain = p.catch(() => {})
    res.header('Content-Type', registry.contentType).send(await p)
  })
  return registry
}
