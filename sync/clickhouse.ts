/**
 * The sync role with `stats.store: clickhouse`: this host's closed statistics files go to ClickHouse
 * (engine/clickhouse/feed.ts), Redis or not. The sync role sends them because it is the one role every
 * host runs, a DNS-only host included, and the one that already reads `stats.dir` for the other hosts
 * (segments); the api role's importer runs only where the reports are served. With ClickHouse no
 * segment is made or served: every api host reads the same ClickHouse. Its listener (`sync.listen`):
 *
 *   GET /health   200 while ClickHouse takes the rows; 503 with the reason while it does not (the DNS
 *                 service is not affected: its files wait in stats.dir)
 *   GET /metrics  filterd_clickhouse_rows_sent_total, _batches_sent_total, _batches_found_total,
 *                 _send_errors_total, _spool_files, _spool_bytes, _spool_dropped_files_total,
 *                 _spool_dropped_rows_total
 */
import { Counter, Gauge, Registry } from 'prom-client'
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { startClickHouseFeed, type ClickHouseFeed, type SinkCounts } from '../engine/clickhouse/index.js'
import { healthReport, type HealthReport } from '../engine/health/index.js'
import { createHttpServer, roleHttpImpl } from '../engine/http/index.js'
import { startWithStack, type RoleContext, type RunningRole } from '../engine/role.js'

export async function startClickHouseSync(ctx: RoleContext): Promise<RunningRole> {
  const { config, logger } = ctx
  return await startWithStack(async (stack) => {
    const feed = stack.own(startClickHouseFeed(config, logger))
    const metrics = feedMetrics(feed.counts)
    const http = createHttpServer({
      impl: roleHttpImpl(config.common['http-server'], 'public'),
      bodyLimit: 1024,
      logger: { warn: (m) => logger.warn(m) }
    })
    const health = (): HealthReport => feedHealth(feed, stack.endpoints)
    http.route('GET', '/health', (_req, res) => {
      const report = health()
      res.json(report, report.ok ? 200 : 503)
    })
    http.route('GET', '/metrics', async (_req, res) => {
      res.header('Content-Type', metrics.contentType).send(await metrics.metrics())
    })
    const listen = parseHostPort(config.sync.listen)
    const { port } = await http.listen(listen.host, listen.port)
    // The listener closes before the feed: no health check sees the role half closed.
    stack.own(http)
    stack.endpoints.push(
      `sync http ${formatHostPort({ host: listen.host, port })} (/health, /metrics): statistics of ${config.stats.dir} to ClickHouse database ${config.stats.clickhouse.database}`
    )
    return { health }
  })
}

function feedHealth(feed: ClickHouseFeed, endpoints: readonly string[]): HealthReport {
  const failing = feed.failing()
  return healthReport({
    role: 'sync',
    listeners: endpoints,
    problems: failing === undefined ? [] : [{ what: 'clickhouse', why: failing }],
    extra: { spoolFiles: feed.counts.spoolFiles, spoolBytes: feed.counts.spoolBytes }
  })
}

function feedMetrics(counts: SinkCounts): Registry {
  const registry = new Registry()
  const counter = (name: string, help: string, key: keyof SinkCounts): void => {
    void new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset()
        this.inc(counts[key])
      }
    })
  }
  const gauge = (name: string, help: string, key: keyof SinkCounts): void => {
    void new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(counts[key])
      }
    })
  }
  counter('filterd_clickhouse_rows_sent_total', 'query-log rows this host sent to ClickHouse', 'rowsSent')
  counter('filterd_clickhouse_batches_sent_total', 'inserts this host made (one batch each)', 'batchesSent')
  counter(
    'filterd_clickhouse_batches_found_total',
    'batches in doubt (after a restart or a failure) found already in ClickHouse, not sent again',
    'batchesFound'
  )
  counter(
    'filterd_clickhouse_views_completed_total',
    'aggregate tables given a batch found in doubt that a ClickHouse killed mid-insert had left them without',
    'viewsCompleted'
  )
  counter(
    'filterd_clickhouse_send_errors_total',
    'passes that ended because ClickHouse did not take a batch',
    'sendErrors'
  )
  gauge('filterd_clickhouse_spool_files', 'closed statistics files waiting in stats.dir for ClickHouse', 'spoolFiles')
  gauge('filterd_clickhouse_spool_bytes', 'their bytes (bounded by stats.clickhouse.spool-max-bytes)', 'spoolBytes')
  counter(
    'filterd_clickhouse_spool_dropped_files_total',
    'files dropped because the spool was full (the oldest first)',
    'droppedFiles'
  )
  counter('filterd_clickhouse_spool_dropped_rows_total', 'rows of those files: lost', 'droppedRows')
  return registry
}
