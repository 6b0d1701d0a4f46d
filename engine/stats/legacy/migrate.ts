/**
 * `filterd stats-migrate`: moves an LMDB statistics environment (`<stats.db>/data.mdb`, filterd
 * before the column store) into the statistics store, so that an operator who upgrades keeps the
 * history: every report answers as before.
 *
 *   hour   [user, utcHour] → a partial row of `hours_<local day of the hour's start>`
 *   day    [user, day]     → the difference between the day's record and the hours put in that day's
 *                            partition, as a row of hour -1 (never inside an hour report's range), so
 *                            a day report sums to the old record in every time zone (0 in UTC: no row)
 *   domain [user, day, host] → a row of `names_<day>`
 *   raw    [user, created, seq] → a row of `raw_<utcHour>` (the layout before, read alike), same seq
 *   files, meta 'seq'      → the ledger and the sequence
 *
 * One transaction: a failed migration leaves the store as it was. The old environment is then
 * renamed `data.mdb.migrated` (kept for the operator to delete), so a second run finds nothing.
 */
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api'
import { existsSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../../log/index.js'
import {
  hoursTable,
  hoursTableSql,
  metaGet,
  metaPut,
  namesTable,
  namesTableSql,
  putProgress,
  type StatsDb
} from '../db.js'
import { legacyRawTable, legacyRawTableSql } from './raw-layout.js'
import { openLegacyStatsDb, type LegacyStatsDb } from './lmdb.js'
import { HOUR_MS, ReportTime } from '../time.js'
import { transaction } from '../transaction.js'

export const LEGACY_FILE = 'data.mdb'

export interface MigrateResult {
  hours: number
  days: number
  names: number
  raw: number
  files: number
}

/** Logs a warning when `<dir>/data.mdb` (an LMDB statistics environment not yet migrated) is there. */
export function warnIfUnmigrated(dir: string, logger: Logger): void {
  if (existsSync(join(dir, LEGACY_FILE))) {
    logger.warn(
      { path: join(dir, LEGACY_FILE) },
      'an old (LMDB) statistics environment is in stats.db and its history is not in the reports: stop the api role and run filterd stats-migrate --config FILE'
    )
  }
}

class Appenders {
  readonly #open = new Map<string, DuckDBAppender>()
  constructor(private readonly c: DuckDBConnection) {}
  async get(table: string, createSql: string): Promise<DuckDBAppender> {
    let a = this.#open.get(table)
    if (a === undefined) {
      await this.c.run(createSql)
      a = await this.c.createAppender(table)
      this.#open.set(table, a)
    }
    return a
  }

  closeAll(): void {
    for (const a of this.#open.values()) a.closeSync()
    this.#open.clear()
  }
}

async function copyAggregates(old: LegacyStatsDb, ap: Appenders, time: ReportTime, r: MigrateResult): Promise<void> {
  // Hours per (user, day partition), to find each day record's difference.
  const inPartition = new Map<string, [number, number]>()
  for (const {
    key: [user, hour],
    value: [req, blk]
  } of old.hour.getRange()) {
    const day = time.dayOf(hour * HOUR_MS)
    const a = await ap.get(hoursTable(day), hoursTableSql(hoursTable(day)))
    a.appendVarchar(user)
    a.appendInteger(hour)
    a.appendBigInt(BigInt(req))
    a.appendBigInt(BigInt(blk))
    a.endRow()
    const k = `${user}\u0000${day}`
    const s = inPartition.get(k)
    if (s === undefined) inPartition.set(k, [req, blk])
    else {
      s[0] += req
      s[1] += blk
    }
    r.hours++
  }
  for (const {
    key: [user, day],
    value: [req, blk]
  } of old.day.getRange()) {
    const s = inPartition.get(`${user}\u0000${day}`) ?? [0, 0]
    r.days++
    if (s[0] === req && s[1] === blk) continue
    const a = await ap.get(hoursTable(day), hoursTableSql(hoursTable(day)))
    a.appendVarchar(user)
    a.appendInteger(-1)
    a.appendBigInt(BigInt(req - s[0]))
    a.appendBigInt(BigInt(blk - s[1]))
    a.endRow()
  }
  for (const {
    key: [user, day, host],
    value: [req, nx, blk, cats]
  } of old.domain.getRange()) {
    const a = await ap.get(namesTable(day), namesTableSql(namesTable(day)))
    a.appendVarchar(user)
    a.appendVarchar(host)
    a.appendBigInt(BigInt(req))
    a.appendBigInt(BigInt(nx))
    a.appendBigInt(BigInt(blk))
    a.appendVarchar(cats.join(' '))
    a.appendBigInt(0n)
    a.appendNull() // blockedcats: the old store did not keep which categories blocked (read as unknown)
    a.endRow()
    r.names++
  }
}

async function copyRaw(old: LegacyStatsDb, ap: Appenders, r: MigrateResult): Promise<void> {
  for (const {
    key: [user, , seq],
    value: v
  } of old.raw.getRange()) {
    const hour = Math.floor(v[0] / HOUR_MS)
    // The layout before (engine/stats/raw-layout.ts), which the reports read alike: rows with their seq.
    const a = await ap.get(legacyRawTable(hour), legacyRawTableSql(legacyRawTable(hour)))
    a.appendBigInt(BigInt(seq))
    a.appendBigInt(BigInt(v[0]))
    a.appendVarchar(user)
    a.appendBoolean(v[1] === 1)
    a.appendVarchar(v[2])
    a.appendVarchar(v[3])
    a.appendVarchar(v[4])
    a.appendVarchar(v[5])
    a.appendVarchar(v[6].join(' '))
    a.appendVarchar(v[7].join(' '))
    a.endRow()
    r.raw++
  }
}

/**
 * Moves `<db.path>/data.mdb` into `db` (see above); `undefined` when there is none. `timeZone` is
 * `stats.timezone`, the zone the old aggregates were made in.
 */
export async function migrateLegacyStats(db: StatsDb, timeZone: string): Promise<MigrateResult | undefined> {
  const legacyPath = join(db.path, LEGACY_FILE)
  if (!existsSync(legacyPath)) return undefined
  const old = openLegacyStatsDb(db.path)
  const r: MigrateResult = { hours: 0, days: 0, names: 0, raw: 0, files: 0 }
  try {
    await db.write(async (c) => {
      await transaction(c, async () => {
        const ap = new Appenders(c)
        try {
          await copyAggregates(old, ap, new ReportTime(timeZone), r)
          await copyRaw(old, ap, r)
          ap.closeAll()
          for (const { key, value } of old.files.getRange()) {
            await putProgress(c, key, value)
            r.files++
          }
          await metaPut(c, 'seq', Math.max(await metaGet(c, 'seq'), old.meta.get('seq') ?? 0))
          // Every migrated day is compacted (one row per key, sorted by user) by the next prune.
          await c.run(
            "INSERT OR REPLACE INTO meta SELECT 'dirty.' || substr(table_name, 7), 1 FROM duckdb_tables() WHERE table_name SIMILAR TO 'hours_[0-9]+'"
          )
        } catch (err) {
          ap.closeAll()
          throw err
        }
      })
    })
  } finally {
    await old.close()
  }
  renameSync(legacyPath, legacyPath + '.migrated')
  const lock = join(db.path, 'lock.mdb')
  if (existsSync(lock)) renameSync(lock, lock + '.migrated')
  return r
}
