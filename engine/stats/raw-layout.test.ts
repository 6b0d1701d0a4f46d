import { test, type TestContext } from 'node:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { StatsDb } from './db.js'
import { importClosedFiles } from './importer.js'
import { exportParquetHours } from './parquet.js'
import { rawLastHour } from './reports.js'
import { sortRawHour } from './raw-sort.js'
import { ReportTime } from './time.js'
import { legacyRawTable, legacyRawTableSql } from './legacy/raw-layout.js'
import {
  insertRawHour,
  rawAddrsTable,
  rawHostsTable,
  rawHourSources,
  rawHourTables,
  rawRowsTable,
  rawUsersTable
} from './raw-layout.js'
import { transaction } from './transaction.js'
import {
  NOW,
  at,
  importUnsorted,
  openTestStatsDb,
  rawCount,
  rec,
  statsTestEnv,
  type StatsTestEnv
} from '../testing/stats/fixtures.js'
import type { QueryLogRecord } from '../querylog/index.js'

const HOUR = Math.floor(at('2024-05-15', '12:00') / 3_600_000)
const time = new ReportTime('UTC')
const USERS = ['ann', 'bo', 'cy']
/** Several queries of a user in the same millisecond: only the raw-row sequence orders them. */
const SAME_MS = at('2024-05-15', '12:05')

/** `n` queries numbered from `from` (the number is in the name), users taking turns, three per millisecond. */
function queries(n: number, from: number): QueryLogRecord[] {
  return Array.from({ length: n }, (_, i) =>
    rec(
      SAME_MS + Math.floor((from + i) / 3),
      `10.0.0.${(from + i) % 5}`,
      USERS[(from + i) % 2]!,
      `q${from + i}.example`
    )
  )
}

const open = openTestStatsDb
const importAll = importUnsorted

/** Every user's raw report and the hour's Parquet rows (names in file order). */
async function answers(db: StatsDb, env: StatsTestEnv): Promise<string> {
  const reports = []
  for (const u of USERS) reports.push(await rawLastHour(db, time, u, NOW))
  const dir = join(env.root, `parquet-${Math.random()}`)
  await exportParquetHours(db, dir, at('2024-05-15', '13:10'))
  const [file] = readdirSync(dir)
  const duck = await (await DuckDBInstance.create(':memory:')).connect()
  const parquet = (
    await duck.runAndReadAll(`SELECT "user", host, address FROM read_parquet('${join(dir, file!)}')`)
  ).getRows()
  duck.closeSync()
  return JSON.stringify({ reports, parquet })
}

/** Rewrites the store's raw hours as the version before this layout stored them (`raw_<hour>`, strings and seq). */
async function toLegacyLayout(db: StatsDb, hour: number): Promise<void> {
  await db.write(async (c) => {
    const names = new Set([rawRowsTable(hour)])
    await c.run(legacyRawTableSql(legacyRawTable(hour)))
    await c.run(
      `INSERT INTO ${legacyRawTable(hour)} SELECT row_number() OVER (ORDER BY created, ord), created, "user", nxdomain, ` +
        `address, host, blockedhost, reason, cats, blockedcats FROM (${rawHourSources(names, hour).join('')})`
    )
    for (const t of rawHourTables(hour).slice(1)) await c.run(`DROP TABLE ${t}`)
  })
}

test('raw rows are stored with user, name and address ids from the hour’s dictionaries: each value once, every row resolved', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = open(t, env)
  await importAll(db, env, queries(30, 0))
  await importAll(db, env, [...queries(30, 30), ...queries(30, 0)]) // names seen before get no new id
  const facts = await db.read(async (c) => {
    const one = async (sql: string): Promise<unknown[]> => (await c.runAndReadAll(sql)).getRows()[0]!.map(Number)
    return [
      await one(`SELECT count(*), count(DISTINCT name), count(DISTINCT id), max(id) FROM ${rawUsersTable(HOUR)}`),
      await one(`SELECT count(*), count(DISTINCT name), count(DISTINCT id), max(id) FROM ${rawHostsTable(HOUR)}`),
      await one(`SELECT count(*), count(DISTINCT name), count(DISTINCT id), max(id) FROM ${rawAddrsTable(HOUR)}`),
      await one(
        `SELECT count(*) FROM ${rawRowsTable(HOUR)} r JOIN ${rawUsersTable(HOUR)} u ON u.id = r.uid JOIN ${rawHostsTable(HOUR)} h ON h.id = r.hid JOIN ${rawAddrsTable(HOUR)} a ON a.id = r.aid`
      )
    ]
  })
  t.assert.deepStrictEqual(facts, [[2, 2, 2, 1], [60, 60, 60, 59], [5, 5, 5, 4], [90]])
  const columns = await db.read(async (c) =>
    (await c.runAndReadAll(`SELECT column_name FROM duckdb_columns() WHERE table_name = '${rawRowsTable(HOUR)}'`))
      .getRows()
      .map((r) => String(r[0]))
  )
  t.assert.deepStrictEqual(columns, [
    'created',
    'uid',
    'nxdomain',
    'aid',
    'hid',
    'blockedhost',
    'reason',
    'cats',
    'blockedcats',
    'source'
  ])
})

