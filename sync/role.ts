/**
 * The `sync` role (`filterd sync --config FILE`): with `common.redis-ip` set, keeps this host's LMDB
 * store a replica of the shared Redis store (engine/replica/follower.ts). `filterd all` starts it only
 * when Redis is configured. Its listener (`sync.listen`, loopback by default) serves
 *
 *   GET /health   200 with the replication state while the replica is current or merely lagging
 *                 behind a working Redis; 503 while Redis is down, lost its data, or holds another
 *                 store, or before the first bootstrap completes (the replica still serves DNS),
 *                 and while the replica holds changes that did not come from Redis (`diverged`:
 *                 engine/replica/audit.ts), with the reason
 *   GET /metrics  Prometheus: filterd_replica_state{state}, _lag_records, _lag_seconds,
 *                 _applied_seq, _applied_records_total, _applied_ops_total, _skipped_ops_total,
 *                 _bootstraps_total, _seconds_since_current, _diverged{reason}, _divergent_keys,
 *                 _audit_passes_total
 *
 * It also turns this host's closed statistics files (`stats.dir`, written by the dns role) into
 * segments every `stats.import-interval`, registers them in Redis (metadata only) and serves them
 *
 *   GET /stats/segments/<host>/<file>.parquet   to the bearer of the segment's token (from Redis)
 *
 * (engine/replica/segments.ts): every host sharing Redis runs this role, a DNS-only host included,
 * so every host's queries reach the reports, which the api roles fetch and apply. Only this role
 * produces segments, so a host produces from one place.
 */
import { hostname } from 'node:os'
import { join } from 'node:path'
import { Counter, Gauge, Registry } from 'prom-client'
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { createHttpServer, roleHttpImpl } from '../engine/http/index.js'
import {
  diverged,
  FOLLOWER_STATES,
  Follower,
  type Divergence,
  type FollowerStatus,
  connectSharedStore,
  sharedStoreSettings,
  segmentKeys,
  segmentSecret,
  serveSegments,
  startSegmentProducer,
  statsKeys
} from '../engine/replica/index.js'
import { openSegmentWriter } from '../engine/stats/index.js'
import { startWithStack, type RoleContext, type RunningRole } from '../engine/role.js'
import { openConfiguredStore, type Store } from '../engine/store/index.js'
import { healthReport, type HealthProblem, type HealthReport } from '../engine/health/index.js'
import { usesClickHouse } from '../engine/clickhouse/index.js'
import { startClickHouseSync } from './clickhouse.js'

/** Why the replica is not `following`, in an operator's words (docs/operations-redis.md has the steps). */
const REPLICA_STATES: Readonly<Record<string, string>> = {
  starting: 'starting',
  initializing: 'starting: the replica has not reached Redis yet',
  bootstrapping: 'copying the shared store from Redis (the replica keeps serving)',
  'redis-down': 'Redis is down or unreachable: the replica serves what it has, API writes are refused',
  'redis-lost': 'Redis lost its data: reseed it (filterd redis-seed)',
  'redis-behind': 'Redis lost change records this host applied: filterd redis-seed --force or --adopt',
  'epoch-mismatch': 'Redis holds another store than this host replicates',
  stopped: 'stopped'
}

