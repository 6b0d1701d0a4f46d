import { test, type TestContext } from 'node:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { openStatsDb } from './db.js'
import { dropStage, readCsvSql, stageRows } from './import-sql.js'
import { rawHostsTable, rawHourSchemaSql } from './raw-layout.js'
import { importClosedFiles } from './importer.js'
import { NOW, SCENARIO, at, ledgerRows, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'

test('a statement that fails inside the import transaction is the error reported, not the cleanup\'s "transaction is aborted"; nothing is taken in', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, SCENARIO)
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  // The names dictionary of a raw hour with a check the scenario's rows break: the insert fails while it runs,
  // which aborts the transaction (as a full disk does when a row group is flushed during the insert).
  const hour = Math.floor(SCENARIO[1]!.time / 3_600_000)
  await db.write(async (c) => {
    const hosts = `${rawHostsTable(hour)} (id INTEGER, name VARCHAR)`
    const schema = rawHourSchemaSql(hour)
    t.assert.ok(schema.includes(hosts))
    await c.run(schema.replace(hosts, hosts.replace('name VARCHAR', "name VARCHAR CHECK (name <> 'www.news.example')")))
  })
  await t.assert.rejects(importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW }), (err: Error) => {
    t.assert.doesNotMatch(err.message, /transaction is aborted/i)
    t.assert.match(err.message, /constraint/i)
    return true
  })
  t.assert.strictEqual(await ledgerRows(db), 0)
  t.assert.strictEqual(
    await db.read(async (c) => Number((await c.runAndReadAll('SELECT count(*) FROM files')).getRows()[0]![0])),
    0
  )
})

test("a stage's rows per file: one file read with its path as a constant (no per-row path from the reader), several in one read each counted once", async (t: TestContext) => {
  const env = statsTestEnv(t)
  const rows = Array.from({ length: 30 }, (_, i) =>
    rec(at('2024-05-15', '11:00') + i * 1000, '10.0.0.1', 'alice', `n${i}.example`)
  )
  await writeFiles(env, rows, 3)
  const dir = env.config.stats.dir
  const paths = readdirSync(dir)
    .sort()
    .map((n) => join(dir, n))
  t.assert.strictEqual(paths.length, 3)
  t.assert.match(readCsvSql([paths[0]!], true), /filename = false\)/, 'one file: the reader adds no path column')
  t.assert.match(readCsvSql(paths, true), /filename = true\)/)
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  const counts = await db.background(async (c) => {
    const one = (await stageRows(c, readCsvSql([paths[1]!], true))).files
    const all = (await stageRows(c, readCsvSql(paths, true))).files
    await dropStage(c)
    return { one: [...one], all: [...all].sort() }
  })
  t.assert.deepStrictEqual(counts.one, [[paths[1], { rows: 10, skipped: 0 }]])
  t.assert.deepStrictEqual(
    counts.all,
    paths.map((p) => [p, { rows: 10, skipped: 0 }])
  )
})
