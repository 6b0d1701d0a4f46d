/**
 * Retention of the ClickHouse store by dropping partitions whole (`ALTER TABLE … DROP PARTITION`; no
 * TTL clause, which ClickHouse 18.16 lacks): a day of the query log once it is wholly older than
 * `stats.raw-retention-hours`, a day of the aggregates before the first day `stats.retention-months`
 * keeps (engine/stats/time.ts, as the DuckDB store keeps). With a cluster, the local tables of the
 * server at `stats.clickhouse.url`: each server drops its own.
 */
import { parseDay, type ReportTime, type StatsRetention } from '../stats/index.js'
import { DAY_MS } from '../time/index.js'
import type { ClickHouseStore } from './client.js'
import { tablesOf } from './schema.js'
import { sqlString } from './sql.js'

/** Drops what retention no longer keeps at `now`; returns the partitions dropped (`table:date`). */
export async function dropExpired(
  store: ClickHouseStore,
  time: ReportTime,
  retention: StatsRetention,
  now: number
): Promise<string[]> {
  const local = tablesOf(store).local
  const suffix = store.settings.cluster === undefined ? '' : '_local'
  const parts = await store.rows(
    `SELECT DISTINCT table, partition FROM system.parts WHERE active AND database = ${sqlString(store.settings.database)} ` +
      `AND table IN (${['queries', 'hours', 'names', 'blockcats'].map((t) => sqlString(t + suffix)).join(', ')})`
  )
  const keepDay = time.aggregateRetentionStart(now, retention.months)
  const dropped: string[] = []
  for (const p of parts) {
    const table = String(p.table).replace(/_local$/, '') as 'queries' | 'hours' | 'names' | 'blockcats'
    const date = String(p.partition).replace(/^'|'$/g, '')
    const day = parseDay(date)
    if (day === undefined) continue
    const expired = table === 'queries' ? (day + 1) * DAY_MS <= now - retention.rawMs : day < keepDay
    if (!expired) continue
    await store.command(`ALTER TABLE ${local[table]} DROP PARTITION ${sqlString(date)}`)
    dropped.push(`${table}:${date}`)
  }
  return dropped.sort()
}
