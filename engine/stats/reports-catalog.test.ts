import { test, type TestContext } from 'node:test'
import type { DuckDBConnection } from '@duckdb/node-api'
import { metaPut, openStatsDb, type StatsDb } from './db.js'
import { RETENTION_KEY } from './fold.js'
import { pruneStats } from './importer.js'
import { buildMonths } from './month-build.js'
import { activityByDay, detail } from './reports.js'
import { queriesOfDay, statsTestEnv } from './testing/fixtures.js'
import { APRIL, EARLY, NOW, day, importAt, reports } from './testing/month-stores.js'

/** `db` seen through connections that note every statement run on them (a report's catalog is per StatsDb object). */
function noting(db: StatsDb): { db: StatsDb; statements: string[] } {
  const statements: string[] = []
  const note = (c: DuckDBConnection): DuckDBConnection =>
    new Proxy(c, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop, target)
        if (typeof v !== 'function') return v
        const f = v as (...args: unknown[]) => unknown
        return prop === 'run' || prop === 'runAndReadAll'
          ? (sql: string, ...rest: unknown[]) => {
              statements.push(sql)
              return f.call(target, sql, ...rest)
            }
          : f.bind(target)
      }
    })
  return { db: { ...db, read: (fn) => db.read((c) => fn(note(c))) }, statements }
}

test('a report is one statement while the tables stay the same, and sees every table made or dropped since', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const refEnv = statsTestEnv(t)
  const store = openStatsDb(env.config.stats.db)
  const ref = openStatsDb(refEnv.config.stats.db)
  t.after(() => Promise.all([store.close(), ref.close()]))
  const { db, statements } = noting(store)
  const first = queriesOfDay('2024-04-03', 40)
  await importAt(env, store, first, EARLY)
  await importAt(refEnv, ref, first, EARLY)
  const expected = await reports(ref)
  t.assert.deepStrictEqual(await reports(db), expected)

  // The tables are the same as the last report's: one statement, no catalog query, no transaction.
  statements.length = 0
  await detail(db, 'alice', APRIL, day('2024-06-12'))
  t.assert.strictEqual(statements.length, 1, statements.join('\n'))
  t.assert.doesNotMatch(statements[0]!, /BEGIN|ROLLBACK/)

  // A new day's tables made since (an import): the statement's check sees them, the report reads them.
  const second = queriesOfDay('2024-05-20', 40, 3)
  await importAt(env, store, second, EARLY)
  await importAt(refEnv, ref, second, EARLY)
  statements.length = 0
  const afterImport = await reports(ref)
  t.assert.notDeepStrictEqual(afterImport, expected)
  t.assert.deepStrictEqual(await reports(db), afterImport)
  t.assert.ok(
    statements.some((s) => /BEGIN/.test(s)),
    'the catalog was read again'
  )

  // Day tables dropped and week tables made (a fold), then month tables made from the weeks: the same answers.
  await pruneStats(store, 'UTC', NOW)
  t.assert.deepStrictEqual(await reports(db), afterImport)
  t.assert.strictEqual(await buildMonths(store, 'UTC', NOW), 4)
  t.assert.deepStrictEqual(await reports(db), afterImport)

  // Retention's first day moved inside a folded table (no table dropped): days before it are left out at once.
  const keep = day('2024-05-01')
  await store.write((c) => metaPut(c, RETENTION_KEY, keep))
  const kept = await activityByDay(db, 'alice', APRIL, day('2024-05-31'))
  t.assert.deepStrictEqual(kept, await activityByDay(noting(store).db, 'alice', APRIL, day('2024-05-31')))
  const before = kept.datasets[0]!.data.slice(0, keep - APRIL)
  t.assert.ok(
    before.every((v) => v === 0),
    'no day before retention'
  )
  t.assert.ok(kept.datasets[0]!.data.some((v) => v > 0))
})
