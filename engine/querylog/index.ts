/**
 * The statistics record of one DNS query and the sink it is handed to (docs/contract.md, Statistics).
 *
 * The DNS server builds a record only when `sink.enabled` is true, so statistics cost one
 * property check per query when they are off (pino's "free when off"). The CSV writer that
 * rotates files every 5 minutes (./writer.ts) implements `QueryLogSink`; with
 * statistics off the server gets `noopQueryLogSink`. A sink is created once per front process by
 * a `QueryLogSinkFactory`.
 */
import type { Config } from '../config/index.js'
import type { Logger } from '../log/index.js'

/** One query, as the CSV row (created, nxdomain, address, host, blockedhost, reasom, cats, blockedcats) needs it. */
export interface QueryLogRecord {
  /** Milliseconds since the epoch when the query arrived. */
  time: number
  /** The client address the policy was chosen by (the ECS address when `proxy.client-subnet` is on). */
  address: string
  /** The user owning the address; null for an anonymous address (server defaults). */
  user: string | null
  /** The query name, lower case, no trailing dot ('.' for the root); presentation escapes for odd bytes. */
  name: string
  /** QTYPE number. */
  qtype: number
  /** The list entry or category-database key that caused a block; '' when not blocked. */
  blockedName: string
  /**
   * Why: a policy reason (engine/policy `Reason`: 'none', 'global-blacklist', 'category',
   * 'safesearch', 'safevideo' …) or, for a query answered before policy, 'malformed', 'canary', 'ddr'
   * or 'unknown-client-id' (refused: no user holds its client ID).
   */
  reason: string
  /** Categories of the name (its site record), [] when unknown. */
  cats: readonly number[]
  /** Categories that caused a category block, [] otherwise. */
  blockedCats: readonly number[]
  /** The name does not exist: our answer or the upstream's carried RCODE NXDOMAIN. */
  nxdomain: boolean
  /** RCODE of the answer the client received (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN …). */
  rcode: number
  /**
   * The client ID the query came with (DoH path, DoT server name), lower case; null or absent when none.
   * Set for an unknown ID too (then `user` is null).
   */
  clientId?: string | null
  /**
   * Where the deciding entry came from: `list:<id>` (a list subscription), `rpz:<zone>` (an RPZ feed);
   * absent or '' for the operator's own lists, the category database and every other reason.
   */
  source?: string
}

/** Where records go. `write` must not throw and should not block (buffer, flush later). */
export interface QueryLogSink {
  readonly enabled: boolean
  write(rec: QueryLogRecord): void
  /** Flushes and releases resources; called once when the DNS server closes. */
  close?(): Promise<void>
}

/** Creates the sink of one front process (each `proxy.processes` child calls it once). */
export type QueryLogSinkFactory = (ctx: {
  readonly config: Readonly<Config>
  readonly logger: Logger
  /** 0 for a single process; 1..N for cluster children. */
  readonly processIndex: number
}) => QueryLogSink | Promise<QueryLogSink>

/** Statistics off: `enabled` is false, so no record is ever built. */
export const noopQueryLogSink: QueryLogSink = Object.freeze({
  enabled: false,
  write(_rec: QueryLogRecord): void {}
})

/** A sink that keeps records in memory (tests, debugging). */
export function memoryQueryLogSink(): QueryLogSink & { readonly records: QueryLogRecord[] } {
  const records: QueryLogRecord[] = []
  return {
    enabled: true,
    records,
    write(rec) {
      records.push(rec)
    }
  }
}

export {
  createCsvQueryLog,
  createQueryLogSink,
  type CsvQueryLog,
  type CsvQueryLogOptions,
  type CsvFileIo
} from './writer.js'
export {
  ANONYMOUS_USER,
  BLOCK_REASONS,
  closeCurrentParts,
  partsOpenedBy,
  recoverStaleParts,
  ALL_USERS,
  CLOSED_RE,
  closedAtOf,
  closedName
} from './files.js'
export { CSV_HEADER, formatRow, parseRecords, decodeRow, type StatsRow } from './csv.js'
export { type FollowerOptions, QueryLogFollower } from './follow.js'
export { type ClosedFileWatch, watchClosedFiles } from './import-trigger.js'
