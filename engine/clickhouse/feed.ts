/**
 * The sink as a running job of the sync role (sync/clickhouse.ts): every `stats.import-interval` it
 * makes sure of the schema (once per start: engine/clickhouse/schema.ts), sends the closed files
 * (engine/clickhouse/sink.ts) and, every ten minutes, drops what retention no longer keeps
 * (engine/clickhouse/retention.ts). A failure is told once when the outage starts and once when it ends,
 * not every interval; the files wait in the spool meanwhile.
 */
import { hostname } from 'node:os'
import type { Config } from '../config/index.js'
import type { Logger } from '../log/index.js'
import { ReportTime, startPeriodicJob } from '../stats/index.js'
import { HOUR_MS } from '../time/index.js'
import { openClickHouse } from './client.js'
import { dropExpired } from './retention.js'
import { migrateClickHouse } from './schema.js'
import { clickhouseSettings } from './settings.js'
import { createClickHouseSink, type SinkCounts } from './sink.js'

const RETENTION_EVERY_MS = 10 * 60_000

export interface ClickHouseFeed {
  readonly counts: SinkCounts
  /** The last failure's message while ClickHouse does not take the rows; undefined when it does. */
  readonly failing: () => string | undefined
  /** Runs a pass now (tests). */
  runNow(): Promise<number>
  close(): Promise<void>
}

export function startClickHouseFeed(config: Config, logger: Logger): ClickHouseFeed {
  const store = openClickHouse(clickhouseSettings(config))
  const time = new ReportTime(config.stats.timezone)
  const sink = createClickHouseSink(store, {
    dir: config.stats.dir,
    host: config.common['host-id'] ?? hostname(),
    time,
    batchRows: config.stats.clickhouse['batch-rows'],
    spoolMaxBytes: config.stats.clickhouse['spool-max-bytes'],
    log: {
      info: (f, m) => logger.info(f, m),
      warn: (f, m) => logger.warn(f, m),
      error: (f, m) => logger.error(f, m)
    }
  })
  let migrated = false
  let failing: string | undefined
  // Retention looks at the partitions every ten minutes at most (each host's feed does: dropping is idempotent).
  let retainedAt = 0
  const retention = { months: config.stats['retention-months'], rawMs: config.stats['raw-retention-hours'] * HOUR_MS }
  const job = startPeriodicJob(
    async () => {
      if (!migrated) {
        await migrateClickHouse(store)
        migrated = true
      }
      const sent = await sink.sendClosed()
      if (Date.now() - retainedAt >= RETENTION_EVERY_MS) {
        const dropped = await dropExpired(store, time, retention, Date.now())
        retainedAt = Date.now()
        if (dropped.length > 0) logger.info({ dropped }, 'ClickHouse statistics partitions dropped by retention')
      }
      return sent
    },
    config.stats['import-interval'] * 1000,
    {
      done: () => {
        if (failing !== undefined)
          logger.info({ url: store.settings.url }, 'ClickHouse takes the statistics again: the spool drains')
        failing = undefined
      },
      failed: (err) => {
        const message = err instanceof Error ? err.message : String(err)
        if (failing === undefined)
          logger.warn(
            { err: message, spoolBytes: sink.counts.spoolBytes },
            'ClickHouse does not take the statistics: the closed files wait in stats.dir (the spool)'
          )
        failing = message
      }
    }
  )
  return {
    counts: sink.counts,
    failing: () => failing,
    runNow: job.runNow,
    async close() {
      await job.close()
      await store.close()
    }
  }
}
