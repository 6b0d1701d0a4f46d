/**
 * Import designs measured against the importer (bench/stats/stats.bench.ts, `--designs`), on the
 * same closed CSV files, each in one transaction with the same partitions and numbers:
 *
 * - `stage`: the importer's core alone (engine/stats/import-sql.ts `importRows` over `read_csv` with
 *   explicit columns, no sniffing): a temporary stage table, one INSERT per raw hour, the partials by
 *   `GROUP BY GROUPING SETS` from the stage; no ledger, no file handling, no pruning.
 * - `direct`: `read_csv` (same explicit options) straight into the raw hour partition, the rows
 *   numbered by `row_number() OVER ()`, then the partials from the new raw rows (one hour, UTC zone:
 *   the bench's file), no stage, no per-file counts.
 *
 * A third design, the files parsed in JavaScript and appended as whole DataChunks with the partials
 * summed in JS, was measured in this bench and not kept (bench/results/2026-11-history.md, 2026-11-27).
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { hoursTable, hoursTableSql, namesTable, namesTableSql, type StatsDb } from '../../engine/stats/db.js'
import { legacyRawTable, legacyRawTableSql } from '../../engine/stats/legacy/raw-layout.js'
import { ALL_USERS, ANONYMOUS_USER, BLOCK_REASONS, CLOSED_RE } from '../../engine/querylog/files.js'
import { importRows, readCsvSql, sqlString } from '../../engine/stats/import-sql.js'
import { RAW_RETENTION_MS, ReportTime } from '../../engine/stats/time.js'

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

function closedFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => CLOSED_RE.test(n))
    .sort()
    .map((n) => join(dir, n))
}

/** Today's importer's core (the stage), in one transaction; returns the rows imported. */
export async function importByStage(db: StatsDb, dir: string, now: number): Promise<number> {
  const time = new ReportTime('UTC')
  const files = closedFiles(dir)
  return await db.write(async (c) => {
    await c.run('BEGIN TRANSACTION')
    const r = await importRows(c, time, readCsvSql(files, true), {
      keepDay: time.aggregateRetentionStart(now),
      keepRaw: now - RAW_RETENTION_MS,
      seq: 0,
      chunk: 1
    })
    await c.run('COMMIT')
    let rows = 0
    for (const f of r.files.values()) rows += f.rows
    return rows
  })
}

/** `read_csv` straight into the raw partition of one hour, the partials from the new raw rows; returns the rows imported. */
export async function importDirect(db: StatsDb, dir: string, hour: number): Promise<number> {
  const files = closedFiles(dir)
  // The design as measured then, on the raw layout of the time (engine/stats/raw-layout.ts, legacy).
  const raw = legacyRawTable(hour)
  const day = Math.floor((hour * HOUR_MS) / DAY_MS)
  const h = hoursTable(day)
  const n = namesTable(day)
  const blocks = `sum(CASE WHEN reason IN (${[...BLOCK_REASONS].map(sqlString).join(', ')}) THEN 1 ELSE 0 END)::BIGINT`
  const u = `CASE WHEN grouping("user") = 1 THEN ${sqlString(ALL_USERS)} ELSE "user" END`
  return await db.write(async (c) => {
    await c.run('BEGIN TRANSACTION')
    await c.run(legacyRawTableSql(raw))
    await c.run(
      `INSERT INTO ${raw} SELECT row_number() OVER (), created, coalesce(nullif("user", ''), ${sqlString(ANONYMOUS_USER)}), ` +
        "coalesce(nxdomain = '1', false), coalesce(address, ''), coalesce(host, ''), coalesce(blockedhost, ''), " +
        `coalesce(reasom, ''), coalesce(cats, ''), coalesce(blockedcats, '') FROM ${readCsvSql(files)} WHERE created IS NOT NULL`
    )
    const fresh = `(SELECT *, created // ${HOUR_MS} AS hour FROM ${raw} WHERE seq > 0)`
    await c.run(
      `${hoursTableSql(h)}; ${namesTableSql(n)}; ` +
        `INSERT INTO ${h} SELECT ${u}, hour, count(*)::BIGINT, ${blocks} FROM ${fresh} GROUP BY GROUPING SETS (("user", hour), (hour))`
    )
    await c.run(
      `INSERT INTO ${n} SELECT ${u}, host, count(*)::BIGINT, sum(nxdomain::INTEGER)::BIGINT, ${blocks}, arg_max(cats, seq), 1, NULL ` +
        `FROM ${fresh} GROUP BY GROUPING SETS (("user", host), (host))`
    )
    const rows = Number((await c.runAndReadAll(`SELECT count(*) FROM ${raw}`)).getRows()[0]![0])
    await c.run('COMMIT')
    return rows
  })
}
