/**
 * The ClickHouse store as the api role reads it (`stats.store: clickhouse`): its schema made or upgraded
 * at start (./schema.ts, as `filterd stats-migrate` and the sync role do), the reports over it
 * (./reports.ts). ClickHouse not answering at start must not take the role down: the statistics are not
 * the service. Until the migration has run, every report throws ENGINE_CLICKHOUSE_UNAVAILABLE with the
 * reason (the API: 503 `API_STATS_UNAVAILABLE`) and the migration is tried again, after a backoff
 * doubling from one second to a minute (engine/stats's reopenBackoff, the DuckDB store's own). A report
 * that fails later (ClickHouse stopped after the start) is a 503 too; `unavailable` says why until a
 * report works again, for /health.
 */
import { EngineError, isEngineError } from '../errors.js'
import { reopenBackoff, type ReportSource, type StatsRetention } from '../stats/index.js'
import type { ClickHouseStore } from './client.js'
import { clickhouseReports } from './reports.js'
import { migrateClickHouse } from './schema.js'

export interface ClickHouseReading {
  readonly reports: ReportSource
  /** Why the reports cannot be read now (no schema yet, or the last report failed), or undefined. */
  readonly unavailable: () => string | undefined
  /** Resolves after the first migration attempt, whether it worked or not. */
  readonly ready: Promise<void>
  close(): Promise<void>
}

export interface ReadingHooks {
  /** The schema could not be made (once per outage), or a report found ClickHouse away. */
  onUnavailable(reason: string): void
  /** The schema is made or up to date; `applied`: the migrations run now. */
  onMigrated(applied: number[]): void
  firstRetryMs?: number
  maxRetryMs?: number
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err))

export function openClickHouseReading(
  store: ClickHouseStore,
  retention: StatsRetention,
  hooks: ReadingHooks
): ClickHouseReading {
  const retryDelay = reopenBackoff(hooks)
  let migrated = false
  let reason: string | undefined = 'the schema is being made'
  let failures = 0
  let timer: NodeJS.Timeout | undefined
  let closed = false

  const attempt = async (): Promise<void> => {
    if (closed) return
    try {
      const applied = await migrateClickHouse(store)
      migrated = true
      reason = undefined
      hooks.onMigrated(applied)
    } catch (err) {
      const why = `the ClickHouse statistics schema cannot be made: ${messageOf(err)}`
      if (failures === 0) hooks.onUnavailable(why)
      reason = why
      timer = setTimeout(() => void attempt(), retryDelay(failures++))
      timer.unref()
    }
  }
  const ready = attempt()

  const source = clickhouseReports(store, retention)
  /** `call` once the schema is made; ClickHouse away is remembered for /health until a report works. */
  const guarded = async <T>(call: () => Promise<T>): Promise<T> => {
    if (!migrated) throw new EngineError('ENGINE_CLICKHOUSE_UNAVAILABLE', reason ?? 'the schema is being made')
    try {
      const out = await call()
      reason = undefined
      return out
    } catch (err) {
      if (isEngineError(err) && err.code === 'ENGINE_CLICKHOUSE_UNAVAILABLE') {
        if (reason === undefined) hooks.onUnavailable(err.message)
        reason = err.message
      }
      throw err
    }
  }
  const reports: ReportSource = {
    retention,
    activityByHour: (...a) => guarded(() => source.activityByHour(...a)),
    activityByDay: (...a) => guarded(() => source.activityByDay(...a)),
    topDomains: (...a) => guarded(() => source.topDomains(...a)),
    detail: (...a) => guarded(() => source.detail(...a)),
    rawLastHour: (...a) => guarded(() => source.rawLastHour(...a)),
    blocksByCategory: (...a) => guarded(() => source.blocksByCategory(...a)),
    blockedNames: (...a) => guarded(() => source.blockedNames(...a))
  }
  return {
    reports,
    unavailable: () => reason,
    ready,
    async close() {
      closed = true
      clearTimeout(timer)
      await ready
      await store.close()
    }
  }
}
