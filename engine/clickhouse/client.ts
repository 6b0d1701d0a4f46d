/**
 * The ClickHouse statistics store's connection: the official client (`@clickhouse/client`) with the
 * settings of `stats.clickhouse.*`, and the two shapes of request the store makes, a statement and a
 * query read as JSON rows. Written for what ClickHouse 18.16 (Debian 12) accepts: no `query_params`
 * (values are literals, engine/clickhouse/sql.ts), inserts as `JSONEachRow` (18.16 has no
 * `JSONCompactEachRow`, the client's default) or, the sink's, as `TabSeparated` text made by the caller
 * (cheaper to make and to parse: engine/clickhouse/batches.ts).
 */
import { Readable } from 'node:stream'
import { createClient, ClickHouseLogLevel, type ClickHouseClient } from '@clickhouse/client'
import { EngineError } from '../errors.js'
import { sqlIdent } from './sql.js'

/** `stats.clickhouse.*`. */
export interface ClickHouseSettings {
  /** The HTTP interface, `http://host:8123`. */
  url: string
  user: string
  password: string
  /** The database filterd's tables live in (made by `filterd stats-migrate`). */
  database: string
  /**
   * A cluster of the server's `remote_servers`: the query log is then a `Distributed` table over
   * ReplicatedMergeTree shards (docs/statistics.md, "ClickHouse"); absent: plain MergeTree tables.
   */
  cluster?: string
}

export interface ClickHouseStore {
  readonly settings: ClickHouseSettings
  /** `db`.`name`, quoted. */
  table(name: string): string
  /** Runs a statement whose answer is not read (DDL, ALTER, INSERT … SELECT). */
  command(sql: string): Promise<void>
  /** Runs a query and reads its rows (numbers of 64 bits come as strings: ClickHouse's JSON). */
  rows(sql: string): Promise<Array<Record<string, unknown>>>
  /** Inserts rows into `table` (a name of this database) in one request: one block on the server. */
  insert(table: string, rows: ReadonlyArray<Record<string, unknown>>, settings?: Record<string, string>): Promise<void>
  /**
   * Inserts `body`, rows of `columns` in ClickHouse's `TabSeparated` format (fields escaped by
   * engine/clickhouse/sql.ts's `tsvField`), into `table` in one request: one block on the server.
   */
  insertTabSeparated(
    table: string,
    columns: readonly string[],
    body: Buffer,
    settings?: Record<string, string>
  ): Promise<void>
  close(): Promise<void>
}

/** The client for `settings`, with a request timeout of `timeoutMs` (30 s). */
export function openClickHouse(settings: ClickHouseSettings, timeoutMs = 30_000): ClickHouseStore {
  const db = sqlIdent(settings.database)
  const client: ClickHouseClient = createClient({
    url: settings.url,
    username: settings.user,
    password: settings.password,
    request_timeout: timeoutMs,
    application: 'filterd',
    // Failures are the caller's to report (the sink counts and retries): the client's own log lines
    // would repeat each one on standard error.
    log: { level: ClickHouseLogLevel.OFF }
  })
  const unavailable = (err: unknown): EngineError =>
    new EngineError(
      'ENGINE_CLICKHOUSE_UNAVAILABLE',
      `ClickHouse at ${settings.url}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
      { cause: err }
    )
  return {
    settings,
    table: (name) => `${db}.${sqlIdent(name)}`,
    async command(sql) {
      try {
        await client.command({ query: sql })
      } catch (err) {
        throw unavailable(err)
      }
    },
    async rows(sql) {
      try {
        const r = await client.query({ query: sql, format: 'JSONEachRow' })
        return await r.json<Record<string, unknown>>()
      } catch (err) {
        throw unavailable(err)
      }
    },
    async insert(table, rows, clickhouseSettings) {
      try {
        await client.insert({
          table: `${db}.${sqlIdent(table)}`,
          values: rows as Array<Record<string, unknown>>,
          format: 'JSONEachRow',
          ...(clickhouseSettings === undefined ? {} : { clickhouse_settings: clickhouseSettings })
        })
      } catch (err) {
        throw unavailable(err)
      }
    },
    async insertTabSeparated(table, columns, body, clickhouseSettings) {
      const [first, ...rest] = columns.map(sqlIdent)
      if (first === undefined) throw new EngineError('ENGINE_CLICKHOUSE_LITERAL', 'an insert names no column')
      try {
        await client.insert({
          table: `${db}.${sqlIdent(table)}`,
          columns: [first, ...rest],
          // A raw format's rows go as a byte stream, untouched by the client.
          values: Readable.from([body], { objectMode: false }),
          format: 'TabSeparated',
          ...(clickhouseSettings === undefined ? {} : { clickhouse_settings: clickhouseSettings })
        })
      } catch (err) {
        throw unavailable(err)
      }
    },
    async close() {
      await client.close()
    }
  }
}