export async function startRole(ctx: RoleContext): Promise<RunningRole> {
  const { config, logger } = ctx
  // ClickHouse holds every host's statistics: this role sends this host's (sync/clickhouse.ts).
  if (usesClickHouse(config)) return await startClickHouseSync(ctx)
  const settings = sharedStoreSettings(config)
  if (settings === undefined) {
    logger.info('common.redis-ip is not set: one host, nothing to follow')
    return { endpoints: ['sync idle (no common.redis-ip)'], close: async () => {} }
  }
  return await startWithStack(async (stack) => {
    const store = stack.own(openConfiguredStore(config))
    const follower = new Follower(store, settings, { logger })
    const { status } = follower

    const metrics = replicaMetrics(status, store)

    // Load balancers' and monitoring's health checks (HAProxy's default speaks HTTP/1.0): node:http under `auto`.
    const http = createHttpServer({
      impl: roleHttpImpl(config.common['http-server'], 'public'),
      bodyLimit: 1024,
      logger: {
        warn: (m) => {
          logger.warn(m)
        }
      }
    })
    const health = (): HealthReport => syncHealth(status, store, settings.where, stack.endpoints)
    http.route('GET', '/health', (_req, res) => {
      // 200 while the replica is current or catching up behind a working Redis (a load balancer keeps the
      // host); 503 when it diverged from Redis or Redis is away.
      const healthy =
        !diverged(status.divergence) &&
        (status.state === 'following' || status.state === 'bootstrapping' || status.state === 'initializing')
      res.json(health(), healthy ? 200 : 503)
    })
    http.route('GET', '/metrics', async (_req, res) => {
      res.header('Content-Type', metrics.contentType).send(await metrics.render())
    })
    const listen = parseHostPort(config.sync.listen)
    // This host's statistics as segments that the other hosts fetch from this listener (engine/replica/segments.ts).
    const segDir = config.stats['segments-dir'] ?? join(config.stats.dir, 'segments')
    const secret = await segmentSecret(segDir)
    serveSegments(http, segDir, secret)
    const { port } = await http.listen(listen.host, listen.port)
    follower.start()
    stack.own(follower)
    const prefix = config.common['redis-prefix'] ?? 'filterd:'
    stack.own(
      startSegmentProducer(connectSharedStore(settings, { commandTimeout: 6000 }), segmentKeys(prefix), {
        host: config.common['host-id'] ?? hostname(),
        statsDir: config.stats.dir,
        segDir,
        url: config.sync['segments-url'] ?? `http://${formatHostPort({ host: listen.host, port })}`,
        secret,
        retentionMs: config.stats['segments-retention'] * 1000,
        writer: openSegmentWriter({ memoryLimit: config.stats['duckdb-memory'], threads: 1, logger }),
        streamKeys: statsKeys(prefix),
        intervalMs: config.stats['import-interval'] * 1000,
        logger
      })
    )
    // The listener closes first: no health check sees the role half closed.
    stack.own(http)
    stack.endpoints.push(
      `sync http ${formatHostPort({ host: listen.host, port })} (/health, /metrics, /stats/segments) following ${settings.where}, segments of ${config.stats.dir} in ${segDir}`
    )
    return { health }
  })
}

/** The shared /health shape (engine/health), with the replica's state as its state. */
function syncHealth(status: FollowerStatus, store: Store, redis: string, endpoints: string[]): HealthReport {
  const split = diverged(status.divergence)
  const report = split ? divergenceReport(status.divergence) : undefined
  const problems: HealthProblem[] = []
  if (status.state !== 'following')
    problems.push({ what: 'replica', why: REPLICA_STATES[status.state] ?? status.state })
  if (report !== undefined) problems.push({ what: 'divergence', why: report.reason })
  return healthReport({
    role: 'sync',
    listeners: endpoints,
    state: status.state,
    problems,
    generation: store.generation(),
    extra: {
      ...(report !== undefined ? { diverged: report } : {}),
      redis,
      epoch: status.epoch ?? null,
      appliedSeq: status.appliedSeq,
      redisSeq: status.redisSeq,
      lagRecords: status.lagRecords,
      lagMs: status.lagMs,
      secondsSinceCurrent: status.currentAt === 0 ? null : (Date.now() - status.currentAt) / 1000
    }
  })
}

