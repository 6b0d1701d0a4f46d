import { test, type TestContext } from 'node:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { openStatsDb, type StatsDb } from './db.js'
import { importClosedFiles } from './importer.js'
import { applyRecords } from './legacy/chunk-path.js'
import { dropStage, readParquetSql, sqlString, stageRows } from './import-sql.js'
import { exportParquetHours } from './parquet.js'
import { parseRecords } from '../querylog/csv.js'
import { activityByDay, rawLastHour } from './reports.js'
import { sortRawHour } from './raw-sort.js'
import { rawRowsTable } from './raw-layout.js'
import { parseDay, ReportTime } from './time.js'
import { NOW, at, importUnsorted, openTestStatsDb, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'
import type { QueryLogRecord } from '../querylog/index.js'

const HOUR = Math.floor(at('2024-05-15', '12:00') / 3_600_000)
const time = new ReportTime('UTC')

/** A list subscription's block, an RPZ feed's block and a forwarded query of ann, at 12:0x. */
const DECISIONS: QueryLogRecord[] = [
  rec(at('2024-05-15', '12:01'), '10.0.0.1', 'ann', 'ads.example', {
    reason: 'global-blacklist',
    blockedName: 'ads.example',
    source: 'list:ads'
  }),
  rec(at('2024-05-15', '12:02'), '10.0.0.1', 'ann', 'bad.example', {
    reason: 'rpz',
    blockedName: 'bad.example',
    source: 'rpz:feed.example'
  }),
  rec(at('2024-05-15', '12:03'), '10.0.0.1', 'ann', 'ok.example')
]

/** The raw report's rows as (host, reason, source). */
const EXPECTED = [
  ['ads.example', 'global-blacklist', 'list:ads'],
  ['bad.example', 'rpz', 'rpz:feed.example'],
  ['ok.example', 'none', '']
]

/** ann's raw report with its source, as (host, reason, source) rows; the fields checked on the way. */
async function sourcesOf(t: TestContext, db: StatsDb): Promise<string[][]> {
  const r = await rawLastHour(db, time, 'ann', NOW, ['source'])
  t.assert.deepStrictEqual(r.fields.slice(5), ['reasom', 'cats', 'blockedcats', 'source'])
  return r.data.map((row) => [row[3], row[5], String(row[8])])
}

test('the raw report names the list subscription or RPZ feed that decided (?with=source), through the import, the sort by user and the Parquet export', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openTestStatsDb(t, env)
  await importUnsorted(db, env, DECISIONS)
  t.assert.deepStrictEqual(await sourcesOf(t, db), EXPECTED)
  // Without `with`, the specification's eight fields, each row eight values.
  const plain = await rawLastHour(db, time, 'ann', NOW)
  t.assert.strictEqual(plain.fields.length, 8)
  t.assert.ok(plain.data.every((row) => row.length === 8))
  t.assert.ok((await sortRawHour(db, HOUR)) > 0, 'the hour was sorted')
  t.assert.deepStrictEqual(await sourcesOf(t, db), EXPECTED, 'after the sort by user')
  const dir = join(env.root, 'parquet')
  await exportParquetHours(db, dir, at('2024-05-15', '13:10'))
  const duck = await (await DuckDBInstance.create(':memory:')).connect()
  const [file] = readdirSync(dir)
  const rows = (
    await duck.runAndReadAll(`SELECT host, reason, source FROM read_parquet(${sqlString(join(dir, file!))})`)
  ).getRows()
  duck.closeSync()
  t.assert.deepStrictEqual(rows, EXPECTED)
})

test("a file an older importer left half-imported keeps the source of each row on the JS path's raw rows", async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, DECISIONS)
  const [name] = readdirSync(dir)
  const text = readFileSync(join(dir, name!), 'latin1')
  // The header and the first record, as one chunk of the chunked importer of before; the rest continues from there.
  const records: string[][] = []
  const end = parseRecords(text, 0, 2, records)
  const db = openTestStatsDb(t, env)
  t.assert.ok(await applyRecords(db, 'UTC', name!, 0, end, false, records, () => NOW))
  await importClosedFiles(db, dir, 'UTC', { now: () => NOW })
  t.assert.deepStrictEqual(await sourcesOf(t, db), EXPECTED)
})

test('a store of the version before (raw hours without source) is upgraded at open: its rows read with no source, new rows of the same hour keep theirs', async (t: TestContext) => {
  const env = statsTestEnv(t)
  let db = openStatsDb(env.config.stats.db)
  await importUnsorted(db, env, DECISIONS.slice(0, 1))
  // The hour table as the version before made it: the same columns, without `source`.
  await db.write((c) => c.run(`ALTER TABLE ${rawRowsTable(HOUR)} DROP COLUMN source`))
  await db.close()
  db = openTestStatsDb(t, env)
  await importUnsorted(db, env, DECISIONS.slice(1))
  t.assert.deepStrictEqual(await sourcesOf(t, db), [['ads.example', 'global-blacklist', ''], ...EXPECTED.slice(1)])
  t.assert.ok((await sortRawHour(db, HOUR)) > 0)
  t.assert.deepStrictEqual(await sourcesOf(t, db), [['ads.example', 'global-blacklist', ''], ...EXPECTED.slice(1)])
})

test('a segment written before the trailing columns (no client_id, no source) is read as rows without a source', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openTestStatsDb(t, env)
  const path = join(env.root, 'old-segment.parquet')
  const counts = await db.background(async (c) => {
    await c.run(
      `COPY (SELECT ${at('2024-05-15', '12:01')}::BIGINT AS created, '0' AS nxdomain, '10.0.0.1' AS address, ` +
        "'ads.example' AS host, 'ads.example' AS blockedhost, 'global-blacklist' AS reasom, '' AS cats, " +
        `'' AS blockedcats, 'ann' AS "user") TO ${sqlString(path)} (FORMAT parquet)`
    )
    const stage = await stageRows(c, readParquetSql([path]))
    const rows = (await c.runAndReadAll('SELECT host, source FROM import_chunk')).getRows()
    await dropStage(c)
    return { files: [...stage.files.values()], rows }
  })
  t.assert.deepStrictEqual(counts, { files: [{ rows: 1, skipped: 0 }], rows: [['ads.example', '']] })
})

test("an RPZ feed's block counts as a block in the reports (Blocks)", async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openTestStatsDb(t, env)
  await importUnsorted(db, env, DECISIONS)
  const day = parseDay('2024-05-15')!
  t.assert.deepStrictEqual((await activityByDay(db, 'ann', day, day)).datasets, [
    { label: 'Requests', data: [3] },
    { label: 'Blocks', data: [2] }
  ])
})
