/**
 * Statistics (docs/contract.md, Statistics): the DNS role's CSV writer, the statistics store (DuckDB), the importer the api role runs every
 * `stats.import-interval` seconds (and `filterd stats-import`), the report routes, and the usage
 * report to the vendor. docs/statistics.md describes the files, the exactly-once import, retention,
 * time zones and the reserved anonymous user.
 */
export {
  createCsvQueryLog,
  createQueryLogSink,
  type CsvQueryLog,
  type CsvQueryLogOptions,
  type CsvFileIo
} from './writer.js'
export {
  compactStats,
  importClosedFiles,
  startStatsImporter,
  statsDbOptions,
  type ImportOptions,
  type ImportResult,
  type LastImport,
  type StatsImporter,
  type StatsImporterOptions
} from './importer.js'
export { openStatsDb, retentionOf, type StatsDb, type StatsDbOptions } from './db.js'
export { openReopeningStatsDb, type ReopeningStatsDb } from './reopening.js'
export { snapshotStatsDb, startSnapshotResponder } from './snapshot.js'
export { migrateLegacyStats, warnIfUnmigrated, type MigrateResult } from './migrate.js'
export {
  activityByDay,
  activityByHour,
  detail,
  rawLastHour,
  topDomains,
  type Chart,
  type Detail,
  type DomainFilter,
  type RawReport
} from './reports.js'
export { startUsageReporter, type UsageClaim, type UsageReporter, type UsageReporterOptions } from './usage-report.js'
export {
  ALL_USERS,
  ANONYMOUS_USER,
  BLOCK_REASONS,
  CLOSED_RE,
  closedName,
  closeCurrentParts,
  partsOpenedBy,
  recoverStaleParts
} from './files.js'
export { CSV_HEADER, formatRow, parseRecords, decodeRow, type StatsRow } from './csv.js'
export { intakeCsvFile, type IntakeLog } from './csv-intake.js'
export { startPeriodicJob, type PeriodicJob } from './periodic.js'
export { ReportTime, formatDay, parseDay, type StatsRetention } from './time.js'
export { overview, type Overview } from './overview.js'
