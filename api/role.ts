/**
 * The `api` role (`filterd api --config FILE`): opens the shared store, loads the taxonomy in the configured
 * language, and serves the management API on `api.listen`. The spec wants the daemon on loopback with the
 * front door (blockpage role, blockpage/front-door.ts) as the only way in from outside; callers other than
 * loopback present an API client's credentials (auth.ts). A non-loopback listen address without
 * `api.require-credentials` is allowed but warned about.
 */
import { storedFeedsFromConfig } from '../engine/rpz-feeds/index.js'
import { parseHostPort, formatHostPort } from '../engine/config/index.js'
import { loadTaxonomy } from '../engine/categories/index.js'
import { CategoryDb } from '../engine/catdb/index.js'
import { openConfiguredStore } from '../engine/store/index.js'
import { startWithStack, type RoleContext, type RunningRole } from '../engine/role.js'
import { registerMetricsRoute } from '../engine/metrics/index.js'
import { DNS_SNAPSHOT_METRICS } from '../engine/features.js'
import {
  healthReport,
  registerHealthRoute,
  storeGeneration,
  type HealthProblem,
  type HealthReport
} from '../engine/health/index.js'
import {
  duckdbReports,
  openReopeningStatsDb,
  startSnapshotResponder,
  startStatsImporter,
  statsDbOptions,
  warnIfUnmigrated,
  type LastImport,
  type ReopeningStatsDb,
  type StatsDbOptions,
  type StatsImporter,
  registerSegmentMetrics,
  type SegmentApplier
} from '../engine/stats/index.js'
import {
  clickhouseSettings,
  openClickHouse,
  openClickHouseReading,
  usesClickHouse,
  type ClickHouseReading
} from '../engine/clickhouse/index.js'
import { roleHttpImpl } from '../engine/http/index.js'
import { createApiServer } from './server.js'
import { startUsageReporter } from './usage-report.js'
import { linkSharedStore } from './shared-store.js'
import { createListRefresher } from './lists.js'
import { registerListMetrics } from '../engine/lists/index.js'
function isLoopback(host: string): boolean {
  return host === '::1' || host.startsWith('127.')
}

/** The role's /health: the store's generation and, without Redis, how the last statistics import went. */
function apiHealth(
  store: ReturnType<typeof openConfiguredStore>,
  endpoints: string[],
  stats: {
    importer?: { readonly last: LastImport | undefined }
    segments?: SegmentApplier
    store: { readonly unavailable: string | undefined; readonly file: string }
    clickhouse?: ClickHouseReading
  },
  redis: string | undefined
): HealthReport {
  const last = stats.importer?.last
  const gaps = stats.segments?.gaps ?? {}
  const problems: HealthProblem[] = []
  const generation = storeGeneration(() => store.generation(), problems)
  if (stats.store.unavailable !== undefined)
    problems.push({
      what: 'stats-store',
      why: `the statistics store ${stats.store.file} is unavailable (reports answer 503, it is opened again by itself): ${stats.store.unavailable}`
    })
  const away = stats.clickhouse?.unavailable()
  if (away !== undefined)
    problems.push({
      what: 'clickhouse',
      why: `the ClickHouse statistics store is unavailable (reports answer 503, its schema is made once it answers): ${away}`
    })
  // Without Redis this role imports the statistics files; with it, the sync role's /health says how Redis is.
  if (last !== undefined && 'error' in last)
    problems.push({ what: 'stats-import', why: `the last statistics import failed: ${last.error}` })
  // With Redis: segments another host's retention removed before this host applied them.
  for (const [host, n] of Object.entries(gaps))
    problems.push({
      what: 'stats-gap',
      why: `${n} statistics segment(s) of host ${host} expired before this host applied them: its reports lack their rows (docs/operations-redis.md, A statistics gap)`
    })
  return healthReport({
    role: 'api',
    listeners: endpoints,
    problems,
    ...(generation === undefined ? {} : { generation }),
    extra: {
      statsImport: last ?? null,
      ...(redis === undefined ? {} : { redis, statsGaps: gaps })
    }
  })
}

/** A non-loopback listener without credentials is allowed, but said loudly. */
function warnIfOpen(config: RoleContext['config'], host: string, logger: RoleContext['logger']): void {
  if (isLoopback(host) || config.api['require-credentials']) return
  logger.warn(
    { listen: config.api.listen },
    'api.require-credentials is off and api.listen is not loopback: anyone who reaches this port may change any user; listen on loopback and let the front door apply api.access'
  )
}

/** The statistics store's bounds, and its work as background work beside a DNS server (stats.import-priority, engine/stats/priority.ts). */
function statsStoreOptions(config: RoleContext['config'], logger: RoleContext['logger']): StatsDbOptions {
  return {
    ...statsDbOptions(config),
    priority: config.stats['import-priority'],
    onPriorityError: (err) =>
      logger.warn(
        { err },
        'statistics: cannot set the CPU priority of the statistics threads as stats.import-priority says'
      )
  }
}

