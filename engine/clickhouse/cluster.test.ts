/**
 * The ClickHouse store as a cluster (`stats.clickhouse.cluster`; docs/statistics.md, "A cluster"): a real
 * ZooKeeper and a clickhouse-server configured with it, with a one-shard, one-replica cluster and the
 * macros `{shard}` and `{replica}`. The schema is made in cluster mode (Replicated tables, a Distributed
 * table over each), the sink sends the rows through the Distributed table, a batch is sent twice on
 * purpose, and the reports, read through the Distributed tables, answer as the DuckDB store does for the
 * same rows (the conformance of engine/clickhouse/testing/conformance.ts, which the plain MergeTree tables
 * also pass).
 */
import { writeFileSync } from 'node:fs'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { CLOSED_RE, CSV_HEADER, closedName, formatRow } from '../querylog/index.js'
import { ReportTime, parseDay, retentionOf } from '../stats/index.js'
import { parseConfig } from '../features.js'
import { tempDir } from '../testing/temp.js'
import { BATCH_COLUMNS, readBatch, type Batch } from './batches.js'
import { openClickHouse, type ClickHouseSettings, type ClickHouseStore } from './client.js'
import { clickhouseReports } from './reports.js'
import { migrateClickHouse } from './schema.js'
import { clickhouseSettings } from './settings.js'
import { createClickHouseSink } from './sink.js'
import { sqlString } from './sql.js'
import { CONFORMANCE_HOST, conform, loadStores } from './testing/conformance.js'
import { skipWithoutClickHouse, startClickHouse } from './testing/server.js'
import { skipWithoutZooKeeper, startZooKeeper } from './testing/zookeeper.js'

const DATABASE = 'cluster_utc'

/** The tables of the database with their engines, `name:engine`. */
async function enginesOf(store: ClickHouseStore): Promise<string[]> {
  const rows = await store.rows(
    `SELECT name, engine FROM system.tables WHERE database = ${sqlString(DATABASE)} ORDER BY name`
  )
  return rows.map((r) => `${String(r.name)}:${String(r.engine)}`)
}

/**
 * A ZooKeeper and a clickhouse-server configured with it, both stopped after `t`; the store's settings as an
 * operator's config gives them (`stats.clickhouse.cluster` naming the server's cluster).
 */
async function startCluster(t: TestContext): Promise<ClickHouseSettings> {
  const zookeeper = await startZooKeeper()
  t.after(() => zookeeper.stop())
  const server = await startClickHouse({ zookeeper: zookeeper.address })
  t.after(() => server.stop())
  const yaml =
    `stats:\n  store: clickhouse\n  clickhouse:\n    url: ${server.url}\n    database: ${DATABASE}\n` +
    `    cluster: ${server.cluster}\n`
  const config = parseConfig(yaml, join(tempDir(t, 'filterd-cluster-config-'), 'filterd.yaml'))
  const settings = clickhouseSettings(config)
  t.assert.equal(settings.cluster, 'filterd')
  return settings
}

async function rowsOfBatch(store: ClickHouseStore, id: string): Promise<number> {
  const [r] = await store.rows(`SELECT count() AS c FROM ${store.table('queries')} WHERE batch = ${sqlString(id)}`)
  return Number(r?.c)
}

/**
 * Two files of one query each, by the same user in the same hour, neither blocked, sent into `database`:
 * different rows whose per-hour sums (user, day, hour, 1 request, 0 blocks) make the same block for the
 * views. Both must count: the replicated block deduplication must skip the views of a repeated insert
 * only, never take a view's block of another insert for a repeat.
 */
