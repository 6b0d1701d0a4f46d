/**
 * The ClickHouse statistics store (`stats.store: clickhouse`; docs/statistics.md, ClickHouse): one
 * ClickHouse that every host's sync role feeds from its own closed statistics files and every api role
 * reads the reports from, through the official client (`@clickhouse/client`).
 */
export { openClickHouse, type ClickHouseSettings, type ClickHouseStore } from './client.js'
export { clickhouseSettings, usesClickHouse } from './settings.js'
export { SCHEMA_VERSION, migrateClickHouse, schemaVersion } from './schema.js'
export { startClickHouseFeed, type ClickHouseFeed } from './feed.js'
export type { SinkCounts } from './sink.js'
export { openClickHouseReading, type ClickHouseReading } from './reading.js'