/** /health's account of a replica that diverged: why, in the operator's words, and what was found. */
function divergenceReport(d: Divergence): {
  reason: string
  keys: number
  examples: readonly string[]
  foreignGeneration: boolean
} {
  const why: string[] = []
  if (d.keys > 0)
    why.push(`${d.keys} key(s) here that Redis does not hold or holds with another value (${d.examples.join(', ')})`)
  if (d.foreignGeneration) why.push('the store generation was moved by a writer that did not go through Redis')
  return {
    reason: `this replica holds changes that did not come from Redis: ${why.join('; ')}. A role or command without common.redis-ip, or a tool, wrote this host's LMDB; see docs/operations-redis.md, "A replica that diverged"`,
    keys: d.keys,
    examples: d.examples,
    foreignGeneration: d.foreignGeneration
  }
}

/** The sync role's Prometheus registry over the follower's status; `render` brings the counters up to date first. */
function replicaMetrics(status: FollowerStatus, store: Store): { contentType: string; render: () => Promise<string> } {
  const registry = new Registry()
  void new Gauge({
    name: 'filterd_replica_state',
    help: "replication state of this host's replica (1 for the current state)",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      for (const s of FOLLOWER_STATES) this.set({ state: s }, s === status.state ? 1 : 0)
    }
  })
  const gauge = (name: string, help: string, read: () => number): void => {
    void new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read())
      }
    })
  }
  gauge(
    'filterd_replica_lag_records',
    'change records in Redis not yet applied here (when last seen)',
    () => status.lagRecords
  )
  gauge(
    'filterd_replica_lag_seconds',
    "time from a change record's creation in Redis to its apply here (last record)",
    () => status.lagMs / 1000
  )
  gauge('filterd_replica_applied_seq', 'sequence number of the last applied change record', () => status.appliedSeq)
  gauge(
    'filterd_replica_seconds_since_current',
    'seconds since the replica was last known to hold every record (-1: never)',
    () => (status.currentAt === 0 ? -1 : (Date.now() - status.currentAt) / 1000)
  )
  gauge('filterd_store_generation', 'policy generation of the local store', () => store.generation())
  gauge(
    'filterd_replica_divergent_keys',
    'keys the last audit pass found in this replica that Redis does not hold, or holds with another value',
    () => status.divergence.keys
  )
  void new Gauge({
    name: 'filterd_replica_diverged',
    help: "whether this replica holds changes that did not come from Redis (1), by reason: keys (the audit) or generation (bumped by a writer behind the replica's back)",
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.set({ reason: 'keys' }, status.divergence.keys > 0 ? 1 : 0)
      this.set({ reason: 'generation' }, status.divergence.foreignGeneration ? 1 : 0)
    }
  })
  const syncCounters = replicaCounters(registry, status)
  return {
    contentType: registry.contentType,
    render: async () => {
      syncCounters()
      return await registry.metrics()
    }
  }
}

/**
 * The follower's since-start counts as Prometheus counters; the function returned brings them up to
 * date (each scrape adds what was counted since the last one).
 */
function replicaCounters(registry: Registry, status: FollowerStatus): () => void {
  // The follower counts since start; each scrape adds what it counted since the last one.
  const syncs: Array<() => void> = []
  const counter = (name: string, help: string, read: () => number): void => {
    const c = new Counter({ name, help, registers: [registry] })
    let seen = 0
    syncs.push(() => {
      const v = read()
      c.inc(v - seen)
      seen = v
    })
  }
  counter('filterd_replica_applied_records_total', 'change records applied since start', () => status.appliedRecords)
  counter('filterd_replica_bootstraps_total', 'bootstraps from a Redis snapshot since start', () => status.bootstraps)
  counter(
    'filterd_replica_applied_ops_total',
    'key changes written to the replica since start (bootstrap copies and applied records)',
    () => status.appliedOps
  )
  counter(
    'filterd_replica_skipped_ops_total',
    'key changes a bootstrap skipped because the replica already held that version or a newer one',
    () => status.skippedOps
  )
  counter(
    'filterd_replica_audit_passes_total',
    'full audit passes comparing this replica with Redis since start',
    () => status.auditPasses
  )
  return () => {
    for (const sync of syncs) sync()
  }
}
