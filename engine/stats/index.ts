/**
 * Statistics (docs/contract.md, Statistics): the statistics store (DuckDB), the importer the api role runs every
 * `stats.import-interval` seconds (and `filterd stats-import`), the report routes, and the usage
 * report to the vendor. The DNS side (the record, the CSV files and their writer) is engine/querylog/. docs/statistics.md describes the files, the exactly-once import, retention,
 * time zones and the reserved anonymous user.
 */
export {
  importClosedFiles,
  startStatsImporter,
  statsDbOptions,
  type ImportOptions,
  type ImportResult,
  type LastImport,
  type StatsImporter,
  type StatsImporterOptions
} from './importer.js'
export { applyRecords } from './legacy/chunk-path.js'
export { compactStats, maintainAfterImport, pruneStats } from './maintenance.js'
export { openStatsDb, retentionOf, type StatsDb, type StatsDbOptions, metaGet, metaPut } from './db.js'
export { openReopeningStatsDb, reopenBackoff, type ReopeningStatsDb } from './reopening.js'
export { snapshotStatsDb, startSnapshotResponder } from './snapshot.js'
export { migrateLegacyStats, warnIfUnmigrated, type MigrateResult } from './legacy/migrate.js'
export {
  activityByDay,
  activityByHour,
  detail,
  rawLastHour,
  RAW_EXTRA_FIELDS,
  RAW_FIELDS,
  MAX_RAW_ROWS,
  TOP_DOMAINS,
  catsOf,
  activityChart,
  domainChart,
  topDomains,
  type Chart,
  type Detail,
  type DomainFilter,
  type DomainSum,
  type DetailReport,
  type RawRow,
  type RawExtraField,
  type RawReport
} from './reports.js'
export { ReportTime, formatDay, parseDay, type StatsRetention } from './time.js'
export { intakeCsvFile, type IntakeLog } from './csv-intake.js'
export { overview, overviewOf, type Overview } from './overview.js'
export { duckdbReports, type ReportSource } from './report-source.js'
export { startPeriodicJob } from './periodic.js'
export { type SegmentApplier, type SegmentCounters, registerSegmentMetrics } from './segment-metrics.js'
export {
  type SegmentFacts,
  type SegmentWriter,
  applySegments,
  openSegmentWriter,
  removeStaleSegmentTemps
} from './segment.js'
