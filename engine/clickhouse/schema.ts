/**
 * The ClickHouse statistics store's tables, made and upgraded by filterd (`filterd stats-migrate`, and
 * the api and sync roles at start): a list of numbered migrations, each applied once and recorded in
 * `schema_versions`. Every statement is `IF NOT EXISTS`, so a migration cut short is run again whole.
 *
 *   queries   the query log, one row per query: MergeTree partitioned by the UTC date of the query
 *             (retention drops a day whole) and ordered by (user, created) for the per-user reports.
 *             `hour` is the UTC hour, `day` the local day in `stats.timezone` (engine/stats/time.ts), both
 *             computed by the sink as the DuckDB importer computes them; `blocked` is the reason being a
 *             block (BLOCK_REASONS); `batch` the insert's identity (engine/clickhouse/sink.ts).
 *   hours     requests and blocks per (user, local day, UTC hour): SummingMergeTree, fed by hours_mv.
 *   names     requests, NXDOMAIN, blocks and the last non-empty categories per (user, local day, name):
 *             AggregatingMergeTree, fed by names_mv.
 *
 * Both views count every row twice, for its user and for ALL_USERS (the console's overview), as the
 * DuckDB importer's grouping sets do. Their user column is `uid`: ClickHouse 18.16 cannot alias a view's
 * output to the name of a column of its source table. Written for 18.16 and current versions alike: no
 * TTL, no LowCardinality, no DateTime64, no Map, no CTE or window function.
 *
 * With `stats.clickhouse.cluster`, each table is `<name>_local`, Replicated (ZooKeeper path
 * `/clickhouse/tables/{shard}/<database>/<name>`, replica `{replica}`: the server's macros), under a
 * `Distributed` table of the plain name that reads every shard; the views run on each server over
 * its local rows. The migration then runs on each server (its url), as retention does.
 */
import { ALL_USERS } from '../querylog/index.js'
import type { ClickHouseStore } from './client.js'
import { sqlIdent, sqlString } from './sql.js'

/** The query log's columns in insert order, with their types (the sink's rows carry exactly these). */
export const QUERY_COLUMNS = [
  ['date', 'Date'],
  ['created', 'UInt64'],
  ['hour', 'UInt32'],
  ['day', 'UInt32'],
  ['user', 'String'],
  ['nxdomain', 'UInt8'],
  ['address', 'String'],
  ['host', 'String'],
  ['blockedhost', 'String'],
  ['reason', 'String'],
  ['cats', 'String'],
  ['blockedcats', 'String'],
  ['client_id', 'String'],
  ['source', 'String'],
  ['blocked', 'UInt8'],
  ['batch', 'String'],
  ['n', 'UInt32']
] as const

/** The tables of a store (the Distributed ones with a cluster) and the local ones the engines hold. */
export interface StoreTables {
  queries: string
  hours: string
  names: string
  blockcats: string
  /** The tables retention drops partitions of (the local ones with a cluster). */
  local: { queries: string; hours: string; names: string; blockcats: string }
}

export function tablesOf(store: ClickHouseStore): StoreTables {
  const local = store.settings.cluster === undefined ? '' : '_local'
  return {
    queries: store.table('queries'),
    hours: store.table('hours'),
    names: store.table('names'),
    blockcats: store.table('blockcats'),
    local: {
      queries: store.table('queries' + local),
      hours: store.table('hours' + local),
      names: store.table('names' + local),
      blockcats: store.table('blockcats' + local)
    }
  }
}

function engine(
  store: ClickHouseStore,
  kind: 'MergeTree' | 'SummingMergeTree' | 'AggregatingMergeTree',
  name: string
): string {
  if (store.settings.cluster === undefined) return kind
  const path = `/clickhouse/tables/{shard}/${store.settings.database}/${name}`
  return `Replicated${kind}(${sqlString(path)}, '{replica}')`
}

/** `CREATE TABLE` of `name` (local with a cluster) and, with a cluster, its Distributed table. */
function table(
  store: ClickHouseStore,
  name: string,
  columns: string,
  kind: Parameters<typeof engine>[1],
  layout: string
): string[] {
  const cluster = store.settings.cluster
  const local = cluster === undefined ? store.table(name) : store.table(name + '_local')
  const out = [`CREATE TABLE IF NOT EXISTS ${local} (${columns}) ENGINE = ${engine(store, kind, name)} ${layout}`]
  if (cluster !== undefined)
    out.push(
      `CREATE TABLE IF NOT EXISTS ${store.table(name)} AS ${local} ENGINE = Distributed(${sqlIdent(cluster)}, ${sqlIdent(store.settings.database)}, ${sqlIdent(name + '_local')}, rand())`
    )
  return out
}

/**
 * What a view writes to its table from rows of the query log `from` (those `where` keeps, when given):
 * the view's own SELECT, also run by the sink to give a view the batch a server killed mid-insert left
 * it without (./views.ts). `key` is the table's key, `count` the rows it counted (read from the table
 * and from this SELECT alike).
 */
export interface ViewOf {
  table: 'hours' | 'names' | 'blockcats'
  key: string
  count: string
  select(from: string, where?: string): string
}

const whereOf = (...conditions: Array<string | undefined>): string => {
  const kept = conditions.filter((c): c is string => c !== undefined && c !== '')
  return kept.length === 0 ? '' : ` WHERE ${kept.join(' AND ')}`
}
const everyUser = `ARRAY JOIN [user, ${sqlString(ALL_USERS)}] AS uid`

