import { test, type TestContext } from 'node:test'
import { openStatsDb } from './db.js'
import { rawHostsTable, rawHourSchemaSql } from './raw-layout.js'
import { importClosedFiles } from './importer.js'
import { NOW, SCENARIO, ledgerRows, statsTestEnv, writeFiles } from './testing/fixtures.js'

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