test('queries of one millisecond keep their order (raw report; Parquet: by user, then that order) through imports and the sort by user', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = open(t, env)
  await importAll(db, env, queries(12, 0))
  await importAll(db, env, queries(12, 12))
  const ann = (await rawLastHour(db, time, 'ann', NOW)).data.map((r) => r[3])
  t.assert.deepStrictEqual(
    ann,
    [...Array(12).keys()].map((i) => `q${2 * i}.example`),
    'arrival order'
  )
  await sortRawHour(db, HOUR)
  await importAll(db, env, queries(6, 24)) // appended after the sorted rows
  await sortRawHour(db, HOUR)
  const ref = statsTestEnv(t)
  const refDb = open(t, ref)
  await importAll(refDb, ref, [...queries(12, 0), ...queries(12, 12), ...queries(6, 24)])
  t.assert.strictEqual(await answers(db, env), await answers(refDb, ref), 'sorted twice = never sorted')
})

test('a store of the layout before (raw_<hour>) reports the same, also once new rows of the same hour are in the new layout; retention drops both', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = open(t, env)
  const ref = statsTestEnv(t)
  const refDb = open(t, ref)
  await importAll(db, env, queries(12, 0))
  await toLegacyLayout(db, HOUR)
  const tables = await db.read(async (c) =>
    (await c.runAndReadAll("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'raw%' ORDER BY 1"))
      .getRows()
      .map((r) => String(r[0]))
  )
  t.assert.deepStrictEqual(tables, [legacyRawTable(HOUR)])
  await importAll(refDb, ref, queries(12, 0))
  t.assert.strictEqual(await answers(db, env), await answers(refDb, ref), 'old layout alone')
  // The upgraded store goes on importing: the same hour now has rows in both layouts.
  await importAll(db, env, queries(9, 12))
  await importAll(refDb, ref, queries(9, 12))
  t.assert.strictEqual(await rawCount(db), 21)
  t.assert.strictEqual(await answers(db, env), await answers(refDb, ref), 'both layouts in one hour')
  // A day later retention drops the hour's tables of both layouts.
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW + 2 * 86_400_000 })
  const left = await db.read(
    async (c) =>
      (await c.runAndReadAll("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'raw%'")).getRows()[0]![0]
  )
  t.assert.strictEqual(Number(left), 0)
})

// The raw report asks for the newest 10,000 rows, past the 5,000 up to which DuckDB keeps a top-N heap: a
// plain ORDER BY ... LIMIT sorted every row of the user's hour (127 MiB of sort at 1.5 M rows, each second a
// console polls it), the api role's memory growing through the hour.
test("the raw report of a user with 600,000 rows in the hour sorts only its newest rows: DuckDB's sort memory stays under 8 MiB, and the rows are the newest 10,000 in order", async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openTestStatsDb(t, env)
  const ROWS = 600_000
  const start = at('2024-05-15', '12:00')
  await db.write((c) =>
    transaction(c, async () => {
      await c.run(
        `CREATE TEMP TABLE src AS SELECT ${start} + range * 5 AS created, 'ann' AS "user", false AS nx, '10.0.0.' || (range % 200) AS address, ` +
          `'h' || (range % 5000) || '.example' AS host, '' AS blockedhost, 'none' AS reason, '' AS cats, '' AS blockedcats, '' AS source FROM range(${ROWS})`
      )
      await insertRawHour(c, HOUR, 'src', 'true')
      await c.run('DROP TABLE src')
    })
  )
  const now = start + ROWS * 5
  let peak = 0
  let done = false
  const sampling = db.read(async (c) => {
    while (!done) {
      const r = await c.runAndReadAll(
        "SELECT coalesce(sum(memory_usage_bytes), 0)::DOUBLE FROM duckdb_memory() WHERE tag = 'ORDER_BY'"
      )
      peak = Math.max(peak, Number(r.getRows()[0]![0]))
    }
  })
  const report = await rawLastHour(db, time, 'ann', now).finally(() => (done = true))
  await sampling
  t.assert.strictEqual(report.data.length, 10_000)
  const hosts = report.data.map((r) => r[3])
  t.assert.deepStrictEqual(
    hosts.slice(-3),
    [ROWS - 3, ROWS - 2, ROWS - 1].map((i) => `h${i % 5000}.example`)
  )
  t.assert.strictEqual(hosts[0], `h${(ROWS - 10_000) % 5000}.example`)
  t.assert.ok(peak < 8 * 1024 * 1024, `the sort held ${Math.round(peak / 1024 / 1024)} MiB`)
})