async function equalAggregates(t: TestContext, settings: ClickHouseSettings): Promise<void> {
  const store = openClickHouse(settings)
  t.after(() => store.close())
  await migrateClickHouse(store)
  const dir = tempDir(t, 'filterd-cluster-')
  const at = Date.parse('2024-05-15T10:00:00Z')
  for (const [i, host] of ['a.example', 'b.example'].entries())
    writeFileSync(
      join(dir, closedName(at + i, 99, String(i))),
      CSV_HEADER + formatRow(at + i * 1000, false, '10.0.0.1', host, '', 'none', [], [], 'alice')
    )
  const quiet = (): void => {}
  const sink = createClickHouseSink(store, {
    dir,
    host: 'dns-a',
    time: new ReportTime('UTC'),
    batchRows: 1000,
    spoolMaxBytes: 1 << 30,
    log: { info: quiet, warn: quiet, error: quiet }
  })
  t.assert.equal(await sink.sendClosed(), 2)
  t.assert.equal(sink.counts.batchesSent, 2)
  const day = parseDay('2024-05-15')!
  const activity = await clickhouseReports(store, retentionOf({})).activityByDay('alice', day, day)
  t.assert.deepStrictEqual(activity.datasets[0]!.data, [2], 'both queries counted in the hours')
  const top = await clickhouseReports(store, retentionOf({})).topDomains('alice', day, day, 'all')
  t.assert.deepStrictEqual(top.labels, ['a.example', 'b.example'])
}

test(
  'a cluster: Replicated tables under Distributed ones, a batch sent twice kept once, the reports as DuckDB answers them, equal sums of two batches both counted',
  { skip: skipWithoutClickHouse() || skipWithoutZooKeeper() },
  async (t: TestContext) => {
    const settings = await startCluster(t)
    let twice: Batch | undefined
    const stores = await loadStores(t, settings, 'UTC', async (store, dir, time) => {
      // The schema as the cluster DDL makes it: a Replicated engine of the right kind under each
      // Distributed table, the views over the local tables.
      t.assert.deepStrictEqual(await enginesOf(store), [
        'blockcats:Distributed',
        'blockcats_local:ReplicatedSummingMergeTree',
        'blockcats_mv:MaterializedView',
        'hours:Distributed',
        'hours_local:ReplicatedSummingMergeTree',
        'hours_mv:MaterializedView',
        'names:Distributed',
        'names_local:ReplicatedAggregatingMergeTree',
        'names_mv:MaterializedView',
        'queries:Distributed',
        'queries_local:ReplicatedMergeTree',
        'schema_versions:TinyLog'
      ])
      // Each local table is a live replica in ZooKeeper at the documented path (not read-only: the
      // server reaches ZooKeeper).
      const replicas = await store.rows(
        `SELECT table, zookeeper_path, replica_name, is_readonly FROM system.replicas WHERE database = ${sqlString(DATABASE)} ORDER BY table`
      )
      t.assert.deepStrictEqual(
        replicas.map((r) => [r.table, r.zookeeper_path, r.replica_name, Number(r.is_readonly)]),
        ['blockcats', 'hours', 'names', 'queries'].map((n) => [
          `${n}_local`,
          `/clickhouse/tables/01/${DATABASE}/${n}`,
          'r1',
          0
        ])
      )
      // The first batch of the first file sent twice, as a sink would that lost the outcome of its insert
      // and has no ledger to ask: the same rows under the same identity, with the sink's settings.
      const name = (await readdir(dir)).filter((n) => CLOSED_RE.test(n)).sort()[0]!
      const text = await readFile(join(dir, name))
      twice = readBatch(text, 0, 200, (start) => `${CONFORMANCE_HOST}/${name}@${start}`, time)!
      t.assert.ok(twice.rows > 0, 'a batch of rows')
      for (let i = 0; i < 2; i++)
        await store.insertTabSeparated('queries', BATCH_COLUMNS, twice.tsv, { insert_distributed_sync: '1' })
      // ClickHouse's replicated block deduplication kept the second insert out.
      t.assert.equal(await rowsOfBatch(store, twice.id), twice.rows, 'the batch sent twice is there once')
    })
    // The sink then found that batch already there by its identity (its ledger's in-doubt check) and
    // sent the rest.
    t.assert.equal(stores.sent.batchesFound, 1, 'the batch sent before the sink was found, not sent again')
    t.assert.equal(await rowsOfBatch(stores.store, twice!.id), twice!.rows)
    // Every report read through the Distributed tables answers as DuckDB does for the same rows: no row
    // of the batch sent twice counted twice, in the query log or in the aggregates.
    await conform(t, stores)
    await equalAggregates(t, { ...settings, database: 'cluster_equal' })
  }
)