export const VIEWS: readonly ViewOf[] = [
  {
    table: 'hours',
    key: 'd, uid, hour',
    count: 'sum(requests)',
    select: (from, where) =>
      `SELECT toDate(day) AS d, uid, hour, count() AS requests, sum(blocked) AS blocks ` +
      `FROM ${from} ${everyUser}${whereOf(where)} GROUP BY d, uid, hour`
  },
  {
    table: 'names',
    key: 'd, uid, host',
    count: 'countMerge(requests)',
    // The categories a name was last seen with, a non-empty set before an empty one (the DuckDB store's
    // "last non-empty"): the greatest (non-empty, created) pair.
    select: (from, where) =>
      `SELECT toDate(day) AS d, uid, host, countState() AS requests, sumState(nxdomain) AS nxdomain, ` +
      `sumState(blocked) AS blocks, argMaxState(cats, (cats != '', created)) AS cats ` +
      `FROM ${from} ${everyUser}${whereOf(where)} GROUP BY d, uid, host`
  },
  {
    table: 'blockcats',
    key: 'd, uid, blockedcats',
    count: 'sum(blocks)',
    select: (from, where) =>
      `SELECT toDate(day) AS d, uid, blockedcats, sum(blocked) AS blocks ` +
      `FROM ${from} ${everyUser}${whereOf(`blocked = 1 AND blockedcats != ''`, where)} ` +
      `GROUP BY d, uid, blockedcats`
  }
]

/** `CREATE MATERIALIZED VIEW` `<table>_mv` over the local query log into the local `table`. */
function materializedView(store: ClickHouseStore, table: ViewOf['table']): string {
  const t = tablesOf(store)
  const view = VIEWS.find((v) => v.table === table)!
  return (
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${store.table(table + '_mv')} TO ${t.local[table]} AS ` +
    view.select(t.local.queries)
  )
}

/** Migration 1: the query log and its two aggregates. */
function initial(store: ClickHouseStore): string[] {
  return [
    ...table(
      store,
      'queries',
      QUERY_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', '),
      'MergeTree',
      'PARTITION BY date ORDER BY (user, created)'
    ),
    ...table(
      store,
      'hours',
      'd Date, uid String, hour UInt32, requests UInt64, blocks UInt64',
      'SummingMergeTree',
      'PARTITION BY d ORDER BY (uid, d, hour)'
    ),
    ...table(
      store,
      'names',
      'd Date, uid String, host String, requests AggregateFunction(count), nxdomain AggregateFunction(sum, UInt8), ' +
        'blocks AggregateFunction(sum, UInt8), cats AggregateFunction(argMax, String, Tuple(UInt8, UInt64))',
      'AggregatingMergeTree',
      'PARTITION BY d ORDER BY (uid, d, host)'
    ),
    materializedView(store, 'hours'),
    materializedView(store, 'names')
  ]
}

/**
 * Migration 2: blocks per (user, local day, categories that blocked): SummingMergeTree fed by blockcats_mv,
 * for the overview's "Blocked by category" (a block counts for each category that blocked it, as the DuckDB
 * names tables' `blockedcats` column counts). A block by a list has no such categories and no row here. The
 * view sees the rows inserted after it is made: rows sent before have no categories counted.
 */
function blockedCategories(store: ClickHouseStore): string[] {
  return [
    ...table(
      store,
      'blockcats',
      'd Date, uid String, blockedcats String, blocks UInt64',
      'SummingMergeTree',
      'PARTITION BY d ORDER BY (uid, d, blockedcats)'
    ),
    materializedView(store, 'blockcats')
  ]
}

/** The migrations in order; the version of the schema is their count. */
const MIGRATIONS: ReadonlyArray<(store: ClickHouseStore) => string[]> = [initial, blockedCategories]

export const SCHEMA_VERSION = MIGRATIONS.length

/** The schema version a store has (0: none yet). */
export async function schemaVersion(store: ClickHouseStore): Promise<number> {
  const db = sqlIdent(store.settings.database)
  const [exists] = await store.rows(
    `SELECT count() AS c FROM system.tables WHERE database = ${sqlString(store.settings.database)} AND name = 'schema_versions'`
  )
  if (Number(exists?.c) === 0) return 0
  const [row] = await store.rows(`SELECT max(version) AS v FROM ${db}.schema_versions`)
  return Number(row?.v ?? 0)
}

/** Makes the database and applies the migrations it lacks; returns the versions applied. */
export async function migrateClickHouse(store: ClickHouseStore): Promise<number[]> {
  const db = sqlIdent(store.settings.database)
  await store.command(`CREATE DATABASE IF NOT EXISTS ${db}`)
  await store.command(
    `CREATE TABLE IF NOT EXISTS ${db}.schema_versions (version UInt32, applied UInt64) ENGINE = TinyLog`
  )
  const from = await schemaVersion(store)
  const applied: number[] = []
  for (let v = from + 1; v <= MIGRATIONS.length; v++) {
    for (const sql of MIGRATIONS[v - 1]!(store)) await store.command(sql)
    await store.command(`INSERT INTO ${db}.schema_versions VALUES (${v}, ${Date.now()})`)
    applied.push(v)
  }
  return applied
}
