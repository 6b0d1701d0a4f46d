/**
 * The `sync` role (`filterd sync --config FILE`): with `common.redis-ip` set, keeps this host's LMDB
 * store a replica of the shared Redis store (engine/replica/follower.ts). `filterd all` starts it only
 * when Redis is configured. Its listener (`sync.listen`, loopback by default) serves
 *
 *   GET /health   200 with the replication state while the replica is current or merely lagging
 *                 behind a working Redis; 503 while Redis is down, lost its data, or holds another
 *                 store, or before the first bootstrap completes (the replica still serves DNS)
 *   GET /metrics  Prometheus: filterd_replica_state{state}, _lag_records, _lag_seconds,
 *                 _applied_seq, _applied_records_total, _applied_ops_total, _skipped_ops_total,
 *                 _bootstraps_total, _seconds_since_current
 *
 * It also ships this host's closed statistics files (`stats.dir`, written by the dns role) to the
 * shared stats stream every `stats.import-interval` (engine/replica/stats.ts): every host sharing
 * Redis runs this role, a DNS-only host included, so every host's queries reach the reports, which
 * the api roles apply from the stream. Only this role ships, so a host ships from one place.
 */
import { hostname } from 'node:os'
import { Counter, Gauge, Registry } from 'prom-client'
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { createHttpServer, listenOrUndo, roleHttpImpl } from '../engine/http/index.js'
import { FOLLOWER_STATES, Follower } from '../engine/replica/follower.js'
import { connectSharedStore, sharedStoreSettings } from '../engine/replica/redis.js'
import { startStatsShipper, statsKeys } from '../engine/replica/stats.js'
import type { RoleContext, RunningRole } from '../engine/role.js'
import { openConfiguredStore } from '../engine/store/index.js'
import { healthReport, type HealthReport } from '../engine/health/index.js'

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

export async function startRole (ctx: RoleContext): Promise<RunningRole> {
  const { config, logger } = ctx
  const settings = sharedStoreSettings(config)
  if (settings === undefined) {
    logger.info('common.redis-ip is not set: one host, nothing to follow')
    return { endpoints: ['sync idle (no common.redis-ip)'], close: async () => {} }
  }
  const store = openConfiguredStore(config)
  const follower = new Follower(store, settings, { logger })
  const { status } = follower

  const registry = new Registry()
  void new Gauge({
    name: 'filterd_replica_state',
    help: 'replication state of this host\'s replica (1 for the current state)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect () { for (const s of FOLLOWER_STATES) this.set({ state: s }, s === status.state ? 1 : 0) }
  })
  const gauge = (name: string, help: string, read: () => number): void => {
    void new Gauge({ name, help, registers: [registry], collect () { this.set(read()) } })
  }
  gauge('filterd_replica_lag_records', 'change records in Redis not yet applied here (when last seen)', () => status.lagRecords)
  gauge('filterd_replica_lag_seconds', 'time from a change record\'s creation in Redis to its apply here (last record)', () => status.lagMs / 1000)
  gauge('filterd_replica_applied_seq', 'sequence number of the last applied change record', () => status.appliedSeq)
  gauge('filterd_replica_seconds_since_current', 'seconds since the replica was last known to hold every record (-1: never)', () => status.currentAt === 0 ? -1 : (Date.now() - status.currentAt) / 1000)
  gauge('filterd_store_generation', 'policy generation of the local store', () => store.generation())
  const applied = new Counter({ name: 'filterd_replica_applied_records_total', help: 'change records applied since start', registers: [registry] })
  const boots = new Counter({ name: 'filterd_replica_bootstraps_total', help: 'bootstraps from a Redis snapshot since start', registers: [registry] })
  const appliedOps = new Counter({ name: 'filterd_replica_applied_ops_total', help: 'key changes written to the replica since start (bootstrap copies and applied records)', registers: [registry] })
  const skippedOps = new Counter({ name: 'filterd_replica_skipped_ops_total', help: 'key changes a bootstrap skipped because the replica already held that version or a newer one', registers: [registry] })
  let seen = { applied: 0, boots: 0, appliedOps: 0, skippedOps: 0 }
  const syncCounters = (): void => {
    applied.inc(status.appliedRecords - seen.applied)
    boots.inc(status.bootstraps - seen.boots)
    appliedOps.inc(status.appliedOps - seen.appliedOps)
    skippedOps.inc(status.skippedOps - seen.skippedOps)
    seen = { applied: status.appliedRecords, boots: status.bootstraps, appliedOps: status.appliedOps, skippedOps: status.skippedOps }
  }

  // Load balancers' and monitoring's health checks (HAProxy's default speaks HTTP/1.0): node:http under `auto`.
  const http = createHttpServer({ impl: roleHttpImpl(config.common['http-server'], 'public'), bodyLimit: 1024, logger: { warn: (m) => { logger.warn(m) } } })
  const endpoints: string[] = []
  // The shared /health shape (engine/health), with the replica's state as its state.
  const health = (): HealthReport => healthReport({
    role: 'sync',
    listeners: endpoints,
    state: status.state,
    problems: status.state === 'following' ? [] : [{ what: 'replica', why: REPLICA_STATES[status.state] ?? status.state }],
    generation: store.generation(),
    extra: {
      redis: settings.where,
      epoch: status.epoch ?? null,
      appliedSeq: status.appliedSeq,
      redisSeq: status.redisSeq,
      lagRecords: status.lagRecords,
      lagMs: status.lagMs,
      secondsSinceCurrent: status.currentAt === 0 ? null : (Date.now() - status.currentAt) / 1000
    }
  })
  http.route('GET', '/health', (_req, res) => {
    // 200 while the replica is current or catching up behind a working Redis (a load balancer keeps the host).
    const healthy = status.state === 'following' || status.state === 'bootstrapping' || status.state === 'initializing'
    res.json(health(), healthy ? 200 : 503)
  })
  http.route('GET', '/metrics', async (_req, res) => {
    syncCounters()
    res.header('Content-Type', registry.contentType).send(await registry.metrics())
  })
  const listen = parseHostPort(config.sync.listen)
  const port = await listenOrUndo(http, listen.host, listen.port, async () => { await store.close() })
  follower.start()
  const shipper = startStatsShipper(connectSharedStore(settings, { commandTimeout: 6000 }), statsKeys(config.common['redis-prefix'] ?? 'filterd:'),
    config.common['host-id'] ?? hostname(), config.stats.dir, config.stats['import-interval'] * 1000, logger)
  endpoints.push(`sync http ${formatHostPort({ host: listen.host, port })} (/health, /metrics) following ${settings.where}, shipping ${config.stats.dir}`)
  return {
    endpoints,
    health,
    async close () {
      await http.close()
      await shipper.close()
      await follower.close()
      await store.close()
    }
  }
}
