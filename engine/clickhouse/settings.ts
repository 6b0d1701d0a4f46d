/** `stats.clickhouse.*` of a loaded config as the store's settings (the schema gave every default). */
import type { Config } from '../config/index.js'
import type { ClickHouseSettings } from './client.js'

/** Whether the config names ClickHouse as the statistics store (`stats.store: clickhouse`). */
export function usesClickHouse(config: Config): boolean {
  return config.stats.store === 'clickhouse'
}

export function clickhouseSettings(config: Config): ClickHouseSettings {
  const c = config.stats.clickhouse
  return {
    url: c.url,
    user: c.user,
    password: c.password,
    database: c.database,
    ...(c.cluster === undefined ? {} : { cluster: c.cluster })
  }
}
