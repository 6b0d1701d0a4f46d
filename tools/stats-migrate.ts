/**
 * `filterd stats-migrate --config FILE`: moves an old LMDB statistics environment (`<stats.db>/data.mdb`)
 * into the statistics store (engine/stats/legacy/migrate.ts), so the reports keep the history. Run it with
 * the api role stopped: the store has one writer. With `stats.store: clickhouse` it makes or upgrades
 * the ClickHouse schema instead (engine/clickhouse/schema.ts; any time, beside running roles).
 * Exit codes: 0 done (or nothing to migrate), 1 failed, 2 usage.
 */
import { clickhouseSettings, migrateClickHouse, openClickHouse, usesClickHouse } from '../engine/clickhouse/index.js'
import type { Config } from '../engine/config/index.js'
import { loadConfigFile } from '../engine/features.js'
import { compactStats, migrateLegacyStats, openStatsDb, statsDbOptions } from '../engine/stats/index.js'
import { commandArgs } from './cli/command-args.js'

const USAGE = 'usage: filterd stats-migrate --config FILE\n'

export async function run(argv: string[]): Promise<number> {
  const args = commandArgs('stats-migrate', USAGE, argv, {})
  if (typeof args === 'number') return args
  try {
    const config = loadConfigFile(args.config)
    if (usesClickHouse(config)) return await migrateClickHouseStore(config)
    const db = openStatsDb(config.stats.db, statsDbOptions(config))
    try {
      try {
        await db.ready
      } catch (err) {
        if (/lock/i.test((err as Error).message))
          throw new Error(
            `${(err as Error).message}: stop the api role (the statistics store's one writer) and run again`
          )
        throw err
      }
      const r = await migrateLegacyStats(db, config.stats.timezone)
      if (r === undefined) {
        process.stdout.write(`nothing to migrate: no data.mdb in ${config.stats.db}\n`)
        return 0
      }
      await compactStats(db)
      process.stdout.write(
        `migrated ${r.raw} raw rows, ${r.hours} hour, ${r.days} day and ${r.names} name records, ${r.files} ledger entries into ${db.file}\n`
      )
    } finally {
      await db.close()
    }
    return 0
  } catch (err) {
    process.stderr.write(`filterd stats-migrate: ${(err as Error).message}\n`)
    return 1
  }
}

async function migrateClickHouseStore(config: Config): Promise<number> {
  const store = openClickHouse(clickhouseSettings(config))
  try {
    const applied = await migrateClickHouse(store)
    const where = `${store.settings.url} database ${store.settings.database}`
    process.stdout.write(
      applied.length === 0
        ? `ClickHouse schema up to date at ${where}\n`
        : `ClickHouse schema migrated to version ${applied[applied.length - 1]!} at ${where}\n`
    )
    return 0
  } finally {
    await store.close()
  }
}