/** The statistics store, opened again by itself whenever it cannot be used; each outage logged. */
function openStatsStore(config: RoleContext['config'], logger: RoleContext['logger']): ReopeningStatsDb {
  const statsDb = openReopeningStatsDb(config.stats.db, statsStoreOptions(config, logger), {
    onUnavailable: (reason) => {
      logger.error(
        { reason },
        'the statistics store is unavailable: reports answer 503 API_STATS_UNAVAILABLE, everything else is served; opening it again with backoff (docs/backup.md, "A statistics store that cannot be opened")'
      )
    },
    onAvailable: () => {
      logger.info({ file: statsDb.file }, 'the statistics store is open again')
    }
  })
  return statsDb
}

/** The ClickHouse store's reports, its schema made at start and again with backoff while ClickHouse is away. */
function openClickHouseStore(config: RoleContext['config'], logger: RoleContext['logger']): ClickHouseReading {
  const settings = clickhouseSettings(config)
  return openClickHouseReading(openClickHouse(settings), statsDbOptions(config).retention, {
    onUnavailable: (reason) =>
      logger.error(
        { reason, url: settings.url },
        'ClickHouse statistics store unavailable: reports answer 503 API_STATS_UNAVAILABLE, everything else is served; its schema is made again with backoff'
      ),
    onMigrated: (applied) =>
      logger.info(
        { url: settings.url, database: settings.database, applied },
        applied.length === 0 ? 'ClickHouse statistics schema up to date' : 'ClickHouse statistics schema migrated'
      )
  })
}

export async function startRole(ctx: RoleContext): Promise<RunningRole> {
  return await startWithStack(async (stack) => {
    const { config, logger } = ctx
    const listen = parseHostPort(config.api.listen)
    const taxonomy = loadTaxonomy(config.datafiles.cats, config.datafiles.language)
    // The store with the config file's initial /config/ values (common.safesearchredirect).
    const store = stack.own(openConfiguredStore(config))
    const categories = new CategoryDb(store)
    // Several hosts: policy writes go to the shared Redis store (common.redis-ip), reads stay local.
    const shared = await linkSharedStore(config, store, logger)
    stack.defer(() => shared?.close())
    // The statistics reports and /metrics share the listener, and so the front door's access rules.
    // The api role is the statistics store's one writer (DuckDB: one process opens the file read-write).
    // A store that cannot be opened or that DuckDB invalidated costs the reports only (503), never the
    // role: it is opened again by itself (engine/stats/reopening.ts), and /health names it meanwhile.
    const statsDb = stack.own(openStatsStore(config, logger))
    await statsDb.ready
    warnIfUnmigrated(config.stats.db, logger)
    const lists = stack.own(createListRefresher(config, store, logger, shared, taxonomy))
    // With ClickHouse the reports read it (every api host the same one), its schema made or upgraded here.
    const clickhouse = usesClickHouse(config) ? stack.own(openClickHouseStore(config, logger)) : undefined
    await clickhouse?.ready
    const reports = clickhouse?.reports ?? duckdbReports(statsDb)
    const server = createApiServer({
      // The feeds as the dns role of this host keeps them in the store (engine/rpz-feeds/feed-store.ts).
      feeds: storedFeedsFromConfig(config, store),
      store,
      taxonomy,
      taxonomyDir: config.datafiles.cats,
      categories,
      config,
      logger,
      impl: roleHttpImpl(config.common['http-server'], 'public'),
      stats: { db: statsDb, timezone: config.stats.timezone, reports },
      lists
    })
    const stats: { importer?: StatsImporter; segments?: SegmentApplier } = {}
    const health = (): HealthReport =>
      apiHealth(store, stack.endpoints, { ...stats, store: statsDb, ...(clickhouse && { clickhouse }) }, shared?.where)
    registerHealthRoute(server.http, health)
    const registry = registerMetricsRoute(server.http, { config, store, parts: DNS_SNAPSHOT_METRICS })
    registerListMetrics(registry, store, () => lists.sources())
    const { port } = await server.listen(listen.host, listen.port)
    stack.own(server)
    // The import every few seconds of the DNS role's closed CSV files, and the usage report to the vendor.
    // With Redis, every host's files reach every host's reports through the shared store instead.
    // With ClickHouse the sync role sends the files there (sync/clickhouse.ts): no import timer here.
    const importEvery = config.stats.store === 'clickhouse' ? { intervalMs: 0 } : {}
    const running = stack.own(
      shared?.startStats(statsDb) ?? startStatsImporter(config, logger, { statsDb, ...importEvery })
    )
    if ('gaps' in running) registerSegmentMetrics(registry, (stats.segments = running))
    else stats.importer = running
    // With Redis, the hosts take turns: one report per interval for all of them.
    stack.own(startUsageReporter(config, store, logger, shared !== undefined ? { claim: shared.usageClaim } : {}))
    // `filterd backup` asks the one writer for a consistent copy of the statistics store.
    stack.own(startSnapshotResponder(statsDb, logger))
    stack.endpoints.push(
      `api http ${formatHostPort({ host: listen.host, port })} (${server.http.impl})${shared !== undefined ? `, writes to Redis ${shared.where}` : ''}`
    )
    warnIfOpen(config, listen.host, logger)
    return { health }
  })
}
