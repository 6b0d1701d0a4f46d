/**
 * What an import run carries (engine/stats/importer.ts), shared with the JavaScript chunk path that
 * continues the files and drains the rows an older version left (engine/stats/legacy/chunk-path.ts).
 */
import type { Logger } from '../log/index.js'
import type { StatsDb } from './db.js'
import type { ReportTime } from './time.js'

export const CHUNK_ROWS = 20_000

export interface Ctx {
  readonly db: StatsDb
  readonly time: ReportTime
  readonly now: () => number
  readonly chunkRows: number
  readonly onChunk: ((phase: 'in-txn' | 'after-commit', rowsSoFar: number) => void) | undefined
  readonly logger: Logger | undefined
  /** Warnings already logged (file and message): once per importer, not once per run. */
  readonly warned: Set<string>
  rowsSoFar: number
}
