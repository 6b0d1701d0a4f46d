import { test, type TestContext } from 'node:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import { DB_FILE, STORE_ROW_GROUP_SIZE, TABLES_SQL, openStatsDb, type StatsDb } from './db.js'
import { ALL_USERS, ANONYMOUS_USER } from './files.js'
import { importClosedFiles } from './importer.js'
import { overview } from './overview.js'
import { activityByDay, activityByHour, detail, rawLastHour, topDomains } from './reports.js'
import { NOW, SCENARIO, statsTestEnv, writeFiles } from './testing/fixtures.js'
import { ReportTime, parseDay } from './time.js'

const time = new ReportTime('UTC')
const [FROM, TO] = [parseDay('2024-05-01')!, parseDay('2024-05-15')!]

/** Row groups of `table` (DuckDB's storage info). */
async function rowGroups(c: DuckDBConnection, table: string): Promise<number> {
  const r = await c.runAndReadAll(`SELECT count(DISTINCT row_group_id)::INTEGER FROM pragma_storage_info('${table}')`)
  return Number(r.getRows()[0]![0])
}

const BULK_SQL = 'CREATE TABLE bulk AS SELECT range AS i FROM range(20000)'

/** Every report of the scenario's users, and the overview. */
async function reports(db: StatsDb): Promise<unknown[]> {
  const out: unknown[] = []
  for (const u of ['alice', 'bob', ANONYMOUS_USER, ALL_USERS]) {
    out.push(await activityByDay(db, u, FROM, TO))
    out.push(await activityByHour(db, time, u, TO, TO))
    out.push(await topDomains(db, u, FROM, TO, 'all'))
    out.push(await detail(db, u, FROM, TO))
    out.push(await rawLastHour(db, time, u, NOW))
  }
  out.push(await overview(db, time, FROM, TO))
  return out
}

test('the store writes its tables in row groups of STORE_ROW_GROUP_SIZE rows, and spills beside its file', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  await db.write(async (c) => {
    await c.run(BULK_SQL)
  })
  // 20,000 rows: one row group at DuckDB's default (122,880), three at 8,192; read on a reader's connection.
  t.assert.strictEqual(STORE_ROW_GROUP_SIZE, 8192)
  t.assert.strictEqual(await db.read((c) => rowGroups(c, 'bulk')), Math.ceil(20000 / STORE_ROW_GROUP_SIZE))
  const temp = await db.read(async (c) =>
    String((await c.runAndReadAll("SELECT current_setting('temp_directory')")).getRows()[0]![0])
  )
  t.assert.strictEqual(temp, `${db.file}.tmp`)
})

test('a store the version before wrote (its file opened as the main database) opens, answers the same, and keeps its row groups', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, SCENARIO, 3)
  const db = openStatsDb(env.config.stats.db)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  const expected = await reports(db)
  await db.close()

  // The version before opened the file itself (DuckDBInstance.create(file)): a copy of every table made that way.
  const oldDir = join(env.root, 'old')
  mkdirSync(oldDir)
  const old = await DuckDBInstance.create(join(oldDir, DB_FILE))
  const c = await old.connect()
  await c.run(`ATTACH '${db.file}' AS src (READ_ONLY)`)
  const tables = (await c.runAndReadAll(TABLES_SQL.replace('current_database()', "'src'"))).getRows().map((r) => r[0])
  t.assert.ok(tables.length > 3, 'the scenario made partitions')
  for (const name of tables) await c.run(`CREATE TABLE ${String(name)} AS SELECT * FROM src.${String(name)}`)
  await c.run(BULK_SQL)
  await c.run('DETACH src')
  c.closeSync()
  old.closeSync()

  const upgraded = openStatsDb(oldDir)
  t.after(() => upgraded.close())
  t.assert.deepStrictEqual(await reports(upgraded), expected)
  // Its tables are read as they are (one row group of 20,000 rows); tables written now have the new size.
  t.assert.strictEqual(await upgraded.read((c) => rowGroups(c, 'bulk')), 1)
  await upgraded.write(async (c) => {
    await c.run(BULK_SQL.replace('bulk', 'bulk2'))
  })
  t.assert.strictEqual(await upgraded.read((c) => rowGroups(c, 'bulk2')), 3)
})
